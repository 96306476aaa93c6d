"""The experiment of a campaign, checked and normalised: the time grid, the signal sets, the
parameter sets and the recorded variables (errors name the problem and the fix)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.fmu.errors import ExperimentError, SignalError, UnknownVariableError
from fmu_surrogate.fmu.model.elements import check_values, element_name, find_element, split_array

if TYPE_CHECKING:  # pragma: no cover
    from fmu_surrogate.fmu.model.loading import FMUInfo

__all__ = ["ACCUMULATING_TOOLS", "check_record", "check_signals", "communication_points",
           "default_record", "experiment_grid", "not_recorded"]

#: Tools whose co-simulation FMUs count their time by adding their fixed internal step and step
#: while it is below the communication point without a tolerance (:func:`communication_points`),
#: as ``generationTool`` names them.
ACCUMULATING_TOOLS = ("20-sim",)


def _finite_number(name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ExperimentError(f"{name} = {value!r} is not a number; give a time in seconds.") \
            from None
    if not math.isfinite(v):
        raise ExperimentError(f"{name} = {value!r} is not finite; give a finite time in seconds.")
    return v


def experiment_grid(info: FMUInfo | None, start_time: float | None = None,
                    stop_time: float | None = None, step: float | None = None, *,
                    accumulated: bool = False) -> tuple[float, float, float, np.ndarray]:
    """Resolve and check the experiment; return ``(start, stop, step, time grid)``.

    The grid is ``start + i step`` (its last point ``stop``), or with ``accumulated`` the
    communication points of a master that adds the step: each the one before plus ``step`` in
    floating point, so that every step is exactly ``step`` and the last point is ``stop`` up to
    the round-off of the sum (:func:`communication_points` says which a co-simulation steps
    through).

    Missing values come from the FMU's default experiment (start 0, stop start + 1, step
    (stop - start) / 500 when it has none).

    Raises
    ------
    ExperimentError
        Negative or non-finite times, ``stop <= start``, ``step <= 0``, a step larger than the
        experiment, or ``stop - start`` not a whole number of steps.
    """
    de = info.default_experiment if info is not None else None
    start = start_time if start_time is not None else (
        de.start_time if de is not None and de.start_time is not None else 0.0)
    start = _finite_number("start time", start)
    if stop_time is None:
        stop_time = de.stop_time if de is not None and de.stop_time is not None else start + 1.0
    stop = _finite_number("stop time", stop_time)
    if start < 0:
        raise ExperimentError(f"start time {start:g} is negative; experiments start at t >= 0 "
                              f"(use --start 0 / start_time=0).")
    if stop < 0:
        raise ExperimentError(f"stop time {stop:g} is negative; give a stop time after the start "
                              f"time {start:g} (e.g. --stop {start + 1:g}).")
    if stop <= start:
        raise ExperimentError(f"stop time {stop:g} is not after the start time {start:g}; give "
                              f"stop > start (e.g. --stop {start + 1:g}).")
    if step is None:
        step = de.step_size if de is not None and de.step_size else (stop - start) / 500.0
    step = _finite_number("step", step)
    if step <= 0:
        raise ExperimentError(f"step {step:g} must be > 0; give a positive communication step "
                              f"(e.g. --step {(stop - start) / 500:g}).")
    span = stop - start
    if step > span * (1 + 1e-12):
        raise ExperimentError(f"step {step:g} is longer than the experiment ({start:g} to "
                              f"{stop:g}); use a step of at most {span:g}.")
    n_exact = span / step
    n = round(n_exact)
    if abs(n_exact - n) > 1e-6 * max(1.0, n):
        raise ExperimentError(
            f"the experiment {start:g}..{stop:g} is not a whole number of steps of {step:g} "
            f"({n_exact:.6g} steps); use e.g. step = {span / max(1, n):.6g} or stop = "
            f"{start + max(1, n) * step:.6g}.")
    if accumulated:
        return start, stop, step, np.cumsum(np.concatenate(([start], np.full(n, step))))
    t = start + step * np.arange(n + 1, dtype=np.float64)
    t[-1] = stop
    return start, stop, step, t


def communication_points(info: FMUInfo, start: float, stop: float, step: float
                         ) -> np.ndarray | None:
    """The communication points a co-simulation harvest of ``info`` steps through, when they
    are not the grid ``start + i step`` (``None``).

    fmpy and libcosim pass ``start + i step``, and tools that place time events and samples
    on multiples of a period meet them there exactly (a fault at ``t ≥ 0.5`` after ten steps of
    0.05: the sum of the steps is 0.49999999999999994).  20-sim's FMUs count their own time by
    ``time += h`` and step while it is below ``t_i + h_i``, without a tolerance: on
    ``start + i step`` the two part by round-off, and such an FMU takes two internal steps at
    one communication point and none at a later one (a 10 ms harvest of ``MassSpringDamper2``:
    outputs one step ahead from 0.09 s, stalled at 0.14 s, a 5.7 % held-out error of its
    surrogate that was 0.36 % when stepped as a master that adds the step does).  For the
    tools of :data:`ACCUMULATING_TOOLS` the points are those sums
    (:func:`experiment_grid` with ``accumulated``); the inputs are sampled and the outputs
    recorded on the grid all the same.

    Parameters
    ----------
    info : FMUInfo
    start, stop, step : float
        The experiment (:func:`experiment_grid`).

    Returns
    -------
    ndarray, shape (T,), or None
    """
    tool = (getattr(info, "generation_tool", "") or "").strip().lower()
    if not any(tool.startswith(t.lower()) for t in ACCUMULATING_TOOLS):
        return None
    return experiment_grid(info, start, stop, step, accumulated=True)[3]


def _settable(v) -> bool:
    return (v.causality in ("parameter", "input", "structuralParameter")
            or (v.initial in ("exact", "approx") and v.variability != "constant"))


def _mappings(value: Any, error: type[Exception], not_a_list: str,
              not_a_dict: str) -> Iterator[Mapping]:
    """The dicts of ``value`` (``None``: none; one dict: itself), each checked to be a mapping.

    ``not_a_list`` and ``not_a_dict`` are the error messages as :meth:`str.format` templates
    with the fields ``type`` (and ``i``, the position).
    """
    if value is None:
        value = []
    elif isinstance(value, Mapping):
        value = [value]
    elif not isinstance(value, (list, tuple)):
        raise error(not_a_list.format(type=type(value).__name__))
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise error(not_a_dict.format(i=i, type=type(item).__name__))
        yield item


def _normalise_signals(signals: Any) -> list[dict]:
    from fmu_surrogate.fmu.signals.standard import Constant, Signal

    out = []
    for s in _mappings(signals, SignalError,
                       "signals must be a dict {{input name: Signal}} or a list of such dicts, "
                       "got {type}.",
                       "signals[{i}] must be a dict {{input name: Signal}}, got {type}."):
        d = {}
        for name, sig in s.items():
            if isinstance(sig, (int, float)) and not isinstance(sig, bool):
                sig = Constant(float(sig))
            if not isinstance(sig, Signal):
                raise SignalError(f"input {name!r}: expected a Signal (Step, Chirp, ArraySignal, "
                                  f"...) or a number, got {type(sig).__name__}; wrap sampled "
                                  f"arrays in ArraySignal(t, values).")
            d[str(name)] = sig
        out.append(d)
    return out or [{}]


def _normalise_parameters(parameters: Any) -> list[dict]:
    out = []
    for i, p in enumerate(_mappings(
            parameters, ExperimentError,
            "parameters must be a list of dicts {{name: value}} (one per run), got {type}; see "
            "fmu_surrogate.fmu.campaigns.plans.",
            "parameters[{i}] must be a dict {{name: value}}, got {type}.")):
        d = {}
        for k, v in p.items():
            if isinstance(v, (bool, np.bool_)):
                v = bool(v)
            elif isinstance(v, (int, float, np.integer, np.floating)):
                v = float(v)
                if not math.isfinite(v):
                    raise ExperimentError(f"parameters[{i}][{k!r}] = {v} is not finite; give a "
                                          f"finite value.")
            elif isinstance(v, (list, tuple, np.ndarray)):  # a whole array parameter
                try:
                    v = tuple(float(x) for x in np.ravel(v))
                except (TypeError, ValueError):
                    raise ExperimentError(f"parameters[{i}][{k!r}] = {v!r}: an array "
                                          f"parameter takes numbers.") from None
                if not all(math.isfinite(x) for x in v):
                    raise ExperimentError(f"parameters[{i}][{k!r}] = {v!r} is not finite; give "
                                          f"finite values.")
            elif not isinstance(v, str):
                raise ExperimentError(f"parameters[{i}][{k!r}] = {v!r}: give a number, a bool, "
                                      f"a string or the values of an array.")
            d[str(k)] = v
        out.append(d)
    return out or [{}]


def _parameter_elements(info: FMUInfo, parameter_sets: list[dict]) -> list[dict]:
    """The parameter sets with whole array values split into their elements (``A[1,1]``, ...),
    each name checked to be a settable variable or an element of one, each value to fit the
    variable's type."""
    fmi3 = str(info.fmi_version).startswith("3")
    out = []
    checked: set[str] = set()
    for p in parameter_sets:
        d: dict[str, Any] = {}
        for k, value in p.items():
            v, pos = find_element(info, k)
            if k not in checked:
                if v.causality == "structuralParameter":
                    raise ExperimentError(
                        f"{k!r} is a structural parameter (it may size arrays): an FMU takes "
                        f"those in configuration mode only, which a harvest does not enter; "
                        f"leave it out of the parameters (it keeps its start value {v.start}).")
                if not _settable(v):
                    raise ExperimentError(
                        f"{k!r} is a {v.causality} variable ({v.variability}, initial="
                        f"{v.initial or 'calculated'}) and cannot be set; set a parameter "
                        f"instead (`fmu-surrogate info` lists them): "
                        f"{', '.join(info.parameters[:8])}.")
                checked.add(k)
            if isinstance(value, tuple) or (v.shape and pos is None):
                if not v.shape or pos is not None:
                    raise ExperimentError(f"{k!r} is a scalar; give it one value, got {value!r}.")
                part = split_array(v, value)
            else:
                part = {k: value}
            if not isinstance(value, str):
                check_values(v, list(part.values()), f"parameter {k!r}", fmi3)
            d.update(part)
        out.append(d)
    return out


def _interface(info: FMUInfo) -> list[str]:
    """Inputs, outputs, states and state derivatives (in that order, without duplicates)."""
    names: dict[str, None] = {}
    for group in (info.inputs, info.outputs, info.states,
                  tuple(info.derivatives[s] for s in info.states if s in info.derivatives)):
        for n in group:
            names.setdefault(n, None)
    return list(names)


def default_record(info: FMUInfo) -> list[str]:
    """The numeric inputs, outputs, states and state derivatives (in that order, without
    duplicates); String, Binary and Clock variables are left out (see :func:`not_recorded`).

    Parameters
    ----------
    info : FMUInfo

    Returns
    -------
    list of str
        Every non-constant numeric variable when the FMU declares none of these.
    """
    names = _interface(info)
    if not names:  # an FMU that declares none of these: record every non-constant variable
        return [v.name for v in info.variables
                if v.variability in ("continuous", "discrete") and v.is_numeric]
    by_name = info.variables_by_name
    return [n for n in names if by_name[n].is_numeric]


def not_recorded(info: FMUInfo) -> list[str]:
    """The inputs and outputs :func:`default_record` leaves out: not numbers (String, Binary,
    Clock).

    Parameters
    ----------
    info : FMUInfo

    Returns
    -------
    list of str
    """
    by_name = info.variables_by_name
    return [n for n in _interface(info) if not by_name[n].is_numeric]


def check_record(info: FMUInfo, record: list[str]) -> None:
    """Refuse recorded names that are not numeric variables of the FMU.

    Parameters
    ----------
    info : FMUInfo
    record : list of str
        The names to record.

    Raises
    ------
    UnknownVariableError
        A name the FMU does not have (an element ``y[1]``: record the array ``y``).
    ExperimentError
        A String, Binary or Clock variable.
    """
    for n in record:
        v, k = find_element(info, n)
        if k is not None:
            raise UnknownVariableError(
                n, info.variable_names, model=info.name,
                hint=f"record the array {v.name!r}: the dataset has a column per element "
                     f"({n} among them)")
        if not v.is_numeric:
            raise ExperimentError(
                f"{n!r} is a {v.type} variable: a dataset records numbers only; leave it out of "
                f"the recorded variables (--record / record=), the other variables of the FMU "
                f"are recorded as usual.")


def check_signals(info: FMUInfo, signal_sets: list[dict], time: np.ndarray) -> None:
    """Refuse signals on inputs they cannot drive: a String (or Binary, Clock) input, a whole
    array input, values an integer or Boolean input cannot take, values outside an input's
    declared ``min``/``max``.

    Parameters
    ----------
    info : FMUInfo
    signal_sets : list of dict
        ``{input name or element name: Signal}`` per signal set.
    time : ndarray, shape (T,)
        The grid the signals are sampled on.

    Raises
    ------
    UnknownVariableError
        Not an input of the FMU or an element of one.
    SignalError
        The input is not numeric, is an array (name an element), or the signal's values do not
        fit its type or its declared ``min``/``max``
        (:func:`~fmu_surrogate.fmu.model.elements.check_values`).
    """
    fmi3 = str(info.fmi_version).startswith("3")
    for s in signal_sets:
        for name, sig in s.items():
            v, k = find_element(info, name, "input")
            if not v.is_numeric:
                raise SignalError(
                    f"input {name!r} is a {v.type} variable: signals drive numeric inputs only; "
                    f"leave it out of the inputs (--input / signals=), it keeps its start value "
                    f"{v.start!r} (from Python, parameters={{{v.name!r}: 'text'}} sets another "
                    f"before the run).")
            if v.shape and k is None:
                first = element_name(name, (0,) * len(v.shape))
                raise SignalError(
                    f"input {name!r} is an array of shape {'x'.join(map(str, v.shape))}: design "
                    f"a signal per element, e.g. --input '{first}=step:t0=1' (the elements "
                    f"without a signal keep their start values).")
            try:
                check_values(v, sig(time), f"input {name!r}", fmi3)
            except ExperimentError as exc:
                raise SignalError(str(exc)) from None
