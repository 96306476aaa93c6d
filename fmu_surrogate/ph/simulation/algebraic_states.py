"""Algebraic states of a pH DAE in the implicit integrators (:mod:`fmu_surrogate.ph.simulation.integrators`
explains the method): which rows and states are algebraic, the consistent initial state of an
index-1 system, and the node values of the hidden constraint of a higher-index system.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.ph.simulation.newton import _STALL, RCOND, ConvergenceError, _Effort, _solve
from fmu_surrogate.ph.system import PHDAE

Array = NDArray[np.float64]

#: (∂c/∂x_d)(∂v_d/∂x_a) with singular values above this fraction of its scale: index 2
_INDEX2 = 1e-3


def _algebraic(system: PHDAE) -> tuple[Array, Array]:
    """Indices of algebraic rows (zero rows of E) and algebraic states (zero columns)."""
    E = system.E
    return (np.flatnonzero(~np.any(E != 0, axis=1)), np.flatnonzero(~np.any(E != 0, axis=0)))


class _HiddenConstraint:
    """The hidden constraint of a higher-index system and its solution for the algebraic states
    at the nodes (module doc); vectorised over the nodes."""

    def __init__(self, eff: _Effort, T: Array, E: Array, B: Array, rows_a: Array,
                 cols_a: Array, x0: Array) -> None:
        n = E.shape[0]
        self.eff, self.T, self.B, self.rows_a, self.cols_a = eff, T, B, rows_a, cols_a
        self.rows_d = np.setdiff1d(np.arange(n), rows_a)
        self.cols_d = np.setdiff1d(np.arange(n), cols_a)
        self.E_d_pinv = np.linalg.pinv(E[np.ix_(self.rows_d, self.cols_d)])
        # index 2 when c₁ depends on x_a: (∂c/∂x_d)(∂v_d/∂x_a) regular (decided once, at x0,
        # with a loose threshold — a learned effort is not structurally exact)
        TJ = T @ eff.jacobian(x0[None, :])[0]
        G = TJ[np.ix_(rows_a, self.cols_d)]
        Ha = self.E_d_pinv @ TJ[np.ix_(self.rows_d, cols_a)]
        sv = np.linalg.svd(G @ Ha, compute_uv=False)
        scale = np.linalg.norm(G, 2) * np.linalg.norm(Ha, 2)
        self.constraint = self._c1 if sv.min() > _INDEX2 * scale else self._c2

    def _flow(self, X: Array, U: Array) -> Array:
        F = self.eff(X) @ self.T.T + (U @ self.B.T if self.B.size else 0.0)
        V = np.zeros_like(X)
        V[:, self.cols_d] = F[:, self.rows_d] @ self.E_d_pinv.T
        return V

    def _c1(self, X: Array, U: Array) -> Array:
        Jz = self.eff.jacobian(X)
        return np.einsum("ij,njk,nk->ni", self.T[self.rows_a], Jz, self._flow(X, U))

    def _c2(self, X: Array, U: Array) -> Array:
        V = self._flow(X, U)
        # O(ε²) truncation ≈ 1e-8 relative; a smaller ε amplifies the noise of an effort
        # Jacobian taken by differences
        eps = (1e-4 * (1.0 + np.abs(X).max(axis=1))
               / np.maximum(np.abs(V).max(axis=1), 1e-300))[:, None]
        return (self._c1(X + eps * V, U) - self._c1(X - eps * V, U)) / (2.0 * eps)

    def _jac_a(self, c, X: Array, U: Array, c0: Array) -> Array:
        """``∂c/∂x_a`` (N, n_a, n_a) by forward differences (exact when c is affine in x_a —
        constraint forces — else a chord slope; Newton then converges linearly to the root)."""
        out = np.empty((X.shape[0], self.rows_a.size, self.cols_a.size))
        for j, col in enumerate(self.cols_a):
            d = 1e-3 * (1.0 + np.abs(X[:, col]))
            Xe = X.copy()
            Xe[:, col] += d
            out[:, :, j] = (c(Xe, U) - c0) / d[:, None]
        return out

    def node_states(self, X: Array, U: Array, tol: float, max_newton: int) -> Array:
        """``X`` with the algebraic states solved from ``c₁ = 0`` (index 2) or ``c₂ = 0``."""
        c = self.constraint
        X = X.copy()
        c0 = c(X, U)
        Ja_inv = np.linalg.pinv(self._jac_a(c, X, U, c0), rcond=RCOND)
        for _ in range(max_newton):
            dx = -np.einsum("nij,nj->ni", Ja_inv, c0)
            X[:, self.cols_a] += dx
            if np.abs(dx).max() <= 1e3 * tol * (1.0 + np.abs(X[:, self.cols_a]).max()):
                break
            c0 = c(X, U)
        return X


def _consistent(system: PHDAE, eff: _Effort, x0: Array, u0: Array, rows_a: Array,
                cols_a: Array, tol: float, max_newton: int) -> Array:
    """Solve the algebraic rows at t_0 for the algebraic states (index 1)."""
    T = system.J - system.R
    x = x0.copy()
    best = (np.inf, x0.copy())
    prev = np.inf
    for it in range(max_newton):
        z = eff(x[None, :])[0]
        r = (T @ z + system.input_matrix @ u0)[rows_a]
        rn = np.abs(r).max()
        if rn < best[0]:
            best = (rn, x.copy())
        Bu = system.input_matrix @ u0
        scale = np.abs(T @ z).max() + np.abs(Bu).max() if Bu.size else 1.0
        # stalled at round-off: the residual no longer shrinks, the best iterate at its floor
        # (a learned effort's round-off scatters the residual around it)
        if it > 1 and rn > 0.5 * prev and best[0] <= _STALL * (scale + 1e-300):
            return best[1]
        prev = rn
        Jaa = (T @ eff.jacobian(x[None, :])[0])[np.ix_(rows_a, cols_a)]
        dx = _solve(Jaa, -r)
        x[cols_a] += dx
        if np.max(np.abs(dx)) <= tol * (1.0 + np.max(np.abs(x))):
            return x
    Jaa = (T @ eff.jacobian(x0[None, :])[0])[np.ix_(rows_a, cols_a)]
    cond = np.linalg.cond(Jaa)
    hint = "" if cond < 1e3 else (
        f" Their Jacobian with respect to the algebraic states is ill-conditioned at x0 "
        f"(condition number {cond:.1e}): the algebraic rows barely determine the algebraic "
        f"states — typical of a learned effort that expresses a differential effort through "
        f"algebraic states where they coincide on the data; give the algebraic efforts as "
        f"known parts and the differential ones as functions of the differential states.")
    raise ConvergenceError("the algebraic equations have no solution near x0 at t_0; pass a "
                           "consistent initial state." + hint)
