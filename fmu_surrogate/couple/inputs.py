"""Driven inputs of a coupled system: their signals from the written forms, their span.

A driven input is an input of a component that no connection drives; it follows a signal of
:mod:`fmu_surrogate.fmu.signals`, written as on the command line (``"step:t0=0.1,after=12"``,
:func:`fmu_surrogate.fmu.signals.text.parse_signal`), as a number (a constant) or as a table
``{kind = "step", t0 = 0.1, after = 12}`` (:meth:`Signal.describe
<fmu_surrogate.fmu.signals.base.Signal.describe>`).  As in a harvest, the value at a
communication point ``t_k`` is held over the step ``[t_k, t_{k+1})`` (zero-order hold); the
monolithic algorithm holds it the same way.  :func:`fmu_surrogate.couple.validation.validate`
checks that each is an unconnected Real input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fmu_surrogate.couple.system import CouplingError, System, _split
from fmu_surrogate.fmu.errors import ExperimentError, SignalError
from fmu_surrogate.fmu.signals.base import Signal
from fmu_surrogate.fmu.signals.standard import Constant, check_signal_fits, signal_from_description
from fmu_surrogate.fmu.signals.text import parse_signal

__all__ = ["check_cover", "driven_signal"]


def driven_signal(ref: str, value: Any, where: str) -> Signal:
    """The signal of a driven input from its written form.

    Parameters
    ----------
    ref : str
        ``"component.variable"``.
    value : str, float or mapping
        ``"KIND:key=val,..."`` or ``"VALUE"``, a number, or ``{"kind": ..., **parameters}``.
    where : str
        Where it was written (a file, an option), for the messages.

    Returns
    -------
    Signal

    Raises
    ------
    CouplingError
        The value is no signal (names the input, the text and the syntax).
    """
    try:
        _split(ref)
        if isinstance(value, Signal):
            return value
        if isinstance(value, bool):
            raise SignalError(f"{value!r} is no signal")
        if isinstance(value, (int, float)):
            return Constant(float(value))
        if isinstance(value, str):
            return parse_signal(value, f"{where} {ref}")
        if isinstance(value, Mapping):
            return signal_from_description(dict(value))
        raise SignalError(f"{type(value).__name__} is no signal")
    except SignalError as exc:
        raise CouplingError(f"{where}: driven input {ref}: {exc}; write e.g. "
                            f"\"{ref}\" = \"step:t0=0.1,after=12\", a number, or a table "
                            f"{{kind = \"step\", t0 = 0.1, after = 12}}.") from None


def check_cover(system: System, stop_time: float) -> None:
    """Refuse a driven input whose signal does not cover ``[0, stop_time]`` (a sampled one that
    ends early or starts late); a longer one is cut.

    Raises
    ------
    CouplingError
        Naming the input, the signal's span and the fix.
    """
    for ref, sig in system.inputs.items():
        try:
            check_signal_fits(sig, 0.0, float(stop_time), name=ref, allow_longer=True)
        except ExperimentError as exc:
            raise CouplingError(f"driven {exc}") from None
