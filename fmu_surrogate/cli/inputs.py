"""The ``--input NAME=KIND:key=value,...`` option of ``harvest``, ``validate`` and ``couple``.

The syntax is read by :func:`fmu_surrogate.fmu.signals.text.parse_input_option` (one parser for
the command line and the system descriptions); the help text of the kinds and their parameters
comes from the signal classes (:meth:`Signal.parameters
<fmu_surrogate.fmu.signals.base.Signal.parameters>`).
"""

from __future__ import annotations

import textwrap

import numpy as np

from fmu_surrogate.fmu.signals.text import KIND_ALIASES, parse_input_option

__all__ = ["KIND_ALIASES", "input_help", "parse_input_option"]


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
