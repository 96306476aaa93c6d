"""fmu layer: open and inspect FMUs, input signals, parameter plans, datasets (and the runner).

Knows nothing of port-Hamiltonian systems (DESIGN.md §7).
"""

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
from fmu_surrogate.fmu.model import DefaultExperiment as DefaultExperiment
from fmu_surrogate.fmu.model import FMUInfo as FMUInfo
from fmu_surrogate.fmu.model import Variable as Variable
from fmu_surrogate.fmu.model import open_fmu as open_fmu
from fmu_surrogate.fmu.plans import explicit as explicit
from fmu_surrogate.fmu.plans import grid as grid
from fmu_surrogate.fmu.plans import latin_hypercube as latin_hypercube
from fmu_surrogate.fmu.plans import one_at_a_time as one_at_a_time
from fmu_surrogate.fmu.plans import parse_param_option as parse_param_option
from fmu_surrogate.fmu.plans import sobol as sobol
from fmu_surrogate.fmu.signals import PRBS as PRBS
from fmu_surrogate.fmu.signals import ArraySignal as ArraySignal
from fmu_surrogate.fmu.signals import BandLimitedNoise as BandLimitedNoise
from fmu_surrogate.fmu.signals import Chirp as Chirp
from fmu_surrogate.fmu.signals import Constant as Constant
from fmu_surrogate.fmu.signals import SchroederMultisine as SchroederMultisine
from fmu_surrogate.fmu.signals import Signal as Signal
from fmu_surrogate.fmu.signals import Step as Step
from fmu_surrogate.fmu.signals import check_signal_fits as check_signal_fits
from fmu_surrogate.fmu.signals import sample_inputs as sample_inputs
from fmu_surrogate.fmu.signals import signal_from_description as signal_from_description
