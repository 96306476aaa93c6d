"""What a linear pH fit decides from the data before it starts: order, port orientation, x0.

:meth:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier.fit` calls :func:`prepare`:

* **order** (``order=None``): :func:`~fmu_surrogate.identify.linear.init.order.select_order` —
  Hankel singular values bound the candidates, the held-out error chooses;
* **orientation** of each power pair (``ports``; detected where not given,
  :mod:`~fmu_surrogate.identify.linear.init.orientation`): the sign pattern closest to the pH
  convention under which the data are passive; the inputs of "out" pairs are negated, the fit
  sees pH ports only;
* **initial state** (``learn=None``): learned when the data do not start at rest
  (:func:`~fmu_surrogate.identify.linear.ports.starts_at_rest`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.errors import LinearIdentificationError
from fmu_surrogate.identify.linear.model.experiments import Experiment
from fmu_surrogate.identify.linear.ports import parse_orientations, starts_at_rest

Array = NDArray[np.float64]

def _uniform(exps: list[Any]) -> bool:
    from fmu_surrogate.identify.linear.init.initial import data_problem

    return data_problem(exps) is None


#: Iteration budget of the refinement of each candidate order.
CANDIDATE_MAX_ITER = 50


def _candidate(est: Any, train: list[Any], r: int) -> tuple[Array, Array, Array, None]:
    """The state-space form of the pH model of order r refined on ``train`` (pH ports)."""
    from sklearn.base import clone

    sub = clone(est).set_params(order=r, ports="in", progress=False, complete="pad",
                                max_iter=min(int(est.max_iter), CANDIDATE_MAX_ITER))
    sub.fit(train)
    A, B, C = sub.system_.state_space()
    return A, B, C, None


def prepare(est: Any, exps: list[Any], n: int | None,
            names: tuple[str, ...]) -> tuple[list[Any], int, tuple[str, ...]]:
    """Order, orientation and learned parameters of a fit (module docstring).

    Sets ``est.port_signs_`` and ``est.order_selection_``.

    Parameters
    ----------
    est : LinearPHIdentifier
    exps : list of Experiment
        The data in the external convention.
    n : int or None
        The requested order (None: choose).
    names : tuple of str
        Learned parameters.

    Returns
    -------
    (experiments with pH ports, order, learned parameters)
    """
    m = int(np.shape(exps[0].u)[1])
    signs = parse_orientations(est.ports, m)
    uniform = _uniform(exps)
    if n is None and not uniform:
        raise LinearIdentificationError(
            "order=None chooses the order with the subspace method, which needs uniformly "
            "sampled data with one step size; resample the data or pass order=N "
            "(CLI --order N).")
    if signs is None or np.any(np.isnan(signs)):
        from fmu_surrogate.identify.linear.init.orientation import detect_orientation

        found = detect_orientation(exps)
        signs = found if signs is None else np.where(np.isnan(signs), found, signs)
    est.port_signs_ = signs
    if np.any(signs < 0):
        exps = [Experiment.from_arrays(e.t, np.asarray(e.u) * signs, e.y, e.hold) for e in exps]
    sel = None
    if n is None:
        from fmu_surrogate.identify.linear.init.order import select_order

        sel, _ = select_order(exps, fit=lambda train, r: _candidate(est, train, r))
        n = sel.order
    est.order_selection_ = sel
    if est.learn is None and "x0" not in names and not starts_at_rest(exps):
        names = tuple(p for p in ("J", "R", "Q", "B", "x0") if p in names or p == "x0")
    return exps, int(n), names
