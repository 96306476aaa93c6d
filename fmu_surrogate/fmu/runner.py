"""Isolated execution of FMU runs: persistent worker processes, timeouts, crash detection.

Runs execute in worker *processes* (a native crash or a hang must not take the caller down,
docs/design.md §8).  A worker opens the FMU once — extract, instantiate — and then executes many runs
on that instance (reset between runs).  On Linux a worker is forked from the calling process when
that process runs a single thread (start-up: a few milliseconds, the caller's imports and the
config are already there); otherwise — and with ``start_method="spawn"`` — it is a fresh Python
interpreter (``subprocess``; about 0.2 s of CPU to import numpy and fmpy), which also works inside
daemonic Dask workers, where ``multiprocessing`` may not create children.  Either way it runs in
its own session with its own log file and none of the caller's open files.  The parent

* sends batches of :class:`RunSpec` (guided self-scheduling: batches shrink as the runs run out,
  so the workers finish together; the next run is always queued so that a worker never waits for
  the parent) and receives one message per run: the run's record for the run store
  (:func:`fmu_surrogate.fmu.store.encode_record`, made by the worker), which the parent appends
  as it is;
* enforces a wall-clock timeout per run: a worker whose current run exceeds it is killed
  (SIGKILL) and respawned, the run is recorded as ``"timeout"``;
* detects a worker that died (segfault, abort, OOM kill): the run is recorded as ``"crash"`` with
  the signal name and the tail of the worker's output (stderr, the FMU's log messages);
* keeps partial data of killed/crashed runs: the backend writes every recorded row straight into a
  per-worker scratch file (memory-mapped) together with a row counter, which the parent reads
  after the worker is gone.

Failures detected inside the worker (:func:`classify`): FMI error status (``"error_status"``),
other exceptions (``"exception"``), NaN/inf (``"non_finite"``), values beyond a bound
(``"exploding"``, default ``|x| > 1e10``; diverged co-simulation FMUs return e.g. 1e104 without an
error), and an FMU that ended the run by itself (``"early_stop"``).  The kinds are those of
:data:`fmu_surrogate.fmu.dataset.FAILURE_KINDS`; the message carries the FMU's own log text.

Workers die with their parent (``PR_SET_PDEATHSIG`` on Linux, plus an EOF check), so a parent
killed with SIGKILL leaves no orphans.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import signal as _signal
import socket
import struct
import subprocess
import sys
import tempfile
import time as _time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.fmu.store import decode_record, is_record

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import Self

__all__ = [
    "DEFAULT_EXPLODE_THRESHOLD",
    "RunResult",
    "RunSpec",
    "RunnerConfig",
    "WorkerPool",
    "classify",
    "run_isolated",
]

#: Default bound for "exploding" values: ``|x| > 1e10``.
DEFAULT_EXPLODE_THRESHOLD = 1e10

_HEADER_BYTES = 64  # scratch file: int64[8] header (row counter, run index), then the data
_MAX_MESSAGE = 4000


# ---------------------------------------------------------------------------- data classes
@dataclass(frozen=True)
class RunnerConfig:
    """Everything a worker needs to open the FMU and execute runs (sent once per worker).

    Attributes
    ----------
    fmu_path : str
    info : FMUInfo
        From :func:`fmu_surrogate.fmu.model.open_fmu`.
    time : ndarray, shape (T,)
        The communication grid of every run.
    record : tuple of str
        Variables recorded at every grid point.
    signal_sets : tuple of dict
        ``({input name: Signal}, ...)``; a :class:`RunSpec` refers to one by position.
    backend : str
        ``"auto"``, ``"fmpy"`` or ``"pyfmi"``.
    backend_options : dict
        Passed to the backend (``interface``, ``tolerance``, ``reuse_instance``).
    explode_threshold : float
        Finite values with ``|x|`` above this are a failure of kind ``"exploding"``.
    input_arrays : tuple of dict, optional
        The signal sets sampled on the grid (:meth:`with_input_arrays`).
    campaign : str
        Hash of the campaign; every store record a worker makes carries it.
    """

    fmu_path: str
    info: Any
    time: np.ndarray
    record: tuple[str, ...]
    signal_sets: tuple[dict, ...] = ({},)
    backend: str = "auto"
    backend_options: dict = field(default_factory=dict)
    explode_threshold: float = DEFAULT_EXPLODE_THRESHOLD
    input_arrays: tuple[dict, ...] | None = None
    campaign: str = ""

    def with_input_arrays(self, max_bytes: float = 2**28) -> RunnerConfig:
        """A copy carrying every signal set sampled on the grid (``input_arrays``).

        Workers then neither evaluate signals nor import what that needs (scipy.signal for a
        chirp costs a fraction of a second per worker start).  Skipped when the arrays would
        exceed ``max_bytes``; workers evaluate the signals themselves then.
        """
        from dataclasses import replace

        from fmu_surrogate.fmu.signals import sample_inputs

        n = sum(len(s) for s in self.signal_sets) * np.asarray(self.time).shape[0] * 8
        if n > max_bytes:
            return self
        arrays = tuple(sample_inputs(s, self.time) for s in self.signal_sets)
        return replace(self, input_arrays=arrays)

    @property
    def columns(self) -> dict[str, tuple[int, tuple[int, ...]]]:
        """``{name: (first column, shape)}`` of the recorded variables in a data block."""
        cols, c = {}, 0
        by_name = {v.name: v for v in self.info.variables}
        for n in self.record:
            shape = tuple(by_name[n].shape or ())
            cols[n] = (c, shape)
            c += int(np.prod(shape)) if shape else 1
        return cols

    @property
    def n_columns(self) -> int:
        """Number of float64 columns of a data block."""
        return sum(int(np.prod(s)) if s else 1 for _, s in self.columns.values())


@dataclass(frozen=True)
class RunSpec:
    """One run: its label, parameter values and the position of its signal set."""

    index: int
    params: dict = field(default_factory=dict)
    signal_set: int = 0


@dataclass
class RunResult:
    """Outcome of one run as reported by the runner.

    Attributes
    ----------
    index : int
    failure_kind : str
        ``""`` for an ok run, else a key of ``dataset.FAILURE_KINDS``.
    message : str
    n_samples : int
        Valid leading rows of ``data``.
    data : ndarray, shape (n_samples, n_columns)
    wall_time : float
        Seconds from the start of the run to its result.
    started, finished : float
        Wall-clock stamps (``time.time()``) of the run.
    worker : int
        Process id of the worker that executed it.
    record : bytes or None
        The run as a record of the run store (:func:`fmu_surrogate.fmu.store.encode_record`,
        header :meth:`store_header`), made by the worker; ``None`` for results made by the
        parent (timeouts, crashes).
    """

    index: int
    failure_kind: str
    message: str
    n_samples: int
    data: np.ndarray
    wall_time: float
    started: float
    finished: float
    worker: int
    record: bytes | None = field(default=None, repr=False)

    def store_header(self) -> dict[str, Any]:
        """The header of this run's record in the run store."""
        return {"index": self.index, "kind": self.failure_kind, "message": self.message,
                "n": self.n_samples, "wall": self.wall_time, "t0": self.started,
                "t1": self.finished, "worker": self.worker}

    @property
    def ok(self) -> bool:
        return not self.failure_kind

    @property
    def status(self) -> str:
        return "ok" if self.ok else "failed"


# ---------------------------------------------------------------------------- classification
def _trim(text: str, limit: int = _MAX_MESSAGE) -> str:
    """At most ``limit`` characters: the head (what failed first) and the tail (what came last)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[: limit // 3]
    tail = text[-(limit - len(head)):]
    dropped = len(text) - len(head) - len(tail)
    return f"{head}\n[... {dropped} characters dropped ...]\n{tail}"


def classify(output: Any, time: np.ndarray, explode_threshold: float = DEFAULT_EXPLODE_THRESHOLD,
             extra_text: str = "") -> tuple[str, str]:
    """Failure kind and message of a finished :class:`~fmu_surrogate.fmu.backends.RunOutput`.

    Precedence: an exception (``"error_status"`` for an FMI status or when the FMU logged an
    error, else ``"exception"``); then whichever of non-finite / exploding values occurs first in
    time; then ``"early_stop"``.  An ok run gets kind ``""`` and, as message, its warnings.

    Parameters
    ----------
    output : RunOutput
    time : ndarray, shape (T,)
    explode_threshold : float
    extra_text : str
        Other diagnostics (e.g. the solver's console output) appended to failure messages.

    Returns
    -------
    (kind, message)
    """
    n = output.n_done
    logged_error = any(s >= 3 for s, _, _ in output.messages)
    log_all = output.log_text()
    log_warn = output.log_text(min_status=1)

    def with_log(head: str, log: str) -> str:
        parts = [head]
        if log:
            parts.append("FMU log:\n" + log)
        if extra_text.strip():
            parts.append("output:\n" + extra_text.strip())
        return _trim("\n".join(parts))

    def at(t: float | None) -> str:
        return "" if t is None else f" at t={t:g}"

    exc = output.error
    if exc is not None:
        function = getattr(exc, "function", None)
        status = getattr(exc, "status", None)
        if function is not None and status is not None:
            from fmu_surrogate.fmu.backends import STATUS_NAMES

            label = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else str(status)
            prefix = "fmi3" if function.startswith("fmi3") else "fmi2"
            head = f"{function} returned {prefix}{label}{at(output.error_time)}"
            return "error_status", with_log(head, log_all)
        head = f"{type(exc).__name__}: {exc}"
        return ("error_status" if logged_error else "exception"), with_log(head, log_all)

    if n:
        block = output.data[:n]
        with np.errstate(invalid="ignore"):
            peak = np.abs(block).max() if block.size else 0.0
        if peak <= explode_threshold:  # NaN compares False: falls through to the full check
            if output.stopped_early or n < len(time):
                return _early_stop(output, time, with_log, log_all)
            return "", _trim(log_warn)
        finite = np.isfinite(block)
        bad_rows = np.flatnonzero(~finite.all(axis=1))
        with np.errstate(invalid="ignore"):
            big = np.abs(np.where(finite, block, 0.0)) > explode_threshold
        big_rows = np.flatnonzero(big.any(axis=1))
        first_bad = int(bad_rows[0]) if bad_rows.size else None
        first_big = int(big_rows[0]) if big_rows.size else None
        names = _column_names(output)
        if first_bad is not None and (first_big is None or first_bad <= first_big):
            j = int(np.flatnonzero(~finite[first_bad])[0])
            v = block[first_bad, j]
            head = (f"{names[j]} is {v}{at(float(time[first_bad]))} (first non-finite value; the "
                    f"FMU did not report an error)")
            return "non_finite", with_log(head, log_all)
        if first_big is not None:
            j = int(np.flatnonzero(big[first_big])[0])
            v = block[first_big, j]
            head = (f"|{names[j]}| = {abs(v):.3g} exceeds the bound {explode_threshold:g}"
                    f"{at(float(time[first_big]))} (diverged without an error; raise "
                    f"explode_threshold if such values are legitimate)")
            return "exploding", with_log(head, log_all)
    if output.stopped_early or n < len(time):
        return _early_stop(output, time, with_log, log_all)
    return "", _trim(log_warn)


def _early_stop(output, time, with_log, log_all) -> tuple[str, str]:
    n = output.n_done
    t_end = float(time[n - 1]) if n else float(time[0])
    head = (f"the FMU ended the run at t={t_end:g}, before the stop time {float(time[-1]):g}, "
            f"without an error")
    return "early_stop", with_log(head, log_all)


def _column_names(output: Any) -> list[str]:
    names = []
    for name in output.names:
        _c0, shape = output.columns[name]
        if not shape:
            names.append(name)
        else:
            for idx in np.ndindex(*shape):
                names.append(f"{name}[{','.join(str(i + 1) for i in idx)}]")
    return names


# ---------------------------------------------------------------------------- worker side
def _set_pdeathsig() -> None:
    """Ask Linux to SIGKILL this process when its parent dies."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, _signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _flush_c_stdio() -> None:
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass


def _open_scratch(path: str, n_rows: int, n_cols: int, mode: str):
    size = _HEADER_BYTES + 8 * max(1, n_rows * n_cols)
    if mode == "w+":
        with open(path, "wb") as f:
            f.truncate(size)
    mm = np.memmap(path, dtype=np.uint8, mode="r+", shape=(size,))
    header = mm[:_HEADER_BYTES].view(np.int64)
    data = mm[_HEADER_BYTES:_HEADER_BYTES + 8 * n_rows * n_cols].view(np.float64)
    return mm, header, data.reshape(n_rows, n_cols)


def _worker_main() -> None:  # pragma: no cover - runs in the child (covered by the tests)
    """Entry point of a spawned worker: ``python -c '...; _worker_main()' FD PARENT_PID``."""
    _set_pdeathsig()
    fd, parent = int(sys.argv[1]), int(sys.argv[2])
    if os.getppid() != parent:  # parent already gone before prctl took effect
        os._exit(0)
    conn = Connection(fd)
    try:
        cfg, scratch_path = conn.recv()
    except EOFError:
        os._exit(0)
    try:
        _serve(conn, cfg, scratch_path)
    finally:
        os._exit(0)


def _forked_main(sock_fd: int, log_fd: int, parent: int, cfg: RunnerConfig,
                 scratch_path: str) -> None:  # pragma: no cover - runs in the child
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
        _serve(conn, cfg, scratch_path)
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


def _serve(conn: Connection, cfg: RunnerConfig, scratch_path: str) -> None:  # pragma: no cover
    """The worker loop: open the FMU, then execute batches of runs until told to stop.

    Protocol: the worker sends the pickled control messages ``("ready", pid)`` or
    ``("open_error", type name, text)``, then one store record
    (:func:`fmu_surrogate.fmu.store.encode_record`) per run, so that the parent appends it to
    the store as it is.  The parent sends lists of :class:`RunSpec` and ``None`` to stop.
    """
    from fmu_surrogate.fmu.backends import get_backend
    from fmu_surrogate.fmu.store import encode_record

    err_fd = 2
    echo = _BoundedEcho(err_fd)

    time = np.ascontiguousarray(cfg.time, dtype=np.float64)
    ncol = cfg.n_columns
    try:
        backend = get_backend(cfg.backend, log_sink=echo, **cfg.backend_options) \
            if cfg.backend in ("auto", "fmpy") else get_backend(cfg.backend,
                                                                **cfg.backend_options)
        backend.open(cfg.fmu_path, cfg.info)
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        conn.send(("open_error", type(exc).__name__, str(exc)))
        conn.close()
        return
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
                    from fmu_surrogate.fmu.signals import sample_inputs

                    inputs = sample_inputs(cfg.signal_sets[spec.signal_set], time)
                input_cache[spec.signal_set] = inputs
            try:
                log_pos = os.lseek(err_fd, 0, os.SEEK_END)
            except OSError:
                log_pos = None
            res = backend.run(spec.params, inputs, time, record, out=out, progress=progress)
            extra = ""
            if res.error is not None and log_pos is not None:
                _flush_c_stdio()
                try:
                    with open(log_path, "rb") as f:
                        f.seek(log_pos)
                        text = f.read(1 << 16).decode("utf-8", "replace")
                    # our own echo of the FMU log is already in the message
                    extra = "\n".join(l for l in text.splitlines() if not l.startswith("[FMU "))
                except OSError:
                    pass
            kind, message = classify(res, time, threshold, extra_text=extra)
            n = res.n_done
            finished = _time.time()
            rec = encode_record({"campaign": cfg.campaign, "index": spec.index, "kind": kind,
                                 "message": message, "n": n, "wall": _time.perf_counter() - t0,
                                 "t0": started, "t1": finished, "worker": pid}, out[:n])
            try:
                _send_whole(conn, rec)
            except (BrokenPipeError, OSError):
                os._exit(0)
    backend.close()


# ---------------------------------------------------------------------------- parent side
def _signal_name(returncode: int | None) -> str:
    if returncode is None:
        return "unknown cause"
    if returncode < 0:
        try:
            sig = _signal.Signals(-returncode)
            desc = _signal.strsignal(sig) or ""
            return f"{sig.name} ({desc})" if desc else sig.name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


class _ForkedProcess:
    """The part of :class:`subprocess.Popen` the pool uses, for a child made with ``os.fork``."""

    __slots__ = ("pid", "returncode")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere
                self.returncode = -_signal.SIGKILL
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else _time.monotonic() + timeout
        delay = 1e-4
        while self.poll() is None:
            if deadline is not None and _time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
            _time.sleep(delay)
            delay = min(2 * delay, 0.02)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, _signal.SIGKILL)


class _Worker:
    __slots__ = (
        "conn",
        "data",
        "header",
        "log",
        "log_offset",
        "log_path",
        "mm",
        "proc",
        "queue",
        "ready",
        "run_started",
        "scratch",
        "slot",
        "spawned",
        "started_wall",
    )


START_METHODS = ("auto", "fork", "spawn")


class WorkerPool:
    """Persistent isolated workers executing :class:`RunSpec` s of one :class:`RunnerConfig`.

    Parameters
    ----------
    config : RunnerConfig
    workers : int
        Number of worker processes (>= 1).
    timeout : float or None
        Wall-clock limit per run in seconds (``None``: no limit).
    batch_size : int, optional
        Runs sent to a worker at once (default: chosen from the number of runs, at most 32).
    start_timeout : float
        Limit for a worker to start and instantiate the FMU.
    scratch_dir : path, optional
        Where the per-worker scratch and log files go (default: a temporary directory).
    start_method : {"auto", "fork", "spawn"}
        How worker processes are made.  ``"spawn"``: a fresh interpreter (``subprocess``) that
        imports numpy and fmpy and receives the pickled config — about 0.2 s of CPU per worker.
        ``"fork"`` (Linux): a copy of this process, which has all that already — a few
        milliseconds.  Either way the worker is a separate process in its own session with its
        own log file and no inherited file descriptors.  ``"auto"`` forks on Linux when this
        process runs a single thread (forking a multi-threaded process can deadlock the child,
        e.g. inside Dask workers) and spawns otherwise.

    Examples
    --------
    >>> with WorkerPool(cfg, workers=2, timeout=10) as pool:          # doctest: +SKIP
    ...     pool.run(specs, on_result=results.append)
    """

    def __init__(self, config: RunnerConfig, workers: int = 1, timeout: float | None = 60.0,
                 batch_size: int | None = None, start_timeout: float = 120.0,
                 scratch_dir: str | os.PathLike | None = None,
                 start_method: str = "auto") -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds or None, got {timeout}")
        if start_method not in START_METHODS:
            raise ValueError(f"start_method must be one of {START_METHODS}, got {start_method!r}")
        if start_method == "fork" and not hasattr(os, "fork"):  # pragma: no cover - Windows
            raise ValueError("start_method='fork' needs os.fork (POSIX); use 'spawn'.")
        self.config = config
        self.n_workers = int(workers)
        self.timeout = timeout
        self.batch_size = batch_size
        self.start_timeout = start_timeout
        self.start_method = start_method
        self._workers: list[_Worker] = []
        self._n_time = int(np.asarray(config.time).shape[0])
        self._n_col = config.n_columns
        scratch_bytes = self._n_time * self._n_col * 8 * self.n_workers
        self._tmp = tempfile.TemporaryDirectory(
            prefix="run-", dir=scratch_dir or _default_scratch_dir(scratch_bytes))
        self._time = np.asarray(config.time, dtype=float)
        self.respawns = 0
        self.forked = 0  # workers made by fork (the others were spawned)

    # ---------------------------------------------------------------- process management
    def _fork_now(self) -> bool:
        if self.start_method == "spawn":
            return False
        if self.start_method == "fork":
            return True
        import threading

        return sys.platform.startswith("linux") and threading.active_count() == 1

    def _spawn(self, slot: int) -> _Worker:
        w = _Worker()
        w.slot = slot
        w.scratch = os.path.join(self._tmp.name, f"scratch-{slot}.bin")
        w.mm, w.header, w.data = _open_scratch(w.scratch, self._n_time, self._n_col, "w+")
        w.header[:] = 0
        w.header[1] = -1
        w.log_path = os.path.join(self._tmp.name, f"worker-{slot}.log")
        w.log = open(w.log_path, "ab")  # noqa: SIM115 - stays open as the worker's stdout
        w.log_offset = w.log.tell()
        parent_sock, child_sock = socket.socketpair()
        if self._fork_now():
            w.proc = self._fork(child_sock, parent_sock, w)
        else:
            w.proc = self._popen(child_sock, w)
        child_sock.close()
        w.conn = Connection(parent_sock.detach())
        if isinstance(w.proc, subprocess.Popen):  # a forked worker has the config already
            w.conn.send((self.config, w.scratch))
        w.queue = deque()
        w.ready = False
        w.spawned = _time.monotonic()
        w.run_started = w.spawned
        w.started_wall = _time.time()
        return w

    def _popen(self, child_sock: socket.socket, w: _Worker) -> subprocess.Popen:
        env = dict(os.environ)
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env.setdefault(k, "1")
        env["PYTHONUNBUFFERED"] = "1"
        # the worker must import the same fmu_surrogate as this process, whatever its cwd
        import fmu_surrogate

        root = str(Path(fmu_surrogate.__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        code = "from fmu_surrogate.fmu.runner import _worker_main; _worker_main()"
        proc = subprocess.Popen(
            [sys.executable, "-c", code, str(child_sock.fileno()), str(os.getpid())],
            pass_fds=[child_sock.fileno()], stdin=subprocess.DEVNULL, stdout=w.log,
            stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
        return proc

    def _fork(self, child_sock: socket.socket, parent_sock: socket.socket,
              w: _Worker) -> _ForkedProcess:
        for f in (sys.stdout, sys.stderr):  # buffered text must not be written twice
            with contextlib.suppress(Exception):
                f.flush()
        _flush_c_stdio()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            _forked_main(child_sock.fileno(), w.log.fileno(), parent, self.config, w.scratch)
        self.forked += 1
        return _ForkedProcess(pid)

    def _kill(self, w: _Worker) -> int | None:
        with contextlib.suppress(OSError):
            w.proc.kill()
        try:
            rc = w.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - unkillable (D state)
            rc = None
        self._release(w)
        return rc

    def _release(self, w: _Worker) -> None:
        with contextlib.suppress(OSError):
            w.conn.close()
        with contextlib.suppress(OSError):
            w.log.close()

    def _log_tail(self, w: _Worker, limit: int = 3000) -> str:
        try:
            with open(w.log_path, "rb") as f:
                f.seek(w.log_offset)
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return _trim(text, limit)

    def launch(self) -> None:
        """Start the worker processes without waiting for them (see :meth:`start`).

        Lets the caller prepare other things while the workers load the FMU.
        """
        if not self._workers:
            self._workers = [self._spawn(i) for i in range(self.n_workers)]

    def start(self) -> None:
        """Start the workers (if not launched yet) and wait until they have instantiated the FMU.

        Raises
        ------
        FMUError
            The FMU cannot be loaded or instantiated in a worker (the message says why).
        """
        self.launch()
        for w in self._workers:
            if not w.ready:
                self._await_ready(w)

    def _await_ready(self, w: _Worker) -> None:
        from fmu_surrogate.fmu.errors import FMUError

        deadline = w.spawned + self.start_timeout
        while True:
            left = deadline - _time.monotonic()
            if left <= 0:
                self._kill(w)
                raise FMUError(f"the worker did not load the FMU within {self.start_timeout:g} s "
                               f"(instantiation hangs?); output:\n{self._log_tail(w)}")
            if not w.conn.poll(min(left, 1.0)):
                continue
            try:
                msg = pickle.loads(w.conn.recv_bytes())
            except (EOFError, OSError):
                rc = self._kill(w)
                raise FMUError(
                    f"the FMU crashed while loading in the worker process ({_signal_name(rc)}); "
                    f"the FMU binary is broken or incompatible with this machine. "
                    f"Output:\n{self._log_tail(w)}") from None
            self._on_control(w, msg)
            if w.ready:
                return

    def _on_control(self, w: _Worker, msg: tuple) -> None:
        """A control message of a worker that was not ready yet: ready or cannot open."""
        if msg[0] == "ready":
            w.ready = True
            w.run_started = _time.monotonic()
            w.started_wall = _time.time()
            return
        if msg[0] == "open_error":
            self._kill(w)
            _, etype, text = msg
            from fmu_surrogate.fmu import errors as _errors
            from fmu_surrogate.fmu.errors import FMUError

            cls = getattr(_errors, etype, None)
            if isinstance(cls, type) and issubclass(cls, FMUError):
                raise cls(text)
            raise FMUError(f"cannot instantiate the FMU ({etype}: {text}); check that it was "
                           f"exported for this platform and that its resources are "
                           f"complete.")
        raise RuntimeError(f"unexpected message from a worker: {msg[0]!r}")  # pragma: no cover

    def close(self) -> None:
        """Stop all workers and delete the scratch files."""
        for w in self._workers:
            with contextlib.suppress(OSError):
                w.conn.send(None)
        for w in self._workers:
            try:
                w.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait()
            self._release(w)
        self._workers = []
        self._tmp.cleanup()

    def __enter__(self) -> Self:
        return self

    def terminate(self) -> None:
        """Kill all workers now (without waiting for running FMUs) and delete the scratch files."""
        for w in self._workers:
            self._kill(w)
        self._workers = []
        self._tmp.cleanup()

    def __exit__(self, *exc) -> None:
        if exc[0] is not None:  # interrupted: do not wait for running FMUs
            self.terminate()
        else:
            self.close()

    # ---------------------------------------------------------------- running
    def _failure_from_scratch(self, w: _Worker, spec: RunSpec, kind: str, head: str,
                              started_wall: float, started_mono: float) -> RunResult:
        if int(w.header[1]) != spec.index:  # the worker never started this run: no data of it
            n = 0
            head = head.split(";")[0] + f"; run {spec.index} had not started (its worker was " \
                                        f"between runs), so no data of it exists"
        else:
            n = int(min(max(w.header[0], 0), self._n_time))
        data = np.array(w.data[:n], copy=True)
        tail = self._log_tail(w)
        where = f" (last recorded t={self._time[n - 1]:g})" if n else ""
        message = head + where
        if tail:
            message += "\nworker output:\n" + tail
        now = _time.time()
        return RunResult(spec.index, kind, _trim(message), n, data,
                         _time.monotonic() - started_mono, started_wall, now, w.proc.pid)

    def run(self, specs: Iterable[RunSpec], on_result: Callable[[RunResult], None]) -> None:
        """Execute ``specs``; call ``on_result(result)`` in the parent as each run finishes.

        Results arrive in completion order (with several workers not in spec order).  Every spec
        produces exactly one result, failures included.  A result computed by a worker carries
        its store record (:attr:`RunResult.record`); its ``data`` is a view of that record.
        """
        import selectors

        pending = deque(specs)
        total = len(pending)
        if not total:
            return
        self.start()
        workers = self._workers
        n_workers = len(workers)

        def batch_sizes() -> tuple[int, int]:
            """(runs to send, queue length at which a worker gets more).

            Guided self-scheduling unless ``batch_size`` is fixed: batches shrink with the
            runs left, so that no worker still has a long queue when the others run dry; a
            worker always has its next run queued (the queue includes the running one).
            """
            if self.batch_size:
                return self.batch_size, max(1, self.batch_size // 2)
            bs = max(1, min(32, -(-len(pending) // (2 * n_workers))))
            return bs, max(2, min(16, bs // 2))

        sel = selectors.DefaultSelector()
        by_fd: dict[int, _Worker] = {}

        def register() -> None:
            for fd in list(by_fd):
                sel.unregister(fd)
            by_fd.clear()
            for w in workers:
                fd = w.conn.fileno()
                sel.register(fd, selectors.EVENT_READ)
                by_fd[fd] = w

        register()
        n_col = self._n_col
        done = 0
        try:
            while done < total:
                now = _time.monotonic()
                for w in workers:
                    if not (w.ready and pending):
                        continue
                    bs, low = batch_sizes()
                    if len(w.queue) <= low:
                        if not w.queue and w.proc.poll() is not None:  # died idle: replace
                            self._replace(w)
                            register()
                            continue
                        batch = [pending.popleft() for _ in range(min(bs, len(pending)))]
                        if not w.queue:
                            w.run_started = now
                            w.started_wall = _time.time()
                        w.queue.extend(batch)
                        with contextlib.suppress(OSError):  # death is detected below (EOF)
                            w.conn.send(batch)
                # how long may we sleep?
                wait_for = 1.0
                if self.timeout is not None:
                    for w in workers:
                        if w.ready and w.queue:
                            wait_for = min(wait_for, w.run_started + self.timeout - now)
                events = sel.select(timeout=max(0.0, wait_for))
                now = _time.monotonic()
                replaced = False
                for key, _ in events:
                    w = by_fd.get(key.fd)
                    if w is None or w not in workers:
                        continue
                    try:
                        raw = w.conn.recv_bytes()
                    except (EOFError, OSError):
                        done += self._on_death(w, pending, on_result)
                        replaced = True
                        continue
                    if not is_record(raw):
                        msg = pickle.loads(raw)
                        if w.ready:  # pragma: no cover - protocol invariant
                            raise RuntimeError(f"unexpected message from a worker: {msg[0]!r}")
                        self._on_control(w, msg)
                        continue
                    hd, data = decode_record(raw, n_col)
                    spec = w.queue.popleft()
                    if spec.index != hd["index"]:  # pragma: no cover - protocol invariant
                        raise RuntimeError(f"worker answered run {hd['index']} for {spec.index}")
                    w.run_started = now
                    w.started_wall = hd["t1"]
                    w.log_offset = 0  # the worker empties its log at the start of each run
                    on_result(RunResult(hd["index"], hd["kind"], hd["message"], hd["n"], data,
                                        hd["wall"], hd["t0"], hd["t1"], hd["worker"], raw))
                    done += 1
                if replaced:
                    register()
                for w in workers:
                    if not w.ready and now - w.spawned > self.start_timeout:
                        from fmu_surrogate.fmu.errors import FMUError

                        self._kill(w)
                        raise FMUError(f"a restarted worker did not load the FMU within "
                                       f"{self.start_timeout:g} s; output:\n{self._log_tail(w)}")
                if self.timeout is not None:
                    for w in list(workers):
                        if w.ready and w.queue and now - w.run_started > self.timeout:
                            spec = w.queue.popleft()
                            rc_started = w.run_started
                            self._kill(w)
                            head = (f"the run exceeded the time limit of {self.timeout:g} s and "
                                    f"its worker was killed (the FMU hangs or is too slow; raise "
                                    f"the timeout if it is just slow)")
                            res = self._failure_from_scratch(w, spec, "timeout", head,
                                                             w.started_wall, rc_started)
                            pending.extendleft(reversed(w.queue))
                            w.queue.clear()
                            on_result(res)
                            done += 1
                            self._replace(w)
                            register()
        finally:
            sel.close()

    def _replace(self, w: _Worker) -> None:
        try:
            if w.proc.poll() is None:
                w.proc.kill()
                w.proc.wait()
        except OSError:
            pass
        self._release(w)
        new = self._spawn(w.slot)
        self._workers[self._workers.index(w)] = new
        self.respawns += 1

    def _on_death(self, w: _Worker, pending: deque, on_result) -> int:
        try:
            rc = w.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            w.proc.kill()
            rc = w.proc.wait()
        produced = 0
        if not w.ready:
            from fmu_surrogate.fmu.errors import FMUError

            raise FMUError(f"a restarted worker crashed while loading the FMU "
                           f"({_signal_name(rc)}); output:\n{self._log_tail(w)}")
        if w.queue:
            spec = w.queue.popleft()
            if rc is not None and -rc in (_signal.SIGKILL, _signal.SIGTERM):
                head = (f"worker killed by {_signal.Signals(-rc).name} (outside the FMU? the "
                        f"out-of-memory killer or a user); the run is recorded as a crash")
            else:
                head = (f"the worker process died during the run: {_signal_name(rc)}; the FMU "
                        f"crashed (native fault in the model code)")
            res = self._failure_from_scratch(w, spec, "crash", head, w.started_wall,
                                             w.run_started)
            pending.extendleft(reversed(w.queue))
            w.queue.clear()
            on_result(res)
            produced = 1
        self._replace(w)
        return produced


def _default_scratch_dir(n_bytes: int = 0) -> str | None:
    """The harvest's folder in ``/dev/shm`` (RAM) for scratch files up to 256 MB in total, else
    in the temp directory (:mod:`fmu_surrogate.fmu.tempdirs`)."""
    from fmu_surrogate.fmu.tempdirs import scratch_root

    return scratch_root(ram=n_bytes <= 2**28)


def run_isolated(config: RunnerConfig, specs: Sequence[RunSpec], *, workers: int = 1,
                 timeout: float | None = 60.0,
                 on_result: Callable[[RunResult], None] | None = None) -> list[RunResult]:
    """Execute ``specs`` in isolated workers and return the results in spec order.

    Convenience wrapper around :class:`WorkerPool` (used by Dask tasks and tests).
    """
    results: dict[int, RunResult] = {}

    def collect(r: RunResult) -> None:
        results[r.index] = r
        if on_result is not None:
            on_result(r)

    with WorkerPool(config, workers=workers, timeout=timeout) as pool:
        pool.run(specs, collect)
    return [results[s.index] for s in specs]

