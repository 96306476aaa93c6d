"""The saturating coil with eddy currents in its laminations: a Cauer ladder, voltage in,
current out.

A vendor's detailed model of the coil of :mod:`~fmu_surrogate.benchmarks.vendor.saturating_inductor`
(``L0``, ``psi_sat``, winding resistance ``R``, initial flux ``psi0``).  The lamination is cut
into ``N`` = 20 layers of equal thickness from its surface inwards (:data:`N_SECTIONS`): layer
``k`` carries the flux linkage ``ψ_k`` (a share ``1 / N`` of the flux when the field is uniform)
and its current follows the lumped law scaled to it, ``i_k = g(N ψ_k)`` with
``g(ψ) = (ψ / L0) (1 + (ψ / psi_sat)²)``; between layers ``k`` and ``k + 1`` the eddy currents
close through the resistance ``R_s``.  The first Cauer form of the lamination impedance —
series inductors (the layers), shunt resistors (the eddy paths)::

    ψ_1' = V − R i_1 − u_1,      ψ_k' = u_{k−1} − u_k,      u_k = R_s (i_k − i_{k+1})
    (k = 1 … N, u_N = 0),        i = i_1 (the winding current)

At low frequency no current flows in the shunts, every layer carries ``i`` and the flux linkage
``Σ ψ_k = N ψ_k`` obeys the lumped law; at high frequency the shunts screen the inner layers
(skin effect: the inductance falls to the outer layers').  ``H = Σ H_lumped(N ψ_k) / N`` and
``dH/dt = V i − R i² − Σ R_s (i_k − i_{k+1})² ≤ V i`` (passive).  The ladder's low-frequency
loss is that of a resistance ``R_core`` in parallel with the coil, ``R_s = S R_core`` with
``S = Σ_{j<N} (j / N)²`` (every shunt sees the rate of change of the flux inside it); the
default 1 kΩ adds to the lumped current ``ψ' / R_core``: ``ω L0 / R_core`` = 0.19 % at 3 Hz
(less as the coil saturates).  The ladder's own time constants are below 1e-4 s (stiff: the FMU
integrates with its own SUNDIALS CVODE, BDF, :mod:`fmu_surrogate.benchmarks.cvode`); the layer
fluxes stay internal, and the FMU has the lumped coil's variables (plus ``R_core``).
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import parameters
from fmu_surrogate.benchmarks.vendor import saturating_inductor as _lumped

__all__ = ["N_SECTIONS", "PARAMS", "current", "hamiltonian", "initial_state", "rhs",
           "shunt_resistance"]

#: Number of lamination layers (ladder sections), fixed at build time.
N_SECTIONS = 20
#: Defaults: the lumped coil's ``L0`` (H), ``psi_sat`` (Wb), ``R`` (Ω), ``psi0`` (Wb), and the
#: equivalent core-loss resistance ``R_core`` (Ω).
PARAMS: dict[str, float] = {**_lumped.PARAMS, "R_core": 1000.0}


def _p(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("saturating_inductor_detailed", PARAMS, params,
                      positive=("L0", "psi_sat", "R_core"), nonnegative=("R",))


def shunt_resistance(params: dict[str, float] | None = None) -> float:
    """``R_s = R_core Σ_{j=1}^{N−1} (j / N)²`` (Ω) of each eddy path."""
    n = N_SECTIONS
    return _p(params)["R_core"] * float(np.sum((np.arange(1, n) / n) ** 2))


def initial_state(params: dict[str, float] | None = None) -> np.ndarray:
    """``ψ_1 … ψ_N``: the initial flux ``psi0`` shared equally (no eddy current)."""
    return np.full(N_SECTIONS, _p(params)["psi0"] / N_SECTIONS)


def _currents(x: np.ndarray, p: dict[str, float]) -> np.ndarray:
    psi = N_SECTIONS * np.asarray(x, dtype=float)
    return psi / p["L0"] * (1.0 + (psi / p["psi_sat"]) ** 2)


def current(x: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Winding current ``i = i_1`` (A) for states ``x`` (..., N)."""
    x = np.asarray(x, dtype=float)
    return _currents(x[..., 0], _p(params))


def rhs(x: np.ndarray, V: float, params: dict[str, float] | None = None) -> np.ndarray:
    """``(ψ_1' … ψ_N')`` for the layer fluxes ``x`` (N,) and the terminal voltage ``V``."""
    p = _p(params)
    i = _currents(x, p)
    u = np.append(shunt_resistance(p) * (i[:-1] - i[1:]), 0.0)  # u_1 … u_N (u_N = 0)
    return np.concatenate([[float(V) - p["R"] * i[0]], u[:-1]]) - u  # u_{k−1} − u_k


def hamiltonian(x: np.ndarray, params: dict[str, float] | None = None) -> float:
    """Magnetic energy (J): ``Σ H_lumped(N ψ_k) / N``."""
    p = _p(params)
    psi = N_SECTIONS * np.asarray(x, dtype=float)
    lumped = {k: p[k] for k in _lumped.PARAMS}
    return float(np.sum(_lumped.hamiltonian(psi, lumped)) / N_SECTIONS)
