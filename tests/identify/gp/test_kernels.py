"""The torch Gaussian kernel against its numpy twin and the elementwise definition."""

import numpy as np
import torch

from fmu_surrogate.identify.gp.kernels import rbf
from fmu_surrogate.ph.efforts.gaussian import gaussian_kernel


def test_rbf_matches_numpy_twin_and_definition():
    rng = np.random.default_rng(0)
    X1, X2 = rng.normal(size=(7, 3)), rng.normal(size=(5, 3))
    ls = np.array([0.5, 1.0, 2.0])
    ref = np.array([[np.exp(-0.5 * np.sum(((a - b) / ls) ** 2)) for b in X2] for a in X1])
    K = rbf(torch.as_tensor(X1), torch.as_tensor(X2), torch.as_tensor(ls)).numpy()
    # same formula in both; against the definition only the round-off of the expanded square
    # |a|² + |b|² − 2ab of O(10) terms (~1e-15)
    np.testing.assert_allclose(K, gaussian_kernel(X1, X2, ls), rtol=0, atol=1e-14)
    np.testing.assert_allclose(K, ref, rtol=0, atol=1e-14)
    # a shared length scale, as a (1,) tensor and as a float
    K1 = rbf(torch.as_tensor(X1), torch.as_tensor(X2), torch.tensor([0.7], dtype=torch.float64))
    np.testing.assert_allclose(K1.numpy(), gaussian_kernel(X1, X2, 0.7), rtol=0, atol=1e-14)
    # k(x, x) = 1 up to the same round-off
    np.testing.assert_allclose(np.diag(gaussian_kernel(X1, X1, ls)), 1.0, rtol=0, atol=1e-14)
