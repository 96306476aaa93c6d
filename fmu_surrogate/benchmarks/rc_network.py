"""Benchmark 3a: RC network pH-DAE of index 1 (docs/design.md §3).

    x = (x1, x2, x3),  z(x) = (√(2 x1), x2, x3),  H(x) = (2√2/3) x1^{3/2}
    E = diag(1, 0, 0),  J = [[0,0,0],[0,0,1],[0,−1,0]],  R = G [[1,−1,0],[−1,1,0],[0,0,0]],  B = e3
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.ph import PHDAE

Array = np.ndarray


def matrices(G: float = 1.0) -> dict[str, Array]:
    """The constant structure matrices ``E, J, R, B`` (``B`` has shape (3, 1))."""
    return {
        "E": np.diag([1.0, 0.0, 0.0]),
        "J": np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]]),
        "R": G * np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]),
        "B": np.array([[0.0], [0.0], [1.0]]),
    }


def effort(x: Array) -> Array:
    """True effort ``z(x) = (√(2 x1), x2, x3)``; ``(N, 3) -> (N, 3)``."""
    x = np.atleast_2d(x)
    return np.column_stack([np.sqrt(2.0 * x[:, 0]), x[:, 1], x[:, 2]])


def hamiltonian(x: Array) -> Array:
    """True Hamiltonian ``H = (2√2/3) x1^{3/2}``; ``(N, 3) -> (N,)``."""
    x = np.atleast_2d(x)
    return 2.0 * np.sqrt(2.0) / 3.0 * x[:, 0] ** 1.5


def system(G: float = 1.0) -> PHDAE:
    """The true RC network as a :class:`~fmu_surrogate.ph.PHDAE`."""
    return PHDAE(**matrices(G), effort=effort, hamiltonian=hamiltonian)


def input_signal(t: Array, a: float = 1.0, omega: float = 1.0) -> Array:
    """``u(t) = a (1 + sin ωt)``."""
    return a * (1.0 + np.sin(omega * np.asarray(t, dtype=float)))


@dataclass(frozen=True)
class Trajectory:
    """Sampled trajectory: ``t (N,)``, ``x (N, n)``, ``xdot (N, n)``, ``u (N, m)``."""

    t: Array
    x: Array
    xdot: Array
    u: Array


def euler_data(
    n_steps: int = 3000, G: float = 1.0, a: float = 1.0, omega: float = 1.0, x10: float = 2.0
) -> Trajectory:
    """The paper's data recipe: explicit Euler on ``ẋ1 = G(u − √(2 x1))``, ``t ∈ [0, 10π/ω]``.

    ``x2 = u``, ``x3 = G(u − √(2 x1))`` (second DAE row).  ``xdot`` holds the derivative of
    the differential state given by the right-hand side at each sample (the Euler increment), and
    zeros for the algebraic states, so the targets ``E ẋ − B u`` equal ``(ẋ1, 0, −u)``.

    Returns ``n_steps + 1`` samples including ``t = 0``.
    """
    T = 10.0 * np.pi / omega
    t = np.linspace(0.0, T, n_steps + 1)
    h = T / n_steps
    u = input_signal(t, a, omega)
    x1 = np.empty_like(t)
    x1[0] = x10
    for k in range(n_steps):
        x1[k + 1] = x1[k] + h * G * (u[k] - np.sqrt(2.0 * x1[k]))
        if not x1[k + 1] > 0.0:
            raise InvalidInputError(
                f"explicit Euler left the domain x1 > 0 at step {k + 1} (h = {h:.3g}); "
                "use more steps (the paper uses 3000)."
            )
    x1dot = G * (u - np.sqrt(2.0 * x1))
    x = np.column_stack([x1, u, x1dot])
    xdot = np.column_stack([x1dot, np.zeros_like(t), np.zeros_like(t)])
    return Trajectory(t, x, xdot, u[:, None])


def known_effort() -> dict[int, str]:
    """What is known of the effort a priori: the algebraic efforts ``z2 = x2``, ``z3 = x3``
    (``known_effort`` of :class:`~fmu_surrogate.identify.GPEffortIdentifier`)."""
    return {1: "identity", 2: "identity"}
