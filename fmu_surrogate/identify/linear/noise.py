"""Noisy data in :class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier` (docs/design.md §4).

When the subspace step finds r < n states and the noise level (not round-off) set r, the r-state
refinement gets a second start from the paper's guess, and all n states are then refined from the
padded model, regularised toward it with λ chosen by generalised cross-validation
(``complete``).  The functions act on a fitted estimator (its ``system_``, ``x0_``, ``result_``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.data import paper_initial_guess
from fmu_surrogate.identify.linear.init.initial import coupled_start
from fmu_surrogate.identify.linear.init.subspace import noise_limited
from fmu_surrogate.identify.linear.model.manifold import PARAMETER_NAMES

Array = NDArray[np.float64]


def noisy(sub: Any) -> bool:
    """Whether the subspace rank was set by the noise level of the data (not round-off)."""
    return noise_limited(sub.subspace.singular_values)


def refine_all(est: Any, sub: Any) -> bool:
    """Whether all n states are refined after the r identified ones (``complete``)."""
    return noisy(sub) if est.complete == "auto" else est.complete == "refine"


def second_start(
    est: Any, exps: list[Any], r: int, m: int, names: tuple[str, ...],
    fixed: dict[str, Array], n: int,
) -> None:
    """Noisy data: the r states also from the paper's guess; the lower cost wins.

    A subspace model from noisy data can start the refinement in the basin of a degenerate
    minimum (measured on the paper's n = 5 problem, σ = 0.05: a state with eigenvalue 2e5,
    cost 14× the noise level, in one of 20 realisations, depending on round-off)."""
    keep = (est.system_, est.x0_, est.result_)
    guess = paper_initial_guess(r, m, est.seed)
    init = {q: guess[q] for q in names}
    est._fit(exps, r, m, names, fixed, init, "paper", keep[2].init_time_s, pad_to=n)
    if not est.result_.final_cost < keep[2].final_cost:
        est.system_, est.x0_, est.result_ = keep


def refine_completed(
    est: Any, exps: list[Any], n: int, m: int, names: tuple[str, ...], r: int, used: str
) -> None:
    """Refine all n states from the padded fit of r states (``complete``).

    Regularised toward the padded model ``w_ref`` with ``(λ/2)‖w − w_ref‖²``, λ chosen by
    generalised cross-validation ``GCV(λ) = RSS / (1 − df/N)²`` (``df = Σ s²/(s² + λ)``
    from the Jacobian's singular values s at the fit, N residuals) over ``λ = 0`` and
    ``s₁² · 10⁻⁶ … 10⁰`` and the padded model itself (λ = ∞, ``df`` = the identifiable
    directions of the r-state fit), which is kept when no fit has a dense Jacobian.  The path
    runs from λ = 0 (started at the weakly coupled padded model) upward, each fit started at the
    previous one: a better-conditioned problem started near its solution converges in a few
    steps (4× faster than a start from the padded model for every λ, measured on the paper's
    n = 5 problem), while a descending path would start its λ = 0 fit at the nearly decoupled,
    stationary padded point and stay there.
    """
    sys0, x00, first = est.system_, est.x0_, est.result_
    ref = {"J": sys0.J, "R": sys0.R, "Q": sys0.Q, "B": sys0.B, "x0": x00}
    p = coupled_start(ref, r, 1e-2 * float(np.max(np.abs(sys0.B))), est.seed)
    init = {q: p[q] for q in names}
    fixed = {q: p[q] for q in PARAMETER_NAMES if q not in names}
    sv0 = first.jacobian_singular_values
    if not sv0:
        return
    rows = sum(e.y.size for e in exps)

    def gcv(cost: float, df: float) -> float:
        return 2.0 * max(cost, 0.0) / max(1.0 - df / rows, 1e-12) ** 2

    # the padded model itself is the candidate λ = ∞ (its r states' identifiable directions)
    best = (gcv(first.final_cost, first.jacobian_rank), math.inf, sys0, x00, first)
    scored = False
    for lam in (0.0,) + tuple(sv0[0] ** 2 * 10.0**k for k in range(-6, 1)):
        est._fit(exps, n, m, names, fixed, init, used, first.init_time_s + first.time,
                  reg=(lam, {q: ref[q] for q in names}))
        fit = {"J": est.system_.J, "R": est.system_.R, "Q": est.system_.Q, "B": est.system_.B,
               "x0": est.x0_}
        init = {q: fit[q] for q in names}  # warm start of the next, more regularised fit
        res = est.result_
        sv = np.asarray(res.jacobian_singular_values)
        if not sv.size:
            break
        penalty = 0.5 * lam * sum(float(np.sum((fit[q] - ref[q]) ** 2)) for q in names)
        df = float(np.sum(sv**2 / (sv**2 + lam))) if lam > 0 else float(res.jacobian_rank)
        score = gcv(res.final_cost - penalty, df)
        scored = True
        if score < best[0]:
            best = (score, lam, est.system_, est.x0_, res)
    _, lam, est.system_, est.x0_, res = best
    if math.isinf(lam):
        why = ("the padded model has the lowest GCV among the refinements of all states"
               if scored else "no refinement of all states had a dense Jacobian for GCV")
        est.result_ = replace(first, stopping_reason=(
            f"{first.stopping_reason} ({r} states padded to {n}: {why})"))
        return
    est.result_ = replace(
        res,
        cost_history=first.cost_history + res.cost_history[1:],
        gradient_norm_history=first.gradient_norm_history + res.gradient_norm_history[1:],
        n_iter=first.n_iter + res.n_iter,
        time=first.time + res.time,
        stopping_reason=(f"{res.stopping_reason} (all {n} states after {r}, regularised "
                         f"toward the padded model, λ = {lam:.3g} by GCV)"),
    )

