"""The progressive-spring FMUs: co-simulation only with the state internal, and the model-exchange
variant that declares it."""

from __future__ import annotations

import numpy as np
import pytest
from fmpy import read_model_description

from fmu_surrogate.benchmarks.params import BenchmarkError
from fmu_surrogate.benchmarks.vendor import progressive_spring as ps
from tests.benchmarks._fmu import ModelExchangeInstance, input_table, run


def _velocity(t):
    return 0.3 * np.cos(4.0 * t) - 0.05


@pytest.mark.parametrize("name", ["progressive_spring", "progressive_spring_me"])
def test_cosimulation_matches_reference(benchmark_fmus, name):
    t = np.linspace(0.0, 1.0, 101)
    v = _velocity(t)
    r = run(benchmark_fmus[name], 1.0, 0.01, ["F"], inputs=input_table(t, v=v))
    x = ps.elongation(t, v)
    # x' = v is constant on a step, so RK4 is exact: the force agrees to round-off of x ~ 0.1
    np.testing.assert_allclose(r["F"], ps.force(x), rtol=1e-12, atol=1e-12)
    # preloaded: the force is nonzero at t = 0 (x0 = 0.01 m: F = 100 x0 (1 + 0.04))
    assert r["F"][0] == pytest.approx(1.04, rel=1e-14)
    # lossless: F = dH/dx, so the work F v dt over a run is the change of H (no loss term);
    # central differences with d = 1e-6 m: truncation ~ d^2 H''' / 6, round-off ~ eps H / d
    d = 1e-6
    dH = (ps.hamiltonian(x + d) - ps.hamiltonian(x - d)) / (2 * d)
    np.testing.assert_allclose(dH, ps.force(x), rtol=0, atol=1e-8)


def test_state_is_internal_or_declared(benchmark_fmus):
    cs = read_model_description(str(benchmark_fmus["progressive_spring"]))
    assert cs.modelExchange is None
    assert {v.name for v in cs.modelVariables}.isdisjoint({"x", "der(x)"})
    assert "m" in {v.unit for v in cs.modelVariables}  # x0's unit, even with x hidden
    me = read_model_description(str(benchmark_fmus["progressive_spring_me"]))
    assert [d.variable.derivative.name for d in me.derivatives] == ["x"]
    assert [d.name for d in me.outputs[0].dependencies] == ["x"]


def test_model_exchange_derivatives_and_outputs(benchmark_fmus):
    with ModelExchangeInstance(benchmark_fmus["progressive_spring_me"]) as m:
        m.set(v=0.7)
        assert m.derivatives(np.array([0.05])) == [0.7]
        assert m.get("F") == pytest.approx([float(ps.force(0.05))], rel=1e-15)  # = 2 k x_ref
    r = run(benchmark_fmus["progressive_spring_me"], 0.5, 0.01, ["F"], fmi_type="ModelExchange",
            start_values={"v": -0.1})
    # x = x0 - 0.1 t exactly (CVode on a constant derivative): observed 3e-15 N; round-off
    np.testing.assert_allclose(r["F"], ps.force(0.01 - 0.1 * r["time"]), rtol=0, atol=1e-12)


def test_displacement_input_gives_the_spring_law_with_its_preload(benchmark_fmus):
    """progressive_spring_displacement: no state, F the law of x = x0 + s at every point."""
    t = np.linspace(0.0, 1.0, 101)
    s = 0.06 * np.sin(7.0 * t) - 0.02
    r = run(benchmark_fmus["progressive_spring_displacement"], 1.0, 0.01, ["F", "s"],
            inputs=input_table(t, s=s))
    # the same double arithmetic as numpy's, up to the order of the products: observed 0
    np.testing.assert_allclose(r["F"], ps.displacement_force(r["s"]), rtol=1e-14, atol=1e-15)
    # x0 = 0.01 m at s = 0: the preload 100 · 0.01 · (1 + 0.04) = 1.04 N
    assert float(ps.displacement_force(0.0)) == pytest.approx(1.04, rel=1e-14)
    md = read_model_description(str(benchmark_fmus["progressive_spring_displacement"]))
    assert md.modelExchange is None and md.numberOfContinuousStates == 0
    assert [(v.name, v.unit) for v in md.modelVariables if v.causality != "parameter"
            ] == [("s", "m"), ("F", "N")]
    assert [d.name for d in md.outputs[0].dependencies] == ["s"]


def test_adaptor_convention_adds_the_power_law_damper_of_the_velocity(benchmark_fmus):
    """progressive_spring_damper: s and v set independently, f = spring(s) + damper(v)."""
    from fmu_surrogate.benchmarks.vendor import power_damper

    t = np.linspace(0.0, 1.0, 101)
    s, v = 0.05 * np.cos(5.0 * t), 1.5 * np.sin(11.0 * t)
    r = run(benchmark_fmus["progressive_spring_damper"], 1.0, 0.01, ["f", "s", "v"],
            inputs=input_table(t, s=s, v=v))
    f = ps.adaptor_force(r["s"], r["v"])
    # C pow/copysign against numpy's power: one rounding of pow on forces of a few N
    np.testing.assert_allclose(r["f"], f, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(f - ps.displacement_force(r["s"]), power_damper.force(r["v"]),
                               rtol=0, atol=1e-14)
    md = read_model_description(str(benchmark_fmus["progressive_spring_damper"]))
    assert [(v.name, v.unit) for v in md.modelVariables if v.causality in ("input", "output")
            ] == [("s", "m"), ("v", "m/s"), ("f", "N")]
    assert [d.name for d in md.outputs[0].dependencies] == ["s", "v"]
    with pytest.raises(BenchmarkError, match="c = -1.0 must be >= 0"):
        ps.adaptor_force(0.0, 0.0, {"c": -1.0})
