"""Isolated execution of FMU runs: a pool of persistent worker processes, timeouts, crash
detection.

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
  (:func:`fmu_surrogate.fmu.campaigns.store.encode_record`, made by the worker), which the parent appends
  as it is — or, when the pool is given the store's file (``store_path``), the fields of the
  header of the record the worker appended itself, fixed-size binary, and where its data lies,
  which the parent reads back from the page cache (the data then crosses no pipe and is
  written once, by the process that made it); the parent reads all the messages a worker has
  sent at once and, with a worker on every core, wakes up about once a millisecond at most
  (:mod:`~fmu_surrogate.fmu.runner.scheduling`);
* enforces a wall-clock timeout per run: a worker whose current run exceeds it is killed
  (SIGKILL) and respawned, the run is recorded as ``"timeout"``;
* detects a worker that died: a fault of the FMU (segfault, abort, ...) is recorded as
  ``"crash"``, a worker stopped from outside (SIGTERM, SIGINT, SIGHUP, SIGKILL: a user, a batch
  system, the OOM killer) as ``"interrupted"``, both with the signal name and the head and tail
  of the worker's output (stderr, the FMU's log messages);
* keeps partial data of killed/crashed runs: the backend writes every recorded row straight into a
  per-worker scratch file (memory-mapped) together with a row counter, which the parent reads
  after the worker is gone.

The pieces: :mod:`~fmu_surrogate.fmu.runner.runs` (config, spec, result),
:mod:`~fmu_surrogate.fmu.runner.failures` (failure classification), :mod:`~fmu_surrogate.fmu.runner.worker`
(the worker process) and :mod:`~fmu_surrogate.fmu.runner.processes` (the parent's handle of a worker);
this module schedules runs over the workers.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal as _signal
import subprocess
import sys
import tempfile
import time as _time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from fmu_surrogate.errors import ComputationError, InvalidInputError
from fmu_surrogate.fmu.runner.failures import _signal_name, classify
from fmu_surrogate.fmu.runner.processes import _Worker, open_error, spawn_worker
from fmu_surrogate.fmu.runner.runs import (
    DEFAULT_EXPLODE_THRESHOLD,
    RunnerConfig,
    RunResult,
    RunSpec,
)
from fmu_surrogate.fmu.runner.scheduling import _Dispatch

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

START_METHODS = ("auto", "fork", "spawn")

#: signals that stop a worker from outside (not a fault of the FMU): its run is "interrupted"
_OUTSIDE_SIGNALS = frozenset(getattr(_signal, n) for n in ("SIGKILL", "SIGTERM", "SIGINT",
                                                          "SIGHUP") if hasattr(_signal, n))


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
    store_path : path, optional
        The run store's ``runs.bin`` (:class:`~fmu_surrogate.fmu.campaigns.store.RunStore`,
        opened by the caller): workers append their records to it themselves and the parent
        reads each back from the page cache instead of through the pipe; its results come with
        :attr:`RunResult.stored` set.
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
                 start_method: str = "auto", store_path: str | os.PathLike | None = None) -> None:
        if workers < 1:
            raise InvalidInputError(f"workers must be >= 1, got {workers}")
        if timeout is not None and not timeout > 0:
            raise InvalidInputError(f"timeout must be > 0 seconds or None, got {timeout}")
        if start_method not in START_METHODS:
            raise InvalidInputError(
                f"start_method must be one of {START_METHODS}, got {start_method!r}")
        if start_method == "fork" and not hasattr(os, "fork"):  # pragma: no cover - Windows
            raise InvalidInputError("start_method='fork' needs os.fork (POSIX); use 'spawn'.")
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
        folder, prefix = scratch_dir or _default_scratch_dir(scratch_bytes), "run-"
        if folder is None:  # outside a harvest: under the package's parent, named by our pid
            from fmu_surrogate.fmu.runner.tempdirs import parents, remove_stale

            remove_stale()  # pools and harvests of processes killed with SIGKILL
            folder, prefix = parents()[0], f"{os.getpid()}-run-"
            folder.mkdir(parents=True, exist_ok=True)
        self._tmp = tempfile.TemporaryDirectory(prefix=prefix, dir=folder)
        self._time = np.asarray(config.time, dtype=float)
        self.store_path = None if store_path is None else os.fspath(store_path)
        #: read side of the run store, for the records the workers append
        self._store_fd: int | None = None
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
        fork = self._fork_now()
        w = spawn_worker(self.config, self._tmp.name, slot, fork, self.store_path)
        self.forked += fork
        return w

    def launch(self) -> None:
        """Start the worker processes without waiting for them (see :meth:`start`).

        Lets the caller prepare other things while the workers load the FMU.
        """
        if self.store_path is not None and self._store_fd is None:
            self._store_fd = os.open(self.store_path, os.O_RDONLY)
        if not self._workers:
            for i in range(self.n_workers):  # each recorded at once: terminate() finds it
                self._workers.append(self._spawn(i))

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
                w.kill()
                raise FMUError(f"the worker did not load the FMU within {self.start_timeout:g} s "
                               f"(instantiation hangs?); output:\n{w.log_tail()}")
            if not w.conn.poll(min(left, 1.0)):
                continue
            try:
                msg = pickle.loads(w.conn.recv_bytes())
            except (EOFError, OSError):
                rc = w.kill()
                raise FMUError(
                    f"the FMU crashed while loading in the worker process ({_signal_name(rc)}); "
                    f"the FMU binary is broken or incompatible with this machine. "
                    f"Output:\n{w.log_tail()}") from None
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
            w.kill()
            raise open_error(msg[1], msg[2])
        raise ComputationError(f"unexpected message from a worker: {msg[0]!r}")  # pragma: no cover

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
            w.release()
        self._workers = []
        self._release()

    def _release(self) -> None:
        """Close the read side of the store and delete the scratch files."""
        if self._store_fd is not None:
            os.close(self._store_fd)
            self._store_fd = None
        self._tmp.cleanup()

    def __enter__(self) -> Self:
        return self

    def terminate(self) -> None:
        """Kill all workers now (without waiting for running FMUs) and delete the scratch files."""
        for w in self._workers:
            w.kill()
        self._workers = []
        self._release()

    def __exit__(self, *exc) -> None:
        if exc[0] is not None:  # interrupted: do not wait for running FMUs
            self.terminate()
        else:
            self.close()

    # ---------------------------------------------------------------- running
    def run(self, specs: Iterable[RunSpec], on_result: Callable[[RunResult], None]) -> None:
        """Execute ``specs``; call ``on_result(result)`` in the parent as each run finishes.

        Results arrive in completion order (with several workers not in spec order).  Every spec
        produces exactly one result, failures included.  A result computed by a worker carries
        its store record (:attr:`RunResult.record`); its ``data`` is a view of that record.
        """
        specs = list(specs)
        if not specs:
            return
        self.start()
        _Dispatch(self, specs, on_result).run()

    def _check_restarted(self, now: float) -> None:
        """Raise when a restarted worker has not loaded the FMU within ``start_timeout``."""
        for w in self._workers:
            if not w.ready and now - w.spawned > self.start_timeout:
                from fmu_surrogate.fmu.errors import FMUError

                w.kill()
                raise FMUError(f"a restarted worker did not load the FMU within "
                               f"{self.start_timeout:g} s; output:\n{w.log_tail()}")

    def _replace(self, w: _Worker) -> None:
        try:
            if w.proc.poll() is None:
                w.proc.kill()
                w.proc.wait()
        except OSError:
            pass
        w.release()
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
                           f"({_signal_name(rc)}); output:\n{w.log_tail()}")
        if w.queue:
            spec = w.queue.popleft()
            if rc is not None and -rc in _OUTSIDE_SIGNALS:
                kind = "interrupted"
                head = (f"the worker was stopped by {_signal.Signals(-rc).name} from outside "
                        f"(a user, a batch system or the out-of-memory killer), not by the FMU; "
                        f"the run is recorded as interrupted and a resumed harvest simulates it "
                        f"again")
            else:
                kind = "crash"
                head = (f"the worker process died during the run: {_signal_name(rc)}; the FMU "
                        f"crashed (native fault in the model code)")
            res = w.failure_from_scratch(spec, kind, head, w.started_wall,
                                         w.run_started, self._time)
            pending.extendleft(reversed(w.queue))
            w.queue.clear()
            on_result(res)
            produced = 1
        self._replace(w)
        return produced


def _default_scratch_dir(n_bytes: int = 0) -> str | None:
    """The harvest's folder in ``/dev/shm`` (RAM) for scratch files up to 256 MB in total, else
    in the temp directory (:mod:`fmu_surrogate.fmu.runner.tempdirs`)."""
    from fmu_surrogate.fmu.runner.tempdirs import scratch_root

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

