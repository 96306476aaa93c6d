"""Generation of modelDescription.xml and model_vars.h from one ModelSpec."""

from __future__ import annotations

import re

import pytest
from fmpy import read_model_description

from fmu_surrogate.benchmarks import specs
from fmu_surrogate.export.fmi.model_description import Experiment, ModelSpec, Var


def all_specs():
    return [specs.rc_network_spec(), specs.pendulum_spec(), specs.msd_chain_spec(3),
            specs.cauer_spec(), specs.duffing_spec(), specs.free_mass_spec(),
            specs.quarter_car_spec(), specs.damper_spec(), specs.dc_motor_spec(),
            specs.power_damper_spec(), specs.progressive_spring_spec(),
            specs.progressive_spring_me_spec(), specs.saturating_inductor_spec()]


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.identifier)
def test_header_and_xml_agree(spec, tmp_path):
    xml = tmp_path / "modelDescription.xml"
    xml.write_text(spec.model_description_xml())
    md = read_model_description(str(xml), validate=True)
    header = spec.c_header()
    defined = dict(re.findall(r"#define VR_(\w+) (\d+)", header))
    assert len(defined) == len(spec.variables) >= len(md.modelVariables)
    for v in md.modelVariables:
        sym = re.sub(r"[^A-Za-z0-9_]+", "_", v.name).strip("_")
        assert int(defined[sym]) == v.valueReference, v.name
    assert f'#define MODEL_GUID "{md.guid}"' in header
    n_states = len(md.derivatives)
    assert f"#define N_STATES {len(spec.states())}" in header
    if not spec.model_exchange:  # internal states: in the header, not in the model description
        assert n_states == 0 and md.modelExchange is None
        return
    # STATE_VR / DER_VR list the ME state vector in the order of <Derivatives>
    state_vr = re.search(r"STATE_VR\[\] = \{([^}]*)\}", header).group(1)
    der_vr = re.search(r"DER_VR\[\] = \{([^}]*)\}", header).group(1)
    if n_states == 0:  # C has no empty arrays: the tables hold one unused 0
        assert state_vr == der_vr == "0"
        return
    assert [int(x) for x in state_vr.split(",")] == [
        d.variable.derivative.valueReference for d in md.derivatives]
    assert [int(x) for x in der_vr.split(",")] == [d.variable.valueReference for d in md.derivatives]


def test_guid_changes_with_the_spec():
    assert specs.msd_chain_spec(3).guid != specs.msd_chain_spec(4).guid
    assert specs.cauer_spec().guid == specs.cauer_spec().guid  # deterministic


def test_invalid_specs_are_refused():
    ok = Var("u", "input", start=0.0)
    with pytest.raises(ValueError, match="duplicate"):
        ModelSpec("m", "", "m.c", (ok, ok))
    with pytest.raises(ValueError, match="needs a start value"):
        ModelSpec("m", "", "m.c", (Var("k", "parameter", "fixed"),))
    with pytest.raises(ValueError, match="derivative of unknown"):
        ModelSpec("m", "", "m.c", (Var("der(x)", derivative="x"),))
    with pytest.raises(ValueError, match="only outputs declare dependencies"):
        ModelSpec("m", "", "m.c", (ok, Var("y", dependencies=("u",))))
    with pytest.raises(ValueError, match=r"depends on \['k'\], which are neither"):
        ModelSpec("m", "", "m.c", (ok, Var("k", "parameter", "fixed", 1.0),
                                   Var("y", "output", dependencies=("u", "k"))))
    with pytest.raises(ValueError, match="same C symbol"):
        ModelSpec("m", "", "m.c", (Var("a_b", start=0.0), Var("a[b]", start=0.0)))
    assert ModelSpec("m", "", "m.c", (ok,), Experiment(0, 1)).value_references() == {"u": 0}


def test_output_dependencies_are_written(tmp_path):
    spec = ModelSpec("m", "", "m.c", (
        Var("u", "input", start=0.0), Var("x", start=0.0), Var("der(x)", derivative="x"),
        Var("y", "output", dependencies=("x", "u")), Var("z", "output", dependencies=()),
        Var("w", "output")))
    xml = tmp_path / "modelDescription.xml"
    xml.write_text(spec.model_description_xml())
    md = read_model_description(str(xml), validate=True)
    deps = {o.variable.name: o.dependencies for o in md.outputs}
    # written in ascending index order (the inputs come first in this spec), whatever the order
    # in which they were declared
    assert [d.name for d in deps["y"]] == ["u", "x"]
    assert deps["z"] == [] and deps["w"] is None  # declared none; not declared


def test_cosimulation_only_keeps_its_states_internal(tmp_path):
    v = (Var("u", "input", start=0.0, unit="V"), Var("x", start=0.0, unit="Wb"),
         Var("der(x)", derivative="x", unit="V"), Var("y", "output", unit="A", dependencies=("u",)))
    spec = ModelSpec("m", "", "m.c", v, model_exchange=False)
    assert [d.name for d in spec.declared()] == ["u", "y"]
    xml = tmp_path / "modelDescription.xml"
    xml.write_text(spec.model_description_xml())
    md = read_model_description(str(xml), validate=True)
    assert md.modelExchange is None and md.coSimulation.modelIdentifier == "m"
    assert [x.name for x in md.modelVariables] == ["u", "y"]
    assert [x.valueReference for x in md.modelVariables] == [0, 3]  # x, der(x) keep 1, 2
    assert "<Unit name=\"Wb\"/>" not in xml.read_text()  # only units of declared variables
    assert "#define N_STATES 1" in spec.c_header()
    with pytest.raises(ValueError, match="neither inputs nor declared continuous states"):
        ModelSpec("m", "", "m.c", v[:3] + (Var("y", "output", dependencies=("x",)),),
                  model_exchange=False)
