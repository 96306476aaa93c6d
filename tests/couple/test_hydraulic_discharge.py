"""The benchmark system hydraulic_discharge.toml (accumulator and orifice in bar and l/min) on
libcosim: the bond's energy in joules against the Jacobi recurrence and the analytic discharge,
and its report."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.benchmarks.vendor import hydraulic
from fmu_surrogate.couple.results.energy import bond_table
from fmu_surrogate.couple.running import run

pytest.importorskip("libcosimpy")

C, P0, R = 0.01, 100.0, 2.0  # the system file's parameters
W = hydraulic.W_PER_BAR_LPM  # 1.667 W per bar·l/min


@pytest.fixture
def system(benchmark_system):
    return benchmark_system("hydraulic_discharge")


def _jacobi(t: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Pressure and flow of the fixed-step exchange: each side holds the other's value of t_k."""
    p, Q = np.empty(len(t)), np.empty(len(t))
    p[0], Q[0] = P0, P0 / R
    for k in range(len(t) - 1):
        p[k + 1] = p[k] - Q[k] * h / (60 * C)  # RK4 is exact on the held flow
        Q[k + 1] = p[k] / R  # the orifice answers the pressure it held over the step
    return p, Q


def test_bond_energy_is_in_joules_and_matches_the_discharge(system):
    T, h = 2.0, 0.01
    ds = run(system, T, h, "fixed", progress=False)
    assert str(ds.status.values[0]) == "ok"
    t = ds.time.values
    p, Q = _jacobi(t, h)
    # the recurrence holds to round-off (observed 1e-13 bar, 1e-14 l/min)
    np.testing.assert_allclose(ds["accumulator.p"].values[0], p, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ds["orifice.Q"].values[0], Q, rtol=0, atol=1e-10)
    # the recorded powers are in W: 1.667 W per bar·l/min, each side over its own step
    P_ori = ds["bond:line:P_orifice"].values[0]
    P_acc = ds["bond:line:P_accumulator"].values[0]
    np.testing.assert_allclose(P_ori[1:], W * p[:-1] * (Q[:-1] + Q[1:]) / 2, rtol=1e-13)
    np.testing.assert_allclose(P_acc[1:], W * Q[:-1] * (p[:-1] + p[1:]) / 2, rtol=1e-13)
    assert ds.attrs["bond:line:power_factor"] == pytest.approx(5 / 3, rel=1e-15)
    assert ds.attrs["bond:line:energy_unit"] == "J"
    assert ds["bond:line:residual"].attrs["units"] == "J"
    assert ds["bond:line:P_orifice"].attrs["units"] == "W"
    assert ds["accumulator.p"].attrs["units"] == "bar"
    # the accumulator gives exactly the energy it loses (its state is exact for the held flow)
    lost = hydraulic.accumulator_energy(P0, {"C": C}) - hydraulic.accumulator_energy(p, {"C": C})
    given = np.concatenate([[0.0], np.cumsum(h * P_acc[1:])])
    np.testing.assert_allclose(given, lost, rtol=1e-12, atol=1e-9)
    # against the analytic discharge, 100 C (p0² - p²) / 2 = 4821.6 J by t = 2 s: the exchange
    # lags one step (first order), measured 0.16 % at h = 0.01 s (τ = 1.2 s)
    _, exact = hydraulic.discharge(t, {"C": C, "p0": P0}, {"R": R})
    received = np.sum(h * P_ori[1:])
    assert exact[-1] == pytest.approx(4821.63, abs=0.01)
    assert received == pytest.approx(exact[-1], rel=3e-3)
    # residual ∫(P_out − P_in) dt in J: the accumulator gave 0.35 J less than the orifice took
    res = float(ds["bond:line:residual"].values[0, -1])
    assert res == pytest.approx(given[-1] - received, rel=1e-9)
    assert -1.0 < res < 0.0


def test_bond_table_reports_joules_relative_to_the_energy_that_passed(system):
    ds = run(system, 2.0, 0.01, "fixed", progress=False)
    text = bond_table(ds)
    line = next(s for s in text.splitlines() if s.startswith("line"))
    bond, side, energy, residual, rel, unit = line.split()
    assert (bond, side, unit) == ("line", "accumulator", "J")
    res = float(ds["bond:line:residual"].values[0, -1])
    assert float(residual) == pytest.approx(res, rel=1e-5)  # printed with 6 digits
    passed = np.sum(np.diff(ds.time.values) * np.abs(ds["bond:line:P_orifice"].values[0][1:]))
    assert float(energy) == pytest.approx(4829.0, abs=0.5)  # joules, not bar·l/min (2897)
    assert rel == f"{res / passed:.2%}"
    assert "note:" not in text
