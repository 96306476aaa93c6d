"""Signal.parameters: every kind documents each constructor parameter with a meaning."""

from __future__ import annotations

import dataclasses

import pytest

from fmu_surrogate.fmu.signals import PRBS, SIGNAL_KINDS


@pytest.mark.parametrize("kind", sorted(SIGNAL_KINDS))
def test_parameters_are_the_constructor_fields_each_with_a_meaning(kind):
    cls = SIGNAL_KINDS[kind]
    params = cls.parameters()
    assert [p.name for p in params] == [f.name for f in dataclasses.fields(cls) if f.init]
    assert all(p.meaning and p.type for p in params), params


def test_parameter_types_defaults_and_shapes():
    p = {q.name: q for q in PRBS.parameters()}
    assert p["levels"].type == "(float, float)" and p["levels"].shape == "pair"
    assert p["levels"].default == (-1.0, 1.0)
    assert p["amplitude"].default == 1.0 and p["amplitude"].shape == "scalar"
    assert p["bit_period"].meaning == "Duration of one bit (s), > 0."
    freq = {q.name: q for q in SIGNAL_KINDS["schroeder_multisine"].parameters()}["frequencies"]
    assert freq.shape == "list"
