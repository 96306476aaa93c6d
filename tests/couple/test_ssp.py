import shutil
import zipfile

import numpy as np
import pytest

from fmu_surrogate.couple.running import run
from fmu_surrogate.couple.ssp import read_ssp, write_ssp


def test_written_ssp_validates_in_fmpy_and_round_trips(system_factory, tmp_path):
    from fmpy.ssp.ssd import read_ssd

    s = system_factory()
    p = write_ssp(s, tmp_path / "sys.ssp", stop_time=10.0)
    ssd = read_ssd(str(p), validate=True)  # checks the SSP 1.0 XML schemas
    assert sorted(e.name for e in ssd.system.elements) == ["chain", "spring"]
    assert sorted((c.startElement, c.startConnector, c.endElement, c.endConnector)
                  for c in ssd.system.connections) == [
        ("chain", "v1", "spring", "v"), ("spring", "F", "chain", "F1")]
    back = read_ssp(p, tmp_path / "x")
    assert back.bonds == s.bonds
    assert back.components["spring"].parameters == {"k": 4.0, "q0": 0.5}
    a = run(s, 1.0, 0.1, progress=False)
    b = run(back, 1.0, 0.1, progress=False)
    np.testing.assert_array_equal(a["chain.v1"].values, b["chain.v1"].values)


def test_written_ssp_loads_in_libcosim_with_its_parameters(system_factory, tmp_path):
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver

    log_output_level(CosimLogLevel.ERROR)
    p = write_ssp(system_factory(), tmp_path / "sys.ssp")
    ex = CosimExecution.from_ssp_file(str(p), step_size=int(1e8))
    assert ex.num_slaves() == 2
    obs = CosimObserver.create_last_value()
    ex.add_observer(obs)
    i = ex.slave_index_from_instance_name("spring")
    vr = next(v.reference for v in ex.slave_variables(i) if v.name == b"F")
    assert ex.step(1)
    assert obs.last_real_values(i, [vr]) == [-2.0]  # F = −k q0 with the bound q0 = 0.5


HAND_WRITTEN = """<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription version="1.0" name="HandWritten"
    xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon"
    xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription"
    xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues"
    generationTool="by hand">
  <ssd:System name="Oscillator" description="a spring on the first mass of a chain">
    <ssd:Elements>
      <ssd:Component name="Chain" source="resources/msd_chain.fmu"
          type="application/x-fmu-sharedlibrary">
        <ssd:Connectors>
          <ssd:Connector name="F1" kind="input"><ssc:Real/></ssd:Connector>
          <ssd:Connector name="v1" kind="output"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
        <ssd:ElementGeometry x1="0" y1="0" x2="10" y2="10"/>
      </ssd:Component>
      <ssd:Component name="Spring" source="resources/spring_port.fmu">
        <ssd:Connectors>
          <ssd:Connector name="v" kind="input"><ssc:Real/></ssd:Connector>
          <ssd:Connector name="F" kind="output"><ssc:Real unit="N"/></ssd:Connector>
        </ssd:Connectors>
        <ssd:ParameterBindings>
          <ssd:ParameterBinding>
            <ssd:ParameterValues>
              <ssv:ParameterSet version="1.0" name="SpringStart">
                <ssv:Parameters>
                  <ssv:Parameter name="q0"><ssv:Real value="0.25"/></ssv:Parameter>
                  <ssv:Parameter name="k"><ssv:Real value="2"/></ssv:Parameter>
                </ssv:Parameters>
              </ssv:ParameterSet>
            </ssd:ParameterValues>
          </ssd:ParameterBinding>
        </ssd:ParameterBindings>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      <ssd:Connection startElement="Spring" startConnector="F" endElement="Chain" endConnector="F1"/>
      <ssd:Connection startElement="Chain" startConnector="v1" endElement="Spring" endConnector="v"/>
    </ssd:Connections>
  </ssd:System>
  <ssd:DefaultExperiment startTime="0" stopTime="2"/>
</ssd:SystemStructureDescription>
"""


def test_hand_written_standard_ssp_loads_in_ours(system_factory, tmp_path):
    from fmpy.ssp.ssd import read_ssd

    s = system_factory()
    p = tmp_path / "hand.ssp"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("SystemStructure.ssd", HAND_WRITTEN)
        zf.write(s.components["chain"].path, "resources/msd_chain.fmu")
        zf.write(s.components["spring"].path, "resources/spring_port.fmu")
    read_ssd(str(p), validate=True)  # it is standard SSP 1.0
    got = read_ssp(p, tmp_path / "x")
    assert set(got.components) == {"Chain", "Spring"}
    assert got.components["Spring"].parameters == {"q0": 0.25, "k": 2.0}
    assert [str(c) for c in got.connections] == ["Spring.F -> Chain.F1", "Chain.v1 -> Spring.v"]
    assert got.bonds == []
    ds = run(got, 0.2, 0.1, progress=False)
    assert ds["Spring.F"].values[0, 0] == -0.5  # −k q0 from the bound parameters
    # the same archive unpacked reads as a .ssd file
    shutil.unpack_archive(p, tmp_path / "u", format="zip")
    assert set(read_ssp(tmp_path / "u" / "SystemStructure.ssd").components) == {"Chain", "Spring"}


def _braked_system(tmp_path, path=None, parameters=None, **start):
    """The braked mass of tests/couple/test_surrogates.py, both components surrogate files (the
    mass ``path``, default its saved file, with ``parameters`` (default its push g) and started
    as ``start`` says)."""
    from fmu_surrogate.couple.surrogates import surrogate_component
    from fmu_surrogate.couple.system import System
    from fmu_surrogate.ph import LinearPH, save
    from tests.couple.test_surrogates import _braked_mass

    system, (m, c, _, g, v0) = _braked_mass(tmp_path)
    damper = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 1)),
                      S=[[c]], input_names=["v"], output_names=["F"])
    params = {"g": g} if parameters is None else parameters
    comps = {"mass": surrogate_component("mass", path or tmp_path / "mass.json", params,
                                         **start),
             "brake": surrogate_component("brake", save(damper, tmp_path / "brake.json"))}
    return System(comps, system.connections), (m, g, v0)


def test_a_surrogate_component_starts_in_the_archive_where_the_system_starts_it(tmp_path,
                                                                                monkeypatch):
    """The mass started at m v0 / 2 (v0 / 2 = 1.5 m/s, its file's 3): the archive holds its
    exported FMU with the binding x_start[1] = m v0 / 2, so read back (a plain FMU component
    now) and run in libcosim — by ours and by libcosim's own SSP loader — it starts and runs
    as the TOML form of the system does, and follows the monolithic run of that start."""
    from fmpy.ssp.ssd import read_ssd
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimObserver import CosimObserver

    from fmu_surrogate.couple.monolithic import run_monolithic
    from fmu_surrogate.couple.toml_form import read_toml, write_toml

    monkeypatch.setenv("FMU_SURROGATE_CACHE", str(tmp_path / "cache"))
    m_v0 = 3.0  # m v0 / 2 with m = 2, v0 = 3 (checked below)
    coupled, (m, g, v0) = _braked_system(tmp_path, x0=[m_v0])
    assert m_v0 == m * v0 / 2
    p = write_ssp(coupled, tmp_path / "braked.ssp", stop_time=1.0)
    read_ssd(str(p), validate=True)  # standard SSP 1.0, the start bindings included
    back = read_ssp(p, tmp_path / "x")
    assert back.components["mass"].surrogate is None  # an FMU component, its start bound
    assert back.components["mass"].parameters == {"g": g, "x_start[1]": m_v0}
    assert back.components["brake"].parameters == {}  # its file's start: nothing to bind
    a = run(back, 1.0, 0.01, "fixed", progress=False)
    toml = run(read_toml(write_toml(coupled, tmp_path / "braked.toml")), 1.0, 0.01, "fixed",
               progress=False)
    assert str(a.status.values[0]) == str(toml.status.values[0]) == "ok"
    v = a["mass.v"].values[0]
    # the same FMUs from the same start values under the same exchange: bit for bit
    np.testing.assert_array_equal(v, toml["mass.v"].values[0])
    np.testing.assert_array_equal(a["brake.F"].values[0], toml["brake.F"].values[0])
    ref = run_monolithic(coupled, 1.0, 0.01)["mass.v"].values[0]
    # the start: p = m v0 / 2, v = p / m (one division: measured 0)
    assert v[0] == pytest.approx(v0 / 2, rel=1e-15)
    assert ref[0] == pytest.approx(v0 / 2, rel=1e-15)
    # libcosim's Jacobi exchange lags the brake's force by a step against the monolithic run's
    # exact coupling: first order in the step (measured 8.4e-3 of v's scale)
    assert np.abs(v - ref).max() <= 2e-2 * np.abs(ref).max()
    # libcosim's own SSP loader binds the same start: its first step gives ours
    ex = CosimExecution.from_ssp_file(str(p), step_size=round(0.01 * 1e9))
    obs = CosimObserver.create_last_value()
    ex.add_observer(obs)
    i = ex.slave_index_from_instance_name("mass")
    vr = next(x.reference for x in ex.slave_variables(i) if x.name == b"v")
    assert ex.step(1)
    assert obs.last_real_values(i, [vr]) == [v[1]]
    # without the binding (its file's start, 3 m/s) it would be 1.5 m/s away at first
    assert abs(v[1] - v0) > 1.0


def test_a_start_the_exported_fmu_cannot_take_is_refused_before_writing(tmp_path,
                                                                        system_factory):
    from fmu_surrogate.couple.system import CouplingError
    from tests.couple.test_surrogates import _braked_mass, _resting_mass

    # an initial state given to a surrogate saved to start at an equilibrium: its exported FMU
    # starts at the equilibrium whatever x_start says, so the archive could not start it there
    eq = _resting_mass(tmp_path)
    coupled, _ = _braked_system(tmp_path, eq, {}, x0=[0.1, -0.2])
    with pytest.raises(CouplingError, match="initial='state'.*file's rule initial='equilibrium'"
                                            ".*SSP archive.*monolithic.*write_toml"):
        write_ssp(coupled, tmp_path / "eq.ssp")
    assert not list(tmp_path.glob("*eq.ssp*"))
    # its own rule, its guess changed: the guess is bound (Newton's start)
    coupled, _ = _braked_system(tmp_path, eq, {}, x0=[0.1, -0.2], initial="equilibrium")
    back = read_ssp(write_ssp(coupled, tmp_path / "guess.ssp"), tmp_path / "g")
    assert back.components["mass"].parameters == {"x_start[2]": -0.2}
    # a pH model without an FMU
    system, _ = _braked_mass(tmp_path)
    with pytest.raises(CouplingError, match="'brake' is a pH model without an FMU.*surrogate"):
        write_ssp(system, tmp_path / "ph.ssp")
    # a binding its FMU has no variable for
    s = system_factory()
    s.components["spring"].parameters["k2"] = 1.0
    with pytest.raises(CouplingError, match=r"'spring'.*no variables \['k2'\] to bind"):
        write_ssp(s, tmp_path / "k2.ssp")
    assert sorted(f.name for f in tmp_path.glob("*.ssp*")) == ["guess.ssp"]  # only the good one


def test_linear_transformations_are_written_read_and_applied_by_libcosim(system_factory,
                                                                       tmp_path):
    import dataclasses

    from fmpy.ssp.ssd import read_ssd

    from fmu_surrogate.couple.system import Connection

    s = system_factory()
    (b,) = s.bonds
    s.bonds = [dataclasses.replace(b, effort=dataclasses.replace(b.effort, factor=-1.0),
                                   power_into={k: 1 for k in b.power_into})]
    s.connections = [Connection.parse("chain.v1", "chain.F2", 2.0, 0.5)]
    p = write_ssp(s, tmp_path / "sys.ssp")
    read_ssd(str(p), validate=True)  # ssc:LinearTransformation is standard SSP 1.0
    back = read_ssp(p, tmp_path / "x")
    assert back.bonds == s.bonds and back.connections == s.connections
    ds = run(back, 1.0, 0.1, progress=False)
    # the spring's force reaches the chain inverted, its velocity doubled and shifted
    np.testing.assert_array_equal(ds["chain.F1"].values, -ds["spring.F"].values)
    np.testing.assert_allclose(ds["chain.F2"].values, 2.0 * ds["chain.v1"].values + 0.5,
                               rtol=1e-15)
    np.testing.assert_array_equal(ds["chain.v1"].values, run(s, 1.0, 0.1, progress=False)[
        "chain.v1"].values)
    with pytest.raises(Exception, match="ECCO algorithm joins plain connections only"):
        run(back, 1.0, 0.1, "ecco", progress=False)


def test_a_mapping_other_than_linear_is_refused_by_name(system_factory, tmp_path):
    p = write_ssp(system_factory(), tmp_path / "sys.ssp")
    with zipfile.ZipFile(p) as zf:
        xml = zf.read("SystemStructure.ssd").decode()
    end = 'endConnector="F1" />' if 'endConnector="F1" />' in xml else 'endConnector="F1"/>'
    xml = xml.replace(end, end[:-2] + '><ssc:BooleanMappingTransformation/></ssd:Connection>')
    (tmp_path / "u").mkdir()
    (tmp_path / "u" / "SystemStructure.ssd").write_text(xml)
    with pytest.raises(Exception, match="maps its value by BooleanMappingTransformation"):
        read_ssp(tmp_path / "u" / "SystemStructure.ssd")


def test_parameter_values_from_an_ssv_file_with_a_prefix(system_factory, tmp_path):
    from fmpy.ssp.ssd import read_ssd

    s = system_factory()
    inline = HAND_WRITTEN[HAND_WRITTEN.index("          <ssd:ParameterBinding>"):
                          HAND_WRITTEN.index("        </ssd:ParameterBindings>")]
    xml = HAND_WRITTEN.replace(inline, '          <ssd:ParameterBinding source="resources/'
                                       'spring.ssv" prefix="Spring."/>\n')
    ssv = """<?xml version="1.0" encoding="UTF-8"?>
<ssv:ParameterSet version="1.0" name="SpringStart"
    xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues">
  <ssv:Parameters>
    <ssv:Parameter name="Spring.q0"><ssv:Real value="0.25"/></ssv:Parameter>
    <ssv:Parameter name="Spring.k"><ssv:Real value="2"/></ssv:Parameter>
    <ssv:Parameter name="Chain.damper"><ssv:Real value="9"/></ssv:Parameter>
  </ssv:Parameters>
</ssv:ParameterSet>
"""
    p = tmp_path / "ssv.ssp"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("SystemStructure.ssd", xml)
        zf.writestr("resources/spring.ssv", ssv)
        zf.write(s.components["chain"].path, "resources/msd_chain.fmu")
        zf.write(s.components["spring"].path, "resources/spring_port.fmu")
    read_ssd(str(p), validate=True)  # standard SSP 1.0
    got = read_ssp(p, tmp_path / "x")
    # the prefix selects the spring's values and strips it; the chain's value is not its
    assert got.components["Spring"].parameters == {"q0": 0.25, "k": 2.0}
    assert run(got, 0.2, 0.1, progress=False)["Spring.F"].values[0, 0] == -0.5  # -k q0
    mapped = xml.replace('prefix="Spring."/>', 'prefix="Spring."><ssd:ParameterMapping '
                         'source="m.ssm"/></ssd:ParameterBinding>')
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "SystemStructure.ssd").write_text(mapped)
    with pytest.raises(Exception, match="renamed by an ssd:ParameterMapping"):
        read_ssp(tmp_path / "m" / "SystemStructure.ssd")
