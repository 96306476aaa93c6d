"""Exported surrogates with late outputs (``PortedSystem(..., late_outputs=True)``): in
co-simulation the outputs read at a communication point are those of the point before, state
and inputs, as the output-then-update generated code they stand for.  Run the way the harvest
runs FMUs (the package's fmpy backend: inputs set at ``t_k``, outputs read, then the step), the
FMUs reproduce ``fs.ph.simulate(ported, t, u, hold="zoh")`` to round-off, the first two points
included; between steps the outputs stay frozen; ``H`` is the core's at the current time; the
``<ModelStructure>`` says that the outputs depend on no input; model exchange is refused."""

import json

import numpy as np
import pytest

from fmu_surrogate.export import export_fmu
from fmu_surrogate.export.expressions.effort import ExportError
from fmu_surrogate.export.fmi.spec import surrogate_spec
from fmu_surrogate.export.wiring import wiring
from fmu_surrogate.ph import PortedSystem, PortMap, save, simulate
from tests.export._reference import extrapolated
from tests.export.fmi.test_fmu_export_delayed import X0, _harvest, _inputs, _rel, _Slave
from tests.export.fmi.test_fmu_export_feedthrough import _feedthrough_ph
from tests.export.fmi.test_fmu_export_port_law import ported as nonlinear_ported
from tests.export.fmi.test_fmu_export_static_law import linear as linear_law
from tests.export.fmi.test_fmu_export_static_law import nonlinear as nonlinear_law
from tests.export.fmi.test_structure import _structure

HC = 0.05  # the communication grid of _inputs/_harvest (delayed tests)


def _linear():
    """The LinearPH with P, S, N behind a wiring with a measured feedthrough ``Du`` of u1."""
    pm = PortMap(("u1", "u2"), ("y1", "y2"), (None, None), (None, None), Tu=np.eye(2),
                 cu=np.zeros(2), Ty=np.eye(2), Cx=np.zeros((2, 4)), Du=[[0.3, 0.0], [0.0, 0.0]],
                 cy=[0.1, 0.0])
    return PortedSystem(_feedthrough_ph(), pm, X0)


#: the surrogates without late outputs: linear and nonlinear cores, with and without a static
#: law of the inputs (the nonlinear ones with a constant source port)
PLAIN = {"linear": _linear, "linear-law": linear_law, "nonlinear": nonlinear_ported,
         "nonlinear-law": nonlinear_law}
#: FMI versions compiled per case (compilation is the cost); nonlinear-law: the CLI test
VERSIONS = {"linear": (3,), "linear-law": (2, 3), "nonlinear": (3,)}


def _late(kind):
    p = PLAIN[kind]()
    return PortedSystem(p.system, p.ports, p.x0, late_outputs=True)


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    # nonlinear cores one AVF step per communication step (step=None), as ph.simulate on the
    # communication grid
    d = tmp_path_factory.mktemp("late")
    return {(kind, v): export_fmu(_late(kind), d / f"{kind}{v}.fmu", fmi_version=v)
            for kind, versions in VERSIONS.items() for v in versions}


def _reference(kind, ps, t, U):
    """``ph.simulate(ps, t, U, hold="zoh")`` as the FMU steps: the nonlinear FMU runs the same
    scheme on the same grid; the linear one steps exactly, so the surrogate without late outputs
    is extrapolated to a zero sub-step (tests/export/_reference.py) and its outputs are read one
    point later, as ``ps.sampled_outputs`` does (refining the grid of a late surrogate itself
    would move its outputs by one sub-step)."""
    if kind.startswith("nonlinear"):
        tr = simulate(ps, t, U, hold="zoh")
        return tr.y, tr.H
    ref = extrapolated(PLAIN[kind](), t, U, keys=("y", "H"))
    return ps.sampled_outputs(ref["y"]), ref["H"]


CASES = [(kind, v) for kind, versions in VERSIONS.items() for v in versions]


@pytest.mark.parametrize(("kind", "version"), CASES, ids=[f"{k}-fmi{v}" for k, v in CASES])
def test_co_simulation_reproduces_ph_simulate(fmus, kind, version):
    ps = _late(kind)
    t, U = _inputs(ps, 7)
    Y, H = _harvest(fmus[kind, version], ps, t, U)
    Y_ref, H_ref = _reference(kind, ps, t, U)
    # linear: the exact step against Romberg-extrapolated ph.simulate (measured 6.8e-16 and
    # 1.2e-16 relative); nonlinear: the same AVF steps and Newton iterations in another
    # summation order, bounded by the Newton tolerance 1e-12 of both (measured 2.2e-16)
    assert _rel(Y, Y_ref) <= 1e-12
    # H is the core's at the current time, not late (measured 2.4e-15, 3.0e-14 linear (the
    # extrapolation's round-off), 1.6e-16 nonlinear)
    assert _rel(H, H_ref) <= 1e-12
    # the first two points: both the outputs of the start (operating point, first inputs),
    # the same evaluation twice (bit for bit), a few products from the Python model (measured
    # ≤ 1.8e-15 on outputs of order 1)
    np.testing.assert_array_equal(Y[1], Y[0])
    assert np.allclose(Y[0], ps.outputs(ps.x0, U[0]), rtol=1e-13, atol=1e-14)
    # the outputs are late: the current ones are another signal (a difference of the order of
    # the outputs' change over one step, measured ≥ 0.38 relative here)
    assert _rel(Y[1:], Y_ref[:-1]) > 1e-2


@pytest.mark.parametrize(("kind", "version"), [("linear-law", 2), ("nonlinear", 3)])
def test_the_outputs_stay_those_of_the_start_of_the_step(fmus, kind, version):
    ps = _late(kind)
    outs = list(ps.output_names)
    u0, u1, u2 = (np.full(ps.n_inputs, a) + np.arange(ps.n_inputs) * 0.1 for a in (0.4, -0.6, 1.1))
    s = _Slave(fmus[kind, version], version)
    s.start(dict(zip(ps.input_names, u0)))
    # before the first step: the outputs of the state and the inputs set (round-off)
    assert np.allclose(s.get(outs), ps.outputs(ps.x0, u0), rtol=1e-13, atol=1e-14)
    s.set(dict(zip(ps.input_names, u1)))
    y0 = s.get(outs)
    assert np.allclose(y0, ps.outputs(ps.x0, u1), rtol=1e-13, atol=1e-14)
    h0 = s.get(["H"])
    s.step(0.0, HC)
    # after the step: the outputs it started from, bit for bit (the same evaluation), while H
    # moved on with the state
    np.testing.assert_array_equal(s.get(outs), y0)
    assert abs(s.get(["H"])[0] - h0[0]) > 1e-6
    s.set(dict(zip(ps.input_names, u2)))
    np.testing.assert_array_equal(s.get(outs), y0)  # an input set between steps: no change
    state = s.inst.getFMUState()  # the frozen outputs are part of the FMU state
    s.step(HC, HC)
    y2 = s.get(outs)
    s.inst.setFMUState(state)
    np.testing.assert_array_equal(s.get(outs), y0)
    s.step(HC, HC)
    np.testing.assert_array_equal(s.get(outs), y2)
    # the second step's outputs: the state after the first step (u1 held) and u2, the outputs
    # of point 1 of the surrogate without late outputs (tolerances as in
    # test_co_simulation_reproduces_ph_simulate)
    t = np.array([0.0, HC, 2 * HC])
    Y_ref, _ = _reference(kind, ps, t, np.vstack([u1, u2, u2]))
    assert np.allclose(y2, Y_ref[2], rtol=1e-12, atol=1e-14)
    # a reset starts over: the outputs of the start state and the inputs set
    s.inst.reset()
    s.start(dict(zip(ps.input_names, u2)))
    assert np.allclose(s.get(outs), ps.outputs(ps.x0, u2), rtol=1e-13, atol=1e-14)
    s.inst.freeFMUState(state)
    s.inst.terminate()
    s.inst.freeInstance()


@pytest.mark.parametrize("version", [2, 3])
def test_model_structure_has_no_input_dependencies(fmus, version):
    from fmpy import read_model_description
    from fmpy.validation import validate_fmu

    kind = "linear-law" if version == 2 else "linear"
    fmu = fmus[kind, version]
    assert validate_fmu(str(fmu)) == []
    md = read_model_description(str(fmu))
    assert md.modelExchange is None and md.coSimulation is not None
    assert not md.coSimulation.providesDirectionalDerivative
    got = _structure(fmu)
    # the same surrogate without late outputs, co-simulation only: its outputs' dependencies
    # (the feedthrough, the law) are the ones the late outputs drop; at the start the late
    # outputs are those of the start state and inputs, so the initial dependencies are the same
    spec = surrogate_spec(wiring(PLAIN[kind]()), "plain", model_exchange=False)
    plain = {v.name: v for v in spec.variables}
    ps = _late(kind)
    for y in ps.output_names:
        assert got[y][0] == set() and set(plain[y].dependencies) & set(ps.input_names)
        assert got[y][1] == set(plain[y].initial_dependencies)
        assert got[y][1] & set(ps.input_names)
    assert got["H"][0] == set() and got["energy_residual"][0] == set()
    names = {v.name for v in md.modelVariables}
    assert not {"der(energy_dissipated)", "energy_dissipated"} & names  # the states internal


def test_model_exchange_is_refused(tmp_path, capsys):
    from fmu_surrogate.cli.main import main
    from fmu_surrogate.errors import FmuSurrogateError

    ps = _late("linear")
    assert wiring(ps).late and not wiring(PLAIN["linear"]()).late
    with pytest.raises(ExportError, match="late outputs.*co-simulation only") as err:
        export_fmu(ps, tmp_path / "me.fmu", model_exchange=True)
    assert isinstance(err.value, FmuSurrogateError) and not (tmp_path / "me.fmu").exists()
    path = save(ps, tmp_path / "late.json")
    assert main(["export", str(path), "--fmu", str(tmp_path / "me.fmu"),
                 "--interfaces", "cs+me"]) == 2
    assert "--interfaces cs" in capsys.readouterr().err


def test_a_saved_late_surrogate_exports_through_the_cli(tmp_path, capsys):
    from fmu_surrogate.cli.main import main

    ps = _late("nonlinear-law")
    path = save(ps, tmp_path / "late.json")
    doc = json.loads(path.read_text())
    assert doc["version"] == 4 and doc["late_outputs"] is True
    out = tmp_path / "late.fmu"
    assert main(["export", str(path), "--fmu", str(out)]) == 0
    assert "co-simulation, outputs those of the point before" in capsys.readouterr().out
    t, U = _inputs(ps, 8)
    Y, H = _harvest(out, ps, t, U)
    # one step per communication step (the CLI's default), as ph.simulate on that grid: the
    # same scheme and Newton tolerance 1e-12 (measured 2.8e-17 (outputs), 9.7e-17 (H))
    tr = simulate(ps, t, U, hold="zoh")
    assert _rel(Y, tr.y) <= 1e-12 and _rel(H, tr.H) <= 1e-12
    np.testing.assert_array_equal(Y[1], Y[0])
