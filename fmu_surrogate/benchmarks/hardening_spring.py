"""A lossless hardening spring, the smallest non-quadratic pH system (docs/design.md §2).

``H(q, p) = q²/2 + q⁴/4 + p²/2``, ``z = ∇H = (q + q³, p)``, ``J = [[0, 1], [−1, 0]]``; an
optional damper ``R = diag(0, c)`` and a force port on the momentum.  Its effort is a polynomial
of degree 3, so the average-vector-field scheme conserves ``H`` exactly (up to round-off) while
implicit midpoint does not — the test case that tells the two apart.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.ph import PHDAE

Array = NDArray[np.float64]


class HardeningSpringEffort:
    """``z(q, p) = (q + q³, p)`` with its Jacobian and Hamiltonian (vectorised over rows)."""

    def __call__(self, x: ArrayLike) -> Array:
        """``z`` for rows ``(q, p)``: (N, 2) -> (N, 2)."""
        x = np.atleast_2d(x)
        return np.column_stack([x[:, 0] + x[:, 0] ** 3, x[:, 1]])

    def jacobian(self, x: ArrayLike) -> Array:
        """``∂z/∂x``: (N, 2) -> (N, 2, 2)."""
        x = np.atleast_2d(x)
        J = np.zeros((len(x), 2, 2))
        J[:, 0, 0] = 1 + 3 * x[:, 0] ** 2
        J[:, 1, 1] = 1.0
        return J

    def hamiltonian(self, x: ArrayLike) -> Array:
        """``H = q²/2 + q⁴/4 + p²/2``: (N, 2) -> (N,)."""
        x = np.atleast_2d(x)
        return x[:, 0] ** 2 / 2 + x[:, 0] ** 4 / 4 + x[:, 1] ** 2 / 2


def system(damping: float = 0.0, port: bool = False) -> PHDAE:
    """The spring as a :class:`~fmu_surrogate.ph.PHDAE`.

    Parameters
    ----------
    damping : float
        ``c ≥ 0`` of ``R = diag(0, c)``.
    port : bool
        With a force input on the momentum (``B = (0, 1)ᵀ``), else no ports.

    Returns
    -------
    PHDAE
    """
    e = HardeningSpringEffort()
    B = np.array([[0.0], [1.0]]) if port else np.zeros((2, 0))
    return PHDAE(np.eye(2), [[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, damping]), B, effort=e,
                 hamiltonian=e.hamiltonian)
