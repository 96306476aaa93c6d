"""Riemannian conjugate gradients with periodic restarts and the paper's Armijo line search.

pymanopt's :class:`~pymanopt.optimizers.ConjugateGradient` has no "restart every k iterations"
option (only Powell's orthogonality restart) and its line searchers either normalise the first
trial step by ``‖d‖`` (:class:`~pymanopt.optimizers.line_search.BackTrackingLineSearcher`) or warm
start it from the previous step.  Algorithm 1 of Günther, Jacob & Totzeck (docs/design.md §4) needs

* the search direction reset to the negative Riemannian gradient at iterations 0, k, 2k, …
  (the paper uses k = 5),
* the Fletcher–Reeves coefficient with Sato's scaled transport
  ``η⁺ = −grad f(x⁺) + β s T(η)``, ``β = ‖grad f(x⁺)‖² / ‖grad f(x)‖²``,
  ``s = min(1, ‖grad f(x⁺)‖ / ‖T(η)‖)`` (paper eq. (11)),
* an Armijo backtracking search whose first trial is ``x + σ₀ η`` with the fixed σ₀ = 1000,
  halving σ until ``f(R_x(σ η)) ≤ f(x) + c σ ⟨grad f(x), η⟩``.

:class:`RestartedConjugateGradient` is a pymanopt :class:`~pymanopt.optimizers.optimizer.Optimizer`
(same ``run(problem, initial_point=...)`` call, same result type); it uses only the manifold's own
operations (``retraction``, ``transport``, ``inner_product``, ``norm``).  The other beta rules of
pymanopt (Polak–Ribière, Hestenes–Stiefel, Hager–Zhang, Liu–Storey) can be selected as well; they
are used without the Sato scaling.

A trial point whose cost is not finite (overflowing simulation, a retraction that left the SPD cone
in floating point — the objective reports ``inf`` for those) always fails the Armijo test, so the
search contracts into the region where the model is valid instead of accepting NaN.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from pymanopt.optimizers.conjugate_gradient import BETA_RULES
from pymanopt.optimizers.optimizer import Optimizer, OptimizerResult

from fmu_surrogate.errors import InvalidInputError

__all__ = ["BETA_RULE_NAMES", "ArmijoLineSearch", "RestartedConjugateGradient"]

#: Accepted ``beta_rule`` names; ``"FletcherReeves"`` is the paper's (with Sato's scaling).
BETA_RULE_NAMES = ("FletcherReeves", "PolakRibiere", "HestenesStiefel", "HagerZhang", "LiuStorey")


class ArmijoLineSearch:
    """Backtracking Armijo search with a fixed first trial step (the paper's rule).

    Parameters
    ----------
    initial_step : float
        First trial ``σ₀`` multiplying the (unnormalised) search direction; the paper uses 1000.
    contraction : float
        Factor applied to σ after each failed trial (0 < contraction < 1).
    sufficient_decrease : float
        Armijo constant ``c`` in ``f(R(σ η)) ≤ f + c σ df0``.
    max_halvings : int
        Number of contractions before the search gives up (then the step is rejected: the
        returned point is ``x`` itself and the step size is 0).
    """

    def __init__(
        self,
        initial_step: float = 1000.0,
        contraction: float = 0.5,
        sufficient_decrease: float = 1e-4,
        max_halvings: int = 60,
    ) -> None:
        if not initial_step > 0:
            raise InvalidInputError(f"initial_step must be > 0, got {initial_step}.")
        if not 0 < contraction < 1:
            raise InvalidInputError(f"contraction must lie in (0, 1), got {contraction}.")
        if not 0 < sufficient_decrease < 1:
            raise InvalidInputError(
                f"sufficient_decrease must lie in (0, 1), got {sufficient_decrease}.")
        self.initial_step = float(initial_step)
        self.contraction = float(contraction)
        self.sufficient_decrease = float(sufficient_decrease)
        self.max_halvings = int(max_halvings)
        #: Cost evaluations of the last search.
        self.last_evaluations = 0
        #: Accepted σ of the last search (0 when rejected).
        self.last_sigma = 0.0
        #: Cost at the accepted point of the last search.
        self.last_cost = np.nan

    def search(
        self,
        objective: Callable[[Any], float],
        manifold: Any,
        x: Any,
        d: Any,
        f0: float,
        df0: float,
    ) -> tuple[float, Any]:
        """Return ``(step_size, new_point)``; ``step_size = σ ‖d‖`` (0 if no decrease was found).

        Same signature as pymanopt's line searchers, so it can be handed to pymanopt optimizers.
        """
        sigma = self.initial_step
        evaluations = 0
        for _ in range(self.max_halvings + 1):
            newx = manifold.retraction(x, sigma * d)
            newf = float(objective(newx))
            evaluations += 1
            if np.isfinite(newf) and newf <= f0 + self.sufficient_decrease * sigma * df0:
                self.last_evaluations, self.last_sigma, self.last_cost = evaluations, sigma, newf
                return sigma * float(manifold.norm(x, d)), newx
            sigma *= self.contraction
        self.last_evaluations, self.last_sigma, self.last_cost = evaluations, 0.0, f0
        return 0.0, x


class RestartedConjugateGradient(Optimizer):
    """Riemannian CG with a steepest-descent restart every ``restart_every`` iterations.

    Parameters
    ----------
    restart_every : int or None
        Use the negative gradient as search direction at iterations 0, k, 2k, … (``None`` or 0:
        only at iteration 0 and whenever the CG direction is not a descent direction).
    beta_rule : str
        One of :data:`BETA_RULE_NAMES`.
    line_searcher : object, optional
        Anything with pymanopt's ``search(objective, manifold, x, d, f0, df0)``; default
        :class:`ArmijoLineSearch` with the paper's settings.
    callback : callable, optional
        ``callback(iteration, cost, gradient_norm)`` after every iteration (progress bars).
    **kwargs
        Passed to :class:`pymanopt.optimizers.optimizer.Optimizer` (``max_iterations``,
        ``min_gradient_norm``, ``min_step_size``, ``max_time``, ``max_cost_evaluations``,
        ``verbosity``, ``log_verbosity``).

    Notes
    -----
    The returned :class:`~pymanopt.optimizers.optimizer.OptimizerResult` carries in ``log`` the
    keys ``"cost_history"`` (cost at the initial point and after each iteration),
    ``"gradient_norm_history"``, ``"cost_evaluations"`` and ``"gradient_evaluations"``.
    """

    def __init__(
        self,
        restart_every: int | None = 5,
        beta_rule: str = "FletcherReeves",
        line_searcher: Any = None,
        callback: Callable[[int, float, float], None] | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("verbosity", 0)
        super().__init__(**kwargs)
        if beta_rule not in BETA_RULE_NAMES:
            raise InvalidInputError(
                f"beta_rule must be one of {BETA_RULE_NAMES}, got {beta_rule!r}.")
        if restart_every is not None and restart_every < 0:
            raise InvalidInputError(
                f"restart_every must be a positive integer or None, got {restart_every}."
            )
        self.restart_every = int(restart_every) if restart_every else 0
        self.beta_rule = beta_rule
        self.line_searcher = ArmijoLineSearch() if line_searcher is None else line_searcher
        self.callback = callback

    def _direction(
        self,
        manifold: Any,
        x: Any,
        newx: Any,
        grad: Any,
        newgrad: Any,
        d: Any,
        gnorm: float,
        newgnorm: float,
    ) -> Any:
        Td = manifold.transport(x, newx, d)
        if self.beta_rule == "FletcherReeves":
            beta = newgnorm**2 / gnorm**2
            Td_norm = float(manifold.norm(newx, Td))
            s = min(1.0, newgnorm / Td_norm) if Td_norm > 0 else 1.0
            return -newgrad + (beta * s) * Td
        oldgrad = manifold.transport(x, newx, grad)
        beta = BETA_RULES[self.beta_rule](
            manifold=manifold,
            x=x,
            newx=newx,
            grad=grad,
            newgrad=newgrad,
            Pnewgrad=newgrad,
            newgradPnewgrad=newgnorm**2,
            Pgrad=grad,
            gradPgrad=gnorm**2,
            gradient_norm=gnorm,
            oldgrad=oldgrad,
            descent_direction=Td,
        )
        return -newgrad + beta * Td

    def run(self, problem: Any, *, initial_point: Any = None, **kwargs: Any) -> OptimizerResult:
        """Minimise ``problem.cost`` on ``problem.manifold`` from ``initial_point``."""
        manifold = problem.manifold
        objective = problem.cost
        gradient = problem.riemannian_gradient
        x = manifold.random_point() if initial_point is None else initial_point
        self._initialize_log(
            optimizer_parameters={
                "restart_every": self.restart_every,
                "beta_rule": self.beta_rule,
                "line_searcher": type(self.line_searcher).__name__,
            }
        )
        start = time.time()
        cost = float(objective(x))
        grad = gradient(x)
        gnorm = float(manifold.norm(x, grad))
        n_cost, n_grad = 1, 1
        costs, gnorms = [cost], [gnorm]
        d = -grad
        iteration = 0
        step_size = np.inf
        reason = None
        while True:
            reason = self._check_stopping_criterion(
                start_time=start,
                iteration=iteration,
                gradient_norm=gnorm,
                step_size=step_size,
                cost_evaluations=n_cost,
            )
            if reason is not None:
                break
            if not np.isfinite(cost):
                reason = "Terminated - the cost is not finite at the current point."
                break
            if self.restart_every and iteration % self.restart_every == 0:
                d = -grad
            df0 = float(manifold.inner_product(x, grad, d))
            if not df0 < 0:  # not a descent direction: restart
                d = -grad
                df0 = -(gnorm**2)
            step_size, newx = self.line_searcher.search(objective, manifold, x, d, cost, df0)
            n_cost += int(getattr(self.line_searcher, "last_evaluations", 1))
            if step_size == 0.0:
                reason = (
                    f"Terminated - line search found no decrease after {iteration} iterations "
                    f"(cost {cost:.6e}, gradient norm {gnorm:.3e})."
                )
                break
            last = getattr(self.line_searcher, "last_cost", np.nan)
            newcost = float(last) if np.isfinite(last) else float(objective(newx))
            newgrad = gradient(newx)
            n_grad += 1
            newgnorm = float(manifold.norm(newx, newgrad))
            d = self._direction(manifold, x, newx, grad, newgrad, d, gnorm, newgnorm)
            x, cost, grad, gnorm = newx, newcost, newgrad, newgnorm
            iteration += 1
            costs.append(cost)
            gnorms.append(gnorm)
            if self.callback is not None:
                self.callback(iteration, cost, gnorm)
        if self._log is not None:
            self._log.update(
                {
                    "cost_history": costs,
                    "gradient_norm_history": gnorms,
                    "cost_evaluations": n_cost,
                    "gradient_evaluations": n_grad,
                }
            )
        return self._return_result(
            start_time=start,
            point=x,
            cost=cost,
            iterations=iteration,
            stopping_criterion=reason,
            cost_evaluations=n_cost,
            step_size=step_size,
            gradient_norm=gnorm,
        )
