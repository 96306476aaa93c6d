"""A kept model fitted again to all runs, the held-out ones included.

:func:`refit_nonlinear` refits a kept nonlinear model from its parameters
(:meth:`~fmu_surrogate.identify.NonlinearPHIdentifier.refine`, whose rules are in
:mod:`~fmu_surrogate.identify.nonlinear.finish`) within what is left of a time budget.

:func:`~fmu_surrogate.identify.selection.select_dataset` keeps a linear drop-in model whose
held-out error meets the tolerance; that model saw the training runs only.  The held-out runs
are data too: a user validates the surrogate on inputs of their own, and a model fitted to
every run the harvest gave meets them better where the held-out runs showed something the
training runs did not (another frequency band, another amplitude).  :func:`refit_linear` fits
the same estimator at the kept order to all runs, as
:meth:`~fmu_surrogate.identify.NonlinearPHIdentifier.refine` does for a nonlinear model, and
keeps the refit where

* the checked model meets the held-out runs worse than the training ones (worst relative
  error above :data:`HELD_OUT_MET` times theirs, and above the linear order selection's
  floor :data:`~fmu_surrogate.identify.linear.init.order.ORDER_FLOOR`, where errors count as
  equal: otherwise the held-out runs hold nothing new, and the fit is not run);
* the refit lowers the worst error over all runs; and
* it keeps the training runs within the tolerance, or within :data:`TRAIN_GROWTH` of the
  checked model's error on them (a refit that trades the runs it was checked on for the
  others is not kept).

The errors the choice reports stay those of the checked model; one line says what the refit
did.  The order is the checked one: no run is left to choose another by.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from fmu_surrogate.identify.fit_report import percent
from fmu_surrogate.identify.heldout import heldout_errors
from fmu_surrogate.identify.linear.init.order import ORDER_FLOOR

__all__ = ["HELD_OUT_MET", "TRAIN_GROWTH", "refit_linear", "refit_nonlinear"]

#: no refit where the checked model's worst error on the held-out runs is within this factor
#: of that on the training runs: they hold nothing it has not learned (the rule of the
#: nonlinear refine, :mod:`~fmu_surrogate.identify.nonlinear.finish`, there on RMS errors)
HELD_OUT_MET = 1.5
#: a refit whose worst error on the training runs exceeds the tolerance and this factor of the
#: checked model's is not kept: it traded the runs the model was checked on for the others
TRAIN_GROWTH = 2.0


def refit_linear(lin: Any, ds: Any, inputs: Sequence[str], outputs: Sequence[str],
                 fit: Sequence[int], held: Sequence[int], tolerance: float,
                 errors: Any = None) -> tuple[Any, str]:
    """The kept linear model, refitted to all runs where that helps (module docstring).

    Parameters
    ----------
    lin : LinearPHIdentifier
        The checked model, fitted by
        :meth:`~fmu_surrogate.identify.LinearPHIdentifier.fit_dataset` to ``ds`` with
        ``inputs``, ``outputs`` and training runs ``fit``.
    ds : xarray.Dataset
        The data it was fitted to.
    inputs, outputs : sequence of str
    fit, held : sequence of int
        Training and held-out runs.
    tolerance : float
        The selection's tolerance (worst relative output error).
    errors : callable, optional
        ``errors(estimator, runs) -> list of float``: the worst relative output error of each
        run (default: the estimator's surrogate simulated on ``ds``, :func:`heldout_errors`);
        the selection passes its own, which shows outputs fixed before the first step.

    Returns
    -------
    (LinearPHIdentifier, str)
        The refit or ``lin``, and a new line of the report saying which and why (empty where
        nothing was held out).
    """
    from sklearn.base import clone

    fit, held = list(fit), list(held)
    if not held:
        return lin, ""
    if errors is None:
        def errors(est: Any, runs: Sequence[int]) -> list[float]:
            sur = est.to_surrogate()
            return heldout_errors(sur, est.x0_, ds, list(sur.input_names),
                                  list(sur.output_names), runs)

    e_fit, e_held = max(errors(lin, fit)), max(errors(lin, held))
    head = "refitted to all runs, the held-out ones included, at order " \
        f"{lin.system_.n_states}"
    nl = "\n  "
    if not e_held > max(HELD_OUT_MET * e_fit, ORDER_FLOOR):
        return lin, (f"{nl}not refitted to all runs: the checked model meets the held-out ones as "
                     f"the training ones (worst error {percent(e_held)} against "
                     f"{percent(e_fit)})")
    try:
        new = clone(lin).set_params(order=int(lin.system_.n_states), progress=False
                                    ).fit_dataset(ds, inputs=list(inputs),
                                                  outputs=list(outputs), runs=fit + held)
        n_fit, n_held = max(errors(new, fit)), max(errors(new, held))
    except Exception as exc:  # noqa: BLE001 - the checked model stays, the reason reported
        return lin, f"{nl}not {head}: the refit failed ({type(exc).__name__}: {exc})"
    before, after = max(e_fit, e_held), max(n_fit, n_held)
    if not after < before:
        return lin, (f"{nl}not {head}: the refit lowers no error over all runs (worst "
                     f"{percent(before)}, refitted {percent(after)})")
    if not n_fit <= max(tolerance, TRAIN_GROWTH * e_fit):
        return lin, (f"{nl}not {head}: the refit would trade the training runs (worst error "
                     f"{percent(e_fit)} -> {percent(n_fit)}) for the held-out ones")
    return new, (f"{nl}{head}: worst relative error over all runs {percent(before)}, refitted "
                 f"{percent(after)} (training runs {percent(e_fit)} -> {percent(n_fit)}, "
                 f"held-out {percent(e_held)} -> {percent(n_held)})")


def refit_nonlinear(kept: Any, deadline: float | None = None) -> Any:
    """``kept`` (a nonlinear :class:`~fmu_surrogate.identify.selection.ModelChoice`) with its
    estimator refitted to all experiments, the held-out ones included, and a line saying so
    (:meth:`NonlinearPHIdentifier.refine <fmu_surrogate.identify.NonlinearPHIdentifier.refine>`).

    Parameters
    ----------
    kept : ModelChoice
    deadline : float, optional
        ``time.monotonic()`` by which the refit must end: it gets what is left (none left: not
        refitted, and the line says why).

    Returns
    -------
    ModelChoice
    """
    left = None if deadline is None else deadline - time.monotonic()
    if left is not None and left <= 0:
        line = "  not refitted to all runs: the time budget (max_time, CLI --max-time) is spent"
    else:
        if left is not None:
            kept.estimator.set_params(max_time=min(left, kept.estimator.max_time or np.inf))
        line = "  " + kept.estimator.refine().result_.refined.describe()
    return replace(kept, details=(kept.details + "\n" if kept.details else "") + line)
