"""Checked entry points of the cost and its adjoint gradient (:mod:`fmu_surrogate.identify.linear.model.adjoint`).

:func:`cost`, :func:`cost_and_gradient` validate their arguments on every call and keep a
single-entry cache of the last forward solve; :class:`~fmu_surrogate.identify.linear.model.adjoint.Evaluator`
is the unchecked fast path they share their code with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.identify.linear.model.evaluation import _check_gradient, _finish, _Prepared
from fmu_surrogate.identify.linear.model.experiments import (
    NO_REGULARIZATION,
    PARAMS,
    Experiment,
    GradientKind,
    Mode,
    Regularization,
    _check_inputs,
    _check_mode,
)

Array = NDArray[np.float64]


# ---------------------------------------------------------------------------------------------
# Cost and gradient (checked entry points)
# ---------------------------------------------------------------------------------------------
def cost(
    params: Mapping[str, ArrayLike],
    experiments: Experiment | Sequence[Experiment],
    mode: Mode = "exact",
    reg: Regularization = NO_REGULARIZATION,
    wrt: Sequence[str] = PARAMS,
) -> float:
    """Discrete cost ``Σ_e ½ Σ_k w_k |y_k − y_data,k|²`` + regularisation of the ``wrt`` params.

    Parameters
    ----------
    params : dict
        ``J, R, Q`` (n, n), ``B`` (n, m), optional ``x0`` (n,).
    experiments : Experiment or sequence of Experiment
    mode : {"exact", "euler"}
    reg : Regularization
    wrt : sequence of str
        The fitted parameters (only these are regularised).

    Returns
    -------
    float
        The cost; ``inf`` if the simulation overflows.

    See Also
    --------
    Evaluator : the same computation without per-call validation (optimiser inner loops).
    """
    val, _ = _evaluate(params, experiments, mode, reg, wrt, need_grad=False, gradient="exact")
    return val


def cost_and_gradient(
    params: Mapping[str, ArrayLike],
    experiments: Experiment | Sequence[Experiment],
    mode: Mode = "exact",
    reg: Regularization = NO_REGULARIZATION,
    wrt: Sequence[str] = PARAMS,
    gradient: GradientKind = "exact",
) -> tuple[float, dict[str, Array]]:
    """Cost and its Euclidean gradient w.r.t. the parameters in ``wrt``.

    Parameters
    ----------
    params, experiments, mode, reg, wrt
        As in :func:`cost`.
    gradient : {"exact", "paper"}
        ``"exact"``: exact gradient of the discrete cost (discrete adjoint; both modes).
        ``"paper"``: the paper's continuous adjoint discretised by explicit Euler with
        left-endpoint quadrature (Euler mode only; O(h) away from the exact gradient).

    Returns
    -------
    cost : float
    grad : dict of str to ndarray
        ``grad[k]`` has the shape of ``params[k]`` for each ``k`` in ``wrt`` (plain partial
        derivatives, all entries independent).  NaN if the simulation overflows (cost ``inf``).
    """
    return _evaluate(params, experiments, mode, reg, wrt, need_grad=True, gradient=gradient)


#: Single-entry cache of the last forward solve: an optimiser evaluates ``cost`` at the accepted
#: line-search point and then ``cost_and_gradient`` at the same point; the second call reuses the
#: state trajectories.  Keyed by the parameter bytes, the mode and the identities of the
#: (immutable) experiments, which the entry keeps alive.
_FORWARD_CACHE: list = [None]
#: Single-entry cache of the prepared experiments (keyed by mode and experiment identities).
_PREPARED_CACHE: list = [None]


def clear_forward_cache() -> None:
    """Drop the cached forward solve (e.g. to measure the cost of a cold evaluation)."""
    _FORWARD_CACHE[0] = None


def _prepared(exps: list[Experiment], mode: str) -> Any:
    key = (mode, tuple(id(e) for e in exps))
    hit = _PREPARED_CACHE[0]
    if hit is not None and hit[0] == key:
        return hit[1]
    prep = _Prepared(exps, mode)
    _PREPARED_CACHE[0] = (key, prep)  # prep.exps keeps the experiments (and their ids) alive
    return prep


def _forward_all(p: Mapping[str, Array], exps: list[Experiment], mode: str) -> tuple:
    key = (mode, tuple(p[k].tobytes() for k in PARAMS), p["B"].shape, tuple(id(e) for e in exps))
    hit = _FORWARD_CACHE[0]
    if hit is not None and hit[0] == key:
        return hit[2], hit[3]
    prep = _prepared(exps, mode)
    st = prep.forward(p["J"], p["R"], p["Q"], p["B"], p["x0"])
    _FORWARD_CACHE[0] = (key, exps, prep, st)
    return prep, st


def _evaluate(
    params: Mapping[str, ArrayLike],
    experiments: Experiment | Sequence[Experiment],
    mode: str,
    reg: Regularization,
    wrt: Sequence[str],
    need_grad: bool,
    gradient: str,
) -> tuple[float, dict[str, Array]]:
    _check_mode(mode)
    _check_gradient(gradient, mode)
    p, exps, wrt = _check_inputs(params, experiments, mode, wrt)
    with np.errstate(over="ignore", invalid="ignore"):
        prep, st = _forward_all(p, exps, mode)
        return _finish(prep, st, reg, wrt, need_grad, gradient)
