"""Power pairs of an FMU's interface: from the declared units, the data deciding between
candidates.

An input ``u`` and an output ``y`` can form a power pair when their declared units multiply to a
power (:func:`fmu_surrogate.fmu.model.units.power_factor`: N and m/s, V and A, N.m and rad/s,
bar and l/min).  Inputs whose FMI type is not Real (an Integer direction, a Boolean) never
pair: they are modulating inputs.  The pairing is a matching of the inputs to the outputs with
as many pairs as the units allow; inputs in no pair are modulating inputs, outputs in no pair
measured outputs (the ``ports=[{"u": …, "y": …}]`` setting of
:class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier`).

Choice among candidates
-----------------------
1. With as many inputs as outputs, when the declared order pairs every input with the output
   in its place and each such pair is a power, that pairing is kept (the vendor's own order;
   what ``ports=None`` always meant).
2. When the units leave one maximal matching, it is the pairing.
3. Otherwise (a force with two velocities: the quarter car's body and wheel) the **data**
   decide, by passivity: each diagonal entry of the transfer matrix of a passive multi-port is
   positive real (``Re G_ii(jω) ≥ 0`` at every frequency, ``≤ 0`` for a port oriented "out"),
   the transfer between an effort and a flow taken at different places is not (a force on the
   body and the wheel's velocity: the suspension adds phase lag beyond 90°).  The channel
   ``u → y`` of the unstructured model of the data (order from the data, feedthrough, initial
   state and a constant input column for offsets:
   :func:`~fmu_surrogate.identify.linear.init.order.select_order`) gets the score
   ``max_s min_ω s Re G(jω) / max_{ω' ≥ ω} |G(jω')|`` over both orientations ``s = ±1`` on a
   logarithmic grid from the record length to the Nyquist frequency (where the gain is within
   :data:`GAIN_RANGE` of its largest), with the residue of a pole at the origin (a free mass)
   required to have the sign ``s`` — about 0 or positive for a collocated pair (measured
   +0.000 for the quarter car's force and body velocity, a lossless mass gives exactly 0),
   clearly negative otherwise (−0.999 for the wheel velocity).  The matching whose worst pair
   scores highest wins (then the larger sum of scores).

   Why this criterion rather than the held-out error of quick fits: it costs one unstructured
   model for all candidates instead of one fit per matching, and the error does not tell the
   pairings apart — with x0, offsets and feedthrough both of the quarter car's pairings
   predict to 2.4e-4 (measured), while only one of them is a pH port of the part.

When units are missing (no pair can be formed and some variable declares no unit), the names
may still say it: bond-graph tools (20-sim) name a power port's effort and flow ``p.e`` and
``p.f`` (``p.e[2]``, ``p.f[2]`` for a multi-bond), and an input effort with the output flow of
the same port (or the reverse) is a power pair (:func:`bond_graph_pairs`).  Without such names
and with as many inputs as outputs they pair in the declared order; otherwise the data decide
(:func:`passivity_pairs`): the passivity scores above, and where the linear model singles out
no pair (a strongly nonlinear part scores every channel alike) the energy the data supply
(:mod:`~fmu_surrogate.identify.linear.interface.supplied_energy`: from rest, the energy
supplied through the true pairs never drops below its start).  Otherwise nothing is detected:
:func:`detect_pairs` returns None and the caller keeps its previous convention (inputs and
outputs paired in order) or names the fix (``ports=[…]``, CLI ``--port``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.interface.passivity_score import passivity_scores
from fmu_surrogate.identify.linear.interface.supplied_energy import (
    ENERGY_MARGIN,
    energy_matching,
    energy_score,
)

Array = NDArray[np.float64]

__all__ = ["Pairing", "PortPair", "bond_graph_pairs", "detect_pairs", "passivity_pairs",
           "unit_candidates"]

#: A bond-graph port's effort or flow: ``port.e``, ``port.f[3]`` (20-sim's names).
_BOND = re.compile(r"^(?P<port>.+)\.(?P<var>[ef])(?P<index>\[[^\]]*\])?$")

#: Matchings tried before the data decide (beyond: the declared order among candidates).
MAX_MATCHINGS = 4096
#: Without units a pair needs at least this passivity score (a collocated pair scores about 0
#: or above: +5e-6 for a driving-point mobility; a transfer mobility −0.099, a quarter car's
#: force with its wheel's velocity −0.999).
SCORE_FLOOR = -0.02


@dataclass(frozen=True)
class PortPair:
    """A power pair and why it was chosen.

    Attributes
    ----------
    u, y : str
        Input and output names.
    watts : float
        Watts per unit product ``u · y`` (their units' :func:`power_factor`).
    reason : str
        Why this pair (units alone, declared order, or the data's passivity score).
    """

    u: str
    y: str
    watts: float
    reason: str


@dataclass(frozen=True)
class Pairing:
    """Result of :func:`detect_pairs`.

    Attributes
    ----------
    pairs : tuple of PortPair
    modulating : tuple of str
        Inputs in no pair.
    measured : tuple of str
        Outputs in no pair.
    candidates : dict
        Input name → the outputs its units make a power with.
    scores : dict
        ``(u, y)`` → passivity score, for the candidates the data had to decide between.
    """

    pairs: tuple[PortPair, ...]
    modulating: tuple[str, ...]
    measured: tuple[str, ...]
    candidates: dict[str, tuple[str, ...]] = field(default_factory=dict)
    scores: dict[tuple[str, str], float] = field(default_factory=dict)

    @property
    def ports(self) -> list[dict[str, str]]:
        """The ``ports`` setting of the estimator, ``[{"u": …, "y": …}, …]`` (orientation
        detected)."""
        return [{"u": p.u, "y": p.y} for p in self.pairs]

    def report(self) -> str:
        """One line per pair with its reason, then the other variables' roles."""
        lines = [f"  power pair {p.u} -> {p.y}: {p.reason}" for p in self.pairs]
        if not self.pairs:
            lines.append("  no power pair: the units of no input and output make a power")
        if self.modulating:
            lines.append(f"  modulating inputs (no power pair): {', '.join(self.modulating)}")
        if self.measured:
            lines.append(f"  measured outputs (no power pair): {', '.join(self.measured)}")
        return "\n".join(lines)


def unit_candidates(inputs: Sequence[str], outputs: Sequence[str],
                    input_units: Sequence[str | None], output_units: Sequence[str | None],
                    discrete: Iterable[str] = ()) -> dict[str, dict[str, float]]:
    """Per input, the outputs whose units make a power with its unit, and the watts per unit
    product.

    Parameters
    ----------
    inputs, outputs : sequence of str
    input_units, output_units : sequence of str or None
        Declared units (None: not declared).
    discrete : iterable of str
        Inputs that never pair (not of type Real).

    Returns
    -------
    dict
        ``{input: {output: watts per unit product}}`` (inputs without candidates left out).
    """
    from fmu_surrogate.fmu.model.units import power_factor

    skip = set(discrete)
    out: dict[str, dict[str, float]] = {}
    for u, uu in zip(inputs, input_units):
        if u in skip:
            continue
        c = {y: f for y, yu in zip(outputs, output_units)
             if (f := power_factor(uu, yu)) is not None}
        if c:
            out[u] = c
    return out


def _matchings(cand: dict[str, dict[str, float]]) -> list[tuple[tuple[str, str], ...]]:
    """All matchings with the largest number of pairs (at most MAX_MATCHINGS + 1)."""
    ins = list(cand)
    best: list[tuple[tuple[str, str], ...]] = []
    size = 0
    for k in range(len(ins), 0, -1):
        for sub in itertools.combinations(ins, k):
            for ys in itertools.product(*(list(cand[u]) for u in sub)):
                if len(set(ys)) == k:
                    best.append(tuple(zip(sub, ys)))
                    if len(best) > MAX_MATCHINGS:
                        return best
        if best:
            size = k
            break
    return [m for m in best if len(m) == size]


def detect_pairs(inputs: Sequence[str], outputs: Sequence[str],
                 input_units: Sequence[str | None], output_units: Sequence[str | None],
                 records: Sequence[Any] = (), discrete: Iterable[str] = ()) -> Pairing | None:
    """The power pairs of an interface (module docstring).

    Parameters
    ----------
    inputs, outputs : sequence of str
        External variables.
    input_units, output_units : sequence of str or None
        Their declared units.
    records : sequence of (t, u, y, hold), optional
        Data with the columns of ``inputs`` and ``outputs``, for the choice among candidates.
    discrete : iterable of str
        Inputs not of type Real (never paired).

    Returns
    -------
    Pairing or None
        None when no pair can be formed and some variable declares no unit (nothing to go by).
    """
    inputs, outputs = list(inputs), list(outputs)
    discrete = set(discrete)
    cand = unit_candidates(inputs, outputs, input_units, output_units, discrete)
    cands = {u: tuple(c) for u, c in cand.items()}
    if not cand:
        undeclared = [v for v, un in zip(inputs + outputs, list(input_units) + list(output_units))
                      if not un and v not in discrete]
        if undeclared:
            named = bond_graph_pairs(inputs, outputs, discrete)
            if named is None and len(inputs) != len(outputs) and records:
                return passivity_pairs(inputs, outputs, records, discrete)
            return named
        return Pairing((), tuple(inputs), tuple(outputs), cands)
    scores: dict[tuple[str, str], float] = {}
    in_order = (len(inputs) == len(outputs)
                and all(outputs[k] in cand.get(u, {}) for k, u in enumerate(inputs)))
    if in_order:
        chosen = tuple(zip(inputs, outputs))
        why = {p: "units make a power; the declared order pairs them" for p in chosen}
    else:
        matchings = _matchings(cand)
        if len(matchings) == 1:
            chosen = matchings[0]
            why = {p: "the only pairing the units allow" for p in chosen}
        else:
            chosen, why, scores = _by_passivity(matchings, cand, inputs, outputs, records)
    pairs = tuple(PortPair(u, y, cand[u][y], why[(u, y)]) for u, y in
                  sorted(chosen, key=lambda p: inputs.index(p[0])))
    used_u, used_y = {p.u for p in pairs}, {p.y for p in pairs}
    return Pairing(pairs, tuple(u for u in inputs if u not in used_u),
                   tuple(y for y in outputs if y not in used_y), cands, scores)


def bond_graph_pairs(inputs: Sequence[str], outputs: Sequence[str],
                     discrete: Iterable[str] = ()) -> Pairing | None:
    """Power pairs by bond-graph names (module docstring): the input ``p.e`` with the output
    ``p.f`` or the input ``p.f`` with the output ``p.e``, same port and index; ``None`` when
    the names pair nothing.

    Parameters
    ----------
    inputs, outputs : sequence of str
    discrete : iterable of str
        Inputs not of type Real (never paired).

    Returns
    -------
    Pairing or None
        Pairs with 1 W per unit product (SI, no units declared).
    """
    discrete = set(discrete)
    named = {}
    for y in outputs:
        m = _BOND.match(y)
        if m:
            named[(m["port"], m["var"], m["index"] or "")] = y
    pairs = []
    for u in inputs:
        m = _BOND.match(u)
        other = m and named.get((m["port"], "f" if m["var"] == "e" else "e", m["index"] or ""))
        if other and u not in discrete:
            pairs.append(PortPair(u, other, 1.0, "effort and flow of one bond-graph port "
                                  "(names p.e, p.f; no units declared)"))
    if not pairs:
        return None
    used_u, used_y = {p.u for p in pairs}, {p.y for p in pairs}
    return Pairing(tuple(pairs), tuple(u for u in inputs if u not in used_u),
                   tuple(y for y in outputs if y not in used_y))


def passivity_pairs(inputs: Sequence[str], outputs: Sequence[str], records: Sequence[Any],
                    discrete: Iterable[str] = ()) -> Pairing | None:
    """Power pairs of an interface without units whose inputs and outputs are not as many (no
    declared order to pair them in), by the data alone (module docstring).

    Every Real input with every output is a candidate; of the matchings with the most pairs the
    one with the most pairs scoring at least :data:`SCORE_FLOOR` wins (then the larger sum of
    their scores, then the declared order), and of its pairs only those the data single out are
    kept (the input's other outputs and the output's other inputs score below the floor): the
    other inputs are modulating, the other outputs measured.  A vendor component with two force
    inputs and the two velocities plus a spring force as outputs pairs each force with its own
    velocity.  Where no pair is singled out, the energy the data supply may single out a
    pairing of all the inputs (:mod:`~fmu_surrogate.identify.linear.interface.supplied_energy`).

    Parameters
    ----------
    inputs, outputs : sequence of str
    records : sequence of (t, u, y, hold)
        Data with the columns of ``inputs`` and ``outputs``.
    discrete : iterable of str
        Inputs not of type Real (never paired).

    Returns
    -------
    Pairing or None
        Pairs with 1 W per unit product (SI, no units declared); None when no pair is kept.
    """
    skip = set(discrete)
    cand = {u: dict.fromkeys(outputs, 1.0) for u in inputs if u not in skip}
    matchings = _matchings(cand) if cand and outputs else []
    if not matchings or len(matchings) > MAX_MATCHINGS:
        return None
    scores = passivity_scores(records, inputs, outputs, sorted({p for m in matchings for p in m}))

    def key(m: tuple[tuple[str, str], ...]) -> tuple[Any, ...]:
        good = [scores[p] for p in m if scores[p] >= SCORE_FLOOR]  # NaN is never good
        return (-len(good), -sum(good),
                tuple(sorted(outputs.index(y) - inputs.index(u) for u, y in m)))

    # a pair is kept only where the data single it out: its input's other candidates score
    # below the floor (a linear model that misses a strongly nonlinear part scores every
    # channel alike, ±1 for a static fit: nothing to go by)
    def alone(u: str, y: str) -> bool:
        return (scores[(u, y)] >= SCORE_FLOOR
                and not any(scores.get((u, o), -1.0) >= SCORE_FLOOR for o in outputs if o != y)
                and not any(scores.get((i, y), -1.0) >= SCORE_FLOOR for i in cand if i != u))

    chosen = [p for p in min(matchings, key=key) if alone(*p)]
    if len(chosen) < len(cand):
        # inputs left unpaired are power inputs too where the chosen pairs alone give out more
        # energy than they took (the others supplied it): the energy the data supply may pair
        # them (a position input next to its velocity supplies none: left modulating)
        own = energy_score(inputs, outputs, records, chosen) if chosen else None
        if not chosen or (own is not None and own < -ENERGY_MARGIN):
            whole = _by_energy(inputs, outputs, records, skip, scores, chosen)
            if whole is not None:
                return whole
    if not chosen:
        return None
    pairs = tuple(PortPair(u, y, 1.0, f"no units declared; passivity score {scores[(u, y)]:+.3f} "
                           f"(min Re G / |G| of the unstructured model, ≥ 0 when passive; the "
                           f"best of its candidates)") for u, y in
                  sorted(chosen, key=lambda p: inputs.index(p[0])))
    used_u, used_y = {p.u for p in pairs}, {p.y for p in pairs}
    return Pairing(pairs, tuple(u for u in inputs if u not in used_u),
                   tuple(y for y in outputs if y not in used_y), {}, scores)


def _by_energy(inputs: Sequence[str], outputs: Sequence[str], records: Sequence[Any],
               discrete: set[str], scores: dict,
               given: Sequence[tuple[str, str]] = ()) -> Pairing | None:
    """The pairing the supplied energy singles out (:mod:`.supplied_energy`), with the pairs
    ``given`` by the passivity scores, or None."""
    found = energy_matching(inputs, outputs, records, sorted(discrete), given)
    if found is None:
        return None
    chosen, score, other = found
    energy = (f"the energy supplied through these pairs never drops below its start (score "
              f"{score:+.4f}; the best other pairing {other:+.4f})")
    pairs = tuple(PortPair(u, y, 1.0, f"no units declared; passivity score "
                           f"{scores[(u, y)]:+.3f}; with the other pairs, {energy}"
                           if (u, y) in given else f"no units declared; {energy}")
                  for u, y in chosen)
    used_y = {p.y for p in pairs}
    return Pairing(pairs, (), tuple(y for y in outputs if y not in used_y), {}, scores)


def _by_passivity(matchings: list[tuple[tuple[str, str], ...]],
                  cand: dict[str, dict[str, float]], inputs: list[str], outputs: list[str],
                  records: Sequence[Any]) -> tuple[Any, dict, dict]:
    """The matching the data's passivity scores prefer (declared order on ties or no data)."""
    def declared(m: tuple[tuple[str, str], ...]) -> tuple[int, ...]:
        return tuple(sorted(outputs.index(y) - inputs.index(u) for u, y in m))

    if len(matchings) > MAX_MATCHINGS or not records:
        chosen, used = [], set()
        for u, c in cand.items():
            y = next((y for y in c if y not in used), None)
            if y is not None:
                chosen.append((u, y))
                used.add(y)
        what = "too many candidate pairings" if records else "no data"
        why = {p: f"units make a power; {what} to decide by passivity: the first candidate "
                  "in the declared order" for p in chosen}
        return tuple(chosen), why, {}
    pairs = sorted({p for m in matchings for p in m})
    scores = passivity_scores(records, inputs, outputs, pairs)

    def key(m: tuple[tuple[str, str], ...]) -> tuple[float, float]:
        s = [scores[p] for p in m]
        if any(np.isnan(v) for v in s):
            return (-np.inf, -np.inf)
        return (min(s), sum(s))

    ranked = sorted(matchings, key=lambda m: (tuple(-v for v in key(m)), declared(m)))
    chosen = ranked[0]
    if not np.isfinite(key(chosen)[0]):
        why = {p: "units make a power; the data could not score the candidates (constant "
                  "input or non-uniform sampling): the first in the declared order"
               for p in chosen}
        return chosen, why, scores
    why = {}
    for u, y in chosen:
        others = [f"{o} {scores[(u, o)]:+.3f}" for o in cand[u] if o != y and (u, o) in scores]
        why[(u, y)] = (f"units make a power; passivity score {scores[(u, y)]:+.3f} "
                       f"(min Re G / |G| of the unstructured model, ≥ 0 when passive"
                       + (f"; other candidates: {', '.join(others)})" if others else ")"))
    return chosen, why, scores
