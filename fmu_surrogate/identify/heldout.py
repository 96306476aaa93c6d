"""Training and held-out runs of a harvested dataset, and a surrogate's errors on them.

:func:`split_runs` holds out the last successful run; :func:`output_errors` simulates a
surrogate on runs and gives each output's relative error, :func:`heldout_errors` the worst of
each run (what :func:`~fmu_surrogate.identify.selection.select_dataset` compares with its
tolerance).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["ModelSelectionError", "heldout_errors", "output_errors", "split_runs"]


class ModelSelectionError(FmuSurrogateError, ValueError):
    """Bad arguments of the model selection (no successful run, training runs that did not
    succeed, a tolerance that is not a positive number); the message says the fix."""


def split_runs(ds: Any, runs: Sequence[int] | None = None) -> tuple[list[int], list[int]]:
    """Training and held-out runs of a dataset.

    Default: every successful run but the last trains, the last is held out (one run: it
    trains and nothing is held out).  A harvest's runs are alternative excitations or
    parameter points: the fit gains from all of them but one, and one run the fit never saw
    is what the held-out error needs (the order selection and
    :class:`~fmu_surrogate.identify.NonlinearPHIdentifier` hold out the last as well).

    Parameters
    ----------
    ds : xarray.Dataset
    runs : sequence of int, optional
        Training runs (labels); the other successful runs are held out.

    Returns
    -------
    (list of int, list of int)

    Raises
    ------
    ModelSelectionError
        No successful run, or a requested run that did not succeed.
    """
    ok = [int(r) for r, st in zip(ds["run"].values, ds["status"].values) if str(st) == "ok"]
    if not ok:
        raise ModelSelectionError("the dataset has no successful run to identify from; "
                                  "harvest again (fmu-surrogate harvest) and check the failures.")
    fit = [int(r) for r in runs] if runs is not None else (ok[:-1] or ok)
    bad = [r for r in fit if r not in ok]
    if bad:
        raise ModelSelectionError(f"runs {bad} did not succeed or do not exist; successful "
                                  f"runs: {ok[:20]}.")
    return fit, [r for r in ok if r not in fit]


def heldout_errors(system: Any, x0: Any, ds: Any, inputs: Sequence[str],
                   outputs: Sequence[str], runs: Sequence[int]) -> list[float]:
    """Worst relative output error ``max_j max_t |ŷ_j − y_j| / s_j`` of each run, ``s_j`` the
    output's swing (:func:`~fmu_surrogate.fmu.dataset.output_scale`: ``max_t |y_j|``, or the
    excursion from its start where that is smaller; what :func:`fmu_surrogate.validate` calls
    an output's relative error), the surrogate simulated by :func:`fmu_surrogate.ph.simulate`
    with the dataset's input hold from its operating point (``x0`` for a bare system).

    Parameters
    ----------
    system : PortedSystem or pH system
    x0 : array_like or None
    ds : xarray.Dataset
    inputs, outputs : sequence of str
        The surrogate's external variables, in its order.
    runs : sequence of int

    Returns
    -------
    list of float
    """
    return [float(e.max()) for e in output_errors(system, x0, ds, inputs, outputs, runs)]


def output_errors(system: Any, x0: Any, ds: Any, inputs: Sequence[str],
                  outputs: Sequence[str], runs: Sequence[int]) -> list[np.ndarray]:
    """Per run, each output's relative error
    (:func:`~fmu_surrogate.fmu.dataset.relative_errors`; :func:`heldout_errors` takes the
    worst); ``inf`` where the surrogate diverges.

    Parameters
    ----------
    system, x0, ds, inputs, outputs, runs
        As for :func:`heldout_errors`.

    Returns
    -------
    list of ndarray, shape (k_out,)
    """
    from fmu_surrogate.fmu.dataset import relative_errors, run_arrays
    from fmu_surrogate.identify.linear.model.experiments import hold_from_dataset
    from fmu_surrogate.ph import PortedSystem, simulate

    hold, k, out = hold_from_dataset(ds), len(inputs), []
    for t, X in run_arrays(ds, list(inputs) + list(outputs), runs=runs):
        u, y = X[:, :k], X[:, k:]
        # a candidate that diverges (fitted to data it cannot explain) has an infinite error,
        # without warnings of the overflow
        with np.errstate(over="ignore", invalid="ignore"):
            y_hat = simulate(system, t, u, *(() if isinstance(system, PortedSystem) else (x0,)),
                             hold=hold).y
        out.append(relative_errors(y, y_hat))
    return out
