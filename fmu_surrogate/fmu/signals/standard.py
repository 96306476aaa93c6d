"""Input signals for harvesting campaigns.

Every signal is a small immutable object with

* ``signal(t)`` — vectorised evaluation: ``t`` array of shape ``(T,)`` (or any shape) → values of
  the same shape, float64;
* ``t_end`` — the last time at which the signal is defined, or ``None`` for signals defined for
  all ``t`` (periodic or analytic signals);
* ``describe()`` — a JSON-serialisable dict with a ``"kind"`` key; :func:`signal_from_description`
  turns it back into an equal signal (this is what datasets store per run).

Kinds: :class:`Constant`, :class:`Step`, :class:`Chirp`, :class:`SchroederMultisine`,
:class:`PRBS`, :class:`BandLimitedNoise`, :class:`ArraySignal`.

Signal versus experiment (:func:`check_signal_fits`): a *bounded* signal (``t_end`` not ``None``;
:class:`ArraySignal` and :class:`BandLimitedNoise`) must cover the experiment exactly:

* a signal that ends before ``stop_time`` ("shorter than the experiment") is always an error —
  we would have to invent values;
* a signal that extends beyond ``stop_time`` ("longer than the experiment") is an error by default
  too, because part of the data the user designed would be silently ignored (usually a forgotten
  ``stop_time``); pass ``allow_longer=True`` to accept it deliberately.

Unbounded signals fit any experiment.

The base class is in :mod:`~fmu_surrogate.fmu.signals.base`, the broadband excitation signals
(multisine, PRBS, band-limited noise) in :mod:`~fmu_surrogate.fmu.signals.excitation`; this module
holds the simple kinds, the sampled signal and the registry.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from fmu_surrogate.fmu.errors import ExperimentError, SignalError
from fmu_surrogate.fmu.signals.base import Signal, _finite, _nonneg, _positive
from fmu_surrogate.fmu.signals.excitation import PRBS, BandLimitedNoise, SchroederMultisine

__all__ = [
    "PRBS",
    "SIGNAL_KINDS",
    "ArraySignal",
    "BandLimitedNoise",
    "Chirp",
    "Constant",
    "SchroederMultisine",
    "Signal",
    "Step",
    "check_signal_fits",
    "sample_inputs",
    "signal_from_description",
]


@dataclass(frozen=True)
class Constant(Signal):
    """``u(t) = value``.

    Parameters
    ----------
    value : float
        The constant value.
    """

    value: float = 0.0
    kind: ClassVar[str] = "constant"

    def __post_init__(self) -> None:
        _finite("Constant", value=self.value)
        object.__setattr__(self, "value", float(self.value))

    def _eval(self, t):
        return np.full(t.shape, self.value)


@dataclass(frozen=True)
class Step(Signal):
    """``u(t) = before`` for ``t < t0``, ``after`` for ``t >= t0`` (right-continuous).

    Parameters
    ----------
    t0 : float
        Time of the step (s).
    before : float
        Value before ``t0``.
    after : float
        Value from ``t0`` on.
    """

    t0: float = 0.0
    before: float = 0.0
    after: float = 1.0
    kind: ClassVar[str] = "step"

    def __post_init__(self) -> None:
        _finite("Step", t0=self.t0, before=self.before, after=self.after)
        for k in ("t0", "before", "after"):
            object.__setattr__(self, k, float(getattr(self, k)))

    def _eval(self, t):
        return np.where(t >= self.t0, self.after, self.before)


_CHIRP_METHODS = ("linear", "quadratic", "logarithmic", "hyperbolic")


@dataclass(frozen=True)
class Chirp(Signal):
    """Swept sine ``offset + amplitude * scipy.signal.chirp(t, f0, t1, f1, method, phi)``.

    The instantaneous frequency goes from ``f0`` (Hz) at ``t = 0`` to ``f1`` at ``t = t1``; with
    the default ``method="linear"`` it is ``f(t) = f0 + (f1 - f0) t / t1`` and the phase is
    ``2π (f0 t + (f1 - f0) t² / (2 t1)) + phi`` (``phi`` in degrees, cosine convention, exactly as
    :func:`scipy.signal.chirp`).  Defined for all ``t`` (the sweep continues past ``t1``).

    Parameters
    ----------
    f0 : float
        Frequency at ``t = 0`` (Hz), >= 0.
    f1 : float
        Frequency at ``t = t1`` (Hz), >= 0.
    t1 : float
        End of the sweep (s), > 0.
    amplitude : float
        Amplitude of the sine.
    offset : float
        Value added to the sine.
    method : {"linear", "quadratic", "logarithmic", "hyperbolic"}
        Shape of the frequency sweep.
    phi : float
        Phase at ``t = 0`` (degrees).
    """

    f0: float = 0.1
    f1: float = 1.0
    t1: float = 10.0
    amplitude: float = 1.0
    offset: float = 0.0
    method: str = "linear"
    phi: float = 0.0
    kind: ClassVar[str] = "chirp"

    def __post_init__(self) -> None:
        _finite("Chirp", f0=self.f0, f1=self.f1, t1=self.t1, amplitude=self.amplitude,
                offset=self.offset, phi=self.phi)
        _nonneg("Chirp", f0=self.f0, f1=self.f1)
        _positive("Chirp", t1=self.t1)
        if self.method not in _CHIRP_METHODS:
            raise SignalError(f"Chirp: method {self.method!r} is unknown; use one of "
                              f"{', '.join(_CHIRP_METHODS)}.")
        if self.method in ("logarithmic", "hyperbolic") and (self.f0 == 0 or self.f1 == 0):
            raise SignalError(f"Chirp: method {self.method!r} needs f0 > 0 and f1 > 0; use "
                              f"method='linear' or positive frequencies.")
        for k in ("f0", "f1", "t1", "amplitude", "offset", "phi"):
            object.__setattr__(self, k, float(getattr(self, k)))

    def instantaneous_frequency(self, t) -> np.ndarray:
        """Instantaneous frequency (Hz) at times ``t`` (analytic, for checks and plots)."""
        t = np.asarray(t, dtype=float)
        f0, f1, t1 = self.f0, self.f1, self.t1
        if self.method == "linear":
            return f0 + (f1 - f0) * t / t1
        if self.method == "quadratic":
            return f0 + (f1 - f0) * t**2 / t1**2
        if self.method == "logarithmic":
            return f0 * (f1 / f0) ** (t / t1)
        return f0 * f1 * t1 / ((f0 - f1) * t + f1 * t1)  # hyperbolic

    def _eval(self, t):
        from scipy.signal import chirp

        return self.offset + self.amplitude * chirp(t, f0=self.f0, t1=self.t1, f1=self.f1,
                                                    method=self.method, phi=self.phi)


# ---------------------------------------------------------------------- arrays
@dataclass(frozen=True, eq=False)
class ArraySignal(Signal):
    """User-supplied samples ``(t_i, u_i)``, interpolated.

    Parameters
    ----------
    t : array-like, shape (N,)
        Strictly increasing, finite times (N >= 1).
    values : array-like, shape (N,)
        Finite values.
    interpolation : {"linear", "zoh"}
        Linear interpolation, or zero-order hold (``u(t) = u_i`` for ``t_i <= t < t_{i+1}``).

    Defined on ``[t[0], t[-1]]`` (``t_start``, ``t_end``); outside it holds the end values.
    """

    t: np.ndarray = field(default_factory=lambda: np.zeros(1))
    values: np.ndarray = field(default_factory=lambda: np.zeros(1))
    interpolation: str = "linear"
    kind: ClassVar[str] = "array"

    def __post_init__(self) -> None:
        try:
            t = np.array(self.t, dtype=float).reshape(-1)
            v = np.array(self.values, dtype=float).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise SignalError(f"ArraySignal: t and values must be numeric 1-D arrays ({exc}).") \
                from None
        if np.ndim(self.t) > 1 or np.ndim(self.values) > 1:
            raise SignalError("ArraySignal: t and values must be 1-D; pass one signal per input.")
        if t.size == 0:
            raise SignalError("ArraySignal: t is empty; give at least one sample.")
        if t.shape != v.shape:
            raise SignalError(f"ArraySignal: t has {t.size} samples but values has {v.size}; "
                              f"they must have the same length.")
        if not np.all(np.isfinite(t)):
            raise SignalError("ArraySignal: t contains NaN or inf; remove or fill those samples.")
        if not np.all(np.isfinite(v)):
            i = int(np.flatnonzero(~np.isfinite(v))[0])
            raise SignalError(f"ArraySignal: values[{i}] = {v[i]} is not finite; remove or fill "
                              f"non-finite samples.")
        if t.size > 1 and np.any(np.diff(t) <= 0):
            i = int(np.flatnonzero(np.diff(t) <= 0)[0])
            raise SignalError(f"ArraySignal: t is not strictly increasing (t[{i}] = {t[i]}, "
                              f"t[{i + 1}] = {t[i + 1]}); sort the samples and drop duplicates.")
        if self.interpolation not in ("linear", "zoh"):
            raise SignalError(f"ArraySignal: interpolation {self.interpolation!r} is unknown; use "
                              f"'linear' or 'zoh'.")
        t.flags.writeable = False
        v.flags.writeable = False
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "values", v)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArraySignal):
            return NotImplemented
        return (self.interpolation == other.interpolation and np.array_equal(self.t, other.t)
                and np.array_equal(self.values, other.values))

    __hash__ = None  # type: ignore[assignment]

    @property
    def t_end(self) -> float:
        return float(self.t[-1])

    @property
    def t_start(self) -> float:
        return float(self.t[0])

    def _eval(self, t):
        if self.interpolation == "linear":
            return np.interp(t, self.t, self.values)
        idx = np.searchsorted(self.t, t, side="right") - 1
        return self.values[np.clip(idx, 0, len(self.t) - 1)]


# ---------------------------------------------------------------------- registry
SIGNAL_KINDS: dict[str, type[Signal]] = {
    cls.kind: cls
    for cls in (Constant, Step, Chirp, SchroederMultisine, PRBS, BandLimitedNoise, ArraySignal)
}


def signal_from_description(d: Mapping[str, Any] | str) -> Signal:
    """Rebuild a signal from :meth:`Signal.describe` output (a dict or its JSON text).

    Raises
    ------
    SignalError
        Unknown ``kind`` or bad parameters.
    """
    if isinstance(d, str):
        try:
            d = json.loads(d)
        except ValueError as exc:
            raise SignalError(f"signal description is not valid JSON ({exc}).") from None
    if not isinstance(d, Mapping) or "kind" not in d:
        raise SignalError(f"a signal description must be a dict with a 'kind' key, got {d!r}.")
    kind = d["kind"]
    cls = SIGNAL_KINDS.get(kind)
    if cls is None:
        raise SignalError(f"unknown signal kind {kind!r}; known kinds: "
                          f"{', '.join(sorted(SIGNAL_KINDS))}.")
    kwargs = {k: v for k, v in d.items() if k != "kind"}
    names = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    unknown = set(kwargs) - names
    if unknown:
        raise SignalError(f"{kind} signal: unknown parameter(s) {sorted(unknown)}; allowed: "
                          f"{sorted(names)}.")
    for k in ("frequencies", "levels"):
        if k in kwargs and isinstance(kwargs[k], list):
            kwargs[k] = tuple(kwargs[k])
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise SignalError(f"{kind} signal: {exc}.") from None


def check_signal_fits(
    signal: Signal, start: float, stop: float, *, name: str = "signal",
    allow_longer: bool = False, rtol: float = 1e-9,
) -> None:
    """Check that a bounded signal covers the experiment ``[start, stop]`` (see module docs).

    Parameters
    ----------
    signal : Signal
    start, stop : float
        Experiment start and stop time.
    name : str
        Input name, used in the message.
    allow_longer : bool
        Accept a signal that extends beyond ``stop`` (the tail is ignored).
    rtol : float
        Tolerance relative to ``stop - start`` for comparing times.

    Raises
    ------
    ExperimentError
        Signal shorter than the experiment (always), starting after ``start``, or longer than the
        experiment (unless ``allow_longer``).
    """
    if not (math.isfinite(start) and math.isfinite(stop)) or stop <= start:
        raise ExperimentError(f"experiment [{start}, {stop}] is empty or not finite; use "
                              f"start_time < stop_time.")
    tol = rtol * (stop - start)
    t_end = signal.t_end
    t_start = signal.t_start
    kind = signal.kind or type(signal).__name__
    if t_start is not None and t_start > start + tol:
        raise ExperimentError(
            f"input {name!r}: the {kind} signal starts at t = {t_start:g}, after the experiment "
            f"start {start:g}; extend the signal back to t = {start:g} or set start_time = "
            f"{t_start:g}."
        )
    if t_end is None:
        return
    if t_end < stop - tol:
        raise ExperimentError(
            f"input {name!r}: the {kind} signal ends at t = {t_end:g}, before the experiment's "
            f"stop time {stop:g} (signal shorter than the experiment); extend the signal to "
            f"t = {stop:g} or set stop_time = {t_end:g}."
        )
    if t_end > stop + tol and not allow_longer:
        raise ExperimentError(
            f"input {name!r}: the {kind} signal lasts until t = {t_end:g}, longer than the "
            f"experiment (stop time {stop:g}), so its tail would be ignored; set stop_time = "
            f"{t_end:g}, trim the signal to {stop:g}, or allow it explicitly (allow_longer=True)."
        )


def sample_inputs(signals: Mapping[str, Signal], t) -> dict[str, np.ndarray]:
    """Evaluate every signal on the times ``t``.

    Parameters
    ----------
    signals : mapping of str to Signal
        ``{input name: signal}``.
    t : array-like, shape (T,)

    Returns
    -------
    dict of str to ndarray, each of shape (T,)
    """
    t = np.asarray(t, dtype=float)
    out = {}
    for name, s in signals.items():
        if not isinstance(s, Signal):
            raise SignalError(f"input {name!r}: expected a Signal (e.g. Step, Chirp, ArraySignal), "
                              f"got {type(s).__name__}; wrap arrays in ArraySignal(t, values).")
        out[name] = s(t)
    return out
