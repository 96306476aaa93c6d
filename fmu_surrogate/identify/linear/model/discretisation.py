"""Discretisations of the linear pH model ``ẋ = (J − R) Q x + B u``, ``y = Bᵀ Q x``.

Two discretisations (``mode``)
------------------------------
``"euler"`` — the paper's scheme, for reproduction.
    Explicit Euler ``x_{k+1} = x_k + h_k (A x_k + B u_k)`` and left-endpoint quadrature:
    weights ``w_k = h_k`` for ``k < K−1`` and ``w_{K−1} = 0``.

``"exact"`` — exact discretisation for piecewise-linear (first-order hold) inputs, or for inputs
    held constant over each step (zero-order hold, ``Experiment(hold="zoh")``: the input of a
    co-simulation FMU; then ``x_{k+1} = Φ x_k + Γ_a u_k``, the same formula with ``Γ_b`` unused).
    With ``M = [[A h, B h, 0], [0, 0, I_m], [0, 0, 0]]`` (size ``n + 2m``),
    ``expm(M) = [[Φ, Γ_a, Γ_b], [0, I, I], [0, 0, I]]`` where ``Φ = e^{Ah}``,
    ``Γ_a = ∫₀ʰ e^{A(h−s)} B ds`` and ``Γ_b = ∫₀ʰ e^{A(h−s)} B (s/h) ds``; the solution for
    ``u(t_k + s) = u_k + (s/h)(u_{k+1} − u_k)`` is exactly
    ``x_{k+1} = Φ x_k + Γ0 u_k + Γ1 u_{k+1}`` with ``Γ0 = Γ_a − Γ_b``, ``Γ1 = Γ_b``.
    The cost uses trapezoidal weights ``w_0 = h_0/2``, ``w_k = (h_{k−1} + h_k)/2``,
    ``w_{K−1} = h_{K−2}/2`` on the sample points.  (The data are only known at the samples; the
    trapezoidal rule is the natural O(h²) discrete L² norm of them.  Integrating the squared
    *linearly interpolated* residual exactly would give the same order — the model output
    between samples is not linear either — at the price of cross terms ``r_k·r_{k+1}``.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import expm, expm_frechet

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.identify.linear.model.experiments import (
    HOLDS,
    STEP_RTOL,
    Experiment,
    Mode,
    _check_mode,
    _group_values,
    check_params,
    check_signal,
    check_time,
    step_groups,
)
from fmu_surrogate.identify.linear.model.recurrence import solve_linear_recurrence

Array = NDArray[np.float64]

#: Block-matrix size up to which the Fréchet adjoint uses the 2×2 block exponential
#: (batched; faster than scipy.linalg.expm_frechet for small matrices, measured).
_BLOCK_FRECHET_MAX = 48


def quadrature_weights(h: Array, mode: str) -> Array:
    """Cost weights ``w_k`` (shape (K,)) from the steps ``h`` (shape (K−1,)).

    ``"euler"``: left endpoint (``w_k = h_k``, ``w_{K−1} = 0``); ``"exact"``: trapezoidal.
    """
    K = h.shape[0] + 1
    w = np.zeros(K)
    if mode == "euler":
        w[:-1] = h
    else:
        w[:-1] += 0.5 * h
        w[1:] += 0.5 * h
    return w


def foh_block_matrix(A: Array, B: Array, h: float | Array) -> Array:
    """``M = [[A h, B h, 0], [0, 0, I], [0, 0, 0]]``; ``h`` of shape (G,) gives (G, N, N)."""
    n, m = B.shape
    hh = np.atleast_1d(np.asarray(h, dtype=float))
    N = n + 2 * m
    M = np.zeros((hh.shape[0], N, N))
    M[:, :n, :n] = hh[:, None, None] * A
    M[:, :n, n : n + m] = hh[:, None, None] * B
    M[:, n : n + m, n + m :] = np.eye(m)
    return M if np.ndim(h) else M[0]


def foh_matrices(A: Array, B: Array, h: ArrayLike) -> tuple[Array, Array, Array, Array]:
    """Exact first-order-hold discretisation.

    Returns ``(Phi, Gamma0, Gamma1, E)`` for step sizes ``h`` (shape (G,)): ``Phi`` (G, n, n),
    ``Gamma0``/``Gamma1`` (G, n, m) with ``x_{k+1} = Φ x_k + Γ0 u_k + Γ1 u_{k+1}`` and the
    full exponentials ``E = expm(M)`` (G, N, N).
    """
    n, m = B.shape
    M = foh_block_matrix(A, B, np.atleast_1d(np.asarray(h, dtype=float)))
    E = expm(M)
    Phi = E[:, :n, :n]
    Ga = E[:, :n, n : n + m]
    Gb = E[:, :n, n + m :]
    return Phi, Ga - Gb, Gb, E


def _expm_frechet_adjoint(M: Array, GE: Array) -> Array:
    """``L_exp(M_gᵀ, GE_g)`` for stacks (G, N, N): the adjoint of the Fréchet derivative."""
    G, N, _ = M.shape
    MT = np.swapaxes(M, -1, -2)
    if N <= _BLOCK_FRECHET_MAX:
        big = np.zeros((G, 2 * N, 2 * N))
        big[:, :N, :N] = MT
        big[:, N:, N:] = MT
        big[:, :N, N:] = GE
        return expm(big)[:, :N, N:]
    return np.stack([expm_frechet(MT[g], GE[g], compute_expm=False) for g in range(G)])


def _foh_frechet_adjoint(M: Array, GEtop: Array, n: int) -> Array:
    """Rows ``:n`` of ``L_exp(M_gᵀ, GE_g)`` when only the rows ``:n`` of ``GE_g`` are nonzero.

    ``M = [[A h, B h, 0], [0, 0, I], [0, 0, 0]]`` is block upper triangular, so the rows ``:n``
    of ``e^{s Mᵀ}`` are ``[e^{s (A h)ᵀ}, 0, 0]`` and
    ``L_exp(Mᵀ, GE)[:n] = ∫₀¹ e^{s (Ah)ᵀ} GE[:n] e^{(1−s) Mᵀ} ds``: the top-right block of the
    exponential of ``[[(Ah)ᵀ, GE[:n]], [0, Mᵀ]]`` (size n + N instead of 2N).

    Parameters
    ----------
    M : ndarray, shape (G, N, N)
    GEtop : ndarray, shape (G, n, N)

    Returns
    -------
    ndarray, shape (G, n, N)
    """
    G, N, _ = M.shape
    MT = np.swapaxes(M, -1, -2)
    if n + N <= 2 * _BLOCK_FRECHET_MAX:
        big = np.zeros((G, n + N, n + N))
        big[:, :n, :n] = MT[:, :n, :n]
        big[:, n:, n:] = MT
        big[:, :n, n:] = GEtop
        return expm(big)[:, :n, n:]
    GE = np.zeros((G, N, N))
    GE[:, :n] = GEtop
    return np.stack([expm_frechet(MT[g], GE[g], compute_expm=False)[:n] for g in range(G)])


@dataclass
class _Plan:
    """Global step sizes across experiments and, per experiment, their indices."""

    h: Array  # (G,)
    index: list[NDArray[np.intp]]  # per experiment, (K_e − 1,)


def _plan(experiments: Sequence[Experiment]) -> _Plan:
    if len(experiments) == 1:
        g = experiments[0].groups
        return _Plan(g.h, [g.index])
    reps = np.concatenate([e.groups.h for e in experiments])
    means, lab = _group_values(reps, STEP_RTOL)
    idx = []
    off = 0
    for e in experiments:
        G = e.groups.h.shape[0]
        idx.append(lab[off : off + G][e.groups.index])
        off += G
    return _Plan(means, idx)


@dataclass
class _Forward:
    X: Array  # (K, n)
    r: Array  # (K, m) residual C x − y_data
    w: Array  # (K,)
    h: Array  # (K−1,) snapped steps
    Phi: Array  # (n, n) if uniform, else a table (G, n, n) indexed by idx
    idx: NDArray[np.intp]
    uniform: bool
    misfit: float
    #: repeated squares of Φᵀ used by the forward scan (uniform grids; reused by the adjoint)
    powers: Array | None = None


def _forward(
    A: Array,
    B: Array,
    C: Array,
    x0: Array,
    u: Array,
    ydata: Array | None,
    hs: Array,
    idx: NDArray[np.intp],
    mode: str,
    disc: tuple[Array, Array, Array] | None,
    hold: str = "linear",
) -> _Forward:
    n = A.shape[0]
    g0 = int(idx[0])
    uniform = bool(np.all(idx == g0))
    h = hs[idx]
    if mode == "euler":
        I = np.eye(n)
        Phi = I + hs[g0] * A if uniform else I + hs[:, None, None] * A  # table (G, n, n)
        b = (u[:-1] @ B.T) * h[:, None]
    else:
        assert disc is not None
        PhiG, G0, G1 = disc
        if hold == "zoh":  # x_{k+1} = Φ x_k + Γ_a u_k, Γ_a = Γ0 + Γ1
            G0, G1 = G0 + G1, np.zeros_like(G1)
        if uniform:
            Phi = PhiG[g0]
            b = u[:-1] @ G0[g0].T + u[1:] @ G1[g0].T
        else:
            Phi = PhiG
            b = np.einsum("kij,kj->ki", G0[idx], u[:-1]) + np.einsum("kij,kj->ki", G1[idx], u[1:])
    X = solve_linear_recurrence(Phi, b, x0, None if uniform else idx)
    Y = X @ C.T
    w = quadrature_weights(h, mode)
    if ydata is None:
        return _Forward(X, Y, w, h, Phi, idx, uniform, 0.0)
    r = Y - ydata
    misfit = 0.5 * float(w @ np.einsum("ij,ij->i", r, r))
    return _Forward(X, r, w, h, Phi, idx, uniform, misfit)


def simulate(
    params: Mapping[str, ArrayLike],
    t: ArrayLike,
    u: ArrayLike,
    mode: Mode = "exact",
    hold: str = "linear",
) -> tuple[Array, Array]:
    """Simulate the discretised model.

    Parameters
    ----------
    params : dict
        ``J, R, Q`` (n, n), ``B`` (n, m), optional ``x0`` (n,).
    t : array_like, shape (K,)
        Strictly increasing sample times.
    u : array_like, shape (K, m)
        Inputs at the sample times.
    mode : {"exact", "euler"}
        Discretisation (see the module docstring).
    hold : {"linear", "zoh"}
        Input between samples in exact mode: piecewise linear or zero-order hold.

    Returns
    -------
    x : ndarray, shape (K, n)
    y : ndarray, shape (K, m)
        ``y = Bᵀ Q x``.
    """
    _check_mode(mode)
    if hold not in HOLDS:
        raise InvalidInputError(f"hold must be one of {HOLDS}, got {hold!r}.")
    p = check_params(params)
    tt = check_time(t)
    uu = check_signal(u, tt.shape[0], "u", p["B"].shape[1])
    g = step_groups(tt)
    A = (p["J"] - p["R"]) @ p["Q"]
    C = p["B"].T @ p["Q"]
    disc = None
    if mode == "exact":
        disc = foh_matrices(A, p["B"], g.h)[:3]
    with np.errstate(over="ignore", invalid="ignore"):
        f = _forward(A, p["B"], C, p["x0"], uu, None, g.h, g.index, mode, disc, hold)
    return f.X, f.r
