"""Surrogate JSON components: their pH model, ports, and an FMU exported on the fly (cached).

A component given as a surrogate file (``fmu_surrogate.ph.files``) brings its pH model, so the
monolithic algorithm can use it directly; its port ``i`` is the FMU input ``input_names[i]`` and
output ``output_names[i]`` (power ``yᵀu`` into the surrogate).  A drop-in surrogate
(:class:`~fmu_surrogate.ph.PortedSystem`) brings its wiring: each external variable must be one
pH port with a sign (``Tu``, ``Ty`` entries ±1, no offsets, no state read-out) for the monolithic
form, and its operating point is the component's initial state.  For libcosim runs it is exported
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
    if isinstance(ph, PortedSystem):
        ports = _signed_ports(name, ph)
        p = ph.ports
        units = {n: u for n, u in zip(p.input_names + p.output_names,
                                      p.input_units + p.output_units) if u}
        return Component(name, None, dict(parameters or {}), ph=ph.system, ports=ports,
                         x0=np.array(ph.x0), surrogate=path, units=units)
    ports = {n: ("u", i, 1) for i, n in enumerate(ph.input_names)}
    ports.update({n: ("y", i, 1) for i, n in enumerate(ph.output_names)})
    return Component(name, None, dict(parameters or {}), ph=ph, ports=ports, surrogate=path)


def _signed_ports(name: str, ported: PortedSystem) -> dict[str, tuple[str, int, int]]:
    """FMU variable -> (kind, pH port, sign) of a wiring that is a signed selection of ports."""
    p = ported.ports
    fix = "use a co-simulation algorithm with the exported FMU instead."
    if np.any(p.cu):
        raise CouplingError(f"component {name!r} has internal constant sources (PortMap.cu); the "
                            f"monolithic form holds free ports at 0: {fix}")
    out: dict[str, tuple[str, int, int]] = {}
    rows = [("u", var, p.Tu[:, j], False) for j, var in enumerate(p.input_names)]
    rows += [("y", var, p.Ty[j], bool(p.Cx[j].any() or p.Du[j].any() or p.cy[j]))
             for j, var in enumerate(p.output_names)]
    for kind, var, row, affine in rows:
        nz = np.flatnonzero(row)
        if affine or nz.size != 1 or abs(row[nz[0]]) != 1.0:
            raise CouplingError(f"component {name!r}: {var!r} is not one pH port with a sign ±1 "
                                f"(it has an offset, reads states or mixes ports): {fix}")
        out[var] = (kind, int(nz[0]), int(row[nz[0]]))
    return out


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
