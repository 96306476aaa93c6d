"""Low-rank GP products of GP-RVM against dense N×N linear algebra and finite differences."""

import numpy as np
import pytest

from fmu_surrogate.identify.gp.sor import JITTER, SoRGP, inducing_inputs
from fmu_surrogate.ph.efforts.gaussian import gaussian_kernel as se_kernel


def _dense(gp, X, z, R):
    s2, sf2, ell = np.exp(z)
    Z = gp.Z
    Kxz = se_kernel(X, Z, ell)
    C = s2 * np.eye(len(X)) + sf2 * Kxz @ np.linalg.solve(se_kernel(Z, Z, ell)
                                                          + JITTER * np.eye(len(Z)), Kxz.T)
    return np.linalg.slogdet(C)[1] + np.trace(np.linalg.solve(C, R @ R.T)), C


@pytest.mark.parametrize("q", [1, 2])
def test_q2_value_gradient_and_whitened_products_match_dense(q):
    rng = np.random.default_rng(q)
    X = rng.normal(size=(80, q))
    E = rng.normal(size=(80, 4))
    gp = SoRGP(X, 15, E)
    R = rng.normal(size=(80, 3))
    z = np.log([0.3, 1.7, 0.8])
    f, g = gp.q2(z, R)
    fd, C = _dense(gp, X, z, R)
    # Woodbury/orthonormal-feature forms against dense solves: measured 1e-13 relative
    assert f == pytest.approx(fd, rel=1e-10)
    h = 1e-6
    gfd = [(_dense(gp, X, z + e, R)[0] - _dense(gp, X, z - e, R)[0]) / (2 * h)
           for e in h * np.eye(3)]
    # analytic gradient against central differences of the dense value (h = 1e-6: truncation
    # and rounding ~1e-7 relative; measured agreement 1e-8)
    np.testing.assert_allclose(g, gfd, rtol=1e-6, atol=1e-6)
    W, logdet = gp.whitened(0.3, 1.7, 0.8)
    np.testing.assert_allclose(W, E.T @ np.linalg.solve(C, E), rtol=1e-10, atol=1e-12)
    assert logdet == pytest.approx(np.linalg.slogdet(C)[1], rel=1e-12)


def test_inducing_inputs_cover_the_data():
    x = np.random.default_rng(0).uniform(-1, 1, (500, 1))
    Z = inducing_inputs(x, 60)
    assert Z.shape == (60, 1) and Z[0, 0] == x.min() and Z[-1, 0] == x.max()
    assert inducing_inputs(np.ones((50, 1)), 60).shape == (1, 1)     # constant input: one
    X2 = np.random.default_rng(1).normal(size=(300, 2))
    Z2 = inducing_inputs(X2, 20)
    assert Z2.shape == (20, 2) and len(np.unique(Z2, axis=0)) == 20
