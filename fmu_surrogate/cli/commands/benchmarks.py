"""``fmu-surrogate benchmarks build DIR``: compile the bundled benchmark FMUs (cached)."""

from __future__ import annotations

import argparse
import sys
import warnings

__all__ = ["add_benchmarks_arguments", "benchmarks_command"]


def add_benchmarks_arguments(p: argparse.ArgumentParser) -> None:
    """Add the actions of ``fmu-surrogate benchmarks`` (``build``) and their options to ``p``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The sub-command's parser.
    """
    sub = p.add_subparsers(dest="benchmarks_command", required=True, metavar="ACTION")
    b = sub.add_parser("build", help="compile the benchmark FMUs into DIR (cached)")
    b.add_argument("dir", help="output folder for the .fmu files")
    b.add_argument("--names", nargs="*", help="only these benchmarks (default: all)")
    b.add_argument("--force", action="store_true", help="rebuild even when up to date")


def benchmarks_command(args: argparse.Namespace) -> int:
    """Run ``fmu-surrogate benchmarks build``; print one line per FMU.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_benchmarks_arguments`.

    Returns
    -------
    int
        Exit status 0.

    No C compiler, or a compiler error, is an ``FMUBuildError``: reported in one line by
    :func:`~fmu_surrogate.cli.main.main` like every package error.
    """
    from fmu_surrogate.benchmarks.build import build_benchmarks

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        paths = build_benchmarks(args.dir, names=args.names or None, force=args.force)
    for w in caught:  # benchmarks this host cannot build (fmpy has no SUNDIALS for it): one line
        print(f"warning: {w.message}", file=sys.stderr)
    for name, path in paths.items():
        print(f"{name:16s} {path}")
    return 0
