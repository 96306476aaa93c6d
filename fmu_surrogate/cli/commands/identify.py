"""``fmu-surrogate identify DATA.nc [--method auto|linear|nonlinear|gp ...] -o SURROGATE.json``.

::

    fmu-surrogate identify quarter_car.nc -o qc.json
    fmu-surrogate identify msd.nc --method linear --inputs F1,F2 --outputs v1,v2 --order 10 \\
        -o msd.json
    fmu-surrogate identify rc.nc --method gp --structure rc_network --states x1,x2,x3 \\
        --derivatives "der(x1),," --inputs u -o rc.json

Defaults: ``--method auto`` (:func:`fmu_surrogate.identify.selection.select_dataset`), the
dataset's inputs and Real outputs, power pairs from their units, order, orientation, x0 and
offsets from the data, every successful run but the last for training.  A thin layer over
:class:`~fmu_surrogate.LinearPHIdentifier`, :class:`~fmu_surrogate.GPEffortIdentifier` and
:func:`fmu_surrogate.ph.save`.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
from pathlib import Path
from typing import Any

import numpy as np

from fmu_surrogate.cli.errors import CLIError
from fmu_surrogate.cli.options import comma_list
from fmu_surrogate.fmu.model.loading import file_sha256
from fmu_surrogate.identify.selection import TOLERANCE

__all__ = ["MAX_TIME", "add_identify_arguments", "identify_command"]

#: Default wall-time budget of ``identify`` [s]: a nonlinear search on the benchmark components
#: ends within minutes (a saturating motor, the slowest: 154 s); one that misses by far can
#: go on for long (a pendulum that turns over, fitted at one level: over 25 minutes)
MAX_TIME = 1200.0


def add_identify_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``fmu-surrogate identify`` to ``p``."""
    p.add_argument("data", help="harvested NetCDF dataset")
    p.add_argument("-o", "--out", required=True, help="surrogate JSON file to write")
    p.add_argument("--method", choices=("linear", "nonlinear", "auto", "gp"), default="auto",
                   help="auto (default): linear pH model, and nonlinear only where the linear "
                        "one misses --tolerance on the held-out runs; linear: linear pH model "
                        "from inputs/outputs; nonlinear: nonlinear pH model with a latent state "
                        "started from the linear one; gp: pH-DAE effort by Gaussian processes "
                        "from states (with --structure, or without --states/--derivatives/"
                        "--structure: the dataset's declared states and a structure proposed "
                        "from the data)")
    p.add_argument("--tolerance", type=float, default=TOLERANCE,
                   help="auto: worst held-out relative output error (max |error| / the "
                        "output's swing, max |y| or max |y - y(0)| if smaller) a linear model "
                        f"must reach to be kept (default {TOLERANCE})")
    p.add_argument("--inputs", help="comma-separated input variables (default: the dataset's "
                                    "inputs)")
    p.add_argument("--outputs", help="comma-separated output variables (default: the dataset's "
                                     "Real outputs; Boolean and Integer outputs are not fitted); "
                                     "gp on declared states: the outputs y = Bᵀz power-conjugate "
                                     "to the inputs (default: the dataset's outputs if there are "
                                     "as many as inputs)")
    p.add_argument("--order", type=int,
                   help="linear: model order n (default: chosen from the data, table printed)")
    p.add_argument("--port", action="append", default=[], metavar="u=NAME,y=NAME[,power=in|out]",
                   help="linear: a power pair and its orientation (repeat per pair; default: "
                        "pairs whose units make a power, the data choosing among candidates; "
                        "in order when no units are declared; orientation detected); inputs "
                        "in no pair are modulating, outputs in no pair measured")
    p.add_argument("--learn", help="linear: comma-separated parameters to fit among J,R,Q,B,x0 "
                                   "(default J,R,Q,B)")
    p.add_argument("--optimizer", default="lm",
                   help="linear: lm (Levenberg-Marquardt, default), cg (the paper's), steepest, "
                        "trust_regions")
    p.add_argument("--states", help="gp: comma-separated state variables x (default: the "
                                    "states the FMU declares, with --derivatives and "
                                    "--structure left out)")
    p.add_argument("--derivatives",
                   help="gp: comma-separated derivative variables in the order of --states; "
                        "leave a name empty to estimate it (spline) or for algebraic states")
    p.add_argument("--structure",
                   help="gp: E, J, R, B as a JSON file {\"E\": [[...]], ...} or the name of a "
                        "bundled benchmark (rc_network, pendulum); default on declared states: "
                        "proposed from the data (ODE, input-affine, passive; report printed)")
    p.add_argument("--samples", type=int, default=128,
                   help="gp: training samples drawn from the selected runs (default 128)")
    p.add_argument("--runs", help="comma-separated run labels to fit (default: every "
                                  "successful run but the last; the other successful runs are "
                                  "held out)")
    p.add_argument("--max-iter", type=int, help="optimiser iterations (default: the estimator's)")
    p.add_argument("--max-time", type=float, default=MAX_TIME, metavar="SECONDS",
                   help=f"auto, nonlinear: wall-time budget of the identification (default "
                        f"{MAX_TIME:g} s; inf: none): once spent, no further nonlinear fit "
                        f"starts, the one under way stops where it is, and the best model so far "
                        f"is kept; the report says so")
    p.add_argument("--delayed-feedthrough", choices=("auto", "yes", "no"), default="auto",
                   help="nonlinear: whether the FMU's outputs see the inputs of the step before "
                        "(outputs computed in doStep only, or a lag far below the step); "
                        "default: decided from the data, shown in the report")
    p.add_argument("--late-outputs", choices=("auto", "yes", "no"), default="auto",
                   help="whether the FMU's outputs are those of the communication point before "
                        "(generated code that computes its outputs before advancing its "
                        "states); default: decided from the data (auto, nonlinear), shown in "
                        "the report")
    p.add_argument("--initial", choices=("auto", "state", "equilibrium"), default="auto",
                   help="linear, auto, nonlinear: where each run starts: at a state (learned, "
                        "or rest), or at the equilibrium of its first inputs (an FMU "
                        "initialised in steady state; the surrogate then starts so too); "
                        "default: decided from the data, shown in the report")
    p.add_argument("--refit", choices=("yes", "no"), default="yes",
                   help="auto, nonlinear: refit the kept model to all runs, the held-out ones "
                        "included, from the model checked on them (a linear one at its order) "
                        "where it met them worse than the training runs (default yes; the "
                        "held-out error reported is the checked model's)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample choice (gp)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _structure(spec: str | None) -> dict[str, np.ndarray]:
    if not spec:
        raise CLIError("--method gp needs --structure: a JSON file with E, J, R, B or a "
                            "bundled benchmark name (rc_network, pendulum).")
    path = Path(spec)
    if path.suffix.lower() == ".json":
        if not path.is_file():
            raise CLIError(f"--structure {spec!r}: no such file.")
        raw = json.loads(path.read_text())
        missing = [k for k in ("J", "R", "B") if k not in raw]
        if missing:
            raise CLIError(f"--structure {spec!r} lacks {missing}; give E, J, R, B as "
                                "nested lists.")
        return {k: np.asarray(v, dtype=float) for k, v in raw.items() if k in "EJRB"}
    import importlib

    try:
        mod = importlib.import_module(f"fmu_surrogate.benchmarks.{spec}")
        return {k: np.asarray(v, dtype=float) for k, v in mod.matrices().items()}
    except (ImportError, AttributeError):
        raise CLIError(f"--structure {spec!r} is neither a .json file nor a bundled "
                            "benchmark with known structure (rc_network, pendulum).") from None


def _split_runs(ds: Any, runs: str | None) -> tuple[list[int], list[int]]:
    from fmu_surrogate.identify.heldout import split_runs

    return split_runs(ds, [int(r) for r in comma_list(runs)] if runs else None)


def _provenance(ds: Any, data: Path, method: str, est: Any) -> dict[str, Any]:
    import fmu_surrogate

    settings = {}
    for k, v in est.get_params().items():
        if isinstance(v, (str, int, float, bool)) or v is None:
            settings[k] = v
        elif isinstance(v, (list, tuple)) and all(isinstance(x, (str, int, float)) for x in v):
            settings[k] = list(v)
    return {
        "source_fmu": {"name": str(ds.attrs.get("fmu_name", "")),
                       "guid": str(ds.attrs.get("fmu_guid", "")),
                       "sha256": str(ds.attrs.get("fmu_sha256", ""))},
        "dataset": {"file": data.name, "sha256": file_sha256(data)},
        "method": method,
        "settings": settings,
        "package_version": fmu_surrogate.__version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def _linear_estimator(args: argparse.Namespace) -> Any:
    """The linear estimator of the command's options (order, --port pairs, learn, optimiser)."""
    from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier

    ports = [dict(kv.split("=", 1) for kv in comma_list(spec)) for spec in args.port]
    kw = {"progress": not args.quiet, "optimizer": args.optimizer, "ports": ports or None,
          "learn": tuple(comma_list(args.learn)) if args.learn else None,
          "initial": args.initial}
    if args.max_iter:
        kw["max_iter"] = args.max_iter
    return LinearPHIdentifier(args.order, **kw)


def _warn_proportional(args: argparse.Namespace, ds: Any, fit: list[int]) -> None:
    """Before the fit: the inputs no training run excites apart (one signal on both)."""
    from fmu_surrogate.cli.inputs import proportional_warnings

    inputs = comma_list(args.inputs)
    if not inputs and args.method != "gp":
        from fmu_surrogate.identify.linear.interface.variables import dataset_interface

        inputs = list(dataset_interface(ds).inputs)
    for line in proportional_warnings(ds, inputs, fit):
        print(line, flush=True)


def _names(args: argparse.Namespace) -> tuple[list[str] | None, list[str] | None]:
    return comma_list(args.inputs) or None, comma_list(args.outputs) or None


def _identify_linear(args: argparse.Namespace, ds: Any, fit: list[int],
                     held: list[int]) -> tuple[Any, Any, list[str]]:
    from fmu_surrogate.fmu.dataset import run_arrays
    from fmu_surrogate.identify.fit_report import describe_fit
    from fmu_surrogate.identify.linear.interface.variables import dataset_interface

    inputs, outputs = _names(args)
    left_out: tuple[str, ...] = ()  # the report's lines on the outputs not fitted
    if inputs is None or outputs is None:
        iface = dataset_interface(ds)
        inputs = inputs or list(iface.inputs)
        if outputs is None:
            outputs = list(iface.outputs)
            left_out = iface.report_lines(outputs)
    late = args.late_outputs == "yes"
    if late:  # fitted one sample earlier (the decision from the data needs --method auto)
        from fmu_surrogate.identify.nonlinear.delay import outputs_one_sample_earlier

        ds = outputs_one_sample_earlier(ds, outputs)
    est = _linear_estimator(args).fit_dataset(ds, inputs=inputs, outputs=outputs, runs=fit)
    inputs, outputs = est.names_[0], est.names_[1]
    lines = [describe_fit(est, fit, held, left_out)]
    if late:
        lines.append("  outputs are those of the point before (late outputs, as set): fitted "
                     "one sample earlier")
    for label, runs in (("training", fit), ("held-out", held)):
        for r, (t, X) in zip(runs, run_arrays(ds, inputs + outputs, runs=runs)):
            y = X[:, len(inputs):]
            y_hat = est.predict(t, X[:, : len(inputs)])
            rel = float(np.abs(y_hat - y).max() / max(np.abs(y).max(), 1e-300))
            lines.append(f"  run {r} ({label}): relative max output error {rel:.3e}")
    # a PortedSystem, or the named pH core when the FMU's variables are exactly its ports
    sur = est.to_surrogate()
    if late:
        from fmu_surrogate.ph import PortedSystem

        if not isinstance(sur, PortedSystem):
            raise CLIError("--late-outputs yes needs a drop-in surrogate (a dataset with its "
                           "FMU's variables), not a bare pH system.")
        sur = sur.replace(late_outputs=True)
    return est, sur, lines


def _identify_auto(args: argparse.Namespace, ds: Any, fit: list[int],
                   held: list[int]) -> tuple[Any, Any, list[str]]:
    """``--method auto`` / ``nonlinear``: :func:`~fmu_surrogate.identify.selection.select_dataset`.
    """
    from fmu_surrogate.identify.selection import select_dataset

    inputs, outputs = _names(args)
    nl: dict[str, Any] = {"progress": not args.quiet}
    if args.max_iter:
        nl["max_iter"] = args.max_iter
    if args.delayed_feedthrough != "auto":
        nl["delayed_feedthrough"] = args.delayed_feedthrough == "yes"
    # --method nonlinear: a tolerance no linear model reaches
    tol = args.tolerance if args.method == "auto" else float(np.finfo(float).tiny)
    late = {"auto": None, "yes": True, "no": False}[args.late_outputs]
    if not args.max_time > 0:
        raise CLIError(f"--max-time must be a positive number of seconds (or inf), got "
                       f"{args.max_time:g}.")
    choice = select_dataset(ds, inputs=inputs, outputs=outputs, runs=fit, tolerance=tol,
                            linear=_linear_estimator(args), nonlinear=nl, late_outputs=late,
                            refine=args.refit == "yes",
                            max_time=None if np.isinf(args.max_time) else args.max_time)
    if args.method == "nonlinear" and choice.method == "linear":
        from fmu_surrogate.identify.fit_report import percent

        raise CLIError(
            f"no nonlinear model was kept: it misses the {choice.checked_on} runs by "
            f"{percent(choice.nonlinear_error)}, no better than the linear model's "
            f"{percent(choice.linear_error)}; --method auto keeps the linear one (the report "
            "of that run says what the data show)")
    return choice.estimator, choice.surrogate(), [choice.report()]


def _identify_gp(args: argparse.Namespace, ds: Any, fit: list[int],
                 held: list[int]) -> tuple[Any, Any, list[str]]:
    from fmu_surrogate.fmu.dataset import fmu_variables, run_arrays
    from fmu_surrogate.identify.derivatives import estimate_derivatives
    from fmu_surrogate.identify.gp.effort import GPEffortIdentifier
    from fmu_surrogate.identify.gp.proposal import propose_structure

    declared = not (args.states or args.derivatives or args.structure)
    outputs: list[str] = []
    if declared:  # the FMU's declared states; structure proposed from the data
        states = json.loads(ds.attrs.get("states", "[]"))
        if not states:
            raise CLIError("the dataset declares no states (a co-simulation-only FMU or an "
                           "older harvest): pass --states, --derivatives and --structure.")
        recorded = set(fmu_variables(ds))
        derivs = [d if d in recorded else None
                  for d in json.loads(ds.attrs.get("derivatives", "[]"))]
        inputs = comma_list(args.inputs) or json.loads(ds.attrs.get("inputs", "[]"))
        declared_out = [o for o in json.loads(ds.attrs.get("outputs", "[]")) if o in recorded]
        outputs = comma_list(args.outputs) or (
            declared_out if len(declared_out) == len(inputs) else [])
        if any("," in nm for nm in states + inputs):
            raise CLIError(f"declared names with commas ({states + inputs}) cannot be named on "
                           "the command line; pass --states, --derivatives and --structure.")
        # identify_command names the surrogate's states and ports from these options
        args.states, args.inputs = ",".join(states), ",".join(inputs)
    else:
        states, inputs = comma_list(args.states), comma_list(args.inputs)
        derivs = ([d or None for d in comma_list(args.derivatives)] if args.derivatives
                  else [None] * len(states))
        if not states or len(derivs) != len(states):
            raise CLIError("--method gp needs --states and one --derivatives entry per state "
                           "(empty for estimated or algebraic ones).")
        if not args.structure:
            raise CLIError("--method gp with --states needs --structure (a JSON file with E, J, "
                           "R, B or a bundled benchmark name); leave out --states, --derivatives "
                           "and --structure to use the FMU's declared states and a proposed one.")
    if not inputs:
        raise CLIError("--method gp needs --inputs (the dataset declares none).")
    n = len(states)
    mats = {"E": np.eye(n)} if declared else _structure(args.structure)
    if not declared and np.shape(mats["J"])[0] != n:
        raise CLIError(f"--structure has n = {np.shape(mats['J'])[0]} states but --states names "
                       f"{n}.")
    E = mats.get("E", np.eye(n))

    def samples(runs: list[int]) -> tuple[np.ndarray, ...]:
        xs, xds, us, ys = [], [], [], []
        given = [d for d in derivs if d]
        k0 = n + len(given)
        for t, X in run_arrays(ds, states + given + inputs + outputs, runs=runs):
            x = X[:, :n]
            xd = np.zeros_like(x)
            k = n
            for j, d in enumerate(derivs):
                if d:
                    xd[:, j] = X[:, k]
                    k += 1
                elif np.any(E[:, j] != 0):
                    xd[:, j] = estimate_derivatives(t, x[:, j], "spline")
            xs.append(x)
            xds.append(xd)
            us.append(X[:, k0:k0 + len(inputs)])
            ys.append(X[:, k0 + len(inputs):])
        return tuple(np.concatenate(a) for a in (xs, xds, us, ys))

    x, xd, u, y = samples(fit)
    lines = []
    if declared:
        prop = propose_structure(x, xd, u, y if outputs else None)
        mats = prop.matrices()
        lines += [f"  declared states {states}, inputs {inputs}, outputs y = Bᵀz "
                  + str(outputs or "none"), prop.report()]
        if not (prop.effort_observable or outputs):
            raise CLIError("the proposed J − R is singular: part of the effort is seen only "
                           "through the outputs y = Bᵀz; pass them as --outputs (one per input, "
                           "power into the system).\n" + prop.report())
    elif len(states) != np.shape(mats["J"])[0]:
        raise CLIError(f"--structure has n = {np.shape(mats['J'])[0]} states but --states names "
                       f"{len(states)}.")
    kw = {"progress": not args.quiet}
    if args.max_iter is not None:
        kw["max_iter"] = args.max_iter
    est = GPEffortIdentifier(**mats, **kw)
    rng = np.random.default_rng(args.seed)
    pick = np.sort(rng.choice(len(x), min(args.samples, len(x)), replace=False))
    est.fit(x[pick], xd[pick], u[pick], y[pick] if outputs else None)
    rest = np.setdiff1d(np.arange(len(x)), pick)
    r2 = bool(np.any(est.surrogate_.J - est.surrogate_.R))  # else E ẋ − B u ≡ 0: no R²
    lines.append(f"  training: {len(pick)} samples of runs {fit}"
                 + (f", R² {est.score(x[pick], xd[pick], u[pick]):.6f}" if r2 else
                    " (J − R = 0: the targets ẋ − B u vanish, the outputs carry the effort)"))
    if rest.size and r2:
        lines.append(f"  other samples of the same runs: R² {est.score(x[rest], xd[rest], u[rest]):.6f}")
    checks = [("training runs", x, y)]
    if held:
        xh, xdh, uh, yh = samples(held)
        if r2:
            lines.append(f"  held-out runs {held}: R² {est.score(xh, xdh, uh):.6f}")
        checks.append((f"held-out runs {held}", xh, yh))
    for label, xc, yc in checks if outputs else []:
        err = np.abs(est.predict(xc) @ est.surrogate_.B - yc).max() / max(np.abs(yc).max(), 1e-300)
        lines.append(f"  {label}: outputs y = Bᵀz, relative max error {err:.3e}")
    return est, est.to_surrogate(), lines


def identify_command(args: argparse.Namespace) -> int:
    """Run ``fmu-surrogate identify``; print a fit summary and write the surrogate JSON.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_identify_arguments`.

    Returns
    -------
    int
        Exit status 0.
    """
    from fmu_surrogate.fmu.dataset import load_dataset
    from fmu_surrogate.ph import save, with_names

    data = Path(args.data)
    ds = load_dataset(data)
    fit, held = _split_runs(ds, args.runs)
    _warn_proportional(args, ds, fit)
    if args.method == "linear":
        est, system, lines = _identify_linear(args, ds, fit, held)  # names in its PortMap
    elif args.method in ("nonlinear", "auto"):
        est, system, lines = _identify_auto(args, ds, fit, held)  # names in its PortMap
    else:
        est, system, lines = _identify_gp(args, ds, fit, held)
        inputs = comma_list(args.inputs)
        system = with_names(system, inputs=inputs, states=comma_list(args.states))
    r = est.result_
    print(f"identified {type(system).__name__} ({args.method}) from {data.name}: "
          f"{r.n_iter} iterations, {r.time:.1f} s, stopped: {r.stopping_reason}")
    print("\n".join(lines))
    out = Path(args.out)
    from fmu_surrogate.fmu.dataset import (
        constant_variables,
        input_start_values,
        operating_parameters,
    )

    prov = _provenance(ds, data, args.method, est)
    prov["parameters"], varied = operating_parameters(ds, fit)
    names = list(getattr(system, "input_names", ()))
    prov["input_starts"] = {k: v for k, v in input_start_values(ds).items() if k in names}
    prov["held_inputs"] = constant_variables(ds, names, fit + held)
    if varied:
        print(f"  the training runs vary {', '.join(varied)}: the surrogate averages over them")
    if prov["held_inputs"] and "  not excited (" not in "\n".join(lines):  # said once
        print("  inputs that never changed in the data: " + ", ".join(
            f"{k} = {v:g}" for k, v in prov["held_inputs"].items()) + " — the surrogate holds "
            "for these values only (its FMU refuses others); excite them in the harvest "
            "(--input NAME=...) to model them")
    save(system, out, provenance=prov)
    print(f"wrote {out}")
    return 0
