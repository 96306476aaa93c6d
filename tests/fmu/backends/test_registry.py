"""Backends: the fmpy fast co-simulation loop and the model-exchange path against the analytic
solution of the fixture model, the FMU's log capture, instance reuse after failures, PyFMI.

The faulty test FMU (fmu_surrogate/testing/c/faulty.c) integrates dx/dt = -k x + u exactly for an input held
over each step, so a co-simulation run equals the analytic solution up to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.fmu.backends.registry import (
    Backend,
    FmpyBackend,
    PyFMIBackend,
    available_backends,
    get_backend,
)
from fmu_surrogate.fmu.runner.pool import classify

T = np.linspace(0.0, 1.0, 101)
REC = ["x", "der(x)", "u"]


def exact_step(t, k, x0, t0, before, after):
    """x(t) for dx/dt = -k x + u with u = before (t < t0), after (t >= t0)."""
    t = np.asarray(t, dtype=float)
    x_a = x0 * np.exp(-k * t) + before / k * (1 - np.exp(-k * t))
    xt0 = x0 * np.exp(-k * t0) + before / k * (1 - np.exp(-k * t0))
    s = np.clip(t - t0, 0, None)
    x_b = xt0 * np.exp(-k * s) + after / k * (1 - np.exp(-k * s))
    return np.where(t < t0, x_a, x_b)


@pytest.fixture(scope="module")
def cs(faulty_fmu):
    b = FmpyBackend(interface="cs")
    b.open(faulty_fmu)
    yield b
    b.close()


@pytest.fixture(scope="module")
def me(faulty_fmu):
    b = FmpyBackend(interface="me", tolerance=1e-9)
    b.open(faulty_fmu)
    yield b
    b.close()


def test_protocol_and_factory():
    assert isinstance(FmpyBackend(), Backend)
    assert isinstance(get_backend("auto"), FmpyBackend)
    assert "fmpy" in available_backends()
    with pytest.raises(ValueError, match="unknown backend"):
        get_backend("nope")


def test_cs_run_matches_analytic_solution(cs):
    u = np.where(T < 0.3 - 1e-12, 0.5, 2.0)  # step on the grid point t = 0.3
    r = cs.run({"k": 2.0, "x0": 1.5}, {"u": u}, T, REC)
    assert r.error is None and not r.stopped_early and r.n_done == T.size
    x = r.values["x"]
    # exact discretisation inside the FMU: only rounding error, accumulated over 100 steps
    np.testing.assert_allclose(x, exact_step(T, 2.0, 1.5, 0.3, 0.5, 2.0), rtol=0, atol=1e-13)
    # row i holds the input applied over [t_i, t_i+1) and the derivative at t_i
    np.testing.assert_array_equal(r.values["u"], u)
    np.testing.assert_allclose(r.values["der(x)"], -2.0 * x + u, rtol=0, atol=1e-15)


def test_cs_instance_is_reused_and_reset(cs):
    first = cs._fmu.component
    bad = cs.run({"mode": 4}, {}, T, REC)
    assert bad.error is not None
    good = cs.run({}, {}, T, REC)
    assert good.error is None
    np.testing.assert_allclose(good.values["x"], np.exp(-T), rtol=0, atol=1e-14)
    assert cs._fmu.component == first  # fmi2Reset, no re-instantiation


def test_cs_failures_are_returned_with_the_fmu_log(cs):
    r = cs.run({"mode": 4}, {}, T, REC)
    assert r.error.function == "fmi2DoStep" and r.error.status == 3
    assert r.n_done == 51  # rows t = 0 .. 0.5; the step starting at 0.5 failed
    kind, msg = classify(r, T)
    assert kind == "error_status"
    assert "fmi2DoStep returned fmi2Error at t=0.5" in msg and "reason: x=" in msg

    r = cs.run({"mode": 8}, {}, T, REC)
    assert classify(r, T)[0] == "error_status" and r.n_done == 0
    assert "fmi2ExitInitializationMode" in classify(r, T)[1] and "singular" in r.log_text()

    r = cs.run({"mode": 7}, {}, T, REC)
    assert r.stopped_early and r.error is None and r.n_done == 51
    kind, msg = classify(r, T)
    assert kind == "early_stop" and "end condition reached" in msg

    r = cs.run({"mode": 5}, {}, T, REC)
    kind, msg = classify(r, T)
    assert kind == "non_finite" and "x is nan at t=0.51" in msg

    r = cs.run({"mode": 6}, {}, T, REC)
    kind, msg = classify(r, T)
    assert kind == "exploding" and "1e+104" in msg
    assert classify(r, T, explode_threshold=1e200)[0] == ""


def test_integer_parameter_must_be_whole(cs):
    r = cs.run({"mode": 0.5}, {}, T, REC)
    assert classify(r, T)[0] == "exception" and "not an integer" in str(r.error)


def test_me_run_matches_analytic_solution(me):
    r = me.run({"k": 3.0}, {"u": np.full(T.size, 1.0)}, T, REC)
    assert r.error is None and r.n_done == T.size
    # CVode with rtol 1e-9: the global error stays far below 1e-6 on this stable scalar ODE
    np.testing.assert_allclose(r.values["x"], exact_step(T, 3.0, 1.0, 0.0, 1.0, 1.0),
                               rtol=0, atol=1e-6)


def test_me_failures(me):
    r = me.run({"mode": 4}, {}, T, REC)
    kind, msg = classify(r, T)
    # CVode reports its own RuntimeError, but the FMU logged an error: that is the reason
    assert kind == "error_status" and "reason: x=" in msg
    assert 0 < r.n_done <= 51
    np.testing.assert_allclose(r.values["x"], np.exp(-T[:r.n_done]), atol=1e-6)

    r = me.run({"mode": 5}, {}, T, REC)
    assert classify(r, T)[0] == "exception" and "CVode" in str(r.error)

    r = me.run({"mode": 7}, {}, T, REC)
    assert r.stopped_early and classify(r, T)[0] == "early_stop"

    r = me.run({}, {}, T, REC)  # instance still usable
    assert r.error is None and r.n_done == T.size


def test_fmi3_cs_with_array_output(faulty3_fmu):
    b = FmpyBackend()
    b.open(faulty3_fmu)
    try:
        assert b.fmi3 and b.kind == "cs"
        u = np.where(T < 0.3 - 1e-12, 0.5, 2.0)
        # slow (Int32) column first: the fast Float64 block is then not contiguous
        r = b.run({"k": 2.0, "x0": 1.5}, {"u": u}, T, ["mode", "x", "y", "u"])
        assert r.error is None and r.n_done == T.size
        x = exact_step(T, 2.0, 1.5, 0.3, 0.5, 2.0)
        np.testing.assert_allclose(r.values["x"], x, rtol=0, atol=1e-13)  # exact steps
        assert r.values["y"].shape == (T.size, 2)
        np.testing.assert_allclose(r.values["y"], np.column_stack([x, 2 * x]), atol=1e-13)
        np.testing.assert_array_equal(r.values["mode"], 0.0)
        np.testing.assert_array_equal(r.values["u"], u)

        r = b.run({"mode": 4}, {}, T, ["x", "y"])
        kind, msg = classify(r, T)
        assert kind == "error_status" and "fmi3DoStep returned fmi3Error at t=0.5" in msg
        assert "reason: x=" in msg and r.n_done == 51
        r = b.run({"mode": 5}, {}, T, ["x", "y"])
        assert classify(r, T)[0] == "non_finite"
        # FMI 3: the step is completed, then terminateSimulation is set -> rows up to t = 0.51
        r = b.run({"mode": 7}, {}, T, ["x", "y", "mode"])
        assert r.stopped_early and r.n_done == 52 and classify(r, T)[0] == "early_stop"
        np.testing.assert_array_equal(r.values["mode"], 7.0)
        r = b.run({"mode": 8}, {}, T, ["x"])
        assert classify(r, T)[0] == "error_status" and "mode=8" in classify(r, T)[1]
    finally:
        b.close()


def test_stepwise_api(cs):
    cs.start({"k": 1.0}, 0.0, 1.0, {"u": 1.0})
    row0 = cs.get_values(["x", "u"])
    assert cs.do_step(0.0, 0.1) is False
    row1 = cs.get_values(["x"])
    np.testing.assert_allclose(row0, [1.0, 1.0])
    np.testing.assert_allclose(row1, [1.0], atol=1e-15)  # x = 1 is the equilibrium for u = 1


def test_pyfmi_backend_when_available(faulty_fmu):
    if "pyfmi" not in available_backends():
        with pytest.raises(ValueError, match="PyFMI"):
            get_backend("pyfmi")
        pytest.skip("pyfmi is not installed (no usable wheel here)")
    b = PyFMIBackend(interface="cs")
    b.open(faulty_fmu)
    try:
        r = b.run({"k": 2.0}, {"u": np.full(T.size, 1.0)}, T, REC)
        np.testing.assert_allclose(r.values["x"], exact_step(T, 2.0, 1.0, 0, 1.0, 1.0),
                                   atol=1e-6)
    finally:
        b.close()


def test_fast_and_general_cs_loops_agree(cs):
    """The FMI 2 fast loop (C-contiguous output) and the general loop (any output layout) give
    bit-identical rows, the same failure point and the same early stop."""
    u = np.where(T < 0.3 - 1e-12, 0.5, 2.0)
    for params in ({"k": 2.0, "x0": 1.5}, {"mode": 4}, {"mode": 7}, {"mode": 5}):
        fast = cs.run(params, {"u": u}, T, REC)
        out = np.full((T.size, len(REC)), np.nan, order="F")  # not C-contiguous: general loop
        slow = cs.run(params, {"u": u}, T, REC, out=out)
        assert (fast.n_done, fast.stopped_early, type(fast.error), fast.error_time) == \
            (slow.n_done, slow.stopped_early, type(slow.error), slow.error_time), params
        np.testing.assert_array_equal(fast.data[:fast.n_done], slow.data[:slow.n_done])


def test_inputs_are_read_at_each_run(cs):
    """Inputs are taken from the arrays as they are at each run (no stale copies), for one input
    (used in place) and for a column block; the time grid lists are cached per grid array."""
    u = np.zeros(T.size)
    for i in range(3):
        u[:] = float(i)  # the same array, changed in place
        r = cs.run({}, {"u": u}, T, ["u"])
        np.testing.assert_array_equal(r.values["u"], u)
    r = cs.run({}, {"u": np.arange(T.size)}, T, ["u"])  # integers: converted, not reinterpreted
    np.testing.assert_array_equal(r.values["u"], np.arange(T.size))
    t2 = T * 2.0
    r = cs.run({"k": 1.0}, {}, t2, ["x"])  # another grid: its own step sizes
    np.testing.assert_allclose(r.values["x"], np.exp(-t2), rtol=0, atol=1e-14)


@pytest.mark.parametrize("interface", ["cs", "me"])
def test_broken_reset_is_found_and_every_run_gets_a_new_instance(faulty_fmu, interface):
    # mode 10: fmi2Reset returns fmi2OK but the next run starts where the last one ended
    b = FmpyBackend(interface=interface, tolerance=1e-10)
    b.open(faulty_fmu)
    try:
        runs = [b.run({"mode": 10, "x0": x0}, {}, T, ["x"]) for x0 in (1.0, 2.0, 3.0)]
    finally:
        b.close()
    assert not b.reuse_instance
    for x0, r in zip((1.0, 2.0, 3.0), runs):
        assert r.error is None
        # each run from its own x0 (a stale instance would start at the last run's end); CS
        # integrates exactly, CVode to its tolerance 1e-10 (relative, on values ≤ 3)
        np.testing.assert_allclose(r.values["x"], x0 * np.exp(-T), rtol=0,
                                   atol=1e-13 if interface == "cs" else 1e-7)
    assert any("Reset does not restore" in m for _s, _c, m in runs[0].messages)


def test_working_reset_keeps_the_instance(faulty_fmu):
    b = FmpyBackend(interface="cs")
    b.open(faulty_fmu)
    try:
        first = b._fmu.component
        for x0 in (1.0, 2.0):
            b.run({"x0": x0}, {}, T, ["x"])
        assert b.reuse_instance and b._fmu.component == first
    finally:
        b.close()
