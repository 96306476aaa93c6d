"""Structure checks for port-Hamiltonian matrices.

Each ``*_violation`` function returns the size of the violation (0 for an exactly structured
matrix); each ``check_*`` function raises :class:`StructureError` naming the matrix, the size of
the violation and how to fix it.  Tolerances are relative to the matrix norm so that the checks
are scale-invariant.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import FmuSurrogateError

#: Default relative tolerance of the structure checks.  Matrices assembled in floating point
#: from structured factors (e.g. ``Y @ Y.T``) are exact to a few ulps of their norm.
DEFAULT_RTOL = 1e-10


class StructureError(FmuSurrogateError, ValueError):
    """A matrix violates the port-Hamiltonian structure it must have."""


def _square(a: ArrayLike, name: str) -> NDArray[np.float64]:
    m = np.asarray(a, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise StructureError(f"{name} must be a square 2-D matrix, got shape {m.shape}.")
    if not np.all(np.isfinite(m)):
        raise StructureError(f"{name} contains NaN or Inf entries; pass a finite matrix.")
    return m


def skew_violation(J: ArrayLike) -> float:
    """Frobenius norm of the symmetric part, ``‖(J + Jᵀ)/2‖_F``."""
    m = _square(J, "J")
    return float(np.linalg.norm(0.5 * (m + m.T)))


def symmetry_violation(R: ArrayLike) -> float:
    """Frobenius norm of the skew part, ``‖(R − Rᵀ)/2‖_F``."""
    m = _square(R, "R")
    return float(np.linalg.norm(0.5 * (m - m.T)))


def psd_violation(R: ArrayLike) -> float:
    """Size of the negative part of the symmetric part: ``max(0, −λ_min((R + Rᵀ)/2))``."""
    m = _square(R, "R")
    if m.size == 0:
        return 0.0
    return float(max(0.0, -np.linalg.eigvalsh(0.5 * (m + m.T)).min()))


def _scale(m: NDArray[np.float64]) -> float:
    return max(1.0, float(np.linalg.norm(m)))


def check_skew(J: ArrayLike, name: str = "J", rtol: float = DEFAULT_RTOL) -> NDArray[np.float64]:
    """Return ``J`` as a float array; raise if it is not skew-symmetric."""
    m = _square(J, name)
    v = skew_violation(m)
    if v > rtol * _scale(m):
        raise StructureError(
            f"{name} must be skew-symmetric ({name} = -{name}ᵀ) but ‖sym({name})‖_F = {v:.3e}. "
            f"Pass the skew part (M - Mᵀ)/2 of your matrix or parametrise it as M - Mᵀ."
        )
    return m


def check_psd(R: ArrayLike, name: str = "R", rtol: float = DEFAULT_RTOL) -> NDArray[np.float64]:
    """Return ``R`` as a float array; raise if it is not symmetric positive semidefinite."""
    m = _square(R, name)
    s = symmetry_violation(m)
    if s > rtol * _scale(m):
        raise StructureError(
            f"{name} must be symmetric but ‖skew({name})‖_F = {s:.3e}. "
            f"Parametrise it as Y Yᵀ to make it symmetric positive semidefinite by construction."
        )
    v = psd_violation(m)
    if v > rtol * _scale(m):
        raise StructureError(
            f"{name} must be positive semidefinite but its smallest eigenvalue is {-v:.3e}. "
            f"Parametrise it as Y Yᵀ (dissipation cannot be negative)."
        )
    return m


def check_spd(Q: ArrayLike, name: str = "Q", rtol: float = DEFAULT_RTOL) -> NDArray[np.float64]:
    """Return ``Q`` as a float array; raise if it is not symmetric positive definite."""
    m = _square(Q, name)
    s = symmetry_violation(m)
    if s > rtol * _scale(m):
        raise StructureError(
            f"{name} must be symmetric but ‖skew({name})‖_F = {s:.3e}. "
            f"Pass a symmetric positive definite matrix, e.g. L Lᵀ + εI."
        )
    lam = np.linalg.eigvalsh(m).min() if m.size else 1.0
    if not lam > 0.0:
        raise StructureError(
            f"{name} must be positive definite (the energy H = ½ xᵀ{name}x must be positive) but its "
            f"smallest eigenvalue is {lam:.3e}. Pass an SPD matrix, e.g. L Lᵀ + εI."
        )
    return m


def _block(a: ArrayLike | None, shape: tuple[int, int], name: str) -> NDArray[np.float64]:
    if a is None:
        return np.zeros(shape)
    m = np.asarray(a, dtype=float)
    if m.ndim == 1 and shape[1] == 1 and m.shape[0] == shape[0]:
        m = m[:, None]
    if m.shape != shape:
        raise StructureError(f"{name} must have shape {shape} (n states × m ports, or m × m), got "
                             f"{m.shape}.")
    if not np.all(np.isfinite(m)):
        raise StructureError(f"{name} contains NaN or Inf entries; pass a finite matrix.")
    return m


def check_feedthrough(
    R: NDArray[np.float64],
    P: ArrayLike | None,
    S: ArrayLike | None,
    N: ArrayLike | None,
    m: int,
    rtol: float = DEFAULT_RTOL,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Return ``(P, S, N)`` as float arrays (``None`` = zero); raise if they break the structure.

    The feedthrough of a pH system (pyMOR's ``PHLTIModel`` convention) needs ``N = −Nᵀ`` and
    ``W = [[R, P], [Pᵀ, S]] ⪰ 0`` — the dissipation of the states and of the ports together.

    Parameters
    ----------
    R : ndarray, shape (n, n)
        The (already checked) dissipation matrix.
    P : array_like, shape (n, m), optional
        Port coupling of the dissipation.
    S : array_like, shape (m, m), optional
        Symmetric PSD feedthrough.
    N : array_like, shape (m, m), optional
        Skew feedthrough (lossless).
    m : int
        Number of ports.
    rtol : float
        Relative tolerance, as for the other checks.

    Returns
    -------
    tuple of ndarray
        ``P`` (n, m), ``S`` (m, m), ``N`` (m, m).
    """
    n = R.shape[0]
    Pm = _block(P, (n, m), "P")
    Sm = _block(S, (m, m), "S")
    Nm = _block(N, (m, m), "N")
    if N is not None:
        check_skew(Nm, "N", rtol)
    if S is not None:
        s = symmetry_violation(Sm)
        if s > rtol * _scale(Sm):
            raise StructureError(
                f"S must be symmetric but ‖skew(S)‖_F = {s:.3e}. Its skew part belongs in N "
                f"(D = S − N): pass S = (D + Dᵀ)/2 parametrised as a PSD block of W = L Lᵀ.")
    if P is not None or S is not None:
        W = np.block([[R, Pm], [Pm.T, Sm]])
        v = psd_violation(W)
        if v > rtol * _scale(W):
            raise StructureError(
                f"W = [[R, P], [Pᵀ, S]] must be positive semidefinite (the dissipation of the "
                f"states and ports together) but its smallest eigenvalue is {-v:.3e}. "
                f"Parametrise W = L Lᵀ and take R, P, S as its blocks.")
    return Pm, Sm, Nm
