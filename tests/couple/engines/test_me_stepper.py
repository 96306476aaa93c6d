"""Model-exchange-only FMUs in a coupled system: stepped by CVODE between the communication
points of the fmpy master, against the same models' co-simulation FMUs on libcosim."""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from fmu_surrogate.couple.running import run
from fmu_surrogate.couple.system import Component, Connection, CouplingError
from fmu_surrogate.couple.toml_form import read_toml
from fmu_surrogate.couple.validation import describe
from fmu_surrogate.testing.fmus import build_faulty

pytest.importorskip("libcosimpy")


def _me_only(src: Path, dst: Path) -> Path:
    """A copy of ``src`` whose model description offers model exchange only."""
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w") as zo:
        for item in zi.infolist():
            data = zi.read(item.filename)
            if item.filename == "modelDescription.xml":
                data = re.sub(rb"<CoSimulation\b[^>]*/>|<CoSimulation\b.*?</CoSimulation>", b"",
                              data, flags=re.DOTALL)
            zo.writestr(item, data)
    assert not describe(dst).co_simulation
    return dst


def test_a_model_exchange_spring_swings_the_mass_as_its_co_simulation_twin(
        benchmark_fmus, tmp_path):
    import fmu_surrogate.benchmarks

    toml = Path(fmu_surrogate.benchmarks.__file__).parent / "systems" / "sprung_mass.toml"
    shutil.copy(toml, tmp_path)
    shutil.copy(benchmark_fmus["free_mass"], tmp_path / "free_mass.fmu")
    shutil.copy(benchmark_fmus["progressive_spring"], tmp_path / "progressive_spring.fmu")
    cs = run(read_toml(tmp_path / toml.name), 2.0, 1e-3, progress=False)
    _me_only(benchmark_fmus["progressive_spring_me"], tmp_path / "progressive_spring.fmu")
    system = read_toml(tmp_path / toml.name)
    me = run(system, 2.0, 1e-3, progress=False)
    assert (cs.attrs["engine"], me.attrs["engine"]) == ("libcosim", "fmpy")
    assert str(me.status.values[0]) == "ok"
    # x' = v with v held over a step is linear in time: CVODE (BDF, rtol 1e-10) integrates it
    # to round-off, as the co-simulation FMU's RK4 does (measured 2.4e-14 m/s, 3.9e-13 N)
    for v in ("mass.v", "spring.F"):
        a, b = cs[v].values[0], me[v].values[0]
        assert np.abs(a - b).max() < 1e-9 * np.abs(a).max()
    with pytest.raises(CouplingError, match="model-exchange FMU; libcosim co-simulates"):
        run(system, 0.1, 1e-3, progress=False, engine="libcosim")


def test_a_model_exchange_lag_follows_its_input_and_fails_with_its_reason(system_factory,
                                                                         tmp_path):
    faulty = _me_only(build_faulty(tmp_path), tmp_path / "faulty_me.fmu")
    s = system_factory()
    s.components["lag"] = Component("lag", faulty, {"k": 2.0, "x0": 0.5})
    s.connections += [Connection.parse("chain.v2", "lag.u")]
    s.record = ["lag.x"]
    ds = run(s, 1.0, 0.01, progress=False)
    assert ds.attrs["engine"] == "fmpy" and str(ds.status.values[0]) == "ok"
    # x' = −k x + u with u held over each step: x_{k+1} = x_k e^{−kh} + u_k (1 − e^{−kh}) / k
    u, x = ds["lag.u"].values[0], ds["lag.x"].values[0]
    e = np.exp(-2.0 * 0.01)
    ref = np.empty_like(x)
    ref[0] = 0.5
    for k in range(len(x) - 1):
        ref[k + 1] = ref[k] * e + u[k] * (1.0 - e) / 2.0
    # CVODE at rtol 1e-10 restarted every step: measured 2.7e-8 of x's swing (its local errors
    # add up over the 100 steps)
    assert np.abs(x - ref).max() < 1e-7 * np.abs(ref).max()
    for mode, what in ((4, "lag.: fmi2GetDerivatives failed"), (7, "ended the simulation")):
        s.components["lag"] = Component("lag", faulty, {"mode": mode, "t_fault": 0.5})
        bad = run(s, 1.0, 0.01, progress=False)
        assert str(bad.status.values[0]) == "failed"
        assert re.search(what, str(bad.message.values[0]))
        assert 0.45 < float(bad.time.values[-1]) < 0.55  # the steps before are kept


def _relay_reference(t: np.ndarray, k: float = 1.0, p: float = 2.0, lo: float = 1.0,
                     hi: float = 1.5, t_kick: float = 1.0, kick: float = 0.3) -> np.ndarray:
    """``x`` of the relay FMU at ``t`` (u = 0), exactly: ``x = x_s + (x_a − x_s) e^{−k(t−t_a)}``
    on each piece (``x_s = p·on/k``), the switching times solved in closed form; at ``t_kick``
    the value after the jump."""
    pieces, t_a, x_a, on, kicked = [], 0.0, 0.0, 1.0, False
    while t_a < t[-1]:
        xs, target = p * on / k, (hi if on else lo)
        ratio = (x_a - xs) / (target - xs)
        t_sw = t_a + np.log(ratio) / k if ratio > 1.0 else np.inf
        t_next = min(t_sw, np.inf if kicked else t_kick, t[-1] + 1.0)
        pieces.append((t_a, t_next, x_a, xs))
        if t_next == t_sw:
            x_a, on = target, 1.0 - on
        else:
            x_a = xs + (x_a - xs) * np.exp(-k * (t_next - t_a)) + kick
            kicked = True
            if (on and x_a >= hi) or (not on and x_a <= lo):  # the jump crosses a threshold
                on = 1.0 - on
        t_a = t_next
    out = np.empty_like(t)
    for a, b, xa, xs in pieces:
        sel = (t >= a) & (t < b)
        out[sel] = xs + (xa - xs) * np.exp(-k * (t[sel] - a))
    return out


def test_state_and_time_events_of_a_model_exchange_fmu_are_met(tmp_path):
    from fmu_surrogate.couple.inputs import driven_signal
    from fmu_surrogate.couple.system import System
    from fmu_surrogate.testing.fmus import build_relay

    system = System({"heater": Component("heater", build_relay(tmp_path))}, [],
                    inputs={"heater.u": driven_signal("heater.u", 0.0, "test")},
                    record=["heater.x", "heater.on"])
    ds = run(system, 3.0, 0.01, progress=False)
    assert ds.attrs["engine"] == "fmpy" and str(ds.status.values[0]) == "ok"
    t, x, on = ds.time.values, ds["heater.x"].values[0], ds["heater.on"].values[0]
    # the jump at t = 1 (a time event) from 1.264 to 1.564 switches the heater off (past
    # hi = 1.5); then it switches on at 1.0 and off at 1.5 (state events)
    assert set(np.unique(on)) == {0.0, 1.0} and np.count_nonzero(np.diff(on)) >= 4
    ref = _relay_reference(t)
    np.testing.assert_array_equal(np.flatnonzero(np.diff(on)) + 1, [100, 145, 215, 255])
    # CVODE at rtol 1e-10, its roots located within its tolerance: measured 8.8e-8 (x ≈ 1.5)
    assert np.abs(x - ref).max() < 1e-6


@pytest.mark.parametrize("fmi", [2, 3])
def test_an_exported_surrogate_as_model_exchange_only_steps_as_its_co_simulation_export(
        tmp_path, fmi):
    from fmu_surrogate.export import export_fmu
    from fmu_surrogate.ph import LinearPH

    # a 2 kg mass (force in, velocity out) braked by a damper F = 4 v (force out); both take
    # power in, so the force on the mass is the damper's inverted
    mass = LinearPH([[0.0]], [[0.0]], [[0.5]], [[1.0]], input_names=["F"], output_names=["v"])
    damper = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 1)),
                      S=[[4.0]], input_names=["v"], output_names=["F"])
    cs = export_fmu(mass, tmp_path / "mass.fmu", fmi_version=fmi)
    me = _me_only(cs, tmp_path / "mass_me.fmu")
    brake = export_fmu(damper, tmp_path / "brake.fmu", fmi_version=2)

    def system(path: Path):
        from fmu_surrogate.couple.system import PowerBond, System

        comps = {"mass": Component("mass", path, {"x_start[1]": 2.0 * 1.5}),
                 "brake": Component("brake", brake)}
        bond = PowerBond("rod", Connection.parse("brake.F", "mass.F", -1.0),
                         Connection.parse("mass.v", "brake.v"), {"brake": 1, "mass": 1})
        return System(comps, [], [bond])

    a = run(system(cs), 1.0, 1e-2, progress=False, engine="fmpy")
    b = run(system(me), 1.0, 1e-2, progress=False)
    assert b.attrs["engine"] == "fmpy" and str(b.status.values[0]) == "ok"
    # the co-simulation export steps exactly for the held force, and so does CVODE here: the
    # velocity is linear in time over a step (measured 1.6e-15 apart, 1.5 m/s braked to 0.19)
    va, vb = a["mass.v"].values[0], b["mass.v"].values[0]
    assert va[0] == pytest.approx(1.5, rel=1e-15) and va[-1] < 0.3
    assert np.abs(va - vb).max() < 1e-12
