"""``fmu-surrogate couple SYSTEM.(ssp|toml) -o RESULT.nc``: run a coupled system, print the bonds.

``--input comp.var=KIND:key=val,...`` drives an unconnected input with a signal (the syntax of
``harvest --input``; it replaces a start value the system gives that input), ``--record
comp.var,...`` records further variables.
"""

from __future__ import annotations

import argparse

from fmu_surrogate.cli.inputs import input_help, parse_input_option
from fmu_surrogate.cli.options import comma_list
from fmu_surrogate.couple.descriptions import load_system
from fmu_surrogate.couple.results.energy import bond_table
from fmu_surrogate.couple.results.plotting import plot_result
from fmu_surrogate.couple.system import System

__all__ = ["add_couple_arguments", "apply_options", "bond_table", "couple_command",
           "load_system", "plot_result"]


def add_couple_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of the ``couple`` subcommand."""
    p.add_argument("system", help="system description (.ssp, .ssd or .toml)")
    p.add_argument("-o", "--output", required=True, help="result dataset (.nc)")
    p.add_argument("--algorithm", choices=("fixed", "ecco", "monolithic"), default="fixed",
                   help="libcosim master algorithm, or the interconnected pH surrogates "
                   "(default: fixed)")
    p.add_argument("--engine", choices=("auto", "libcosim", "fmpy"), default="auto",
                   help="co-simulation engine: libcosim, or fmu-surrogate's own fixed-step master "
                        "on fmpy (FMI 3.0 FMUs too, libcosim's numbers); auto: libcosim unless a "
                        "component is FMI 3.0")
    p.add_argument("--step", type=float, default=0.01, help="communication step in s (ECCO: initial)")
    p.add_argument("--stop-time", type=float, default=1.0, help="end time in s (default 1)")
    p.add_argument("--input", action="append", default=[], metavar="COMP.VAR=KIND:key=val,...",
                   help="drive an unconnected input with a signal, held over each communication "
                   "step (as harvest --input; e.g. motor.V=step:t0=0.1,after=12); repeatable")
    p.add_argument("--record", action="append", default=[], metavar="COMP.VAR,...",
                   help="also record these variables (any causality); repeatable")
    p.add_argument("--plot", help="also write a plot: one axis per quantity, bond residuals (PNG)")
    p.epilog = input_help()
    p.formatter_class = argparse.RawDescriptionHelpFormatter


def apply_options(system: System, inputs: list[str], record: list[str]) -> System:
    """Add the command line's driven inputs and recorded variables to ``system``.

    A driven input replaces the start value the system file gives it.

    Raises
    ------
    SignalError
        A malformed ``--input`` (names the option, the kind and the text).
    CouplingError
        A name that is not ``component.variable``.
    """
    from fmu_surrogate.couple.inputs import driven_signal

    for text in inputs:
        ref, sig = parse_input_option(text)
        system.inputs[ref] = driven_signal(ref, sig, "--input")
        comp = system.components.get(ref.partition(".")[0])
        if comp is not None:
            comp.parameters.pop(ref.partition(".")[2], None)
    for group in record:
        for ref in comma_list(group):
            if ref and ref not in system.record:
                system.record.append(ref)
    return system


def couple_command(args: argparse.Namespace) -> int:
    """Run the system, write the dataset, print the bond table; exit 1 when the run failed."""
    from fmu_surrogate.couple.running import run
    from fmu_surrogate.fmu.dataset import save_dataset

    system = apply_options(load_system(args.system), args.input, args.record)
    ds = run(system, args.stop_time, args.step, args.algorithm, engine=args.engine)
    save_dataset(ds, args.output)
    print(f"{args.algorithm}: {ds.attrs['n_steps']} steps to t = {ds.time.values[-1]:g} s, "
          f"written to {args.output}")
    print(bond_table(ds))
    if args.plot:
        print(f"plot: {plot_result(ds, args.plot)}")
    if "status" in ds and str(ds.status.values[0]) != "ok":
        print(f"run failed ({ds.failure_kind.values[0]}): {ds.message.values[0]}")
        return 1
    return 0
