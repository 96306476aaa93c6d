"""The experiment's checks of variable types and array elements, before any run (on the test
FMUs of ``fmu_surrogate.testing.typed``)."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.fmu.campaigns.campaign import Campaign
from fmu_surrogate.fmu.campaigns.experiment import default_record, not_recorded
from fmu_surrogate.fmu.errors import ExperimentError, SignalError, UnknownVariableError
from fmu_surrogate.fmu.model.loading import open_fmu
from fmu_surrogate.fmu.signals.excitation import PRBS
from fmu_surrogate.fmu.signals.standard import Chirp, Constant, Step


def test_default_record_leaves_strings_out(typed_fmu, arrays3_fmu):
    info = open_fmu(typed_fmu)
    assert default_record(info) == ["u", "n", "e", "b", "y", "s_length", "m", "e_next", "not_b"]
    assert not_recorded(info) == ["s", "s_out"]
    assert Campaign(typed_fmu).not_recorded == ["s", "s_out"]
    assert Campaign(typed_fmu, record=["y"]).not_recorded == []  # nothing left out by default
    assert not_recorded(open_fmu(arrays3_fmu)) == ["s", "s_out"]


def test_strings_are_refused_with_the_fix(typed_fmu):
    with pytest.raises(ExperimentError, match=r"'s_out' is a String variable: a dataset records "
                                              r"numbers only; leave it out"):
        Campaign(typed_fmu, record=["y", "s_out"])
    with pytest.raises(SignalError, match=r"input 's' is a String variable: signals drive "
                                          r"numeric inputs only; .* start value 'hello'"):
        Campaign(typed_fmu, signals={"s": Constant(1.0)})


@pytest.mark.parametrize("name, signal, message", [
    ("n", Chirp(f0=0.5, f1=2.0, t1=1.0), r"input 'n' has type Integer: its values must be whole"),
    ("e", Constant(1.5), r"input 'e' has type Enumeration: .* got 1\.5"),
    ("b", PRBS(bit_period=0.1, levels=(-1.0, 1.0)), r"input 'b' is a Boolean: .* got -1"),
    ("b", Step(t0=0.5, before=0.0, after=2.0), r"must be 0 or 1, got 2"),
])
def test_signals_that_do_not_fit_the_type_are_refused(typed_fmu, name, signal, message):
    with pytest.raises(SignalError, match=message):
        Campaign(typed_fmu, signals={name: signal})


def test_signals_that_fit_the_type(typed_fmu):
    camp = Campaign(typed_fmu, signals={"n": PRBS(bit_period=0.1, levels=(-2.0, 5.0)),
                                        "b": PRBS(bit_period=0.1, levels=(0.0, 1.0)),
                                        "e": Step(t0=0.5, before=1.0, after=3.0)})
    assert camp.n_runs == 1


def test_values_outside_the_declared_range_are_refused_with_a_signal_inside(typed_fmu):
    # n declares min="-5" max="5"; gain's declared type Gain declares min="0" max="100"
    with pytest.raises(SignalError, match=r"input 'n' is declared \[-5, 5\] \(min/max of the "
                                          r"model description.*got -8; .* offset=0 and std "
                                          r"\(or amplitude\) 1\.25"):
        Campaign(typed_fmu, signals={"n": PRBS(bit_period=0.1, levels=(-8.0, 2.0))})
    with pytest.raises(ExperimentError, match=r"parameter 'gain' is declared \[0, 100\].* got "
                                              r"-0\.5"):
        Campaign(typed_fmu, parameters=[{"gain": 2.0}, {"gain": -0.5}])
    # the bounds themselves are inside
    camp = Campaign(typed_fmu, signals={"n": PRBS(bit_period=0.1, levels=(-5.0, 5.0))},
                    parameters=[{"gain": 0.0}, {"gain": 100.0}])
    assert camp.n_runs == 2


def test_integer_parameters_take_whole_values(typed_fmu):
    with pytest.raises(ExperimentError, match=r"parameter 'offset' has type Integer.* got 1\.5"):
        Campaign(typed_fmu, parameters={"offset": 1.5})


def test_array_elements_and_whole_arrays(arrays3_fmu):
    a = np.diag([-1.0, -2.0, -3.0])
    camp = Campaign(arrays3_fmu, signals={"u[2]": Constant(0.7)},
                    parameters=[{"A": a, "x0[3]": 2.0}, {"A[1,1]": -4.0}])
    # the dataset's parameters are the elements; the runs set whole arrays
    assert camp.parameter_names == [f"A[{i},{j}]" for i in (1, 2, 3) for j in (1, 2, 3)] + [
        "x0[3]"]
    assert camp.parameter_sets[0]["A[2,2]"] == -2.0
    np.testing.assert_array_equal(camp.runs[0].params["A"], a.ravel())
    np.testing.assert_array_equal(camp.runs[0].params["x0"], [0.0, 0.0, 2.0])
    np.testing.assert_array_equal(camp.runs[1].params["A"], [-4, 0, 0, 0, -1, 0, 0, 0, -1])
    u = camp.runner_config().input_arrays[0]["u"]  # (T, 3): u[1], u[3] at their start values
    np.testing.assert_array_equal(u, np.tile([1.0, 0.7, 3.0], (camp.time.size, 1)))


@pytest.mark.parametrize("kw, error, message", [
    ({"signals": {"u": Constant(1.0)}}, SignalError,
     r"input 'u' is an array of shape 3: design a signal per element, e.g. --input 'u\[1\]="),
    ({"signals": {"u[4]": Constant(1.0)}}, UnknownVariableError,
     r"its elements are u\[1\] to u\[3\]"),
    ({"parameters": {"A": [1.0, 2.0]}}, ExperimentError,
     r"'A' is an array of shape 3x3: give its 9 values, row-major"),
    ({"parameters": {"A": 1.0}}, ExperimentError, r"give its 9 values"),
    ({"parameters": {"n": [1.0, 2.0]}}, ExperimentError, r"'n' is a scalar; give it one value"),
    ({"record": ["y[1]"]}, UnknownVariableError, r"record the array 'y'"),
    ({"parameters": {"n_x": 2.0}}, ExperimentError,
     r"'n_x' is a structural parameter .* configuration mode only"),
])
def test_array_mistakes_are_refused_with_the_fix(arrays3_fmu, kw, error, message):
    with pytest.raises(error, match=message):
        Campaign(arrays3_fmu, **kw)


def test_an_fmu_without_co_simulation_and_model_exchange(arrays3_fmu, tmp_path):
    import zipfile

    bad = tmp_path / "scheduled.fmu"  # FMI 3 scheduled execution only, as the XML says
    with zipfile.ZipFile(arrays3_fmu) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename == "modelDescription.xml":
                body = body.replace(b'<ModelExchange modelIdentifier="arrays3"/>',
                                    b'<ScheduledExecution modelIdentifier="arrays3"/>')
                body = body.replace(b'<CoSimulation modelIdentifier="arrays3" '
                                    b'canHandleVariableCommunicationStepSize="true"/>', b"")
            dst.writestr(item, body)
    with pytest.raises(ExperimentError, match="neither a co-simulation nor a model-exchange"):
        Campaign(bad)


def test_communication_points_of_tools_that_add_their_step(typed_fmu):
    """A 20-sim FMU is stepped through the sums of the step (its own clock's values), any
    other through the grid t_0 + k h that fmpy and libcosim pass (``None``)."""
    from dataclasses import replace

    from fmu_surrogate.fmu.campaigns.experiment import communication_points, experiment_grid

    info = open_fmu(typed_fmu)
    assert communication_points(info, 0.0, 3.0, 0.01) is None
    sim = replace(info, generation_tool="20-sim 4.8 (build 8.4.2)")
    pts = communication_points(sim, 0.0, 3.0, 0.01)
    grid = experiment_grid(sim, 0.0, 3.0, 0.01)[3]
    # every step exactly 0.01 in floating point, as the FMU's clock += 0.01
    assert pts.shape == grid.shape and np.all(pts[1:] == pts[:-1] + 0.01)
    # ... which parts from k h: 0.01 added ten times falls short of 0.1
    assert pts[10] < 0.1 == grid[10] and np.abs(pts - grid).max() < 1e-12
