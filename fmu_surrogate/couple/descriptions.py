"""Reading a system description: SSP 1.0 (``.ssp``/``.ssd``) or the TOML form, chosen by suffix."""

from __future__ import annotations

from pathlib import Path

from fmu_surrogate.couple.system import CouplingError, System

__all__ = ["load_system"]


def load_system(path: str | Path) -> System:
    """Read a ``.ssp``/``.ssd`` or ``.toml`` system description."""
    from fmu_surrogate.couple.ssp import read_ssp
    from fmu_surrogate.couple.toml_form import read_toml

    p = Path(path)
    if p.suffix.lower() in (".ssp", ".ssd"):
        return read_ssp(p)
    if p.suffix.lower() == ".toml":
        return read_toml(p)
    raise CouplingError(f"{p}: give a .ssp, .ssd or .toml system description.")
