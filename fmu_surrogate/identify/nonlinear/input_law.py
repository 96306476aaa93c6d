"""The static law of the modulating inputs in the outputs: candidate terms and their start.

A component may show a variable that depends on a modulating input (an input in no power pair)
through a nonlinear law with no dynamics in between: a spring driven by a displacement input,
its force a law of the displacement; a spring-damper in the adaptor convention, its force a law
of the position plus what the velocity port does.  The pH core cannot hold such a law (the
modulating input has no conjugate output to carry energy), the wiring's ``Du`` only its linear
part; the fit adds a :class:`~fmu_surrogate.ph.StaticLaw` to the outputs, ``y_ext += Σ_k c_k
f_k(a_k dᵀu_ext + b_k)``, fitted jointly with the core.

Candidates.  A dictionary of ridge terms per argument, the argument one modulating input or the
difference of two of the same unit (a law of a relative displacement ``s₁ − s₂``); inputs that
take fewer than :data:`MIN_LEVELS` values in the training data (switches, gears) get none —
their effect is a table, not a smooth law, and a few levels leave the terms' shapes
undetermined.  On the argument ``a`` scaled by its spread ``σ`` in the training data, about
its quantiles ``q`` there:

* ``cubic`` ``((a − q)/σ)³`` at the quantiles :data:`CUBIC_QUANTILES`: the progressive
  (hardening or softening) part of a law; cubics about three points span, with the wiring's
  affine part, every cubic polynomial of the argument (a preloaded spring's
  ``k₁ (s − s₀) + k₃ (s − s₀)³`` exactly, whatever ``s₀``);
* ``tanh`` at the quantiles :data:`TANH_QUANTILES` of ``a``, width ``σ``: saturation, smooth
  steps;
* ``hinge`` ``max((a − q)/σ, 0)`` at the quantile knots :data:`HINGE_QUANTILES`: kinks,
  piecewise-linear tables, dead zones and end stops.

Each term's direction ``d`` (a unit vector or the difference of two) is fixed — the law of an
output depends on the inputs the dictionary gave it and no other (the surrogate's output
dependencies stay those of the data) — and its scale ``a_k``, offset ``b_k`` and gains ``c_k``
(one per output: measured outputs and power outputs alike) are fitted.

Why this shape.  The gains enter linearly, so the start is a least-squares problem on the
linear start's residual over the training data (:func:`law_start`), solved with the affine map
of the inputs that the wiring's ``Du``, ``cy`` (measured outputs) or the core's skew feedthrough
to the modulating and source ports (power outputs) then take on (the terms' own affine part is
not the residual's).  The dictionary overlaps (three cubics, tanh and hinges share much of their
shape), and fitting all of it starts the joint fit in a valley of cancelling gains where
L-BFGS-B crawls (a spring-damper in the adaptor convention: 0.4 % after 300 iterations with all
eleven terms of its displacement against 0.005 % after 86 with the two it needs).  The start
therefore selects terms forward — each step adds the candidate that lowers the residual most,
while it removes at least :data:`SELECT_GAIN` of it — a few well-separated terms that the joint
fit (:mod:`.optimise`) refines with the core and the wiring's affine maps (gains, scales and
offsets: a cubic then centres itself on the law's own inflection), and :mod:`.pruning` drops
those the data do not need.  A law of an input that the outputs do not depend on lowers the
residual by about one part in the number of samples: no term is selected and no law is fitted.
Three shapes cover the static laws components show (hardening, saturating, piecewise-linear),
each a closed-form expression an exported FMU evaluates in a few operations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.nonlinear.start import LinearStart, with_affine
from fmu_surrogate.ph import PortMap, StaticLaw, simulate

Array = NDArray[np.float64]

__all__ = ["CUBIC_QUANTILES", "HINGE_QUANTILES", "MIN_LEVELS", "RIDGE", "SELECT_FLOOR",
           "SELECT_GAIN", "SELECT_SAMPLES", "TANH_QUANTILES", "LawStart",
           "law_candidates", "law_start", "law_start_of", "modulating_inputs"]

#: quantiles of the argument about which the cubic terms are centred
CUBIC_QUANTILES = (0.2, 0.5, 0.8)
#: quantiles of the argument at which the tanh terms are centred
TANH_QUANTILES = (0.2, 0.5, 0.8)
#: quantile knots of the hinge terms
HINGE_QUANTILES = (0.1, 0.3, 0.5, 0.7, 0.9)
#: fewer distinct values of an input than this in the training data: no terms of it
MIN_LEVELS = 8
#: ridge of the start's least squares, relative to the mean squared size of the (unit-RMS) terms
RIDGE = 1e-9
#: a term is selected when it removes at least this fraction of the residual's sum of squares
#: (a term of an input the outputs do not depend on removes about 1/N by chance: N samples)
SELECT_GAIN = 0.01
#: no term is selected once the residual's RMS is below this fraction of the outputs' RMS
SELECT_FLOOR = 1e-6
#: the selection looks at this many evenly spaced training samples at most (the gains of the
#: selected terms are then fitted to all)
SELECT_SAMPLES = 5000


@dataclass(frozen=True)
class LawStart:
    """The candidate terms of a law and their start (module doc).

    Parameters
    ----------
    kinds : tuple of str
        Each term's kind (:data:`~fmu_surrogate.ph.static_law.STATIC_LAW_KINDS`).
    directions : ndarray, shape (K, k_in)
        Fixed directions ``d_k`` over the external inputs (unit vectors or differences).
    scale, offset : ndarray, shape (K,)
        Start of ``a_k`` and ``b_k``: the term reads ``a_k d_kᵀ u + b_k``.
    C : ndarray, shape (k_out, K)
        Start of the gains.
    arguments : tuple of str
        Each term's argument in words (``"s"``, ``"s1 - s2"``).
    """

    kinds: tuple[str, ...]
    directions: Array
    scale: Array
    offset: Array
    C: Array
    arguments: tuple[str, ...]

    @property
    def n_terms(self) -> int:
        """Number of candidate terms K."""
        return len(self.kinds)

    def law(self, scale: Array, offset: Array, C: Array) -> StaticLaw | None:
        """The :class:`~fmu_surrogate.ph.StaticLaw` of fitted ``a, b, C`` with the terms of
        all-zero gains left out (``None`` when none is left).

        Parameters
        ----------
        scale, offset : ndarray, shape (K,)
        C : ndarray, shape (k_out, K)
        """
        C = np.asarray(C, dtype=float)
        keep = np.flatnonzero(np.any(C != 0, axis=0))
        if not keep.size:
            return None
        W = self.directions[keep] * np.asarray(scale, dtype=float)[keep, None]
        return StaticLaw(tuple(self.kinds[k] for k in keep), W,
                         np.asarray(offset, dtype=float)[keep], C[:, keep])


def modulating_inputs(ports: PortMap) -> list[int]:
    """External inputs that drive no power port (columns of ``Tu`` zero on every pH port an
    output is conjugate to).

    Parameters
    ----------
    ports : PortMap

    Returns
    -------
    list of int
    """
    power = np.any(ports.Ty != 0, axis=0)
    return [i for i in range(ports.Tu.shape[1]) if not np.any(ports.Tu[power, i] != 0)]


def _terms(a: Array) -> tuple[list[str], list[float], list[float]]:
    """Kinds, scales and offsets of the dictionary on one argument's training values ``a``."""
    sigma = float(np.std(a))
    kinds: list[str] = []
    scale: list[float] = []
    offset: list[float] = []
    for q in np.quantile(a, CUBIC_QUANTILES):
        kinds.append("cubic"), scale.append(1.0 / sigma), offset.append(-float(q) / sigma)
    for q in np.quantile(a, TANH_QUANTILES):
        kinds.append("tanh"), scale.append(1.0 / sigma), offset.append(-float(q) / sigma)
    for q in np.quantile(a, HINGE_QUANTILES):
        kinds.append("hinge"), scale.append(1.0 / sigma), offset.append(-float(q) / sigma)
    return kinds, scale, offset


def law_candidates(ports: PortMap, U: Array) -> LawStart | None:
    """The dictionary of the modulating inputs of ``ports`` on the training inputs ``U`` (module
    doc), gains zero; ``None`` when there is no modulating input with enough levels.

    Parameters
    ----------
    ports : PortMap
        The wiring (names, units, which inputs are modulating).
    U : ndarray, shape (N, k_in)
        External inputs of all training samples.

    Returns
    -------
    LawStart or None
    """
    k_in = U.shape[1]
    names, units = ports.input_names, ports.input_units
    mod = [i for i in modulating_inputs(ports)
           if np.unique(U[:, i]).size >= MIN_LEVELS and np.std(U[:, i]) > 0]
    args: list[tuple[Array, str]] = []
    for i in mod:
        args.append((np.eye(k_in)[i], names[i]))
    for x, i in enumerate(mod):
        for j in mod[x + 1:]:
            d = np.eye(k_in)[i] - np.eye(k_in)[j]
            if units[i] is not None and units[i] == units[j] and np.std(U @ d) > 0:
                args.append((d, f"{names[i]} - {names[j]}"))
    if not args:
        return None
    kinds, dirs, scale, offset, words = [], [], [], [], []
    for d, word in args:
        k, s, b = _terms(U @ d)
        kinds += k
        scale += s
        offset += b
        dirs += [d] * len(k)
        words += [word] * len(k)
    K = len(kinds)
    return LawStart(tuple(kinds), np.array(dirs).reshape(K, k_in), np.array(scale),
                    np.array(offset), np.zeros((len(ports.output_names), K)), tuple(words))


def _fit_rows(F: Array, residual: Array, affine: Array, ridge: float) -> tuple[Array, float]:
    """Ridge least squares per output of ``residual`` on the columns ``F`` (terms, then the
    affine ones), the affine ones only where ``affine`` allows; coefficients and the residual
    sum of squares of the outputs scaled to unit RMS."""
    K = F.shape[1] - affine.shape[1]
    rms = np.sqrt(np.mean(F * F, axis=0))
    rms[rms == 0] = 1.0
    Fn = F / rms
    C = np.zeros((residual.shape[1], F.shape[1]))
    sse = 0.0
    for o in range(residual.shape[1]):
        cols = np.concatenate([np.ones(K, dtype=bool), affine[o]])
        if not cols.any():
            sse += float(np.sum(residual[:, o] ** 2))
            continue
        A = Fn[:, cols].T @ Fn[:, cols]
        A[np.diag_indices_from(A)] += ridge * len(Fn)
        c = np.linalg.solve(A, Fn[:, cols].T @ residual[:, o])
        C[o, cols] = c / rms[cols]
        sse += float(np.sum((residual[:, o] - Fn[:, cols] @ c) ** 2))
    return C, sse


def law_start(cand: LawStart, U: Array, residual: Array, y_rms: Array, affine: Array,
              ridge: float = RIDGE) -> tuple[LawStart | None, Array]:
    """The terms of ``cand`` the residual of the linear start needs, with the gains of their
    least-squares fit (and of an affine map of the inputs where ``affine`` allows).

    Terms are taken one at a time (forward selection): each step adds the candidate that
    lowers the residual's sum of squares most, as long as it lowers it by at least
    :data:`SELECT_GAIN` of what is left and the residual is above :data:`SELECT_FLOOR` of the
    outputs (module doc).

    Parameters
    ----------
    cand : LawStart
        The candidates (:func:`law_candidates`).
    U : ndarray, shape (N, k_in)
        External inputs of the training samples.
    residual : ndarray, shape (N, k_out)
        What the linear start leaves of the outputs there.
    y_rms : ndarray, shape (k_out,)
        The outputs' RMS (each output's residual is measured in it).
    affine : ndarray of bool, shape (k_out, k_in + 1)
        Which inputs (and, last, the constant) each output's affine map may take on with the
        terms: where the wiring or the core can take a map on, the terms are fitted with it,
        else alone.
    ridge : float
        Ridge relative to the columns' mean square (columns scaled to unit RMS).

    Returns
    -------
    (LawStart or None, ndarray of shape (k_out, k_in + 1))
        The selected terms (``None``: none) and the affine map ``[Du | cy]`` that goes with
        them (zero where not allowed).
    """
    K = cand.n_terms
    law = StaticLaw(cand.kinds, cand.directions * cand.scale[:, None], cand.offset, np.eye(K))
    affine = np.asarray(affine, dtype=bool)
    r_all = np.asarray(residual, dtype=float) / np.where(y_rms > 0, y_rms, 1.0)
    every = max(1, -(-len(U) // SELECT_SAMPLES))  # the selection on evenly spaced samples
    T, r = law.values(U[::every]), r_all[::every]
    Aff = np.column_stack([U[::every], np.ones(len(T))])
    chosen: list[int] = []
    sse = _fit_rows(Aff, r, affine, ridge)[1]  # what the affine map alone leaves
    floor = SELECT_FLOOR ** 2 * r.size
    while sse > floor and len(chosen) < K:
        trials = [(_fit_rows(np.column_stack([T[:, chosen + [k]], Aff]), r, affine, ridge)[1],
                   k) for k in range(K) if k not in chosen]
        best, k = min(trials)
        if not sse - best >= SELECT_GAIN * sse:
            break
        chosen.append(k)
        sse = best
    if not chosen:
        return None, np.zeros(affine.shape)
    C, _ = _fit_rows(np.column_stack([law.values(U)[:, chosen], U, np.ones(len(U))]), r_all,
                     affine, ridge)
    C = C * np.where(y_rms > 0, y_rms, 1.0)[:, None]
    sel = np.array(chosen)
    return (LawStart(tuple(cand.kinds[k] for k in sel), cand.directions[sel], cand.scale[sel],
                     cand.offset[sel], C[:, :len(sel)],
                     tuple(cand.arguments[k] for k in sel)), C[:, len(sel):])


def law_start_of(start: LinearStart, train: list[tuple], delayed: bool,
                 feedthrough: bool) -> tuple[LawStart | None, LinearStart, int]:
    """The static law's start for a nonlinear fit from ``start`` (:func:`law_candidates`, then
    :func:`law_start` on the linear start's residual), and the start with the affine maps that
    go with it: the measured outputs' ``D_m``, and with a fitted feedthrough the power
    outputs' coupling to the modulating and source ports
    (:func:`~fmu_surrogate.identify.nonlinear.start.with_affine`).

    Parameters
    ----------
    start : LinearStart
        The linear start.
    train : list of tuple
        ``(t, u_ext, y_ext, hold)`` training experiments.
    delayed : bool
        Whether the outputs see the inputs of the step before.
    feedthrough : bool
        Whether the core's feedthrough ``P, S, N`` is fitted.

    Returns
    -------
    (LawStart or None, LinearStart, int)
        The selected terms (``None``: no law), the start, the number of candidates.
    """
    U = np.vstack([e[1] for e in train])
    cand = law_candidates(start.ports, U)
    if cand is None:
        return None, start, 0
    lin = start.surrogate
    if delayed:
        lin = lin.replace(delayed_feedthrough=True)
    seen = np.vstack([np.concatenate([u[:1], u[:-1]]) if delayed else u
                      for _, u, _, _ in train])
    res = np.vstack([y - simulate(lin, t, u, hold=h).y for t, u, y, h in train])
    Y = np.vstack([y for _, _, y, _ in train])
    p = start.ports
    allowed = np.zeros((len(p.output_names), len(p.input_names) + 1), dtype=bool)
    allowed[start.measured] = True
    if feedthrough:
        allowed[:, modulating_inputs(p)] = True
        allowed[:, -1] = True
    law, aff = law_start(cand, seen, res, np.sqrt(np.mean(Y * Y, axis=0)), allowed)
    return law, with_affine(start, aff), cand.n_terms
