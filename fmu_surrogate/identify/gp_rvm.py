"""GP-RVM: sparse Bayesian term selection with a Gaussian-process model discrepancy.

docs/design.md §5 (Zhu et al.): ``y = Phi theta + delta(x) + eps`` with ``theta ~ N(0, A^-1)``,
``delta ~ GP(0, K)`` (squared exponential: signal variance ``sf2``, length scale ``ell``) and
``eps ~ N(0, s2 I)``. EM: the E-step gives ``mu, Sigma``; ``alpha`` follows the fast rule
(eqs. 29-36: add / re-estimate / delete the candidate with the largest likelihood gain);
``sf2, ell, s2`` maximise Q2 (eq. 23). Start without the GP and ``s2 = 1 %`` of ``var(y)``;
stop when ``|L_new - L_old| / (|L_new| + |L_old|) < tol`` (paper: 1e-6).

Scaling: the GP covariance is the subset-of-regressors (Nyström) form ``K ≈ U U^T`` with
``U = K_nm L_mm^-T`` on ``n_inducing`` inducing inputs at quantiles of the GP input, so every
solve with ``s2 I + K`` is a Woodbury solve: ``O(N M^2)`` per evaluation instead of ``O(N^3)``.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import minimize

from fmu_surrogate.identify.base import PHEstimator
from fmu_surrogate.identify.library import unit_scales
from fmu_surrogate.identify.rvm import (
    RVM,
    RVMInputError,
    RVMResult,
    _validate,
    candidate_gains,
)

__all__ = ["GPRVM"]


def _se(a: np.ndarray, b: np.ndarray, ell: float) -> np.ndarray:
    d2 = np.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)
    return np.exp(-0.5 * d2 / ell**2)


class _Noise:
    """``s2 I + sf2 U U^T`` with Woodbury solves (``U`` has unit signal variance)."""

    def __init__(self, U: np.ndarray | None, sf2: float, s2: float) -> None:
        self.s2 = s2
        self.N = None
        if U is None or sf2 <= 0:
            self.W = None
            return
        self.W = np.sqrt(sf2) * U
        M = self.W.shape[1]
        self.L = np.linalg.cholesky(s2 * np.eye(M) + self.W.T @ self.W)

    def solve(self, X: np.ndarray) -> np.ndarray:
        if self.W is None:
            return X / self.s2
        t = np.linalg.solve(self.L.T, np.linalg.solve(self.L, self.W.T @ X))
        return (X - self.W @ t) / self.s2

    def logdet(self, N: int) -> float:
        if self.W is None:
            return N * np.log(self.s2)
        M = self.W.shape[1]
        return (N - M) * np.log(self.s2) + 2 * np.log(np.diag(self.L)).sum()


class GPRVM(RVM, PHEstimator):
    """Sparse Bayesian regression with a GP discrepancy on ``gp_inputs``.

    Parameters
    ----------
    max_iter : int
        Budget of EM iterations.
    tol : float
        Relative change of the log marginal likelihood that stops the EM (paper: 1e-6).
    n_inducing : int
        Inducing inputs of the low-rank GP (at most N).
    names : sequence of str or None
        Term names used by :meth:`equations`.
    """

    def __init__(self, *, max_iter: int = 200, tol: float = 1e-6, n_inducing: int = 60,
                 names=None) -> None:
        self.max_iter = max_iter
        self.tol = tol
        self.n_inducing = n_inducing
        self.names = names

    def fit(self, Phi: np.ndarray, y: np.ndarray, gp_inputs: np.ndarray | None = None) -> GPRVM:
        """EM fit (see the module docstring).

        Parameters
        ----------
        Phi : ndarray, shape (N, K)
        y : ndarray, shape (N,)
        gp_inputs : ndarray, shape (N, q) or (N,), or None
            Columns the discrepancy GP sees; ``None`` fits without a GP (plain RVM by EM).

        Returns
        -------
        GPRVM

        Raises
        ------
        RVMInputError
            On malformed or non-finite input, or ``gp_inputs`` of the wrong length.
        """
        t0 = time.perf_counter()
        Phi, y = _validate(Phi, y)
        N, K = Phi.shape
        X = None
        if gp_inputs is not None:
            X = np.asarray(gp_inputs, dtype=float).reshape(N, -1) if np.size(gp_inputs) % N == 0 \
                and np.shape(gp_inputs)[0] == N else None
            if X is None:
                raise RVMInputError(f"gp_inputs must have N = {N} rows like Phi; got shape "
                                    f"{np.shape(gp_inputs)}.")
            if not np.all(np.isfinite(X)):
                raise RVMInputError("gp_inputs contains NaN or inf; drop those samples first.")
        scale = unit_scales(Phi)
        P = Phi / scale
        zero_col = np.all(Phi == 0, axis=0)
        vy = float(np.var(y)) or float(np.mean(y**2)) or 1.0
        s2, sf2 = 0.01 * vy, 0.0
        xs = X.std(axis=0).mean() if X is not None else 1.0
        ell = float(xs) if xs > 0 else 1.0
        U_cache: dict = {}

        def basis(ell: float):
            if X is None:
                return None
            key = round(np.log(ell), 12)
            if key not in U_cache:
                M = min(self.n_inducing, N)
                Z = np.quantile(X, np.linspace(0, 1, M), axis=0)
                Z = np.unique(Z, axis=0)
                Kmm = _se(Z, Z, ell) + 1e-8 * np.eye(Z.shape[0])
                Lm = np.linalg.cholesky(Kmm)
                U_cache.clear()
                U_cache[key] = np.linalg.solve(Lm, _se(X, Z, ell).T).T
            return U_cache[key]

        alpha = np.full(K, np.inf)
        hist: list[float] = []
        reason = "max_iter reached"
        it = 0
        for it in range(1, int(self.max_iter) + 1):
            noise = _Noise(basis(ell), sf2, s2)
            CP = noise.solve(P)
            G = P.T @ CP
            g = CP.T @ y
            act = np.flatnonzero(np.isfinite(alpha))
            Sigma, mu = self._posterior(G, g, alpha, act)
            L = self._lml_gp(noise, y, G, g, alpha, act, Sigma, N)
            hist.append(L)
            if len(hist) > 1 and abs(hist[-1] - hist[-2]) / (abs(hist[-1]) + abs(hist[-2])) \
                    < self.tol and it > 2:
                reason = "converged: relative change of the log marginal likelihood < tol"
                break
            alpha = self._alpha_step(G, g, alpha, act, Sigma, zero_col)
            act = np.flatnonzero(np.isfinite(alpha))
            Sigma, mu = self._posterior(G, g, alpha, act)
            s2, sf2, ell = self._m_step(P, y, act, Sigma, mu, s2, sf2, ell, basis, vy)
        noise = _Noise(basis(ell), sf2, s2)
        CP = noise.solve(P)
        G, g = P.T @ CP, CP.T @ y
        act = np.flatnonzero(np.isfinite(alpha))
        Sigma, mu = self._posterior(G, g, alpha, act)
        coef = np.zeros(K)
        cov = np.zeros((K, K))
        coef[act] = mu / scale[act]
        cov[np.ix_(act, act)] = Sigma / np.outer(scale[act], scale[act])
        self.coef_, self.coef_cov_, self.active_ = coef, cov, np.isfinite(alpha)
        self.alpha_ = alpha * scale**2
        self.noise_variance_ = float(s2)
        self.gp_ = {"signal_variance": float(sf2), "length_scale": float(ell),
                    "kernel": "squared_exponential", "n_inducing": int(min(self.n_inducing, N))}
        self.log_marginal_likelihood_ = self._lml_gp(noise, y, G, g, alpha, act, Sigma, N)
        # GP posterior weights for prediction: delta(x*) = k*^T (s2 I + K)^-1 (y - Phi mu)
        self._X = X
        self._resid_w = noise.solve(y - P[:, act] @ mu) if X is not None else None
        self._basis_ell = ell
        self.n_iter_ = it
        self.result_ = RVMResult(n_iter=it, stopping_reason=reason, cost_history=np.asarray(hist),
                                 time=time.perf_counter() - t0, n_active=int(act.size))
        return self

    @staticmethod
    def _posterior(G, g, alpha, act):
        if not act.size:
            return np.zeros((0, 0)), np.zeros(0)
        H = np.diag(alpha[act]) + G[np.ix_(act, act)]
        Sigma = np.linalg.inv(H)
        Sigma = 0.5 * (Sigma + Sigma.T)
        return Sigma, Sigma @ g[act]

    @staticmethod
    def _lml_gp(noise, y, G, g, alpha, act, Sigma, N) -> float:
        quad = float(y @ noise.solve(y))
        logdet = noise.logdet(N)
        if act.size:
            H = np.diag(alpha[act]) + G[np.ix_(act, act)]
            logdet += np.linalg.slogdet(H)[1] - np.log(alpha[act]).sum()
            quad -= float(g[act] @ Sigma @ g[act])
        return -0.5 * (N * np.log(2 * np.pi) + logdet + quad)

    @staticmethod
    def _alpha_step(G, g, alpha, act, Sigma, zero_col):
        """One add / re-estimate / delete (eqs. 29-36), the candidate with the largest gain."""
        if act.size:
            B = G[act]
            S = np.diag(G) - np.einsum("ak,ab,bk->k", B, Sigma, B)
            Q = g - B.T @ (Sigma @ g[act])
        else:
            S, Q = np.diag(G).copy(), g.copy()
        dL, new = candidate_gains(S, Q, alpha, act, zero_col, 1e-12 * np.max(np.diag(G)))
        out = alpha.copy()
        j = int(np.argmax(dL))
        if dL[j] > 0:
            out[j] = new[j]
        return out

    def _m_step(self, P, y, act, Sigma, mu, s2, sf2, ell, basis, vy):
        """Maximise Q2 (eq. 23) over log s2, log sf2, log ell."""
        r = y - P[:, act] @ mu
        Pa = P[:, act]
        N = y.shape[0]
        # tr(C0^-1 Pa Sigma Pa^T) = tr(Sigma Pa^T C0^-1 Pa)

        def negq2(z):
            s2_, sf2_, ell_ = np.exp(z) if basis(1.0) is not None else (np.exp(z[0]), 0.0, ell)
            nz = _Noise(basis(ell_), sf2_, s2_)
            val = nz.logdet(N) + r @ nz.solve(r)
            if act.size:
                val += np.sum(Sigma * (Pa.T @ nz.solve(Pa)))
            return 0.5 * val

        if basis(1.0) is None:
            z0 = np.array([np.log(s2)])
            bounds = [(np.log(vy) - 30, np.log(vy) + 2)]
        else:
            z0 = np.log([s2, max(sf2, 1e-4 * vy), ell])
            bounds = [(np.log(vy) - 30, np.log(vy) + 2), (np.log(vy) - 30, np.log(vy) + 2),
                      (np.log(ell) - 6, np.log(ell) + 6)]
        res = minimize(negq2, z0, method="L-BFGS-B", bounds=bounds, options={"maxiter": 30})
        z = res.x if res.fun <= negq2(z0) else z0
        if basis(1.0) is None:
            return float(np.exp(z[0])), 0.0, ell
        return float(np.exp(z[0])), float(np.exp(z[1])), float(np.exp(z[2]))

    def predict(self, Phi: np.ndarray, gp_inputs: np.ndarray | None = None,
                return_std: bool = False):
        """Mean of ``Phi coef + delta(gp_inputs)`` (the GP term only if ``gp_inputs`` given).

        Parameters
        ----------
        Phi : ndarray, shape (M, K)
        gp_inputs : ndarray, shape (M, q) or None
        return_std : bool
            Also return the standard deviation of the parametric part plus the noise.

        Returns
        -------
        mean : ndarray, shape (M,)
        std : ndarray, shape (M,)
            Only if ``return_std``.
        """
        out = super().predict(Phi, return_std=return_std)
        if gp_inputs is None or self._X is None:
            return out
        Xs = np.asarray(gp_inputs, dtype=float).reshape(np.shape(Phi)[0], -1)
        # SoR cross-covariance k(x*, X) = sf2 U* U^T
        M = min(self.n_inducing, self._X.shape[0])
        Z = np.unique(np.quantile(self._X, np.linspace(0, 1, M), axis=0), axis=0)
        ell = self._basis_ell
        Lm = np.linalg.cholesky(_se(Z, Z, ell) + 1e-8 * np.eye(Z.shape[0]))
        U = np.linalg.solve(Lm, _se(self._X, Z, ell).T).T
        Us = np.linalg.solve(Lm, _se(Xs, Z, ell).T).T
        delta = self.gp_["signal_variance"] * Us @ (U.T @ self._resid_w)
        if return_std:
            return out[0] + delta, out[1]
        return out + delta
