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

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> "module" (the attribute of the same name) or "module:" (the module itself)
_LAZY: dict[str, str] = {
    # errors
    "FmuSurrogateError": "fmu_surrogate.errors",
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
    "PortMap": "fmu_surrogate.ph.ports",
    "PortedSystem": "fmu_surrogate.ph.ports",
    # pH systems: files, coupling, simulation
    "ph": "fmu_surrogate.ph:",
    "save": "fmu_surrogate.ph.files",
    "load": "fmu_surrogate.ph.files",
    "with_names": "fmu_surrogate.ph.system",
    "interconnect": "fmu_surrogate.ph.interconnect",
    "feedback": "fmu_surrogate.ph.interconnect",
    "simulate": "fmu_surrogate.ph.integrators",
    # validation against the reference FMU
    "validate": "fmu_surrogate.validation",
    "assert_surrogate_matches": "fmu_surrogate.testing.surrogates",
    # export
    "export_fmu": "fmu_surrogate.export.fmi.fmu_export",
    "export_modelica": "fmu_surrogate.export.modelica",
    # identification
    "GPEffortIdentifier": "fmu_surrogate.identify.gp.effort",
    "LinearPHIdentifier": "fmu_surrogate.identify.linear.estimator",
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
    from fmu_surrogate.errors import FmuSurrogateError as FmuSurrogateError
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
    from fmu_surrogate.ph.efforts.kernel import KernelEffort as KernelEffort
    from fmu_surrogate.ph.efforts.term import TermEffort as TermEffort
    from fmu_surrogate.ph.files import load as load
    from fmu_surrogate.ph.files import save as save
    from fmu_surrogate.ph.integrators import simulate as simulate
    from fmu_surrogate.ph.interconnect import feedback as feedback
    from fmu_surrogate.ph.interconnect import interconnect as interconnect
    from fmu_surrogate.ph.ports import PortedSystem as PortedSystem
    from fmu_surrogate.ph.ports import PortMap as PortMap
    from fmu_surrogate.ph.structure import StructureError as StructureError
    from fmu_surrogate.ph.system import PHDAE as PHDAE
    from fmu_surrogate.ph.system import LinearPH as LinearPH
    from fmu_surrogate.ph.system import with_names as with_names
    from fmu_surrogate.testing.surrogates import (
        assert_surrogate_matches as assert_surrogate_matches,
    )
    from fmu_surrogate.validation import validate as validate


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'fmu_surrogate' has no attribute {name!r}")
    if target.endswith(":"):
        value = importlib.import_module(target[:-1])
    else:
        value = getattr(importlib.import_module(target), name)
    globals()[name] = value  # later look-ups do not come here again
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = sorted(_LAZY)  # noqa: PLE0605 - names resolved lazily by __getattr__
