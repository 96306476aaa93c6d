import pytest

from fmu_surrogate.couple.system import Connection, CouplingError, PowerBond
from fmu_surrogate.couple.validation import validate
from fmu_surrogate.errors import FmuSurrogateError


def _bond(effort=("spring.F", "chain.F1"), flow=("chain.v1", "spring.v"), signs=None):
    return PowerBond("mass1", Connection.parse(*effort), Connection.parse(*flow),
                     signs or {"chain": 1, "spring": -1})


def test_valid_system_passes(system_factory):
    infos = validate(system_factory())
    assert set(infos) == {"chain", "spring"}
    assert infos["chain"].fmi_version == "2.0"


def test_misspelled_variable_is_named_with_a_suggestion(system_factory):
    s = system_factory()
    s.bonds = [_bond(flow=("chain.v_1", "spring.v"))]
    with pytest.raises(CouplingError, match=r"'chain' has no variable 'v_1'.*'v1'") as ei:
        validate(s)
    assert isinstance(ei.value, FmuSurrogateError) and isinstance(ei.value, ValueError)


def test_causality_error_names_component_and_variable(system_factory):
    s = system_factory()
    s.connections = [Connection.parse("chain.F2", "spring.v")]  # F2 is an input, not an output
    with pytest.raises(CouplingError, match=r"chain\.F2 has causality 'input'"):
        validate(s)


def test_non_skew_bond_is_refused(system_factory):
    s = system_factory()
    s.bonds = [_bond(signs={"chain": 1, "spring": 1})]
    with pytest.raises(CouplingError, match=r"'mass1' between 'spring' and 'chain' is not skew"):
        validate(s)


def test_unknown_parameter_and_double_driven_input(system_factory):
    s = system_factory()
    s.components["spring"].parameters["kk"] = 1.0
    with pytest.raises(CouplingError, match=r"'spring' has no parameter 'kk'.*'k'"):
        validate(s)
    s = system_factory()
    s.connections = [Connection.parse("chain.v2", "spring.v")]
    with pytest.raises(CouplingError, match=r"spring\.v is driven twice"):
        validate(s)


def test_bond_directions_must_oppose(system_factory):
    s = system_factory()
    s.bonds = [_bond(flow=("chain.v1", "chain.F2"))]
    with pytest.raises(CouplingError, match="the flow must go chain -> spring"):
        validate(s)


def test_algebraic_loop_of_declared_feedthrough(system_factory, monkeypatch):
    import fmu_surrogate.couple.validation as v

    real = v.describe

    def with_feedthrough(path):  # the spring's F declared to depend directly on v
        info = real(path)
        if "spring" in str(path):
            return v.ComponentInfo(info.fmi_version, info.variables, {"F": ("v",)})
        return v.ComponentInfo(info.fmi_version, info.variables, {"v1": ("F1",)})

    monkeypatch.setattr(v, "describe", with_feedthrough)
    with pytest.raises(CouplingError, match="algebraic loop of direct feedthrough: .*spring.F"):
        validate(system_factory())
