"""Exported linear pH surrogate FMUs against the exact solution (scipy expm), in fmpy and libcosim."""

import numpy as np
import pytest
from scipy.integrate import quad_vec
from scipy.linalg import expm

from fmu_surrogate.export import ExportError, export_fmu
from fmu_surrogate.ph import LinearPH, save

N, M = 5, 2
H_STEP, T_END = 0.01, 2.0
X0 = np.array([1.0, -0.5, 0.2, 0.0, 0.3])


def _random_ph(seed=0):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(N, N))
    L = 0.3 * rng.normal(size=(N, N))
    P = rng.normal(size=(N, N))
    # structure by construction: J skew, R = L Lᵀ ⪰ 0, Q = P Pᵀ + n I ≻ 0
    return LinearPH(G - G.T, L @ L.T, P @ P.T + N * np.eye(N), rng.normal(size=(N, M)),
                    input_names=["F in", "u2"], output_names=["y1", "y2"])


@pytest.fixture(scope="module")
def system():
    return _random_ph()


@pytest.fixture(scope="module")
def fmus(system, tmp_path_factory):
    d = tmp_path_factory.mktemp("export")
    return {2: export_fmu(system, d / "lin2.fmu"), 3: export_fmu(system, d / "lin3.fmu",
                                                                  fmi_version=3)}


def _grid_inputs():
    t = np.arange(0.0, T_END + H_STEP / 2, H_STEP)
    U = np.column_stack([np.sin(3 * t), np.cos(2 * t)])
    sig = np.zeros(t.size, dtype=[("time", float), ("F_in", float), ("u2", float)])
    sig["time"], sig["F_in"], sig["u2"] = t, U[:, 0], U[:, 1]
    return t, U, sig


def _zoh(system, t, U, x0):
    """Exact solution for inputs held over each step: exp([[A, B], [0, 0]] h)."""
    A, B, C = system.state_space()
    Mb = np.zeros((N + M, N + M))
    Mb[:N, :N], Mb[:N, N:] = A, B
    X = [x0]
    for k in range(t.size - 1):
        Phi = expm(Mb * (t[k + 1] - t[k]))
        X.append((Phi @ np.concatenate([X[-1], U[k]]))[:N])
    X = np.array(X)
    return X, X @ C.T


def _start():
    return {f"x_start[{i + 1}]": X0[i] for i in range(N)}


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize("version", [2, 3])
def test_co_simulation_is_the_exact_zoh_solution(system, fmus, version):
    from fmpy import simulate_fmu

    t, U, sig = _grid_inputs()
    _, Y = _zoh(system, t, U, X0)
    r = simulate_fmu(str(fmus[version]), fmi_type="CoSimulation", stop_time=T_END,
                     output_interval=H_STEP, input=sig, start_values=_start(),
                     output=["y1", "y2", "H", "energy_residual"])
    assert np.allclose(r["time"], t)
    # measured 2.0e-15: the same discretisation up to round-off (target 1e-6)
    assert _rel(np.column_stack([r["y1"], r["y2"]]), Y) < 1e-13
    X = _zoh(system, t, U, X0)[0]
    assert _rel(r["H"], 0.5 * np.einsum("ij,jk,ik->i", X, system.Q, X)) < 1e-13  # measured 3e-16
    # exact step + Van Loan energy integrals: measured |residual| 5.2e-14 on energies of ~10
    assert np.abs(r["energy_residual"]).max() < 1e-12


@pytest.mark.parametrize("version", [2, 3])
def test_model_exchange_within_the_solver_tolerance(system, fmus, version):
    from fmpy import simulate_fmu

    if version == 3:
        pytest.importorskip("fmpy.fmi3")
    # fmpy's CVode applies inputs only at output points (its RHS does not interpolate them), so a
    # time-varying input is not a well-defined reference: a constant input is
    uc = np.array([0.7, -0.4])
    sig = np.zeros(2, dtype=[("time", float), ("F_in", float), ("u2", float)])
    sig["time"], sig["F_in"], sig["u2"] = [0.0, T_END], uc[0], uc[1]
    t = np.arange(0.0, T_END + H_STEP / 2, H_STEP)
    _X, Y = _zoh(system, t, np.tile(uc, (t.size, 1)), X0)
    r = simulate_fmu(str(fmus[version]), fmi_type="ModelExchange", stop_time=T_END,
                     output_interval=H_STEP, input=sig, start_values=_start(),
                     output=["y1", "y2", "energy_residual", "energy_dissipated"],
                     relative_tolerance=1e-8)
    # measured 3.2e-7 at rtol 1e-8 (CVode's global error is a few tolerances)
    assert _rel(np.column_stack([r["y1"], r["y2"]]), Y) < 2e-6
    # the energy integrals are states integrated by CVode: residual measured 9.3e-7
    assert np.abs(r["energy_residual"]).max() < 5e-6


def test_energy_integrals_match_scipy_quadrature(system, fmus):
    """Dissipated and supplied energy of one exact step against quad_vec of the exact solution."""
    from fmpy import simulate_fmu

    h, u = 0.37, np.array([0.8, -1.1])
    A, B, C = system.state_space()

    def x(s):
        Mb = np.zeros((N + M, N + M))
        Mb[:N, :N], Mb[:N, N:] = A, B
        return (expm(Mb * s) @ np.concatenate([X0, u]))[:N]

    diss = quad_vec(lambda s: x(s) @ system.Q @ system.R @ system.Q @ x(s), 0, h,
                    epsabs=1e-14, epsrel=1e-13)[0]
    supp = quad_vec(lambda s: (C @ x(s)) @ u, 0, h, epsabs=1e-14, epsrel=1e-13)[0]
    sig = np.zeros(2, dtype=[("time", float), ("F_in", float), ("u2", float)])
    sig["time"], sig["F_in"], sig["u2"] = [0.0, h], u[0], u[1]
    r = simulate_fmu(str(fmus[2]), fmi_type="CoSimulation", stop_time=h, output_interval=h,
                     input=sig, start_values=_start(),
                     output=["energy_dissipated", "energy_supplied", "energy_residual"])
    # Van Loan's exponential vs adaptive quadrature: measured 4.4e-16 / 2.2e-15 relative
    assert r["energy_dissipated"][-1] == pytest.approx(diss, rel=1e-11)
    assert r["energy_supplied"][-1] == pytest.approx(supp, rel=1e-11)
    assert abs(r["energy_residual"][-1]) < 1e-13 * diss  # measured 5e-16 · diss


def test_model_description_validates_and_carries_names(fmus):
    from fmpy import read_model_description
    from fmpy.validation import validate_fmu

    for f in fmus.values():
        assert validate_fmu(str(f)) == []
        md = read_model_description(str(f))
        names = {v.name: v for v in md.modelVariables}
        # "F in" is not an identifier: sanitised, and the mapping recorded
        assert "F_in" in names and "'F in' -> F_in" in md.description
        assert names["F_in"].causality == "input" and names["y1"].causality == "output"
        assert names["H"].causality == "output" and names["energy_residual"].causality == "output"
        assert names["x1"].causality == "local"
    md2 = read_model_description(str(fmus[2]))
    assert md2.coSimulation.providesDirectionalDerivative
    assert md2.modelExchange is not None and md2.modelExchange.providesDirectionalDerivative
    assert md2.coSimulation.canGetAndSetFMUstate


def _instantiated(fmu, fmi_type="CoSimulation"):
    from fmpy import read_model_description
    from fmpy.fmi2 import FMU2Model, FMU2Slave

    from tests.export._unzip import extracted

    md = read_model_description(str(fmu))
    cls = FMU2Slave if fmi_type == "CoSimulation" else FMU2Model
    inst = cls(guid=md.guid, unzipDirectory=extracted(fmu),
               modelIdentifier=md.coSimulation.modelIdentifier, instanceName="t")
    inst.instantiate()
    inst.setupExperiment(startTime=0.0)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    inst.setReal([vr[f"x_start[{i + 1}]"] for i in range(N)], list(X0))
    inst.enterInitializationMode()
    inst.exitInitializationMode()
    return inst, vr


def test_get_and_set_fmu_state_round_trip(fmus):
    inst, vr = _instantiated(fmus[2])
    out = [vr["y1"], vr["y2"], vr["energy_residual"], vr["x3"]]
    inst.setReal([vr["F_in"], vr["u2"]], [0.5, -0.2])
    inst.doStep(0.0, 0.1)
    saved = inst.getFMUstate()
    blob = inst.serializeFMUstate(saved)
    inst.doStep(0.1, 0.25)
    first = inst.getReal(out)
    inst.setFMUstate(saved)
    inst.doStep(0.1, 0.25)
    assert inst.getReal(out) == first  # the same arithmetic: bit for bit
    inst.setFMUstate(inst.deSerializeFMUstate(blob))
    inst.doStep(0.1, 0.25)
    assert inst.getReal(out) == first
    inst.freeFMUstate(saved)
    inst.terminate()
    inst.freeInstance()


def test_directional_derivatives_match_finite_differences(system, fmus):
    inst, vr = _instantiated(fmus[2], "ModelExchange")
    inst.enterContinuousTimeMode()
    u = np.array([0.3, -0.7])
    inst.setReal([vr["F_in"], vr["u2"]], list(u))
    xs = [vr[f"x{i + 1}"] for i in range(N)]
    knowns = xs + [vr["F_in"], vr["u2"]]
    unknowns = [vr[f"der(x{i + 1})"] for i in range(N)] + [vr["y1"], vr["y2"], vr["H"],
                                                           vr["der(energy_dissipated)"]]
    rng = np.random.default_rng(1)
    seed = rng.normal(size=len(knowns))
    dd = np.array(inst.getDirectionalDerivative(unknowns, knowns, list(seed)))
    base = np.concatenate([X0, u])
    eps = 1e-6

    from ctypes import POINTER, c_double

    def values(w):
        x = np.concatenate([w[:N], [0.0, 0.0]])  # the model-exchange states end with the energies
        inst.setContinuousStates(x.ctypes.data_as(POINTER(c_double)), x.size)
        inst.setReal([vr["F_in"], vr["u2"]], list(w[N:]))
        return np.array(inst.getReal(unknowns))

    fd = (values(base + eps * seed) - values(base - eps * seed)) / (2 * eps)
    # central differences of a quadratic: exact up to round-off, measured 6.7e-11 relative
    assert np.abs(dd - fd).max() < 1e-9 * np.abs(fd).max()
    A, B, _C = system.state_space()
    assert np.allclose(dd[:N], A @ seed[:N] + B @ seed[N:], rtol=1e-12, atol=1e-12)
    inst.terminate()
    inst.freeInstance()


def test_libcosim_runs_the_exported_fmu(system, fmus):
    pytest.importorskip("libcosimpy")
    from fmpy import read_model_description
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver
    from libcosimpy.CosimSlave import CosimLocalSlave

    log_output_level(CosimLogLevel.ERROR)

    vr = {v.name: v.valueReference for v in read_model_description(str(fmus[2])).modelVariables}
    ex = CosimExecution.from_step_size(round(H_STEP * 1e9))
    i = ex.add_local_slave(CosimLocalSlave(str(fmus[2]), "sur"))
    assert i >= 0
    u = np.array([0.6, -0.3])
    for k in range(N):
        ex.real_initial_value(i, vr[f"x_start[{k + 1}]"], float(X0[k]))
    for name, val in zip(["F_in", "u2"], u):
        ex.real_initial_value(i, vr[name], float(val))
    obs = CosimObserver.create_last_value()
    ex.add_observer(obs)
    steps = 50
    assert ex.simulate_until(round(steps * H_STEP * 1e9))
    y = obs.last_real_values(i, [vr["y1"], vr["y2"]])
    t = np.arange(steps + 1) * H_STEP
    _, Y = _zoh(system, t, np.tile(u, (t.size, 1)), X0)
    # measured 2.9e-15 relative: libcosim holds the input over each step like fmpy
    assert _rel(np.asarray(y), Y[-1]) < 1e-12


def test_surrogate_json_exports_with_units_and_caches(system, tmp_path):
    path = save(system, tmp_path / "s.json", units={"inputs": ["N", "N"], "outputs": ["m/s", None]})
    fmu = export_fmu(path, tmp_path / "s.fmu", model_name="my model")
    from fmpy import read_model_description

    md = read_model_description(str(fmu))
    assert md.coSimulation.modelIdentifier == "my_model"
    units = {v.name: v.unit for v in md.modelVariables}
    assert (units["F_in"], units["u2"], units["y1"], units["y2"]) == ("N", "N", "m/s", None)
    mtime = fmu.stat().st_mtime_ns
    export_fmu(path, tmp_path / "s.fmu", model_name="my model")  # unchanged inputs: cached
    assert fmu.stat().st_mtime_ns == mtime


def test_bad_surrogates_are_refused(system, tmp_path):
    bad = _random_ph()
    bad.B = bad.B.copy()
    bad.B[0, 0] = np.nan
    with pytest.raises(ExportError, match="matrix B contains NaN"):
        export_fmu(bad, tmp_path / "bad.fmu")
    with pytest.raises(ExportError, match="fmi_version must be 2 or 3"):
        export_fmu(system, tmp_path / "v.fmu", fmi_version=1)
    with pytest.raises(ExportError, match="cannot export a dict"):
        export_fmu({"J": 1}, tmp_path / "d.fmu")
    with pytest.raises(ExportError, match="step must be a positive"):
        export_fmu(system, tmp_path / "s.fmu", step=-1.0)
    dae = LinearPH(system.J, system.R, system.Q, system.B, E=np.diag([1.0, 1, 1, 1, 0]))
    with pytest.raises(ExportError, match="singular E"):
        export_fmu(dae, tmp_path / "dae.fmu")


def test_fmi3_state_round_trip_and_directional_derivatives(system, fmus):
    from fmpy import read_model_description
    from fmpy.fmi3 import FMU3Slave

    from tests.export._unzip import extracted

    f = str(fmus[3])
    md = read_model_description(f)
    inst = FMU3Slave(guid=md.guid, unzipDirectory=extracted(f),
                     modelIdentifier=md.coSimulation.modelIdentifier, instanceName="t3")
    inst.instantiate()
    vr = {v.name: v.valueReference for v in md.modelVariables}
    xs = [vr[f"x{i + 1}"] for i in range(N)]
    inst.enterInitializationMode(startTime=0.0)
    inst.setFloat64([vr[f"x_start[{i + 1}]"] for i in range(N)], list(X0))
    inst.exitInitializationMode()
    inst.setFloat64([vr["F_in"], vr["u2"]], [0.5, -0.2])
    inst.doStep(0.0, 0.1)
    saved = inst.getFMUState()
    inst.doStep(0.1, 0.2)
    first = inst.getFloat64([vr["y1"], vr["y2"], vr["time"]])
    inst.setFMUState(saved)
    inst.doStep(0.1, 0.2)
    assert inst.getFloat64([vr["y1"], vr["y2"], vr["time"]]) == first
    assert first[2] == pytest.approx(0.3, abs=1e-15)
    seed = [1.0, 0.0, 0.0, 0.0, 0.0, 0.5, -2.0]
    dd = inst.getDirectionalDerivative([vr["y1"], vr["der(x2)"]], xs + [vr["F_in"], vr["u2"]],
                                       seed)
    A, B, C = system.state_space()
    assert dd[0] == pytest.approx(C[0] @ seed[:N], rel=1e-14)  # y is linear: exact
    assert dd[1] == pytest.approx(A[1] @ seed[:N] + B[1] @ seed[N:], rel=1e-14)
    inst.freeFMUState(saved)
    inst.terminate()
    inst.freeInstance()


@pytest.mark.parametrize("version", [2, 3])
def test_x0_is_the_start_value_of_the_x_start_parameters(system, tmp_path, version):
    from fmpy import read_model_description, simulate_fmu

    fmu = export_fmu(system, tmp_path / "x0.fmu", fmi_version=version, x0=X0)
    md = read_model_description(str(fmu))
    names = {v.name: v for v in md.modelVariables}
    for i in range(N):
        p = names[f"x_start[{i + 1}]"]
        assert (p.causality, p.variability) == ("parameter", "fixed")
        assert float(p.start) == X0[i]
        assert names[f"x{i + 1}"].initial == "calculated"
    from tests.export._reference import extrapolated

    t, U, sig = _grid_inputs()
    # fs.ph.simulate from x0, extrapolated to the exact step (tests/export/_reference.py)
    ref = extrapolated(system, t, U, X0)
    # no start values given: the FMU starts from x0
    r = simulate_fmu(str(fmu), stop_time=T_END, output_interval=H_STEP, input=sig,
                     output=["y1", "y2", "x1", "x2", "x3", "x4", "x5"])
    X = np.column_stack([r[f"x{i + 1}"] for i in range(N)])
    assert np.array_equal(X[0], X0)
    # measured 2.3e-14 (x) and 3.9e-14 (y) relative: the exact step and ph.simulate's
    # extrapolation agree to round-off
    assert _rel(X, ref["x"]) < 1e-12
    assert _rel(np.column_stack([r["y1"], r["y2"]]), ref["y"]) < 1e-12
    # a user sets another initial state through the parameters
    x1 = -X0
    r = simulate_fmu(str(fmu), stop_time=T_END, output_interval=H_STEP, input=sig,
                     start_values={f"x_start[{i + 1}]": x1[i] for i in range(N)},
                     output=["y1", "y2"])
    assert _rel(np.column_stack([r["y1"], r["y2"]]), _zoh(system, t, U, x1)[1]) < 1e-13
    with pytest.raises(ExportError, match="x0 must be 5 finite numbers"):
        export_fmu(system, tmp_path / "bad.fmu", x0=[1.0, 2.0])
