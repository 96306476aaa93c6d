"""Vectorised solvers for linear recurrences ``x_{k+1} = Φ_k x_k + b_k``.

The forward state recurrence and the backward adjoint recurrence of the discretised linear
pH model are both of this form.  A plain Python loop costs one interpreter round trip per
time step (≈ 1.5 µs at n = 5, i.e. most of the run time for small n); the solvers here replace
it by a logarithmic number of batched matrix products.

Methods (parallel-prefix scans with batched matrix products)
-----------------------------------------------------------
Write ``x_k = Σ_{j=0}^{k} Φ^j y_{k−j}`` with ``y_0 = x_0`` and ``y_k = b_{k−1}`` (row form: the
rows of ``Y`` are states, products are ``y Φᵀ``).

* Hillis–Steele doubling: for ``s = 1, 2, 4, …``: ``y_k ← y_k + Φ^s y_{k−s}`` (all k ≥ s at once)
  and ``Φ^{2s} = Φ^s Φ^s``.  ``⌈log₂ K⌉`` numpy calls, ``K n² log₂ K`` multiply-adds.  Fewest
  numpy calls; used for small n when the fused BLAS update below is not available.
* Brent–Kung (work-efficient): an up-sweep over rows ``i ≡ 2s−1 (mod 2s)`` and a down-sweep
  over rows ``i ≡ s−1 (mod 2s)``; ``2 log₂ K`` calls but only ≈ ``2 K n²`` multiply-adds.  Each
  level is *one* BLAS ``dgemm`` call ``C ← A·B + C`` on strided rows of ``Y`` (SciPy's BLAS through
  ``scipy.linalg.cython_blas`` and ctypes, checked against numpy at import); the numpy form
  ``Y[hi] += Y[lo] @ P`` needs a temporary and a strided add that costs as much as the product.
  With the fused call Brent–Kung is the fastest variant at every n measured and is always used;
  without it (numpy fallback) from ``n ≥ BRENT_KUNG_MIN_N`` on.
* Backward recurrences (the adjoint ``λ_k = Φᵀ λ_{k+1} + g_k``) run the mirror-image scans on
  positive-stride slices (no reversed copies), and can reuse the repeated squares of the forward
  scan with the same Φ (transposed): :func:`scan_powers`, :func:`scan_constant`.
* Time-varying ``Φ_k`` (non-uniform grids): Brent–Kung over affine maps, composing
  ``M_i ← M_i M_{i−s}`` on the up-sweep, ``O(K n³)``; for ``n > TIME_VARYING_SCAN_MAX_N`` the
  sequential loop is cheaper and used instead.

Measured (1 thread, K = 1001, median processor time on a shared 2-core machine; sequential loop
≈ 1.6 / 3 / 5.5 ms for n = 5 / 20 / 100): Hillis–Steele 46 / 220 / 5000 µs, Brent–Kung with the
fused update 34 / 75 / 1200 µs (numpy form 76 / 140 / 1350 µs), plus 13 / 17 µs for the squares
of Φ (shared by the forward and the adjoint scan).  Alternatives considered: blocked evaluation
with precomputed ``Φ^1..Φ^L`` (``K n² L`` flops, measured slower at every n), blocked evaluation
in the input/output space (Markov parameters; cheaper for a cost-only evaluation, but the gradient
then needs the states again, no gain at ~1 line-search trial per iteration), numpy ``out=``
buffers (no gain), and a modal decomposition with scalar recurrences (needs a well-conditioned
eigenbasis, which the iterates of an optimiser do not guarantee).

Rounding: the scans sum the same terms in a different order and use ``Φ^{2^l}`` from repeated
squaring; for ``‖Φ‖ ≲ 1`` (stable or mildly unstable discretisations) the relative difference to
the sequential loop is a few ulps times ``log₂ K`` (≤ 1e-14 measured for n ≤ 100, K ≤ 1025).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

#: Without the fused BLAS update, the constant-Φ solver uses the work-efficient Brent–Kung scan
#: (≈ 2 K n² flops) from this state dimension on, Hillis–Steele (K n² log₂ K flops, fewer numpy
#: calls) below.  With it, Brent–Kung at every n.
BRENT_KUNG_MIN_N = 10
#: Above this state dimension time-varying recurrences fall back to the sequential loop
#: (the time-varying scan costs O(K n³)).
TIME_VARYING_SCAN_MAX_N = 24


def solve_sequential(
    Phi: Array, b: Array, x0: Array, index: NDArray[np.intp] | None = None
) -> Array:
    """Reference: ``x_{k+1} = Φ_k x_k + b_k`` by a plain loop over k.

    Parameters
    ----------
    Phi : ndarray, shape (n, n), (K−1, n, n), or (G, n, n) with ``index``
        Constant, per-step, or a table of transition matrices.
    b : ndarray, shape (K−1, n)
        Forcing terms.
    x0 : ndarray, shape (n,)
    index : ndarray of int, shape (K−1,), optional
        ``Φ_k = Phi[index[k]]`` (table form).

    Returns
    -------
    ndarray, shape (K, n)
        ``x_0, …, x_{K−1}``.
    """
    K = b.shape[0] + 1
    X = np.empty((K, x0.shape[0]), dtype=np.result_type(Phi, b, x0))
    X[0] = x0
    if Phi.ndim == 2:
        for k in range(K - 1):
            X[k + 1] = Phi @ X[k] + b[k]
    elif index is None:
        for k in range(K - 1):
            X[k + 1] = Phi[k] @ X[k] + b[k]
    else:
        for k in range(K - 1):
            X[k + 1] = Phi[index[k]] @ X[k] + b[k]
    return X


# ---------------------------------------------------------------------------------------------
# Y[rows_c] += Y[rows_a] @ P in one BLAS call (no temporary, no strided numpy add)
# ---------------------------------------------------------------------------------------------
class _Dgemm:
    """``dgemm`` of SciPy's BLAS (``scipy.linalg.cython_blas``) called through ctypes.

    One call computes ``C ← A·B + C`` on strided rows of an array in place; the numpy
    expression ``Y[hi] += Y[lo] @ P`` needs a temporary and a strided add that costs as much as
    the product itself (measured at n = 20: 21 µs against 11 µs for the fused call).
    """

    def __init__(self) -> None:
        import ctypes

        from scipy.linalg import cython_blas

        cap = cython_blas.__pyx_capi__["dgemm"]
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype = ctypes.c_char_p
        get_name.argtypes = [ctypes.py_object]
        name = get_name(cap)
        if not name.decode().startswith("void (char *, char *, int *, int *, int *, "):
            raise RuntimeError(f"unexpected dgemm signature {name!r}")
        if ctypes.sizeof(ctypes.c_int) != 4 or ctypes.sizeof(ctypes.c_double) != 8:
            raise RuntimeError("unexpected C type sizes")
        get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
        get_ptr.restype = ctypes.c_void_p
        get_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]
        self.fn = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * 13))(get_ptr(cap, name))
        # Fortran passes everything by reference: constant C objects, their addresses passed
        self._c_int = ctypes.c_int
        self._c_double = ctypes.c_double
        self._addressof = ctypes.addressof
        self._chars = {c: ctypes.c_char(c.encode()) for c in "NT"}
        self._one = ctypes.c_double(1.0)
        self.r_trans = {c: ctypes.addressof(v) for c, v in self._chars.items()}
        self.r_one = ctypes.addressof(self._one)

    def rows_acc(
        self, Y: Array, P: Array, trans: bool
    ) -> Callable[[int, int, int, int, int], None]:
        """A function ``acc(c0, a0, step, cnt, d)``: rows ``c0 + step·j`` of ``Y`` (C-contiguous
        float64, shape (K, n)) ``+=`` rows ``a0 + step·j`` times ``P[d]`` (``P[d]ᵀ`` if ``trans``),
        for j < cnt, where ``P`` is a C-contiguous float64 stack (D, n, n)."""
        n = Y.shape[1]
        # integer arguments owned by this closure (the GIL is released during the BLAS call)
        i_n, i_cnt, i_ld = self._c_int(n), self._c_int(0), self._c_int(0)
        r_n, r_cnt, r_ld = (self._addressof(x) for x in (i_n, i_cnt, i_ld))
        fn, r_one = self.fn, self.r_one
        # row form Y_c += Y_a P is, column-major, Y_cᵀ += Pᵀ Y_aᵀ: the column-major reading of a
        # C-contiguous P is Pᵀ, so 'N' multiplies by P and 'T' by Pᵀ
        r_tr = self.r_trans["T" if trans else "N"]
        r_nn = self.r_trans["N"]
        base = Y.ctypes.data
        pbase = P.ctypes.data
        row = 8 * n
        mat = 8 * n * n

        def acc(c0: int, a0: int, step: int, cnt: int, d: int) -> None:
            i_cnt.value = cnt
            i_ld.value = step * n
            fn(
                r_tr, r_nn, r_n, r_cnt, r_n, r_one, pbase + mat * d, r_n, base + row * a0, r_ld,
                r_one, base + row * c0, r_ld,
            )  # fmt: skip

        acc.keep = (i_n, i_cnt, i_ld)  # type: ignore[attr-defined]  # alive as long as acc
        return acc

    def square_chain(self, P: Array) -> None:
        """``P[d] = P[d−1] @ P[d−1]`` for d ≥ 1, in place (C-contiguous float64 stack)."""
        D, n, _ = P.shape
        if D < 2:
            return
        i_n = self._c_int(n)
        zero = self._c_double(0.0)
        r_n, r_zero = self._addressof(i_n), self._addressof(zero)
        r_nn, r_one, fn = self.r_trans["N"], self.r_one, self.fn
        base = P.ctypes.data
        mat = 8 * n * n
        for d in range(1, D):
            a = base + mat * (d - 1)
            # column-major: (Pᵀ)(Pᵀ) = (P P)ᵀ, i.e. P P in the C-order reading
            fn(r_nn, r_nn, r_n, r_n, r_n, r_one, a, r_n, a, r_n, r_zero, a + mat, r_n)

    def self_test(self) -> bool:
        """Strided rows, both transposition flags, against numpy."""
        rng = np.random.default_rng(0)
        Y = rng.standard_normal((9, 3))
        P = rng.standard_normal((2, 3, 3))
        for trans in (False, True):
            ref = Y.copy()
            ref[3::3] += ref[1:5:3] @ (P[1].T if trans else P[1])
            got = Y.copy()
            self.rows_acc(got, P, trans)(3, 1, 3, 2, 1)
            if not np.allclose(got, ref, rtol=1e-13, atol=1e-13):
                return False
        S = np.empty((3, 3, 3))
        S[0] = P[0]
        self.square_chain(S)
        return bool(np.allclose(S[2], np.linalg.matrix_power(P[0], 4), rtol=1e-13, atol=1e-13))


def _load_dgemm() -> _Dgemm | None:
    """The fused BLAS call, or ``None`` (numpy fallback) on any ABI surprise."""
    try:
        g = _Dgemm()
        return g if g.self_test() else None
    except (ImportError, AttributeError, KeyError, OSError, RuntimeError, TypeError, ValueError):
        return None  # pragma: no cover - depends on the SciPy build


_DGEMM = _load_dgemm()


def _use_brent_kung(n: int) -> bool:
    """Brent–Kung when the fused BLAS call is available (fewest flops *and* calls: measured
    faster than Hillis–Steele from n = 1 on), else from ``BRENT_KUNG_MIN_N`` on."""
    return _DGEMM is not None or n >= BRENT_KUNG_MIN_N


def scan_powers(PhiT: Array, K: int) -> Array:
    """The repeated squares ``(Φᵀ)^{2^d}`` that :func:`scan_constant` multiplies with.

    Returns a C-contiguous stack of shape (D, n, n) by repeated squaring, ``D = ⌊log₂ K⌋``
    (Brent–Kung) or ``⌈log₂ K⌉`` (Hillis–Steele), as the scan for this ``n`` needs.  The
    backward (adjoint) scan with the same Φ uses the transposes (``transpose_powers=True``).
    ``PhiT`` may be any (n, n) array (e.g. the transposed view of Φ).
    """
    n = PhiT.shape[0]
    D = K.bit_length() - 1 if _use_brent_kung(n) else (K - 1).bit_length()
    P = np.empty((D, n, n))
    if D:
        P[0] = PhiT
    if _DGEMM is not None:
        _DGEMM.square_chain(P)
    else:
        for d in range(1, D):
            np.matmul(P[d - 1], P[d - 1], out=P[d])
    return P


def _powers_hs(PhiT: Array, K: int) -> Array:
    """``(Φᵀ)^{2^d}`` for d < ⌈log₂ K⌉ (enough for either scan)."""
    D = (K - 1).bit_length()
    P = np.empty((D, *PhiT.shape), dtype=np.result_type(PhiT, np.float64))
    if D:
        P[0] = PhiT
    for d in range(1, D):
        np.matmul(P[d - 1], P[d - 1], out=P[d])
    return P


def _scan_hillis_steele(
    PhiT: Array,
    Y: Array,
    reverse: bool = False,
    powers: Array | None = None,
    transpose_powers: bool = False,
) -> Array:
    """In-place Hillis–Steele scan of ``Y`` (rows are states, row form ``x Φᵀ``).

    ``reverse=True`` runs the recurrence backwards in time, ``y_k ← y_k + y_{k+1} Φᵀ`` (the adjoint
    recurrence with ``PhiT = Φ``), on the same positive-stride slices (no reversed copies).
    ``powers``, ``transpose_powers``: see :func:`scan_constant`.
    """
    K = Y.shape[0]
    P = _powers_hs(PhiT, K) if powers is None else powers
    s, d = 1, 0
    while s < K:
        Pd = P[d].T if transpose_powers else P[d]
        if reverse:
            Y[:-s] += Y[s:] @ Pd
        else:
            Y[s:] += Y[:-s] @ Pd
        s *= 2
        d += 1
    return Y


def _accumulator(
    Y: Array, P: Array, transpose_powers: bool
) -> Callable[[int, int, int, int, int], None]:
    """``acc(c0, a0, step, cnt, d)``: rows ``c0 + step·j`` of ``Y`` (shape (K, n)) ``+=`` rows
    ``a0 + step·j`` times ``P[d]`` (``P[d]ᵀ`` if ``transpose_powers``), j < cnt: one fused BLAS
    call (:meth:`_Dgemm.rows_acc`) when available and the arrays allow it, numpy otherwise."""
    if (
        _DGEMM is not None
        and Y.dtype == np.float64
        and Y.flags.c_contiguous
        and P.dtype == np.float64
        and P.flags.c_contiguous
    ):
        return _DGEMM.rows_acc(Y, P, transpose_powers)

    def acc(c0: int, a0: int, step: int, cnt: int, d: int) -> None:
        Pd = P[d].T if transpose_powers else P[d]
        Y[c0 : c0 + step * cnt : step] += Y[a0 : a0 + step * cnt : step] @ Pd

    return acc


def _scan_brent_kung(
    PhiT: Array,
    Y: Array,
    reverse: bool = False,
    powers: Array | None = None,
    transpose_powers: bool = False,
) -> Array:
    """In-place Brent–Kung (work-efficient) scan of ``Y``, row form ``x Φᵀ``.

    Up-sweep: for s = 1, 2, 4, …, row ``i ≡ 2s − 1 (mod 2s)`` accumulates the segment of length
    2s ending at it, ``y_i += Φ^s y_{i−s}``.  Down-sweep: for s = …, 2, 1, row
    ``i ≡ s − 1 (mod 2s)``, ``i ≥ 3s − 1``, receives the finished prefix ``y_i += Φ^s y_{i−s}``.
    About ``2K`` row updates in ``2 log₂ K`` BLAS calls (fused multiply-add on strided rows when
    SciPy's BLAS is reachable, numpy otherwise).  ``reverse=True`` is the mirror image (row ``i``
    ↔ ``K − 1 − i``): the backward recurrence ``y_k ← y_k + y_{k+1} Φᵀ``, on positive-stride
    slices.  ``powers``, ``transpose_powers``: see :func:`scan_constant`.
    """
    K = Y.shape[0]
    P = _powers_hs(PhiT, K) if powers is None else powers  # P[d] = (Φ^{2^d})ᵀ
    acc = _accumulator(Y, P, transpose_powers)
    s, d = 1, 0
    while 2 * s <= K:
        cnt = (K - 2 * s) // (2 * s) + 1
        if reverse:  # rows K−2s, K−4s, … ≥ 0 receive from the rows s below them
            a = (K - 2 * s) % (2 * s)
            acc(a, a + s, 2 * s, cnt, d)
        else:
            acc(2 * s - 1, s - 1, 2 * s, cnt, d)
        s *= 2
        d += 1
    s //= 2
    d -= 1
    while s >= 1:
        if 3 * s - 1 < K:
            cnt = (K - 3 * s) // (2 * s) + 1
            if reverse:  # rows K−3s, K−5s, … ≥ 0
                a = (K - 3 * s) % (2 * s)
                acc(a, a + s, 2 * s, cnt, d)
            else:
                acc(3 * s - 1, 2 * s - 1, 2 * s, cnt, d)
        s //= 2
        d -= 1
    return Y


def _scan_brent_kung_tv(MT: Array, Y: Array) -> Array:
    """Brent–Kung scan with per-row maps: ``y_i = M_i y_{i−1} + y_i`` (``MT[i] = M_iᵀ``).

    ``MT`` is overwritten by segment compositions (up-sweep ``M_i ← M_i M_{i−s}``).
    """
    K = Y.shape[0]
    s = 1
    while 2 * s <= K:
        hi = slice(2 * s - 1, None, 2 * s)
        lo = slice(s - 1, K - s, 2 * s)
        Y[hi] += np.matmul(Y[lo][:, None, :], MT[hi])[:, 0, :]
        MT[hi] = np.matmul(MT[lo], MT[hi])
        s *= 2
    s //= 2
    while s >= 1:
        if 3 * s - 1 < K:
            hi = slice(3 * s - 1, None, 2 * s)
            lo = slice(2 * s - 1, K - s, 2 * s)
            Y[hi] += np.matmul(Y[lo][:, None, :], MT[hi])[:, 0, :]
        s //= 2
    return Y


def scan_constant(
    PhiT: Array,
    Y: Array,
    reverse: bool = False,
    powers: Array | None = None,
    transpose_powers: bool = False,
) -> Array:
    """In place: ``x_0 = y_0``, ``x_k = x_{k−1} Φᵀ + y_k`` (row form), or backwards in time.

    The allocation-free core of :func:`solve_linear_recurrence` for a constant transition
    matrix, used by the evaluation fast path of :mod:`fmu_surrogate.identify.linear.model.adjoint`.

    Parameters
    ----------
    PhiT : ndarray, shape (n, n)
        ``Φᵀ``.  For the adjoint recurrence ``λ_k = Φᵀ λ_{k+1} + g_k`` pass ``Φ`` itself with
        ``reverse=True``.
    Y : ndarray, shape (K, n), C-contiguous, float64
        On entry ``y_0 = x_0`` (or ``y_{K−1} = λ_{K−1}`` when reversed) and the forcing terms in
        the other rows; overwritten by the solution.
    reverse : bool
        ``False``: ``x_k = Φ x_{k−1} + y_k`` for k = 1 … K−1.  ``True``:
        ``x_k = Φ x_{k+1} + y_k`` for k = K−2 … 0 (with ``PhiT`` standing for ``Φᵀ``).
    powers : ndarray, shape (D, n, n), optional
        ``scan_powers(PhiT, K)`` computed beforehand (default: computed here).  The squares of a
        forward scan serve the backward scan with the same Φ through ``transpose_powers``.
    transpose_powers : bool
        Multiply with ``powers[d]ᵀ`` (then ``PhiT`` is not used).

    Returns
    -------
    ndarray
        ``Y`` itself.  No input validation (inner-loop function).
    """
    if _use_brent_kung(Y.shape[1]):
        return _scan_brent_kung(PhiT, Y, reverse, powers, transpose_powers)
    return _scan_hillis_steele(PhiT, Y, reverse, powers, transpose_powers)


def _solve_constant(Phi: Array, b: Array, x0: Array) -> Array:
    K = b.shape[0] + 1
    n = x0.shape[0]
    Y = np.empty((K, n), dtype=np.result_type(Phi, b, x0))
    Y[0] = x0
    Y[1:] = b
    return scan_constant(np.ascontiguousarray(Phi.T), Y)


def _solve_time_varying(Phi: Array, b: Array, x0: Array, index: NDArray[np.intp] | None) -> Array:
    K = b.shape[0] + 1
    n = x0.shape[0]
    if n > TIME_VARYING_SCAN_MAX_N:
        return solve_sequential(Phi, b, x0, index)
    dtype = np.result_type(Phi, b, x0)
    Y = np.empty((K, n), dtype=dtype)
    Y[0] = x0
    Y[1:] = b
    MT = np.empty((K, n, n), dtype=dtype)
    MT[0] = 0.0  # row 0 is the constant x0
    PhiT = np.swapaxes(Phi, -1, -2)
    MT[1:] = PhiT if index is None else PhiT[index]
    return _scan_brent_kung_tv(MT, Y)


def solve_linear_recurrence(
    Phi: Array, b: Array, x0: Array, index: NDArray[np.intp] | None = None
) -> Array:
    """Solve ``x_{k+1} = Φ_k x_k + b_k``, ``k = 0 … K−2``, without a loop over time steps.

    Parameters
    ----------
    Phi : ndarray, shape (n, n), (K−1, n, n), or (G, n, n) with ``index``
        Constant transition matrix (fast path), one per step, or a table of G matrices.
    b : ndarray, shape (K−1, n)
        Forcing terms.
    x0 : ndarray, shape (n,)
        Initial value.
    index : ndarray of int, shape (K−1,), optional
        Table form: ``Φ_k = Phi[index[k]]`` (avoids materialising K matrices when the
        sequential fallback is used).

    Returns
    -------
    ndarray, shape (K, n)
        ``x_0, …, x_{K−1}``.

    Notes
    -----
    Constant ``Φ``: Brent–Kung scan (or Hillis–Steele, see :func:`scan_constant`), in
    ``O(log K)`` numpy calls.  Per-step ``Φ_k``: Brent–Kung scan over affine maps, ``O(K n³)``
    time and ``K n²`` memory, for ``n ≤ TIME_VARYING_SCAN_MAX_N``; larger ``n`` uses the
    sequential loop (``K`` Python iterations).  No input validation (inner-loop function).
    """
    if b.shape[0] == 0:
        return np.asarray(x0, dtype=np.result_type(Phi, b, x0))[None, :].copy()
    if Phi.ndim == 2:
        return _solve_constant(Phi, b, x0)
    return _solve_time_varying(Phi, b, x0, index)


def solve_adjoint_recurrence(Phi: Array, g: Array, index: NDArray[np.intp] | None = None) -> Array:
    """Solve the backward recurrence ``λ_{K−1} = g_{K−1}``, ``λ_k = Φ_kᵀ λ_{k+1} + g_k``.

    Parameters
    ----------
    Phi : ndarray, shape (n, n), (K−1, n, n), or (G, n, n) with ``index``
        The forward transition matrices ``Φ_k`` (transposed here).
    g : ndarray, shape (K, n)
        Direct sensitivities ``∂c/∂x_k``.
    index : ndarray of int, shape (K−1,), optional
        Table form, as in :func:`solve_linear_recurrence`.

    Returns
    -------
    ndarray, shape (K, n)
        ``λ_0, …, λ_{K−1}`` (C-contiguous).
    """
    rg = g[::-1]
    if Phi.ndim == 2:
        lam = solve_linear_recurrence(Phi.T, rg[1:], rg[0])
    elif index is None:
        lam = solve_linear_recurrence(np.swapaxes(Phi[::-1], -1, -2), rg[1:], rg[0])
    else:
        lam = solve_linear_recurrence(np.swapaxes(Phi, -1, -2), rg[1:], rg[0], index[::-1])
    return np.ascontiguousarray(lam[::-1])
