"""The equilibrium of a pH core under constant inputs, and surrogates that start there."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import brentq

from fmu_surrogate.ph import (
    ConvergenceError,
    ConvexEffort,
    LinearPH,
    NonlinearPH,
    PortedSystem,
    PortMap,
    PowerDissipation,
    StructureError,
    load,
    save,
    simulate,
)
from fmu_surrogate.ph.simulation.equilibrium import equilibrium


def _preloaded_mass():
    """A mass on a spring (k = 2, m = 1, c = 0.1), pushed by F, preloaded by 0.5 N (a constant
    source port), showing its velocity and its deflection."""
    core = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.1]), np.diag([2.0, 1.0]),
                    [[0, 0], [1, 1]])
    ports = PortMap(("F",), ("v", "q"), ("N",), ("m/s", "m"), Tu=[[1.0], [0.0]],
                    cu=[0.0, 0.5], Ty=[[1.0, 0.0], [0.0, 0.0]], Cx=[[0.0, 0.0], [1.0, 0.0]],
                    Du=np.zeros((2, 1)), cy=[0.0, 0.0])
    return core, ports


def _hardening_mass():
    """``q̈ = F − 0.5 sign(v)|v|^(4/3) − q − 2q³`` (x = (q, p))."""
    eff = ConvexEffort(np.diag([1.0, 1.0]), ["quartic"], [2.0], [[1.0, 0.0]])
    diss = PowerDissipation([[0.0, 1.0]], [0.5], [1.0 / 3.0], [1e-9])
    return NonlinearPH([[0.0, 1.0], [-1.0, 0.0]], np.zeros((2, 2)), [[0.0], [1.0]], eff, diss)


def test_a_linear_core_rests_where_its_spring_holds_the_force():
    core, ports = _preloaded_mass()
    sur = PortedSystem(core, ports, initial="equilibrium")
    # k q = F + 0.5 with k = 2: q = (2 + 0.5) / 2, at rest
    x = sur.initial_state([2.0])
    assert x[0] == pytest.approx(1.25, rel=1e-15, abs=0) and abs(x[1]) < 1e-15
    t = np.linspace(0.0, 5.0, 51)
    tr = simulate(sur, t, np.full(t.size, 2.0))
    # held there: the exact step of a state at rest moves it by round-off only
    assert np.abs(tr.y[:, 1] - 1.25).max() < 1e-14 and np.abs(tr.y[:, 0]).max() < 1e-14
    # from x0 instead (initial="state"), it swings
    assert np.abs(simulate(sur.replace(initial="state"), t, np.full(t.size, 2.0)).y[:, 0]).max() > 0.5


def test_a_nonlinear_core_rests_where_its_stiffening_spring_holds_the_force():
    sys = _hardening_mass()
    for F0 in (0.3, 3.0, -40.0):
        q = brentq(lambda s, f=F0: s + 2.0 * s ** 3 - f, -10.0, 10.0, xtol=1e-15)
        x = equilibrium(sys, [F0], [0.0, 0.0])
        # Newton to 1e-12 of the state; the reference to 1e-15
        assert x[0] == pytest.approx(q, rel=1e-11) and abs(x[1]) < 1e-11
        assert np.abs(sys.flow(x, [F0])).max() < 1e-10 * max(1.0, abs(F0))


def test_a_rest_under_zero_inputs_is_an_equilibrium():
    """Under zero inputs the hardening mass rests at 0, where every term of the flow is as small
    as the flow Newton's last step leaves: the check accepts what a state error at Newton's
    tolerance makes of the flow."""
    sys = _hardening_mass()
    for guess in ([0.3, -0.2], [1e-3, 0.0], [-2.0, 5.0]):
        x = equilibrium(sys, [0.0], guess)
        assert np.abs(x).max() <= 1e-12  # Newton's tolerance of the state
    # still no equilibrium where the inputs drive a lossless mode: the integrator ẋ = u
    with pytest.raises(ConvergenceError, match="no equilibrium"):
        equilibrium(LinearPH([[0.0]], [[0.0]], [[1.0]], [[1.0]]), [1e-300], [0.5])


def test_no_equilibrium_is_a_clear_error():
    # a free mass under a constant force accelerates for ever; its nonlinear core has no rest
    eff = ConvexEffort(np.diag([1e-300, 1.0]), ["quartic"], [0.0], [[1.0, 0.0]])
    free = NonlinearPH([[0.0, 1.0], [-1.0, 0.0]], np.zeros((2, 2)), [[0.0], [1.0]], eff,
                       PowerDissipation(np.zeros((0, 2)), [], [], []))
    with pytest.raises(ConvergenceError, match="no equilibrium.*initial='state'"):
        equilibrium(free, [1.0], [0.0, 0.0])


def test_the_rule_is_saved_in_version_10_and_checked(tmp_path):
    core, ports = _preloaded_mass()
    sur = PortedSystem(core, ports, [0.1, 0.0], initial="equilibrium")
    save(sur, tmp_path / "eq.json")
    doc = json.loads((tmp_path / "eq.json").read_text())
    assert doc["version"] == 10 and doc["initial"] == "equilibrium"
    back = load(tmp_path / "eq.json")
    assert back.initial == "equilibrium" and np.array_equal(back.x0, [0.1, 0.0])
    save(sur.replace(initial="state"), tmp_path / "x0.json")
    plain = json.loads((tmp_path / "x0.json").read_text())
    assert plain["version"] < 10 and "initial" not in plain
    assert load(tmp_path / "x0.json").initial == "state"
    with pytest.raises(StructureError, match="initial must be 'state'.*'equilibrium'"):
        PortedSystem(core, ports, initial="steady")
