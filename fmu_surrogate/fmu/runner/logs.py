"""The bounded log of a worker: what an FMU prints on stdout and stderr, per run.

An FMU's own prints (not through the FMI logger) go straight into the worker's log file, so
nothing is lost when the worker dies mid-run.  Two things keep a flood (an FMU printing hundreds
of megabytes) bounded:

* :class:`LogKeeper`, a thread of the worker, frees the middle of the current run's output as it
  grows (``fallocate(PUNCH_HOLE)``: the file keeps its length, the middle reads as zeros and
  takes no memory in ``/dev/shm`` or space on disk), keeping the first :data:`LOG_HEAD` and the
  last :data:`LOG_TAIL` bytes.  It looks every :data:`CHECK_INTERVAL` seconds once the output
  exceeds the head (every :data:`IDLE_INTERVAL` before), so the file holds at most head + tail +
  :data:`PUNCH_MIN` plus what the FMU writes in such an interval.
* :func:`read_bounded` reads only the head and the tail and says how many bytes it left out:
  reading a log never costs more than ``LOG_HEAD + LOG_TAIL`` bytes of memory.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
import time as _time

__all__ = ["CHECK_INTERVAL", "IDLE_INTERVAL", "LOG_HEAD", "LOG_TAIL", "PUNCH_MIN", "LogKeeper",
           "read_bounded", "start_log_keeper"]

#: bytes kept from the start and from the end of a run's output
LOG_HEAD = LOG_TAIL = 64 * 1024
#: the middle is freed once it exceeds this many bytes
PUNCH_MIN = 1 << 20
#: seconds between two looks of :class:`LogKeeper` at a log that holds more than its head
CHECK_INTERVAL = 0.005
#: seconds between two looks at a log that holds less (the usual case: an FMU that is quiet)
IDLE_INTERVAL = 0.025

_PAGE = 4096
_FALLOC_FL_KEEP_SIZE, _FALLOC_FL_PUNCH_HOLE = 0x01, 0x02


def read_bounded(path: str | os.PathLike, start: int = 0, head: int = LOG_HEAD,
                 tail: int = LOG_TAIL) -> str:
    """The output in ``path`` from byte ``start`` on: whole if short, else head and tail.

    Parameters
    ----------
    path : path
        The log file.
    start : int
        Where the output of interest begins.
    head, tail : int
        Bytes kept from its start and from its end.

    Returns
    -------
    str
        The text (UTF-8, undecodable bytes replaced); the bytes left out between head and tail
        are counted in a line ``[... N bytes of output dropped ...]``.
    """
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            n = max(0, size - start)
            f.seek(start)
            if n <= head + tail:
                return f.read(n).decode("utf-8", "replace")
            first = f.read(head)
            f.seek(size - tail)
            last = f.read(tail)
    except OSError:
        return ""
    dropped = n - head - tail
    return (first.decode("utf-8", "replace") + f"\n[... {dropped} bytes of output dropped ...]\n"
            + last.decode("utf-8", "replace"))


def _punch_hole() -> object | None:
    """libc's ``fallocate``, or ``None`` where there is none (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        f = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):  # pragma: no cover
        return None
    f.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    f.restype = ctypes.c_int
    return f


class LogKeeper(threading.Thread):
    """Free the middle of the output a worker writes into its log file ``fd`` (a daemon thread).

    The output of a run starts at offset 0 (the worker empties its log at the start of each
    run); of every run, the first ``head`` and last ``tail`` bytes stay (see the module docs).

    Parameters
    ----------
    fd : int
        The log file, open for writing (the worker's stdout/stderr).
    head, tail : int
        Bytes kept from the start and the end of the output.
    interval : float
        Seconds between two looks at the file.
    """

    def __init__(self, fd: int, head: int = LOG_HEAD, tail: int = LOG_TAIL,
                 interval: float = CHECK_INTERVAL) -> None:
        super().__init__(name="fmu-surrogate-log-keeper", daemon=True)
        self.fd, self.head, self.tail, self.interval = fd, head, tail, interval
        self._fallocate = _punch_hole()

    def run(self) -> None:  # pragma: no cover - runs in the worker (covered by the tests)
        if self._fallocate is None:
            return
        punched = 0  # end of the hole made so far in the current output
        lo = -(-self.head // _PAGE) * _PAGE  # whole pages after the head
        size = 0
        while True:
            # a quiet log is looked at less often (each look takes the worker's GIL)
            _time.sleep(self.interval if size > lo else IDLE_INTERVAL)
            try:
                size = os.fstat(self.fd).st_size
            except OSError:
                return
            if size < punched:  # the log was emptied: a new run
                punched = 0
            hi = (size - self.tail) // _PAGE * _PAGE
            start = max(lo, punched)
            if hi - start < PUNCH_MIN:
                continue
            if self._fallocate(self.fd, _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE,
                               start, hi - start) != 0:
                return  # the file system cannot free ranges: the output stays as it is
            punched = hi


def start_log_keeper(fd: int) -> LogKeeper | None:
    """Start a :class:`LogKeeper` on ``fd``; ``None`` where holes cannot be made."""
    keeper = LogKeeper(fd)
    if keeper._fallocate is None:
        return None
    with contextlib.suppress(RuntimeError):
        keeper.start()
    return keeper
