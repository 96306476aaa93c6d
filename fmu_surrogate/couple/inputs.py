"""Driven inputs and extra recorded variables of a coupled system.

A driven input is an input of a component that no connection drives; it follows a signal of
:mod:`fmu_surrogate.fmu.signals`, written as on the command line (``"step:t0=0.1,after=12"``,
:func:`fmu_surrogate.fmu.signals.text.parse_signal`), as a number (a constant) or as a table
``{kind = "step", t0 = 0.1, after = 12}`` (:meth:`Signal.describe
<fmu_surrogate.fmu.signals.base.Signal.describe>`).  As in a harvest, the value at a
communication point ``t_k`` is held over the step ``[t_k, t_{k+1})`` (zero-order hold); the
monolithic algorithm holds it the same way.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from fmu_surrogate.couple.system import CouplingError, System, _split
from fmu_surrogate.fmu.errors import ExperimentError, SignalError
from fmu_surrogate.fmu.signals.base import Signal
from fmu_surrogate.fmu.signals.standard import Constant, check_signal_fits, signal_from_description
from fmu_surrogate.fmu.signals.text import parse_signal

__all__ = ["check_cover", "check_driven", "check_recorded", "driven_signal"]


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


def _variable(system: System, infos: Mapping[str, Any], ref: str, role: str) -> Any:
    comp, name = _split(ref)
    if comp not in system.components:
        raise CouplingError(f"{role} {ref}: the system has no component {comp!r}; components: "
                            f"{sorted(system.components)}.")
    vs = infos[comp].variables
    if name not in vs:
        close = difflib.get_close_matches(name, list(vs), n=3)
        raise CouplingError(f"{role} {ref}: component {comp!r} has no variable {name!r}."
                            + (f" Did you mean {close}?" if close else ""))
    return vs[name]


def check_driven(system: System, infos: Mapping[str, Any]) -> None:
    """Refuse a driven input that is unknown, not a Real input, connected, or also a start value.

    Raises
    ------
    CouplingError
        Naming the input and the fix.
    """
    targets = {".".join(c.target): c for c in system.all_connections()}
    for ref in system.inputs:
        v = _variable(system, infos, ref, "driven input")
        if v.causality != "input":
            comp = ref.partition(".")[0]
            inputs = sorted(n for n, w in infos[comp].variables.items() if w.causality == "input")
            raise CouplingError(f"driven input {ref} has causality {v.causality!r}; only inputs "
                                f"follow a signal (inputs of {comp!r}: {inputs}). Record it with "
                                f"--record, or set a parameter in the component's parameters.")
        if v.type != "Real":
            raise CouplingError(f"driven input {ref} is of type {v.type}; signals drive Real "
                                "inputs only: set it as a start value in the component's "
                                "parameters instead.")
        if ref in targets:
            raise CouplingError(f"driven input {ref} is connected ({targets[ref]}); an input "
                                "takes one source: drop the signal or the connection.")
        comp, name = ref.split(".", 1)
        if name in system.components[comp].parameters:
            raise CouplingError(f"driven input {ref} also has a start value in the parameters "
                                f"of {comp!r}; the signal sets it: drop one of the two.")


def check_recorded(system: System, infos: Mapping[str, Any]) -> None:
    """Refuse a recorded variable that is unknown or not a Real.

    Raises
    ------
    CouplingError
        Naming the variable and the fix.
    """
    for ref in system.record:
        v = _variable(system, infos, ref, "recorded variable")
        if v.type != "Real":
            raise CouplingError(f"recorded variable {ref} is of type {v.type}; the result "
                                "dataset records Real variables: pick a Real one.")


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
