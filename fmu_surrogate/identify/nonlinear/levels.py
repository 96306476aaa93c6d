"""Continuation over the excitation levels of the harvest.

A strongly nonlinear part with several states (a quarter car whose suspension stiffens 2.3×) is
seen by the linear start at its best linear approximation over all the training runs: a model
too stiff for the small runs and too soft for the large ones, from which the Gauss–Newton steps
of :func:`~.optimise.optimise` end in a local minimum (the quarter car: 25 % held out, where the
model class holds the component exactly).  Where the harvest excites the component at several
levels — the practice of nonlinear identification, which probes a nonlinearity at more than one
amplitude — the fit climbs them instead (:func:`optimise_by_levels`):

1. the core without nonlinear terms is fitted to the runs of the lowest level: the small-signal
   linear model, in the same wiring and coordinates;
2. the nonlinear model is fitted to the runs up to each level in turn, each fit starting from
   the one below (its parameters, and the shooting states on its trajectories), so that the
   nonlinear terms grow with the amplitude that needs them.

The last stage fits the same runs as the direct fit, so the two training costs compare; the
lower is kept.  Fits that meet :data:`CONTINUATION_COST` directly pay nothing more.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.nonlinear.optimise import Optimised, optimise
from fmu_surrogate.identify.nonlinear.parametrisation import NonlinearFitError

Array = NDArray[np.float64]

__all__ = ["CONTINUATION_COST", "LEVEL_STEP", "MAX_STAGES", "excitation_levels", "level_stages",
           "optimise_by_levels"]

#: experiments whose excitation levels differ by less than this factor are at one level
LEVEL_STEP = 1.5
#: a direct fit whose training cost stays above this (an RMS error of 1 % of the outputs) is
#: fitted again level by level where the runs have several levels
CONTINUATION_COST = 1e-4
#: at most this many levels are climbed (the runs' levels are grouped into as many bands)
MAX_STAGES = 3


def excitation_levels(inputs: list[Array]) -> Array:
    """The excitation level of each experiment: the RMS over the inputs that vary of each
    input's standard deviation in the experiment, relative to its pooled one.

    Parameters
    ----------
    inputs : list of ndarray, shape (K_i, m)
        The inputs of each experiment.

    Returns
    -------
    ndarray, shape (len(inputs),)
        Levels (1 for every experiment when no input varies).
    """
    pooled = np.std(np.vstack(inputs), axis=0)
    vary = pooled > 0
    if not np.any(vary):
        return np.ones(len(inputs))
    rel = np.array([np.std(u[:, vary], axis=0) / pooled[vary] for u in inputs])
    return np.sqrt(np.mean(rel * rel, axis=1))


def level_stages(levels: Array, step: float = LEVEL_STEP,
                 max_stages: int = MAX_STAGES) -> list[NDArray[np.int64]]:
    """The experiments of each stage of the continuation, lowest level first.

    The levels, sorted, are cut where one exceeds the lowest of its band by ``step``; at most
    ``max_stages`` bands are kept (the upper ones merged).  Stage ``k`` holds the experiments
    of bands ``0 … k``; the last holds all.

    Parameters
    ----------
    levels : ndarray, shape (N,)
        From :func:`excitation_levels`.
    step : float
    max_stages : int

    Returns
    -------
    list of ndarray of int
        One stage (a single one holding all experiments when the levels are one band).
    """
    order = np.argsort(levels, kind="stable")
    bands: list[list[int]] = []
    for i in order:
        if bands and levels[i] <= step * levels[bands[-1][0]]:
            bands[-1].append(int(i))
        else:
            bands.append([int(i)])
    while len(bands) > max_stages:
        top = bands.pop()
        bands[-1] += top
    return [np.sort(np.concatenate([np.asarray(b) for b in bands[:k + 1]])).astype(np.int64)
            for k in range(len(bands))]


def optimise_by_levels(est: Any, start: Any, train: list[tuple], feedthrough: bool,
                       n_port: int, delayed: bool = False, static_law: Any = None,
                       law_inputs: list[Array] | None = None) -> Optimised:
    """:func:`~.optimise.optimise`, and where it misses :data:`CONTINUATION_COST` on runs of
    several excitation levels, the continuation over them (module doc); the lower training
    cost is kept.

    Parameters are those of :func:`~.optimise.optimise`.
    """
    from sklearn.base import clone

    direct = optimise(est, start, train, feedthrough, n_port, delayed, static_law, law_inputs)
    stages = level_stages(excitation_levels([e[1] for e in train]))
    if direct.costs[-1] <= CONTINUATION_COST or len(stages) < 2 or start.n_states == 0 \
            or int(est.max_iter) == 0:
        return direct

    def part(items: list | None, idx: NDArray[np.int64]) -> list | None:
        return None if items is None else [items[i] for i in idx]

    linear = clone(est).set_params(ridges=(), n_dissipation=0)
    try:
        warm = optimise(linear, start, part(train, stages[0]), feedthrough, 0, delayed,
                        static_law, part(law_inputs, stages[0]))
        for idx in stages:
            warm = optimise(est, start, part(train, idx), feedthrough, n_port, delayed,
                            static_law, part(law_inputs, idx), warm=warm)
    except NonlinearFitError:  # a stage the fit cannot take (too stiff for RK4 on its runs)
        return direct
    if warm.costs[-1] >= direct.costs[-1]:
        return direct
    return dataclasses.replace(warm, reason=f"{warm.reason}; after {len(stages)} excitation "
                               f"levels climbed (one fit to all runs: cost "
                               f"{direct.costs[-1]:.3g}, here {warm.costs[-1]:.3g})")
