"""Linear or nonlinear: the held-out error decides, and the report says why."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.identify.selection import ModelSelectionError, select_model


def test_linear_data_keep_the_linear_model(mass_experiment):
    """A linear mass-spring-damper: the linear fit is exact, nothing nonlinear is tried."""
    from fmu_surrogate.ph import LinearPH, simulate

    sys = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.3]), np.diag([2.0, 1.0]), [[0.0], [1.0]])
    data = []
    for s in (1, 2):
        t, u, _ = mass_experiment(s, T=8.0)
        data.append((t, u, simulate(sys, t, u).y))
    choice = select_model(data[:1], data[1:], order=2)
    # measured 2.1e-4: the data come from the midpoint rule (h = 0.02), the fit is the exact
    # discretisation of a continuous-time model, their difference is O(h²)
    assert choice.method == "linear" and choice.linear_error < 1e-3
    assert np.isnan(choice.nonlinear_error) and "no nonlinear model needed" in choice.report()


def test_nonlinear_data_move_on_to_the_nonlinear_model(mass_experiment):
    data = [mass_experiment(s) for s in (1, 2)]
    choice = select_model(data[:1], data[1:], order=2,
                          nonlinear={"ridges": ("quartic",), "segment_length": 25,
                                     "max_iter": 60})
    # measured: linear 48.2 % held-out, nonlinear 4.5 % after 60 iterations (one training run)
    assert choice.method == "nonlinear"
    assert choice.nonlinear_error < 0.2 * choice.linear_error
    assert "exceeds the tolerance" in choice.reason
    # the nonlinear model started from the very linear fit that was validated
    assert choice.estimator.result_.linear_validation_error == choice.linear_error


def test_a_nonlinear_fit_that_cannot_start_keeps_the_linear_model(mass_experiment):
    """A short record gives a linear start with a mode far faster than the sampling: the
    nonlinear fit refuses it with the fix named, and the linear model is kept."""
    data = [mass_experiment(s, T=10.0) for s in (1, 2)]
    choice = select_model(data[:1], data[1:], order=2)
    assert choice.method == "linear" and "lower order" in choice.reason
    with pytest.raises(ModelSelectionError, match="tolerance"):
        select_model(data[:1], order=2, tolerance=0.0)
