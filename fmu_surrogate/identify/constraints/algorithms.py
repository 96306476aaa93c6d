"""Algorithms 1, 2 and 3 of Matei, de Kleer and Minhas (docs/design.md §6) over scipy optimisers.

* **Algorithm 2** (cost of a point): with ``U`` the infeasible points found so far and
  ``p̃(w) = 1 − Σ_{u∈U} exp(−|w − u|² / 2σ²) + μ`` (paper eq. 9), a failed run costs
  ``J̃(w) = −log p̃(w)`` and a successful one ``J̃(w) = p̃(w) J(w) − log(p̃(w) + μ)``.
* **Algorithm 3** (one-shot heuristic): ``J'(w) = J̃(w) − λ₁ log q(w) + λ₂ [q log q +
  (1 − q) log(1 − q)]`` with the feasibility model ``q`` *before* it learns ``w``, then ``q`` is
  updated with ``(w, label)`` — after every simulation.
* **Algorithm 1** (sequence of constrained problems): minimise ``J̃`` subject to
  ``1 − δ_{k,1} − q_k(w) ≤ 0`` and ``1 − δ_{k,2} + q_k log₂ q_k + (1 − q_k) log₂(1 − q_k) ≤ 0``
  with ``δ_{k,1} = ε + (1 − ε)(λ + ε)^k``, ``δ_{k,2} = 1 + ε − λ^k`` (ε = 1e-7, λ = 0.8),
  from the previous solution, then retrain ``q`` on all data; COBYLA or SLSQP.

Gradient-based optimisers get a forward-difference gradient (step ``fd_step``, the paper's
``eps = 1e-4``) whose ``p + 1`` points are evaluated as one batch in parallel workers; within a
batch the feasibility model is held fixed and updated afterwards with the whole batch.  At an
infeasible centre the cost is ``−log p̃`` (plus the barrier), which needs no simulation, so
its difference quotient runs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.identify.constraints.evaluations import (
    BudgetExhausted,
    Evaluation,
    EvaluationStore,
)
from fmu_surrogate.identify.constraints.feasibility import FeasibilityModel

__all__ = ["GRADIENT_OPTIMIZERS", "OPTIMIZERS", "POPULATION_OPTIMIZERS", "Search", "SearchSettings", "bump_feasibility",
           "delta_sequences", "run_algorithm1", "run_restarting"]

#: scipy.optimize.minimize methods (lower case -> scipy's name).
OPTIMIZERS = {"cobyla": "COBYLA", "slsqp": "SLSQP", "powell": "Powell",
              "nelder-mead": "Nelder-Mead", "bfgs": "BFGS", "cg": "CG", "l-bfgs-b": "L-BFGS-B"}
#: Methods that use a gradient (given to them as a batched finite difference).
GRADIENT_OPTIMIZERS = {"SLSQP", "BFGS", "CG", "L-BFGS-B"}
#: Population optimisers (need bounds; each generation is one parallel batch).
POPULATION_OPTIMIZERS = {"differential-evolution": "differential_evolution"}


@dataclass(frozen=True)
class SearchSettings:
    """Constants of the algorithms (defaults: the paper's).

    Parameters
    ----------
    lambda1, lambda2 : float
        Weights of the barrier ``−log q`` and of the negative entropy in Algorithm 3.
    sigma : float
        Width of the Gaussian bumps of ``p̃`` at infeasible points (Algorithm 2).
    mu : float
        The small constant of ``p̃`` and of ``−log(p̃ + μ)``.
    epsilon, lam : float
        ``ε`` and ``λ`` of the sequences ``δ_{k,1}``, ``δ_{k,2}`` (Algorithm 1).
    outer : int
        Outer iterations of Algorithm 1.
    inner_maxiter : int
        Iteration limit of each inner (constrained) problem of Algorithm 1.
    maxiter, maxfev : int
        Iteration and function-evaluation limits passed to the optimiser (per inner problem in
        Algorithm 1).
    tol : float
        ``xtol = ftol`` of the optimiser.
    fd_step : float
        Forward-difference step of the batched gradient.
    restarts : int
        Algorithms 2 and 3: when the optimiser stops by itself before the run budget is used
        (a failed line search, a collapsed simplex), start it again from the best feasible point
        found so far, at most this many times and only while that point keeps improving.
        0 is the paper's single optimiser run.
    """

    lambda1: float = 1.0
    lambda2: float = 0.1
    sigma: float = 1e-3
    mu: float = 1e-6
    epsilon: float = 1e-7
    lam: float = 0.8
    outer: int = 25
    inner_maxiter: int = 300
    maxiter: int = 1000
    maxfev: int = 1500
    tol: float = 1e-16
    fd_step: float = 1e-4
    restarts: int = 0


def delta_sequences(k: int, epsilon: float = 1e-7, lam: float = 0.8) -> tuple[float, float]:
    """``(δ_{k,1}, δ_{k,2})`` of Algorithm 1: ``ε + (1 − ε)(λ + ε)^k`` and ``1 + ε − λ^k``.

    Parameters
    ----------
    k : int
        Outer iteration (from 0: ``δ_{0,1} = 1``, ``δ_{0,2} = ε``).
    epsilon, lam : float
        ``ε`` and ``λ``.

    Returns
    -------
    tuple of float
    """
    return epsilon + (1 - epsilon) * (lam + epsilon) ** k, 1 + epsilon - lam**k


def bump_feasibility(W: np.ndarray, infeasible: np.ndarray, sigma: float,
                     mu: float) -> np.ndarray:
    """``p̃(w) = 1 − Σ_u exp(−|w − u|² / 2σ²) + μ`` (paper eq. 9), clipped below at ``μ``.

    Parameters
    ----------
    W : ndarray, shape (n, p)
        Points.
    infeasible : ndarray, shape (m, p)
        Infeasible points found so far.
    sigma, mu : float
        Bump width and floor.

    Returns
    -------
    ndarray, shape (n,)
    """
    W = np.atleast_2d(W)
    if infeasible.size == 0:
        return np.full(W.shape[0], 1.0 + mu)
    d2 = ((W[:, None, :] - infeasible[None, :, :]) ** 2).sum(axis=2)
    p = 1.0 - np.exp(-d2 / (2.0 * sigma**2)).sum(axis=1) + mu
    return np.maximum(p, mu)


def _neg_entropy(q: np.ndarray, log: Callable = np.log) -> np.ndarray:
    return q * log(q) + (1 - q) * log(1 - q)


class Search:
    """State shared by the algorithms: the evaluation store, ``q``, ``U`` and the call trace.

    Parameters
    ----------
    store : EvaluationStore
        Evaluations of ``J``.
    model : FeasibilityModel
        The feasibility model ``q`` (trained here).
    settings : SearchSettings
        Constants.
    """

    def __init__(self, store: EvaluationStore, model: FeasibilityModel,
                 settings: SearchSettings) -> None:
        self.store = store
        self.model = model
        self.s = settings
        self.infeasible = np.empty((0, len(store.parameters)))
        self._learned: set[int] = set()  # runs in the training set D of q
        self.trace: list[tuple[int, float]] = []  # (run, objective value) of each call

    # ------------------------------------------------------------------ pieces
    def evaluate(self, W: np.ndarray) -> list[Evaluation]:
        """Evaluate rows of ``W`` and add new infeasible points to ``U``."""
        evs = self.store.evaluate(W)
        new_bad = [e.w for e in evs if not e.ok
                   and not np.any(np.all(self.infeasible == e.w, axis=1))]
        if new_bad:
            self.infeasible = np.vstack([self.infeasible, np.unique(new_bad, axis=0)])
        return evs

    def j_tilde(self, evs: list[Evaluation]) -> np.ndarray:
        """Algorithm 2's cost of evaluated points."""
        W = np.array([e.w for e in evs])
        p = bump_feasibility(W, self.infeasible, self.s.sigma, self.s.mu)
        ok = np.array([e.ok for e in evs])
        J = np.array([e.cost if e.ok else 0.0 for e in evs])
        return np.where(ok, np.minimum(p, 1.0) * J - np.log(p + self.s.mu), -np.log(p))

    def barrier(self, W: np.ndarray) -> np.ndarray:
        """``−λ₁ log q(w) + λ₂ [q log q + (1 − q) log(1 − q)]`` with the current ``q``."""
        q = self.model.predict_proba(W)
        return -self.s.lambda1 * np.log(q) + self.s.lambda2 * _neg_entropy(q)

    def learn(self, evs: list[Evaluation]) -> None:
        """Add evaluations that ``q`` has not seen to its training set and update it."""
        new = {e.run: e for e in evs if e.run not in self._learned}
        if new:
            self._learned.update(new)
            self.model.update(np.array([e.w for e in new.values()]),
                              np.array([float(e.ok) for e in new.values()]))

    def retrain(self) -> None:
        """Retrain ``q`` on every evaluation of the store (Algorithm 1, line 8; final model)."""
        evs = self.store.evaluations()
        if evs:
            self.model.fit(np.array([e.w for e in evs]), np.array([float(e.ok) for e in evs]))
            self._learned = {e.run for e in evs}

    # ------------------------------------------------------------------ objectives
    def objective(self, algorithm: int) -> tuple[Callable, Callable]:
        """``(f, grad)`` of Algorithm 2 (``J̃``) or 3 (``J'``, learning online)."""

        def values(W: np.ndarray) -> np.ndarray:
            evs = self.evaluate(W)
            v = self.j_tilde(evs)
            if algorithm == 3:
                v = v + self.barrier(W)
                self.learn(evs)
            for e, x in zip(evs, v):
                self.trace.append((e.run, float(x)))
            return v

        def f(w: np.ndarray) -> float:
            return float(values(np.asarray(w, dtype=float)[None, :])[0])

        def grad(w: np.ndarray) -> np.ndarray:
            w = np.asarray(w, dtype=float)
            h = self.s.fd_step
            W = np.vstack([w, w + h * np.eye(w.size)])
            if not self.evaluate(w[None, :])[0].ok:
                # an infeasible centre costs -log p~ (+ the barrier): smooth functions that
                # need no simulation, so the difference quotient runs nothing
                v = -np.log(bump_feasibility(W, self.infeasible, self.s.sigma, self.s.mu))
                if algorithm == 3:
                    v = v + self.barrier(W)
                return (v[1:] - v[0]) / h
            v = values(W)
            return (v[1:] - v[0]) / h

        self._values = values
        return f, grad


def _minimize(method: str, f: Callable, grad: Callable, x0: np.ndarray, s: SearchSettings,
              constraints: Any = ()) -> Any:
    from scipy.optimize import minimize

    opts: dict[str, Any] = {"maxiter": s.maxiter}
    if method in ("Nelder-Mead", "Powell"):
        opts.update(maxfev=s.maxfev, xtol=s.tol, ftol=s.tol)
        if method == "Nelder-Mead":
            opts = {"maxiter": s.maxiter, "maxfev": s.maxfev, "xatol": s.tol, "fatol": s.tol}
    elif method == "L-BFGS-B":
        opts.update(maxfun=s.maxfev, ftol=s.tol, gtol=s.tol)
    elif method in ("BFGS", "CG"):
        opts.update(gtol=s.tol)
    elif method == "SLSQP":
        opts.update(ftol=s.tol)
    elif method == "COBYLA":
        opts.update(tol=s.tol)
    jac = grad if method in GRADIENT_OPTIMIZERS else None
    kw: dict[str, Any] = {}
    if constraints:
        kw["constraints"] = constraints
    return minimize(f, x0, method=method, jac=jac, options=opts, **kw)


def _run_population(search: Search, x0: np.ndarray, algorithm: int,
                    bounds: np.ndarray | None, seed: int) -> str:
    """scipy's differential evolution, one generation per batch (``vectorized=True``)."""
    from scipy.optimize import differential_evolution

    if bounds is None:
        raise InvalidInputError(
            "differential evolution needs bounds=[(low, high), ...] per parameter.")
    search.objective(algorithm)
    try:
        res = differential_evolution(lambda X: search._values(np.asarray(X).T), bounds,
                                     vectorized=True, updating="deferred", polish=False,
                                     maxiter=search.s.maxiter, x0=np.clip(x0, *bounds.T),
                                     seed=seed)
    except BudgetExhausted as exc:
        return str(exc)
    return f"differential evolution: {res.message}"


def run_restarting(search: Search, x0: np.ndarray, method: str, algorithm: int,
                   bounds: np.ndarray | None = None, seed: int = 0) -> str:
    """Algorithm 2 or 3 by an unconstrained optimiser, restarted from the best point while that
    improves; returns the stopping reason.

    Parameters
    ----------
    search : Search
        The shared state.
    x0 : ndarray
        Initial parameters.
    method : str
        scipy method name, or ``"differential_evolution"`` (a population optimiser: each
        generation is one batch of parallel runs).
    algorithm : {2, 3}
        2: minimise Algorithm 2's ``J̃`` (failures cost ``−log p̃``); 3: Algorithm 3's ``J'``
        with ``q`` updated after every simulation.
    bounds : ndarray, shape (p, 2), optional
        Search box (differential evolution only).
    seed : int
        Seed of differential evolution.

    Returns
    -------
    str
    """
    if algorithm not in (2, 3):
        raise InvalidInputError(f"algorithm must be 2 or 3, got {algorithm!r}; Algorithm 1 is "
                                "run_algorithm1.")
    if method == "differential_evolution":
        return _run_population(search, x0, algorithm, bounds, seed)
    f, grad = search.objective(algorithm)
    x, best = np.asarray(x0, dtype=float), np.inf
    reasons = []
    for attempt in range(search.s.restarts + 1):
        try:
            res = _minimize(method, f, grad, x, search.s)
        except BudgetExhausted as exc:
            reasons.append(str(exc))
            break
        reasons.append(f"{method}: {res.message}")
        evs = [e for e in search.store.evaluations() if e.ok]
        if not evs:
            break
        e = min(evs, key=lambda e: e.cost)
        if not e.cost < best:  # the restart found nothing better: stop
            break
        x, best = e.w, e.cost
    if len(reasons) > 1:
        return f"{reasons[-1]} (after {len(reasons) - 1} restarts from the best point)"
    return reasons[0]


def run_algorithm1(search: Search, x0: np.ndarray, method: str,
                   on_outer: Callable[[int, np.ndarray], None] | None = None) -> str:
    """Algorithm 1: the sequence of constrained problems (COBYLA or SLSQP).

    Parameters
    ----------
    search : Search
        The shared state.
    x0 : ndarray
        Initial parameters.
    method : {"COBYLA", "SLSQP"}
        A scipy method that takes inequality constraints.
    on_outer : callable, optional
        Called with ``(k, w_k)`` after each outer iteration.

    Returns
    -------
    str
        The stopping reason.
    """
    s = search.s
    f, grad = search.objective(2)
    w = np.asarray(x0, dtype=float)
    log2 = np.log2
    for k in range(s.outer):
        d1, d2 = delta_sequences(k, s.epsilon, s.lam)
        def g1(x: np.ndarray, d1: float = d1) -> float:  # q(w) - (1 - d1) >= 0
            return float(search.model.predict_proba(x)[0] - (1.0 - d1))

        def g2(x: np.ndarray, d2: float = d2) -> float:  # entropy constraint
            q = search.model.predict_proba(x)
            return float(-(1.0 - d2 + _neg_entropy(q, log2)[0]))

        cons = [{"type": "ineq", "fun": g1}, {"type": "ineq", "fun": g2}]
        try:
            res = _minimize(method, f, grad, w, replace(s, maxiter=s.inner_maxiter), cons)
        except BudgetExhausted as exc:
            search.retrain()
            return f"{exc} (outer iteration {k + 1} of {s.outer})"
        w = np.asarray(res.x, dtype=float)
        search.retrain()
        if on_outer is not None:
            on_outer(k, w)
    return f"{s.outer} outer iterations done"
