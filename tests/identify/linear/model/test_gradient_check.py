"""Tests of the gradient checking tools in fmu_surrogate.identify.linear.model.gradient_check."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.identify.linear.model.adjoint_checked import cost
from fmu_surrogate.identify.linear.model.experiments import PARAMS, Experiment, Regularization
from fmu_surrogate.identify.linear.model.gradient_check import (
    TaylorResult,
    autograd_cost_and_gradient,
    autograd_gradient,
    compare_with_autograd,
    loop_cost_and_gradient,
    taylor_test,
)


def _f(x):
    return float(0.5 * x["a"] @ x["a"] + np.sin(x["b"]).sum() + x["a"][0] * x["b"][1])


def _grad(x):
    ga = x["a"].copy()
    ga[0] += x["b"][1]
    gb = np.cos(x["b"])
    gb[1] += x["a"][0]
    return {"a": ga, "b": gb}


def test_taylor_test_correct_gradient_has_slope_two():
    rng = np.random.default_rng(0)
    x = {"a": rng.standard_normal(4), "b": rng.standard_normal(3)}
    d = {"a": rng.standard_normal(4), "b": rng.standard_normal(3)}
    res = taylor_test(_f, x, d, _grad(x), eps0=1e-2, n=8)
    assert isinstance(res, TaylorResult)
    assert res.eps.shape == (8,) and res.remainders.shape == (8,) and res.slopes.shape == (7,)
    np.testing.assert_allclose(res.eps, 1e-2 / 2.0 ** np.arange(8))
    # Smooth f: remainder = ½ ε² dᵀHd + O(ε³); slope 2 to a few 1e-3.
    assert res.slope == pytest.approx(2.0, abs=0.02)


def test_taylor_test_wrong_gradient_has_slope_one():
    rng = np.random.default_rng(1)
    x = {"a": rng.standard_normal(4), "b": rng.standard_normal(3)}
    d = {"a": rng.standard_normal(4), "b": rng.standard_normal(3)}
    g = _grad(x)
    g["b"] = g["b"] * 1.01  # 1 % error: remainder dominated by ε·⟨δg, d⟩
    res = taylor_test(_f, x, d, g, eps0=1e-4, n=6)
    assert res.slope == pytest.approx(1.0, abs=0.05)


def test_taylor_test_partial_direction_and_validation():
    x = {"a": np.ones(4), "b": np.ones(3)}
    res = taylor_test(_f, x, {"b": np.ones(3)}, {"b": _grad(x)["b"]})
    assert res.slope == pytest.approx(2.0, abs=0.02)
    with pytest.raises(ValueError, match="no entry"):
        taylor_test(_f, x, {"a": np.ones(4)}, {"b": np.ones(3)})
    with pytest.raises(ValueError, match="at least 2"):
        taylor_test(_f, x, {"a": np.ones(4)}, _grad(x), n=1)


def _small_problem(seed=0, n=3, m=2, K=41):
    rng = np.random.default_rng(seed)
    S = rng.standard_normal((n, n))
    Y = rng.standard_normal((n, 1))
    Z = rng.standard_normal((n, n))
    p = {
        "J": S - S.T,
        "R": Y @ Y.T,
        "Q": Z @ Z.T / n + np.eye(n),
        "B": rng.standard_normal((n, m)),
        "x0": rng.standard_normal(n),
    }
    t = np.linspace(0, 1, K)
    u = np.c_[np.sin(5 * t), np.cos(2 * t)][:, :m]
    e = Experiment.from_arrays(t, u, np.c_[np.cos(3 * t), t][:, :m])
    return p, e


@pytest.mark.parametrize("mode", ["exact", "euler"])
def test_autograd_gradient_matches_central_differences(mode):
    # Independent of the adjoint code: torch autograd vs central differences of cost().
    # Central differences with step 1e-6 have truncation ~1e-12 and cancellation
    # ~1e-16·cost/1e-6 ≈ 1e-10 relative; 1e-7 leaves margin.
    p, e = _small_problem()
    reg = Regularization(lam=0.2, log_q=0.1)
    c, g = autograd_cost_and_gradient(p, e, mode, reg)
    assert c == pytest.approx(cost(p, e, mode, reg), rel=1e-13)
    for k in PARAMS:
        fd = np.zeros_like(p[k])
        for idx in np.ndindex(p[k].shape):
            pp = {kk: v.copy() for kk, v in p.items()}
            pm = {kk: v.copy() for kk, v in p.items()}
            pp[k][idx] += 1e-6
            pm[k][idx] -= 1e-6
            fd[idx] = (cost(pp, e, mode, reg) - cost(pm, e, mode, reg)) / 2e-6
        assert np.linalg.norm(g[k] - fd) < 1e-7 * np.linalg.norm(fd), k


def test_autograd_wrt_subset_and_compare():
    p, e = _small_problem(seed=2)
    g = autograd_gradient(p, [e, e], "exact", wrt=("Q",))
    assert set(g) == {"Q"}
    assert compare_with_autograd(p, [e, e], "exact", wrt=("Q", "x0")) < 1e-10


def test_loop_reference_single_step():
    # K = 2, n = m = 1, Euler: x1 = x0 + h(a x0 + b u0); cost = ½ h (q b x0 − y0)² (left end).
    p = {
        "J": np.zeros((1, 1)),
        "R": np.array([[0.5]]),
        "Q": np.array([[2.0]]),
        "B": np.array([[1.5]]),
        "x0": np.array([0.7]),
    }
    e = Experiment.from_arrays([0.0, 0.1], [[1.0], [2.0]], [[0.3], [0.0]])
    c, g = loop_cost_and_gradient(p, e, "euler")
    r0 = 1.5 * 2.0 * 0.7 - 0.3
    assert c == pytest.approx(0.5 * 0.1 * r0**2, rel=1e-14)
    assert g["x0"][0] == pytest.approx(0.1 * r0 * 3.0, rel=1e-14)
    assert g["J"][0, 0] == 0.0 and g["R"][0, 0] == 0.0  # x1 does not enter the cost


def test_loop_evaluator_is_the_loop_reference_behind_the_evaluator_interface():
    from fmu_surrogate.identify.linear.model.adjoint import Evaluator
    from fmu_surrogate.identify.linear.model.adjoint_checked import cost_and_gradient
    from fmu_surrogate.identify.linear.model.gradient_check import LoopEvaluator, loop_cost

    rng = np.random.default_rng(4)
    n, m = 4, 2
    S = rng.standard_normal((n, n))
    p = {
        "J": S - S.T,
        "R": 0.1 * np.eye(n),
        "Q": np.eye(n),
        "B": rng.standard_normal((n, m)),
        "x0": rng.standard_normal(n),
    }
    t = np.linspace(0.0, 1.0, 51)
    e = Experiment.from_arrays(t, np.c_[np.sin(4 * t), t], np.c_[np.cos(3 * t), t**2])
    reg = Regularization(lam=0.1)
    args = [p[k] for k in PARAMS]
    for mode in ("exact", "euler"):
        le = LoopEvaluator(e, mode=mode, reg=reg, wrt=("J", "B"))
        st = le.forward(*args)
        assert le.cost(st) == loop_cost(p, e, mode, reg, ("J", "B"))
        c, g = le.cost_and_gradient(st)
        cl, gl = loop_cost_and_gradient(p, e, mode, reg, ("J", "B"))
        assert c == cl and all(np.array_equal(g[k], gl[k]) for k in ("J", "B"))
        # and it agrees with the vectorised evaluator (reordered sums: 1e-12 relative)
        ev = Evaluator(e, mode=mode, reg=reg, wrt=("J", "B"))
        cv, gv = ev.cost_and_gradient(ev.forward(*args))
        assert cv == pytest.approx(c, rel=1e-12)
        _, gc = cost_and_gradient(p, e, mode, reg, ("J", "B"))
        for k in ("J", "B"):
            assert np.linalg.norm(gv[k] - g[k]) <= 1e-11 * np.linalg.norm(g[k])
            np.testing.assert_array_equal(gv[k], gc[k])
    with pytest.raises(ValueError, match="mode must be"):
        LoopEvaluator(e, mode="rk4")
