"""The round trip of a drop-in surrogate: a PortedSystem with a nonzero operating point,
feedthrough (P, S, N), a constant source (cu) and a measured output (Cx, Du, cy) -> save ->
load -> export_fmu (FMI 2 and 3, co-simulation and model exchange) -> the exported FMU in fmpy and
in libcosim reproduces ``fs.ph.simulate`` of the loaded surrogate from the same initial state,
the exported one (``x_start`` as exported) and one set through the ``x_start`` parameters.

Co-simulation steps the linear surrogate exactly for the input held over a step; the reference
is ``ph.simulate`` extrapolated to that exact step (tests/export/_reference.py).  An output read
after a step carries the feedthrough of the input held over that step, the reference's that of
the input at the step's end: the difference ``(u_read − u) Dᵀ`` is taken out, with
``D = Ty D_ph Tu + Du`` the external feedthrough (as in tests/export/test_wiring.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.export import export_fmu
from fmu_surrogate.ph import PortedSystem, load, save, simulate
from tests.export._reference import extrapolated
from tests.export.test_wiring import X0, ported

H_STEP, T_END = 0.02, 2.0
X1 = np.array([-0.2, 0.5, 0.1])  # another initial state, set through x_start[i]
INS, OUTS, STATES = ("F", "u3"), ("v", "q", "i3"), ("x1", "x2", "x3")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    return load(save(ported(), tmp_path_factory.mktemp("roundtrip") / "drop.json"))


@pytest.fixture(scope="module")
def fmus(loaded, tmp_path_factory):
    d = tmp_path_factory.mktemp("roundtrip-fmu")
    return {v: export_fmu(loaded, d / f"drop{v}.fmu", fmi_version=v) for v in (2, 3)}


def _inputs():
    t = np.arange(0.0, T_END + H_STEP / 2, H_STEP)
    return t, np.column_stack([np.sin(3 * t), 0.5 * np.cos(2 * t)])


def _start(x0):
    return {} if x0 is None else {f"x_start[{i + 1}]": float(v) for i, v in enumerate(x0)}


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


def test_the_file_keeps_everything(loaded):
    sur = ported()
    assert isinstance(loaded, PortedSystem) and loaded.ports == sur.ports
    assert np.array_equal(loaded.x0, X0)
    for key in ("J", "R", "Q", "B", "P", "S", "N"):
        assert np.array_equal(getattr(loaded.system, key), getattr(sur.system, key)), key
    assert loaded.system.has_feedthrough and loaded.ports.source_ports.tolist() == [0, 1, 0]
    assert np.any(loaded.ports.Cx) and np.any(loaded.ports.Du) and np.any(loaded.ports.cy)
    t, U = _inputs()
    # exact floats in the file: the same simulation bit for bit
    assert np.array_equal(simulate(loaded, t, U).y, simulate(sur, t, U).y)


@pytest.mark.parametrize("x0", [None, X1], ids=["exported-x0", "x_start-set"])
@pytest.mark.parametrize("version", [2, 3])
def test_fmpy_co_simulation_reproduces_simulate(loaded, fmus, version, x0):
    from fmpy import simulate_fmu

    t, U = _inputs()
    sig = np.zeros(t.size, dtype=[("time", float), ("F", float), ("u3", float)])
    sig["time"], sig["F"], sig["u3"] = t, U[:, 0], U[:, 1]
    r = simulate_fmu(str(fmus[version]), fmi_type="CoSimulation", stop_time=T_END,
                     output_interval=H_STEP, input=sig, start_values=_start(x0),
                     output=[*OUTS, *INS, *STATES])
    X = np.column_stack([r[s] for s in STATES])
    Y = np.column_stack([r[s] for s in OUTS])
    Y -= (np.column_stack([r[s] for s in INS]) - U) @ loaded.feedthrough.T
    ref = extrapolated(loaded, t, U, x0=x0)
    assert np.array_equal(X[0], X0 if x0 is None else X1)
    # the exact step vs ph.simulate extrapolated to a zero sub-step: measured 3.0e-14 (x) and
    # 3.3e-14 (y) relative from x0, 1.5e-14 from X1 (FMI 2 and 3 alike): round-off
    assert _rel(X, ref["x"]) < 1e-12 and _rel(Y, ref["y"]) < 1e-12


@pytest.mark.parametrize("x0", [None, X1], ids=["exported-x0", "x_start-set"])
@pytest.mark.parametrize("version", [2, 3])
def test_fmpy_model_exchange_within_the_solver_tolerance(loaded, fmus, version, x0):
    from fmpy import simulate_fmu

    if version == 3:
        pytest.importorskip("fmpy.fmi3")
    # fmpy's CVode sees an input only at the output points (tests/export/fmi/
    # test_fmu_export.py), so a constant input, for which the exact step is the exact solution
    uc = np.array([0.7, -0.4])
    sig = np.zeros(2, dtype=[("time", float), ("F", float), ("u3", float)])
    sig["time"], sig["F"], sig["u3"] = [0.0, T_END], uc[0], uc[1]
    t, _ = _inputs()
    ref = extrapolated(loaded, t, np.tile(uc, (t.size, 1)), x0=x0)
    errors = []
    for tol in (1e-10, 1e-12):
        r = simulate_fmu(str(fmus[version]), fmi_type="ModelExchange", stop_time=T_END,
                         output_interval=H_STEP, input=sig, start_values=_start(x0),
                         output=[*OUTS, *STATES], relative_tolerance=tol)
        X = np.column_stack([r[s] for s in STATES])
        assert np.allclose(r["time"], t) and np.array_equal(X[0], X0 if x0 is None else X1)
        errors.append(max(_rel(X, ref["x"]), _rel(np.column_stack([r[s] for s in OUTS]),
                                                 ref["y"])))
    # what is left is CVode's global error, proportional to its tolerance: measured 2.3e-5,
    # 2.6e-7, 5.5e-9, 1.2e-10 at rtol 1e-6, 1e-8, 1e-10, 1e-12 (about 100 tolerances: the local
    # errors of 100 output intervals add up), from x0 and from X1 alike.  So the tightest
    # tolerance CVode takes (1e-12) with a bound 4x the measurement, and the error must fall
    # with the tolerance (x45 measured): a wrong model or start would not.
    assert errors[1] < 5e-10 and errors[0] > 10 * errors[1]


def _libcosim(fmu, t, U, x0):
    from fmpy import read_model_description
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimManipulator import CosimManipulator
    from libcosimpy.CosimObserver import CosimObserver
    from libcosimpy.CosimSlave import CosimLocalSlave

    log_output_level(CosimLogLevel.ERROR)
    vr = {v.name: v.valueReference for v in read_model_description(str(fmu)).modelVariables}
    ex = CosimExecution.from_step_size(round(H_STEP * 1e9))
    i = ex.add_local_slave(CosimLocalSlave(str(fmu), "drop"))
    assert i >= 0
    for name, value in _start(x0).items():
        ex.real_initial_value(i, vr[name], value)
    for name, value in zip(INS, U[0]):
        ex.real_initial_value(i, vr[name], float(value))
    drive = CosimManipulator.create_override()
    ex.add_manipulator(drive)
    obs = CosimObserver.create_last_value()
    ex.add_observer(obs)
    rows = []
    for k in range(t.size - 1):  # the input at the step's start, held over the step
        assert drive.slave_real_values(i, [vr[n] for n in INS], [float(v) for v in U[k]])
        assert ex.step(1)
        rows.append(obs.last_real_values(i, [vr[n] for n in (*STATES, *OUTS, *INS)]))
    return np.array(rows)


@pytest.mark.parametrize("x0", [None, X1], ids=["exported-x0", "x_start-set"])
def test_libcosim_co_simulation_reproduces_simulate(loaded, fmus, x0):
    pytest.importorskip("libcosimpy")
    t, U = _inputs()
    got = _libcosim(fmus[2], t, U, x0)
    X, Y, U_read = got[:, :3], got[:, 3:6], got[:, 6:]
    # libcosim holds the input set before a step over that step
    assert np.array_equal(U_read, U[:-1])
    Y = Y - (U_read - U[1:]) @ loaded.feedthrough.T
    ref = extrapolated(loaded, t, U, x0=x0)
    # the same exact steps as in fmpy: measured 3.1e-14 (x), 3.3e-14 (y) relative from x0,
    # 1.5e-14 and 1.6e-14 from X1: round-off
    assert _rel(X, ref["x"][1:]) < 1e-12 and _rel(Y, ref["y"][1:]) < 1e-12
