"""Bayesian optimisation with a learned feasibility constraint (beyond the paper, docs/design.md §6).

A Gaussian process (scikit-learn, Matérn 5/2 with one length scale per parameter plus a white
noise term) models ``log J`` on the successful runs; the feasibility model ``q`` (the same models
as the paper's algorithms) gives the probability that a candidate simulates.  The next point
maximises the constrained expected improvement ``EI(w) · q(w)`` (Gardner et al. 2014; BoTorch's
``ConstrainedExpectedImprovement`` with a classifier as the constraint model) over random and
local candidates in the box.  The first batch — ``x0`` and a Latin hypercube of ``2p + 1``
points — runs in parallel workers.
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.identify.constraints.algorithms import Search
from fmu_surrogate.identify.constraints.evaluations import BudgetExhausted

__all__ = ["constrained_ei", "run_bayesopt"]


def constrained_ei(mu: np.ndarray, sd: np.ndarray, best: float, q: np.ndarray) -> np.ndarray:
    """``EI · q``: expected improvement below ``best`` of ``N(mu, sd²)``, times feasibility.

    Parameters
    ----------
    mu, sd : ndarray, shape (n,)
        Posterior mean and standard deviation of the (log) cost.
    best : float
        The lowest feasible (log) cost so far.
    q : ndarray, shape (n,)
        Probability of feasibility.

    Returns
    -------
    ndarray, shape (n,)
    """
    from scipy.stats import norm

    sd = np.maximum(sd, 1e-12)
    z = (best - mu) / sd
    return ((best - mu) * norm.cdf(z) + sd * norm.pdf(z)) * q


def run_bayesopt(search: Search, x0: np.ndarray, bounds: np.ndarray, seed: int = 0,
                 n_candidates: int = 2000) -> str:
    """Constrained-EI Bayesian optimisation until the run budget is used; returns the reason.

    Parameters
    ----------
    search : Search
        The shared state (evaluation store, feasibility model).
    x0 : ndarray, shape (p,)
        A first point (evaluated with the initial design).
    bounds : ndarray, shape (p, 2)
        The box; a parameter with equal bounds is held at that value.
    seed : int
        Seed of the design and of the candidates.
    n_candidates : int
        Random candidates per step (plus as many around the best point).

    Returns
    -------
    str
    """
    import warnings

    from scipy.stats import qmc
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

    lo, hi = bounds[:, 0], bounds[:, 1]
    free = hi > lo
    d = int(free.sum())
    rng = np.random.default_rng(seed)

    def to_w(U: np.ndarray) -> np.ndarray:
        W = np.tile(lo, (U.shape[0], 1))
        W[:, free] = lo[free] + U * (hi[free] - lo[free])
        return W

    def to_u(W: np.ndarray) -> np.ndarray:
        return (W[:, free] - lo[free]) / (hi[free] - lo[free])

    x0 = np.where(free, x0, lo)
    kernel = (ConstantKernel(1.0, (1e-3, 1e3)) * Matern(np.full(d, 0.3), (1e-3, 1e1), nu=2.5)
              + WhiteKernel(1e-4, (1e-8, 1e-1)))
    design = np.vstack([x0, to_w(qmc.LatinHypercube(d=d, seed=seed).random(2 * d + 1))])
    try:
        evs = search.evaluate(design)
        search.learn(evs)
        for e in evs:
            search.trace.append((e.run, float(np.log(e.cost)) if e.ok else np.nan))
        while True:
            evs = search.store.evaluations()
            W = np.array([e.w for e in evs])
            ok = np.array([e.ok for e in evs])
            U = to_u(W)
            cand = rng.random((n_candidates, d))
            if ok.any():
                y = np.log(np.array([e.cost for e in evs])[ok])
                gp = GaussianProcessRegressor(kernel, normalize_y=True, random_state=seed)
                with warnings.catch_warnings():  # hyperparameters at a bound are fine here
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    gp.fit(U[ok], y)
                kernel = gp.kernel_  # warm start of the next fit's hyperparameters
                ub = U[ok][np.argmin(y)]
                local = np.clip(ub + rng.normal(0.0, 0.03, (n_candidates, d)), 0.0, 1.0)
                cand = np.vstack([cand, local])
                mu, sd = gp.predict(cand, return_std=True)
                acq = constrained_ei(mu, sd, float(y.min()), search.model.predict_proba(
                    to_w(cand)))
            else:  # nothing simulates yet: go where success is most likely
                acq = search.model.predict_proba(to_w(cand))
            for i in np.argsort(-acq):
                w = to_w(cand[i:i + 1])
                if not search.store.cached(w[0]):
                    break
            e, = search.evaluate(w)
            search.learn([e])
            search.trace.append((e.run, float(np.log(e.cost)) if e.ok else np.nan))
    except BudgetExhausted as exc:
        return str(exc)
