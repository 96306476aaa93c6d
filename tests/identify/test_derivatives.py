"""Derivative data from trajectories, checked against analytic derivatives."""

import numpy as np
import pytest

from fmu_surrogate.identify.derivatives import (
    GPDerivative,
    estimate_derivatives,
    finite_differences,
    spline_derivatives,
)

TWO_PI = 2.0 * np.pi


def _sin_cubic(t):
    x = np.column_stack([np.sin(t), 0.5 * t**3 - t])
    dx = np.column_stack([np.cos(t), 1.5 * t**2 - 1.0])
    return x, dx


# --------------------------------------------------------------------------- finite differences
@pytest.mark.parametrize("grid", ["uniform", "stretched", "jittered"])
def test_fd_converges_with_order_two_including_the_ends(grid):
    rng = np.random.default_rng(1)
    errs, hs = [], []
    for n in (40, 80, 160, 320, 640):
        s = np.linspace(0.0, 1.0, n)
        if grid == "stretched":
            s = s + 0.3 * s * (1.0 - s)  # smooth non-uniform map, spacing ratio up to ~1.9
        elif grid == "jittered":
            # random non-uniform grid: the 3-point weights are exact for quadratics on any grid,
            # so the error is O(h_i h_{i+1} f''') — second order without grid smoothness.
            s[1:-1] += rng.uniform(-0.3, 0.3, n - 2) / (n - 1)
        t = TWO_PI * s
        x, dx = _sin_cubic(t)
        errs.append(np.abs(finite_differences(t, x) - dx).max())
        hs.append(np.diff(t).max())
    rate = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    # O(h²): the fitted slope of log(max error) over log(h) is 2; ±0.25 leaves room for the
    # pre-asymptotic first grid and, on the jittered grid, the random spacing.
    assert 1.75 < rate < 2.25, (rate, errs)


def test_fd_is_exact_for_quadratics_on_nonuniform_grids():
    t = np.cumsum(np.random.default_rng(0).uniform(0.05, 0.3, 30))
    x = 3.0 * t**2 - 2.0 * t + 1.0
    # exact up to round-off: relative to |x| ≲ 70 and spacings ≥ 0.05 the cancellation costs ~1e-12
    np.testing.assert_allclose(finite_differences(t, x), 6.0 * t - 2.0, atol=1e-11)


def test_fd_on_training_subset_follows_train_index_order():
    t = np.linspace(0.0, 3.0, 301)
    x, _ = _sin_cubic(t)
    idx = np.array([250, 10, 40, 90, 160])
    got = estimate_derivatives(t, x, "fd", train_index=idx)
    order = np.argsort(idx)
    expected = np.empty_like(got)
    expected[order] = finite_differences(t[np.sort(idx)], x[np.sort(idx)])
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match="only at the sample times"):
        estimate_derivatives(t, x, "fd", train_index=idx, t_eval=[0.123])


# --------------------------------------------------------------------------- smoothing spline
def test_interpolating_spline_is_fourth_order_accurate_for_sin():
    errs = []
    for n in (50, 100, 200):
        t = np.linspace(0.0, TWO_PI, n)
        x, dx = _sin_cubic(t)
        errs.append(np.abs(spline_derivatives(t, x[:, 0], smoothing=0.0) - dx[:, 0]).max())
    # λ = 0 is the natural interpolating cubic spline; sin'' vanishes at 0 and 2π so the natural
    # end conditions are exact and the derivative error is O(h⁴) (measured 1.5e-6, 9e-8, 5.5e-9):
    # halving h must gain at least 2^3.5.
    assert errs[0] < 5e-6
    assert errs[1] < errs[0] / 2**3.5 and errs[2] < errs[1] / 2**3.5


def test_spline_reproduces_a_cubic_away_from_the_natural_ends():
    t = np.linspace(0.0, TWO_PI, 120)
    x, dx = _sin_cubic(t)
    d = spline_derivatives(t, x, smoothing=0.0)
    # the natural end conditions (s'' = 0) are wrong for the cubic (x'' = 3t); that error decays
    # geometrically (factor ≈ 0.27 per interval) into the interior, so on the middle third the
    # spline derivative is the exact cubic derivative to round-off (|x'| ≤ 60 there).
    mid = slice(40, 80)
    np.testing.assert_allclose(d[mid, 1], dx[mid, 1], atol=1e-8)


def test_gcv_spline_smooths_noise_better_than_finite_differences():
    rng = np.random.default_rng(3)
    t = np.linspace(0.0, TWO_PI, 400)
    x, dx = _sin_cubic(t)
    xn = x[:, 0] + 1e-3 * rng.standard_normal(len(t))
    e_spline = np.sqrt(np.mean((spline_derivatives(t, xn) - dx[:, 0]) ** 2))
    e_fd = np.sqrt(np.mean((finite_differences(t, xn) - dx[:, 0]) ** 2))
    # FD amplifies noise σ = 1e-3 by ~1/(√2 h) ≈ 45 (→ ~4.5e-2 RMS); GCV smoothing removes most of
    # it (measured 1.9e-3 vs 5.2e-2): require a 5× gain and an absolute level one order below FD's.
    assert e_spline < e_fd / 5 and e_spline < 1e-2, (e_spline, e_fd)


def test_default_spline_interpolates_noise_free_samples():
    """A simulation's samples are noise-free: the default (``smoothing=None``) interpolates them
    with a quintic spline instead of letting cross-validation smooth real curvature away."""
    from fmu_surrogate.identify.derivatives import noise_level

    t = np.linspace(0.0, 10.0, 1001)
    x = np.sin(3 * t) + 0.3 * np.sin(7.1 * t)
    dx = 3 * np.cos(3 * t) + 2.13 * np.cos(7.1 * t)
    # the quintic interpolant's error is O(h⁵ x⁽⁶⁾): measured 7e-8 of max |x'| (cross-validation
    # gave 1.7e-2 on these samples)
    assert np.abs(spline_derivatives(t, x) - dx).max() < 1e-6 * np.abs(dx).max()
    noise = 1e-3 * np.random.default_rng(4).normal(size=t.size)
    # the fourth-difference estimate of white noise of σ = 1e-3: the MAD of 997 samples is
    # within a few percent (measured 1.005e-3); the smooth signal adds ~1e-6
    assert noise_level(x + noise) == pytest.approx(1e-3, rel=0.1)
    assert noise_level(x) < 1e-5 * np.ptp(x)


def test_spline_evaluates_off_grid_and_on_a_subset():
    t = np.linspace(0.0, TWO_PI, 200)
    x, _ = _sin_cubic(t)
    te = np.array([0.5, 1.234, 4.0])
    idx = np.arange(0, 200, 3)
    d = estimate_derivatives(t, x[:, :1], "spline", train_index=idx, t_eval=te, smoothing=0.0)
    # interpolating spline with h ≈ 0.095: O(h⁴) ≈ 1e-5 at worst
    np.testing.assert_allclose(d[:, 0], np.cos(te), atol=1e-5)


# --------------------------------------------------------------------------- GP
def test_gp_derivative_of_sin_and_cubic():
    t = np.linspace(0.0, TWO_PI, 50)
    x, dx = _sin_cubic(t)
    d = estimate_derivatives(t, x, "gp")
    # Smooth noiseless data: the ML noise variance sits at the floor 1e-10 (standardised), i.e. a
    # noise std of 1e-5 of the signal std; the derivative error is that level times ~1/ℓ
    # (measured 3e-5 for sin, |x'| ≤ 1).  Threshold: 1e-4 absolute for sin, 1e-4 relative to
    # max|x'| ≈ 58 for the cubic (measured 2.7e-3 absolute, i.e. 5e-5 relative).
    assert np.abs(d[:, 0] - dx[:, 0]).max() < 1e-4
    assert np.abs(d[:, 1] - dx[:, 1]).max() < 1e-4 * np.abs(dx[:, 1]).max()


def test_gp_derivative_matches_finite_difference_of_its_own_mean():
    # independent check of the kernel-derivative formula: d/dt of the posterior mean by a central
    # difference of predict() with step 1e-4.  noise_floor = 1e-6 keeps the weights α moderate
    # (at the 1e-10 default they reach ~1e10 and round-off in predict() would dominate the
    # difference quotient); truncation error ≈ eps²/6 |x'''| ≲ 1e-8, round-off ≈ 1e-16|α|/eps.
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0.0, 5.0, 25))
    x = np.column_stack([np.sin(1.3 * t), np.exp(-0.3 * t)])
    g = GPDerivative(seed=1, noise_floor=1e-6).fit(t, x)
    te = np.linspace(0.2, 4.8, 17)
    eps = 1e-4
    fd = (g.predict(te + eps) - g.predict(te - eps)) / (2 * eps)
    np.testing.assert_allclose(g.derivative(te), fd, atol=1e-7)
    # the posterior mean reproduces the data to the noise level (std ≤ 1e-3 of the signal std)
    np.testing.assert_allclose(g.predict(t), x, atol=1e-3)


def test_gp_on_training_subset_evaluated_anywhere():
    t = np.linspace(0.0, TWO_PI, 1000)
    x, _ = _sin_cubic(t)
    idx = np.random.default_rng(5).choice(len(t), 30, replace=False)
    te = np.linspace(0.3, TWO_PI - 0.3, 77)
    d = estimate_derivatives(t, x[:, :1], "gp", train_index=idx, t_eval=te)
    # 30 random points on [0, 2π] (largest gap ≈ 0.6): a GP with ML length scale ≈ 3 resolves sin
    # to ~1e-5 (measured 8e-6 away from the ends); 1e-3 leaves room for unlucky gaps.
    assert np.abs(d[:, 0] - np.cos(te)).max() < 1e-3


def test_gp_hyperparameter_subsampling_keeps_accuracy():
    # 2000 samples, hyperparameters from 150 of them, posterior conditioned on all 2000
    t = np.linspace(0.0, TWO_PI, 2000)
    x, dx = _sin_cubic(t)
    g = GPDerivative(max_hyper_points=150, n_restarts=0).fit(t, x[:, 0])
    assert np.abs(g.derivative(t) - dx[:, 0]).max() < 1e-4  # measured 1e-5, as the 50-point fit
    assert g.lengthscale_.shape == (1,) and g.noise_[0] > 0


def test_gp_constant_signal_has_zero_derivative():
    t = np.linspace(0.0, 1.0, 10)
    d = estimate_derivatives(t, np.column_stack([np.full(10, 2.0), t]), "gp")
    np.testing.assert_allclose(d[:, 0], 0.0, atol=0)
    np.testing.assert_allclose(d[:, 1], 1.0, atol=1e-4)


# --------------------------------------------------------------------------- exact
def test_exact_from_array_and_callable():
    t = np.linspace(0.0, 1.0, 11)
    x, dx = _sin_cubic(t)
    idx = [3, 1, 7]
    np.testing.assert_array_equal(estimate_derivatives(t, x, "exact", exact=dx), dx)
    np.testing.assert_array_equal(
        estimate_derivatives(t, x, "exact", exact=dx, train_index=idx), dx[idx]
    )
    te = np.array([0.05, 0.33])
    got = estimate_derivatives(t, x, "exact", exact=lambda s: _sin_cubic(s)[1], t_eval=te)
    np.testing.assert_allclose(got, _sin_cubic(te)[1])


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"t": [0.0, 1.0, np.nan], "x": [1.0, 2.0, 3.0]}, "NaN"),
        ({"t": [0.0, 1.0, 2.0], "x": [1.0, np.inf, 3.0]}, "NaN"),
        ({"t": [0.0, 2.0, 1.0], "x": [1.0, 2.0, 3.0]}, "strictly increasing"),
        ({"t": [0.0, 1.0, 2.0], "x": np.ones((4, 2))}, "shape"),
        ({"t": [0.0, 1.0], "x": [1.0, 2.0]}, "at least 3"),
        ({"t": np.arange(4.0), "x": np.arange(4.0), "method": "spline"}, "at least 5"),
        ({"t": np.arange(5.0), "x": np.arange(5.0), "train_index": [1, 1, 2]}, "repeated"),
        ({"t": np.arange(5.0), "x": np.arange(5.0), "train_index": [0, 9]}, "outside"),
        ({"t": np.arange(5.0), "x": np.arange(5.0), "method": "newton"}, "method must be"),
        ({"t": np.arange(5.0), "x": np.arange(5.0), "smoothing": 1.0}, "only to method='spline'"),
        ({"t": np.arange(5.0), "x": np.arange(5.0), "method": "exact"}, "needs exact="),
        ({"t": np.arange(5.0), "x": np.arange(5.0), "exact": np.arange(5.0)}, "needs exact="),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(kwargs, match):
    kwargs.setdefault("method", "fd")
    with pytest.raises(ValueError, match=match):
        estimate_derivatives(kwargs.pop("t"), kwargs.pop("x"), **kwargs)


def test_vector_in_vector_out():
    t = np.linspace(0.0, 1.0, 20)
    for method in ("fd", "spline", "gp"):
        assert estimate_derivatives(t, t**2, method).shape == (20,)
