"""Time derivatives of sampled trajectories (derivative data for pH identification).

The pH identification of docs/design.md §3 needs ``ẋ(t_i)`` to form the targets ``E ẋ − B u``.
When the simulator does not export derivatives they are estimated from the states:

* ``"exact"``  — derivatives supplied by the caller (an array aligned with ``t`` or a callable),
* ``"fd"``     — central finite differences, second order in the interior and one-sided second
  order at both ends, on uniform or non-uniform grids (``numpy.gradient`` with ``edge_order=2``),
* ``"spline"`` — derivative of a spline: for noise-free samples (what a simulation records: the
  noise level estimated from fourth differences is below :data:`NOISE_FREE` of the signal's
  spread) the quintic interpolating spline, else a cubic smoothing spline
  (:func:`scipy.interpolate.make_smoothing_spline`, the smoothing parameter by generalised
  cross-validation unless given).  Cross-validation on noise-free data smooths real curvature
  away: on ``sin 3t + 0.3 sin 7.1t`` sampled at 0.01 it misses the derivative by 1.7 %, the
  quintic interpolant by 7e-8, and the cubic natural interpolant by 3e-3 at the ends;
* ``"gp"``     — one Gaussian process per state dimension on the 1-D input ``t`` with a Gaussian
  (squared-exponential) kernel; hyperparameters by maximising the log marginal likelihood; the
  posterior mean is differentiated analytically through the derivative of the kernel
  (the paper's construction, zaspel-guenther §3.4).

Every method can work on the full trajectory or on a training subset only (``train_index``) — the
paper's "derivatives on the training set only" case (§4.6).  ``"spline"`` and ``"gp"`` can be
evaluated at any time (``t_eval``); ``"fd"`` and ``"exact"`` only at their sample times.

Why scikit-learn for the GP: the input is one-dimensional and there are three hyperparameters
(signal variance, length scale, noise), so L-BFGS-B on the exact log marginal likelihood with its
analytic gradient (what :class:`sklearn.gaussian_process.GaussianProcessRegressor` does) converges in
a few dozen evaluations to the actual optimum, in float64, with random restarts against local
optima — a fixed budget of 200 Adam steps in GPyTorch neither guarantees convergence nor is
cheaper, and GPyTorch switches to iterative (CG/Lanczos) solves above 800 points.  The posterior
mean derivative is a closed form, so no automatic differentiation is needed.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.ph.efforts.gaussian import gaussian_kernel

Array = NDArray[np.float64]
Method = Literal["fd", "spline", "gp", "exact"]

__all__ = [
    "GPDerivative",
    "estimate_derivatives",
    "finite_differences",
    "noise_level",
    "spline_derivatives",
]


# --------------------------------------------------------------------------- validation
def _as_time(t: ArrayLike, name: str = "t") -> Array:
    a = np.asarray(t, dtype=float)
    if a.ndim != 1:
        raise InvalidInputError(f"{name} must be a 1-D array of time points, got shape {a.shape}.")
    if not np.all(np.isfinite(a)):
        raise InvalidInputError(f"{name} contains NaN or Inf; pass finite time points.")
    return a


def _as_states(x: ArrayLike, n_time: int) -> tuple[Array, bool]:
    a = np.asarray(x, dtype=float)
    vector = a.ndim == 1
    if vector:
        a = a[:, None]
    if a.ndim != 2 or a.shape[0] != n_time:
        raise InvalidInputError(
            f"x must have shape (N, n) or (N,) with N = len(t) = {n_time}, got {np.shape(x)}."
        )
    if not np.all(np.isfinite(a)):
        raise InvalidInputError("x contains NaN or Inf; remove or interpolate those samples first.")
    return a, vector


def _check_increasing(t: Array, what: str) -> None:
    if np.any(np.diff(t) <= 0.0):
        raise InvalidInputError(
            f"{what} must be strictly increasing (sorted, no repeated time points); "
            "sort the samples and drop duplicates first."
        )


def _subset(t: Array, train_index: ArrayLike | None) -> tuple[Array, Array]:
    """Sorted unique indices of the fitting set and the order in which they were given."""
    if train_index is None:
        return np.arange(len(t)), np.arange(len(t))
    idx = np.asarray(train_index)
    if idx.dtype == bool:
        if idx.shape != t.shape:
            raise InvalidInputError(
                f"a boolean train_index must have shape {t.shape}, got {idx.shape}.")
        idx = np.flatnonzero(idx)
    if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
        raise InvalidInputError(
            "train_index must be a 1-D array of integer indices (or a boolean mask).")
    if idx.size and (idx.min() < -len(t) or idx.max() >= len(t)):
        raise InvalidInputError(f"train_index has entries outside [0, {len(t)}).")
    idx = np.where(idx < 0, idx + len(t), idx)
    if len(np.unique(idx)) != len(idx):
        raise InvalidInputError("train_index contains repeated indices; pass each sample once.")
    return np.sort(idx), idx


def _need(n: int, minimum: int, method: str) -> None:
    if n < minimum:
        raise InvalidInputError(
            f"method={method!r} needs at least {minimum} samples to fit, got {n}; "
            "use more samples (a larger train_index) or another method."
        )


def _positions(t_fit: Array, t_eval: Array, method: str) -> Array:
    """Indices of ``t_eval`` in ``t_fit`` for methods that only give values at sample times."""
    pos = np.searchsorted(t_fit, t_eval)
    pos = np.clip(pos, 0, len(t_fit) - 1)
    if not np.array_equal(t_fit[pos], t_eval):
        raise InvalidInputError(
            f"method={method!r} gives derivatives only at the sample times it was fitted on; "
            "t_eval contains other times. Use method='spline' or 'gp' to evaluate anywhere."
        )
    return pos


# --------------------------------------------------------------------------- methods
def finite_differences(t: ArrayLike, x: ArrayLike) -> Array:
    """Second-order finite-difference derivative on a (possibly non-uniform) grid.

    Central three-point formula in the interior, one-sided three-point formulas at both ends
    (``numpy.gradient`` with ``edge_order=2``); all three are exact for quadratics, so the error is
    ``O(h²)`` everywhere for smooth data.

    Parameters
    ----------
    t : array_like, shape (N,)
        Strictly increasing times, ``N >= 3``.
    x : array_like, shape (N, n) or (N,)

    Returns
    -------
    ndarray, shape of ``x``
    """
    tt = _as_time(t)
    xx, vector = _as_states(x, len(tt))
    _check_increasing(tt, "t")
    _need(len(tt), 3, "fd")
    d = np.gradient(xx, tt, axis=0, edge_order=2)
    return d[:, 0] if vector else d


def spline_derivatives(
    t: ArrayLike, x: ArrayLike, t_eval: ArrayLike | None = None, smoothing: float | None = None
) -> Array:
    """Derivative of a cubic smoothing spline fitted to each state dimension.

    Parameters
    ----------
    t : array_like, shape (N,)
        Strictly increasing times, ``N >= 5``.
    x : array_like, shape (N, n) or (N,)
    t_eval : array_like, shape (M,), optional
        Where to evaluate the derivative (default: ``t``).
    smoothing : float, optional
        The regularisation ``λ ≥ 0`` of :func:`scipy.interpolate.make_smoothing_spline`
        (in units of the data: the penalty is ``λ ∫ s''(t)² dt``).  ``None``: per dimension, the
        quintic interpolant of noise-free samples (:func:`noise_level`), else ``λ`` by
        generalised cross-validation.

    Returns
    -------
    ndarray, shape (M, n) (or (M,) for 1-D ``x``)
    """
    from scipy.interpolate import make_smoothing_spline

    tt = _as_time(t)
    xx, vector = _as_states(x, len(tt))
    _check_increasing(tt, "t")
    _need(len(tt), 5, "spline")
    te = tt if t_eval is None else _as_time(t_eval, "t_eval")
    if smoothing is not None and not (np.isfinite(smoothing) and smoothing >= 0):
        raise InvalidInputError(
            f"smoothing must be a finite number >= 0 or None, got {smoothing!r}.")
    out = np.empty((len(te), xx.shape[1]))
    for j in range(xx.shape[1]):
        col = xx[:, j]
        spread = float(np.ptp(col))
        if smoothing is None and len(tt) >= 6 and noise_level(col) <= NOISE_FREE * spread:
            from scipy.interpolate import make_interp_spline

            spl = make_interp_spline(tt, col, k=5)
        else:
            spl = make_smoothing_spline(tt, col, lam=smoothing)
        out[:, j] = spl.derivative()(te)
    return out[:, 0] if vector else out


#: Samples whose :func:`noise_level` is below this fraction of their spread count as noise-free.
#: A smooth signal sampled finely has small fourth differences (``h⁴`` times its fourth
#: derivative: 1e-6 of the spread for ``sin 3t`` at h = 0.01, a simulation's float noise far
#: below), while measurement noise of 1e-4 of the spread is ten times above the threshold.
NOISE_FREE = 1e-5


def noise_level(x: ArrayLike) -> float:
    """Standard deviation of white noise on the samples ``x``, estimated from their fourth
    differences (``Var Δ⁴ε = 70 σ²``) with the median absolute deviation (robust to the signal's
    own, smooth, contribution).

    Parameters
    ----------
    x : array_like, shape (N,), N >= 5

    Returns
    -------
    float
    """
    d4 = np.diff(np.asarray(x, dtype=float), 4)
    return float(1.4826 * np.median(np.abs(d4 - np.median(d4))) / np.sqrt(70.0))


class GPDerivative:
    """One Gaussian process per state dimension on the time axis, differentiated analytically.

    Model for each dimension ``j`` (after standardising ``x_j`` to zero mean and unit variance and
    the time axis to ``s = (t − t_min) / (t_max − t_min)``)::

        x_j(s) ~ GP(0, c exp(−(s − s')² / (2 ℓ²))) + ε,   ε ~ N(0, σ²)

    ``c, ℓ, σ²`` maximise the log marginal likelihood (L-BFGS-B, scikit-learn, with restarts).
    The derivative of the posterior mean is ``Σ_i α_i ∂k(s, s_i)/∂s`` with
    ``∂k/∂s = −(s − s_i)/ℓ² k``, mapped back to data units.

    Parameters
    ----------
    noise_floor : float
        Lower bound of the noise variance ``σ²`` in standardised units.  Smooth simulated data drive
        ``σ²`` to this bound; it keeps the Cholesky factor of a dense Gaussian-kernel matrix
        well defined in float64 (condition number ``≲ N / noise_floor``).
    max_hyper_points : int
        The hyperparameters are optimised on at most this many (evenly strided) samples; the
        posterior is then conditioned on all samples with those hyperparameters.  One optimiser
        evaluation costs ``O(N³)``, so this keeps a 3000-sample trajectory at a few seconds while
        the optimum of a smooth signal hardly depends on the sampling density.
    n_restarts : int
        Extra optimiser runs from random initial hyperparameters.
    lengthscale_bounds : (float, float)
        Bounds of ``ℓ`` in units of the (normalised) time span.
    seed : int
        Seed of the restarts.

    Attributes
    ----------
    lengthscale_ : ndarray, shape (n,)
        ``ℓ`` per dimension in time units.
    signal_variance_ : ndarray, shape (n,)
        ``c`` per dimension in data units squared.
    noise_ : ndarray, shape (n,)
        ``σ²`` per dimension in data units squared.
    log_marginal_likelihood_ : ndarray, shape (n,)
        Optimum of the standardised log marginal likelihood per dimension.
    """

    def __init__(
        self,
        *,
        noise_floor: float = 1e-10,
        max_hyper_points: int = 400,
        n_restarts: int = 2,
        lengthscale_bounds: tuple[float, float] = (1e-3, 10.0),
        seed: int = 0,
    ) -> None:
        self.noise_floor = noise_floor
        self.max_hyper_points = max_hyper_points
        self.n_restarts = n_restarts
        self.lengthscale_bounds = lengthscale_bounds
        self.seed = seed

    def fit(self, t: ArrayLike, x: ArrayLike) -> GPDerivative:
        """Fit one GP per column of ``x``.

        Parameters
        ----------
        t : array_like, shape (N,)
            Strictly increasing times, ``N >= 2``.
        x : array_like, shape (N, n) or (N,)

        Returns
        -------
        self
        """
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

        tt = _as_time(t)
        xx, vector = _as_states(x, len(tt))
        _check_increasing(tt, "t")
        _need(len(tt), 2, "gp")
        if not (0.0 < self.noise_floor < 1.0):
            raise InvalidInputError(f"noise_floor must lie in (0, 1), got {self.noise_floor!r}.")
        if self.max_hyper_points < 2:
            raise InvalidInputError("max_hyper_points must be at least 2.")
        self._vector = vector
        self._t0 = float(tt[0])
        self._tscale = float(tt[-1] - tt[0])
        s = (tt - self._t0) / self._tscale
        self._mean = xx.mean(axis=0)
        std = xx.std(axis=0)
        self._std = np.where(std > 0.0, std, 1.0)
        yy = (xx - self._mean) / self._std
        self._s = s
        n = xx.shape[1]
        self.lengthscale_ = np.empty(n)
        self.signal_variance_ = np.empty(n)
        self.noise_ = np.empty(n)
        self.log_marginal_likelihood_ = np.empty(n)
        self._alpha = np.empty((len(s), n))
        sub = np.unique(np.linspace(0, len(s) - 1, min(len(s), self.max_hyper_points)).round())
        sub = sub.astype(int)
        lo, hi = self.lengthscale_bounds
        for j in range(n):
            kernel = ConstantKernel(1.0, (1e-4, 1e4)) * RBF(
                length_scale=min(max(0.1, lo), hi), length_scale_bounds=(lo, hi)
            ) + WhiteKernel(
                noise_level=max(1e-4, self.noise_floor), noise_level_bounds=(self.noise_floor, 1.0)
            )
            gp = GaussianProcessRegressor(
                kernel, alpha=0.0, n_restarts_optimizer=self.n_restarts, random_state=self.seed
            )
            if np.all(yy[:, j] == 0.0):  # constant signal: derivative 0, nothing to fit
                c, ell, noise, lml = 1e-4, hi, self.noise_floor, np.nan
                self._alpha[:, j] = 0.0
            else:
                with warnings.catch_warnings():
                    # Smooth simulated data drive the noise to its floor and make L-BFGS-B end
                    # with "ABNORMAL" line searches in the flat valley near the optimum; both are
                    # expected here and the optimum found is used as is.
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    gp.fit(s[sub, None], yy[sub, j])
                k = gp.kernel_
                c, ell, noise = k.k1.k1.constant_value, k.k1.k2.length_scale, k.k2.noise_level
                lml = gp.log_marginal_likelihood_value_
                K = c * gaussian_kernel(s[:, None], s[:, None], ell)
                K[np.diag_indices_from(K)] += noise
                self._alpha[:, j] = _cho_solve_jittered(K, yy[:, j])
            self.lengthscale_[j] = ell * self._tscale
            self.signal_variance_[j] = c * self._std[j] ** 2
            self.noise_[j] = noise * self._std[j] ** 2
            self.log_marginal_likelihood_[j] = lml
        self._c_s = self.signal_variance_ / self._std**2
        self._l_s = self.lengthscale_ / self._tscale
        return self

    def _kernel_terms(self, t_eval: ArrayLike) -> tuple[Array, Array]:
        te = _as_time(t_eval, "t_eval")
        se = (te - self._t0) / self._tscale
        return se, se[:, None] - self._s[None, :]

    def predict(self, t_eval: ArrayLike) -> Array:
        """Posterior mean of ``x`` at ``t_eval``; shape (M, n) (or (M,) for 1-D training ``x``)."""
        se, _ = self._kernel_terms(t_eval)
        out = np.empty((se.shape[0], len(self._std)))
        for j in range(len(self._std)):
            k = self._c_s[j] * gaussian_kernel(se[:, None], self._s[:, None], self._l_s[j])
            out[:, j] = self._mean[j] + self._std[j] * (k @ self._alpha[:, j])
        return out[:, 0] if self._vector else out

    def derivative(self, t_eval: ArrayLike) -> Array:
        """Time derivative of the posterior mean at ``t_eval``; shape (M, n) (or (M,))."""
        se, d = self._kernel_terms(t_eval)
        out = np.empty((d.shape[0], len(self._std)))
        for j in range(len(self._std)):
            ell = self._l_s[j]
            dk = -(d / ell**2) * self._c_s[j] * gaussian_kernel(se[:, None], self._s[:, None], ell)
            out[:, j] = self._std[j] * (dk @ self._alpha[:, j]) / self._tscale
        return out[:, 0] if self._vector else out


def _cho_solve_jittered(K: Array, y: Array) -> Array:
    """``K⁻¹ y`` by Cholesky, adding jitter if round-off made ``K`` numerically indefinite."""
    from scipy.linalg import LinAlgError, cho_factor, cho_solve

    jitter = 0.0
    scale = float(np.mean(np.diag(K)))
    for _ in range(6):
        try:
            if jitter:
                K = K + jitter * np.eye(len(K))
            return cho_solve(cho_factor(K, lower=True, check_finite=False), y, check_finite=False)
        except LinAlgError:
            jitter = 1e-10 * scale if jitter == 0.0 else 10.0 * jitter
    raise np.linalg.LinAlgError(
        "GP kernel matrix is not positive definite even with jitter; raise noise_floor."
    )


# --------------------------------------------------------------------------- front door
def estimate_derivatives(
    t: ArrayLike,
    x: ArrayLike,
    method: Method = "fd",
    *,
    train_index: ArrayLike | None = None,
    t_eval: ArrayLike | None = None,
    smoothing: float | None = None,
    exact: ArrayLike | Callable[[Array], ArrayLike] | None = None,
    gp_options: dict | None = None,
) -> Array:
    """Estimate ``ẋ`` from a sampled trajectory.

    Parameters
    ----------
    t : array_like, shape (N,)
        Strictly increasing sample times.
    x : array_like, shape (N, n) or (N,)
        States at ``t``.
    method : {"fd", "spline", "gp", "exact"}
        See the module docstring.
    train_index : array_like of int or bool, optional
        Fit only on these samples (the "training subset only" case).  Default: all samples.
    t_eval : array_like, shape (M,), optional
        Where to return the derivative.  Default: the fitting samples' times, in the order of
        ``train_index`` (or ``t``).  ``"fd"`` and ``"exact"`` (array form) accept only times
        among the fitting samples.
    smoothing : float, optional
        ``"spline"`` only: regularisation ``λ`` (``None`` → generalised cross-validation).
    exact : array_like (N, n) or callable, optional
        ``"exact"`` only: the true derivatives at ``t`` (aligned with ``x``), or a function
        ``t -> ẋ(t)`` returning shape (M, n).
    gp_options : dict, optional
        ``"gp"`` only: keyword arguments of :class:`GPDerivative`.

    Returns
    -------
    ndarray, shape (M, n) (or (M,) for 1-D ``x``)

    Raises
    ------
    ValueError
        For non-finite or mis-shaped input, unsorted/duplicate times, too few samples for the
        method, options given to the wrong method, or ``t_eval`` off the samples for ``"fd"``.
    """
    tt = _as_time(t)
    xx, vector = _as_states(x, len(tt))
    if method not in ("fd", "spline", "gp", "exact"):
        raise InvalidInputError(f"method must be 'fd', 'spline', 'gp' or 'exact', got {method!r}.")
    if smoothing is not None and method != "spline":
        raise InvalidInputError("smoothing applies only to method='spline'.")
    if gp_options is not None and method != "gp":
        raise InvalidInputError("gp_options applies only to method='gp'.")
    if (exact is None) == (method == "exact"):
        raise InvalidInputError(
            "method='exact' needs exact= (the true derivatives or a function of t), "
            "and exact= is only used with method='exact'."
        )
    fit_idx, given_idx = _subset(tt, train_index)
    t_fit = tt[fit_idx]
    _check_increasing(t_fit, "t (at the fitting samples)")
    te = tt[given_idx] if t_eval is None else _as_time(t_eval, "t_eval")

    if method == "exact":
        if callable(exact):
            out = np.asarray(exact(te), dtype=float).reshape(len(te), -1)
        else:
            ex, _ = _as_states(exact, len(tt))
            out = ex[fit_idx][_positions(t_fit, te, "exact")]
        if out.shape[1] != xx.shape[1]:
            raise InvalidInputError(
                f"exact derivatives have {out.shape[1]} columns, x has {xx.shape[1]}.")
    elif method == "fd":
        out = finite_differences(t_fit, xx[fit_idx])[_positions(t_fit, te, "fd")]
    elif method == "spline":
        out = spline_derivatives(t_fit, xx[fit_idx], te, smoothing)
    else:
        out = GPDerivative(**(gp_options or {})).fit(t_fit, xx[fit_idx]).derivative(te)
    return out[:, 0] if vector else out
