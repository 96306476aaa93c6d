"""Driven inputs and recorded variables of a coupled system: the TOML forms, the checks, the
zero-order hold on libcosim's communication grid and in the monolithic algorithm."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.linalg import expm

from fmu_surrogate.benchmarks.vendor import power_damper
from fmu_surrogate.couple.inputs import driven_signal
from fmu_surrogate.couple.monolithic import run_monolithic
from fmu_surrogate.couple.running import run
from fmu_surrogate.couple.system import Component, Connection, CouplingError, System
from fmu_surrogate.couple.toml_form import read_toml, write_toml
from fmu_surrogate.couple.validation import validate
from fmu_surrogate.fmu.signals import Chirp, Constant, Step
from fmu_surrogate.ph import LinearPH

SYSTEM = Path(power_damper.__file__).parents[1] / "systems" / "braked_mass.toml"
M2 = 1.5  # mass of the driven free mass


@pytest.fixture
def folder(benchmark_fmus, tmp_path):
    for name in ("free_mass", "power_damper"):
        (tmp_path / f"{name}.fmu").symlink_to(benchmark_fmus[name])
    return tmp_path


def _with_driven_mass(folder: Path, extra: str) -> System:
    """braked_mass.toml plus a second free mass whose force follows a signal."""
    text = SYSTEM.read_text(encoding="utf-8")
    head = 'record = ["free.v", "mass.der(v)", "brake.c"]\n\n'
    body = (f'\n[components.free]\nfmu = "free_mass.fmu"\nparameters = {{ m = {M2}, v0 = 0.3 }}\n'
            + extra)
    (folder / "s.toml").write_text(head + text + body, encoding="utf-8")
    return read_toml(folder / "s.toml")


def test_the_three_written_forms_of_a_driven_input():
    assert driven_signal("a.u", "step:t0=0.1,after=12", "f") == Step(t0=0.1, after=12.0)
    assert driven_signal("a.u", 2.5, "f") == Constant(2.5)
    assert driven_signal("a.u", {"kind": "chirp", "f0": 0.1, "f1": 5, "t1": 10}, "f") == Chirp(
        f0=0.1, f1=5.0, t1=10.0)
    with pytest.raises(CouplingError, match=r"f: driven input a\.u: .*levels.*write e\.g\."):
        driven_signal("a.u", "prbs:levels=1:2:3", "f")
    with pytest.raises(CouplingError, match="not 'component.variable'"):
        driven_signal("au", 1.0, "f")


def test_toml_inputs_and_record_round_trip(folder):
    s = _with_driven_mass(folder, '\n[inputs]\n"free.F" = "step:t0=0.25,before=1,after=-2"\n')
    assert s.inputs == {"free.F": Step(t0=0.25, before=1.0, after=-2.0)}
    assert s.record == ["free.v", "mass.der(v)", "brake.c"]
    back = read_toml(write_toml(s, folder / "back.toml"))
    assert back.inputs == s.inputs and back.record == s.record
    # the table form
    t = _with_driven_mass(folder, '\n[inputs."free.F"]\nkind = "step"\nt0 = 0.25\nafter = -2\n')
    assert t.inputs == {"free.F": Step(t0=0.25, after=-2.0)}


def test_a_driven_input_is_held_over_each_step_and_recorded(folder):
    s = _with_driven_mass(folder, '\n[inputs]\n"free.F" = "step:t0=0.25,before=1,after=-2"\n')
    ds = run(s, 0.5, 0.1, progress=False)
    assert str(ds.status.values[0]) == "ok"
    # row k holds the value applied on [t_k, t_k+1): the step at 0.25 shows from t = 0.3 on
    np.testing.assert_array_equal(ds["free.F"].values[0], [1, 1, 1, -2, -2, -2])
    # m v' = -F with F held: v_k+1 = v_k - F_k h / m, exact for the FMU's integrator on a
    # constant derivative (round-off: measured 1e-16)
    F = ds["free.F"].values[0]
    v = 0.3 - np.concatenate([[0.0], np.cumsum(F[:-1] * 0.1 / M2)])
    np.testing.assert_allclose(ds["free.v"].values[0], v, rtol=0, atol=1e-14)
    # recorded variables no connection touches, row 0 included: a parameter, a local
    np.testing.assert_array_equal(ds["brake.c"].values[0], 4.0)
    F_rod = power_damper.force(2.0)  # the damper's force at t = 0 (v0 = 2)
    assert ds["mass.der(v)"].values[0, 0] == pytest.approx(-F_rod / 2.0, rel=1e-15)


def test_driven_inputs_follow_the_signal_under_ecco(folder):
    s = _with_driven_mass(folder, '\n[inputs]\n"free.F" = 0.6\n')
    ds = run(s, 0.5, 0.1, "ecco", progress=False)
    t = ds.time.values
    # a constant force: v = v0 - F t / m on whatever grid ECCO picks
    np.testing.assert_allclose(ds["free.v"].values[0], 0.3 - 0.6 * t / M2, rtol=0, atol=1e-12)


@pytest.mark.parametrize("ref, value, match", [
    ("free.v", 1.0, r"driven input free\.v has causality 'output'; only inputs .*'F'"),
    ("free.Fx", 1.0, r"component 'free' has no variable 'Fx'. Did you mean \['F'\]"),
    ("nobody.F", 1.0, r"driven input nobody\.F names component .nobody., which the system"),
    ("mass.F", 1.0, r"driven input mass\.F is connected \(brake\.F -> mass\.F\); .* drop the "),
    ("free.m", 1.0, "causality 'parameter'"),
])
def test_a_bad_driven_input_is_named_with_the_fix(folder, ref, value, match):
    s = _with_driven_mass(folder, "")
    s.inputs[ref] = driven_signal(ref, value, "test")
    with pytest.raises(CouplingError, match=match):
        validate(s)


def test_a_driven_input_with_a_start_value_and_a_bad_record_are_refused(folder):
    s = _with_driven_mass(folder, "")
    s.components["free"].parameters["F"] = 1.0
    s.inputs["free.F"] = Constant(2.0)
    with pytest.raises(CouplingError, match="also has a start value .* drop one"):
        validate(s)
    s = _with_driven_mass(folder, "")
    s.record.append("free.vv")
    with pytest.raises(CouplingError, match=r"recorded variable free\.vv: .* Did you mean"):
        validate(s)


def test_monolithic_drives_a_free_pH_input_with_the_same_hold():
    """A mass with two force ports, one bonded to a spring–damper with feedthrough, one driven."""
    m, k, c = 0.5, 3.0, 0.4
    mass = LinearPH([[0.0]], [[0.0]], [[1 / m]], [[1.0, 1.0]])
    sd = LinearPH([[0.0]], [[0.0]], [[k]], [[1.0]], S=[[c]])
    comps = {
        "mass": Component("mass", None, ph=mass, x0=[0.0], ports={
            "F": ("u", 0, -1), "v": ("y", 0, 1), "Fext": ("u", 1, 1)}),
        "sd": Component("sd", None, ph=sd, ports={"v": ("u", 0, 1), "F": ("y", 0, 1)}),
    }
    sig = Step(t0=0.3, before=0.0, after=2.0)
    system = System(comps, [Connection.parse("mass.v", "sd.v"), Connection.parse("sd.F", "mass.F")],
                    inputs={"mass.Fext": sig})
    errs = []
    for h in (0.01, 0.005):
        ds = run_monolithic(system, 2.0, h)
        t = ds.time.values
        np.testing.assert_array_equal(ds["mass.Fext"].values[0], sig(t))
        # the exact step for the held input: the energy balance is exact to round-off
        assert abs(ds.attrs["energy_residual"]) < 1e-12
        # reference: the exact zero-order-hold discretisation of p' = -k ξ - c v + F, ξ' = v
        A = np.array([[-c / m, -k], [1 / m, 0.0]])
        Phi = expm(np.block([[A, np.array([[1.0], [0.0]])], [np.zeros((1, 3))]]) * h)
        x, v = np.zeros(2), [0.0]
        for tk in t[:-1]:
            x = Phi[:2, :2] @ x + Phi[:2, 2] * float(sig(tk))
            v.append(x[0] / m)
        errs.append(np.abs(ds["mass.v"].values[0] - v).max() / np.abs(v).max())
    # ph.simulate steps a linear system exactly for held inputs (method "exact", the default
    # there): equal to the zero-order-hold discretisation to round-off
    assert max(errs) < 1e-12
    with pytest.raises(CouplingError, match="no free pH input .*free inputs: \\['mass.Fext'\\]"):
        run_monolithic(System(comps, system.connections, inputs={"mass.F": sig}), 1.0, h)


def test_a_sampled_signal_must_cover_the_run(folder):
    from fmu_surrogate.fmu.signals import ArraySignal

    s = _with_driven_mass(folder, "")
    s.inputs["free.F"] = ArraySignal(np.array([0.0, 0.3]), np.array([1.0, 2.0]))
    with pytest.raises(CouplingError, match=r"driven input 'free.F': .* ends at t = 0.3.*"
                                            r"before the experiment's stop time 0.5"):
        run(s, 0.5, 0.1, progress=False)
    ds = run(s, 0.3, 0.1, progress=False)  # linear between the samples, held over each step
    np.testing.assert_allclose(ds["free.F"].values[0], [1.0, 4 / 3, 5 / 3, 2.0], rtol=1e-15)
