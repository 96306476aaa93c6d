"""The hydraulic accumulators and orifices (bar, l/min) against their references, and the
references against scipy: the linear ones, the gas-charged accumulator and the turbulent orifice."""

from __future__ import annotations

import re

import numpy as np
import pytest
from fmpy import read_model_description
from fmpy.fmi1 import FMICallException
from scipy.integrate import quad, solve_ivp

from fmu_surrogate.benchmarks.params import BenchmarkError
from fmu_surrogate.benchmarks.vendor import hydraulic
from fmu_surrogate.fmu.model.units import power_factor
from tests.benchmarks._fmu import LogCapture, Slave, input_table, run

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


# -- the nonlinear components: gas-charged accumulator, turbulent orifice ---------------------

GAS_T = 10.0
#: the gas accumulator's defaults, written out (p_pre, V0 in l, n, p_init)
P_PRE, V0, N, P_INIT = 80.0, 1.0, 1.4, 150.0
V_INIT = V0 * (1.0 - (P_PRE / P_INIT) ** (1.0 / N))  # 0.362 l of fluid at 150 bar


def _drawn_flow(t):
    # l/min, held per step: 5 drawn and 3 pushed back in turns of ~1 s; the fluid volume stays
    # within 0.134 to 0.362 l (98 to 150 bar), the accumulator charged
    return 1.0 + 4.0 * np.sign(np.sin(3.0 * t))


def test_gas_accumulator_matches_reference(benchmark_fmus):
    t = np.linspace(0.0, GAS_T, 1001)
    Q = _drawn_flow(t)
    r = run(benchmark_fmus["gas_accumulator"], GAS_T, DT, ["p", "Q"], inputs=input_table(t, Q=Q))
    p = hydraulic.gas_simulate(t, Q)
    assert p.min() > 95.0 and p.max() == P_INIT  # the range the flow was chosen for
    # V' = -Q / 60 is constant on each step, so RK4 (10 substeps) and DOP853 integrate V exactly
    # up to round-off; the round-off of V over 10^4 substeps, times dp/dV = n p / (V0 - V)
    # (160 to 330 bar/l): observed 3.2e-12 bar on p = O(100); 30x margin
    np.testing.assert_allclose(r["p"], p, rtol=0, atol=1e-10)


def test_gas_accumulator_reference_against_scipy_and_its_energy():
    t = np.linspace(0.0, GAS_T, 1001)
    Q = _drawn_flow(t)
    p = hydraulic.gas_simulate(t, Q)

    # independently: the pressure law as an ODE in p (p' = -(n p / g) Q / 60, the gas volume
    # g = V0 (p_pre / p)^(1/n)) with the energy drawn through the port (W), held flow per step
    def f(s, x, q):
        g = V0 * (P_PRE / x[0]) ** (1.0 / N)
        return [-N * x[0] / g * q / 60.0, -hydraulic.W_PER_BAR_LPM * x[0] * q]

    X = np.empty((len(t), 2))
    X[0] = [P_INIT, 0.0]
    for k in range(len(t) - 1):
        sol = solve_ivp(f, (t[k], t[k + 1]), X[k], method="DOP853", rtol=1e-12, atol=1e-12,
                        args=(Q[k],))
        X[k + 1] = sol.y[:, -1]
    # DOP853 at rtol 1e-12 over 1000 steps: observed 6.8e-13 bar; 150x margin
    np.testing.assert_allclose(p, X[:, 0], rtol=0, atol=1e-10)
    # the fluid volume, V' = -Q / 60 summed step by step, and the pressure law written here
    V = V_INIT - np.concatenate([[0.0], np.cumsum(Q[:-1] * DT / 60.0)])
    law = P_PRE * (V0 / (V0 - V)) ** N
    # round-off of the sum and of the two forms of the law: observed 6e-13 bar
    np.testing.assert_allclose(p, law, rtol=0, atol=1e-11)
    np.testing.assert_allclose(hydraulic.gas_fluid_volume(p), V, rtol=0, atol=1e-13)  # 2e-15 l
    # energy: H(t) - H(0) = -∫ p Q dt, H relative to the initial charge (H(0) = 0); DOP853 as
    # above: observed 1.5e-11 J of up to 2.8 kJ; 70x margin
    H = hydraulic.gas_energy(V)
    np.testing.assert_allclose(H, X[:, 1], rtol=0, atol=1e-9)
    # isothermal (n = 1): H = 100 p_pre V0 ln(g_init / g) J
    iso = {"n": 1.0}
    v_iso = hydraulic.gas_fluid_volume(hydraulic.gas_simulate(t, Q, iso), iso)
    g0 = V0 * P_PRE / P_INIT
    np.testing.assert_allclose(hydraulic.gas_energy(v_iso, iso),
                               100.0 * P_PRE * V0 * np.log(g0 / (V0 - v_iso)), rtol=1e-13,
                               atol=1e-11)


def test_gas_accumulator_at_rest_holds_its_charge(benchmark_fmus):
    r = run(benchmark_fmus["gas_accumulator"], GAS_T, DT, ["p"])
    # Q = 0: the fluid volume never changes, and the pressure, computed from the initial charge,
    # is p_init to the last bit
    assert np.all(r["p"] == P_INIT)
    # the reference too, at its own initial volume (V_INIT above is the same to round-off)
    v_init = hydraulic.gas_fluid_volume(P_INIT)
    assert v_init == pytest.approx(V_INIT, rel=1e-15)
    assert hydraulic.gas_pressure(v_init) == P_INIT
    assert hydraulic.gas_energy(v_init) == 0.0


@pytest.mark.parametrize("Q, what", [(30.0, "accumulator emptied"),
                                     (-30.0, "gas compressed to nothing")])
def test_gas_accumulator_fails_the_step_that_empties_or_fills_it(benchmark_fmus, Q, what):
    log = LogCapture()
    with pytest.raises(FMICallException) as e:
        run(benchmark_fmus["gas_accumulator"], 2.0, DT, ["p"], start_values={"Q": Q}, logger=log)
    assert e.value.function == "fmi2DoStep"
    (msg,) = log.errors()
    assert what in msg
    t_fail = float(re.search(r"at t = ([0-9.eE+-]+) s", msg).group(1))
    # the fluid volume is linear in t: it leaves (0, V0) at t* = 60 V_INIT / Q (emptied) or
    # 60 (V0 - V_INIT) / |Q| (full); the first RK4 stage past it is at most half a substep
    # (DT / 20) later
    t_star = 60.0 * (V_INIT if Q > 0 else V0 - V_INIT) / abs(Q)
    assert t_star - 1e-12 <= t_fail <= t_star + DT / 20 + 1e-12
    with pytest.raises(BenchmarkError, match="emptied" if Q > 0 else "compressed to nothing"):
        hydraulic.gas_simulate(np.linspace(0.0, 2.0, 201), np.full(201, Q))


def test_gas_accumulator_volume_is_internal_and_its_pressure_has_no_feedthrough(benchmark_fmus):
    md = read_model_description(str(benchmark_fmus["gas_accumulator"]))
    assert md.modelExchange is None
    units = {v.name: v.unit for v in md.modelVariables}
    assert "V" not in units and "der(V)" not in units
    assert (units["Q"], units["p"], units["V0"], units["p_pre"]) == ("l/min", "bar", "l", "bar")
    (out,) = md.outputs
    assert out.variable.name == "p" and out.dependencies == []


def test_turbulent_orifice_flow(benchmark_fmus):
    fmu = benchmark_fmus["turbulent_orifice"]
    md = read_model_description(str(fmu))
    (out,) = md.outputs
    assert [d.name for d in out.dependencies] == ["p"]  # direct feedthrough declared
    P = np.array([-150.0, -2.0, -0.01, 0.0, 1e-6, 0.5, 2.0, 50.0, 350.0])
    params = {"K": 12.0, "p_crit": 3.0}
    with Slave(fmu) as s:
        s.instantiate()
        s.initialize({"p": P[0], **params})
        Q = []
        for k, p in enumerate(P):  # the flow answers the pressure of the step
            s.set(p=float(p))
            Q.append(s.get("Q")[0])
            s.fmu.doStep(k * DT, DT)
        s.fmu.terminate()
    Q = np.array(Q)
    # the same expression in C and numpy: observed 1 ulp (libm tanh)
    np.testing.assert_allclose(Q, hydraulic.turbulent_flow(P, params), rtol=1e-15, atol=0)
    a = np.abs(P)
    law = np.sign(P) * 12.0 * np.sqrt(a) * np.tanh(2.0 * np.sqrt(a / 3.0))
    np.testing.assert_allclose(Q, law, rtol=1e-15, atol=0)  # observed 2.4e-16
    assert np.all(np.sign(Q) == np.sign(P)) and np.all(P * Q >= 0)  # dissipates
    # laminar below p_crit (2 K p / sqrt(p_crit), to (4/3) p / p_crit), turbulent above
    assert Q[4] == pytest.approx(2 * 12.0 * 1e-6 / np.sqrt(3.0), rel=1e-6)
    assert Q[-1] == pytest.approx(12.0 * np.sqrt(350.0), rel=1e-15)
    md_units = {v.name: v.unit for v in md.modelVariables}
    assert (md_units["p"], md_units["Q"], md_units["p_crit"], md_units["K"]) == (
        "bar", "l/min", "bar", None)  # K in (l/min)/sqrt(bar): no unit string for it


@pytest.mark.parametrize("name, bad, message", [
    ("gas_accumulator", {"p_init": 70.0}, "p_init = 70 bar must be > p_pre = 80 bar"),
    ("gas_accumulator", {"n": 0.5}, "n = 0.5 (polytropic exponent) must be >= 1"),
    ("gas_accumulator", {"V0": 0.0}, "V0 = 0 l (gas volume at the precharge) must be > 0"),
    ("gas_accumulator", {"p_pre": -1.0}, "p_pre = -1 bar (precharge pressure) must be > 0"),
    ("turbulent_orifice", {"K": 0.0}, "K = 0 (l/min)/sqrt(bar) must be > 0"),
    ("turbulent_orifice", {"p_crit": -2.0}, "p_crit = -2 bar must be > 0"),
])
def test_nonlinear_components_refuse_bad_parameters(benchmark_fmus, name, bad, message):
    with Slave(benchmark_fmus[name]) as s:
        s.instantiate()
        with pytest.raises(FMICallException):
            s.initialize(bad)
        assert message in s.log.errors()[0]
    (key,) = bad
    if name == "gas_accumulator":
        with pytest.raises(BenchmarkError, match=f"parameter {key} = "):
            hydraulic.gas_simulate(np.array([0.0, 1.0]), np.zeros(2), bad)
    else:
        with pytest.raises(BenchmarkError, match=f"parameter {key} = "):
            hydraulic.turbulent_flow(1.0, bad)
