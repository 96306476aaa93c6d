"""The state dimension of a nonlinear model fitted from a linear start.

:class:`~fmu_surrogate.identify.NonlinearPHIdentifier` starts where the linear drop-in model
ends, at its order.  That order is chosen by the linear model's held-out error
(:mod:`~fmu_surrogate.identify.linear.init.order`), and a linear model explains what it cannot
represent by more states: their modes fit the harmonics of a nonlinearity.

* A measured output that is a strongly nonlinear function of the state (a progressive
  spring's force next to the velocities of the masses it joins) raises the order most: two
  masses on a cubic spring, force measured, order 7 chosen; from there the nonlinear model
  misses by 87.6 %.  The power outputs are the conjugates of the inputs, which show the
  component's dynamics without what a sensor adds: :func:`power_order` gives the order they
  choose alone (3 for the two masses, 0.077 %).
* The power outputs of a strongly nonlinear part raise it too (one mass on a cubic spring with
  a power-law damper: order 4 from its velocity, where two states are the part's).  The
  nonlinear model at the higher order can represent the lower one, but its fit is harder and
  ends worse: held-out 0.514 % at order 4, 0.107 % at 3, 0.109 % at 2.

:func:`search_order` (what :func:`~fmu_surrogate.identify.selection.select_dataset` runs)
fits the nonlinear model at orders 1, 2, … up to that of the power outputs (where it is lower)
or of the linear start: lower orders are cheaper fits and faster surrogates.  Below that cap
and the linear start's order a fit that explains less than half its outputs is left as it is
(:data:`LOW_ORDER_COST`): it is short of states, and the continuation's rescues cost most there
(a mass on a hardening spring, order 1: 138 s of 208 s, every rescue missing by 80 % or more;
77 s without them).  A static start gives no such evidence: its orders keep every rescue.
A static linear start (order 0: where no linear model predicts the held-out part better than a
static map) is fitted as such first; so is a static map where a dynamic start has a feedthrough
of its power
outputs or the FMU declares one (``<ModelStructure>``), kept where it meets the tolerance (a
power-law damper at small velocities, whose linear misfit of 14–22 % the linear orders share:
order 2 chosen, its feedthrough taken for a share of that misfit, and from there the nonlinear
model misses by 14.5 % at orders 1 and 2; its static law 8e-6).  A static law that explains
the part (a spring driven by its displacement: linear 27 %, nonlinear 1.5 % before its timing
is settled) is kept; one that misses the tolerance and divides the linear error by less than
1/:data:`STATIC_GAIN` says the part has states no linear model fits (a quarter car whose
suspension stiffens 2.3× over runs of rising amplitude: every linear order 80–120 % held out,
the static nonlinear fit 89.8 %), and the orders 1, 2, … are searched as from a dynamic
start.  It stops when the best fit so far
meets the tolerance and the next order does not improve on it by :data:`ORDER_FACTOR` (the
linear order selection's rule), or two orders after the best, or at once where a fit is within
:data:`CLEAR_MARGIN` of the tolerance.  Where the best misses the
tolerance, the linear start's order is fitted too, and where the cap's order gained by that
factor on the order below it (or the order below was not fitted: a start of order 1, a fit that
failed), the orders above while each gains so (up to two without
a gain): a linear order undercounts the states of a strongly nonlinear part (a quarter car, four
states, at 2000 N: linear order 2, where the nonlinear model misses by 5.47 % held out, 78 % at
order 1; 2.23 % at order 3; a pendulum that turns over, two states: linear order 1).  The
smallest order within that factor of the best is kept (of those meeting the tolerance, where
some do).  An order given by the user (``order=N``, CLI ``--order N``) is fitted as given.
Where the wall-time budget is spent (``deadline``), no further order is fitted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fmu_surrogate.identify.fit_report import percent
from fmu_surrogate.identify.linear.init.order import MAX_ORDER, ORDER_FACTOR, ORDER_FLOOR

__all__ = ["CLEAR_MARGIN", "LOW_ORDER_COST", "STATIC_GAIN", "power_order", "search_order",
           "start_at"]

#: A static nonlinear model that divides the static linear start's held-out error by less than
#: 1/STATIC_GAIN explains little: the part has states no linear model found (module doc)
STATIC_GAIN = 0.5
#: A fit whose held-out error is within this fraction of the tolerance ends the search: no check
#: a user makes tells a better one apart, and the next order's fit, from a linear start with a
#: state more than the part needs, is the slowest of the search (a progressive spring, 3 × 20 s
#: at 1 ms: order 1 0.0021 % in 48 s, then order 2 43.6 % in 3.5 min)
CLEAR_MARGIN = 0.01
#: Below the search's cap and a dynamic linear start's order, a fit whose training cost stays
#: above this (it explains less than half of its outputs' energy) is not rescued: short of states
#: (``max_rescue_cost``, :mod:`~fmu_surrogate.identify.nonlinear.continuation`).  The fits
#: rescued by the continuation, the added ridges or short segments started at most at 0.35
#: (a pendulum that turns over); a mass on a hardening spring at order 1 at 0.85
LOW_ORDER_COST = 0.5


def power_order(lin: Any, ds: Any, inputs: Sequence[str], outputs: Sequence[str],
                runs: Sequence[int]) -> int | None:
    """The order a linear drop-in fit chooses from its power outputs alone.

    Parameters
    ----------
    lin : LinearPHIdentifier
        Fitted by :meth:`~fmu_surrogate.identify.LinearPHIdentifier.fit_dataset` to ``ds``
        with ``inputs`` and ``outputs``.
    ds : xarray.Dataset
        The data ``lin`` was fitted to.
    inputs, outputs : sequence of str
        The variables ``lin`` was fitted with.
    runs : sequence of int
        Its training runs.

    Returns
    -------
    int or None
        The order, when it is below ``lin``'s; None where the question does not arise: the
        order was given (``order`` set), or ``lin`` has no power pair or no measured output.
    """
    from sklearn.base import clone

    roles = getattr(lin, "roles_", None) if getattr(lin, "ported_", False) else None
    if lin.order is not None or roles is None or not roles.pairs or not roles.measured:
        return None
    inputs, outputs = list(inputs), list(outputs)
    # the pairs and their orientation as the fit found them (the units may not pair a subset)
    ports = [{"u": inputs[i], "y": outputs[o], "power": "in" if s > 0 else "out"}
             for (i, o), s in zip(roles.pairs, roles.signs)]
    power = clone(lin).set_params(ports=ports).fit_dataset(
        ds, inputs=inputs, outputs=[outputs[o] for _, o in roles.pairs], runs=list(runs))
    order = int(power.order_selection_.order)
    return order if order < lin.system_.n_states else None


def search_order(start: Any, ds: Any, inputs: Sequence[str], outputs: Sequence[str],
                 runs: Sequence[int], tolerance: float,
                 fit: Callable[[Any], tuple[Any, float, str]],
                 deadline: float | None = None,
                 fit_below: Callable[[Any], tuple[Any, float, str]] | None = None
                 ) -> tuple[Any, float, str]:
    """The nonlinear model at the order the search keeps (module docstring).

    Parameters
    ----------
    start : LinearPHIdentifier
        The linear start, fitted to ``ds`` with ``inputs``, ``outputs`` and training ``runs``.
    ds, inputs, outputs, runs
        As for :func:`power_order`.
    tolerance : float
        Held-out error the power outputs' order must reach for the start's order to be left
        out.
    fit : callable
        ``fit(linear_start) -> (estimator, held-out error, report lines)``: the nonlinear fit.
    deadline : float, optional
        ``time.monotonic()`` after which no further order is fitted once one has been (a
        wall-time budget; the report says which orders it left out).
    fit_below : callable, optional
        ``fit`` at the orders below the cap and the linear start's order (the data show more
        states, and the search follows by a higher order): where given, one that rescues no
        fit above :data:`LOW_ORDER_COST` (``max_rescue_cost``).  A static start's search
        (order 0) does not use it.

    Returns
    -------
    (estimator, float, str)
        The kept fit; its report lines, then one line with the orders tried.

    Raises
    ------
    Exception
        What ``fit`` raises from ``start`` when no other order could be fitted.
    """

    order = int(start.system_.n_states)
    if start.order is not None:  # given
        return fit(start)
    tried: dict[int, tuple[Any, float, str]] = {}
    failed: dict[int, Exception] = {}
    skipped: list[int] = []  # left out when the time budget was spent
    if order < 1:  # a static map: kept where it meets the tolerance or explains the part
        static = fit(start)
        result = getattr(static[0], "result_", None)
        linear = float(getattr(result, "linear_validation_error", np.nan))
        if static[1] <= tolerance or static[1] <= STATIC_GAIN * linear:
            return static
        tried[0] = static
    elif _feedthrough_shown(start, ds, inputs, outputs):
        # power outputs that follow the inputs: the static map first, kept where it meets the
        # tolerance (module doc)
        try:
            static = fit(start_at(start, 0, ds, inputs, outputs, runs))
        except Exception as exc:  # noqa: BLE001 - reported in the orders line
            failed[0] = exc
        else:
            if static[1] <= tolerance:
                return (static[0], static[1], static[2] + (
                    f"\n  nonlinear model order 0 kept (a static map with its feedthrough): "
                    f"held-out error {percent(static[1])} within the tolerance, so no state "
                    f"was fitted (the linear start's order {order})"))
            tried[0] = static

    def at(r: int, below: bool = False) -> float:
        if deadline is not None and tried and time.monotonic() >= deadline:
            skipped.append(r)
            return float("nan")
        try:
            lin = start_at(start, r, ds, inputs, outputs, runs)
            tried[r] = (fit_below if below and fit_below is not None else fit)(lin)
        except Exception as exc:  # noqa: BLE001 - reported in the orders line
            failed[r] = exc
        return tried[r][1] if r in tried else float("inf")

    try:
        low = power_order(start, ds, inputs, outputs, runs)
    except Exception:  # noqa: BLE001 - the start's order is the cap
        low = None
    cap = (order or MAX_ORDER) if low is None else low
    # arg: the last order that gained, by ORDER_FACTOR (the first of a search from 1 by any)
    best = gained = tried[0][1] if order < 1 else float("inf")
    arg, from_one = 0, order >= 1
    for r in range(1, cap + 1):
        e = at(r, r < min(cap, order))  # below a dynamic start's order and the cap
        if skipped:
            break
        best = min(best, e)
        if e < gained / ORDER_FACTOR or (e < gained and from_one and not arg):
            gained, arg = e, r
        if best <= ORDER_FLOOR or r - arg >= 2 or (best <= tolerance and r > arg) or \
                best <= CLEAR_MARGIN * tolerance:
            break
    # the cap's order gained by ORDER_FACTOR on the order below it, or that order was not
    # fitted (a start of order 1, or its fit failed): more states may gain
    below = tried[cap - 1][1] if cap - 1 in tried else float("inf")
    capped = cap in tried and tried[cap][1] < below / ORDER_FACTOR
    if best > tolerance and order not in tried and order not in failed and not skipped:
        at(order)  # the linear start's order
    # above the cap while the best misses the tolerance and the orders gain (module doc)
    r = max([*tried, *failed, 0]) + 1
    best = min((e for _, e, _ in tried.values()), default=float("inf"))
    gained, arg = best, r - 1
    while capped and best > tolerance and r <= MAX_ORDER and r - arg <= 2 and not skipped:
        e = at(r)
        best = min(best, e)
        if e < gained / ORDER_FACTOR:
            gained, arg = e, r
        r += 1
    if not tried:
        raise failed[order] if order in failed else next(iter(failed.values()))
    best = min(e for _, e, _ in tried.values())
    good = [k for k in tried if tried[k][1] <= _equal(best)]
    kept = min([k for k in good if tried[k][1] <= tolerance] or good)
    nl, e, lines = tried[kept]
    if skipped:
        lines += (f"\n  the time budget (max_time, CLI --max-time) was spent: order "
                  f"{skipped[0]} and the search's further orders not fitted")
    if len(tried) + len(failed) == 1:
        if e <= CLEAR_MARGIN * tolerance and kept != order:  # the margin ended the search
            lines += (f"\n  nonlinear model order {kept} kept: held-out error {percent(e)}, "
                      f"within {CLEAR_MARGIN:g} of the tolerance, so no higher order was fitted "
                      f"(the linear start's order {order})")
        return nl, e, lines
    table = ", ".join(f"{k}: {percent(tried[k][1])}" if k in tried else
                      f"{k}: not fitted ({type(failed[k]).__name__})"
                      for k in sorted(set(tried) | set(failed), reverse=True))
    why = "" if low is None else f"; the power outputs alone choose order {low}"
    which = "meeting the tolerance " if best <= tolerance else ""
    return nl, e, (lines + f"\n  nonlinear model orders tried (held-out error): {table} — "
                   f"order {kept} kept, the smallest {which}within {ORDER_FACTOR:g}× of the "
                   f"best (the linear start's order {order}{why})")


def start_at(start: Any, order: int, ds: Any, inputs: Sequence[str], outputs: Sequence[str],
             runs: Sequence[int]) -> Any:
    """The linear start at another order: ``start`` itself at its own, else a clone with the
    order given fitted to the same data.

    Parameters
    ----------
    start : LinearPHIdentifier
        Fitted to ``ds`` with ``inputs``, ``outputs`` and training ``runs``.
    order : int
        The state dimension wanted.
    ds, inputs, outputs, runs
        As for :func:`power_order`.

    Returns
    -------
    LinearPHIdentifier
    """
    from sklearn.base import clone

    if order == start.system_.n_states:
        return start
    return clone(start).set_params(order=order).fit_dataset(
        ds, inputs=list(inputs), outputs=list(outputs), runs=list(runs))


def _feedthrough_shown(start: Any, ds: Any, inputs: Sequence[str],
                       outputs: Sequence[str]) -> bool:
    """Whether a fitted linear ``start`` has a feedthrough of its power outputs, or the FMU
    declares one of them to depend on an input directly (``<ModelStructure>``, kept by the
    harvest as the outputs' ``dependencies``)."""
    from fmu_surrogate.identify.linear.dataset import parse_dependencies

    roles = getattr(start, "roles_", None) if getattr(start, "ported_", False) else None
    if roles is not None and roles.feedthrough:
        return True
    power = [o for _, o in roles.pairs] if roles is not None else range(len(outputs))
    names = set(inputs)
    return any(names & set(parse_dependencies(ds[outputs[o]].attrs.get("dependencies")) or ())
               for o in power if outputs[o] in ds)


def _equal(best: float) -> float:
    """Errors up to this count as good as ``best`` (the linear order selection's rule)."""
    return max(ORDER_FACTOR * best, ORDER_FLOOR)
