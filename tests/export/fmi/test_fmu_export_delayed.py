"""Exported surrogates with a delayed feedthrough (``PortedSystem(..., delayed_feedthrough=True)``):
in co-simulation the outputs at a communication point see the inputs the last step held, as the
FMU they stand for.  Run the way the harvest runs FMUs (the package's fmpy backend: inputs set at
``t_k``, outputs read, then the step), the FMUs reproduce ``fs.ph.simulate(ported, t, u,
hold="zoh")`` to round-off; an input set between steps leaves the outputs alone; the
``<ModelStructure>`` says that the co-simulation outputs depend on no input."""

import json

import numpy as np
import pytest

from fmu_surrogate.export import export_fmu
from fmu_surrogate.fmu.backends.fmpy_instance import FmpyBackend
from fmu_surrogate.ph import PortedSystem, save, simulate
from fmu_surrogate.ph.port_map import PortMap
from tests.export._reference import extrapolated
from tests.export.fmi.test_fmu_export_feedthrough import _feedthrough_ph
from tests.export.fmi.test_fmu_export_port_law import STEP
from tests.export.fmi.test_fmu_export_port_law import ported as nonlinear_ported
from tests.export.fmi.test_structure import _structure

HC, T_END = 0.05, 1.0
X0 = np.array([0.8, -0.4, 0.3, 0.5])
BEFORE = {"linear": np.array([0.7, -1.2]), "nonlinear": np.array([0.9])}


def _linear(before):
    """The LinearPH with P, S, N behind a wiring with a measured feedthrough ``Du`` of u1."""
    core = _feedthrough_ph()
    pm = PortMap(("u1", "u2"), ("y1", "y2"), (None, None), (None, None), Tu=np.eye(2),
                 cu=np.zeros(2), Ty=np.eye(2), Cx=np.zeros((2, 4)), Du=[[0.3, 0.0], [0.0, 0.0]],
                 cy=[0.1, 0.0])
    return PortedSystem(core, pm, X0, delayed_feedthrough=True, inputs_before=before)


def _nonlinear(before):
    """The NonlinearPH with P, S, N and S_nl(u) of test_fmu_export_port_law, input v."""
    p = nonlinear_ported()
    return PortedSystem(p.system, p.ports, p.x0, delayed_feedthrough=True, inputs_before=before)


MAKE = {"linear": _linear, "nonlinear": _nonlinear}


def _case(kind, given):
    return MAKE[kind](BEFORE[kind] if given else None)


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("delayed")
    return {(kind, given, v): export_fmu(_case(kind, given), d / f"{kind}{int(given)}{v}.fmu",
                                         fmi_version=v, step=STEP)
            for kind in MAKE for given in (False, True) for v in (2, 3)}


def _inputs(ps, seed):
    """A random walk through both signs on the communication grid (held over each step)."""
    t = np.arange(0.0, T_END + HC / 2, HC)
    U = np.cumsum(np.random.default_rng(seed).normal(size=(t.size, ps.n_inputs)), axis=0) * 0.4
    return t, U


def _harvest(fmu, ps, t, U):
    """The FMU run by the harvest's backend: outputs and H at the communication points."""
    b = FmpyBackend(interface="cs")
    b.open(fmu)
    names = list(ps.output_names) + ["H"]
    out = b.run({}, {n: U[:, k] for k, n in enumerate(ps.input_names)}, t, names)
    b.close()
    assert out.error is None and out.n_done == t.size
    return np.column_stack([out.values[n] for n in ps.output_names]), out.values["H"]


def _reference(kind, ps, t, U):
    """fs.ph.simulate on the FMU's grid: the linear FMU steps exactly (ph.simulate extrapolated
    to a zero sub-step, tests/export/_reference.py), the nonlinear one with the scheme on its
    internal grid STEP (the input and the delay held over each communication step)."""
    if kind == "linear":
        ref = extrapolated(ps, t, U, keys=("y", "H"))
        return ref["y"], ref["H"]
    k = round(HC / STEP)
    tf = np.linspace(t[0], t[-1], (t.size - 1) * k + 1)
    tr = simulate(ps, tf, np.concatenate([np.repeat(U[:-1], k, axis=0), U[-1:]]), hold="zoh")
    return tr.y[::k], tr.H[::k]


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max()


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("given", [False, True], ids=["first-inputs", "inputs-before"])
@pytest.mark.parametrize("kind", ["linear", "nonlinear"])
def test_co_simulation_reproduces_ph_simulate(fmus, kind, given, version):
    ps = _case(kind, given)
    t, U = _inputs(ps, 7)
    Y, H = _harvest(fmus[kind, given, version], ps, t, U)
    Y_ref, H_ref = _reference(kind, ps, t, U)
    # linear: the exact step against Romberg-extrapolated ph.simulate (measured 6.8e-16 (y),
    # 2.4e-15 (H) relative); nonlinear: the same AVF steps and Newton iterations in another
    # summation order, bounded by the Newton tolerance 1e-12 of both (measured 1.1e-16, 1.6e-16)
    assert _rel(Y, Y_ref) <= 1e-12
    assert _rel(H, H_ref) <= 1e-12
    # the first outputs: the operating point and the inputs held before, a few products
    # (measured ≤ 1.8e-15 on outputs of order 1)
    first = ps.inputs_before if given else U[0]
    assert np.allclose(Y[0], ps.outputs(ps.x0, first), rtol=1e-13, atol=1e-14)
    # the delay is there: the outputs of the current inputs are another signal (a difference of
    # the order of the feedthrough times the input steps, ≥ 1e-2 relative here)
    y_now = ps.outputs(np.zeros((t.size, ps.n_states)), U)
    y_seen = ps.outputs(np.zeros((t.size, ps.n_states)), ps.inputs_seen_by_outputs(U))
    assert _rel(y_now, y_seen) > 1e-2


class _Slave:
    """A co-simulation instance of an exported FMU (FMI 2 or 3) driven call by call."""

    def __init__(self, path, version):
        from fmpy import read_model_description
        from fmpy.fmi2 import FMU2Slave
        from fmpy.fmi3 import FMU3Slave

        from tests.export._unzip import extracted

        md = read_model_description(str(path))
        self.v3 = version == 3
        self.inst = (FMU3Slave if self.v3 else FMU2Slave)(
            guid=md.guid, unzipDirectory=extracted(str(path)),
            modelIdentifier=md.coSimulation.modelIdentifier, instanceName="d")
        self.vr = {v.name: v.valueReference for v in md.modelVariables}
        self.inst.instantiate()

    def start(self, values):
        """Set start values, initialise."""
        if not self.v3:
            self.inst.setupExperiment(startTime=0.0)
        self.set(values)
        self.inst.enterInitializationMode()
        self.inst.exitInitializationMode()

    def set(self, values):
        vrs, vals = [self.vr[k] for k in values], [float(x) for x in values.values()]
        (self.inst.setFloat64 if self.v3 else self.inst.setReal)(vrs, vals)

    def get(self, names):
        vrs = [self.vr[k] for k in names]
        return np.array(self.inst.getFloat64(vrs) if self.v3 else self.inst.getReal(vrs))

    def step(self, t, h):
        self.inst.doStep(t, h)


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("kind", ["linear", "nonlinear"])
def test_an_input_changes_the_outputs_after_the_next_step_only(fmus, kind, version):
    ps = _case(kind, True)
    outs = list(ps.output_names)
    u0, u1 = np.full(ps.n_inputs, 0.4), np.linspace(-1.0, 1.5, ps.n_inputs)
    ins = dict(zip(ps.input_names, u0))
    s = _Slave(fmus[kind, True, version], version)
    s.start(ins)
    y0 = s.get(outs)
    # the start: the operating point and inputs_before, not the inputs set (measured ≤ 1.8e-15
    # on outputs of order 1)
    assert np.allclose(y0, ps.outputs(ps.x0, ps.inputs_before), rtol=1e-14, atol=1e-15)
    s.set(dict(zip(ps.input_names, u1)))
    assert np.array_equal(s.get(outs), y0)  # bit for bit: nothing moved
    state = s.inst.getFMUState()  # the held inputs are part of the FMU state
    s.step(0.0, HC)
    y1 = s.get(outs)
    s.inst.setFMUState(state)
    assert np.array_equal(s.get(outs), y0)
    s.step(0.0, HC)
    assert np.array_equal(s.get(outs), y1)
    # after the step: the state it reached with u1 held and the outputs of u1 (the reference
    # holds u1 over the step; measured 1.5e-14 (linear, the exact step against the
    # extrapolation) and 4.4e-16 on outputs of 3.7)
    Y_ref, _ = _reference(kind, ps, np.array([0.0, HC]), np.vstack([u1, u1]))
    assert np.allclose(s.get(outs), Y_ref[1], rtol=1e-12, atol=1e-14)
    # a reset starts over: inputs_before again; a new <input>_before is what the outputs see
    s.inst.reset()
    before = {f"{n}_before": -0.5 for n in ps.input_names}
    s.start({**ins, **before})
    y_new = ps.outputs(ps.x0, np.full(ps.n_inputs, -0.5))
    assert np.allclose(s.get(outs), y_new, rtol=1e-14, atol=1e-15)
    assert not np.allclose(y_new, y0)
    s.inst.freeFMUState(state)
    s.inst.terminate()
    s.inst.freeInstance()


@pytest.mark.parametrize("version", [2, 3])
def test_model_structure_has_no_input_dependencies_in_co_simulation(fmus, tmp_path, version):
    from fmpy import read_model_description
    from fmpy.validation import validate_fmu

    states = {f"x_start[{i + 1}]" for i in range(4)}
    for given in (False, True):
        fmu = fmus["linear", given, version]
        assert validate_fmu(str(fmu)) == []
        md = read_model_description(str(fmu))
        assert md.modelExchange is None and md.coSimulation is not None
        got = _structure(fmu)
        # outputs depend on no input; at the start on the states' start values and on what
        # the outputs see there: the parameters <input>_before, else the inputs (D is lower
        # triangular: y1 reads u1 only, y2 both)
        name = "{}_before" if given else "{}"
        for y, seen in (("y1", ["u1"]), ("y2", ["u1", "u2"])):
            assert got[y][0] == set()
            assert got[y][1] == states | {name.format(u) for u in seen}
        assert got["H"][0] == set() and got["energy_residual"][0] == set()
        names = {v.name for v in md.modelVariables}
        assert ({"u1_before", "u2_before"} <= names) == given
        assert not {"x1", "der(x1)", "energy_dissipated"} & names  # the states are internal
    # with model exchange too, one <ModelStructure> for both: the direct feedthrough (that of
    # the same surrogate without delay), and at the start also the parameters <input>_before
    both = export_fmu(_linear(BEFORE["linear"]), tmp_path / f"both{version}.fmu",
                      fmi_version=version, model_exchange=True)
    plain = export_fmu(_feedthrough_ph(), tmp_path / f"plain{version}.fmu", fmi_version=version,
                       x0=X0)
    assert validate_fmu(str(both)) == []
    got, ref = _structure(both), _structure(plain)
    for y in ("y1", "y2"):
        assert got[y][0] == ref[y][0] and "u1" in got[y][0]
        assert got[y][1] == ref[y][1] | {f"{u}_before" for u in ref[y][1] & {"u1", "u2"}}


def test_model_exchange_part_is_the_continuous_time_model(tmp_path):
    from fmpy import simulate_fmu

    ps = _linear(BEFORE["linear"])
    fmu = export_fmu(ps, tmp_path / "me.fmu", model_exchange=True)
    sig = np.zeros(2, dtype=[("time", float), ("u1", float), ("u2", float)])
    sig["time"], sig["u1"], sig["u2"] = [0.0, 1.0], 0.6, -0.3
    r = simulate_fmu(str(fmu), fmi_type="ModelExchange", stop_time=0.0, output_interval=0.1,
                     input=sig, output=["y1", "y2"])
    # at t = 0 the model exchange outputs see the inputs themselves, not inputs_before
    # (a few products: round-off)
    assert np.allclose([r["y1"][0], r["y2"][0]], ps.outputs(ps.x0, [0.6, -0.3]), rtol=1e-14)


def test_a_saved_delayed_surrogate_exports_through_the_cli(tmp_path, capsys):
    from fmu_surrogate.cli.main import main

    ps = _case("nonlinear", True)
    path = save(ps, tmp_path / "delayed.json")
    assert json.loads(path.read_text())["version"] == 3
    out = tmp_path / "delayed.fmu"
    assert main(["export", str(path), "--fmu", str(out)]) == 0
    t, U = _inputs(ps, 8)
    Y, H = _harvest(out, ps, t, U)
    # one step per communication step (the CLI's default), as ph.simulate on that grid: the
    # same scheme and Newton tolerance (measured 1.5e-16 (outputs), 5.5e-16 (H))
    tr = simulate(ps, t, U, hold="zoh")
    assert _rel(Y, tr.y) <= 1e-12 and _rel(H, tr.H) <= 1e-12


def test_the_surrogate_of_a_stepped_vendor_damper_is_harvested_like_it(benchmark_fmus, tmp_path):
    """End to end: the identified surrogate of power_damper_stepped (outputs computed in doStep
    only), exported, gives the harvest the vendor FMU gives on an input neither has seen —
    first sample (the law of the velocity set at initialisation) included."""
    import fmu_surrogate as fs
    from tests.identify.nonlinear.conftest import DT, T, identified_power_damper, multisine

    vendor = benchmark_fmus["power_damper_stepped"]
    sur = identified_power_damper(vendor)
    assert sur.delayed_feedthrough and sur.inputs_before is None
    fmu = export_fmu(sur, tmp_path / "stepped_surrogate.fmu")
    sig = [{"v": fs.signals.ArraySignal(*multisine(7, 1.2, (0.2, 5.0)), interpolation="zoh")}]
    a, b = (fs.harvest(f, None, signals=sig, stop_time=T, step=DT, progress=False, workers=1)
            for f in (vendor, fmu))
    F, F_sur = a["F"].values[0], b["F"].values[0]
    # measured 5e-6 of the peak force (the fit's error at 1.2x the training amplitude)
    assert np.abs(F_sur - F).max() <= 1e-3 * np.abs(F).max()
    assert F_sur[0] == pytest.approx(F[0], rel=1e-3)
