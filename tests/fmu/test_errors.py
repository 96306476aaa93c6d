"""Exception hierarchy and messages of fmu_surrogate.fmu.errors."""

from __future__ import annotations

import pytest

from fmu_surrogate.fmu.errors import (
    DatasetError,
    ExperimentError,
    FMUError,
    ModelDescriptionError,
    NoBinaryError,
    NotAnFMUError,
    SignalError,
    UnknownVariableError,
)


def test_hierarchy():
    for cls in (NotAnFMUError, ModelDescriptionError, NoBinaryError, UnknownVariableError,
                ExperimentError, SignalError, DatasetError):
        assert issubclass(cls, FMUError)
    assert issubclass(UnknownVariableError, KeyError)  # `except KeyError` still works
    for cls in (ExperimentError, SignalError, DatasetError):
        assert issubclass(cls, ValueError)


def test_unknown_variable_suggestions():
    known = ["mass", "damping", "stiffness", "der(v)", "v"]
    e = UnknownVariableError("stifness", known, what="parameter", model="msd")
    assert e.suggestions == ["stiffness"] and e.name == "stifness"
    assert str(e) == ("unknown parameter 'stifness' in msd; did you mean 'stiffness'? "
                      "(list all names with `fmu-surrogate info MODEL.fmu`).")
    e = UnknownVariableError("qqq", known)
    assert e.suggestions == []
    assert "the variables are: mass, damping, stiffness, der(v), v" in str(e)
    many = [f"x{i}" for i in range(20)]
    assert "x7, ..." in str(UnknownVariableError("zzz", many))
    assert "the model has no inputs" in str(UnknownVariableError("u", [], what="input"))
    with pytest.raises(KeyError):
        raise UnknownVariableError("a", ["b"])


def test_no_binary_keeps_platforms():
    e = NoBinaryError("no binary; export it for linux64", ["win64", "darwin64"])
    assert e.platforms == ("win64", "darwin64") and "linux64" in str(e)
