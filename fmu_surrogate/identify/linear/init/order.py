"""The model order from data: Hankel singular values bound it, held-out error chooses it.

Criterion (``LinearPHIdentifier(order=None)``)
----------------------------------------------
1. **Candidates** ``r = 1 … r_max`` (and ``r = 0``, a static map, when the model has a
   feedthrough): ``r_max`` is the number of singular values of the subspace method's ``L₃₂``
   above :func:`~fmu_surrogate.identify.linear.init.subspace.numerical_floor` (round-off or the noise
   level) plus :data:`ORDER_MARGIN`, at most :data:`MAX_ORDER`.  Directions below the floor carry no information the data
   can confirm, so no larger order is considered.
2. **Held-out error** of each candidate: the model of order r is identified from the training
   part — all experiments but the last, or the first :data:`TRAIN_FRACTION` of a single
   record — and simulated on the held-out part with its own initial state (least squares: the
   held-out part need not start where the model's state is); the error is the relative RMS
   output error ``‖ŷ − y‖ / ‖y‖``.  The model is the refined pH model of the estimator
   (``fit``; what the user gets at that order) or, without ``fit``, the unstructured subspace
   model (cheap, but a poor predictor from noisy data).
3. **Choice**: the smallest r whose held-out error is within :data:`ORDER_FACTOR` of the best or
   below :data:`ORDER_FLOOR`.

Why: a gap in the singular values is what the subspace method offers, but it is ambiguous with
noise (no visible gap) and says nothing about how much a state improves the prediction; the
held-out error measures exactly that, on data the model did not see, so added states that fit
noise do not win.  The singular values still bound the search (cheap, and no candidate beyond
what the data resolve), and the smallest order within a tolerance of the best is kept because
orders above the true one predict equally well (exact data: all at round-off, hence the floor).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import lstsq

from fmu_surrogate.identify.linear.errors import LinearIdentificationError
from fmu_surrogate.identify.linear.init.subspace import (
    SubspaceModel,
    _regressors,
    default_horizon,
    numerical_floor,
    subspace_identify,
)

Array = NDArray[np.float64]

#: Largest order considered.
MAX_ORDER = 12
#: Candidates beyond the count of singular values above the floor: the noise floor
#: (:func:`~fmu_surrogate.identify.linear.init.subspace.numerical_floor`, ten times the median
#: noise level) can hide a weakly excited mode that still improves the prediction.
ORDER_MARGIN = 2
#: Fraction of a single record used for training (the rest is held out).
TRAIN_FRACTION = 0.7
#: A candidate within this factor of the best held-out error counts as equally good.
ORDER_FACTOR = 1.2
#: Held-out relative errors below this count as exact (the refinement goes to round-off).
ORDER_FLOOR = 1e-6


@dataclass(frozen=True)
class Record:
    """A record with any numbers of input and output columns (for order selection)."""

    t: Array
    u: Array
    y: Array
    hold: str


@dataclass(frozen=True)
class OrderCandidate:
    """One row of the order table.

    Attributes
    ----------
    order : int
    singular_value : float
        The order-th singular value of ``L₃₂`` relative to the first (NaN for order 0).
    heldout_error : float
        Relative RMS error on the held-out data (inf when the model could not be identified).
    """

    order: int
    singular_value: float
    heldout_error: float


@dataclass(frozen=True)
class OrderSelection:
    """The chosen order and the table it was chosen from (see the module docstring).

    Attributes
    ----------
    order : int
        Chosen order.
    candidates : tuple of OrderCandidate
    criterion : str
        The rule, in words.
    singular_values : ndarray
        All singular values of ``L₃₂`` (largest first).
    """

    order: int
    candidates: tuple[OrderCandidate, ...]
    criterion: str
    singular_values: Array

    def table(self) -> str:
        """The candidate table as text (one line per order, the chosen one marked)."""
        lines = ["  order  singular value  held-out error"]
        for c in self.candidates:
            mark = "  <- chosen" if c.order == self.order else ""
            sv = "-" if np.isnan(c.singular_value) else f"{c.singular_value:.3e}"
            lines.append(f"  {c.order:5d}  {sv:>14}  {c.heldout_error:14.3e}{mark}")
        return "\n".join(lines)


def _split_experiments(exps: list[Any]) -> tuple[list[Any], list[Any]]:
    """Training and held-out experiments (module docstring)."""
    if len(exps) >= 2:
        return list(exps[:-1]), list(exps[-1:])
    e = exps[0]
    k = int(TRAIN_FRACTION * e.t.shape[0])
    return ([type(e)(e.t[:k], e.u[:k], e.y[:k], e.hold)],
            [type(e)(e.t[k:], e.u[k:], e.y[k:], e.hold)])


def _split(exps: list[Any]) -> tuple[list[tuple], list[tuple]]:
    train, held = _split_experiments(exps)
    return ([(e.t, e.u, e.y, e.hold) for e in train], [(e.t, e.u, e.y, e.hold) for e in held])


def heldout_error(
    A: Array, B: Array, C: Array, D: Array | None, data: list[tuple]
) -> float:
    """Relative RMS output error of ``(A, B, C, D)`` on ``data``, each record from its own
    least-squares initial state.

    Parameters
    ----------
    A, B, C : ndarray
        Continuous-time model (order may be 0: then only ``D``).
    D : ndarray, optional
    data : list of (t, u, y, hold)

    Returns
    -------
    float
    """
    num = den = 0.0
    for t, u, y, hold in data:
        K, my = y.shape
        if A.shape[0]:
            reg, O = _regressors(A, C, t, u, hold, True)
            y_hat = np.einsum("kanb,nb->ka", reg, B)
        else:
            O, y_hat = None, np.zeros_like(y)
        if D is not None:
            y_hat = y_hat + u @ D.T
        res = y - y_hat
        if O is not None:
            x0 = lstsq(O.reshape(K * my, -1), res.reshape(-1))[0]
            res = res - (O @ x0)
        num += float(np.sum(res * res))
        den += float(np.sum(y * y))
    return float(np.sqrt(num / max(den, 1e-300)))


def select_order(
    exps: list[Any], feedthrough: bool = False, max_order: int = MAX_ORDER,
    fit: Callable[[list[Any], int], tuple[Array, Array, Array, Array | None]] | None = None,
) -> tuple[OrderSelection, SubspaceModel | None]:
    """Choose the order (module docstring).

    Parameters
    ----------
    exps : list of Experiment
        Uniformly sampled with one step size.
    feedthrough : bool
        Models with a feedthrough ``D`` (then order 0 is a candidate).
    max_order : int
        Largest candidate.
    fit : callable, optional
        ``fit(training experiments, r) -> (A, B, C, D)``: the model of order r whose held-out
        error counts (default: the unstructured subspace model).

    Returns
    -------
    (OrderSelection, SubspaceModel or None)
        The selection and the subspace model of the chosen order from all the data (None for
        order 0).
    """
    train_exps, _ = _split_experiments(exps)
    train, held = _split(exps)
    my = train[0][2].shape[1]
    K = max(d[0].shape[0] for d in train)
    horizon = default_horizon(max_order, my, K)
    try:
        sm = subspace_identify(train, max_order, horizon=horizon, with_x0=True, with_d=feedthrough)
    except ValueError as err:
        raise LinearIdentificationError(
            f"order selection: {err}; pass order=N (CLI --order N) to fix the order.") from None
    s = sm.singular_values
    r_max = int(min(max_order, np.sum(s > numerical_floor(s)) + ORDER_MARGIN,
                    (horizon - 1) * my))
    cands = []
    if feedthrough:
        cands.append(OrderCandidate(0, float("nan"), _static_error(train, held)))
    orders = list(range(1, max(r_max, 1) + 1))
    if fit is None:
        errs = {}
        for r in orders:
            try:
                m_r = subspace_identify(train, r, horizon=horizon, with_x0=True,
                                        with_d=feedthrough, rank=r,
                                        observability=sm.observability)
                errs[r] = heldout_error(m_r.A, m_r.B, m_r.C, m_r.D, held)
            except (ValueError, np.linalg.LinAlgError):
                errs[r] = float("inf")
    else:
        errs = _refined_errors(fit, train_exps, held, orders)
    for r in orders:
        err = errs[r]
        cands.append(OrderCandidate(r, float(s[r - 1] / s[0]), err if np.isfinite(err) else
                                    float("inf")))
    best = min(c.heldout_error for c in cands)
    if not np.isfinite(best):
        raise LinearIdentificationError(
            "order selection: no candidate order gives a finite held-out error (too little or "
            "too short data); pass order=N (CLI --order N).")
    bound = max(ORDER_FACTOR * best, ORDER_FLOOR)
    chosen = min(c.order for c in cands if c.heldout_error <= bound)
    crit = (f"smallest order with held-out error ≤ max({ORDER_FACTOR:g} × best, "
            f"{ORDER_FLOOR:g}) among the orders above the singular-value floor")
    sel = OrderSelection(chosen, tuple(cands), crit, s)
    if chosen == 0:
        return sel, None
    data = [(e.t, e.u, e.y, e.hold) for e in exps]
    full = subspace_identify(data, chosen, with_x0=True, with_d=feedthrough, rank=chosen)
    return sel, full


def _refined_errors(fit: Callable[[list[Any], int], tuple], train: list[Any],
                    held: list[tuple], orders: list[int]) -> dict[int, float]:
    """Held-out errors of the refined models of ``orders``: the first two here, the others in
    worker processes when at the second's pace they would take long (:mod:`.order_processes`),
    else here.  The first fit of a process pays for importing the optimiser (2.6 s for PyTorch
    and pymanopt): paced by it, a free mass's dozen fits of a few milliseconds went to a pool
    that took 3.8 s to start."""
    from joblib import cpu_count

    from fmu_surrogate.identify.linear.init.order_processes import (
        PARALLEL_SECONDS,
        heldout_in_processes,
        heldout_of,
    )

    errs = {r: heldout_of(heldout_error, fit, train, held, r) for r in orders[:1]}
    rest = orders[1:]
    if len(rest) > 2 and cpu_count() > 1:
        t0 = time.perf_counter()
        errs[rest[0]] = heldout_of(heldout_error, fit, train, held, rest[0])
        pace, first, rest = time.perf_counter() - t0, max(rest[0], 1), rest[1:]
        if pace * sum((r / first) ** 2 for r in rest) > PARALLEL_SECONDS:
            pooled = heldout_in_processes(heldout_error, fit, train, held, rest)
            if pooled is not None:
                return {**errs, **pooled}
    errs.update({r: heldout_of(heldout_error, fit, train, held, r) for r in rest})
    return errs


def _static_error(train: list[tuple], held: list[tuple]) -> float:
    """Held-out error of the least-squares static map ``y = D u``."""
    U = np.concatenate([d[1] for d in train])
    Y = np.concatenate([d[2] for d in train])
    D = lstsq(U, Y)[0].T
    num = sum(float(np.sum((d[2] - d[1] @ D.T) ** 2)) for d in held)
    den = sum(float(np.sum(d[2] ** 2)) for d in held)
    return float(np.sqrt(num / max(den, 1e-300)))
