"""Nonlinear port-Hamiltonian systems with a latent state, passive by construction.

    ẋ = (J − R(x)) ∇H(x) + (G − P) u,      y = (G + P)ᵀ ∇H(x) + (S − N) u + S_nl(u) u
    R(x) = R₀ + R_nl(z(x)),   J = −Jᵀ,  N = −Nᵀ,  W₀ = [[R₀, P], [Pᵀ, S]] ⪰ 0

the feedthrough as in :class:`~fmu_surrogate.ph.LinearPH` (pyMOR's convention).  The model of a
component that shows only its ports: the state is latent (whatever coordinates fit the data),
the energy ``H`` a :class:`~fmu_surrogate.ph.efforts.convex.ConvexEffort` (a quadratic form
plus hardening/softening ridge terms), the dissipation's state-dependent part a
:class:`~fmu_surrogate.ph.dissipation.PowerDissipation` (power-law dampers and resistors), and
optionally a nonlinear dissipative feedthrough ``S_nl(u)``, a ``PowerDissipation`` of the port
inputs: the static law of a component without state of its own (a power-law damper with velocity
in and force out is ``y = S_nl(v) v``, ``S_nl(v) = β (v² + δ²)^(p/2)``), which no state-dependent
term can express without a fast, stiff state.

Structure by construction.  ``J`` and ``N`` are checked skew and ``W₀`` PSD exactly as for a
linear system; ``H ≥ 0`` holds for every admissible parameter value of the effort (``Q ≻ 0``,
ridge weights ``≥ 0``) and ``R_nl(z) ⪰ 0`` for every one of the dissipation (gains ``≥ 0``)
at every state, and ``S_nl(u) ⪰ 0`` at every input likewise, so
``W(x, u) = W₀ + diag(R_nl(z), S_nl(u)) ⪰ 0`` and::

    dH/dt = yᵀu − [z; u]ᵀ W(x, u) [z; u] ≤ yᵀu

whatever the fitted numbers.  :func:`~fmu_surrogate.ph.simulate` keeps this discretely: the AVF
step ``x_{k+1} − x_k = h [(J − R₀) z̄ − R_nl(z̄) z̄ + (G − P) ū]`` (``z̄`` the AVF mean effort)
gives ``H(x_{k+1}) − H(x_k) = h (ȳᵀū − [z̄; ū]ᵀ W(z̄) [z̄; ū])`` exactly — the state-dependent
part of the dissipation evaluated at the step's mean effort (and ``S_nl`` at the step's mean
input, which enters the outputs only).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from fmu_surrogate.ph.dissipation import PowerDissipation
from fmu_surrogate.ph.efforts.convex import ConvexEffort
from fmu_surrogate.ph.structure import StructureError
from fmu_surrogate.ph.system import PHDAE, Array, as_state_rows

__all__ = ["NonlinearPH", "finest_step"]


class NonlinearPH(PHDAE):
    """``ẋ = (J − R₀ − R_nl(z)) z + (G − P) u``, ``y = (G + P)ᵀ z + (S − N) u``, ``z = ∇H(x)``.

    Parameters
    ----------
    J, R : array_like, shape (n, n)
        Skew structure matrix and the constant part ``R₀`` of the dissipation (PSD).
    B : array_like, shape (n, m)
        Port matrix ``G``.
    effort : ConvexEffort
        The energy ``H`` and its gradient ``z``.
    dissipation : PowerDissipation, optional
        The state-dependent part ``R_nl(z)`` (none if not given).
    port_dissipation : PowerDissipation, optional
        The nonlinear dissipative feedthrough ``S_nl(u)`` on the m port inputs (none if not
        given).
    rtol : float
        Relative tolerance of the structure validation.
    P : array_like, shape (n, m), optional
        Dissipative coupling of states and ports (zero if not given).
    S, N : array_like, shape (m, m), optional
        Symmetric and skew parts of the feedthrough ``D = S − N`` (zero if not given).
    input_names, output_names, state_names : sequence of str, optional
        Names of the ports and states.
    max_step : float, optional
        The longest step [s] of the structure-preserving scheme that resolves the model's
        dynamics: :func:`~fmu_surrogate.ph.simulate` and exported FMUs divide a longer step into
        equal sub-steps (``None``: one step per grid interval or communication step).

    Raises
    ------
    StructureError
        As :class:`~fmu_surrogate.ph.PHDAE`, or an effort that is not a ``ConvexEffort``, or
        parts of another state dimension.
    """

    def __init__(
        self,
        J: ArrayLike,
        R: ArrayLike,
        B: ArrayLike,
        effort: ConvexEffort,
        dissipation: PowerDissipation | None = None,
        rtol: float = 1e-10,
        *,
        port_dissipation: PowerDissipation | None = None,
        P: ArrayLike | None = None,
        S: ArrayLike | None = None,
        N: ArrayLike | None = None,
        input_names: Sequence[str] | None = None,
        output_names: Sequence[str] | None = None,
        state_names: Sequence[str] | None = None,
        max_step: float | None = None,
    ) -> None:
        self.max_step = _checked_step(max_step)
        if not isinstance(effort, ConvexEffort):
            raise StructureError(f"NonlinearPH needs a ConvexEffort (its H is bounded below by "
                                 f"construction), got a {type(effort).__name__}.")
        n = effort.n_states
        diss = PowerDissipation.empty(n) if dissipation is None else dissipation
        if not isinstance(diss, PowerDissipation):
            raise StructureError(f"dissipation must be a PowerDissipation, got a "
                                 f"{type(diss).__name__}.")
        if diss.n_states != n:
            raise StructureError(f"the dissipation acts on {diss.n_states} states, the effort on "
                                 f"{n}; they must describe the same state.")
        super().__init__(np.eye(n), J, R, B, effort=effort, hamiltonian=effort.hamiltonian,
                         rtol=rtol, P=P, S=S, N=N, input_names=input_names,
                         output_names=output_names, state_names=state_names)
        if self.n_states != n:
            raise StructureError(f"J is {self.n_states}×{self.n_states} but the effort has {n} "
                                 f"states.")
        self.dissipation = diss
        m = self.n_inputs
        pdiss = PowerDissipation.empty(m) if port_dissipation is None else port_dissipation
        if not isinstance(pdiss, PowerDissipation) or pdiss.n_states != m:
            raise StructureError(f"port_dissipation must be a PowerDissipation on the {m} port "
                                 f"inputs, got {pdiss!r}.")
        self.port_dissipation = pdiss

    def with_max_step(self, max_step: float | None) -> NonlinearPH:
        """This system with another :attr:`max_step` (the same matrices, energy and laws).

        Parameters
        ----------
        max_step : float or None
            The longest step of the scheme [s] (``None``: one step per grid interval).
        """
        out = copy.copy(self)
        out.max_step = _checked_step(max_step)
        return out

    @property
    def has_feedthrough(self) -> bool:
        """Whether any of ``P, S, N`` is nonzero or there is a nonlinear feedthrough."""
        return bool(super().has_feedthrough or self.port_dissipation.n_terms)

    def output(self, x: ArrayLike, u: ArrayLike | None = None) -> Array:
        """Port output ``y = (G + P)ᵀ z(x) + (S − N) u + S_nl(u) u``; rows as ``x``.

        Parameters
        ----------
        x : array_like, shape (N, n) or (n,)
            States.
        u : array_like, shape (N, m) or (m,), optional
            Inputs; needed only when the system has a feedthrough.
        """
        if u is None and self.port_dissipation.n_terms:
            raise StructureError("this system has a nonlinear feedthrough S_nl(u): pass the "
                                 "inputs u to output(x, u).")
        return super().output(x, u)

    def output_from_effort(self, z: ArrayLike, u: ArrayLike) -> Array:
        """``(G + P)ᵀ z + (S − N) u + S_nl(u) u`` for given efforts; rows as ``z``.

        Parameters
        ----------
        z : array_like, shape (N, n) or (n,)
            Efforts.
        u : array_like, shape (N, m) or (m,)
            Inputs.
        """
        y = super().output_from_effort(z, u)
        if not self.port_dissipation.n_terms:
            return y
        uu = np.asarray(u, dtype=float).reshape(y.shape)
        return y + self.port_dissipation.force(np.atleast_2d(uu)).reshape(y.shape)

    @property
    def nonlinear_dissipation(self) -> PowerDissipation | None:
        """The state-dependent dissipation the integrator adds (``None`` when it has no term)."""
        return self.dissipation if self.dissipation.n_terms else None

    @property
    def nonlinear_feedthrough(self) -> PowerDissipation | None:
        """The nonlinear feedthrough ``S_nl(u)`` the outputs add (``None`` when it has no term)."""
        return self.port_dissipation if self.port_dissipation.n_terms else None

    def dissipation_matrix(self, x: ArrayLike) -> Array:
        """``R(x) = R₀ + R_nl(z(x))`` ((N, n, n), or (n, n) for one point).

        Parameters
        ----------
        x : array_like, shape (N, n) or (n,)
            States.
        """
        a, single = as_state_rows(x, self.n_states, "x")
        Rx = self.R[None] + self.dissipation.matrix(self.effort(a))
        return Rx[0] if single else Rx

    def dissipation_rate(self, z: ArrayLike, u: ArrayLike) -> Array:
        """``[z; u]ᵀ W(z, u) [z; u] = zᵀR₀z + 2 zᵀPu + uᵀSu + zᵀR_nl(z)z + uᵀS_nl(u)u`` per
        row (≥ 0).

        Parameters
        ----------
        z : array_like, shape (N, n) or (n,)
            Efforts.
        u : array_like, shape (N, m) or (m,)
            Inputs.
        """
        zz = np.asarray(z, dtype=float)
        base = super().dissipation_rate(zz, u)
        extra = self.dissipation.rate(np.atleast_2d(zz))
        uu = np.asarray(u, dtype=float).reshape(*zz.shape[:-1], self.n_inputs)
        extra = extra + self.port_dissipation.rate(np.atleast_2d(uu))
        return base + (extra[0] if zz.ndim == 1 else extra)

    def flow(self, x: ArrayLike, u: ArrayLike) -> Array:
        """Right-hand side ``(J − R(x)) z(x) + (G − P) u``; ``(N, n), (N, m) -> (N, n)``.

        Parameters
        ----------
        x : array_like, shape (N, n) or (n,)
            States.
        u : array_like, shape (N, m) or (m,)
            Inputs.
        """
        f = super().flow(x, u)
        z = np.atleast_2d(self.effort(x))
        extra = self.dissipation.force(z)
        return f - (extra[0] if np.ndim(f) == 1 else extra)


def _checked_step(max_step: float | None) -> float | None:
    if max_step is not None and not (np.isfinite(max_step) and max_step > 0):
        raise StructureError(f"max_step must be a positive number of seconds or None, got "
                             f"{max_step!r}.")
    return None if max_step is None else float(max_step)


def finest_step(systems: Sequence[PHDAE]) -> float | None:
    """The smallest :attr:`NonlinearPH.max_step` among ``systems`` (``None`` when no part has
    one): what a system built from them (coupled, closed, augmented) must step at."""
    steps = [s.max_step for s in systems if getattr(s, "max_step", None) is not None]
    return min(steps) if steps else None
