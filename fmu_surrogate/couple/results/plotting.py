"""The plot of a coupled run: one axis per physical quantity, the bonds' energy residuals below.

Variables are grouped by their declared unit (the ``units`` attribute that
:func:`fmu_surrogate.couple.run` copies from the components' model descriptions) and each axis is
labelled with the quantity and the unit, e.g. ``force [N]``; variables without a unit share an
axis of their own.  The residuals ``∫ (P_out − P_in) dt`` of the bonds get the last axis, in J
(or in the ports' units when they make no known power,
:mod:`fmu_surrogate.couple.results.energy`).
Driven inputs (the dataset's ``driven_inputs`` attribute) are drawn as the steps they are.
"""

from __future__ import annotations

from pathlib import Path

import xarray as xr

from fmu_surrogate.fmu.model.units import parse_unit

__all__ = ["axis_groups", "plot_result", "quantity"]

# exponents of (kg, m, s, A) -> name of the quantity (SI dimension, angles dimensionless)
_QUANTITIES = {
    (0, 1, 0, 0): "length", (0, 1, -1, 0): "velocity", (0, 1, -2, 0): "acceleration",
    (1, 1, -2, 0): "force", (1, 2, -2, 0): "torque, energy", (1, 2, -3, 0): "power",
    (1, 0, 0, 0): "mass", (1, 2, 0, 0): "inertia", (0, 0, -1, 0): "rate, angular velocity",
    (0, 0, -2, 0): "angular acceleration", (0, 0, 1, 0): "time",
    (1, -1, -2, 0): "pressure", (0, 3, -1, 0): "volume flow", (0, 3, 0, 0): "volume",
    (0, 0, 0, 1): "current", (1, 2, -3, -1): "voltage", (1, 2, -3, -2): "resistance",
    (1, 2, -2, -2): "inductance", (1, 2, -2, -1): "magnetic flux", (1, 1, -1, 0): "momentum",
    (1, 0, -1, 0): "damping", (1, 0, -2, 0): "stiffness",
}


def quantity(unit: str) -> str:
    """The axis label of a unit: ``"N"`` -> ``"force [N]"``, ``""`` -> ``"no unit"``."""
    if not unit:
        return "no unit"
    u = parse_unit(unit)
    if u is None:
        return f"[{unit}]"
    if u.dims[4:] != (0, 0, 0):
        name = "temperature" if u.dims == (0, 0, 0, 0, 1, 0, 0) else None
    else:
        name = _QUANTITIES.get(u.dims[:4])
    if u.dims == (0,) * 7:
        name = "dimensionless"
    return f"{name} [{unit}]" if name else f"[{unit}]"


def axis_groups(ds: xr.Dataset) -> list[tuple[str, list[str]]]:
    """The axes of :func:`plot_result`: ``(label, variables)``, one per unit, then the residuals.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`fmu_surrogate.couple.run`.

    Returns
    -------
    list of (str, list of str)
        Labelled with :func:`quantity`; variables without a unit come after those with one; the
        bond residuals, if any, last (``"bond residual [J]"``).
    """
    groups: dict[str, list[str]] = {}
    residuals = []
    for v in ds.data_vars:
        name = str(v)
        if ds[v].dims != ("run", "time"):
            continue
        if name.startswith("bond:"):
            if name.endswith(":residual"):
                residuals.append(name)
            continue
        groups.setdefault(str(ds[v].attrs.get("units", "")), []).append(name)
    out = [(quantity(u), groups[u]) for u in sorted(groups, key=lambda u: (u == "", u))]
    if residuals:
        units = sorted({str(ds[r].attrs.get("units", "J")) for r in residuals})
        out.append((f"bond residual [{', '.join(units)}]", residuals))
    return out


def plot_result(ds: xr.Dataset, path: str | Path) -> Path:
    """Write the plot of a run (first run of ``ds``) as a PNG: the axes of :func:`axis_groups`.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`fmu_surrogate.couple.run`.
    path : path
        The image file.

    Returns
    -------
    Path
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = axis_groups(ds)
    n = max(len(groups), 1)
    fig, axes = plt.subplots(n, 1, figsize=(9, 1.2 + 2.0 * n), sharex=True, squeeze=False)
    axes = axes[:, 0]
    t = ds.time.values
    driven = set(ds.attrs.get("driven_inputs", "").split(","))
    for ax, (label, names) in zip(axes, groups):
        for name in names:
            bond = name.startswith("bond:")
            ax.plot(t, ds[name].values[0], label=name.split(":")[1] if bond else name,
                    drawstyle="steps-post" if name in driven else "default")
        ax.set_ylabel(label)
        if label.startswith("bond residual"):
            ax.set_title("energy residual ∫(P_out − P_in) dt per bond", fontsize=9)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
