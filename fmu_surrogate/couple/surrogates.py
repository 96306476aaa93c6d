"""Surrogate JSON components: their pH model, ports, and an FMU exported on the fly (cached).

A component given as a surrogate file (``fmu_surrogate.ph.files``) brings its pH model, so the
monolithic algorithm can use it directly; its port ``i`` is the FMU input ``input_names[i]`` and
output ``output_names[i]`` (power ``yᵀu`` into the surrogate).  A drop-in surrogate
(:class:`~fmu_surrogate.ph.PortedSystem`) brings its wiring (:class:`~fmu_surrogate.ph.PortMap`,
used as it is by the monolithic form) and its operating point, the component's initial state.
The parameters a system sets on a surrogate component are checked against the values the
surrogate was identified at (its provenance): equal ones are accepted and consumed, so a system
written for the FMU runs unchanged; another value is refused with what to do.  For libcosim runs it is exported
with :func:`fmu_surrogate.export.export_fmu` into a cache keyed by the SHA-256 of the JSON file,
so an unchanged surrogate is exported once.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from fmu_surrogate.couple.system import Component, CouplingError
from fmu_surrogate.ph import PortedSystem

__all__ = ["surrogate_component", "surrogate_fmu"]


def surrogate_component(name: str, path: str | os.PathLike,
                        parameters: dict[str, float] | None = None) -> Component:
    """A component from a surrogate JSON file (FMU path resolved lazily by :func:`surrogate_fmu`).

    Raises
    ------
    CouplingError
        The file is not a readable surrogate.
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
    if isinstance(ph, PortedSystem):
        p = ph.ports
        units = {n: u for n, u in zip(p.input_names + p.output_names,
                                      p.input_units + p.output_units) if u}
        return Component(name, None, dict(parameters or {}), ph=ph.system, wiring=ph.ports,
                         x0=np.array(ph.x0), surrogate=path, units=units, held_inputs=held)
    ports = {n: ("u", i, 1) for i, n in enumerate(ph.input_names)}
    ports.update({n: ("y", i, 1) for i, n in enumerate(ph.output_names)})
    return Component(name, None, dict(parameters or {}), ph=ph, ports=ports, surrogate=path,
                     held_inputs=held)


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
    """FMI 2.0 FMU of a surrogate JSON file, exported once per file content.

    Raises
    ------
    fmu_surrogate.export.expressions.effort.ExportError
        The surrogate cannot be exported (NaN data, an effort kind without a C translation).
    """
    from fmu_surrogate.benchmarks.build import default_cache_dir
    from fmu_surrogate.export import export_fmu
    from fmu_surrogate.ph import load

    path = Path(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    out = Path(cache_dir or default_cache_dir()) / "surrogates" / f"{path.stem}-{digest}.fmu"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.{os.getpid()}.part")
        export_fmu(load(path), tmp, fmi_version=2)
        os.replace(tmp, out)
    return out
