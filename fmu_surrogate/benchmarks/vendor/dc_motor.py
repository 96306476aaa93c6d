"""A separately excited DC motor with an electrical and a mechanical port, field command and
reversing contactor.

Armature current ``i_a`` (the state), resistance ``R``, inductance ``L``, torque constant ``k`` at
rated field.  Inputs: the supply voltage ``V``, the shaft speed ``w`` (imposed by the load), the
field command ``field`` (flux as a fraction of rated, a modulating input that carries no power)
and ``direction``, a discrete Integer input (a reversing contactor: ``+1`` forward, ``−1``
reverse, ``0`` armature disconnected from the supply and short-circuited — dynamic braking)::

    L i_a' = s V − R i_a − k φ w,      s = direction,  φ = field
    i   = s i_a                 supply current:   V · i   is power into the motor
    tau = −k φ i_a              flange torque:    tau · w is power into the motor

``tau`` follows the Modelica flange convention: it is the torque the shaft exerts on the motor,
so a motor that drives its load has ``tau · w < 0``.  Both ports take power in, and
``H = L i_a² / 2`` obeys ``dH/dt = V i + tau w − R i_a²`` (passive).  The discrete output
``braking`` is true while ``direction = 0``.  The FMU integrates with its own fixed-step
Runge-Kutta 4 scheme (``n_substeps`` per communication step).
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import BenchmarkError, parameters
from fmu_surrogate.benchmarks.reference import solve_zoh

__all__ = ["PARAMS", "hamiltonian", "outputs", "rhs", "simulate"]

#: Default parameters: ``R`` (Ω), ``L`` (H), ``k`` (N·m/A = V·s/rad), initial current ``i0`` (A).
PARAMS: dict[str, float] = {"R": 1.0, "L": 0.05, "k": 0.5, "i0": 0.0}


def _p(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("dc_motor", PARAMS, params, positive=("R", "L", "k"))


def _inputs(u: np.ndarray) -> np.ndarray:
    u = np.atleast_2d(np.asarray(u, dtype=float))
    if u.shape[1:] != (4,):
        raise BenchmarkError(f"dc_motor inputs are rows (V, w, field, direction), got shape {u.shape}.")
    bad = ~np.isin(u[:, 3], (-1.0, 0.0, 1.0))
    if bad.any():
        raise BenchmarkError(f"dc_motor direction must be -1, 0 or 1, got {u[bad, 3][0]}.")
    if not np.all(u[:, 2] >= 0):
        raise BenchmarkError(f"dc_motor field must be >= 0 (flux fraction), got {u[:, 2].min()}.")
    return u


def rhs(x: np.ndarray, u: np.ndarray, params: dict[str, float] | None = None) -> list[float]:
    """``i_a'`` for ``x = (i_a,)`` and ``u = (V, w, field, direction)``."""
    return _rhs(x, _inputs(u)[0], _p(params))


def _rhs(x: np.ndarray, u: np.ndarray, p: dict[str, float]) -> list[float]:
    V, w, field, direction = u
    return [(direction * V - p["R"] * x[0] - p["k"] * field * w) / p["L"]]


def outputs(i_a: np.ndarray, u: np.ndarray, params: dict[str, float] | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """Supply current ``i`` and flange torque ``tau`` for currents ``i_a`` (N,) and inputs
    ``u`` (N, 4)."""
    p = _p(params)
    u = _inputs(u)
    i_a = np.asarray(i_a, dtype=float)
    return u[:, 3] * i_a, -p["k"] * u[:, 2] * i_a


def hamiltonian(i_a: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Magnetic energy ``L i_a² / 2`` (J)."""
    return 0.5 * _p(params)["L"] * np.asarray(i_a, dtype=float) ** 2


def simulate(t: np.ndarray, u: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Armature current at ``t`` (N,) for inputs ``u`` (N, 4) = ``(V, w, field, direction)``
    held on each sample period."""
    p = _p(params)
    return solve_zoh(lambda x, uk: _rhs(x, uk, p), t, _inputs(u), [p["i0"]])[:, 0]
