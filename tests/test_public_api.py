"""``import fmu_surrogate as fs`` gives the user-facing names, lazily and without torch."""

import subprocess
import sys

import pytest

import fmu_surrogate as fs


@pytest.mark.parametrize("name", fs.__all__)
def test_every_public_name_resolves_to_its_module_object(name):
    import importlib

    target = fs._LAZY[name]
    obj = getattr(fs, name)
    if target.endswith(":"):
        assert obj is importlib.import_module(target[:-1])
    else:
        assert obj is getattr(importlib.import_module(target), name)


def test_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="no attribute 'harvset'"):
        fs.harvset  # noqa: B018


def test_harvest_names_do_not_import_torch():
    code = (
        "import sys, fmu_surrogate as fs; "
        "fs.harvest, fs.HarvestSession, fs.open_fmu, fs.signals.Chirp, fs.plans.grid, "
        "fs.load_dataset, fs.run_arrays, fs.benchmark_fmu, fs.PHDAE, fs.LinearPH, "
        "fs.FmuSurrogateError, fs.FMUError, fs.StructureError; "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_package_errors_share_one_base_and_keep_their_builtins():
    from fmu_surrogate.fmu.errors import DatasetError, UnknownVariableError
    from fmu_surrogate.fmu.model.compile import FMUBuildError

    for cls, builtin in [
        (fs.FMUError, Exception),
        (fs.StructureError, ValueError),
        (fs.NotFittedError, ValueError),
        (FMUBuildError, RuntimeError),
        (DatasetError, ValueError),
        (UnknownVariableError, KeyError),
        (fs.InvalidInputError, ValueError),
        (fs.InvalidTypeError, TypeError),
        (fs.NotFoundError, KeyError),
        (fs.MissingFileError, FileNotFoundError),
        (fs.UnavailableError, AttributeError),
        (fs.ComputationError, RuntimeError),
        (fs.NumericalError, FloatingPointError),
    ]:
        assert issubclass(cls, fs.FmuSurrogateError), cls
        assert issubclass(cls, builtin), cls
    with pytest.raises(fs.FmuSurrogateError, match="J"):
        fs.LinearPH(J=[[0.0, 1.0], [1.0, 0.0]], R=[[0.0, 0.0], [0.0, 0.0]], Q=[[1.0, 0.0], [0.0, 1.0]],
                    B=[[1.0], [0.0]])
