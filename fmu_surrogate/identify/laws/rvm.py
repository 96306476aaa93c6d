"""Relevance vector machine by Tipping & Faul's fast marginal-likelihood maximisation.

docs/design.md §5. Each iteration evaluates, for every candidate term, the change of the log
marginal likelihood of adding it, re-estimating its precision or deleting it (from the sparsity
and quality factors ``s_i``, ``q_i``) and applies the best one; the noise variance is re-estimated
from the residual. The columns are scaled to unit root-mean-square inside
(:func:`~fmu_surrogate.identify.laws.library.unit_scales`), so the selection does not depend on units,
and ``coef_`` is reported in the original units. Pruned terms have ``coef_`` exactly ``0.0``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from fmu_surrogate.errors import FmuSurrogateError
from fmu_surrogate.identify.base import FitResult, PHEstimator
from fmu_surrogate.identify.laws.library import unit_scales

__all__ = ["NOISE_FLOOR", "RVM", "RVMInputError", "RVMResult"]

#: Smallest noise variance, relative to ``mean(y²)``: below it the fast updates lose their
#: precision (noise-free data then give the exact law with this tiny noise variance).
NOISE_FLOOR = 1e-10


class RVMInputError(FmuSurrogateError, ValueError):
    """The design matrix or target given to a sparse Bayesian fit is malformed."""


class RVMInputTypeError(FmuSurrogateError, TypeError):
    """Input of a type the regression cannot use (sparse matrices, objects that are not numbers)."""


def _input_error(exc: Exception, what: str) -> Exception:
    cls = RVMInputTypeError if isinstance(exc, TypeError) else RVMInputError
    return cls(f"{exc} ({what})")


@dataclass(frozen=True)
class RVMResult(FitResult):
    """Fit record of :class:`RVM`; ``cost_history`` is the log marginal likelihood per iteration.

    Parameters
    ----------
    n_active : int
        Number of selected terms.
    """

    n_active: int = 0


def _validate(est: Any, Phi: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """``Phi (N, K)`` and ``y (N,)`` as float arrays, checked as scikit-learn checks regressors.

    Sets ``n_features_in_``.  Sparse, complex, empty, NaN/inf and single-sample input is refused
    with scikit-learn's own message (the one its estimator checks expect) plus what to do.
    """
    from sklearn.utils.validation import validate_data

    try:
        return validate_data(est, Phi, y, dtype=np.float64, y_numeric=True, ensure_min_samples=2)
    except (ValueError, TypeError) as exc:
        raise _input_error(exc, "fit takes Phi (N, K) candidate terms and y (N,) targets; at "
                                "least 2 finite samples are needed to estimate a noise "
                                "variance.") from exc


def _validate_predict(est: Any, Phi: Any) -> np.ndarray:
    """``Phi (M, K)`` for :meth:`RVM.predict`, with the K terms the estimator was fitted on."""
    from sklearn.utils.validation import validate_data

    try:
        return validate_data(est, Phi, dtype=np.float64, reset=False)
    except (ValueError, TypeError) as exc:
        raise _input_error(exc, f"predict takes Phi (M, {est.coef_.shape[0]}) of the fitted "
                                f"candidate terms.") from exc


def _design(est, Phi, library) -> np.ndarray:
    """``Phi`` itself, or the library's terms of the named columns in ``Phi``; sets the names."""
    if library is not None:
        Phi = library.transform(Phi)
        names = list(library.names)
    else:
        K = np.shape(Phi)[1] if np.ndim(Phi) == 2 else 0
        names = [f"x{i}" for i in range(K)]
    est.feature_names_ = list(est.names) if est.names is not None else names
    est.target_, est.library_, est.sources_ = "y", library, {}
    est.derivative_ = est.position_ = None
    return Phi


def candidate_gains(S: np.ndarray, Q: np.ndarray, alpha: np.ndarray, act: np.ndarray,
                    zero_col: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """Tipping & Faul's change of the log marginal likelihood for each candidate.

    Parameters
    ----------
    S, Q : ndarray, shape (K,)
        Sparsity and quality factors of every candidate against the current model.
    alpha : ndarray, shape (K,)
        Current precisions (``inf`` for terms not in the model).
    act : ndarray of int
        Indices of the terms in the model.
    zero_col : ndarray of bool, shape (K,)
        Candidates that can never enter (all-zero columns).
    floor : float
        ``S`` at or below this counts as zero (no information in that column).

    Returns
    -------
    gains : ndarray, shape (K,)
        Increase of the log marginal likelihood by adding, re-estimating or deleting each
        candidate (``-inf`` where no update applies).
    new_alpha : ndarray, shape (K,)
        The precision each candidate would get (``inf``: delete / stay out).
    """
    s, q = S.copy(), Q.copy()
    a = alpha[act]
    s[act] = a * S[act] / (a - S[act])
    q[act] = a * Q[act] / (a - S[act])
    theta = q**2 - s
    good = (theta > 0) & ~zero_col & (S > floor)
    gains = np.full(alpha.shape, -np.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        new = np.where(good, s**2 / np.where(good, theta, 1.0), np.inf)
        inact = ~np.isfinite(alpha)
        add = good & inact
        gains[add] = (Q[add]**2 - S[add]) / S[add] + np.log(S[add] / Q[add]**2)
        re = good & ~inact
        d = 1.0 / new[re] - 1.0 / alpha[re]
        gains[re] = Q[re]**2 / (S[re] + 1.0 / d) - np.log1p(S[re] * d)
        de = ~good & ~inact
        gains[de] = Q[de]**2 / (S[de] - alpha[de]) - np.log1p(-S[de] / alpha[de])
    return np.where(np.isfinite(gains), gains, -np.inf), new


class RVM(PHEstimator):
    """Sparse Bayesian linear regression ``y ≈ Phi @ coef`` (fast marginal likelihood).

    Parameters
    ----------
    max_iter : int
        Budget of add/re-estimate/delete steps.
    tol : float
        Convergence: no candidate changes the log marginal likelihood by more than ``tol``.
    noise_variance : float or None
        Fixed noise variance; ``None`` estimates it (start: 1 % of ``var(y)``).
    names : sequence of str or None
        Term names used by :meth:`equations`.
    """

    def __init__(self, *, max_iter: int = 1000, tol: float = 1e-6,
                 noise_variance: float | None = None, names=None) -> None:
        self.max_iter = max_iter
        self.tol = tol
        self.noise_variance = noise_variance
        self.names = names

    def fit(self, Phi: np.ndarray, y: np.ndarray, *, library=None) -> RVM:
        """Select terms and estimate their coefficients.

        Parameters
        ----------
        Phi : ndarray, shape (N, K)
            Design matrix; with ``library``, the library's named columns ``(N, n_columns)``.
        y : ndarray, shape (N,)
        library : CandidateLibrary, optional
            Builds the design matrix from the named columns in ``Phi`` and names the terms.

        Returns
        -------
        RVM

        Raises
        ------
        RVMInputError
            On malformed or non-finite input.

        Notes
        -----
        Documented degenerate results: if no term explains ``y`` better than noise (e.g.
        ``y`` is zero or pure noise), every term is pruned, ``coef_`` is all zeros and
        ``noise_variance_`` is ``mean(y**2)``. Zero columns are never selected; of exactly
        duplicate columns at most one is selected. ``N < K`` is allowed.
        """
        t0 = time.perf_counter()
        Phi = _design(self, Phi, library)
        Phi, y = _validate(self, Phi, y)
        N, K = Phi.shape
        scale = unit_scales(Phi)
        P = Phi / scale
        zero_col = np.all(Phi == 0, axis=0)
        fixed = self.noise_variance is not None
        vy = float(np.var(y)) if np.var(y) > 0 else float(np.mean(y**2))
        sigma2 = float(self.noise_variance) if fixed else max(0.01 * vy, 1e-300)
        PtP = P.T @ P
        Pty = P.T @ y
        yy = float(y @ y)
        alpha = np.full(K, np.inf)
        hist: list[float] = []
        reason = "max_iter reached"
        it = 0
        mu = np.zeros(0)
        Sigma = np.zeros((0, 0))
        if yy == 0.0:  # nothing to explain: documented all-pruned result
            reason = "y is identically zero: every term pruned"
            sigma2 = float(self.noise_variance) if fixed else 0.0
            self._finish(P, y, alpha, max(sigma2, 1e-300), scale, np.zeros(0, dtype=int))
            self.noise_variance_ = sigma2
            self.n_iter_ = 0
            self.result_ = RVMResult(n_iter=0, stopping_reason=reason, cost_history=np.zeros(0),
                                     time=time.perf_counter() - t0, n_active=0)
            return self
        for it in range(1, int(self.max_iter) + 1):
            act = np.flatnonzero(np.isfinite(alpha))
            beta = 1.0 / sigma2
            if act.size:
                H = np.diag(alpha[act]) + beta * PtP[np.ix_(act, act)]
                L = np.linalg.cholesky(H)
                Linv = np.linalg.solve(L, np.eye(act.size))
                Sigma = Linv.T @ Linv
                mu = beta * Sigma @ Pty[act]
                B = PtP[act]                                   # (a, K)
                S = beta * np.diag(PtP) - beta**2 * np.einsum("ak,ab,bk->k", B, Sigma, B)
                Q = beta * Pty - beta**2 * B.T @ (Sigma @ Pty[act])
            else:
                mu, Sigma = np.zeros(0), np.zeros((0, 0))
                S = beta * np.diag(PtP)
                Q = beta * Pty
            a_act = alpha[act]
            resid = y - P[:, act] @ mu if act.size else y
            hist.append(self._lml(P[:, act], y, alpha[act], sigma2))
            dL, new_alpha = candidate_gains(S, Q, alpha, act, zero_col, 1e-12 * beta)
            j = int(np.argmax(dL))
            noise_change = 0.0
            if not fixed:
                gamma = 1.0 - a_act * np.diag(Sigma) if act.size else np.zeros(0)
                dof = max(N - float(gamma.sum()), 1e-12)
                new_s2 = max(float(resid @ resid) / dof, NOISE_FLOOR * max(yy / N, 1e-300))
                noise_change = abs(np.log(new_s2 / sigma2))
            if dL[j] <= self.tol and noise_change <= self.tol:
                reason = "converged: no update changes the log marginal likelihood by > tol"
                break
            if dL[j] > self.tol:
                alpha[j] = new_alpha[j]  # inf: delete
            if not fixed:
                sigma2 = new_s2
        act = np.flatnonzero(np.isfinite(alpha))
        self._finish(P, y, alpha, sigma2, scale, act)
        self.n_iter_ = it
        self.result_ = RVMResult(n_iter=it, stopping_reason=reason,
                                 cost_history=np.asarray(hist),
                                 time=time.perf_counter() - t0, n_active=int(act.size))
        return self

    @staticmethod
    def _lml(Pa: np.ndarray, y: np.ndarray, alpha: np.ndarray, sigma2: float) -> float:
        """Log marginal likelihood by the Woodbury form: ``O(N a²)``, nothing ``N × N``."""
        N = y.shape[0]
        beta = 1.0 / sigma2
        if not alpha.size:
            return float(-0.5 * (N * np.log(2 * np.pi * sigma2) + beta * y @ y))
        H = np.diag(alpha) + beta * Pa.T @ Pa
        Lh = np.linalg.cholesky(H)
        b = np.linalg.solve(Lh, beta * Pa.T @ y)
        logdet = 2 * np.log(np.diag(Lh)).sum() - np.log(alpha).sum() + N * np.log(sigma2)
        quad = beta * y @ y - b @ b
        return float(-0.5 * (N * np.log(2 * np.pi) + logdet + quad))

    def _finish(self, P, y, alpha, sigma2, scale, act) -> None:
        K = P.shape[1]
        beta = 1.0 / sigma2
        coef = np.zeros(K)
        cov = np.zeros((K, K))
        if act.size:
            H = np.diag(alpha[act]) + beta * P[:, act].T @ P[:, act]
            Sig = np.linalg.inv(H)
            Sig = 0.5 * (Sig + Sig.T)
            mu = beta * Sig @ (P[:, act].T @ y)
            coef[act] = mu / scale[act]
            cov[np.ix_(act, act)] = Sig / np.outer(scale[act], scale[act])
        self.coef_ = coef
        self.coef_cov_ = cov
        self.active_ = np.isfinite(alpha)
        self.alpha_ = alpha * scale**2
        self.noise_variance_ = float(sigma2)
        self.log_marginal_likelihood_ = self._lml(P[:, act], y, alpha[act], sigma2)

    def predict(self, Phi: np.ndarray, return_std: bool = False):
        """Predictive mean (and standard deviation including the noise).

        Parameters
        ----------
        Phi : ndarray, shape (M, K)
        return_std : bool

        Returns
        -------
        mean : ndarray, shape (M,)
        std : ndarray, shape (M,)
            Only if ``return_std``.
        """
        self._check_fitted()
        Phi = _validate_predict(self, Phi)
        mean = Phi @ self.coef_
        if not return_std:
            return mean
        var = np.einsum("mk,kl,ml->m", Phi, self.coef_cov_, Phi) + self.noise_variance_
        return mean, np.sqrt(var)

    def equations(self, precision: int = 3) -> str:
        """The discovered law with ±2σ of each selected coefficient.

        Parameters
        ----------
        precision : int
            Significant digits.

        Returns
        -------
        str
        """
        self._check_fitted()
        names = self.feature_names_
        sd = np.sqrt(np.diag(self.coef_cov_))
        parts = [f"({self.coef_[i]:.{precision}g} ± {2 * sd[i]:.{precision}g}) {names[i]}"
                 for i in np.flatnonzero(self.active_)]
        lhs = getattr(self, "target_", "y")
        return f"{lhs} = " + (" + ".join(parts) if parts else "0")

    def fit_dataset(self, ds, *, target: str, library, runs=None, derivative: str = "auto",
                    position: str | None = None):
        """Discover the law ``target = Σ coef · term`` from a harvested dataset.

        Parameters
        ----------
        ds : xarray.Dataset or path
            A harvested dataset (:func:`fmu_surrogate.harvest`).
        target : str
            Left-hand side: a recorded variable or ``"der(NAME)"`` (estimated with
            :mod:`fmu_surrogate.identify.derivatives` when the FMU did not export it).
        library : CandidateLibrary
            Candidate terms of named dataset columns.
        runs : sequence of int, optional
            Run labels to pool; default every successful run.
        derivative : {"auto", "spline", "fd", "gp", "interval"}
            Estimator of derivatives the dataset does not hold; ``"interval"`` estimates none
            and regresses the integral form of the second-order law ``target = der(VELOCITY)``
            over each sample interval — no damping bias from a zero-order-hold input
            (:func:`~fmu_surrogate.identify.laws.data.law_arrays`); ``"auto"`` (default): the
            interval form wherever it applies, else splines
            (:func:`~fmu_surrogate.identify.laws.data.choose_derivative`).
        position : str, optional
            The recorded position (``der(position) = VELOCITY``) for the interval form; by
            default the state the dataset declares (or records) as the velocity's integral.

        Returns
        -------
        self
            Also sets ``target_``, ``library_``, ``sources_`` (how each column was obtained),
            ``derivative_`` (the method used, ``"auto"`` resolved) and ``position_`` (the
            position of the interval form, else as given).
        """
        from fmu_surrogate.identify.laws.data import choose_derivative, law_arrays

        ds = _loaded(ds)
        derivative, position = choose_derivative(ds, target, library.columns, runs=runs,
                                                 derivative=derivative, position=position)
        Phi, y, _, sources = law_arrays(ds, target=target, library=library, runs=runs,
                                        derivative=derivative, position=position)
        self.fit(Phi, y)
        self._dataset_fitted(target, library, sources, derivative, position)
        return self

    def to_surrogate(self, *, force: str, velocity: str, position: str,
                     discrepancy: bool = True):
        """The discovered law ``m q̈ + c q̇ + k(q) = u`` as a pH surrogate.

        See :func:`fmu_surrogate.identify.laws.surrogate.mechanical_surrogate`.

        Parameters
        ----------
        force, velocity, position : str
            Term names of the force ``u``, of ``q̇`` and of ``q``.
        discrepancy : bool
            Keep a GP-RVM's discrepancy in the restoring force.

        Returns
        -------
        PHDAE
        """
        from fmu_surrogate.identify.laws.surrogate import mechanical_surrogate

        return mechanical_surrogate(self, force=force, velocity=velocity, position=position,
                                    discrepancy=discrepancy)

    def _dataset_fitted(self, target, library, sources, derivative, position) -> None:
        self.feature_names_ = list(self.names) if self.names is not None else list(library.names)
        self.target_ = target
        self.library_ = library
        self.sources_ = sources
        self.derivative_ = derivative
        self.position_ = position


def _loaded(ds):
    """A harvested dataset, read when given as a path."""
    if hasattr(ds, "data_vars"):
        return ds
    from fmu_surrogate.fmu.dataset import load_dataset

    return load_dataset(ds)
