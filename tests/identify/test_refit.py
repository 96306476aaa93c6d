"""A kept linear model refitted to all runs, the held-out ones included, where it met them
worse than the training runs: on a mass whose spring hardens a little, the held-out run at
twice the training runs' force (scipy's solution as the data)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fmu_surrogate.fmu.dataset.build import assemble_dataset
from fmu_surrogate.identify.heldout import heldout_errors
from fmu_surrogate.identify.refit import refit_linear
from fmu_surrogate.identify.selection import select_dataset

T = np.linspace(0.0, 10.0, 1001)


def _velocity(F: np.ndarray, k3: float) -> np.ndarray:
    """v of x'' = F − 0.8 v − 4 x − k3 x³ from rest, F held over each step (scipy)."""
    def f(t, s):
        x, v = s
        return [v, F[min(int(t / 0.01), T.size - 1)] - 0.8 * v - 4.0 * x - k3 * x ** 3]

    return solve_ivp(f, (0.0, 10.0), [0.0, 0.0], t_eval=T, rtol=1e-10, atol=1e-12,
                     max_step=0.01).y[1]


def _dataset(k3: float):
    Fs = [np.sin(1.3 * T) + 0.5 * np.sin(3.1 * T + 0.4),
          np.cos(0.7 * T) - 0.3 * np.sin(2.3 * T) + 0.4 * np.sin(1.9 * T),
          2.0 * (np.sin(1.1 * T + 0.2) + 0.4 * np.sin(2.7 * T))]  # the held-out run
    cols = [("F", "", np.stack(Fs)), ("v", "", np.stack([_velocity(F, k3) for F in Fs]))]
    ds = assemble_dataset(T, None, ["F", "v"], cols, runs=np.arange(3),
                          failure_kind=[""] * 3, message=[""] * 3,
                          n_samples=np.array([T.size] * 3), wall_time=np.zeros(3), params={},
                          signal_table=["{}"], signal_index=np.zeros(3, dtype=np.int64),
                          attrs={"input_interpolation": "zero-order hold over each step"})
    for n, c, u in (("F", "input", "N"), ("v", "output", "m/s")):
        ds[n].attrs.update(causality=c, units=u, type="Real")
    return ds


def _worst(est, ds, runs):
    sur = est.to_surrogate()
    return max(heldout_errors(sur, est.x0_, ds, ["F"], ["v"], runs))


@pytest.fixture(scope="module")
def hardening():
    ds = _dataset(0.05)
    return ds, select_dataset(ds)


def test_a_linear_model_that_meets_the_held_out_run_worse_is_refitted_to_all_runs(hardening):
    ds, choice = hardening
    assert choice.method == "linear"
    checked = refit_linear(choice.estimator, ds, ["F"], ["v"], [0, 1], [2], 0.01)[0]
    assert checked is choice.estimator  # the refit, refitted again: nothing new to learn
    # the reported error stays the checked model's on the held-out run (measured 0.471 %,
    # 0.154 % on the training runs); the kept model is the refit, whose worst error over all
    # runs is lower (measured 0.318 %): the hardening spread over the amplitudes seen
    assert 3e-3 < choice.linear_error < 1e-2
    assert "refitted to all runs, the held-out ones included, at order 2" in choice.report()
    line = choice.report().split("worst relative error over all runs ")[1]
    before, after = (float(line.split(" %")[0]), float(line.split("refitted ")[1].split(" %")[0]))
    assert after < 0.9 * before  # a gain well above the optimiser's last digits
    assert abs(_worst(choice.estimator, ds, [0, 1, 2]) - after / 100) < 1e-4 * before


def test_a_linear_model_that_meets_all_runs_alike_is_not_refitted():
    ds = _dataset(0.0)  # the mass is linear: the checked model meets every run at round-off
    choice = select_dataset(ds)
    assert choice.method == "linear" and choice.estimator is choice.linear
    # every run met to the data's digits (solve_ivp at rtol 1e-10; measured 1.2e-7 to 1.4e-7),
    # below the floor where errors count as equal: nothing to refit
    assert max(_worst(choice.estimator, ds, [r]) for r in (0, 1, 2)) < 1e-6
    assert "\n  not refitted to all runs: the checked model meets the held-out ones as the " \
        "training ones (worst error" in choice.report()
