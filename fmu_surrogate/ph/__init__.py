"""Port-Hamiltonian systems: data model, structure checks, surrogate files, interconnection and
structure-preserving simulation.  Knows nothing of FMUs or of identification (docs/design.md §7).

Interface notes:

* ``simulate(ported, t, u_ext, x0=None, hold=None)``: ``hold=None`` means ``"zoh"`` for a
  :class:`PortedSystem` (what a co-simulation importer gives an FMU) and ``"linear"`` for a bare
  system; it returns a :class:`PortedTrajectory`.  A bare system's ``x0`` defaults to the rest
  state ``0``; its :class:`Trajectory` has the steps' outputs ``ybar`` (those of the energy
  balance).
* The pH systems also have ``input_matrix`` (``G − P``), ``output_matrix`` (``G + P``), ``W``,
  ``D``, ``has_feedthrough``, ``output_from_effort(z, u)`` and ``dissipation_rate(z, u)``;
  ``output(x, u=None)`` needs ``u`` only when ``D ≠ 0`` (else a :class:`StructureError`).
* :func:`load` returns a :class:`PortedSystem` for a file saved from one, else the bare system.
"""

from fmu_surrogate.ph.dissipation import PowerDissipation
from fmu_surrogate.ph.efforts.convex import ConvexEffort
from fmu_surrogate.ph.efforts.kernel import KernelEffort
from fmu_surrogate.ph.efforts.known import PartlyKnownEffort, PolynomialEffort
from fmu_surrogate.ph.efforts.term import TermEffort
from fmu_surrogate.ph.files import SurrogateFileError, load, register_effort, save
from fmu_surrogate.ph.interconnect import CompositeEffort, feedback, interconnect, series, terminate
from fmu_surrogate.ph.nonlinear import NonlinearPH
from fmu_surrogate.ph.port_map import PortMap
from fmu_surrogate.ph.ports import PortedSystem
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
