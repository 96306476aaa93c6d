"""Exact data in :class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier`: states below the
subspace rank (docs/design.md §4).

When the subspace step finds r < n states and round-off (not noise) set r, the singular values
just below the cut may still carry model information that the refinement can use (the
mass-spring-damper chain from its FMU's data: the eighth direction lies at round-off in the
Hankel matrix, yet eight refined states fit the record 6× better than seven).  The fit of r
states is followed by fits of r + 1, r + 2, … states from subspace models of that order (the
directions below the cut taken), each kept while it lowers the cost by at least ``GROW_FACTOR``
and the fit is above round-off.  The functions act on a fitted estimator.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.init.initial import subspace_initial_values
from fmu_surrogate.identify.linear.model.manifold import PARAMETER_NAMES

Array = NDArray[np.float64]

#: An added state is kept when it lowers the cost by at least this factor (measured on the MSD
#: chain: 7 → 8 states lowers it 350×; a state at round-off of an exactly fitted model changes
#: it by less than a factor 2).
GROW_FACTOR = 4.0
#: No growth once the relative RMS residual is below this (the data's round-off ~1e-14).
GROW_FLOOR = 1e-11


def relative_residual(cost: float, exps: list[Any]) -> float:
    """RMS output residual relative to the RMS output, from the cost ``½ Σ w |r|²``
    (trapezoidal weights; the Euler weights differ from them by O(h)).

    Parameters
    ----------
    cost : float
        Final cost of a fit.
    exps : list of Experiment
        The training experiments.

    Returns
    -------
    float
    """
    energy = sum(float(np.trapezoid(np.sum(e.y**2, axis=1), e.t)) for e in exps)
    return float(np.sqrt(2.0 * max(cost, 0.0) / max(energy, 1e-300)))


def grow(
    est: Any, exps: list[Any], r: int, m: int, names: tuple[str, ...], n: int,
    Q_fixed: Array, used: str,
) -> None:
    """Refine r + 1, r + 2, … states while each lowers the cost by ``GROW_FACTOR``.

    Parameters
    ----------
    est : LinearPHIdentifier
        Fitted with r states padded to n; its ``system_``, ``x0_``, ``result_`` are replaced by
        the best fit.
    exps : list of Experiment
        The training experiments.
    r : int
        States above round-off in the subspace step.
    m : int
        Number of ports.
    names : tuple of str
        Learned parameters.
    n : int
        Requested order.
    Q_fixed : ndarray, shape (n, n)
        Storage matrix when Q is not learned (a multiple of the identity).
    used : str
        Initialisation label of the fit.
    """
    best = (est.system_, est.x0_, est.result_)
    first = best[2]
    k = r
    while k < n and relative_residual(best[2].final_cost, exps) > GROW_FLOOR:
        t0 = time.perf_counter()
        try:
            sub = subspace_initial_values(exps, n, names, Q_fixed, est.subspace_horizon,
                                          rank=k + 1)
        except ValueError:
            break
        k_new = sub.core["J"].shape[0]
        if k_new <= k:
            break
        init = {p: sub.core[p] for p in names}
        fixed = {p: sub.core[p] for p in PARAMETER_NAMES if p not in names}
        # no gradient tolerance: the cost scale is far below the r-state fit's, the stall rule
        # and its geodesic-acceleration phase end the refinement
        est._fit(exps, k_new, m, names, fixed, init, used, time.perf_counter() - t0, pad_to=n,
                 tol=0.0)
        res = est.result_
        if not res.final_cost * GROW_FACTOR <= best[2].final_cost:
            break
        best = (est.system_, est.x0_, replace(
            res,
            time=best[2].time + res.time,
            stopping_reason=(f"{res.stopping_reason} ({k_new} states: {r} above round-off in "
                             f"the subspace step, {k_new - r} below it kept as they lowered "
                             f"the cost ×{first.final_cost / res.final_cost:.3g})"),
        ))
        k = k_new
    est.system_, est.x0_, est.result_ = best
