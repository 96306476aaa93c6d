"""A hydraulic accumulator discharging through an orifice, in the units of hydraulics vendors:
pressure in bar, flow in l/min, time in s.

* ``hydraulic_accumulator``: a linear hydraulic capacitance ``C`` (l/bar) with a power-out port.
  The input ``Q`` is the flow drawn from it (l/min), the output its pressure ``p`` (bar)::

      60 C p' = −Q,        H = C p² / 2  [bar·l] = 100 C p² / 2  [J]

  so ``p · Q`` is power flowing *out of* the accumulator.  Fixed-step Runge–Kutta 4 with
  substeps, as many vendors' FMUs integrate.
* ``hydraulic_orifice``: a linear (laminar) restriction to tank, ``Q = p / R`` with ``R`` in
  bar/(l/min), pressure in, flow out, direct feedthrough and no state; ``p · Q = p² / R`` is
  power into the orifice, dissipated.

The product of a port's pressure and flow is in bar·l/min: ``1e5 Pa · 1e-3 m³ / 60 s`` = 1.667 W
per unit product (:func:`fmu_surrogate.fmu.model.units.power_factor`).  Bonded together
(``benchmarks/systems/hydraulic_discharge.toml``) the accumulator empties with the time
constant ``τ = 60 C R``: ``p = p0 exp(−t / τ)``, and the energy that has passed the bond by
``t`` is ``100 C (p0² − p(t)²) / 2`` J (:func:`discharge`).
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import parameters
from fmu_surrogate.benchmarks.reference import solve_zoh

__all__ = ["ACCUMULATOR", "J_PER_BAR_LITRE", "ORIFICE", "W_PER_BAR_LPM", "accumulator_energy",
           "discharge", "orifice_flow", "rhs", "simulate"]

#: Default accumulator parameters: capacitance ``C`` (l/bar), initial pressure ``p0`` (bar).
ACCUMULATOR: dict[str, float] = {"C": 0.01, "p0": 100.0}
#: Default orifice parameter: resistance ``R`` (bar per l/min).
ORIFICE: dict[str, float] = {"R": 2.0}
#: Joules per bar·litre (1e5 Pa · 1e-3 m³).
J_PER_BAR_LITRE = 100.0
#: Watts per bar·(l/min).
W_PER_BAR_LPM = 1e5 * 1e-3 / 60.0


def _acc(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("hydraulic_accumulator", ACCUMULATOR, params, positive=("C",))


def rhs(x: np.ndarray, Q: float, params: dict[str, float] | None = None) -> list[float]:
    """``p' = −Q / (60 C)`` (bar/s) for the state ``x = (p,)`` and the drawn flow ``Q`` (l/min)."""
    return _rhs(x, Q, _acc(params))


def _rhs(x: np.ndarray, Q: float, p: dict[str, float]) -> list[float]:
    return [-float(Q) / (60.0 * p["C"])]


def simulate(t: np.ndarray, Q: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Accumulator pressure (bar) at ``t`` for the drawn flow ``Q`` (l/min) held on each period."""
    p = _acc(params)
    return solve_zoh(lambda x, q: _rhs(x, q, p), t, Q, [p["p0"]])[:, 0]


def accumulator_energy(p: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Stored energy ``100 C p² / 2`` (J) at the pressure ``p`` (bar)."""
    return J_PER_BAR_LITRE * 0.5 * _acc(params)["C"] * np.asarray(p, dtype=float) ** 2


def orifice_flow(p: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """``Q = p / R`` (l/min) through the orifice at the pressure ``p`` (bar)."""
    r = parameters("hydraulic_orifice", ORIFICE, params, positive=("R",))["R"]
    return np.asarray(p, dtype=float) / r


def discharge(t: np.ndarray, accumulator: dict[str, float] | None = None,
              orifice: dict[str, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The accumulator emptied through the orifice: pressure (bar) and the energy (J) that has
    passed from one to the other by ``t``.

    Returns
    -------
    p : ndarray
        ``p0 exp(−t / τ)``, ``τ = 60 C R``.
    energy : ndarray
        ``∫ p Q dt · 1.667 W/(bar·l/min) = 100 C (p0² − p²) / 2``.
    """
    a = _acc(accumulator)
    r = parameters("hydraulic_orifice", ORIFICE, orifice, positive=("R",))["R"]
    p = a["p0"] * np.exp(-np.asarray(t, dtype=float) / (60.0 * a["C"] * r))
    return p, accumulator_energy(a["p0"], a) - accumulator_energy(p, a)
