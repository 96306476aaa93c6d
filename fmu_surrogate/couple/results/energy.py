"""Units and report of the energy that crosses the power bonds of a coupled system.

A bond carries ``effort · flow`` in the product of its ports' declared units; the factor to
watts is :func:`fmu_surrogate.fmu.model.units.power_factor` (1 for SI units, ``1e5 / 6e4 ≈
1.667`` for a hydraulic bond in bar and l/min).  The recorded power and residual columns of a
bond are in W and J when the factor is known, and in the ports' units (``effort·flow`` and
``effort·flow·s``) when it is not; the dataset's attributes say which
(``bond:<name>:power_unit``, ``bond:<name>:energy_unit``, ``bond:<name>:power_factor``).

:func:`bond_table` reports per bond the energy each side received, the residual
``∫ (P_out − P_in) dt`` and the residual relative to the energy that passed the bond,
``∫ |P| dt``: a bond that carries energy one way and back (a free mass pushed and braked) has a
net energy near zero, so the net value is no scale for its residual.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from fmu_surrogate.couple.system import System
from fmu_surrogate.fmu.model.units import power_factor

__all__ = ["BondUnits", "bond_table", "bond_units", "unit_attrs", "with_units"]


@dataclass(frozen=True)
class BondUnits:
    """The units of one bond.

    Attributes
    ----------
    effort, flow : str
        The declared units of the effort and flow outputs (``""`` when undeclared).
    factor : float or None
        Watts per unit product, ``None`` when the units do not make a known power.
    """

    effort: str
    flow: str
    factor: float | None

    @property
    def scale(self) -> float:
        """The factor applied to the recorded columns (1 when unknown)."""
        return 1.0 if self.factor is None else self.factor

    @property
    def power_unit(self) -> str:
        """``"W"``, or the product of the ports' units."""
        return "W" if self.factor is not None else f"{self.effort or 'effort'}·{self.flow or 'flow'}"

    @property
    def energy_unit(self) -> str:
        """``"J"``, or the product of the ports' units and seconds."""
        return "J" if self.factor is not None else f"{self.power_unit}·s"


def bond_units(system: System, infos: Mapping[str, Any] | None) -> dict[str, BondUnits]:
    """The units of every bond from its components' model descriptions.

    Parameters
    ----------
    system : System
    infos : mapping of str to ComponentInfo, or None
        From :func:`~fmu_surrogate.couple.validation.validate`; a component it lacks (one
        without an FMU) gives the units it carries (``Component.units``, a surrogate's wiring).

    Returns
    -------
    dict of str to BondUnits
        By bond name.
    """
    out = {}
    for b in system.bonds:
        e, f = (_unit(system, infos, ref) for ref in (b.effort.source, b.flow.source))
        out[b.name] = BondUnits(e, f, power_factor(e or None, f or None))
    return out


def _unit(system: System, infos: Mapping[str, Any] | None, ref: tuple[str, str]) -> str:
    comp, var = ref
    if infos is not None and comp in infos and var in infos[comp].variables:
        return infos[comp].variables[var].unit or ""
    c = system.components.get(comp)
    return (c.units.get(var) or "") if c is not None else ""


def unit_attrs(units: Mapping[str, BondUnits]) -> dict[str, Any]:
    """Dataset attributes ``bond:<name>:power_unit``, ``…:energy_unit``, ``…:power_factor``
    (NaN when unknown)."""
    out: dict[str, Any] = {}
    for name, u in units.items():
        out[f"bond:{name}:power_unit"] = u.power_unit
        out[f"bond:{name}:energy_unit"] = u.energy_unit
        out[f"bond:{name}:power_factor"] = float("nan") if u.factor is None else float(u.factor)
    return out


def with_units(ds: xr.Dataset, system: System, infos: Mapping[str, Any] | None,
               units: Mapping[str, BondUnits]) -> xr.Dataset:
    """``ds`` with the ``units`` attribute of every variable: declared by its FMU, W or J (or
    the ports' units) for the bond columns.

    Parameters
    ----------
    ds : xarray.Dataset
    system : System
    infos : mapping of str to ComponentInfo, or None
    units : mapping of str to BondUnits
        :func:`bond_units`.

    Returns
    -------
    xarray.Dataset
        The same object.
    """
    for v in ds.data_vars:
        name = str(v)
        if name.startswith("bond:"):
            _, bond, col = name.split(":", 2)
            u = units[bond]
            ds[v].attrs["units"] = u.energy_unit if col == "residual" else u.power_unit
        elif "." in name:
            unit = _unit(system, infos, tuple(name.split(".", 1)))
            if unit:
                ds[v].attrs["units"] = unit
    return ds


def bond_table(ds: xr.Dataset) -> str:
    """One line per bond side: energy received, residual, residual / ∫|P| dt, unit.

    Parameters
    ----------
    ds : xarray.Dataset
        A result of :func:`fmu_surrogate.couple.run` (first run).

    Returns
    -------
    str
        The table, then a note per bond whose units are unknown.
    """
    names = sorted({str(v).split(":")[1] for v in ds.data_vars if str(v).startswith("bond:")})
    if not names:
        return "no power bonds (nothing to account)"
    h = np.diff(ds.time.values)
    lines = [f"{'bond':<16}{'side':<14}{'energy':>14}{'residual':>14}{'/ ∫|P|dt':>10}  unit"]
    notes = []
    for b in names:
        res = float(ds[f"bond:{b}:residual"].values[0, -1])
        unit = str(ds.attrs.get(f"bond:{b}:energy_unit", "J"))
        sides = [str(v).split(":P_")[1] for v in ds.data_vars if str(v).startswith(f"bond:{b}:P_")]
        # P[k] is the mean power over the step ending at t_k
        powers = [ds[f"bond:{b}:P_{side}"].values[0][1:] for side in sides]
        passed = max((float(np.sum(np.abs(p) * h)) for p in powers), default=0.0)
        for k, (side, p) in enumerate(zip(sides, powers)):
            e = float(np.sum(p * h))
            tail = ""
            if k == 0:
                rel = f"{res / passed:.2%}" if passed > 0 else "-"
                tail = f"{res:>14.6g}{rel:>10}  {unit}"
            lines.append(f"{b if k == 0 else '':<16}{side:<14}{e:>14.6g}{tail}")
        if unit != "J":
            notes.append(f"note: the units of bond {b!r} do not make a known power; its energies "
                         f"are in {unit}, not J (declare the ports' units, e.g. N and m/s).")
    return "\n".join(lines + notes)
