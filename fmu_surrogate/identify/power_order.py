"""The order of a nonlinear model's linear start chosen from its power outputs alone.

The linear drop-in model chooses its order by held-out error over all the outputs
(:mod:`~fmu_surrogate.identify.linear.init.order`).  A measured output that is a strongly
nonlinear function of the state (a progressive spring's force next to the velocities of the
masses it joins) is explained there by more states: their modes fit its harmonics.  The
nonlinear model, started from that linear fit, then carries states the component does not
have, and its fit stays poor (two masses on a cubic spring, force measured: order 7 chosen,
held-out error 87.6 %; at the power outputs' order 3, 0.077 %).  The power outputs are the
conjugates of the inputs, which show the component's dynamics without what a sensor adds:
:func:`power_order` gives the order they choose.

:func:`lowest_order_first` is how :func:`~fmu_surrogate.identify.selection.select_dataset` uses
it: where that order is lower, the nonlinear model is fitted from a linear start of that order
first (fewer states: a cheaper fit and a faster surrogate), and it is kept if it meets the
tolerance; else the nonlinear model is fitted from the first linear start too, and the better
on the held-out runs is kept.  A component with a state that only a measured output shows (a
temperature the power ports do not see) therefore still gets its full order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fmu_surrogate.identify.fit_report import percent

__all__ = ["lowest_order_first", "power_order"]


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


def lowest_order_first(start: Any, ds: Any, inputs: Sequence[str], outputs: Sequence[str],
                       runs: Sequence[int], tolerance: float,
                       fit: Callable[[Any], tuple[Any, float, str]]) -> tuple[Any, float, str]:
    """The nonlinear model from the power outputs' order first, from ``start``'s where that
    misses the tolerance (module docstring).

    Parameters
    ----------
    start : LinearPHIdentifier
        The linear start, fitted to ``ds`` with ``inputs``, ``outputs`` and training ``runs``.
    ds, inputs, outputs, runs
        As for :func:`power_order`.
    tolerance : float
        Held-out error at which the lower order's model is kept without the other.
    fit : callable
        ``fit(linear_start) -> (estimator, held-out error, report lines)``: the nonlinear fit.

    Returns
    -------
    (estimator, float, str)
        The kept fit; its report lines say which orders were tried and why.

    Raises
    ------
    Exception
        What ``fit`` raises from ``start`` (a failure at the lower order only is reported).
    """
    from sklearn.base import clone

    order = start.system_.n_states
    try:
        r = power_order(start, ds, inputs, outputs, runs)
    except Exception:  # noqa: BLE001 - the linear start's order stays
        r = None
    if r is None:
        return fit(start)
    why = (f"order {r} chosen from the power outputs alone (a measured output's harmonics may "
           f"raise the linear order {order})")
    try:
        low = clone(start).set_params(order=r).fit_dataset(
            ds, inputs=list(inputs), outputs=list(outputs), runs=list(runs))
        nl_r, e_r, lines_r = fit(low)
    except Exception as exc:  # noqa: BLE001 - reported; the linear start's order is fitted
        nl_r, e_r, lines_r = None, float("inf"), f"\n  {why}: not fitted ({type(exc).__name__}: {exc})"
    if e_r <= tolerance:
        return nl_r, e_r, (lines_r + f"\n  {why}: the nonlinear model meets the tolerance "
                                     f"{percent(tolerance)} there ({percent(e_r)})")
    nl, e, lines = fit(start)
    if e_r < e:
        return nl_r, e_r, (lines_r + f"\n  {why}: the nonlinear model misses by "
                                     f"{percent(e_r)} there and by {percent(e)} at order {order}")
    tried = ("" if nl_r is None else f"\n  {why}: the nonlinear model misses by {percent(e_r)} "
             f"there and by {percent(e)} at order {order}, kept")
    return nl, e, lines + (tried or lines_r)
