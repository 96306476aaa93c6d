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

#: the commands in the order ``--help`` lists them (each is the module ``fmu_surrogate.cli.NAME``)
COMMANDS = ("demo", "info", "harvest", "identify", "validate", "plot", "export", "couple",
            "discover", "benchmarks")

#: exit status of a user error
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``fmu-surrogate``.

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
    for name in COMMANDS:
        mod = importlib.import_module(f"fmu_surrogate.cli.commands.{name}")
        sp = sub.add_parser(name, help=mod.HELP)
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
    except (FmuSurrogateError, ValueError, OSError) as exc:  # one line, no traceback
        print(f"fmu-surrogate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
