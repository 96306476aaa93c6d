"""Dropping the terms a nonlinear fit does not need: on error functions whose dependence on each
term is known, and on a fit that leaves negligible terms."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.identify.nonlinear.parametrisation import Layout, to_system
from fmu_surrogate.identify.nonlinear.pruning import ERROR_GROWTH, prune_terms

LAYOUT = Layout(2, 1, ("quartic", "logcosh"), 2, True, 0, n_port_dissipation=2)


def _theta(rng):
    return rng.uniform(0.1, 0.5, LAYOUT.size)


def _gain(theta, name, i):
    return theta[LAYOUT.slices()[name][0].start + i]


def test_terms_the_error_does_not_need_are_dropped_the_others_kept():
    theta = _theta(np.random.default_rng(0))
    # the error needs the first ridge and the second feedthrough term; the second dissipation
    # term adds 1 % of the error when gone (within the 2 % allowed), the others nothing
    def error(th, bound=np.inf):
        e = 1.0 + 10.0 * abs(_gain(th, "alpha", 0) - _gain(theta, "alpha", 0))
        e += 10.0 * abs(_gain(th, "pbeta", 1) - _gain(theta, "pbeta", 1))
        return e + (0.01 if _gain(th, "beta", 1) == 0.0 else 0.0)

    pruned, dropped = prune_terms(LAYOUT, theta, error)
    # the asymmetries, the ridges' shifts and the states' dissipation the error does not see
    # either go too
    assert sorted(dropped) == [("R", 0), ("alpha", 1), ("asym", 0), ("asym", 1), ("beta", 0),
                               ("beta", 1), ("pasym", 0), ("pasym", 1), ("pbeta", 0), ("rc", 0),
                               ("rc", 1)]
    assert _gain(pruned, "alpha", 0) == _gain(theta, "alpha", 0)
    assert _gain(pruned, "pbeta", 1) == _gain(theta, "pbeta", 1)
    assert error(pruned) <= ERROR_GROWTH * error(theta)
    # nothing else moved
    others = np.ones(LAYOUT.size, bool)
    for name, i in dropped:
        if name == "R":  # the states' rows of W's factor (w = n + m with the feedthrough)
            start = LAYOUT.slices()["L"][0].start
            others[start:start + LAYOUT.n * (LAYOUT.n + LAYOUT.m)] = False
        else:
            others[LAYOUT.slices()[name][0].start + i] = False
    assert np.array_equal(pruned[others], theta[others])


def test_removals_that_are_harmless_alone_but_not_together_stop_at_the_bound():
    theta = _theta(np.random.default_rng(1))
    # each dissipation term costs 1.5 % alone, both 3 %: only one goes
    def error(th, bound=np.inf):
        return 1.0 + 0.015 * sum(_gain(th, "beta", i) == 0.0 for i in range(2))

    _, dropped = prune_terms(LAYOUT, theta, error)
    assert [d for d in dropped if d[0] == "beta"] in ([("beta", 0)], [("beta", 1)])


def test_dropped_terms_are_left_out_of_the_system():
    theta = _theta(np.random.default_rng(2))
    pruned, dropped = prune_terms(LAYOUT, theta, lambda th, bound: 1.0)  # nothing needed
    # the gains, the asymmetries and shifts, the states' dissipation
    assert len(dropped) == 6 + 4 + 2 + 1
    sys_ = to_system(LAYOUT, pruned)
    assert sys_.effort_function.kinds == () and sys_.effort_function.weights.size == 0
    assert sys_.dissipation.n_terms == 0 and sys_.port_dissipation.n_terms == 0


def test_an_asymmetry_the_error_does_not_need_is_dropped_the_needed_one_kept():
    theta = _theta(np.random.default_rng(3))
    # both feedthrough terms and the second one's asymmetry carry the error; the other
    # asymmetries are negligible
    def error(th, bound=np.inf):
        return 1.0 + 10.0 * sum(abs(_gain(th, b, i) - _gain(theta, b, i))
                                for b, i in (("pbeta", 0), ("pbeta", 1), ("pasym", 1)))

    pruned, dropped = prune_terms(LAYOUT, theta, error)
    assert ("pasym", 1) not in dropped and ("pasym", 0) in dropped
    assert ("asym", 0) in dropped and ("asym", 1) in dropped
    law = to_system(LAYOUT, pruned).port_dissipation
    # terms kept in order: the first term symmetric (exported without its gate), the second not
    assert law.asymmetry[0] == 0.0 and law.asymmetry[1] == _gain(theta, "pasym", 1)
    assert not to_system(LAYOUT, pruned).dissipation.asymmetry.any()


def test_a_static_law_term_the_error_does_not_need_is_left_out_of_the_law():
    """The law's gains are terms too (one per output and term): a term whose gains are all
    dropped is left out of the StaticLaw the surrogate gets."""
    from fmu_surrogate.identify.nonlinear.input_law import LawStart

    layout = Layout(0, 2, (), 0, True, 0, n_law=2, n_outputs=1)
    theta = _theta(np.random.default_rng(3))[: layout.size]
    b = layout.unpack(theta)

    def error(th, bound=np.inf):  # the cubic's gain matters, the hinge's does not
        return 1.0 + 10.0 * abs(layout.unpack(th)["lC"][0, 0] - b["lC"][0, 0])

    pruned, dropped = prune_terms(layout, theta, error)
    assert dropped == [("lC", 1)]
    start = LawStart(("cubic", "hinge"), np.eye(2), np.ones(2), np.zeros(2), np.zeros((1, 2)),
                     ("s", "v"))
    p = layout.unpack(pruned)
    law = start.law(p["la"], p["lb"], p["lC"])
    assert law.kinds == ("cubic",) and law.C.tolist() == [[b["lC"][0, 0]]]
    assert law.W.tolist() == [[b["la"][0], 0.0]] and law.b.tolist() == [b["lb"][0]]
    assert start.law(p["la"], p["lb"], np.zeros((1, 2))) is None


def _damper_core(G):
    """One state (idle when ``G`` is zero) and the law ``F = 0.2 v + 3 (v² + δ²)^(1/6) v``."""
    from fmu_surrogate.ph import ConvexEffort, NonlinearPH, PowerDissipation

    law = PowerDissipation([[1.0]], [3.0], [1.0 / 3.0], [1e-3])
    return NonlinearPH([[0.0]], [[0.0]], [[G]], ConvexEffort(np.eye(1), (), [], np.zeros((0, 1))),
                       port_dissipation=law, P=[[0.0]], S=[[0.2]], N=[[0.0]],
                       input_names=["v"], output_names=["F"])


def test_an_idle_state_is_removed_and_the_outputs_stay():
    from fmu_surrogate.identify.nonlinear.pruning import without_idle_states
    from fmu_surrogate.ph import simulate

    core = _damper_core(0.0)
    static, x0, Cm = without_idle_states(core, np.array([0.7]), np.zeros((2, 1)))
    assert static.n_states == 0 and x0.shape == (0,) and Cm.shape == (2, 0)
    assert static.input_names == ("v",) and static.output_names == ("F",)
    t = np.linspace(0.0, 2.0, 201)
    v = np.sin(3.0 * t)[:, None] * np.linspace(0.1, 1.5, t.size)[:, None]
    # the same law evaluated on the same inputs: the idle state's Newton step adds nothing
    # (measured: bit for bit)
    np.testing.assert_allclose(simulate(static, t, v).y, simulate(core, t, v, [0.7]).y,
                               rtol=1e-14, atol=0)
    # a state coupled to the port, or read by a measured output, stays
    coupled = _damper_core(0.5)
    assert without_idle_states(coupled, np.zeros(1), np.zeros((1, 1)))[0] is coupled
    assert without_idle_states(core, np.zeros(1), np.ones((1, 1)))[0] is core


def test_dissipation_and_an_offset_that_compensate_each_other_go_together():
    """A fit may balance a small dissipation against a small offset (a lossless spring's fit
    did, 1e-5 against 5e-7): each removal alone raises the error, both together lower it —
    both go, and the core is lossless (``R = 0, P = 0``; with ``J = 0`` its step is explicit)."""
    layout = Layout(2, 2, ("quartic",), 1, True, 0)
    theta = _theta(np.random.default_rng(6))[: layout.size]
    sl = layout.slices()

    def present(th):
        b = layout.unpack(th)
        return bool(np.any(b["L"][:2] != 0)), bool(np.any(b["G"][:, 1] != 0))

    def error(th, bound=np.inf):
        r, g = present(th)
        return 1.0 if r and g else 1.5 if r or g else 0.5

    pruned, dropped = prune_terms(layout, theta, error, constant_ports=[1])
    assert ("R", 0) in dropped and ("G", 1) in dropped
    b, b0 = layout.unpack(pruned), layout.unpack(theta)
    # the states' rows of W's factor and the source's column of G are zero; the ports' rows
    # of the factor (S) and the driven port's column stay
    assert not b["L"][:2].any() and np.array_equal(b["L"][2:], b0["L"][2:])
    assert not b["G"][:, 1].any() and np.array_equal(b["G"][:, 0], b0["G"][:, 0])
    core = to_system(layout, pruned)
    assert not core.R.any() and not core.P.any() and core.S.any()
    assert error(pruned) == 0.5 and sl["L"][0].stop - sl["L"][0].start == 16


def test_a_dissipation_the_error_needs_stays():
    layout = Layout(2, 2, ("quartic",), 1, False, 0)
    theta = _theta(np.random.default_rng(7))[: layout.size]

    # the states' dissipation carries the fit, the offset does not matter
    def error(th, bound=np.inf):
        return 1.0 + 10.0 * float(not np.any(layout.unpack(th)["L"] != 0))

    pruned, dropped = prune_terms(layout, theta, error, constant_ports=[1])
    assert ("R", 0) not in dropped and ("G", 1) in dropped
    assert np.array_equal(layout.unpack(pruned)["L"], layout.unpack(theta)["L"])


def test_an_error_known_above_the_bound_stops_the_simulations(monkeypatch):
    """relative_error simulates run by run; once the error exceeds ``bound`` the rest is not
    simulated (the removal is rejected either way), below it the value is exact."""
    from types import SimpleNamespace

    from fmu_surrogate.identify.nonlinear import pruning

    calls = []

    def simulate(system, t, u, hold):  # stand-in: every output off by ``system`` (a number)
        calls.append(hold)
        return SimpleNamespace(y=np.full((t.size, 1), 1.0 + system))

    monkeypatch.setattr(pruning, "simulate", simulate)
    t = np.arange(4.0)
    exps = [(t, None, np.ones((4, 1)), "zoh")] * 3
    # off by 0.5 of 1 everywhere: 0.5 exactly, all three runs simulated, with or without a
    # bound it does not exceed
    for bound in (np.inf, 0.5):
        calls.clear()
        assert pruning.relative_error(0.5, exps, bound) == 0.5 and len(calls) == 3
    # above 0.2 after the first run (its squared error 1 against 0.2² of the total 12): stops
    calls.clear()
    assert pruning.relative_error(0.5, exps, 0.2) == np.inf and len(calls) == 1


def test_a_system_that_cannot_be_stepped_has_an_infinite_error_and_keeps_its_term(monkeypatch):
    """A removal that leaves the system unable to step through a run (Newton does not converge:
    a turning pendulum's fit without one of its energy terms) is a removal the fit needs: its
    error is ``inf``, not an exception that ends the fit."""
    from types import SimpleNamespace

    from fmu_surrogate.identify.nonlinear import pruning
    from fmu_surrogate.ph import ConvergenceError

    def simulate(system, t, u, hold):  # stand-in: a system of gain 0 cannot be stepped
        if system == 0.0:
            raise ConvergenceError("Newton did not converge at step 3")
        return SimpleNamespace(y=np.full((t.size, 1), 1.0 + system))

    monkeypatch.setattr(pruning, "simulate", simulate)
    t = np.arange(4.0)
    exps = [(t, None, np.ones((4, 1)), "zoh")]
    assert pruning.relative_error(0.0, exps) == np.inf
    assert pruning.relative_error(0.25, exps) == 0.25
    # the gain of one term as the stand-in's system: dropping it cannot be stepped, so it stays
    theta = _theta(np.random.default_rng(0))
    alpha = LAYOUT.slices()["alpha"][0].start

    def error(th, bound):
        return pruning.relative_error(1e-3 if th[alpha] != 0.0 else 0.0, exps, bound)

    pruned, dropped = prune_terms(LAYOUT, theta, error)
    assert ("alpha", 0) not in dropped and pruned[alpha] == theta[alpha]


def test_an_output_about_a_large_value_counts_by_its_swing(monkeypatch):
    """A pressure of 150 bar ± 10 bar: an error of 0.1 bar everywhere is 1/100 of the swing's
    size, not 1/1500 of the pressure's — the fit's errors (internal step, reports) see what
    the held-out error sees."""
    from types import SimpleNamespace

    from fmu_surrogate.identify.nonlinear import pruning

    t = np.linspace(0.0, 2.0 * np.pi, 401)[:-1]  # whole periods: RMS of sin exactly 1/√2
    y = 150.0 + 10.0 * np.sin(t)[:, None]

    def simulate(system, t, u, hold):  # stand-in: off by ``system`` bar everywhere
        return SimpleNamespace(y=y + system)

    monkeypatch.setattr(pruning, "simulate", simulate)
    err = pruning.relative_error(0.1, [(t, None, y, "zoh")])
    assert err == pytest.approx(0.1 / (10.0 / np.sqrt(2.0)), rel=1e-12)
