"""fmu-surrogate: structure-preserving port-Hamiltonian surrogates of FMUs.

Everything a user needs is one attribute away, without knowing the package layout::

    import fmu_surrogate as fs

    fmu = fs.benchmark_fmu("rc_network")
    ds = fs.harvest(fmu, "rc.nc", parameters=fs.plans.grid(G=[0.5, 1.0]))
    (t, X), = fs.run_arrays(ds, ["x1", "u"], runs=[0])

Names are imported on first access, so ``import fmu_surrogate`` is cheap and harvesting never
imports torch.  The layers behind them (docs/design.md §7): ``fmu`` (harvesting, knows nothing of
pH), ``ph`` (the pH data model, knows nothing of FMUs), ``identify`` (datasets -> ``ph``
objects), ``export`` (consumes ``ph`` objects).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fmu_surrogate.lazy import lazy_exports

__version__ = "0.1.0"

#: public name -> "module" (the attribute of the same name) or "module:" (the module itself)
_LAZY: dict[str, str] = {
    # errors
    "FmuSurrogateError": "fmu_surrogate.errors",
    "ComputationError": "fmu_surrogate.errors",
    "InvalidInputError": "fmu_surrogate.errors",
    "InvalidTypeError": "fmu_surrogate.errors",
    "MissingFileError": "fmu_surrogate.errors",
    "NotFoundError": "fmu_surrogate.errors",
    "NumericalError": "fmu_surrogate.errors",
    "UnavailableError": "fmu_surrogate.errors",
    "FMUError": "fmu_surrogate.fmu.errors",
    "StructureError": "fmu_surrogate.ph.structure",
    "NotFittedError": "fmu_surrogate.identify.base",
    # harvesting
    "open_fmu": "fmu_surrogate.fmu.model.loading",
    "harvest": "fmu_surrogate.fmu.campaigns.campaign",
    "HarvestSession": "fmu_surrogate.fmu.campaigns.campaign",
    "signals": "fmu_surrogate.fmu.signals:",
    "plans": "fmu_surrogate.fmu.campaigns.plans:",
    "load_dataset": "fmu_surrogate.fmu.dataset",
    "run_arrays": "fmu_surrogate.fmu.dataset",
    "runs_table": "fmu_surrogate.fmu.dataset",
    "failed_runs": "fmu_surrogate.fmu.dataset",
    "benchmark_fmu": "fmu_surrogate.benchmarks.build",
    # port-Hamiltonian systems
    "PHDAE": "fmu_surrogate.ph.system",
    "LinearPH": "fmu_surrogate.ph.system",
    "KernelEffort": "fmu_surrogate.ph.efforts.kernel",
    "TermEffort": "fmu_surrogate.ph.efforts.term",
    "NonlinearPH": "fmu_surrogate.ph.nonlinear",
    "ConvexEffort": "fmu_surrogate.ph.efforts.convex",
    "PowerDissipation": "fmu_surrogate.ph.dissipation",
    "PortMap": "fmu_surrogate.ph.port_map",
    "PortedSystem": "fmu_surrogate.ph.ports",
    # pH systems: files, coupling, simulation
    "ph": "fmu_surrogate.ph:",
    "save": "fmu_surrogate.ph.files",
    "load": "fmu_surrogate.ph.files",
    "with_names": "fmu_surrogate.ph.system",
    "interconnect": "fmu_surrogate.ph.interconnect",
    "feedback": "fmu_surrogate.ph.interconnect",
    "simulate": "fmu_surrogate.ph.simulation.integrators",
    # validation against the reference FMU
    "validate": "fmu_surrogate.validation",
    "assert_surrogate_matches": "fmu_surrogate.testing.surrogates",
    # export
    "export_fmu": "fmu_surrogate.export.fmi.fmu_export",
    "export_modelica": "fmu_surrogate.export.modelica",
    # identification
    "GPEffortIdentifier": "fmu_surrogate.identify.gp.effort",
    "LinearPHIdentifier": "fmu_surrogate.identify.linear.estimator",
    "NonlinearPHIdentifier": "fmu_surrogate.identify.nonlinear.estimator",
    "select_dataset": "fmu_surrogate.identify.selection",
    "RVM": "fmu_surrogate.identify.laws.rvm",
    "GPRVM": "fmu_surrogate.identify.laws.gp_rvm",
    "CandidateLibrary": "fmu_surrogate.identify.laws.library",
    "polynomial_library": "fmu_surrogate.identify.laws.library",
    "estimate_derivatives": "fmu_surrogate.identify.derivatives",
    "ConstraintDiscovery": "fmu_surrogate.identify.constraints.discovery",
    # coupled systems
    "couple": "fmu_surrogate.couple:",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from fmu_surrogate import ph as ph
    from fmu_surrogate.benchmarks.build import benchmark_fmu as benchmark_fmu
    from fmu_surrogate.errors import ComputationError as ComputationError
    from fmu_surrogate.errors import FmuSurrogateError as FmuSurrogateError
    from fmu_surrogate.errors import InvalidInputError as InvalidInputError
    from fmu_surrogate.errors import InvalidTypeError as InvalidTypeError
    from fmu_surrogate.errors import MissingFileError as MissingFileError
    from fmu_surrogate.errors import NotFoundError as NotFoundError
    from fmu_surrogate.errors import NumericalError as NumericalError
    from fmu_surrogate.errors import UnavailableError as UnavailableError
    from fmu_surrogate.export.fmi.fmu_export import export_fmu as export_fmu
    from fmu_surrogate.export.modelica import export_modelica as export_modelica
    from fmu_surrogate.fmu import signals as signals
    from fmu_surrogate.fmu.campaigns import plans as plans
    from fmu_surrogate.fmu.campaigns.campaign import HarvestSession as HarvestSession
    from fmu_surrogate.fmu.campaigns.campaign import harvest as harvest
    from fmu_surrogate.fmu.dataset import failed_runs as failed_runs
    from fmu_surrogate.fmu.dataset import load_dataset as load_dataset
    from fmu_surrogate.fmu.dataset import run_arrays as run_arrays
    from fmu_surrogate.fmu.dataset import runs_table as runs_table
    from fmu_surrogate.fmu.errors import FMUError as FMUError
    from fmu_surrogate.fmu.model.loading import open_fmu as open_fmu
    from fmu_surrogate.identify.base import NotFittedError as NotFittedError
    from fmu_surrogate.identify.constraints.discovery import (
        ConstraintDiscovery as ConstraintDiscovery,
    )
    from fmu_surrogate.identify.derivatives import estimate_derivatives as estimate_derivatives
    from fmu_surrogate.identify.gp.effort import GPEffortIdentifier as GPEffortIdentifier
    from fmu_surrogate.identify.laws.gp_rvm import GPRVM as GPRVM
    from fmu_surrogate.identify.laws.library import CandidateLibrary as CandidateLibrary
    from fmu_surrogate.identify.laws.library import polynomial_library as polynomial_library
    from fmu_surrogate.identify.laws.rvm import RVM as RVM
    from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier as LinearPHIdentifier
    from fmu_surrogate.identify.nonlinear.estimator import (
        NonlinearPHIdentifier as NonlinearPHIdentifier,
    )
    from fmu_surrogate.identify.selection import select_dataset as select_dataset
    from fmu_surrogate.ph.dissipation import PowerDissipation as PowerDissipation
    from fmu_surrogate.ph.efforts.convex import ConvexEffort as ConvexEffort
    from fmu_surrogate.ph.efforts.kernel import KernelEffort as KernelEffort
    from fmu_surrogate.ph.efforts.term import TermEffort as TermEffort
    from fmu_surrogate.ph.files import load as load
    from fmu_surrogate.ph.files import save as save
    from fmu_surrogate.ph.interconnect import feedback as feedback
    from fmu_surrogate.ph.interconnect import interconnect as interconnect
    from fmu_surrogate.ph.nonlinear import NonlinearPH as NonlinearPH
    from fmu_surrogate.ph.port_map import PortMap as PortMap
    from fmu_surrogate.ph.ports import PortedSystem as PortedSystem
    from fmu_surrogate.ph.simulation.integrators import simulate as simulate
    from fmu_surrogate.ph.structure import StructureError as StructureError
    from fmu_surrogate.ph.system import PHDAE as PHDAE
    from fmu_surrogate.ph.system import LinearPH as LinearPH
    from fmu_surrogate.ph.system import with_names as with_names
    from fmu_surrogate.testing.surrogates import (
        assert_surrogate_matches as assert_surrogate_matches,
    )
    from fmu_surrogate.validation import validate as validate


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = sorted(_LAZY)  # noqa: PLE0605 - names resolved lazily by __getattr__
