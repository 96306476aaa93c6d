"""The parent's handle of one worker process of the isolated runner: starting it (forked or
spawned), stopping it, its log and what its scratch file holds of a run it did not finish.

A spawned worker is a fresh Python interpreter (``subprocess``); a forked one is a copy of the
calling process (:func:`fmu_surrogate.fmu.runner.worker._forked_main`).  Either way it runs in its own
session with its own log file and none of the caller's open files.
"""

from __future__ import annotations

import contextlib
import os
import signal as _signal
import socket
import subprocess
import sys
import time as _time
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

from fmu_surrogate.fmu.runner.failures import _trim
from fmu_surrogate.fmu.runner.logs import read_bounded
from fmu_surrogate.fmu.runner.runs import RunnerConfig, RunResult, RunSpec
from fmu_surrogate.fmu.runner.worker import _flush_c_stdio, _forked_main, _open_scratch


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
    """One worker process as the parent sees it: the process, its connection, its queue of runs
    sent, its scratch file and its log."""

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

    def kill(self) -> int | None:
        """Kill the process, wait for it and close its connection and log; its exit code."""
        with contextlib.suppress(OSError):
            self.proc.kill()
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - unkillable (D state)
            rc = None
        self.release()
        return rc

    def release(self) -> None:
        """Close the connection and the log file."""
        with contextlib.suppress(OSError):
            self.conn.close()
        with contextlib.suppress(OSError):
            self.log.close()

    def log_tail(self, limit: int = 3000) -> str:
        """What the worker wrote to its log since the start of its current run: its head and
        tail, about ``limit`` characters, and how many bytes were left out between them (never
        more than that is read)."""
        text = read_bounded(self.log_path, self.log_offset, head=limit // 3,
                            tail=limit - limit // 3)
        return _trim(text, limit + 100)  # room for the line that counts the bytes left out

    def failure_from_scratch(self, spec: RunSpec, kind: str, head: str, started_wall: float,
                             started_mono: float, time: np.ndarray) -> RunResult:
        """The result of a run the worker did not finish, with the rows of its scratch file."""
        if int(self.header[1]) != spec.index:  # the worker never started this run: no data of it
            n = 0
            head = head.split(";")[0] + f"; run {spec.index} had not started (its worker was " \
                                        f"between runs), so no data of it exists"
        else:
            n = int(min(max(self.header[0], 0), time.shape[0]))
        data = np.array(self.data[:n], copy=True)
        tail = self.log_tail()
        where = f" (last recorded t={time[n - 1]:g})" if n else ""
        message = head + where
        if tail:
            message += "\nworker output:\n" + tail
        now = _time.time()
        return RunResult(spec.index, kind, _trim(message), n, data,
                         _time.monotonic() - started_mono, started_wall, now, self.proc.pid)


def spawn_worker(config: RunnerConfig, folder: str, slot: int, fork: bool,
                 store_path: str | None = None) -> _Worker:
    """Start worker ``slot`` of ``config`` with its scratch and log file in ``folder``.

    ``fork``: make it with ``os.fork`` (it has the config already), else as a fresh interpreter
    (it receives the pickled config).  ``store_path``: the run store's ``runs.bin``, to which
    the worker appends its records itself.  It is not ready until it reports so.
    """
    n_time = int(np.asarray(config.time).shape[0])
    w = _Worker()
    w.slot = slot
    w.scratch = os.path.join(folder, f"scratch-{slot}.bin")
    w.mm, w.header, w.data = _open_scratch(w.scratch, n_time, config.n_columns, "w+")
    w.header[:] = 0
    w.header[1] = -1
    w.log_path = os.path.join(folder, f"worker-{slot}.log")
    w.log = open(w.log_path, "ab")  # noqa: SIM115 - stays open as the worker's stdout
    # a replacement starts with an empty log: the worker empties it at the start of each run,
    # so an offset past the dead worker's output would point past the new worker's first run
    w.log.truncate(0)
    w.log_offset = 0
    parent_sock, child_sock = socket.socketpair()
    if fork:
        w.proc = _fork(config, child_sock, w, store_path)
    else:
        w.proc = _popen(child_sock, w)
    child_sock.close()
    w.conn = Connection(parent_sock.detach())
    if isinstance(w.proc, subprocess.Popen):  # a forked worker has the config already
        w.conn.send((config, w.scratch, store_path))
    w.queue = deque()
    w.ready = False
    w.spawned = _time.monotonic()
    w.run_started = w.spawned
    w.started_wall = _time.time()
    return w


def _popen(child_sock: socket.socket, w: _Worker) -> subprocess.Popen:
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env.setdefault(k, "1")
    env["PYTHONUNBUFFERED"] = "1"
    # the worker must import the same fmu_surrogate as this process, whatever its cwd
    import fmu_surrogate

    root = str(Path(fmu_surrogate.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    code = "from fmu_surrogate.fmu.runner.worker import _worker_main; _worker_main()"
    return subprocess.Popen(
        [sys.executable, "-c", code, str(child_sock.fileno()), str(os.getpid())],
        pass_fds=[child_sock.fileno()], stdin=subprocess.DEVNULL, stdout=w.log,
        stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )


def _fork(config: RunnerConfig, child_sock: socket.socket, w: _Worker,
          store_path: str | None) -> _ForkedProcess:
    for f in (sys.stdout, sys.stderr):  # buffered text must not be written twice
        with contextlib.suppress(Exception):
            f.flush()
    _flush_c_stdio()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        _forked_main(child_sock.fileno(), w.log.fileno(), parent, config, w.scratch,
                     store_path)
    return _ForkedProcess(pid)


def open_error(etype: str, text: str) -> Exception:
    """The error to raise for a worker's ``("open_error", etype, text)`` message."""
    from fmu_surrogate.fmu import errors as _errors
    from fmu_surrogate.fmu.errors import FMUError

    cls = getattr(_errors, etype, None)
    if isinstance(cls, type) and issubclass(cls, FMUError):
        return cls(text)
    return FMUError(f"cannot instantiate the FMU ({etype}: {text}); check that it was exported "
                    f"for this platform and that its resources are complete.")
