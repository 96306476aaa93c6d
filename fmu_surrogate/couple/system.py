"""Data model of a coupled system: components, connections and power bonds (docs/design.md §2)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["INITIAL_RULES", "Component", "Connection", "CouplingError", "PowerBond", "System"]

#: Where a component's pH model starts (:attr:`Component.initial`).
INITIAL_RULES = ("state", "equilibrium")


class CouplingError(FmuSurrogateError, ValueError):
    """A system description is invalid (names the component and variable and the fix)."""


@dataclass(frozen=True)
class Connection:
    """``source`` output value copied to ``target`` input, both as ``(component, variable)``.

    The target receives ``factor · source + offset`` (SSP's ``ssc:LinearTransformation``): a
    factor ``−1`` joins two components whose sign conventions differ (two ports that both
    count power *into* their component, as Modelica's flanges and pins do), a factor and an
    offset convert units (°C to K, mm to m).  The default is the plain copy.
    """

    source: tuple[str, str]
    target: tuple[str, str]
    factor: float = 1.0
    offset: float = 0.0

    def __post_init__(self) -> None:
        f, o = float(self.factor), float(self.offset)
        if not (math.isfinite(f) and math.isfinite(o)) or f == 0.0:
            raise CouplingError(f"connection {'.'.join(self.source)} -> "
                                f"{'.'.join(self.target)}: its factor must be a nonzero finite "
                                f"number and its offset finite, got factor={self.factor!r}, "
                                f"offset={self.offset!r}.")
        object.__setattr__(self, "factor", f)
        object.__setattr__(self, "offset", o)

    @staticmethod
    def parse(source: str, target: str, factor: float = 1.0, offset: float = 0.0) -> Connection:
        """Build from ``"component.variable"`` strings (the first dot separates)."""
        return Connection(_split(source), _split(target), factor, offset)

    @property
    def transformed(self) -> bool:
        """Whether the target receives other than the source's value (factor ≠ 1 or offset ≠ 0)."""
        return self.factor != 1.0 or self.offset != 0.0

    def __str__(self) -> str:
        plain = f"{'.'.join(self.source)} -> {'.'.join(self.target)}"
        if not self.transformed:
            return plain
        return plain + f" (× {self.factor:g}" + (f" + {self.offset:g})" if self.offset else ")")


def _split(ref: str) -> tuple[str, str]:
    comp, dot, var = str(ref).partition(".")
    if not dot or not comp or not var:
        raise CouplingError(f"{ref!r} is not 'component.variable'; write e.g. 'chain.F1'.")
    return comp, var


@dataclass(frozen=True)
class PowerBond:
    """Two connections that carry effort and flow between two components.

    Attributes
    ----------
    name : str
    effort, flow : Connection
        The effort goes one way, the flow the other way.
    power_into : dict of str to int
        For both components: ``+1`` when the product of its own port variables (its effort and
        its flow, as the component sees them) is power flowing *into* it, ``−1`` when it flows
        out.  Each connection may carry a factor ``±1`` (a sign inversion) and no offset; power
        is conserved (the coupling matrix ``Ĉ`` is skew) only if
        ``power_into[A] · flow.factor = −power_into[B] · effort.factor`` for the effort
        emitter ``A`` and the flow emitter ``B``: plain connections between a side that takes
        power and one that gives it, or one inverted connection between two sides that both
        take it.
    """

    name: str
    effort: Connection
    flow: Connection
    power_into: dict[str, int]

    @property
    def components(self) -> tuple[str, str]:
        """``(effort source, flow source)``."""
        return self.effort.source[0], self.flow.source[0]

    def sides(self) -> tuple[tuple[int, float], tuple[int, float]]:
        """``((power_into, factor of the flow it receives), (power_into, factor of the effort
        it receives))`` of the effort emitter and the flow emitter: the power into each side is
        ``power_into · factor · e · f`` for the emitted effort ``e`` and flow ``f``."""
        a, b = self.components
        return ((int(self.power_into[a]), self.flow.factor),
                (int(self.power_into[b]), self.effort.factor))


@dataclass
class Component:
    """One component: an FMU file (``path``) with parameter values.

    Attributes
    ----------
    name : str
    path : Path
        The FMU.
    parameters : dict of str to float
        Start values of parameters (or inputs).
    ph : object, optional
        The component's pH model (``LinearPH`` or ``NonlinearPH``) when it has one
        (surrogates); required by the monolithic algorithm.
    ports : dict of str to (str, int, int), optional
        FMU variable -> ``("u" or "y", port index, sign)``: the variable equals ``sign`` times that
        input/output of ``ph``.
    held_inputs : dict of str to float, optional
        Inputs a surrogate saw at one value only (its provenance): another value is refused.
    wiring : PortMap, optional
        A drop-in surrogate's wiring of its FMU variables to the ports of ``ph``
        (:class:`~fmu_surrogate.ph.PortMap`); replaces ``ports`` when given.
    x0 : array, optional
        Initial state of ``ph`` matching the FMU's parameters (default ``0``); with
        ``initial="equilibrium"`` the guess the equilibrium is searched from.
    initial : {"state", "equilibrium"}
        Where ``ph`` starts in a monolithic run: at ``x0`` (``"state"``, the default), or, as
        the vendor's FMU initialised in steady state that a drop-in surrogate with that rule
        replaces, at the equilibrium of the inputs it sees at the start — the other
        components' outputs through the connections, the driven inputs' first values
        (:meth:`~fmu_surrogate.couple.monolithic.Assembled.start`).  A surrogate file's
        component takes its file's rule unless the system gives it an initial state
        (:func:`~fmu_surrogate.couple.surrogates.surrogate_component`).
    surrogate : Path, optional
        The surrogate JSON file this component comes from (``path`` is then its exported FMU,
        or ``None`` until it is exported).
    units : dict of str to str, optional
        Declared units of its variables when no model description is read (a surrogate's
        wiring declares them).
    """

    name: str
    path: Path | None
    parameters: dict[str, float] = field(default_factory=dict)
    ph: Any = None
    ports: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    wiring: Any = None
    held_inputs: dict[str, float] = field(default_factory=dict)
    x0: Any = None
    surrogate: Path | None = None
    units: dict[str, str] = field(default_factory=dict)
    initial: str = "state"

    def __post_init__(self) -> None:
        if self.initial not in INITIAL_RULES:
            raise CouplingError(f"component {self.name!r}: initial must be one of "
                                f"{INITIAL_RULES} (start from x0, or at the equilibrium of its "
                                f"first inputs), got {self.initial!r}.")


@dataclass
class System:
    """A coupled system.

    Attributes
    ----------
    components : dict of str to Component
    connections : list of Connection
        Every connection, including those of the bonds.
    bonds : list of PowerBond
    inputs : dict of str to Signal
        Driven inputs: ``"component.variable"`` of an input that no connection drives, and the
        signal (:mod:`fmu_surrogate.fmu.signals`) it follows, held over each communication step
        (:mod:`fmu_surrogate.couple.inputs`).
    record : list of str
        ``"component.variable"`` of further variables to record (any causality), besides the
        connected and driven ones.
    """

    components: dict[str, Component]
    connections: list[Connection] = field(default_factory=list)
    bonds: list[PowerBond] = field(default_factory=list)
    inputs: dict[str, Any] = field(default_factory=dict)
    record: list[str] = field(default_factory=list)

    def all_connections(self) -> list[Connection]:
        """Connections plus the bonds' connections (each once)."""
        out = list(self.connections)
        for b in self.bonds:
            for c in (b.effort, b.flow):
                if c not in out:
                    out.append(c)
        return out
