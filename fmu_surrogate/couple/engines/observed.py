"""Which variables a coupled run observes after every step (:func:`observed_names`), and which of
them no connection touches (:func:`unconnected`)."""

from __future__ import annotations

from collections.abc import Sequence

from fmu_surrogate.couple.system import System
from fmu_surrogate.couple.validation import ComponentInfo, fmi2_type

__all__ = ["observed_names", "unconnected"]


def observed_names(system: System, infos: dict[str, ComponentInfo]) -> list[str]:
    """``"component.variable"`` of every connected Real variable (in connection order), then the
    driven inputs and the recorded variables (``system.inputs``, ``system.record``)."""
    names: dict[str, None] = {}
    for c in system.all_connections():
        for comp, var in (c.source, c.target):
            if fmi2_type(infos[comp].variables[var]) == "Real":
                names.setdefault(f"{comp}.{var}", None)
    for ref in [*system.inputs, *system.record]:
        names.setdefault(ref, None)
    return list(names)


def unconnected(system: System, observed: Sequence[str]) -> list[int]:
    """Positions in ``observed`` of the variables no connection touches."""
    ends = {".".join(r) for c in system.all_connections() for r in (c.source, c.target)}
    return [k for k, n in enumerate(observed) if n not in ends]


