"""The equilibrium of a pH system under constant inputs: the state where ``E ẋ = 0``.

A vendor's model initialised in steady state (Modelica's ``initial equation der(x) = 0``, a
Simulink model trimmed before it runs) starts every run at the equilibrium of the inputs it is
given at initialisation: ``0 = (J − R(x)) z(x) + (G − P) u₀``.  A drop-in surrogate of it does
the same (:class:`~fmu_surrogate.ph.PortedSystem` ``initial="equilibrium"``), in Python here and
in its exported FMU and Modelica model.

A linear core's equilibrium solves one linear system ``(J − R) Q x = −(G − P) u₀``; a nonlinear
core's is found by Newton's method on ``flow(x, u₀) = 0`` from a guess (the surrogate's
operating point), each step's Jacobian by central differences of the flow (the dissipation's
dependence on the state included), a singular Jacobian's step the least-squares one
(:func:`~fmu_surrogate.ph.simulation.newton._solve`, as a time step's Newton does).

Part of the state may be held: ``states`` names the states solved for, the others keep their
values from the guess, and only the rows of ``states`` must vanish — the start of a coupled
system in which some components rest at the equilibrium of the inputs the others give them
(:mod:`fmu_surrogate.couple.monolithic`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.ph.simulation.newton import ConvergenceError, _solve
from fmu_surrogate.ph.system import PHDAE, LinearPH

Array = NDArray[np.float64]

__all__ = ["equilibrium", "linear_equilibrium_matrix"]

#: Newton iterations before the equilibrium is given up.
MAX_ITER = 50
#: Largest flow at an equilibrium, relative to the largest of its terms' magnitudes (round-off
#: of the terms is 1e-16 of them; Newton's last step leaves 1e-12 of the state), beyond what a
#: state error at Newton's tolerance makes of it (:func:`_checked`).
FLOW_RTOL = 1e-9


def linear_equilibrium_matrix(system: LinearPH) -> Array:
    """``(J − R) Q``, whose inverse maps ``−(G − P) u₀`` to a linear core's equilibrium.

    Parameters
    ----------
    system : LinearPH

    Returns
    -------
    ndarray, shape (n, n)
    """
    return (system.J - system.R) @ system.Q


def equilibrium(system: PHDAE, u: ArrayLike, guess: ArrayLike | None = None, *,
                tol: float = 1e-12, states: ArrayLike | None = None) -> Array:
    """The state ``x`` with ``flow(x, u) = 0`` (module docstring).

    Parameters
    ----------
    system : PHDAE
        The pH core (a :class:`LinearPH`: one linear solve, the least-squares state of least
        norm where ``(J − R) Q`` is singular).
    u : array_like, shape (m,)
        Constant port inputs.
    guess : array_like, shape (n,), optional
        Newton's starting point (default ``0``); the held states' values.
    tol : float
        Newton stops when ``‖δx‖∞ ≤ tol (1 + ‖x‖∞)``.
    states : array_like of int, optional
        The states solved for, whose rows of the flow must vanish; the others are held at
        ``guess`` and their rows may not vanish (default: every state).

    Returns
    -------
    ndarray, shape (n,)

    Raises
    ------
    ConvergenceError
        Newton did not converge within :data:`MAX_ITER` iterations, or converged where the
        flow is not zero (no equilibrium: inputs that drive a lossless mode, as a constant
        force a free mass).
    """
    n = system.n_states
    uu = np.asarray(u, dtype=float).reshape(-1)
    x = np.zeros(n) if guess is None else np.array(guess, dtype=float).reshape(-1)
    s = np.arange(n) if states is None else np.asarray(states, dtype=int).reshape(-1)
    if s.size == 0:
        return x
    if isinstance(system, LinearPH):
        A = linear_equilibrium_matrix(system)
        held = np.setdiff1d(np.arange(n), s)
        rhs = -(system.input_matrix @ uu)[s] - A[np.ix_(s, held)] @ x[held]
        x[s] = np.asarray(_solve(A[np.ix_(s, s)], rhs), dtype=float)
        return _checked(system, x, uu, guess, s, A[np.ix_(s, s)], tol)
    for _ in range(MAX_ITER):
        f = np.asarray(system.flow(x, uu), dtype=float)[s]
        jac = np.empty((s.size, s.size))
        for j, k in enumerate(s):
            h = 1e-6 * max(1.0, abs(x[k]))
            e = np.zeros(n)
            e[k] = h
            jac[:, j] = (np.asarray(system.flow(x + e, uu)) - np.asarray(system.flow(x - e, uu))
                         )[s] / (2.0 * h)
        dx = _solve(jac, -f)
        x[s] = x[s] + dx
        if np.max(np.abs(dx)) <= tol * (1.0 + np.max(np.abs(x[s]))):
            return _checked(system, x, uu, guess, s, jac, tol)
    raise _no_equilibrium(uu, guess)


def _checked(system: PHDAE, x: Array, u: Array, guess: ArrayLike | None, s: Array,
             jac: Array, tol: float) -> Array:
    """``x`` where its flow's rows ``s`` vanish to :data:`FLOW_RTOL` of the flow's terms, or
    to what a state error at Newton's tolerance leaves (``|jac| tol (1 + ‖x‖∞)`` by rows, ``jac``
    those rows' Jacobian in the states ``s``: at rest under zero inputs every term is as small
    as the flow), else the error (a singular Jacobian's least-squares state, where no
    equilibrium exists)."""
    z = np.asarray(system.effort(x), dtype=float)
    terms = np.abs(system.J - system.R) @ np.abs(z) + np.abs(system.input_matrix) @ np.abs(u)
    flow = np.asarray(system.flow(x, u), dtype=float)
    rest = flow - (system.J - system.R) @ z - system.input_matrix @ u  # nonlinear dissipation
    floor = np.abs(jac).sum(axis=1) * (tol * (1.0 + float(np.max(np.abs(x[s])))))
    if np.all(np.abs(flow[s]) <= FLOW_RTOL * (float((terms + np.abs(rest))[s].max()) + 1e-300)
              + floor):
        return x
    raise _no_equilibrium(u, guess)


def _no_equilibrium(u: Array, guess: ArrayLike | None) -> ConvergenceError:
    start = [0.0] if guess is None else np.asarray(guess, dtype=float).tolist()
    return ConvergenceError(
        f"no equilibrium of the surrogate's core found for the port inputs {u.tolist()} "
        f"(Newton from {start}, at most {MAX_ITER} iterations): its inputs may drive a mode "
        f"without losses (a constant force on a free mass); start it from a state "
        f"(initial='state') instead.")
