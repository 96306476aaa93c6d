"""pymanopt's optimisers and the paper's CG on the linear pH objective (first-order methods).

``optimizer="cg"`` is :class:`~fmu_surrogate.identify.linear.optim.rcg.RestartedConjugateGradient` (the paper's
Algorithm 1) talking to the objective directly; ``"steepest"``, ``"trust_regions"`` and
``"pymanopt_cg"`` are pymanopt's optimisers behind a problem adapter that records the cost and
gradient norm of every iterate (and, for trust regions, supplies a finite-difference Hessian).
The second-order default, ``optimizer="lm"``, is :mod:`fmu_surrogate.identify.linear.optim.lm`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fmu_surrogate.identify.linear.model.manifold import DirectProblem, Objective, product_manifold


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


def make_optimizer(est: Any, callback: Any) -> Any:
    """The pymanopt optimiser (or the paper's CG) for the estimator's settings."""
    from pymanopt.optimizers import ConjugateGradient, SteepestDescent, TrustRegions
    from pymanopt.optimizers.line_search import BackTrackingLineSearcher

    from fmu_surrogate.identify.linear.optim.rcg import ArmijoLineSearch, RestartedConjugateGradient

    if est.line_search == "armijo":
        ls = ArmijoLineSearch(initial_step=est.initial_step)
    else:
        ls = BackTrackingLineSearcher(initial_step_size=est.initial_step, max_iterations=60)
    common: dict[str, Any] = {
        "max_iterations": int(est.max_iter),
        "min_gradient_norm": float(est.tol),
        "min_step_size": 0.0,
        "max_time": float(est.max_time) if est.max_time else np.inf,
        "max_cost_evaluations": 10**9,
        "verbosity": 0,
        "log_verbosity": 1,
    }
    if est.optimizer in ("cg", "lm") or est.max_iter == 0:  # max_iter = 0: just the initial guess
        return RestartedConjugateGradient(
            restart_every=est.restart_every,
            beta_rule=est.beta_rule,
            line_searcher=ls,
            callback=callback,
            **common,
        )
    if est.optimizer == "steepest":
        return SteepestDescent(line_searcher=ls, **common)
    if est.optimizer == "pymanopt_cg":
        return ConjugateGradient(beta_rule=est.beta_rule, line_searcher=ls, **common)
    return TrustRegions(**common)


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


def run_first_order(
    est: Any, manifold: Any, obj: Objective, x_init: list[Any], callback: Any
) -> tuple[Any, tuple[float, ...], tuple[float, ...]]:
    """Run the estimator's first-order optimiser; returns (pymanopt result, costs, ‖grad‖s)."""
    import pymanopt

    direct = est.optimizer in ("cg", "lm") or est.max_iter == 0
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
    opt = make_optimizer(est, callback)
    record: list[tuple[float, float]] = []
    if not direct:
        problem = _adapter(
            problem, manifold, obj, est.optimizer == "trust_regions", record, callback
        )
    res = opt.run(problem, initial_point=x_init)
    log = res.log or {}
    if "cost_history" in log:
        costs = tuple(float(c) for c in log["cost_history"])
        gnorms = tuple(float(g) for g in log["gradient_norm_history"])
    else:  # cost and gradient norm at every iterate whose gradient the optimiser asked for
        costs = tuple(c for c, _ in record) or (float(res.cost),)
        gnorms = tuple(g for _, g in record)
    return res, costs, gnorms
