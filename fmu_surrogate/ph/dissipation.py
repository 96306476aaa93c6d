"""State-dependent dissipation ``R(x) = R₀ + Σ_j c_j(z(x)) m_j m_jᵀ``, PSD by construction.

The coefficient of each rank-one term depends on the effort ``z`` (velocities, currents: where
a damper's or a resistor's law lives) along its own direction::

    s_j = m_jᵀ z,     c_j(z) = β_j (s_j² + δ_j²)^(p_j / 2) ≥ 0          (β_j ≥ 0, δ_j > 0)

so the dissipative force of a term is ``c_j s_j m_j ≈ β_j sign(s_j) |s_j|^(1 + p_j) m_j`` once
``|s_j| ≫ δ_j``: a power-law damper ``F = c sign(v)|v|^(4/3)`` is ``p = 1/3``, a quadratic
(turbulent) one ``p = 1``, a dry-friction-like one ``p → −1``.  ``δ_j`` rounds the law off
inside ``|s_j| ≲ δ_j`` so that ``c_j`` and the force are smooth (the force's slope at rest is
``β_j δ_j^p_j``, finite) — Newton's method and gradient-based fitting need that.  Every
``c_j ≥ 0`` whatever ``p_j``, ``m_j`` and the state, hence ``R(x) ⪰ 0`` and the dissipation
``zᵀR(x)z = zᵀR₀z + Σ_j c_j s_j² ≥ 0`` hold for every parameter value.

:class:`PowerDissipation` holds the state-dependent part; the constant ``R₀`` (and the
feedthrough ``P, S``) stay in the system (:class:`~fmu_surrogate.ph.NonlinearPH`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.ph.structure import StructureError

Array = NDArray[np.float64]

__all__ = ["PowerDissipation"]

FORMAT = "fmu_surrogate.power_dissipation"
VERSION = 1


class PowerDissipation:
    """``R_nl(z) = Σ_j β_j (s_j² + δ_j²)^(p_j/2) m_j m_jᵀ`` with ``s_j = m_jᵀ z`` (module doc).

    Parameters
    ----------
    directions : array_like, shape (K, n)
        ``m_j`` (any real vectors).
    gains : array_like, shape (K,)
        ``β_j ≥ 0``.
    exponents : array_like, shape (K,)
        ``p_j`` (any finite numbers).
    smoothing : array_like, shape (K,)
        ``δ_j > 0``.

    Raises
    ------
    StructureError
        A negative gain (dissipation would be negative), a smoothing ``≤ 0``, non-finite
        numbers, shapes that do not fit.

    Examples
    --------
    A damper ``F = 2 sign(v)|v|^(4/3)`` on the velocity ``z₂`` of a two-state system:

    >>> d = PowerDissipation([[0.0, 1.0]], [2.0], [1 / 3], [1e-9])
    >>> print(np.round(d.force(np.array([[0.0, 8.0]])), 6))
    [[ 0. 32.]]
    """

    def __init__(self, directions: ArrayLike, gains: ArrayLike, exponents: ArrayLike,
                 smoothing: ArrayLike) -> None:
        M = np.array(directions, dtype=float)
        if M.ndim != 2:
            raise StructureError(f"directions must be a (K, n) matrix, got shape {M.shape}.")
        K = M.shape[0]
        b, p, d = (np.array(v, dtype=float).reshape(-1) for v in (gains, exponents, smoothing))
        if b.shape != (K,) or p.shape != (K,) or d.shape != (K,):
            raise StructureError(f"{K} dissipation terms need {K} gains, exponents and smoothing "
                                 f"values, got {b.size}, {p.size} and {d.size}.")
        if not all(np.all(np.isfinite(a)) for a in (M, b, p, d)):
            raise StructureError("dissipation directions, gains, exponents and smoothing must be "
                                 "finite numbers.")
        if np.any(b < 0):
            raise StructureError(f"dissipation gains must be >= 0 (else R(x) is not PSD), got "
                                 f"{b.tolist()}; parametrise them as non-negative numbers.")
        if np.any(d <= 0):
            raise StructureError(f"dissipation smoothing values must be > 0, got {d.tolist()}.")
        self.directions, self.gains, self.exponents, self.smoothing = M, b, p, d

    @classmethod
    def empty(cls, n: int) -> PowerDissipation:
        """No state-dependent dissipation on ``n`` states.

        Parameters
        ----------
        n : int
            Number of states.
        """
        return cls(np.zeros((0, int(n))), [], [], [])

    @property
    def n_terms(self) -> int:
        """Number of terms K."""
        return self.directions.shape[0]

    @property
    def n_states(self) -> int:
        """Number of states n."""
        return self.directions.shape[1]

    def _s(self, z: ArrayLike) -> tuple[Array, Array]:
        a = np.atleast_2d(np.asarray(z, dtype=float))
        s = a @ self.directions.T  # (N, K)
        return s, s * s + self.smoothing ** 2

    def coefficients(self, z: ArrayLike) -> Array:
        """``c_j(z) ≥ 0``; ``(N, n) -> (N, K)``.

        Parameters
        ----------
        z : array_like, shape (N, n)
            Efforts.
        """
        _, q = self._s(z)
        return self.gains * q ** (0.5 * self.exponents)

    def matrix(self, z: ArrayLike) -> Array:
        """``R_nl(z) = Σ_j c_j m_j m_jᵀ`` (PSD); ``(N, n) -> (N, n, n)``.

        Parameters
        ----------
        z : array_like, shape (N, n)
            Efforts.
        """
        return np.einsum("nk,ki,kj->nij", self.coefficients(z), self.directions, self.directions)

    def force(self, z: ArrayLike) -> Array:
        """``R_nl(z) z = Σ_j c_j s_j m_j``; ``(N, n) -> (N, n)``.

        Parameters
        ----------
        z : array_like, shape (N, n)
            Efforts.
        """
        s, q = self._s(z)
        return (self.gains * q ** (0.5 * self.exponents) * s) @ self.directions

    def force_jacobian(self, z: ArrayLike) -> Array:
        """``∂(R_nl(z) z)/∂z = Σ_j β_j q^(p/2 − 1) (q + p s²) m_j m_jᵀ``, ``q = s² + δ²``;
        ``(N, n) -> (N, n, n)``.

        Parameters
        ----------
        z : array_like, shape (N, n)
            Efforts.
        """
        s, q = self._s(z)
        p = self.exponents
        d = self.gains * q ** (0.5 * p - 1.0) * (q + p * s * s)
        return np.einsum("nk,ki,kj->nij", d, self.directions, self.directions)

    def rate(self, z: ArrayLike) -> Array:
        """``zᵀ R_nl(z) z = Σ_j c_j s_j² ≥ 0``; ``(N, n) -> (N,)``.

        Parameters
        ----------
        z : array_like, shape (N, n)
            Efforts.
        """
        s, q = self._s(z)
        return (self.gains * q ** (0.5 * self.exponents) * s * s).sum(axis=1)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description (exact floats)."""
        return {"format": FORMAT, "version": VERSION, "n_states": self.n_states,
                "directions": self.directions.tolist(), "gains": self.gains.tolist(),
                "exponents": self.exponents.tolist(), "smoothing": self.smoothing.tolist()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PowerDissipation:
        """Inverse of :meth:`to_dict`.

        Parameters
        ----------
        d : dict
            As written by :meth:`to_dict`.
        """
        if d.get("format") != FORMAT or d.get("version") != VERSION:
            raise InvalidInputError(f"not a version-{VERSION} power dissipation (format "
                                    f"{d.get('format')!r}, version {d.get('version')!r}).")
        M = np.asarray(d["directions"], dtype=float).reshape(-1, int(d["n_states"]))
        return cls(M, d["gains"], d["exponents"], d["smoothing"])

    def __repr__(self) -> str:
        return f"PowerDissipation(n={self.n_states}, terms={self.n_terms})"
