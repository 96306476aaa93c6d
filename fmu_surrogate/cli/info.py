"""``fmu-surrogate info MODEL.fmu``: an FMU's variables by causality, its states and defaults."""

from __future__ import annotations

import argparse

__all__ = ["HELP", "add_info_arguments", "info_command"]

HELP = "list an FMU's variables by causality, states, defaults"


def add_info_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``fmu-surrogate info`` to ``p``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The sub-command's parser.
    """
    p.add_argument("fmu", help="path of the .fmu file")


def info_command(args: argparse.Namespace) -> int:
    """Run ``fmu-surrogate info``: print :meth:`FMUInfo.describe`.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_info_arguments`.

    Returns
    -------
    int
        Exit status 0.
    """
    from fmu_surrogate.fmu.model.loading import open_fmu

    print(open_fmu(args.fmu).describe())
    return 0
