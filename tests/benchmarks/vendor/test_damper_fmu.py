"""The damper FMU (order 0, direct feedthrough declared) against F = c v."""

from __future__ import annotations

import numpy as np
from fmpy import read_model_description

from fmu_surrogate.benchmarks.vendor import damper
from fmu_surrogate.couple.validation import describe
from tests.benchmarks._fmu import ModelExchangeInstance, Slave, input_table, run


def test_force_answers_the_velocity_of_the_same_step(benchmark_fmus):
    t = np.linspace(0.0, 1.0, 101)
    v = np.sin(7.0 * t) - 0.3
    r = run(benchmark_fmus["damper"], 1.0, 0.01, ["F", "v"], inputs=input_table(t, v=v),
            start_values={"c": 2.5})
    # the output after a step is computed from the input held over that step (the recorded v):
    # one multiplication, exact
    np.testing.assert_array_equal(r["F"], damper.force(r["v"], {"c": 2.5}))
    np.testing.assert_array_equal(r["v"][1:], v[:-1])


def test_feedthrough_without_a_step(benchmark_fmus):
    with Slave(benchmark_fmus["damper"]) as s:
        s.instantiate()
        s.initialize({"v": 0.5})
        assert s.get("F") == [2.0]  # c = 4
        s.set(v=-1.25)
        assert s.get("F") == [-5.0]  # no step taken: the force follows at once
        s.fmu.terminate()
    with ModelExchangeInstance(benchmark_fmus["damper"]) as m:
        assert m.nx == 0
        m.set(v=3.0)
        assert m.get("F") == [12.0]


def test_declares_its_feedthrough(benchmark_fmus):
    md = read_model_description(str(benchmark_fmus["damper"]))
    (out,) = md.outputs
    assert [d.name for d in out.dependencies] == ["v"]
    assert md.numberOfContinuousStates == 0
    assert describe(benchmark_fmus["damper"]).feedthrough == {"F": ("v",)}
