"""``fmu-surrogate plot DATA.nc|SURROGATE.json [-o FIGURE.png]``: a dataset's runs or a
surrogate's structure (for a drop-in surrogate also the wiring of its external variables),
through :mod:`fmu_surrogate.plots`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fmu_surrogate.cli.options import comma_list

__all__ = ["add_plot_arguments", "plot_command"]


def add_plot_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``fmu-surrogate plot`` to ``p``."""
    p.add_argument("file", help="harvested dataset (.nc) or surrogate (.json)")
    p.add_argument("-o", "--out", help="PNG to write (default: FILE with .png)")
    p.add_argument("--vars", help="dataset: comma-separated variables (default: inputs and "
                                  "outputs)")
    p.add_argument("--max-runs", type=int, default=6,
                   help="dataset: runs drawn as lines, the rest as a band (default 6)")


def plot_command(args: argparse.Namespace) -> int:
    """Run ``fmu-surrogate plot``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_plot_arguments`.

    Returns
    -------
    int
        Exit status 0.
    """
    from fmu_surrogate import plots

    path = Path(args.file)
    out = Path(args.out) if args.out else path.with_suffix(".png")
    if path.suffix.lower() == ".json":
        from fmu_surrogate.ph import load

        plots.plot_surrogate(load(path), title=path.name, path=out)
    else:
        from fmu_surrogate.fmu.dataset import load_dataset

        ds = load_dataset(path)
        plots.plot_dataset(ds, comma_list(args.vars) or None, max_runs=args.max_runs, path=out)
    print(f"wrote {out}")
    return 0
