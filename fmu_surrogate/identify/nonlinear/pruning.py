"""Dropping the terms a nonlinear fit does not need.

The fit starts every nonlinear term (energy ridges, dissipation and feedthrough power laws) from a
gain of zero (the static law of the modulating inputs from a least-squares start over a whole
dictionary of candidate terms, :mod:`.input_law`) and keeps whatever lowers the cost, however little: a saturating motor's fit ends
with a ridge of weight 7e-7 and dissipation terms of gain 1e-6 next to the terms that carry its
physics.  Each costs its evaluation at every step of every simulation and exported FMU (100–230 ns
per step there), for nothing the data can tell.  :func:`prune_terms` sets the gains of such terms
to zero — :func:`~fmu_surrogate.identify.nonlinear.parametrisation.to_system` then leaves them
out — as long as the training error stays within :data:`ERROR_GROWTH` of the fitted one: every
term's removal is tried alone, the harmless ones are removed in order of the error they leave,
each kept only when the error with all removals so far still holds.  The asymmetries of the
power laws are tried the same way (:data:`SHAPE_BLOCKS`): a symmetric law is written without
its gate, one power fewer per evaluation (a power-law damper's fit ends with an asymmetry of
2e-7, and its exported FMU stepped in 58 instead of 48 ns).  Parts of the structure are
tried as well (:data:`STRUCTURE_BLOCKS`): all dissipation of the states (``R = 0, P = 0``, the
rows of the state in ``W``'s factor: a lossless core — with ``J`` zero too its step is
explicit, no Newton iteration), each offset (a column of ``G`` fed by a constant source) and
the shift of the nonlinear feedthrough's laws by that source.
They can compensate each other: a progressive spring's fit ends with a dissipation of 1e-5
balanced by an offset of 5e-7, each alone worth a third of its error of 3e-5, both gone
1e-6 — so those not dropped in the first round are tried once more against the result.  A
core whose states all end idle (a static law fitted with the one state every nonlinear fit
starts with) loses them (:func:`without_idle_states`): a static map, whose exported FMU solves
no Newton step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.nonlinear.parametrisation import Layout, sensor_rows, to_system
from fmu_surrogate.ph import (
    ConvergenceError,
    ConvexEffort,
    NonlinearPH,
    PortedSystem,
    PowerDissipation,
    simulate,
    with_names,
)

Array = NDArray[np.float64]

__all__ = ["ERROR_GROWTH", "SHAPE_BLOCKS", "STRUCTURE_BLOCKS", "TERM_BLOCKS", "prune_terms",
           "relative_error", "surrogate_of", "swing_energy", "without_idle_states"]

#: The gains of the terms that may be dropped: ridge weights, dissipation and feedthrough gains,
#: the static law's gains (each output's gain of each term).
TERM_BLOCKS = ("alpha", "beta", "pbeta", "lC")
#: Parameters whose value zero makes a term cheaper to evaluate: the asymmetries of the
#: dissipation and feedthrough power laws (zero: no gate) and the ridges' shifts (zero: no
#: preload), with the gains of their terms.
SHAPE_BLOCKS = {"asym": "beta", "pasym": "pbeta", "rc": "alpha"}
#: Parts of the structure that may be dropped as a whole: ``"R"`` all dissipation of the states
#: (the first ``n`` rows of ``W``'s factor ``L``: ``R`` and ``P``; ``S`` stays), ``"G"`` the
#: column of a constant source (index: its port), ``"pdir"`` that column of the nonlinear
#: feedthrough's directions (a law of the power ports shifted by the source: 7.7e-6 beside
#: 20 per m/s in a coil spring's fit, and a coupling of the part refused, the law reading an
#: external input with the coupled state).
STRUCTURE_BLOCKS = ("R", "G", "pdir")
#: A term is dropped when the training error without it stays within this factor of the fitted
#: one (2 %: far below any tolerance a user checks, far above the optimiser's last digits).
ERROR_GROWTH = 1.02


def prune_terms(layout: Layout, theta: Array, error: Callable[[Array, float], float],
                constant_ports: Sequence[int] = ()) -> tuple[Array, list[tuple[str, int]]]:
    """The parameters with the terms the fit does not need at a gain of zero (module doc).

    Parameters
    ----------
    layout : Layout
        The sizes of ``θ``.
    theta : ndarray
        The fitted parameters.
    error : callable
        ``error(θ, bound) -> float``: the training error of a parameter vector, or any value
        above ``bound`` once it is known to exceed it (a removal that costs more is not made:
        its simulation may stop there, :func:`relative_error`).
    constant_ports : sequence of int
        The ports fed by a constant source (their columns of ``G`` are offsets).

    Returns
    -------
    (ndarray, list of (str, int))
        The pruned parameters and the dropped terms, asymmetries and parts of the structure
        (:data:`STRUCTURE_BLOCKS`) as ``(block, index)``.
    """
    theta = np.array(theta, dtype=float)
    base = float(error(theta, np.inf))
    if not np.isfinite(base):
        return theta, []
    limit = base * ERROR_GROWTH + 1e-300
    sl = layout.slices()
    terms = [(name, i) for name in (*TERM_BLOCKS, *SHAPE_BLOCKS)
             for i in range(sl[name][0].stop - sl[name][0].start)
             if theta[sl[name][0].start + i] != 0.0
             # the asymmetry of a term the fit left without gain is not written anyway
             and (name not in SHAPE_BLOCKS or theta[sl[SHAPE_BLOCKS[name]][0].start + i] != 0.0)]
    parts = [t for t in [("R", 0), *((b, int(j)) for j in constant_ports for b in ("G", "pdir"))]
             if np.any(theta[_entries(layout, *t)] != 0.0)]

    def without(th: Array, name: str, i: int) -> Array:
        out = th.copy()
        out[_entries(layout, name, i)] = 0.0
        return out

    alone = sorted((float(error(without(theta, *t), limit)), t) for t in terms + parts)
    current, dropped = theta, []
    for e, t in alone:
        if not e <= limit:
            break
        trial = without(current, *t)
        if dropped and not float(error(trial, limit)) <= limit:
            continue
        current = trial
        dropped.append(t)
    # parts that compensate each other go together (module doc): all that are left at once,
    # then each against what has gone
    rest = [t for t in parts if t not in dropped]
    for group in ([rest] if len(rest) > 1 else []) + [[t] for t in rest] * bool(dropped):
        if any(t in dropped for t in group):
            continue
        trial = current
        for t in group:
            trial = without(trial, *t)
        if float(error(trial, limit)) <= limit:
            current = trial
            dropped.extend(group)
    return current, dropped


def _entries(layout: Layout, name: str, i: int) -> Array | slice:
    """The entries of ``θ`` a candidate of :func:`prune_terms` sets to zero."""
    sl, _ = layout.slices()[name if name != "R" else "L"]
    if name == "R":  # the states' rows of W's factor (w × w, row-major)
        w = layout.n + layout.m if layout.feedthrough else layout.n
        return slice(sl.start, sl.start + layout.n * w)
    if name == "G":  # a column of G (n × m, row-major)
        return sl.start + i + layout.m * np.arange(layout.n)
    if name == "pdir":  # a column of the feedthrough terms' directions (Dp × m, row-major)
        return sl.start + i + layout.m * np.arange(layout.n_port_dissipation)
    return slice(sl.start + i, sl.start + i + 1)


def swing_energy(exps: list[tuple]) -> float:
    """``Σ ‖y − y_o‖_F²`` over ``(t, u, y, hold)`` experiments, ``y_o`` each run's
    :func:`~fmu_surrogate.fmu.dataset.swing_origin` (zero for outputs that start at zero): what
    :func:`relative_error` divides by, so that an output about a large value counts by its
    swing, as in the held-out errors (an accumulator's 150 bar ± 14 bar: ``‖y‖`` counted the
    charge, and an RMS error of 1 % of the swing read as 0.1 %).

    Parameters
    ----------
    exps : list of tuple

    Returns
    -------
    float
    """
    from fmu_surrogate.fmu.dataset import swing_origin

    return sum(float(np.sum((y - swing_origin(y)) ** 2)) for _, _, y, _ in exps)


def relative_error(system: PortedSystem, exps: list[tuple], bound: float = np.inf) -> float:
    """``‖ŷ − y‖_F / ‖y − y_o‖_F`` over all samples of ``(t, u, y, hold)`` experiments
    (:func:`swing_energy`), the system
    simulated from its operating point by :func:`~fmu_surrogate.ph.simulate` (NaN for none;
    ``inf`` where the system cannot be stepped through an experiment: Newton does not converge,
    as for a turning pendulum's fit from which :func:`prune_terms` tried to drop a term it
    needs — the exception ended the fit).

    Parameters
    ----------
    system : PortedSystem
    exps : list of tuple
    bound : float
        An error known to exceed this after some experiments is returned as ``inf`` without
        simulating the rest (:func:`prune_terms` rejects it either way: most removals it tries
        are of terms the fit needs, whose first run shows it).

    Returns
    -------
    float
    """
    if not exps:
        return float("nan")
    den = swing_energy(exps)
    num, stop = 0.0, bound * bound * den
    for t, u, y, hold in exps:
        try:
            yh = simulate(system, t, u, hold=hold).y
        except ConvergenceError:
            return float("inf")
        num += float(np.sum((yh - y) ** 2))
        if num > stop:
            return float("inf")
    return float(np.sqrt(num / den)) if den > 0 else float("nan")


def surrogate_of(out: Any, start: Any, theta: Array, delayed: bool = False,
                 before: Array | None = None) -> PortedSystem:
    """The drop-in surrogate of a parameter vector in the start's wiring.

    Parameters
    ----------
    out : Optimised
        The fit (its ``layout``).
    start : LinearStart
        The linear start (wiring, initial state when not learned).
    theta : ndarray
        The parameters.
    delayed : bool
        Whether the feedthrough is delayed.
    before : ndarray, optional
        What a delayed feedthrough sees before the first point (``None``: the first inputs).

    Returns
    -------
    PortedSystem
        With the static law of the fit's terms whose gains are not all zero, if any.
    """
    b = out.layout.unpack(np.asarray(theta, dtype=float))
    x0 = np.array(b["x0"] if out.layout.learn_x0 else start.lin["x0"], dtype=float)
    law = None if out.law is None else out.law.law(b["la"], b["lb"], b["lC"])
    sensors = sensor_rows(b)
    core = to_system(out.layout, theta)
    if sensors.size:  # a sensor port is named after the output it serves
        read = [start.ports.output_names[start.measured[j]] for j in sensors]
        m = out.layout.m
        core = with_names(core, inputs=[*core.input_names[:m], *(f"{y}_sensor" for y in read)],
                          outputs=[*core.output_names[:m], *(f"{y}_read" for y in read)])
    return PortedSystem(core,
                        start.ports_for(np.array(b["Cm"]), np.array(b["Dm"]), law, sensors,
                                        np.array(b["Cd"])), x0,
                        delayed_feedthrough=delayed, inputs_before=before if delayed else None,
                        initial="equilibrium" if start.steady else "state")


def without_idle_states(system: NonlinearPH, x0: Array,
                        Cm: Array) -> tuple[NonlinearPH, Array, Array]:
    """The fitted core without its states when none of them does anything: a static map.

    A static linear start (order 0) is fitted with one state so that dynamics can appear; a
    fit that leaves that state idle — ``J, R, G, P`` zero, no energy ridge, no dissipation term,
    no measured output reading it — ends with the nonlinear feedthrough doing all the work
    (a power-law damper).  The state then changes neither the outputs nor the power balance
    (its energy stays constant), but an exported FMU would still solve a Newton step for it at
    every step: it is removed.

    Parameters
    ----------
    system : NonlinearPH
        The fitted core.
    x0 : ndarray, shape (n,)
        Its initial state.
    Cm : ndarray, shape (k, n)
        The measured outputs' state maps.

    Returns
    -------
    (NonlinearPH, ndarray, ndarray)
        The core, initial state and ``Cm``: of order 0 when every state was idle, else as given.
    """
    n, m = system.n_states, system.n_inputs
    zero = [system.J, system.R, system.B, system.P, Cm]
    if n == 0 or any(np.any(np.asarray(a) != 0) for a in zero) or \
            system.effort_function.kinds or system.dissipation.n_terms:
        return system, x0, Cm
    e = np.zeros((0, 0))
    static = NonlinearPH(e, e, np.zeros((0, m)), ConvexEffort(np.eye(0), (), [], np.zeros((0, 0))),
                         PowerDissipation.empty(0), port_dissipation=system.port_dissipation,
                         P=np.zeros((0, m)), S=system.S, N=system.N,
                         input_names=system.input_names, output_names=system.output_names)
    return static, np.zeros(0), np.zeros((Cm.shape[0], 0))
