r"""Linear recurrences ``x_{k+1} = Φ_k x_k + b_k`` for many right-hand sides at once.

The forward sensitivities of the dense Levenberg–Marquardt step propagate one state sequence per
tangent direction (L of them, tens to hundreds) through the same transition matrices.  A loop
over time steps costs one interpreter round trip per step for all L sequences together; the
solvers here replace it by a logarithmic number of BLAS calls, as
:mod:`fmu_surrogate.identify.linear.model.recurrence` does for a single sequence.

Constant Φ: blocked Brent–Kung over concatenated sequences
----------------------------------------------------------
The L sequences are stored direction-major, ``Y[l, k]`` (row form, products ``y Φᵀ``), each
padded with zero rows to a length ``K_p`` that is a multiple of a block length ``B = 2^j`` and
exceeds ``K``.  Read as one long sequence of ``L·K_p`` rows, every level of the scan is then
*one* fused BLAS call on strided rows for all directions together:

1. up-sweep inside the blocks of length B (levels ``s = 1, 2, …, B/2``): blocks never straddle
   two sequences, since ``B`` divides ``K_p``;
2. carries between the blocks of each sequence: the end row of block ``b`` receives
   ``Φ^B ×`` the (finished) end row of block ``b − 1``, for all L sequences in one call
   (rows ``K_p`` apart) — ``K_p/B − 1`` calls;
3. the down-sweep of Brent–Kung over the long sequence (levels ``s = B/2, …, 1``).  Its first
   target in each sequence would receive the last row of the sequence before; that row is a
   padding row, set to zero before the down-sweep, so nothing leaks between sequences.

``B`` is the largest power of two with at least eight blocks (padding at most an eighth of K):
for ``K = 5001`` that is ``B = 512``, ``K_p = 5120``, 27 BLAS calls.  Work ≈ ``4 L K_p n²``
flops, twice the loop's, and about four sweeps over memory with strided rows, against the
loop's one sweep plus ≈ 1.3 µs of interpreter time per step.  So the scan pays while the work
per step ``L n²`` is small (:func:`scan_pays`); beyond, the loop over time steps (time-major,
one BLAS product of the L × n states with Φᵀ per step, in place) is used.  Measured (1 thread,
K = 5001, the shapes of an order scan's Jacobians, loop / scan): L = 9, n = 2: 6.8 / 0.2 ms;
L = 45, n = 6: 8.5 / 2.4 ms; L = 63, n = 7: 9.6 / 4.7 ms; L = 76, n = 8: 10.8 / 9.9 ms;
L = 174, n = 12: 17.7 / 48 ms; L = 200, n = 3: 11.2 / 9.3 ms.

Time-varying Φ (non-uniform grids, table form)
----------------------------------------------
Time-major storage ``Y[k, l]`` and the Brent–Kung scan over affine maps (segment compositions
``M_i ← M_i M_{i−s}``, ``O(K n³)``) with numpy's batched products, for
``n ≤ TIME_VARYING_BATCH_SCAN_MAX_N``; above it the sequential loop (one batched product per
step) is faster.  Measured (K = 4001, two alternating step sizes): n = 5, L = 40: loop 9.8 ms,
scan 4.3 ms; n = 6, L = 51: 29 ms / 35 ms; n = 12, L = 174: 95 ms / 219 ms.  A single sequence
(L = 1) uses :func:`~fmu_surrogate.identify.linear.model.recurrence.solve_linear_recurrence`.

Rounding: as for the single-sequence scans, the sums are taken in a different order and with
``Φ^{2^d}`` from repeated squaring: a few ulps times ``log₂ K`` relative to the loop (measured
≤ 1.4e-14 for n ≤ 40, K ≤ 5001).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.model.recurrence import (
    _accumulator,
    scan_powers,
    solve_linear_recurrence,
)

Array = NDArray[np.float64]

#: Blocks per sequence at least (the padding is then at most K/8 rows).
MIN_BLOCKS = 8
#: Constant Φ: the scan while the work per time step ``L n²`` is at most this, else the loop
#: (measured crossover between 3000 and 5000, module docstring).
BATCH_SCAN_MAX_WORK = 4000
#: Above this state dimension time-varying recurrences with several right-hand sides use the
#: sequential loop (measured: the batched products of the scan lose from n = 6 on).
TIME_VARYING_BATCH_SCAN_MAX_N = 5


def scan_pays(L: int, n: int) -> bool:
    """Whether the constant-Φ scan beats the loop for L directions of dimension n (a single
    direction: at every n, as for :mod:`~fmu_surrogate.identify.linear.model.recurrence`)."""
    return L == 1 or L * n * n <= BATCH_SCAN_MAX_WORK


def batch_layout(K: int) -> tuple[int, int]:
    """Padded length ``K_p`` and block exponent ``j`` (``B = 2^j``) of the constant-Φ scan.

    Parameters
    ----------
    K : int
        Length of each sequence (``x_0 … x_{K−1}``).

    Returns
    -------
    tuple of int
        ``(K_p, j)`` with ``K_p > K`` a multiple of ``2^j`` (see the module docstring).
    """
    j = max(0, ((K + 1) // MIN_BLOCKS).bit_length() - 1)
    B = 1 << j
    return -(-(K + 1) // B) * B, j


def scan_constant_batch(PhiT: Array, Y: Array, K: int, powers: Array | None = None) -> Array:
    """In place, per direction l: ``x_0 = y_0``, ``x_k = x_{k−1} Φᵀ + y_k`` for k < K (row form).

    Parameters
    ----------
    PhiT : ndarray, shape (n, n)
        ``Φᵀ``.
    Y : ndarray, shape (L, K_p, n), C-contiguous float64
        ``K_p`` from :func:`batch_layout`; ``Y[:, 0]`` the initial values, ``Y[:, 1:K]`` the
        forcing terms.  Overwritten: ``Y[:, :K]`` is the solution.  The padding rows are
        scratch whatever they hold: every row receives only from rows before it in its own
        sequence, and the one row read across sequences is set to zero first.
    K : int
        Length of the sequences.
    powers : ndarray, shape (D, n, n), optional
        ``(Φᵀ)^{2^d}`` for ``d < D`` (C-contiguous), e.g. those of the forward solve
        (:func:`~fmu_surrogate.identify.linear.model.recurrence.scan_powers`); computed here
        when absent or too short.

    Returns
    -------
    ndarray
        ``Y`` itself.  No input validation (inner-loop function).
    """
    L, Kp, n = Y.shape
    _, j = batch_layout(K)
    if powers is None or powers.shape[0] <= j:
        powers = scan_powers(PhiT, 2 << j)  # j + 1 squares: Φᵀ … (Φᵀ)^B
    B = 1 << j
    N = L * Kp
    acc = _accumulator(Y.reshape(N, n), powers, False)
    s, d = 1, 0
    while 2 * s <= B:  # up-sweep inside the blocks
        acc(2 * s - 1, s - 1, 2 * s, N // (2 * s), d)
        s *= 2
        d += 1
    for b in range(1, Kp // B):  # carries between blocks, all sequences per call
        acc(b * B + B - 1, b * B - 1, Kp, L, j)
    Y[:, Kp - 1] = 0.0  # the row the next sequence's first down-sweep target reads
    s //= 2
    d -= 1
    while s >= 1:
        acc(3 * s - 1, 2 * s - 1, 2 * s, (N - 3 * s) // (2 * s) + 1, d)
        s //= 2
        d -= 1
    return Y


def solve_time_major(Phi: Array, Y: Array, index: NDArray[np.intp] | None = None) -> Array:
    """In place on time-major storage: ``Y[0] = x_0``, ``Y[k+1] ← Φ_k Y[k] + Y[k+1]`` per direction.

    Parameters
    ----------
    Phi : ndarray, shape (n, n), (K−1, n, n), or (G, n, n) with ``index``
        Constant, per-step, or a table of transition matrices.
    Y : ndarray, shape (K, L, n)
        ``Y[0]`` the initial values, ``Y[1:]`` the forcing terms; overwritten by the solution.
    index : ndarray of int, shape (K−1,), optional
        Table form: ``Φ_k = Phi[index[k]]``.

    Returns
    -------
    ndarray
        ``Y`` (or, for one direction on a non-uniform grid, the solution in a new array).

    Notes
    -----
    Constant Φ: the loop over time steps (for small ``L n²`` the direction-major scan of
    :func:`scan_constant_batch` is faster).  Time-varying: the scan over affine maps for
    ``n ≤ TIME_VARYING_BATCH_SCAN_MAX_N``, else the loop; a single direction uses
    :func:`~fmu_surrogate.identify.linear.model.recurrence.solve_linear_recurrence`.
    """
    K, L, n = Y.shape
    if Phi.ndim == 2:
        PhiT = np.ascontiguousarray(Phi.T)
        for k in range(K - 1):
            Y[k + 1] += Y[k] @ PhiT
        return Y
    if L == 1:
        return solve_linear_recurrence(Phi, Y[1:, 0], Y[0, 0], index)[:, None, :]
    PhiT = np.swapaxes(Phi, -1, -2)
    if n > TIME_VARYING_BATCH_SCAN_MAX_N:
        for k in range(K - 1):
            Y[k + 1] += Y[k] @ PhiT[k if index is None else index[k]]
        return Y
    MT = np.empty((K, n, n))
    MT[0] = 0.0
    MT[1:] = PhiT if index is None else PhiT[index]
    s = 1
    while 2 * s <= K:
        hi = slice(2 * s - 1, None, 2 * s)
        lo = slice(s - 1, K - s, 2 * s)
        Y[hi] += np.matmul(Y[lo], MT[hi])
        MT[hi] = np.matmul(MT[lo], MT[hi])
        s *= 2
    s //= 2
    while s >= 1:
        if 3 * s - 1 < K:
            hi = slice(3 * s - 1, None, 2 * s)
            lo = slice(2 * s - 1, K - s, 2 * s)
            Y[hi] += np.matmul(Y[lo], MT[hi])
        s //= 2
    return Y
