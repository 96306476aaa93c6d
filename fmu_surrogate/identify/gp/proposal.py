"""A pH structure ``J, R, B`` proposed from samples of declared states, for the GP effort fit.

When an FMU declares its continuous states and their derivatives, the samples ``(x, ẋ, u)``
(and the outputs ``y`` power-conjugate to the inputs, if known) suffice to propose the constant
structure of ``ẋ = (J − R) z(x) + B u``; :class:`~fmu_surrogate.identify.gp.effort.GPEffortIdentifier`
then learns ``z``.  **Assumptions** (each is checked and its residual reported):

1. *An ODE, input-affine with constant B*: ``ẋ = f(x) + B u`` (``E = I``).  ``f`` is a
   polynomial of degree ``degree`` in the standardised states; ``f`` and ``B`` are one linear
   least-squares fit of ``ẋ`` on ``[monomials of x, u]`` (``drift_residual``: relative residual).
   A scalar spring ``x' = v`` gives ``f = 0`` and ``B = 1`` to round-off.
2. *Constant structure, convex energy*: ``f = T z`` with ``T = J − R`` constant and
   ``z = ∇H``, so every Jacobian ``A(x) = ∂f/∂x = T ∇²H(x)`` makes ``M A(x)`` symmetric for
   ``M = T⁻¹``.  That condition is linear in ``M``; with the sign condition ``M + Mᵀ ⪯ 0``
   (equivalent to ``R ⪰ 0``) and ``M A(x̄) ≻ 0`` (a convex ``H`` at the data's centre ``x̄``) it
   fixes ``M`` up to a positive factor when ``f`` is nonlinear (the Duffing oscillator's exact
   ``J``, ``R``), and to the passive linearisations of ``A(x̄)`` when ``f`` is linear.
   ``M = K − L Lᵀ`` (``K`` skew, ``L`` lower triangular) is fitted by least squares to the
   Jacobians at ``n_points`` samples, started from the closed-form Lyapunov solution
   ``A(x̄)ᵀ Q + Q A(x̄) = −I`` (``M₀ = Q A(x̄)⁻¹``, whose symmetric part
   ``−A⁻ᵀA⁻¹`` is negative definite).  Then ``W = M⁻¹``, ``R = (W L)(W L)ᵀ ⪰ 0`` and ``J`` the
   skew part of ``−W K Wᵀ``, both by construction (``T = W Mᵀ Wᵀ``);
   ``symmetry_residual`` is the relative asymmetry of ``M A(x)`` left over.  A state whose
   dissipation ``|L_i|²`` is below 1e-6 of the largest gets its row of ``L`` set to zero and
   the fit is repeated (kept if no worse): the asymmetry sees ``(L Lᵀ)_ij`` of such a row only
   to second order, so the least squares alone would leave it at ``√eps``.  A fit whose
   Hessian ``M A(x̄)`` is not positive definite is refused (no passive linearisation).
3. *Rows without drift decouple*: a state whose drift row is zero (relative to its rate, below
   ``drift_tol``) has zero rows and columns in ``J`` and ``R``; its effort is seen only through
   the outputs ``y = Bᵀ z`` (the spring: ``J = R = 0`` and ``z = F`` from the force output).
4. *Units of the effort*: ``T`` and ``z`` are determined up to ``T → T/s``, ``z → s z``.  The
   collocated outputs fix ``s`` (least squares of ``y`` on ``Bᵀ T⁻¹ f``, ``s > 0`` or the outputs
   are not power into the system; ``output_residual``); without them ``s`` is chosen so that the
   standardised Hessian ``M A(x̄)`` has unit mean eigenvalue and only ``J − R`` up to that
   factor, ``A(x̄) = (J − R) ∇²H(x̄)`` and ``B`` are determined.

Everything is computed in standardised states ``x̂ = (x − x̄)/σ`` (a congruence
``T = D T̂ D``, ``D = diag(σ)``, which keeps ``J`` skew and ``R ⪰ 0``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations_with_replacement

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import least_squares

from fmu_surrogate.errors import InvalidInputError

Array = NDArray[np.float64]

__all__ = ["StructureProposal", "propose_structure"]


@dataclass(frozen=True)
class StructureProposal:
    """A proposed structure of ``ẋ = (J − R) z(x) + B u`` and how well the data support it.

    Parameters
    ----------
    J, R, B : ndarray
        Structure (skew), dissipation (PSD) and port matrices, shapes (n, n), (n, n), (n, m).
    centre : ndarray, shape (n,)
        The data's mean state ``x̄``.
    jacobian : ndarray, shape (n, n)
        ``A(x̄) = ∂f/∂x`` of the fitted drift at the centre.
    hessian : ndarray, shape (n, n)
        ``∇²H(x̄)`` implied by the proposal, ``(J − R)⁻¹ A(x̄)`` on the states with drift
        (zero elsewhere); its symmetric part is what the passivity assumption needs ``≻ 0``.
    drift_states : ndarray of bool, shape (n,)
        States with a drift (assumption 3).
    drift_residual, symmetry_residual, output_residual : float
        Relative residuals of assumptions 1, 2 and 4 (``nan`` where not applicable).
    scaled_by_outputs : bool
        Whether the collocated outputs fixed the effort's units.
    constant_inputs : ndarray of bool, shape (m,)
        Inputs that do not vary in the data: their columns of ``B`` are not identifiable and
        set to zero.
    """

    J: Array
    R: Array
    B: Array
    centre: Array
    jacobian: Array
    hessian: Array
    drift_states: NDArray[np.bool_]
    drift_residual: float
    symmetry_residual: float
    output_residual: float
    scaled_by_outputs: bool
    constant_inputs: NDArray[np.bool_]

    def matrices(self) -> dict[str, Array]:
        """``{"E", "J", "R", "B"}`` as :class:`GPEffortIdentifier` takes them (``E = I``)."""
        return {"E": np.eye(self.J.shape[0]), "J": self.J, "R": self.R, "B": self.B}

    @property
    def effort_observable(self) -> bool:
        """Whether ``J − R`` is regular, so that ``ẋ − B u`` alone determines ``z``."""
        T = self.J - self.R
        return bool(np.linalg.matrix_rank(T) == T.shape[0])

    def report(self) -> str:
        """The assumptions, the proposed matrices and their residuals, as text."""
        np_opts = {"precision": 4, "suppress_small": True, "max_line_width": 100}

        def mat(a: Array) -> str:
            return np.array2string(np.asarray(a), **np_opts).replace("\n", "\n      ")

        h = 0.5 * (self.hessian + self.hessian.T)[np.ix_(self.drift_states, self.drift_states)]
        head = ("structure proposed from the data (ODE E = I, input-affine ẋ = f(x) + B u, "
                "f = (J − R) ∇H with constant J, R):")
        fit = f"  drift fit: relative residual {self.drift_residual:.2e} (polynomial + constant B)"
        rows = f"  states with drift: {int(self.drift_states.sum())} of {self.drift_states.size}"
        if not self.drift_states.all():
            rows += (" (the others have zero rows/columns in J, R: their effort is seen only "
                     "through the outputs y = Bᵀz)")
        lines = [head, fit, rows]
        if self.constant_inputs.any():
            lines.append(f"  inputs {np.flatnonzero(self.constant_inputs).tolist()} do not vary: "
                         "their columns of B are not identifiable from these data (set to 0)")
        if self.drift_states.any():
            lines.append(f"  integrability of (J − R)⁻¹ ∂f/∂x: relative asymmetry "
                         f"{self.symmetry_residual:.2e}; Hessian of H at the centre: "
                         f"smallest eigenvalue {np.linalg.eigvalsh(h).min():.4g} (> 0, "
                         "required: a passive linearisation)")
        lines.append("  effort units: " + (
            f"fixed by the collocated outputs y = Bᵀz (relative residual "
            f"{self.output_residual:.2e})" if self.scaled_by_outputs else
            "not fixed (no collocated outputs): J − R and z are known up to a positive factor"
            if self.drift_states.any() else "J = R = 0; z is learned from the outputs y = Bᵀz"))
        lines += [f"  J = {mat(self.J)}", f"  R = {mat(self.R)}", f"  B = {mat(self.B)}"]
        return "\n".join(lines)


def _monomials(n: int, degree: int) -> list[tuple[int, ...]]:
    """Exponent tuples of all monomials of ``n`` variables up to ``degree`` (constant first)."""
    out = []
    for d in range(degree + 1):
        for combo in combinations_with_replacement(range(n), d):
            e = [0] * n
            for j in combo:
                e[j] += 1
            out.append(tuple(e))
    return out


def _features(xs: Array, exps: list[tuple[int, ...]]) -> Array:
    return np.column_stack([np.prod(xs ** np.array(e), axis=1) for e in exps])


def _feature_jacobian(p: Array, exps: list[tuple[int, ...]]) -> Array:
    """``∂φ_k/∂x̂_j`` at one standardised point ``p``, shape (K, n)."""
    n = p.size
    G = np.zeros((len(exps), n))
    for k, e in enumerate(exps):
        for j in range(n):
            if e[j]:
                ej = np.array(e)
                ej[j] -= 1
                G[k, j] = e[j] * np.prod(p ** ej)
    return G


def _checked(name: str, a: ArrayLike, N: int | None) -> Array:
    a = np.asarray(a, dtype=float)
    a = a[:, None] if a.ndim == 1 else a
    if a.ndim != 2 or (N is not None and a.shape[0] != N):
        raise InvalidInputError(f"{name} must have shape (N, columns) with N = {N} samples as x, "
                                f"got {a.shape}.")
    if not np.all(np.isfinite(a)):
        raise InvalidInputError(f"{name} contains NaN/Inf; drop those samples before proposing.")
    return a


def _start(A0: Array) -> tuple[Array, Array]:
    """``(K, L)`` of ``M₀ = Q A⁻¹`` with the Lyapunov ``AᵀQ + QA = −I`` (module doc); for an
    ``A`` that is not Hurwitz, of a shifted one (then only a starting point)."""
    nb = A0.shape[0]
    scale = max(float(np.abs(A0).max()), 1e-300)
    shift = max(0.0, float(np.linalg.eigvals(A0).real.max())) + 1e-3 * scale
    As = A0 - shift * np.eye(nb) if np.linalg.eigvals(A0).real.max() > -1e-3 * scale else A0
    try:
        Q = scipy.linalg.solve_continuous_lyapunov(As.T, -np.eye(nb))
        M0 = np.linalg.solve(As.T, Q.T).T  # Q A⁻¹
        P0 = -0.5 * (M0 + M0.T)
        L0 = np.linalg.cholesky(P0 + 1e-12 * np.trace(P0) * np.eye(nb))
        return 0.5 * (M0 - M0.T), L0
    except (np.linalg.LinAlgError, ValueError):
        return np.zeros((nb, nb)), np.eye(nb)


def _fit_m(Ahat: Array, A0: Array) -> tuple[Array, Array, float]:
    """``K, L`` of ``M = K − L Lᵀ`` with ``M A_k`` symmetric and ``tr(M A0) = nb`` (least
    squares), and the relative asymmetry left over."""
    nb = A0.shape[0]
    iu = np.triu_indices(nb, 1)
    il = np.tril_indices(nb)
    ref = max(float(np.sqrt(np.mean(np.sum(Ahat**2, axis=(1, 2))))), 1e-300)

    def unpack(th: Array) -> tuple[Array, Array]:
        K = np.zeros((nb, nb))
        K[iu] = th[: iu[0].size]
        K = K - K.T
        L = np.zeros((nb, nb))
        L[il] = th[iu[0].size:]
        return K, L

    def residual(th: Array) -> Array:
        K, L = unpack(th)
        M = K - L @ L.T
        MA = M @ Ahat
        asym = (MA - MA.transpose(0, 2, 1))[:, iu[0], iu[1]].ravel() / (ref * np.sqrt(len(Ahat)))
        return np.append(asym, np.trace(M @ A0) / nb - 1.0)

    K0, L0 = _start(A0)
    t0 = np.trace((K0 - L0 @ L0.T) @ A0) / nb
    if abs(t0) > 1e-12:  # normalise the start (scale invariance of the asymmetry)
        K0, L0 = K0 / t0, L0 / np.sqrt(abs(t0))
    starts = [np.concatenate([K0[iu], L0[il]]), np.concatenate([np.zeros(iu[0].size),
                                                                np.eye(nb)[il]])]
    def solve(th0: Array, free: NDArray[np.bool_]) -> tuple[Array, float]:
        def res(v: Array) -> Array:
            th = np.zeros(th0.size)
            th[free] = v
            return residual(th)

        r = least_squares(res, th0[free], xtol=1e-14, ftol=1e-14, gtol=1e-14,
                          max_nfev=2000 * nb * nb)
        th = np.zeros(th0.size)
        th[free] = r.x
        return th, float(r.cost)

    every = np.ones(iu[0].size + il[0].size, dtype=bool)
    th, cost = min((solve(s, every) for s in starts), key=lambda r: r[1])
    # a state without dissipation (P_ii = |L_i|² ≈ 0) has its row of L exactly zero: the
    # asymmetry sees P_ij only through P_ii (PSD), so the least squares leaves P_ij at √eps
    _K, L = unpack(th)
    rows = np.sum(L**2, axis=1) <= 1e-6 * max(float(np.sum(L**2, axis=1).max()), 1e-300)
    if rows.any():
        free = every.copy()
        free[iu[0].size:] = ~rows[il[0]]
        th2, cost2 = solve(th * free, free)
        if cost2 <= cost * (1 + 1e-6) + 1e-28:
            th = th2
    K, L = unpack(th)
    M = K - L @ L.T
    t = float(np.trace(M @ A0)) / nb  # asked to be 1; the asymmetry may have pulled it off
    H0 = M @ A0
    if (not t > 0 or np.linalg.cond(M) > 1e12
            or np.linalg.eigvalsh(0.5 * (H0 + H0.T)).min() <= 0):
        raise InvalidInputError(
            "the drift's linearisation at the data's centre has no passive factorisation "
            "A = (J − R) Q with R ⪰ 0, Q ≻ 0 (an unstable or non-passive drift: the fitted "
            "Hessian of H at the centre is not positive definite); give the "
            "structure (J, R, B) instead of proposing it.")
    K, L = K / t, L / np.sqrt(t)
    M = K - L @ L.T
    MA = M @ Ahat
    asym = float(np.linalg.norm(MA - MA.transpose(0, 2, 1)) / max(np.linalg.norm(MA), 1e-300))
    return K, L, asym


def propose_structure(
    x: ArrayLike,
    xdot: ArrayLike,
    u: ArrayLike,
    y: ArrayLike | None = None,
    *,
    degree: int = 3,
    n_points: int = 64,
    drift_tol: float = 1e-6,
) -> StructureProposal:
    """Propose ``J, R, B`` of ``ẋ = (J − R) z(x) + B u`` from samples (module doc).

    Parameters
    ----------
    x, xdot : array_like, shape (N, n) (or (N,) for one state)
        Declared states and their derivatives.
    u : array_like, shape (N, m) or (N,)
        Inputs.
    y : array_like, shape (N, m) or (N,), optional
        Outputs power-conjugate to the inputs (``y = Bᵀ z``); they fix the units of the effort.
    degree : int
        Degree of the polynomial drift fitted to ``ẋ − B u`` (in standardised states).
    n_points : int
        Number of samples (evenly spread over the data) whose drift Jacobians enter the
        integrability fit.
    drift_tol : float
        A state's drift row counts as zero when its RMS is below ``drift_tol`` times the RMS of
        its rate.

    Returns
    -------
    StructureProposal
        The matrices, the assumptions' residuals and :meth:`~StructureProposal.report`.

    Examples
    --------
    A damped linear oscillator ``ÿ = −4 y − 0.5 ẏ + u`` from random samples: ``J − R``
    up to a positive factor, ``A = (J − R) ∇²H`` and ``B`` exactly.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x, u = rng.normal(size=(200, 2)), rng.normal(size=200)
    >>> A = np.array([[0.0, 1.0], [-4.0, -0.5]])
    >>> p = propose_structure(x, x @ A.T + np.outer(u, [0.0, 1.0]), u)
    >>> bool(np.allclose((p.J - p.R) @ p.hessian, A) and np.allclose(p.B, [[0], [1]]))
    True
    """
    X = _checked("x", x, None)
    N, n = X.shape
    Xd = _checked("xdot", xdot, N)
    U = _checked("u", u, N)
    if Xd.shape[1] != n:
        raise InvalidInputError(f"xdot must have the shape of x, {X.shape}, got {Xd.shape}.")
    if not (isinstance(degree, (int, np.integer)) and degree >= 1):
        raise InvalidInputError(f"degree must be an integer >= 1, got {degree!r}.")
    mu = X.mean(0)
    sd = X.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    Xs = (X - mu) / sd
    exps = _monomials(n, int(degree))
    moving = U.std(0) > 1e-12 * np.maximum(np.abs(U).max(0), 1e-300)  # constant: no B column
    Phi = np.column_stack([_features(Xs, exps), U[:, moving]])
    if N <= Phi.shape[1]:
        raise InvalidInputError(f"{N} samples cannot fit a drift of degree {degree} in {n} states "
                                f"and {U.shape[1]} inputs ({Phi.shape[1]} coefficients); pass "
                                "more samples or a lower degree.")
    coef = scipy.linalg.lstsq(Phi, Xd)[0]
    C = coef[: len(exps)]
    B = np.zeros((n, U.shape[1]))
    B[:, moving] = coef[len(exps):].T
    drift_res = float(np.linalg.norm(Xd - Phi @ coef) / max(np.linalg.norm(Xd), 1e-300))
    F = _features(Xs, exps) @ C  # drift samples f(x)
    rate = np.sqrt(np.mean(Xd**2, axis=0))
    b = np.sqrt(np.mean(F**2, axis=0)) > drift_tol * np.where(rate > 0, rate, 1.0)
    # Jacobians in standardised coordinates: Â = D⁻¹ A D = D⁻¹ (∂f/∂x̂)
    pick = np.unique(np.linspace(0, N - 1, min(int(n_points), N)).round().astype(int))
    jac = [(_feature_jacobian(p, exps).T @ C).T / sd[:, None] for p in np.vstack([0 * mu,
                                                                                  Xs[pick]])]
    A0hat = jac[0]
    jacobian = A0hat * sd[:, None] / sd[None, :]  # A = D Â D⁻¹
    J = np.zeros((n, n))
    R = np.zeros((n, n))
    hessian = np.zeros((n, n))
    asym = float("nan")
    out_res = float("nan")
    scaled = False
    if b.any():
        bb = np.ix_(b, b)
        try:
            K, L, asym = _fit_m(np.stack([a[bb] for a in jac[1:]]), A0hat[bb])
        except InvalidInputError as e:  # say how well the input-affine drift fitted
            raise InvalidInputError(f"{e} The drift fit's relative residual is {drift_res:.2e}"
                                    " (large: ẋ is not f(x) + B u with a constant B).") from None
        M = K - L @ L.T
        W = np.linalg.inv(M)
        s = 1.0
        if y is not None:
            Y = _checked("y", y, N)
            if Y.shape[1] != U.shape[1]:
                raise InvalidInputError(f"y needs one collocated output per input ({U.shape[1]}),"
                                        f" got {Y.shape[1]} columns.")
            # z_b = D_b M̂ D_b⁻¹... in original units: ẑ = M̂ f̂, z = D⁻¹ ẑ, f̂ = D⁻¹ f
            zb = ((Xd - U @ B.T)[:, b] / sd[b]) @ M.T / sd[b]
            g = zb @ B[b]
            s = float(np.sum(g * Y) / max(np.sum(g * g), 1e-300))
            if not s > 0:
                raise InvalidInputError(
                    "the outputs y are not power into the system (yᵀu = power in needs y = Bᵀz "
                    f"with a positive factor; fitted {s:.3g}); pass the power-conjugate outputs "
                    "with their sign, or none.")
            out_res = float(np.linalg.norm(Y - s * g) / max(np.linalg.norm(Y), 1e-300))
            scaled = True
        D = sd[b]
        G = (W @ L) * D[:, None] / np.sqrt(s)  # R = D Ŵ L Lᵀ Ŵᵀ D / s
        Tt = -(W @ K @ W.T) * D[:, None] * D[None, :] / s
        J[bb] = 0.5 * (Tt - Tt.T)
        R[bb] = G @ G.T
        hessian[bb] = s * (M @ A0hat[bb]) / D[:, None] / D[None, :]  # ∇²H = D⁻¹ Ĥ D⁻¹
    return StructureProposal(J, R, B, mu, jacobian, hessian, b, drift_res, asym, out_res, scaled,
                             ~moving)
