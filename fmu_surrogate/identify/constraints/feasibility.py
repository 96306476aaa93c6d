"""Feasibility models ``q(w) ∈ [0, 1]``: the probability that an FMU simulates with parameters w.

Three classifiers trained by cross-entropy on labelled evaluations (1 = the run succeeded),
all with the same interface — ``fit(W, y)``, ``update(W, y)`` (add data and retrain, warm-started:
the online use of the paper's Algorithm 3), ``predict_proba(W)`` — and built on scikit-learn:

* :class:`LogisticFeasibility` — the paper's ``q = σ(βᵀw + b)``; :meth:`~LogisticFeasibility.
  decision_boundary` returns the separating hyperplane in the original coordinates;
* :class:`GPFeasibility` — a Gaussian-process classifier (RBF kernel with one length scale per
  parameter, Laplace approximation);
* :class:`MLPFeasibility` — a small neural classifier (two tanh layers, logistic output).

Until both labels have been seen a model cannot separate anything; it then predicts the
paper's ``q_0 = 0.5`` everywhere (a constant: an estimate that drifted with every new run, such
as the fraction of feasible runs, would make the online objective of Algorithm 3 change between
calls at the same point and stall line searches).  Inputs are standardised by the data (scale only for the logistic model without
intercept, so its hyperplane keeps passing through the origin).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["FEASIBILITY_MODELS", "FeasibilityModel", "GPFeasibility", "LogisticFeasibility",
           "MLPFeasibility", "make_feasibility"]

_CLIP = 1e-12


class FeasibilityError(FmuSurrogateError, ValueError):
    """Bad data for a feasibility model, or a question it cannot answer."""


class FeasibilityModel(BaseEstimator):
    """Common part: data, standardisation, the constant model before both labels are seen."""

    _center = True

    def _check(self, W: Any, y: Any = None) -> tuple[np.ndarray, np.ndarray | None]:
        W = np.atleast_2d(np.asarray(W, dtype=float))
        if not np.all(np.isfinite(W)):
            raise FeasibilityError("W must be finite.")
        if y is None:
            return W, None
        y = np.asarray(y).astype(float).ravel()
        if y.shape[0] != W.shape[0] or not np.all((y == 0) | (y == 1)):
            raise FeasibilityError(f"y must hold one label 0/1 per row of W ({W.shape[0]} rows), "
                                   f"got shape {y.shape}.")
        return W, y

    def fit(self, W: Any, y: Any) -> FeasibilityModel:
        """Train on ``W`` (n, p) with labels ``y`` (n,), 1 = feasible; returns ``self``.

        Parameters
        ----------
        W : array_like, shape (n, p)
            Parameter vectors.
        y : array_like, shape (n,)
            1 where the simulation succeeded, 0 where it failed.

        Returns
        -------
        FeasibilityModel
            ``self``.
        """
        W, y = self._check(W, y)
        self.W_, self.y_ = W, y
        self._train()
        return self

    def update(self, W: Any, y: Any) -> FeasibilityModel:
        """Add labelled points and retrain (warm-started where the model allows); ``self``.

        Parameters
        ----------
        W : array_like, shape (m, p)
            New parameter vectors.
        y : array_like, shape (m,)
            Their labels (1 = feasible).

        Returns
        -------
        FeasibilityModel
            ``self``.
        """
        W, y = self._check(W, y)
        if not hasattr(self, "W_") or self.W_.shape[0] == 0:
            return self.fit(W, y)
        if W.shape[1] != self.W_.shape[1]:
            raise FeasibilityError(f"W has {W.shape[1]} columns, the model {self.W_.shape[1]}.")
        self.W_ = np.vstack([self.W_, W])
        self.y_ = np.concatenate([self.y_, y])
        self._train()
        return self

    @property
    def separable_(self) -> bool:
        """Whether both labels are in the data (else the model is the constant prior)."""
        return hasattr(self, "y_") and 0 < self.y_.sum() < self.y_.size

    def _train(self) -> None:
        if not self.separable_:
            return
        self.mean_ = self.W_.mean(axis=0) if self._center else np.zeros(self.W_.shape[1])
        scale = self.W_.std(axis=0) if self._center else np.sqrt((self.W_**2).mean(axis=0))
        self.scale_ = np.where(scale > 0, scale, 1.0)
        self._fit_scaled((self.W_ - self.mean_) / self.scale_, self.y_)

    def predict_proba(self, W: Any) -> np.ndarray:
        """Probability of feasibility ``q(w)`` of each row of ``W``.

        Parameters
        ----------
        W : array_like, shape (n, p) or (p,)
            Parameter vectors.

        Returns
        -------
        ndarray, shape (n,)
            ``q(w)`` in ``[1e-12, 1 - 1e-12]`` (clipped so that logarithms stay finite).
        """
        W, _ = self._check(W)
        if not self.separable_:
            return np.full(W.shape[0], 0.5)
        p = self._proba_scaled((W - self.mean_) / self.scale_)
        return np.clip(p, _CLIP, 1.0 - _CLIP)

    def predict(self, W: Any) -> np.ndarray:
        """Labels ``q(w) >= 0.5`` (1 = feasible) of the rows of ``W``.

        Parameters
        ----------
        W : array_like, shape (n, p)
            Parameter vectors.

        Returns
        -------
        ndarray of int, shape (n,)
        """
        return (self.predict_proba(W) >= 0.5).astype(int)

    def decision_boundary(self) -> tuple[np.ndarray, float]:
        """The separating hyperplane ``{w : βᵀw + b = 0}`` (``q = 0.5``) of a linear model.

        Returns
        -------
        beta : ndarray, shape (p,)
        b : float
            Feasible where ``βᵀw + b > 0``.
        """
        raise FeasibilityError(f"{type(self).__name__} is not linear; use predict_proba (or "
                               f"plot a slice) to see its boundary, or LogisticFeasibility.")

    def plot(self, W: Any = None, y: Any = None, **kwargs: Any) -> Any:
        """Plot the data and the learned boundary (see :func:`.plots.plot_feasibility`).

        Parameters
        ----------
        W, y : array_like, optional
            Points to show (default: the training data).
        **kwargs
            Passed to :func:`~fmu_surrogate.identify.constraints.plots.plot_feasibility`.

        Returns
        -------
        matplotlib.figure.Figure
        """
        from fmu_surrogate.identify.constraints.plots import plot_feasibility

        return plot_feasibility(self, self.W_ if W is None else W, self.y_ if y is None else y,
                                **kwargs)

    def _fit_scaled(self, X: np.ndarray, y: np.ndarray) -> None:  # pragma: no cover
        raise NotImplementedError

    def _proba_scaled(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


class LogisticFeasibility(FeasibilityModel):
    """The paper's logistic model ``q(w) = 1 / (1 + exp(−(βᵀw + b)))``.

    Parameters
    ----------
    C : float
        Inverse L2 regularisation strength on the standardised inputs (large: nearly the plain
        cross-entropy; some regularisation keeps separable data from driving β to infinity).
    fit_intercept : bool
        Learn ``b``; ``False`` is the paper's hyperplane through the origin ``βᵀw = 0``.
    """

    def __init__(self, C: float = 1e3, fit_intercept: bool = True) -> None:
        self.C = C
        self.fit_intercept = fit_intercept

    @property
    def _center(self) -> bool:  # type: ignore[override]
        return bool(self.fit_intercept)

    def _fit_scaled(self, X: np.ndarray, y: np.ndarray) -> None:
        from sklearn.linear_model import LogisticRegression

        if not hasattr(self, "clf_"):
            self.clf_ = LogisticRegression(C=self.C, fit_intercept=self.fit_intercept,
                                           warm_start=True, max_iter=2000)
        self.clf_.fit(X, y)

    def _proba_scaled(self, X: np.ndarray) -> np.ndarray:
        return self.clf_.predict_proba(X)[:, 1]

    def decision_boundary(self) -> tuple[np.ndarray, float]:
        """The separating hyperplane ``{w : βᵀw + b = 0}`` in the original coordinates.

        Returns
        -------
        beta : ndarray, shape (p,)
            Normal vector; ``q(w) = σ(βᵀw + b)``.
        b : float
            Offset (0 without intercept).  Feasible where ``βᵀw + b > 0``.
        """
        if not self.separable_:
            raise FeasibilityError("the model has not seen both feasible and infeasible points "
                                   "yet, so it has no boundary; add data with update().")
        beta_s = self.clf_.coef_[0]
        beta = beta_s / self.scale_
        b = float(self.clf_.intercept_[0] - beta @ self.mean_) if self.fit_intercept else 0.0
        return beta, b


class GPFeasibility(FeasibilityModel):
    """Gaussian-process classifier (scikit-learn, Laplace approximation, RBF with ARD).

    Parameters
    ----------
    refit_every : int
        Optimise the kernel hyperparameters at most every ``refit_every`` updates (and whenever
        the data have doubled); in between the last kernel is kept and only the latent function
        is re-fitted — cheap enough to update after every simulation.
    random_state : int
        Seed of the hyperparameter optimiser's restarts.
    """

    def __init__(self, refit_every: int = 10, random_state: int = 0) -> None:
        self.refit_every = refit_every
        self.random_state = random_state

    def _fit_scaled(self, X: np.ndarray, y: np.ndarray) -> None:
        from sklearn.gaussian_process import GaussianProcessClassifier
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel

        n_fit = getattr(self, "_n_at_fit", 0)
        self._updates = getattr(self, "_updates", 0) + 1
        full = (not hasattr(self, "clf_") or self._updates >= self.refit_every
                or X.shape[0] >= 2 * n_fit)
        if full:
            kernel = ConstantKernel(1.0, (1e-2, 1e3)) * RBF(np.ones(X.shape[1]), (1e-2, 1e2))
            self.clf_ = GaussianProcessClassifier(kernel, random_state=self.random_state)
            self._updates, self._n_at_fit = 0, X.shape[0]
        else:
            self.clf_ = GaussianProcessClassifier(self.clf_.kernel_, optimizer=None)
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        with warnings.catch_warnings():  # a hyperparameter at its bound is not an error here
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.clf_.fit(X, y)

    def _proba_scaled(self, X: np.ndarray) -> np.ndarray:
        return self.clf_.predict_proba(X)[:, 1]


class MLPFeasibility(FeasibilityModel):
    """A small neural classifier: two tanh hidden layers, logistic output, cross-entropy.

    Parameters
    ----------
    hidden : tuple of int
        Hidden layer sizes.
    alpha : float
        L2 penalty.
    random_state : int
        Seed of the initial weights.
    """

    def __init__(self, hidden: tuple[int, ...] = (16, 16), alpha: float = 1e-3,
                 random_state: int = 0) -> None:
        self.hidden = hidden
        self.alpha = alpha
        self.random_state = random_state

    def _fit_scaled(self, X: np.ndarray, y: np.ndarray) -> None:
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier

        if not hasattr(self, "clf_"):
            self.clf_ = MLPClassifier(tuple(self.hidden), activation="tanh", alpha=self.alpha,
                                      solver="lbfgs", max_iter=500, warm_start=True,
                                      random_state=self.random_state)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.clf_.fit(X, y)

    def _proba_scaled(self, X: np.ndarray) -> np.ndarray:
        return self.clf_.predict_proba(X)[:, 1]


#: ``feasibility=`` names of :class:`~fmu_surrogate.ConstraintDiscovery`.
FEASIBILITY_MODELS = {"logistic": LogisticFeasibility, "gp": GPFeasibility,
                      "mlp": MLPFeasibility}


def make_feasibility(spec: Any) -> FeasibilityModel:
    """A fresh feasibility model from a name (``"logistic"``, ``"gp"``, ``"mlp"``) or a model.

    Parameters
    ----------
    spec : str or FeasibilityModel
        A name of :data:`FEASIBILITY_MODELS`, or a model instance (cloned, unfitted).

    Returns
    -------
    FeasibilityModel
    """
    from sklearn.base import clone

    if isinstance(spec, FeasibilityModel):
        return clone(spec)
    if isinstance(spec, str) and spec.lower() in FEASIBILITY_MODELS:
        return FEASIBILITY_MODELS[spec.lower()]()
    raise FeasibilityError(f"feasibility must be one of {sorted(FEASIBILITY_MODELS)} or a "
                           f"FeasibilityModel instance, got {spec!r}.")
