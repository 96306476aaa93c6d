"""Port-Hamiltonian systems: data model, structure checks, surrogate files, interconnection and
structure-preserving simulation.  Knows nothing of FMUs or of identification (docs/design.md §7).
"""

from fmu_surrogate.ph.dissipation import PowerDissipation
from fmu_surrogate.ph.efforts.convex import ConvexEffort
from fmu_surrogate.ph.efforts.kernel import KernelEffort
from fmu_surrogate.ph.efforts.known import PartlyKnownEffort, PolynomialEffort
from fmu_surrogate.ph.efforts.term import TermEffort
from fmu_surrogate.ph.files import SurrogateFileError, load, register_effort, save
from fmu_surrogate.ph.interconnect import CompositeEffort, feedback, interconnect, series, terminate
from fmu_surrogate.ph.nonlinear import NonlinearPH
from fmu_surrogate.ph.ports import PortedSystem, PortMap
from fmu_surrogate.ph.simulation.integrators import simulate
from fmu_surrogate.ph.simulation.newton import ConvergenceError
from fmu_surrogate.ph.simulation.ported_simulation import PortedTrajectory
from fmu_surrogate.ph.simulation.trajectory import Trajectory
from fmu_surrogate.ph.static_law import StaticLaw
from fmu_surrogate.ph.structure import (
    StructureError,
    check_psd,
    check_skew,
    check_spd,
    psd_violation,
    skew_violation,
)
from fmu_surrogate.ph.system import PHDAE, LinearEffort, LinearPH, PowerBalance, with_names

__all__ = [
    "PHDAE",
    "CompositeEffort",
    "ConvergenceError",
    "ConvexEffort",
    "KernelEffort",
    "LinearEffort",
    "LinearPH",
    "NonlinearPH",
    "PartlyKnownEffort",
    "PolynomialEffort",
    "PortMap",
    "PortedSystem",
    "PortedTrajectory",
    "PowerBalance",
    "PowerDissipation",
    "StaticLaw",
    "StructureError",
    "SurrogateFileError",
    "TermEffort",
    "Trajectory",
    "check_psd",
    "check_skew",
    "check_spd",
    "feedback",
    "interconnect",
    "load",
    "psd_violation",
    "register_effort",
    "save",
    "series",
    "simulate",
    "skew_violation",
    "terminate",
    "with_names",
]
