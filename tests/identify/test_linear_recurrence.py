"""Tests of the vectorised linear recurrence solvers (fmu_surrogate.identify.linear_recurrence)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from fmu_surrogate.identify import linear_recurrence as lr


def _stable_phi(rng, n, h):
    S = rng.standard_normal((n, n))
    A = (S - S.T) - 0.3 * np.eye(n)
    return expm(A * h)


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize("n", [1, 5, 12, 100])
@pytest.mark.parametrize("K", [1, 2, 3, 8, 9, 200, 1000, 1025])
def test_constant_phi_equals_sequential(n, K):
    # Reordered sums and Φ^{2^l} by repeated squaring: rounding ~ ulp · log₂K (measured ≤ 1e-14).
    rng = np.random.default_rng(n * 10000 + K)
    Phi = _stable_phi(rng, n, 1e-2)
    b = rng.standard_normal((K - 1, n))
    x0 = rng.standard_normal(n)
    ref = lr.solve_sequential(Phi, b, x0)
    assert _rel(lr.solve_linear_recurrence(Phi, b, x0), ref) < 1e-12
    for scan in (lr._scan_hillis_steele, lr._scan_brent_kung):  # both variants, every n
        Y = np.vstack([x0, b])
        assert _rel(scan(np.ascontiguousarray(Phi.T), Y), ref) < 1e-12


@pytest.mark.parametrize("n", [5, 20, 100])
def test_time_varying_phi_equals_sequential(n):
    rng = np.random.default_rng(n)
    K = 300
    Phis = np.stack([_stable_phi(rng, n, h) for h in rng.uniform(5e-3, 2e-2, K - 1)])
    b = rng.standard_normal((K - 1, n))
    x0 = rng.standard_normal(n)
    ref = lr.solve_sequential(Phis, b, x0)
    assert _rel(lr.solve_linear_recurrence(Phis, b, x0), ref) < 1e-12


@pytest.mark.parametrize("n", [5, 100])
@pytest.mark.parametrize("varying", [False, True])
def test_adjoint_recurrence(n, varying):
    rng = np.random.default_rng(3)
    K = 257
    Phi = (
        np.stack([_stable_phi(rng, n, 1e-2) for _ in range(K - 1)])
        if varying
        else _stable_phi(rng, n, 1e-2)
    )
    g = rng.standard_normal((K, n))
    lam = lr.solve_adjoint_recurrence(Phi, g)
    ref = np.empty_like(g)
    ref[-1] = g[-1]
    for k in range(K - 2, -1, -1):
        ref[k] = (Phi[k] if varying else Phi).T @ ref[k + 1] + g[k]
    assert _rel(lam, ref) < 1e-12


@pytest.mark.parametrize("n", [5, 100])
def test_table_form_with_index(n):
    # Φ_k = table[index[k]] (non-uniform grids): same result as the materialised per-step stack,
    # for the scan (n = 5) and the sequential fallback (n = 100), forward and adjoint.
    rng = np.random.default_rng(8)
    K = 130
    table = np.stack([_stable_phi(rng, n, h) for h in (5e-3, 1e-2, 2e-2)])
    index = rng.integers(0, 3, K - 1)
    b = rng.standard_normal((K - 1, n))
    x0 = rng.standard_normal(n)
    ref = lr.solve_sequential(table[index], b, x0)
    assert _rel(lr.solve_linear_recurrence(table, b, x0, index), ref) < 1e-12
    g = rng.standard_normal((K, n))
    lam_ref = lr.solve_adjoint_recurrence(table[index], g)
    lam = lr.solve_adjoint_recurrence(table, g, index)
    assert lam.flags.c_contiguous and _rel(lam, lam_ref) < 1e-12
