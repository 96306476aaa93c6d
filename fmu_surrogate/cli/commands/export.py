"""``fmu-surrogate export SURROGATE.json --fmu OUT.fmu [--fmi 3] [--interfaces cs|cs+me]
[--modelica OUT.mo]``.

A thin layer over :func:`fmu_surrogate.export.export_fmu` and
:func:`fmu_surrogate.export.export_modelica`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fmu_surrogate.cli.errors import CLIError

__all__ = ["add_export_arguments", "export_command"]


def add_export_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``fmu-surrogate export`` to ``p``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The sub-command's parser.
    """
    p.add_argument("surrogate", help="surrogate JSON file (fmu-surrogate identify -o ...)")
    p.add_argument("--fmu", help="write a standalone FMU (co-simulation, and model exchange "
                                 "unless the surrogate's outputs are delayed or late: see "
                                 "--interfaces)")
    p.add_argument("--fmi", type=int, choices=(2, 3), default=2,
                   help="FMI version of the FMU (default 2)")
    p.add_argument("--name", help="model identifier of the FMU (default: from the surrogate's "
                                  "source FMU, else 'surrogate')")
    p.add_argument("--interfaces", choices=("cs", "cs+me"),
                   help="interfaces of the FMU: co-simulation only, or co-simulation and model "
                        "exchange (default: both, except for a surrogate whose outputs see the "
                        "inputs of the step before, which is co-simulation only, as its source; "
                        "one with late outputs, those of the point before, has no model "
                        "exchange)")
    p.add_argument("--modelica", help="write a Modelica model (.mo)")


def export_command(args: argparse.Namespace) -> int:
    """Run ``fmu-surrogate export``; returns the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_export_arguments`.

    Returns
    -------
    int
        0 on success.
    """
    from fmu_surrogate.ph import load

    if not args.fmu and not args.modelica:
        raise CLIError("nothing to write: give --fmu OUT.fmu and/or --modelica OUT.mo.")
    system = load(args.surrogate)
    if args.fmu:
        from fmu_surrogate.export.fmi.fmu_export import export_fmu

        me = None if args.interfaces is None else args.interfaces == "cs+me"
        path = export_fmu(system, args.fmu, fmi_version=args.fmi, model_name=args.name,
                          model_exchange=me)
        delayed = bool(getattr(system, "delayed_feedthrough", False))
        late = bool(getattr(system, "late_outputs", False))
        kinds = ("co-simulation + model exchange"
                 if (not (delayed or late) if me is None else me) else "co-simulation")
        note = (", outputs see the inputs of the step before, as the source FMU's" if delayed
                else ", outputs those of the point before, as the source FMU's" if late else "")
        print(f"FMU (FMI {args.fmi}.0, {kinds}{note}): {path}")
    if args.modelica:
        try:
            from fmu_surrogate.export.modelica import export_modelica
        except ImportError as exc:
            raise CLIError("Modelica export is not available in this installation "
                           f"({exc}); export an FMU with --fmu instead.") from None
        path = export_modelica(system, args.modelica)
        print(f"Modelica model: {Path(path)}")
    return 0
