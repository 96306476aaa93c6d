"""Exported surrogates that start at the equilibrium of their first inputs
(``PortedSystem(..., initial="equilibrium")``): the FMU computes it when it leaves
initialisation, from the inputs set by then, as ``ph.simulate`` from the first inputs — a linear
core by one solve, a nonlinear one by Newton's method with the analytic Jacobian (Python's takes
central differences) — in co-simulation and model exchange, FMI 2 and 3 alike; inputs without
an equilibrium fail initialisation with the reason, as ``ph`` raises ``ConvergenceError``."""

import zipfile
from dataclasses import replace

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm
from scipy.optimize import brentq

from fmu_surrogate.export import export_fmu
from fmu_surrogate.ph import (
    ConvergenceError,
    ConvexEffort,
    LinearPH,
    NonlinearPH,
    PortedSystem,
    PortMap,
    PowerDissipation,
    simulate,
)
from tests.export._reference import extrapolated
from tests.export._unzip import cs_slave

HC, STEP, T_END = 0.1, 0.01, 3.0
F0, PRELOAD = 2.0, 0.5  # the first input, away from zero, and the constant source
X_START = np.array([0.3, -0.2])  # Newton's start, away from the equilibrium
PORTS = PortMap(("F",), ("v", "q"), ("N",), ("m/s", "m"), Tu=[[1.0], [0.0]], cu=[0.0, PRELOAD],
                Ty=[[1.0, 0.0], [0.0, 0.0]], Cx=[[0.0, 0.0], [1.0, 0.0]], Du=np.zeros((2, 1)),
                cy=[0.0, 0.0])


def linear():
    """A mass on a spring (k = 2, m = 1, c = 0.1), pushed by F, preloaded by 0.5 N (a constant
    source port), showing its velocity and its deflection (tests/ph/simulation)."""
    core = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.1]), np.diag([2.0, 1.0]),
                    [[0, 0], [1, 1]])
    return PortedSystem(core, PORTS, X_START, initial="equilibrium")


def nonlinear():
    """The same mass on a hardening spring with a power-law damper, ``q̈ = F + 0.5 −
    0.5 sign(v)|v|^(4/3) − q − 2q³`` (x = (q, p))."""
    eff = ConvexEffort(np.diag([1.0, 1.0]), ["quartic"], [2.0], [[1.0, 0.0]])
    diss = PowerDissipation([[0.0, 1.0]], [0.5], [1.0 / 3.0], [1e-9])
    core = NonlinearPH([[0.0, 1.0], [-1.0, 0.0]], np.zeros((2, 2)), [[0.0, 0.0], [1.0, 1.0]],
                       eff, diss)
    return PortedSystem(core, PORTS, X_START, initial="equilibrium")


SURROGATES = {"linear": linear, "nonlinear": nonlinear}


def at_rest(kind, force):
    """The equilibrium from first principles: the spring holds the force and the preload,
    ``k q = F + 0.5`` (linear, k = 2) or ``q + 2q³ = F + 0.5``, at rest (p = 0)."""
    f = force + PRELOAD
    q = f / 2.0 if kind == "linear" else brentq(lambda s: s + 2 * s**3 - f, -10, 10,
                                                xtol=1e-16, rtol=4 * np.finfo(float).eps)
    return np.array([q, 0.0])


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("equilibrium")
    return {(kind, v): export_fmu(make(), d / f"{kind}{v}.fmu", fmi_version=v, step=STEP)
            for kind, make in SURROGATES.items() for v in (2, 3)}


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max()


def _signal(t, U):
    sig = np.zeros(t.size, dtype=[("time", float), ("F", float)])
    sig["time"], sig["F"] = t, U
    return sig


def _reference(kind, sur, t, U):
    """``ph.simulate`` from ``sur.initial_state(U[0])``: the linear core's exact step
    (Romberg-extrapolated, tests/export/_reference), the nonlinear core's AVF steps on the
    FMU's internal grid."""
    if kind == "linear":
        ref = extrapolated(sur, t, U)
        return ref["x"], ref["y"]
    k = round(HC / STEP)
    tf = np.linspace(t[0], t[-1], (t.size - 1) * k + 1)
    Uf = np.concatenate([np.repeat(U[:-1], k), U[-1:]])
    tr = simulate(sur, tf, Uf, hold="zoh")
    return tr.x[::k], tr.y[::k]


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("kind", ["linear", "nonlinear"])
def test_co_simulation_starts_at_the_equilibrium_and_reproduces_ph_simulate(fmus, kind,
                                                                             version):
    from fmpy import simulate_fmu

    sur = SURROGATES[kind]()
    t = np.arange(0.0, T_END + HC / 2, HC)
    U = F0 + np.concatenate([[0.0], np.cumsum(np.random.default_rng(3).normal(size=t.size - 1))])
    r = simulate_fmu(str(fmus[kind, version]), fmi_type="CoSimulation", stop_time=T_END,
                     output_interval=HC, input=_signal(t, U),
                     output=["x1", "x2", "v", "q", "H", "energy_residual"])
    X = np.column_stack([r["x1"], r["x2"]])
    x_eq = sur.initial_state(U[:1])
    # the start: the equilibrium of F0 (not x_start), as ph finds it — one LU solve against
    # LAPACK's (linear: measured 0), Newton with the analytic against central-difference
    # Jacobians, both converged far below 1e-12 of the state (nonlinear: measured 1.2e-16) —
    # and as the spring holds the force (measured 0 for both)
    assert np.abs(X[0] - x_eq).max() <= 1e-14 * np.abs(x_eq).max()
    assert np.abs(X[0] - at_rest(kind, F0)).max() <= 1e-14 * np.abs(x_eq).max()
    assert np.abs(X[0] - X_START).max() > 0.5
    X_ref, Y_ref = _reference(kind, sur, t, U)
    # then the same steps from the same state: linear, the exact step against Romberg-
    # extrapolated ph.simulate (measured 9.5e-14 (x, y): the extrapolation's own error, its
    # levels 6 and 7 differ by 1e-13 on this state of up to 1.9); nonlinear, the same AVF steps
    # and Newton iterations in another summation order, bounded by the Newton tolerance 1e-12
    # of both (measured 1.4e-15 (x, y))
    assert _rel(X, X_ref) < 1e-12
    assert _rel(np.column_stack([r["v"], r["q"]]), Y_ref) < 1e-12
    if kind == "linear":  # the exact step itself: scipy's expm of [[A, B], [0, 0]] h
        M = np.zeros((4, 4))
        M[:2, :2], M[:2, 2:] = sur.system.J @ sur.system.Q - sur.system.R @ sur.system.Q, \
            sur.system.input_matrix
        P, U_ph, x = expm(M * HC), sur.inputs_to_ports(U[:, None]), x_eq
        X_exp = [x] + [x := (P @ np.concatenate([x, U_ph[k]]))[:2] for k in range(t.size - 1)]
        assert _rel(X, np.array(X_exp)) < 1e-13  # measured 2.2e-15
    # H measured from the equilibrium's energy (measured 0 and 2.8e-16 at the start): the
    # balance is the scheme's round-off (measured 9.5e-15 and 2.6e-15 on H of 2.3 and 1.1)
    H_ref = sur.system.hamiltonian(X_ref)
    assert abs(r["energy_residual"][0]) == 0.0 and r["H"][0] == pytest.approx(H_ref[0], rel=1e-14)
    assert np.abs(r["energy_residual"]).max() < 1e-12 * np.abs(H_ref).max()


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("kind", ["linear", "nonlinear"])
def test_model_exchange_starts_at_the_equilibrium_and_stays_there(fmus, kind, version):
    """fmpy's CVode applies inputs at output points and input steps only: F0 held until t = 1,
    then a step to -1; the state rests at the equilibrium of F0, then moves as the core's flow
    from there (scipy's reference).  FMI 3 computes the equilibrium in
    fmi3ExitInitializationMode through its adapter, as FMI 2 does."""
    from fmpy import simulate_fmu

    sur = SURROGATES[kind]()
    F1, t_step = -1.0, 1.0
    sig = _signal(np.array([0.0, t_step, t_step, T_END]), np.array([F0, F0, F1, F1]))
    r = simulate_fmu(str(fmus[kind, version]), fmi_type="ModelExchange", stop_time=T_END,
                     output_interval=HC, input=sig, relative_tolerance=1e-10,
                     output=["x1", "x2"], record_events=False)
    X = np.column_stack([r["x1"], r["x2"]])
    x_eq = sur.initial_state([F0])
    # the start as in co-simulation (measured 0 and 1.1e-16 against ph's, 0 against the
    # spring's)
    assert np.abs(X[0] - x_eq).max() <= 1e-14 * np.abs(x_eq).max()
    assert np.abs(X[0] - at_rest(kind, F0)).max() <= 1e-14 * np.abs(x_eq).max()
    rest = r["time"] <= t_step + 1e-9
    # at rest while F0 holds: the flow there is round-off (measured no drift)
    assert np.abs(X[rest] - x_eq).max() <= 1e-13 * np.abs(x_eq).max()
    u_ph = sur.inputs_to_ports([F1])
    moving = r["time"] >= t_step - 1e-9
    ref = solve_ivp(lambda _t, x: sur.system.flow(x, u_ph), (t_step, T_END), x_eq,
                    t_eval=r["time"][moving], rtol=1e-12, atol=1e-12, method="DOP853")
    # then CVode at rtol 1e-10 from there: measured 3.7e-9 (linear), 1.2e-8 (nonlinear), the
    # same for FMI 2 and 3 (one C model, one solver), its global error a few tolerances over 20
    # output intervals
    assert _rel(X[moving], ref.y.T) < 5e-8
    assert np.abs(X[moving][-1] - x_eq).max() > 0.5  # it moved: the step was seen


@pytest.mark.parametrize("kind", ["linear", "nonlinear"])
def test_the_equilibrium_is_that_of_the_inputs_and_sources_at_the_end_of_initialisation(
        fmus, kind):
    """Inputs and the source's parameter set in initialisation mode decide the start; x_start
    only where Newton begins (a nonlinear core) — not where the FMU starts."""
    slave, vr = cs_slave(fmus[kind, 2], "e")
    try:
        slave.setReal([vr["F"]], [5.0])  # before initialisation, then overridden in it
        slave.enterInitializationMode()
        slave.setReal([vr["F"], vr["u2"], vr["x_start[1]"]], [-0.7, 1.5, 2.0])
        slave.exitInitializationMode()
        x = np.array(slave.getReal([vr["x1"], vr["x2"]]))
    finally:
        slave.terminate()
        slave.freeInstance()
    ref = PortedSystem(SURROGATES[kind]().system, replace(PORTS, cu=np.array([0.0, 1.5])),
                       [2.0, -0.2], initial="equilibrium")
    # the equilibrium of F = -0.7 and the source 1.5 (measured 0 against ph's), where the
    # spring holds 0.8 (measured 0 and 4.3e-16 against brentq's root)
    assert np.abs(x - ref.initial_state([-0.7])).max() <= 1e-14
    q = 0.4 if kind == "linear" else brentq(lambda s: s + 2 * s**3 - 0.8, -10, 10, xtol=1e-16)
    assert x[0] == pytest.approx(q, rel=1e-14) and abs(x[1]) <= 1e-14


def test_a_singular_linear_core_starts_at_its_least_squares_equilibrium(tmp_path):
    """(J − R) Q = diag(−1, 0): a damped state and a lossless one that no input drives. Its
    equilibria are x1 = F, x2 anything; ph takes the least-squares state of least norm (x2 = 0,
    whatever x_start says), and so does the FMU (the SVD path of its solve)."""
    core = LinearPH(np.zeros((2, 2)), np.diag([1.0, 0.0]), np.eye(2), [[1.0], [0.0]])
    sur = PortedSystem(core, _ports(2), [0.3, 0.7], initial="equilibrium")
    fmu = export_fmu(sur, tmp_path / "singular.fmu")
    slave, vr = cs_slave(fmu, "s")
    try:
        slave.setReal([vr["F"]], [1.25])
        slave.enterInitializationMode()
        slave.exitInitializationMode()
        x = np.array(slave.getReal([vr["x1"], vr["x2"]]))
        slave.doStep(0.0, 0.5)
        x_after = np.array(slave.getReal([vr["x1"], vr["x2"]]))
    finally:
        slave.terminate()
        slave.freeInstance()
    # Jacobi's SVD against LAPACK's lstsq of a diagonal matrix: exact (measured 0)
    assert np.array_equal(x, sur.initial_state([1.25])) and np.array_equal(x, [1.25, 0.0])
    assert np.abs(x_after - x).max() <= 1e-15  # at rest: held there


def _ports(n):
    """F drives the one pH port, whose output is the one output."""
    return PortMap(("F",), ("y",), ("N",), (None,), Tu=[[1.0]], cu=[0.0], Ty=[[1.0]],
                   Cx=np.zeros((1, n)), Du=[[0.0]], cy=[0.0])


def _integrator():
    """A lossless integrator (J = R = 0, Q = 1, B = 1): a constant input has no equilibrium."""
    return PortedSystem(LinearPH([[0.0]], [[0.0]], [[1.0]], [[1.0]]), _ports(1),
                        initial="equilibrium")


def _free_mass():
    """A free mass (no spring: the quartic's gain and Q's position entry nil) pushed by F."""
    eff = ConvexEffort(np.diag([1e-300, 1.0]), ["quartic"], [0.0], [[1.0, 0.0]])
    core = NonlinearPH([[0.0, 1.0], [-1.0, 0.0]], np.zeros((2, 2)), [[0.0], [1.0]], eff,
                       PowerDissipation(np.zeros((0, 2)), [], [], []))
    return PortedSystem(core, _ports(2), [0.0, 0.2], initial="equilibrium")


@pytest.mark.parametrize("make", [_integrator, _free_mass], ids=["integrator", "free-mass"])
def test_inputs_without_an_equilibrium_fail_initialisation_with_the_reason(tmp_path, make,
                                                                           capfd):
    from fmpy.fmi1 import FMICallException

    sur = make()
    with pytest.raises(ConvergenceError, match="no equilibrium"):  # ph refuses F = 1 too
        sur.initial_state([1.0])
    fmu = export_fmu(sur, tmp_path / "free.fmu")
    slave, vr = cs_slave(fmu, "f")
    slave.setReal([vr["F"]], [1.0])
    slave.enterInitializationMode()
    with pytest.raises(FMICallException):
        slave.exitInitializationMode()
    log = capfd.readouterr().out
    assert "fmi2ExitInitializationMode: no equilibrium for the inputs F = 1 at the start" in log
    assert "export the surrogate with initial='state'" in log
    slave.freeInstance()
    # with F = 0 there are equilibria: the free mass brought to rest where it starts (Newton's
    # step stops its momentum: exactly with the FMU's analytic Jacobian, to 2.5e-29 with ph's
    # central differences, both within Newton's tolerance 1e-12 of the state), the integrator's
    # least-squares state 0 (exact in both)
    slave, vr = cs_slave(fmu, "g")
    try:
        slave.enterInitializationMode()
        slave.exitInitializationMode()
        x = np.array(slave.getReal([vr[f"x{i + 1}"] for i in range(sur.n_states)]))
        assert np.array_equal(x, np.zeros(sur.n_states))
        assert np.abs(x - sur.initial_state([0.0])).max() <= 1e-12
    finally:
        slave.terminate()
        slave.freeInstance()


def test_without_the_rule_the_fmu_is_as_before(tmp_path):
    """``initial="state"``: no equilibrium code, x_start is the initial value, the states'
    start depends on x_start alone."""
    from fmpy import read_model_description

    plain = export_fmu(linear().replace(initial="state"), tmp_path / "plain.fmu")
    eq = export_fmu(linear(), tmp_path / "eq.fmu")
    with zipfile.ZipFile(plain) as z:
        assert "sources/equilibrium.h" not in z.namelist()
        assert b"SUR_EQUILIBRIUM" not in z.read("sources/surrogate_data.h")
    with zipfile.ZipFile(eq) as z:
        assert "sources/equilibrium.h" in z.namelist()
    deps = {}
    for name, f in (("plain", plain), ("eq", eq)):
        md = read_model_description(str(f))
        deps[name] = {u.variable.name: sorted(d.name for d in u.dependencies or ())
                      for u in md.initialUnknowns}
    assert deps["plain"]["x1"] == ["x_start[1]"]
    # at an equilibrium: of the input and the source (a linear solve needs no x_start)
    assert deps["eq"]["x1"] == deps["eq"]["q"] == ["F", "u2"]
    from fmpy import simulate_fmu

    r = simulate_fmu(str(plain), fmi_type="CoSimulation", stop_time=0.1, output_interval=0.1,
                     input=_signal(np.array([0.0, 0.1]), np.array([F0, F0])), output=["x1", "x2"])
    assert [r["x1"][0], r["x2"][0]] == X_START.tolist()  # from x_start, bit for bit
