"""The harvest dataset format (``format_version`` 1) and its reader/writer.

A dataset is an :class:`xarray.Dataset` stored as NetCDF-4 (HDF5, engine ``h5netcdf``).  It is
self-describing; nothing is pickled.

Dimensions and coordinates
--------------------------
``run``  (int64)   run labels (:attr:`RunRecord.index`), unique, in the order written.
``time`` (float64) the common time grid of all runs, strictly increasing, attrs ``units="s"``.

Recorded FMU variables — dims ``(run, time)``, float64
------------------------------------------------------
One data variable per recorded FMU variable, **named exactly as in the FMU** (``der(x)``,
``a.b[1]``, ``x y`` are all legal NetCDF-4 names).  Each carries the attribute
``fmu_variable`` = the original name (plus ``causality`` and ``units`` when known).  Only names
that cannot be stored as they are get escaped, reversibly (:func:`escape_name`):

* ``%`` → ``%25`` and ``/`` → ``%2F`` (HDF5 uses ``/`` as its path separator); a name that is
  exactly ``.`` or ``..`` has its dots written as ``%2E``;
* a name that collides with the format's own names (``time``, ``run``, ``status``,
  ``failure_kind``, ``message``, ``n_samples``, ``wall_time``, ``signal``) or starts with
  ``param:`` or ``var:`` gets the prefix ``var:``.

Readers should look variables up by their original name through :func:`data_var_name` /
:func:`run_arrays`, never guess.  Samples after a run's end (runs that stopped early or failed)
are NaN.  An FMI 3 array variable ``x`` of shape ``(2, 3)`` is stored element-wise as ``x[1,1]``,
``x[1,2]``, ... (1-based, row-major), each with attrs ``fmu_variable="x"`` and ``element="1,1"``.

Per-run variables — dim ``run``
-------------------------------
``status``        str      ``"ok"`` or ``"failed"``.
``failure_kind``  str      ``""`` for ok runs, else one of :data:`FAILURE_KINDS`.
``message``       str      the FMU's log / the exception text (may be ``""``).
``n_samples``     int64    number of valid leading time samples of the run.
``wall_time``     float64  seconds the run took (NaN if unknown).
``signal``        str      JSON ``{input name: Signal.describe()}`` of the run's inputs.
``param:<name>``  float64  value of every parameter set in any run; NaN where the run kept the
                           FMU's default.  Attribute ``parameter`` = the original name.

Global attributes
-----------------
``format="fmu-surrogate dataset"``, ``format_version`` (int, :data:`FORMAT_VERSION`), ``created``
(ISO 8601, UTC), ``fmu_surrogate_version``, ``fmu_name``, ``fmu_guid``, ``fmi_version``,
``generation_tool``, ``fmu_sha256``, ``fmu_path``, and JSON lists of names: ``variables``
(recorded variables, in order, original names), ``parameters`` (varied parameters), ``inputs``,
``outputs``, ``states`` and ``derivatives`` (``derivatives[i]`` is the derivative of
``states[i]``), all taken from the FMU's model description (``[]`` when not known).

Versioning
----------
:func:`load_dataset` reads ``format_version <= FORMAT_VERSION``; older versions are upgraded in
memory by the functions in ``_UPGRADERS`` or refused with the reason and what to do; newer
versions are refused (upgrade fmu-surrogate).  Any change of this layout bumps
:data:`FORMAT_VERSION`.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.fmu.errors import DatasetError, UnknownVariableError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr

    from fmu_surrogate.fmu.model import FMUInfo

__all__ = [
    "FAILURE_KINDS",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "STATUS_FAILED",
    "STATUS_OK",
    "RunRecord",
    "data_var_name",
    "dataset_to_records",
    "escape_name",
    "failed_runs",
    "fmu_variables",
    "load_dataset",
    "parameter_names",
    "records_to_dataset",
    "run_arrays",
    "runs_table",
    "save_dataset",
    "unescape_name",
]

#: Version of the on-disk layout described in the module docstring.
FORMAT_VERSION = 1
#: Value of the global ``format`` attribute that marks our files.
FORMAT_NAME = "fmu-surrogate dataset"

STATUS_OK = "ok"
STATUS_FAILED = "failed"

#: The reasons a run can fail, ``{kind: meaning}``.  ``failure_kind`` is ``""`` for ok runs.
FAILURE_KINDS: dict[str, str] = {
    "error_status": "an FMI call returned an error status (fmi2Error/fmi2Fatal/Discard, fmpy "
                    "FMICallException); the FMU's own log message is in `message`",
    "exception": "a Python exception during set-up or simulation that is not an FMI status, "
                 "e.g. the model-exchange solver (CVode RuntimeError) giving up",
    "non_finite": "the FMU returned NaN or inf values (diverged without reporting an error)",
    "exploding": "the FMU returned finite but exploding values (beyond the campaign's bound, e.g. "
                 "1e104 from a diverged co-simulation step)",
    "crash": "the worker process died (segmentation fault, abort, killed by the OS)",
    "timeout": "the run exceeded its wall-clock time limit (the FMU hangs or is too slow)",
    "early_stop": "the FMU ended the run before the stop time without an error (the recorded "
                  "samples up to that point are kept)",
}

_PER_RUN = ("status", "failure_kind", "message", "n_samples", "wall_time", "signal")
_RESERVED = frozenset(("time", "run") + _PER_RUN)
_PARAM_PREFIX = "param:"
_VAR_PREFIX = "var:"


# ---------------------------------------------------------------------- names
def escape_name(name: str) -> str:
    """NetCDF variable name of the FMU variable ``name`` (identity for almost all names).

    See the module docstring; :func:`unescape_name` inverts it exactly.
    """
    s = name.replace("%", "%25").replace("/", "%2F")
    if s in (".", ".."):
        s = s.replace(".", "%2E")
    if s in _RESERVED or s.startswith((_PARAM_PREFIX, _VAR_PREFIX)):
        s = _VAR_PREFIX + s
    return s


_UNESCAPE = {"%25": "%", "%2F": "/", "%2E": "."}


def unescape_name(stored: str) -> str:
    """Inverse of :func:`escape_name`."""
    stored = stored.removeprefix(_VAR_PREFIX)
    return re.sub(r"%(25|2F|2E)", lambda m: _UNESCAPE[m.group(0)], stored)


def _param_var(name: str) -> str:
    return _PARAM_PREFIX + name.replace("%", "%25").replace("/", "%2F")


# ---------------------------------------------------------------------- records
@dataclass(frozen=True)
class RunRecord:
    """The result of one run, as produced by the runner.

    Attributes
    ----------
    index : int
        Run label (unique within a campaign; the ``run`` coordinate).
    params : dict of str to float
        Parameter values set for this run (others keep the FMU default).
    signals : dict of str to dict
        ``{input name: Signal.describe()}``.
    status : {"ok", "failed"}
    failure_kind : str
        ``""`` when ok, else a key of :data:`FAILURE_KINDS`.
    message : str
        FMU log / exception text.
    values : dict of str to ndarray
        ``{variable name: samples on the campaign's time grid}``; shape ``(n,)`` with
        ``n <= len(time)`` (a run that ended early is shorter), or ``(n, *shape)`` for FMI 3
        array variables.  May be empty for runs that failed before producing data.
    wall_time : float
        Seconds the run took.
    """

    index: int
    params: dict[str, float] = field(default_factory=dict)
    signals: dict[str, dict[str, Any]] = field(default_factory=dict)
    status: str = STATUS_OK
    failure_kind: str = ""
    message: str = ""
    values: dict[str, np.ndarray] = field(default_factory=dict)
    wall_time: float = float("nan")

    def __post_init__(self) -> None:
        if self.status not in (STATUS_OK, STATUS_FAILED):
            raise ValueError(f"RunRecord {self.index}: status must be 'ok' or 'failed', got "
                             f"{self.status!r}.")
        if self.status == STATUS_OK and self.failure_kind:
            raise ValueError(f"RunRecord {self.index}: an ok run has failure_kind ''; got "
                             f"{self.failure_kind!r}.")
        if self.status == STATUS_FAILED and self.failure_kind not in FAILURE_KINDS:
            raise ValueError(f"RunRecord {self.index}: failure_kind {self.failure_kind!r} is not "
                             f"one of {sorted(FAILURE_KINDS)}.")

    @property
    def ok(self) -> bool:
        """``status == "ok"``."""
        return self.status == STATUS_OK

    @property
    def n_samples(self) -> int:
        """Number of samples recorded (longest value array; 0 when there are none)."""
        return max((len(np.asarray(v)) for v in self.values.values()), default=0)


# ---------------------------------------------------------------------- build
def _element_suffixes(shape: tuple[int, ...]) -> list[tuple[str, tuple[int, ...]]]:
    out = []
    for idx in np.ndindex(*shape):
        out.append((",".join(str(i + 1) for i in idx), idx))
    return out


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
    import xarray as xr

    import fmu_surrogate

    t = np.asarray(time, dtype=float)
    if t.ndim != 1 or t.size == 0:
        raise ValueError(f"time must be a non-empty 1-D array, got shape {t.shape}.")
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise ValueError("time must be finite and strictly increasing.")
    T = t.size
    variables = list(variables)
    if len(set(variables)) != len(variables):
        dup = sorted({v for v in variables if variables.count(v) > 1})
        raise ValueError(f"variables lists {dup} more than once; give each name once.")
    records = list(records)
    idx = [int(r.index) for r in records]
    if len(set(idx)) != len(idx):
        raise ValueError("run indices must be unique; two records have the same index.")
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

    var_info: dict[str, Any] = {}
    if fmu_info is not None:
        var_info = {v.name: v for v in fmu_info.variables}

    data_vars: dict[str, Any] = {}
    for name in variables:
        shp = shapes[name]
        elems = _element_suffixes(shp) if shp else [("", ())]
        for suffix, eidx in elems:
            full = f"{name}[{suffix}]" if suffix else name
            arr = np.full((R, T), np.nan)
            for i, r in enumerate(records):
                if name not in r.values:
                    continue
                v = np.asarray(r.values[name], dtype=float)
                if v.shape[1:] != shp:
                    raise ValueError(f"run {r.index}: variable {name!r} has shape {v.shape[1:]} per "
                                     f"sample, other runs have {shp}.")
                if v.shape[0] > T:
                    raise ValueError(f"run {r.index}: variable {name!r} has {v.shape[0]} samples, "
                                     f"more than the {T} of the time grid.")
                col = v[(slice(None),) + eidx] if shp else v
                arr[i, : col.shape[0]] = col
            a: dict[str, Any] = {"fmu_variable": name}
            if suffix:
                a["element"] = suffix
            info = var_info.get(name)
            if info is not None:
                a["causality"] = info.causality
                if info.unit:
                    a["units"] = info.unit
            key = escape_name(full)
            if key in data_vars:
                raise ValueError(f"variable {full!r} appears twice after expanding arrays.")
            data_vars[key] = (("run", "time"), arr, a)

    if parameters is None:
        seen: dict[str, None] = {}
        for r in records:
            for k in r.params:
                seen.setdefault(k, None)
        parameters = list(seen)
    parameters = list(parameters)
    for p in parameters:
        arr = np.array([float(r.params.get(p, np.nan)) for r in records], dtype=float)
        data_vars[_param_var(p)] = (("run",), arr, {"parameter": p})

    n_samples = np.array([r.n_samples for r in records], dtype=np.int64)
    data_vars["status"] = (("run",), np.array([r.status for r in records], dtype=object))
    data_vars["failure_kind"] = (("run",), np.array([r.failure_kind for r in records],
                                                    dtype=object))
    data_vars["message"] = (("run",), np.array([str(r.message) for r in records], dtype=object))
    data_vars["n_samples"] = (("run",), n_samples)
    data_vars["wall_time"] = (("run",), np.array([float(r.wall_time) for r in records]),
                              {"units": "s"})
    data_vars["signal"] = (("run",), np.array([json.dumps(r.signals, sort_keys=True)
                                               for r in records], dtype=object))

    g: dict[str, Any] = {
        "format": FORMAT_NAME,
        "format_version": np.int64(FORMAT_VERSION),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "fmu_surrogate_version": fmu_surrogate.__version__,
        "fmu_name": "", "fmu_guid": "", "fmi_version": "", "generation_tool": "",
        "fmu_sha256": "", "fmu_path": "",
        "variables": _json_list(variables),
        "parameters": _json_list(parameters),
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
        )
    for k, v in (attrs or {}).items():
        if isinstance(v, bool):
            v = int(v)
        elif isinstance(v, (list, tuple, dict)):
            v = json.dumps(v)
        g[k] = v
    ds = xr.Dataset(
        data_vars,
        coords={"run": ("run", np.array(idx, dtype=np.int64)),
                "time": ("time", t, {"units": "s", "long_name": "time"})},
        attrs=g,
    )
    return ds


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
            x = float(ds[_param_var(p)].values[i])
            if not math.isnan(x):
                pv[p] = x
        out.append(RunRecord(
            index=int(run), params=pv, signals=json.loads(str(ds["signal"].values[i]) or "{}"),
            status=str(ds["status"].values[i]), failure_kind=str(ds["failure_kind"].values[i]),
            message=str(ds["message"].values[i]), values=values,
            wall_time=float(ds["wall_time"].values[i]),
        ))
    return out


# ---------------------------------------------------------------------- io
def save_dataset(ds: xr.Dataset, path: str | os.PathLike) -> Path:
    """Write ``ds`` to ``path`` atomically (``path + ".part"``, then ``os.replace``).

    Float arrays are gzip-compressed (NaN tails of failed runs cost almost nothing).

    Returns
    -------
    Path
        ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    encoding = {}
    for k, v in ds.data_vars.items():
        if v.dtype.kind == "f" and v.ndim == 2:
            encoding[k] = {"zlib": True, "complevel": 4, "shuffle": True}
    try:
        ds.to_netcdf(part, engine="h5netcdf", encoding=encoding)
        os.replace(part, path)
    finally:
        if part.exists():
            part.unlink()
    return path


_NOT_OURS = ("it is not an fmu-surrogate dataset; datasets are written by `fmu-surrogate harvest` "
             "or fmu_surrogate.fmu.dataset.save_dataset")

#: ``{old format_version: function(ds) -> ds of format_version + 1}``.  Version 1 is the first
#: version, so there is nothing to upgrade yet.
_UPGRADERS: dict[int, Any] = {}


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
    missing = [k for k in ("run", "time", *_PER_RUN) if k not in ds.variables]
    if missing:
        raise DatasetError(f"{path}: format_version {version} dataset lacks {missing}; the file is "
                           f"damaged — re-harvest it.")
    return ds


def load_dataset(path: str | os.PathLike) -> xr.Dataset:
    """Read a dataset written by :func:`save_dataset` (fully into memory; the file is closed).

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
        raise FileNotFoundError(f"{path}: no such dataset file; check the path (datasets are "
                                f"written by `fmu-surrogate harvest MODEL.fmu -o DATA.nc`).")
    try:
        with xr.open_dataset(path, engine="h5netcdf", decode_times=False,
                             decode_timedelta=False) as f:
            ds = f.load()
    except Exception as exc:  # h5py/h5netcdf raise OSError, ValueError, ... for foreign files
        raise DatasetError(f"{path} cannot be read as NetCDF-4/HDF5 ({type(exc).__name__}: "
                           f"{exc}); {_NOT_OURS}.") from None
    return _check_version(ds, path)


# ---------------------------------------------------------------------- access
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
    ds: xr.Dataset,
    names: Sequence[str],
    runs: Iterable[int] | None = None,
    only_ok: bool = True,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per-run arrays of the given variables, with the NaN tail removed.

    This is how identification code reads datasets.

    Parameters
    ----------
    ds : xarray.Dataset
    names : sequence of str
        Original FMU variable names (e.g. ``["x", "der(x)", "u"]``).
    runs : iterable of int, optional
        Run labels (values of the ``run`` coordinate); default all.
    only_ok : bool
        Skip runs whose status is not ``"ok"``.

    Returns
    -------
    list of (t, X)
        ``t`` of shape ``(n,)``, ``X`` of shape ``(n, len(names))``, where ``n`` is the run's
        ``n_samples`` minus any trailing rows in which all requested values are NaN.
    """
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
                raise KeyError(f"run {r} is not in the dataset (runs: {labels[:10]}"
                               f"{'...' if len(labels) > 10 else ''}).")
            sel.append(pos[int(r)])
    t_all = np.asarray(ds["time"].values, dtype=float)
    status = ds["status"].values
    nsamp = ds["n_samples"].values
    cols = [np.asarray(ds[k].values, dtype=float) for k in keys]
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
    parameter values (columns named as the parameters)."""
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
        cols[p] = ds[_param_var(p)].values.astype(float)
    return pd.DataFrame(cols)


def failed_runs(ds: xr.Dataset) -> pd.DataFrame:
    """The rows of :func:`runs_table` whose status is ``"failed"`` (index reset)."""
    tab = runs_table(ds)
    return tab[tab["status"] == STATUS_FAILED].reset_index(drop=True)
