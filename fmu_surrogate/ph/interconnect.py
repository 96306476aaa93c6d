"""Power-conserving interconnection of pH systems (docs/design.md §2).

Subsystems ``i = 1..s`` split their inputs into coupled (hat) and external (bar) ones,
``u_i = (û_i, ū_i)``, ``B_i = (B̂_i, B̄_i)``.  The coupling law ``û + Ĉ ŷ = 0`` with a
skew-symmetric ``Ĉ`` over all coupled ports exchanges power without creating or destroying any
(``ûᵀŷ = −ŷᵀĈᵀŷ = 0``), and substituting ``û = −Ĉ B̂ᵀ z`` gives again a pH system::

    E = diag(E_i),  J = diag(J_i) − B̂ Ĉ B̂ᵀ,  R = diag(R_i),  B = diag(B̄_i),  H = Σ H_i

— a :class:`~fmu_surrogate.ph.LinearPH` when every part is linear, a
:class:`~fmu_surrogate.ph.NonlinearPH` when some part is one and the others are too or are
linear with ``E = I`` (the convex energies and power-law dissipations stacked: ``Q`` block
diagonal, each ridge and damper direction padded with zeros onto the coupled state, so
``R(x) = R + R_nl(z)`` keeps every part's law), else a :class:`~fmu_surrogate.ph.PHDAE` whose
effort (:class:`CompositeEffort`) stacks the parts'.
``J`` stays skew to round-off because ``B̂ Ĉ B̂ᵀ`` is skew when ``Ĉ`` is; a ``Ĉ`` that is not
skew is refused.  The standard special cases are helpers: :func:`feedback` (two ports joined by
a gyrator of gain k), :func:`series` (two ports driven by one input, outputs adding) and
:func:`terminate` (a port closed by a resistance ``r ⪰ 0``).

With feedthrough (``P, S, N`` of some part) the coupled outputs depend on the coupled inputs:
the loop ``(I + Ĉ D̂) û = …`` is solved and the result stays pH by construction
(:mod:`fmu_surrogate.ph.closed_loop`); a loop without a unique solution is refused.  A
NonlinearPH's nonlinear feedthrough ``S_nl(u)`` (a power-law damper with velocity in and force
out) couples exactly where its ports see no loop (:mod:`fmu_surrogate.ph.port_laws`): a term
coupled to ports without feedthrough (a mass's velocity ``bᵀz``) becomes a power-law dissipation
of the coupled state along ``b m_j``, a term on free ports stays ``S_nl`` of the coupled system's
ports; a term in a loop through feedthrough (a nonlinear algebraic equation) or reading both a
state and an external input is refused with the fix, co-simulation.  :func:`series` carries
``S_nl`` over to the merged ports, :func:`terminate` keeps the terms that read the other ports.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import block_diag

from fmu_surrogate.ph.closed_loop import close_loop
from fmu_surrogate.ph.dissipation import PowerDissipation
from fmu_surrogate.ph.efforts.convex import ConvexEffort
from fmu_surrogate.ph.nonlinear import NonlinearPH, finest_step
from fmu_surrogate.ph.port_laws import augmented, has_port_law, split_port_laws
from fmu_surrogate.ph.structure import StructureError, check_psd
from fmu_surrogate.ph.system import PHDAE, LinearPH

Array = NDArray[np.float64]

__all__ = ["CompositeEffort", "feedback", "interconnect", "series", "terminate"]


class CompositeEffort:
    """The effort of a coupled system: the parts' efforts on their blocks of the state.

    Parameters
    ----------
    parts : sequence of callable
        The subsystems' efforts (each ``(N, n_i) -> (N, n_i)``).
    sizes : sequence of int
        ``n_i`` per part.
    hamiltonians : sequence of callable or None
        The parts' Hamiltonians (``None`` if a part has none).
    """

    def __init__(self, parts: Sequence[Any], sizes: Sequence[int],
                 hamiltonians: Sequence[Any]) -> None:
        self.parts = list(parts)
        self.sizes = [int(k) for k in sizes]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(int)
        self.hamiltonians = list(hamiltonians)

    def _blocks(self, x: Array):
        a = np.atleast_2d(np.asarray(x, dtype=float))
        for i, part in enumerate(self.parts):
            yield i, part, a[:, self.offsets[i]:self.offsets[i + 1]]

    def __call__(self, x: Array) -> Array:
        """``z(x)``: (N, n) -> (N, n)."""
        return np.concatenate([np.asarray(p(xi), dtype=float).reshape(xi.shape)
                               for _, p, xi in self._blocks(x)], axis=1)

    def jacobian(self, x: Array) -> Array:
        """Block-diagonal ``∂z/∂x`` (N, n, n); parts without ``jacobian`` by central differences."""
        a = np.atleast_2d(np.asarray(x, dtype=float))
        n = self.offsets[-1]
        out = np.zeros((a.shape[0], n, n))
        for i, part, xi in self._blocks(a):
            lo, hi = self.offsets[i], self.offsets[i + 1]
            jac = getattr(part, "jacobian", None)
            if jac is not None:
                out[:, lo:hi, lo:hi] = np.asarray(jac(xi)).reshape(a.shape[0], hi - lo, hi - lo)
            else:
                out[:, lo:hi, lo:hi] = finite_difference_jacobian(part, xi)
        return out

    @property
    def has_hamiltonian(self) -> bool:
        """Whether every part has a Hamiltonian."""
        return all(h is not None for h in self.hamiltonians)

    def hamiltonian(self, x: Array) -> Array:
        """``H(x) = Σ H_i(x_i)``: (N, n) -> (N,)."""
        return np.sum([np.asarray(self.hamiltonians[i](xi), dtype=float).reshape(-1)
                       for i, _, xi in self._blocks(x)], axis=0)


def finite_difference_jacobian(f: Any, x: Array) -> Array:
    """Central-difference Jacobians ``∂f/∂x`` (N, n, n) of an effort ``f`` at the rows of ``x``."""
    n = x.shape[1]
    J = np.empty((x.shape[0], n, n))
    for k in range(n):
        h = 1e-6 * np.maximum(1.0, np.abs(x[:, k]))
        e = np.zeros_like(x)
        e[:, k] = h
        J[:, :, k] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h[:, None])
    return J


def _check_coupling(C: ArrayLike, k: int) -> Array:
    C = np.asarray(C, dtype=float)
    if C.shape != (k, k):
        raise StructureError(f"the coupling matrix must be {k}×{k} (one row and column per "
                             f"coupled port, in order), got shape {C.shape}.")
    if not np.all(np.isfinite(C)):
        raise StructureError("the coupling matrix contains NaN or Inf entries.")
    sym = float(np.linalg.norm(C + C.T))
    if sym > 1e-12 * max(1.0, float(np.linalg.norm(C))):
        raise StructureError(
            f"the coupling matrix Ĉ is not skew-symmetric: ‖Ĉ + Ĉᵀ‖_F = {sym:.3e}, so the "
            f"interconnection would create or destroy energy.  A power-conserving coupling "
            f"û + Ĉ ŷ = 0 needs Ĉ = −Ĉᵀ: use (Ĉ − Ĉᵀ)/2, or check the signs (u_a = −k y_b "
            f"pairs with u_b = +k y_a).")
    return C


def interconnect(
    systems: Sequence[PHDAE],
    coupling: ArrayLike,
    coupling_ports: Sequence[Sequence[int]],
    names: Sequence[str] | None = None,
) -> PHDAE:
    """Join pH systems through a skew-symmetric coupling of some of their ports.

    Parameters
    ----------
    systems : sequence of PHDAE or LinearPH
        The subsystems.
    coupling : array_like, shape (k, k)
        ``Ĉ`` with ``û + Ĉ ŷ = 0`` over all coupled ports, in the order: system 0's coupled
        ports as listed in ``coupling_ports[0]``, then system 1's, ...  Must be skew.
    coupling_ports : sequence of sequence of int
        ``coupling_ports[i]``: the input indices of system ``i`` that are coupled; its other
        inputs stay external (in their order, after those of system ``i − 1``).
    names : sequence of str, optional
        Subsystem names used as prefixes of the coupled system's port and state names
        (default ``s1, s2, …``): ``"s1.u2"``.

    Returns
    -------
    LinearPH or PHDAE
        The coupled system (``LinearPH`` when every part is linear, ``NonlinearPH`` when some
        part is one and the others have ``E = I``).

    Raises
    ------
    StructureError
        ``Ĉ`` not skew (the message shows ‖Ĉ + Ĉᵀ‖ and the fix), ports out of range, an
        algebraic loop without a unique solution, or a nonlinear feedthrough ``S_nl`` in a loop
        or reading a state and an external input at once.

    Examples
    --------
    Two masses on springs joined by a gyrator (u₁ = −y₂, u₂ = y₁):

    >>> import numpy as np
    >>> from fmu_surrogate.ph import LinearPH
    >>> osc = LinearPH([[0, 1], [-1, 0]], np.zeros((2, 2)), np.eye(2), [[0], [1]])
    >>> both = interconnect([osc, osc], [[0, 1], [-1, 0]], [[0], [0]], names=["a", "b"])
    >>> both.n_states, both.n_inputs, bool(np.allclose(both.J, -both.J.T))
    (4, 0, True)
    """
    systems = list(systems)
    if not systems:
        raise StructureError("interconnect needs at least one system.")
    if len(coupling_ports) != len(systems):
        raise StructureError(f"coupling_ports must list the coupled inputs of each of the "
                             f"{len(systems)} systems, got {len(coupling_ports)} entries.")
    names = list(names) if names is not None else [f"s{i + 1}" for i in range(len(systems))]
    if len(names) != len(systems) or len(set(names)) != len(names):
        raise StructureError(f"names must give {len(systems)} distinct subsystem names, got "
                             f"{names}.")
    hats, bars, ext_in, ext_out, states = [], [], [], [], []
    hat_idx, bar_idx, off = [], [], 0  # global port indices (for the feedthrough case)
    for i, (sys_i, ports) in enumerate(zip(systems, coupling_ports)):
        m = sys_i.n_inputs
        ports = [int(p) for p in ports]
        bad = [p for p in ports if not 0 <= p < m] + [p for p in set(ports) if ports.count(p) > 1]
        if bad:
            raise StructureError(f"coupling_ports[{i}] = {ports}: system {names[i]!r} has inputs "
                                 f"0 … {m - 1} and each may be coupled once.")
        rest = [p for p in range(m) if p not in ports]
        hat_idx += [off + p for p in ports]
        bar_idx += [off + p for p in rest]
        off += m
        hats.append(sys_i.B[:, ports])
        bars.append(sys_i.B[:, rest])
        ext_in += [f"{names[i]}.{sys_i.input_names[p]}" for p in rest]
        ext_out += [f"{names[i]}.{sys_i.output_names[p]}" for p in rest]
        states += [f"{names[i]}.{s}" for s in sys_i.state_names]
    k = sum(h.shape[1] for h in hats)
    C = _check_coupling(coupling, k)
    kw = {"input_names": ext_in, "output_names": ext_out, "state_names": states}
    if any(has_port_law(s) for s in systems):
        return _with_port_laws(systems, C, coupling_ports, names, kw)
    if any(s.has_feedthrough for s in systems):
        J, R, G, P, S, N = close_loop(systems, C, hat_idx, bar_idx)
        return _build(systems, J, R, G, {"P": P, "S": S, "N": N, **kw})
    Bhat = block_diag(*hats) if k else np.zeros((sum(s.n_states for s in systems), 0))
    # B̂ Ĉ B̂ᵀ = M − Mᵀ with M = B̂ triu(Ĉ) B̂ᵀ: skew in floating point too, by construction
    M = Bhat @ np.triu(C, 1) @ Bhat.T
    J = block_diag(*[s.J for s in systems]) - (M - M.T)
    R = block_diag(*[s.R for s in systems])
    B = block_diag(*bars) if ext_in else np.zeros((J.shape[0], 0))
    B = B.reshape(J.shape[0], len(ext_in))
    return _build(systems, J, R, B, kw)


def _build(systems: list[PHDAE], J: Array, R: Array, B: Array, kw: dict[str, Any]) -> PHDAE:
    """The coupled system from its structure matrices: linear if every part is."""
    E = block_diag(*[s.E for s in systems])
    if any(isinstance(s, NonlinearPH) for s in systems):
        return NonlinearPH(J, R, B, *_stacked_convex(systems), max_step=finest_step(systems),
                           **kw)
    if all(isinstance(s, LinearPH) for s in systems):
        return LinearPH(J, R, block_diag(*[s.Q for s in systems]), B, E=E, **kw)
    effort = CompositeEffort([s.effort_function for s in systems],
                             [s.n_states for s in systems],
                             [s._hamiltonian for s in systems])
    return PHDAE(E, J, R, B, effort=effort,
                 hamiltonian=effort.hamiltonian if effort.has_hamiltonian else None, **kw)


def _with_port_laws(systems: list[PHDAE], C: Array, coupling_ports: Sequence[Sequence[int]],
                    names: list[str], kw: dict[str, Any]) -> NonlinearPH:
    """The coupled system when some part has a nonlinear feedthrough ``S_nl(u)``: its terms
    as resistors on extra ports of the linear part, closed on the coupled system
    (:mod:`fmu_surrogate.ph.port_laws`)."""
    aug = [augmented(s) for s in systems]
    hat_idx, bar_idx, rho_idx, off = [], [], [], 0
    for s, a, ports in zip(systems, aug, coupling_ports):
        ports = [int(p) for p in ports]
        hat_idx += [off + p for p in ports]
        bar_idx += [off + p for p in range(s.n_inputs) if p not in ports]
        rho_idx += list(range(off + s.n_inputs, off + a.n_inputs))
        off += a.n_inputs
    J, R, G, P, S, N = close_loop(aug, C, hat_idx, bar_idx + rho_idx)
    state, port = split_port_laws(systems, names, len(bar_idx), G, P, S, N)
    e = len(bar_idx)
    effort, diss = _stacked_convex(systems)
    if state.n_terms:
        diss = PowerDissipation.joined([diss, state], diss.n_states)
    return NonlinearPH(J, R, G[:, :e], effort, diss, port_dissipation=port, P=P[:, :e],
                       S=S[:e, :e], N=N[:e, :e], max_step=finest_step(systems), **kw)


def _stacked_convex(systems: list[PHDAE]) -> tuple[ConvexEffort, PowerDissipation]:
    """The convex energy and the power-law dissipation of NonlinearPH (and linear, ``E = I``)
    parts on the coupled state: ``Q`` block diagonal, directions padded with zeros."""
    n = sum(s.n_states for s in systems)
    Qs, kinds, a, c, W, diss_parts = [], [], [], [], [], []
    off = 0
    for s in systems:
        k = s.n_states
        if isinstance(s, NonlinearPH):
            eff, diss = s.effort_function, s.dissipation
        elif isinstance(s, LinearPH) and np.array_equal(s.E, np.eye(k)) \
                and np.array_equal(s.Q, s.Q.T):
            eff, diss = ConvexEffort(s.Q), PowerDissipation.empty(k)
        else:
            raise StructureError(
                f"a NonlinearPH couples with NonlinearPH parts and linear ones with E = I and a "
                f"symmetric Q only, not with a {type(s).__name__} of that form; simulate the "
                f"parts in co-simulation (fmu_surrogate.couple) instead.")
        Qs.append(eff.Q)
        kinds += eff.kinds
        a.append(eff.weights)
        c.append(eff.shifts)  # the ridges' preloads
        W.append(np.pad(eff.directions, ((0, 0), (off, n - off - k))))
        diss_parts.append(diss.padded(off, n))
        off += k
    effort = ConvexEffort(block_diag(*Qs), kinds, np.concatenate(a), np.vstack(W),
                          np.concatenate(c))
    return effort, PowerDissipation.joined(diss_parts, n)


def feedback(a: PHDAE, b: PHDAE, port_a: int = 0, port_b: int = 0, gain: float = 1.0,
             names: Sequence[str] = ("a", "b")) -> PHDAE:
    """Negative feedback through a gyrator of gain ``k``: ``u_a = −k y_b``, ``u_b = k y_a``.

    Parameters
    ----------
    a, b : PHDAE or LinearPH
        The two systems.
    port_a, port_b : int
        The joined input of each.
    gain : float
        ``k`` (any real number; the coupling is power-conserving for every ``k``).
    names : (str, str)
        Prefixes of the coupled system's names.

    Returns
    -------
    LinearPH or PHDAE
        The coupled system; the other ports stay external.
    """
    C = np.array([[0.0, gain], [-gain, 0.0]])
    return interconnect([a, b], C, [[port_a], [port_b]], names=names)


def series(a: PHDAE, b: PHDAE, port_a: int = 0, port_b: int = 0,
           names: Sequence[str] = ("a", "b")) -> PHDAE:
    """Two ports driven by one input whose outputs add: ``u_a = u_b = u``, ``y = y_a + y_b``.

    Electrical one-ports in series (same current, voltages add) or mechanical ones at one
    velocity (forces add).  Power is conserved: ``y u = y_a u_a + y_b u_b``.  The merged port
    comes first, then the other ports of ``a`` and of ``b``.

    Parameters
    ----------
    a, b : PHDAE or LinearPH
        The two systems.
    port_a, port_b : int
        The merged input of each.
    names : (str, str)
        Prefixes of the coupled system's names.

    Returns
    -------
    LinearPH or PHDAE
        The combined system.
    """
    both = interconnect([a, b], np.zeros((0, 0)), [[], []], names=names)
    ma = a.n_inputs
    merged = both.B[:, port_a] + both.B[:, ma + port_b]
    keep = [j for j in range(both.n_inputs) if j not in (port_a, ma + port_b)]
    B = np.column_stack([merged] + [both.B[:, j] for j in keep])
    ins = [f"{names[0]}+{names[1]}.{a.input_names[port_a]}"] + [both.input_names[j] for j in keep]
    outs = [f"{names[0]}+{names[1]}.{a.output_names[port_a]}"] + [both.output_names[j]
                                                                  for j in keep]
    kw: dict[str, Any] = {"input_names": ins, "output_names": outs,
                          "state_names": both.state_names}
    if both.has_feedthrough:  # u_old = T u_new, y_new = Tᵀ y_old: a congruence of the ports
        T = np.zeros((both.n_inputs, B.shape[1]))
        T[[port_a, ma + port_b], 0] = 1.0
        T[keep, np.arange(1, B.shape[1])] = 1.0
        S = T.T @ both.S @ T
        M = T.T @ np.triu(both.N, 1) @ T
        kw.update(P=both.P @ T, S=np.triu(S) + np.triu(S, 1).T, N=M - M.T)
        if has_port_law(both):  # S_nl of the merged ports: its directions m_jᵀ T
            law = both.port_dissipation
            kw["port_dissipation"] = PowerDissipation(law.directions @ T, law.gains,
                                                      law.exponents, law.smoothing,
                                                      law.asymmetry)
    return _same_kind(both, both.J, both.R, B, kw)


def terminate(system: PHDAE, port: int | Sequence[int], resistance: ArrayLike) -> PHDAE:
    """Close ports with a resistance ``r ⪰ 0``: ``u_p = −r y_p`` (energy only leaves).

    Parameters
    ----------
    system : PHDAE or LinearPH
        The system.
    port : int or sequence of int
        The closed input(s).
    resistance : float or array_like, shape (k, k)
        ``r`` (a symmetric PSD matrix for several ports).

    Returns
    -------
    LinearPH or PHDAE
        The system with ``R + B_p r B_pᵀ`` and the remaining ports.

    Raises
    ------
    StructureError
        ``r`` not symmetric positive semi-definite, or a closed port that a term of a nonlinear
        feedthrough ``S_nl`` reads (``r`` closes a nonlinear algebraic loop on it).

    Notes
    -----
    With a feedthrough ``D`` the closed port's output depends on its input, and the resistance
    is coupled as a static pH system ``y = r u`` through the loop of
    :mod:`fmu_surrogate.ph.closed_loop` (``I + r D_pp`` is always regular: both are passive).
    A NonlinearPH keeps the terms of its ``S_nl`` that read the other ports only.
    """
    ports = [port] if np.ndim(port) == 0 else list(port)
    ports = [int(p) for p in ports]
    r = np.atleast_2d(np.asarray(resistance, dtype=float))
    if r.shape == (1, 1) and len(ports) > 1:
        r = r[0, 0] * np.eye(len(ports))
    r = check_psd(r, "resistance")
    if r.shape != (len(ports), len(ports)):
        raise StructureError(f"resistance must be {len(ports)}×{len(ports)} for ports {ports}, "
                             f"got {r.shape}.")
    keep = [j for j in range(system.n_inputs) if j not in ports]
    kw: dict[str, Any] = {"input_names": [system.input_names[j] for j in keep],
                          "output_names": [system.output_names[j] for j in keep],
                          "state_names": system.state_names}
    if system.has_feedthrough:
        k, e = len(ports), np.eye(len(ports))
        resistor = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)),
                            np.zeros((0, k)), S=r)
        C = np.block([[np.zeros((k, k)), e], [-e, np.zeros((k, k))]])  # u_p = −y_r, u_r = y_p
        if has_port_law(system):  # its terms closed as in interconnect (loops refused)
            c = interconnect([system, resistor], C, [ports, list(range(k))])
            return NonlinearPH(c.J, c.R, c.B, c.effort_function, c.dissipation,
                               port_dissipation=c.port_dissipation, P=c.P, S=c.S, N=c.N,
                               max_step=system.max_step, **kw)
        m = system.n_inputs
        J, R, G, P, S, N = close_loop([system, resistor], C, ports + list(range(m, m + k)), keep)
        return _same_kind(system, J, R, G, {"P": P, "S": S, "N": N, **kw})
    Bp = system.B[:, ports]
    S = Bp @ r @ Bp.T
    S = np.triu(S) + np.triu(S, 1).T  # the upper triangle mirrored: exactly symmetric
    return _same_kind(system, system.J, system.R + S, system.B[:, keep], kw)


def _same_kind(system: PHDAE, J: Array, R: Array, B: Array, kw: dict[str, Any]) -> PHDAE:
    """A system like ``system`` (same E, Q or effort) with new structure matrices and ports
    (``kw`` carries a NonlinearPH's new ``port_dissipation``)."""
    if isinstance(system, LinearPH):
        return LinearPH(J, R, system.Q, B, E=system.E, **kw)
    if isinstance(system, NonlinearPH):
        return NonlinearPH(J, R, B, system.effort_function, system.dissipation,
                           max_step=system.max_step, **kw)
    return PHDAE(system.E, J, R, B, effort=system.effort_function,
                 hamiltonian=system._hamiltonian, **kw)
