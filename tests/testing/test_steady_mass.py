"""The vendor-like test FMUs of :mod:`fmu_surrogate.testing.fmus`: the mass initialised in
steady state against its analytic rest state and its exact response, on a linear spring and on a
hardening one (``k3 > 0``, its rest found by Newton's method in C), the force source against its
formula."""

from __future__ import annotations

import numpy as np
import pytest

import fmu_surrogate as fs
from fmu_surrogate.testing.fmus import build_force_source, build_steady_mass
from tests.testing._steady import (
    DT,
    HARDENING,
    K,
    M,
    T,
    cubic_exact,
    cubic_rest,
    exact,
    grid,
    multisine,
    rest,
    source_force,
)


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    out = tmp_path_factory.mktemp("steady-fmus")
    return build_steady_mass(out), build_force_source(out)


def _slave(fmu):
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    md = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    slave = FMU2Slave(guid=md.guid, unzipDirectory=extract(str(fmu)),
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="x")
    slave.instantiate()
    slave.setupExperiment(startTime=0.0)
    return slave, vr


@pytest.mark.parametrize("when", ["before", "during"])
def test_the_mass_starts_at_rest_under_the_force_it_is_given_at_initialisation(fmus, when):
    slave, vr = _slave(fmus[0])
    try:
        if when == "before":
            slave.setReal([vr["F"]], [-9.0])
        slave.enterInitializationMode()
        if when == "during":
            slave.setReal([vr["F"]], [-9.0])
        slave.exitInitializationMode()
        v, a, q = slave.getReal([vr["v"], vr["a"], vr["q"]])
        # the analytic rest state (-9 + 20) / 40: one division, exact in binary here
        assert (v, a, q) == rest(-9.0) == (0.0, 0.0, 0.275)
        slave.doStep(0.0, 0.5)  # held at that force, it stays at rest (RK4 of a zero slope)
        assert slave.getReal([vr["v"], vr["a"], vr["q"]]) == [0.0, 0.0, 0.275]
        slave.setReal([vr["F"]], [-5.0])
        slave.doStep(0.5, 0.5)
        moved = np.array(slave.getReal([vr["v"], vr["a"], vr["q"]]))
        ref = exact(np.array([0.0, 0.5, 1.0]), np.array([-9.0, -5.0, -5.0]))[2]
        # pushed by 4 N more, it moves as the exact response; RK4 in 10 substeps of 50 ms
        # (w h = 0.32 with w = sqrt(k/m): ~(w h)^5 / 120 = 3e-5 per substep), so within 1e-3
        # of the step response's scales dF / (m w), dF / m, dF / k (measured 1.5e-4, 1.1e-4,
        # 5.9e-5)
        scale = 4.0 * np.array([1.0 / np.sqrt(K * M), 1.0 / M, 1.0 / K])
        assert np.all(np.abs(moved - ref) < 1e-3 * scale), (moved - ref) / scale
    finally:
        slave.terminate()
        slave.freeInstance()


def test_the_mass_follows_its_exact_response_up_to_its_solver_error(fmus):
    F = multisine(1, 3.0)
    ds = fs.harvest(fmus[0], None, signals=[{"F": fs.signals.ArraySignal(grid(), F,
                                                                          interpolation="zoh")}],
                    stop_time=T, step=DT, progress=False, workers=1)
    (t, X), = fs.run_arrays(ds, ["F", "v", "a", "q"])
    np.testing.assert_array_equal(X[:, 0], F)
    ref = exact(t, F)
    np.testing.assert_array_equal(X[0, 1:], rest(3.0))  # at rest under F(0) = 3 N
    err = np.abs(X[:, 1:] - ref).max(axis=0) / np.abs(ref).max(axis=0)
    # RK4 in 10 substeps of 1 ms: global error ~ (w h)^4 w T / 120 with w = sqrt(k/m) = 6.3
    # rad/s, about 1e-9 of the response (measured 4.9e-11, 3.8e-11, 7e-12 for v, a, q): the
    # "vendor's" solver error, which bounds how closely any surrogate can match the FMU
    assert err.max() < 1e-9, err


@pytest.mark.parametrize("force", [-9.0, -30.0, 25.0, 0.0, -10.0])
def test_the_hardening_mass_starts_at_rest_where_its_spring_holds_the_force(fmus, force):
    """k3 = 100 N/m³, preload 10 N: k q + k3 q³ = F + 10 on both sides of q = 0 (Newton's
    iterates from (F + 10) / k fall monotonically towards the root on either side) and at 0."""
    slave, vr = _slave(fmus[0])
    try:
        slave.setReal([vr[n] for n in HARDENING], list(HARDENING.values()))
        slave.setReal([vr["F"]], [force])
        slave.enterInitializationMode()
        slave.exitInitializationMode()
        v, a, q = slave.getReal([vr["v"], vr["a"], vr["q"]])
        # Newton to round-off against Brent's root: a few ulps of q (measured 0 here, 1 ulp at
        # F = 3, -5 or -6 N)
        assert abs(q - cubic_rest(force)) <= 4 * np.finfo(float).eps * abs(q)
        assert (force == -10.0) == (q == 0.0)
        assert v == 0.0
        # the spring holds the force up to the round-off of k q + k3 q³ (measured 0 here, 8.9e-16
        # at F = -5 N)
        assert abs(a) <= 8 * np.finfo(float).eps * (abs(force) + HARDENING["preload"])
        slave.doStep(0.0, 0.5)  # held at that force it stays at rest, up to that round-off
        assert abs(slave.getReal([vr["q"]])[0] - q) <= 1e-14 * max(abs(q), 1.0)
    finally:
        slave.terminate()
        slave.freeInstance()


def test_the_hardening_mass_follows_its_exact_response_up_to_its_solver_error(fmus):
    F = multisine(7, -4.0, 8.0)
    ds = fs.harvest(fmus[0], None, signals=[{"F": fs.signals.ArraySignal(grid(), F,
                                                                          interpolation="zoh")}],
                    parameters=HARDENING, stop_time=T, step=DT, progress=False, workers=1)
    (t, X), = fs.run_arrays(ds, ["F", "v", "a", "q"])
    ref = cubic_exact(t, F)
    assert X[0, 1] == 0.0 and X[0, 3] == pytest.approx(cubic_rest(-4.0), rel=1e-15)
    err = np.abs(X[:, 1:] - ref).max(axis=0) / np.abs(ref).max(axis=0)
    # RK4 in substeps of 1 ms: ~(w h)^4 w T / 120 as the linear spring's, w = sqrt(k + 3 k3 q²)
    # up to 8.9 rad/s on this run (q up to 0.36 m): about 1e-9 of the response (measured 1.0e-10,
    # 1.1e-10, 7.0e-11 for v, a, q) — DOP853's own error (~1e-12) is far below
    assert err.max() < 1e-9, err


def test_the_force_source_gives_its_formula_from_initialisation_on(fmus):
    from tests.testing._steady import SOURCE

    slave, vr = _slave(fmus[1])
    try:
        slave.setReal([vr[k] for k in SOURCE], list(SOURCE.values()))
        slave.enterInitializationMode()
        assert slave.getReal([vr["F"]]) == [SOURCE["offset"]]  # read in initialisation mode
        slave.exitInitializationMode()
        t = grid()[:50]
        F = []
        for k, tk in enumerate(t):
            F.append(slave.getReal([vr["F"]])[0])
            slave.doStep(tk, DT)
        # the same sines in C and numpy: round-off (measured 0 to 2e-15)
        np.testing.assert_allclose(F, source_force(t), rtol=0, atol=1e-13)
    finally:
        slave.terminate()
        slave.freeInstance()
