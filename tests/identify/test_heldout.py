"""Held-out errors measured against an output's swing: a gas accumulator whose pressure varies
about its charge (the analytic polytropic law as the data)."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.fmu.dataset import output_scale
from fmu_surrogate.fmu.dataset.build import assemble_dataset
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
    cols = [("Q", "", np.stack(FLOWS)), ("p", "", np.stack([_pressure(Q) for Q in FLOWS]))]
    ds = assemble_dataset(T, None, ["Q", "p"], cols, runs=np.arange(3),
                          failure_kind=[""] * 3, message=[""] * 3,
                          n_samples=np.array([T.size] * 3), wall_time=np.zeros(3), params={},
                          signal_table=["{}"], signal_index=np.zeros(3, dtype=np.int64),
                          attrs={"input_interpolation": "zero-order hold over each step"})
    for n, c, u in (("Q", "input", "l/s"), ("p", "output", "bar")):
        ds[n].attrs.update(causality=c, units=u, type="Real")
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
