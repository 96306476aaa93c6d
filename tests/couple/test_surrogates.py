import numpy as np
import pytest

from fmu_surrogate.couple.running import run
from fmu_surrogate.couple.surrogates import surrogate_component
from fmu_surrogate.couple.system import CouplingError
from fmu_surrogate.couple.toml_form import read_toml
from fmu_surrogate.ph import LinearPH, save


def _surrogates(tmp_path):
    from fmu_surrogate.benchmarks.msd_chain import msd_chain

    c = msd_chain(2)
    chain = LinearPH(c.J, c.R, c.Q, c.B, input_names=["F1", "F2"], output_names=["v1", "v2"])
    spring = LinearPH(np.zeros((1, 1)), np.zeros((1, 1)), [[4.0]], [[1.0]],
                      input_names=["v"], output_names=["P"])
    return save(chain, tmp_path / "chain.json"), save(spring, tmp_path / "spring.json")


def test_surrogate_component_ports_from_the_json_names(tmp_path):
    chain, _ = _surrogates(tmp_path)
    comp = surrogate_component("chain", chain)
    assert comp.path is None and comp.surrogate == chain
    assert comp.ports == {"F1": ("u", 0, 1), "F2": ("u", 1, 1), "v1": ("y", 0, 1),
                          "v2": ("y", 1, 1)}


def test_two_surrogates_bonded_directly_are_refused_as_non_skew(tmp_path):
    # both pH ports count yᵀu as power *into* their system: a plain connection of the two makes
    # Ĉ symmetric (docs/design.md §2), so the bond is refused before anything runs
    _surrogates(tmp_path)
    (tmp_path / "s.toml").write_text(
        '[components.chain]\nsurrogate = "chain.json"\n[components.spring]\n'
        'surrogate = "spring.json"\n[[bonds]]\nname = "b"\neffort = ["spring.P", "chain.F1"]\n'
        'flow = ["chain.v1", "spring.v"]\npower_into = { chain = 1, spring = 1 }\n')
    s = read_toml(tmp_path / "s.toml")
    with pytest.raises(CouplingError, match="'b' between 'spring' and 'chain' is not skew"):
        run(s, 1.0, 0.1, "monolithic")


def test_declared_signs_do_not_hide_a_symmetric_coupling(tmp_path):
    _surrogates(tmp_path)
    (tmp_path / "s.toml").write_text(
        '[components.chain]\nsurrogate = "chain.json"\n[components.spring]\n'
        'surrogate = "spring.json"\n[[bonds]]\nname = "b"\neffort = ["spring.P", "chain.F1"]\n'
        'flow = ["chain.v1", "spring.v"]\npower_into = { chain = 1, spring = -1 }\n')
    with pytest.raises(CouplingError, match="coupling is not skew"):
        run(read_toml(tmp_path / "s.toml"), 1.0, 0.1, "monolithic")


def test_surrogate_json_component_cosimulates_like_the_fmu_it_replaces(system_factory, tmp_path,
                                                                      monkeypatch):
    """The chain as a surrogate JSON (exported on the fly) vs the benchmark chain FMU, libcosim."""
    from fmu_surrogate.couple.example import chain_ph
    from fmu_surrogate.couple.system import System

    monkeypatch.setenv("FMU_SURROGATE_CACHE", str(tmp_path / "cache"))
    fmu_system = system_factory()
    chain = chain_ph(2)
    chain = LinearPH(chain.J, chain.R, chain.Q, chain.B, input_names=["F1", "F2"],
                     output_names=["v1", "v2"])
    comp = surrogate_component("chain", save(chain, tmp_path / "chain.json"))
    json_system = System({"chain": comp, "spring": fmu_system.components["spring"]},
                         fmu_system.connections, fmu_system.bonds)
    a = run(fmu_system, 5.0, 0.05, "fixed", progress=False)
    b = run(json_system, 5.0, 0.05, "fixed", progress=False)
    assert comp.path is not None and comp.path.suffix == ".fmu"
    assert str(b.status.values[0]) == "ok"
    scale = np.abs(a["spring.F"].values).max()
    # the benchmark FMU integrates with Dormand-Prince at rtol 1e-8, the exported surrogate steps
    # exactly: measured 2.3e-10 (v1) and 7.0e-10 (F) of the force scale
    for k in ("chain.v1", "spring.F"):
        assert np.abs(a[k].values - b[k].values).max() < 5e-9 * scale


def test_drop_in_surrogate_brings_its_signed_ports_and_operating_point(tmp_path):
    from fmu_surrogate.ph import PortedSystem, PortMap

    core = LinearPH([[0.0]], [[0.1]], [[2.0]], [[1.0, 0.0]], S=[[0.0, 0.0], [0.0, 0.3]])
    wiring = PortMap(("i_out", "mod"), ("v",), ("A", None), ("V",), Tu=[[-1.0, 0.0], [0.0, 1.0]],
                     cu=[0.0, 0.0], Ty=[[1.0, 0.0]], Cx=[[0.0]], Du=[[0.0, 0.0]], cy=[0.0])
    path = save(PortedSystem(core, wiring, x0=[0.75]), tmp_path / "ported.json")
    comp = surrogate_component("bat", path)
    assert comp.ports == {"i_out": ("u", 0, -1), "mod": ("u", 1, 1), "v": ("y", 0, 1)}
    assert comp.ph.n_states == 1 and comp.x0.tolist() == [0.75]
    measured = PortMap(("i_out", "mod"), ("v", "q"), ("A", None), ("V", "C"),
                       Tu=[[-1.0, 0.0], [0.0, 1.0]], cu=[0.0, 0.0], Ty=[[1.0, 0.0], [0.0, 0.0]],
                       Cx=[[0.0], [1.0]], Du=np.zeros((2, 2)), cy=[0.0, 0.0])
    save(PortedSystem(core, measured), tmp_path / "measured.json")
    with pytest.raises(CouplingError, match="'q' is not one pH port"):
        surrogate_component("bat", tmp_path / "measured.json")
