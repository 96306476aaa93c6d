"""GP-RVM on the paper's polynomial case (Zhu et al., case (a)) and its input errors."""

import numpy as np
import pytest
from sklearn.base import clone

from fmu_surrogate.benchmarks import duffing
from fmu_surrogate.identify.laws.gp_rvm import GPRVM
from fmu_surrogate.identify.laws.library import unit_scales
from fmu_surrogate.identify.laws.rvm import RVM, RVMInputError


def _case(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, 100)
    f = 5 * x**3 + x**2 + 2 * np.sin(x)
    y = f + 0.1 * f.std() * rng.normal(size=100)
    return np.c_[x**3, x**5], y, x


@pytest.mark.slow
def test_polynomial_case_drops_x5_and_removes_rvm_bias():
    # 20 of the paper's 100 data sets (runtime). Measured: x^5 dropped in 18/20, a within its
    # ±2σ in 18/20, mean a 5.51 (RVM 11.8: the missing x^2 + 2 sin x biases it); over all 100
    # (scripts/reproduce_gp_rvm.py) 83 and 85. In the sets that keep x^5 the marginal likelihood
    # with x^5 is higher than without it (by 0.02-2.7 nats), so this is the model's optimum,
    # not an EM failure. Thresholds sit one data set below the measurement.
    drop = within = 0
    a_gp, a_rvm = [], []
    for k in range(20):
        P, y, x = _case(k)
        m = GPRVM(min_gain=0.0).fit(P, y, x)  # the paper's rule
        drop += not m.active_[1]
        within += abs(m.coef_[0] - 5) < 2 * np.sqrt(m.coef_cov_[0, 0])
        a_gp.append(m.coef_[0])
        a_rvm.append(RVM().fit(P, y).coef_[0])
        assert m.n_iter_ < 200
    assert drop >= 17 and within >= 17
    assert abs(np.mean(a_gp) - 5) < 1.0 < abs(np.mean(a_rvm) - 5)


@pytest.mark.slow
def test_default_entry_threshold_drops_x5_more_often():
    # the default min_gain = 0.5 on the same 20 data sets: measured x^5 dropped in 19/20 (95/100
    # over all of them in scripts/reproduce_gp_rvm.py) and a within ±2σ in 18/20
    drop = within = 0
    for k in range(20):
        P, y, x = _case(k)
        m = GPRVM().fit(P, y, x)
        drop += not m.active_[1]
        within += abs(m.coef_[0] - 5) < 2 * np.sqrt(m.coef_cov_[0, 0])
    assert drop >= 19 and within >= 17


def test_gp_input_errors_and_no_gp():
    P, y, x = _case(0)
    with pytest.raises(RVMInputError, match="gp_inputs"):
        GPRVM().fit(P, y, x[:50])
    bad = x.copy()
    bad[3] = np.nan
    with pytest.raises(RVMInputError, match="NaN"):
        GPRVM().fit(P, y, bad)
    m = GPRVM().fit(P, y)
    assert m.gp_["signal_variance"] == 0.0
    assert clone(GPRVM(n_inducing=5)).n_inducing == 5
    assert "δ" not in m.equations()
    mp = GPRVM().fit(P, y, x)
    assert "+ δ(gp_inputs)  [GP: σf² = " in mp.equations()
    resid = y - mp.predict(P, x)
    # the GP absorbs the missing x^2 + 2 sin x: residual near the noise level (0.1 std(f))
    assert np.std(resid) < 2 * np.sqrt(mp.noise_variance_) + 1e-12


def _duffing(scenario, k):
    d = duffing.noisy_data_set(k)
    P = {1: np.c_[d.u, d.ydot], 2: np.c_[d.u, d.ydot, d.y**2, d.y**4]}[scenario]
    return P, d.yddot, d.y


def _m_c(coef):
    m = 1 / coef[0]
    return m, -coef[1] * m


@pytest.mark.parametrize("scenario", [1, 2])
def test_duffing_scenarios_remove_the_bias_of_m_and_c(scenario):
    # Zhu et al. §7.2, 10 data sets (10 s at 50 Hz, 1 % noise on y, ẏ, ÿ); scenario 1 leaves the
    # stiffness out of the library, scenario 2 offers the wrong terms y², y⁴.
    gp, rvm, zeros, zeros_gain = [], [], 0, 0
    for k in range(10):
        P, y, x = _duffing(scenario, k)
        m = GPRVM(min_gain=0.0).fit(P, y, x)  # the paper's rule
        gp.append(_m_c(m.coef_))
        rvm.append(_m_c(RVM().fit(P, y).coef_))
        if scenario == 2:
            zeros += bool(np.all(m.coef_[2:] == 0.0))
            zeros_gain += bool(np.all(GPRVM().fit(P, y, x).coef_[2:] == 0.0))  # default 0.5
    bias = lambda v: np.mean(np.abs(np.array(v) / [1.0, duffing.PARAMS["c"]] - 1), axis=0)
    # measured GP-RVM 0.061 % / 0.245 % in both scenarios (paper: 0.03 % / 0.21 %); the issue's
    # criterion m <= 0.1 %, c <= 0.5 %
    assert np.all(bias(gp) <= [1e-3, 5e-3])
    # plain RVM biased: measured 1.76 % / 3.01 % (scenario 1; paper 1.60 % / 3.11 %),
    # 1.39 % / 2.91 % (scenario 2; paper 0.49 % / 4.55 %)
    assert np.all(bias(rvm) > [1e-2, 2e-2])
    if scenario == 2:
        # measured: d = e = 0 exactly in 6 of 10 data sets (paper: 10 of 10); in the other four
        # adding y⁴ raises the marginal likelihood by 0.02-0.3 nats, so with min_gain = 0.5
        # they stay out: 10 of 10 (measured)
        assert zeros >= 5 and zeros_gain == 10


def test_min_gain_keeps_the_true_stiffness_terms():
    # scenario 3 (the true library [u, ẏ, y, y³]): the threshold must not prune true terms;
    # measured all four kept in 10 of 10 data sets (first 3 here)
    for k in range(3):
        d = duffing.noisy_data_set(k)
        m = GPRVM(min_gain=0.5).fit(np.c_[d.u, d.ydot, d.y, d.y**3], d.yddot, d.y)
        assert m.active_.all()


def test_unit_invariance_exact():
    P, y, x = _duffing(2, 0)
    P = np.c_[P, x, x**3]
    a = GPRVM().fit(P, y, x)
    scale = np.array([1, 1, 1, 1, 1e3, 1])
    b = GPRVM().fit(P * scale, y, x)
    np.testing.assert_array_equal(a.active_, b.active_)
    # The fit sees the same scaled design up to rounding (1e3 is not a power of two), so the two
    # fits differ by rounding amplified by the conditioning of what they compute.  The noise
    # variance (like sf2 and ell) is the minimiser of the M-step's Q2: a minimum of a smooth
    # function is located only to δz ≈ sqrt(2 u |f| / f''), i.e. to about sqrt(u) = 1.5e-8 in
    # the log-parameters when the objective carries rounding u (|f| / f'' of order one), whatever
    # the optimiser.  The coefficients solve H mu = g with H, g smooth in those parameters:
    # relative change <= cond(H) * sqrt(u), cond(H) from the posterior covariance (H^-1 in the
    # fit's unit-scaled columns).  Measured (OpenBLAS, OMP_NUM_THREADS=1 / 2): noise variance
    # 2.1e-8 / 8e-11, coefficients 6e-12 / 1.7e-11; the bounds: 4 sqrt(u) = 6e-8 for the noise
    # variance, cond(H) sqrt(u) (cond(H) = 11 here, so 1.6e-7) for the coefficients.
    sqrt_u = np.sqrt(np.finfo(float).eps)
    act = np.flatnonzero(a.active_)
    s = unit_scales(P)[act]
    cond_h = np.linalg.cond(a.coef_cov_[np.ix_(act, act)] * np.outer(s, s))
    np.testing.assert_allclose(b.coef_ * scale, a.coef_, rtol=cond_h * sqrt_u)
    assert b.noise_variance_ == pytest.approx(a.noise_variance_, rel=4 * sqrt_u)


def test_degenerate_inputs_give_documented_results():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 4))
    zero = GPRVM().fit(X, np.zeros(50), X[:, 0])
    assert not zero.active_.any() and np.all(zero.coef_ == 0.0)
    assert zero.predict(X, X[:, 0]).shape == (50,)
    y = 3 * X[:, 0] + 0.01 * rng.normal(size=50)
    dup = GPRVM().fit(np.c_[X, np.ones(50), np.zeros(50), X[:, 0]], y, X[:, 1])
    # the zero column never enters, of the duplicates only the first
    assert not dup.active_[5] and dup.active_[0] and not dup.active_[6]
    assert dup.coef_[0] == pytest.approx(3, abs=0.01)
    wide = GPRVM().fit(X[:3], X[:3, 1], X[:3, 0])          # N < K
    assert wide.coef_.shape == (4,) and np.isfinite(wide.log_marginal_likelihood_)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(RVMInputError, match="NaN"):
        GPRVM().fit(bad, y, X[:, 1])
    with pytest.raises(RVMInputError, match="gp_inputs must have N = 50 rows"):
        GPRVM().fit(X, y, X[:49, 1])
