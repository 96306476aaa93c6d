"""The harvest dataset format (``format_version`` 2) and its reader/writer.

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
  ``failure_kind``, ``message``, ``n_samples``, ``wall_time``, ``signal``, ``signal_index``,
  ``signal_table``, ``signal_set``) or starts with ``param:`` or ``var:`` gets the prefix
  ``var:``.

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
``signal``        str      JSON ``{input name: Signal.describe()}`` (keys sorted) of the run's
                           inputs.  In the file: see below.
``param:<name>``  float64  value of every parameter set in any run; NaN where the run kept the
                           FMU's default.  Attribute ``parameter`` = the original name.

Input signals in the file
-------------------------
Runs usually share a few input signals, and a sampled input (``ArraySignal``) has a long
description, so the file stores each distinct description once:

``signal_table``  dim ``signal_set``, str: the distinct texts of ``signal``;
``signal_index``  dim ``run``, int64: ``signal == signal_table[signal_index]``.

:func:`save_dataset` writes these two instead of ``signal``, :func:`load_dataset` turns them back
into ``signal`` (sharing the strings), so a dataset in memory has the layout above, with the
dimensions ``run`` and ``time`` only.

Global attributes
-----------------
``format="fmu-surrogate dataset"``, ``format_version`` (int, :data:`FORMAT_VERSION`), ``created``
(ISO 8601, UTC), ``fmu_surrogate_version``, ``fmu_name``, ``fmu_guid``, ``fmi_version``,
``generation_tool``, ``fmu_sha256``, ``fmu_path``, and JSON lists of names: ``variables``
(recorded variables, in order, original names), ``parameters`` (varied parameters), ``inputs``,
``outputs``, ``states`` and ``derivatives`` (``derivatives[i]`` is the derivative of
``states[i]``), all taken from the FMU's model description (``[]`` when not known).

Storage
-------
:func:`save_dataset` writes the (run, time) variables in chunks of whole runs (about 1 MB),
gzip-compressed with the HDF5 shuffle filter at level ``complevel`` (default 1: NaN tails of
failed runs cost almost nothing, smooth trajectories shrink about 2x; higher levels gain little
on such data and cost more time, 0 stores them uncompressed).  Any NetCDF-4 reader can open the
files.

Versioning
----------
:func:`load_dataset` reads ``format_version <= FORMAT_VERSION``; older versions are upgraded in
memory by the functions in ``_UPGRADERS`` or refused with the reason and what to do; newer
versions are refused (upgrade fmu-surrogate).  Any change of this layout bumps
:data:`FORMAT_VERSION`.

* Version 1 stored ``signal`` (the JSON description) once per run and no ``signal_index`` /
  ``signal_table``; it is upgraded on load (the table is made of its distinct descriptions;
  FMU variables stored under the names that version 2 reserves get the ``var:`` prefix).
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
    "assemble_dataset",
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
    "signal_table",
    "unescape_name",
]

#: Version of the on-disk layout described in the module docstring.
FORMAT_VERSION = 2
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
_SIGNAL_DIM = "signal_set"
#: Names that version 1 did not reserve (its FMU variables may be stored under them).
_NEW_IN_2 = ("signal_index", "signal_table", _SIGNAL_DIM)
_RESERVED = frozenset(("time", "run") + _PER_RUN + _NEW_IN_2)
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

    columns: list[tuple[str, str, np.ndarray]] = []
    for name in variables:
        shp = shapes[name]
        elems = _element_suffixes(shp) if shp else [("", ())]
        for suffix, eidx in elems:
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
            raise ValueError(f"column {name!r} has shape {arr.shape}, expected {(R, T)}.")
        full = f"{name}[{suffix}]" if suffix else name
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
    for p, values in params.items():
        data_vars[_param_var(p)] = (("run",), np.asarray(values, dtype=float), {"parameter": p})

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
def save_dataset(ds: xr.Dataset, path: str | os.PathLike, *, complevel: int = 1,
                 threads: int | None = None) -> Path:
    """Write ``ds`` to ``path`` atomically (``path + ".part"``, then ``os.replace``).

    The (run, time) float variables are stored in chunks of whole runs (about 1 MB) and, unless
    ``complevel`` is 0, gzip-compressed with the shuffle filter; ``signal`` is stored as
    ``signal_table`` + ``signal_index`` (see the module docs).

    Parameters
    ----------
    ds : xarray.Dataset
    path : path
    complevel : int
        gzip level 0 (none) ... 9.  Level 1 (default) gets nearly all of the size reduction of
        higher levels on simulation data at the lowest cost in time.
    threads : int, optional
        Threads compressing the (run, time) variables (default: one per CPU; 1 = HDF5's own
        serial compression through xarray).  Either way the file holds the same values with
        the same filters.

    Returns
    -------
    Path
        ``path``.
    """
    if not isinstance(complevel, (int, np.integer)) or not 0 <= complevel <= 9:
        raise ValueError(f"complevel must be an integer 0 (no compression) ... 9, got "
                         f"{complevel!r}.")
    if threads is not None and (not isinstance(threads, (int, np.integer)) or threads < 1):
        raise ValueError(f"threads must be a positive integer or None, got {threads!r}.")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
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
                _write_parallel(ds, part, big, int(complevel), threads)
                done = True
            except (TypeError, ValueError):  # something the plain writer cannot store
                part.unlink(missing_ok=True)
        if not done:
            encoding = {}
            for k, v in ds.data_vars.items():
                if v.dtype.kind == "f" and v.ndim == 2 and v.size:
                    enc: dict[str, Any] = {"chunksizes": (_chunk_rows(*v.shape), v.shape[1])}
                    if complevel:
                        enc.update(zlib=True, complevel=int(complevel), shuffle=True)
                    encoding[k] = enc
            ds.to_netcdf(part, engine="h5netcdf", encoding=encoding)
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


def _shuffle_deflate(arr: np.ndarray, r0: int, rows: int, level: int) -> bytes:
    """One chunk (runs ``r0 .. r0 + rows``) as HDF5 stores it: shuffle filter, then deflate."""
    import zlib

    block = arr[r0:r0 + rows]
    if block.shape[0] < rows:  # the edge chunk is stored at full size
        full = np.zeros((rows, arr.shape[1]))
        full[:block.shape[0]] = block
        block = full
    raw = np.ascontiguousarray(block, dtype="<f8").reshape(-1).view(np.uint8)
    shuffled = np.ascontiguousarray(raw.reshape(-1, 8).T)  # byte k of every value together
    return zlib.compress(shuffled, level)  # zlib releases the GIL: threads run in parallel


def _write_parallel(ds: xr.Dataset, part: Path, big: list[str], level: int,
                    threads: int | None) -> None:
    """Write ``ds`` as NetCDF-4 compressing the chunks of ``big`` in parallel threads.

    HDF5 compresses chunk after chunk in the calling thread, which made the compression the
    largest serial step of a campaign.  Here the chunks are shuffled and deflated by a thread
    pool (byte-identical to HDF5's own filters, so any NetCDF-4 reader decodes them) while the
    file's structure is written, then stored with ``write_direct_chunk``.
    """
    from concurrent.futures import ThreadPoolExecutor

    import h5netcdf
    import h5py

    R, T = ds.sizes["run"], ds.sizes["time"]
    rows = _chunk_rows(R, T)
    tasks = [(k, r0) for k in big for r0 in range(0, R, rows)]
    n_threads = threads or min(len(tasks), os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=max(1, n_threads)) as pool:
        futures = [pool.submit(_shuffle_deflate, np.asarray(ds[k].values), r0, rows, level)
                   for k, r0 in tasks]
        try:
            with h5netcdf.File(part, "w") as f:
                f.dimensions = {d: n for d, n in ds.sizes.items()}
                for name in ("run", "time"):
                    _plain_variable(f, name, ds[name].variable)
                for name, v in ds.data_vars.items():
                    if name in big:
                        var = f.create_variable(name, v.dims, "f8", chunks=(rows, T),
                                                compression="gzip", compression_opts=level,
                                                shuffle=True, fillvalue=np.nan)
                        for a, val in v.attrs.items():
                            var.attrs[a] = val
                    else:
                        _plain_variable(f, name, v.variable)
                for a, val in ds.attrs.items():
                    f.attrs[a] = val
            with h5py.File(part, "r+") as h:
                for (k, r0), fut in zip(tasks, futures):
                    h[k].id.write_direct_chunk((r0, 0), fut.result())
        finally:
            for fut in futures:
                fut.cancel()


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


_NOT_OURS = ("it is not an fmu-surrogate dataset; datasets are written by `fmu-surrogate harvest` "
             "or fmu_surrogate.fmu.dataset.save_dataset")

def signal_table(descriptions: Iterable[str]) -> tuple[list[str], np.ndarray]:
    """The distinct texts of ``descriptions`` (first-seen order) and each one's position.

    Shared string objects are hashed once (Python caches a string's hash), so a campaign's
    ``signal`` column of many runs with few signals costs one dict lookup per run.
    """
    texts: dict[str, int] = {}
    index = np.array([texts.setdefault(d if type(d) is str else str(d), len(texts))
                      for d in descriptions], dtype=np.int64)
    return list(texts), index


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
        raise FileNotFoundError(f"{path}: no such dataset file; check the path (datasets are "
                                f"written by `fmu-surrogate harvest MODEL.fmu -o DATA.nc`).")
    try:
        with xr.open_dataset(path, engine="h5netcdf", decode_times=False,
                             decode_timedelta=False) as f:
            ds = f.load()
    except Exception as exc:  # noqa: BLE001 - h5py/h5netcdf raise OSError, ValueError, ...
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
                raise KeyError(f"run {r} is not in the dataset (runs: {labels[:10]}"
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
        cols[p] = ds[_param_var(p)].values.astype(float)
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
