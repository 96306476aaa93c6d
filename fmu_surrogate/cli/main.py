"""The dispatcher of ``fmu-surrogate <command> ...`` and the command line's one error path.

Each command is one module of this package with ``HELP``, ``add_<command>_arguments(parser)``
and ``<command>_command(args) -> exit status``; the work is done by the library function named
in its help.  Heavy imports (torch, fmpy, xarray) happen inside the command functions so that
``--help`` is fast.

Exit statuses: 0 success; 1 ``validate``: outside the tolerance, ``couple``: the run failed;
2 a user error (any :class:`~fmu_surrogate.errors.FmuSurrogateError`, or a ``ValueError`` /
``OSError`` such as a missing file), reported as one line ``fmu-surrogate: error: ...`` on
stderr; 3 ``harvest``: no run succeeded (the dataset is still written); 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from fmu_surrogate.cli.errors import CLIError
from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["COMMANDS", "CLIError", "build_parser", "main"]

#: the commands in the order ``--help`` lists them (each is the module
#: ``fmu_surrogate.cli.commands.NAME``) and their one-line help
COMMANDS: dict[str, str] = {
    "demo": "build the benchmark FMUs, harvest them, write plots and data",
    "info": "list an FMU's variables by causality, states, defaults; of a dataset (.nc): its "
            "runs, failures by kind",
    "harvest": "simulate an FMU under designed inputs/parameters",
    "identify": "fit a pH surrogate to a harvested dataset, write it as JSON",
    "validate": "run a surrogate and its reference FMU on the same inputs, compare outputs",
    "plot": "plot a harvested dataset (.nc) or a surrogate (.json)",
    "export": "write a surrogate JSON as a standalone FMU (and Modelica)",
    "couple": "co-simulate a system (.ssp/.toml) on libcosim, energy per bond",
    "discover": "learn a component law's parameters and where they are feasible from (failing) "
                "FMU runs",
    "benchmarks": "the bundled benchmark systems",
}

#: exit status of a user error
EXIT_USAGE = 2


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``fmu-surrogate``.

    Parameters
    ----------
    command : str, optional
        Import and configure only this command's module (the others are listed with their
        help, so ``--help`` stays complete); ``None`` configures all of them.

    Returns
    -------
    argparse.ArgumentParser
        With one sub-parser per entry of :data:`COMMANDS`.
    """
    p = argparse.ArgumentParser(
        prog="fmu-surrogate",
        description="Structure-preserving port-Hamiltonian surrogates of FMUs.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, helptext in COMMANDS.items():
        sp = sub.add_parser(name, help=helptext)
        if command is None or name == command:
            mod = importlib.import_module(f"fmu_surrogate.cli.commands.{name}")
            getattr(mod, f"add_{name}_arguments")(sp)
            sp.set_defaults(func=getattr(mod, f"{name}_command"))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fmu-surrogate`` console script.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status (module doc).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    # only the command that runs is imported: the time from the command to its work is the
    # import of what that command needs
    args = build_parser(argv[0] if argv and argv[0] in COMMANDS else "").parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted; finished runs are on disk, run the same command again to resume.",
              file=sys.stderr)
        return 130
    except SystemExit as exc:
        from fmu_surrogate.fmu.runner.tempdirs import Terminated

        if not isinstance(exc, Terminated):
            raise
        print("terminated by SIGTERM; finished runs are on disk and temporary files removed, "
              "run the same command again to resume.", file=sys.stderr)
        return int(exc.code)
    except (FmuSurrogateError, ValueError, OSError) as exc:  # one line, no traceback
        print(f"fmu-surrogate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
