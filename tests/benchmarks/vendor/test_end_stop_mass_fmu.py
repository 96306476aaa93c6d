"""The mass with end stops (``end_stop_mass``: force in, velocity and position out, states
internal, its own fixed-step RK4, contacts not located) against independent references: a
scipy solve that locates every contact, the exact solution of the linear mass-spring-damper
inside the clearance, and a replica of its stepping."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fmpy import read_model_description
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from fmu_surrogate.benchmarks.params import BenchmarkError
from fmu_surrogate.benchmarks.vendor import free_mass as fm
from tests.benchmarks._fmu import Slave, input_table, run, solve_zoh

NAME = "end_stop_mass"
T, DT = 10.0, 0.01
# the defaults, written out: the references below do not use the package's physics
M, K, C, KC, S_MAX, S_MIN = 1.0, 40.0, 2.0, 400.0, 0.05, -0.05


def _rhs(X, F, dc=0.0):
    """ElastoGap at each stop: the damper's force limited to the spring's."""
    s, v = X
    f = 0.0
    if s > S_MAX:
        fc = KC * (s - S_MAX)
        f = -(fc + min(max(dc * v, -fc), fc))
    elif s < S_MIN:
        fc = KC * (S_MIN - s)
        f = fc + min(max(-dc * v, -fc), fc)
    return [v, (F - K * s - C * v + f) / M]


def _rhs_unlimited(X, F, dc):
    """The same with the contact damper unlimited (a contact that can pull)."""
    s, v = X
    f = -(KC * (s - S_MAX) + dc * v) if s > S_MAX else (
        KC * (S_MIN - s) - dc * v if s < S_MIN else 0.0)
    return [v, (F - K * s - C * v + f) / M]


def _mode_rhs(t, X, F, mode):
    """The piece of the law in contact with the upper stop (1), the lower (-1) or free (0)."""
    s, v = X
    f = -KC * (s - S_MAX) if mode == 1 else (KC * (S_MIN - s) if mode == -1 else 0.0)
    return [v, (F - K * s - C * v + f) / M]


def _crossing(bound, direction, new_mode):
    event = lambda t, X, F, mode: X[0] - bound
    event.terminal, event.direction = True, direction
    return event, new_mode


def _solve_located(t, F):
    """States at ``t`` (N, 2) from rest for ``F`` held on each step, dc = 0: each piece of the
    law (linear, smooth) solved by DOP853 up to the contact it meets, located by an event; the
    pieces' events look for the crossing out of them only, so a restart at a crossing does
    not find it again.  Returns the states and the number of crossings."""
    X = np.zeros((len(t), 2))
    mode, crossings = 0, 0
    for k in range(len(t) - 1):
        ta, xa = t[k], X[k]
        while True:
            events = ([_crossing(S_MAX, 1, 1), _crossing(S_MIN, -1, -1)] if mode == 0 else
                      [_crossing(S_MAX if mode == 1 else S_MIN, -mode, 0)])
            sol = solve_ivp(_mode_rhs, (ta, t[k + 1]), xa, method="DOP853", rtol=1e-12,
                            atol=1e-14, events=[e for e, _ in events], args=(F[k], mode))
            assert sol.success, sol.message
            if sol.status != 1:
                X[k + 1] = sol.y[:, -1]
                break
            j = next(i for i, te in enumerate(sol.t_events) if len(te))
            ta, xa, mode = sol.t_events[j][0], sol.y_events[j][0], events[j][1]
            crossings += 1
    return X, crossings


def _chirp(t, amplitude=6.0, f0=0.2, f1=3.0):
    """A linear chirp f0 -> f1 over the run (the bench's held-out input)."""
    return amplitude * np.sin(2 * np.pi * (f0 * t + (f1 - f0) / (2 * T) * t**2))


def test_cosimulation_matches_located_reference(benchmark_fmus):
    t = np.arange(round(T / DT) + 1) * DT
    F = _chirp(t)
    X, crossings = _solve_located(t, F)
    # the chirp drives the mass into both stops, 0.11 m deep (the contact force 45 N), many
    # times: 69 crossings
    assert X[:, 0].max() > S_MAX + 0.1 and X[:, 0].min() < S_MIN - 0.1
    assert crossings > 50
    for max_step, tol_s, tol_v in ((5e-4, 3e-6, 5e-5), (1.25e-4, 3e-7, 5e-6)):
        r = run(benchmark_fmus[NAME], T, DT, ["v", "s"], inputs=input_table(t, F=F),
                start_values={"max_step": max_step})
        # RK4 in substeps h of max_step.  Inside the clearance and in contact the law is
        # linear and smooth (|lambda| h <= 21 /s * 5e-4 = 0.01: error ~ (lambda h)^5 / 120 per
        # substep, below 1e-12); a substep that crosses a stop integrates across the kink
        # (the slope of the force jumps by kc), its quadrature of v' errs by about
        # (kc |v| / m) h^2 times a constant of the crossing's place in the substep: the
        # scheme converges at about order 2 there.  Observed with 5e-4: 7.3e-7 m on s (swing
        # 0.33 m) and 1.1e-5 m/s on v (swing 5.1 m/s); with 1.25e-4: 7.6e-8 and 1.2e-6 (10x
        # less for 4x smaller steps): 4x margin
        np.testing.assert_allclose(r["s"], X[:, 0], rtol=0, atol=tol_s)
        np.testing.assert_allclose(r["v"], X[:, 1], rtol=0, atol=tol_v)
    # the package's reference (DOP853 across the kinks, its error control shrinking the step
    # there) agrees with the located one: observed 6.9e-11 m, 1.5e-9 m/s
    Xp = fm.end_stop_simulate(t, F)
    np.testing.assert_allclose(Xp[:, 0], X[:, 0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(Xp[:, 1], X[:, 1], rtol=0, atol=1e-8)


def test_stepping_is_rk4_in_substeps_of_at_most_max_step(benchmark_fmus):
    """A replica of the FMU's stepping: ceil(H / max_step) equal RK4 substeps, the force held,
    the contact not located (agreement to round-off, also for a step of 24.6 max_step)."""

    def replica(H, n_steps, F, max_step):
        n = max(1, math.ceil(H / max_step - 1e-9))
        h = H / n
        X = np.array([0.0, 0.0])
        out = [X.copy()]
        f = lambda X, Fk: np.array(_rhs(X, Fk))
        for k in range(n_steps):
            for _ in range(n):
                k1 = f(X, F[k])
                k2 = f(X + 0.5 * h * k1, F[k])
                k3 = f(X + 0.5 * h * k2, F[k])
                k4 = f(X + h * k3, F[k])
                X = X + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            out.append(X.copy())
        return np.array(out)

    for H in (0.01, 0.0123):
        n_steps = round(3.0 / H)
        t = np.arange(n_steps + 1) * H
        F = _chirp(t, amplitude=8.0, f0=1.0, f1=1.0)  # a 1 Hz sine of 8 N: into both stops
        r = run(benchmark_fmus[NAME], t[-1], H, ["v", "s"], inputs=input_table(t, F=F))
        X = replica(H, n_steps, F, 5e-4)
        assert X[:, 0].max() > S_MAX and X[:, 0].min() < S_MIN
        # the same operations up to the order of the sums (the FMU integrates the momentum
        # m v, v computed from it): observed 6e-16 m and 1e-14 m/s (swings 0.19 m, 1.8 m/s)
        np.testing.assert_allclose(r["s"], X[:, 0], rtol=0, atol=1e-13)
        np.testing.assert_allclose(r["v"], X[:, 1], rtol=0, atol=1e-12)
        # substeps of 1e-3 (half as many) differ by 3e-5 to 6e-5 m/s, far beyond that: the
        # FMU honours max_step
        assert np.max(np.abs(replica(H, n_steps, F, 1e-3)[:, 1] - X[:, 1])) > 1e-7


def test_inside_the_clearance_it_is_the_linear_mass_spring_damper(benchmark_fmus):
    t = np.arange(round(T / DT) + 1) * DT
    F = _chirp(t, amplitude=0.7)
    # exact zero-order-hold discretisation of m s'' + c s' + k s = F
    A = np.array([[0.0, 1.0], [-K / M, -C / M]])
    E = expm(np.block([[A, np.array([[0.0], [1.0 / M]])], [np.zeros((1, 3))]]) * DT)
    Phi, Gamma = E[:2, :2], E[:2, 2]
    X = np.zeros((len(t), 2))
    for k in range(len(t) - 1):
        X[k + 1] = Phi @ X[k] + Gamma * F[k]
    # through the resonance, up to 0.89 of the clearance, never in contact
    assert 0.75 * S_MAX < np.max(np.abs(X[:, 0])) < S_MAX
    r = run(benchmark_fmus[NAME], T, DT, ["v", "s"], inputs=input_table(t, F=F))
    # RK4 with h = 5e-4 on the smooth linear law (|lambda| h = 0.003, truncation error
    # ~ (lambda h)^5 / 120 ~ 2e-15 per substep): observed 2.1e-13 m on s (swing 0.088 m) and
    # 1.3e-12 m/s on v (swing 0.60 m/s), the round-off of 1000 steps of 20 substeps: 8x margin
    np.testing.assert_allclose(r["s"], X[:, 0], rtol=0, atol=2e-12)
    np.testing.assert_allclose(r["v"], X[:, 1], rtol=0, atol=1e-11)


@pytest.mark.parametrize("stop", [1, -1])
def test_contact_force_never_pulls(benchmark_fmus, stop):
    """Leaving a stop fast with a strong contact damper: ElastoGap's limit cancels the pull.

    At s0 = 0.06 m (10 mm in the upper stop) and v0 = -2 m/s, dc = 50 N s/m: f_c = 4 N, the
    damper's 100 N would pull the mass into the stop (96 N); limited, the contact force is
    f_c - f_c = 0.  A step of 1e-5 s (one substep) reads the acceleration from the change of v."""
    s0, v0, dc, H = 0.06 * stop, -2.0 * stop, 50.0, 1e-5
    with Slave(benchmark_fmus[NAME]) as sl:
        sl.instantiate()
        sl.initialize({"s0": s0, "v0": v0, "dc": dc})
        assert sl.get("s", "v") == [s0, v0]
        sl.fmu.doStep(0.0, H)
        s1, v1 = sl.get("s", "v")
        sl.fmu.terminate()
    assert s1 == pytest.approx(s0 + v0 * H, abs=1e-9)  # it moved out of the stop
    # the contact force: m dv/dt + k s + c v with F = 0; over the substep the force changes
    # by H |d/dt| (kc |v| + ...) ~ 1e-5 * 1000 N/s = 0.01 N: the mean over the step is within
    # 0.02 N of the initial force
    f_stop = M * (v1 - v0) / H + K * s0 + C * v0
    assert f_stop == pytest.approx(0.0, abs=0.02)
    assert f_stop * stop <= 0.02  # never toward the stop
    unlimited = _rhs_unlimited([s0, v0], 0.0, dc)[1] * M + K * s0 + C * v0
    assert unlimited == pytest.approx(96.0 * stop)  # what the law without the limit pulls
    # entering the stop: the damper pushes, limited to the spring's force (2 f_c = 8 N)
    with Slave(benchmark_fmus[NAME]) as sl:
        sl.instantiate()
        sl.initialize({"s0": s0, "v0": -v0, "dc": dc})
        sl.fmu.doStep(0.0, H)
        v1 = sl.get("v")[0]
        sl.fmu.terminate()
    assert M * (v1 + v0) / H + K * s0 - C * v0 == pytest.approx(-8.0 * stop, abs=0.02)
    # the package's law
    assert fm.contact_force(s0, v0, {"dc": dc}) == 0.0
    assert fm.contact_force(s0, -v0, {"dc": dc}) == pytest.approx(-8.0 * stop, rel=1e-12)


def test_run_with_contact_damper_matches_reference(benchmark_fmus):
    t = np.arange(round(T / DT) + 1) * DT
    F = _chirp(t)
    dc = 20.0
    X = solve_zoh(lambda X, f: _rhs(X, f, dc), t, F, [0.0, 0.0])  # DOP853, rtol 1e-12
    r = run(benchmark_fmus[NAME], T, DT, ["v", "s"], inputs=input_table(t, F=F),
            start_values={"dc": dc})
    # the limit's kinks (where dc |v| = f_c) add to the stops': observed 8.0e-7 m on s and
    # 7.3e-6 m/s on v with max_step 5e-4 (the order-2 error at the kinks of the test above):
    # 4x margin
    np.testing.assert_allclose(r["s"], X[:, 0], rtol=0, atol=3e-6)
    np.testing.assert_allclose(r["v"], X[:, 1], rtol=0, atol=3e-5)
    # the limit acts in this run: the unlimited law's solution parts from it by far more
    Xu = solve_zoh(lambda X, f: _rhs_unlimited(X, f, dc), t, F, [0.0, 0.0])
    assert np.max(np.abs(Xu[:, 1] - X[:, 1])) > 1e-2
    # along the run the stops' force is never toward them (the package's law)
    f = fm.contact_force(X[:, 0], X[:, 1], {"dc": dc})
    assert np.all(f[X[:, 0] > S_MAX] <= 0) and np.all(f[X[:, 0] < S_MIN] >= 0)
    assert np.all(f[(X[:, 0] >= S_MIN) & (X[:, 0] <= S_MAX)] == 0)
    # the package's reference: the same solver on the same law (observed 0)
    np.testing.assert_allclose(fm.end_stop_simulate(t, F, {"dc": dc}), X, rtol=0, atol=1e-12)


def test_model_structure_and_internal_states(benchmark_fmus):
    md = read_model_description(str(benchmark_fmus[NAME]))
    assert md.modelExchange is None and md.numberOfContinuousStates == 0
    names = {v.name for v in md.modelVariables}
    assert names.isdisjoint({"x", "p", "der(x)", "der(p)"})
    io = [(v.name, v.causality, v.unit) for v in md.modelVariables
          if v.causality in ("input", "output")]
    assert io == [("F", "input", "N"), ("v", "output", "m/s"), ("s", "output", "m")]
    deps = {u.variable.name: [d.name for d in u.dependencies] for u in md.outputs}
    assert deps == {"v": [], "s": []}
    fixed = {v.name for v in md.modelVariables if v.variability == "fixed"}
    assert fixed == {"s0", "v0", "max_step"}


@pytest.mark.parametrize(("name", "value", "message"), [
    ("m", 0.0, "m = 0 must be > 0"), ("k", -1.0, "k = -1 must be >= 0"),
    ("kc", -1.0, "kc = -1 must be >= 0"), ("dc", -1.0, "dc = -1 must be >= 0"),
    ("s_max", 0.0, "s_max = 0 must be > 0"), ("s_min", 0.01, "s_min = 0.01 must be < 0")])
def test_invalid_parameters_are_refused(benchmark_fmus, name, value, message):
    from fmpy.fmi1 import FMICallException

    with Slave(benchmark_fmus[NAME]) as s:
        s.instantiate()
        with pytest.raises(FMICallException):
            s.initialize({name: value})
        assert message in s.log.errors()[0]
    with pytest.raises(BenchmarkError, match=f"{name} = {value} must be"):
        fm.end_stop_rhs([0.0, 0.0], 0.0, {name: value})
