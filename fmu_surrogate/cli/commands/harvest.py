"""``fmu-surrogate harvest MODEL.fmu -o DATA.nc ...``: the command-line front of :func:`harvest`.

With no options the FMU's default experiment runs once, inputs at their start values.

Examples
--------
::

    fmu-surrogate harvest rc.fmu -o rc.nc
    fmu-surrogate harvest rc.fmu -o rc.nc --param G=0.5,1,2 --stop 10 --step 0.01 \\
        --input u=chirp:f0=0.1,f1=5,t1=10
    fmu-surrogate harvest cauer.fmu -o cauer.nc --lhs 64 --bounds w1=0:2 --bounds w2=0:1 \\
        --timeout 5 --workers 2
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

from fmu_surrogate.cli.inputs import input_help, parse_input_option, proportional_warnings

__all__ = [
    "EXIT_NO_RUN_SUCCEEDED",
    "add_harvest_arguments",
    "dataset_info",
    "harvest_command",
    "parse_bounds_option",
    "parse_input_option",
]


def add_harvest_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``fmu-surrogate harvest`` to ``parser``."""
    parser.add_argument("fmu", help="the .fmu file to simulate")
    parser.add_argument("-o", "--out", help="NetCDF dataset to write (default: MODEL.nc in the "
                                            "current directory); runs in progress are kept in "
                                            "OUT.parts/ so that an interrupted harvest resumes")
    g = parser.add_argument_group("experiment")
    g.add_argument("--start", type=float, help="start time (default: the FMU's default "
                                                "experiment, else 0)")
    g.add_argument("--stop", type=float, help="stop time (default: the FMU's default "
                                               "experiment, else start + 1)")
    g.add_argument("--step", type=float, help="communication step = sampling interval "
                                               "(default: the FMU's, else (stop-start)/500)")
    g.add_argument("--interface", choices=("auto", "cs", "me"), default="auto",
                   help="co-simulation or model exchange (default: cs if the FMU has it)")
    g.add_argument("--tolerance", type=float, help="relative tolerance (FMU / CVode)")
    p = parser.add_argument_group("parameters (one run per combination)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2,...",
                   help="values of a parameter, or NAME=START:STOP:N; repeat for a grid; one "
                        "element of an array parameter as the dataset names it, 1-based: "
                        "'A[1,2]=0.5,1'; a whole array as its values row-major, spaces between "
                        "them: 'A=-1 0 0 -2' (commas separate alternative arrays)")
    p.add_argument("--lhs", type=int, metavar="N", help="N runs by Latin hypercube in --bounds")
    p.add_argument("--sobol", type=int, metavar="N", help="N runs by Sobol' sequence in --bounds")
    p.add_argument("--bounds", action="append", default=[], metavar="NAME=LO:HI",
                   help="range of a parameter for --lhs/--sobol (repeat per parameter)")
    p.add_argument("--seed", type=int, default=0, help="seed of --lhs/--sobol (default 0)")
    s = parser.add_argument_group("inputs (default: inputs stay at their start values)")
    s.add_argument("--input", action="append", default=[], metavar="NAME=KIND:key=val,...",
                   help="input signal, e.g. u=step:t0=1,after=2 or u=chirp:f0=0.1,f1=5,t1=10 or "
                        "u=prbs:bit_period=0.5,levels=-0.2:0.2 or u=1.5 (constant); the kinds "
                        "and their parameters are listed below; repeating a NAME gives "
                        "alternative signal sets; an element of an array input as the dataset "
                        "names it, 1-based: 'u[2]=...' (the other elements keep their start "
                        "values); Integer/Enumeration inputs take whole values, Boolean ones 0 "
                        "or 1; String inputs keep their start values")
    s.add_argument("--signals", metavar="FILE.json",
                   help="JSON list of signal sets [{input: {kind: ..., ...}}, ...]")
    s.add_argument("--allow-longer", action="store_true",
                   help="accept signals that last longer than the experiment")
    r = parser.add_argument_group("recording and execution")
    r.add_argument("--record", action="append", default=[], metavar="NAMES",
                   help="comma-separated variables to record (default: inputs, outputs, states, "
                        "derivatives; String variables are not recorded)")
    r.add_argument("--workers", type=int, help="local worker processes (default: CPU count)")
    r.add_argument("--timeout", type=float, default=60.0,
                   help="wall-clock limit per run in seconds (default 60)")
    r.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on a Dask cluster (e.g. tcp://host:8786) instead of local workers")
    r.add_argument("--backend", default="auto", choices=("auto", "fmpy", "pyfmi"),
                   help="simulation backend (default: fmpy)")
    r.add_argument("--explode-threshold", type=float, default=1e10,
                   help="|x| above this counts as an exploding run (default 1e10)")
    r.add_argument("--overwrite", action="store_true",
                   help="replace an existing dataset / unfinished runs of another campaign")
    r.add_argument("--keep-store", action="store_true",
                   help="keep the per-run store OUT.parts/ after writing the dataset")
    r.add_argument("--recover-store", action="store_true",
                   help="OUT.parts/ lost its campaign.json: keep the runs recorded for this "
                        "campaign and redo the rest")
    r.add_argument("--complevel", type=int, default=1, choices=range(10), metavar="0..9",
                   help="gzip level of the dataset file (default 1, the fastest; 3: smaller "
                        "files at a third of its speed; 0 = uncompressed)")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = input_help()


# ---------------------------------------------------------------------------- parsing
def parse_bounds_option(text: str) -> tuple[str, tuple[float, float]]:
    """Parse ``NAME=LO:HI``."""
    from fmu_surrogate.fmu.errors import ExperimentError

    name, eq, rhs = text.partition("=")
    parts = rhs.split(":")
    try:
        if not eq or not name.strip() or len(parts) != 2:
            raise ValueError
        lo, hi = float(parts[0]), float(parts[1])
    except ValueError:
        raise ExperimentError(f"--bounds {text!r}: expected NAME=LO:HI (e.g. --bounds k=0.5:2)."
                              ) from None
    if not lo < hi:
        raise ExperimentError(f"--bounds {text!r}: LO must be < HI.")
    return name.strip(), (lo, hi)


def _parameter_plan(args: argparse.Namespace) -> list[dict] | None:
    from fmu_surrogate.fmu.campaigns import plans
    from fmu_surrogate.fmu.errors import ExperimentError

    grid_plan = None
    if args.param:
        values: dict[str, list[float]] = {}
        for text in args.param:
            name, vals = plans.parse_param_option(text)
            if name in values:
                raise ExperimentError(f"--param {name} is given twice; list all its values in "
                                      f"one option (--param {name}=V1,V2,...).")
            values[name] = vals
        grid_plan = plans.grid(values)
    if args.lhs and args.sobol:
        raise ExperimentError("give either --lhs N or --sobol N, not both.")
    sample = None
    if args.lhs or args.sobol:
        if not args.bounds:
            raise ExperimentError("--lhs/--sobol need the parameter ranges: add --bounds "
                                  "NAME=LO:HI for each parameter to vary.")
        bounds = dict(parse_bounds_option(b) for b in args.bounds)
        sample = (plans.latin_hypercube(bounds, args.lhs, seed=args.seed) if args.lhs
                  else plans.sobol(bounds, args.sobol, seed=args.seed))
    elif args.bounds:
        raise ExperimentError("--bounds only applies with --lhs N or --sobol N; add one of them.")
    if grid_plan is None:
        return sample
    if sample is None:
        return grid_plan
    return [dict(a, **b) for a in grid_plan for b in sample]


def _signal_sets(args: argparse.Namespace) -> list[dict] | None:
    from fmu_surrogate.fmu.errors import SignalError
    from fmu_surrogate.fmu.signals.standard import signal_from_description

    sets: list[dict] = []
    if args.signals:
        path = Path(args.signals)
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SignalError(f"--signals {path}: no such file.") from None
        except ValueError as exc:
            raise SignalError(f"--signals {path}: not valid JSON ({exc}).") from None
        if isinstance(spec, dict):
            spec = [spec]
        if not isinstance(spec, list):
            raise SignalError(f"--signals {path}: expected a list of {{input: signal}} dicts.")
        for i, s in enumerate(spec):
            if not isinstance(s, dict):
                raise SignalError(f"--signals {path}: entry {i} is not a dict {{input: signal}}.")
            sets.append({k: signal_from_description(v) for k, v in s.items()})
    if args.input:
        by_name: dict[str, list] = {}
        for text in args.input:
            name, sig = parse_input_option(text)
            by_name.setdefault(name, []).append(sig)
        combos = [dict(zip(by_name, c)) for c in itertools.product(*by_name.values())]
        sets = [dict(a, **b) for a in (sets or [{}]) for b in combos]
    return sets or None


# ---------------------------------------------------------------------------- command
#: exit status of ``harvest`` when no run succeeded (the dataset is still written)
EXIT_NO_RUN_SUCCEEDED = 3
#: a dataset estimated above this many bytes (uncompressed) gets a warning before the campaign
SIZE_WARNING_BYTES = 2 * 1024**3


def _size_text(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return ""  # pragma: no cover


def _fmu_reason(message: str) -> str:
    """The line of a failure message that gives the FMU's own reason (else the first line)."""
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith(("[ERROR]", "[FATAL]", "[FMU ERROR]", "[FMU FATAL]")):
            return ln
    for ln in lines:
        if "reason" in ln.lower():
            return ln
    return lines[0] if lines else ""


def dataset_info(ds: Any) -> str:
    """What ``fmu-surrogate info DATA.nc`` prints: the summary, then each failure kind with its
    count and meaning, failures of the FMU apart from runs interrupted from outside.

    Parameters
    ----------
    ds : xarray.Dataset
        A harvested dataset.

    Returns
    -------
    str
    """
    from collections import Counter

    from fmu_surrogate.fmu.campaigns.campaign import summarize
    from fmu_surrogate.fmu.dataset import FAILURE_KINDS, RERUN_KINDS

    kinds = Counter(str(k) for k in ds["failure_kind"].values if str(k))
    lines = [f"{ds.attrs.get('fmu_name', '?')}: {summarize(ds)}"]
    fmu = sorted(k for k in kinds if k not in RERUN_KINDS)
    outside = sorted(k for k in kinds if k in RERUN_KINDS)
    if fmu:
        lines.append("failures of the FMU:")
        lines += [f"  {k}: {kinds[k]} run(s) ({FAILURE_KINDS.get(k, 'unknown kind')})"
                  for k in fmu]
    if outside:
        lines.append("not failures of the FMU (harvesting again simulates them again):")
        lines += [f"  {k}: {kinds[k]} run(s) ({FAILURE_KINDS.get(k, 'unknown kind')})"
                  for k in outside]
    return "\n".join(lines)


def _note_unexcited_inputs(info: Any, duration: float) -> None:
    """One line when the FMU's continuous inputs stay at their start values: the data of such a
    harvest show how the FMU behaves at rest, not how it answers its inputs."""
    by_name = info.variables_by_name
    names = [n for n in info.inputs
             if n in by_name and by_name[n].type in ("Real", "Float64", "Float32")
             and by_name[n].variability == "continuous"]
    if names:
        from fmu_surrogate.fmu.model.elements import excitation_level

        example = names[0]
        stay = ("stays at its start value" if len(names) == 1 else
                "stay at their start values")
        # inside its declared min/max, about its start value
        offset, std = excitation_level(by_name[example])
        off = f",offset={offset:.6g}" if offset else ""
        print(f"note: no --input given, so {', '.join(names)} {stay}; a "
              f"surrogate is identified from how the outputs answer excited inputs, e.g. "
              f"--input {example}=noise:f_high=5,std={std:.3g}{off},duration={duration:g},"
              f"seed=1 (std in the input's unit), repeated at std={std / 5:.3g} (seed=2) and "
              f"std={std / 2:.3g} (seed=3, the last run is held out): a nonlinear part is "
              f"found from more than one amplitude")


def harvest_command(args: argparse.Namespace) -> int:
    """Run ``fmu-surrogate harvest`` with parsed ``args``; print a summary.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_harvest_arguments`.

    Returns
    -------
    int
        0, or :data:`EXIT_NO_RUN_SUCCEEDED` when every run failed.
    """
    from fmu_surrogate.fmu.campaigns.campaign import Campaign, summarize

    out = Path(args.out) if args.out else Path(Path(args.fmu).stem + ".nc")
    record = [n.strip() for r in args.record for n in r.split(",") if n.strip()] or None
    camp = Campaign(args.fmu, _signal_sets(args), _parameter_plan(args), start_time=args.start,
                    stop_time=args.stop, step=args.step, record=record,
                    interface=args.interface, tolerance=args.tolerance,
                    explode_threshold=args.explode_threshold, allow_longer=args.allow_longer)
    if not args.input and not args.signals:
        _note_unexcited_inputs(camp.info, float(camp.time[-1] - camp.time[0]))
    if camp.not_recorded:
        names = ", ".join(camp.not_recorded)
        print(f"not recorded: {names} (not numbers: a dataset records numeric variables only)")
    n_cols = camp.runner_config(args.backend).n_columns
    size = 8.0 * camp.n_runs * camp.time.shape[0] * n_cols
    print(f"{camp.n_runs} runs x {camp.time.shape[0]} samples x {n_cols} values: dataset about "
          f"{_size_text(size)} uncompressed")
    if size > SIZE_WARNING_BYTES:
        print(f"warning: that is a large dataset ({_size_text(size)}); record fewer variables "
              f"with --record NAMES, or use a coarser --step", file=sys.stderr)
    ds = camp.run(out, workers=args.workers, timeout=args.timeout, scheduler=args.scheduler,
                  progress=not args.quiet, backend=args.backend, overwrite=args.overwrite,
                  keep_store=args.keep_store, recover_store=args.recover_store,
                  complevel=args.complevel)
    print(f"{summarize(ds)}; wrote {out}")
    kinds = [str(k) for k in ds["failure_kind"].values]
    shown = set()
    for i, k in enumerate(kinds):
        if k and k not in shown:
            shown.add(k)
            reason = _fmu_reason(str(ds["message"].values[i]))
            print(f"  {k}: e.g. run {int(ds['run'].values[i])}: {reason}")
    if args.input or args.signals:  # driven inputs that no run excites apart
        from fmu_surrogate.fmu.dataset import fmu_variables

        recorded = set(fmu_variables(ds))
        for line in proportional_warnings(ds, [n for n in camp.info.inputs if n in recorded]):
            print(line)
    if not any(str(s) == "ok" for s in ds["status"].values):
        print(f"no run succeeded (exit status {EXIT_NO_RUN_SUCCEEDED}); the reasons are in "
              f"{out} (fmu_surrogate.failed_runs)", file=sys.stderr)
        return EXIT_NO_RUN_SUCCEEDED
    return 0
