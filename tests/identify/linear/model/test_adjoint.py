"""Tests of fmu_surrogate.identify.linear.model.adjoint: forward models, discrete costs and adjoint gradients."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm, logm

from fmu_surrogate.identify.linear.model.adjoint import Evaluator
from fmu_surrogate.identify.linear.model.adjoint_checked import (
    clear_forward_cache,
    cost,
    cost_and_gradient,
)
from fmu_surrogate.identify.linear.model.discretisation import (
    _foh_frechet_adjoint,
    foh_block_matrix,
    foh_matrices,
    simulate,
)
from fmu_surrogate.identify.linear.model.experiments import (
    PARAMS,
    Experiment,
    Regularization,
    check_params,
    step_groups,
)
from fmu_surrogate.identify.linear.model.gradient_check import (
    compare_with_autograd,
    loop_cost,
    loop_cost_and_gradient,
    taylor_test,
)

N, M, K = 5, 2, 201


def random_params(rng: np.random.Generator, n: int = N, m: int = M) -> dict[str, np.ndarray]:
    """Random structured pH parameters: J skew, R = YYᵀ (rank 2), Q SPD, B, x0."""
    S = rng.standard_normal((n, n))
    Y = rng.standard_normal((n, 2))
    Z = rng.standard_normal((n, n))
    return {
        "J": S - S.T,
        "R": 0.3 * Y @ Y.T,
        "Q": Z @ Z.T / n + np.eye(n),
        "B": rng.standard_normal((n, m)),
        "x0": rng.standard_normal(n),
    }


def inputs(t: np.ndarray) -> np.ndarray:
    return np.c_[np.sin(7 * t), np.cos(3 * t) + 0.5 * np.sign(np.sin(11 * t))]


@pytest.fixture(scope="module")
def setup():
    """A fitted-looking point ``p`` and data from a different system ``p_true``.

    Two experiments: a uniform grid (K = 201) and a non-uniform grid (two step sizes).
    """
    rng = np.random.default_rng(42)
    p = random_params(rng)
    p_true = random_params(rng)
    t1 = np.linspace(0.0, 1.0, K)
    t2 = np.concatenate([np.linspace(0.0, 0.5, 51), np.linspace(0.5, 1.0, 26)[1:]])
    data = {}
    for mode in ("exact", "euler"):
        exps = []
        for t in (t1, t2):
            u = inputs(t)
            _, y = simulate(p_true, t, u, mode)
            exps.append(Experiment.from_arrays(t, u, y + 0.01 * rng.standard_normal(y.shape)))
        data[mode] = exps
    return p, data, rng


def unit_direction(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    d = rng.standard_normal(shape)
    return d / np.linalg.norm(d)


# ------------------------------------------------------------------------------------------
# Gradients
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["exact", "euler"])
@pytest.mark.parametrize("param", PARAMS)
def test_taylor_slope_two(setup, mode, param):
    # The remainder of a first-order expansion with the correct gradient is O(ε²).  Unit-norm
    # directions and ε ≤ 1e-2 keep it in the asymptotic range; the remainders stay above the
    # rounding floor (≈ 1e-16 · cost) for all 8 halvings.  Slope 2 ± 0.1 (a wrong gradient
    # gives slope 1).
    p, data, rng = setup
    exps = data[mode]
    reg = Regularization(lam=0.05, log_q=0.01)
    _, g = cost_and_gradient(p, exps, mode, reg)
    d = {param: unit_direction(rng, p[param].shape)}
    res = taylor_test(lambda q: cost(q, exps, mode, reg), p, d, g, eps0=1e-2, n=8)
    assert abs(res.slope - 2.0) < 0.1, (res.slopes, res.remainders)


@pytest.mark.parametrize("mode", ["exact", "euler"])
def test_taylor_all_parameters_together(setup, mode):
    p, data, rng = setup
    exps = data[mode]
    _, g = cost_and_gradient(p, exps, mode)
    d = {k: unit_direction(rng, p[k].shape) for k in PARAMS}
    res = taylor_test(lambda q: cost(q, exps, mode), p, d, g)
    assert abs(res.slope - 2.0) < 0.1, res.slopes


@pytest.mark.parametrize("mode", ["exact", "euler"])
def test_autograd_agreement(setup, mode):
    # torch autograd of an independent sequential implementation of the same discrete model
    # (two experiments, one non-uniform, with both regularisers).  Both are exact gradients of
    # the same float64 computation, so they agree to rounding amplified by the K-step
    # recurrence (measured ~1e-13); 1e-8 is the requirement.
    p, data, _ = setup
    reg = Regularization(lam=0.1, reference={"J": np.ones((N, N))}, log_q=0.01)
    assert compare_with_autograd(p, data[mode], mode, reg) < 1e-8


@pytest.mark.parametrize(
    "mode, gradient", [("exact", "exact"), ("euler", "exact"), ("euler", "paper")]
)
def test_vectorised_equals_loop_reference(setup, mode, gradient):
    # The scans reorder sums (Φ^{2^l} by squaring); relative agreement to 1e-11 (measured ~1e-14).
    p, data, _ = setup
    reg = Regularization(lam=0.1, log_q=0.01)
    c, g = cost_and_gradient(p, data[mode], mode, reg, gradient=gradient)
    cl, gl = loop_cost_and_gradient(p, data[mode], mode, reg, gradient=gradient)
    assert c == pytest.approx(cl, rel=1e-12)
    for k in PARAMS:
        assert np.linalg.norm(g[k] - gl[k]) <= 1e-11 * np.linalg.norm(gl[k]), k


def test_experiments_on_different_uniform_grids():
    # Two experiments with different (uniform) steps: two step sizes in one evaluation, one
    # Fréchet derivative each; checked against the loop reference and autograd.
    rng = np.random.default_rng(21)
    p = random_params(rng)
    exps = []
    for K_e, T in ((101, 1.0), (61, 1.5)):
        t = np.linspace(0.0, T, K_e)
        exps.append(Experiment.from_arrays(t, inputs(t), np.c_[np.sin(3 * t), t]))
    c, g = cost_and_gradient(p, exps, "exact")
    cl, gl = loop_cost_and_gradient(p, exps, "exact")
    assert c == pytest.approx(cl, rel=1e-12)
    for k in PARAMS:
        assert np.linalg.norm(g[k] - gl[k]) <= 1e-11 * np.linalg.norm(gl[k])
    assert compare_with_autograd(p, exps, "exact") < 1e-8


def test_loop_cost_reference(setup):
    p, data, _ = setup
    for mode in ("exact", "euler"):
        assert cost(p, data[mode], mode) == pytest.approx(loop_cost(p, data[mode], mode), rel=1e-12)


def test_forward_cache_is_invalidated_by_any_change(setup):
    # cost() then cost_and_gradient() at the same point reuse the forward solve; in-place
    # changes of a parameter, another mode or other experiments must not hit the cache.
    p, data, _ = setup
    q = {k: v.copy() for k, v in p.items()}
    exps = data["exact"]
    c0 = cost(q, exps, "exact")
    c1, g1 = cost_and_gradient(q, exps, "exact")
    clear_forward_cache()
    c2, g2 = cost_and_gradient(q, exps, "exact")
    assert c0 == c1 == c2
    for k in PARAMS:
        np.testing.assert_array_equal(g1[k], g2[k])
    q["x0"][0] += 1e-3  # in place
    c3 = cost(q, exps, "exact")
    clear_forward_cache()
    assert c3 != c0 and c3 == cost(q, exps, "exact")
    assert cost(q, exps[:1], "exact") == pytest.approx(loop_cost(q, exps[:1], "exact"), rel=1e-12)
    assert cost(q, exps, "euler") == pytest.approx(loop_cost(q, exps, "euler"), rel=1e-12)


def test_wrt_subset_and_sum_over_experiments(setup):
    p, data, _ = setup
    exps = data["exact"]
    c_all, g_all = cost_and_gradient(p, exps, "exact")
    parts = [cost_and_gradient(p, [e], "exact") for e in exps]
    assert c_all == pytest.approx(sum(c for c, _ in parts), rel=1e-13)
    for k in PARAMS:
        np.testing.assert_allclose(g_all[k], sum(g[k] for _, g in parts), rtol=1e-11, atol=1e-13)
    c_sub, g_sub = cost_and_gradient(p, exps, "exact", wrt=("B", "x0"))
    assert set(g_sub) == {"B", "x0"}
    assert c_sub == c_all
    np.testing.assert_allclose(g_sub["B"], g_all["B"], rtol=1e-13)


def test_paper_gradient_converges_at_first_order():
    # The paper's continuous-adjoint-then-discretise gradient and the exact gradient of the
    # Euler-discrete cost differ by O(h): halving h halves their distance (slope 1 ± 0.15).
    rng = np.random.default_rng(7)
    p = random_params(rng)
    steps = [1e-2, 5e-3, 2.5e-3, 1.25e-3]
    diffs = []
    for h in steps:
        t = np.linspace(0.0, 1.0, round(1.0 / h) + 1)
        u = inputs(t)
        ydata = np.c_[np.sin(5 * t), np.cos(2 * t)]  # samples of one fixed smooth function
        e = Experiment.from_arrays(t, u, ydata)
        _, ge = cost_and_gradient(p, e, "euler", gradient="exact")
        _, gp = cost_and_gradient(p, e, "euler", gradient="paper")
        num = np.sqrt(sum(np.sum((ge[k] - gp[k]) ** 2) for k in PARAMS))
        den = np.sqrt(sum(np.sum(ge[k] ** 2) for k in PARAMS))
        diffs.append(num / den)
    slope = np.polyfit(np.log(steps), np.log(diffs), 1)[0]
    assert abs(slope - 1.0) < 0.15, diffs
    assert diffs[-1] < 0.05


def test_gradient_matches_theorem5_in_the_limit():
    # As h → 0 the exact-mode gradient (exact FOH) and the paper's Euler gradient both approach
    # the continuous gradient of Theorem 5; at h = 1e-3 the Euler O(h) error is ~1e-3 relative.
    rng = np.random.default_rng(11)
    p = random_params(rng)
    t = np.linspace(0.0, 1.0, 1001)
    u = np.c_[np.sin(7 * t), np.cos(3 * t)]
    e = Experiment.from_arrays(t, u, np.c_[np.sin(5 * t), np.cos(2 * t)])
    _, gx = cost_and_gradient(p, e, "exact")
    _, gp = cost_and_gradient(p, e, "euler", gradient="paper")
    for k in PARAMS:
        assert np.linalg.norm(gx[k] - gp[k]) < 2e-2 * np.linalg.norm(gx[k]), k


# ------------------------------------------------------------------------------------------
# Forward models
# ------------------------------------------------------------------------------------------
def test_exact_mode_matches_solve_ivp():
    # FOH discretisation is exact for piecewise-linear inputs, so the only differences are
    # rounding in expm/the scan (~1e-15) and the ODE solver's error.  Integrating interval by
    # interval (the input is linear there, the right-hand side smooth) with DOP853 at rtol 1e-12
    # keeps that below 1e-11 (measured 2e-15); one solve over [0, 1] across the input kinks
    # only reaches ~1e-10.
    rng = np.random.default_rng(3)
    p = random_params(rng)
    t = np.linspace(0.0, 1.0, 101)
    u = inputs(t)
    x, y = simulate(p, t, u, "exact")
    A = (p["J"] - p["R"]) @ p["Q"]

    def rhs(tt, xx):
        ut = np.array([np.interp(tt, t, u[:, j]) for j in range(M)])
        return A @ xx + p["B"] @ ut

    xs = [p["x0"]]
    for k in range(len(t) - 1):
        s = solve_ivp(rhs, (t[k], t[k + 1]), xs[-1], method="DOP853", rtol=1e-12, atol=1e-14)
        xs.append(s.y[:, -1])
    xs = np.array(xs)
    assert np.abs(x - xs).max() < 1e-11 * np.abs(xs).max()
    np.testing.assert_allclose(y, xs @ (p["B"].T @ p["Q"]).T, rtol=0, atol=1e-11 * np.abs(y).max())


def test_foh_matrices_closed_form_scalar():
    # n = m = 1: Φ = e^{ah}, Γ_a = b (e^{ah} − 1)/a, Γ_b = b (e^{ah} − 1 − ah)/(a² h).
    a, b, h = -1.7, 0.8, 0.3
    Phi, G0, G1, _ = foh_matrices(np.array([[a]]), np.array([[b]]), np.array([h]))
    ga = b * (np.exp(a * h) - 1) / a
    gb = b * (np.exp(a * h) - 1 - a * h) / (a * a * h)
    assert Phi[0, 0, 0] == pytest.approx(np.exp(a * h), rel=1e-14)
    assert G1[0, 0, 0] == pytest.approx(gb, rel=1e-13)
    assert G0[0, 0, 0] == pytest.approx(ga - gb, rel=1e-13)


def test_euler_mode_equals_plain_loop():
    rng = np.random.default_rng(5)
    p = random_params(rng)
    t = np.sort(np.r_[0.0, rng.uniform(0, 1, 150), 1.0])  # non-uniform: all steps distinct
    u = inputs(t)
    x, y = simulate(p, t, u, "euler")
    A = (p["J"] - p["R"]) @ p["Q"]
    xr = np.empty_like(x)
    xr[0] = p["x0"]
    for k in range(len(t) - 1):
        xr[k + 1] = xr[k] + (t[k + 1] - t[k]) * (A @ xr[k] + p["B"] @ u[k])
    # Rounding only (reordered sums); 1e-12 relative.
    assert np.abs(x - xr).max() < 1e-12 * np.abs(xr).max()
    np.testing.assert_allclose(y, xr @ (p["B"].T @ p["Q"]).T, atol=1e-12 * np.abs(y).max())


def test_cost_values_by_definition(setup):
    p, data, _ = setup
    # Euler: left-endpoint weights; exact: trapezoidal weights.
    for mode in ("euler", "exact"):
        e = data[mode][1]
        _, y = simulate(p, e.t, e.u, mode)
        r2 = np.sum((y - e.y) ** 2, axis=1)
        h = np.diff(e.t)
        expect = 0.5 * np.sum(h * r2[:-1]) if mode == "euler" else 0.5 * np.trapezoid(r2, e.t)
        assert cost(p, e, mode) == pytest.approx(expect, rel=1e-11)
    reg = Regularization(lam=0.3, reference={"B": np.ones((N, M))}, log_q=0.2)
    e = data["exact"][0]
    L = logm(p["Q"]).real
    extra = 0.5 * 0.3 * (
        sum(np.sum(p[k] ** 2) for k in ("J", "R", "Q", "x0")) + np.sum((p["B"] - 1) ** 2)
    ) + 0.5 * 0.2 * np.sum(L * L)
    assert cost(p, e, "exact", reg) == pytest.approx(cost(p, e, "exact") + extra, rel=1e-12)
    # Only fitted parameters are regularised.
    only_b = 0.5 * 0.3 * np.sum((p["B"] - 1) ** 2)
    assert cost(p, e, "exact", reg, wrt=("B",)) == pytest.approx(
        cost(p, e, "exact") + only_b, rel=1e-12
    )


def test_step_groups_snap_rounding_noise():
    g = step_groups(np.linspace(0.0, 3.7, 1001))
    assert g.uniform and g.h[0] == pytest.approx(3.7e-3, rel=1e-12)
    t = np.r_[np.linspace(0, 1, 11), np.linspace(1, 2, 21)[1:]]
    g = step_groups(t)
    assert not g.uniform and np.allclose(np.sort(g.h), [0.05, 0.1])
    np.testing.assert_allclose(g.steps, np.diff(t), rtol=1e-9)


def test_exact_mode_matches_expm_propagation_nonuniform():
    # Zero input: x(t_k) = e^{A t_k} x0 exactly, on any grid.
    rng = np.random.default_rng(9)
    p = random_params(rng)
    t = np.sort(np.r_[0.0, rng.uniform(0, 2, 40)])
    x, _ = simulate(p, t, np.zeros((len(t), M)), "exact")
    A = (p["J"] - p["R"]) @ p["Q"]
    xr = np.array([expm(A * tk) @ p["x0"] for tk in t])
    assert np.abs(x - xr).max() < 1e-12 * np.abs(xr).max()


def test_overflow_gives_inf_cost_and_nan_gradient():
    n = 2
    p = {"J": np.zeros((n, n)), "R": -500 * np.eye(n), "Q": np.eye(n), "B": np.ones((n, 1))}
    t = np.linspace(0, 10, 101)
    e = Experiment.from_arrays(t, np.ones(101), np.zeros(101))
    c, g = cost_and_gradient(p, e, "exact")
    assert c == np.inf and np.all(np.isnan(g["J"]))


# ------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------
def test_experiment_validation():
    t = np.linspace(0, 1, 5)
    u = np.zeros((5, 2))
    e = Experiment.from_arrays(t, u, u)
    assert e.n_samples == 5 and e.n_ports == 2 and not e.u.flags.writeable
    assert Experiment.from_arrays(t, np.zeros(5), np.zeros(5)).n_ports == 1
    with pytest.raises(ValueError, match="same shape as u"):
        Experiment.from_arrays(t, u, np.zeros((5, 3)))
    with pytest.raises(ValueError, match=r"shape \(K, m\) = \(5, m\)"):
        Experiment.from_arrays(t, np.zeros((4, 2)), np.zeros((4, 2)))
    bad = u.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or Inf .*row 2, column 1"):
        Experiment.from_arrays(t, u, bad)
    with pytest.raises(ValueError, match="strictly increasing"):
        Experiment.from_arrays(np.array([0, 1, 1, 2, 3.0]), u, u)
    with pytest.raises(ValueError, match="strictly increasing"):
        Experiment.from_arrays(t[::-1], u, u)
    with pytest.raises(ValueError, match="NaN or Inf"):
        Experiment.from_arrays(np.array([0, 1, np.inf, 2, 3.0]), u, u)
    with pytest.raises(ValueError, match="at least 2"):
        Experiment.from_arrays(t[:1], u[:1], u[:1])


def test_parameter_and_argument_validation():
    rng = np.random.default_rng(0)
    p = random_params(rng)
    t = np.linspace(0, 1, 11)
    e = Experiment.from_arrays(t, np.zeros((11, M)), np.zeros((11, M)))
    with pytest.raises(ValueError, match="at least 1"):
        check_params(
            {
                "J": np.zeros((0, 0)),
                "R": np.zeros((0, 0)),
                "Q": np.zeros((0, 0)),
                "B": np.zeros((0, 1)),
            }
        )
    with pytest.raises(ValueError, match="R must have shape"):
        check_params({**p, "R": np.eye(N + 1)})
    with pytest.raises(ValueError, match="x0 must have shape"):
        check_params({**p, "x0": np.zeros(N + 1)})
    with pytest.raises(ValueError, match="missing"):
        check_params({"J": p["J"]})
    with pytest.raises(ValueError, match="NaN or Inf"):
        check_params({**p, "B": np.full((N, M), np.nan)})
    assert np.all(check_params({k: v for k, v in p.items() if k != "x0"})["x0"] == 0)
    with pytest.raises(ValueError, match="ports"):
        cost({**p, "B": np.ones((N, 3))}, e)
    with pytest.raises(ValueError, match="mode must be"):
        cost(p, e, mode="rk4")
    with pytest.raises(ValueError, match="unknown parameter"):
        cost_and_gradient(p, e, wrt=("K",))
    with pytest.raises(ValueError, match="only for mode='euler'"):
        cost_and_gradient(p, e, "exact", gradient="paper")
    with pytest.raises(ValueError, match="empty"):
        cost(p, [])
    with pytest.raises(ValueError, match="Q ≻ 0"):
        cost({**p, "Q": -np.eye(N)}, e, reg=Regularization(log_q=1.0))
    with pytest.raises(ValueError, match="lam"):
        Regularization(lam=-1.0)
    with pytest.raises(ValueError, match="channels"):
        simulate(p, t, np.zeros((11, 1)))


# ------------------------------------------------------------------------------------------
# The unchecked fast path (Evaluator) used inside the optimiser
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "mode, gradient, wrt",
    [
        ("exact", "exact", PARAMS),
        ("exact", "exact", ("J", "R", "B")),
        ("euler", "exact", PARAMS),
        ("euler", "paper", ("Q", "x0")),
        ("exact", "exact", ("x0",)),
    ],
)
def test_evaluator_is_bitwise_the_checked_path(setup, mode, gradient, wrt):
    # Same code after validation: costs and gradients identical to the last bit (two
    # experiments, one on a non-uniform grid, both regularisers).
    p, data, _ = setup
    reg = Regularization(lam=0.1, reference={"J": np.ones((N, N))}, log_q=0.01)
    ev = Evaluator(data[mode], mode=mode, reg=reg, wrt=wrt, gradient=gradient)
    args = [p[k] for k in PARAMS]
    st = ev.forward(*args)
    clear_forward_cache()
    assert ev.cost(st) == cost(p, data[mode], mode, reg, wrt)
    c, g = ev.cost_and_gradient(st)
    clear_forward_cache()
    cc, gc = cost_and_gradient(p, data[mode], mode, reg, wrt, gradient)
    assert c == cc and set(g) == set(wrt)
    for k in wrt:
        np.testing.assert_array_equal(g[k], gc[k])
    # a state can be evaluated again (nothing in it is overwritten by later solves)
    ev.forward(*[2.0 * a for a in args])
    c2, g2 = ev.cost_and_gradient(st)
    assert c2 == c and all(np.array_equal(g2[k], g[k]) for k in wrt)


def test_evaluator_uniform_grid_and_no_regularisation_matches_loop():
    # The allocation-free uniform-grid path (scans reusing the forward's squares of Φ in the
    # adjoint, first-order-hold forcing in one product) against the loop reference, to 1e-11
    # relative (reordered sums; measured ~1e-14).
    rng = np.random.default_rng(17)
    p = random_params(rng, n=12)
    t = np.linspace(0.0, 1.0, 301)
    e = Experiment.from_arrays(t, inputs(t), np.c_[np.sin(3 * t), np.cos(5 * t)])
    for mode in ("exact", "euler"):
        ev = Evaluator(e, mode=mode)
        c, g = ev.cost_and_gradient(ev.forward(*[p[k] for k in PARAMS]))
        cl, gl = loop_cost_and_gradient(p, e, mode)
        assert c == pytest.approx(cl, rel=1e-12)
        for k in PARAMS:
            assert np.linalg.norm(g[k] - gl[k]) <= 1e-11 * np.linalg.norm(gl[k]), (mode, k)


def test_evaluator_validates_once_at_construction():
    t = np.linspace(0, 1, 11)
    e = Experiment.from_arrays(t, np.zeros((11, M)), np.zeros((11, M)))
    with pytest.raises(ValueError, match="mode must be"):
        Evaluator(e, mode="rk4")
    with pytest.raises(ValueError, match="unknown parameter"):
        Evaluator(e, wrt=("K",))
    with pytest.raises(ValueError, match="only for mode='euler'"):
        Evaluator(e, mode="exact", gradient="paper")
    with pytest.raises(ValueError, match="empty"):
        Evaluator([])
    with pytest.raises(ValueError, match="ports"):
        Evaluator(e, n_ports=3)
    with pytest.raises(TypeError, match="Regularization"):
        Evaluator(e, reg={"lam": 1.0})
    assert Evaluator(e).experiments == [e]


def test_evaluator_overflow_gives_inf_cost_and_nan_gradient():
    n = 2
    p = {"J": np.zeros((n, n)), "R": -500 * np.eye(n), "Q": np.eye(n), "B": np.ones((n, 1))}
    e = Experiment.from_arrays(np.linspace(0, 10, 101), np.ones(101), np.zeros(101))
    ev = Evaluator(e, mode="exact")
    with np.errstate(all="ignore"):
        st = ev.forward(p["J"], p["R"], p["Q"], p["B"], np.zeros(n))
        assert ev.cost(st) == np.inf
        c, g = ev.cost_and_gradient(st)
    assert c == np.inf and np.all(np.isnan(g["R"]))


@pytest.mark.parametrize("n, m", [(5, 2), (50, 1)])
def test_reduced_frechet_adjoint_equals_rows_of_the_full_one(n, m):
    # Rows :n of L_exp(Mᵀ, G) for G with zero rows below n, from the (n + N) block exponential
    # (n = 5) or scipy's expm_frechet (n = 50), against the full 2N block exponential.
    # Same quantity by two exact formulas: agreement to rounding (1e-13 relative).
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    B = rng.standard_normal((n, m))
    M = foh_block_matrix(A, B, np.array([0.01, 0.03]))
    GE = np.zeros((2, n + 2 * m, n + 2 * m))
    GE[:, :n] = rng.standard_normal((2, n, n + 2 * m))
    full = np.stack(
        [expm(np.block([[Mg.T, Gg], [np.zeros_like(Mg), Mg.T]]))[: n + 2 * m, n + 2 * m :]
         for Mg, Gg in zip(M, GE)]
    )  # fmt: skip
    red = _foh_frechet_adjoint(M, GE[:, :n], n)
    assert red.shape == (2, n, n + 2 * m)
    np.testing.assert_allclose(red, full[:, :n], rtol=0, atol=1e-13 * np.abs(full).max())
