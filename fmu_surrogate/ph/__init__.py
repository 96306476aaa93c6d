"""Port-Hamiltonian data model: structure checks, pH-DAE and linear pH systems."""

from fmu_surrogate.ph.structure import (
    StructureError,
    check_psd,
    check_skew,
    check_spd,
    psd_violation,
    skew_violation,
)
from fmu_surrogate.ph.system import PHDAE, LinearPH, PowerBalance

__all__ = [
    "PHDAE",
    "LinearPH",
    "PowerBalance",
    "StructureError",
    "check_psd",
    "check_skew",
    "check_spd",
    "psd_violation",
    "skew_violation",
]
