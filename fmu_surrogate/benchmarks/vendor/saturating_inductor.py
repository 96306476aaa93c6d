"""A coil whose flux saturates: voltage in, current out, the flux linkage as internal state.

Flux linkage ``ψ`` (Wb), winding resistance ``R``; the current grows faster than linearly with
the flux (the inductance ``dψ/di`` falls as the core saturates)::

    ψ' = V − R i,      i = (ψ / L0) (1 + (ψ / psi_sat)²),
    H = ψ² / (2 L0) + ψ⁴ / (4 L0 psi_sat²)

``V · i = dH/dt + R i²`` is power into the coil.  The FMU is co-simulation only, keeps ``ψ``
internal and integrates with its own fixed-step Runge-Kutta 4 scheme; ``saturating_inductor_cvode``
integrates with its own variable-step SUNDIALS CVODE instead (BDF, relative tolerance 1e-6,
reinitialised at every communication point, :mod:`fmu_surrogate.benchmarks.cvode`), so its
current differs from the exact one by the solver's error (~3e-5 of the peak current).
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import parameters
from fmu_surrogate.benchmarks.reference import solve_zoh

__all__ = ["PARAMS", "current", "hamiltonian", "rhs", "simulate"]

#: Defaults: unsaturated inductance ``L0`` (H), saturation flux ``psi_sat`` (Wb), resistance
#: ``R`` (Ω), initial flux ``psi0`` (Wb).
PARAMS: dict[str, float] = {"L0": 0.1, "psi_sat": 0.5, "R": 0.5, "psi0": 0.0}


def _p(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("saturating_inductor", PARAMS, params, positive=("L0", "psi_sat"),
                      nonnegative=("R",))


def current(psi: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """``i = (ψ / L0) (1 + (ψ / psi_sat)²)`` (A)."""
    p = _p(params)
    psi = np.asarray(psi, dtype=float)
    return psi / p["L0"] * (1.0 + (psi / p["psi_sat"]) ** 2)


def hamiltonian(psi: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Magnetic energy ``ψ² / (2 L0) + ψ⁴ / (4 L0 psi_sat²)`` (J)."""
    p = _p(params)
    psi = np.asarray(psi, dtype=float)
    return psi**2 / (2 * p["L0"]) + psi**4 / (4 * p["L0"] * p["psi_sat"] ** 2)


def rhs(x: np.ndarray, V: float, params: dict[str, float] | None = None) -> list[float]:
    """``ψ' = V − R i(ψ)`` for ``x = (ψ,)``."""
    return _rhs(x, V, _p(params))


def _rhs(x: np.ndarray, V: float, p: dict[str, float]) -> list[float]:
    psi = float(x[0])
    return [float(V) - p["R"] * psi / p["L0"] * (1.0 + (psi / p["psi_sat"]) ** 2)]


def simulate(t: np.ndarray, V: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Flux linkage at ``t`` (N,) for the voltage ``V`` (N,) held on each sample period."""
    p = _p(params)
    return solve_zoh(lambda x, u: _rhs(x, u, p), t, V, [p["psi0"]])[:, 0]
