"""What a coupled run records, one communication point at a time: the connected variables
aligned on the communication grid and, per power bond, the power each side sees and the energy
residual (the accounting of :mod:`fmu_surrogate.couple.running`).

Rows come out as the engine steps, so a run that is cut short (a component that crashes or
hangs in a worker process) keeps every row up to its last step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fmu_surrogate.couple.system import PowerBond, System

__all__ = ["Recorder", "bond_columns", "step_powers"]


def step_powers(e0: Any, e1: Any, f0: Any, f1: Any) -> tuple[Any, Any]:
    """Mean power the effort and the flow emitter see over a step (scalars or arrays).

    During a step the effort emitter holds the flow ``f0`` it received at the step's start and
    produces an effort going from ``e0`` to ``e1`` (trapezoid); the flow emitter the other way.

    Parameters
    ----------
    e0, e1 : float or ndarray
        Effort at the start and end of the step.
    f0, f1 : float or ndarray
        Flow at the start and end of the step.

    Returns
    -------
    (p_effort_side, p_flow_side)
    """
    return f0 * 0.5 * (e0 + e1), e0 * 0.5 * (f0 + f1)


def bond_columns(bond: PowerBond) -> list[str]:
    """Dataset variables of a bond: ``bond:<name>:P_<component>`` (both sides), ``…:residual``."""
    return [f"bond:{bond.name}:P_{c}" for c in bond.components] + [f"bond:{bond.name}:residual"]


class Recorder:
    """Turn the engine's values after every step into rows of the run's dataset.

    libcosim's communication is non-iterative: the value an input held during the step ending
    at ``t_k`` is its source's output at ``t_{k-1}``.  Row ``k`` (time ``t_k``) holds every
    output at ``t_k`` and every input at the value it holds from ``t_k`` on (its source's
    output at ``t_k``); row 0 (``t = 0``) takes the outputs at ``t = 0`` from the inputs they fed
    during the first step, and the variables no connection touches (driven inputs, recorded
    variables) from the values at ``t = 0`` given to the first :meth:`add`.  Then come the bond
    columns (:func:`bond_columns`).

    Parameters
    ----------
    system : System
    observed : sequence of str
        ``"component.variable"`` of the values the engine reports after each step, in order.
    scales : sequence of float, optional
        Per bond, the factor from ``effort · flow`` to the recorded power (watts per unit
        product, :mod:`fmu_surrogate.couple.results.energy`); default 1.
    """

    def __init__(self, system: System, observed: Sequence[str],
                 scales: Sequence[float] | None = None) -> None:
        pos = {n: i for i, n in enumerate(observed)}
        self._later = np.arange(len(observed))  # later rows: an input from its source
        conns = [c for c in system.all_connections()
                 if ".".join(c.source) in pos and ".".join(c.target) in pos]
        pairs = [(pos[".".join(c.source)], pos[".".join(c.target)]) for c in conns]
        # an input holds factor · source + offset; row 0 takes an output from an input it fed,
        # that inverted
        self._factor, self._offset = np.ones(len(observed)), np.zeros(len(observed))
        self._fed = {s: (d, c.factor, c.offset) for (s, d), c in zip(pairs, conns)}
        for (s, d), c in zip(pairs, conns):
            self._factor[d], self._offset[d] = c.factor, c.offset
            self._later[d] = s
        paired = {k for p in pairs for k in p}
        self._unpaired = np.array([k for k in range(len(observed)) if k not in paired], dtype=int)
        scales = [1.0] * len(system.bonds) if scales is None else [float(x) for x in scales]
        self._bonds = [(pos[".".join(b.effort.source)], pos[".".join(b.flow.source)],
                        b.sides(), w)
                       for b, w in zip(system.bonds, scales)]
        self.names = list(observed) + [n for b in system.bonds for n in bond_columns(b)]
        self._prev: tuple[float, np.ndarray, np.ndarray] | None = None

    def add(self, t: float, values: Sequence[float], initial: Sequence[float] | None = None
            ) -> list[tuple[float, np.ndarray]]:
        """The rows ``(time, row)`` that the values after the step ending at ``t`` complete.

        The first call gives two rows (``t = 0`` and ``t``), every later call one; ``initial``
        (first call) holds the values at ``t = 0`` of the variables no connection touches.
        """
        raw = np.asarray(values, dtype=float)
        rows = []
        if self._prev is None:
            row0 = raw.copy()  # an input holds from t = 0 to the first step's end
            for s, (d, f, o) in self._fed.items():  # an output from the input it fed
                row0[s] = raw[d] if f == 1.0 and o == 0.0 else (raw[d] - o) / f
            if initial is not None:
                row0[self._unpaired] = np.asarray(initial, dtype=float)[self._unpaired]
            rows.append(self._row(0.0, row0))
        rows.append(self._row(t, raw[self._later] * self._factor + self._offset))
        return rows

    def _row(self, t: float, signals: np.ndarray) -> tuple[float, np.ndarray]:
        extra = []
        prev = self._prev
        for k, (ie, jf, ((pi_a, s_a), (pi_b, s_b)), w) in enumerate(self._bonds):
            e1, f1 = float(signals[ie]), float(signals[jf])
            if prev is None:
                p_a, p_b = w * s_a * e1 * f1, w * s_b * e1 * f1
                res = 0.0
            else:
                t0, s0, ex0 = prev
                e0, f0 = float(s0[ie]), float(s0[jf])
                p_a, p_b = step_powers(e0, e1, f0, f1)
                p_a, p_b = w * s_a * p_a, w * s_b * p_b  # as each side sees its port
                # residual = ∫ (P_out − P_in) dt = −∫ (power into A + power into B) dt
                res = float(ex0[3 * k + 2]) - (t - t0) * (pi_a * p_a + pi_b * p_b)
            extra += [p_a, p_b, res]
        ext = np.asarray(extra, dtype=float)
        self._prev = (t, signals, ext)
        return t, np.concatenate([signals, ext])
