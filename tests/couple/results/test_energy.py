"""The bond report: units from the ports' declarations, residual relative to ∫|P| dt."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import xarray as xr

from fmu_surrogate.couple.results.energy import BondUnits, bond_table, bond_units, unit_attrs
from fmu_surrogate.couple.system import Component, Connection, PowerBond, System


def _result(p_out: np.ndarray, p_in: np.ndarray, h: float, attrs: dict) -> xr.Dataset:
    t = h * np.arange(len(p_out))
    res = np.concatenate([[0.0], np.cumsum(h * (p_out[1:] - p_in[1:]))])
    data = {"bond:rod:P_mass": (("run", "time"), p_out[None]),
            "bond:rod:P_brake": (("run", "time"), p_in[None]),
            "bond:rod:residual": (("run", "time"), res[None])}
    return xr.Dataset(data, coords={"time": t}, attrs=attrs)


def test_a_round_trip_through_a_free_mass_is_measured_against_the_energy_that_passed():
    # the mass gives 1 W for a second and takes it back for a second: net energy 0 (the old
    # share residual / net read "-100 %"); 2 J passed the bond, the coupling created 0.004 J
    h = 0.01
    p_out = np.where(np.arange(201) <= 100, 1.0, -1.0)
    p_in = p_out - 0.002
    ds = _result(p_out, p_in, h, unit_attrs({"rod": BondUnits("N", "m/s", 1.0)}))
    line = next(s for s in bond_table(ds).splitlines() if s.startswith("rod"))
    bond, side, energy, residual, rel, unit = line.split()
    assert (bond, side, unit) == ("rod", "mass", "J")
    assert float(energy) == pytest.approx(0.0, abs=1e-12)
    assert float(residual) == pytest.approx(0.004, rel=1e-9)
    assert rel == "0.20%"  # 0.004 J of the 2 J that passed


def test_units_of_a_bond_from_the_ports_declarations():
    bond = PowerBond("line", Connection.parse("acc.p", "ori.p"), Connection.parse("ori.Q", "acc.Q"),
                     {"ori": 1, "acc": -1})
    system = System({"acc": Component("acc", None), "ori": Component("ori", None)}, [], [bond])

    def infos(p_unit, q_unit):
        var = lambda u: SimpleNamespace(unit=u)
        return {"acc": SimpleNamespace(variables={"p": var(p_unit), "Q": var(q_unit)}),
                "ori": SimpleNamespace(variables={"p": var(p_unit), "Q": var(q_unit)})}

    u = bond_units(system, infos("bar", "l/min"))["line"]
    assert u.factor == pytest.approx(1e5 * 1e-3 / 60, rel=1e-15)
    assert (u.power_unit, u.energy_unit, u.scale) == ("W", "J", u.factor)
    unknown = bond_units(system, infos("psi", None))["line"]
    assert unknown.factor is None and unknown.scale == 1.0
    assert (unknown.power_unit, unknown.energy_unit) == ("psi·flow", "psi·flow·s")
    not_power = bond_units(system, infos("bar", "m"))["line"]  # bar·m is no power
    assert not_power.factor is None and not_power.energy_unit == "bar·m·s"
    assert bond_units(system, None)["line"].energy_unit == "effort·flow·s"
    attrs = unit_attrs({"line": unknown})
    assert np.isnan(attrs["bond:line:power_factor"])
    # the report names the unit and says why it is no joule
    ds = _result(np.ones(3), np.ones(3), 0.1, attrs).rename(
        {"bond:rod:P_mass": "bond:line:P_acc", "bond:rod:P_brake": "bond:line:P_ori",
         "bond:rod:residual": "bond:line:residual"})
    text = bond_table(ds)
    assert text.splitlines()[1].split()[-1] == "psi·flow·s"
    assert "note: the units of bond 'line' do not make a known power" in text
