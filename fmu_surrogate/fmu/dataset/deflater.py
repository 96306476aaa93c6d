"""Chunks of a campaign's (run, time) arrays compressed — and stored — while the campaign runs.

:func:`~fmu_surrogate.fmu.dataset.write.save_dataset` compresses each (run, time) variable in
chunks of whole runs; with a core free while the workers simulate (one worker on two cores),
a campaign hands each block of runs over as soon as those runs are all in, and a background
thread compresses it then.  Given the file that ``save_dataset`` will write
(:meth:`ChunkDeflater.stream_into`), the thread also stores each chunk in it at once: writing a
large dataset's chunks (page-cache writes of about a gigabyte for msd_chain's 1200 runs of 204
variables) then overlaps the simulation too, the compressed bytes are not kept in memory, and
``save_dataset`` only adds the per-run variables and the chunks still missing.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.fmu.dataset.write import (
    WRITTEN,
    _chunk_rows,
    _create_structure,
    _plain_layout,
    _shuffle_deflate,
)

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

__all__ = ["ChunkDeflater"]


class ChunkDeflater:
    """Chunks of (run, time) arrays compressed ahead of :func:`save_dataset`, in the background.

    A campaign hands over each block of runs of its output arrays as soon as those runs are all
    in (:meth:`submit`); where a core is free while the workers simulate, the compression, the
    largest part of writing the dataset, then overlaps the simulation and the write only stores
    the bytes (or, with :meth:`stream_into`, they are stored as well).  A chunk is identified by
    the memory of its array and its first run: handing the same block over again (a run stored
    twice) replaces the earlier result, and an array that is not the one handed over (a copy) is
    compressed anew by :func:`save_dataset`.

    One thread compresses, and only while there is work: an idle deflater leaves its process
    single-threaded, so that the worker pool can still fork a replacement worker.

    Parameters
    ----------
    n_runs, n_time : int
        Shape of the (run, time) arrays, which fixes the chunk size (whole runs, about 1 MB).
    level : int
        gzip level 1 ... 9 (:func:`save_dataset`'s ``complevel``).
    """

    def __init__(self, n_runs: int, n_time: int, level: int) -> None:
        self.rows = _chunk_rows(n_runs, n_time)
        self.level = int(level)
        self._ahead: dict[tuple, Any] = {}
        self._queue: deque = deque()
        self._lock = threading.Lock()
        self._thread: Any = None
        # the file chunks are stored in (stream_into): path, h5py file, dataset ids by array
        self._part: Path | None = None
        self._file: Any = None
        self._ids: dict[tuple, Any] = {}
        self._layout: list[tuple[str, tuple]] = []
        self._pending: tuple[Path, Callable[[], Any]] | None = None
        self._lost = False  # chunks were stored in a file that is gone
        self._file_lock = threading.Lock()

    def stream_into(self, part: str | Path, dataset: Callable[[], xr.Dataset]) -> None:
        """Store each chunk compressed from now on in ``part``, the file :func:`save_dataset`
        will write (``part_path(out)``).

        ``dataset()`` makes the dataset the campaign will save, its (run, time) variables the
        arrays it hands over (their values need not be there yet).  The thread calls it before
        the first chunk (the imports it needs stay off the way to the campaign's first run)
        and creates ``part`` with its dimensions ``run`` and ``time`` and its (run, time)
        variables; a dataset that ``save_dataset`` writes through xarray, or of another chunk
        size, is not streamed.  ``save_dataset`` completes the file (:meth:`end_stream`);
        :meth:`close` before that removes it.
        """
        with self._file_lock:
            if self._file is None and self._part is None:
                self._pending = (Path(part), dataset)

    def _open_stream(self) -> None:
        """Create the pending file of :meth:`stream_into` (with ``_file_lock`` held)."""
        import h5netcdf
        import h5py

        part, dataset = self._pending  # type: ignore[misc]
        self._pending = None
        ds = dataset()
        big = _plain_layout(ds)
        if not big or _chunk_rows(ds.sizes["run"], ds.sizes["time"]) != self.rows:
            return
        self._part = part
        with h5netcdf.File(part, "w") as f:
            _create_structure(f, ds, big, self.rows, self.level)
        self._file = h5py.File(part, "r+")
        self._layout = [(k, ds[k].shape) for k in big]
        self._ids = {_array_key(np.asarray(ds[k].values)): self._file[k].id for k in big}

    def end_stream(self, part: Path, ds: xr.Dataset, big: list[str]) -> str:
        """Stop storing chunks and close the file, for :func:`save_dataset` to complete it.

        Returns
        -------
        str
            ``"stored"`` when ``part`` holds the structure of ``ds``'s (run, time) variables
            ``big`` and the chunks stored so far (their futures give ``WRITTEN``); ``"none"``
            when no chunk was stored; ``"dropped"`` when chunks were stored in a file that is
            not that one (another path or layout, or storing failed): it is removed, and no
            chunk handed over counts.
        """
        with self._file_lock:
            self._pending = None
            if self._file is None:
                return "dropped" if self._lost else "none"
            self._file.close()
            self._file = None
            self._ids = {}
            same = self._part == Path(part) and self._layout == [(k, ds[k].shape) for k in big]
            if not same:
                self._part.unlink(missing_ok=True)  # type: ignore[union-attr]
            self._part = None
            return "stored" if same else "dropped"

    def submit(self, arr: np.ndarray, r0: int) -> None:
        """Compress the chunk of ``arr`` (n_runs, n_time) that starts at run ``r0``."""
        key = _chunk_key(arr, r0)
        old = self._ahead.pop(key, None)
        if old is not None:
            old.cancel()
        fut: Future = Future()
        self._ahead[key] = fut
        with self._lock:
            self._queue.append((fut, arr, int(r0)))
            if self._thread is None:
                self._thread = threading.Thread(target=self._drain, daemon=True,
                                                name="fmu-surrogate-deflate")
                self._thread.start()

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._thread = None
                    return
                fut, arr, r0 = self._queue.popleft()
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                data = _shuffle_deflate(arr, r0, self.rows, self.level)
            except BaseException as exc:  # noqa: BLE001 - handed to whoever takes the chunk
                fut.set_exception(exc)
                continue
            try:
                with self._file_lock:
                    try:
                        if self._pending is not None:
                            self._open_stream()
                        dsid = self._ids.get(_array_key(arr)) if self._file is not None else None
                        if dsid is not None:
                            dsid.write_direct_chunk((r0, 0), data)
                            data = WRITTEN
                    except Exception:  # noqa: BLE001 - no stream then: save_dataset stores them
                        self._stop_stream()
            finally:
                fut.set_result(data)

    def _stop_stream(self) -> None:
        """Stop storing chunks and remove the file (with ``_file_lock`` held); when it held
        chunks, :meth:`end_stream` says so (their futures give ``WRITTEN``)."""
        self._pending = None
        if self._file is not None:
            self._lost = True
            with contextlib.suppress(Exception):
                self._file.close()
            self._file = None
        self._ids = {}
        if self._part is not None:
            with contextlib.suppress(OSError):  # not a file (then it was never ours)
                self._part.unlink(missing_ok=True)
            self._part = None

    def take(self, arr: np.ndarray, r0: int) -> Any:
        """The future of the chunk of ``arr`` at ``r0`` handed over before (``None`` if not)."""
        return self._ahead.pop(_chunk_key(arr, r0), None)

    def matches(self, rows: int, level: int) -> bool:
        """Whether chunks of ``rows`` runs at gzip ``level`` are the ones made here."""
        return rows == self.rows and level == self.level

    def close(self) -> None:
        """Drop every result and wait for the thread (the chunk it compresses finishes); a file
        chunks were stored in and that :func:`save_dataset` did not take over is removed."""
        with self._lock:
            self._queue.clear()
            thread = self._thread
        for fut in self._ahead.values():
            fut.cancel()
        self._ahead.clear()
        if thread is not None:
            thread.join()
        with self._file_lock:
            self._stop_stream()


def _array_key(arr: np.ndarray) -> tuple:
    """What identifies an array handed over: its memory (address, shape, strides, type)."""
    return (arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.dtype.str)


def _chunk_key(arr: np.ndarray, r0: int) -> tuple:
    """What identifies a chunk: the memory of its array and ``r0``."""
    return (*_array_key(arr), int(r0))
