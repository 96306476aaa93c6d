"""A mass coupled to a driven end, stepped as 20-sim's exported co-simulation FMUs step.

A linear mass ``m2`` on a spring ``c2`` and a damper ``d2`` to ground is coupled to a driven end
(position ``x1``, velocity ``v1``: the inputs) by a spring ``cc`` and a damper ``dc``::

    fk = cc (x1 − x2) + dc (v1 − v2)
    x2' = v2,      m2 v2' = fk − c2 x2 − d2 v2

``fk`` (N) is the force of the coupling at the driven end as a 20-sim connector gives it:
positive when the coupling pushes the driven end back (compressed, ``x1 > x2``), so that the
component exerts ``−fk`` on the driven end along ``x`` and ``fk · v1`` is power into the
component.  The outputs are ``fk``, ``x2`` and ``v2``; the state ``(x2, v2)`` starts at rest at
0 (both springs at their free length for ``x1 = 0``) and stays internal (co-simulation only).
The export is unitless, as 20-sim's: the model description gives no units (SI here).

The FMU ``coupled_mass_clock`` steps as 20-sim's generated code does: classical Runge-Kutta 4
with the fixed step ``solver_step``, the inputs held over the communication step, and a clock of
its own, set to the start time at initialisation and advanced by ``clock += solver_step``
only; ``fmi2DoStep(t_k, h_k)`` steps ``while clock < t_k + h_k``, without a tolerance.  Its
outputs are computed at initialisation and at the end of ``fmi2DoStep`` (with the inputs that
step held).  A master that accumulates its communication points, ``t_{k+1} = t_k + h`` with
``h = solver_step``, passes the very sums the clock makes: one internal step each.  On points
``t_k = t_0 + k h`` (fmpy's, libcosim's) the clock and the points part by round-off, and a
communication step takes two internal steps (outputs one step ahead) or none (stalled).  A
communication step of several solver steps parts from the clock even on accumulated points
(``t + h + h`` is not always ``t + 2 h``).
:func:`simulate` repeats that stepping, operation for operation, for given communication
points; :func:`internal_steps` counts the internal steps of each communication step.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from fmu_surrogate.benchmarks.params import BenchmarkError, parameters

__all__ = ["PARAMS", "coupling_force", "internal_steps", "rhs", "simulate", "state_space"]

#: Defaults (SI): mass ``m2`` (kg), its spring ``c2`` (N/m) and damper ``d2`` (N·s/m) to
#: ground, the coupling spring ``cc`` (N/m) and damper ``dc`` (N·s/m), and the FMU's fixed
#: internal step ``solver_step`` (s).  Its mode: 1.74 Hz (``sqrt((c2 + cc) / m2)`` = 11 rad/s),
#: damping ratio 0.07.
PARAMS: dict[str, float] = {"m2": 1.0, "c2": 20.0, "d2": 0.5, "cc": 100.0, "dc": 1.0,
                            "solver_step": 0.01}


def _p(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("coupled_mass_clock", PARAMS, params, positive=("m2", "solver_step"),
                      nonnegative=("c2", "d2", "cc", "dc"))


def coupling_force(x2: np.ndarray, v2: np.ndarray, x1: np.ndarray, v1: np.ndarray,
                   params: dict[str, float] | None = None) -> np.ndarray:
    """``fk = cc (x1 − x2) + dc (v1 − v2)`` (N), positive when the coupling pushes the driven
    end back.

    Parameters
    ----------
    x2, v2 : array_like
        Position (m) and velocity (m/s) of the mass.
    x1, v1 : array_like
        Position (m) and velocity (m/s) of the driven end (broadcast with ``x2``, ``v2``).
    params : dict, optional
        Overrides of :data:`PARAMS`.

    Returns
    -------
    ndarray
    """
    p = _p(params)
    x2, v2, x1, v1 = (np.asarray(a, dtype=float) for a in (x2, v2, x1, v1))
    return p["cc"] * (x1 - x2) + p["dc"] * (v1 - v2)


def rhs(x: np.ndarray, x1: float, v1: float, params: dict[str, float] | None = None
        ) -> list[float]:
    """``(x2', v2')`` for the state ``x = (x2, v2)`` and the inputs ``x1``, ``v1``.

    Parameters
    ----------
    x : array_like, shape (2,)
        Position (m) and velocity (m/s) of the mass.
    x1, v1 : float
        Position (m) and velocity (m/s) of the driven end.
    params : dict, optional
        Overrides of :data:`PARAMS`.

    Returns
    -------
    list of float
    """
    p = _p(params)
    return list(_rhs(float(x[0]), float(x[1]), float(x1), float(v1), p))


def _rhs(x2: float, v2: float, x1: float, v1: float, p: dict[str, float]
         ) -> tuple[float, float]:
    """The right side in the C source's order of operations (Python floats: IEEE doubles)."""
    fk = p["cc"] * (x1 - x2) + p["dc"] * (v1 - v2)
    return v2, (fk - p["c2"] * x2 - p["d2"] * v2) / p["m2"]


def state_space(params: dict[str, float] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The linear system ``x' = A x + B u``, ``y = C x + D u`` with ``x = (x2, v2)``,
    ``u = (x1, v1)``, ``y = (fk, x2, v2)``.

    Parameters
    ----------
    params : dict, optional
        Overrides of :data:`PARAMS` (``solver_step`` is not used).

    Returns
    -------
    A : ndarray, shape (2, 2)
    B : ndarray, shape (2, 2)
    C : ndarray, shape (3, 2)
    D : ndarray, shape (3, 2)
    """
    p = _p(params)
    m, c2, d2, cc, dc = (p[k] for k in ("m2", "c2", "d2", "cc", "dc"))
    A = np.array([[0.0, 1.0], [-(c2 + cc) / m, -(d2 + dc) / m]])
    B = np.array([[0.0, 0.0], [cc / m, dc / m]])
    C = np.array([[-cc, -dc], [1.0, 0.0], [0.0, 1.0]])
    D = np.array([[cc, dc], [0.0, 0.0], [0.0, 0.0]])
    return A, B, C, D


def _points(t: np.ndarray) -> list[float]:
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or len(t) < 1 or not np.all(np.isfinite(t)):
        raise BenchmarkError("the communication points t must be a finite 1-D array.")
    if np.any(np.diff(t) < 0):
        raise BenchmarkError("the communication points t must not decrease.")
    return t.tolist()


def _schedule(t: list[float], h: float) -> Iterator[int]:
    """Internal steps of each communication step ``doStep(t_k, t_{k+1} − t_k)``: the FMU's
    clock, from ``t_0`` by ``clock += h``, steps while below ``t_k + (t_{k+1} − t_k)``."""
    clock = t[0]
    for tk, tk1 in itertools.pairwise(t):
        end = tk + (tk1 - tk)  # as the FMU forms it from the master's point and step size
        n = 0
        while clock < end:
            clock += h
            n += 1
        yield n


def internal_steps(t: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Runge-Kutta steps the FMU takes in each communication step between the points ``t``.

    Parameters
    ----------
    t : array_like, shape (N,)
        Communication points, non-decreasing; the master calls ``fmi2DoStep(t_k, t_{k+1} −
        t_k)`` (fmpy and the harvest do).
    params : dict, optional
        Overrides of :data:`PARAMS` (only ``solver_step`` matters).

    Returns
    -------
    ndarray of int, shape (N − 1,)
        1 on every step when the points are the clock's own sums; 2 (outputs one step ahead)
        and 0 (stalled) where the clock and the points part.
    """
    p = _p(params)
    return np.fromiter(_schedule(_points(t), p["solver_step"]), dtype=np.int64)


def simulate(t: np.ndarray, x1: np.ndarray, v1: np.ndarray,
             params: dict[str, float] | None = None) -> np.ndarray:
    """The outputs ``(fk, x2, v2)`` of the FMU at the communication points ``t``.

    The same arithmetic as the FMU's (in the same order), so the result equals the FMU's up to
    round-off of the platform's floating point.

    Parameters
    ----------
    t : array_like, shape (N,)
        Communication points, non-decreasing (``fmi2DoStep(t_k, t_{k+1} − t_k)``); ``t_0`` is
        the start time.
    x1, v1 : array_like, shape (N,)
        Position (m) and velocity (m/s) of the driven end set at each point: those of ``t_0``
        at initialisation, those of ``t_k`` held over the step from ``t_k``.
    params : dict, optional
        Overrides of :data:`PARAMS`.

    Returns
    -------
    ndarray, shape (N, 3)
        Columns ``fk``, ``x2``, ``v2`` as read at each point: at ``t_0`` those of
        initialisation, at ``t_{k+1}`` those computed at the end of the step from ``t_k``
        (``fk`` with ``x1[k]``, ``v1[k]``).
    """
    p = _p(params)
    pts = _points(t)
    u1 = np.asarray(x1, dtype=float).ravel().tolist()
    w1 = np.asarray(v1, dtype=float).ravel().tolist()
    if not len(u1) == len(w1) == len(pts):
        raise BenchmarkError(f"x1 ({len(u1)}) and v1 ({len(w1)}) need one value per "
                             f"communication point ({len(pts)}).")
    h = p["solver_step"]
    cc, dc = p["cc"], p["dc"]
    y = np.empty((len(pts), 3))
    x2 = v2 = 0.0
    y[0] = cc * (u1[0] - x2) + dc * (w1[0] - v2), x2, v2
    for k, n in enumerate(_schedule(pts, h)):
        a, b = u1[k], w1[k]
        for _ in range(n):
            k1 = _rhs(x2, v2, a, b, p)
            k2 = _rhs(x2 + 0.5 * h * k1[0], v2 + 0.5 * h * k1[1], a, b, p)
            k3 = _rhs(x2 + 0.5 * h * k2[0], v2 + 0.5 * h * k2[1], a, b, p)
            k4 = _rhs(x2 + h * k3[0], v2 + h * k3[1], a, b, p)
            x2 += h / 6.0 * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0])
            v2 += h / 6.0 * (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1])
        y[k + 1] = cc * (a - x2) + dc * (b - v2), x2, v2
    return y
