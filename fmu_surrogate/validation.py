"""Does a surrogate still match the FMU it replaces?  Run both under the same inputs and compare.

:func:`validate` harvests the reference FMU once (isolated worker, like every harvest), then runs
the surrogate on exactly the inputs the reference saw — a surrogate JSON file or ``ph`` object
through :func:`fmu_surrogate.ph.simulate`, an exported surrogate FMU through a second harvest —
and reports max, RMS and relative error per output, in the reference's units.  It is what
``fmu-surrogate validate``, :func:`fmu_surrogate.testing.assert_surrogate_matches` and the pytest
fixture call.

Variables are matched by name: the surrogate's inputs must be variables of the reference FMU
(they are when the surrogate was identified from a dataset of that FMU), or a ``ports`` mapping
says which variable each is; every output of the surrogate that is a variable of the reference is
compared, the others are listed as not compared.  A drop-in surrogate
(:class:`~fmu_surrogate.ph.PortedSystem`) starts from its own operating point ``x0``, an exported
surrogate FMU from its start values (its ``x_start`` parameters).  A bare pH system's initial
state is taken from the reference run when its ``state_names`` are variables of the FMU, and is
zero otherwise (a linear surrogate of a system at rest).
"""

from __future__ import annotations

import ast
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["OutputError", "ValidationError", "ValidationReport", "validate"]


class ValidationError(FmuSurrogateError, ValueError):
    """The surrogate and the reference cannot be compared (names, runs that failed, shapes)."""


@dataclass(frozen=True)
class OutputError:
    """Error of one output of the surrogate against the reference.

    Parameters
    ----------
    name : str
        The output (FMU variable name).
    max_abs : float
        ``max |y_s − y_r|`` over the time grid.
    rms : float
        Root mean square of ``y_s − y_r``.
    scale : float
        The reference's swing (:func:`~fmu_surrogate.fmu.dataset.output_scale`: ``max |y_r|``,
        or its excursion from the start where that is smaller — a pressure of 150 bar ± 30 bar
        has the scale 30 bar).
    allowed : float
        ``atol + rtol · scale``.
    """

    name: str
    max_abs: float
    rms: float
    scale: float
    allowed: float

    @property
    def relative(self) -> float:
        """``max_abs / scale`` (``inf`` for a zero reference with a nonzero error)."""
        if self.scale > 0:
            return self.max_abs / self.scale
        return 0.0 if self.max_abs == 0 else float("inf")

    @property
    def passed(self) -> bool:
        """Whether ``max_abs ≤ allowed``."""
        return bool(self.max_abs <= self.allowed)


@dataclass(frozen=True)
class ValidationReport:
    """Both trajectories and the error per output.

    Parameters
    ----------
    t : ndarray, shape (N,)
        Time grid [s].
    reference, surrogate : ndarray, shape (N, k)
        Outputs of the reference FMU and of the surrogate.
    outputs : tuple of str
        Output names (FMU variables), length k.
    units : tuple of str or None
        Units per output, from the reference FMU.
    errors : tuple of OutputError
        One per output.
    rtol, atol : float
        The tolerances the errors were judged by.
    unmatched : tuple of str
        Outputs of the surrogate that are no variable of the reference (not compared).
    """

    t: np.ndarray = field(repr=False)
    reference: np.ndarray = field(repr=False)
    surrogate: np.ndarray = field(repr=False)
    outputs: tuple[str, ...]
    units: tuple[str | None, ...]
    errors: tuple[OutputError, ...]
    rtol: float
    atol: float
    unmatched: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """Whether every output is within ``atol + rtol · scale`` (:class:`OutputError`)."""
        return all(e.passed for e in self.errors)

    def table(self) -> str:
        """The errors as a text table, one row per output.

        Returns
        -------
        str
        """
        w = max([16] + [len(e.name) + 1 for e in self.errors])
        units = [u or "" for u in self.units]
        wu = max([4] + [len(u) for u in units])
        head = (f"{'output':<{w}} {'unit':<{wu}} {'max |err|':>11} {'RMS':>11} "
                f"{'relative':>10} {'allowed':>11}")
        rows = [head]
        for e, unit in zip(self.errors, units):
            mark = "ok" if e.passed else "FAIL"
            rows.append(f"{e.name:<{w}} {unit:<{wu}} {e.max_abs:11.3e} {e.rms:11.3e} "
                        f"{e.relative:10.3e} {e.allowed:11.3e}  {mark}")
        if self.unmatched:
            rows.append(f"not compared (no variable of the reference has their name): "
                        f"{', '.join(self.unmatched)}")
        return "\n".join(rows)

    def plot(self, path: str | Path | None = None, *, title: str | None = None) -> Any:
        """Reference and surrogate per output with an error panel (:func:`plots.plot_comparison`).

        Parameters
        ----------
        path : path, optional
            Save the figure there (PNG) and close it.
        title : str, optional
            Figure title.

        Returns
        -------
        matplotlib.figure.Figure
        """
        from fmu_surrogate.plots import plot_comparison

        return plot_comparison(self.t, self.reference, self.surrogate, self.outputs,
                               units=self.units, labels=("reference FMU", "surrogate"),
                               title=title, path=path)


@dataclass(frozen=True)
class _Surrogate:
    """The surrogate as :func:`validate` sees it: its external names, units and how to run it.

    ``inputs``/``outputs`` are the surrogate's own names (for an exported FMU the names it was
    exported from); ``ids`` maps them to the FMU's variables (the identity for a ``ph`` object);
    ``states`` are the state names of a bare pH system (its initial state is read from the
    reference when they are variables of it), empty for a surrogate with an operating point.
    """

    kind: str
    obj: Any
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    input_units: tuple[str | None, ...]
    output_units: tuple[str | None, ...]
    ids: Mapping[str, str]
    states: tuple[str, ...] = ()


_EXPORTED_NAME = re.compile(r"\(surrogate name ('.*'|\".*\")\)")


def _load_surrogate(surrogate: Any) -> _Surrogate:
    from fmu_surrogate.ph import PHDAE, PortedSystem, load

    if isinstance(surrogate, (str, os.PathLike)):
        path = Path(surrogate)
        if not path.exists():
            raise ValidationError(f"surrogate {str(path)!r} does not exist; pass a surrogate JSON "
                                  "file, an exported .fmu or a ph system object.")
        if path.suffix.lower() == ".fmu":
            return _fmu_surrogate(path)
        surrogate = load(path)
    if isinstance(surrogate, PortedSystem):
        ins, outs = surrogate.input_names, surrogate.output_names
        return _Surrogate("ph", surrogate, ins, outs, surrogate.input_units,
                          surrogate.output_units, {n: n for n in ins + outs})
    if isinstance(surrogate, PHDAE):
        n, m = np.shape(surrogate.B)
        ins, outs = (tuple(_port_names(surrogate, k, m)) for k in ("input", "output"))
        return _Surrogate("ph", surrogate, ins, outs, (None,) * m, (None,) * m,
                          {p: p for p in ins + outs}, tuple(_port_names(surrogate, "state", n)))
    raise ValidationError(
        f"cannot validate a {type(surrogate).__name__}; pass a surrogate JSON file, an exported "
        ".fmu or a fmu_surrogate.ph system (LinearPH, PHDAE, PortedSystem)."
    )


def _fmu_surrogate(path: Path) -> _Surrogate:
    """An exported surrogate FMU: its inputs and outputs under the names it was exported from
    (the exporter records a renamed variable's original name in its description)."""
    from fmu_surrogate.export.names import RESERVED
    from fmu_surrogate.fmu.model.loading import open_fmu

    def original(v: Any) -> str:
        found = _EXPORTED_NAME.search(v.description or "")
        return ast.literal_eval(found.group(1)) if found else v.name

    variables = open_fmu(path).variables
    ins = [v for v in variables if v.causality == "input"]
    outs = [v for v in variables if v.causality == "output" and v.name not in RESERVED]
    ids = {original(v): v.name for v in ins + outs}
    return _Surrogate("fmu", path, tuple(original(v) for v in ins),
                      tuple(original(v) for v in outs), tuple(v.unit for v in ins),
                      tuple(v.unit for v in outs), ids)


def _port_names(system: Any, kind: str, count: int) -> list[str]:
    names = getattr(system, f"{kind}_names", None)
    prefix = {"input": "u", "output": "y", "state": "x"}[kind]
    return list(names) if names is not None else [f"{prefix}{i + 1}" for i in range(count)]


def _conversion(unit: str | None, to: str | None, what: str) -> tuple[float, float]:
    """``(a, b)`` with ``value_in_to = a · value_in_unit + b``; ``(1, 0)`` when either unit is
    undeclared or cannot be read (then taken as the same)."""
    from fmu_surrogate.fmu.model.units import parse_unit

    if not unit or not to or unit == to:
        return 1.0, 0.0
    u, v = parse_unit(unit), parse_unit(to)
    if u is None or v is None:
        return 1.0, 0.0
    if u.dims != v.dims:
        raise ValidationError(
            f"{what} is in {unit!r} in the surrogate but in {to!r} in the reference FMU: not "
            "the same quantity; map the port to the right variable (ports=..., --port).")
    return u.factor / v.factor, (u.offset - v.offset) / v.factor


class _Variables:
    """The reference's variables by name, array elements (``u[2]``) by theirs: ``name in
    known`` and ``known[name]`` (an element gives its array variable: its unit)."""

    def __init__(self, info: Any) -> None:
        self.info = info

    def _find(self, name: str) -> Any:
        from fmu_surrogate.fmu.errors import UnknownVariableError
        from fmu_surrogate.fmu.model.elements import find_element

        try:
            return find_element(self.info, name)[0]
        except UnknownVariableError:
            return None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._find(name) is not None

    def __getitem__(self, name: str) -> Any:
        from fmu_surrogate.fmu.model.elements import find_element

        return find_element(self.info, name)[0]  # UnknownVariableError (a KeyError) if none


def validate(
    surrogate: Any,
    reference_fmu: str | os.PathLike,
    *,
    inputs: Mapping[str, Any] | None = None,
    parameters: Mapping[str, float] | None = None,
    stop_time: float | None = None,
    step: float | None = None,
    rtol: float = 1e-3,
    atol: float = 0.0,
    ports: Mapping[str, str] | None = None,
    outputs: Sequence[str] | None = None,
    timeout: float | None = 120.0,
) -> ValidationReport:
    """Run a surrogate and its reference FMU under the same inputs; compare their outputs.

    Parameters
    ----------
    surrogate : path or ph system
        A surrogate JSON file (``fmu_surrogate.ph.save``), an exported surrogate ``.fmu``, or a
        :class:`~fmu_surrogate.ph.LinearPH` / :class:`~fmu_surrogate.ph.PHDAE` /
        :class:`~fmu_surrogate.ph.PortedSystem` object.
    reference_fmu : path
        The FMU the surrogate replaces.
    inputs : mapping, optional
        Input signals by FMU variable name (:mod:`fmu_surrogate.signals` objects, arrays as
        ``ArraySignal``); inputs not named stay at their start values.
    parameters : mapping, optional
        Parameter values of the reference FMU for this comparison.
    stop_time, step : float, optional
        Experiment (default: the reference FMU's default experiment).
    rtol, atol : float
        An output passes when ``max |y_s − y_r| ≤ atol + rtol · s_r`` (in the reference's
        units), ``s_r`` its swing: ``max |y_r|``, or its excursion from the start where that is
        smaller (:func:`~fmu_surrogate.fmu.dataset.output_scale`).
    ports : mapping, optional
        Surrogate input or output name -> reference FMU variable, where the names differ.
    outputs : sequence of str, optional
        Compare only these outputs (reference variable names); default every output of the
        surrogate that is a variable of the reference.
    timeout : float, optional
        Wall-clock limit of each FMU run [s].

    Returns
    -------
    ValidationReport
        ``report.passed``, ``report.table()``, ``report.plot(path)``.

    Raises
    ------
    ValidationError
        An input of the surrogate that is not a variable of the reference FMU, no output in
        common, an output whose units are not those of the same quantity, or a run that failed
        (with the FMU's reason).

    Notes
    -----
    A :class:`~fmu_surrogate.ph.PortedSystem` starts from its operating point ``x0`` and an
    exported surrogate FMU from its start values (``x_start`` parameters as exported); a bare pH
    system from the reference's states when its ``state_names`` are variables of the FMU, else
    from rest.  Values are compared in the reference's units: an output declared in another
    unit of the same quantity (``mm`` for ``m``) is converted, and so are the inputs.
    """
    from fmu_surrogate.fmu.campaigns.campaign import harvest
    from fmu_surrogate.fmu.dataset import data_var_name, output_scale, run_arrays
    from fmu_surrogate.fmu.model.loading import open_fmu

    if not (rtol >= 0 and atol >= 0):
        raise ValidationError(f"rtol and atol must be >= 0, got rtol={rtol!r}, atol={atol!r}.")
    sur = _load_surrogate(surrogate)
    info = open_fmu(reference_fmu)
    known = _Variables(info)
    ports = dict(ports or {})
    r_in = [ports.get(p, p) for p in sur.inputs]
    for port, var in zip(sur.inputs, r_in):
        if var not in known:
            raise ValidationError(
                f"surrogate input {port!r} is not a variable of {info.name}"
                f"{f' (mapped to {var!r})' if var != port else ''}; name the ports when "
                "identifying (--inputs/--outputs) or pass ports={'" + port + "': 'FMU variable'}."
            )
    pairs = [(j, ports.get(p, p)) for j, p in enumerate(sur.outputs)]
    matched = [(j, v) for j, v in pairs if v in known]
    unmatched = tuple(sur.outputs[j] for j, v in pairs if v not in known)
    if outputs is not None:
        have = {v: j for j, v in matched}
        missing = [o for o in outputs if o not in have]
        if missing:
            raise ValidationError(f"outputs {missing} are not outputs of the surrogate that the "
                                  f"reference has (those: {list(have)}).")
        matched = [(have[o], o) for o in outputs]
    if not matched:
        raise ValidationError(
            f"no output of the surrogate ({list(sur.outputs)}) is a variable of {info.name}; "
            "name the ports when identifying (--inputs/--outputs) or pass ports={'y1': 'FMU "
            "variable'} (--port y1=VARIABLE).")
    r_out = [v for _, v in matched]
    states_known = bool(sur.states) and all(s in known for s in sur.states)
    record = list(dict.fromkeys(r_in + r_out + (list(sur.states) if states_known else [])))
    signals = [dict(inputs)] if inputs else None
    params = [dict(parameters)] if parameters else None
    with tempfile.TemporaryDirectory(prefix="fmu-surrogate-validate-") as tmp:
        ref = harvest(reference_fmu, Path(tmp) / "reference.nc", signals=signals,
                      parameters=params, stop_time=stop_time, step=step,
                      record=list(dict.fromkeys(known[v].name for v in record)),  # arrays whole
                      workers=1, timeout=timeout, progress=False)
        _check_ok(ref, f"reference FMU {info.name}")
        (t, R), = run_arrays(ref, record)
        col = {name: j for j, name in enumerate(record)}
        units = tuple(ref[data_var_name(ref, v)].attrs.get("units") or known[v].unit
                      for v in r_out)
        u = R[:, [col[v] for v in r_in]]
        for i, (p, v) in enumerate(zip(sur.inputs, r_in)):  # into the surrogate's units
            a, b = _conversion(known[v].unit, sur.input_units[i], f"input {p!r}")
            u[:, i] = a * u[:, i] + b
        y_ref = R[:, [col[v] for v in r_out]]
        y_sur = _run_surrogate(sur, ref, t, u, R[0, [col[s] for s in sur.states]]
                               if states_known else None, [j for j, _ in matched], tmp, timeout)
    if y_sur.shape != y_ref.shape:
        raise ValidationError(f"the surrogate returned {y_sur.shape[0]} samples, the reference "
                              f"{y_ref.shape[0]}: did the surrogate FMU stop early?")
    for k, (j, v) in enumerate(matched):  # into the reference's units
        a, b = _conversion(sur.output_units[j], units[k], f"output {sur.outputs[j]!r}")
        y_sur[:, k] = a * y_sur[:, k] + b
    errs, scales = [], output_scale(y_ref)
    for k, name in enumerate(r_out):
        e, scale = y_sur[:, k] - y_ref[:, k], float(scales[k])
        errs.append(OutputError(name, float(np.max(np.abs(e))), float(np.sqrt(np.mean(e**2))),
                                scale, atol + rtol * scale))
    return ValidationReport(t, y_ref, y_sur, tuple(r_out), units, tuple(errs), rtol, atol,
                            unmatched)


def _run_surrogate(sur: _Surrogate, ref: Any, t: np.ndarray, u: np.ndarray,
                   x0: np.ndarray | None, cols: list[int], tmp: str,
                   timeout: float | None) -> np.ndarray:
    """The surrogate's outputs ``cols`` on the reference's time grid under its inputs ``u``."""
    if sur.kind == "fmu":
        from fmu_surrogate.fmu.campaigns.campaign import harvest
        from fmu_surrogate.fmu.dataset import run_arrays

        names = [sur.ids[sur.outputs[j]] for j in cols]
        sur_ds = harvest(sur.obj, Path(tmp) / "surrogate.nc",
                         signals=[{sur.ids[p]: _array_signal(t, u[:, i])
                                   for i, p in enumerate(sur.inputs)}],
                         stop_time=float(t[-1]), start_time=float(t[0]),
                         step=float(t[1] - t[0]), record=names, workers=1,
                         timeout=timeout, progress=False)
        _check_ok(sur_ds, "surrogate FMU")
        (_, y), = run_arrays(sur_ds, names)
        return np.array(y, dtype=float)
    from fmu_surrogate.ph import PortedSystem, simulate

    # the reference saw its inputs as its importer held them: do the same
    hold = "zoh" if str(ref.attrs.get("input_interpolation", "")).startswith("zero") else "linear"
    if isinstance(sur.obj, PortedSystem):  # from its own operating point
        return np.array(simulate(sur.obj, t, u, hold=hold).y[:, cols], dtype=float)
    x0 = np.zeros(np.shape(sur.obj.J)[0]) if x0 is None else x0
    return np.array(simulate(sur.obj, t, u, x0, hold=hold).y[:, cols], dtype=float)


def _array_signal(t: np.ndarray, v: np.ndarray) -> Any:
    from fmu_surrogate.fmu.signals.standard import ArraySignal

    return ArraySignal(t, v)


def _check_ok(ds: Any, what: str) -> None:
    status = str(ds["status"].values[0])
    if status != "ok":
        raise ValidationError(
            f"the {what} run failed ({ds['failure_kind'].values[0]}): "
            f"{str(ds['message'].values[0]).splitlines()[0] if ds['message'].values[0] else ''}"
        )
