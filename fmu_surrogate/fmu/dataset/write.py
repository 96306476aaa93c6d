"""Writing datasets: NetCDF-4 files written atomically, the (run, time) variables in chunks of
whole runs, gzip-compressed with the shuffle filter — in parallel threads for datasets of the
format's own layout, through xarray otherwise; chunks a campaign compressed (and possibly
stored) ahead come from :class:`~fmu_surrogate.fmu.dataset.deflater.ChunkDeflater`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.fmu.dataset.schema import _SIGNAL_DIM, signal_table

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr


class _Ahead(Protocol):
    """What the save asks of chunks compressed ahead (a
    :class:`~fmu_surrogate.fmu.dataset.deflater.ChunkDeflater`, which imports this module)."""

    def matches(self, rows: int, level: int) -> bool: ...

    def end_stream(self, part: Path, ds: xr.Dataset, big: list[str]) -> str: ...

    def take(self, arr: np.ndarray, r0: int) -> Any: ...

__all__ = ["WRITTEN", "part_path", "save_dataset"]


class _Written:
    def __repr__(self) -> str:
        return "WRITTEN"


#: What a chunk compressed ahead holds when it is already stored in the file being written
#: (:meth:`ChunkDeflater.stream_into <fmu_surrogate.fmu.dataset.deflater.ChunkDeflater.stream_into>`).
WRITTEN = _Written()


def part_path(path: str | os.PathLike) -> Path:
    """Where :func:`save_dataset` writes ``path`` before it replaces it: ``path + ".part"``."""
    path = Path(path)
    return path.with_name(path.name + ".part")


def save_dataset(ds: xr.Dataset, path: str | os.PathLike, *, complevel: int = 1,
                 threads: int | None = None,
                 before_replace: Callable[[], None] | None = None,
                 deflated: _Ahead | None = None) -> Path:
    """Write ``ds`` to ``path`` atomically (``path + ".part"``, then ``os.replace``).

    The (run, time) float variables are stored in chunks of whole runs (about 1 MB) and, unless
    ``complevel`` is 0, gzip-compressed with the shuffle filter; ``signal`` is stored as
    ``signal_table`` + ``signal_index`` (see the module docs).

    Parameters
    ----------
    ds : xarray.Dataset
    path : path
    complevel : int
        gzip level 0 (none) ... 9.  Level 1 (default) is the fastest; level 3 makes files of
        zlib level 1's size at about a third of level 1's speed (:func:`_deflate` has the
        figures); levels above 3 cost zlib's time for little more reduction.
    threads : int, optional
        Threads compressing the (run, time) variables (default: one per CPU; 1 = HDF5's own
        serial compression through xarray).  Either way the file holds the same values with
        the same filters.
    before_replace : callable, optional
        Called once the new file is complete, just before it replaces ``path``; an exception it
        raises leaves ``path`` as it was (the new file is removed) and propagates.
    deflated : ChunkDeflater, optional
        Chunks of the (run, time) variables compressed ahead (by a campaign while it ran):
        those whose array, rows, level and chunk size match are written as they are, the
        others are compressed here.  When it stored chunks in ``path + ".part"`` already
        (:meth:`~fmu_surrogate.fmu.dataset.deflater.ChunkDeflater.stream_into`), the file
        is completed instead of written anew.

    Returns
    -------
    Path
        ``path``.
    """
    if not isinstance(complevel, (int, np.integer)) or not 0 <= complevel <= 9:
        raise InvalidInputError(f"complevel must be an integer 0 (no compression) ... 9, got "
                                f"{complevel!r}.")
    if threads is not None and (not isinstance(threads, (int, np.integer)) or threads < 1):
        raise InvalidInputError(f"threads must be a positive integer or None, got {threads!r}.")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = part_path(path)
    if "signal" in ds.data_vars and ds["signal"].dims == ("run",):
        table, index = signal_table(ds["signal"].values)
        ds = ds.drop_vars("signal").assign(
            signal_index=(("run",), index, {"description": "position in signal_table"}),
            signal_table=((_SIGNAL_DIM,), np.array(table, dtype=object),
                          {"description": "distinct JSON {input name: signal description}"}))
    try:
        big = _plain_layout(ds) if complevel and threads != 1 else None
        done = False
        if big:
            try:
                _write_parallel(ds, part, big, int(complevel), threads, deflated)
                done = True
            except (TypeError, ValueError):  # something the plain writer cannot store
                part.unlink(missing_ok=True)
        if not done:
            if deflated is not None:  # a file of chunks stored ahead is no use here
                deflated.end_stream(part, ds, [])
            encoding = {}
            for k, v in ds.data_vars.items():
                if v.dtype.kind == "f" and v.ndim == 2 and v.size:
                    enc: dict[str, Any] = {"chunksizes": (_chunk_rows(*v.shape), v.shape[1])}
                    if complevel:
                        enc.update(zlib=True, complevel=int(complevel), shuffle=True)
                    encoding[k] = enc
            ds.to_netcdf(part, engine="h5netcdf", encoding=encoding)
        if before_replace is not None:
            before_replace()
        os.replace(part, path)
    finally:
        if part.exists():
            part.unlink()
    return path


def _chunk_rows(n_runs: int, n_time: int) -> int:
    """Runs per chunk of a (run, time) float64 variable: about 1 MB per chunk."""
    return max(1, min(n_runs, (1 << 20) // (8 * max(1, n_time))))


def _plain_layout(ds: xr.Dataset) -> list[str] | None:
    """The (run, time) float64 variables if ``ds`` suits :func:`_write_parallel`, else ``None``.

    It does when every variable has the dimensions of the format (``run``, ``time``,
    ``signal_set``), is float64, int64 or text, and the only coordinates are ``run`` and
    ``time`` — datasets made by this module.  Anything else goes through xarray's writer.
    """
    if set(ds.coords) - {"run", "time"} or set(ds.dims) - {"run", "time", _SIGNAL_DIM}:
        return None
    for v in ds.variables.values():
        kind, size = v.dtype.kind, v.dtype.itemsize
        if not ((kind in "fi" and size == 8) or kind in "OU") or v.ndim > 2:
            return None
        if kind in "OU" and v.ndim != 1:
            return None
    big = [k for k, v in ds.data_vars.items()
           if v.dims == ("run", "time") and v.dtype.kind == "f" and v.size]
    return big or None


def _deflate(level: int) -> Callable[[Any, int], bytes]:
    """The zlib-format compressor of the chunks for gzip level ``level``.

    Levels 1 to 3 use ISA-L (``isal``) at the same level: a standard zlib stream, so HDF5's
    deflate filter and every NetCDF-4 reader decode it, at 5 to 15 times zlib's speed.  Sizes of
    the shuffled chunks, against the raw data (rc_network's recorded variables / msd_chain's):
    zlib level 1 0.446 / 0.794 at 92 / 77 MB/s; ISA-L level 1 0.523 / 0.799 at 1321 / 694 MB/s;
    ISA-L level 3 0.447 / 0.793 at 616 / 478 MB/s — level 1 stays the fastest choice, level 3
    gives zlib level 1's size.  Higher levels, and machines without ``isal``, use zlib.  Either
    releases the GIL.
    """
    if level <= 3:
        try:
            from isal import isal_zlib

            return isal_zlib.compress
        except ImportError:  # pragma: no cover - isal is a dependency; zlib is the fallback
            pass
    import zlib

    return zlib.compress


def _shuffle_deflate(arr: np.ndarray, r0: int, rows: int, level: int) -> bytes:
    """One chunk (runs ``r0 .. r0 + rows``) as HDF5 stores it: shuffle filter, then deflate
    (:func:`_deflate`)."""
    block = arr[r0:r0 + rows]
    if block.shape[0] < rows:  # the edge chunk is stored at full size
        full = np.zeros((rows, arr.shape[1]))
        full[:block.shape[0]] = block
        block = full
    raw = np.ascontiguousarray(block, dtype="<f8").reshape(-1).view(np.uint8)
    shuffled = np.ascontiguousarray(raw.reshape(-1, 8).T)  # byte k of every value together
    return _deflate(level)(shuffled, level)  # releases the GIL: threads run in parallel


def _write_parallel(ds: xr.Dataset, part: Path, big: list[str], level: int,
                    threads: int | None, deflated: _Ahead | None = None) -> None:
    """Write ``ds`` as NetCDF-4 compressing the chunks of ``big`` in parallel threads.

    HDF5 compresses chunk after chunk in the calling thread, which made the compression the
    largest serial step of a campaign.  Here the chunks are shuffled and deflated by a thread
    pool (:func:`_deflate`: HDF5's own filters, so any NetCDF-4 reader decodes them) while the
    file's structure is written, then stored with ``write_direct_chunk``.
    """
    from concurrent.futures import ThreadPoolExecutor

    import h5netcdf
    import h5py

    R, T = ds.sizes["run"], ds.sizes["time"]
    rows = _chunk_rows(R, T)
    tasks = [(k, r0) for k in big for r0 in range(0, R, rows)]
    n_threads = threads or min(len(tasks), os.cpu_count() or 1)
    same = deflated is not None and deflated.matches(rows, level)
    # "stored": part holds the structure of ds's (run, time) variables and the chunks stored so
    # far; "dropped": it held another structure and was removed (nothing ahead counts then)
    stream = "none" if deflated is None else deflated.end_stream(part, ds, big if same else [])
    ahead = deflated if same and stream != "dropped" else None
    with ThreadPoolExecutor(max_workers=max(1, n_threads)) as pool:
        futures = []
        for k, r0 in tasks:
            arr = np.asarray(ds[k].values)
            fut = ahead.take(arr, r0) if ahead is not None else None
            if fut is not None and fut.cancel():  # still queued: the pool's threads take it
                fut = None
            futures.append(fut or pool.submit(_shuffle_deflate, arr, r0, rows, level))
        try:
            with h5netcdf.File(part, "a" if stream == "stored" else "w") as f:
                if stream != "stored":
                    _create_structure(f, ds, big, rows, level)
                for d, n in ds.sizes.items():
                    if d not in f.dimensions:
                        f.dimensions[d] = n
                for name, v in ds.data_vars.items():
                    if name not in big:
                        _plain_variable(f, name, v.variable)
                for a, val in ds.attrs.items():
                    f.attrs[a] = val
            with h5py.File(part, "r+") as h:
                ids = {k: h[k].id for k in big}  # a lookup by name per chunk cost as much as
                for (k, r0), fut in zip(tasks, futures):  # writing the chunk
                    data = fut.result()
                    if data is not WRITTEN:
                        ids[k].write_direct_chunk((r0, 0), data)
        finally:
            for fut in futures:
                fut.cancel()


def _create_structure(f: Any, ds: xr.Dataset, big: list[str], rows: int, level: int) -> None:
    """The dimensions ``run`` and ``time``, their coordinates and the (run, time) variables
    ``big`` of ``ds`` (chunks of ``rows`` runs, shuffle and gzip at ``level``, no data) in the
    open h5netcdf file ``f``."""
    f.dimensions["run"] = ds.sizes["run"]
    f.dimensions["time"] = T = ds.sizes["time"]
    for name in ("run", "time"):
        _plain_variable(f, name, ds[name].variable)
    for name in big:
        v = ds[name]
        var = f.create_variable(name, v.dims, "f8", chunks=(rows, T), compression="gzip",
                                compression_opts=level, shuffle=True, fillvalue=np.nan)
        for a, val in v.attrs.items():
            var.attrs[a] = val


def _plain_variable(f: Any, name: str, v: Any) -> None:
    """One float64 / int64 / text variable, as xarray would write it (NaN fill for floats)."""
    import h5py

    values = np.asarray(v.values)
    if values.dtype.kind in "OU":
        var = f.create_variable(name, v.dims, h5py.string_dtype())
        if values.size:
            var[...] = values.astype(object)
    else:
        fill = np.nan if values.dtype.kind == "f" and name not in ("run", "time") else None
        var = f.create_variable(name, v.dims, values.dtype, fillvalue=fill)
        if values.size:
            var[...] = values
    for a, val in v.attrs.items():
        var.attrs[a] = val
