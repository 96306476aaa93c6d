"""Unit strings as vendors declare them, read into SI factor and dimension."""

import math

import pytest

from fmu_surrogate.fmu.model.units import ENERGY, POWER, parse_unit, power_factor

# factors are products of a few exact decimal constants: equal to 1e-15 relative
REL = 1e-15


@pytest.mark.parametrize("text, factor, dims", [
    ("N", 1.0, (1, 1, -2, 0, 0, 0, 0)),
    ("m/s2", 1.0, (0, 1, -2, 0, 0, 0, 0)),
    ("m/s^2", 1.0, (0, 1, -2, 0, 0, 0, 0)),
    ("m/s**2", 1.0, (0, 1, -2, 0, 0, 0, 0)),
    ("m/s/s", 1.0, (0, 1, -2, 0, 0, 0, 0)),
    ("kg.m2", 1.0, (1, 2, 0, 0, 0, 0, 0)),
    ("N.m", 1.0, ENERGY), ("N·m", 1.0, ENERGY), ("N*m", 1.0, ENERGY), ("Nm", 1.0, ENERGY),
    ("1/s", 1.0, (0, 0, -1, 0, 0, 0, 0)), ("s-1", 1.0, (0, 0, -1, 0, 0, 0, 0)),
    ("rad/s", 1.0, (0, 0, -1, 0, 0, 0, 0)),
    ("rpm", 2 * math.pi / 60, (0, 0, -1, 0, 0, 0, 0)),
    ("deg", math.pi / 180, (0, 0, 0, 0, 0, 0, 0)),
    ("bar", 1e5, (1, -1, -2, 0, 0, 0, 0)), ("kPa", 1e3, (1, -1, -2, 0, 0, 0, 0)),
    ("hPa", 1e2, (1, -1, -2, 0, 0, 0, 0)),
    ("l/min", 1e-3 / 60, (0, 3, -1, 0, 0, 0, 0)), ("L/min", 1e-3 / 60, (0, 3, -1, 0, 0, 0, 0)),
    ("m3/s", 1.0, (0, 3, -1, 0, 0, 0, 0)),
    ("mm", 1e-3, (0, 1, 0, 0, 0, 0, 0)), ("ms", 1e-3, (0, 0, 1, 0, 0, 0, 0)),
    ("mA", 1e-3, (0, 0, 0, 1, 0, 0, 0)), ("kW", 1e3, POWER), ("min", 60.0, (0, 0, 1, 0, 0, 0, 0)),
    ("V", 1.0, (1, 2, -3, -1, 0, 0, 0)), ("Ohm", 1.0, (1, 2, -3, -2, 0, 0, 0)),
    ("Ω", 1.0, (1, 2, -3, -2, 0, 0, 0)), ("cd", 1.0, (0, 0, 0, 0, 0, 0, 1)),
])
def test_parse(text, factor, dims):
    u = parse_unit(text)
    assert u is not None and u.dims == dims and u.offset == 0.0
    assert u.factor == pytest.approx(factor, rel=REL)


@pytest.mark.parametrize("text", [None, "", "foo", "m/(s.s)", "xyz/s", "2m"])
def test_unreadable_is_none(text):
    assert parse_unit(text) is None


def test_temperature_scale_has_an_offset():
    c = parse_unit("degC")
    assert c.to_si(25.0) == pytest.approx(298.15, rel=REL)
    f = parse_unit("degF")
    assert f.to_si(32.0) == pytest.approx(273.15, rel=1e-14)  # 5/9 and 459.67 round once each


def test_power_factor():
    # hydraulics: 1 bar · 1 l/min = 1e5 Pa · 1e-3/60 m³/s = 1.6667 W
    assert power_factor("bar", "l/min") == pytest.approx(1e5 * 1e-3 / 60, rel=REL)
    assert power_factor("N", "m/s") == 1.0
    assert power_factor("N.m", "rad/s") == 1.0
    assert power_factor("V", "A") == 1.0
    assert power_factor("N.m", "rpm") == pytest.approx(2 * math.pi / 60, rel=REL)
    assert power_factor("kPa", "m3/s") == 1e3
    assert power_factor("N", "m") is None  # an energy, not a power
    assert power_factor("N", "m/s2") is None
    assert power_factor("degC", "W/K") is None  # offset scale
    assert power_factor("N", None) is None
