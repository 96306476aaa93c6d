"""fmu layer: open and inspect FMUs, input signals, parameter plans, datasets, the isolated runner
and harvesting campaigns.

Knows nothing of port-Hamiltonian systems (docs/design.md §7).  ``import fmu_surrogate.fmu`` stays
light (numpy only): the runner, campaign, backend and store names below are imported on first
use, and xarray, fmpy, scipy and tqdm only inside the functions that need them.
"""

from typing import TYPE_CHECKING

from fmu_surrogate.fmu.campaigns.plans import explicit as explicit
from fmu_surrogate.fmu.campaigns.plans import grid as grid
from fmu_surrogate.fmu.campaigns.plans import latin_hypercube as latin_hypercube
from fmu_surrogate.fmu.campaigns.plans import one_at_a_time as one_at_a_time
from fmu_surrogate.fmu.campaigns.plans import parse_param_option as parse_param_option
from fmu_surrogate.fmu.campaigns.plans import sobol as sobol
from fmu_surrogate.fmu.dataset import FAILURE_KINDS as FAILURE_KINDS
from fmu_surrogate.fmu.dataset import FORMAT_VERSION as FORMAT_VERSION
from fmu_surrogate.fmu.dataset import RunRecord as RunRecord
from fmu_surrogate.fmu.dataset import data_var_name as data_var_name
from fmu_surrogate.fmu.dataset import dataset_to_records as dataset_to_records
from fmu_surrogate.fmu.dataset import failed_runs as failed_runs
from fmu_surrogate.fmu.dataset import fmu_variables as fmu_variables
from fmu_surrogate.fmu.dataset import load_dataset as load_dataset
from fmu_surrogate.fmu.dataset import parameter_names as parameter_names
from fmu_surrogate.fmu.dataset import records_to_dataset as records_to_dataset
from fmu_surrogate.fmu.dataset import run_arrays as run_arrays
from fmu_surrogate.fmu.dataset import runs_table as runs_table
from fmu_surrogate.fmu.dataset import save_dataset as save_dataset
from fmu_surrogate.fmu.errors import DatasetError as DatasetError
from fmu_surrogate.fmu.errors import ExperimentError as ExperimentError
from fmu_surrogate.fmu.errors import FMUError as FMUError
from fmu_surrogate.fmu.errors import ModelDescriptionError as ModelDescriptionError
from fmu_surrogate.fmu.errors import NoBinaryError as NoBinaryError
from fmu_surrogate.fmu.errors import NotAnFMUError as NotAnFMUError
from fmu_surrogate.fmu.errors import SignalError as SignalError
from fmu_surrogate.fmu.errors import UnknownVariableError as UnknownVariableError
from fmu_surrogate.fmu.model.loading import DefaultExperiment as DefaultExperiment
from fmu_surrogate.fmu.model.loading import FMUInfo as FMUInfo
from fmu_surrogate.fmu.model.loading import Variable as Variable
from fmu_surrogate.fmu.model.loading import open_fmu as open_fmu
from fmu_surrogate.fmu.signals.standard import PRBS as PRBS
from fmu_surrogate.fmu.signals.standard import ArraySignal as ArraySignal
from fmu_surrogate.fmu.signals.standard import BandLimitedNoise as BandLimitedNoise
from fmu_surrogate.fmu.signals.standard import Chirp as Chirp
from fmu_surrogate.fmu.signals.standard import Constant as Constant
from fmu_surrogate.fmu.signals.standard import SchroederMultisine as SchroederMultisine
from fmu_surrogate.fmu.signals.standard import Signal as Signal
from fmu_surrogate.fmu.signals.standard import Step as Step
from fmu_surrogate.fmu.signals.standard import check_signal_fits as check_signal_fits
from fmu_surrogate.fmu.signals.standard import sample_inputs as sample_inputs
from fmu_surrogate.fmu.signals.standard import signal_from_description as signal_from_description
from fmu_surrogate.lazy import lazy_exports

#: Names re-exported from the runner, campaign, backend and store modules (imported lazily).
_LAZY = {
    "harvest": "fmu_surrogate.fmu.campaigns.campaign",
    "Campaign": "fmu_surrogate.fmu.campaigns.campaign",
    "HarvestSession": "fmu_surrogate.fmu.campaigns.campaign",
    "summarize": "fmu_surrogate.fmu.campaigns.campaign",
    "experiment_grid": "fmu_surrogate.fmu.campaigns.campaign",
    "default_record": "fmu_surrogate.fmu.campaigns.campaign",
    "get_backend": "fmu_surrogate.fmu.backends.registry",
    "available_backends": "fmu_surrogate.fmu.backends.registry",
    "Backend": "fmu_surrogate.fmu.backends.registry",
    "FmpyBackend": "fmu_surrogate.fmu.backends.registry",
    "PyFMIBackend": "fmu_surrogate.fmu.backends.registry",
    "RunOutput": "fmu_surrogate.fmu.backends.registry",
    "WorkerPool": "fmu_surrogate.fmu.runner.pool",
    "RunnerConfig": "fmu_surrogate.fmu.runner.pool",
    "RunSpec": "fmu_surrogate.fmu.runner.pool",
    "RunResult": "fmu_surrogate.fmu.runner.pool",
    "run_isolated": "fmu_surrogate.fmu.runner.pool",
    "classify": "fmu_surrogate.fmu.runner.pool",
    "RunStore": "fmu_surrogate.fmu.campaigns.store",
    "StoreMismatchError": "fmu_surrogate.fmu.campaigns.store",
    "StoreLockedError": "fmu_surrogate.fmu.campaigns.store",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from fmu_surrogate.fmu.backends.registry import Backend as Backend
    from fmu_surrogate.fmu.backends.registry import FmpyBackend as FmpyBackend
    from fmu_surrogate.fmu.backends.registry import PyFMIBackend as PyFMIBackend
    from fmu_surrogate.fmu.backends.registry import RunOutput as RunOutput
    from fmu_surrogate.fmu.backends.registry import available_backends as available_backends
    from fmu_surrogate.fmu.backends.registry import get_backend as get_backend
    from fmu_surrogate.fmu.campaigns.campaign import Campaign as Campaign
    from fmu_surrogate.fmu.campaigns.campaign import HarvestSession as HarvestSession
    from fmu_surrogate.fmu.campaigns.campaign import default_record as default_record
    from fmu_surrogate.fmu.campaigns.campaign import experiment_grid as experiment_grid
    from fmu_surrogate.fmu.campaigns.campaign import harvest as harvest
    from fmu_surrogate.fmu.campaigns.campaign import summarize as summarize
    from fmu_surrogate.fmu.campaigns.store import RunStore as RunStore
    from fmu_surrogate.fmu.campaigns.store import StoreLockedError as StoreLockedError
    from fmu_surrogate.fmu.campaigns.store import StoreMismatchError as StoreMismatchError
    from fmu_surrogate.fmu.runner.pool import RunnerConfig as RunnerConfig
    from fmu_surrogate.fmu.runner.pool import RunResult as RunResult
    from fmu_surrogate.fmu.runner.pool import RunSpec as RunSpec
    from fmu_surrogate.fmu.runner.pool import WorkerPool as WorkerPool
    from fmu_surrogate.fmu.runner.pool import classify as classify
    from fmu_surrogate.fmu.runner.pool import run_isolated as run_isolated


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
