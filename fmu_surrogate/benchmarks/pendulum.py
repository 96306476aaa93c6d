"""Benchmark 3b: planar pendulum as a pH-DAE of index 3 (docs/design.md §3).

    x = (q1, q2, p1, p2, λ),  E = diag(1,1,1,1,0),  J = [[0, I, 0], [−I, 0, 0], [0, 0, 0]],
    R = diag(0,0,0,0,1),  B = (0, 0, 0, m, 0)ᵀ,
    z(x) = (∂U/∂q − (∂g/∂q)ᵀ λ,  M⁻¹ p,  −g(q)),  U = g̃ m q2,  g = qᵀq − l²,  M = m I
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.rc_network import Trajectory
from fmu_surrogate.ph import PHDAE

Array = np.ndarray


def matrices(m: float = 1.0) -> dict[str, Array]:
    """``E, J, R, B`` of the pendulum (``B`` has shape (5, 1))."""
    J = np.zeros((5, 5))
    J[0:2, 2:4] = np.eye(2)
    J[2:4, 0:2] = -np.eye(2)
    B = np.zeros((5, 1))
    B[3, 0] = m
    return {"E": np.diag([1.0, 1.0, 1.0, 1.0, 0.0]), "J": J, "R": np.diag([0.0, 0, 0, 0, 1]), "B": B}


def effort(x: Array, m: float = 1.0, l: float = 1.0, g: float = 1.0) -> Array:
    """True effort; ``(N, 5) -> (N, 5)``."""
    x = np.atleast_2d(x)
    q, p, lam = x[:, 0:2], x[:, 2:4], x[:, 4]
    zq = np.column_stack([np.zeros(len(x)), np.full(len(x), g * m)]) - 2.0 * q * lam[:, None]
    zp = p / m
    zl = -(np.sum(q**2, axis=1) - l**2)
    return np.column_stack([zq, zp, zl])


def hamiltonian(x: Array, m: float = 1.0, g: float = 1.0) -> Array:
    """Energy ``U(q) + ½ pᵀM⁻¹p``; ``(N, 5) -> (N,)``.

    Note: the effort's q-part contains the constraint force ``−2qλ``, so ``Eᵀ z = ∇H`` holds only
    up to that term (it vanishes in the power balance since ``qᵀq̇ = 0`` on the constraint).
    """
    x = np.atleast_2d(x)
    return g * m * x[:, 1] + 0.5 * np.sum(x[:, 2:4] ** 2, axis=1) / m


def system(m: float = 1.0, l: float = 1.0, g: float = 1.0) -> PHDAE:
    """The true pendulum as a :class:`~fmu_surrogate.ph.PHDAE`."""
    return PHDAE(
        **matrices(m),
        effort=lambda x: effort(x, m, l, g),
        hamiltonian=lambda x: hamiltonian(x, m, g),
    )


def input_signal(t: Array, beta: float = 1.0, tau: float = 1.0, g: float = 1.0) -> Array:
    """``u(t) = β g̃ cos(2π t / τ)``."""
    return beta * g * np.cos(2.0 * np.pi * np.asarray(t, dtype=float) / tau)


def euler_data(
    t_end: float = 30.0,
    h: float = 0.01,
    alpha0: float = np.pi / 4,
    m: float = 1.0,
    l: float = 1.0,
    g: float = 1.0,
    beta: float = 1.0,
    tau: float = 1.0,
) -> Trajectory:
    """The paper's recipe: explicit Euler on ``α̈ = −(1/l)(g̃ − u) sin α`` from ``α(0) = α0``.

    ``q = l (sin α, −cos α)``, ``p = m l α̇ (cos α, sin α)``,
    ``λ = (m / 2l)(cos α (u − g̃) − l α̇²)``.  ``xdot`` is the exact time derivative of
    ``(q, p)`` along the Euler samples (chain rule with ``α̈`` from the ODE) and 0 for ``λ``.
    """
    n = round(t_end / h)
    t = np.linspace(0.0, n * h, n + 1)
    u = input_signal(t, beta, tau, g)
    a = np.empty_like(t)
    w = np.empty_like(t)
    a[0], w[0] = alpha0, 0.0
    for k in range(n):
        a[k + 1] = a[k] + h * w[k]
        w[k + 1] = w[k] - h * (g - u[k]) * np.sin(a[k]) / l
    acc = -(g - u) * np.sin(a) / l
    s, c = np.sin(a), np.cos(a)
    q = l * np.column_stack([s, -c])
    p = m * l * w[:, None] * np.column_stack([c, s])
    lam = m / (2.0 * l) * (c * (u - g) - l * w**2)
    qdot = l * w[:, None] * np.column_stack([c, s])
    pdot = m * l * (acc[:, None] * np.column_stack([c, s]) + w[:, None] ** 2 * np.column_stack([-s, c]))
    x = np.column_stack([q, p, lam])
    xdot = np.column_stack([qdot, pdot, np.zeros_like(t)])
    return Trajectory(t, x, xdot, u[:, None])


def known_effort(l: float = 1.0, constraint_force: bool = True) -> dict[int, list]:
    """What is known of the effort a priori, from the constraint ``g(q) = qᵀq − l²``.

    ``z5 = −g(q) = l² − q1² − q2²`` and, with ``constraint_force``, the constraint force
    ``−(∂g/∂q)ᵀ λ = (−2 q1 λ, −2 q2 λ)`` in ``z_q`` (the GP then learns only ``∇U`` and
    ``M⁻¹p``); as ``known_effort`` of :class:`~fmu_surrogate.identify.GPEffortIdentifier`.
    """
    known: dict[int, list] = {4: [(l**2, {}), (-1.0, {0: 2}), (-1.0, {1: 2})]}
    if constraint_force:
        known[0] = [(-2.0, {0: 1, 4: 1})]
        known[1] = [(-2.0, {1: 1, 4: 1})]
    return known
