"""Subspace identification (PO-MOESP) of a continuous-time model ``ẋ = A x + B u``, ``y = C x``.

The initial model of :class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier` with
``init="subspace"``; :mod:`fmu_surrogate.identify.linear.init.passivity` turns it into pH form.

Steps (Verhaegen & Verdult, *Filtering and System Identification*, 2007, §9.6):

1. Scale every input and output channel to unit RMS.  For each experiment form the block Hankel
   matrices of ``i`` past and ``i`` future inputs and outputs (``U_p, U_f, Y_p, Y_f``) and put the
   experiments side by side (columns): several experiments are one data matrix, which is what
   makes multi-experiment data usable (each Hankel column lies within one experiment).
2. LQ factorisation of ``[U_f; U_p; Y_p; Y_f]``; the block ``L₃₂`` spans the extended
   observability matrix ``Γ_i`` (past inputs and outputs as instruments).  Its singular values
   choose the order (:func:`subspace_identify` returns them; the estimator plots them).
3. ``C`` from the first block row of ``Γ_i``, the discrete ``A_d`` from its shift invariance
   (least squares), ``A = logm(A_d)/h`` (unstable eigenvalues, which exact or nearly exact data of
   a passive system do not produce, are mirrored to the left half-plane).
4. ``B`` and the initial state by linear least squares on the outputs of the *exact*
   discretisation with the experiment's input hold (first- or zero-order): the output is linear
   in ``(B, x0)`` for fixed ``(A, C)``.  The regressors are convolutions of the Markov
   parameters ``C Φ^q W_a``, ``C Φ^q W_b`` (``W_a, W_b`` the hold integrals of ``e^{As}``) with
   the inputs (FFT).  There is no feedthrough (a pH output ``y = BᵀQx`` has none), so no ``D``.

Why not ``nfoursid``: it takes one experiment (one data frame), estimates a discrete model with
feedthrough ``D`` and a Kalman gain from the state sequence, and has no notion of input hold or
continuous time; steps 1–3 are the same PO-MOESP projection it uses (``subspace_identification``),
and step 4 is specific to the pH problem.  ``scripts/bench_adjoint.py`` runs ``nfoursid`` as the
unstructured peer.

Orders above the numerical rank of ``L₃₂`` (singular values at round-off, below ``rank_rtol``
relative to the largest, or at the noise level, :func:`numerical_floor`) cannot be identified
from the data; the model is identified at the numerical rank
``r`` and :mod:`~fmu_surrogate.identify.linear.init.passivity` pads it with ``n − r`` decoupled, damped
states without input (they do not change the output).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import expm, logm, lstsq, svd
from scipy.signal import fftconvolve

from fmu_surrogate.errors import InvalidInputError

Array = NDArray[np.float64]

#: Singular values of L₃₂ below this fraction of the largest count as zero (numerical rank).
RANK_RTOL = 1e-14
#: Singular values within this factor of the noise level (median of the lower half) count as
#: noise (see :func:`numerical_floor`).
NOISE_FACTOR = 10.0


@dataclass(frozen=True)
class SubspaceModel:
    """Result of :func:`subspace_identify`.

    Attributes
    ----------
    A, B, C : ndarray
        Continuous-time model of order ``r`` (``r ≤`` the requested order, see ``rank``).
    x0 : ndarray, shape (r,)
        Estimated initial state (zero if it was not estimated).
    singular_values : ndarray
        Singular values of ``L₃₂`` (order selection), largest first.
    horizon : int
        Block rows ``i`` of the Hankel matrices.
    rank : int
        Order actually identified (``min(order, numerical rank)``).
    h : float
        Sampling step.
    fit_residual : float
        Relative RMS output residual of the least-squares step 4.
    D : ndarray, shape (m_y, m_u), optional
        Feedthrough (``with_d=True``), else None.
    observability : (U, s)
        Singular vectors and values of ``L₃₂`` (reusable for other orders, same horizon).
    """

    A: Array
    B: Array
    C: Array
    x0: Array
    singular_values: Array
    horizon: int
    rank: int
    h: float
    fit_residual: float
    D: Array | None = None
    observability: tuple[Array, Array] | None = field(default=None, repr=False)


def _uniform_step(t: Array, where: str) -> float:
    d = np.diff(t)
    h = float(np.mean(d))
    if np.max(np.abs(d - h)) > 1e-9 * h:
        raise InvalidInputError(
            f"{where}: subspace initialisation needs a uniform time grid (steps from {d.min():.6g} "
            f"to {d.max():.6g}); resample the data or use init='paper'."
        )
    return h


def _hankel(s: Array, i: int, j: int) -> Array:
    """Block Hankel matrix with ``i`` block rows and ``j`` columns of the samples ``s`` (K, c)."""
    return np.concatenate([s[r : r + j].T for r in range(i)], axis=0)


def default_horizon(order: int, m: int, n_samples: int) -> int:
    """Block rows ``i``: enough for ``order`` (``i m > order``), bounded by the data length."""
    i = max(order // m + 2, 2 * (order // m) + 1, 5)
    return int(max(2, min(i, (n_samples - 1) // (4 * m + 2), (n_samples - 1) // 2 - 1)))


def _observability(
    exps: list[tuple[Array, Array, Array]], i: int, su: Array, sy: Array
) -> tuple[Array, Array]:
    """Left singular vectors and singular values of L₃₂ (PO-MOESP), all experiments together."""
    blocks = []
    for _, u, y in exps:
        us, ys = u / su, y / sy
        j = us.shape[0] - 2 * i + 1
        if j < 1:
            continue
        Uh, Yh = _hankel(us, 2 * i, j), _hankel(ys, 2 * i, j)
        mu, my = us.shape[1], ys.shape[1]
        Up, Uf = Uh[: i * mu], Uh[i * mu :]
        Yp, Yf = Yh[: i * my], Yh[i * my :]
        blocks.append(np.concatenate([Uf, Up, Yp, Yf], axis=0))
    if not blocks:
        raise InvalidInputError(
            f"subspace initialisation: every experiment is shorter than 2·horizon = {2 * i} "
            f"samples; pass longer records, a smaller order, or init='paper'."
        )
    Z = np.concatenate(blocks, axis=1)
    iu, iy = i * exps[0][1].shape[1], i * exps[0][2].shape[1]
    R = np.linalg.qr(Z.T, mode="r")  # Z = Rᵀ Qᵀ = L Qᵀ
    L = R.T
    L32 = L[2 * iu + iy :, iu : 2 * iu + iy]
    U, s, _ = svd(L32, full_matrices=False)
    return U, s


def numerical_floor(s: Array, rank_rtol: float = RANK_RTOL) -> float:
    """Singular values at or below this carry no model information.

    The larger of ``rank_rtol · s₁`` (round-off) and ``NOISE_FACTOR`` times the median of the
    lower half of the singular values — the level that measurement noise gives all of them
    (white noise spreads evenly over the directions; the system's part decays).
    """
    tail = s[s.size // 2 :]
    noise = NOISE_FACTOR * float(np.median(tail)) if tail.size else 0.0
    return max(rank_rtol * float(s[0]), noise)


def noise_limited(s: Array, rank_rtol: float = RANK_RTOL) -> bool:
    """Whether :func:`numerical_floor` is set by the noise level rather than by round-off."""
    tail = s[s.size // 2 :]
    return bool(tail.size and NOISE_FACTOR * float(np.median(tail)) > rank_rtol * float(s[0]))


def _mirror_unstable(A: Array) -> Array:
    lam, V = np.linalg.eig(A)
    if np.all(lam.real < 0):
        return A
    lam = np.where(lam.real >= 0, -np.abs(lam.real) - 1e-12 * np.abs(lam).max() + 1j * lam.imag, lam)
    return np.real(V @ np.diag(lam) @ np.linalg.inv(V))


#: Relative singular-value cut-off of the least squares for ``(B, D, x0)``.
COND = 1e-10


def _regressors(
    A: Array, C: Array, t: Array, u: Array, hold: str, with_x0: bool
) -> tuple[Array, Array | None]:
    """Output regressors of vec(B) (K, m_out, n, m_in) and of x0 (K, m_out, n)."""
    n = A.shape[0]
    h = float(t[1] - t[0])
    K = t.shape[0]
    M = np.zeros((3 * n, 3 * n))
    M[:n, :n] = A * h
    M[:n, n : 2 * n] = np.eye(n) * h
    M[n : 2 * n, 2 * n :] = np.eye(n)
    E = expm(M)
    Phi, Wa, Wb = E[:n, :n], E[:n, n : 2 * n], E[:n, 2 * n :]
    O = np.empty((K, C.shape[0], n))  # C Φ^q
    O[0] = C
    for q in range(1, K):
        O[q] = O[q - 1] @ Phi
    Ha = O[: K - 1] @ Wa
    reg = np.zeros((K, C.shape[0], n, u.shape[1]))
    conv = fftconvolve(Ha[:, :, :, None], u[: K - 1, None, None, :], axes=0)[: K - 1]
    if hold == "linear":
        Hb = O[: K - 1] @ Wb
        du = np.diff(u, axis=0)
        conv = conv + fftconvolve(Hb[:, :, :, None], du[:, None, None, :], axes=0)[: K - 1]
    reg[1:] = conv
    return reg, (O if with_x0 else None)


def subspace_identify(
    exps: list[tuple[Array, Array, Array, str]],
    order: int,
    *,
    horizon: int | None = None,
    with_x0: bool = True,
    rank_rtol: float = RANK_RTOL,
    rank: int | None = None,
    with_d: bool = False,
    observability: tuple[Array, Array] | None = None,
) -> SubspaceModel:
    """PO-MOESP identification of a continuous-time ``(A, B, C)`` from several experiments.

    Parameters
    ----------
    exps : list of (t, u, y, hold)
        Uniformly sampled experiments with the same step; ``u, y`` of shape (K, m); ``hold`` is
        ``"linear"`` or ``"zoh"`` (input between samples).
    order : int
        Requested order n.
    horizon : int, optional
        Block rows of the Hankel matrices (default :func:`default_horizon`).
    with_x0 : bool
        Estimate one initial state shared by the experiments (else x0 = 0).
    rank_rtol : float
        Relative threshold of the numerical rank (see the module docstring).
    rank : int, optional
        Identify this many states whatever the numerical rank (directions below it included;
        at most ``(i − 1) m``).
    with_d : bool
        Estimate a feedthrough ``D`` with ``B`` and ``x0`` (``y = Cx + Du``).  The outputs may
        then differ in number from the inputs.
    observability : (U, s), optional
        The singular vectors and values of ``L₃₂`` of an earlier call with the same data and
        horizon (:attr:`SubspaceModel.observability`): identifying several orders then costs
        one LQ factorisation.

    Returns
    -------
    SubspaceModel
    """
    hs = [_uniform_step(t, f"experiment {k}") for k, (t, *_rest) in enumerate(exps)]
    h = hs[0]
    if max(abs(x - h) for x in hs) > 1e-9 * h:
        raise InvalidInputError(
            f"subspace initialisation needs one sampling step for all experiments, got "
            f"{sorted({round(x, 12) for x in hs})}; resample or use init='paper'."
        )
    m, my = exps[0][1].shape[1], exps[0][2].shape[1]
    K_max = max(e[0].shape[0] for e in exps)
    i = default_horizon(order, my, K_max) if horizon is None else int(horizon)
    if i < 2:
        raise InvalidInputError(
            f"subspace initialisation: the records are too short for a Hankel horizon of 2 "
            f"block rows ({K_max} samples); pass longer records or use init='paper'."
        )
    u_all = np.concatenate([e[1] for e in exps])
    y_all = np.concatenate([e[2] for e in exps])
    su = np.sqrt(np.mean(u_all**2, axis=0)) + 1e-300
    sy = np.sqrt(np.mean(y_all**2, axis=0)) + 1e-300
    if observability is None:
        observability = _observability([(e[0], e[1], e[2]) for e in exps], i, su, sy)
    U, s = observability
    if rank is None:
        rank = int(min(order, np.sum(s > numerical_floor(s, rank_rtol))))
    rank = max(min(int(rank), (i - 1) * my), 1)
    Gam = U[:, :rank] * np.sqrt(s[:rank])
    C = Gam[:my] * sy[:, None]
    Ad = lstsq(Gam[:-my], Gam[my:])[0]
    with warnings.catch_warnings():  # an initial guess, refined by the fit: its accuracy warning
        warnings.simplefilter("ignore", RuntimeWarning)  # (a near-singular Ad) is no news
        A = logm(Ad) / h
    if np.iscomplexobj(A):
        A = A.real
    A = _mirror_unstable(A)
    cols, rows = [], []
    for t, u, y, hold in exps:
        reg, O = _regressors(A, C, t, u, hold, with_x0)
        K = t.shape[0]
        parts = [reg.reshape(K * my, -1)]
        if with_d:  # y_k[a] += Σ_b D[a, b] u_k[b]
            Xd = np.zeros((K, my, my, m))
            Xd[:, np.arange(my), np.arange(my), :] = u[:, None, :]
            parts.append(Xd.reshape(K * my, -1))
        if O is not None:
            parts.append(O.reshape(K * my, -1))
        cols.append(np.concatenate(parts, axis=1))
        rows.append(y.reshape(-1))
    X = np.concatenate(cols)
    yv = np.concatenate(rows)
    scale = np.linalg.norm(X, axis=0) + 1e-300
    # directions the data barely determine (an initial state against a constant source through
    # a slow pole: both explain a near-constant output) are dropped, not given huge cancelling
    # values: the minimum-norm solution of the columns above COND of the largest singular value
    theta = lstsq(X / scale, yv, cond=COND, lapack_driver="gelsy")[0] / scale
    B = theta[: rank * m].reshape(rank, m)
    nd = my * m if with_d else 0
    D = theta[rank * m : rank * m + nd].reshape(my, m) if with_d else None
    x0 = theta[rank * m + nd :] if with_x0 else np.zeros(rank)
    res = float(np.linalg.norm(X @ theta - yv) / max(np.linalg.norm(yv), 1e-300))
    return SubspaceModel(A, B, C, x0, s, i, rank, h, res, D, (U, s))


def data_problem(exps: list[Any]) -> str | None:
    """Why the experiments do not suit the subspace method (None if they do): it needs uniform
    grids with one step size."""
    steps = []
    for e in exps:
        if not e.groups.uniform:
            return "a time grid is not uniform"
        steps.append(float(e.groups.h[0]))
    if max(steps) - min(steps) > 1e-9 * max(steps):
        return "the experiments have different sampling steps"
    return None
