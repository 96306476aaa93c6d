"""Surrogate JSON components: their pH model, ports, and an FMU exported on the fly (cached).

A component given as a surrogate file (``fmu_surrogate.ph.files``) brings its pH model, so the
monolithic algorithm can use it directly; its port ``i`` is the FMU input ``input_names[i]`` and
output ``output_names[i]`` (power ``yᵀu`` into the surrogate).  A drop-in surrogate
(:class:`~fmu_surrogate.ph.PortedSystem`) brings its wiring (:class:`~fmu_surrogate.ph.PortMap`,
used as it is by the monolithic form), its operating point and its initial rule: it starts at
its operating point, or (``initial="equilibrium"``) at the equilibrium of the inputs it sees at
the start, the operating point then the guess (:attr:`Component.initial
<fmu_surrogate.couple.system.Component.initial>`).  An initial state the system gives the
component (``x0``, in the TOML form too) wins over the file's rule: it starts there.
The parameters a system sets on a surrogate component are checked against the values the
surrogate was identified at (its provenance): equal ones are accepted and consumed, so a system
written for the FMU runs unchanged; another value is refused with what to do.  For libcosim runs
it is exported with :func:`fmu_surrogate.export.export_fmu` into a cache keyed by the SHA-256 of
the JSON file and of the exporter's sources, so an unchanged surrogate is exported once; the
exported FMU starts by its file's rule, from the parameters ``x_start[i]`` that
:func:`exported_start_values` sets where the system changed the operating point (in a libcosim
run, and as parameter bindings of an SSP archive, :func:`fmu_surrogate.couple.ssp.write_ssp`).
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from fmu_surrogate.couple.system import INITIAL_RULES, Component, CouplingError
from fmu_surrogate.ph import PortedSystem

__all__ = ["exported_start_values", "start_overrides", "surrogate_component", "surrogate_fmu"]


def surrogate_component(name: str, path: str | os.PathLike,
                        parameters: dict[str, float] | None = None, *,
                        x0: ArrayLike | None = None, initial: str | None = None) -> Component:
    """A component from a surrogate JSON file (FMU path resolved lazily by :func:`surrogate_fmu`).

    Parameters
    ----------
    name : str
    path : path
        The surrogate file.
    parameters : dict of str to float, optional
        Values of the FMU's parameters and inputs the system sets (checked against those the
        surrogate was identified at).
    x0 : array_like, shape (n,), optional
        An initial state of the surrogate's core given by the system; it starts there
        (``initial="state"``) unless ``initial`` says otherwise.  Default: the file's
        operating point.
    initial : {"state", "equilibrium"}, optional
        Where it starts (:attr:`Component.initial
        <fmu_surrogate.couple.system.Component.initial>`); default: ``"state"`` when ``x0`` is
        given, else the file's rule.

    Returns
    -------
    Component

    Raises
    ------
    CouplingError
        The file is not a readable surrogate; a parameter another than it was identified at;
        ``x0`` not one finite number per state; ``initial`` no rule.
    """
    from fmu_surrogate.ph import load

    path = Path(path)
    try:
        ph = load(path)
    except Exception as exc:  # ph.files raises SurrogateFileError, OSError, ...
        raise CouplingError(f"component {name!r}: cannot load surrogate {path}: {exc}") from exc
    parameters = _identified_parameters(name, path, ph, parameters)
    from fmu_surrogate.export.wiring import identified_at

    # an input nothing sets holds the source's start value (the exported FMU's start too)
    parameters = {**identified_at(ph, "input_starts"), **parameters}
    held = identified_at(ph, "held_inputs")
    for k, v in parameters.items():
        if k in held and not abs(float(v) - held[k]) <= 1e-12 * abs(held[k]):
            raise CouplingError(
                f"component {name!r}: input {k} = {float(v):g}, but it was {held[k]:g} in all the "
                f"data the surrogate {path.name} was identified from, so it holds for that value "
                f"only; harvest the FMU with {k} varied (--input {k}=...) and identify it "
                "again.")
    start, rule = _start(name, path, ph, x0, initial)
    if isinstance(ph, PortedSystem):
        p = ph.ports
        units = {n: u for n, u in zip(p.input_names + p.output_names,
                                      p.input_units + p.output_units) if u}
        return Component(name, None, dict(parameters or {}), ph=ph.system, wiring=ph.ports,
                         x0=start, surrogate=path, units=units, held_inputs=held, initial=rule)
    ports = {n: ("u", i, 1) for i, n in enumerate(ph.input_names)}
    ports.update({n: ("y", i, 1) for i, n in enumerate(ph.output_names)})
    return Component(name, None, dict(parameters or {}), ph=ph, ports=ports, surrogate=path,
                     held_inputs=held, x0=start, initial=rule)


def _start(name: str, path: Path, ph: object, x0: ArrayLike | None, initial: str | None
           ) -> tuple[np.ndarray | None, str]:
    """The component's initial state and rule: the system's, else the file's."""
    if initial is not None and initial not in INITIAL_RULES:
        raise CouplingError(f"component {name!r}: initial must be one of {INITIAL_RULES}, got "
                            f"{initial!r}.")
    own = getattr(ph, "x0", None)
    if x0 is None:
        rule = initial or getattr(ph, "initial", "state")
        return (None if own is None else np.array(own, dtype=float)), rule
    n = ph.system.n_states if isinstance(ph, PortedSystem) else ph.n_states
    x = np.array(x0, dtype=float).reshape(-1)
    if x.shape != (n,) or not np.all(np.isfinite(x)):
        raise CouplingError(f"component {name!r}: x0 must be {n} finite numbers (one per state "
                            f"of the surrogate {path.name}), got {np.shape(x0)}.")
    return x, initial or "state"


def start_overrides(component: Component) -> dict[str, object]:
    """How a surrogate component's start differs from its file's: ``{"x0": [...]}`` when its
    initial state is not the file's operating point, ``{"initial": rule}`` when its rule is not
    the file's (the keys :func:`surrogate_component` and the TOML form take).

    Parameters
    ----------
    component : Component
        From :func:`surrogate_component` (``surrogate`` set).

    Returns
    -------
    dict
    """
    from fmu_surrogate.ph import load

    ph = load(Path(component.surrogate))
    out: dict[str, object] = {}
    own = getattr(ph, "x0", None)
    if component.x0 is not None and (own is None or not np.array_equal(component.x0, own)):
        out["x0"] = [float(v) for v in np.asarray(component.x0, dtype=float).reshape(-1)]
    if component.initial != getattr(ph, "initial", "state") or (
            "x0" in out and component.initial != "state"):
        out["initial"] = component.initial
    return out


def exported_start_values(component: Component) -> dict[str, float]:
    """Start values of a surrogate component's exported FMU that make it start as the
    component does: ``x_start[i]`` (1-based) where the component's initial state differs from
    the file's operating point (its start, or under the equilibrium rule its guess).

    Parameters
    ----------
    component : Component
        From :func:`surrogate_component` (``surrogate`` set).

    Returns
    -------
    dict of str to float
        Empty when the component starts from its file's operating point.

    Raises
    ------
    CouplingError
        The component's rule is not its file's (the exported FMU starts by the file's rule):
        an initial state given to a surrogate that starts at an equilibrium, or the rule
        changed; run it monolithically, or save the surrogate with the rule wanted.  Raised
        for a libcosim run and for an SSP archive alike
        (:func:`~fmu_surrogate.couple.ssp.write_ssp`), which hold the exported FMU.
    """
    from fmu_surrogate.ph import load

    ph = load(Path(component.surrogate))
    rule = getattr(ph, "initial", "state")
    if component.initial != rule:
        raise CouplingError(
            f"component {component.name!r} starts by the rule initial={component.initial!r} "
            f"(an initial state given in the system wins over its file's rule), but its "
            f"exported FMU starts by its file's rule initial={rule!r}, which no start value "
            f"changes (libcosim runs it, an SSP archive holds it); run the system with "
            f"algorithm='monolithic' (write it with write_toml), or save the surrogate "
            f"{Path(component.surrogate).name} with initial={component.initial!r} "
            f"(PortedSystem.replace).")
    if component.x0 is None:
        return {}
    n = ph.system.n_states if isinstance(ph, PortedSystem) else ph.n_states
    own = np.asarray(getattr(ph, "x0", np.zeros(n)), dtype=float)
    x = np.asarray(component.x0, dtype=float).reshape(-1)
    return {f"x_start[{i + 1}]": float(v) for i, (v, o) in enumerate(zip(x, own)) if v != o}


def _identified_parameters(name: str, path: Path, ph: object,
                           parameters: dict[str, float] | None) -> dict[str, float]:
    """The parameters that remain to be set once those the surrogate was identified at are
    checked: a value it was identified at is accepted (a system written for the FMU runs
    unchanged), another one refused."""
    from fmu_surrogate.export.wiring import identified_at

    at = identified_at(ph)
    rest = {}
    for k, v in (parameters or {}).items():
        if k not in at:
            rest[k] = v
        elif not abs(float(v) - at[k]) <= 1e-12 * abs(at[k]):
            raise CouplingError(
                f"component {name!r}: {k} = {v:g}, but the surrogate {path.name} was identified at "
                f"{k} = {at[k]:g} and holds for that value only; harvest the FMU with --param "
                f"{k}={v:g} and identify it again, or set {k} = {at[k]:g}.")
    return rest


def surrogate_fmu(path: str | os.PathLike, cache_dir: str | os.PathLike | None = None) -> Path:
    """FMI 2.0 FMU of a surrogate JSON file, exported once per content of the file and of the
    exporter's sources.

    Raises
    ------
    fmu_surrogate.export.expressions.effort.ExportError
        The surrogate cannot be exported (NaN data, an effort kind without a C translation).
    """
    from fmu_surrogate.benchmarks.build import default_cache_dir
    from fmu_surrogate.export import export_fmu
    from fmu_surrogate.ph import load

    path = Path(path)
    digest = hashlib.sha256(path.read_bytes() + _exporter_digest()).hexdigest()[:16]
    out = Path(cache_dir or default_cache_dir()) / "surrogates" / f"{path.stem}-{digest}.fmu"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.{os.getpid()}.part")
        export_fmu(load(path), tmp, fmi_version=2)
        os.replace(tmp, out)
    return out


@cache
def _exporter_digest() -> bytes:
    """SHA-256 of the exporter's sources (Python, C, headers): an FMU exported by another
    version of the exporter (one that starts a surrogate differently, say) is not reused."""
    from fmu_surrogate import export

    h = hashlib.sha256()
    root = Path(export.__file__).parent
    for f in sorted(root.rglob("*")):
        if f.suffix in (".py", ".c", ".h") and f.is_file():
            h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.digest()
