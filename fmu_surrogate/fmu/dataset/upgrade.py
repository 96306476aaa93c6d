"""Versions of the dataset format: the check of a file's format and version, the upgrades of
older versions in memory (``_UPGRADERS``) and the file layout of the signals turned back into
the per-run ``signal``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.fmu.dataset.schema import (
    _NEW_IN_2,
    _PER_RUN,
    _SIGNAL_DIM,
    _VAR_PREFIX,
    FORMAT_NAME,
    FORMAT_VERSION,
)
from fmu_surrogate.fmu.errors import DatasetError

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

_NOT_OURS = ("it is not an fmu-surrogate dataset; datasets are written by `fmu-surrogate harvest` "
             "or fmu_surrogate.fmu.dataset.save_dataset")


def _upgrade_1_to_2(ds: xr.Dataset) -> xr.Dataset:
    """Format 1 -> 2 (in memory): FMU variables stored under names that format 2 reserves
    (``signal_index``, ``signal_table``, ``signal_set``) move to their escaped names."""
    renames = {k: _VAR_PREFIX + k for k in _NEW_IN_2
               if k in ds.data_vars and "fmu_variable" in ds[k].attrs}
    return ds.rename_vars(renames) if renames else ds


def _from_file_layout(ds: xr.Dataset, path: Path) -> xr.Dataset:
    """``signal_table`` + ``signal_index`` (format >= 2 files) -> the per-run ``signal``."""
    if ("signal_table" not in ds.variables or "signal_index" not in ds.variables
            or ds["signal_table"].dims != (_SIGNAL_DIM,)):
        return ds
    table = np.asarray(ds["signal_table"].values, dtype=object)
    index = np.asarray(ds["signal_index"].values, dtype=np.int64)
    if index.size and (index.min() < 0 or index.max() >= table.size):
        raise DatasetError(f"{path}: signal_index points outside signal_table; the file is "
                           f"damaged — re-harvest it.")
    ds = ds.drop_vars(["signal_table", "signal_index"])
    ds["signal"] = (("run",), table[index])
    return ds


#: ``{old format_version: function(ds) -> ds of format_version + 1}``.
_UPGRADERS: dict[int, Any] = {1: _upgrade_1_to_2}


def _check_version(ds: xr.Dataset, path: Path) -> xr.Dataset:
    if ds.attrs.get("format") != FORMAT_NAME:
        raise DatasetError(f"{path}: no attribute format={FORMAT_NAME!r}, so {_NOT_OURS}.")
    raw = ds.attrs.get("format_version")
    try:
        version = int(np.asarray(raw).item())
    except (TypeError, ValueError):
        raise DatasetError(f"{path}: format_version {raw!r} is not an integer; the file is "
                           f"damaged or {_NOT_OURS}.") from None
    if version > FORMAT_VERSION:
        raise DatasetError(
            f"{path} has dataset format_version {version}, written by a newer fmu-surrogate "
            f"({ds.attrs.get('fmu_surrogate_version', '?')}); this version reads format_version "
            f"<= {FORMAT_VERSION}. Upgrade: pip install -U fmu-surrogate."
        )
    while version < FORMAT_VERSION:
        up = _UPGRADERS.get(version)
        if up is None:
            raise DatasetError(
                f"{path} has dataset format_version {version}, which this fmu-surrogate "
                f"(format_version {FORMAT_VERSION}) cannot convert; re-harvest the FMU with this "
                f"version, or load it with the fmu-surrogate version that wrote it "
                f"({ds.attrs.get('fmu_surrogate_version', '?')}) and export the arrays."
            )
        ds = up(ds)
        version += 1
        ds.attrs["format_version"] = np.int64(version)
    ds = _from_file_layout(ds, path)
    missing = [k for k in ("run", "time", *_PER_RUN) if k not in ds.variables]
    if missing:
        raise DatasetError(f"{path}: format_version {version} dataset lacks {missing}; the file is "
                           f"damaged — re-harvest it.")
    return ds
