import pytest

from fmu_surrogate.couple.system import CouplingError
from fmu_surrogate.couple.toml_form import read_toml, write_toml


def test_toml_round_trip(system_factory, tmp_path):
    s = system_factory()
    back = read_toml(write_toml(s, tmp_path / "sys.toml"))
    assert back.bonds == s.bonds
    assert back.connections == s.connections
    assert {k: (c.path.resolve(), c.parameters) for k, c in back.components.items()} == {
        k: (c.path.resolve(), c.parameters) for k, c in s.components.items()}


def test_hand_written_toml_with_relative_paths(system_factory, tmp_path):
    import shutil

    s = system_factory()
    shutil.copy(s.components["chain"].path, tmp_path / "chain.fmu")
    (tmp_path / "sys.toml").write_text(
        '[components.chain]\nfmu = "chain.fmu"\nparameters = { damper = 0.5 }\n\n'
        '[[connections]]\nfrom = "chain.v1"\nto = "chain.F2"\n')
    got = read_toml(tmp_path / "sys.toml")
    assert got.components["chain"].path == tmp_path / "chain.fmu"
    assert got.components["chain"].parameters == {"damper": 0.5}
    assert str(got.connections[0]) == "chain.v1 -> chain.F2"


def test_toml_errors_name_the_problem(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[components.a]\npath = "x.fmu"\n')
    with pytest.raises(CouplingError, match="component 'a' .* needs fmu ="):
        read_toml(p)
    p.write_text('[components.a]\nfmu = "x.fmu"\n[[bonds]]\neffort = ["a.e", "b.e"]\n')
    with pytest.raises(CouplingError, match="a bond needs"):
        read_toml(p)
    p.write_text('[[connections]]\nfrom = "a"\n')
    with pytest.raises(CouplingError, match="defines no"):
        read_toml(p)


def test_a_surrogates_start_is_written_where_it_is_not_its_files(tmp_path):
    import numpy as np

    from fmu_surrogate.couple.surrogates import surrogate_component
    from fmu_surrogate.couple.system import System
    from fmu_surrogate.ph import LinearPH, PortedSystem, PortMap, save

    core = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.1]), np.diag([2.0, 1.0]),
                    [[0, 0], [1, 1]])
    ports = PortMap(("F",), ("v",), ("N",), ("m/s",), Tu=[[1.0], [0.0]], cu=[0.0, 0.5],
                    Ty=[[1.0, 0.0]], Cx=np.zeros((1, 2)), Du=np.zeros((1, 1)), cy=[0.0])
    path = save(PortedSystem(core, ports, x0=[0.1, 0.3], initial="equilibrium"),
                tmp_path / "m.json")
    cases = [({}, "equilibrium", [0.1, 0.3], ""),  # the file's: nothing written
             ({"x0": [0.4, 0.0]}, "state", [0.4, 0.0], "x0 = [0.4, 0.0]"),  # given: wins
             ({"x0": [0.4, 0.0], "initial": "equilibrium"}, "equilibrium", [0.4, 0.0],
              'initial = "equilibrium"'),  # the rule kept, the guess given
             ({"initial": "state"}, "state", [0.1, 0.3], 'initial = "state"')]
    for kw, rule, x0, line in cases:
        text = write_toml(System({"m": surrogate_component("m", path, **kw)}),
                          tmp_path / "s.toml").read_text()
        assert (line in text) if line else ("x0" not in text and "initial" not in text)
        back = read_toml(tmp_path / "s.toml").components["m"]
        assert back.initial == rule and back.x0.tolist() == x0
    (tmp_path / "f.toml").write_text('[components.a]\nfmu = "a.fmu"\nx0 = [1.0]\n')
    with pytest.raises(CouplingError, match="an FMU starts as its own initialisation"):
        read_toml(tmp_path / "f.toml")


def test_factors_and_offsets_round_trip_and_bad_ones_are_named(system_factory, tmp_path):
    import dataclasses

    from fmu_surrogate.couple.system import Connection

    s = system_factory()
    (b,) = s.bonds
    s.bonds = [dataclasses.replace(b, effort=dataclasses.replace(b.effort, factor=-1.0),
                                   power_into={k: 1 for k in b.power_into})]
    s.connections = [Connection.parse("chain.v1", "chain.F2", 1000.0, 273.15)]
    text = write_toml(s, tmp_path / "sys.toml").read_text()
    assert "effort_factor = -1.0" in text and "factor = 1000.0\noffset = 273.15" in text
    back = read_toml(tmp_path / "sys.toml")
    assert back.bonds == s.bonds and back.connections == s.connections
    assert str(back.connections[0]) == "chain.v1 -> chain.F2 (× 1000 + 273.15)"
    bad = text.replace("factor = 1000.0", 'factor = "x"')
    (tmp_path / "bad.toml").write_text(bad)
    with pytest.raises(CouplingError, match="numbers as factor and offset.*factor = 'x'"):
        read_toml(tmp_path / "bad.toml")
    (tmp_path / "bad.toml").write_text(text.replace("factor = 1000.0", "factor = 0.0"))
    with pytest.raises(CouplingError, match="chain.v1 -> chain.F2: its factor must be a nonzero"):
        read_toml(tmp_path / "bad.toml")
