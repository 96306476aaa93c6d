"""The progressive spring as a coil with mass: a chain of segments, velocity in, force out.

A vendor's detailed spring model: the coil of :mod:`~fmu_surrogate.benchmarks.vendor.progressive_spring`
(stiffness ``k``, reference elongation ``x_ref``, preload ``x0``) cut into ``N`` = 20 segments
(:data:`N_SEGMENTS`).  Segment ``j`` (between nodes ``j − 1`` and ``j``; node 0 at the fixed
end, node ``N`` the driven end) is a progressive spring of stiffness ``N k`` and reference
elongation ``x_ref / N`` with a material damper ``c_seg`` in parallel; the coil mass ``m_coil``
sits on the ``N − 1`` inner nodes, ``m_coil / N`` each (the halves of the end segments go to the
fixed and the driven end).  With ``s_j`` the displacement of node ``j`` from its place in the
unstretched coil (``s_0 = 0``, ``s_N = X`` the elongation of the whole spring, ``X' = v``) and
``w_j = s_j'``::

    e_j = s_j − s_{j−1},    f_j = N k e_j (1 + (N e_j / x_ref)²) + c_seg e_j'   (tension)
    (m_coil / N) w_j' = f_{j+1} − f_j         (j = 1 … N − 1)
    F = f_N                                   (the force at the driven end)

``H = Σ N k (e_j² / 2 + N² e_j⁴ / (4 x_ref²)) + Σ (m_coil / N) w_j² / 2`` and
``dH/dt = F v − c_seg Σ e_j'² ≤ F v`` (passive).  In a uniform static stretch ``e_j = X / N`` the
force is the lumped law ``k X (1 + (X / x_ref)²)`` exactly; the coil starts preloaded and at rest
in that state (``X = x0``).  The states (``X``, ``s_1 … s_19``, ``w_1 … w_19``: 39) stay internal:
the FMU has the lumped spring's variables (plus ``m_coil``, ``c_seg``) and integrates with its own
SUNDIALS CVODE (:mod:`fmu_surrogate.benchmarks.cvode`).

Defaults: ``m_coil`` = 0.5 g, ``c_seg`` = 0.6 N·s/m.  The first surge mode (both ends held) is
at ``2 sqrt(N² k_t / m_coil) sin(π / (2N)) / 2π`` = 223 Hz for the tangent stiffness
``k_t = k`` (``x = 0``; 236 Hz at the preload, higher as the coil stiffens), far above the
0.5–2 Hz of the experiments; the dampers are stiffness-proportional (``c_seg = β N k``,
``β = 3e-4 s``), so the first mode decays with the time constant ``2 / (β ω₁²)`` = 3.4 ms
(damping ratio 0.21) and the higher ones faster (the highest overdamped at ~1e5 /s: stiff,
which the BDF method takes in its stride).  At the port the coil adds, to the lumped force, the
series damping ``c_seg / N`` = 0.03 N·s/m (``β ω`` = 0.4 % of the spring force at 2 Hz, in
quadrature) and the inertia of a third of the coil mass (``(π² / 3) (ω / ω₁)²`` < 0.03 %):
within 0.5 % of the lumped law in the band (:func:`first_mode_frequency`).
"""

from __future__ import annotations

import math

import numpy as np

from fmu_surrogate.benchmarks.params import parameters
from fmu_surrogate.benchmarks.vendor import progressive_spring as _lumped

__all__ = ["N_SEGMENTS", "PARAMS", "first_mode_frequency", "force", "hamiltonian",
           "initial_state", "jacobian", "rhs"]

#: Number of coil segments (fixed at build time: the FMU has ``2 N − 1`` internal states).
N_SEGMENTS = 20
#: Defaults: the lumped spring's ``k`` (N/m), ``x_ref`` (m), ``x0`` (m), the coil mass
#: ``m_coil`` (kg) and the damping ``c_seg`` of each segment (N·s/m).
PARAMS: dict[str, float] = {**_lumped.PARAMS, "m_coil": 5e-4, "c_seg": 0.6}


def _p(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("progressive_spring_detailed", PARAMS, params,
                      positive=("k", "x_ref", "m_coil"), nonnegative=("c_seg",))


def initial_state(params: dict[str, float] | None = None) -> np.ndarray:
    """``(X, s_1 … s_{N−1}, w_1 … w_{N−1})`` at rest in the uniform preload ``X = x0``."""
    p = _p(params)
    n = N_SEGMENTS
    return np.concatenate([[p["x0"]], p["x0"] * np.arange(1, n) / n, np.zeros(n - 1)])


def _tensions(x: np.ndarray, v: float, p: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Segment tensions ``f_1 … f_N`` and the inner nodes' velocities."""
    n = N_SEGMENTS
    s = np.concatenate([[0.0], x[1:n], [x[0]]])
    w = np.concatenate([[0.0], x[n:], [v]])
    e, de = np.diff(s), np.diff(w)
    return n * p["k"] * e * (1.0 + (n * e / p["x_ref"]) ** 2) + p["c_seg"] * de, w[1:-1]


def rhs(x: np.ndarray, v: float, params: dict[str, float] | None = None) -> np.ndarray:
    """Time derivative of the state ``x`` (2N − 1,) for the driven end's velocity ``v``."""
    p = _p(params)
    f, w = _tensions(np.asarray(x, dtype=float), float(v), p)
    return np.concatenate([[v], w, (f[1:] - f[:-1]) * N_SEGMENTS / p["m_coil"]])


def jacobian(x: np.ndarray, v: float, params: dict[str, float] | None = None) -> np.ndarray:
    """``∂ rhs / ∂ x`` (2N − 1, 2N − 1) at the state ``x`` (for implicit reference solvers)."""
    p = _p(params)
    n = N_SEGMENTS
    x = np.asarray(x, dtype=float)
    e = np.diff(np.concatenate([[0.0], x[1:n], [x[0]]]))
    kt = n * p["k"] * (1.0 + 3.0 * (n * e / p["x_ref"]) ** 2)  # ∂f_j / ∂e_j, j = 1 … N
    # node j's position is state index j (j = 1 … N − 1), node N's is X (index 0); velocities
    # of the inner nodes follow at n − 1 + j; node 0 is fixed and node N's velocity is the input
    pos = [None, *range(1, n), 0]
    vel = [None, *range(n, 2 * n - 1), None]
    jac = np.zeros((2 * n - 1, 2 * n - 1))
    for j in range(1, n):
        jac[j, vel[j]] = 1.0
        row = vel[j]
        for seg, sign in ((j + 1, 1.0), (j, -1.0)):  # f_{j+1} − f_j, segment seg: nodes seg−1, seg
            for node, ds in ((seg, 1.0), (seg - 1, -1.0)):
                if pos[node] is not None:
                    jac[row, pos[node]] += sign * ds * kt[seg - 1] * n / p["m_coil"]
                if vel[node] is not None:
                    jac[row, vel[node]] += sign * ds * p["c_seg"] * n / p["m_coil"]
    return jac


def force(x: np.ndarray, v: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Force ``F = f_N`` (N) at the driven end for states ``x`` (M, 2N − 1) and velocities ``v``
    (M,)."""
    p = _p(params)
    x = np.atleast_2d(np.asarray(x, dtype=float))
    v = np.broadcast_to(np.asarray(v, dtype=float), (len(x),))
    return np.array([_tensions(xi, vi, p)[0][-1] for xi, vi in zip(x, v)])


def hamiltonian(x: np.ndarray, params: dict[str, float] | None = None) -> float:
    """Stored energy (J): the segments' springs and the inner nodes' kinetic energy."""
    p = _p(params)
    n = N_SEGMENTS
    x = np.asarray(x, dtype=float)
    e = np.diff(np.concatenate([[0.0], x[1:n], [x[0]]]))
    springs = n * p["k"] * (e**2 / 2 + n**2 * e**4 / (4 * p["x_ref"] ** 2))
    return float(springs.sum() + 0.5 * p["m_coil"] / n * np.sum(x[n:] ** 2))


def first_mode_frequency(params: dict[str, float] | None = None, x: float = 0.0) -> float:
    """Frequency (Hz) of the first surge mode with both ends held, at the uniform elongation
    ``x`` (tangent stiffness ``k (1 + 3 (x / x_ref)²)``), undamped."""
    p = _p(params)
    n = N_SEGMENTS
    kt = p["k"] * (1.0 + 3.0 * (x / p["x_ref"]) ** 2)
    return 2.0 * math.sqrt(n * n * kt / p["m_coil"]) * math.sin(math.pi / (2 * n)) / (2 * math.pi)
