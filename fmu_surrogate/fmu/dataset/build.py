"""Assembling datasets in memory: from run records (:func:`records_to_dataset`) or, without
per-run Python work, from arrays (:func:`assemble_dataset`, the path of campaigns); and a
dataset's runs as records again (:func:`dataset_to_records`)."""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.fmu.dataset.read import data_var_name, fmu_variables, parameter_names
from fmu_surrogate.fmu.dataset.schema import (
    FORMAT_NAME,
    FORMAT_VERSION,
    STATUS_FAILED,
    STATUS_OK,
    RunRecord,
    element_suffixes,
    escape_name,
    param_var_name,
)

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

    from fmu_surrogate.fmu.model.loading import FMUInfo

__all__ = ["assemble_dataset", "dataset_to_records", "records_to_dataset", "start_parameters"]


def _json_list(x: Iterable[str]) -> str:
    return json.dumps([str(v) for v in x])


def records_to_dataset(
    records: Sequence[RunRecord],
    time,
    fmu_info: FMUInfo | None,
    variables: Sequence[str],
    *,
    parameters: Sequence[str] | None = None,
    attrs: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Assemble run records into a dataset of the documented format.

    Parameters
    ----------
    records : sequence of RunRecord
        Unique ``index`` values; the runs appear in this order.
    time : array-like, shape (T,)
        Common time grid, strictly increasing.
    fmu_info : FMUInfo or None
        Source of the global attributes and of causality/unit attributes; ``None`` for data that
        does not come from an FMU (attributes are then empty; set them through ``attrs``).
    variables : sequence of str
        Names of the recorded FMU variables (original names), in the order to store them.
        Values a record lacks are NaN.
    parameters : sequence of str, optional
        Parameters to store as ``param:<name>``; default: every name set in any record.
    attrs : mapping, optional
        Extra or overriding global attributes (str, int or float values).

    Returns
    -------
    xarray.Dataset
    """
    t = np.asarray(time, dtype=float)
    if t.ndim != 1 or t.size == 0:
        raise InvalidInputError(f"time must be a non-empty 1-D array, got shape {t.shape}.")
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise InvalidInputError("time must be finite and strictly increasing.")
    T = t.size
    variables = list(variables)
    if len(set(variables)) != len(variables):
        dup = sorted({v for v in variables if variables.count(v) > 1})
        raise InvalidInputError(f"variables lists {dup} more than once; give each name once.")
    records = list(records)
    idx = [int(r.index) for r in records]
    if len(set(idx)) != len(idx):
        raise InvalidInputError("run indices must be unique; two records have the same index.")
    R = len(records)

    # shape of every variable: from the data, else from the model description
    shapes: dict[str, tuple[int, ...]] = {}
    for name in variables:
        shp = None
        for r in records:
            if name in r.values:
                shp = np.shape(r.values[name])[1:]
                break
        if shp is None and fmu_info is not None:
            try:
                shp = fmu_info.variable(name).shape
            except KeyError:
                shp = ()
        shapes[name] = tuple(shp or ())

    columns: list[tuple[str, str, np.ndarray]] = []
    for name in variables:
        shp = shapes[name]
        elems = element_suffixes(shp) if shp else [("", ())]
        for suffix, eidx in elems:
            arr = np.full((R, T), np.nan)
            for i, r in enumerate(records):
                if name not in r.values:
                    continue
                v = np.asarray(r.values[name], dtype=float)
                if v.shape[1:] != shp:
                    raise InvalidInputError(
                        f"run {r.index}: variable {name!r} has shape {v.shape[1:]} per "
                        f"sample, other runs have {shp}.")
                if v.shape[0] > T:
                    raise InvalidInputError(
                        f"run {r.index}: variable {name!r} has {v.shape[0]} samples, "
                        f"more than the {T} of the time grid.")
                col = v[(slice(None),) + eidx] if shp else v
                arr[i, : col.shape[0]] = col
            columns.append((name, suffix, arr))

    if parameters is None:
        seen: dict[str, None] = {}
        for r in records:
            for k in r.params:
                seen.setdefault(k, None)
        parameters = list(seen)
    params = {p: np.array([float(r.params.get(p, np.nan)) for r in records], dtype=float)
              for p in parameters}

    # one JSON text per distinct signal description (records of a campaign share the dicts)
    texts: dict[str, int] = {}
    by_id: dict[int, int] = {}
    signal_index = np.empty(R, dtype=np.int64)
    for i, r in enumerate(records):
        j = by_id.get(id(r.signals))
        if j is None:
            j = texts.setdefault(json.dumps(r.signals, sort_keys=True), len(texts))
            by_id[id(r.signals)] = j
        signal_index[i] = j

    return assemble_dataset(
        t, fmu_info, variables, columns, runs=np.array(idx, dtype=np.int64),
        failure_kind=[r.failure_kind for r in records],
        message=[str(r.message) for r in records],
        n_samples=np.array([r.n_samples for r in records], dtype=np.int64),
        wall_time=np.array([float(r.wall_time) for r in records]),
        params=params, signal_table=list(texts), signal_index=signal_index, attrs=attrs,
        status=[r.status for r in records])


def assemble_dataset(
    time: np.ndarray,
    fmu_info: FMUInfo | None,
    variables: Sequence[str],
    columns: Sequence[tuple[str, str, np.ndarray]],
    *,
    runs: np.ndarray,
    failure_kind: Sequence[str],
    message: Sequence[str],
    n_samples: np.ndarray,
    wall_time: np.ndarray,
    params: Mapping[str, np.ndarray],
    signal_table: Sequence[str],
    signal_index: np.ndarray,
    attrs: Mapping[str, Any] | None = None,
    status: Sequence[str] | None = None,
) -> xr.Dataset:
    """Assemble a dataset from arrays (the fast path of campaigns; no per-run Python work).

    Parameters
    ----------
    time : ndarray, shape (T,)
    fmu_info : FMUInfo or None
    variables : sequence of str
        The recorded FMU variables (original names; attribute ``variables``).
    columns : sequence of (name, element, ndarray of shape (R, T))
        One entry per stored column: the FMU variable, ``""`` or the 1-based element index
        (``"1,2"``) of an array variable, and the samples (NaN after each run's end).  The
        arrays are used as they are (not copied).
    runs : ndarray of int64, shape (R,)
    failure_kind, message : sequence of str, length R
    n_samples : ndarray of int64, shape (R,)
    wall_time : ndarray of float64, shape (R,)
    params : mapping of str to ndarray of shape (R,)
        ``{parameter name: values}`` (NaN where the run kept the FMU default).
    signal_table : sequence of str
        The distinct JSON signal descriptions.
    signal_index : ndarray of int64, shape (R,)
        Position of each run's description in ``signal_table``.
    attrs : mapping, optional
        Extra or overriding global attributes.
    status : sequence of str, optional
        Default: ``"ok"`` where ``failure_kind`` is empty, else ``"failed"``.

    Returns
    -------
    xarray.Dataset
    """
    import xarray as xr

    import fmu_surrogate

    t = np.asarray(time, dtype=float)
    R, T = len(runs), t.size
    var_info: dict[str, Any] = {}
    if fmu_info is not None:
        var_info = {v.name: v for v in fmu_info.variables}
    data_vars: dict[str, Any] = {}
    for name, suffix, arr in columns:
        if arr.shape != (R, T):
            raise InvalidInputError(f"column {name!r} has shape {arr.shape}, expected {(R, T)}.")
        full = f"{name}[{suffix}]" if suffix else name
        a: dict[str, Any] = {"fmu_variable": name}
        if suffix:
            a["element"] = suffix
        info = var_info.get(name)
        if info is not None:
            a["causality"] = info.causality
            a["type"] = info.type
            if info.unit:
                a["units"] = info.unit
            if info.dependencies is not None:
                a["dependencies"] = json.dumps(list(info.dependencies))
        key = escape_name(full)
        if key in data_vars:
            raise InvalidInputError(f"variable {full!r} appears twice after expanding arrays.")
        data_vars[key] = (("run", "time"), arr, a)
    for p, values in params.items():
        data_vars[param_var_name(p)] = (("run",), np.asarray(values, dtype=float), {"parameter": p})

    kinds = np.array(list(failure_kind), dtype=object).reshape(R)
    if status is None:
        status_arr = np.where(kinds == "", STATUS_OK, STATUS_FAILED).astype(object)
    else:
        status_arr = np.array(list(status), dtype=object).reshape(R)
    table = np.array(list(signal_table), dtype=object).reshape(len(signal_table))
    signal_index = np.asarray(signal_index, dtype=np.int64).reshape(R)
    data_vars["status"] = (("run",), status_arr)
    data_vars["failure_kind"] = (("run",), kinds)
    data_vars["message"] = (("run",), np.array(list(message), dtype=object).reshape(R))
    data_vars["n_samples"] = (("run",), np.asarray(n_samples, dtype=np.int64))
    data_vars["wall_time"] = (("run",), np.asarray(wall_time, dtype=float), {"units": "s"})
    data_vars["signal"] = (("run",), table[signal_index])  # shares the strings

    g: dict[str, Any] = {
        "format": FORMAT_NAME,
        "format_version": np.int64(FORMAT_VERSION),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "fmu_surrogate_version": fmu_surrogate.__version__,
        "fmu_name": "", "fmu_guid": "", "fmi_version": "", "generation_tool": "",
        "fmu_sha256": "", "fmu_path": "",
        "variables": _json_list(variables),
        "parameters": _json_list(params),
        "inputs": "[]", "outputs": "[]", "states": "[]", "derivatives": "[]",
    }
    if fmu_info is not None:
        g.update(
            fmu_name=fmu_info.name, fmu_guid=fmu_info.guid, fmi_version=fmu_info.fmi_version,
            generation_tool=fmu_info.generation_tool, fmu_sha256=fmu_info.sha256,
            fmu_path=str(fmu_info.path),
            inputs=_json_list(fmu_info.inputs), outputs=_json_list(fmu_info.outputs),
            states=_json_list(fmu_info.states),
            derivatives=_json_list(fmu_info.derivatives[s] for s in fmu_info.states),
            parameter_values=json.dumps(start_parameters(fmu_info)),
            input_start_values=json.dumps(start_parameters(fmu_info, ("input",))),
        )
    for k, v in (attrs or {}).items():
        if isinstance(v, bool):
            v = int(v)
        elif isinstance(v, (list, tuple, dict)):
            v = json.dumps(v)
        g[k] = v
    return xr.Dataset(
        data_vars,
        coords={"run": ("run", np.asarray(runs, dtype=np.int64)),
                "time": ("time", t, {"units": "s", "long_name": "time"})},
        attrs=g,
    )


def start_parameters(fmu_info: Any, causalities: Sequence[str] = ("parameter",
                                                                    "structuralParameter")
                     ) -> dict[str, float]:
    """Start values of an FMU's scalar numeric parameters (``{name: value}``, model order).

    Parameters
    ----------
    fmu_info : FMUInfo
    causalities : sequence of str
        Which variables: parameters (default), or e.g. ``("input",)``.

    Returns
    -------
    dict of str to float
        Variables with a numeric start value (Booleans as 0/1); arrays, strings and variables
        without a start are left out.
    """
    out = {}
    for v in fmu_info.variables:
        if v.causality in causalities and not v.shape:
            value = v.start_value
            if value is not None and math.isfinite(value) and v.type != "String":
                out[v.name] = value
    return out


def dataset_to_records(ds: xr.Dataset) -> list[RunRecord]:
    """The runs of a dataset as :class:`RunRecord` s (values trimmed to ``n_samples``).

    Inverse of :func:`records_to_dataset` for scalar variables (array variables come back
    element-wise, as ``x[1]``, ...); used to resume or merge campaigns.
    """
    names = fmu_variables(ds, elements=True)
    keys = [data_var_name(ds, n) for n in names]
    params = parameter_names(ds)
    out = []
    for i, run in enumerate(ds["run"].values):
        n = int(ds["n_samples"].values[i])
        values = {nm: np.asarray(ds[k].values[i, :n], dtype=float) for nm, k in zip(names, keys)}
        pv = {}
        for p in params:
            x = float(ds[param_var_name(p)].values[i])
            if not math.isnan(x):
                pv[p] = x
        out.append(RunRecord(
            index=int(run), params=pv, signals=json.loads(str(ds["signal"].values[i]) or "{}"),
            status=str(ds["status"].values[i]), failure_kind=str(ds["failure_kind"].values[i]),
            message=str(ds["message"].values[i]), values=values,
            wall_time=float(ds["wall_time"].values[i]),
        ))
    return out
