"""What every optimiser of :class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier`
is and returns.

An optimiser is a small frozen object that holds its settings (pymanopt's style:
``LinearPHIdentifier(optimizer=LM(max_iter=50))``) and has one method,
:meth:`Optimizer.run`, which minimises the identifier's objective on its product manifold from
an initial point and returns an :class:`OptimizerOutcome`, the same fields for every optimiser.
The optimisers are :class:`~fmu_surrogate.identify.linear.optim.lm.LM` (Riemannian
Levenberg–Marquardt, the default) and the first-order methods of
:mod:`~fmu_surrogate.identify.linear.optim.first_order`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.errors import InvalidInputError

Array = NDArray[np.float64]


@dataclass
class OptimizerOutcome:
    """What :meth:`Optimizer.run` returns.

    Parameters
    ----------
    point : list of ndarray
        The final point (one array per fitted parameter; R as its factor).
    cost_history : tuple of float
        The cost at the initial point and after every iteration.
    gradient_norm_history : tuple of float
        The gradient norm at every iterate whose gradient was evaluated.
    n_iter : int
        Iterations done.
    stopping_reason : str
        Why the optimiser stopped.
    gradient_norm : float
        Gradient norm at the final point.
    singular_values : ndarray, optional
        Singular values of the residual Jacobian at the final point (optimisers that form it).
    """

    point: list[Array]
    cost_history: tuple[float, ...]
    gradient_norm_history: tuple[float, ...]
    n_iter: int
    stopping_reason: str
    gradient_norm: float
    singular_values: Array | None = None


@dataclass(frozen=True)
class Optimizer:
    """Settings shared by all optimisers; subclasses implement :meth:`run`.

    Parameters
    ----------
    max_iter : int
        Iteration budget.
    tol : float
        Stop when the gradient norm falls below ``tol``.
    max_time : float, optional
        Wall-time budget [s].
    """

    #: The shorthand string of the optimiser (``LinearPHIdentifier(optimizer=name)``).
    name: ClassVar[str] = ""

    max_iter: int = 100
    tol: float = 1e-12
    max_time: float | None = None

    def check(self) -> None:
        """Raise ``ValueError`` naming the setting and the fix for an invalid setting."""
        if isinstance(self.max_iter, bool) or not (
                isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 0):
            raise InvalidInputError(f"max_iter must be an integer >= 0, got {self.max_iter!r}.")
        if not (np.isfinite(self.tol) and self.tol >= 0):
            raise InvalidInputError(f"tol must be a finite number >= 0, got {self.tol!r}.")
        if self.max_time is not None and not self.max_time > 0:
            raise InvalidInputError(
                f"max_time must be None or a number > 0, got {self.max_time!r}.")

    def run(self, obj: Any, manifold: Any, coords: Any, point: list[Array],
            callback: Any = None) -> OptimizerOutcome:
        """Minimise ``obj`` on ``manifold`` from ``point``.

        Parameters
        ----------
        obj : Objective
            Cost, gradient and forward states of the fit
            (:class:`~fmu_surrogate.identify.linear.model.manifold.Objective`).
        manifold : product manifold
            The manifold of the fitted parameters (retraction, norms).
        coords : Coordinates
            Tangent coordinates of the fitted parameters
            (:class:`~fmu_surrogate.identify.linear.model.sensitivities.Coordinates`).
        point : list of ndarray
            Initial point.
        callback : callable, optional
            ``callback(iteration, cost, gradient_norm)`` after every iteration.

        Returns
        -------
        OptimizerOutcome
        """
        raise NotImplementedError
