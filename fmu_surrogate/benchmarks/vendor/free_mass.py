"""A free mass with a power-out port: force in, velocity out, ``m v' = −F``.

The input ``F`` is the *reaction* force, the force the mass exerts on whatever drives it (the
cut force at the drive), so ``F · v`` is power flowing **out of** the mass through its port —
the sign convention of many vendors' mechanical FMUs (and of Modelica flanges seen from the
driving side).  The mass is lossless and marginally stable: ``H = m v² / 2``,
``dH/dt = −F v``, one eigenvalue at 0.  The benchmark ``free_inertia`` is the same FMU in
rotational units: ``F`` is then a torque (N·m), ``v`` an angular velocity (rad/s), ``m`` an
inertia (kg·m²).

As a linear pH system: ``x = p = m v``, ``J = R = 0``, ``Q = 1/m``, ``B = 1``, with the port
``(u, y) = (−F, v)`` (:func:`free_mass_ph`).
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import parameters
from fmu_surrogate.benchmarks.reference import solve_zoh
from fmu_surrogate.ph import LinearPH

__all__ = ["PARAMS", "free_mass_ph", "hamiltonian", "rhs", "simulate"]

#: Default parameters: mass ``m`` (kg, or kg·m² for the inertia), initial velocity ``v0``.
PARAMS: dict[str, float] = {"m": 2.0, "v0": 0.0}


def _p(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("free_mass", PARAMS, params, positive=("m",))


def rhs(x: np.ndarray, F: float, params: dict[str, float] | None = None) -> list[float]:
    """``v' = −F / m`` for the state ``x = (v,)``."""
    return _rhs(x, F, _p(params))


def _rhs(x: np.ndarray, F: float, p: dict[str, float]) -> list[float]:
    return [-float(F) / p["m"]]


def hamiltonian(v: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Kinetic energy ``m v² / 2`` (J)."""
    return 0.5 * _p(params)["m"] * np.asarray(v, dtype=float) ** 2


def simulate(t: np.ndarray, F: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Velocity at ``t`` (N,) for the reaction force ``F`` (N,) held on each sample period."""
    p = _p(params)
    return solve_zoh(lambda x, f: _rhs(x, f, p), t, F, [p["v0"]])[:, 0]


def free_mass_ph(m: float = PARAMS["m"]) -> LinearPH:
    """The mass as :class:`~fmu_surrogate.ph.LinearPH`: ``p' = u``, ``y = p / m`` with ``u = −F``."""
    m = _p({"m": m})["m"]
    return LinearPH(np.zeros((1, 1)), np.zeros((1, 1)), [[1.0 / m]], [[1.0]])
