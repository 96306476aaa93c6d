"""The ``--input NAME=KIND:key=value,...`` option of ``harvest``, ``validate`` and ``couple``,
and the warning ``harvest`` and ``identify`` print when the inputs of a dataset are not excited
apart (:func:`proportional_warnings`).

The syntax is read by :func:`fmu_surrogate.fmu.signals.text.parse_input_option` (one parser for
the command line and the system descriptions); the help text of the kinds and their parameters
comes from the signal classes (:meth:`Signal.parameters
<fmu_surrogate.fmu.signals.base.Signal.parameters>`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np

from fmu_surrogate.fmu.signals.text import KIND_ALIASES, parse_input_option

__all__ = ["KIND_ALIASES", "input_help", "parse_input_option", "proportional_warnings"]


def proportional_warnings(ds: Any, inputs: Sequence[str], runs: Sequence[int] | None = None
                          ) -> list[str]:
    """One line per pair of inputs no run excites apart
    (:func:`~fmu_surrogate.fmu.dataset.proportional_inputs`): what it costs and what to
    harvest instead.

    Parameters
    ----------
    ds : xarray.Dataset
    inputs : sequence of str
    runs : sequence of int, optional
        Run labels (default: the successful runs).

    Returns
    -------
    list of str
    """
    from fmu_surrogate.fmu.dataset import proportional_inputs

    lines = []
    for a, b, one in proportional_inputs(ds, inputs, runs):
        how = ("with the same ratio in every run: their effects cannot be told apart" if one
               else "with other ratios in other runs only: a fit tells their effects apart by "
               "those few ratios, poorly and slowly where the part is nonlinear")
        lines.append(f"warning: inputs {a} and {b} change as one signal scaled in every run, "
                     f"{how}; harvest each with a signal of its own (other lines of a "
                     "multisine, another noise seed or phase) or runs that excite one alone")
    return lines


def input_help() -> str:
    """The signal kinds and their parameters, for the epilog of ``--help``.

    Returns
    -------
    str
        One block per kind: its summary line, then ``name (type, default): meaning`` lines.
    """
    from fmu_surrogate.fmu.signals.standard import SIGNAL_KINDS

    aliases: dict[str, list[str]] = {}
    for short, kind in KIND_ALIASES.items():
        aliases.setdefault(kind, []).append(short)
    lines = [("--input kinds (NAME=KIND:key=value,...; lists: a;b;c or START:STOP:N; "
              "pairs: LOW:HIGH):")]
    for kind, cls in SIGNAL_KINDS.items():
        summary = (cls.__doc__ or "").strip().splitlines()[0].replace("``", "")
        alias = f" (also {', '.join(aliases[kind])})" if kind in aliases else ""
        lines.extend(textwrap.wrap(f"{kind}{alias}: {summary}", width=96, initial_indent="  ",
                                   subsequent_indent="      "))
        for p in cls.parameters():
            default = p.default.tolist() if isinstance(p.default, np.ndarray) else p.default
            meaning = p.meaning.replace("``", "")
            lines.extend(textwrap.wrap(f"{p.name} ({p.type}, default {default}): {meaning}",
                                       width=96, initial_indent="      ",
                                       subsequent_indent="          "))
    return "\n".join(lines)
