"""The pattern every estimator of :mod:`fmu_surrogate.identify` follows.

An estimator is a scikit-learn :class:`~sklearn.base.BaseEstimator`:

* the constructor stores its keyword settings unchanged (no validation, no work), so
  :func:`sklearn.base.clone`, ``get_params`` and ``set_params`` work;
* known structure matrices are keyword settings named as in the pH equations
  (``E=``, ``J=``, ``R=``, ``Q=``, ``B=``), the same in every estimator;
* ``fit(arrays...)`` validates its input, learns, stores attributes ending in ``_`` and returns
  ``self``; ``fit_dataset(ds, *, ...)`` does the same from a harvested dataset (keyword-only
  variable names, ``runs=`` selects runs);
* ``result_`` is a frozen :class:`FitResult` (iterations, stopping reason, cost history, seconds);
* ``to_surrogate()`` returns a :mod:`fmu_surrogate.ph` object;
* ``predict``/``score`` where they mean something;
* any of these before ``fit`` raises :class:`NotFittedError`.

Writing a new estimator::

    class MyIdentifier(PHEstimator):
        def __init__(self, *, J=None, R=None, max_iter=100):
            self.J = J
            self.R = R
            self.max_iter = max_iter

        def fit(self, x, y):
            t0 = time.perf_counter()
            ...                                         # validate, learn
            self.system_ = ...                          # learned attributes end in "_"
            self.result_ = FitResult(n_iter=k, stopping_reason="tolerance reached",
                                     cost_history=np.asarray(costs),
                                     time=time.perf_counter() - t0)
            return self

        def to_surrogate(self):
            self._check_fitted()
            return self.system_
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["FitResult", "NotFittedError", "PHEstimator"]


class NotFittedError(FmuSurrogateError, _SklearnNotFittedError):
    """An estimator was used before :meth:`fit` (also scikit-learn's ``NotFittedError``)."""


@dataclass(frozen=True)
class FitResult:
    """What a fit did: the common part of every estimator's ``result_``.

    Parameters
    ----------
    n_iter : int
        Iterations of the optimiser (0 for closed-form fits).
    stopping_reason : str
        Why the optimiser stopped, in words (e.g. ``"max_iter reached"``).
    cost_history : ndarray, shape (n_iter + 1,) or (n_iter,)
        The objective after each iteration (the estimator documents which objective).
    time : float
        Wall-clock seconds of :meth:`fit`.
    """

    n_iter: int
    stopping_reason: str
    cost_history: np.ndarray = field(repr=False)
    time: float


class PHEstimator(BaseEstimator):
    """Base of the estimators that return port-Hamiltonian surrogates.

    Subclasses set the attribute named by :attr:`_fitted_attribute` in ``fit``; until then every
    method that needs a fit raises :class:`NotFittedError` with the estimator's name.
    """

    #: The attribute whose presence means "fitted".
    _fitted_attribute = "result_"

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, self._fitted_attribute)

    def _check_fitted(self) -> None:
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(
                f"this {type(self).__name__} is not fitted yet; call fit(...) or "
                "fit_dataset(...) first."
            )

    def to_surrogate(self) -> Any:
        """The identified system as a :mod:`fmu_surrogate.ph` object."""
        raise NotImplementedError
