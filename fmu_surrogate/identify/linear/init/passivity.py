"""From an unstructured model ``ẋ = A x + B u, y = C x`` to port-Hamiltonian form.

A linear pH system ``ẋ = (J − R) Q x + B u, y = Bᵀ Q x`` is an ``(A, B, C)`` with a storage
matrix ``Q ≻ 0`` such that (Kalman–Yakubovich–Popov, positive-real lemma with ``D = 0``)

    Aᵀ Q + Q A ⪯ 0,     Q B = Cᵀ;

then ``J = skew(A Q⁻¹)``, ``R = −sym(A Q⁻¹) = −½ Q⁻¹(AᵀQ + QA)Q⁻¹ ⪰ 0``.

How ``Q`` is found (Riccati equation, no semidefinite programming)
------------------------------------------------------------------
The KYP inequality with ``D = 0`` has no Riccati form (``D + Dᵀ`` must be invertible).  We add a
small feedthrough ``δ I``: ``G(s) + δI`` is positive real for every ``δ > δ₀``,
``δ₀ = max(0, −½ min_ω λ_min(G(iω) + G(iω)ᴴ))`` (the passivity violation of the model, evaluated on
a frequency grid that contains the imaginary parts of the poles), and its stabilising Riccati
solution

    AᵀX + XA + (XB − Cᵀ)(2δ)⁻¹(BᵀX − C) = 0      (``scipy.linalg.solve_continuous_are``)

is symmetric positive definite for a minimal stable model and satisfies ``AᵀX + XA ⪯ 0`` exactly
(the quadratic term is ⪰ 0), for *any* stable model — passive or not;
``δ = δ₀(1 + 0.1) + 10⁻⁸‖G‖`` (a passive model has ``δ₀ ≈ 0`` and ``XB − Cᵀ = O(√δ)``).  The
stabilising solution is the smallest storage ``X_min`` (available storage); the largest,
``X_max``, is the inverse of the dual system's ``(Aᵀ, Cᵀ, Bᵀ)`` smallest one.  Both make the
dissipation inequality tight in all but ``m`` directions (``R`` of rank ≤ m), so we take their
mean ``Q = ½(X_min + X_max)``: it satisfies the (convex) KYP inequality too, and its ``R`` is
generically of full rank — an interior starting point, where the factor ``R = YYᵀ`` of the
refinement has no vanishing columns (measured on random systems: rank-m starts stall the
Levenberg–Marquardt refinement at relative errors ~1e-4, central ones converge to round-off).

Lossless and marginally stable parts
------------------------------------
A free mass (pole at 0) or an undamped oscillator (poles on the imaginary axis) is passive but
not asymptotically stable: the Riccati equation then has no stabilising solution (the
Hamiltonian matrix has eigenvalues on the imaginary axis, ``X_min = X_max``) and the frequency
response is infinite at the poles.  The model is therefore regularised by a shift,
``A_ε = A − εI`` with ``ε = max(0, max Re λ(A)) + MARGINAL_SHIFT · rate`` (``rate`` the inverse
duration of the data): a decay the data cannot see (relative output change ``≈ MARGINAL_SHIFT``
over the records), which makes every pole strictly stable; the pH form is that of ``A_ε``
(``R ⪰ εQ⁻¹`` in the lossless directions) and the refinement takes the damping towards zero.

The nearest passive model
-------------------------
With ``Q`` fixed, ``A`` is kept exactly (``A = (J − R)Q``) and the port matrix is the least-squares
compromise between the identified input and output matrices,

    B_pH = argmin ‖B' − B‖²_F + ‖QB' − Cᵀ‖²_F = (I + Q²)⁻¹ (B + Q Cᵀ),

(the output becomes ``B_pHᵀ Q x``, no feedthrough): for a passive model ``QB = Cᵀ`` and nothing
changes, otherwise the change is as small as the violation ``‖QB − Cᵀ‖``.  The Gauss–Newton
refinement of the estimator then fits the data with the structure kept.  The state coordinates
are finally changed to ``Q = I`` or to a prescribed ``Q`` (:func:`to_storage`), any pH model can be.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import cholesky, solve_continuous_are, solve_triangular

from fmu_surrogate.identify.linear.errors import LinearIdentificationError

Array = NDArray[np.float64]

#: Relative margin added to the passivity violation, and the floor of δ relative to ‖G‖.
DELTA_MARGIN, DELTA_FLOOR = 0.1, 1e-8
#: Damping rate of states added beyond the identifiable order, relative to the fastest mode.
PAD_DAMPING = 1.0
#: Shift of marginally stable models relative to the inverse data duration (module docstring):
#: measured on a free mass and an undamped oscillator from exact data, the initial model is then
#: within ~1e-6 of the data and the refinement reaches round-off.
MARGINAL_SHIFT = 1e-6
#: Negative eigenvalues of a Riccati storage down to this fraction of its largest are round-off.
PSD_ROUNDOFF = 1e-12
#: Relative passivity violation (δ₀/‖G‖) above which the model counts as not passive.
VIOLATION_LIMIT = 0.05


@dataclass(frozen=True)
class PassiveModel:
    """A pH model from :func:`passive_realisation`.

    Attributes
    ----------
    J, R, Q, B : ndarray
        ``J`` skew, ``R`` symmetric PSD (up to rounding of ``AQ⁻¹``), ``Q`` SPD, ``B`` (n, m).
    x0 : ndarray, shape (n,)
    violation : float
        Passivity violation ``δ₀`` of the unstructured model (0 for a passive one), relative to
        ``‖G‖``.
    delta : float
        Feedthrough regularisation used in the Riccati equation (absolute).
    port_change : float
        ``‖B_pH − B‖_F / ‖B‖_F``: how much the least-squares port matrix differs.
    """

    J: Array
    R: Array
    Q: Array
    B: Array
    x0: Array
    violation: float
    delta: float
    port_change: float


def _frequency_response(A: Array, B: Array, C: Array, w: Array) -> Array:
    lam, V = np.linalg.eig(A)
    Vi_B = np.linalg.solve(V, B)
    CV = C @ V
    return np.einsum("ai,wi,ib->wab", CV, 1.0 / (1j * w[:, None] - lam[None, :]), Vi_B)


def passivity_violation(
    A: Array, B: Array, C: Array, D: Array | None = None
) -> tuple[float, float]:
    """``(δ₀, ‖G‖)``: half the most negative eigenvalue of ``G + Gᴴ`` and the peak gain.

    Evaluated on ``ω = 0``, the imaginary parts of the poles and a log grid spanning their
    magnitudes (400 points).

    Parameters
    ----------
    A, B, C : ndarray
        Stable continuous-time model.
    D : ndarray, optional
        Feedthrough (square).
    """
    lam = np.linalg.eigvals(A)
    mag = np.abs(lam[np.abs(lam) > 0])
    lo, hi = (mag.min(), mag.max()) if mag.size else (1e-3, 1e3)
    w = np.unique(
        np.concatenate([[0.0], np.abs(lam.imag), np.logspace(np.log10(lo) - 2, np.log10(hi) + 2, 400)])
    )
    G = _frequency_response(A, B, C, w)
    if D is not None:
        G = G + D
    herm = G + np.conj(np.swapaxes(G, -1, -2))
    lmin = np.linalg.eigvalsh(herm)[:, 0].min()
    gain = float(np.abs(G).max()) if G.size else 0.0
    return max(0.0, -0.5 * float(lmin)), gain


def _riccati_storage(
    A: Array, B: Array, C: Array, delta: float, D: Array | None = None
) -> Array | None:
    n, m = B.shape
    DD = np.zeros((m, m)) if D is None else D + D.T
    try:
        X = solve_continuous_are(A, B, np.zeros((n, n)), -(DD + 2.0 * delta * np.eye(m)),
                                 s=-C.T)
    except (np.linalg.LinAlgError, ValueError):
        return None
    X = 0.5 * (X + X.T)  # the Riccati solution is symmetric up to rounding (not an iterate)
    if not np.all(np.isfinite(X)):
        return None
    # semidefinite within round-off is a storage: the smallest storage of a part that stores no
    # energy in some direction (a mass's position) has an eigenvalue 0, computed as ±1e-17 of
    # the largest, its sign the BLAS kernels' choice (the mean with X_max is then definite)
    lam = np.linalg.eigvalsh(X)
    if not lam[-1] > 0 or lam[0] < -PSD_ROUNDOFF * lam[-1]:
        return None
    return X


def _is_spd(X: Array) -> bool:
    try:
        np.linalg.cholesky(0.5 * (X + X.T))
    except np.linalg.LinAlgError:
        return False
    return bool(np.all(np.isfinite(X)))


def _inverse(Y: Array) -> Array:
    """``Y⁻¹`` of a positive definite ``Y``, NaN where round-off left it singular (a model
    with directions the data never excite: an array FMU with one element driven)."""
    try:
        return np.linalg.inv(0.5 * (Y + Y.T))
    except np.linalg.LinAlgError:
        return np.full_like(Y, np.nan)


def stabilising_shift(A: Array, rate: float | None = None) -> float:
    """The shift ε of a marginally stable (or slightly unstable) model, 0 for a stable one.

    Parameters
    ----------
    A : ndarray, shape (r, r)
    rate : float, optional
        Inverse duration of the data [1/s] (default: the spectral radius of A, or 1).

    Returns
    -------
    float
        ``max(0, max Re λ) + MARGINAL_SHIFT · rate`` when a pole has ``Re λ ≥ −MARGINAL_SHIFT ·
        rate``, else 0.
    """
    lam = np.linalg.eigvals(A)
    if rate is None or not rate > 0:
        rate = max(float(np.abs(lam).max()) if lam.size else 0.0, 1.0)
    floor = MARGINAL_SHIFT * float(rate)
    top = float(lam.real.max()) if lam.size else -np.inf
    return max(0.0, top) + floor if top >= -floor else 0.0


def storage_matrix(
    A: Array, B: Array, C: Array, D: Array | None = None
) -> tuple[Array | None, float, float, float]:
    """The central KYP storage ``½(X_min + X_max)`` of a stable model (module docstring).

    Parameters
    ----------
    A, B, C : ndarray
        Stable model (shift marginal poles first, :func:`stabilising_shift`).
    D : ndarray, optional
        Feedthrough: the Riccati weight is ``D + Dᵀ + 2δI``.

    Returns
    -------
    (X or None, δ₀, ‖G‖, δ)
        The storage (None when no positive definite one was found, or with no port), the
        passivity violation, the peak gain and the regularisation used.
    """
    if B.shape[1] == 0:  # no power port: no supply rate for a storage to satisfy
        return None, 0.0, 0.0, 0.0
    delta0, gain = passivity_violation(A, B, C, D)
    gain = max(gain, 1e-300)
    delta = delta0 * (1 + DELTA_MARGIN) + DELTA_FLOOR * gain
    X = None
    Dt = None if D is None else D.T
    for _ in range(12):
        X_min = _riccati_storage(A, B, C, delta, D)
        Y_min = _riccati_storage(A.T, C.T, B.T, delta, Dt)  # dual system: X_max = Y_min⁻¹
        if X_min is not None and Y_min is not None:
            X = 0.5 * (X_min + _inverse(Y_min)) if _is_spd(Y_min) else None
            if X is None or not _is_spd(X):  # X_max = Y_min⁻¹ lost to round-off: the smallest
                X = X_min if _is_spd(X_min) else None
            if X is not None:
                break
        delta *= 10.0
    return X, delta0, gain, delta


def passive_realisation(
    A: Array, B: Array, C: Array, x0: Array, rate: float | None = None
) -> PassiveModel:
    """pH form ``(J, R, Q, B_pH)`` of a stable or marginally stable model (module docstring).

    Parameters
    ----------
    A : ndarray, shape (r, r)
        System matrix; poles on or right of the imaginary axis are shifted
        (:func:`stabilising_shift`).
    B : ndarray, shape (r, m)
    C : ndarray, shape (m, r)
    x0 : ndarray, shape (r,)
    rate : float, optional
        Inverse duration of the data [1/s]: the scale of the shift of marginal poles.

    Returns
    -------
    PassiveModel

    Raises
    ------
    LinearIdentificationError
        No positive definite storage found (model not minimal, not passive, or unstable).
    """
    eps = stabilising_shift(A, rate)
    if eps > 0:
        A = A - eps * np.eye(A.shape[0])
    X, delta0, gain, delta = storage_matrix(A, B, C)
    if X is None:
        raise LinearIdentificationError(
            "subspace initialisation: no positive definite storage matrix Q solves the KYP "
            "Riccati equation for the identified model (not minimal); choose a smaller order "
            "(see plot_order_selection()) or init='paper'."
        )
    X = 0.5 * (X + X.T)
    if not _is_spd(X) or np.linalg.cond(X) > 1e12:
        raise LinearIdentificationError(
            "subspace initialisation: the KYP storage matrix of the identified model is not "
            "numerically positive definite (condition > 1e12); choose a smaller order."
        )
    Q = X
    Qi = np.linalg.inv(Q)
    AQi = A @ Qi
    J = 0.5 * (AQi - AQi.T)
    R = -0.5 * (AQi + AQi.T)
    Bp = nearest_port_matrix(Q, B, C)
    change = float(np.linalg.norm(Bp - B) / max(np.linalg.norm(B), 1e-300))
    return PassiveModel(J, R, Q, Bp, np.asarray(x0, float), delta0 / gain, delta, change)


def nearest_port_matrix(Q: Array, B: Array, C: Array) -> Array:
    """``argmin ‖B' − B‖²_F + ‖QB' − Cᵀ‖²_F`` (module docstring), as the least-squares problem
    ``[I; Q] B' ≈ [B; Cᵀ]``.

    The normal equations ``(I + Q²) B' = B + Q Cᵀ`` square the condition of ``Q``: a KYP storage
    of condition 1e9 (accepted up to 1e12) makes ``I + Q²`` singular in double precision, and
    the solve fails (a pendulum that turns over, fitted at order 8).  The stacked matrix has
    the condition of ``√(I + Q²)``, at most that of ``Q``.

    Parameters
    ----------
    Q : ndarray, shape (n, n)
        Symmetric positive definite.
    B : ndarray, shape (n, m)
    C : ndarray, shape (m, n)

    Returns
    -------
    ndarray, shape (n, m)
    """
    n = Q.shape[0]
    return np.linalg.lstsq(np.vstack([np.eye(n), Q]), np.vstack([B, C.T]), rcond=None)[0]


def to_storage(pm: PassiveModel, Q_target: Array) -> PassiveModel:
    """The same input–output model in state coordinates with storage matrix ``Q_target``.

    With ``Q = L Lᵀ``, ``Q_target = L_t L_tᵀ`` (Cholesky) and ``x' = T x``, ``T = L_t⁻ᵀ Lᵀ``:
    ``J' = T J Tᵀ``, ``R' = T R Tᵀ``, ``B' = T B``, ``x0' = T x0`` and ``T⁻ᵀ Q T⁻¹ = Q_target``.

    Parameters
    ----------
    pm : PassiveModel
    Q_target : ndarray, shape (n, n)
        SPD storage matrix of the new coordinates.

    Returns
    -------
    PassiveModel
    """
    L = cholesky(pm.Q, lower=True)
    Lt = cholesky(Q_target, lower=True)
    T = solve_triangular(Lt.T, L.T, lower=False)
    J = T @ pm.J @ T.T
    return PassiveModel(
        0.5 * (J - J.T),
        T @ pm.R @ T.T,
        np.array(Q_target, dtype=float),
        T @ pm.B,
        T @ pm.x0,
        pm.violation,
        pm.delta,
        pm.port_change,
    )


def pad_states(pm: PassiveModel, n: int) -> PassiveModel:
    """Append ``n − r`` decoupled states (no input, damped, ``Q`` block ``I``): same output.

    Parameters
    ----------
    pm : PassiveModel
        Model of order r ≤ n.
    n : int
        Order wanted.

    Returns
    -------
    PassiveModel
    """
    r = pm.J.shape[0]
    if r >= n:
        return pm
    k = n - r
    rate = PAD_DAMPING * max(float(np.abs(np.linalg.eigvals((pm.J - pm.R) @ pm.Q)).max()), 1.0)

    def block(a: Array, pad: Array) -> Array:
        out = np.zeros((n, n))
        out[:r, :r] = a
        out[r:, r:] = pad
        return out

    return PassiveModel(
        block(pm.J, np.zeros((k, k))),
        block(pm.R, rate * np.eye(k)),
        block(pm.Q, np.eye(k)),
        np.vstack([pm.B, np.zeros((k, pm.B.shape[1]))]),
        np.concatenate([pm.x0, np.zeros(k)]),
        pm.violation,
        pm.delta,
        pm.port_change,
    )

