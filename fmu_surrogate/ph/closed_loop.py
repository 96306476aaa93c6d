"""Closing a power-conserving coupling of pH systems with feedthrough: the algebraic loop.

Write a pH system with feedthrough (pyMOR's convention) as one matrix acting on efforts and
inputs::

    [E ẋ; −y] = Γ [z; u],    Γ = 𝒥 − 𝒲,    𝒥 = [[J, G], [−Gᵀ, N]] skew,  𝒲 = [[R, P], [Pᵀ, S]] ⪰ 0.

Stack the subsystems and order the ports as coupled ones ``h`` (in the order of the coupling
matrix) then external ones ``b``; ``o = (z, b)``.  The coupling ``û + Ĉ ŷ = 0`` (``Ĉ`` skew)
with ``−ŷ = Γ_ho w_o + Γ_hh û`` gives the algebraic loop ``(I − Ĉ Γ_hh) û = Ĉ Γ_ho w_o``
(``Γ_hh = −D̂``: this is ``I + Ĉ D̂``), solvable iff that matrix is regular::

    û = K Γ_ho w_o,    K = Ĉ X,    X = (I − Γ_hh Ĉ)⁻¹.

With ``L`` the map ``w_o ↦ w = (z, û, ū)``, the closed loop is
``Γ_cl = Lᵀ Γ L + (X Γ_ho)ᵀ Ĉ (X Γ_ho)`` (substitute and use ``Xᵀ`` … ``Ĉ`` skew), hence

    𝒲_cl = Lᵀ 𝒲 L ⪰ 0   (a congruence),      𝒥_cl = Lᵀ 𝒥 L + (X Γ_ho)ᵀ Ĉ (X Γ_ho)  (skew),

both by construction: ``𝒲_cl`` from the upper triangle mirrored, ``𝒥_cl = M − Mᵀ`` from the
strict upper triangles of ``𝒥`` and ``Ĉ`` (as :func:`~fmu_surrogate.ph.interconnect` does
without feedthrough).  Without feedthrough this is ``J − B̂ Ĉ B̂ᵀ``, ``R``, ``B̄`` again.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import block_diag

from fmu_surrogate.ph.structure import StructureError
from fmu_surrogate.ph.system import PHDAE

Array = NDArray[np.float64]

#: I + Ĉ D̂ with a condition number above this is singular: the loop has no unique solution
LOOP_COND = 1e12

__all__ = ["close_loop"]


def _stacked(systems: Sequence[PHDAE], order: list[int]) -> tuple[Array, Array]:
    """``𝒥`` and ``𝒲`` of the stacked systems, ports permuted to ``order``."""
    J, R = block_diag(*[s.J for s in systems]), block_diag(*[s.R for s in systems])
    G = block_diag(*[s.B for s in systems])[:, order]
    P = block_diag(*[s.P for s in systems])[:, order]
    S = block_diag(*[s.S for s in systems])[np.ix_(order, order)]
    N = block_diag(*[s.N for s in systems])[np.ix_(order, order)]
    return np.block([[J, G], [-G.T, N]]), np.block([[R, P], [P.T, S]])


def close_loop(
    systems: Sequence[PHDAE], C: Array, hat: list[int], bar: list[int]
) -> tuple[Array, Array, Array, Array, Array, Array]:
    """The structure matrices of the coupled system with feedthrough (module docs).

    Parameters
    ----------
    systems : sequence of PHDAE
        The subsystems.
    C : ndarray, shape (k, k)
        The (checked) skew coupling matrix.
    hat, bar : list of int
        Global indices (ports of system 0 first, then system 1's, ...) of the coupled ports in
        the order of ``C`` and of the external ports in their order.

    Returns
    -------
    tuple of ndarray
        ``J, R, G, P, S, N`` of the coupled system (ports: ``bar``).

    Raises
    ------
    StructureError
        ``I + Ĉ D̂`` is singular: the algebraic loop through the feedthroughs has no unique
        solution.
    """
    n, k = sum(s.n_states for s in systems), len(hat)
    Jx, Wx = _stacked(systems, hat + bar)
    h = np.arange(n, n + k)
    o = np.concatenate([np.arange(n), np.arange(n + k, Jx.shape[0])]).astype(int)
    Gam = Jx - Wx
    loop = np.eye(k) - Gam[np.ix_(h, h)] @ C
    cond = np.linalg.cond(loop) if k else 1.0
    if not cond < LOOP_COND:
        raise StructureError(
            f"the coupling closes an algebraic loop through the feedthroughs D of the coupled "
            f"ports that has no unique solution: I + Ĉ D̂ is singular (condition number "
            f"{cond:.1e}). Couple other ports, change the gain, or remove the feedthrough of "
            f"one side (for two ports: 1 + k² D₁ D₂ must not vanish).")
    XG = np.linalg.solve(loop, Gam[np.ix_(h, o)]) if k else np.zeros((0, o.size))
    L = np.zeros((Jx.shape[0], o.size))
    L[o, np.arange(o.size)] = 1.0
    L[h] = C @ XG
    W = L.T @ Wx @ L
    W = np.triu(W) + np.triu(W, 1).T  # the upper triangle mirrored: exactly symmetric
    M = L.T @ np.triu(Jx, 1) @ L + XG.T @ np.triu(C, 1) @ XG
    Jc = M - M.T  # exactly skew
    return (Jc[:n, :n], W[:n, :n], Jc[:n, n:], W[:n, n:], W[n:, n:], Jc[n:, n:])
