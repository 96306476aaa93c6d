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
