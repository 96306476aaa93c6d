"""RVM (fast marginal likelihood) against closed forms, unit invariance and degenerate input."""

import numpy as np
import pytest
from sklearn.base import clone

from fmu_surrogate.errors import FmuSurrogateError
from fmu_surrogate.identify.base import NotFittedError
from fmu_surrogate.identify.laws.rvm import RVM, RVMInputError


def _orthogonal_design(n=64, k=5, seed=0):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(n, k)))
    return q * np.sqrt(n), rng


def test_orthogonal_closed_form_with_fixed_noise():
    # Orthogonal columns decouple the marginal likelihood: with s_i = phi'phi/s2 and
    # q_i = phi'y/s2, term i is selected iff q_i^2 > s_i, with alpha_i = s_i^2/(q_i^2 - s_i)
    # and coef_i = q_i / (s_i + alpha_i) (Tipping & Faul 2003, eqs. 20-21).
    P, rng = _orthogonal_design()
    s2 = 0.5
    y = P @ np.array([1.0, 0.0, -0.7, 0.0, 0.02]) + np.sqrt(s2) * rng.normal(size=64)
    m = RVM(noise_variance=s2).fit(P, y)
    s = np.sum(P**2, axis=0) / s2
    q = P.T @ y / s2
    sel = q**2 > s
    alpha = np.where(sel, s**2 / np.where(sel, q**2 - s, 1), np.inf)
    coef = np.where(sel, q / (s + alpha), 0.0)
    np.testing.assert_array_equal(m.active_, sel)
    # 1e-10: only rounding of the scaled/unscaled Cholesky solves (measured ~1e-15).
    np.testing.assert_allclose(m.coef_, coef, rtol=1e-10, atol=0)
    assert np.all(m.coef_[~sel] == 0.0)


def test_recovers_sparse_law_and_prunes_to_exact_zero():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 6))
    y = 2 * X[:, 0] - 3 * X[:, 3] + 0.01 * rng.normal(size=300)
    m = RVM(names=[f"x{i}" for i in range(6)]).fit(X, y)
    assert m.active_[0] and m.active_[3]
    # ±4σ of the posterior (σ measured ~8e-4 here).
    sd = np.sqrt(np.diag(m.coef_cov_))
    assert abs(m.coef_[0] - 2) < 4 * sd[0] and abs(m.coef_[3] + 3) < 4 * sd[3]
    assert m.result_.n_iter < 100
    # noise variance 1e-4 recovered within 30 % (N=300: chi2 spread ~8 %).
    assert m.noise_variance_ == pytest.approx(1e-4, rel=0.3)
    assert "x3" in m.equations()
    assert np.all(m.coef_[~m.active_] == 0.0)


def test_unit_invariance_exact():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 5))
    y = 1.5 * X[:, 1] + 0.5 * X[:, 2] ** 1 + 0.05 * rng.normal(size=200)
    a = RVM().fit(X, y)
    X2 = X.copy()
    X2[:, 2] *= 1e3
    b = RVM().fit(X2, y)
    np.testing.assert_array_equal(a.active_, b.active_)
    # Rounding only: the RMS scale of a column scaled by 1e3 is 1e3 times the original's
    # up to one ulp per operation.
    np.testing.assert_allclose(b.coef_ * np.array([1, 1, 1e3, 1, 1]), a.coef_, rtol=1e-12)


def test_degenerate_inputs():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 4))
    zero = RVM().fit(X, np.zeros(50))
    assert not zero.active_.any() and np.all(zero.coef_ == 0.0)
    assert zero.predict(X).shape == (50,)
    Xc = np.column_stack([X, np.zeros(50), X[:, 0]])   # zero and duplicate columns
    m = RVM().fit(Xc, 3 * X[:, 0] + 0.01 * rng.normal(size=50))
    assert not m.active_[4] and m.active_[[0, 5]].sum() == 1
    assert m.coef_[[0, 5]].sum() == pytest.approx(3, abs=0.01)
    wide = RVM().fit(X[:3], X[:3, 1])       # N < K works
    assert wide.coef_.shape == (4,)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(RVMInputError, match="NaN"):
        RVM().fit(bad, X[:, 0])
    with pytest.raises(FmuSurrogateError, match=r"inconsistent numbers of samples: \[50, 10\]"):
        RVM().fit(X, X[:10, 0])
    with pytest.raises(NotFittedError):
        RVM().predict(X)
    assert clone(RVM(max_iter=7)).max_iter == 7


def test_predict_std_includes_noise():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(100, 3))
    m = RVM().fit(X, X[:, 0] + 0.1 * rng.normal(size=100))
    mean, std = m.predict(X, return_std=True)
    assert np.all(std >= np.sqrt(m.noise_variance_))
    np.testing.assert_allclose(mean, X @ m.coef_)
