"""Interconnecting a nonlinear feedthrough ``S_nl(u)``: against the hand-built state and port
dissipations, the analytic braked mass, the couplings that have no NonlinearPH form, and
series and terminate."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.ph import (
    ConvexEffort,
    LinearPH,
    NonlinearPH,
    PowerDissipation,
    StructureError,
    interconnect,
    simulate,
)

EMPTY = np.zeros((0, 0))
#: the rod's coupling: the mass's force input is −F of the damper, the damper's velocity is the
#: mass's (û + Ĉŷ = 0 over (mass port, damper port))
ROD = np.array([[0.0, 1.0], [-1.0, 0.0]])


def damper(law: PowerDissipation, S: float = 0.0, m: int = 1) -> NonlinearPH:
    """A static damper (order 0): ``y = S u + S_nl(u) u`` on ``m`` ports."""
    return NonlinearPH(EMPTY, EMPTY, np.zeros((0, m)), ConvexEffort(np.eye(0), [], [],
                                                                    np.zeros((0, 0))),
                       port_dissipation=law, S=S * np.eye(m))


def oscillator(m=2.0, k=3.0, d=0.1) -> LinearPH:
    """A mass on a spring with a viscous loss, states (momentum, elongation), two force ports
    (the rod, an external push), both reading the velocity."""
    return LinearPH([[0.0, -1.0], [1.0, 0.0]], [[d, 0.0], [0.0, 0.0]], np.diag([1 / m, k]),
                    [[1.0, 1.0], [0.0, 0.0]])


def test_coupled_port_law_is_the_hand_built_state_dissipation():
    """Two terms (p = 1/3 and p = 1, the second along a scaled direction and asymmetric) and a
    linear S = 0.3: coupled to the velocity v = bᵀz, each term's argument is m_j v = (m_j b)ᵀ z
    with its sign, so the asymmetry carries over."""
    law = PowerDissipation([[1.0], [2.0]], [4.0, 0.5], [1 / 3, 1.0], [1e-3, 1e-2], [0.0, -0.6])
    osc, dmp = oscillator(), damper(law, S=0.3)
    c = interconnect([osc, dmp], ROD, [[0], [0]], names=["mass", "brake"])
    b = osc.B[:, 0]
    hand = NonlinearPH(osc.J, osc.R + 0.3 * np.outer(b, b), osc.B[:, [1]],
                       ConvexEffort(osc.Q),
                       PowerDissipation(np.outer([1.0, 2.0], b), law.gains, law.exponents,
                                        law.smoothing, law.asymmetry))
    assert type(c) is NonlinearPH and c.nonlinear_feedthrough is None
    assert c.input_names == ("mass.u2",) and not c.has_feedthrough
    # the closed loop is one 2×2 solve with entries 0 and ±1 and products with b = (1, 0): the
    # matrices come out exact (measured equal bit for bit; 1e-15 allows a last-bit change)
    for a, r in ((c.J, hand.J), (c.R, hand.R), (c.B, hand.B),
                 (c.dissipation.directions, hand.dissipation.directions)):
        np.testing.assert_allclose(a, r, rtol=0, atol=1e-15)
    for a, r in ((c.dissipation.gains, law.gains), (c.dissipation.exponents, law.exponents),
                 (c.dissipation.smoothing, law.smoothing),
                 (c.dissipation.asymmetry, law.asymmetry)):
        np.testing.assert_array_equal(a, r)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x, u = rng.normal(size=2), rng.normal(size=1)
        # by hand from the parts' own equations: the damper reads the mass's velocity, the mass
        # receives −F (same formulas evaluated in another order: round-off, measured ≤ 3e-16)
        v = osc.output(x)[0]
        F = dmp.output(np.zeros(0), [v])[0]
        flow = osc.flow(x, [-F, u[0]])
        np.testing.assert_allclose(c.flow(x, u), flow, rtol=0, atol=1e-14 * np.abs(flow).max())
        np.testing.assert_allclose(c.flow(x, u), hand.flow(x, u), rtol=0, atol=1e-15)
        np.testing.assert_allclose(c.output(x, u), osc.output(x)[[1]], rtol=1e-15)


def test_free_port_law_stays_a_port_dissipation():
    """Nothing coupled: the parts side by side keep the law on the damper's port, exactly."""
    law = PowerDissipation([[1.0, -0.5]], [4.0], [1 / 3], [1e-3])
    osc, dmp = oscillator(), damper(law, S=0.2, m=2)
    c = interconnect([osc, dmp], EMPTY, [[], []])
    np.testing.assert_array_equal(c.port_dissipation.directions, [[0.0, 0.0, 1.0, -0.5]])
    np.testing.assert_array_equal(c.dissipation.directions, np.zeros((0, 2)))
    rng = np.random.default_rng(1)
    x, u = rng.normal(size=2), rng.normal(size=4)
    y = np.concatenate([osc.output(x), dmp.output(np.zeros(0), u[2:])])
    np.testing.assert_allclose(c.output(x, u), y, rtol=1e-15)
    # one port coupled (to the mass's velocity), the other free: each term reads one of them
    two = PowerDissipation([[1.0, 0.0], [0.0, 2.0]], [4.0, 1.0], [1 / 3, 1.0], [1e-3, 1e-2])
    c = interconnect([osc, damper(two, m=2)], ROD, [[0], [0]])
    np.testing.assert_array_equal(c.dissipation.directions, [[1.0, 0.0]])
    np.testing.assert_array_equal(c.port_dissipation.directions, [[0.0, 2.0]])
    assert c.input_names == ("s1.u2", "s2.u2")


@pytest.mark.parametrize("h", [0.01, 0.005])
def test_braked_mass_follows_the_analytic_solution(h):
    """m v' = −c sign(v)|v|^(4/3): v = (v0^(−1/3) + c t / (3 m))^(−3) (benchmarks/systems/
    braked_mass.toml), with c known exactly (no identification)."""
    m, c, v0 = 2.0, 4.0, 2.0
    mass = LinearPH([[0.0]], [[0.0]], [[1 / m]], [[1.0]])
    # δ = 1e-9: the smoothed law differs from |v|^(4/3) by δ²/(6 v²) < 1e-16 relative for the
    # v ≥ 0.1 of the run
    brake = damper(PowerDissipation([[1.0]], [c], [1 / 3], [1e-9]))
    coupled = interconnect([mass, brake], ROD, [[0], [0]])
    t = np.arange(0.0, 2.0 + h / 2, h)
    tr = simulate(coupled, t, None, [m * v0])
    exact = (v0 ** (-1 / 3) + c * t / (3 * m)) ** -3
    err = np.abs(tr.x[:, 0] / m - exact).max()
    # AVF on a quadratic H is the implicit midpoint rule, second order: the error is
    # ≈ 0.40 h² m/s (measured 4.05e-5 at h = 0.01, 1.01e-5 at h = 0.005; ratio 4.00)
    assert 0.35 * h ** 2 < err < 0.45 * h ** 2
    # the discrete balance H_N − H_0 + Σ h z̄ᵀR(z̄)z̄ = 0 holds to the Newton tolerance
    # (tol 1e-12 (1 + |x|) on a state of size 4): measured ≤ 9e-16 of the 4 J
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale
    assert tr.dissipated[-1] == pytest.approx(tr.H[0] - tr.H[-1], rel=1e-12)


def test_couplings_without_a_nonlinear_ph_form_are_refused_with_the_fix():
    law = PowerDissipation([[1.0]], [4.0], [1 / 3], [1e-3])
    # a damper on a damper: the force of each is the other's input, S_nl on both sides
    with pytest.raises(StructureError, match=r"nonlinear algebraic equation .* co-simulation "
                                             r"\(fmu_surrogate.couple\)"):
        interconnect([damper(law), damper(law)], ROD, [[0], [0]])
    # a linear feedthrough on the other side is a loop too: y = S u of a linear resistor
    res = LinearPH(EMPTY, EMPTY, EMPTY, np.zeros((0, 1)), S=[[0.5]])
    with pytest.raises(StructureError, match="nonlinear algebraic equation"):
        interconnect([res, damper(law)], ROD, [[0], [0]])
    # one term across a coupled port and a free one: a law of a state plus an input
    across = damper(PowerDissipation([[1.0, 1.0]], [4.0], [1 / 3], [1e-3]), m=2)
    with pytest.raises(StructureError, match=r"a coupled state and an external input at once .* "
                                             r"co-simulation \(fmu_surrogate.couple\)"):
        interconnect([oscillator(), across], ROD, [[0], [0]])
    # the partner passes an external input through to the coupled output (a skew N between
    # its ports): the damper's velocity would contain that input
    gyr = LinearPH([[0.0]], [[0.0]], [[0.5]], [[1.0, 0.0]], N=[[0.0, 1.0], [-1.0, 0.0]])
    with pytest.raises(StructureError, match="a coupled state and an external input at once"):
        interconnect([gyr, damper(law)], ROD, [[0], [0]])


def test_series_and_terminate_keep_the_law_of_the_other_ports():
    from fmu_surrogate.ph import series, terminate

    law = PowerDissipation([[1.0, 0.0], [0.0, 2.0]], [4.0, 1.0], [1 / 3, 1.0], [1e-3, 1e-2])
    dmp, osc = damper(law, S=0.2, m=2), oscillator()
    rng = np.random.default_rng(3)
    # series on port 0: both see one input, outputs add; the law's directions follow the merge
    s = series(dmp, osc)
    x, u = rng.normal(size=2), rng.normal(size=3)
    y = dmp.output(np.zeros(0), u[[0, 1]])
    y_osc = osc.output(x, u[[0, 2]])
    # same formulas evaluated in another order: round-off (measured equal)
    np.testing.assert_allclose(s.output(x, u), [y[0] + y_osc[0], y[1], y_osc[1]], rtol=1e-14)
    np.testing.assert_allclose(s.flow(x, u), osc.flow(x, u[[0, 2]]), rtol=1e-14)
    # terminate the port no term reads (port 1 of [[1, 0]]): the term on port 0 stays S_nl
    one = damper(PowerDissipation([[1.0, 0.0]], [4.0], [1 / 3], [1e-3]), S=0.2, m=2)
    t = terminate(one, 1, 3.0)
    assert t.input_names == ("u1",) and t.port_dissipation.n_terms == 1
    v = rng.normal(size=1)
    # u_1 = −3 y_1 = −3 (0.2 u_1): u_1 = 0 and y_0 = 0.2 v + 4 (v² + δ²)^(1/6) v (measured
    # equal; rtol allows a last-bit change of the power)
    np.testing.assert_allclose(t.output(np.zeros(0), v),
                               0.2 * v + 4.0 * (v * v + 1e-6) ** (1 / 6) * v, rtol=1e-14)
    # the term reading the closed port: the resistor closes a nonlinear algebraic loop
    with pytest.raises(StructureError, match="nonlinear algebraic equation"):
        terminate(one, 0, 3.0)
