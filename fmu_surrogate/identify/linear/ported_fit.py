"""The drop-in fit: feedthrough, offsets, modulating inputs and measured outputs.

:class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier` fits the model of
:mod:`~fmu_surrogate.identify.linear.model.ported` (structure by construction, ``Q = I``
coordinates) instead of its ``(J, R, Q, B, x0)`` model when the data need any of

* a **feedthrough** ``P, S, N`` (``feedthrough=True``, or ``"auto"`` and a feedthrough of the
  power outputs in the subspace model above :data:`FEEDTHROUGH_RTOL`; order 0 always),
* **constant offsets** — preload, gravity, a measured output's offset — as a pH port driven by
  the constant 1 whose power an internal source supplies (``offsets=True``, or ``"auto"`` and
  data that do not start at rest with ``learn`` left at its default),
* **modulating inputs** (inputs without a conjugate output) or **measured outputs** (outputs
  that are not the conjugate of an input: ``y = Cx x + Du u``), which :meth:`fit_dataset`
  reads from ``ports`` pairs.

The roles of the external variables are a :class:`PortRoles`; the fitted surrogate is a
:class:`~fmu_surrogate.ph.ports.PortedSystem` (:func:`ported_surrogate`).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.errors import LinearIdentificationError
from fmu_surrogate.identify.linear.init.order import Record, select_order
from fmu_surrogate.identify.linear.optim.nested import FEEDTHROUGH_RTOL

Array = NDArray[np.float64]

#: Largest parameter vector of the drop-in model (its dense Jacobian and batched Fréchet
#: derivatives grow with its square: ~1 GB at 2000 parameters, order ~40 with two ports).
MAX_PARAMETERS = 2000
#: The power outputs' feedthrough counts (``feedthrough="auto"``) when ``‖D v‖ / ‖y‖`` of the
#: subspace model exceeds this and NOISE_MARGIN times the model's relative residual: exact data
#: without feedthrough give ~1e-10; with 1 % noise D picks up a few 1e-3.
NOISE_MARGIN = 10.0
#: Power outputs the FMU declares independent of its inputs (``<ModelStructure>``) get a
#: feedthrough only when it explains more than this share of them: a declaration can be wrong,
#: data that show a damper's force following its velocity are not (measured: 0.06 % spurious
#: for a gas accumulator's pressure, the share of a model error; a damper's is 100 %).
DECLARED_SHARE = 0.05
#: Records whose power outputs start at rest but a measured output does not are at rest when
#: the inputs explain the outputs to this relative error (:func:`unforced_ratio`): measured
#: 2e-5 for a mass from rest (position, velocity, acceleration out), 1.0 for the quarter car
#: released under gravity; noisy data leave their noise level.
REST_RTOL = 1e-2


@dataclass(frozen=True)
class PortRoles:
    """What each external input and output is.

    Attributes
    ----------
    pairs : tuple of (int, int)
        Power pairs ``(input column, output column)``, in pH port order.
    signs : tuple of float
        Orientation of each pair (+1 in, −1 out).
    modulating : tuple of int
        Input columns without a conjugate output.
    measured : tuple of int
        Output columns that are not conjugate outputs.
    source : bool
        A constant source port (offsets).
    feedthrough : bool
        Learn ``P, S, N``.
    delayed : bool
        The outputs see the inputs of the step before (a delayed feedthrough).
    """

    pairs: tuple[tuple[int, int], ...]
    signs: tuple[float, ...]
    modulating: tuple[int, ...]
    measured: tuple[int, ...]
    source: bool
    feedthrough: bool
    delayed: bool = False

    @property
    def n_ports(self) -> int:
        """pH ports m."""
        return len(self.pairs) + len(self.modulating) + int(self.source)

    def ports(self, u: Array) -> Array:
        """pH port inputs ``v`` (K, m) from external inputs ``u`` (K, k_in)."""
        cols = [s * u[:, i] for (i, _), s in zip(self.pairs, self.signs)]
        cols += [u[:, j] for j in self.modulating]
        if self.source:
            cols.append(np.ones(u.shape[0]))
        return np.column_stack(cols) if cols else np.zeros((u.shape[0], 0))

    def shown(self, y: Array) -> Array:
        """Shown outputs (power outputs, then measured) from external outputs (K, k_out)."""
        return np.column_stack([y[:, o] for _, o in self.pairs] + [y[:, j]
                                                                  for j in self.measured])

    def external(self, y_shown: Array, k_out: int) -> Array:
        """External output order from shown outputs."""
        out = np.empty((y_shown.shape[0], k_out))
        for c, (_, o) in enumerate(self.pairs):
            out[:, o] = y_shown[:, c]
        for c, j in enumerate(self.measured):
            out[:, j] = y_shown[:, len(self.pairs) + c]
        return out


def unforced_ratio(raw: list[tuple]) -> float:
    """The part of the outputs the inputs leave unexplained, ``‖y − ŷ_u‖ / ‖y‖``.

    ``ŷ_u`` is the response from rest, to the varying inputs, of the unstructured model (order
    from the data, feedthrough) fitted with its initial state and a constant input column: what
    initial states, preloads and offsets (gravity) add is left in ``y − ŷ_u``.  Records from
    rest without offsets leave the model error (exact data: round-off); a measured output at
    t = 0 that is a feedthrough of the input (an acceleration) is explained.

    Parameters
    ----------
    raw : list of (t, u_ext, y_ext, hold)

    Returns
    -------
    float
        ``inf`` when the data do not allow the unstructured model (non-uniform sampling, too
        short records).
    """
    from fmu_surrogate.identify.linear.init.orientation import forced_response

    u_all = np.concatenate([u for _t, u, _y, _h in raw])
    varying = np.flatnonzero(np.ptp(u_all, axis=0) > 1e-12 * np.abs(u_all).max(axis=0))

    def aug(t: Array, u: Array) -> Array:
        return np.column_stack([u[:, varying], np.ones(t.shape[0])])

    recs = [Record(t, aug(t, u), y, h) for t, u, y, h in raw]
    try:
        _sel, sm = select_order(recs, feedthrough=True)
    except (LinearIdentificationError, ValueError, np.linalg.LinAlgError):
        return float("inf")
    num = den = 0.0
    for r in recs:
        v = r.u.copy()
        v[:, -1] = 0.0  # the response to the inputs alone
        if sm is None:  # order 0: a static map, least squares
            D = np.linalg.lstsq(np.concatenate([q.u for q in recs]),
                                np.concatenate([q.y for q in recs]), rcond=None)[0].T
            y_u = v @ D.T
        else:
            y_u = forced_response(sm, r.t, v, r.hold)
        num += float(np.sum((r.y - y_u) ** 2))
        den += float(np.sum(r.y ** 2))
    return float(np.sqrt(num / den)) if den > 0 else 0.0


def needs_feedthrough(data: list[tuple], n: int, n_power: int,
                      declared_none: bool = False, source: bool = False) -> bool:
    """``feedthrough="auto"``: the subspace model of order n (n = 0: least squares) has a
    feedthrough of the power outputs above :data:`FEEDTHROUGH_RTOL` and ``NOISE_MARGIN`` times
    its relative residual (above :data:`DECLARED_SHARE` where the FMU declares none).

    Parameters
    ----------
    data : list of (t, v, y, hold)
    n : int
    n_power : int
    declared_none : bool
        The FMU declares the power outputs independent of the inputs: the share is then that
        of the inputs alone, without the constant source column (``source``), whose offsets
        are no dependence on an input.
    source : bool
        The last column of ``v`` is the constant source.

    Returns
    -------
    bool
    """
    if n == 0:
        return True
    from fmu_surrogate.identify.linear.init.subspace import subspace_identify

    sm = subspace_identify(data, n, with_x0=True, with_d=True)
    cols = slice(0, -1) if declared_none and source else slice(None)
    num = sum(float(np.linalg.norm(v[:, cols] @ sm.D[:n_power, cols].T))
              for _t, v, _y, _h in data)
    den = sum(float(np.linalg.norm(y[:, :n_power])) for _t, _v, y, _h in data)
    # above round-off and well above what the residual (noise, model error) could put into D
    floor = max(FEEDTHROUGH_RTOL, NOISE_MARGIN * sm.fit_residual)
    return num > (max(floor, DECLARED_SHARE) if declared_none else floor) * max(den, 1e-300)


def fit_ported(est: Any, raw: list[tuple], roles: PortRoles, n: int, learn_x0: bool) -> None:
    """Fit the drop-in model; sets ``system_``, ``x0_``, ``result_``, ``roles_``, ``theta_``.

    Parameters
    ----------
    est : LinearPHIdentifier
    raw : list of (t, u_ext, y_ext, hold)
    roles : PortRoles
    n : int
        Order (0: static map, needs a feedthrough).
    learn_x0 : bool
    """
    from fmu_surrogate.identify.linear.init.ported import ported_initial
    from fmu_surrogate.identify.linear.model.ported import (
        Layout,
        PortedModel,
        blocks,
    )
    from fmu_surrogate.identify.linear.optim.dense_lm import levenberg_marquardt
    from fmu_surrogate.identify.linear.optim.nested import (
        without_spurious_feedthrough,
        without_state_offsets,
    )
    from fmu_surrogate.identify.linear.report import LinearPHFit
    from fmu_surrogate.ph import LinearPH

    data = [(t, roles.ports(u), roles.shown(y), h) for t, u, y, h in raw]
    steady = getattr(est, "initial", "state") == "equilibrium" and n > 0
    if n == 0 and not roles.feedthrough:
        raise LinearIdentificationError(
            "order 0 is a static map y = (S − N) u and needs feedthrough=True (or 'auto').")
    lay = Layout(n, roles.n_ports, len(roles.pairs), len(roles.measured), roles.feedthrough,
                 learn_x0 and n > 0 and not steady, roles.delayed, steady)
    if lay.size > MAX_PARAMETERS:
        raise LinearIdentificationError(
            f"the drop-in model (feedthrough, offsets or non-power variables) of order {n} has "
            f"{lay.size} parameters; its dense Levenberg–Marquardt handles up to "
            f"{MAX_PARAMETERS}: choose a smaller order, or feedthrough=False and offsets=False "
            "for the (J, R, Q, B) model.")
    t0 = time.perf_counter()
    rate = 1.0 / max(float(t[-1] - t[0]) for t, *_ in raw)
    # a delayed feedthrough: the subspace model of the outputs one sample later, where it is a
    # direct one (the same dynamics; its output map is the start's)
    # at an equilibrium of its first inputs, a record's deviations from its first point start
    # at rest: the dynamics' start, whatever the runs' equilibria
    start = from_first_points(data) if steady else data
    theta = ported_initial(lay, delayed_view(start) if roles.delayed else start, rate)
    init_time = time.perf_counter() - t0
    model = PortedModel(lay, data)
    c0, t1 = time.process_time(), time.perf_counter()
    out = levenberg_marquardt(model.residual, model.jacobian, theta,
                              max_iter=int(est.max_iter), tol=float(est.tol))
    for held, what in ((without_spurious_feedthrough, "the feedthrough the data do not show"),
                       (without_state_offsets, "the offsets the initial state carries")):
        theta, refit = held(lay, model, out.theta, int(est.max_iter), float(est.tol))
        if refit is not None:  # the fit's story, then the refit's
            out = dataclasses.replace(
                refit, cost_history=list(out.cost_history) + list(refit.cost_history[1:]),
                n_iter=out.n_iter + refit.n_iter,
                stopping_reason=f"{out.stopping_reason}; then " + (
                    f"{refit.n_iter} more with {what} held at zero" if refit.n_iter else
                    f"{what} held at zero (the rest already at its optimum)"))
    b = blocks(lay, theta)
    if not np.array_equal(b["J"], -b["J"].T):  # pragma: no cover - invariant
        raise AssertionError("internal error: the fitted J lost its exact skew-symmetry.")
    system = LinearPH(b["J"], b["R"], np.eye(n), b["G"], P=b["P"], S=b["S"], N=b["N"])
    est.system_, est.x0_ = system, np.array(b["x0"], dtype=float)
    est.roles_, est.theta_, est.layout_ = roles, theta, lay
    est.initial_ = "equilibrium" if steady else "state"
    est.n_inputs_ = len(raw[0][1][0])
    est.hold_ = raw[0][3]
    est.result_ = LinearPHFit(
        system=system, x0=est.x0_, cost_history=tuple(out.cost_history),
        stopping_reason=out.stopping_reason, gradient_norm=out.gradient_norm,
        n_iter=out.n_iter, time=time.perf_counter() - t1,
        cpu_time_s=time.process_time() - c0, mode="exact",
        fitted=("J", "R", "B") + (("P", "S", "N") if roles.feedthrough else ())
        + (("x0",) if lay.learn_x0 else ()) + (("offsets",) if roles.source else ())
        + (("equilibrium start",) if steady else ()),
        optimizer="lm (drop-in model)", init="subspace (drop-in model)", init_time_s=init_time,
        jacobian_singular_values=tuple(float(v) for v in out.singular_values),
        port_signs=roles.signs)


def from_first_points(data: list[tuple]) -> list[tuple]:
    """Records ``(t, v, y, hold)`` as deviations from their first points: records that start at
    the equilibrium of their first inputs then start at rest."""
    return [(t, v - v[0], y - y[0], h) for t, v, y, h in data]


def delayed_view(data: list[tuple]) -> list[tuple]:
    """Records ``(t, v, y, hold)`` with each output one sample earlier (the last point
    dropped): a delayed feedthrough there is a direct one."""
    return [(t[:-1], v[:-1], y[1:], h) for t, v, y, h in data]


def fit_roles(est: Any, raw: list[tuple], pairs: list[tuple[int, int, str | None]],
              declared: bool = False) -> None:
    """Fit the drop-in model to records with power pairs, modulating inputs and measured
    outputs (:meth:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier.fit_dataset`
    with ``ports`` pairs).

    Orientation of the pairs: given, else detected from the paired columns; order: given, else
    the unstructured candidates with feedthrough (:func:`~fmu_surrogate.identify.linear.init.
    order.select_order`); x0 and offsets as for :meth:`fit`.

    Parameters
    ----------
    est : LinearPHIdentifier
    raw : list of (t, u_ext, y_ext, hold)
    pairs : list of (input index, output index, orientation or None)
    declared : bool
        Whether the data's source declares the power outputs independent of the power inputs
        (:data:`DECLARED_SHARE`; not applied to a delayed feedthrough, whose outputs moved).
    """
    from fmu_surrogate.identify.linear.ports import starts_at_rest

    k_in, k_out = raw[0][1].shape[1], raw[0][2].shape[1]
    paired = [Record(t, u[:, [i for i, _, _ in pairs]], y[:, [o for _, o, _ in pairs]], h)
              for t, u, y, h in raw]
    signs = np.array([1.0 if p == "in" else -1.0 if p == "out" else np.nan
                      for _, _, p in pairs])
    # at rest: judged on the power outputs (a measured output such as an acceleration has a
    # feedthrough, nonzero at t = 0 from rest); measured outputs that do not start at zero
    # decide by what the inputs leave unexplained (a preloaded part released at rest)
    records = [Record(t, u, y, h) for t, u, y, h in raw]
    at_rest = starts_at_rest(paired if pairs else records)
    if at_rest and len(pairs) < k_out and not starts_at_rest(records):
        at_rest = unforced_ratio(raw) <= REST_RTOL
    if pairs and np.any(np.isnan(signs)):
        from fmu_surrogate.identify.linear.init.orientation import (
            detect_orientation,
            offset_orientation,
        )
        from fmu_surrogate.identify.linear.model.experiments import Experiment

        exps = [Experiment.from_arrays(e.t, e.u, e.y, e.hold) for e in paired]
        # power outputs at rest but offsets in the part (gravity): the forced response decides
        found = None if at_rest else offset_orientation(exps)
        if found is None:
            found = detect_orientation(exps)
        signs = np.where(np.isnan(signs), found, signs)
    steady = est.initial == "equilibrium"  # each run from the equilibrium of its first inputs
    source = est.offsets is True or (est.offsets == "auto" and est.learn is None
                                     and (steady or not at_rest))
    # an input without a pair that is zero in every record (not excited: fit_dataset hands
    # held inputs over as deviations from their value) takes no port: its column of B could
    # not be fitted, and as an input of zeros it spoiled the subspace start and the order
    # choice (a gas accumulator with a held temperature: order 5 and 6.2 % held out, without
    # its port order 3 and 5.0 %); the surrogate keeps the input, with no effect
    used_in = {i for i, _, _ in pairs} | {j for j in range(k_in)
                                         if all(not np.any(u[:, j]) for _, u, _, _ in raw)}
    used_out = {o for _, o, _ in pairs}
    roles = PortRoles(tuple((i, o) for i, o, _ in pairs), tuple(float(v) for v in signs),
                      tuple(j for j in range(k_in) if j not in used_in),
                      tuple(j for j in range(k_out) if j not in used_out), source, True)
    delayed = bool(est.delayed_feedthrough)
    roles = dataclasses.replace(roles, delayed=delayed)
    data = [(t, roles.ports(u), roles.shown(y), h) for t, u, y, h in raw]
    if steady:  # deviations from the first points start at rest
        data = from_first_points(data)
    view = delayed_view(data) if delayed else data  # where a delayed feedthrough is direct
    n, sel, ft = est.order, None, est.feedthrough
    declared = declared and not delayed
    if n is None:
        sel, _ = select_order([Record(*d) for d in view], feedthrough=not declared)
        n = sel.order
    if ft == "auto":
        ft = n == 0 or needs_feedthrough(view, n, len(pairs), declared, roles.source)
    roles = dataclasses.replace(roles, feedthrough=bool(ft))
    learn_x0 = (not at_rest) if est.learn is None else "x0" in est.learn
    est.port_signs_, est.ported_, est.order_selection_ = signs, True, sel
    fit_chosen_order(est, raw, roles, int(n), learn_x0)
    est.result_ = dataclasses.replace(est.result_, order_selection=est.order_selection_)


def confirmed_order(s: Array) -> int:
    """The number of singular values of the subspace step above its floor: the states the data
    confirm (:func:`~fmu_surrogate.identify.linear.init.subspace.numerical_floor`)."""
    from fmu_surrogate.identify.linear.init.subspace import numerical_floor

    return int(np.sum(s > numerical_floor(s)))


def fit_chosen_order(est: Any, raw: list[tuple], roles: PortRoles, n: int,
                     learn_x0: bool) -> None:
    """:func:`fit_ported` at the order ``est.order_selection_`` chose, kept where it fits the
    training runs at least as well as the order the singular values confirm (a model of more
    states contains that one); else that order is fitted and kept, and the selection says so.

    Orders above the confirmed count are candidates for a mode the floor may hide, chosen on
    the held-out errors of unstructured subspace models.  Directions at round-off can make one
    that no passive model is near: a mass on a spring from exact data with a smooth force taken
    as linear between samples (a 1e-4 mismatch) got a third state at −136 s⁻¹ and a negative
    feedthrough; its storage had a condition of 2e10, and the pH start of order 4 cost 1e17
    times the order-2 fit, from which Levenberg–Marquardt stalled 8000 % away.
    """
    fit_ported(est, raw, roles, n, learn_x0)
    sel = est.order_selection_
    confirmed = 0 if sel is None else confirmed_order(sel.singular_values)
    if not 0 < confirmed < n:
        return
    saved = {k: getattr(est, k) for k in ("system_", "x0_", "roles_", "theta_", "layout_",
                                          "n_inputs_", "hold_", "result_", "initial_")}
    cost = float(saved["result_"].cost_history[-1])
    fit_ported(est, raw, roles, confirmed, learn_x0)
    low = float(est.result_.cost_history[-1])
    if cost <= low:
        for k, v in saved.items():
            setattr(est, k, v)
        return
    est.order_selection_ = dataclasses.replace(
        sel, order=confirmed,
        criterion=f"{sel.criterion}; order {sel.order}'s pH fit stopped above order "
                  f"{confirmed}'s (cost {cost:.3g} against {low:.3g}; {confirmed}: the singular "
                  f"values above the floor), which is kept")


def predict_ported(est: Any, t: Array, u: Array, x0: Array | None, hold: str) -> Array:
    """External outputs of a drop-in fit for external inputs ``u``."""
    from fmu_surrogate.identify.linear.model.ported import PortedModel

    roles, lay = est.roles_, est.layout_
    theta = est.theta_
    if x0 is not None:
        if not lay.learn_x0:
            raise LinearIdentificationError("predict(x0=…) needs a fit that learned x0.")
        theta = theta.copy()
        theta[lay.slices["x0"]] = x0
    v = roles.ports(u)
    dummy = np.zeros((t.shape[0], lay.n_outputs))
    (_, Y), = PortedModel(lay, [(t, v, dummy, hold)]).simulate(theta)
    return roles.external(Y, len(roles.pairs) + len(roles.measured))


def ported_surrogate(est: Any, input_names: list[str], output_names: list[str],
                     input_units: list[str | None] | None = None,
                     output_units: list[str | None] | None = None) -> Any:
    """The :class:`~fmu_surrogate.ph.ports.PortedSystem` of a fit: external names, signs,
    units, the operating point x0 (or the equilibrium start) and the constant source.

    Parameters
    ----------
    est : LinearPHIdentifier
        Fitted.
    input_names, output_names : list of str
        External variables in the order of the data's columns.
    input_units, output_units : list of str or None, optional

    Returns
    -------
    PortedSystem or LinearPH
        The pH core with the FMU's names instead when the FMU's variables are exactly its
        power-in ports and it starts at rest (nothing for a wiring to add).
    """
    from fmu_surrogate.ph import PortedSystem, with_names
    from fmu_surrogate.ph.port_map import PortMap

    sys_, n = est.system_, est.system_.n_states
    roles, initial = getattr(est, "roles_", None), getattr(est, "initial_", "state")
    k_in, k_out = len(input_names), len(output_names)
    if roles is None:  # the (J, R, Q, B) model: power pairs in order, signs
        signs = np.asarray(getattr(est, "port_signs_", np.ones(k_in)), dtype=float)
        roles = PortRoles(tuple((i, i) for i in range(k_in)), tuple(signs), (), (), False,
                          False)
        Cx, Du_ph = np.zeros((0, n)), np.zeros((0, k_in))
    else:
        from fmu_surrogate.identify.linear.model.ported import blocks

        b = blocks(est.layout_, est.theta_)
        Cx, Du_ph = b["Cx"], b["Du"]
    m = roles.n_ports
    Tu, cu = np.zeros((m, k_in)), np.zeros(m)
    for c, ((i, _), s) in enumerate(zip(roles.pairs, roles.signs)):
        Tu[c, i] = s
    for c, j in enumerate(roles.modulating):
        Tu[len(roles.pairs) + c, j] = 1.0
    if roles.source:
        cu[m - 1] = 1.0
    u0 = getattr(est, "input_offsets_", None)  # held inputs, fitted as deviations from them
    if u0 is not None:
        cu -= Tu @ u0
    Ty, Cx_ext = np.zeros((k_out, m)), np.zeros((k_out, n))
    Du, cy = np.zeros((k_out, k_in)), np.zeros(k_out)
    for c, (_, o) in enumerate(roles.pairs):
        Ty[o, c] = 1.0
    for c, j in enumerate(roles.measured):
        Cx_ext[j] = Cx[c]
        Du[j] = Du_ph[c] @ Tu
        cy[j] = Du_ph[c] @ cu
    if (k_in == k_out == m and np.array_equal(Tu, np.eye(m)) and np.array_equal(Ty, np.eye(m))
            and not (Cx_ext.any() or Du.any() or cu.any() or cy.any() or est.x0_.any()
                     or roles.delayed or initial == "equilibrium")):
        return with_names(sys_, inputs=input_names, outputs=output_names)
    ports = PortMap(tuple(input_names), tuple(output_names),
                    tuple(input_units or [None] * k_in), tuple(output_units or [None] * k_out),
                    Tu, cu, Ty, Cx_ext, Du, cy)
    return PortedSystem(sys_, ports, est.x0_, delayed_feedthrough=roles.delayed,
                        inputs_before=getattr(est, "inputs_before_", None),
                        fast_feedthrough=getattr(est, "fast_feedthrough_", None),
                        initial=initial)
