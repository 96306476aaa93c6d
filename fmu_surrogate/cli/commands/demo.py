"""``fmu-surrogate demo [OUT]``: build the benchmark FMUs, harvest them, write plots and data."""

from __future__ import annotations

import argparse

__all__ = ["add_demo_arguments", "demo_command"]


def add_demo_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``fmu-surrogate demo`` to ``p``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The sub-command's parser.
    """
    p.add_argument("out", nargs="?", default="demo-out", help="output folder (default: demo-out)")
    p.add_argument("--quick", action="store_true", help="smaller runs (used by the tests)")


def demo_command(args: argparse.Namespace) -> int:
    """Run ``fmu-surrogate demo`` (:func:`fmu_surrogate.demo.run_demo`).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_demo_arguments`.

    Returns
    -------
    int
        Exit status 0.
    """
    from fmu_surrogate.demo import run_demo

    run_demo(args.out, quick=args.quick)
    return 0
