"""Held-out errors measured against an output's swing: a gas accumulator whose pressure varies
about its charge (the analytic polytropic law as the data), a heated body's temperature in
kelvin (scipy's solution)."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.fmu.dataset import RunRecord, output_scale, records_to_dataset
from fmu_surrogate.identify.heldout import heldout_errors
from fmu_surrogate.identify.selection import select_dataset

T = np.linspace(0.0, 10.0, 1001)
FLOWS = [0.03 * (np.sin(1.3 * T) + 0.5 * np.sin(3.1 * T + 0.4)),
         0.03 * (np.cos(0.7 * T) - 0.3 * np.sin(2.3 * T) + 0.4 * np.sin(1.9 * T)),
         0.03 * (np.sin(1.1 * T + 0.2) + 0.4 * np.sin(2.7 * T))]  # l/s; the last is held out


def _pressure(Q: np.ndarray) -> np.ndarray:
    """p [bar] of a gas charged at 150 bar in 1 l (polytropic, κ = 1.4) as fluid flows in at
    ``Q`` [l/s], held over each 10 ms step: exact."""
    V = np.concatenate([[0.0], np.cumsum(Q[:-1]) * 0.01])
    return 150.0 * (1.0 / (1.0 - V)) ** 1.4


@pytest.fixture(scope="module")
def accumulator():
    return _dataset(T, FLOWS, [_pressure(Q) for Q in FLOWS], ("Q", "l/s"), ("p", "bar"))


def _dataset(t: np.ndarray, us: list, ys: list, u: tuple[str, str], y: tuple[str, str]):
    """A dataset of one input and one output per run (names and units ``u``, ``y``), the
    input held over each step."""
    recs = [RunRecord(index=r, values={u[0]: a, y[0]: b}) for r, (a, b) in enumerate(zip(us, ys))]
    ds = records_to_dataset(recs, t, None, [u[0], y[0]],
                            attrs={"input_interpolation": "zero-order hold over each step"})
    for (n, unit), c in ((u, "input"), (y, "output")):
        ds[n].attrs.update(causality=c, units=unit, type="Real")
    return ds


def test_a_pressure_about_its_charge_is_measured_against_its_swing(accumulator):
    p = _pressure(FLOWS[2])
    swing = output_scale(p)
    assert swing == pytest.approx(np.max(p) - 150.0)  # it starts at its charge and rises
    choice = select_dataset(accumulator)
    # the linear model misses the held-out swing of 14 bar by 4.6 % (measured 4.59 %); against
    # the pressure's 164 bar that reads as 0.40 %, within the tolerance of 1 %, and the linear
    # model would have been kept
    assert choice.linear_error > 3 * choice.tolerance
    assert choice.linear_error * swing / np.max(p) < choice.tolerance
    assert choice.method == "nonlinear"
    # measured 0.061 % of the swing: the polytropic law is smooth and the data exact
    assert choice.nonlinear_error < 0.2 * choice.tolerance
    lin = choice.linear
    assert max(heldout_errors(lin.to_surrogate(), lin.x0_, accumulator, ["Q"], ["p"], [2])) == (
        pytest.approx(choice.linear_error, rel=1e-9))  # the figure the choice reports


def test_the_same_accumulator_in_si_units_fits_as_well():
    """The accumulator of the test above in Pa and m³/s: the same power times 100, the charge
    an offset of 1.5e7 Pa.  The fit balances the constant source's port at the power ports'
    power, so it takes the same steps as in bar and l/s (measured 0.0655 % against 0.0612 %;
    0.486 % before, the source's port at unit scale in any units)."""
    ds = _dataset(T, [Q * 1e-3 for Q in FLOWS], [_pressure(Q) * 1e5 for Q in FLOWS],
                  ("Q", "m3/s"), ("p", "Pa"))
    choice = select_dataset(ds)
    assert choice.method == "nonlinear"
    assert choice.nonlinear_error < 0.2 * choice.tolerance


def heated_body(seeds: tuple[int, ...] = (1, 2)):
    """A body of 500 J/K heated by ``Q`` (W) from 293.15 K, losing heat by convection (2 W/K)
    and radiation (``εσA = 2.55e-8 W/K⁴``) to 293.15 K; ``T`` (K) out; scipy's solution at
    1e-10 as the data, 0.5 s samples, runs of band-limited noise about 1.5 kW and a held-out
    sine (the last).  Kelvin and watts make no power: the input is modulating, the
    temperature a measured output that swings about 200 K from 293.15 K."""
    from scipy.integrate import solve_ivp
    from scipy.signal import butter, filtfilt

    t = np.linspace(0.0, 600.0, 1201)
    b, a = butter(2, 0.02)

    def noise(seed):
        y = filtfilt(b, a, np.random.default_rng(seed).normal(size=t.size))
        return 1500.0 + 1500.0 * y / np.abs(y).max()

    def body(Q):
        def f(s, x):
            T, q = x[0], Q[min(int(s / 0.5), t.size - 1)]
            return [(q - 2.0 * (T - 293.15) - 2.55e-8 * (T ** 4 - 293.15 ** 4)) / 500.0]

        return solve_ivp(f, (0.0, 600.0), [293.15], t_eval=t, rtol=1e-10, atol=1e-8,
                         max_step=0.5).y[0]

    Qs = [noise(s) for s in seeds] + [1200.0 + 1200.0 * np.sin(2.0 * np.pi * t / 120.0)]
    return _dataset(t, Qs, [body(Q) for Q in Qs], ("Q", "W"), ("T", "K"))
