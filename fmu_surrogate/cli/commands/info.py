"""``fmu-surrogate info MODEL.fmu|DATA.nc``: an FMU's variables by causality, its states and
defaults; of a harvested dataset, its runs and failures by kind."""

from __future__ import annotations

import argparse

__all__ = ["add_info_arguments", "info_command"]


def add_info_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``fmu-surrogate info`` to ``p``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The sub-command's parser.
    """
    p.add_argument("fmu", help="path of the .fmu file (or of a harvested .nc dataset)")


def info_command(args: argparse.Namespace) -> int:
    """Run ``fmu-surrogate info``: print :meth:`FMUInfo.describe`, or a dataset's summary.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_info_arguments`.

    Returns
    -------
    int
        Exit status 0.
    """
    from pathlib import Path

    if Path(args.fmu).suffix.lower() in (".nc", ".nc4", ".h5"):  # a harvested dataset
        from fmu_surrogate.cli.commands.harvest import dataset_info
        from fmu_surrogate.fmu.dataset import load_dataset

        print(dataset_info(load_dataset(args.fmu)))
        return 0
    from fmu_surrogate.fmu.model.loading import open_fmu

    print(open_fmu(args.fmu).describe())
    return 0
