"""Runs that start at the equilibrium of their first inputs: a model initialised in steady state.

A vendor's model initialised in steady state (Modelica's ``initial equation der(x) = 0``, a
Simulink model trimmed before it runs) starts every run at the equilibrium of the inputs it is
given at its start: a spring deflected by the force it starts at, a motor turning at the speed
its first voltage holds.  The runs' initial states then differ as their first inputs do, and
neither a state shared by the runs nor a constant source holds that: a mass on a spring started
so, its velocity and acceleration shown, was missed by 23 % with a learned state, offsets and a
feedthrough (started from rest, the same part is fitted to 0.07 %).

The model.  Each run starts at ``x₀ = −A⁻¹ B v₀`` (``v₀`` its first port inputs, the constant
source included: a preload the runs share), the fit differentiating through it
(:class:`~fmu_surrogate.identify.linear.model.ported.Layout` ``equilibrium``); its subspace
start is fitted to the runs' deviations from their first points, which start at rest.  The
surrogate carries the rule (:class:`~fmu_surrogate.ph.PortedSystem` ``initial="equilibrium"``)
and its exported FMU solves for that state at initialisation, as the vendor's does.

When (``initial="auto"``, :func:`try_equilibrium`).  After the fit from a state: when an input
starts away from zero in some run (else the equilibrium of the first inputs is that of zero
inputs, which the state already is) and the fit misses the training runs by more than
:data:`~fmu_surrogate.identify.linear.prepare.EQUILIBRIUM_MISS` (relative RMS, worst output),
the model is fitted again starting each run at its equilibrium (its order chosen again on the
records' deviations from their first points, unless given), and kept where that at least halves
the miss (:data:`GAIN`), over the whole records or over their first samples (:data:`HEAD`):
where no linear model fits (a part far from linear: a mass on a hardening spring, 40 % either
way), the start of each record still tells a wrong start from a right one, before the dynamics
the model misses build up, and the nonlinear fit then starts its runs where they rest.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.ports import inputs_start_away

Array = NDArray[np.float64]

__all__ = ["GAIN", "training_miss", "try_equilibrium"]

#: Factor by which the fit from equilibria must lower the training miss to be kept.
GAIN = 2.0
#: Fraction of each record (at least :data:`HEAD_MIN` samples) whose miss also decides: the
#: first 2 % (a mass on a hardening spring, order 2, runs of 1001 samples: 2.2 against 0.16 on
#: the first 20 samples, 0.61 against 0.31 on the first 100, 0.50 against 0.48 on all).
HEAD = 0.02
HEAD_MIN = 10


def training_miss(est: Any, raw: list[tuple], head: int | None = None) -> float:
    """The worst output's relative RMS error of a fit over its records.

    Parameters
    ----------
    est : LinearPHIdentifier
        Fitted to ``raw``.
    raw : list of (t, u, y, hold)
    head : int, optional
        Judge only the first ``head`` samples of each record (default: all).

    Returns
    -------
    float
        ``max_j ‖ŷ_j − y_j‖ / ‖y_j‖`` over all records (an output that is zero throughout is
        judged against the largest output).
    """
    num = np.zeros(raw[0][2].shape[1])
    den = np.zeros_like(num)
    with np.errstate(all="ignore"):
        for t, u, y, hold in raw:
            t, u, y = (t, u, y) if head is None else (t[:head], u[:head], y[:head])
            Y = np.asarray(est.predict(t, u, hold=hold), dtype=float).reshape(y.shape)
            num += np.sum((Y - y) ** 2, axis=0)
            den += np.sum(y ** 2, axis=0)
    den = np.maximum(den, 1e-24 * max(float(den.max()), 1e-300))
    miss = np.sqrt(num / den)
    return float(np.max(np.where(np.isfinite(miss), miss, np.inf)))


def try_equilibrium(est: Any, raw: list[tuple], pairs: list[tuple] | None = None,
                    declared: bool = False) -> None:
    """``initial="auto"`` or ``"equilibrium"`` after a fit from a state: fit again with every
    run starting at the equilibrium of its first inputs (module docstring); keep it when asked
    for, or when it at least halves the training miss.

    Parameters
    ----------
    est : LinearPHIdentifier
        Fitted (from a state) to ``raw``.
    raw : list of (t, u_ext, y_ext, hold)
        The records, external convention.
    pairs : list of (input index, output index, orientation or None), optional
        The power pairs of a drop-in fit (default: the inputs and outputs paired in order).
    declared : bool
        The source declares the power outputs independent of the power inputs.
    """
    from fmu_surrogate.identify.linear.prepare import (
        EQUILIBRIUM_MISS,
        _adopt,
        refit_roles,
    )

    n = est.system_.n_states
    # every run from the same first inputs: a start at their equilibrium and one from a state
    # fit alike, so the data cannot tell which the FMU does (the fit report says so)
    first = [np.asarray(u, dtype=float)[0] for _t, u, _y, _h in raw]
    est.start_rule_open_ = bool(est.initial == "auto" and n > 0 and len(first) > 1
                                and all(np.array_equal(f, first[0]) for f in first))
    if est.initial == "state" or getattr(est, "initial_", "state") == "equilibrium" or n == 0:
        return
    forced = est.initial == "equilibrium"
    if not forced:
        if est.learn is not None or est.offsets is False or not inputs_start_away([u for _t, u, _y, _h in raw]):
            return
        miss = training_miss(est, raw)
        if miss <= EQUILIBRIUM_MISS:
            return
        head = max(HEAD_MIN, int(HEAD * min(r[0].shape[0] for r in raw)))

    # the order chosen again (unless given) on the records' deviations from their first points,
    # which start at rest (from a state, a mass on a spring got order 4 for 2); where that
    # choice is a static map, no linear model fits (a mass on a hardening spring): the order
    # of the fit from a state
    def refit(order: int | None) -> Any:
        return refit_roles(est, raw, pairs, declared, initial="equilibrium", offsets=True,
                           order=order)

    try:
        other = refit(est.order)
        if est.order is None and other.system_.n_states == 0:
            other = refit(n)
    except (ValueError, np.linalg.LinAlgError):
        if forced:
            raise
        return
    if not forced and not (training_miss(other, raw) * GAIN <= miss or
                           training_miss(other, raw, head) * GAIN <= training_miss(est, raw, head)):
        return
    # the refit's own order selection, else the one that chose the order a refit(n) keeps
    _adopt(est, other, other.order_selection_ or est.order_selection_)
