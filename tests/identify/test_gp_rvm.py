"""GP-RVM on the paper's polynomial case (Zhu et al., case (a)) and its input errors."""

import numpy as np
import pytest
from sklearn.base import clone

from fmu_surrogate.identify.gp_rvm import GPRVM
from fmu_surrogate.identify.rvm import RVM, RVMInputError


def _case(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, 100)
    f = 5 * x**3 + x**2 + 2 * np.sin(x)
    y = f + 0.1 * f.std() * rng.normal(size=100)
    return np.c_[x**3, x**5], y, x


@pytest.mark.slow
def test_polynomial_case_drops_x5_and_removes_rvm_bias():
    # 20 of the paper's 100 data sets (runtime). Measured: x^5 dropped in 18/20, a within its
    # ±2σ in 18/20, mean a 5.51 (RVM 11.8: the missing x^2 + 2 sin x biases it). Thresholds
    # sit one data set below the measurement.
    drop = within = 0
    a_gp, a_rvm = [], []
    for k in range(20):
        P, y, x = _case(k)
        m = GPRVM().fit(P, y, x)
        drop += not m.active_[1]
        within += abs(m.coef_[0] - 5) < 2 * np.sqrt(m.coef_cov_[0, 0])
        a_gp.append(m.coef_[0])
        a_rvm.append(RVM().fit(P, y).coef_[0])
        assert m.n_iter_ < 200
    assert drop >= 17 and within >= 17
    assert abs(np.mean(a_gp) - 5) < 1.0 < abs(np.mean(a_rvm) - 5)


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
    mp = GPRVM().fit(P, y, x)
    resid = y - mp.predict(P, x)
    # the GP absorbs the missing x^2 + 2 sin x: residual near the noise level (0.1 std(f))
    assert np.std(resid) < 2 * np.sqrt(mp.noise_variance_) + 1e-12
