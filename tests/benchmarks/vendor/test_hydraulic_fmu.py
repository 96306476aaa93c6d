"""The hydraulic accumulator and orifice FMUs (bar, l/min) against their references, and the
references against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from fmpy import read_model_description
from scipy.integrate import quad, solve_ivp

from fmu_surrogate.benchmarks.params import BenchmarkError
from fmu_surrogate.benchmarks.vendor import hydraulic
from fmu_surrogate.fmu.model.units import power_factor
from tests.benchmarks._fmu import Slave, input_table, run

T, DT = 2.0, 0.01


def test_accumulator_matches_reference_and_its_energy_leaves_through_the_port(benchmark_fmus):
    t = np.linspace(0.0, T, 201)
    Q = 30.0 + 20.0 * np.sign(np.sin(4.0 * t))  # l/min drawn, held on each step
    params = {"C": 0.02, "p0": 80.0}
    r = run(benchmark_fmus["hydraulic_accumulator"], T, DT, ["p", "Q"],
            inputs=input_table(t, Q=Q), start_values=params)
    p = hydraulic.simulate(t, Q, params)
    # p' = -Q / (60 C) is constant on each step: RK4 (FMU) and DOP853 (reference) are exact up to
    # round-off (observed 3e-14 bar on p = O(100))
    np.testing.assert_allclose(r["p"], p, rtol=0, atol=1e-11)
    # power out of the port in W: 1.667 W per bar·l/min; H(t) - H(0) = -∫ p Q dt (p linear over
    # a held step, so the trapezoid is exact): round-off of |H| ~ 6400 J
    H = hydraulic.accumulator_energy(r["p"], params)
    out = np.concatenate([[0.0], np.cumsum(hydraulic.W_PER_BAR_LPM * Q[:-1] * DT
                                           * (r["p"][1:] + r["p"][:-1]) / 2)])
    np.testing.assert_allclose(H - H[0], -out, rtol=0, atol=1e-9)


def test_orifice_flow_follows_the_pressure_without_delay(benchmark_fmus):
    md = read_model_description(str(benchmark_fmus["hydraulic_orifice"]))
    (out,) = md.outputs
    assert [d.name for d in out.dependencies] == ["p"]
    with Slave(benchmark_fmus["hydraulic_orifice"]) as s:
        s.instantiate()
        s.initialize({"p": 150.0, "R": 3.0})
        assert s.get("Q") == [50.0]  # 150 / 3 is exact in binary floating point
        s.fmu.terminate()


def test_units_make_1_667_watts_per_bar_litre_per_minute(benchmark_fmus):
    units = {}
    for name in ("hydraulic_accumulator", "hydraulic_orifice"):
        md = read_model_description(str(benchmark_fmus[name]))
        units[name] = {v.name: v.unit for v in md.modelVariables}
    assert units["hydraulic_accumulator"]["p"] == units["hydraulic_orifice"]["p"] == "bar"
    assert units["hydraulic_accumulator"]["Q"] == units["hydraulic_orifice"]["Q"] == "l/min"
    assert power_factor("bar", "l/min") == pytest.approx(hydraulic.W_PER_BAR_LPM, rel=1e-15)
    assert hydraulic.W_PER_BAR_LPM == pytest.approx(5 / 3, rel=1e-15)


def test_discharge_reference_against_scipy():
    acc, ori = {"C": 0.01, "p0": 100.0}, {"R": 2.0}
    t = np.linspace(0.0, 3.0, 31)
    p, energy = hydraulic.discharge(t, acc, ori)
    sol = solve_ivp(lambda s, x: hydraulic.rhs(x, hydraulic.orifice_flow(x[0], ori), acc),
                    (0.0, 3.0), [100.0], t_eval=t, method="DOP853", rtol=1e-12, atol=1e-12)
    # DOP853 at rtol 1e-12 on an exponential: observed 1e-12 relative
    np.testing.assert_allclose(p, sol.y[0], rtol=1e-10)
    # the energy that passed: ∫ p Q dt · 1.667 W (quad to 1e-12) = 100 C (p0² - p²) / 2
    for tk, ek in zip(t[::10], energy[::10]):
        ref, _ = quad(lambda s: hydraulic.W_PER_BAR_LPM * hydraulic.discharge(s, acc, ori)[0] ** 2
                      / ori["R"], 0.0, tk, epsabs=1e-12, epsrel=1e-13)
        assert ek == pytest.approx(ref, rel=1e-11, abs=1e-9)
    assert energy[-1] == pytest.approx(100 * 0.01 * (1e4 - p[-1] ** 2) / 2, rel=1e-14)


def test_invalid_parameters_are_refused():
    with pytest.raises(BenchmarkError, match="C"):
        hydraulic.simulate(np.array([0.0, 1.0]), np.zeros(2), {"C": 0.0})
    with pytest.raises(BenchmarkError, match="R"):
        hydraulic.orifice_flow(1.0, {"R": -1.0})
