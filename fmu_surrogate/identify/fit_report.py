"""The lines of the ``identify`` report: what a linear dataset fit chose, how the nonlinear fit
treated the outputs' timing and the static law, which outputs a kept model misses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["delay_line", "describe_fit", "law_line", "miss_line", "outputs_line", "percent",
           "step_line", "why_missed"]


def percent(x: float) -> str:
    """A relative error in percent, three significant digits (``6.81e-05 %``, ``1.29 %``)."""
    return f"{100.0 * x:.3g} %"


def outputs_line(names: Sequence[str], worst: np.ndarray, where: str) -> str:
    """Each output's error of a model that misses the tolerance, the worst first, one line.

    Parameters
    ----------
    names : sequence of str
        The outputs.
    worst : ndarray, shape (k_out,)
        Each one's worst relative error over the runs checked.
    where : str
        ``"held-out"`` or ``"training"``.

    Returns
    -------
    str
    """
    order = np.argsort(-np.asarray(worst))
    return (f"{where} error of each output of the kept model: "
            + ", ".join(f"{names[j]} {percent(float(worst[j]))}" for j in order)
            + " — an output no model of the inputs explains (a power or an energy the FMU "
            "computes, round-off) can be left out (outputs=…, CLI --outputs)")


def describe_fit(lin: Any, fit: Sequence[int], held: Sequence[int],
                 left_out: Sequence[str] = ()) -> str:
    """What a linear dataset fit chose, a few lines: runs, power pairs with orientation and
    reasons, the other variables' roles, the order-selection table.

    Parameters
    ----------
    lin : LinearPHIdentifier
        Fitted by :meth:`~fmu_surrogate.identify.LinearPHIdentifier.fit_dataset`.
    fit, held : sequence of int
        Training and held-out runs.
    left_out : sequence of str
        The report's lines on the outputs left out of the fit
        (:meth:`~fmu_surrogate.identify.linear.interface.variables.Interface.report_lines`).

    Returns
    -------
    str
    """
    fit, held = list(fit), list(held)
    lines = [f"  training runs {fit}, held-out runs {held or 'none (training error shown)'}"]
    inputs, outputs = lin.names_[0], lin.names_[1]
    roles = getattr(lin, "roles_", None) if getattr(lin, "ported_", False) else None
    pairs = ([(inputs[i], outputs[o]) for i, o in roles.pairs] if roles is not None
             else list(zip(inputs, outputs)))
    signs = roles.signs if roles is not None else tuple(lin.port_signs_)
    why = {(p.u, p.y): p.reason for p in lin.pairing_.pairs} if lin.pairing_ else {}
    given = {(p.get("u"), p.get("y")): p.get("power") for p in lin.ports
             if isinstance(p, Mapping)} if isinstance(lin.ports, (list, tuple)) else {}
    for (u, y), sgn in zip(pairs, signs):
        how = ("given" if given.get((u, y)) or lin.ports in ("in", "out")
               else "detected from the data's energy")
        lines.append(f"  power pair {u} -> {y}, power {'in' if sgn > 0 else 'out'} ({how}): "
                     f"{why.get((u, y), 'given' if (u, y) in given else 'paired in order')}")
    if roles is not None and not roles.pairs and lin.pairing_ is None:
        lines.append("  no power pair (ports=[]): a signal block" if isinstance(
            lin.ports, (list, tuple)) and not lin.ports else
            f"  no power pair: the units pair none and the inputs and outputs are not "
            f"as many ({len(inputs)} and {len(outputs)}) to pair in order; name power "
            f"pairs with ports=[{{'u': …, 'y': …}}] (CLI --port u=NAME,y=NAME)")
    if roles is not None:
        if roles.modulating:
            lines.append("  modulating inputs (no power pair): "
                         + ", ".join(inputs[j] for j in roles.modulating))
        if roles.measured:
            lines.append("  measured outputs (no power pair): "
                         + ", ".join(outputs[j] for j in roles.measured))
    lines.extend(left_out)
    fitted = ", ".join(lin.result_.fitted)
    lines.append(f"  linear model of order {lin.system_.n_states}, fitted: {fitted}")
    if getattr(lin, "initial_", "state") == "equilibrium":
        lines.append("  each run starts at the equilibrium of its first inputs (a model "
                     "initialised in steady state): the surrogate starts so")
    elif getattr(lin, "start_rule_open_", False):
        lines.append("  every run starts from the same inputs, so the data cannot tell a start "
                     "in steady state (at rest under the first inputs) from a start at a fixed "
                     "state: the surrogate starts from its learned state whatever inputs it "
                     "starts with; runs that start at other inputs (an offset) would tell")
    if getattr(lin, "no_feedthrough_declared_", False) and lin.feedthrough == "auto":
        from fmu_surrogate.identify.linear.ported_fit import DECLARED_SHARE

        said = "the FMU declares its power outputs independent of its inputs (<ModelStructure>)"
        fitted_ft = lin.roles_.feedthrough if lin.roles_ is not None else \
            lin.system_.has_feedthrough
        lines.append(f"  feedthrough fitted although {said}: it explains more than "
                     f"{percent(DECLARED_SHARE)} of them in the data" if fitted_ft else
                     f"  no feedthrough: {said}")
    sel = lin.result_.order_selection
    if sel is not None:
        lines += [f"  order {sel.order} chosen from the data ({sel.criterion}):", sel.table()]
    return "\n".join(lines)


def delay_line(nl: Any, outputs: list[str]) -> str:
    """How the nonlinear fit treated the outputs' timing, one line.

    Parameters
    ----------
    nl : NonlinearPHIdentifier
        Fitted.
    outputs : list of str
        Its surrogate's outputs.

    Returns
    -------
    str
    """
    ev = getattr(nl, "delay_evidence_", None)
    if ev is not None:
        line = ev.describe(outputs)
    else:
        line = ("outputs see the inputs of the step before (delayed feedthrough, as set)"
                if nl.delayed_feedthrough_ else "outputs see the inputs of their own point (as set)")
    if nl.delayed_feedthrough_:
        before = nl.inputs_before_
        line += ("; before the first point they see " + ("the first inputs" if before is None
                 else "the inputs' start values " + ", ".join(f"{v:g}" for v in before)))
    d_f = getattr(nl, "fast_feedthrough_", None)
    if d_f is not None:  # names of the fitted wiring (a signal block's may differ)
        ins, outs = nl.ports_.input_names, nl.ports_.output_names
        line += ("; read after new inputs are set they also see their change from those held "
                 "(dynamics faster than the step: a fast feedthrough, taken out of the data the "
                 "model is fitted to): " + ", ".join(f"{outs[i]} by {d_f[i, j]:.4g} per {ins[j]}"
                                                     for i, j in zip(*np.nonzero(d_f))))
    return line


def law_line(nl: Any, sur: Any) -> str:
    """The static law of the modulating inputs the nonlinear fit kept, one line (empty when it
    had no modulating input to fit a law of).

    Parameters
    ----------
    nl : NonlinearPHIdentifier
        Fitted.
    sur : PortedSystem
        Its surrogate.

    Returns
    -------
    str
    """
    n = getattr(nl, "law_candidates_", 0)
    if not n:
        return ""
    law = getattr(nl, "law_", None)
    if law is None:
        return (f"no static law of the modulating inputs needed (none of {n} candidate terms "
                f"kept)")
    ins = [sur.input_names[j] for j in np.flatnonzero(np.any(law.W != 0, axis=0))]
    outs = [sur.output_names[j] for j in np.flatnonzero(np.any(law.C != 0, axis=1))]
    kinds = ", ".join(f"{law.kinds.count(k)} {k}" for k in dict.fromkeys(law.kinds))
    return (f"static law of the inputs {', '.join(ins)} in the outputs {', '.join(outs)}: "
            f"{law.n_terms} terms ({kinds}) of {n} candidates, fitted with the core")


def reading_line(sur: Any) -> str:
    """What each measured output of a nonlinear surrogate reads, one line (empty unless one
    reads an effort or the state's rate: the state alone is the linear model's reading).

    Parameters
    ----------
    sur : PortedSystem
        The surrogate; a sensor port is a port driven by nothing (zero ``Tu`` row and ``cu``).

    Returns
    -------
    str
    """
    p = sur.ports
    sensor = ~np.any(p.Tu != 0, axis=1) & (p.cu == 0)
    parts, special = [], False
    for o, name in enumerate(p.output_names):
        if np.any(p.Ty[o, ~sensor] != 0):
            continue  # a power output
        what = [w for w, on in (("an effort", np.any(p.Ty[o, sensor] != 0)),
                                ("the state", np.any(p.Cx[o] != 0)),
                                ("the state's rate", np.any(p.Cdx[o] != 0))) if on]
        special |= len(what) > 1 or (bool(what) and what[0] != "the state")
        if what:
            parts.append(f"{name} {' and '.join(what)}")
    if not special:
        return ""
    return ("measured outputs read " + "; ".join(parts) + " (a spring's force is an effort; an "
            "acceleration the rate of a momentum, with the damper's force)")


def step_line(sur: Any, step: float | None) -> str:
    """The internal step of a nonlinear surrogate's scheme, one line (empty without one).

    Parameters
    ----------
    sur : PortedSystem
        The surrogate.
    step : float or None
        The data's sampling step [s].

    Returns
    -------
    str
    """
    h = getattr(sur.system, "max_step", None)
    if h is None:
        return ""
    per = f" ({step / h:.0f} per sample of {step:g} s)" if step else ""
    return (f"the structure-preserving scheme steps at most {h:.4g} s{per}: one step per "
            f"sample would add its own error to the fit's (internal step of simulations and "
            f"exported FMUs)")


#: a held-out run leaves the training range where a variable's largest deviation from the
#: training mean exceeds the training runs' largest by this factor
RANGE_FACTOR = 1.1


def range_ratio(train: Sequence[np.ndarray], held: Sequence[np.ndarray]) -> np.ndarray:
    """Per variable, the held-out runs' largest deviation from the training mean over the
    training runs' largest (``> 1``: outside the range the fit saw).

    Parameters
    ----------
    train, held : sequence of ndarray, shape (T_r, k)
        The runs' samples of the same ``k`` variables.

    Returns
    -------
    ndarray, shape (k,)
    """
    T = np.concatenate(list(train))
    mid = T.mean(axis=0)
    seen = np.maximum(np.abs(T - mid).max(axis=0), 1e-300)
    return np.abs(np.concatenate(list(held)) - mid).max(axis=0) / seen


def miss_line(train_error: float, ratio: Mapping[str, float], tolerance: float,
              levels: int | None = None) -> str:
    """Why a kept model misses the tolerance on the held-out runs, and what to do, one line.

    Parameters
    ----------
    train_error : float
        The kept model's worst relative output error on the training runs.
    ratio : mapping of str to float
        Per input and output, :func:`range_ratio`.
    tolerance : float
    levels : int, optional
        The excitation levels of the training runs
        (:func:`~fmu_surrogate.identify.nonlinear.continuation.level_stages`): at one, runs at lower
        amplitudes are advised too.

    Returns
    -------
    str
    """
    out = sorted(((r, n) for n, r in ratio.items() if r > RANGE_FACTOR), reverse=True)
    # a variable the training runs held constant has no deviation to compare with
    leaves = ("; the held-out run leaves the training range (deviation from the training "
              "mean over the training runs' largest: " + ", ".join(
                  f"{n} {r:.2g}×" if r < 1e6 else f"{n} varied, constant in training"
                  for r, n in out[:3]) + ")" if out else "")
    if train_error <= tolerance:
        return (f"the kept model meets the training runs ({percent(train_error)}), not the "
                f"held-out one{leaves or ' within their range'}: harvest training runs that "
                "cover what the surrogate will see (inputs as large and as varied, more seeds)")
    return (f"the kept model misses the training runs too ({percent(train_error)}): the fits "
            "found nothing closer in their classes (a linear pH model; an energy of convex, "
            "periodic and end-stop ridges with power-law losses) — the component is outside "
            "them "
            "(hysteresis, events, dry friction that sticks), or the fit stopped short of a "
            f"model in them (strongly nonlinear parts with several states){leaves}; inputs "
            "that stay in the range the "
            "surrogate will see, more runs" + (
                " (at one excitation level now: runs of the same inputs at about a fifth and "
                "half of it let the fit climb the levels)" if levels == 1 else "") +
            ", --order (the component's number of states) or --port may help")


def why_missed(sur: Any, x0: Any, data: Any, fit: Sequence[int], held: Sequence[int],
               tolerance: float) -> str:
    """:func:`miss_line` of a kept model that misses the tolerance on the held-out runs: its
    error on the training runs, the held-out runs' ranges against theirs, their levels.

    Parameters
    ----------
    sur : PortedSystem or pH system
        The kept model as simulated (:func:`~fmu_surrogate.identify.heldout.heldout_errors`).
    x0 : array_like or None
        Its initial state (a bare system).
    data : xarray.Dataset
        The data it was fitted to.
    fit, held : sequence of int
        Training and held-out runs.
    tolerance : float

    Returns
    -------
    str
    """
    from fmu_surrogate.fmu.dataset import run_arrays
    from fmu_surrogate.identify.heldout import heldout_errors
    from fmu_surrogate.identify.nonlinear.continuation import excitation_levels, level_stages

    names = list(sur.input_names) + list(sur.output_names)
    e_fit = max(heldout_errors(sur, x0, data, list(sur.input_names), list(sur.output_names),
                               fit))
    train = [X for _, X in run_arrays(data, names, runs=fit)]
    ratio = range_ratio(train, [X for _, X in run_arrays(data, names, runs=held)])
    k = len(sur.input_names)
    levels = len(level_stages(excitation_levels([X[:, :k] for X in train]))) if k else None
    return miss_line(e_fit, dict(zip(names, ratio.tolist())), tolerance, levels)
