"""Checks shared by the tests of the detailed vendor-like FMUs."""

from __future__ import annotations

from pathlib import Path

from fmpy import read_model_description

#: Variables of the FMUs' own solvers (not part of the physics).
SOLVER = {"n_substeps", "cvode_rtol", "cvode_max_steps"}


def _variables(path: Path) -> dict[str, tuple[str, str, str | None]]:
    """``name -> (causality, variability, unit)`` of every variable but the solver settings."""
    return {v.name: (v.causality, v.variability, v.unit)
            for v in read_model_description(str(path)).modelVariables if v.name not in SOLVER}


def assert_same_ports(detailed: Path, lumped: Path, *, lumped_parameters: bool = True) -> None:
    """The detailed FMU is co-simulation only, hides its states, and has the inputs and outputs
    of the lumped one (names, variability, units) and nothing else but parameters; with
    ``lumped_parameters`` also every parameter of the lumped one."""
    md = read_model_description(str(detailed))
    assert md.modelExchange is None and md.numberOfContinuousStates == 0
    mine, theirs = _variables(detailed), _variables(lumped)

    def ports(vs: dict) -> dict:
        return {n: v for n, v in vs.items() if v[0] != "parameter"}

    assert ports(mine) == ports(theirs)
    if lumped_parameters:
        assert {n: v for n, v in theirs.items() if v[0] == "parameter"}.items() <= mine.items()
