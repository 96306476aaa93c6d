"""Tests of the vectorised linear recurrence solvers (fmu_surrogate.identify.linear.model.recurrence)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from fmu_surrogate.identify.linear.model import recurrence as lr


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


@pytest.mark.parametrize("n", [1, 5, 12, 40])
@pytest.mark.parametrize("K", [1, 2, 3, 8, 9, 200, 1001, 1025])
def test_reverse_scans_equal_sequential_adjoint(n, K):
    # The mirrored scans (backward recurrence on positive-stride slices) against the plain loop;
    # same rounding argument as the forward scans (measured ≤ 1e-14).
    rng = np.random.default_rng(n * 7919 + K)
    Phi = _stable_phi(rng, n, 1e-2)
    g = rng.standard_normal((K, n))
    ref = np.empty_like(g)
    ref[-1] = g[-1]
    for k in range(K - 2, -1, -1):
        ref[k] = Phi.T @ ref[k + 1] + g[k]
    assert _rel(lr.scan_constant(Phi.copy(), g.copy(), reverse=True), ref) < 1e-12
    for scan in (lr._scan_hillis_steele, lr._scan_brent_kung):  # both variants, every n
        assert _rel(scan(Phi.copy(), g.copy(), True), ref) < 1e-12
    # forward in place, same as solve_linear_recurrence
    fwd = lr.scan_constant(np.ascontiguousarray(Phi.T), g.copy())
    assert _rel(fwd, lr.solve_sequential(Phi, g[1:], g[0])) < 1e-12


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("n", [3, 20])
def test_brent_kung_fused_blas_and_numpy_fallback(monkeypatch, fused, n):
    # The fused strided-row BLAS update (when SciPy's dgemm is reachable) and the numpy
    # fallback give the sequential result, forward and backward, with the backward scan
    # reusing the transposed squares of the forward one (rounding only: 1e-12).
    if fused and lr._DGEMM is None:
        pytest.skip("SciPy's BLAS is not reachable through ctypes here")
    if not fused:
        monkeypatch.setattr(lr, "_DGEMM", None)
    rng = np.random.default_rng(n)
    K = 1001
    Phi = _stable_phi(rng, n, 1e-2)
    PhiT = np.ascontiguousarray(Phi.T)
    b = rng.standard_normal((K - 1, n))
    x0 = rng.standard_normal(n)
    P = lr.scan_powers(PhiT, K)
    np.testing.assert_allclose(P[3], np.linalg.matrix_power(PhiT, 8), rtol=1e-13, atol=1e-15)
    Y = np.vstack([x0, b])
    assert _rel(lr.scan_constant(PhiT, Y.copy(), powers=P), lr.solve_sequential(Phi, b, x0)) < 1e-12
    g = rng.standard_normal((K, n))
    ref = np.empty_like(g)
    ref[-1] = g[-1]
    for k in range(K - 2, -1, -1):
        ref[k] = Phi.T @ ref[k + 1] + g[k]
    lam = lr.scan_constant(Phi, g.copy(), reverse=True, powers=P, transpose_powers=True)
    assert _rel(lam, ref) < 1e-12
    # non-contiguous input takes the numpy route in any case
    Yf = np.asfortranarray(np.vstack([x0, b]))
    assert _rel(lr._scan_brent_kung(PhiT, Yf), lr.solve_sequential(Phi, b, x0)) < 1e-12


def test_fused_blas_self_test_and_scan_choice(monkeypatch):
    if lr._DGEMM is not None:
        assert lr._DGEMM.self_test()
        assert lr._use_brent_kung(2)  # the fused scan is the faster one at every n
    monkeypatch.setattr(lr, "_DGEMM", None)
    assert not lr._use_brent_kung(lr.BRENT_KUNG_MIN_N - 1) and lr._use_brent_kung(
        lr.BRENT_KUNG_MIN_N
    )
    # square counts: ⌈log₂ K⌉ for Hillis–Steele, ⌊log₂ K⌋ for Brent–Kung
    assert lr.scan_powers(np.eye(2), 1001).shape == (10, 2, 2)
    assert lr.scan_powers(np.eye(20), 1001).shape == (9, 20, 20)
