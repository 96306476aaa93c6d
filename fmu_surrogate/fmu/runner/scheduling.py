"""Scheduling of runs over the workers of a :class:`~fmu_surrogate.fmu.runner.pool.WorkerPool`.

Guided self-scheduling: batches shrink as the runs run out, so the workers finish together; the
next run is always queued so that a worker never waits for the parent.  One :class:`_Dispatch`
serves one call of :meth:`WorkerPool.run <fmu_surrogate.fmu.runner.pool.WorkerPool.run>`: it sends
batches, receives results, enforces the timeout per run and hands dead workers to the pool.

The parent's work per run is kept small, since with a worker on every core it takes a core from
a worker: one ``read`` takes every message a worker has sent (:class:`_Inbox`), a stored run's
message is a fixed binary header (no JSON to decode, only its data to read back), and while the
workers have every core the parent lets results gather for up to 1 ms between wake-ups, never
longer than half the time the shortest queue of runs lasts (on rc_network with 2 workers, 4.7
results per wake-up instead of 1.2, and 0.03 instead of 0.045 to 0.05 ms of the parent's CPU per
run).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import selectors
import struct
import time as _time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Protocol

import numpy as np

from fmu_surrogate.errors import ComputationError
from fmu_surrogate.fmu.campaigns.store_records import decode_record, is_record
from fmu_surrogate.fmu.runner.processes import _Worker
from fmu_surrogate.fmu.runner.runs import RunResult, RunSpec
from fmu_surrogate.fmu.runner.worker import stored_message

_LEN = struct.Struct("!i")  # the length header of multiprocessing.connection messages
_LONG = struct.Struct("!Q")  # the length of a message above 2 GiB, after a header of -1


class _Inbox:
    """The messages of one worker's connection (``multiprocessing.connection`` framing), read
    in bulk: one ``read`` takes every message the worker has sent since the last one."""

    __slots__ = ("buf",)

    def __init__(self) -> None:
        self.buf = bytearray()

    def read(self, fd: int) -> list[bytes] | None:
        """The messages completed by what ``fd`` has now (it is readable); ``None`` at the end
        of the connection (a message cut short there is dropped: its sender died)."""
        data = os.read(fd, 1 << 16)  # larger reads cost more than they save (a fresh buffer)
        if not data:
            return None
        buf = self.buf
        buf += data
        out = []
        pos, size = 0, len(buf)
        with memoryview(buf) as mv:
            while size - pos >= _LEN.size:
                (n,) = _LEN.unpack_from(mv, pos)
                head = _LEN.size
                if n == -1:
                    if size - pos < _LEN.size + _LONG.size:
                        break
                    (n,) = _LONG.unpack_from(mv, pos + _LEN.size)
                    head += _LONG.size
                if size - pos < head + n:
                    break
                out.append(bytes(mv[pos + head:pos + head + n]))
                pos += head + n
        del buf[:pos]
        return out


class PoolWorkers(Protocol):
    """What a :class:`_Dispatch` needs of the pool whose workers it drives: the
    :class:`~fmu_surrogate.fmu.runner.pool.WorkerPool` satisfies it."""

    timeout: float | None
    batch_size: int | None
    _workers: list[_Worker]
    _n_col: int
    _time: np.ndarray
    _store_fd: int | None

    def _on_control(self, w: _Worker, msg: tuple) -> None: ...

    def _check_restarted(self, now: float) -> None: ...

    def _replace(self, w: _Worker) -> None: ...

    def _on_death(self, w: _Worker, pending: deque,
                  on_result: Callable[[RunResult], None]) -> int: ...


class _Dispatch:
    """One call of ``WorkerPool.run``: ``specs`` over the pool's started workers."""

    def __init__(self, pool: PoolWorkers, specs: Iterable[RunSpec],
                 on_result: Callable[[RunResult], None]) -> None:
        self.pool = pool
        self.pending = deque(specs)
        self.on_result = on_result
        self.sel = selectors.DefaultSelector()
        self.by_fd: dict[int, _Worker] = {}
        self.inboxes: dict[_Worker, _Inbox] = {}
        #: whether to let results gather (:meth:`_pause`): when the workers have every core
        self.coalesce = len(pool._workers) >= (os.cpu_count() or 1)
        self.run_time = 0.0  # mean seconds per run, of the latest results

    def _register(self) -> None:
        """Watch the connections of the pool's current workers."""
        for fd in list(self.by_fd):
            self.sel.unregister(fd)
        self.by_fd.clear()
        for w in self.pool._workers:
            fd = w.conn.fileno()
            self.sel.register(fd, selectors.EVENT_READ)
            self.by_fd[fd] = w

    def run(self) -> None:
        """Execute all runs; every run produces exactly one result."""
        total = len(self.pending)
        self._register()
        done = 0
        try:
            while done < total:
                if self._feed():
                    self._register()
                events = self.sel.select(timeout=self._wait_for(_time.monotonic()))
                now = _time.monotonic()
                replaced = False
                for key, _ in events:
                    w = self.by_fd.get(key.fd)
                    if w is None or w not in self.pool._workers:
                        continue
                    got, dead = self._receive(w, now)
                    done += got
                    if dead:
                        self.inboxes.pop(w, None)
                        done += self.pool._on_death(w, self.pending, self.on_result)
                        replaced = True
                self.pool._check_restarted(now)
                expired = self._expire(now)
                done += expired
                if replaced or expired:
                    self._register()
                elif events and self.pending and self.coalesce:
                    self._pause()
        finally:
            self.sel.close()

    def _receive(self, w: _Worker, now: float) -> tuple[int, bool]:
        """Read every message worker ``w`` has sent (one ``read``) and handle the complete
        ones: (runs finished, whether the worker's connection ended)."""
        inbox = self.inboxes.get(w)
        if inbox is None:
            inbox = self.inboxes[w] = _Inbox()
        try:
            messages = inbox.read(w.conn.fileno())
        except OSError:  # the connection was reset: the worker died
            return 0, True
        got = 0
        for raw in messages or ():
            got += self._on_message(w, raw, now)
        return got, messages is None

    def _pause(self) -> None:
        """Let results gather for a moment when the workers have every core (a wake-up of this
        process per run takes a core from a worker): never longer than half the time the
        shortest queue of runs lasts, at most 1 ms, so that no worker runs dry."""
        queued = min((len(w.queue) for w in self.pool._workers if w.ready), default=0)
        pause = min(1e-3, 0.5 * max(0, queued - 1) * self.run_time)
        if pause > 1e-4:
            _time.sleep(pause)

    def _batch_sizes(self, n_pending: int) -> tuple[int, int]:
        """(runs to send, queue length at which a worker gets more).

        Guided self-scheduling unless ``batch_size`` is fixed: batches shrink with the runs left,
        so that no worker still has a long queue when the others run dry; a worker always has
        its next run queued (the queue includes the running one).
        """
        if self.pool.batch_size:
            return self.pool.batch_size, max(1, self.pool.batch_size // 2)
        bs = max(1, min(32, -(-n_pending // (2 * len(self.pool._workers)))))
        return bs, max(2, min(16, bs // 2))

    def _feed(self) -> bool:
        """Send the next batch to every ready worker whose queue runs low; whether a worker that
        had died idle was replaced."""
        now = _time.monotonic()
        replaced = False
        for w in self.pool._workers:
            if not (w.ready and self.pending):
                continue
            bs, low = self._batch_sizes(len(self.pending))
            if len(w.queue) > low:
                continue
            if not w.queue and w.proc.poll() is not None:  # died idle: replace
                self.pool._replace(w)
                replaced = True
                continue
            batch = [self.pending.popleft() for _ in range(min(bs, len(self.pending)))]
            if not w.queue:
                w.run_started = now
                w.started_wall = _time.time()
            w.queue.extend(batch)
            with contextlib.suppress(OSError):  # death is detected by the caller (EOF)
                w.conn.send(batch)
        return replaced

    def _wait_for(self, now: float) -> float:
        """How long the loop may sleep: until the first running run reaches the timeout."""
        wait_for = 1.0
        if self.pool.timeout is not None:
            for w in self.pool._workers:
                if w.ready and w.queue:
                    wait_for = min(wait_for, w.run_started + self.pool.timeout - now)
        return max(0.0, wait_for)

    def _on_message(self, w: _Worker, raw: bytes, now: float) -> int:
        """A message of worker ``w``: a control message, a run's record or where the worker
        stored it; runs it finished."""
        stored = stored_message(raw)
        if stored is not None:  # appended to the store by the worker: read its data back
            index, kind, message, n, wall, t0, t1, worker, offset, nbytes = stored
            body = os.pread(self.pool._store_fd, nbytes, offset)  # from the page cache
            if len(body) != nbytes or nbytes != 8 * n * self.pool._n_col:  # pragma: no cover
                raise ComputationError(f"the run store has no data of run {index} at offset "
                                       f"{offset}")
            data = np.frombuffer(body, dtype="<f8").reshape(n, self.pool._n_col)
            record = None
        elif is_record(raw):
            hd, data = decode_record(raw, self.pool._n_col)
            index, kind, message, n, wall, t0, t1, worker = (
                hd["index"], hd["kind"], hd["message"], hd["n"], hd["wall"], hd["t0"], hd["t1"],
                hd["worker"])
            record = raw
        else:
            msg = pickle.loads(raw)
            if w.ready:  # pragma: no cover - protocol invariant
                raise ComputationError(f"unexpected message from a worker: {msg[0]!r}")
            self.pool._on_control(w, msg)
            return 0
        spec = w.queue.popleft()
        if spec.index != index:  # pragma: no cover - protocol invariant
            raise ComputationError(f"worker answered run {index} for {spec.index}")
        w.run_started = now
        w.started_wall = t1
        w.log_offset = 0  # the worker empties its log at the start of each run
        self.run_time += 0.1 * (wall - self.run_time)
        self.on_result(RunResult(index, kind, message, n, data, wall, t0, t1, worker, record,
                                 stored is not None))
        return 1

    def _expire(self, now: float) -> int:
        """Kill and replace the workers whose run exceeds the timeout; runs recorded so."""
        timeout = self.pool.timeout
        if timeout is None:
            return 0
        expired = 0
        for w in list(self.pool._workers):
            if w.ready and w.queue and now - w.run_started > timeout:
                spec = w.queue.popleft()
                started = w.run_started
                w.kill()
                head = (f"the run exceeded the time limit of {timeout:g} s and its worker "
                        f"was killed (the FMU hangs or is too slow; raise the timeout if it is "
                        f"just slow)")
                res = w.failure_from_scratch(spec, "timeout", head, w.started_wall, started,
                                             self.pool._time)
                self.pending.extendleft(reversed(w.queue))
                w.queue.clear()
                self.on_result(res)
                expired += 1
                self.inboxes.pop(w, None)
                self.pool._replace(w)
        return expired
