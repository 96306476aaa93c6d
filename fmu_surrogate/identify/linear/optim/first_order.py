"""pymanopt's optimisers and the paper's CG on the linear pH objective (first-order methods).

:class:`CG` (``optimizer="cg"``) is :class:`~fmu_surrogate.identify.linear.optim.rcg.RestartedConjugateGradient`
(the paper's Algorithm 1) talking to the objective directly; :class:`SteepestDescent`,
:class:`TrustRegions` and :class:`PymanoptCG` (``"steepest"``, ``"trust_regions"``,
``"pymanopt_cg"``) are pymanopt's optimisers behind a problem adapter that records the cost and
gradient norm of every iterate (and, for trust regions, supplies a finite-difference Hessian).
The second-order default, :class:`~fmu_surrogate.identify.linear.optim.lm.LM` (``"lm"``), is
:mod:`fmu_surrogate.identify.linear.optim.lm`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.identify.linear.model.manifold import DirectProblem, Objective, product_manifold
from fmu_surrogate.identify.linear.optim.base import Optimizer, OptimizerOutcome

#: The line searches of the first-order methods.
LINE_SEARCHES = ("armijo", "backtracking")


def make_manifold(
    n: int, m: int, names: tuple[str, ...], rank_R: int | None, k: int | None = None
) -> Any:
    """The product manifold of the fitted parameters (see :mod:`.ph_manifold`).

    R's factor is ``n × rank_R`` on ``PSDFixedRank``, or ``n × k`` (default n) on the total
    space ``Euclidean`` when ``rank_R`` is None.
    """
    from pymanopt.manifolds import (
        Euclidean,
        PSDFixedRank,
        SkewSymmetric,
        SymmetricPositiveDefinite,
    )

    parts = []
    for p in names:
        if p == "J":
            parts.append(SkewSymmetric(n))
        elif p == "R":
            parts.append(PSDFixedRank(n, int(rank_R)) if rank_R else Euclidean(n, k or n))
        elif p == "Q":
            parts.append(SymmetricPositiveDefinite(n))
        elif p == "B":
            parts.append(Euclidean(n, m))
        else:
            parts.append(Euclidean(n))
    return product_manifold(parts)


@dataclass(frozen=True)
class FirstOrder(Optimizer):
    """Settings of the first-order optimisers (not used directly: see its subclasses).

    Parameters
    ----------
    max_iter : int
        Iteration budget (the paper: 100).
    tol : float
        Stop when the Riemannian gradient norm falls below ``tol``.
    max_time : float, optional
        Wall-time budget [s].
    line_search : {"armijo", "backtracking"}
        ``"armijo"``: fixed first trial ``initial_step`` (paper); ``"backtracking"``: pymanopt's
        ``BackTrackingLineSearcher`` (first trial of length ``initial_step``, then warm-started).
    initial_step : float
        First line-search trial (paper: 1000).
    restart_every : int or None
        CG restart period (paper: 5).
    beta_rule : str
        CG coefficient, see :data:`fmu_surrogate.identify.linear.optim.rcg.BETA_RULE_NAMES`.
    """

    line_search: str = "armijo"
    initial_step: float = 1000.0
    restart_every: int | None = 5
    beta_rule: str = "FletcherReeves"

    def check(self) -> None:
        """Raise ``ValueError`` naming the setting and the fix for an invalid setting."""
        super().check()
        if self.line_search not in LINE_SEARCHES:
            raise InvalidInputError(
                f"line_search must be one of {LINE_SEARCHES}, got {self.line_search!r}.")

    def run(self, obj: Objective, manifold: Any, coords: Any, point: list[Any],
            callback: Any = None) -> OptimizerOutcome:
        """Minimise ``obj`` on ``manifold`` from ``point``.

        Parameters
        ----------
        obj : Objective
            Cost and gradient on the manifold.
        manifold : product manifold
            The manifold of the fitted parameters.
        coords : Coordinates
            Not used by first-order methods (the same call as :class:`~.lm.LM`).
        point : list of ndarray
            Initial point.
        callback : callable, optional
            ``callback(iteration, cost, gradient_norm)`` after every iteration.

        Returns
        -------
        OptimizerOutcome
        """
        return _run_first_order(self, manifold, obj, point, callback)

    def _solver(self, line_searcher: Any, common: dict[str, Any], callback: Any) -> Any:
        """The pymanopt optimiser of this method (``common``: its shared settings)."""
        raise NotImplementedError


@dataclass(frozen=True)
class CG(FirstOrder):
    """The paper's restarted conjugate gradients (Algorithm 1), ``optimizer="cg"``:
    :class:`~fmu_surrogate.identify.linear.optim.rcg.RestartedConjugateGradient` on the
    objective directly."""

    name: ClassVar[str] = "cg"

    def _solver(self, line_searcher: Any, common: dict[str, Any], callback: Any) -> Any:
        from fmu_surrogate.identify.linear.optim.rcg import RestartedConjugateGradient

        return RestartedConjugateGradient(restart_every=self.restart_every,
                                          beta_rule=self.beta_rule, line_searcher=line_searcher,
                                          callback=callback, **common)


@dataclass(frozen=True)
class SteepestDescent(FirstOrder):
    """pymanopt's steepest descent with the same line search, ``optimizer="steepest"``."""

    name: ClassVar[str] = "steepest"

    def _solver(self, line_searcher: Any, common: dict[str, Any], callback: Any) -> Any:
        from pymanopt.optimizers import SteepestDescent as Solver

        return Solver(line_searcher=line_searcher, **common)


@dataclass(frozen=True)
class TrustRegions(FirstOrder):
    """pymanopt's trust regions with a finite-difference Hessian (one extra gradient per
    Hessian-vector product), ``optimizer="trust_regions"``."""

    name: ClassVar[str] = "trust_regions"

    def _solver(self, line_searcher: Any, common: dict[str, Any], callback: Any) -> Any:
        from pymanopt.optimizers import TrustRegions as Solver

        return Solver(**common)


@dataclass(frozen=True)
class PymanoptCG(FirstOrder):
    """pymanopt's conjugate gradients (no periodic restart), ``optimizer="pymanopt_cg"``."""

    name: ClassVar[str] = "pymanopt_cg"

    def _solver(self, line_searcher: Any, common: dict[str, Any], callback: Any) -> Any:
        from pymanopt.optimizers import ConjugateGradient

        return ConjugateGradient(beta_rule=self.beta_rule, line_searcher=line_searcher, **common)


def _pymanopt_optimizer(opt: FirstOrder, callback: Any) -> Any:
    """The pymanopt optimiser (or the paper's CG) for the settings of ``opt``."""
    from pymanopt.optimizers.line_search import BackTrackingLineSearcher

    from fmu_surrogate.identify.linear.optim.rcg import ArmijoLineSearch

    if opt.line_search == "armijo":
        ls = ArmijoLineSearch(initial_step=opt.initial_step)
    else:
        ls = BackTrackingLineSearcher(initial_step_size=opt.initial_step, max_iterations=60)
    common: dict[str, Any] = {
        "max_iterations": int(opt.max_iter),
        "min_gradient_norm": float(opt.tol),
        "min_step_size": 0.0,
        "max_time": float(opt.max_time) if opt.max_time else np.inf,
        "max_cost_evaluations": 10**9,
        "verbosity": 0,
        "log_verbosity": 1,
    }
    if opt.max_iter == 0:  # just the initial guess, reported as the paper's CG reports it
        opt = CG(**{f.name: getattr(opt, f.name) for f in fields(opt)})
    return opt._solver(ls, common, callback)


def _adapter(
    problem: Any,
    manifold: Any,
    obj: Objective,
    fd_hessian: bool,
    record: list[tuple[float, float]],
    callback: Any,
) -> Any:
    """Problem adapter for pymanopt's optimisers: records (cost, ‖grad‖) at every new iterate.

    With ``fd_hessian`` it adds a finite-difference Riemannian Hessian-vector product
    ``Hess f(x)[v] ≈ (T_{x⁺→x} grad f(x⁺) − grad f(x)) / h``, ``x⁺ = R_x(h v)``,
    ``h = 1e-6 / ‖v‖`` — one extra gradient per product.  (pymanopt returns a plain list from
    a user-supplied Riemannian Hessian on product manifolds, which its trust-region solver
    cannot do arithmetic with, hence this adapter.)
    """

    def rgrad(point: Any) -> Any:
        return manifold.euclidean_to_riemannian_gradient(point, obj.euclidean_gradient(point))

    def recorded_gradient(point: Any) -> Any:
        g = problem.riemannian_gradient(point)
        gn = float(manifold.norm(point, g))
        record.append((float(problem.cost(point)), gn))
        if callback is not None and len(record) > 1:
            callback(len(record) - 1, record[-1][0], gn)
        return g

    def hess(point: Any, v: Any) -> Any:
        nv = float(manifold.norm(point, v))
        if nv == 0.0:
            return manifold.zero_vector(point)
        h = 1e-6 / nv
        xp = manifold.retraction(point, v * h)
        return (manifold.transport(xp, point, rgrad(xp)) - rgrad(point)) / h

    class _Adapter:
        pass

    a = _Adapter()
    a.manifold = manifold
    a.cost = problem.cost
    a.riemannian_gradient = recorded_gradient
    a.preconditioner = problem.preconditioner
    if fd_hessian:
        a.riemannian_hessian = hess
    return a


def _run_first_order(
    opt: FirstOrder, manifold: Any, obj: Objective, x_init: list[Any], callback: Any
) -> OptimizerOutcome:
    """Run the first-order optimiser ``opt``, recording the cost and gradient norm."""
    import pymanopt

    direct = isinstance(opt, CG) or opt.max_iter == 0
    if direct:
        # RestartedConjugateGradient uses only these three members: no pymanopt wrappers
        problem: Any = DirectProblem(manifold, obj)
    else:

        @pymanopt.function.numpy(manifold)
        def cost(*point: Any) -> float:
            return obj.cost(point)

        @pymanopt.function.numpy(manifold)
        def egrad(*point: Any) -> list[Any]:
            return obj.euclidean_gradient(point)

        problem = pymanopt.Problem(manifold, cost, euclidean_gradient=egrad)
    solver = _pymanopt_optimizer(opt, callback)
    record: list[tuple[float, float]] = []
    if not direct:
        problem = _adapter(
            problem, manifold, obj, isinstance(opt, TrustRegions), record, callback
        )
    res = solver.run(problem, initial_point=x_init)
    log = res.log or {}
    if "cost_history" in log:
        costs = tuple(float(c) for c in log["cost_history"])
        gnorms = tuple(float(g) for g in log["gradient_norm_history"])
    else:  # cost and gradient norm at every iterate whose gradient the optimiser asked for
        costs = tuple(c for c, _ in record) or (float(res.cost),)
        gnorms = tuple(g for _, g in record)
    return OptimizerOutcome(
        point=list(res.point), cost_history=costs, gradient_norm_history=gnorms,
        n_iter=int(res.iterations), stopping_reason=str(res.stopping_criterion),
        gradient_norm=float(res.gradient_norm))
