"""``fmu-surrogate discover``: constraint discovery from the command line.

::

    fmu-surrogate discover cauer.fmu --data measured.nc --param w1 --param w2 --param w3 \\
        --output v_R4 --x0 0.1,0.1,0.1 --algorithm 3 --optimizer nelder-mead \\
        --normalize w1 -o result.json

The measured run of ``DATA.nc`` (a harvested dataset) gives the outputs, the time grid and the
inputs (its recorded FMU inputs are replayed as sampled signals).  A thin layer over
:class:`~fmu_surrogate.ConstraintDiscovery`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from fmu_surrogate.cli.errors import CLIError
from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["add_discover_arguments", "discover_command"]


def add_discover_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``fmu-surrogate discover`` to ``p``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The sub-command's parser.
    """
    p.add_argument("fmu", help="the system FMU")
    p.add_argument("--data", required=True, help="harvested NetCDF dataset with the measurements")
    p.add_argument("--param", action="append", required=True, dest="params",
                   help="a parameter of the unknown law (repeat: --param w1 --param w2 ...)")
    p.add_argument("--output", action="append", dest="outputs",
                   help="an output compared with the data (repeat; default: the FMU outputs "
                        "recorded in the data)")
    p.add_argument("--run", type=int, help="run label of the measured run (default: the first "
                                           "successful run)")
    p.add_argument("--x0", help="comma-separated initial parameters (default: the FMU's start "
                                "values)")
    p.add_argument("--algorithm", default="3", choices=("1", "2", "3", "bo"),
                   help="1: constrained sequence; 2: bump cost; 3: barrier heuristic (default); "
                        "bo: Bayesian optimisation (needs --bounds)")
    p.add_argument("--optimizer", default="nelder-mead",
                   help="cobyla, slsqp, powell, nelder-mead (default), bfgs, cg, l-bfgs-b, "
                        "differential-evolution (needs --bounds)")
    p.add_argument("--feasibility", default="logistic", choices=("logistic", "gp", "mlp"),
                   help="feasibility model q(w) (default logistic)")
    p.add_argument("--bounds", help="bo, differential-evolution: LOW:HIGH per parameter, "
                                    "comma-separated (e.g. 1:1,-0.02:0.02,-0.01:0.03)")
    p.add_argument("--normalize", help="report w divided by this parameter (a scale-invariant "
                                       "law)")
    p.add_argument("--max-runs", type=int, default=300, help="FMU runs allowed (default 300)")
    p.add_argument("--workers", type=int, help="worker processes (default: CPU count)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per run (default 60)")
    p.add_argument("--store", help="evaluation directory, kept for resuming (default: "
                                   "RESULT.json.evals)")
    p.add_argument("-o", "--out", required=True, help="result JSON file to write")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _floats(text: str, n: int, what: str) -> list[float]:
    try:
        vals = [float(s) for s in text.split(",")]
    except ValueError:
        raise CLIError(f"{what} {text!r}: give {n} comma-separated numbers.") from None
    if len(vals) != n:
        raise CLIError(f"{what} has {len(vals)} values; give one per --param ({n}).")
    return vals


def _measured(ds: Any, run: int | None, outputs: list[str], inputs: list[str]
              ) -> tuple[np.ndarray, dict[str, Any]]:
    from fmu_surrogate.fmu.dataset import run_arrays
    from fmu_surrogate.fmu.signals.standard import ArraySignal

    if run is None:
        ok = [int(r) for r, s in zip(ds["run"].values, ds["status"].values) if str(s) == "ok"]
        if not ok:
            raise CLIError("the dataset has no successful run to use as measurements.")
        run = ok[0]
    (t, X), = run_arrays(ds, outputs + inputs, runs=[run])
    signals = {name: ArraySignal(t, X[:, len(outputs) + j]) for j, name in enumerate(inputs)}
    return X[:, :len(outputs)], signals


def discover_command(args: argparse.Namespace) -> int:
    """Run ``fmu-surrogate discover``; print a summary table and write the result JSON.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_discover_arguments`.

    Returns
    -------
    int
        Exit status 0.
    """
    from fmu_surrogate.fmu.dataset import fmu_variables, load_dataset, save_dataset
    from fmu_surrogate.fmu.model.loading import open_fmu
    from fmu_surrogate.identify.constraints.discovery import ConstraintDiscovery

    info = open_fmu(args.fmu)
    ds = load_dataset(args.data)
    recorded = fmu_variables(ds)
    outputs = args.outputs or [n for n in info.outputs if n in recorded]
    if not outputs:
        raise CLIError(f"{args.data} records none of the FMU's outputs; name the compared "
                               f"variables with --output.")
    inputs = [n for n in info.inputs if n in recorded]
    y, signals = _measured(ds, args.run, outputs, inputs)
    params = list(args.params)
    info.check_names(params, "variable")
    x0 = (_floats(args.x0, len(params), "--x0") if args.x0 else
          [float(info.variable(p).start) for p in params])
    bounds = None
    if args.bounds:
        bounds = [tuple(_floats(b.replace(":", ","), 2, "--bounds entry"))
                  for b in args.bounds.split(",")]
    normalize = None
    if args.normalize:
        if args.normalize not in params:
            raise CLIError(f"--normalize {args.normalize!r} is not one of --param "
                                   f"{params}.")
        normalize = params.index(args.normalize)
    algorithm: int | str = "bo" if args.algorithm == "bo" else int(args.algorithm)
    cd = ConstraintDiscovery(args.fmu, params, outputs, inputs=signals,
                             stop_time=float(ds.attrs["stop_time"]), step=float(ds.attrs["step"]),
                             algorithm=algorithm, optimizer=args.optimizer,
                             feasibility=args.feasibility, max_runs=args.max_runs,
                             normalize=normalize, workers=args.workers, timeout=args.timeout,
                             bounds=bounds)
    out = Path(args.out)
    store = Path(args.store) if args.store else out.with_name(out.name + ".evals")
    r = cd.fit(y, x0, out=store, progress=not args.quiet)
    summary = r.summary()
    summary.update(parameters=params, outputs=outputs, data=str(args.data), fmu=str(args.fmu),
                   store=str(store))
    try:
        beta, b = r.feasibility.decision_boundary()
        summary["feasibility_boundary"] = {"beta": beta.tolist(), "b": b}
    except FmuSurrogateError:
        pass
    save_dataset(r.evaluations, store / "evaluations.nc")
    summary["evaluations"] = str(store / "evaluations.nc")
    out.write_text(json.dumps(summary, indent=1))
    width = max(len(p) for p in params)
    print(f"constraint discovery, algorithm {r.algorithm}: {r.stopping_reason}")
    print(f"  {'parameter':<{width}}  {'value':>14}" + ("  (normalised)" if normalize is not None
                                                       else ""))
    for p, v in zip(params, r.w):
        print(f"  {p:<{width}}  {v:>14.6g}")
    print(f"  J = {r.cost:.4g}, average output error = {r.error:.4g}")
    print(f"  FMU runs: {r.n_runs} this call, {r.n_evaluations} evaluations, "
          f"{r.n_failed} failed")
    print(f"wrote {out} (evaluations: {store / 'evaluations.nc'})")
    return 0
