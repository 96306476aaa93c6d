"""A pendulum on a driven joint: torque in, angular velocity out, angle and rate internal.

A point mass ``m`` on a massless rod of length ``l`` about a horizontal axis, viscous friction
``d`` in the joint, driven by the torque ``tau`` (N·m) the drive applies::

    φ' = ω,      m l² ω' = tau − d ω − m g l sin φ,
    H = m l² ω² / 2 + m g l (1 − cos φ)

``tau · ω = dH/dt + d ω²`` is power into the pendulum.  Driven hard enough it turns over: the
angle grows without bound and the energy repeats with every turn — outside the class of a
quadratic form plus convex ridges (:class:`~fmu_surrogate.ph.ConvexEffort`), inside it with
a periodic ridge.  The FMU ``pendulum_joint`` is co-simulation only, keeps ``φ`` and ``ω``
internal (``ω`` is also its output) and integrates with its own SUNDIALS CVODE
(:mod:`fmu_surrogate.benchmarks.cvode`), as OpenModelica's FMUs do.
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import parameters
from fmu_surrogate.benchmarks.reference import solve_zoh

__all__ = ["PARAMS", "hamiltonian", "rhs", "simulate"]

#: Defaults: mass ``m`` (kg), rod length ``l`` (m), gravity ``g`` (m/s²), joint friction ``d``
#: (N·m·s/rad), initial angle ``phi0`` (rad) and angular velocity ``w0`` (rad/s).
PARAMS: dict[str, float] = {"m": 1.0, "l": 0.5, "g": 9.81, "d": 0.1, "phi0": 0.0, "w0": 0.0}


def _p(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("pendulum_joint", PARAMS, params, positive=("m", "l"),
                      nonnegative=("d",))


def rhs(x: np.ndarray, tau: float, params: dict[str, float] | None = None) -> list[float]:
    """``(φ', ω')`` for ``x = (φ, ω)`` and the torque ``tau``."""
    return _rhs(x, tau, _p(params))


def _rhs(x: np.ndarray, tau: float, p: dict[str, float]) -> list[float]:
    inertia = p["m"] * p["l"] ** 2
    return [x[1], (float(tau) - p["d"] * x[1] - p["m"] * p["g"] * p["l"] * np.sin(x[0]))
            / inertia]


def hamiltonian(x: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """``m l² ω² / 2 + m g l (1 − cos φ)`` (J) of states ``x`` (N, 2)."""
    p = _p(params)
    x = np.atleast_2d(np.asarray(x, dtype=float))
    return 0.5 * p["m"] * p["l"] ** 2 * x[:, 1] ** 2 + p["m"] * p["g"] * p["l"] * (
        1.0 - np.cos(x[:, 0]))


def simulate(t: np.ndarray, tau: np.ndarray, params: dict[str, float] | None = None
             ) -> np.ndarray:
    """States ``(φ, ω)`` at ``t`` (N, 2) for the torque ``tau`` (N,) held on each sample
    period."""
    p = _p(params)
    return solve_zoh(lambda x, u: _rhs(x, u, p), t, tau, [p["phi0"], p["w0"]])
