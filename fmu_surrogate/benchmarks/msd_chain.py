"""Benchmark 4a: single mass-spring-damper chain (PHS benchmark collection; Gugercin et al. 2012).

State ``x = (q_1, p_1, …, q_N, p_N)``; inputs are forces on masses 1 and 2; outputs their velocities.
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.ph import LinearPH


def msd_chain(
    n_cells: int = 50, mass: float = 4.0, spring: float = 4.0, damper: float = 1.0
) -> LinearPH:
    """Assemble the chain as a :class:`~fmu_surrogate.ph.LinearPH` with ``n = 2 n_cells``, ``m = 2``.

    Parameters
    ----------
    n_cells : int
        Number of masses N (≥ 2).
    mass, spring, damper : float
        ``m_j``, ``k_j``, ``c_j`` (damper from mass j to ground), equal for all cells.
    """
    if n_cells < 2:
        raise InvalidInputError(
            f"n_cells must be at least 2 (two inputs act on masses 1 and 2), got {n_cells}.")
    N = n_cells
    n = 2 * N
    J = np.kron(np.eye(N), np.array([[0.0, 1.0], [-1.0, 0.0]]))
    R = np.zeros((n, n))
    Q = np.zeros((n, n))
    for j in range(N):  # 0-based j: q at 2j, p at 2j+1
        R[2 * j + 1, 2 * j + 1] = damper
        Q[2 * j + 1, 2 * j + 1] = 1.0 / mass
        if j < N - 1:
            i0, i1 = 2 * j, 2 * j + 2
            Q[i0, i0] += spring
            Q[i1, i1] += spring
            Q[i0, i1] -= spring
            Q[i1, i0] -= spring
    Q[2 * N - 2, 2 * N - 2] += spring  # wall spring on the last mass (makes Q ≻ 0)
    B = np.zeros((n, 2))
    B[1, 0] = 1.0
    B[3, 1] = 1.0
    return LinearPH(J, R, Q, B)
