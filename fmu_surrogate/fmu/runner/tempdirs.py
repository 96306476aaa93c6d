"""Temporary folders of a harvest: one per harvest, under one named parent, always removed.

Every file a harvest puts in temporary space — the extracted FMU of each worker, the workers'
scratch files and logs — lives in one folder ``<parent>/<pid>-<random>`` whose parent is
``fmu-surrogate`` inside the system's temporary directory (and inside ``/dev/shm`` for RAM
scratch).  :func:`harvest_space` creates it, exports its path to the worker processes through
``FMU_SURROGATE_TMP`` and removes it on every way out: normal end, exception, Ctrl-C, and
SIGTERM (what ``kill``, container stops and batch schedulers send), which it turns into an
exception for the time of the harvest.  A worker that crashes leaves its files inside the
harvest's folder, so they go with it.  A process killed with SIGKILL cannot clean up: the next
harvest removes the folders whose process is gone (:func:`remove_stale`).  Worker processes
point ``TMPDIR`` at that folder too, so the temporary files of the libraries they load go with
it; outside a harvest (constraint discovery, ``run_isolated``, Dask tasks) they use their pool's
own folder ``<parent>/<pid>-run-<random>``, which the pool removes when it closes and
:func:`remove_stale` when its process was killed.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])
from pathlib import Path

__all__ = ["ENV", "Terminated", "harvest_space", "in_harvest_space", "parents", "remove_stale",
           "scratch_root"]

#: environment variable naming the current harvest's folder (inherited by workers)
ENV = "FMU_SURROGATE_TMP"
_NAME = "fmu-surrogate"


def parents() -> list[Path]:
    """The named parents of harvest folders: in the temp directory, and in ``/dev/shm``.

    Returns
    -------
    list of Path
    """
    out = [Path(tempfile.gettempdir()) / _NAME]
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        out.append(shm / _NAME)
    return out


def scratch_root(ram: bool = False) -> str | None:
    """Folder for temporary files of the current harvest (``None``: the system default).

    Parameters
    ----------
    ram : bool
        Prefer the harvest's folder in ``/dev/shm``.

    Returns
    -------
    str or None
    """
    base = os.environ.get(ENV)
    if not base:
        return None
    if ram:
        shm = Path("/dev/shm") / _NAME / Path(base).name
        with contextlib.suppress(OSError):
            shm.mkdir(parents=True, exist_ok=True)
            return str(shm)
    Path(base).mkdir(parents=True, exist_ok=True)
    return base


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - another user's process
        return True
    return True


def remove_stale() -> int:
    """Remove harvest folders whose process is gone; return how many.

    Returns
    -------
    int
    """
    removed = 0
    for parent in parents():
        if not parent.is_dir():
            continue
        for child in parent.iterdir():
            pid_text = child.name.split("-", 1)[0]
            if pid_text.isdigit() and not _alive(int(pid_text)):
                shutil.rmtree(child, ignore_errors=True)
                removed += 1
    return removed


class _Terminated(BaseException):
    """SIGTERM during a harvest (raised in the main thread so that cleanup runs)."""


class Terminated(SystemExit):
    """The harvest ended on SIGTERM, after its cleanup; exit status 143 (128 + SIGTERM).

    The finished runs are in the run store: the same harvest resumes them.  The CLI reports
    it in one line, as it reports Ctrl-C.
    """

    def __init__(self) -> None:
        super().__init__(128 + signal.SIGTERM)


@contextlib.contextmanager
def harvest_space() -> Iterator[Path]:
    """The folder of one harvest; removed with everything in it when the block ends.

    Nested use (a harvest inside a harvest) reuses the outer folder.

    Yields
    ------
    Path
        The folder (also in ``os.environ[ENV]`` for the worker processes).
    """
    if os.environ.get(ENV):
        yield Path(os.environ[ENV])
        return
    remove_stale()
    parent = parents()[0]
    parent.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=parent))
    os.environ[ENV] = str(path)
    old_handler = None
    main = threading.current_thread() is threading.main_thread()
    if main:
        def on_term(signum: int, frame: object) -> None:
            raise _Terminated()

        old_handler = signal.signal(signal.SIGTERM, on_term)
    try:
        yield path
    except _Terminated:
        raise Terminated() from None
    finally:
        if main:
            signal.signal(signal.SIGTERM, old_handler)
        os.environ.pop(ENV, None)
        for p in parents():
            shutil.rmtree(p / path.name, ignore_errors=True)


def in_harvest_space(func: _F) -> _F:
    """Decorator: run ``func`` inside :func:`harvest_space`.

    Parameters
    ----------
    func : callable
        The function to wrap.

    Returns
    -------
    callable
    """
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with harvest_space():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
