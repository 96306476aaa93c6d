"""Port orientation from data (identify/linear/ports.py, identify/linear/prepare.py)."""

from __future__ import annotations

import pytest

from fmu_surrogate.errors import FmuSurrogateError
from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
from fmu_surrogate.identify.linear.model.adjoint import Experiment
from fmu_surrogate.identify.linear.ports import parse_orientations, supplied_energy
from fmu_surrogate.identify.linear.prepare import starts_at_rest
from tests.identify.linear.init.test_passivity import T, U, free_mass
from tests.identify.linear.optim.test_lm_fits import experiment, random_ph


def test_free_mass_delivering_power_identifies_without_any_flag():
    # the FMU's convention: its input is the force the mass exerts on its neighbour (power
    # out), so the data show −F against the velocity; no flag, data not at rest
    y = free_mass(x0=0.7)
    est = LinearPHIdentifier(1, input_hold="zoh").fit(T, -U, y)
    assert est.port_signs_.tolist() == [-1.0]
    assert "x0" in est.result_.fitted  # detected: the data do not start at rest
    # measured 4e-14; predict() takes the external convention
    assert est.errors(T, -U, y).relative_max <= 1e-6
    # the pH core is the free mass: CB = GᵀQG = 1/m = 0.5 (scipy's model in test_passivity)
    s = est.system_
    assert float((s.B.T @ s.Q @ s.B)[0, 0]) == pytest.approx(0.5, rel=1e-6)


def test_orientation_per_port_of_a_two_port():
    # a random two-port pH system with the second port flipped: detected per port
    p = random_ph(2, 4, 2)
    t, u, y = experiment(p, 0)
    est = LinearPHIdentifier(4).fit(t, u * [1.0, -1.0], y)
    assert est.port_signs_.tolist() == [1.0, -1.0]
    assert est.errors(t, u * [1.0, -1.0], y).relative_max <= 1e-6  # measured ~1e-10
    # given orientations are used as they are (None entries detected)
    est = LinearPHIdentifier(4, ports=[None, "out"]).fit(t, u * [1.0, -1.0], y)
    assert est.port_signs_.tolist() == [1.0, -1.0]


def test_supplied_energy_and_rest():
    # ∫ y u dt of the free mass from rest is the kinetic energy at the end, ½ m v(T)²
    y = free_mass(x0=0.0)
    e = Experiment.from_arrays(T, U, y, "zoh")
    assert supplied_energy([e])[0] == pytest.approx(0.5 * 2.0 * y[-1, 0] ** 2, rel=1e-3)
    assert starts_at_rest([e])
    assert not starts_at_rest([Experiment.from_arrays(T, U, free_mass(x0=0.7), "zoh")])


def test_orientation_setting_is_validated():
    assert parse_orientations(None, 2) is None
    assert parse_orientations("out", 2).tolist() == [-1.0, -1.0]
    assert parse_orientations({1: "out"}, 2)[1] == -1.0
    with pytest.raises(FmuSurrogateError, match="one of"):
        parse_orientations(["in", "sideways"], 2)
    with pytest.raises(FmuSurrogateError, match="2 power pairs"):
        parse_orientations(["in"], 2)


def test_power_pairs_by_name():
    from fmu_surrogate.identify.linear.ports import parse_pairs

    assert parse_pairs(None, ["F"], ["v"]) is None
    assert parse_pairs([{"u": "F", "y": "v", "power": "out"}], ["F", "T"], ["x", "v"]) == [
        (0, 1, "out")]
    with pytest.raises(FmuSurrogateError, match="--port u=NAME,y=NAME"):
        parse_pairs([{"u": "F", "y": "w"}], ["F"], ["v"])
    with pytest.raises(FmuSurrogateError, match="twice"):
        parse_pairs([{"u": "F", "y": "v"}, {"u": "F", "y": "x"}], ["F"], ["v", "x"])
