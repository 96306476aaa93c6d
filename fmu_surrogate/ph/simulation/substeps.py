"""Sub-steps of a system with a longest step (:attr:`~fmu_surrogate.ph.NonlinearPH.max_step`).

The structure-preserving AVF scheme is of second order: on a grid whose steps are long against
the model's dynamics (a nonlinear surrogate of a stiff spring sampled at 10 ms) its outputs lag
by ``(h ω)²/12`` per radian, whatever the fit.  A system that says how long its steps may be is
simulated on a grid with each interval cut into ``k = ⌈h / max_step⌉`` equal sub-steps — the
rule of the exported FMUs' internal step — with the inputs of the sub-points as the hold says
(held: the interval's first input; linear: interpolated), and the trajectory returned at the
original nodes: states, efforts, inputs, outputs and the cumulative energies at the nodes, the
Newton iterations and the mean output ``ȳ`` of each original step summed over its sub-steps.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.ph.simulation.trajectory import Trajectory

Array = NDArray[np.float64]

__all__ = ["at_nodes", "fine_grid"]


def fine_grid(t: Array, U: Array, hold: str, max_step: float) -> tuple[Array, Array, Array]:
    """The grid with every interval cut into ``⌈h / max_step⌉`` equal sub-steps.

    Parameters
    ----------
    t : ndarray, shape (N,)
        The grid.
    U : ndarray, shape (N, m)
        The inputs at its nodes.
    hold : {"zoh", "linear"}
        How the inputs vary within an interval.
    max_step : float
        The longest step.

    Returns
    -------
    (ndarray, ndarray, ndarray)
        The fine grid (M,), its inputs (M, m), and the index of each original node in it (N,).
    """
    h = np.diff(t)
    k = np.maximum(1, np.ceil(h / max_step * (1.0 - 1e-12)).astype(np.int64))
    nodes = np.concatenate([[0], np.cumsum(k)])
    j = np.repeat(np.arange(h.size), k)  # the interval of each fine step
    frac = (np.arange(nodes[-1]) - nodes[j]) / k[j]
    tf = np.concatenate([t[j] + frac * h[j], t[-1:]])
    rate = (U[1:] - U[:-1]) if hold == "linear" else np.zeros_like(U[1:])
    Uf = np.concatenate([U[j] + frac[:, None] * rate[j], U[-1:]])
    return tf, Uf, nodes


def at_nodes(tr: Trajectory, t: Array, U: Array, nodes: Array) -> Trajectory:
    """The fine trajectory ``tr`` at the original nodes (module doc).

    Parameters
    ----------
    tr : Trajectory
        On the grid of :func:`fine_grid`.
    t, U : ndarray
        The original grid and inputs.
    nodes : ndarray of int, shape (N,)
        The index of each original node in the fine grid.
    """
    starts = nodes[:-1]
    ybar = None
    if tr.ybar is not None:
        hf = np.diff(tr.t)[:, None]
        ybar = np.add.reduceat(hf * tr.ybar, starts, axis=0) / np.diff(t)[:, None]
    return dataclasses.replace(
        tr, t=t, x=tr.x[nodes], z=tr.z[nodes], u=U, y=tr.y[nodes], H=tr.H[nodes],
        stored=tr.stored[nodes], dissipated=tr.dissipated[nodes], supplied=tr.supplied[nodes],
        newton_iterations=np.add.reduceat(tr.newton_iterations, starts), ybar=ybar)
