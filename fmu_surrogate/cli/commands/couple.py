"""``fmu-surrogate couple SYSTEM.(ssp|toml) -o RESULT.nc``: run a coupled system, print the bonds."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import xarray as xr

from fmu_surrogate.couple.descriptions import load_system

__all__ = ["add_couple_arguments", "bond_table", "couple_command", "load_system",
           "plot_result"]


def add_couple_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of the ``couple`` subcommand."""
    p.add_argument("system", help="system description (.ssp, .ssd or .toml)")
    p.add_argument("-o", "--output", required=True, help="result dataset (.nc)")
    p.add_argument("--algorithm", choices=("fixed", "ecco"), default="fixed",
                   help="libcosim master algorithm (default: fixed)")
    p.add_argument("--step", type=float, default=0.01, help="communication step in s (ECCO: initial)")
    p.add_argument("--stop-time", type=float, default=1.0, help="end time in s (default 1)")
    p.add_argument("--plot", help="also write a plot of the signals and bond residuals (PNG)")


def bond_table(ds: xr.Dataset) -> str:
    """One line per bond: energy each side received, residual, and its share."""
    names = sorted({v.split(":")[1] for v in ds.data_vars if str(v).startswith("bond:")})
    t = ds.time.values
    lines = [f"{'bond':<16}{'side':<14}{'energy (J)':>14}{'residual (J)':>16}{'rel.':>10}"]
    for b in names:
        res = float(ds[f"bond:{b}:residual"].values[0, -1])
        sides = [str(v).split(":P_")[1] for v in ds.data_vars if str(v).startswith(f"bond:{b}:P_")]
        for k, side in enumerate(sides):
            p = ds[f"bond:{b}:P_{side}"].values[0]
            e = float(np.sum(p[1:] * np.diff(t)))
            scale = max(abs(e), 1e-300)
            lines.append(f"{b if k == 0 else '':<16}{side:<14}{e:>14.6g}"
                         + (f"{res:>16.6g}{res / scale:>10.2%}" if k == 0 else ""))
    return "\n".join(lines)


def plot_result(ds: xr.Dataset, path: str | Path) -> Path:
    """Signals (top) and every bond's cumulative energy residual (bottom) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    t = ds.time.values
    for v in ds.data_vars:
        if ds[v].dims == ("run", "time") and not str(v).startswith("bond:"):
            a.plot(t, ds[v].values[0], label=str(v))
        elif str(v).endswith(":residual"):
            b.plot(t, ds[v].values[0], label=str(v).split(":")[1])
    a.set_ylabel("value")
    a.legend(fontsize=7)
    b.set_ylabel("energy residual ∫(P_out − P_in) dt  [J]")
    b.set_xlabel("time [s]")
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def couple_command(args: argparse.Namespace) -> int:
    """Run the system, write the dataset, print the bond table; exit 1 when the run failed."""
    from fmu_surrogate.couple.running import run
    from fmu_surrogate.fmu.dataset import save_dataset

    ds = run(load_system(args.system), args.stop_time, args.step, args.algorithm)
    save_dataset(ds, args.output)
    print(f"{args.algorithm}: {ds.attrs['n_steps']} steps to t = {ds.time.values[-1]:g} s, "
          f"written to {args.output}")
    print(bond_table(ds))
    if args.plot:
        print(f"plot: {plot_result(ds, args.plot)}")
    if str(ds.status.values[0]) != "ok":
        print(f"run failed ({ds.failure_kind.values[0]}): {ds.message.values[0]}")
        return 1
    return 0
