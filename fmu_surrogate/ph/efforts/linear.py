"""The effort of a linear pH system, ``z = Q x``, with its Jacobian and Hamiltonian."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]

__all__ = ["LinearEffort"]


class LinearEffort:
    """The effort ``z = Q x`` of a linear pH system, with its Jacobian and ``H = ½ xᵀ Qᵀ E x``.

    Parameters
    ----------
    Q : array_like, shape (n, n)
        The energy matrix.
    E : array_like, shape (n, n), optional
        Descriptor (default: the identity).
    """

    def __init__(self, Q: ArrayLike, E: ArrayLike | None = None) -> None:
        self.Q = np.asarray(Q, dtype=float)
        self.E = np.eye(self.Q.shape[0]) if E is None else np.asarray(E, dtype=float)
        self._QtE = self.Q.T @ self.E

    def __call__(self, x: Array) -> Array:
        """``z = Q x`` for rows ``x`` ((N, n) -> (N, n))."""
        return np.asarray(x) @ self.Q.T

    def jacobian(self, x: Array) -> Array:
        """``∂z/∂x = Q`` per point ((N, n) -> (N, n, n))."""
        a = np.atleast_2d(x)
        return np.broadcast_to(self.Q, (a.shape[0], *self.Q.shape)).copy()

    def hamiltonian(self, x: Array) -> Array:
        """``H = ½ xᵀ Qᵀ E x`` per row ((N, n) -> (N,))."""
        a = np.atleast_2d(x)
        return 0.5 * ((a @ self._QtE) * a).sum(axis=1)

    def to_dict(self) -> dict:
        """JSON-ready description (exact floats)."""
        return {"Q": self.Q.tolist(), "E": self.E.tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> LinearEffort:
        """Inverse of :meth:`to_dict`."""
        return cls(d["Q"], d["E"])
