"""The hand-written TOML form of a system description.

::

    [components.chain]
    fmu = "msd_chain_n_cells2.fmu"          # relative to this file
    parameters = { damper = 1.0 }

    [components.spring]                     # a pH surrogate: exported to an FMU on the fly
    surrogate = "spring.json"
    parameters = { q0 = 0.5 }
    x0 = [0.1]                              # optional: its initial state, which wins over the
                                            # file's rule (initial = "equilibrium" keeps the
                                            # rule, x0 then the guess)

    [[connections]]                         # plain signal connections
    from = "a.y"
    to = "b.u"
    factor = 1000.0                         # optional: b.u = factor · a.y + offset
    offset = 0.0                            # (SSP's linear transformation)

    [[bonds]]                               # power bonds: effort one way, flow the other
    name = "shaft"
    effort = ["spring.F", "chain.F1"]
    flow = ["chain.v1", "spring.v"]
    power_into = { chain = 1, spring = -1 }
    # effort_factor = -1                    # optional: invert the effort (or flow_factor the
                                            # flow) where both sides take power in

    [inputs]                                # unconnected inputs driven by a signal
    "chain.F2" = "step:t0=0.1,after=2"      # as --input; or a number, or a table:
    # "chain.F2" = { kind = "chirp", f0 = 0.1, f1 = 5, t1 = 10 }

``record = ["chain.q1", ...]`` (further variables to record) goes before the first table.
"""

from __future__ import annotations

import os
from pathlib import Path

import tomllib

from fmu_surrogate.couple.inputs import driven_signal
from fmu_surrogate.couple.system import Component, Connection, CouplingError, PowerBond, System

__all__ = ["read_toml", "write_toml"]


def read_toml(path: str | os.PathLike) -> System:
    """Read a system from its TOML form (FMU paths relative to the file).

    Raises
    ------
    CouplingError
        Unreadable TOML or a missing/ill-typed key (named).
    """
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CouplingError(f"cannot read system file {path}: {exc}") from exc
    from fmu_surrogate.couple.surrogates import surrogate_component

    comps = {}
    for name, c in (doc.get("components") or {}).items():
        params = {k: float(v) for k, v in (c.get("parameters") or {}).items()}
        if "surrogate" in c:
            p = Path(c["surrogate"])
            x0, initial = c.get("x0"), c.get("initial")
            if not (x0 is None or isinstance(x0, list)) or not (initial is None
                                                                or isinstance(initial, str)):
                raise CouplingError(f"component {name!r} in {path}: x0 must be a list of "
                                    "numbers (its initial state) and initial a string "
                                    "(\"state\" or \"equilibrium\").")
            comps[name] = surrogate_component(name, p if p.is_absolute() else path.parent / p,
                                              params, x0=x0, initial=initial)
            continue
        if "x0" in c or "initial" in c:
            raise CouplingError(f"component {name!r} in {path}: x0 and initial set where a "
                                "surrogate starts; an FMU starts as its own initialisation "
                                "decides (set its parameters instead).")
        if "fmu" not in c:
            raise CouplingError(f"component {name!r} in {path} needs fmu = \"path/to/model.fmu\" "
                                "or surrogate = \"path/to/surrogate.json\".")
        p = Path(c["fmu"])
        comps[name] = Component(name, p if p.is_absolute() else path.parent / p, params)
    if not comps:
        raise CouplingError(f"{path} defines no [components.<name>] table.")
    try:
        conns = [Connection.parse(c["from"], c["to"], _number(c, "factor", 1.0),
                                  _number(c, "offset", 0.0))
                 for c in doc.get("connections", [])]
        bonds = [PowerBond(str(b.get("name", f"bond{i + 1}")),
                           Connection.parse(*b["effort"], _number(b, "effort_factor", 1.0)),
                           Connection.parse(*b["flow"], _number(b, "flow_factor", 1.0)),
                           dict(b["power_into"]))
                 for i, b in enumerate(doc.get("bonds", []))]
    except (KeyError, TypeError, ValueError) as exc:
        raise CouplingError(f"{path}: a connection needs from/to (and numbers as factor and "
                            f"offset), a bond needs effort = [from, to], flow = [from, to] and "
                            f"power_into = {{a = 1, b = -1}} ({exc}).") from exc
    inputs = doc.get("inputs") or {}
    record = doc.get("record") or []
    if not isinstance(inputs, dict) or not isinstance(record, list):
        raise CouplingError(f"{path}: [inputs] must be a table of \"component.variable\" = signal "
                            "and record a list of \"component.variable\" (before the first "
                            "table).")
    driven = {str(k): driven_signal(str(k), v, str(path)) for k, v in inputs.items()}
    return System(comps, conns, bonds, driven, [str(r) for r in record])


def _number(table: dict, key: str, default: float) -> float:
    v = table.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise CouplingError(f"{key} = {v!r} is not a number")
    return float(v)


def _q(s: object) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _value(v: object) -> str:
    if isinstance(v, str):
        return _q(v)
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return repr(float(v)) if isinstance(v, float) else str(int(v))


def write_toml(system: System, path: str | os.PathLike) -> Path:
    """Write a system in TOML form (a few fixed tables, so no TOML library is needed); a
    surrogate component's start is written where it is not its file's (``x0``, ``initial``)."""
    from fmu_surrogate.couple.surrogates import start_overrides

    path = Path(path)
    lines = []
    if system.record:
        lines += ["record = " + _value(list(system.record)), ""]
    for name, c in system.components.items():
        lines.append(f"[components.{name}]")
        if c.surrogate is not None:
            lines.append(f"surrogate = {_q(Path(c.surrogate).resolve())}")
        else:
            lines.append(f"fmu = {_q(c.path.resolve())}")
        if c.parameters:
            lines.append("parameters = { " + ", ".join(f"{_q(k)} = {float(v)!r}"
                                                      for k, v in c.parameters.items()) + " }")
        if c.surrogate is not None:  # where it starts, when not as its file says
            lines += [f"{k} = {_value(v)}" for k, v in start_overrides(c).items()]
        lines.append("")
    for c in system.connections:
        lines += ["[[connections]]", f"from = {_q('.'.join(c.source))}",
                  f"to = {_q('.'.join(c.target))}"]
        lines += [f"{k} = {v!r}" for k, v in (("factor", c.factor), ("offset", c.offset))
                  if v != (1.0 if k == "factor" else 0.0)] + [""]
    for b in system.bonds:
        lines += ["[[bonds]]", f"name = {_q(b.name)}",
                  f"effort = [{_q('.'.join(b.effort.source))}, {_q('.'.join(b.effort.target))}]",
                  f"flow = [{_q('.'.join(b.flow.source))}, {_q('.'.join(b.flow.target))}]",
                  "power_into = { " + ", ".join(f"{_q(k)} = {int(v)}"
                                                for k, v in b.power_into.items()) + " }"]
        lines += [f"{k}_factor = {c.factor!r}" for k, c in (("effort", b.effort),
                                                            ("flow", b.flow)) if c.factor != 1.0]
        lines.append("")
    for ref, sig in system.inputs.items():
        lines += [f"[inputs.{_q(ref)}]"] + [f"{k} = {_value(v)}" for k, v in sig.describe().items()
                                            if v is not None] + [""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
