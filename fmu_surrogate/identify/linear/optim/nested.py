"""Parts of a fitted linear drop-in model that the data do not show, held at exactly zero.

A least-squares fit leaves every parameter somewhere, also those the data cannot tell from zero:
a feedthrough at round-off (:func:`without_spurious_feedthrough`), an output offset where the
initial state can carry the same constant (:func:`without_state_offsets`).  Each is held at zero
in a nested refit (dense Levenberg–Marquardt with held entries, starting next to the fit) and
the nested model kept where the data do not prefer the full one.  What it changes is what an
importer sees: dependencies an FMU declares, and a constant its coupling must carry.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.optim.dense_lm import levenberg_marquardt

Array = NDArray[np.float64]

__all__ = ["EXACT_RMS", "FEEDTHROUGH_RTOL", "OFFSET_COST", "REFIT_ITER", "SPURIOUS_COST",
           "without_spurious_feedthrough", "without_state_offsets"]

#: How far a part held as spurious may move an output, relative to its largest magnitude
#: (exact data without feedthrough give ~1e-10; with 1 % noise a feedthrough picks up a few
#: 1e-3).
FEEDTHROUGH_RTOL = 1e-3
#: A feedthrough the data do not show (:func:`without_spurious_feedthrough`): the model refitted
#: with it held at zero costs at most this many times the fit's cost.
SPURIOUS_COST = 2.0
#: Iterations of that refit, which starts next to the fit (the quarter car: its cost 3e-14 →
#: 1e-21 in them; 100 took 7 s).
REFIT_ITER = 20
#: An output offset the initial state carries (:func:`without_state_offsets`): the model refitted
#: without it costs at most this many times the fit's cost (the data cannot tell them apart),
#: or both fit the data exactly (:data:`EXACT_RMS`).
OFFSET_COST = 1.001
#: A relative RMS residual (each output by its largest magnitude) at which a fit is exact:
#: above the round-off of a linear simulation, far below any tolerance a user sets.
EXACT_RMS = 1e-6


def without_spurious_feedthrough(lay: Any, model: Any, theta: Array, max_iter: int,
                                 tol: float, rtol: float = FEEDTHROUGH_RTOL
                                 ) -> tuple[Array, Any]:
    """``theta`` with the parts of its feedthrough held at exactly zero that the data do not
    show, and the refit's outcome (``None`` when nothing changed).

    The parts: the ports' dissipative feedthrough (``P, S``; ``N`` may be an offset, the
    constant source's column, and stays) and the entries of the measured outputs' ``Du``, where
    setting them to zero moves no output by more than ``rtol`` of it.  The
    model is refitted with them held at zero (the nested model) and kept where its cost is
    at most :data:`SPURIOUS_COST` times the fit's: a feedthrough the optimiser left at
    round-off or at its tolerance (a free mass: ``S`` = 8e-29 N·s/m) is then none, and the
    surrogate declares no direct dependence of those outputs on its inputs — a spurious one
    closes an algebraic loop with any part that has one (the free mass on a coil spring with
    mass was refused by the coupling).

    Parameters
    ----------
    lay : Layout
        The drop-in model's layout.
    model : PortedModel
        The model on the training records.
    theta : ndarray, shape (lay.size,)
        The fitted parameters.
    max_iter : int
        Iterations of the refit.
    tol : float
        Its gradient tolerance.
    rtol : float
        How far a held part may move an output, relative to its largest magnitude.

    Returns
    -------
    (ndarray, DenseLMOutcome or None)
    """
    sims = [Y for _, Y in model.simulate(theta)]
    if not sims or (lay.feedthrough and not lay.n):  # a static map is its feedthrough
        return theta, None
    scale = np.max([np.abs(Y).max(axis=0) for Y in sims], axis=0)
    sl = lay.slices
    held = np.zeros(lay.size, dtype=bool)
    if lay.feedthrough:  # the entries of L that make P and S
        held[sl["L"].start + np.flatnonzero(np.tril_indices(lay.n_factor)[0] >= lay.n)] = True
        cand = np.where(held, 0.0, theta)
        moved = np.max([np.abs(a - Y).max(axis=0)
                        for (_, a), Y in zip(model.simulate(cand), sims)], axis=0)
        if not np.all(moved <= rtol * scale):
            held[:] = False
    # an entry of Du moves its own output only, by its input column (the source's: offsets)
    reach = np.max([np.abs(d[1]).max(axis=0) for d in model.data], axis=0)
    du = np.abs(theta[sl["Du"]].reshape(lay.n_measured, lay.m)) * reach
    held[sl["Du"]] = (du <= rtol * scale[lay.n_power:, None]).ravel()
    if not np.any(held & (theta != 0.0)):
        return theta, None
    out = levenberg_marquardt(model.residual, model.jacobian, np.where(held, 0.0, theta),
                              max_iter=min(max_iter, REFIT_ITER), tol=tol, held=held)
    cost = 0.5 * float(np.sum(model.residual(theta) ** 2))
    if not out.cost_history[-1] <= SPURIOUS_COST * max(cost, 1e-300):
        return theta, None
    return out.theta, out


def without_state_offsets(lay: Any, model: Any, theta: Array, max_iter: int,
                          tol: float) -> tuple[Array, Any]:
    """``theta`` with the constant source's skew feedthrough into the power outputs held at
    zero where the initial state carries the same constants, and the refit's outcome (``None``
    when nothing changed).

    A free mass released at 0.1 m/s, fitted with offsets, may show its velocity as ``p / m``
    plus a constant of 0.05 m/s from its initial momentum less that: the data cannot tell, but
    an importer can — a constant in a power output is an external input to whatever the port
    is coupled to, and a nonlinear law there can no longer be split into a dissipation of the
    coupled states (the monolithic coupling refuses it).  The source's entries of ``N`` into the
    power ports are held at zero, the model refitted, and kept where its cost is at most
    :data:`OFFSET_COST` times the fit's, or both are exact (:data:`EXACT_RMS`).  An offset
    beyond its output's excursion in the data is the output's operating point, and stays: a gas
    accumulator's pressure about its charge of 150 bar, ± 14 bar, whose nonlinear fit from the
    linear one misses by 0.061 % with the charge an offset, by 2.5 % with the charge in the
    state.

    Parameters
    ----------
    lay, model, theta, max_iter, tol
        As for :func:`without_spurious_feedthrough`.

    Returns
    -------
    (ndarray, DenseLMOutcome or None)
    """
    if not (lay.feedthrough and lay.n and lay.learn_x0 and lay.n_power):
        return theta, None
    V, Y = (np.vstack([d[k] for d in model.data]) for k in (1, 2))
    sources = np.flatnonzero((np.ptp(V, axis=0) == 0.0) & (V[0] != 0.0))
    iu = np.triu_indices(lay.m, 1)
    N = theta[lay.slices["N"]]
    # an offset beyond its output's excursion is an operating point (a charge pressure)
    within = np.abs(N * V[0, iu[1]]) <= np.ptp(Y, axis=0)[np.minimum(iu[0], Y.shape[1] - 1)]
    pick = np.flatnonzero(np.isin(iu[1], sources) & (iu[0] < lay.n_power) & within)
    held = np.zeros(lay.size, dtype=bool)
    held[lay.slices["N"].start + pick] = True
    if not np.any(held & (theta != 0.0)):
        return theta, None
    held |= theta == 0.0  # what an earlier refit held stays held
    out = levenberg_marquardt(model.residual, model.jacobian, np.where(held, 0.0, theta),
                              max_iter=min(max_iter, REFIT_ITER), tol=tol, held=held)
    cost = 0.5 * float(np.sum(model.residual(theta) ** 2))
    exact = 0.5 * model.rows * EXACT_RMS ** 2
    if not out.cost_history[-1] <= max(OFFSET_COST * cost, exact):
        return theta, None
    return out.theta, out
