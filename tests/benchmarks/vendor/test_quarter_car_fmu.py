"""The quarter-car FMU (gravity preload, fixed-step RK4 with substeps) against scipy references."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.benchmarks.vendor import quarter_car
from tests.benchmarks._fmu import Slave, input_table, run

STATES = ["zs", "vs", "zu", "vu"]
T, DT = 2.0, 1e-3


def _force(t):
    return 800.0 * np.sin(2 * np.pi * 1.5 * t) + 400.0 * (t > 0.7)


def test_cosimulation_matches_reference(benchmark_fmus):
    t = np.linspace(0.0, T, 2001)
    F = _force(t)
    r = run(benchmark_fmus["quarter_car"], T, DT, [*STATES, "a_s", "F_tyre", "F"],
            inputs=input_table(t, F=F))
    X = quarter_car.simulate(t, F)
    got = np.column_stack([r[s] for s in STATES])
    # RK4 with 10 substeps of 1e-4 s (fastest mode |lambda| = 73 /s, |lambda| h = 0.007, local
    # error ~ (lambda h)^5 / 120): observed 6e-14 m on positions, 4e-12 m/s on velocities
    # (DOP853 at rtol 1e-12 is below that); 10x margin
    np.testing.assert_allclose(got[:, [0, 2]], X[:, [0, 2]], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got[:, [1, 3]], X[:, [1, 3]], rtol=0, atol=5e-11)
    # the acceleration and the tyre load are evaluated at the step's end with the input held
    # over that step (the recorded F): exact algebra on the FMU's own states (round-off)
    np.testing.assert_allclose(r["a_s"], quarter_car.acceleration(got, r["F"]), rtol=1e-12,
                               atol=1e-10)
    np.testing.assert_allclose(r["F_tyre"], 2e5 * (0.3 - r["zu"]), rtol=0, atol=1e-9)


def _rk4(x, F, h, n):
    f = lambda y: np.array(quarter_car.rhs(y, F))
    for _ in range(n):
        k1 = f(x)
        k2 = f(x + h / 2 * k1)
        k3 = f(x + h / 2 * k2)
        k4 = f(x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x


@pytest.mark.parametrize("n_substeps", [1, 3])
def test_steps_with_its_own_rk4_substeps(benchmark_fmus, n_substeps):
    H = 0.02
    with Slave(benchmark_fmus["quarter_car"]) as s:
        s.instantiate()
        s.initialize({"n_substeps": n_substeps, "F": 250.0})
        x = np.array(s.get(*STATES))
        for k in range(5):
            s.fmu.doStep(k * H, H)
            x = _rk4(x, 250.0, H / n_substeps, n_substeps)
            # the same classical RK4 steps, operation for operation: round-off only
            np.testing.assert_allclose(s.get(*STATES), x, rtol=1e-13, atol=1e-13)
        s.fmu.terminate()
    # and not an adaptive scheme: one coarse RK4 step per communication step misses the exact
    # solution by far more than a tolerance-controlled integrator would
    X = quarter_car.simulate(np.array([0.0, H]), np.array([250.0, 250.0]))
    assert np.max(np.abs(_rk4(X[0], 250.0, H, 1) - X[1])) > 1e-7


def test_preloaded_start_and_equilibrium(benchmark_fmus):
    r = run(benchmark_fmus["quarter_car"], 10.0, 0.01, [*STATES, "a_s", "F_tyre"])
    p = quarter_car.PARAMS
    # released at the springs' free lengths: nonzero heights and -g body acceleration at t = 0
    assert (r["zs"][0], r["zu"][0]) == (p["lt0"] + p["ls0"], p["lt0"])
    assert r["a_s"][0] == pytest.approx(-p["g"], rel=1e-15)
    assert r["vs"][1] < 0  # not at rest: it drops
    # ... and settles where the springs carry the weight: the slowest mode (eigenvalues
    # -2.12 +- 7.61j /s) decays like exp(-2.12 t), to 6e-10 of its start (0.16 m sag, ~1.3 m/s)
    # after 10 s; 1e-7 leaves a 100x margin
    eq = quarter_car.equilibrium()
    np.testing.assert_allclose([r[s][-1] for s in STATES], eq, rtol=0, atol=1e-7)
    assert r["F_tyre"][-1] == pytest.approx((p["ms"] + p["mu"]) * p["g"], rel=1e-5)


def test_model_exchange_matches_reference(benchmark_fmus):
    x0 = quarter_car.equilibrium()
    start = {"zs0": x0[0], "zu0": x0[2], "F": -300.0}
    r = run(benchmark_fmus["quarter_car"], 1.0, 0.01, STATES, fmi_type="ModelExchange",
            start_values=start)
    t = r["time"]
    X = quarter_car.simulate(t, np.full(len(t), -300.0), x0=x0)
    # CVode at rtol 1e-10: observed error 5e-10 m on a 23 mm response; 20x margin
    np.testing.assert_allclose(r["zs"], X[:, 0], rtol=0, atol=1e-8)
    np.testing.assert_allclose(r["zu"], X[:, 2], rtol=0, atol=1e-8)


def test_invalid_parameters_are_refused(benchmark_fmus):
    from fmpy.fmi1 import FMICallException

    with Slave(benchmark_fmus["quarter_car"]) as s:
        s.instantiate()
        with pytest.raises(FMICallException):
            s.initialize({"kt": -1.0})
        assert "kt = -1 must be > 0" in s.log.errors()[0]
    with Slave(benchmark_fmus["quarter_car"]) as s:
        s.instantiate()
        s.initialize({"n_substeps": 0})
        with pytest.raises(FMICallException):
            s.fmu.doStep(0.0, 0.01)
        assert "n_substeps = 0 must be >= 1" in s.log.errors()[0]
