"""Shared data of the identification tests."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp


def _mass_experiment(seed, T=20.0, dt=0.02, c=0.5, k1=1.0, k3=2.0):
    """A random multisine force (0.05–0.6 Hz, peak ≈ 4) on the unit mass, from rest."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, T + dt / 2, dt)
    f, ph, a = rng.uniform(0.05, 0.6, 6), rng.uniform(0, 2 * np.pi, 6), rng.uniform(0.5, 1, 6)

    def F(s):
        return 4.0 * (np.sin(2 * np.pi * np.multiply.outer(s, f) + ph) @ a) / a.sum()

    def rhs(s, x):
        q, v = x
        return [v, F(s) - c * np.sign(v) * abs(v) ** (4 / 3) - k1 * q - k3 * q ** 3]

    sol = solve_ivp(rhs, (0, T), [0.0, 0.0], t_eval=t, rtol=1e-10, atol=1e-12, method="DOP853")
    return t, F(t)[:, None], sol.y[1][:, None]


@pytest.fixture(scope="session")
def mass_experiment():
    """``mass_experiment(seed, T=20.0, dt=0.02, c=0.5, k1=1.0, k3=2.0) -> (t, u, y)``: the unit
    mass with the power-law damper ``c sign(v)|v|^(4/3)`` and the spring ``k1 q + k3 q³``,
    driven from rest by a random multisine force, velocity out (scipy, DOP853, rtol 1e-10)."""
    return _mass_experiment
