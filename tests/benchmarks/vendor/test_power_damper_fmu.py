"""The power-law damper FMU (nonlinear, order 0, feedthrough, co-simulation only)."""

from __future__ import annotations

import numpy as np
import pytest
from fmpy import read_model_description

from fmu_surrogate.benchmarks.vendor import power_damper
from tests.benchmarks._fmu import Slave, input_table, run


def test_force_follows_the_power_law(benchmark_fmus):
    t = np.linspace(0.0, 1.0, 101)
    v = 2.0 * np.sin(9.0 * t)
    r = run(benchmark_fmus["power_damper"], 1.0, 0.01, ["F", "v"], inputs=input_table(t, v=v))
    # C pow/copysign against numpy's power: the same IEEE operations up to one rounding of pow
    np.testing.assert_allclose(r["F"], power_damper.force(r["v"]), rtol=1e-15, atol=0)
    # power into the damper is c |v|^(7/3) >= 0 at every sample
    assert np.all(r["F"] * r["v"] >= 0)
    assert np.abs(r["F"]).max() > 4.0 * 1.9 ** (4 / 3)  # the law, not a linear damper


def test_feedthrough_and_interface(benchmark_fmus):
    md = read_model_description(str(benchmark_fmus["power_damper"]))
    assert md.modelExchange is None and md.numberOfContinuousStates == 0
    (out,) = md.outputs
    assert [d.name for d in out.dependencies] == ["v"]
    with Slave(benchmark_fmus["power_damper"]) as s:
        s.instantiate()
        s.initialize({"v": -8.0, "c": 1.5})
        # 8^(4/3) = 16; the exponent 4/3 is rounded to a double: relative error ~ ln 8 eps
        assert s.get("F") == [pytest.approx(-1.5 * 16.0, rel=1e-15)]
        s.fmu.terminate()


def test_the_stepped_damper_shows_the_law_of_the_velocity_of_the_step_before(benchmark_fmus):
    """power_damper_stepped computes F at initialisation and in doStep only: read after the
    inputs of t_k are set, F is the law of v_{k−1} (at t_0 of the velocity set at
    initialisation), although its model description declares F dependent on v."""
    import fmu_surrogate as fs

    t = np.linspace(0.0, 1.0, 101)
    sig = fs.signals.ArraySignal(t, 2.0 * np.sin(9.0 * t) + 0.5, interpolation="zoh")
    # the harvest sets the inputs of t_k, then reads (fmpy's simulate_fmu reads before it sets)
    ds = fs.harvest(benchmark_fmus["power_damper_stepped"], None, signals=[{"v": sig}],
                    stop_time=1.0, step=0.01, progress=False, workers=1)
    v, F = ds["v"].values[0], ds["F"].values[0]
    law = power_damper.force(v)
    # the same C arithmetic as the power damper's (test above): to the rounding of pow
    np.testing.assert_allclose(F[1:], law[:-1], rtol=1e-15, atol=0)
    assert F[0] == pytest.approx(law[0], rel=1e-15)
    assert np.abs(F[1:] - law[1:]).max() > 0.5  # not the law of the current velocity
    md = read_model_description(str(benchmark_fmus["power_damper_stepped"]))
    assert [d.name for d in md.outputs[0].dependencies] == ["v"]
    with Slave(benchmark_fmus["power_damper_stepped"]) as s:
        s.instantiate()
        s.initialize({"v": -8.0, "c": 1.5})
        before = s.get("F")
        s.set(v=1.0)  # no step: F stays that of v = -8
        assert s.get("F") == before == [pytest.approx(-1.5 * 16.0, rel=1e-15)]
        s.fmu.terminate()
