"""Power pairs by the energy the data supply: the time-domain test of passivity, for interfaces
whose linear model cannot tell the pairs apart (:mod:`fmu_surrogate.identify.linear.interface.
pairing`).

A passive component that starts at rest never gives out more energy than it was given: with
every input ``u_k`` paired with its output ``y_k``, the energy supplied up to each time,
``E(t) = ∫₀ᵗ Σ_k s_k u_k y_k dτ`` (``s_k = ±1``, the port's orientation), stays at or above 0.
The product of an input with an output of another port (a force on one mass and the velocity of
another) is no power: its integral has no such bound and, in data that excite the component's
dynamics, drops below 0.  The test needs no model, so it holds for strongly nonlinear
components, where the passivity score of the unstructured linear model
(:mod:`~fmu_surrogate.identify.linear.interface.passivity_score`) scores every channel alike.

The score of a matching of the inputs to outputs with orientations is
``min_runs min_t E(t) / ∫₀ᵀ |Σ_k s_k u_k y_k| dt``: 0 when the energy never drops below its
start, negative otherwise (−1 at worst).  The supplied energy is integrated as the data's input
hold says: over a step of a zero-order hold, ``u_k`` times the trapezoid of ``y``; between
linearly interpolated inputs, the exact integral of the two linear pieces.

Limits (the caller falls back to naming the pairs):

- The data must start at rest: every output 0 at the first sample of every run, or the same
  feedthrough of the inputs' first samples in every run (an acceleration output).  A component
  that starts with energy stored (a charged accumulator, a moving mass, a preloaded spring)
  gives it out, so its true pairing scores below 0 while a wrong one can stay above by chance
  (measured: 3 wrong pairings in 72 trials of two masses started moving, none from rest).  From
  rest the true pairing scores 0, so a wrong one could only tie with it, which the margin
  rejects.
- Every input of type Real must be in a pair (a modulating input can pump energy through the
  others).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

__all__ = ["ENERGY_FLOOR", "ENERGY_MARGIN", "MAX_COMBINATIONS", "energy_matching", "energy_score"]

#: A matching passes when its score is at least −ENERGY_FLOOR (from rest the true pairing scores
#: exactly 0: the supplied energy starts at 0 and never drops below; the floor leaves room for
#: the integration of sampled data, O(h³) per step, and an FMU's solver error; a wrong pairing
#: that passed the floor 2e-3 of the first trials dipped to −4.7e-4).
ENERGY_FLOOR = 1e-5
#: ... and is singled out when every other matching, in either orientation, scores below
#: −ENERGY_MARGIN (measured on two masses on a progressive spring, forces in, both velocities
#: and the spring force out, seven stiffness and damping settings: the true pairing 0, the best
#: of the others −0.011 to −0.075).
ENERGY_MARGIN = 5e-3
#: The outputs start at rest when their first samples are at most this fraction of their
#: largest magnitude.
REST = 1e-9
#: Matchings times orientations scored at most (beyond, nothing is singled out).
MAX_COMBINATIONS = 2048


def _supplied(t: Array, u: Array, y: Array, hold: str) -> tuple[Array, Array]:
    """Energy supplied by ``u · y`` up to each sample, and the work of each step (1-D each)."""
    h = np.diff(t)
    if hold == "zoh":
        w = h * u[:-1] * 0.5 * (y[:-1] + y[1:])
    else:  # both linear over the step: ∫ u y = h/6 (2 u0 y0 + u0 y1 + u1 y0 + 2 u1 y1)
        w = h / 6.0 * (2 * u[:-1] * y[:-1] + u[:-1] * y[1:] + u[1:] * y[:-1] + 2 * u[1:] * y[1:])
    return np.concatenate([[0.0], np.cumsum(w)]), w


def _from_rest(records: Sequence[Any]) -> bool:
    """Whether every run starts at rest (module docstring): each output's first samples are 0,
    or the same feedthrough of the inputs' first samples in every run (an acceleration output
    of a force input: ``y_0 = D u_0``, fitted over more distinct first inputs than inputs, so
    that a state's value is not mistaken for one).  A state that starts at an equilibrium with
    the first inputs (a part initialised in steady state) passes too, with the risk of data that
    do not start at rest (module docstring): the energy it stores can take the true pairing
    below its start."""
    runs = [(np.asarray(u, float), np.asarray(y, float)) for _t, u, y, _h in records]
    runs = [(u, y) for u, y in runs if y.shape[0]]
    if not runs:
        return False
    U0 = np.stack([u[0] for u, _y in runs])
    Y0 = np.stack([y[0] for _u, y in runs])
    scale = np.max([np.abs(y).max(axis=0) for _u, y in runs], axis=0)
    moved = np.abs(Y0) > REST * scale
    if not moved.any():
        return True
    # runs whose inputs start at 0, or where another run's do, tell nothing more of D
    driven = np.unique(U0[np.any(U0 != 0.0, axis=1)], axis=0)
    if not np.all(np.isfinite(U0)) or len(driven) <= np.linalg.matrix_rank(driven):
        return False
    D, *_ = np.linalg.lstsq(U0, Y0, rcond=None)
    return bool(np.all(np.abs(Y0 - U0 @ D) <= REST * scale))


def _runs(records: Sequence[Any]) -> list[tuple[Array, Array, Array, str]]:
    """The records as float arrays (runs of fewer than three samples left out)."""
    out = []
    for t, u, y, hold in records:
        t = np.asarray(t, float)
        if t.size >= 3:
            out.append((t, np.asarray(u, float), np.asarray(y, float), str(hold)))
    return out


def _score(runs: list[tuple[Array, Array, Array, str]],
           pairs: Sequence[tuple[int, int]]) -> float:
    """The score of the pairs (column indices) in their best orientations (module docstring);
    inf when no run supplies any work through them."""
    # per run and pair: the supplied energy at every sample and each step's work (only these
    # pairs': an FMU with many outputs would not hold them all)
    curves = [[_supplied(t, u[:, i], y[:, j], hold) for i, j in pairs]
              for t, u, y, hold in runs]
    best = -np.inf
    for signs in itertools.product((1.0, -1.0), repeat=len(pairs)):
        worst = np.inf
        for c in curves:
            E = sum(s * e for (e, _w), s in zip(c, signs))
            total = float(np.abs(sum(s * w for (_e, w), s in zip(c, signs))).sum())
            if total > 0.0 and np.isfinite(total):
                worst = min(worst, float(E.min()) / total)
        best = max(best, worst)
    return best


def energy_score(inputs: Sequence[str], outputs: Sequence[str], records: Sequence[Any],
                 pairs: Sequence[tuple[str, str]]) -> float | None:
    """The score of some pairs in their best orientations (module docstring): at least
    −:data:`ENERGY_FLOOR` when the other inputs supply no energy the pairs must account for.

    Parameters
    ----------
    inputs, outputs : sequence of str
    records : sequence of (t, u, y, hold)
    pairs : sequence of (input, output)

    Returns
    -------
    float or None
        None when the data do not start at rest or supply no work through the pairs, or the
        pairs have too many orientations (:data:`MAX_COMBINATIONS`).
    """
    if not pairs or 2 ** len(pairs) > MAX_COMBINATIONS or not _from_rest(records):
        return None
    ins, outs = list(inputs), list(outputs)
    score = _score(_runs(records), [(ins.index(u), outs.index(y)) for u, y in pairs])
    return score if np.isfinite(score) else None


def energy_matching(inputs: Sequence[str], outputs: Sequence[str], records: Sequence[Any],
                    discrete: Sequence[str] = (),
                    given: Sequence[tuple[str, str]] = ()) -> tuple[tuple[tuple[str, str], ...],
                                                                    float, float] | None:
    """The one matching of every Real input to an output that the supplied energy singles out
    (module docstring), or None.

    Parameters
    ----------
    inputs, outputs : sequence of str
    records : sequence of (t, u, y, hold)
        Data with the columns of ``inputs`` and ``outputs``; ``hold`` ``"zoh"`` or
        ``"linear"``.
    discrete : sequence of str
        Inputs not of type Real (never paired).
    given : sequence of (input, output)
        Pairs every candidate matching contains (known already).

    Returns
    -------
    (pairs, score, runner_up) or None
        The pairs ``(u, y)``, the matching's score and the best score of the others; None when
        some input is not Real, there are fewer outputs than inputs, the data do not start at
        rest, too many candidates (:data:`MAX_COMBINATIONS`), data without excitation, or no
        matching singled out.
    """
    ins, outs = list(inputs), list(outputs)
    if not ins or set(discrete) & set(ins) or len(outs) < len(ins) or not _from_rest(records):
        return None
    k = len(ins)
    fixed = {ins.index(u): outs.index(y) for u, y in given}
    free = [i for i in range(k) if i not in fixed]
    rest = [j for j in range(len(outs)) if j not in fixed.values()]
    # counted before they are listed: an FMU with many inputs and outputs has astronomically many
    if math.perm(len(rest), len(free)) * 2 ** k > MAX_COMBINATIONS:
        return None
    matchings = []
    for ys in itertools.permutations(rest, len(free)):
        m = dict(fixed)
        m.update(zip(free, ys))
        matchings.append(tuple(m[i] for i in range(k)))
    if not matchings:
        return None
    runs = _runs(records)
    if not runs:
        return None
    scores = {m: _score(runs, list(enumerate(m))) for m in matchings}
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    (m, score), runner_up = ranked[0], (ranked[1][1] if len(ranked) > 1 else -1.0)
    if not np.isfinite(score) or score < -ENERGY_FLOOR or runner_up >= -ENERGY_MARGIN:
        return None
    return tuple((ins[i], outs[j]) for i, j in enumerate(m)), score, runner_up
