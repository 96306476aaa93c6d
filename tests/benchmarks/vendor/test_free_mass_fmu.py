"""The free-mass FMU (power-out port, lossless) against the scipy reference and its energy balance."""

from __future__ import annotations

import numpy as np
import pytest
from fmpy import read_model_description

from fmu_surrogate.benchmarks.params import BenchmarkError
from fmu_surrogate.benchmarks.vendor import free_mass
from tests.benchmarks._fmu import input_table, run

T, DT = 5.0, 0.01


def _force(t):
    return 3.0 * np.sin(2.0 * t) + 1.5 * np.sign(np.sin(5.0 * t))


def test_cosimulation_matches_reference_and_power_flows_out(benchmark_fmus):
    t = np.linspace(0.0, T, 501)
    F = _force(t)
    params = {"m": 1.5, "v0": 0.8}
    r = run(benchmark_fmus["free_mass"], T, DT, ["v", "F"], inputs=input_table(t, F=F),
            start_values=params)
    v = free_mass.simulate(t, F, params)
    # v' = -F/m is constant on each step, so both Dormand-Prince (FMU) and DOP853 (reference)
    # are exact up to round-off: the observed difference is ~1e-15 on |v| = O(1)
    np.testing.assert_allclose(r["v"], v, rtol=0, atol=1e-12)
    np.testing.assert_allclose(v[1:] - v[:-1], -F[:-1] * DT / 1.5, rtol=0, atol=1e-13)
    # lossless, power out of the port: H(t_k) - H(0) = -int F v dt (v linear over a held step)
    H = free_mass.hamiltonian(r["v"], params)
    out = np.concatenate([[0.0], np.cumsum(F[:-1] * DT * (r["v"][1:] + r["v"][:-1]) / 2)])
    np.testing.assert_allclose(H - H[0], -out, rtol=0, atol=1e-12)


def test_starts_from_v0_and_is_marginally_stable(benchmark_fmus):
    # no force: the velocity stays at v0 for ever (eigenvalue 0, no damping)
    r = run(benchmark_fmus["free_mass"], T, 0.5, ["v"], start_values={"v0": -0.3})
    np.testing.assert_array_equal(r["v"], -0.3)
    ph = free_mass.free_mass_ph(2.0)
    assert ph.J[0, 0] == ph.R[0, 0] == 0.0 and ph.Q[0, 0] == 0.5


def test_model_exchange_matches_reference(benchmark_fmus):
    r = run(benchmark_fmus["free_mass"], 2.0, 0.1, ["v"], fmi_type="ModelExchange",
            start_values={"F": 0.6, "m": 3.0, "v0": 1.0})
    # constant force: v = v0 - F t / m exactly; CVode at rtol 1e-10 on a linear solution
    np.testing.assert_allclose(r["v"], 1.0 - 0.2 * r["time"], rtol=0, atol=1e-9)


def test_units_and_rotational_variant(benchmark_fmus):
    units = {v.name: v.unit for v in read_model_description(
        str(benchmark_fmus["free_mass"])).modelVariables}
    assert (units["F"], units["v"], units["m"]) == ("N", "m/s", "kg")
    md = read_model_description(str(benchmark_fmus["free_inertia"]))
    assert md.coSimulation.modelIdentifier == "free_inertia"
    units = {v.name: v.unit for v in md.modelVariables}
    assert (units["F"], units["v"], units["m"]) == ("N.m", "rad/s", "kg.m2")


def test_invalid_mass_is_refused():
    with pytest.raises(BenchmarkError, match="m = 0.0 must be > 0"):
        free_mass.simulate(np.array([0.0, 1.0]), np.zeros(2), {"m": 0.0})
    with pytest.raises(BenchmarkError, match="unknown free_mass parameter"):
        free_mass.rhs([0.0], 1.0, {"mass": 1.0})
