"""Exported nonlinear pH surrogates reproduce fmu_surrogate.ph.simulate (same scheme and step)."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fmu_surrogate.benchmarks import rc_network
from fmu_surrogate.export import ExportError, export_fmu
from fmu_surrogate.ph import PHDAE, CompositeEffort, KernelEffort, LinearEffort, simulate

HC, STEP, T_END = 0.05, 0.01, 3.0


def _kernel_oscillator():
    """A damped oscillator whose Hamiltonian is a Gaussian-kernel expansion (a GP surrogate's)."""
    rng = np.random.default_rng(3)
    eff = KernelEffort(rng.uniform(-1.5, 1.5, size=(8, 2)), np.zeros((8, 2)), 1.0,
                       differential=[0, 1], h_weights=0.2 * rng.normal(size=(8, 2)),
                       h_lengthscale=[0.9, 1.1])
    return PHDAE(np.eye(2), [[0, 1], [-1, 0]], np.diag([0.0, 0.1]), [[0.0], [1.0]], eff,
                 hamiltonian=eff.hamiltonian, input_names=["u"], output_names=["y"])


def _rc_like():
    """The RC network's structure (index-1 pH-DAE) with a kernel Hamiltonian for x1."""
    rng = np.random.default_rng(4)
    k1 = KernelEffort(rng.uniform(0.5, 3.0, size=(6, 1)), np.zeros((6, 1)), 1.0, differential=[0],
                      h_weights=0.3 * rng.normal(size=(6, 1)), h_lengthscale=[1.2],
                      h_linear=[1.0])
    lin = LinearEffort(np.eye(2), np.zeros((2, 2)))
    eff = CompositeEffort([k1, lin], [1, 2], [k1.hamiltonian, lin.hamiltonian])
    m = rc_network.matrices()
    return PHDAE(m["E"], m["J"], m["R"], m["B"], eff, hamiltonian=eff.hamiltonian,
                 input_names=["u"], output_names=["y"])


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("nl")
    return {"ode": export_fmu(_kernel_oscillator(), d / "ode.fmu", step=STEP),
            "ode3": export_fmu(_kernel_oscillator(), d / "ode3.fmu", step=STEP, fmi_version=3),
            "dae": export_fmu(_rc_like(), d / "dae.fmu", step=STEP)}


def _signal(u):
    t = np.arange(0.0, T_END + HC / 2, HC)
    sig = np.zeros(t.size, dtype=[("time", float), ("u", float)])
    sig["time"], sig["u"] = t, u(t)
    return t, sig


def _python(system, t, sig, x0):
    """ph.simulate on the internal grid with the input held over each communication step."""
    k = round(HC / STEP)
    tf = np.linspace(t[0], t[-1], (t.size - 1) * k + 1)
    uf = np.append(np.repeat(sig["u"][:-1], k), sig["u"][-1])
    return simulate(system, tf, uf, x0, hold="zoh"), k


@pytest.mark.parametrize("key", ["ode", "ode3"])
def test_kernel_surrogate_reproduces_ph_simulate(fmus, key):
    from fmpy import simulate_fmu

    t, sig = _signal(lambda t: np.sin(2 * t))
    x0 = np.array([0.5, -0.3])
    r = simulate_fmu(str(fmus[key]), stop_time=T_END, output_interval=HC, input=sig,
                     start_values={"x_start[1]": x0[0], "x_start[2]": x0[1]},
                     output=["x1", "x2", "y", "H", "energy_residual"])
    tr, k = _python(_kernel_oscillator(), t, sig, x0)
    X = np.column_stack([r["x1"], r["x2"]])
    # the same AVF steps, Newton to 1e-12: measured 4.4e-16 (states), 1.1e-16 (y), 1.7e-16 (H)
    assert np.abs(X - tr.x[::k]).max() < 1e-12 * np.abs(tr.x).max()
    assert np.abs(r["y"] - tr.y[::k, 0]).max() < 1e-12 * np.abs(tr.y).max()
    assert np.abs(r["H"] - tr.H[::k]).max() < 1e-12 * np.abs(tr.H).max()
    # the scheme's discrete energy balance: measured 2.3e-16 on an energy scale of 0.27
    assert np.abs(r["energy_residual"]).max() < 1e-13 * tr.energy_scale


def test_index1_surrogate_reproduces_ph_simulate(fmus):
    from fmpy import simulate_fmu

    t, sig = _signal(lambda t: 1.0 + 0.5 * np.sin(t))
    x0 = np.array([2.0, 0.0, 0.0])  # algebraic part made consistent by both
    r = simulate_fmu(str(fmus["dae"]), stop_time=T_END, output_interval=HC, input=sig,
                     start_values={"x_start[1]": x0[0]}, output=["x1", "x2", "x3", "energy_residual"])
    sysm = _rc_like()
    tr, k = _python(sysm, t, sig, x0)
    # differential state: measured 1.1e-15 relative
    assert np.abs(r["x1"] - tr.x[::k, 0]).max() < 1e-12 * np.abs(tr.x[:, 0]).max()
    # algebraic states at t_k: the FMU's follow the input held up to t_k, ph.simulate's the new
    # input u(t_k) (hold="zoh" jumps at the node); with the input of the previous step they agree
    x2 = np.append(sig["u"][0], sig["u"][:-1])  # x2 = u in the RC structure
    assert np.abs(r["x2"] - x2).max() < 1e-12  # measured 0
    assert np.abs(r["energy_residual"]).max() < 1e-13  # measured 2.9e-15
    first = simulate(sysm, tr.t[: k + 1], [sig["u"][0]] * (k + 1), x0, hold="zoh")
    assert r["x3"][1] == pytest.approx(first.x[-1, 2], rel=1e-12)  # measured 4e-16


def test_kernel_surrogate_model_exchange_within_solver_tolerance(fmus):
    from fmpy import simulate_fmu

    sysm, x0, u = _kernel_oscillator(), np.array([0.5, -0.3]), 0.4
    sig = np.zeros(2, dtype=[("time", float), ("u", float)])
    sig["time"], sig["u"] = [0.0, T_END], u
    r = simulate_fmu(str(fmus["ode"]), fmi_type="ModelExchange", stop_time=T_END,
                     output_interval=HC, input=sig, start_values={"x_start[1]": x0[0], "x_start[2]": x0[1]},
                     output=["x1", "x2", "energy_residual"], relative_tolerance=1e-8)
    ref = solve_ivp(lambda _t, x: sysm.flow(x, [u]), (0.0, T_END), x0, t_eval=r["time"],
                    rtol=1e-12, atol=1e-12)
    X = np.column_stack([r["x1"], r["x2"]])
    # CVode at rtol 1e-8: measured 1.2e-6 relative (global error over 60 output intervals)
    assert np.abs(X - ref.y.T).max() < 5e-6 * np.abs(ref.y).max()
    assert np.abs(r["energy_residual"]).max() < 5e-7  # measured 6.5e-8


def test_index1_model_exchange_solves_the_algebraic_part(fmus):
    from fmpy import simulate_fmu

    sysm = _rc_like()
    sig = np.zeros(2, dtype=[("time", float), ("u", float)])
    sig["time"], sig["u"] = [0.0, T_END], 1.0
    r = simulate_fmu(str(fmus["dae"]), fmi_type="ModelExchange", stop_time=T_END,
                     output_interval=HC, input=sig, start_values={"x_start[1]": 2.0},
                     output=["x1", "x2", "x3"], relative_tolerance=1e-8)

    def rhs(_t, x1):  # x2 = u, x3 from the second algebraic row (T z + B u)_1 = 0
        z1 = sysm.effort(np.array([x1[0], 1.0, 0.0]))[0]
        return [-(z1 - 1.0)]  # G = 1: x1' = -G (z1 - u)

    ref = solve_ivp(rhs, (0.0, T_END), [2.0], t_eval=r["time"], rtol=1e-12, atol=1e-12)
    # CVode at rtol 1e-8: measured 1.3e-7 relative
    assert np.abs(r["x1"] - ref.y[0]).max() < 5e-7 * np.abs(ref.y[0]).max()
    assert np.allclose(r["x2"], 1.0, rtol=0, atol=1e-12)


def test_directional_derivatives_of_a_kernel_surrogate(fmus):
    from ctypes import POINTER, c_double

    from fmpy import read_model_description
    from fmpy.fmi2 import FMU2Model

    from tests.export._unzip import extracted

    f = str(fmus["ode"])
    md = read_model_description(f)
    inst = FMU2Model(guid=md.guid, unzipDirectory=extracted(f),
                     modelIdentifier=md.modelExchange.modelIdentifier, instanceName="d")
    inst.instantiate()
    inst.setupExperiment(startTime=0.0)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    inst.enterInitializationMode()
    inst.exitInitializationMode()
    inst.enterContinuousTimeMode()
    knowns = [vr["x1"], vr["x2"], vr["u"]]
    unknowns = [vr["der(x1)"], vr["der(x2)"], vr["y"], vr["H"], vr["der(energy_supplied)"]]
    w0, seed, eps = np.array([0.3, -0.2, 0.7]), np.array([0.6, -0.8, 0.5]), 1e-6

    def values(w):
        x = np.array([w[0], w[1], 0.0, 0.0])
        inst.setContinuousStates(x.ctypes.data_as(POINTER(c_double)), x.size)
        inst.setReal([vr["u"]], [w[2]])
        return np.array(inst.getReal(unknowns))

    values(w0)
    dd = np.array(inst.getDirectionalDerivative(unknowns, knowns, list(seed)))
    fd = (values(w0 + eps * seed) - values(w0 - eps * seed)) / (2 * eps)
    # analytic Jacobian of the kernel expansion vs central differences: measured 6.5e-11
    assert np.abs(dd - fd).max() < 1e-8 * np.abs(fd).max()
    inst.terminate()
    inst.freeInstance()


def test_nonexportable_nonlinear_surrogates_are_refused(tmp_path):
    eff = KernelEffort(np.zeros((1, 2)), np.zeros((1, 2)), 1.0)
    eff.X = np.zeros((0, 2))  # an empty expansion (a damaged object)
    eff.weights = np.zeros((0, 2))
    sysm = PHDAE(np.eye(2), [[0, 1], [-1, 0]], np.zeros((2, 2)), [[1.0], [0.0]], eff)
    with pytest.raises(ExportError, match="kernel expansion is empty"):
        export_fmu(sysm, tmp_path / "e.fmu")
    nan = KernelEffort(np.zeros((1, 2)), np.zeros((1, 2)), 1.0)
    nan.weights = np.array([[np.nan, 0.0]])
    sysm = PHDAE(np.eye(2), [[0, 1], [-1, 0]], np.zeros((2, 2)), [[1.0], [0.0]], nan)
    with pytest.raises(ExportError, match="NaN"):
        export_fmu(sysm, tmp_path / "n.fmu")


def test_fmu_state_keeps_the_scheme_history(fmus):
    """The Newton predictor extrapolates from the previous step: it is part of the FMU state."""
    from tests.export._unzip import cs_slave

    inst, vr = cs_slave(fmus["ode"])
    inst.setReal([vr["x_start[1]"], vr["x_start[2]"]], [0.5, -0.3])
    inst.enterInitializationMode()
    inst.exitInitializationMode()
    inst.setReal([vr["u"]], [0.3])
    inst.doStep(0.0, 0.05)
    blob = inst.serializeFMUstate(inst.getFMUstate())
    out = [vr["x1"], vr["x2"], vr["energy_residual"], vr["energy_dissipated"]]
    inst.doStep(0.05, 0.05)
    inst.doStep(0.1, 0.05)
    first = inst.getReal(out)
    inst.setFMUstate(inst.deSerializeFMUstate(blob))
    inst.doStep(0.05, 0.05)
    inst.doStep(0.1, 0.05)
    assert inst.getReal(out) == first  # the same iterations from the same history: bit for bit
    inst.terminate()
    inst.freeInstance()
