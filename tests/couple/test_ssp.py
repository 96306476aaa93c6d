import shutil
import zipfile

import numpy as np

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
