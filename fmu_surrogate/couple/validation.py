"""Check a system against its components' model descriptions before any FMU runs.

Every message names the component and variable and says what to do.  Algebraic loops are
found from the declared output dependencies (``ModelStructure``); an output without a
``dependencies`` list is taken as free of direct feedthrough (co-simulation FMUs rarely declare
it; FMI 2.0 would mean "depends on every input", which would flag every bond).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from fmpy import read_model_description

from fmu_surrogate.couple.system import Connection, CouplingError, System, _split

__all__ = ["ComponentInfo", "check_bond", "check_driven", "check_recorded", "describe", "fmi2_type",
           "validate"]


@dataclass(frozen=True)
class ComponentInfo:
    """Variables of one component FMU: ``name -> fmpy ScalarVariable``; feedthrough pairs;
    whether it is a co-simulation FMU (else model exchange only)."""

    fmi_version: str
    variables: dict[str, Any]
    feedthrough: dict[str, tuple[str, ...]]  # output -> inputs it depends on directly
    co_simulation: bool = True

    @property
    def libcosim_loads(self) -> bool:
        """Whether libcosim can load it: an FMI 1.0 or 2.0 co-simulation FMU (else the fixed-step
        master on fmpy runs it, :mod:`fmu_surrogate.couple.engines.fmpy_master`)."""
        return self.co_simulation and self.fmi_version.startswith(("1", "2"))


def describe(path: Any) -> ComponentInfo:
    """Read a component's model description (no FMU code runs).

    Raises
    ------
    CouplingError
        The file is not a readable FMU.
    """
    try:
        md = read_model_description(str(path))
    except Exception as exc:  # fmpy raises zipfile, lxml, KeyError, ... (no common base)
        raise CouplingError(f"cannot read the model description of {path}: {exc}; "
                            "check that the file is an FMU.") from exc
    variables = {v.name: v for v in md.modelVariables}
    feed = {}
    for o in md.outputs:
        deps = o.dependencies or []
        feed[o.variable.name] = tuple(d.name for d in deps if d.causality == "input")
    return ComponentInfo(md.fmiVersion, variables, feed, md.coSimulation is not None)


def _var(system: System, infos: dict[str, ComponentInfo], ref: tuple[str, str],
         want: str | None, role: str) -> Any:
    """The variable ``ref``; with ``want``, of that causality (a connection's end)."""
    comp, name = ref
    if comp not in system.components:
        raise CouplingError(f"{role} names component {comp!r}, which the system does not have; "
                            f"components: {sorted(system.components)}.")
    vs = infos[comp].variables
    if name not in vs:
        close = difflib.get_close_matches(name, list(vs), n=3)
        hint = f" Did you mean {close}?" if close else ""
        raise CouplingError(f"{role}: component {comp!r} has no variable {name!r}.{hint}")
    v = vs[name]
    if want is not None and v.causality != want:
        raise CouplingError(f"{role}: {comp}.{name} has causality {v.causality!r}, but a "
                            f"connection {'starts at an output' if want == 'output' else 'ends at an input'}; "
                            f"connect an {want} of {comp!r} instead.")
    return v


#: FMI 3.0 types as the FMI 2.0 type they connect with (an FMI 3.0 component may join an FMI
#: 2.0 one on fmu-surrogate's own master).
_FMI2_TYPE = {"Float64": "Real", "Float32": "Real", "Int8": "Integer", "UInt8": "Integer",
              "Int16": "Integer", "UInt16": "Integer", "Int32": "Integer", "UInt32": "Integer",
              "Int64": "Integer", "UInt64": "Integer"}


def fmi2_type(variable: Any) -> str:
    """The FMI 2.0 type of a model variable: ``Real``, ``Integer``, ``Boolean``, … (an FMI 3.0
    ``Float64`` is ``Real``, an ``Int32`` ``Integer``).

    Parameters
    ----------
    variable : fmpy ScalarVariable
    """
    return _FMI2_TYPE.get(variable.type, variable.type)


def _check_connection(system: System, infos: dict[str, ComponentInfo], c: Connection) -> None:
    s = _var(system, infos, c.source, "output", f"connection {c}")
    t = _var(system, infos, c.target, "input", f"connection {c}")
    ks, kt = fmi2_type(s), fmi2_type(t)
    if ks != kt:
        raise CouplingError(f"connection {c}: type mismatch, {'.'.join(c.source)} is {s.type} "
                            f"but {'.'.join(c.target)} is {t.type}; connect variables of one type.")
    if c.transformed and ks != "Real":
        raise CouplingError(f"connection {c}: a factor or an offset applies to Real variables "
                            f"only, and {'.'.join(c.source)} is {s.type}; connect it plainly.")


def _check_loops(system: System, infos: dict[str, ComponentInfo]) -> None:
    edges: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for c in system.all_connections():
        edges.setdefault(c.source, []).append(c.target)
    for comp, info in infos.items():
        for out, ins in info.feedthrough.items():
            for i in ins:
                edges.setdefault((comp, i), []).append((comp, out))
    state: dict[tuple[str, str], int] = {}
    stack_path: list[tuple[str, str]] = []

    def visit(node: tuple[str, str]) -> None:
        state[node] = 1
        stack_path.append(node)
        for nxt in edges.get(node, []):
            if state.get(nxt) == 1:
                cycle = stack_path[stack_path.index(nxt):] + [nxt]
                raise CouplingError(
                    "algebraic loop of direct feedthrough: "
                    + " -> ".join(".".join(n) for n in cycle)
                    + "; libcosim exchanges values once per step (Jacobi), so it would iterate "
                    "the loop once per step instead of solving it, which diverges when the "
                    "loop's gain is 1 or more. Break it with a component that has a state on "
                    "the path, or give the components their pH models (surrogates): the "
                    "monolithic algorithm solves the loop, and libcosim runs it when its gain "
                    "is below 1.")
            if nxt not in state:
                visit(nxt)
        stack_path.pop()
        state[node] = 2

    for node in list(edges):
        if node not in state:
            visit(node)


def check_bond(b: Any) -> None:
    """Refuse a bond whose connections do not oppose or whose sign convention is not skew."""
    a, c = b.effort.source[0], b.effort.target[0]
    if (b.flow.source[0], b.flow.target[0]) != (c, a):
        raise CouplingError(f"power bond {b.name!r}: the effort goes {a} -> {c}, so the flow must "
                            f"go {c} -> {a}; got {b.flow}.")
    if set(b.power_into) != {a, c}:
        raise CouplingError(f"power bond {b.name!r}: power_into must give a sign for {a!r} and "
                            f"{c!r}, got {sorted(b.power_into)}.")
    signs = {k: int(v) for k, v in b.power_into.items()}
    if any(s not in (-1, 1) for s in signs.values()):
        raise CouplingError(f"power bond {b.name!r}: power_into signs must be +1 or -1, got {signs}.")
    for con in (b.effort, b.flow):
        if con.offset or abs(con.factor) != 1.0:
            raise CouplingError(
                f"power bond {b.name!r}: its connection {con} may invert the sign (factor -1) but "
                f"not scale or shift the value (a factor other than ±1 or an offset would "
                f"create or destroy power); convert units inside the components, or connect "
                f"the variables as plain [[connections]] outside a bond.")
    (pa, fa), (pb, fb) = b.sides()
    if pa * fa != -pb * fb:
        inverted = [n for n, con in (("effort", b.effort), ("flow", b.flow)) if con.factor < 0]
        raise CouplingError(
            f"power bond {b.name!r} between {a!r} and {c!r} is not skew: with power_into "
            f"{signs} and {' and '.join(inverted) or 'no'} connection inverted, effort·flow "
            f"counts as power {'into' if pa * fa > 0 else 'out of'} both sides, so the coupling "
            f"creates energy (Ĉ symmetric). Set power_into to the sides' own conventions and "
            f"invert one connection where both take power in (factor -1: effort_factor = -1 in "
            f"the TOML form), none where one gives it.")


def check_driven(system: System, infos: dict[str, ComponentInfo]) -> None:
    """Refuse a driven input that is unknown, not a Real input, connected, or also a start value.

    Raises
    ------
    CouplingError
        Naming the input and the fix.
    """
    targets = {".".join(c.target): c for c in system.all_connections()}
    for ref in system.inputs:
        v = _var(system, infos, _split(ref), None, f"driven input {ref}")
        if v.causality != "input":
            comp = ref.partition(".")[0]
            inputs = sorted(n for n, w in infos[comp].variables.items() if w.causality == "input")
            raise CouplingError(f"driven input {ref} has causality {v.causality!r}; only inputs "
                                f"follow a signal (inputs of {comp!r}: {inputs}). Record it with "
                                f"--record, or set a parameter in the component's parameters.")
        if fmi2_type(v) != "Real":
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


def check_recorded(system: System, infos: dict[str, ComponentInfo]) -> None:
    """Refuse a recorded variable that is unknown or not a Real.

    Raises
    ------
    CouplingError
        Naming the variable and the fix.
    """
    for ref in system.record:
        v = _var(system, infos, _split(ref), None, f"recorded variable {ref}")
        if fmi2_type(v) != "Real":
            raise CouplingError(f"recorded variable {ref} is of type {v.type}; the result "
                                "dataset records Real variables: pick a Real one.")


def validate(system: System, libcosim: bool = False, accept_loops: bool = False
             ) -> dict[str, ComponentInfo]:
    """Check names, causalities, types, parameters, loops, bond signs, driven and recorded variables.

    Parameters
    ----------
    system : System
    libcosim : bool
        Also refuse what libcosim cannot load (FMI 3.0 components).
    accept_loops : bool
        Accept algebraic loops of direct feedthrough (the monolithic algorithm solves them; a
        co-simulation runs one whose gain is known to be below 1,
        :func:`~fmu_surrogate.couple.monolithic.jacobi_loop_gain`).

    Returns
    -------
    dict of str to ComponentInfo
        The model descriptions read, by component name.

    Raises
    ------
    CouplingError
        The first problem found, naming component and variable.
    """
    infos = {}
    for name, comp in system.components.items():
        if comp.path is None or not comp.path.is_file():
            raise CouplingError(f"component {name!r}: FMU file {comp.path} not found; fix the path.")
        infos[name] = describe(comp.path)
        if libcosim and not infos[name].co_simulation:
            raise CouplingError(
                f"component {name!r} is a model-exchange FMU; libcosim co-simulates "
                "co-simulation FMUs only. Run the system on fmu-surrogate's own master "
                "(engine='fmpy', the default for such systems).")
        if libcosim and not infos[name].fmi_version.startswith(("1", "2")):
            # libcosimpy 0.0.6 returns a null slave for FMI 3.0 and then segfaults the host
            raise CouplingError(
                f"component {name!r} is an FMI {infos[name].fmi_version} FMU; libcosim "
                "co-simulates FMI 1.0 and 2.0 only (an FMI 3.0 slave crashes it). Export the "
                "component for FMI 2.0, or use algorithm='monolithic' with its pH surrogate.")
        for p in comp.parameters:
            v = infos[name].variables.get(p)
            if v is None:
                close = difflib.get_close_matches(p, list(infos[name].variables), n=3)
                raise CouplingError(f"component {name!r} has no parameter {p!r}."
                                    + (f" Did you mean {close}?" if close else ""))
            if v.causality not in ("parameter", "input") or v.variability == "constant":
                raise CouplingError(f"component {name!r}: {p!r} has causality {v.causality!r} "
                                    f"and variability {v.variability!r}; only parameters and "
                                    "inputs take start values.")
    targets: dict[tuple[str, str], Connection] = {}
    for c in system.all_connections():
        _check_connection(system, infos, c)
        if c.target in targets and targets[c.target] != c:
            raise CouplingError(f"input {'.'.join(c.target)} is driven twice ({targets[c.target]} "
                                f"and {c}); keep one connection.")
        targets[c.target] = c
    for b in system.bonds:
        check_bond(b)
    check_driven(system, infos)
    check_recorded(system, infos)
    if not accept_loops:
        _check_loops(system, infos)
    return infos
