"""The steps of the implicit integrators (:mod:`fmu_surrogate.ph.simulation.integrators` explains the
schemes): the direct one-step map of linear systems and Newton's method on the midpoint or AVF
step equations, with the Gauss–Legendre nodes of the AVF path integral.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import expm, lu_factor, lu_solve

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.ph.simulation.algebraic_states import _algebraic, _consistent, _HiddenConstraint
from fmu_surrogate.ph.simulation.newton import (
    _FLOOR,
    _STALL,
    CHORD,
    ConvergenceError,
    _Effort,
    _one_correction,
    _solve,
)
from fmu_surrogate.ph.system import PHDAE, LinearPH

Array = NDArray[np.float64]

# 4-point Gauss–Legendre on [0, 1]
_GL_X, _GL_W = np.polynomial.legendre.leggauss(4)
GL_NODES = 0.5 * (_GL_X + 1.0)
GL_WEIGHTS = 0.5 * _GL_W


def _linear_steps(system: LinearPH, t: Array, Ubar: Array,
                  x0: Array) -> tuple[Array, Array, NDArray[np.int64]]:
    """Implicit midpoint for ``E ẋ = A x + B u``: one LU per distinct step size."""
    A = (system.J - system.R) @ system.Q
    E, B = system.E, system.input_matrix
    h_all = np.diff(t)
    X = np.empty((t.size, x0.size))
    X[0] = x0
    # steps equal up to round-off (a linspace grid) share one factorisation
    keys = np.round(h_all / h_all.max(), 13)
    maps: dict[float, tuple[Array, Array]] = {}
    G = np.empty_like(X[1:])
    Phis = []
    for key in np.unique(keys):
        sel = keys == key
        h = float(h_all[sel][0])
        lu = lu_factor(E - 0.5 * h * A)
        Phi, Gam = lu_solve(lu, E + 0.5 * h * A), lu_solve(lu, h * B)
        maps[float(key)] = (Phi, Gam)
        G[sel] = Ubar[sel] @ Gam.T  # the input part of every step at once
        Phis.append(Phi)
    if len(maps) == 1:
        Phi = Phis[0]
        for k in range(h_all.size):
            X[k + 1] = Phi @ X[k] + G[k]
    else:
        for k in range(h_all.size):
            X[k + 1] = maps[float(keys[k])][0] @ X[k] + G[k]
    Zbar = 0.5 * (X[1:] + X[:-1]) @ system.Q.T
    return X, Zbar, np.zeros(t.size - 1, dtype=np.int64)


def _newton_steps(system: PHDAE, t: Array, U: Array, Ubar: Array, x0: Array, method: str,
                  tol: float, max_newton: int,
                  zoh: bool) -> tuple[Array, Array, NDArray[np.int64]]:
    n = system.n_states
    if n == 0:  # a static map (a NonlinearPH of order 0: y = S_nl(u) u + D u): no state to step
        return np.zeros((t.size, 0)), np.zeros((t.size - 1, 0)), np.zeros(t.size - 1, np.int64)
    T = system.J - system.R
    E, B = system.E, system.input_matrix
    eff = _Effort(system)
    nl = getattr(system, "nonlinear_dissipation", None)  # R(x) = R + R_nl(z): NonlinearPH
    nodes, weights = (np.array([0.5]), np.array([1.0])) if method == "midpoint" else \
        (GL_NODES, GL_WEIGHTS)
    if explicit_step(system):
        return _explicit_steps(eff, t, B, Ubar, x0, nodes, weights)
    rows_a, cols_a = _algebraic(system)
    high_index = False
    if rows_a.size:
        if rows_a.size != cols_a.size:
            raise InvalidInputError(
                f"E has {rows_a.size} zero rows but {cols_a.size} zero columns; "
                "write the DAE with E = diag(E_d, 0) (algebraic states last or "
                "anywhere, but as many algebraic rows as states).")
        Jz0 = eff.jacobian(x0[None, :])[0]
        block = (T @ Jz0)[np.ix_(rows_a, cols_a)]
        high_index = np.linalg.matrix_rank(block) < rows_a.size
        if not high_index:
            x0 = _consistent(system, eff, x0, U[0], rows_a, cols_a, tol, max_newton)
    mask_a = None
    if high_index:
        mask_a = np.zeros(n, dtype=bool)
        mask_a[cols_a] = True
    N = t.size
    X = np.empty((N, n))
    X[0] = x0
    Zbar = np.empty((N - 1, n))
    its = np.zeros(N - 1, dtype=np.int64)
    last = None  # the last step's first Jacobian, its start, Newton's start there and its h
    for k in range(N - 1):
        h = t[k + 1] - t[k]
        xk = X[k]
        ubar = Ubar[k]
        u_end = U[k] if zoh else U[k + 1]  # the input in force just before t_{k+1}
        # algebraic states jump with a held input: extrapolated linearly, as the FMUs do
        xn = _predictor(xk, X[k - 1] if k else xk, X[k - 2] if k > 1 else xk, h,
                        t[k] - t[k - 1] if k else 0.0,
                        t[k - 1] - t[k - 2] if k > 1 and not rows_a.size else 0.0)
        start = xn  # Newton's start
        # the last step's Jacobian bounds the error of a first correction (ODEs, the same h)
        known = last is not None and not rows_a.size and abs(h - last[3]) <= 1e-9 * h
        converged = False
        Jac = dzb = None
        fresh = True
        best = (np.inf, xn, None)
        prev = np.inf
        for it in range(1, max_newton + 1):
            # Newton; after the first iteration (or two) of a step the Jacobian is kept (chord
            # steps, each one residual evaluation) — it changes by O(h·|δx|) within a step
            F, Jnew, zb, dnew = _residual(eff, T, E, B, xk, xn, ubar, u_end, h, nodes, weights,
                                          mask_a, rows_a, jacobian=fresh, nl=nl)
            if fresh:
                Jac, dzb = Jnew, dnew
                if it == 1:
                    J1 = Jnew
            fn = np.abs(F).max()
            if fn < best[0]:
                best = (fn, xn, zb)
            if it > 3:  # the residual stopped shrinking at the round-off of the effort: done
                scale = np.abs(E @ (xn - xk)).max() + h * (
                    np.abs(T @ zb).max() + np.abs(B @ ubar).max() if B.size
                    else np.abs(T @ zb).max())
                if (fn > 0.5 * prev or fn <= _FLOOR * (scale + 1e-300)) \
                        and best[0] <= _STALL * (scale + 1e-300):
                    converged = True
                    _, xn, zb = best
                    break
            prev = fn
            try:
                dx = _solve(Jac, -F)
            except np.linalg.LinAlgError:
                raise ConvergenceError(
                    f"step {k} (t = {t[k]:.6g} s): the Newton matrix is singular; the DAE may "
                    f"have a higher index than this scheme handles, or the state left the "
                    f"region where the effort is valid.") from None
            xn = xn + dx
            step = np.abs(dx).max()
            if not np.isfinite(step):
                break
            xscale = 1.0 + np.abs(xn).max()
            if step <= tol * xscale or (it == 1 and known and _one_correction(
                    Jac, last[0], start, last[2], xk, last[1], step, xscale, tol)):
                # the mean effort at the new state to first order (the rest is O(tol²))
                converged = True
                zb = zb + dzb @ dx
                break
            # a first correction below CHORD leaves the Jacobian good for the whole step: its
            # change times the last correction is below CHORD·tol of the state, round-off
            fresh = it < 2 and step > CHORD * xscale
        if not converged:
            raise ConvergenceError(
                f"Newton did not converge at step {k} (t = {t[k]:.6g} s → {t[k + 1]:.6g} s) "
                f"after {max_newton} iterations (residual {best[0]:.2e}); reduce the step, or "
                f"check the input and the initial state.")
        its[k] = it
        last = (J1, xk, start, h)
        if zoh and rows_a.size and not high_index:  # the new input: algebraic states jump
            xn = _consistent(system, eff, xn, U[k + 1], rows_a, cols_a, tol, max_newton)
        X[k + 1] = xn
        Zbar[k] = zb
    if high_index:
        hidden = _HiddenConstraint(eff, T, E, B, rows_a, cols_a, X[0])
        X = hidden.node_states(X, U, tol, max_newton)
    return X, Zbar, its


def explicit_step(system: PHDAE) -> bool:
    """Whether the AVF step of ``system`` is explicit: ``E = I``, ``J − R = 0`` and no
    state-dependent dissipation (a lossless core of integrators, ``ẋ = B u``), so that
    ``x_{k+1} = x_k + h B ū`` whatever the energy (:func:`fmu_surrogate.ph.simulate` and the
    exported FMUs take that step).

    Parameters
    ----------
    system : PHDAE
    """
    n = system.n_states
    return (getattr(system, "nonlinear_dissipation", None) is None
            and not np.any(system.J - system.R) and np.array_equal(system.E, np.eye(n)))


def _explicit_steps(eff: _Effort, t: Array, B: Array, Ubar: Array, x0: Array, nodes: Array,
                    weights: Array) -> tuple[Array, Array, NDArray[np.int64]]:
    """The steps of ``ẋ = B u`` (``E = I``, ``J − R = 0``, no state-dependent dissipation: a
    lossless core of integrators, a spring): ``x_{k+1} = x_k + h B ū``, nothing to solve; the
    mean efforts of all steps from one call of the effort."""
    inc = np.diff(t)[:, None] * (Ubar @ B.T) if B.size else np.zeros((t.size - 1, x0.size))
    X = np.cumsum(np.vstack([x0[None, :], inc]), axis=0)  # x_{k+1} = x_k + inc_k, in order
    xk, delta = X[:-1], X[1:] - X[:-1]
    pts = (xk[:, None, :] + nodes[None, :, None] * delta[:, None, :]).reshape(-1, x0.size)
    zbar = np.einsum("q,kqi->ki", weights, eff(pts).reshape(xk.shape[0], nodes.size, x0.size))
    return X, zbar, np.zeros(t.size - 1, dtype=np.int64)


def _predictor(x2: Array, x1: Array, x0: Array, a: float, b: float, c: float) -> Array:
    """The start of Newton's method: the state at ``t₂ + a`` extrapolated from the last nodes.

    ``x0, x1, x2`` at ``t₂ − b − c, t₂ − b, t₂``: quadratic through the three, linear through
    the last two when ``c = 0``, ``x2`` when ``b = 0`` too; written as
    ``x2 + α (x2 − x1) − β (x1 − x0)``, with the weights computed once per step as the exported
    FMUs do (``export/c/surrogate_nonlinear.c``).
    """
    if b == 0.0:
        return x2.copy()
    if c == 0.0:
        return x2 + (a / b) * (x2 - x1)
    g = a * (a + b) / (b + c)
    return x2 + ((a + g) / b) * (x2 - x1) - (g / c) * (x1 - x0)


def _residual(eff: _Effort, T: Array, E: Array, B: Array, xk: Array, xn: Array, ubar: Array,
              u_next: Array, h: float, nodes: Array, weights: Array, mask_a: Array | None,
              rows_a: Array, jacobian: bool = True,
              nl: Any = None) -> tuple[Array, Array | None, Array, Array | None]:
    """Residual, Jacobian, path-averaged effort ``z̄`` and ``∂z̄/∂x_{k+1}`` of one step (module docs).

    ``mask_a`` marks the multipliers of a higher-index system (constant over the step), or is
    ``None`` (index ≤ 1: the whole state moves linearly along the path).  ``nl`` is a
    state-dependent dissipation ``R_nl(z)`` (:class:`~fmu_surrogate.ph.NonlinearPH`), evaluated
    at the step's mean effort: its force ``R_nl(z̄) z̄`` joins ``(J − R) z̄``.
    """
    delta = xn - xk
    if mask_a is None:
        xi = xk + nodes[:, None] * delta
    else:
        xi = np.where(mask_a, xn, xk) + nodes[:, None] * np.where(mask_a, 0.0, delta)
    # the new node is evaluated together with the quadrature points (one call: the cost of a
    # learned effort at a few points is mostly per call)
    pts = xi if mask_a is None else np.vstack([xi, xn[None, :]])
    zs = eff(pts)
    zb = weights @ zs[: xi.shape[0]]
    F = E @ delta - h * (T @ zb + B @ ubar)
    if nl is not None:
        F = F + h * nl.force(zb[None, :])[0]
    if mask_a is not None:  # higher index: the algebraic rows hold at the new node
        F[rows_a] = (T @ zs[-1] + B @ u_next)[rows_a]
    if not jacobian:
        return F, None, zb, None
    Jall = eff.jacobian(pts)
    Jz = Jall[: xi.shape[0]]                    # (q, n, n)
    if mask_a is None:
        dzb = np.tensordot(weights * nodes, Jz, axes=1)
    else:
        dxi = np.where(mask_a[None, :], 1.0, nodes[:, None])     # ∂ξ_q/∂x_{k+1} per column
        dzb = np.einsum("q,qij,qj->ij", weights, Jz, dxi)
    Jac = E - h * (T @ dzb)
    if nl is not None:
        Jac = Jac + h * (nl.force_jacobian(zb[None, :])[0] @ dzb)
    if mask_a is not None:
        Jac[rows_a] = (T @ Jall[-1])[rows_a]
    return F, Jac, zb, dzb


def _van_loan(M: Array, P: Array, h: float) -> Array:
    """``∫₀ʰ exp(Mᵀs) P exp(Ms) ds`` (Van Loan 1978: one exponential of a 2k × 2k block).

    The block holds ``exp(−Mᵀτ)``, which grows where ``exp(Mτ)`` decays: a mode of 1.4e6/s
    (a linear fit's fast lag) over a step of 10 ms overflows it.  So the integral is taken over
    ``τ = h / 2ʲ`` with ``‖M‖₁ τ ≤ 1`` and doubled ``j`` times,
    ``Ω(2τ) = Ω(τ) + exp(Mτ)ᵀ Ω(τ) exp(Mτ)`` (exact: the semigroup property); ``j = 0`` where
    ``‖M‖₁ h ≤ 1``.
    """
    k = M.shape[0]
    scale = float(np.linalg.norm(M, 1)) * h
    j = int(np.ceil(np.log2(scale))) if scale > 1.0 else 0
    big = np.zeros((2 * k, 2 * k))
    big[:k, :k], big[:k, k:], big[k:, k:] = -M.T, P, M
    F = expm(big * (h / 2.0**j))
    E = F[k:, k:]
    omega = E.T @ F[:k, k:]
    for _ in range(j):
        omega = omega + E.T @ omega @ E
        E = E @ E
    return omega


def _exact_steps(system: LinearPH, t: Array, U: Array, x0: Array
                 ) -> tuple[Array, Array, Array, Array]:
    """The exact solution of ``ẋ = A x + B u`` for inputs held over each step, and the exact
    energy integrals of every step (one set of exponentials per distinct step size).

    Returns
    -------
    X : ndarray, shape (N, n)
    Ybar : ndarray, shape (N − 1, m)
        The step means of the outputs (``∫ y dt / h``; with the input held, ``h Ȳᵀu`` is the
        exact supplied energy).
    dissipated, supplied : ndarray, shape (N − 1,)
        ``∫ [z; u]ᵀ W [z; u] dt`` and ``∫ yᵀu dt`` over every step.
    """
    n, m = system.n_states, system.n_inputs
    A = (system.J - system.R) @ system.Q
    Q, C, D, W = system.Q, system.output_matrix.T @ system.Q, system.D, system.W
    M = np.zeros((n + m, n + m))
    M[:n, :n], M[:n, n:] = A, system.input_matrix
    L = np.zeros((n + m, n + m))  # [z; u] = L w
    L[:n, :n], L[n:, n:] = Q, np.eye(m)
    P_diss = L.T @ W @ L
    CD = np.hstack([C, D])  # y = CD w
    P_supp = np.zeros((n + m, n + m))
    P_supp[:, n:] = 0.5 * CD.T
    P_supp = P_supp + P_supp.T  # wᵀ P_supp w = yᵀu
    h_all = np.diff(t)
    keys = np.round(h_all / h_all.max(), 13)
    W0 = np.hstack([np.zeros((t.size - 1, n)), U[:-1]])
    X = np.empty((t.size, n))
    X[0] = x0
    Ybar = np.empty((t.size - 1, m))
    diss, supp = np.empty(t.size - 1), np.empty(t.size - 1)
    steps = {}
    for key in np.unique(keys):
        h = float(h_all[keys == key][0])
        aug = np.zeros((2 * (n + m), 2 * (n + m)))
        aug[: n + m, : n + m], aug[: n + m, n + m:] = M, np.eye(n + m)
        F = expm(aug * h)  # exp(M h) and ∫₀ʰ exp(M s) ds
        steps[float(key)] = (F[:n, : n + m], F[:n, n + m:] / h, _van_loan(M, P_diss, h),
                             _van_loan(M, P_supp, h))
    for k in range(h_all.size):
        Phi, Psi, Vd, Vs = steps[float(keys[k])]
        w = W0[k]
        w[:n] = X[k]
        X[k + 1] = Phi @ w
        xbar = Psi @ w
        Ybar[k] = C @ xbar + D @ w[n:]
        diss[k] = w @ Vd @ w
        supp[k] = w @ Vs @ w
    return X, Ybar, diss, supp
