"""Reading datasets: loading a file (upgraded to the current format version), the names stored
in a dataset, the per-run arrays identification reads and the table of runs."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.errors import MissingFileError, NotFoundError
from fmu_surrogate.fmu.dataset.schema import STATUS_FAILED, STATUS_OK, escape_name, param_var_name
from fmu_surrogate.fmu.dataset.upgrade import _NOT_OURS, _check_version
from fmu_surrogate.fmu.errors import DatasetError, UnknownVariableError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr

__all__ = ["CONSTANT_RTOL", "PROPORTIONAL_RTOL", "constant_columns", "constant_variables",
           "data_var_name", "failed_runs", "fmu_variables", "input_start_values", "load_dataset",
           "operating_parameters", "parameter_names", "proportional_inputs", "run_arrays",
           "runs_table"]

#: Two inputs count as proportional in a run when their correlation is within this of ±1 (one
#: signal scaled, up to round-off of the values written: measured 1 − |ρ| ≈ 1e-16).
PROPORTIONAL_RTOL = 1e-9
#: A variable whose values spread by at most this fraction of its magnitude is constant: the
#: same value up to the round-off of the FMU's arithmetic (a temperature held at 293.15 K and
#: recomputed each step), orders below any change an input makes.
CONSTANT_RTOL = 1e-12


def load_dataset(path: str | os.PathLike) -> xr.Dataset:
    """Read a dataset written by :func:`save_dataset` (fully into memory; the file is closed).

    Parameters
    ----------
    path : path
        The NetCDF file (format 1 files are upgraded on load).

    Returns
    -------
    xarray.Dataset

    Raises
    ------
    FileNotFoundError
        No such file.
    DatasetError
        Not a NetCDF-4 file, not our format, a newer format version, or an older one that
        cannot be upgraded — the message says which and what to do.
    """
    import xarray as xr

    path = Path(path)
    if not path.is_file():
        raise MissingFileError(f"{path}: no such dataset file; check the path (datasets are "
                               f"written by `fmu-surrogate harvest MODEL.fmu -o DATA.nc`).")
    try:
        with xr.open_dataset(path, engine="h5netcdf", decode_times=False,
                             decode_timedelta=False) as f:
            ds = f.load()
    except Exception as exc:  # noqa: BLE001 - h5py/h5netcdf raise OSError, ValueError, ...
        raise DatasetError(f"{path} cannot be read as NetCDF-4/HDF5 ({type(exc).__name__}: "
                           f"{exc}); {_NOT_OURS}.") from None
    return _check_version(ds, path)


def _json_attr(ds: xr.Dataset, key: str) -> list[str]:
    try:
        return list(json.loads(ds.attrs.get(key, "[]")))
    except ValueError:
        return []


def fmu_variables(ds: xr.Dataset, elements: bool = True) -> list[str]:
    """Original names of the recorded FMU variables.

    Parameters
    ----------
    elements : bool
        ``True``: one name per stored column (array variables as ``x[1]``, ...);
        ``False``: the FMU variable names (attribute ``variables``).
    """
    if not elements:
        return _json_attr(ds, "variables")
    out = []
    for v in ds.data_vars.values():
        if "fmu_variable" in v.attrs:
            base = v.attrs["fmu_variable"]
            el = v.attrs.get("element")
            out.append(f"{base}[{el}]" if el else base)
    return out


def parameter_names(ds: xr.Dataset) -> list[str]:
    """Names of the parameters stored as ``param:<name>`` (original names)."""
    return [str(v.attrs["parameter"]) for k, v in ds.data_vars.items() if "parameter" in v.attrs]


def operating_parameters(ds: xr.Dataset, runs: Iterable[int] | None = None
                         ) -> tuple[dict[str, float], list[str]]:
    """The FMU's parameter values that the given runs share, and those they vary.

    Parameters
    ----------
    ds : xarray.Dataset
    runs : iterable of int, optional
        Run labels (default: the successful runs).

    Returns
    -------
    shared : dict of str to float
        The FMU's start values (attribute ``parameter_values``; empty for files written
        before it existed) with those of ``param:<name>`` where every run has the same value.
    varied : list of str
        Parameters whose value differs between the runs.
    """
    shared = {str(k): float(v) for k, v in json.loads(ds.attrs.get("parameter_values") or
                                                       "{}").items()}
    labels = list(ds["run"].values)
    if runs is None:
        pick = [i for i, s in enumerate(ds["status"].values) if str(s) == "ok"]
    else:
        pick = [labels.index(r) for r in runs if r in labels]
    varied = []
    for p in parameter_names(ds):
        values = np.asarray(ds[param_var_name(p)].values, dtype=float)[pick]
        values = values[~np.isnan(values)]
        if values.size and np.all(values == values[0]):
            shared[p] = float(values[0])
        elif values.size:
            shared.pop(p, None)
            varied.append(p)
    return shared, varied


def input_start_values(ds: xr.Dataset) -> dict[str, float]:
    """The start values the FMU declares for its inputs (what an input holds when nothing sets
    it; attribute ``input_start_values``): ``{name: value}``, empty when the dataset does not
    say.

    Parameters
    ----------
    ds : xarray.Dataset

    Returns
    -------
    dict of str to float
    """
    try:
        return {str(k): float(v)
                for k, v in json.loads(str(ds.attrs.get("input_start_values") or "{}")).items()}
    except (TypeError, ValueError, AttributeError):
        return {}


def constant_variables(ds: xr.Dataset, names: Sequence[str], runs: Iterable[int] | None = None
                       ) -> dict[str, float]:
    """The variables among ``names`` with one value in every sample of the given runs (up to
    :data:`CONSTANT_RTOL` of their magnitude).

    An input held so: a model identified from such runs has seen no other value of it and
    holds at that value only.  An output so: it answers none of the inputs (a fixed flange's
    position, a held temperature).

    Parameters
    ----------
    ds : xarray.Dataset
    names : sequence of str
        Variables (inputs or outputs).
    runs : iterable of int, optional
        Run labels (default: the successful runs).

    Returns
    -------
    dict of str to float
        ``{name: first value}`` of the constant ones, in the order of ``names`` (none where
        there is no run).
    """
    arrays = [X for _, X in run_arrays(ds, list(names), runs=runs)]
    if not arrays:
        return {}
    Y = np.concatenate(arrays)
    return {str(name): float(y0) for name, y0, c in zip(names, Y[0], constant_columns(Y)) if c}


def constant_columns(Y: np.ndarray) -> np.ndarray:
    """Which columns of ``Y`` hold one value in every row, up to :data:`CONSTANT_RTOL` of
    their magnitude.

    Parameters
    ----------
    Y : ndarray, shape (K, k)
        Samples of ``k`` variables (every run's, stacked).

    Returns
    -------
    ndarray of bool, shape (k,)
    """
    return np.ptp(Y, axis=0) <= CONSTANT_RTOL * np.abs(Y).max(axis=0)


def proportional_inputs(ds: xr.Dataset, names: Sequence[str], runs: Iterable[int] | None = None
                        ) -> list[tuple[str, str, bool]]:
    """The pairs of inputs among ``names`` that no run excites apart: in every run where either
    changes, both change, as one signal scaled (plus offsets; :data:`PROPORTIONAL_RTOL`).

    A model sees their effects only through the ratios of their changes, one per run: with one
    ratio in all runs it cannot tell them apart at all, with a few it can (linear superposition)
    but a nonlinear fit is then poorly posed (slow, far from the data).  The same multisine, noise
    seed or chirp on two inputs does this.

    Parameters
    ----------
    ds : xarray.Dataset
    names : sequence of str
        Input variables.
    runs : iterable of int, optional
        Run labels (default: the successful runs).

    Returns
    -------
    list of (str, str, bool)
        ``(first, second, one_ratio)``: ``one_ratio`` when every run has the same ratio.
    """
    arrays = [X - X.mean(axis=0) for _, X in run_arrays(ds, list(names), runs=runs)]
    out = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            ratios = []
            for X in arrays:
                a, b = X[:, i], X[:, j]
                na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
                if na == 0.0 and nb == 0.0:
                    continue  # neither changes: this run says nothing
                if na == 0.0 or nb == 0.0 or abs(float(a @ b)) < (1 - PROPORTIONAL_RTOL) * na * nb:
                    break  # one alone, or two signals: this run tells them apart
                ratios.append(float(a @ b) / (na * na))
            else:
                if ratios:
                    one = bool(np.allclose(ratios, ratios[0], rtol=1e-6))
                    out.append((str(names[i]), str(names[j]), one))
    return out


def data_var_name(ds: xr.Dataset, name: str) -> str:
    """The data-variable key under which the FMU variable ``name`` is stored.

    Raises
    ------
    UnknownVariableError
        ``name`` was not recorded (with close matches).
    """
    key = escape_name(name)
    if key in ds.data_vars and ds[key].attrs.get("fmu_variable") is not None:
        return key
    known = fmu_variables(ds)
    for k, v in ds.data_vars.items():  # fall back on the attributes (robust to escaping changes)
        base = v.attrs.get("fmu_variable")
        if base is None:
            continue
        el = v.attrs.get("element")
        if (f"{base}[{el}]" if el else base) == name:
            return k
    raise UnknownVariableError(name, known, what="recorded variable",
                               model=str(ds.attrs.get("fmu_name", "")))


def run_arrays(
    ds: xr.Dataset | str | os.PathLike,
    names: Sequence[str],
    runs: Iterable[int] | None = None,
    only_ok: bool = True,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per-run arrays of the given variables, with the NaN tail removed.

    This is how identification code reads datasets.

    Parameters
    ----------
    ds : xarray.Dataset or path
        A harvested dataset, or the path of its file.
    names : sequence of str
        Original FMU variable names (e.g. ``["x", "der(x)", "u"]``).
    runs : iterable of int, optional
        Run labels (values of the ``run`` coordinate); default all (with ``only_ok``: all
        successful ones).
    only_ok : bool
        Skip runs whose status is not ``"ok"``; a failed run requested by label in ``runs`` is an
        error that names its failure (pass ``only_ok=False`` to read its partial data).

    Returns
    -------
    list of (t, X)
        ``t`` of shape ``(n,)``, ``X`` of shape ``(n, len(names))``, where ``n`` is the run's
        ``n_samples`` minus any trailing rows in which all requested values are NaN.

    Raises
    ------
    DatasetError
        A requested run failed (with ``only_ok``), or a variable holds values that are not
        numbers, or a run's ``n_samples`` is outside ``0 … len(time)`` — naming the variable
        and the file.
    """
    if isinstance(ds, (str, os.PathLike)):
        ds = load_dataset(ds)
    where = ds.encoding.get("source") or "the dataset"
    names = list(names)
    keys = [data_var_name(ds, n) for n in names]
    labels = [int(r) for r in ds["run"].values]
    pos = {r: i for i, r in enumerate(labels)}
    if runs is None:
        sel = list(range(len(labels)))
    else:
        sel = []
        for r in runs:
            if int(r) not in pos:
                raise NotFoundError(f"run {r} is not in the dataset (runs: {labels[:10]}"
                                    f"{'...' if len(labels) > 10 else ''}).")
            sel.append(pos[int(r)])
    t_all = np.asarray(ds["time"].values, dtype=float)
    status = ds["status"].values
    nsamp = np.asarray(ds["n_samples"].values)
    bad = (nsamp < 0) | (nsamp > t_all.shape[0])
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise DatasetError(f"{where}: run {labels[i]} has n_samples = {int(nsamp[i])}, outside "
                           f"0 … {t_all.shape[0]} (the time grid); the file is damaged or was "
                           f"edited by hand: harvest it again.")
    cols = []
    for name, k in zip(names, keys):
        try:
            cols.append(np.asarray(ds[k].values, dtype=float))
        except (TypeError, ValueError) as exc:
            raise DatasetError(f"{where}: variable {name!r} holds values that are not numbers "
                               f"({exc}); the file is damaged or was edited by hand.") from None
    if runs is not None and only_ok:
        failed = [i for i in sel if str(status[i]) != STATUS_OK]
        if failed:
            i = failed[0]
            first = str(ds["message"].values[i]).strip().splitlines()
            raise DatasetError(
                f"run {labels[i]} of {where} failed ({ds['failure_kind'].values[i]}: "
                f"{first[0] if first else 'no message'}); request successful runs only, or pass "
                f"only_ok=False to read its partial data.")
    out = []
    for i in sel:
        if only_ok and str(status[i]) != STATUS_OK:
            continue
        n = int(nsamp[i])
        X = np.stack([c[i, :n] for c in cols], axis=1) if cols else np.empty((n, 0))
        if X.shape[1]:
            finite_rows = np.flatnonzero(~np.all(np.isnan(X), axis=1))
            n = int(finite_rows[-1]) + 1 if finite_rows.size else 0
            X = X[:n]
        out.append((t_all[:n].copy(), X))
    return out


def runs_table(ds: xr.Dataset) -> pd.DataFrame:
    """One row per run: ``run, status, failure_kind, message, n_samples, wall_time`` and the
    parameter values (columns named as the parameters).

    Parameters
    ----------
    ds : xarray.Dataset
        A harvested dataset.

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    cols: dict[str, Any] = {
        "run": ds["run"].values.astype(np.int64),
        "status": [str(s) for s in ds["status"].values],
        "failure_kind": [str(s) for s in ds["failure_kind"].values],
        "message": [str(s) for s in ds["message"].values],
        "n_samples": ds["n_samples"].values.astype(np.int64),
        "wall_time": ds["wall_time"].values.astype(float),
    }
    for p in parameter_names(ds):
        cols[p] = ds[param_var_name(p)].values.astype(float)
    return pd.DataFrame(cols)


def failed_runs(ds: xr.Dataset) -> pd.DataFrame:
    """The rows of :func:`runs_table` whose status is ``"failed"`` (index reset).

    Parameters
    ----------
    ds : xarray.Dataset
        A harvested dataset.

    Returns
    -------
    pandas.DataFrame
        With the FMU's message per failed run.
    """
    tab = runs_table(ds)
    return tab[tab["status"] == STATUS_FAILED].reset_index(drop=True)
