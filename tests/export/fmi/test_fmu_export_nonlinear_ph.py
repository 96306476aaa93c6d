"""Exported NonlinearPH surrogates (convex energy, power-law dissipation, feedthrough, port
wiring) reproduce fmu_surrogate.ph.simulate: co-simulation to round-off, model exchange to the
solver's tolerance."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fmu_surrogate.export import export_fmu
from fmu_surrogate.ph import (
    ConvexEffort,
    NonlinearPH,
    PortedSystem,
    PowerDissipation,
    simulate,
)
from fmu_surrogate.ph.port_map import PortMap
from tests.export._reference import extrapolated

HC, STEP, T_END = 0.05, 0.01, 3.0
X0 = np.array([0.4, -0.3, 0.25])


def nonlinear_ph(seed=0):
    """n = 3, m = 2: a quartic and a logcosh ridge, two power-law dampers (p = 1/3 and 1),
    a feedthrough P, S, N with W = [[R0, P], [Pᵀ, S]] ⪰ 0 by construction."""
    r = np.random.default_rng(seed)
    n, m = 3, 2
    A = r.normal(size=(n, n))
    eff = ConvexEffort(A @ A.T + n * np.eye(n), ["quartic", "logcosh"], [0.8, 1.5],
                       r.normal(size=(2, n)))
    diss = PowerDissipation(r.normal(size=(2, n)), [0.7, 0.4], [1 / 3, 1.0], [1e-2, 0.05])
    S0 = r.normal(size=(n, n))
    L = 0.3 * r.normal(size=(n + m, n + m))
    W = L @ L.T
    N0 = r.normal(size=(m, m))
    return NonlinearPH(S0 - S0.T, W[:n, :n], r.normal(size=(n, m)), eff, diss, P=W[:n, n:],
                       S=W[n:, n:], N=0.2 * (N0 - N0.T), input_names=["u1", "u2"],
                       output_names=["y1", "y2"])


def ported():
    """The core behind an FMU's names: input F drives port 1 with the sign flipped, port 2 is a
    constant source (0.3, a parameter of the FMU); outputs v = −y1 and a measured x1 + 0.5 F."""
    pm = PortMap(("F",), ("v", "pos"), ("N",), ("m/s", "m"), Tu=[[-1.0], [0.0]], cu=[0.0, 0.3],
                 Ty=[[-1.0, 0.0], [0.0, 0.0]], Cx=[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]],
                 Du=[[0.0], [0.5]], cy=[0.0, 0.1])
    return PortedSystem(nonlinear_ph(), pm, X0)


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("nlph")
    out = {}
    for v in (2, 3):
        out["bare", v] = export_fmu(nonlinear_ph(), d / f"bare{v}.fmu", step=STEP, fmi_version=v,
                                    x0=X0)
        out["ported", v] = export_fmu(ported(), d / f"ported{v}.fmu", step=STEP, fmi_version=v)
    return out


def _inputs(names, seed):
    """Random inputs on the communication grid (held over each step by the co-simulation)."""
    t = np.arange(0.0, T_END + HC / 2, HC)
    U = 2.0 * np.random.default_rng(seed).normal(size=(t.size, len(names)))
    sig = np.zeros(t.size, dtype=[("time", float)] + [(nm, float) for nm in names])
    sig["time"] = t
    for j, nm in enumerate(names):
        sig[nm] = U[:, j]
    return t, U, sig


def _fine(system, t, U):
    """ph.simulate on the internal grid (STEP) with the input held over each communication step."""
    k = round(HC / STEP)
    tf = np.linspace(t[0], t[-1], (t.size - 1) * k + 1)
    Uf = np.concatenate([np.repeat(U[:-1], k, axis=0), U[-1:]])
    return simulate(system, tf, Uf, None if isinstance(system, PortedSystem) else X0,
                    hold="zoh"), k


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max()


@pytest.mark.parametrize("version", [2, 3])
def test_bare_co_simulation_reproduces_ph_simulate(fmus, version):
    from fmpy import simulate_fmu

    sysm = nonlinear_ph()
    t, U, sig = _inputs(["u1", "u2"], 1)
    r = simulate_fmu(str(fmus["bare", version]), stop_time=T_END, output_interval=HC, input=sig,
                     output=["x1", "x2", "x3", "y1", "y2", "u1", "u2", "H", "energy_residual"])
    tr, k = _fine(sysm, t, U)
    X = np.column_stack([r["x1"], r["x2"], r["x3"]])
    # fmpy reads the outputs after a step, before the next input: the feedthrough term of y(t_k)
    # uses the input of the step just done (the recorded one)
    U_read = np.column_stack([r["u1"], r["u2"]])
    y_ref = sysm.output_from_effort(tr.z[::k], U_read)
    # the same AVF steps and Newton iterations, evaluated in another summation order: measured
    # 7.0e-15 (x), 3.6e-15 (y), 6.6e-15 (H); 1e-12 is the Newton tolerance of both (a step
    # stops when its update is below 1e-12 relative, so iterates may differ by that much)
    assert _rel(X, tr.x[::k]) < 1e-12
    assert _rel(np.column_stack([r["y1"], r["y2"]]), y_ref) < 1e-12
    assert _rel(r["H"], tr.H[::k]) < 1e-12
    # the discrete energy balance of the scheme, with z̄ᵀR_nl(z̄)z̄ in the dissipation: measured
    # 1.4e-12 on an energy scale of 15 (as ph.simulate's own residual, 1.4e-12: the Newton
    # tolerance 1e-12 on the state times the effort)
    assert np.abs(r["energy_residual"]).max() < 1e-12 * tr.energy_scale
    assert r["energy_residual"][-1] == pytest.approx(tr.energy_residual, abs=1e-12 * tr.energy_scale)


@pytest.mark.parametrize("version", [2, 3])
def test_ported_co_simulation_reproduces_ph_simulate(fmus, version):
    from fmpy import simulate_fmu

    ps = ported()
    t, U, sig = _inputs(["F"], 2)
    r = simulate_fmu(str(fmus["ported", version]), stop_time=T_END, output_interval=HC,
                     input=sig, output=["x1", "x2", "x3", "v", "pos", "F", "H", "energy_residual",
                                        "energy_supplied_sources"])
    tr, k = _fine(ps, t, U)
    assert np.array_equal([r["x1"][0], r["x2"][0], r["x3"][0]], X0)  # starts from ps.x0
    X = np.column_stack([r["x1"], r["x2"], r["x3"]])
    # the feedthrough again with the recorded input: y_ph from z and the held port input
    U_ph = ps.inputs_to_ports(r["F"][:, None])
    Y = ps.external_outputs(tr.x[::k], r["F"][:, None],
                            ps.system.output_from_effort(tr.core.z[::k], U_ph))
    # measured 6.2e-15 (x), 2.8e-15 (outputs); bounds as in the bare test, the energy residual
    # 7.8e-12 on a scale of 16 (ph.simulate's own is as large: the Newton tolerance)
    assert _rel(X, tr.x[::k]) < 1e-12
    assert _rel(np.column_stack([r["v"], r["pos"]]), Y) < 1e-12
    assert np.abs(r["energy_residual"]).max() < 1e-12 * tr.energy_scale
    # the share of the constant source in the supplied energy (the cu part): measured 2.1e-15
    assert _rel(r["energy_supplied_sources"][-1:], tr.supplied_sources[-1:]) < 1e-12


@pytest.mark.parametrize("version", [2, 3])
def test_model_exchange_follows_the_flow_within_solver_tolerance(fmus, version):
    """ME exposes ẋ = (J − R₀ − R_nl(z)) z + (G − P) u; integrated by fmpy's CVode at rtol 1e-10
    it matches the flow of the Python model integrated by scipy at 1e-12 to CVode's global
    error, and ph.simulate on a fine grid to AVF's O(h²) error."""
    from fmpy import simulate_fmu

    ps, u = ported(), 0.8
    sig = np.zeros(2, dtype=[("time", float), ("F", float)])
    sig["time"], sig["F"] = [0.0, T_END], u
    r = simulate_fmu(str(fmus["ported", version]), fmi_type="ModelExchange", stop_time=T_END,
                     output_interval=HC, input=sig, relative_tolerance=1e-10,
                     output=["x1", "x2", "x3", "v", "energy_residual"])
    u_ph = ps.inputs_to_ports(np.array([[u]]))[0]
    ref = solve_ivp(lambda _t, x: ps.system.flow(x, u_ph), (0.0, T_END), X0, t_eval=r["time"],
                    rtol=1e-12, atol=1e-12, method="DOP853")
    X = np.column_stack([r["x1"], r["x2"], r["x3"]])
    # CVode at rtol 1e-10 over 60 output intervals: measured 1.2e-8 relative
    assert _rel(X, ref.y.T) < 5e-8
    # the energy integrals are CVode states too: the balance holds to its tolerance (measured
    # 4.1e-9 on a dissipated energy of 7.2)
    assert np.abs(r["energy_residual"]).max() < 2e-8
    # and ph.simulate, its AVF error (even powers of the step: a symmetric scheme) reduced by
    # Romberg extrapolation over 1 … 16 sub-steps per output interval (tests/export/_reference):
    # measured 1.4e-6 — what is left is AVF's, not the FMU's (the expansion in h² converges
    # slowly where the p = 1/3 damper's law bends within δ = 0.01 of rest; plain AVF at
    # h = 1e-3 is 2.1e-5 off), while the scipy reference above agrees with the FMU to 1.2e-8
    ref_avf = extrapolated(ps, r["time"], np.full(r["time"].size, u), levels=5, keys=("x",))
    assert _rel(X, ref_avf["x"]) < 5e-6


def test_directional_derivatives_carry_the_dissipation(fmus):
    from ctypes import POINTER, c_double

    from fmpy import read_model_description
    from fmpy.fmi2 import FMU2Model

    from tests.export._unzip import extracted

    f = str(fmus["bare", 2])
    md = read_model_description(f)
    inst = FMU2Model(guid=md.guid, unzipDirectory=extracted(f),
                     modelIdentifier=md.modelExchange.modelIdentifier, instanceName="d")
    inst.instantiate()
    inst.setupExperiment(startTime=0.0)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    inst.enterInitializationMode()
    inst.exitInitializationMode()
    inst.enterContinuousTimeMode()
    knowns = [vr["x1"], vr["x2"], vr["x3"], vr["u1"], vr["u2"]]
    unknowns = [vr["der(x1)"], vr["der(x2)"], vr["der(x3)"], vr["y1"], vr["H"],
                vr["der(energy_dissipated)"], vr["der(energy_supplied)"]]
    w0, eps = np.array([0.3, -0.2, 0.5, 0.7, -0.4]), 1e-6
    seed = np.array([0.6, -0.8, 0.5, 0.3, 0.9])

    def values(w):
        x = np.concatenate([w[:3], [0.0, 0.0]])
        inst.setContinuousStates(x.ctypes.data_as(POINTER(c_double)), x.size)
        inst.setReal([vr["u1"], vr["u2"]], list(w[3:]))
        return np.array(inst.getReal(unknowns))

    v0 = values(w0)
    sysm = nonlinear_ph()
    # the derivatives are the Python model's flow (with R_nl(z) z) and its dissipation rate
    z0 = sysm.effort(w0[:3])
    assert _rel(v0[:3], sysm.flow(w0[:3], w0[3:])) < 1e-13  # measured 2e-16
    assert v0[5] == pytest.approx(sysm.dissipation_rate(z0, w0[3:]), rel=1e-13)  # 2e-16
    dd = np.array(inst.getDirectionalDerivative(unknowns, knowns, list(seed)))
    fd = (values(w0 + eps * seed) - values(w0 - eps * seed)) / (2 * eps)
    # analytic Jacobians (effort and dissipation) vs central differences (error O(eps²) with
    # third derivatives of order 10, plus round-off 1e-16/eps): measured 1.4e-10
    assert np.abs(dd - fd).max() < 1e-8 * np.abs(fd).max()
    inst.terminate()
    inst.freeInstance()


def test_surrogate_file_exports_the_same_fmu(fmus, tmp_path):
    """A NonlinearPH drop-in saved as JSON (exact floats) exports to an FMU that steps bit for
    bit as the one exported from the object."""
    from fmpy import simulate_fmu

    from fmu_surrogate.ph import save

    f = export_fmu(save(ported(), tmp_path / "nl.json"), tmp_path / "nl.fmu", step=STEP)
    _, _, sig = _inputs(["F"], 3)
    a, b = (simulate_fmu(str(p), stop_time=1.0, output_interval=HC, input=sig,
                         output=["x1", "v", "energy_residual"]) for p in (f, fmus["ported", 2]))
    for key in ("x1", "v", "energy_residual"):
        assert np.array_equal(a[key], b[key]), key


def lossless_ported():
    """A lossless core of integrators (``J = 0, R = 0``, no dissipation term: ``ẋ = G u``)
    with a convex energy, behind wiring with a sign flip and a constant source."""
    eff = ConvexEffort([[2.0, 0.3], [0.3, 1.0]], ["quartic", "logcosh"], [0.8, 1.5],
                       [[1.0, -0.5], [0.4, 0.9]])
    core = NonlinearPH(np.zeros((2, 2)), np.zeros((2, 2)), [[1.0, 0.2], [-0.3, 0.7]], eff,
                       input_names=["u1", "u2"], output_names=["y1", "y2"])
    pm = PortMap(("F",), ("v",), ("N",), ("m/s",), Tu=[[-1.0], [0.0]], cu=[0.0, 0.3],
                 Ty=[[-1.0, 0.0]], Cx=[[0.0, 0.0]], Du=[[0.0]], cy=[0.0])
    return PortedSystem(core, pm, [0.4, -0.2])


@pytest.mark.parametrize("version", [2, 3])
def test_a_lossless_core_steps_explicitly_as_ph_simulate(tmp_path, version):
    """``SUR_EXPLICIT``: the step is ``x₁ = x₀ + h G u``, no Newton iteration, with the mean
    effort of the step for the energy balance — the trajectory of ph.simulate's explicit path."""
    from fmpy import simulate_fmu

    from fmu_surrogate.export.fmi.c_data import surrogate_data
    from fmu_surrogate.export.wiring import wiring

    ps = lossless_ported()
    data = surrogate_data(wiring(ps), step=STEP)
    assert "#define SUR_EXPLICIT 1" in data
    # the wiring and structure written as sums of their nonzero terms: the sign flip a
    # negation, the source's column of G one product, no term of the zero R
    assert "out[0] = -v[0];" in data and "out[0] = 1.0 * v[0] + 0.2 * v[1];" not in data
    assert "    out[0] = v[0] + 0.2 * v[1];" in data
    fmu = export_fmu(ps, tmp_path / f"lossless{version}.fmu", step=STEP, fmi_version=version)
    t, U, sig = _inputs(["F"], 3)
    r = simulate_fmu(str(fmu), stop_time=T_END, output_interval=HC, input=sig,
                     output=["x1", "x2", "v", "F", "H", "energy_residual"])
    tr, k = _fine(ps, t, U)
    assert tr.core.newton_iterations.max() == 0
    # the same sums in another order, the mean effort from four nodes in both (logcosh: not a
    # quartic-only energy): measured 2.9e-15 (x), 2.7e-15 (v) over 300 steps
    assert _rel(np.column_stack([r["x1"], r["x2"]]), tr.x[::k]) < 1e-13
    U_ph = ps.inputs_to_ports(r["F"][:, None])
    y = ps.external_outputs(tr.x[::k], r["F"][:, None],
                            ps.system.output_from_effort(tr.core.z[::k], U_ph))
    assert _rel(r["v"], y[:, 0]) < 1e-13
    # the scheme's balance, round-off (measured 1.2e-15 of the scale)
    assert np.abs(r["energy_residual"]).max() < 1e-13 * tr.energy_scale


@pytest.mark.parametrize("version", [2, 3])
def test_a_turning_pendulum_steps_as_ph_simulate_and_as_the_pendulum(tmp_path, version):
    """A periodic ridge taking the whole form along the angle: ``H = p²/2 + k (1 − cos θ)``,
    ``x = (√k θ, p)``, viscous friction ``b``, a torque that turns it over (6 > k = 4.9 N m):
    the FMU steps as ph.simulate does, and both follow the pendulum ``θ̈ = τ − k sin θ − b θ̇``."""
    from fmpy import simulate_fmu

    k, b, tau = 4.9, 0.5, 6.0
    eff = ConvexEffort(np.eye(2), ["periodic"], [k], [[1.0 / np.sqrt(k), 0.0]])
    core = NonlinearPH([[0.0, np.sqrt(k)], [-np.sqrt(k), 0.0]], np.diag([0.0, b]), [[0.0], [1.0]],
                       eff, input_names=["tau"], output_names=["w"])
    fmu = export_fmu(core, tmp_path / f"pendulum{version}.fmu", step=STEP, fmi_version=version,
                     x0=[0.0, 0.0])
    sig = np.zeros(2, dtype=[("time", float), ("tau", float)])
    sig["time"], sig["tau"] = [0.0, T_END], tau
    r = simulate_fmu(str(fmu), stop_time=T_END, output_interval=HC, input=sig,
                     output=["x1", "x2", "w", "energy_residual"])
    t = r["time"]
    k_sub = round(HC / STEP)
    tf = np.linspace(t[0], t[-1], (t.size - 1) * k_sub + 1)
    tr = simulate(core, tf, np.full((tf.size, 1), tau), [0.0, 0.0], hold="zoh")
    X = np.column_stack([r["x1"], r["x2"]])
    # the same steps in another summation order (Newton tolerance 1e-12, as the tests above;
    # measured 4.9e-16, the balance 1.0e-15 of the scale)
    assert _rel(X, tr.x[::k_sub]) < 1e-12
    assert np.abs(r["energy_residual"]).max() < 1e-12 * tr.energy_scale
    theta = X[:, 0] / np.sqrt(k)
    assert theta[-1] > 4 * np.pi  # it turned over twice
    ref = solve_ivp(lambda _t, s: [s[1], tau - k * np.sin(s[0]) - b * s[1]], (0.0, T_END),
                    [0.0, 0.0], t_eval=t, rtol=1e-12, atol=1e-12, method="DOP853")
    # the AVF scheme's O(h²) error at h = 0.01 on a motion up to 9 rad/s (measured 6.8e-5 rad
    # and 6.9e-5 rad/s at most)
    assert np.abs(theta - ref.y[0]).max() < 5e-4
    assert np.abs(r["w"] - ref.y[1]).max() < 5e-4


@pytest.mark.parametrize("version", [2, 3])
def test_a_preloaded_spring_steps_as_ph_simulate(tmp_path, version):
    """A mass at rest on a progressive spring under a static load (the quartic ridge shifted by
    the deflection −0.835 of the load: ``k₁ = 1, k₃ = 2``, ``g = 2``) and a power-law damper:
    a quartic-only energy, so the exported step takes two Gauss nodes where ph.simulate takes
    four, the same step to round-off."""
    from fmpy import simulate_fmu

    eff = ConvexEffort(np.eye(2), ["quartic"], [2.0], [[1.0, 0.0]], [-0.835])
    diss = PowerDissipation([[0.0, 1.0]], [0.5], [1 / 3], [1e-2])
    sysm = NonlinearPH([[0.0, 1.0], [-1.0, 0.0]], np.zeros((2, 2)), [[0.0], [1.0]], eff, diss,
                       input_names=["F"], output_names=["v"])
    fmu = export_fmu(sysm, tmp_path / f"preloaded{version}.fmu", step=STEP, fmi_version=version,
                     x0=np.zeros(2))
    t, U, sig = _inputs(["F"], 4)
    r = simulate_fmu(str(fmu), stop_time=T_END, output_interval=HC, input=sig,
                     output=["x1", "x2", "v", "energy_residual"])
    k = round(HC / STEP)
    tf = np.linspace(t[0], t[-1], (t.size - 1) * k + 1)
    tr = simulate(sysm, tf, np.concatenate([np.repeat(U[:-1], k, axis=0), U[-1:]]),
                  np.zeros(2), hold="zoh")
    # measured 7.1e-15 (x and v): two nodes against four for the same cubic gradient; the
    # Newton tolerance 1e-12 bounds how far the iterates may differ
    assert _rel(np.column_stack([r["x1"], r["x2"]]), tr.x[::k]) < 1e-12
    assert _rel(r["v"], tr.x[::k, 1]) < 1e-12
    # the spring law about the load's deflection: the force at the end 1 q̃ + 2((q̃ − 0.835)³ +
    # 0.835³) — the effort of the FMU's state is that law
    q = tr.x[-1, 0]
    assert tr.z[-1, 0] == pytest.approx(q + 2.0 * ((q - 0.835) ** 3 + 0.835 ** 3), rel=1e-12)
    # the scheme's balance: measured 1.9e-15 of the energy scale
    assert np.abs(r["energy_residual"]).max() < 1e-12 * tr.energy_scale


@pytest.mark.parametrize("version", [2, 3])
def test_a_mass_between_end_stops_steps_as_ph_simulate(tmp_path, version):
    """A mass on a spring between end stops at ``q = ±0.4`` (a gap ridge, ``k_c = 30``) and a
    second, softer contact preloaded by the shift 0.5 (its stops at ``q = 0.2`` and ``−0.6``),
    a power-law damper; a force of amplitude 4 drives it through every stop.  The
    gap's clip and step are ``fmin``/``fmax`` and a ``?:`` in C, the four Gauss nodes as in
    ph.simulate (a gap is not a quartic-only energy): the same steps to round-off."""
    from fmpy import simulate_fmu

    g, kc = 0.4, 30.0
    eff = ConvexEffort(np.eye(2), ["gap", "gap"], [kc * g * g, 0.5 * kc * g * g],
                       [[1 / g, 0.0], [1 / g, 0.0]], [0.0, 0.5])
    diss = PowerDissipation([[0.0, 1.0]], [0.3], [1 / 3], [1e-2])
    sysm = NonlinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, 0.1]), [[0.0], [1.0]], eff,
                       diss, input_names=["F"], output_names=["v"])
    fmu = export_fmu(sysm, tmp_path / f"stops{version}.fmu", step=STEP, fmi_version=version,
                     x0=np.zeros(2))
    t = np.arange(0.0, T_END + HC / 2, HC)
    U = 4.0 * np.sin(2.5 * t)[:, None]
    sig = np.zeros(t.size, dtype=[("time", float), ("F", float)])
    sig["time"], sig["F"] = t, U[:, 0]
    r = simulate_fmu(str(fmu), stop_time=T_END, output_interval=HC, input=sig,
                     output=["x1", "x2", "v", "H", "energy_residual"])
    k = round(HC / STEP)
    tr = simulate(sysm, np.linspace(t[0], t[-1], (t.size - 1) * k + 1),
                  np.concatenate([np.repeat(U[:-1], k, axis=0), U[-1:]]), np.zeros(2),
                  hold="zoh")
    s = tr.x[:, 0] / g + np.array([[0.0], [0.5]])  # both ridges' arguments
    crossings = ((np.abs(s[:, :-1]) > 1.0) != (np.abs(s[:, 1:]) > 1.0)).sum(axis=1)
    assert np.all(crossings >= 4)  # into and out of every contact, twice at least
    # the same AVF steps and Newton iterations in another summation order: measured 1.9e-15
    # (x, v) and 1.2e-15 (H); 1e-12 is the Newton tolerance of both
    assert _rel(np.column_stack([r["x1"], r["x2"]]), tr.x[::k]) < 1e-12
    assert _rel(r["v"], tr.x[::k, 1]) < 1e-12
    assert _rel(r["H"], tr.H[::k]) < 1e-12
    # the energy residual is not round-off here (the 4-node quadrature across a stop: 1.1e-4
    # on a scale of 4.2, see ConvexEffort's doc) but the FMU's is ph.simulate's to round-off
    # of its sums (measured 4.4e-16 apart)
    assert abs(tr.energy_residual) > 1e-8 * tr.energy_scale
    assert r["energy_residual"][-1] == pytest.approx(tr.energy_residual,
                                                     abs=1e-12 * tr.energy_scale)
