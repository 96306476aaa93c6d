"""Port-Hamiltonian DAE systems with constant structure matrices.

    E ẋ = (J − R) z(x) + (G − P) u,     y = (G + P)ᵀ z(x) + (S − N) u,     Eᵀ z(x) = ∇H(x)
    J = −Jᵀ,  N = −Nᵀ,  W = [[R, P], [Pᵀ, S]] ⪰ 0

(pyMOR's ``PHLTIModel`` convention; ``G`` is the argument ``B``, the feedthrough ``P, S, N`` is
zero unless given), so that ``dH/dt = yᵀu − [z; u]ᵀ W [z; u] ≤ yᵀu``.

Shapes used throughout: states ``x`` are ``(N, n)`` (one row per time point), inputs ``u`` are
``(N, m)``, efforts ``z`` are ``(N, n)``, outputs ``y`` are ``(N, m)``.  A single point may be
passed as a 1-D array of length ``n`` and comes back 1-D.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.ph.efforts.linear import LinearEffort
from fmu_surrogate.ph.structure import (
    StructureError,
    check_feedthrough,
    check_psd,
    check_skew,
    check_spd,
    psd_violation,
    skew_violation,
    symmetry_violation,
)

Array = NDArray[np.float64]


class Effort(Protocol):
    """An effort function ``z(x)``: maps ``(N, n)`` states to ``(N, n)`` efforts."""

    def __call__(self, x: Array) -> Array: ...


@dataclass(frozen=True)
class PowerBalance:
    """Energy balance of a trajectory, ``H(t_N) − H(t_0) + ∫ [z; u]ᵀW[z; u] dt − ∫ yᵀu dt``.

    Attributes
    ----------
    stored : float
        ``H(t_N) − H(t_0)``.
    dissipated : float
        ``∫ [z; u]ᵀ W [z; u] dt`` (``∫ zᵀ R z dt`` without feedthrough; trapezoidal rule on the
        given grid), ≥ 0.
    supplied : float
        ``∫ yᵀ u dt`` (trapezoidal rule).
    residual : float
        ``stored + dissipated − supplied``; zero for an exact pH trajectory up to quadrature error.
    """

    stored: float
    dissipated: float
    supplied: float
    residual: float


def _names(names: Sequence[str] | None, prefix: str, count: int, what: str) -> tuple[str, ...]:
    if names is None:
        return tuple(f"{prefix}{i + 1}" for i in range(count))
    out = tuple(str(v) for v in names)
    if len(out) != count:
        raise StructureError(f"{what} must name {count} entries, got {len(out)}: {list(out)}.")
    if len(set(out)) != len(out):
        raise StructureError(f"{what} has duplicates: {list(out)}; give each a distinct name.")
    return out


def _as_2d(x: ArrayLike, n: int, name: str) -> tuple[Array, bool]:
    a = np.asarray(x, dtype=float)
    single = a.ndim == 1
    a = np.atleast_2d(a)
    if a.ndim != 2 or a.shape[1] != n:
        raise ValueError(f"{name} must have shape (N, {n}) or ({n},), got {np.shape(x)}.")
    return a, single


class PHDAE:
    """A port-Hamiltonian DAE ``E ẋ = (J − R) z(x) + (B − P) u``, ``y = (B + P)ᵀ z(x) + (S − N) u``.

    Parameters
    ----------
    E, J, R : array_like, shape (n, n)
        Descriptor, structure (skew) and dissipation (symmetric PSD) matrices.
    B : array_like, shape (n, m)
        Port matrix (``G`` of pyMOR's convention).
    effort : callable
        ``z(x)``, vectorised: ``(N, n) -> (N, n)``.
    hamiltonian : callable, optional
        ``H(x)``, vectorised: ``(N, n) -> (N,)``.  ``None`` when the system has no known
        Hamiltonian (e.g. an effort learned without the compatibility condition).
    rtol : float
        Relative tolerance of the structure validation.
    P : array_like, shape (n, m), optional
        Dissipative coupling of states and ports (zero if not given).
    S, N : array_like, shape (m, m), optional
        Symmetric and skew parts of the feedthrough ``D = S − N`` (zero if not given).
    input_names, output_names, state_names : sequence of str, optional
        Names of the ports and states (default ``u1 … um``, ``y1 … ym``, ``x1 … xn``); a
        surrogate identified from a harvested dataset carries the FMU's names.

    Raises
    ------
    StructureError
        If J or N is not skew, R not symmetric PSD, ``W = [[R, P], [Pᵀ, S]]`` not PSD, or the
        shapes do not fit together.
    """

    def __init__(
        self,
        E: ArrayLike,
        J: ArrayLike,
        R: ArrayLike,
        B: ArrayLike,
        effort: Callable[[Array], Array],
        hamiltonian: Callable[[Array], Array] | None = None,
        rtol: float = 1e-10,
        *,
        P: ArrayLike | None = None,
        S: ArrayLike | None = None,
        N: ArrayLike | None = None,
        input_names: Sequence[str] | None = None,
        output_names: Sequence[str] | None = None,
        state_names: Sequence[str] | None = None,
    ) -> None:
        self.J = check_skew(J, "J", rtol)
        self.R = check_psd(R, "R", rtol)
        n = self.J.shape[0]
        E = np.asarray(E, dtype=float)
        B = np.asarray(B, dtype=float)
        if B.ndim == 1:
            B = B[:, None]
        for name, M, shape in (("E", E, (n, n)), ("R", self.R, (n, n))):
            if M.shape != shape:
                raise StructureError(f"{name} must have shape {shape} to match J, got {M.shape}.")
        if B.ndim != 2 or B.shape[0] != n:
            raise StructureError(f"B must have shape ({n}, m) to match J ({n}×{n}), got {B.shape}.")
        if not (np.all(np.isfinite(E)) and np.all(np.isfinite(B))):
            raise StructureError("E and B must be finite; remove NaN/Inf entries.")
        self.E = E
        self.B = B
        self.P, self.S, self.N = check_feedthrough(self.R, P, S, N, B.shape[1], rtol)
        self._effort = effort
        self._hamiltonian = hamiltonian
        self.input_names = _names(input_names, "u", B.shape[1], "input_names")
        self.output_names = _names(output_names, "y", B.shape[1], "output_names")
        self.state_names = _names(state_names, "x", n, "state_names")

    @property
    def effort_function(self) -> Callable[[Array], Array]:
        """The effort object as given (e.g. a :class:`~fmu_surrogate.ph.KernelEffort`)."""
        return self._effort

    def effort_jacobian(self, x: ArrayLike) -> Array | None:
        """``∂z/∂x`` at ``x`` ((N, n, n), or (n, n) for one point) when the effort provides its
        analytic Jacobian (a ``jacobian`` method), else ``None``.

        Parameters
        ----------
        x : array_like, shape (N, n) or (n,)
            States.
        """
        jac = getattr(self._effort, "jacobian", None)
        if jac is None:
            return None
        a, single = _as_2d(x, self.n_states, "x")
        J = np.asarray(jac(a), dtype=float).reshape(a.shape[0], self.n_states, self.n_states)
        return J[0] if single else J

    # -- sizes -----------------------------------------------------------------------------
    @property
    def n_states(self) -> int:
        """Number of states n."""
        return self.J.shape[0]

    @property
    def n_inputs(self) -> int:
        """Number of ports m."""
        return self.B.shape[1]

    @property
    def D(self) -> Array:
        """Feedthrough ``D = S − N`` (m, m)."""
        return self.S - self.N

    @property
    def W(self) -> Array:
        """Dissipation of states and ports together, ``[[R, P], [Pᵀ, S]]`` ((n + m), (n + m))."""
        return np.block([[self.R, self.P], [self.P.T, self.S]])

    @property
    def input_matrix(self) -> Array:
        """``G − P`` (n, m): how the inputs enter ``E ẋ``."""
        return self.B - self.P

    @property
    def output_matrix(self) -> Array:
        """``G + P`` (n, m): ``y = (G + P)ᵀ z + D u``."""
        return self.B + self.P

    @property
    def has_feedthrough(self) -> bool:
        """Whether any of ``P, S, N`` is nonzero."""
        return bool(self.P.any() or self.S.any() or self.N.any())

    @property
    def has_hamiltonian(self) -> bool:
        """Whether ``H(x)`` is available."""
        return self._hamiltonian is not None

    # -- evaluation ------------------------------------------------------------------------
    def effort(self, x: ArrayLike) -> Array:
        """Effort ``z(x)``; ``(N, n) -> (N, n)``.

        Parameters
        ----------
        x : array_like, shape (N, n) or (n,)
            States.
        """
        a, single = _as_2d(x, self.n_states, "x")
        z = np.asarray(self._effort(a), dtype=float).reshape(a.shape)
        return z[0] if single else z

    def hamiltonian(self, x: ArrayLike) -> Array:
        """Hamiltonian ``H(x)``; ``(N, n) -> (N,)``.

        Parameters
        ----------
        x : array_like, shape (N, n) or (n,)
            States.
        """
        if self._hamiltonian is None:
            raise AttributeError(
                "this system has no Hamiltonian (its effort was not constructed as a gradient); "
                "identify it with the Hamiltonian-consistent option to get one."
            )
        a, single = _as_2d(x, self.n_states, "x")
        h = np.asarray(self._hamiltonian(a), dtype=float).reshape(a.shape[0])
        return h[0] if single else h

    def output(self, x: ArrayLike, u: ArrayLike | None = None) -> Array:
        """Port output ``y = (G + P)ᵀ z(x) + D u``; ``(N, n), (N, m) -> (N, m)``.

        Parameters
        ----------
        x : array_like, shape (N, n) or (n,)
            States.
        u : array_like, shape (N, m) or (m,), optional
            Inputs; needed only when the system has a feedthrough ``D``.
        """
        z = self.effort(x)
        if u is None:
            if self.D.any():
                raise StructureError("this system has a feedthrough D = S − N: pass the "
                                     "inputs u to output(x, u).")
            return z @ self.output_matrix
        return self.output_from_effort(z, u)

    def output_from_effort(self, z: ArrayLike, u: ArrayLike) -> Array:
        """``(G + P)ᵀ z + D u`` for given efforts (e.g. a scheme's step mean); rows as ``z``.

        Parameters
        ----------
        z : array_like, shape (N, n) or (n,)
            Efforts.
        u : array_like, shape (N, m) or (m,)
            Inputs.
        """
        z = np.asarray(z, dtype=float)
        u = np.asarray(u, dtype=float).reshape(*z.shape[:-1], self.n_inputs)
        return z @ self.output_matrix + u @ self.D.T

    def dissipation_rate(self, z: ArrayLike, u: ArrayLike) -> Array:
        """``[z; u]ᵀ W [z; u] = zᵀRz + 2 zᵀPu + uᵀSu`` per row (≥ 0).

        Parameters
        ----------
        z : array_like, shape (N, n) or (n,)
            Efforts.
        u : array_like, shape (N, m) or (m,)
            Inputs.
        """
        z = np.asarray(z, dtype=float)
        u = np.asarray(u, dtype=float).reshape(*z.shape[:-1], self.n_inputs)
        return (((z @ self.R) * z).sum(axis=-1) + 2.0 * ((z @ self.P) * u).sum(axis=-1)
                + ((u @ self.S) * u).sum(axis=-1))

    def flow(self, x: ArrayLike, u: ArrayLike) -> Array:
        """Right-hand side ``(J − R) z(x) + (G − P) u`` (equals ``E ẋ``); ``(N, n), (N, m) -> (N, n)``.

        Parameters
        ----------
        x : array_like, shape (N, n) or (n,)
            States.
        u : array_like, shape (N, m) or (m,)
            Inputs.
        """
        z = self.effort(x)
        uu = np.asarray(u, dtype=float)
        if uu.ndim == z.ndim - 1 and self.n_inputs == 1:
            uu = uu[..., None]
        return z @ (self.J - self.R).T + uu @ self.input_matrix.T

    def structure_violation(self) -> dict[str, float]:
        """Sizes of the structure violations (all 0 if exact): ``J_skew``, ``R_symmetric``,
        ``R_psd``, and ``N_skew``, ``S_symmetric``, ``W_psd`` when there is a feedthrough."""
        out = {
            "J_skew": skew_violation(self.J),
            "R_symmetric": symmetry_violation(self.R),
            "R_psd": psd_violation(self.R),
        }
        if self.has_feedthrough:
            out.update(N_skew=skew_violation(self.N), S_symmetric=symmetry_violation(self.S),
                       W_psd=psd_violation(self.W))
        return out

    def power_balance(self, t: ArrayLike, x: ArrayLike, u: ArrayLike) -> PowerBalance:
        """Energy balance along a trajectory (needs the Hamiltonian).

        Parameters
        ----------
        t : array_like, shape (N,)
        x : array_like, shape (N, n)
        u : array_like, shape (N, m) or (N,) for one port
        """
        t = np.asarray(t, dtype=float)
        x, _ = _as_2d(x, self.n_states, "x")
        u = np.asarray(u, dtype=float).reshape(len(t), -1)
        z = self.effort(x)
        H = self.hamiltonian(x)
        diss = self.dissipation_rate(z, u)
        supp = np.einsum("ij,ij->i", self.output_from_effort(z, u), u)
        d = float(np.trapezoid(diss, t))
        s = float(np.trapezoid(supp, t))
        stored = float(H[-1] - H[0])
        return PowerBalance(stored, d, s, stored + d - s)


class LinearPH(PHDAE):
    """Linear pH system ``E ẋ = (J − R) Q x + (B − P) u``, ``y = (B + P)ᵀ Q x + (S − N) u``,
    ``H = ½ xᵀ Qᵀ E x``.

    With ``E = I`` (the default) this is the pH-ODE of docs/design.md §4 with ``Q ≻ 0``.  The
    order ``n = 0`` is allowed: a static passive map ``y = (S − N) u`` (pass ``B`` of shape
    ``(0, m)``).

    Parameters
    ----------
    J, R, Q : array_like, shape (n, n)
    B : array_like, shape (n, m)
        ``G`` of pyMOR's convention.
    E : array_like, shape (n, n), optional
        Defaults to the identity.
    rtol : float
        Relative tolerance of the structure validation.
    P, S, N : array_like, optional
        Feedthrough (see :class:`PHDAE`), zero if not given.
    input_names, output_names, state_names : sequence of str, optional
        Names of the ports and states (see :class:`PHDAE`).
    """

    def __init__(
        self,
        J: ArrayLike,
        R: ArrayLike,
        Q: ArrayLike,
        B: ArrayLike,
        E: ArrayLike | None = None,
        rtol: float = 1e-10,
        *,
        P: ArrayLike | None = None,
        S: ArrayLike | None = None,
        N: ArrayLike | None = None,
        input_names: Sequence[str] | None = None,
        output_names: Sequence[str] | None = None,
        state_names: Sequence[str] | None = None,
    ) -> None:
        Qm = check_spd(Q, "Q", rtol)
        n = Qm.shape[0]
        Em = np.eye(n) if E is None else np.asarray(E, dtype=float)
        self.Q = Qm
        eff = LinearEffort(Qm, Em)
        super().__init__(
            Em,
            J,
            R,
            B,
            effort=eff,
            hamiltonian=eff.hamiltonian,
            rtol=rtol,
            P=P,
            S=S,
            N=N,
            input_names=input_names,
            output_names=output_names,
            state_names=state_names,
        )
        if Qm.shape != self.J.shape:
            raise StructureError(f"Q must have shape {self.J.shape} to match J, got {Qm.shape}.")

    def effort_jacobian(self, x: ArrayLike) -> Array:
        """``∂z/∂x = Q`` at every point ((N, n, n), or (n, n) for one point).

        Parameters
        ----------
        x : array_like, shape (N, n) or (n,)
            States.
        """
        a, single = _as_2d(x, self.n_states, "x")
        return self.Q.copy() if single else np.broadcast_to(self.Q, (a.shape[0], *self.Q.shape))

    def state_space(self) -> tuple[Array, Array, Array]:
        """``(A, B, C)`` with ``A = (J − R) Q``, ``B = G − P``, ``C = (G + P)ᵀ Q`` (for ``E = I``);
        the feedthrough is :attr:`D`."""
        return (self.J - self.R) @ self.Q, self.input_matrix, self.output_matrix.T @ self.Q

    def transfer_function(self, s: complex | ArrayLike) -> NDArray[np.complex128]:
        """``H(s) = (G + P)ᵀ Q (sE − (J − R) Q)⁻¹ (G − P) + S − N``.

        Parameters
        ----------
        s : complex or array_like, shape (K,)
            Laplace variable(s).

        Returns
        -------
        ndarray
            ``(m, m)`` for a scalar ``s``, ``(K, m, m)`` otherwise.
        """
        A, B, C = self.state_space()
        ss = np.atleast_1d(np.asarray(s, dtype=complex))
        G = np.stack([C @ np.linalg.solve(si * self.E - A, B) + self.D for si in ss])
        return G[0] if np.ndim(s) == 0 else G


def with_names(
    system: PHDAE,
    *,
    inputs: Sequence[str] | None = None,
    outputs: Sequence[str] | None = None,
    states: Sequence[str] | None = None,
) -> PHDAE:
    """A copy of ``system`` with port and state names (those not given are kept).

    Parameters
    ----------
    system : PHDAE or LinearPH
        The system.
    inputs, outputs, states : sequence of str, optional
        New names of the inputs, outputs and states.

    Returns
    -------
    PHDAE or LinearPH
        A shallow copy (the matrices and the effort are shared, they are not modified).
    """
    import copy

    new = copy.copy(system)
    if inputs is not None:
        new.input_names = _names(inputs, "u", system.n_inputs, "inputs")
    if outputs is not None:
        new.output_names = _names(outputs, "y", system.n_inputs, "outputs")
    if states is not None:
        new.state_names = _names(states, "x", system.n_states, "states")
    return new
