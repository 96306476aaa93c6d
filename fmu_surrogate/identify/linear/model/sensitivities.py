r"""Output sensitivities of the discretised linear pH model w.r.t. manifold coordinates.

Tangent coordinates
-------------------
:class:`Coordinates` flattens a tangent vector of the product manifold (J skew, the factor Y of
``R = YYᵀ``, Q symmetric, B, x0) into a vector ``ξ ∈ ℝᴾ`` with an orthonormal basis for the
Frobenius inner product: ``(E_ij − E_ji)/√2`` (i < j) for J, ``E_ii`` and ``(E_ij + E_ji)/√2`` for
Q, unit matrices for Y, B and x0.  The Euclidean gradient ``G`` of a parameter has the coordinates
``⟨G, basis⟩`` (:meth:`Coordinates.gradient`).  A step is applied by the retraction of
:mod:`fmu_surrogate.identify.linear.model.manifold`: ``J + ξ_J`` with ``ξ_J = U − Uᵀ`` (bitwise skew), the SPD
retraction for Q.

Forward sensitivities (exact discretisation)
--------------------------------------------
A direction ``(δJ, δY, δQ, δB, δx0)`` changes ``A = (J − R)Q`` and ``C = BᵀQ`` by
``δR = δY Yᵀ + Y δYᵀ``, ``δA = (δJ − δR)Q + (J − R)δQ``, ``δC = δBᵀQ + BᵀδQ``.  With
``M = [[Ah, Bh, 0], [0, 0, I], [0, 0, 0]]`` and ``E = e^M`` the change of the discretisation is
the Fréchet derivative ``δE = L_exp(M, δM)`` — the top-right block of
``exp([[M, δM], [0, M]])``, batched over all directions at once — and the state sensitivity obeys

    δx_{k+1} = Φ δx_k + δΦ x_k + [δΓ_a δΓ_b] V_k,    δx_0 = δx0,
    δy_k = C δx_k + δC x_k,

with the held inputs ``V_k`` of the evaluator (first- or zero-order hold).  Euler mode:
``δΦ = h δA``, ``δΓ_a = h δB``.  The rows of the Jacobian are scaled by ``√w_k`` (quadrature
weights) so that ``½‖ρ‖² `` is the cost.  All directions are propagated together
(:mod:`fmu_surrogate.identify.linear.model.batched_recurrence`): on uniform grids by one scan
in a logarithmic number of BLAS calls while the work per step is small, else by one batched
product per time step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import expm

from fmu_surrogate.identify.linear.model.batched_recurrence import (
    batch_layout,
    scan_constant_batch,
    scan_pays,
    solve_time_major,
)

Array = NDArray[np.float64]
_SQ2 = np.sqrt(0.5)


class Coordinates:
    """Flat orthonormal coordinates of the tangent space (see the module docstring).

    Parameters
    ----------
    names : tuple of str
        Fitted parameters in canonical order (subset of ``J, R, Q, B, x0``).
    n, m : int
        State and port dimensions.
    k : int
        Columns of the factor Y of R.
    """

    def __init__(self, names: Sequence[str], n: int, m: int, k: int) -> None:
        self.names = tuple(names)
        self.n, self.m, self.k = n, m, k
        self.iu = np.triu_indices(n, 1)
        self.sizes = {
            "J": n * (n - 1) // 2,
            "R": n * k,
            "Q": n * (n + 1) // 2,
            "B": n * m,
            "x0": n,
        }
        self.slices: dict[str, slice] = {}
        off = 0
        for p in self.names:
            self.slices[p] = slice(off, off + self.sizes[p])
            off += self.sizes[p]
        self.size = off

    def tangent(self, xi: Array) -> dict[str, Array]:
        """Tangent components of coordinate vectors ``xi`` (shape (P,) or (L, P)).

        Returns arrays with the same leading shape: ``J`` skew (bitwise), ``R`` the factor
        direction δY, ``Q`` symmetric (bitwise), ``B``, ``x0``.
        """
        lead = xi.shape[:-1]
        n = self.n
        out: dict[str, Array] = {}
        iu = self.iu
        for p in self.names:
            c = xi[..., self.slices[p]]
            if p == "J":
                U = np.zeros(lead + (n, n))
                U[..., iu[0], iu[1]] = c * _SQ2
                out[p] = U - np.swapaxes(U, -1, -2)
            elif p == "Q":
                S = np.zeros(lead + (n, n))
                d = np.arange(n)
                S[..., d, d] = c[..., :n]
                S[..., iu[0], iu[1]] = c[..., n:] * _SQ2
                S[..., iu[1], iu[0]] = c[..., n:] * _SQ2
                out[p] = S
            elif p == "R":
                out[p] = c.reshape(lead + (n, self.k))
            elif p == "B":
                out[p] = c.reshape(lead + (n, self.m))
            else:
                out[p] = c.reshape(lead + (n,))
        return out

    def gradient(self, grads: Sequence[Array]) -> Array:
        """Coordinates of Euclidean gradients (in the order of ``names``; R: w.r.t. Y)."""
        parts = []
        iu = self.iu
        for p, G in zip(self.names, grads):
            if p == "J":
                parts.append((G[iu] - G.T[iu]) * _SQ2)
            elif p == "Q":
                parts.append(np.concatenate([np.diag(G), (G[iu] + G.T[iu]) * _SQ2]))
            else:
                parts.append(np.ravel(G))
        return np.concatenate(parts) if parts else np.zeros(0)

    def identity(self) -> Array:
        """All basis directions, shape (P, P)."""
        return np.eye(self.size)


def _model_directions(
    d: dict[str, Array], params: dict[str, Array], Y: Array | None, lead: tuple[int, ...]
) -> tuple[Array, Array, Array, Array]:
    """(δA, δB, δC, δx0) of tangent directions ``d`` (leading shape ``lead``)."""
    J, R, Q, B = params["J"], params["R"], params["Q"], params["B"]
    n, m = B.shape
    zero_nn = np.zeros(lead + (n, n))
    dJ = d.get("J", zero_nn)
    if "R" in d:
        P = d["R"] @ Y.T  # type: ignore[union-attr]
        dR = P + np.swapaxes(P, -1, -2)
    else:
        dR = zero_nn
    dA = (dJ - dR) @ Q
    dB = d.get("B", np.zeros(lead + (n, m)))
    dC = np.swapaxes(dB, -1, -2) @ Q
    if "Q" in d:
        dA = dA + (J - R) @ d["Q"]
        dC = dC + B.T @ d["Q"]
    dx0 = d.get("x0", np.zeros(lead + (n,)))
    return dA, dB, dC, dx0


def _disc_directions(
    mode: str, M: Array | None, hs: Array, dA: Array, dB: Array
) -> tuple[Array, Array]:
    """(δΦ, δΓ) per step group: shapes (L, G, n, n) and (L, G, n, 2m)."""
    L, n, m = dB.shape[0], dB.shape[1], dB.shape[2]
    G = hs.shape[0]
    if mode == "euler":
        dPhi = hs[None, :, None, None] * dA[:, None]
        dGam = np.zeros((L, G, n, 2 * m))
        dGam[..., :m] = hs[None, :, None, None] * dB[:, None]
        return dPhi, dGam
    assert M is not None
    N = M.shape[-1]
    big = np.zeros((L, G, 2 * N, 2 * N))
    big[:, :, :N, :N] = M[None]
    big[:, :, N:, N:] = M[None]
    big[:, :, :n, N : N + n] = hs[None, :, None, None] * dA[:, None]
    big[:, :, :n, N + n : N + n + m] = hs[None, :, None, None] * dB[:, None]
    dE = expm(big.reshape(L * G, 2 * N, 2 * N)).reshape(L, G, 2 * N, 2 * N)[:, :, :n, N:]
    return dE[..., :n], dE[..., n:]


def _workspace(work: dict[Any, Array] | None, key: Any, shape: tuple[int, ...]) -> Array:
    """A float64 array of ``shape``: the one kept in ``work`` under ``key`` if it fits, else a
    new one (kept there).  Large arrays are fresh memory from the system each time they are
    allocated (page faults: measured ≈ 35 ms per 80 MB); a Levenberg–Marquardt run asks for the
    same shapes every iteration."""
    buf = None if work is None else work.get(key)
    if buf is None or buf.shape != shape:
        buf = np.empty(shape)
        if work is not None:
            work[key] = buf
    return buf


def output_sensitivities(
    ev: Any, state: Any, d: dict[str, Array], Y: Array | None,
    work: dict[Any, Array] | None = None,
) -> list[Array]:
    """Output sensitivities ``δy`` (shape (K_e, L, m) per experiment) for directions ``d``.

    Parameters
    ----------
    ev : Evaluator
        The evaluator that produced ``state`` (experiments, mode, held inputs).
    state : opaque
        A forward solve of ``ev`` (states ``X`` per experiment, ``M`` in exact mode).
    d : dict of str to ndarray
        Tangent directions with a leading batch axis L (see :meth:`Coordinates.tangent`).
    Y : ndarray or None
        The factor of R at the point (needed when ``"R"`` is in ``d``).
    work : dict, optional
        Scratch arrays kept between calls (the caller's; reused when the shapes fit).

    Returns
    -------
    list of ndarray
        Unweighted ``δy`` per experiment, shape (K_e, L, m): time-major, or a view of
        direction-major storage where the scan was used (then ``np.swapaxes(δy, 0, 1)`` is
        C-contiguous).
    """
    params = {"J": state.J, "R": state.R, "Q": state.Q, "B": state.B}
    lead = next(iter(d.values())).shape[:1]
    dA, dB, dC, dx0 = _model_directions(d, params, Y, lead)
    prep = ev.prepared
    hs = prep.plan.h
    dPhi, dGam = _disc_directions(ev.mode, state.M, hs, dA, dB)
    C = state.C
    L = lead[0]
    n = state.B.shape[0]
    dTop = np.concatenate([dPhi, dGam], axis=-1)  # (L, G, n, n + 2m): rows :n of δE
    dCT = np.swapaxes(dC, -1, -2)  # (L, n, m)
    scan = scan_pays(L, n)
    out = []
    for e, (dat, f) in enumerate(zip(prep.data, state.fwds)):
        X = f.X
        K = X.shape[0]
        V = dat.V if ev.mode == "exact" else np.concatenate([dat.ul, np.zeros_like(dat.ul)], 1)
        XV = np.concatenate([X[:-1], V], axis=1)  # (K−1, n + 2m)
        if f.uniform and scan:  # direction-major: F_l = [x_k, V_k] δE_top[l]ᵀ, one scan
            D = _workspace(work, e, (L, batch_layout(K)[0], n))
            D[:, 0] = dx0
            np.matmul(XV, np.swapaxes(dTop[:, dat.g0], 1, 2), out=D[:, 1:K])
            scan_constant_batch(f.Phi.T, D, K, f.powers)
            dy = D[:, :K] @ C.T  # (L, K, m)
            dy += X @ dCT  # δC x_k
            out.append(np.swapaxes(dy, 0, 1))
            continue
        # time-major: forcing F[k, l] = δE_top[l] [x_k; V_k] (one product per step group)
        D = _workspace(work, e, (K, L, n))
        D[0] = dx0
        F = D[1:].reshape(K - 1, L * n)
        if dat.uniform:
            np.matmul(XV, dTop[:, dat.g0].reshape(L * n, -1).T, out=F)
        else:
            for g in np.unique(dat.idx):
                sel = dat.idx == g
                F[sel] = XV[sel] @ dTop[:, g].reshape(L * n, -1).T
        D = solve_time_major(f.Phi, D, None if f.uniform else f.idx)
        dy = (D.reshape(-1, n) @ C.T).reshape(K, L, -1)  # (K, L, m), one product each
        dy += (X @ dC.reshape(-1, n).T).reshape(K, L, -1)  # δC x_k
        out.append(dy)
    return out
