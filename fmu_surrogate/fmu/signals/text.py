"""Signals written as text: ``NAME=KIND:key=value,...`` (the ``--input`` option of the command
line, the driven inputs of a coupled system's description).

Values: a number (``t0=1``), a word (``method=logarithmic``), a list with ``;`` between the items
(``frequencies=0.1;0.5;1``), a range ``START:STOP:N`` for a list (``N`` equally spaced values:
``frequencies=0.1:1:10``), and ``LOW:HIGH`` for a pair (``levels=-0.2:0.2``).  The kinds and
their parameters come from the signal classes (:meth:`Signal.parameters
<fmu_surrogate.fmu.signals.base.Signal.parameters>`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fmu_surrogate.fmu.errors import SignalError
from fmu_surrogate.fmu.signals.base import Signal
from fmu_surrogate.fmu.signals.standard import SIGNAL_KINDS, Constant, signal_from_description

__all__ = ["KIND_ALIASES", "parse_input_option", "parse_signal"]

#: short names accepted for some kinds
KIND_ALIASES = {"multisine": "schroeder_multisine", "schroeder": "schroeder_multisine",
                "noise": "band_limited_noise", "const": "constant"}

_SYNTAX = ("expected NAME=KIND:key=val,... (e.g. --input u=step:t0=1,after=2) or NAME=VALUE "
           "(a constant)")


def _number(text: str) -> Any:
    t = text.strip()
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return t


def _numbers(option: str, kind: str, key: str, items: list[str], form: str) -> list[float]:
    out = []
    for item in items:
        v = _number(item)
        if not isinstance(v, (int, float)):
            raise SignalError(f"{option}: {kind} parameter {key}: {item.strip()!r} is not a "
                              f"number; give {form}.")
        out.append(v)
    return out


def _value(option: str, kind: str, key: str, shape: str, text: str) -> Any:
    """One parameter value of the option, converted for a parameter of the given shape."""
    if shape == "pair":
        items = text.split(":") if ":" in text else text.split(";")
        if len(items) != 2:
            raise SignalError(f"{option}: {kind} parameter {key} takes two numbers LOW:HIGH (or "
                              f"LOW;HIGH), got {text!r}.")
        return _numbers(option, kind, key, items, "two numbers LOW:HIGH (e.g. -0.2:0.2)")
    if shape == "list":
        if ":" in text:
            parts = text.split(":")
            n = _number(parts[-1]) if len(parts) == 3 else None
            if not isinstance(n, int) or n < 1:
                raise SignalError(f"{option}: {kind} parameter {key} takes a list separated by "
                                  f"';' (e.g. 0.1;0.5;1) or a range START:STOP:N with N >= 1 "
                                  f"values, got {text!r}.")
            lo, hi = _numbers(option, kind, key, parts[:2], "numbers START:STOP:N")
            return np.linspace(lo, hi, n).tolist()
        return _numbers(option, kind, key, text.split(";"),
                        "numbers separated by ';' (e.g. 0.1;0.5;1)")
    if ":" in text or ";" in text:
        raise SignalError(f"{option}: {kind} parameter {key} takes one value, got {text!r} (';' "
                          f"separates list items and ':' ranges, for parameters that take "
                          f"them).")
    return _number(text)


def parse_input_option(text: str, option: str = "--input") -> tuple[str, Signal]:
    """Parse ``NAME=KIND:key=val,...`` or ``NAME=VALUE`` into ``(name, Signal)``.

    Parameters
    ----------
    text : str
        The option's value.
    option : str
        The option's name, for the messages.

    Returns
    -------
    name : str
        The input variable.
    signal : Signal
        The signal (a :class:`~fmu_surrogate.fmu.signals.standard.Constant` for ``NAME=VALUE``).

    Raises
    ------
    SignalError
        Naming the option, the kind and the offending text, with the expected syntax.
    """
    where = f"{option} {text!r}"
    name, eq, rhs = text.partition("=")
    name, rhs = name.strip(), rhs.strip()
    if not eq or not name or not rhs:
        raise SignalError(f"{where}: {_SYNTAX}; kinds: {', '.join(sorted(SIGNAL_KINDS))}.")
    return name, parse_signal(rhs, where)


def parse_signal(rhs: str, where: str = "signal") -> Signal:
    """Parse ``KIND:key=val,...`` or ``VALUE`` (a constant) into a signal.

    Parameters
    ----------
    rhs : str
        The text after ``NAME=`` of :func:`parse_input_option`.
    where : str
        What the text is (an option and its value, a key of a file), for the messages.

    Returns
    -------
    Signal
        The signal (a :class:`~fmu_surrogate.fmu.signals.standard.Constant` for ``VALUE``).

    Raises
    ------
    SignalError
        Naming ``where``, the kind and the offending text, with the expected syntax.
    """
    syntax = f"{_SYNTAX}; kinds: {', '.join(sorted(SIGNAL_KINDS))}"
    rhs = str(rhs).strip()
    if ":" not in rhs:
        v = _number(rhs)
        if not isinstance(v, (int, float)):
            raise SignalError(f"{where}: {rhs!r} is neither a number nor KIND:...; {syntax}.")
        return Constant(float(v))
    kind, _, rest = rhs.partition(":")
    kind = KIND_ALIASES.get(kind.strip().lower(), kind.strip().lower())
    cls = SIGNAL_KINDS.get(kind)
    if cls is None:
        raise SignalError(f"{where}: unknown signal kind {kind!r}; {syntax}.")
    shapes = {p.name: p.shape for p in cls.parameters()}
    d: dict[str, Any] = {"kind": kind}
    for tok in filter(None, (s.strip() for s in rest.split(","))):
        k, eq2, v = tok.partition("=")
        k = k.strip()
        if not eq2 or not k:
            raise SignalError(f"{where}: {tok!r} is not key=value; {syntax}.")
        # an unknown key is reported by signal_from_description with the allowed ones
        d[k] = _value(where, kind, k, shapes.get(k, "scalar"), v.strip())
    try:
        return signal_from_description(d)
    except SignalError as exc:
        raise SignalError(f"{where}: {exc}") from None
