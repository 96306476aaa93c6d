"""A hydraulic damper: piston, two oil chambers and an orifice; velocity in, force out.

A vendor's detailed damper model behind the quadratic law ``F ≈ c v |v|``.  A through-rod piston
(annular area ``A`` on both sides) driven at the velocity ``v`` pushes oil out of chamber 1 into
chamber 2 through an orifice (area ``a_o``, discharge coefficient ``Cd``, oil density ``rho``).
The oil is compressible (bulk modulus ``beta``); the chambers hold ``V1`` and ``V2`` of oil
(their compliances ``C_i = V_i / beta``, taken at the piston's reference position) and are
precharged to ``p_pre``.  The states are the chamber pressures above the precharge::

    C1 p1' = A v − Q,     C2 p2' = Q − A v,     F = A (p1 − p2)
    Q = Cd a_o sqrt(2 / rho) Δp / (Δp² + dp_tr²)^(1/4),   Δp = p1 − p2

the turbulent orifice law ``Q = Cd a_o sqrt(2 |Δp| / rho) sign(Δp)`` for ``|Δp| ≫ dp_tr`` with a
smooth laminar transition (``Q`` linear in ``Δp``) near ``Δp = 0`` (:func:`orifice_flow`).
``H = C1 p1² / 2 + C2 p2² / 2`` and ``dH/dt = F v − Δp Q ≤ F v`` (``Δp Q ≥ 0``: passive).  The
model holds while both absolute pressures ``p_pre + p_i`` stay positive; the FMU fails the step
(with a message) when one does not: cavitation is outside it.

Quasi-statically ``Q = A v`` and ``F = A Δp(A v)`` (:func:`quasi_static_force`): for
``|v| ≫ v_tr = Cd a_o sqrt(2 dp_tr / rho) / A`` (0.05 m/s) that is ``c v |v|`` with
``c = rho A³ / (2 Cd² a_o²)`` (3.95 N·s²/m² by default, :func:`coefficient`).  The compliance
lags the force behind that law with the time constant ``1 / ((dQ/dΔp) (1/C1 + 1/C2))``: 13 µs at
2 m/s, 0.2 µs in the laminar range (stiff: the FMU integrates with its own SUNDIALS CVODE, BDF,
:mod:`fmu_surrogate.benchmarks.cvode`).  The FMU has the power damper's variables (``v`` in,
``F`` out, N and m/s) and keeps the pressures internal.  Unlike the power damper, ``F`` is a
function of the state, not of the input: at a communication point it is the law at the velocity
held over the step before (the lag is over within any step longer than ~0.1 ms), and at
``t = 0`` it is that of the initial pressures (0 at rest) whatever the velocity.
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import parameters

__all__ = ["PARAMS", "coefficient", "force", "hamiltonian", "orifice_flow", "quasi_static_force",
           "rhs"]

#: Defaults: piston area ``A`` (m²), orifice area ``a_o`` (m²), discharge coefficient ``Cd``,
#: oil density ``rho`` (kg/m³), bulk modulus ``beta`` (Pa), chamber volumes ``V1``, ``V2`` (m³),
#: precharge ``p_pre`` (Pa) and laminar-transition pressure ``dp_tr`` (Pa).
PARAMS: dict[str, float] = {"A": 1e-4, "a_o": 1.5e-5, "Cd": 0.7, "rho": 870.0, "beta": 1.5e9,
                            "V1": 2e-5, "V2": 3e-5, "p_pre": 2e6, "dp_tr": 100.0}


def _p(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("power_damper_detailed", PARAMS, params,
                      positive=("A", "a_o", "Cd", "rho", "beta", "V1", "V2", "p_pre", "dp_tr"))


def _gain(p: dict[str, float]) -> float:
    return p["Cd"] * p["a_o"] * np.sqrt(2.0 / p["rho"])


def orifice_flow(dp: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Flow ``Q`` (m³/s) from chamber 1 to 2 at the pressure difference ``dp`` (Pa)."""
    p = _p(params)
    dp = np.asarray(dp, dtype=float)
    return _gain(p) * dp / (dp**2 + p["dp_tr"] ** 2) ** 0.25


def coefficient(params: dict[str, float] | None = None) -> float:
    """``c = rho A³ / (2 Cd² a_o²)`` (N·s²/m²) of the turbulent law ``F = c v |v|``."""
    p = _p(params)
    return p["rho"] * p["A"] ** 3 / (2.0 * p["Cd"] ** 2 * p["a_o"] ** 2)


def quasi_static_force(v: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """``F = A Δp`` (N) with ``orifice_flow(Δp) = A v``: the force at a constant velocity.

    ``Q⁴ (Δp² + dp_tr²) = K⁴ Δp⁴`` (``K = Cd a_o sqrt(2 / rho)``) is a quadratic in ``Δp²``.
    """
    p = _p(params)
    q4 = (p["A"] * np.asarray(v, dtype=float)) ** 4
    k4 = _gain(p) ** 4
    dp2 = (q4 + np.sqrt(q4**2 + 4.0 * k4 * q4 * p["dp_tr"] ** 2)) / (2.0 * k4)
    return p["A"] * np.sign(v) * np.sqrt(dp2)


def rhs(x: np.ndarray, v: float, params: dict[str, float] | None = None) -> list[float]:
    """``(p1', p2')`` for the gauge pressures ``x = (p1, p2)`` (Pa) and the velocity ``v``."""
    p = _p(params)
    q = float(orifice_flow(x[0] - x[1], p))
    qa = p["A"] * float(v)
    return [(qa - q) * p["beta"] / p["V1"], (q - qa) * p["beta"] / p["V2"]]


def force(x: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """``F = A (p1 − p2)`` (N) for states ``x`` (..., 2)."""
    x = np.asarray(x, dtype=float)
    return _p(params)["A"] * (x[..., 0] - x[..., 1])


def hamiltonian(x: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Stored energy ``(V1 p1² + V2 p2²) / (2 beta)`` (J) of the compressed oil."""
    p = _p(params)
    x = np.asarray(x, dtype=float)
    return (p["V1"] * x[..., 0] ** 2 + p["V2"] * x[..., 1] ** 2) / (2.0 * p["beta"])
