"""The coupled mass that counts its own time as 20-sim's exported FMUs do (fixed-step RK4,
``clock += solver_step``, stepped while ``clock < t_k + h_k`` without a tolerance)."""

from __future__ import annotations

import numpy as np
import pytest
from fmpy import simulate_fmu
from fmpy.fmi1 import FMICallException
from scipy.linalg import expm

import fmu_surrogate as fs
from fmu_surrogate.benchmarks.vendor.stepping import coupled_mass_clock as cm
from tests.benchmarks._fmu import Slave, input_table

NAME = "coupled_mass_clock"
OUTPUTS = ["fk", "x2", "v2"]
T, H = 3.0, 0.01  # H = the default solver_step
F, A = 1.3, 0.05  # the driven end: x1 = A cos(2 pi F t), v1 its derivative


def _drive(t):
    w = 2 * np.pi * F
    return A * np.cos(w * t), -A * w * np.sin(w * t)


def _accumulated(t0, h, n):
    """A master's communication points: each the one before plus ``h`` in floating point."""
    t = [t0]
    for _ in range(n):
        t.append(t[-1] + h)
    return np.array(t)


def _cosimulate(fmu, t, x1, v1, params=None):
    """Drive the FMU as the harvest does: at each point set the inputs, read the outputs, then
    ``doStep(t_k, t_{k+1} - t_k)``; the inputs of ``t_0`` are set in initialisation mode."""
    y = np.empty((len(t), 3))
    with Slave(fmu) as s:
        s.instantiate()
        s.fmu.setupExperiment(startTime=float(t[0]))
        s.set(**{k: float(v) for k, v in (params or {}).items()})
        s.fmu.enterInitializationMode()
        s.set(x1=float(x1[0]), v1=float(v1[0]))
        s.fmu.exitInitializationMode()
        for k in range(len(t)):
            s.set(x1=float(x1[k]), v1=float(v1[k]))
            y[k] = s.get(*OUTPUTS)
            if k < len(t) - 1:
                s.fmu.doStep(float(t[k]), float(t[k + 1] - t[k]))
        s.fmu.terminate()
    return y


def _assert_same(y, ref):
    # the FMU's C and the reference's Python floats do the same IEEE operations in the same
    # order (no contraction to FMA in ISO C99): bitwise equal where measured; 1e-12 relative
    # to each output's range leaves room for another compiler's code
    for j, name in enumerate(OUTPUTS):
        np.testing.assert_allclose(y[:, j], ref[:, j], rtol=0,
                                   atol=1e-12 * np.abs(ref[:, j]).max(), err_msg=name)


def _same(a, b):
    """Equal to round-off (as in :func:`_assert_same`; no output is zero where it is used)."""
    return np.allclose(a, b, rtol=1e-12, atol=0)


def _stalls(y):
    """Communication steps after which ``x2`` did not change although ``v2`` was not zero."""
    return np.flatnonzero((np.diff(y[:, 1]) == 0) & (y[:-1, 2] != 0))


def _exact_zoh(t, x1, v1, params=None):
    """Outputs of the linear system with the inputs held over each step, by its exact
    discretisation ``expm([[A, B], [0, 0]] h)``; ``fk`` of ``t_{k+1}`` with the inputs of ``t_k``,
    as the FMU computes it at the end of a step."""
    p = {**cm.PARAMS, **(params or {})}
    m, c2, d2, cc, dc = (p[k] for k in ("m2", "c2", "d2", "cc", "dc"))
    M = np.zeros((4, 4))
    M[:2, :2] = [[0.0, 1.0], [-(c2 + cc) / m, -(d2 + dc) / m]]
    M[1, 2:] = [cc / m, dc / m]
    Es = {h: expm(M * h) for h in set(np.diff(t).tolist())}  # the steps differ by round-off
    x = np.zeros(2)
    y = np.empty((len(t), 3))
    y[0] = cc * (x1[0] - x[0]) + dc * (v1[0] - x[1]), *x
    for k in range(len(t) - 1):
        E = Es[t[k + 1] - t[k]]
        x = E[:2, :2] @ x + E[:2, 2:] @ [x1[k], v1[k]]
        y[k + 1] = cc * (x1[k] - x[0]) + dc * (v1[k] - x[1]), *x
    return y


def _rk4_error(y, exact):
    """Largest deviation of each output from the exact solution, relative to its range."""
    return np.abs(y - exact).max(axis=0) / np.abs(exact).max(axis=0)


# RK4 with h = 0.01 on the mode w = sqrt(120) = 11 rad/s (w h = 0.11): local error
# ~ (w h)^5 / 120 = 1.3e-7 of the amplitude per step, at most 4e-5 after 300 steps; observed
# 1.0e-5 (fk), 6.9e-6 (x2), 8.2e-6 (v2) relative to their ranges: the bound leaves a 4x margin
RK4_TOL = 4e-5


def test_on_k_h_points_it_double_steps_and_stalls(benchmark_fmus):
    """fmpy's points t_0 + k h, h = solver_step: the clock (t_0 + h + h + ...) and the points
    part by round-off; a communication step takes two internal steps at 0.09 s, none at
    0.14 s, two at 2.07 s."""
    t0, n = 0.0, round(T / H)
    t = t0 + np.arange(n + 1) * H
    x1, v1 = _drive(t)
    r = simulate_fmu(str(benchmark_fmus[NAME]), start_time=t0, stop_time=T, output_interval=H,
                     input=input_table(t, x1=x1, v1=v1), output=OUTPUTS)
    assert np.array_equal(r["time"], t)  # fmpy's points are t_0 + k h too
    y = np.column_stack([r[k] for k in OUTPUTS])
    steps = cm.internal_steps(t)
    assert {round(t[k], 2): int(s) for k, s in enumerate(steps) if s != 1} == {
        0.09: 2, 0.14: 0, 2.07: 2}
    # the FMU stalls where the reference takes no step: x2 unchanged while the mass moves
    assert t[_stalls(y)].tolist() == [0.14]
    # ... and equals the reference stepped on the same points
    _assert_same(y, cm.simulate(t, x1, v1))
    # a double step runs one step ahead: with the input held constant, the output of t_10 is
    # that of t_11 on the accumulated points (one internal step each), and back in step at
    # t_15 after the stall
    c = np.full(n + 1, 0.05), np.zeros(n + 1)
    ahead = cm.simulate(t, *c)
    steady = _cosimulate(benchmark_fmus[NAME], _accumulated(t0, H, n), *c)
    assert _same(ahead[10], steady[11]) and not _same(ahead[10], steady[10])
    assert _same(ahead[15], steady[15])
    assert _same(ahead[-2], steady[-1])  # and a step ahead again from 2.07 s
    # a step ahead (0.09-0.14 s, from 2.07 s): far from the exact solution (observed 4.4e-2
    # to 6.6e-2 relative, over 1000x RK4's own error on the accumulated points)
    assert _rk4_error(y, _exact_zoh(t, x1, v1)).min() > 100 * RK4_TOL


@pytest.mark.parametrize("t0", [0.0, 0.37])
def test_on_accumulated_points_one_step_each(benchmark_fmus, t0):
    """A master's points t_{k+1} = t_k + h are the clock's own sums (from the start time):
    never a stall, never a double step; RK4 close to the exact solution."""
    n = round(T / H)
    t = _accumulated(t0, H, n)
    x1, v1 = _drive(t)
    y = _cosimulate(benchmark_fmus[NAME], t, x1, v1)
    assert np.array_equal(cm.internal_steps(t), np.ones(n, dtype=int))
    assert _stalls(y).size == 0
    _assert_same(y, cm.simulate(t, x1, v1))
    assert np.all(_rk4_error(y, _exact_zoh(t, x1, v1)) < RK4_TOL)


def test_harvest_steps_on_accumulated_points(benchmark_fmus):
    """The harvest steps an FMU of 20-sim (its ``generationTool``) through a master's
    accumulated points: its data is the reference's there, with the default parameters and
    others set at the start; the dataset's times and inputs stay those of the grid t_0 + k h."""
    sig = {"x1": fs.signals.Chirp(f0=F, f1=F, t1=T, amplitude=A),
           "v1": fs.signals.Chirp(f0=F, f1=F, t1=T, amplitude=2 * np.pi * F * A, phi=90.0)}
    params = [{}, {"m2": 2.0, "cc": 50.0}]
    ds = fs.harvest(benchmark_fmus[NAME], None, signals=[sig], parameters=params,
                    stop_time=T, step=H, progress=False, workers=1)
    t, pts = ds["time"].values, _accumulated(0.0, H, round(T / H))
    assert np.array_equal(t[:-1], H * np.arange(t.size - 1)) and t[-1] == T
    assert not np.array_equal(t, pts)  # the two grids part by round-off
    assert np.array_equal(cm.internal_steps(pts), np.ones(len(t) - 1, dtype=int))
    for run, p in enumerate(params):
        x1, v1 = ds["x1"].values[run], ds["v1"].values[run]
        np.testing.assert_allclose(x1, _drive(t)[0], rtol=0, atol=1e-15)  # the chirp is a cosine
        y = np.column_stack([ds[k].values[run] for k in OUTPUTS])
        _assert_same(y, cm.simulate(pts, x1, v1, p))
        assert _stalls(y).size == 0


def test_two_internal_steps_per_communication_step(benchmark_fmus):
    """Communication step 0.02 = 2 solver steps on accumulated points: the clock's sums
    (t + 0.01 + 0.01) and the points (t + 0.02) part by round-off again, and the FMU follows
    its clock (three internal steps at 0.08 s, one at 0.14 s, three at 2.0 s), as the
    reference does: the harvest's accumulated points keep such an FMU in step only when the
    communication step is its solver step."""
    h, n = 2 * H, round(T / (2 * H))
    t = _accumulated(0.0, h, n)
    x1, v1 = _drive(t)
    y = _cosimulate(benchmark_fmus[NAME], t, x1, v1)
    steps = cm.internal_steps(t)
    assert steps.sum() == 2 * n + 1  # it ends a step ahead
    assert {round(t[k], 2): int(s) for k, s in enumerate(steps) if s != 2} == {
        0.08: 3, 0.14: 1, 2.0: 3}
    _assert_same(y, cm.simulate(t, x1, v1))
    assert _stalls(y).size == 0


def test_parameters_and_outputs_at_initialisation(benchmark_fmus):
    with Slave(benchmark_fmus[NAME]) as s:
        s.instantiate()
        s.initialize({"x1": 0.1, "v1": 2.0, "cc": 30.0, "dc": 4.0})
        # at rest at 0: fk = cc x1 + dc v1
        assert s.get(*OUTPUTS) == [pytest.approx(11.0, rel=1e-15), 0.0, 0.0]
        s.set(x1=0.5)  # no step: the outputs are those of initialisation
        assert s.get("fk") == [pytest.approx(11.0, rel=1e-15)]
        s.fmu.terminate()
    with Slave(benchmark_fmus[NAME]) as s:
        s.instantiate()
        s.fmu.setupExperiment(startTime=0.0)
        s.set(solver_step=0.0)
        s.fmu.enterInitializationMode()
        with pytest.raises(FMICallException):
            s.fmu.exitInitializationMode()
        assert any("solver_step = 0 must be > 0" in m for m in s.log.errors())
    with pytest.raises(ValueError, match="solver_step"):
        cm.internal_steps([0.0, 1.0], {"solver_step": -1.0})
