"""The fixed-step master on fmpy: libcosim's numbers to the last bit on FMI 2.0 systems, and the
same system with an FMI 3.0 component, which libcosim does not load."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.couple.running import run
from fmu_surrogate.couple.system import Component, Connection, CouplingError, PowerBond, System
from fmu_surrogate.ph import LinearPH
from fmu_surrogate.testing.fmus import build_faulty, build_faulty3

pytest.importorskip("libcosimpy")


def _same(a, b) -> None:
    names = [v for v in a.data_vars if a[v].dims == ("run", "time")]
    assert names == [v for v in b.data_vars if b[v].dims == ("run", "time")]
    np.testing.assert_array_equal(a.time.values, b.time.values)
    for v in names:
        np.testing.assert_array_equal(a[v].values, b[v].values, err_msg=v)


@pytest.mark.parametrize("name", ["saturating_drive", "bounded_mass"])
def test_the_master_gives_libcosims_numbers_to_the_last_bit(benchmark_system, name):
    # saturating_drive: a driven input, a recorded output, an inverted effort between two
    # power-out ports, an adaptive integrator (its steps see the master's t and H bit for bit);
    # bounded_mass: a feedthrough on the bond, a parameter that sets the start
    system = benchmark_system(name)
    a = run(system, 0.5, 1e-3, progress=False)
    b = run(system, 0.5, 1e-3, progress=False, engine="fmpy")
    assert (a.attrs["engine"], b.attrs["engine"]) == ("libcosim", "fmpy")
    _same(a, b)
    assert str(b.status.values[0]) == "ok"


def test_an_fmi3_component_runs_on_the_master_as_its_fmi2_twin_on_libcosim(benchmark_fmus,
                                                                         tmp_path):
    from fmu_surrogate.export import export_fmu

    damper = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 1)),
                      S=[[4.0]], input_names=["v"], output_names=["F"])
    fmus = {v: export_fmu(damper, tmp_path / f"brake{v}.fmu", fmi_version=v) for v in (2, 3)}

    def system(version: int) -> System:
        comps = {"mass": Component("mass", benchmark_fmus["end_stop_mass"], {"v0": 1.5}),
                 "brake": Component("brake", fmus[version])}
        bond = PowerBond("rod", Connection.parse("brake.F", "mass.F", -1.0),
                         Connection.parse("mass.v", "brake.v"), {"brake": 1, "mass": 1})
        return System(comps, [], [bond])

    a = run(system(2), 1.0, 1e-3, progress=False)
    b = run(system(3), 1.0, 1e-3, progress=False)  # FMI 3.0: the master, by default
    assert (a.attrs["engine"], b.attrs["engine"]) == ("libcosim", "fmpy")
    _same(a, b)  # the FMI 3.0 export wraps the same C code
    # the damper F = 4 v brakes the mass thrown at 1.5 m/s: -F_mass = F_brake = 4 v held
    np.testing.assert_array_equal(b["mass.F"].values, -b["brake.F"].values)
    np.testing.assert_allclose(b["brake.F"].values[0, 1:], 4.0 * b["mass.v"].values[0, :-1],
                               rtol=1e-15)
    with pytest.raises(CouplingError, match="ECCO only on libcosim"):
        run(system(3), 1.0, 1e-3, "ecco", progress=False)
    with pytest.raises(CouplingError, match="'brake' is an FMI 3.0 FMU; libcosim co-simulates"):
        run(system(3), 1.0, 1e-3, progress=False, engine="libcosim")


@pytest.mark.parametrize("fmi3", [False, True])
def test_a_failing_component_is_a_recorded_failure_on_the_master(system_factory, tmp_path,
                                                                 fmi3):
    s = system_factory()
    faulty = build_faulty3(tmp_path) if fmi3 else build_faulty(tmp_path)
    s.components["bad"] = Component("bad", faulty, {"mode": 4, "t_fault": 0.5})
    s.connections += [Connection.parse("bad.x", "chain.F2"), Connection.parse("chain.v2", "bad.u")]
    ds = run(s, 2.0, 0.1, progress=False, engine="fmpy")
    assert str(ds.status.values[0]) == "failed"
    assert str(ds.failure_kind.values[0]) == "error_status"
    assert "component 'bad'" in str(ds.message.values[0])
    assert ds.attrs["n_steps"] == 5  # the steps before the fault are kept
