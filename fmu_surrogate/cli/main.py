"""Command-line interface: ``fmu-surrogate <command> ...``.

Each sub-command is a thin wrapper; the work is done by the library function named in its help.
Heavy imports (torch, fmpy, xarray) happen inside the command functions so that ``--help`` is fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from fmu_surrogate.errors import FmuSurrogateError


class CLIError(FmuSurrogateError):
    """A user error that the CLI reports as one line (exit status 2)."""


# --------------------------------------------------------------------------- commands
def _cmd_demo(args: argparse.Namespace) -> int:
    from fmu_surrogate.demo import run_demo

    run_demo(args.out, quick=args.quick)
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from pathlib import Path

    if Path(args.fmu).suffix.lower() in (".nc", ".nc4", ".h5"):  # a harvested dataset
        from fmu_surrogate.cli.harvest import dataset_info
        from fmu_surrogate.fmu.dataset import load_dataset

        print(dataset_info(load_dataset(args.fmu)))
        return 0
    from fmu_surrogate.fmu.model.loading import open_fmu

    print(open_fmu(args.fmu).describe())
    return 0


def _cmd_harvest(args: argparse.Namespace) -> int:
    from fmu_surrogate.cli.harvest import harvest_command

    return harvest_command(args)


def _cmd_benchmarks_build(args: argparse.Namespace) -> int:
    from fmu_surrogate.benchmarks.build import build_benchmarks
    from fmu_surrogate.fmu.model.compile import FMUBuildError

    try:
        paths = build_benchmarks(args.dir, names=args.names or None, force=args.force)
    except FMUBuildError as exc:  # no compiler, compiler error: say so without a traceback
        raise CLIError(str(exc)) from exc
    for name, path in paths.items():
        print(f"{name:16s} {path}")
    return 0


# --------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``fmu-surrogate``."""
    p = argparse.ArgumentParser(
        prog="fmu-surrogate",
        description="Structure-preserving port-Hamiltonian surrogates of FMUs.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    d = sub.add_parser("demo", help="build the benchmark FMUs, harvest them, write plots and data")
    d.add_argument("out", nargs="?", default="demo-out", help="output folder (default: demo-out)")
    d.add_argument("--quick", action="store_true", help="smaller runs (used by the tests)")
    d.set_defaults(func=_cmd_demo)

    i = sub.add_parser("info", help="list an FMU's variables by causality, states, defaults; "
                                    "of a dataset (.nc): its runs, failures by kind")
    i.add_argument("fmu", help="path of the .fmu file")
    i.set_defaults(func=_cmd_info)

    h = sub.add_parser("harvest", help="simulate an FMU under designed inputs/parameters")
    from fmu_surrogate.cli.harvest import add_harvest_arguments

    add_harvest_arguments(h)
    h.set_defaults(func=_cmd_harvest)

    from fmu_surrogate.cli import pipeline as pc

    for name, helptext, add, run in (
        ("identify", "fit a pH surrogate to a harvested dataset, write it as JSON",
         pc.add_identify_arguments, pc.identify_command),
        ("validate", "run a surrogate and its reference FMU on the same inputs, compare outputs",
         pc.add_validate_arguments, pc.validate_command),
        ("plot", "plot a harvested dataset (.nc) or a surrogate (.json)",
         pc.add_plot_arguments, pc.plot_command),
    ):
        sp = sub.add_parser(name, help=helptext)
        add(sp)
        sp.set_defaults(func=run)

    from fmu_surrogate.cli import export as ec

    ep = sub.add_parser("export", help="write a surrogate JSON as a standalone FMU (and Modelica)")
    ec.add_export_arguments(ep)
    ep.set_defaults(func=ec.export_command)

    from fmu_surrogate.cli import couple as cc

    cp = sub.add_parser("couple", help="co-simulate a system (.ssp/.toml) on libcosim, energy per bond")
    cc.add_couple_arguments(cp)
    cp.set_defaults(func=cc.couple_command)

    from fmu_surrogate.cli import discover as dc

    dp = sub.add_parser("discover", help="learn a component law's parameters and where they are "
                                         "feasible from (failing) FMU runs")
    dc.add_discover_arguments(dp)
    dp.set_defaults(func=dc.discover_command)

    b = sub.add_parser("benchmarks", help="the bundled benchmark systems")
    bsub = b.add_subparsers(dest="benchmarks_command", required=True, metavar="ACTION")
    bb = bsub.add_parser("build", help="compile the benchmark FMUs into DIR (cached)")
    bb.add_argument("dir", help="output folder for the .fmu files")
    bb.add_argument("--names", nargs="*", help="only these benchmarks (default: all)")
    bb.add_argument("--force", action="store_true", help="rebuild even when up to date")
    bb.set_defaults(func=_cmd_benchmarks_build)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fmu-surrogate`` console script."""
    from fmu_surrogate.fmu.runner.tempdirs import Terminated

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted; finished runs are on disk, run the same command again to resume.",
              file=sys.stderr)
        return 130
    except Terminated as exc:
        print("terminated by SIGTERM; finished runs are on disk and temporary files removed, "
              "run the same command again to resume.", file=sys.stderr)
        return int(exc.code)
    except Exception as exc:  # user errors are reported in one line, without a traceback
        if isinstance(exc, (FmuSurrogateError, ValueError, OSError)):
            print(f"fmu-surrogate: error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
