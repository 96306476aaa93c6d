"""The worker process of the isolated runner: its entry points (spawned or forked), the loop
that opens the FMU once and executes batches of runs, the scratch file that keeps partial data
of a run, and the bounded echo of the FMU's log.

Protocol: the worker sends the pickled control messages ``("ready", pid)`` or
``("open_error", type name, text)``, then one message per run: the run's store record
(:func:`fmu_surrogate.fmu.campaigns.store.encode_record`), or, when the pool names the run store,
the worker appends that record to the store itself (one ``write``, as the parent would) and sends
only the fields of its header, fixed-size binary, and where its data lies
(:func:`stored_message`).  Workers die with their parent
(``PR_SET_PDEATHSIG`` on Linux, plus an EOF check), so a parent killed with SIGKILL leaves no
orphans.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal as _signal
import struct
import sys
import time as _time
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING

import numpy as np

from fmu_surrogate.fmu.runner.failures import _MAX_MESSAGE, classify
from fmu_surrogate.fmu.runner.logs import read_bounded, start_log_keeper

if TYPE_CHECKING:  # pragma: no cover
    from fmu_surrogate.fmu.runner.runs import RunnerConfig

_HEADER_BYTES = 64  # scratch file: int64[8] header (row counter, run index), then the data
#: a run whose record the worker appended to the store: run index, rows, wall seconds, start and
#: end stamps, worker pid, offset and bytes of the record's data in the store, bytes of the
#: failure kind; then the failure kind and the message (UTF-8)
_STORED = struct.Struct("<4sqqdddqQQI")
_STORED_MAGIC = b"FSO2"


def stored_message(msg: bytes | memoryview) -> tuple | None:
    """What a worker's message says of a run whose record it appended to the run store, or
    ``None`` when ``msg`` is another message (a record or a control message).

    Returns ``(index, kind, message, n, wall, t0, t1, worker, offset, nbytes)``: the fields of
    the record's header (:meth:`RunResult.store_header
    <fmu_surrogate.fmu.runner.runs.RunResult.store_header>`) and where the record's data lies in
    the store (``nbytes`` bytes at ``offset``), so that the parent reads back only the data and
    decodes no JSON.
    """
    if len(msg) < _STORED.size or bytes(msg[:4]) != _STORED_MAGIC:
        return None
    _m, index, n, wall, t0, t1, worker, offset, nbytes, nk = _STORED.unpack_from(msg)
    k0 = _STORED.size
    kind = bytes(msg[k0:k0 + nk]).decode("utf-8")
    message = bytes(msg[k0 + nk:]).decode("utf-8", "surrogatepass")
    return index, kind, message, n, wall, t0, t1, worker, offset, nbytes


def _set_pdeathsig() -> None:
    """Ask Linux to SIGKILL this process when its parent dies."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, _signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _default_signals() -> None:
    """Let SIGTERM, SIGINT (and SIGHUP unless ignored) end this worker by their default action.

    A forked worker inherits the parent's Python handlers: the harvest turns SIGTERM into an
    exception so that it can clean up, and in a worker that exception would be raised inside
    the FMU call, recorded as a failure of the run, and the worker would go on (or, inside the
    FMU's C code, never run at all).  With the default action a worker told to stop dies by the
    signal at once, and the parent records its run as interrupted.
    """
    sigs = [_signal.SIGTERM, _signal.SIGINT]
    if hasattr(_signal, "SIGHUP") and _signal.getsignal(_signal.SIGHUP) is not _signal.SIG_IGN:
        sigs.append(_signal.SIGHUP)  # a harvest started under nohup keeps its workers too
    for sig in sigs:
        with contextlib.suppress(ValueError, OSError):
            _signal.signal(sig, _signal.SIG_DFL)


def _flush_c_stdio() -> None:
    fflush = _c_fflush()
    if fflush is not None:
        fflush(None)


@functools.cache
def _c_fflush():
    """The C library's ``fflush`` (looked up once: a worker flushes before every run)."""
    try:
        return ctypes.CDLL(None).fflush
    except (OSError, AttributeError):
        return None


def _open_scratch(path: str, n_rows: int, n_cols: int, mode: str):
    size = _HEADER_BYTES + 8 * max(1, n_rows * n_cols)
    if mode == "w+":
        with open(path, "wb") as f:
            f.truncate(size)
    mm = np.memmap(path, dtype=np.uint8, mode="r+", shape=(size,))
    raw = np.asarray(mm)  # plain arrays (they keep the map alive): no memmap subclass per slice
    header = raw[:_HEADER_BYTES].view(np.int64)
    data = raw[_HEADER_BYTES:_HEADER_BYTES + 8 * n_rows * n_cols].view(np.float64)
    return mm, header, data.reshape(n_rows, n_cols)


def _worker_main() -> None:  # pragma: no cover - runs in the child (covered by the tests)
    """Entry point of a spawned worker: ``python -c '...; _worker_main()' FD PARENT_PID``."""
    _set_pdeathsig()
    _default_signals()
    fd, parent = int(sys.argv[1]), int(sys.argv[2])
    if os.getppid() != parent:  # parent already gone before prctl took effect
        os._exit(0)
    conn = Connection(fd)
    try:
        cfg, scratch_path, store_path = conn.recv()
    except EOFError:
        os._exit(0)
    try:
        _serve(conn, cfg, scratch_path, store_path)
    finally:
        os._exit(0)


def _forked_main(sock_fd: int, log_fd: int, parent: int, cfg: RunnerConfig, scratch_path: str,
                 store_path: str | None) -> None:  # pragma: no cover - runs in the child
    """Body of a forked worker (never returns).

    The child is a copy of the parent: everything is imported and ``cfg`` is already in
    memory, so start-up costs only the FMU's extraction and instantiation.  It gets the same
    environment as a spawned worker: own session, stdin from /dev/null, stdout and stderr to its
    log file, no other inherited file descriptors, the parent's death kills it.
    """
    try:
        import faulthandler
        import gc

        gc.disable()  # never finalise the parent's objects here (they hold the parent's fds)
        if faulthandler.is_enabled():  # its fd belongs to the parent
            faulthandler.disable()
        os.setsid()
        _default_signals()
        _set_pdeathsig()
        if os.getppid() != parent:
            os._exit(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        keep = sock_fd
        os.closerange(3, keep)
        os.closerange(keep + 1, _max_fd())
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ.setdefault(k, "1")
        sys.stdout = open(1, "w", encoding="utf-8", errors="replace", buffering=1,  # noqa: SIM115
                          closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="replace", buffering=1,  # noqa: SIM115
                          closefd=False)
        conn = Connection(keep)
        _serve(conn, cfg, scratch_path, store_path)
    finally:
        os._exit(0)


def _send_whole(conn: Connection, payload: bytes) -> None:  # pragma: no cover - worker side
    """``conn.send_bytes(payload)`` in one ``write``: length header and payload together, so that
    the parent wakes up once per result with the whole message there (``send_bytes`` writes the
    header of a large message separately, and the parent then waits in ``read`` for the rest)."""
    data = memoryview(_LEN.pack(len(payload)) + payload)
    fd = conn.fileno()
    while data:
        n = os.write(fd, data)
        data = data[n:]


_LEN = struct.Struct("!i")  # the length header of multiprocessing.connection messages


def _max_fd() -> int:
    try:
        return max(256, int(os.sysconf("SC_OPEN_MAX")))
    except (OSError, ValueError):  # pragma: no cover
        return 65536


class _BoundedEcho:
    """Echo FMU log messages into a worker's log file, bounded per run.

    Past ``limit`` bytes the file is cut back to its first ``head`` bytes, a marker counts what
    was dropped, and the newest messages follow: the file keeps the head (what failed first) and
    the tail (what happened last) and never exceeds ``limit`` plus one message.
    """

    _LABELS = ("OK", "WARNING", "DISCARD", "ERROR", "FATAL", "PENDING")

    def __init__(self, fd: int, limit: int = 1 << 20, head: int = 1 << 16) -> None:
        self.fd, self.limit, self.head = fd, limit, head
        self.size = self.dropped = 0

    def reset(self) -> None:
        """Empty the log (at the start of a run)."""
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)
        self.size = self.dropped = 0

    def __call__(self, status: int, category: str, message: str) -> None:
        label = self._LABELS[status] if 0 <= status < len(self._LABELS) else str(status)
        line = f"[FMU {label}] {category}: {message}\n".encode("utf-8", "replace")
        try:
            if self.size + len(line) > self.limit:
                self.dropped += max(0, self.size - self.head)
                os.ftruncate(self.fd, self.head)
                marker = f"[... {self.dropped} bytes of log dropped ...]\n".encode()
                os.write(self.fd, marker)
                self.size = self.head + len(marker)
            os.write(self.fd, line)
            self.size += len(line)
        except OSError:
            pass


def _keep_temporary_files_in(pool_folder: str) -> None:  # pragma: no cover - in the worker
    """Send every temporary file of this worker where its parent removes it.

    Inside a harvest that is the harvest's folder; otherwise the pool's own folder, which
    :meth:`WorkerPool.close` deletes.  The extracted FMU goes there
    (:func:`~fmu_surrogate.fmu.runner.tempdirs.scratch_root`), and so do the temporary files of the
    libraries the worker loads (libcosim's extracted FMUs, fmpy's), through ``TMPDIR``: a worker
    killed by a crashing or hanging FMU cannot clean up after itself.
    """
    import tempfile

    from fmu_surrogate.fmu.runner.tempdirs import ENV, scratch_root

    if not os.environ.get(ENV):
        os.environ[ENV] = pool_folder
    folder = scratch_root() or pool_folder
    os.environ["TMPDIR"] = folder
    tempfile.tempdir = folder


def _serve(conn: Connection, cfg: RunnerConfig, scratch_path: str,
           store_path: str | None = None) -> None:  # pragma: no cover
    """The worker loop: open the FMU, then execute batches of runs until told to stop.

    Protocol: the worker sends the pickled control messages ``("ready", pid)`` or
    ``("open_error", type name, text)``, then one message per run (:func:`_deliver`).  The
    parent sends lists of :class:`RunSpec` and ``None`` to stop.
    """
    from fmu_surrogate.fmu.backends.registry import get_backend
    from fmu_surrogate.fmu.campaigns.store_records import encode_record

    _keep_temporary_files_in(os.path.dirname(scratch_path))
    err_fd = 2
    echo = _BoundedEcho(err_fd)
    start_log_keeper(err_fd)  # what the FMU prints itself: head and tail of each run stay

    # the backend steps through the communication points; inputs come sampled on cfg.time
    time = np.ascontiguousarray(cfg.time if cfg.points is None else cfg.points, dtype=np.float64)
    ncol = cfg.n_columns
    try:
        if cfg.backend_module:  # registers a backend of a target that is not an FMU file
            import importlib

            importlib.import_module(cfg.backend_module)
        backend = get_backend(cfg.backend, log_sink=echo, **cfg.backend_options) \
            if cfg.backend in ("auto", "fmpy") else get_backend(cfg.backend,
                                                                **cfg.backend_options)
        backend.open(cfg.fmu_path, cfg.info)
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        conn.send(("open_error", type(exc).__name__, str(exc)))
        conn.close()
        return
    store_fd = None
    if store_path:
        try:
            store_fd = os.open(store_path, os.O_WRONLY | os.O_APPEND)
        except OSError:  # the parent appends the records then
            store_fd = None
    _mm, header, out = _open_scratch(scratch_path, time.shape[0], ncol, "r+")
    progress = header[0:1]
    input_cache: dict[int, dict[str, np.ndarray]] = {}
    pid = os.getpid()
    conn.send(("ready", pid))
    log_path = f"/proc/self/fd/{err_fd}"
    record = cfg.record
    threshold = cfg.explode_threshold
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            break
        if batch is None:
            break
        for spec in batch:
            progress[0] = 0  # before the index: a death in between leaves no stale data
            header[1] = spec.index
            _flush_c_stdio()
            echo.reset()  # each run's log starts empty
            started = _time.time()
            t0 = _time.perf_counter()
            inputs = input_cache.get(spec.signal_set)
            if inputs is None:
                if cfg.input_arrays is not None:
                    inputs = cfg.input_arrays[spec.signal_set]
                else:
                    inputs = cfg.sample_inputs(spec.signal_set)
                input_cache[spec.signal_set] = inputs
            try:
                log_pos = os.lseek(err_fd, 0, os.SEEK_END)
            except OSError:
                log_pos = None
            res = backend.run(spec.params, inputs, time, record, out=out, progress=progress)
            extra = ""
            if res.error is not None and log_pos is not None:
                _flush_c_stdio()
                text = read_bounded(log_path, log_pos, head=_MAX_MESSAGE // 4,
                                    tail=_MAX_MESSAGE // 2)
                # our own echo of the FMU log is already in the message
                extra = "\n".join(l for l in text.splitlines() if not l.startswith("[FMU "))
            kind, message = classify(res, time, threshold, extra_text=extra)
            n = res.n_done
            finished = _time.time()
            head = {"campaign": cfg.campaign, "index": spec.index, "kind": kind,
                    "message": message, "n": n, "wall": _time.perf_counter() - t0,
                    "t0": started, "t1": finished, "worker": pid}
            if not _deliver(conn, encode_record(head, out[:n]), store_fd, head, 8 * n * ncol):
                os._exit(0)
    backend.close()


def _deliver(conn: Connection, rec: bytes, store_fd: int | None, head: dict,
             nbytes: int) -> bool:
    """Hand a run's record ``rec`` (header ``head``, ``nbytes`` bytes of data) to the parent;
    ``False`` when the parent is gone.

    With the run store open (``store_fd``), append the record to it in one ``write`` on the
    ``O_APPEND`` file — whole records of several writers never interleave — and send only the
    header's fields and where the data lies (:func:`stored_message`): the parent neither
    receives nor writes the data, and decodes no JSON.  A write that fails or comes out short
    (a full disk) sends the record itself, and the parent appends it (and reports the full
    disk); a short piece left in the store is a damaged record that the store's scanner skips.
    """
    from fmu_surrogate.fmu.campaigns import store_records

    msg = rec
    if store_fd is not None:
        try:
            n = store_records.append_once(store_fd, rec)
            if n == len(rec):
                end = os.lseek(store_fd, 0, os.SEEK_CUR)  # our own file position: after rec
                kind = head["kind"].encode("utf-8")
                # the data ends 4 bytes (the CRC) before the record does
                msg = _STORED.pack(_STORED_MAGIC, head["index"], head["n"], head["wall"],
                                   head["t0"], head["t1"], head["worker"], end - 4 - nbytes,
                                   nbytes, len(kind)) + kind + head["message"].encode("utf-8", "surrogatepass")
        except OSError:
            pass
    try:
        _send_whole(conn, msg)
    except OSError:  # BrokenPipeError included
        return False
    return True
