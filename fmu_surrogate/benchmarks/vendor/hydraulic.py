"""Hydraulic accumulators and orifices in the units of hydraulics vendors: pressure in bar, flow
in l/min, volume in l, time in s.

* ``hydraulic_accumulator``: a linear hydraulic capacitance ``C`` (l/bar) with a power-out port.
  The input ``Q`` is the flow drawn from it (l/min), the output its pressure ``p`` (bar)::

      60 C p' = −Q,        H = C p² / 2  [bar·l] = 100 C p² / 2  [J]

  so ``p · Q`` is power flowing *out of* the accumulator.  Fixed-step Runge–Kutta 4 with
  substeps, as many vendors' FMUs integrate.
* ``hydraulic_orifice``: a linear (laminar) restriction to tank, ``Q = p / R`` with ``R`` in
  bar/(l/min), pressure in, flow out, direct feedthrough and no state; ``p · Q = p² / R`` is
  power into the orifice, dissipated.
* ``gas_accumulator``: a bladder accumulator with a polytropic gas charge, as vendors model it:
  precharge pressure ``p_pre`` at the gas volume ``V0`` (empty), exponent ``n`` (1 isothermal,
  1.4 adiabatic).  Its state is the fluid volume ``V`` (l), the gas filling ``V0 − V``::

      V' = −Q / 60,        p = p_pre (V0 / (V0 − V))^n,

  ``Q`` drawn (l/min, ``p · Q`` power out, as above), ``p`` out; it starts charged at
  ``p_init > p_pre``: ``V_init = V0 (1 − (p_pre / p_init)^(1/n))``.  The energy stored relative to
  that charge, ``H(V) = ∫_{V_init}^{V} p dV'`` in bar·l (× 100 for J, :func:`gas_energy`), is
  in closed form, with ``g = V0 − V`` the gas volume (``p g^n = p_pre V0^n``)::

      H = (p g − p_init g_init) / (n − 1)        (n > 1),
      H = p_pre V0 ln(g_init / g)                 (n = 1, isothermal).

  The model holds while ``0 < V < V0``: the FMU fails a step that empties the accumulator or
  compresses the gas to nothing.  Fixed-step Runge–Kutta 4, the fluid volume internal.
* ``turbulent_orifice``: an orifice to tank with the laminar–turbulent transition of a flow-number
  model (as Amesim-like tools have), pressure in, flow out, direct feedthrough, no state::

      Q = K sign(p) √|p| tanh(2 √(|p| / p_crit)),

  laminar ``Q ≈ 2 K p / √p_crit`` for ``|p| ≪ p_crit``, turbulent ``Q ≈ K √|p|`` above; ``K`` in
  (l/min)/√bar.  ``p · Q ≥ 0`` is power into the orifice, dissipated.

The product of a port's pressure and flow is in bar·l/min: ``1e5 Pa · 1e-3 m³ / 60 s`` = 1.667 W
per unit product (:func:`fmu_surrogate.fmu.model.units.power_factor`).  Bonded together
(``benchmarks/systems/hydraulic_discharge.toml``) the linear accumulator empties with the time
constant ``τ = 60 C R``: ``p = p0 exp(−t / τ)``, and the energy that has passed the bond by
``t`` is ``100 C (p0² − p(t)²) / 2`` J (:func:`discharge`).
"""

from __future__ import annotations

import math

import numpy as np

from fmu_surrogate.benchmarks.params import BenchmarkError, parameters
from fmu_surrogate.benchmarks.reference import solve_zoh

__all__ = ["ACCUMULATOR", "GAS_ACCUMULATOR", "J_PER_BAR_LITRE", "ORIFICE", "TURBULENT_ORIFICE",
           "W_PER_BAR_LPM", "accumulator_energy", "discharge", "gas_energy", "gas_fluid_volume",
           "gas_pressure", "gas_simulate", "orifice_flow", "rhs", "simulate", "turbulent_flow"]

#: Default accumulator parameters: capacitance ``C`` (l/bar), initial pressure ``p0`` (bar).
ACCUMULATOR: dict[str, float] = {"C": 0.01, "p0": 100.0}
#: Default orifice parameter: resistance ``R`` (bar per l/min).
ORIFICE: dict[str, float] = {"R": 2.0}
#: Default gas accumulator parameters: precharge pressure ``p_pre`` (bar), gas volume at the
#: precharge ``V0`` (l), polytropic exponent ``n``, initial pressure ``p_init`` (bar, > p_pre).
GAS_ACCUMULATOR: dict[str, float] = {"p_pre": 80.0, "V0": 1.0, "n": 1.4, "p_init": 150.0}
#: Default turbulent orifice parameters: flow coefficient ``K`` ((l/min)/√bar), pressure of the
#: laminar–turbulent transition ``p_crit`` (bar).
TURBULENT_ORIFICE: dict[str, float] = {"K": 10.0, "p_crit": 2.0}
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


def _gas(params: dict[str, float] | None) -> dict[str, float]:
    p = parameters("gas_accumulator", GAS_ACCUMULATOR, params, positive=("p_pre", "V0"))
    if not p["n"] >= 1:
        raise BenchmarkError(f"gas_accumulator parameter n = {p['n']} must be >= 1 "
                             "(1: isothermal, 1.4: adiabatic).")
    if not p["p_init"] > p["p_pre"]:
        raise BenchmarkError(f"gas_accumulator parameter p_init = {p['p_init']} bar must be > "
                             f"p_pre = {p['p_pre']} bar (it starts charged): raise p_init or "
                             "lower p_pre.")
    return p


def _v_init(p: dict[str, float]) -> float:
    """``V0 (1 − (p_pre / p_init)^(1/n))`` by ``expm1``, accurate also for p_init close to p_pre."""
    return -p["V0"] * math.expm1(math.log(p["p_pre"] / p["p_init"]) / p["n"])


def gas_pressure(V: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Pressure ``p_pre (V0 / (V0 − V))^n`` (bar) at the fluid volume ``V`` (l).

    Computed as the FMU computes it, from the initial charge: ``p_init (g_init / (V0 − V))^n``
    with ``g_init = V0 − V_init`` (the same law), so that it is ``p_init`` exactly at ``V_init``.

    Raises
    ------
    BenchmarkError
        ``V`` outside ``(0, V0)``: the accumulator is empty, or its gas compressed to nothing.
    """
    p = _gas(params)
    V = np.asarray(V, dtype=float)
    bad = ~((V > 0) & (V < p["V0"]))
    if np.any(bad):
        raise BenchmarkError(f"gas_accumulator fluid volume {V[bad].flat[0]} l outside (0, V0 = "
                             f"{p['V0']} l): the accumulator is empty (V <= 0) or its gas is "
                             "compressed to nothing (V >= V0).")
    return p["p_init"] * ((p["V0"] - _v_init(p)) / (p["V0"] - V)) ** p["n"]


def gas_fluid_volume(pressure: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Fluid volume ``V0 (1 − (p_pre / p)^(1/n))`` (l) at the pressure ``p`` (bar), the inverse
    of :func:`gas_pressure`; ``p`` must be > ``p_pre`` (the accumulator holds fluid)."""
    p = _gas(params)
    P = np.asarray(pressure, dtype=float)
    if not np.all(P > p["p_pre"]):
        raise BenchmarkError(f"gas_accumulator pressure {P[~(P > p['p_pre'])].flat[0]} bar must "
                             f"be > p_pre = {p['p_pre']} bar (below it the accumulator is empty).")
    return -p["V0"] * np.expm1(np.log(p["p_pre"] / P) / p["n"])


def gas_energy(V: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Energy (J) stored at the fluid volume ``V`` (l) relative to the initial charge:
    ``100 ∫_{V_init}^{V} p dV'``, in closed form (module docstring)."""
    p = _gas(params)
    V = np.asarray(V, dtype=float)
    gas_pressure(V, p)  # checks the domain
    g0 = p["V0"] - _v_init(p)  # gas volume of the initial charge
    log_ratio = np.log((p["V0"] - V) / g0)
    n = p["n"]
    # p_init g0 ((g / g0)^(1 - n) - 1) / (n - 1), its limit -p_init g0 ln(g / g0) at n = 1
    if n == 1.0:
        h = -log_ratio
    else:
        h = np.expm1((1.0 - n) * log_ratio) / (n - 1.0)
    return J_PER_BAR_LITRE * p["p_init"] * g0 * h


def gas_simulate(t: np.ndarray, Q: np.ndarray, params: dict[str, float] | None = None
                 ) -> np.ndarray:
    """Gas accumulator pressure (bar) at ``t`` for the drawn flow ``Q`` (l/min) held on each
    period.

    Raises
    ------
    BenchmarkError
        The flow empties the accumulator (or compresses its gas to nothing) within ``t``.
    """
    p = _gas(params)
    t = np.asarray(t, dtype=float)
    V = solve_zoh(lambda x, q: [-float(q) / 60.0], t, Q, [_v_init(p)])[:, 0]
    out = ~((V > 0) & (V < p["V0"]))
    if np.any(out):
        k = int(np.argmax(out))
        what = ("emptied: the flow drawn exceeds its charge" if V[k] <= 0 else
                "its gas compressed to nothing: the flow pushed in exceeds the gas volume")
        raise BenchmarkError(f"gas_accumulator {what} (fluid volume {V[k]} l at t = {t[k]} s).")
    return gas_pressure(V, p)


def turbulent_flow(p: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """``Q = K sign(p) √|p| tanh(2 √(|p| / p_crit))`` (l/min) through the turbulent orifice at
    the pressure ``p`` (bar)."""
    k = parameters("turbulent_orifice", TURBULENT_ORIFICE, params, positive=("K", "p_crit"))
    P = np.asarray(p, dtype=float)
    a = np.abs(P)
    return np.sign(P) * (k["K"] * np.sqrt(a) * np.tanh(2.0 * np.sqrt(a / k["p_crit"])))
