"""Coupling a nonlinear feedthrough ``S_nl(u)``: its terms become a state or a port dissipation.

A :class:`~fmu_surrogate.ph.NonlinearPH` with a ``port_dissipation`` adds to its outputs
``Σ_j m_j φ_j(m_jᵀu)``, ``φ_j(s) = β_j (s² + δ_j²)^(p_j/2) s`` (a static power-law resistor per
term).  Write it as the linear system with ``K`` more ports ``ρ`` joined by a lossless
transformer to the resistors (:func:`augmented`)::

    y = … + Mᵀ a,     b = −M u          (N gains the skew block [[0, −Mᵀ], [M, 0]]),

every resistor closing its port: ``a_j = φ_j(−b_j) = −φ_j(b_j)`` (``φ_j`` is odd).  The linear
part is interconnected as any other (:mod:`fmu_surrogate.ph.closed_loop`) with the ``ρ`` ports
left open; the coupled system reads there ``y_ρ = G_ρᵀ z + D_ρρ u_ρ + D_ρe u_e``
(:func:`split_port_laws`; ``g_j = −G_ρj`` and ``d_j = −D_ρj,e`` below).  Where the resistors' inputs are fixed without a loop
(``D_ρρ = 0``, hence ``S_ρ· = 0`` and ``P_ρ = 0`` since ``W ⪰ 0``) a term is exactly

* a **state dissipation** when ``−y_ρj = m_jᵀu = g_jᵀ z`` (the port is coupled to ports without
  feedthrough, ``g_j`` the coupled input matrix applied to ``m_j``): its force enters the state
  equation as ``(G_ρ − P_ρ) a = −Σ_j g_j φ_j(g_jᵀ z)``, a
  :class:`~fmu_surrogate.ph.PowerDissipation` with directions ``g_j`` and the term's gain,
  exponent, smoothing and asymmetry, so ``R(x) ⪰ 0`` by construction;
* a **port dissipation** when ``−y_ρj = m_jᵀu = d_jᵀ u_e`` (the port is free): its force enters
  the outputs as ``D_eρ a = Σ_j d_j φ_j(d_jᵀ u_e)``, ``S_nl`` of the coupled system with
  directions ``d_j``.

A term that reads both (a state and an external input: a law of ``g_jᵀ z + d_jᵀ u_e``) or that
closes a loop (``D_ρρ ≠ 0``: a nonlinear algebraic equation at every instant) has no
``NonlinearPH`` form and is refused with the fix: co-simulate the parts
(:mod:`fmu_surrogate.couple`).  So is an affine input (``u = s Gᵀz + c``: the ``PortMap``
constant of a drop-in surrogate), which is an external input here: ``PowerDissipation`` has no
offset.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.ph.dissipation import PowerDissipation
from fmu_surrogate.ph.nonlinear import NonlinearPH
from fmu_surrogate.ph.structure import StructureError
from fmu_surrogate.ph.system import PHDAE

Array = NDArray[np.float64]

#: a block of the closed loop smaller than this times its largest entry is zero (round-off of
#: the loop's solve; the exact value is zero by the structure)
ZERO = 1e-12

__all__ = ["augmented", "has_port_law", "split_port_laws"]


def has_port_law(system: PHDAE) -> bool:
    """Whether ``system`` has a nonlinear feedthrough ``S_nl(u)`` (a NonlinearPH's).

    Parameters
    ----------
    system : PHDAE
        Any pH system.
    """
    pd = getattr(system, "port_dissipation", None)
    return pd is not None and pd.n_terms > 0


def augmented(system: PHDAE) -> PHDAE:
    """``system`` with its nonlinear feedthrough as ``K`` more open ports (module docs).

    Parameters
    ----------
    system : PHDAE
        Any pH system; one without ``S_nl`` comes back as it is.

    Returns
    -------
    PHDAE
        A NonlinearPH without ``S_nl``, ports ``(u, ρ)``, ``N`` with the block
        ``[[0, −Mᵀ], [M, 0]]`` (skew, so the transformer is lossless).
    """
    if not has_port_law(system):
        return system
    law = system.port_dissipation
    n, m, k = system.n_states, system.n_inputs, law.n_terms
    M = law.directions
    N = np.zeros((m + k, m + k))
    N[:m, :m], N[:m, m:], N[m:, :m] = system.N, -M.T, M
    S = np.zeros((m + k, m + k))
    S[:m, :m] = system.S
    return NonlinearPH(system.J, system.R, np.hstack([system.B, np.zeros((n, k))]),
                       system.effort_function, system.dissipation,
                       P=np.hstack([system.P, np.zeros((n, k))]), S=S, N=N,
                       max_step=system.max_step)


def split_port_laws(systems: Sequence[PHDAE], names: Sequence[str], n_ext: int, G: Array,
                    P: Array, S: Array, N: Array
                    ) -> tuple[PowerDissipation, PowerDissipation]:
    """The resistors of the ``S_nl`` terms closed on the coupled system (module docs).

    Parameters
    ----------
    systems : sequence of PHDAE
        The subsystems (not augmented).
    names : sequence of str
        Their names (for the messages).
    n_ext : int
        Number of external ports; the closed loop's ports are those, then one ``ρ`` port per
        ``S_nl`` term in the order of the systems and of their terms.
    G, P, S, N : ndarray
        The closed loop of the augmented systems (:func:`~fmu_surrogate.ph.closed_loop.close_loop`).

    Returns
    -------
    state, port : PowerDissipation
        The terms that became a dissipation on the coupled state (``n`` columns) and those that
        stay a nonlinear feedthrough on the external ports (``n_ext`` columns).

    Raises
    ------
    StructureError
        A term in a loop through feedthrough, or reading both a state and an external input.
    """
    e, r = np.arange(n_ext), np.arange(n_ext, G.shape[1])
    D = S - N
    scale = max(float(np.abs(a).max()) if a.size else 0.0 for a in (G, P, S, N)) or 1.0
    tol = ZERO * scale
    owner = [(i, s.port_dissipation) for i, s in enumerate(systems) if has_port_law(s)]
    rows_state, rows_port, params_state, params_port = [], [], [], []
    j = 0
    for i, law in owner:
        for t in range(law.n_terms):
            rho = r[j]
            j += 1
            loop = max(np.abs(D[rho, r]).max(), np.abs(S[rho]).max(),
                       np.abs(P[:, rho]).max(initial=0.0))
            if loop > tol:
                raise StructureError(
                    f"the nonlinear feedthrough S_nl of {names[i]!r} (term {t + 1}) is coupled to "
                    f"ports whose outputs depend on their inputs: the coupled system would have to "
                    f"solve a nonlinear algebraic equation at every instant, which a NonlinearPH "
                    f"cannot hold.  Couple it to ports without feedthrough (a mass's velocity, a "
                    f"capacitor's voltage), or simulate the parts in co-simulation "
                    f"(fmu_surrogate.couple) instead.")
            g, d = -G[:, rho], -D[rho, e]  # −y_ρj = m_jᵀu: the part's own argument s_j
            g, d = np.where(np.abs(g) > tol, g, 0.0), np.where(np.abs(d) > tol, d, 0.0)
            on_state, on_port = bool(g.any()), bool(d.any())
            if on_state and on_port:
                raise StructureError(
                    f"the nonlinear feedthrough S_nl of {names[i]!r} (term {t + 1}) would read a "
                    f"coupled state and an external input at once (it spans a coupled and a free "
                    f"port, or its partner port passes an input or a constant source through to "
                    f"its output): its law of a sum of both is no dissipation of the state nor of "
                    f"the ports.  Couple it to ports without feedthrough from external inputs, or "
                    f"simulate the parts in co-simulation (fmu_surrogate.couple) instead.")
            # the argument keeps its sign (s_j itself), so the asymmetry carries over as is
            row = (law.gains[t], law.exponents[t], law.smoothing[t], law.asymmetry[t])
            if on_state:
                rows_state.append(g)
                params_state.append(row)
            elif on_port:
                rows_port.append(d)
                params_port.append(row)
            # neither: its ports are held at zero (s_j ≡ 0), so its force is zero too
    return _law(rows_state, params_state, G.shape[0]), _law(rows_port, params_port, n_ext)


def _law(rows: list[Array], params: list[tuple], width: int) -> PowerDissipation:
    if not rows:
        return PowerDissipation.empty(width)
    b, p, d, a = (np.array(v, dtype=float) for v in zip(*params))
    return PowerDissipation(np.vstack(rows), b, p, d, a)
