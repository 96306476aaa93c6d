"""``fmu-surrogate validate SURROGATE REFERENCE.fmu ...``: run both on the same inputs, compare.

::

    fmu-surrogate validate msd.json msd_chain.fmu --input F1=chirp:f0=0.05,f1=0.5,t1=40 \\
        --stop 40 --step 0.05 --rtol 1e-2

A thin layer over :func:`fmu_surrogate.validation.validate`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fmu_surrogate.cli.errors import CLIError
from fmu_surrogate.cli.inputs import input_help, parse_input_option

__all__ = ["EXIT_MISMATCH", "add_validate_arguments", "validate_command"]


#: exit status of ``validate`` when the surrogate is outside the tolerance
EXIT_MISMATCH = 1


def add_validate_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``fmu-surrogate validate`` to ``p``."""
    p.add_argument("surrogate", help="surrogate JSON file, or a surrogate FMU")
    p.add_argument("reference", help="the FMU the surrogate replaces")
    p.add_argument("--input", action="append", default=[], metavar="NAME=KIND:key=val,...",
                   help="input signal in the harvest syntax (repeat per input); kinds below")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="parameter value of the reference FMU (repeat per parameter)")
    p.add_argument("--stop", type=float, help="stop time (default: the FMU's)")
    p.add_argument("--step", type=float, help="communication step (default: the FMU's)")
    p.add_argument("--rtol", type=float, default=1e-3,
                   help="relative tolerance on max |error| / max |reference| (default 1e-3)")
    p.add_argument("--atol", type=float, default=0.0, help="absolute tolerance (default 0)")
    p.add_argument("--port", action="append", default=[], metavar="PORT=VARIABLE",
                   help="map a surrogate input or output to a reference variable of another name")
    p.add_argument("--plot", help="write the comparison plot (PNG) here")
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = input_help()


def validate_command(args: argparse.Namespace) -> int:
    """Run ``fmu-surrogate validate``; exit status 1 when an output is outside the tolerance.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_validate_arguments`.

    Returns
    -------
    int
        0 when every output matches, :data:`EXIT_MISMATCH` otherwise.
    """
    from fmu_surrogate.validation import validate

    inputs: dict[str, Any] = {}
    for text in args.input:
        name, signal = parse_input_option(text)
        inputs[name] = signal
    from fmu_surrogate.fmu.campaigns.plans import parse_param_option

    params = {}
    for text in args.param:  # the harvest's syntax, one value (an array: its values row-major)
        name, values = parse_param_option(text)
        if len(values) != 1:
            raise CLIError(f"--param {text!r}: one value per parameter (a validation is one "
                           f"run), got {len(values)}.")
        params[name] = values[0]
    ports = dict(t.split("=", 1) for t in args.port if "=" in t)
    report = validate(args.surrogate, args.reference, inputs=inputs or None,
                      parameters=params or None, stop_time=args.stop, step=args.step,
                      rtol=args.rtol, atol=args.atol, ports=ports or None)
    print(report.table())
    if args.plot:
        report.plot(args.plot)
        print(f"wrote {args.plot}")
    verdict = "matches" if report.passed else "does NOT match"
    print(f"surrogate {verdict} {Path(args.reference).name} (rtol {args.rtol:g}, "
          f"atol {args.atol:g})")
    return 0 if report.passed else EXIT_MISMATCH
