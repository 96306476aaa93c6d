"""Tests of the many-right-hand-side recurrence solvers
(fmu_surrogate.identify.linear.model.batched_recurrence).

References are independent of the scans: the plain loop over time steps per direction
(``recurrence.solve_sequential``) and SciPy's ``scipy.signal.dlsim``.  Tolerances: the scans sum
the same terms in another order and use ``Φ^{2^d}`` from repeated squaring, a few ulps times
``log₂ K`` for ``‖Φ‖ ≲ 1`` (measured ≤ 1.4e-14 here); 1e-12 leaves room for other BLAS builds
and thread counts.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as scs
from scipy.linalg import expm

from fmu_surrogate.identify.linear.model import batched_recurrence as br
from fmu_surrogate.identify.linear.model import recurrence as lr


def _stable_phi(rng, n, h):
    S = rng.standard_normal((n, n))
    return expm(((S - S.T) - 0.3 * np.eye(n)) * h)


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


def _solve(Phi, b, x0, index=None):
    """The two solvers as the sensitivities use them: the direction-major scan where it pays
    (constant Φ), else the time-major solver; shape (K, L, n)."""
    K, (L, n) = b.shape[0] + 1, x0.shape
    if Phi.ndim == 2 and br.scan_pays(L, n):
        Y = np.empty((L, br.batch_layout(K)[0], n))
        Y[:, 0] = x0
        Y[:, 1:K] = np.swapaxes(b, 0, 1)
        br.scan_constant_batch(np.ascontiguousarray(Phi.T), Y, K)
        return np.swapaxes(Y[:, :K], 0, 1)
    Y = np.empty((K, L, n))
    Y[0] = x0
    Y[1:] = b
    return br.solve_time_major(Phi, Y, index)


def _loop(Phi, b, x0, index=None):
    """Per direction l, the sequential reference: shape (K, L, n)."""
    P = Phi if index is None or Phi.ndim == 2 else Phi[index]
    return np.stack([lr.solve_sequential(P, b[:, l], x0[l]) for l in range(x0.shape[0])], 1)


@pytest.mark.parametrize("n", [1, 3, 12])
@pytest.mark.parametrize("L", [1, 4, 17])
@pytest.mark.parametrize("K", [1, 2, 3, 7, 8, 9, 16, 17, 200, 1001, 1025])
def test_constant_phi_equals_loop_per_direction(n, L, K):
    rng = np.random.default_rng(1000 * n + 10 * L + K)
    Phi = _stable_phi(rng, n, 1e-2)
    b = rng.standard_normal((K - 1, L, n))
    x0 = rng.standard_normal((L, n))
    got = _solve(Phi, b, x0)
    assert got.shape == (K, L, n)
    assert _rel(got, _loop(Phi, b, x0)) < 1e-12


@pytest.mark.parametrize(("L", "n"), [(40, 12), (1, 70)])
def test_constant_phi_loop_and_single_direction(L, n):
    # Much work per step (L n² > BATCH_SCAN_MAX_WORK): the time-major loop; one direction of a
    # large state: the scan (scan_pays); both against the per-direction loop.
    assert br.scan_pays(L, n) == (L == 1)
    rng = np.random.default_rng(L + n)
    K = 333
    Phi = _stable_phi(rng, n, 1e-2)
    b = rng.standard_normal((K - 1, L, n))
    x0 = rng.standard_normal((L, n))
    assert _rel(_solve(Phi, b, x0), _loop(Phi, b, x0)) < 1e-12


def test_constant_phi_equals_scipy_dlsim():
    # x_{k+1} = Φ x_k + I·b_k, output the state: scipy's discrete-time simulation.
    rng = np.random.default_rng(5)
    n, L, K = 4, 3, 700
    Phi = _stable_phi(rng, n, 2e-2)
    b = rng.standard_normal((K - 1, L, n))
    x0 = rng.standard_normal((L, n))
    got = _solve(Phi, b, x0)
    I = np.eye(n)
    for l in range(L):
        u = np.vstack([b[:, l], np.zeros((1, n))])  # dlsim's last input only feeds x_K
        _, _, x = scs.dlsim((Phi, I, I, np.zeros((n, n)), 1.0), u, x0=x0[l])
        assert _rel(got[:, l], x) < 1e-12


@pytest.mark.parametrize("fused", [True, False])
def test_scan_in_place_padding_powers_and_no_leak(monkeypatch, fused):
    # The in-place scan on the direction-major buffer: garbage in the padding rows, squares
    # passed in from the forward solve, and directions without forcing that must stay exactly
    # zero (nothing leaks between the concatenated sequences); fused BLAS and numpy fallback.
    if fused and lr._DGEMM is None:
        pytest.skip("SciPy's BLAS is not reachable through ctypes here")
    if not fused:
        monkeypatch.setattr(lr, "_DGEMM", None)
    rng = np.random.default_rng(11)
    n, L, K = 6, 5, 1001
    Kp, j = br.batch_layout(K)
    assert Kp > K and Kp % (1 << j) == 0 and Kp <= K + K // br.MIN_BLOCKS + 1
    Phi = _stable_phi(rng, n, 1e-2)
    PhiT = np.ascontiguousarray(Phi.T)
    b = rng.standard_normal((K - 1, L, n))
    x0 = rng.standard_normal((L, n))
    b[:, 2], x0[2] = 0.0, 0.0
    Y = np.empty((L, Kp, n))
    Y[:, K:] = 1e300  # the padding is scratch: its contents must not matter
    Y[:, 0] = x0
    Y[:, 1:K] = np.swapaxes(b, 0, 1)
    br.scan_constant_batch(PhiT, Y, K, lr.scan_powers(PhiT, K))
    got = np.swapaxes(Y[:, :K], 0, 1)
    assert np.all(got[:, 2] == 0.0)
    assert _rel(got, _loop(Phi, b, x0)) < 1e-12


def test_layout_of_a_long_record():
    # K = 5001 (the motor benchmark's runs): blocks of 512, 10 of them, 119 padding rows.
    assert br.batch_layout(5001) == (5120, 9)
    assert br.batch_layout(1) == (2, 0)


@pytest.mark.parametrize("n", [1, 5, 6, 12])
@pytest.mark.parametrize("L", [1, 7])
@pytest.mark.parametrize("table", [False, True])
def test_time_varying_equals_loop(n, L, table):
    # Non-uniform grids: the scan over affine maps (n ≤ TIME_VARYING_BATCH_SCAN_MAX_N), the
    # batched loop (larger n), and one direction through solve_linear_recurrence; per-step
    # stack and table form with an index.
    rng = np.random.default_rng(100 * n + L)
    K = 301
    if table:
        Phi = np.stack([_stable_phi(rng, n, h) for h in (3e-3, 7e-3, 2e-2)])
        index = rng.integers(0, 3, K - 1)
    else:
        Phi = np.stack([_stable_phi(rng, n, h) for h in rng.uniform(5e-3, 2e-2, K - 1)])
        index = None
    b = rng.standard_normal((K - 1, L, n))
    x0 = rng.standard_normal((L, n))
    got = _solve(Phi, b, x0, index)
    assert got.shape == (K, L, n)
    assert _rel(got, _loop(Phi, b, x0, index)) < 1e-12
