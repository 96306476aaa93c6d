"""The Levenberg–Marquardt fit's pieces: the shooting residuals' Jacobian against central
differences (dense and sparse), and the bounded steps against scipy's least squares."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from scipy.optimize import least_squares

from fmu_surrogate.identify.nonlinear import gauss_newton
from fmu_surrogate.identify.nonlinear.gauss_newton import (
    Shooting,
    jacobian,
    projected_lm,
    residuals,
)


def _toy():
    """Four segments of two experiments (segments 0, 2 start them, 1, 3 free), two states, two
    model parameters; each segment's outputs and end state depend on the model and its own
    start state only."""
    n, Pm = 2, 2
    shoot = Shooting(Pm, n, np.array([1, 3]), np.array([0, 2]), np.array([1, 3]),
                     np.array([0.5, 2.0]), 4)
    fixed = torch.tensor([[0.3, -0.2], [0.1, 0.4]], dtype=torch.float64)
    j = torch.arange(3, dtype=torch.float64)

    def forward(theta):
        a, xf = theta[..., :Pm], theta[..., Pm:].reshape(theta.shape[:-1] + (2, n))
        lead = theta.shape[:-1]
        x = torch.stack([fixed[0].expand(lead + (n,)), xf[..., 0, :],
                         fixed[1].expand(lead + (n,)), xf[..., 1, :]], dim=-2)  # (..., 4, n)
        ry = torch.cat([a[..., None, :1] * torch.sin(x[..., :, :1] + j * a[..., None, 1:]),
                        torch.tanh(x[..., :, 1:] * a[..., None, :1])], dim=-1)  # (..., 4, 4)
        xe = x * torch.exp(-a[..., None, :1]) + a[..., None, 1:] * x.flip(-1) ** 2
        return ry, xe

    def res(theta):
        ry, xe = forward(torch.as_tensor(theta))
        return residuals(shoot, ry.numpy(), xe.numpy(), np.asarray(theta)[Pm:].reshape(2, n))

    return shoot, forward, res


@pytest.mark.parametrize("dense", [True, False])
def test_jacobian_matches_central_differences(dense, monkeypatch):
    if not dense:
        monkeypatch.setattr(gauss_newton, "DENSE_LIMIT", 0)
    shoot, forward, res = _toy()
    theta = np.array([0.7, -0.4, 0.2, 0.5, -0.3, 0.8])
    J = jacobian(shoot, forward, torch.as_tensor(theta))
    assert sp.issparse(J) != dense
    J = J.toarray() if sp.issparse(J) else J
    h = 1e-6
    fd = np.column_stack([(res(theta + h * e) - res(theta - h * e)) / (2 * h)
                          for e in np.eye(theta.size)])
    # central differences err by O(h²) ≈ 1e-12 plus round-off ε/h ≈ 1e-10
    np.testing.assert_allclose(J, fd, atol=1e-8)
    # the defects see the next segment's start state through −scale
    assert J[-2, 4] == -0.5 and J[-1, 5] == -2.0 and J[-4, 2] == -0.5


def test_bounded_steps_land_on_the_bound_and_match_scipy():
    """``y = a e^{−b t} + c`` with ``c ≥ 0`` on data whose unconstrained best ``c`` is negative:
    the solution has ``c`` on its bound, exactly here (scipy's trust-region reflective method
    stays strictly inside the box)."""
    t = np.linspace(0.0, 3.0, 60)
    y = 2.0 * np.exp(-1.3 * t) - 0.15 + 0.01 * np.sin(7 * t)

    def fun(x):
        return x[0] * np.exp(-x[1] * t) + x[2] - y

    def jac(x):
        e = np.exp(-x[1] * t)
        return np.column_stack([e, -x[0] * t * e, np.ones_like(t)])

    lo, hi = np.array([-np.inf, 0.0, 0.0]), np.full(3, np.inf)
    x, costs, _ = projected_lm(fun, jac, np.array([1.0, 1.0, 0.5]), lo, hi, 100, 1e-12,
                                    0.0)
    ref = least_squares(fun, [1.0, 1.0, 0.5], jac=jac, bounds=(lo, hi), xtol=1e-15,
                        ftol=1e-15, gtol=1e-15)
    assert x[2] == 0.0 and 0.0 < ref.x[2] < 1e-6
    # the same minimum: scipy's c sits within 1e-6 of the bound, the rest follows it
    np.testing.assert_allclose(x[:2], ref.x[:2], rtol=1e-5)
    assert costs[-1] <= 2.0 * ref.cost * (1 + 1e-8) and np.all(np.diff(costs) <= 0)
    assert len(costs) < 30


def test_a_fit_with_the_sparse_jacobian_takes_the_dense_fits_steps(mass_experiment, monkeypatch):
    """Long records keep the Jacobian sparse (the normal equations solved by a sparse LU): the
    same iterates as the dense path."""
    from fmu_surrogate.identify.nonlinear.estimator import NonlinearPHIdentifier

    t, u, y = mass_experiment(1, T=4.0)
    est = NonlinearPHIdentifier(2, max_iter=5, validation_runs=0)
    dense = est.fit(t, u, y).result_.cost_history
    monkeypatch.setattr(gauss_newton, "DENSE_LIMIT", 0)
    sparse = est.fit(t, u, y).result_.cost_history
    assert dense.size == sparse.size == 6
    # Cholesky against sparse LU of the same normal equations: round-off (1e-9 of the
    # cost) amplified along five steps
    np.testing.assert_allclose(sparse, dense, rtol=1e-6)


@pytest.mark.parametrize("level, per_ten, stops", [
    (1e-4, 1.5, False),   # an RMS error of 1 %, still falling: a valley crossed slowly
    (1e-4, 1.05, True),   # the same, no longer falling
    (1e-8, 1.5, True),    # an RMS error of 0.01 %: the last tenth costs most iterations
    (1e-8, 3.0, False),
    (1e-1, 1.5, True),    # 30 %: the class or the start is wrong, the caller changes them
])
def test_a_fit_stalls_by_how_far_its_cost_fell_and_where_it_is(level, per_ten, stops):
    costs = list(level * per_ten ** (np.arange(22, 0, -1) / 10.0))  # per_ten x per 10 steps
    assert bool(gauss_newton.stalled(costs)) is stops
    assert not gauss_newton.stalled(costs[-10:])  # fewer iterations than the window
    # near a tolerance the first window does not count (a plateau before the valley), above
    # and below it does
    near = gauss_newton.STALL_BAND[0] < level <= gauss_newton.STALL_BAND[1]
    assert bool(gauss_newton.stalled(costs[-12:])) is (stops and not near)


def test_a_fit_that_crosses_a_plateau_near_the_tolerance_goes_on():
    """A body heated from 293.15 K that loses heat as ``T⁴`` (scipy's solution): its fit
    from the linear start falls 3.18e-3 → 3.01e-3 in the first 10 iterations, then finds the
    radiation law (2.1e-5 ten iterations later); stopped after 10 it missed the held-out run
    by 4.8 %."""
    from fmu_surrogate.identify import LinearPHIdentifier
    from fmu_surrogate.identify.heldout import heldout_errors
    from fmu_surrogate.identify.nonlinear.estimator import NonlinearPHIdentifier
    from tests.identify.test_heldout import heated_body

    ds = heated_body()
    kw = {"inputs": ["Q"], "outputs": ["T"], "runs": [0, 1]}
    est = NonlinearPHIdentifier(1, linear=LinearPHIdentifier(1).fit_dataset(ds, **kw))
    est.fit_dataset(ds, **kw)
    assert est.result_.n_iter > 2 * gauss_newton.STALL_WINDOW
    # measured 0.020 % of the held-out swing (RK4 fit, scipy data at 1e-10): 0.2 % leaves
    # room for BLAS and the last iterations
    assert max(heldout_errors(est.to_surrogate(), None, ds, ["Q"], ["T"], [2])) < 2e-3


def test_a_spent_time_budget_stops_the_steps_where_they_are(monkeypatch):
    """``deadline`` (``time.monotonic()``) bounds the wall time: none left, the start comes
    back with its cost and the reason; where it is spent after two iterations, their steps
    stay."""
    import time

    from fmu_surrogate.identify.nonlinear import gauss_newton

    t = np.linspace(0.0, 3.0, 60)
    y = 2.0 * np.exp(-1.3 * t)

    def fun(x):
        return x[0] * np.exp(-x[1] * t) - y

    def jac(x):
        e = np.exp(-x[1] * t)
        return np.column_stack([e, -x[0] * t * e])

    lo, hi = np.full(2, -np.inf), np.full(2, np.inf)
    x0 = np.array([1.0, 1.0])
    x, costs, reason = projected_lm(fun, jac, x0, lo, hi, 100, 1e-12, 0.0,
                                    deadline=time.monotonic())
    assert np.array_equal(x, x0) and costs == [float(fun(x0) @ fun(x0))]
    assert reason == "the time budget (max_time) is spent"
    # a clock that advances one second per iteration (the callback): 2 s of budget, 2 steps
    clock = [0.0]
    monkeypatch.setattr(gauss_newton.time, "monotonic", lambda: clock[0])

    def tick(costs):
        clock[0] += 1.0

    x, costs, reason = projected_lm(fun, jac, x0, lo, hi, 100, 1e-12, 0.0, tick, 2.0)
    assert len(costs) == 3 and costs[2] < costs[1] < costs[0]
    assert reason == "the time budget (max_time) is spent"
    # without a budget the same steps go on to the minimum (a=2, b=1.3 exactly)
    x, _, reason = projected_lm(fun, jac, x0, lo, hi, 100, 1e-12, 0.0, tick)
    np.testing.assert_allclose(x, [2.0, 1.3], rtol=1e-8)
