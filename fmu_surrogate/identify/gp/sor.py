"""Low-rank (subset-of-regressors) Gaussian process for the GP-RVM discrepancy.

The discrepancy covariance is ``K = sf2 Q`` with ``Q = K_xz Kj⁻¹ K_zx`` (squared-exponential
kernel ``exp(-|x - x'|² / 2 ell²)``, ``M`` inducing inputs ``Z``, ``Kj = K_zz + 1e-6 I``) and the
noise-plus-discrepancy covariance is ``C0 = s2 I + sf2 Q``.  Every quantity the GP-RVM needs —
``Phiᵀ C0⁻¹ Phi``, ``Phiᵀ C0⁻¹ y``, ``log det C0``, the expected complete-data log likelihood Q2
(Zhu et al., eq. 23) and its gradient in ``(log s2, log sf2, log ell)`` — is an ``M × M`` expression
in a few products with the ``(N, M)`` kernel matrix: ``K_zxK_xz``, ``K_zx K̇_xz``, ``K_zx Phi``,
``K_zx R`` (``K̇ = ∂K/∂log ell``).  Writing ``U = K_xz Lm⁻ᵀ`` (``Lm Lmᵀ = Kj``) and
``UᵀU = V diag(g) Vᵀ``:

    log det C0 = N log s2 + Σ log(1 + c gᵢ),          c = sf2 / s2
    C0⁻¹       = (I − K_xz W K_zx) / s2,              W = Lm⁻ᵀ V diag(c / (1 + c g)) Vᵀ Lm⁻¹

Cost: ``O(N M (M + K))`` per length scale (two ``(M, N) × (N, M)`` products and one kernel
evaluation), ``O(M³)`` for everything else; memory ``O(N M)``.  A change of ``s2`` or ``sf2`` alone
costs ``O(M)``.  Nothing ``N × N`` is ever formed.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, solve_triangular

from fmu_surrogate.identify.gp.sampling import farthest_point_subset
from fmu_surrogate.ph.efforts.gaussian import gaussian_kernel, squared_distances

__all__ = ["SoRGP", "inducing_inputs"]

JITTER = 1e-6


def inducing_inputs(X: np.ndarray, m: int) -> np.ndarray:
    """``m`` inducing inputs spread over the rows of ``X`` (deterministic).

    One input column: the ``m`` quantiles (distinct values only).  Several: farthest-point
    sampling from the row nearest the mean.

    Parameters
    ----------
    X : ndarray, shape (N, q)
    m : int

    Returns
    -------
    ndarray, shape (M, q), ``M <= m``
    """
    m = max(1, min(int(m), X.shape[0]))
    if X.shape[1] == 1:
        return np.unique(np.quantile(X[:, 0], np.linspace(0.0, 1.0, m)))[:, None]
    s = X.std(axis=0)
    Xs = X / np.where(s > 0, s, 1.0)
    start = int(np.argmin(((Xs - Xs.mean(0)) ** 2).sum(1)))
    return X[farthest_point_subset(X, m, start=start)]


class _Stats:
    """Everything that depends on the length scale only.

    ``U = K_xz Lm⁻ᵀ = Ub diag(√g) Wᵀ`` (thin QR, then SVD of the triangle): ``Ub`` (``N × r``) has
    orthonormal columns spanning the GP's feature space (singular values below ``1e-7`` of the
    largest dropped), so that ``C0⁻¹ = ((I - Ub Ubᵀ) + Ub D Ubᵀ) / s2``
    with ``D = diag(1 / (1 + c g))``: every quadratic form is a sum of non-negative parts, exact
    even when ``s2`` is tiny against ``sf2``.
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray, D2: np.ndarray, ell: float,
                 extra: np.ndarray) -> None:
        self.ell = ell
        M = Z.shape[0]
        self.Kxz = gaussian_kernel(X, Z, ell)                # (N, M)
        self.D2 = D2
        Dzz = squared_distances(Z, Z)
        Kzz = gaussian_kernel(Z, Z, ell)
        self.dKzz = Kzz * Dzz / ell**2                       # ∂K_zz/∂log ell
        self.Lm = np.linalg.cholesky(Kzz + JITTER * np.eye(M))
        U = solve_triangular(self.Lm, self.Kxz.T, lower=True).T   # K_xz Lm⁻ᵀ
        Qr, Rr = np.linalg.qr(U)
        Ur, sv, Wt = np.linalg.svd(Rr)
        keep = sv > 1e-7 * max(sv[0], 1e-300)
        self.g = sv[keep] ** 2
        self.Ub = Qr @ Ur[:, keep]                           # orthonormal, U = Ub S Wᵀ
        self.KU = self.Lm @ (Wt[keep].T * sv[keep])          # K_zx Ub
        Et = self.Ub.T @ extra
        Ep = extra - self.Ub @ Et
        self.Et = Et
        self.EpE = Ep.T @ Ep

    def D(self, c: float) -> np.ndarray:
        return 1.0 / (1.0 + c * self.g)


class SoRGP:
    """Subset-of-regressors GP on fixed inputs with the products GP-RVM needs (see module).

    Parameters
    ----------
    X : ndarray, shape (N, q)
        GP inputs.
    n_inducing : int
        Number of inducing inputs (at most N, fewer if ``X`` has fewer distinct values).
    extra : ndarray, shape (N, p)
        Columns whose products ``K_zx extra`` are kept with each length scale (``[Phi, y]``).
    """

    def __init__(self, X: np.ndarray, n_inducing: int, extra: np.ndarray) -> None:
        self.X = X
        self.Z = inducing_inputs(X, n_inducing)
        self.D2 = squared_distances(X, self.Z)
        self.extra = extra
        self._EtE = extra.T @ extra
        self._cache: _Stats | None = None

    @property
    def n_inducing(self) -> int:
        """Number of inducing inputs actually used."""
        return self.Z.shape[0]

    def stats(self, ell: float) -> _Stats:
        """The length-scale dependent products (the last one is cached).

        Parameters
        ----------
        ell : float
        """
        if self._cache is None or self._cache.ell != ell:
            self._cache = _Stats(self.X, self.Z, self.D2, ell, self.extra)
        return self._cache

    # ---------------------------------------------------------------- E-step quantities
    def whitened(self, s2: float, sf2: float, ell: float) -> tuple[np.ndarray, float]:
        """``extraᵀ C0⁻¹ extra`` and ``log det C0``.

        Parameters
        ----------
        s2, sf2, ell : float
            Noise variance, signal variance, length scale.

        Returns
        -------
        ndarray, shape (p, p)
        float
        """
        N = self.extra.shape[0]
        if sf2 <= 0:
            return self._EtE / s2, N * np.log(s2)
        st = self.stats(ell)
        c = sf2 / s2
        out = (st.EpE + (st.Et.T * st.D(c)) @ st.Et) / s2
        return 0.5 * (out + out.T), N * np.log(s2) + float(np.log1p(c * st.g).sum())

    def weights(self, r: np.ndarray, s2: float, sf2: float, ell: float) -> np.ndarray:
        """Weights ``w`` of the discrepancy posterior mean ``delta(x) = k(x, Z) w`` given the
        residual ``r = y - Phi mu``.

        Parameters
        ----------
        r : ndarray, shape (N,)
        s2, sf2, ell : float

        Returns
        -------
        ndarray, shape (M,)
        """
        if sf2 <= 0:
            return np.zeros(self.n_inducing)
        st = self.stats(ell)
        Az = st.KU @ (st.D(sf2 / s2) * (st.Ub.T @ r)) / s2      # K_zx C0⁻¹ r
        return sf2 * cho_solve((st.Lm, True), Az)

    # ---------------------------------------------------------------- M-step objective
    @staticmethod
    def _noise_part(w: np.ndarray, g: np.ndarray, rt2: np.ndarray, rp2: float, N: int):
        """Value and ``(∂/∂log s2, ∂/∂log sf2)`` at a fixed length scale: ``O(r)``."""
        s2, sf2 = np.exp(w)
        c = sf2 / s2
        D = 1.0 / (1.0 + c * g)
        quad = (rp2 + float(rt2 @ D)) / s2
        f = N * np.log(s2) + float(np.log1p(c * g).sum()) + quad
        df_phi = c * (float(g @ D) - float((g * rt2) @ D**2) / s2)
        return f, np.array([N - quad - df_phi, df_phi])

    def _split(self, st: _Stats, R: np.ndarray):
        Rt = st.Ub.T @ R                                     # (r, p)
        Rp = R - st.Ub @ Rt                                  # part outside the GP features
        return Rt, Rp, (Rt**2).sum(1), float(np.sum(Rp**2))

    def _dlogell(self, st: _Stats, s2: float, sf2: float, Rt, Rp) -> float:
        """``∂/∂log ell`` of ``log det C0 + tr(C0⁻¹ R Rᵀ)``: ``tr(F dC0)``,
        ``F = C0⁻¹ - C0⁻¹ R Rᵀ C0⁻¹``, ``dC0 = sf2 dQ`` (module docstring)."""
        ell = st.ell
        D = st.D(sf2 / s2)
        dKxz = st.Kxz * st.D2 / ell**2
        UtdK = st.Ub.T @ dKxz                                # Ubᵀ K̇_xz
        KUD = st.KU * D
        Az = KUD @ Rt / s2                                   # K_zx C0⁻¹ R
        Ad = (dKxz.T @ Rp + (UtdK.T * D) @ Rt) / s2          # K̇_zx C0⁻¹ R
        P1 = KUD @ UtdK / s2 - Az @ Ad.T                     # K_zx F K̇_xz
        P2 = KUD @ st.KU.T / s2 - Az @ Az.T                  # K_zx F K_xz
        KjP1 = cho_solve((st.Lm, True), P1)
        KjP2 = cho_solve((st.Lm, True), P2)
        KjdK = cho_solve((st.Lm, True), st.dKzz)
        return float(sf2 * (2.0 * np.trace(KjP1) - np.sum(KjP2 * KjdK.T)))

    def q2(self, z: np.ndarray, R: np.ndarray) -> tuple[float, np.ndarray]:
        """``-2 Q2 - N log 2π`` = ``log det C0 + tr(C0⁻¹ R Rᵀ)`` and its gradient.

        Parameters
        ----------
        z : ndarray, shape (3,)
            ``(log s2, log sf2, log ell)``.
        R : ndarray, shape (N, p)
            ``[y - Phi mu, Phi_a chol(Sigma)]``: ``R Rᵀ`` is the expected residual outer product.

        Returns
        -------
        value : float
        gradient : ndarray, shape (3,)
        """
        s2, sf2, ell = np.exp(z)
        st = self.stats(ell)
        Rt, Rp, rt2, rp2 = self._split(st, R)
        f, dw = self._noise_part(z[:2], st.g, rt2, rp2, R.shape[0])
        return f, np.array([dw[0], dw[1], self._dlogell(st, s2, sf2, Rt, Rp)])

    def maximise_q2(self, R: np.ndarray, z0: np.ndarray, bounds: np.ndarray) -> np.ndarray:
        """Maximise Q2 over ``(log s2, log sf2, log ell)`` from ``z0`` within ``bounds``.

        The noise and signal variances are optimised for each length scale at ``O(r)`` cost per
        step (L-BFGS-B), the length scale on that profile (L-BFGS-B in one variable, gradient by
        the envelope theorem), so each new length scale costs one kernel evaluation and
        factorisation.

        Parameters
        ----------
        R : ndarray, shape (N, p)
            As in :meth:`q2`.
        z0 : ndarray, shape (3,)
            Start.
        bounds : ndarray, shape (3, 2)
            Lower and upper bounds of ``z``.

        Returns
        -------
        z : ndarray, shape (3,)
        value : float
            ``-2 Q2 - N log 2π`` at ``z``.
        """
        from scipy.optimize import minimize

        N = R.shape[0]
        w = np.clip(np.asarray(z0[:2], dtype=float), bounds[:2, 0], bounds[:2, 1])

        def profile(lam):
            nonlocal w
            st = self.stats(float(np.exp(lam[0])))
            Rt, Rp, rt2, rp2 = self._split(st, R)
            res = minimize(lambda v: self._noise_part(v, st.g, rt2, rp2, N), w, jac=True,
                           method="L-BFGS-B", bounds=bounds[:2],
                           options={"maxiter": 100, "ftol": 1e-13, "gtol": 1e-9 * N})
            w = res.x
            s2, sf2 = np.exp(w)
            return res.fun / N, np.array([self._dlogell(st, s2, sf2, Rt, Rp) / N])

        lam0 = np.clip([z0[2]], bounds[2, 0], bounds[2, 1])
        out = minimize(profile, lam0, jac=True, method="L-BFGS-B", bounds=bounds[2:],
                       options={"maxiter": 30, "maxfun": 40})
        f = profile(out.x)[0]                               # sets w at the returned ell
        return np.r_[w, out.x], f * N
