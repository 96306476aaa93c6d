"""Coupled systems of FMUs and surrogates: SSP/TOML descriptions, runs on libcosim, energy per bond.

>>> from fmu_surrogate import couple                                  # doctest: +SKIP
>>> system = couple.load_system("system.ssp")                        # or system.toml
>>> ds = couple.run(system, stop_time=10.0, step=0.01, algorithm="ecco")
>>> ds["bond:shaft:residual"]                     # ∫(P_out − P_in) dt of every power bond
>>> sw = couple.sweep(system, [{"spring.k": k} for k in (1.0, 4.0)], 10.0, 0.01,
...                   out="sweep.nc")                 # isolated workers, resumable, run × time
"""

from fmu_surrogate.couple.descriptions import load_system
from fmu_surrogate.couple.running import ALGORITHMS, ECCO_DEFAULTS, bond_energy, run
from fmu_surrogate.couple.ssp import read_ssp, write_ssp
from fmu_surrogate.couple.surrogates import surrogate_component, surrogate_fmu
from fmu_surrogate.couple.sweep import sweep
from fmu_surrogate.couple.system import Component, Connection, CouplingError, PowerBond, System
from fmu_surrogate.couple.toml_form import read_toml, write_toml
from fmu_surrogate.couple.validation import validate

__all__ = [
    "ALGORITHMS",
    "ECCO_DEFAULTS",
    "Component",
    "Connection",
    "CouplingError",
    "PowerBond",
    "System",
    "bond_energy",
    "load_system",
    "read_ssp",
    "read_toml",
    "run",
    "surrogate_component",
    "surrogate_fmu",
    "sweep",
    "validate",
    "write_ssp",
    "write_toml",
]
