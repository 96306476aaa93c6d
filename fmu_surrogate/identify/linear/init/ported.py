"""Initial drop-in model (feedthrough, modulating inputs, source, measured outputs) from data.

1. Subspace identification with a feedthrough of all shown outputs from all pH port inputs
   (the constant source is an input column of ones; its ``B`` and ``D`` columns are the
   offsets), with x0 when learned; order 0: least squares ``y = D v``.
2. The KYP storage of the power subsystem (power inputs → power outputs, with its
   feedthrough when learned; marginal poles shifted, :mod:`.passivity`), or a Lyapunov storage
   where there is no power port (a signal block: modulating inputs, measured outputs) or no
   storage was found, and the change to coordinates with ``Q = I``.
3. The pH matrices in those coordinates: ``J, R`` from ``A``; for power ports
   ``G = ½(B + Cᵀ)``, ``P = ½(Cᵀ − B)`` (the least-squares compromise when the model is not
   exactly passive), for the other ports ``G = B``, ``P = 0``; ``S = sym(D)`` and ``N = −skew(D)``
   on the power block, and ``N`` carrying the feedthrough from the other ports to the power
   outputs.  ``W = [[R, P], [Pᵀ, S]]`` is lifted to PSD (eigenvalues below a floor raised to
   it) and factored, ``W = LLᵀ``; the refinement then keeps the structure by construction.
4. Measured outputs: ``Cx``, ``Du`` as identified (no structure).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import lstsq, solve_continuous_lyapunov

from fmu_surrogate.identify.linear.init.passivity import stabilising_shift, storage_matrix
from fmu_surrogate.identify.linear.init.subspace import subspace_identify
from fmu_surrogate.identify.linear.model.ported import Layout, pack

Array = NDArray[np.float64]

#: Eigenvalues of the initial W below this fraction of the largest are lifted to it before
#: factorising (a factor with vanishing columns cannot grow them to first order).
W_FLOOR = 1e-8


def _factor(W: Array) -> Array:
    lam, V = np.linalg.eigh(0.5 * (W + W.T))
    top = max(float(lam[-1]) if lam.size else 0.0, 1e-300)
    lam = np.maximum(lam, W_FLOOR * top if top > 1e-300 else W_FLOOR)
    return np.linalg.cholesky((V * lam) @ V.T)


def ported_initial(lay: Layout, data: list[tuple], rate: float) -> Array:
    """θ of the initial drop-in model (module docstring).

    Parameters
    ----------
    lay : Layout
    data : list of (t, v, y, hold)
        pH port inputs (source column included) and shown outputs.
    rate : float
        Inverse data duration (shift of marginal poles).

    Returns
    -------
    ndarray
        θ for :class:`~fmu_surrogate.identify.linear.model.ported.PortedModel`.
    """
    n, m, p = lay.n, lay.m, lay.n_power
    if n == 0:
        V = np.concatenate([d[1] for d in data])
        Y = np.concatenate([d[2] for d in data])
        D = lstsq(V, Y)[0].T
        A = np.zeros((0, 0))
        B, C, x0 = np.zeros((0, m)), np.zeros((D.shape[0], 0)), np.zeros(0)
    else:
        sm = subspace_identify(data, n, with_x0=lay.learn_x0, with_d=True)
        A, B, C, D, x0 = sm.A, sm.B, sm.C, sm.D, sm.x0
        r = A.shape[0]
        if r < n:  # fewer states identified: decoupled, damped extra states
            rate_pad = max(float(np.abs(np.linalg.eigvals(A)).max()) if r else 1.0, 1.0)
            A = np.block([[A, np.zeros((r, n - r))], [np.zeros((n - r, r)),
                                                       -rate_pad * np.eye(n - r)]])
            B = np.vstack([B, np.zeros((n - r, m))])
            C = np.hstack([C, np.zeros((C.shape[0], n - r))])
            x0 = np.concatenate([x0, np.zeros(n - r)])
        eps = stabilising_shift(A, rate)
        As = A - eps * np.eye(n)
        Dp = D[:p, :p] if lay.feedthrough else None
        Q, *_ = storage_matrix(As, B[:, :p], C[:p], Dp)
        if Q is not None and not np.linalg.cond(Q) < 1e12:
            Q = None
        lam = np.linalg.eigvalsh(-0.5 * (As + As.T)) if Q is None else None
        if lam is not None and lam[0] < -W_FLOOR * max(lam[-1], 0):
            # no power port (or no storage of them found) and R = −sym(A) indefinite in the
            # subspace model's coordinates, where lifting it would change the model (a lag
            # 2/(s+1)³ as a signal block started at a cost of 4.4 and stalled at 0.71, 51 %
            # held out): a Lyapunov storage, AᵀQ + QA = −I, makes R positive definite in its
            # coordinates and the start the subspace model itself.  Where R is PSD already
            # the coordinates stay (a mass's position, a pole at −1e-5: the storage's
            # condition of 1.6e4 left Levenberg–Marquardt no step above round-off there)
            Q = solve_continuous_lyapunov(As.T, -np.eye(n))
        if Q is not None and np.all(np.isfinite(Q)) and (lam is None or np.linalg.cond(Q) < 1e12):
            T = np.linalg.cholesky(0.5 * (Q + Q.T)).T  # x' = T x: H = ½|x'|²
            Ti = np.linalg.inv(T)
            A, B, C, x0 = T @ As @ Ti, T @ B, C @ Ti, T @ x0
        else:
            A = As
    J = 0.5 * (A - A.T)
    R = -0.5 * (A + A.T)
    G = B.copy()
    P = np.zeros((n, m))
    G[:, :p] = 0.5 * (B[:, :p] + C[:p].T)
    P[:, :p] = 0.5 * (C[:p].T - B[:, :p])
    S = np.zeros((m, m))
    N = np.zeros((m, m))
    if lay.feedthrough:
        Dpp = D[:p, :p]
        S[:p, :p] = 0.5 * (Dpp + Dpp.T)
        N[:p, :p] = -0.5 * (Dpp - Dpp.T)
        N[:p, p:] = -D[:p, p:]  # D = S − N with S = 0 off the power block
        N[p:, :p] = D[:p, p:].T
        W = np.block([[R, P], [P.T, S]])
    else:
        W = R
    values: dict[str, Any] = {"J": J, "L": _factor(W) if W.size else W, "G": G, "N": N,
                              "x0": x0, "Cx": C[p:], "Du": D[p:]}
    return pack(lay, values)
