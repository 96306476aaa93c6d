"""What a linear pH fit decides from the data before it starts: order, port orientation, x0.

:meth:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier.fit` calls :func:`prepare`:

* **order** (``order=None``): :func:`~fmu_surrogate.identify.linear.init.order.select_order` —
  Hankel singular values bound the candidates, the held-out error chooses;
* **orientation** of each power pair (``ports``; detected where not given,
  :mod:`~fmu_surrogate.identify.linear.init.orientation`): the sign pattern closest to the pH
  convention under which the data are passive; the inputs of "out" pairs are negated, the fit
  sees pH ports only;
* **initial state** (``learn=None``): learned when the data do not start at rest
  (:func:`~fmu_surrogate.identify.linear.ports.starts_at_rest`), and then constant offsets too
  (``offsets="auto"``);
* **feedthrough** (``feedthrough="auto"``): when the subspace model's power outputs have one
  (:func:`~fmu_surrogate.identify.linear.ported_fit.needs_feedthrough`); with offsets, a
  feedthrough or order 0 the fit is that of the drop-in model
  (:mod:`~fmu_surrogate.identify.linear.ported_fit`), whose order candidates are unstructured
  subspace models with feedthrough (order 0 included).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.errors import LinearIdentificationError
from fmu_surrogate.identify.linear.model.experiments import Experiment
from fmu_surrogate.identify.linear.ports import (
    inputs_start_away,
    parse_orientations,
    starts_at_rest,
)

Array = NDArray[np.float64]

def _uniform(exps: list[Any]) -> bool:
    from fmu_surrogate.identify.linear.init.subspace import data_problem

    return data_problem(exps) is None


def auto_dropin(est: Any) -> bool:
    """Whether ``"auto"`` may switch to the drop-in model: the settings are the defaults of the
    (J, R, Q, B) model's choices — ``learn``, the known values and the reference left unset,
    exact discretisation, subspace start, Levenberg–Marquardt.  Otherwise the user asked for
    that model and gets it."""
    return (est.learn is None and est.mode == "exact" and est.init == "subspace"
            and est.optimizer == "lm" and est.reference is None and est.rank_R is None
            and all(getattr(est, p) is None for p in ("J", "R", "Q", "B", "x0")))


#: Iteration budget of the refinement of each candidate order.
CANDIDATE_MAX_ITER = 50


def _candidate(est: Any, train: list[Any], r: int) -> tuple[Array, Array, Array, None]:
    """The state-space form of the pH model of order r refined on ``train`` (pH ports)."""
    from sklearn.base import clone

    sub = clone(est).set_params(order=r, ports="in", progress=False, complete="pad",
                                max_iter=min(int(est.max_iter), CANDIDATE_MAX_ITER),
                                feedthrough=False, offsets=False, initial="state")
    sub.fit(train)
    A, B, C = sub.system_.state_space()
    return A, B, C, None


def prepare(est: Any, exps: list[Any], n: int | None, names: tuple[str, ...],
            declared: bool = False) -> tuple[list[Any], int, tuple[str, ...]]:
    """Order, orientation and learned parameters of a fit (module docstring).

    Sets ``est.port_signs_``, ``est.order_selection_``, ``est.ported_`` (whether the drop-in
    model of :mod:`~fmu_surrogate.identify.linear.ported_fit` is fitted: a feedthrough, offsets
    or order 0) and ``est.roles_``.

    Parameters
    ----------
    est : LinearPHIdentifier
    exps : list of Experiment
        The data in the external convention.
    n : int or None
        The requested order (None: choose).
    names : tuple of str
        Learned parameters.
    declared : bool
        Whether the data's source declares the outputs independent of the inputs.

    Returns
    -------
    (experiments — with pH ports, or external ones for the drop-in model —, order, learned
    parameters)
    """
    if est.delayed_feedthrough:
        raise LinearIdentificationError(
            "delayed_feedthrough=True is a setting of fit_dataset (a harvested dataset, whose "
            "outputs are an FMU's); fit arrays with it False.")
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
    raw = exps
    if np.any(signs < 0):
        exps = [Experiment.from_arrays(e.t, np.asarray(e.u) * signs, e.y, e.hold) for e in exps]
    if est.learn is None and "x0" not in names and not starts_at_rest(exps):
        names = tuple(p for p in ("J", "R", "Q", "B", "x0") if p in names or p == "x0")
    source = est.offsets is True  # "auto": tried after the fit (try_offsets)
    ft, sel = est.feedthrough, None
    if ft == "auto" and not (uniform and auto_dropin(est)):
        ft = False  # detection needs the subspace method
    if ft == "auto" or (n is None and (ft or source)):
        from fmu_surrogate.identify.linear.init.order import Record, select_order
        from fmu_surrogate.identify.linear.ported_fit import PortRoles, needs_feedthrough

        # the order is chosen with a constant input where offsets may be fitted (data not at
        # rest): else a preload or an offset is explained by slow modes and their x0
        offsets_possible = source or (est.offsets == "auto" and "x0" in names
                                      and est.learn is None)
        roles = PortRoles(tuple((i, i) for i in range(m)), tuple(signs), (), (), source, True)
        data = [(e.t, roles.ports(np.asarray(e.u)), np.asarray(e.y), e.hold) for e in raw]
        if n is None:
            chosen = dataclasses.replace(roles, source=offsets_possible)
            sel, _ = select_order([Record(e.t, chosen.ports(np.asarray(e.u)), np.asarray(e.y),
                                          e.hold) for e in raw],
                                  feedthrough=ft is True or (ft == "auto" and not declared))
            n = sel.order
            if ft == "auto":
                ft = n == 0 or needs_feedthrough(data, n, m, declared, source)
        elif ft == "auto":
            from fmu_surrogate.identify.linear.model.ported import Layout
            from fmu_surrogate.identify.linear.ported_fit import MAX_PARAMETERS

            # "auto" only where the drop-in model is affordable (its dense Jacobian)
            size = Layout(n, m + int(source), m, 0, True, True).size
            ft = size <= MAX_PARAMETERS and needs_feedthrough(data, n, m, declared, source)
    ported = bool(ft) or source or n == 0
    if not ported and sel is not None:  # chosen among unstructured candidates: choose again
        n, sel = None, None
    est.ported_ = ported
    est.roles_ = None
    if ported:
        from fmu_surrogate.identify.linear.ported_fit import PortRoles

        est.roles_ = PortRoles(tuple((i, i) for i in range(m)), tuple(signs), (), (), source,
                               bool(ft))
    elif n is None:
        from sklearn.base import clone

        from fmu_surrogate.identify.linear.init.order import select_order

        # a partial of a module-level function: it can go to worker processes
        sel, _ = select_order(exps, fit=functools.partial(_candidate, clone(est)))
        n = sel.order
    est.order_selection_ = sel
    return (raw if ported else exps), int(n), names


#: ``offsets="auto"``: the fit with a constant source replaces the one without when it lowers
#: the cost by more than this factor (an offset the data show, not a fit of the noise).
OFFSET_GAIN = 2.0
#: A fit without offsets that meets its data within this relative RMS (their round-off) is kept
#: as it is: two costs at round-off compare only round-off (a free mass from exact data got a
#: constant source of 7e-14 on one machine so, whose surrogate no S_nl could couple to)
OFFSET_FLOOR = 1e-11
#: Data whose outputs start at rest and an input not, where the fit without offsets misses the
#: outputs by more than this relative RMS error, may start at an equilibrium (below); the fit
#: with offsets is then kept only where it meets them within it: a held deflection explains a
#: linear part (a mass on a spring: 1e-4), where a nonlinear part's compromise only gains (a
#: pendulum that turns over, its mean speed a constant source's: 100× lower cost, still 96 %
#: held out, and its nonlinear fit from there took order 9 and 2.4× the time).
EQUILIBRIUM_MISS = 1e-2


def equilibrium_start(est: Any, exps: list[Any]) -> bool:
    """Whether data whose outputs start at rest may start at an equilibrium of their first
    inputs instead: an input starts away from zero and the fit without offsets misses the
    outputs by more than :data:`EQUILIBRIUM_MISS`.

    A vendor's model initialised in steady state (Modelica's ``der(x) = 0`` initial equations)
    under a preload or an operating point starts where its outputs rest while its states do
    not (a spring deflected by the 50 N its force starts at, its velocity shown): from a zero
    state the linear model has no way to hold that deflection, and a mass on a spring fitted so
    missed its held-out run by 123 %.  A constant source port holds the deflection the runs
    share (the preload; what their first inputs differ by leaves a decaying transient, and runs
    that start at the equilibria of first inputs differing widely are not held: a state per
    run's first inputs does: :mod:`~fmu_surrogate.identify.linear.steady_start`, tried after
    this); the fit with one is kept where it meets the outputs within :data:`EQUILIBRIUM_MISS`
    (:func:`try_offsets`).
    """
    return inputs_start_away([e.u for e in exps]) and not _missed(est, exps) <= EQUILIBRIUM_MISS


def _missed(est: Any, exps: list[Any]) -> float:
    """The worst relative RMS output error of a fit over experiments."""
    return max(est.errors(e.t, e.u, e.y, hold=e.hold).relative_rms for e in exps)


def try_offsets(est: Any, exps: list[Any]) -> None:
    """``offsets="auto"``: when the data do not start at rest or may start at an equilibrium
    (:func:`equilibrium_start`; and ``learn`` is the default),
    fit again with a constant source port and keep that fit if it lowers the cost by more
    than :data:`OFFSET_GAIN` (fitting offsets only when the data need them keeps the
    better-conditioned model otherwise).

    Parameters
    ----------
    est : LinearPHIdentifier
        Fitted without offsets.
    exps : list of Experiment
        The data (external convention).
    """
    rest = starts_at_rest(exps)
    if est.offsets != "auto" or not auto_dropin(est) or (rest and not equilibrium_start(est, exps)):
        return
    if _missed(est, exps) <= OFFSET_FLOOR:  # met to round-off: costs there compare round-off
        return
    from sklearn.base import clone

    other = clone(est).set_params(offsets=True, order=est.system_.n_states,
                                  ports=[("in" if s > 0 else "out") for s in est.port_signs_])
    try:
        other.fit(exps, no_feedthrough_declared=est.no_feedthrough_declared_)
    except (ValueError, np.linalg.LinAlgError):
        return
    if rest and _missed(other, exps) > EQUILIBRIUM_MISS:
        return
    if other.result_.final_cost * OFFSET_GAIN < est.result_.final_cost:
        _adopt(est, other)


def try_without_offsets(est: Any, raw: list[tuple], pairs: list[tuple],
                        declared: bool = False) -> None:
    """``offsets="auto"`` after a drop-in fit with power pairs on data that do not start at rest
    (:func:`~fmu_surrogate.identify.linear.ported_fit.fit_roles` fits a constant source there):
    fit again without the source at the same order, and keep the source only where it lowers
    the cost by more than :data:`OFFSET_GAIN`, the rule of :func:`try_offsets`.

    A part thrown from a state (a mass between end stops started at 1.5 m/s) is not at rest,
    yet nothing holds it away from zero: its source fit cost 0.967005 against 0.967006 without,
    and the nonlinear fit started from the source missed its held-out run by 17 % where the
    one started without it met it to 0.05 %.  A nonlinear part that needs a source (a load)
    gets it from the nonlinear selection, which tries one where the fit without misses.

    Parameters
    ----------
    est : LinearPHIdentifier
        Fitted by ``fit_roles`` to ``raw``.
    raw : list of (t, u_ext, y_ext, hold)
        The records, external convention.
    pairs : list of (input index, output index, orientation or None)
        The power pairs of the fit.
    declared : bool
        The source declares the power outputs independent of the power inputs.
    """
    roles = getattr(est, "roles_", None)
    if est.offsets != "auto" or est.initial == "equilibrium" or roles is None or \
            not roles.source:
        return
    try:
        other = refit_roles(est, raw, pairs, declared, offsets=False,
                            order=est.system_.n_states)
    except (ValueError, np.linalg.LinAlgError):
        return
    if not est.result_.final_cost * OFFSET_GAIN < other.result_.final_cost:
        _adopt(est, other)


def refit_roles(est: Any, raw: list[tuple], pairs: list[tuple] | None, declared: bool,
                **params: Any) -> Any:
    """Fit a clone of ``est`` with ``params`` changed to the same records by the drop-in fit
    (:func:`~fmu_surrogate.identify.linear.ported_fit.fit_roles`), its power pairs oriented as
    ``est`` found them.

    Parameters
    ----------
    est : LinearPHIdentifier
        Fitted to ``raw``.
    raw : list of (t, u_ext, y_ext, hold)
        The records, external convention.
    pairs : list of (input index, output index, orientation or None) or None
        The power pairs of the fit (None: the inputs and outputs paired in order).
    declared : bool
        The source declares the power outputs independent of the power inputs.
    **params
        The settings the clone changes (``offsets``, ``order``, ``initial`` ...).

    Returns
    -------
    LinearPHIdentifier
        The clone, fitted; ``est`` is left as it was.

    Raises
    ------
    ValueError, numpy.linalg.LinAlgError
        Where the refit fails (the caller decides whether that matters).
    """
    from sklearn.base import clone

    from fmu_surrogate.identify.linear.ported_fit import fit_roles

    signs = np.asarray(est.port_signs_, dtype=float)
    if pairs is None:
        pairs = [(k, k, None) for k in range(signs.size)]
    oriented = [(i, o, "in" if s > 0 else "out") for (i, o, _), s in zip(pairs, signs)]
    other = clone(est).set_params(**params)
    other._check_settings()
    other.no_feedthrough_declared_ = bool(declared)
    fit_roles(other, raw, oriented, declared)
    return other


def _adopt(est: Any, other: Any, chosen: Any = None) -> None:
    """Give ``est`` the fitted attributes of ``other``, its refit: the order selection on record
    is ``chosen``, by default ``est``'s (the refit at the order ``est`` chose made none)."""
    if chosen is None:
        chosen = est.result_.order_selection
    for k, v in vars(other).items():
        if k.endswith("_") and not k.startswith("__"):
            setattr(est, k, v)
    est.order_selection_ = chosen
    est.result_ = dataclasses.replace(est.result_, order_selection=chosen)
