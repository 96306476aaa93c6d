"""A DC motor whose magnetic circuit saturates: armature voltage and shaft speed in, current and
shaft torque out, the armature flux linkage as internal state.

Flux linkage ``ψ`` (Wb), armature resistance ``R``, torque constant ``k``; the current grows
faster than linearly with the flux (saturation), and the motor acts as a gyrator between its
electrical and its mechanical port::

    ψ' = V − R i − k w,      i = (ψ / L0) (1 + (ψ / psi_sat)²),      tau = k i,
    H = ψ² / (2 L0) + ψ⁴ / (4 L0 psi_sat²)

``V · i`` is power into the motor at the electrical port; ``tau`` is the torque the motor
delivers to its load, so ``tau · w`` is power out of the motor at the mechanical port (the
opposite sign of the Modelica flange convention of :mod:`.dc_motor`), and
``dH/dt = V i − tau w − R i²`` (passive).  The FMU is co-simulation only, keeps ``ψ`` internal
and integrates with its own fixed-step Runge-Kutta 4 scheme (``n_substeps`` per communication
step).
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import BenchmarkError, parameters
from fmu_surrogate.benchmarks.reference import solve_zoh

__all__ = ["PARAMS", "current", "hamiltonian", "outputs", "rhs", "simulate"]

#: Defaults: resistance ``R`` (Ω), unsaturated inductance ``L0`` (H), torque constant ``k``
#: (N·m/A = V·s/rad), saturation flux ``psi_sat`` (Wb), initial flux ``psi0`` (Wb).
PARAMS: dict[str, float] = {"R": 1.0, "L0": 0.05, "k": 0.1, "psi_sat": 0.1, "psi0": 0.0}


def _p(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("saturating_motor", PARAMS, params, positive=("L0", "psi_sat", "k"),
                      nonnegative=("R",))


def _inputs(u: np.ndarray) -> np.ndarray:
    u = np.atleast_2d(np.asarray(u, dtype=float))
    if u.shape[1:] != (2,):
        raise BenchmarkError(f"saturating_motor inputs are rows (V, w), got shape {u.shape}.")
    return u


def current(psi: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Armature current ``i = (ψ / L0) (1 + (ψ / psi_sat)²)`` (A)."""
    return _current(np.asarray(psi, dtype=float), _p(params))


def _current(psi: np.ndarray | float, p: dict[str, float]) -> np.ndarray | float:
    return psi / p["L0"] * (1.0 + (psi / p["psi_sat"]) ** 2)


def outputs(psi: np.ndarray, params: dict[str, float] | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """Current ``i`` (A) and delivered torque ``tau = k i`` (N·m) for fluxes ``psi`` (N,)."""
    p = _p(params)
    i = _current(np.asarray(psi, dtype=float), p)
    return i, p["k"] * i


def hamiltonian(psi: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Magnetic energy ``ψ² / (2 L0) + ψ⁴ / (4 L0 psi_sat²)`` (J)."""
    p = _p(params)
    psi = np.asarray(psi, dtype=float)
    return psi**2 / (2 * p["L0"]) + psi**4 / (4 * p["L0"] * p["psi_sat"] ** 2)


def rhs(x: np.ndarray, u: np.ndarray, params: dict[str, float] | None = None) -> list[float]:
    """``ψ' = V − R i(ψ) − k w`` for ``x = (ψ,)`` and ``u = (V, w)``."""
    return _rhs(x, _inputs(u)[0], _p(params))


def _rhs(x: np.ndarray, u: np.ndarray, p: dict[str, float]) -> list[float]:
    V, w = u
    return [float(V) - p["R"] * _current(float(x[0]), p) - p["k"] * float(w)]


def simulate(t: np.ndarray, u: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Flux linkage at ``t`` (N,) for inputs ``u`` (N, 2) = ``(V, w)`` held on each sample
    period."""
    p = _p(params)
    return solve_zoh(lambda x, uk: _rhs(x, uk, p), t, _inputs(u), [p["psi0"]])[:, 0]
