"""The experiment of a campaign, checked and normalised: the time grid, the signal sets, the
parameter sets and the recorded variables (errors name the problem and the fix)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.fmu.errors import ExperimentError, SignalError

if TYPE_CHECKING:  # pragma: no cover
    from fmu_surrogate.fmu.model.loading import FMUInfo

__all__ = ["default_record", "experiment_grid"]


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
                    stop_time: float | None = None, step: float | None = None
                    ) -> tuple[float, float, float, np.ndarray]:
    """Resolve and check the experiment; return ``(start, stop, step, time grid)``.

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
    t = start + step * np.arange(n + 1, dtype=np.float64)
    t[-1] = stop
    return start, stop, step, t


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
            elif not isinstance(v, str):
                raise ExperimentError(f"parameters[{i}][{k!r}] = {v!r}: give a number, a bool "
                                      f"or a string.")
            d[str(k)] = v
        out.append(d)
    return out or [{}]


def default_record(info: FMUInfo) -> list[str]:
    """Inputs, outputs, states and state derivatives (in that order, without duplicates)."""
    names: dict[str, None] = {}
    for group in (info.inputs, info.outputs, info.states,
                  tuple(info.derivatives[s] for s in info.states if s in info.derivatives)):
        for n in group:
            names.setdefault(n, None)
    if not names:  # an FMU that declares none of these: record every non-constant variable
        for v in info.variables:
            if v.variability in ("continuous", "discrete") and v.type != "String":
                names.setdefault(v.name, None)
    return list(names)
