"""Nonlinear pH systems: passivity along trajectories for random parameters, the scheme's
discrete energy balance, accuracy against scipy, exact surrogate files."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fmu_surrogate.ph import (
    ConvexEffort,
    NonlinearPH,
    PortedSystem,
    PortMap,
    PowerDissipation,
    StructureError,
    interconnect,
    load,
    save,
    simulate,
    terminate,
)


def random_nonlinear(rng, n=3, m=2, feedthrough=True, shifted=False):
    """Random parameters from the admissible sets: structure must hold whatever they are
    (``shifted``: the ridges preloaded)."""
    A = rng.normal(size=(n, n))
    L = 0.3 * rng.normal(size=(n + m, n + m))
    W = L @ L.T
    K = rng.normal(size=(n, n))
    eff = ConvexEffort(K @ K.T / n + 0.5 * np.eye(n), ["quartic", "logcosh"],
                       rng.uniform(0, 1, 2), rng.normal(size=(2, n)),
                       rng.normal(size=2) if shifted else None)
    diss = PowerDissipation(rng.normal(size=(2, n)), rng.uniform(0, 1, 2),
                            rng.uniform(-0.5, 2.0, 2), rng.uniform(1e-3, 0.1, 2))
    Nm = rng.normal(size=(m, m))
    fw = {"P": W[:n, n:], "S": W[n:, n:], "N": Nm - Nm.T} if feedthrough else {}
    return NonlinearPH(A - A.T, W[:n, :n], rng.normal(size=(n, m)), eff, diss, **fw)


@pytest.mark.parametrize("seed", range(5))
def test_power_balance_holds_pointwise_along_random_trajectories(seed):
    """``∇Hᵀẋ = yᵀu − [z; u]ᵀW(x)[z; u]`` and the dissipation is ≥ 0, for random parameters
    and random inputs (so ``dH/dt ≤ yᵀu``)."""
    rng = np.random.default_rng(seed)
    sys = random_nonlinear(rng)
    t = np.linspace(0.0, 5.0, 501)
    u = np.cumsum(rng.normal(size=(t.size, 2)), axis=0) * 0.2
    tr = simulate(sys, t, u, x0=rng.normal(size=3))
    z = sys.effort(tr.x)
    dHdt = (z * sys.flow(tr.x, tr.u)).sum(axis=1)
    supplied = (sys.output(tr.x, tr.u) * tr.u).sum(axis=1)
    diss = sys.dissipation_rate(z, tr.u)
    scale = np.abs(dHdt).max() + np.abs(supplied).max()
    # an identity of the formulas: round-off of a few products (measured ≤ 4e-16 of the scale)
    assert np.abs(dHdt - supplied + diss).max() <= 1e-12 * scale
    assert diss.min() >= -1e-12 * scale
    Rx = sys.dissipation_matrix(tr.x)
    assert np.linalg.eigvalsh(Rx).min() >= -1e-12 * np.abs(Rx).max()
    assert tr.H.min() >= 0.0


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("hold", ["linear", "zoh"])
def test_discrete_energy_balance_to_round_off(seed, hold):
    rng = np.random.default_rng(10 + seed)
    sys = random_nonlinear(rng, feedthrough=seed != 0)
    t = np.linspace(0.0, 10.0, 1001)
    u = np.sin(np.outer(t, rng.uniform(0.5, 3.0, 2))) * rng.uniform(0.5, 2.0, 2)
    tr = simulate(sys, t, u, x0=rng.normal(size=3), hold=hold)
    assert tr.method == "avf"
    # H(x_N) − H(x_0) + Σ h [z̄; ū]ᵀW(z̄)[z̄; ū] − Σ h ȳᵀū: the AVF identity, up to the Newton
    # tolerance and the 4-point quadrature of the logcosh ridge (measured ≤ 2e-14 of the scale)
    assert abs(tr.energy_residual) <= 1e-11 * tr.energy_scale
    assert np.all(np.diff(tr.dissipated) >= 0)


def _mass_damper_spring(m=1.0, c=0.5, k1=1.0, k3=2.0):
    """``m q̈ = F − c sign(v)|v|^(4/3) − k1 q − k3 q³``, x = (q, p), force in, velocity out."""
    eff = ConvexEffort(np.diag([k1, 1.0 / m]), ["quartic"], [k3], [[1.0, 0.0]])
    diss = PowerDissipation([[0.0, 1.0]], [c], [1.0 / 3.0], [1e-9])
    return NonlinearPH([[0.0, 1.0], [-1.0, 0.0]], np.zeros((2, 2)), [[0.0], [1.0]], eff, diss)


def test_mass_with_power_law_damper_matches_scipy():
    sys = _mass_damper_spring()
    t = np.linspace(0.0, 10.0, 2001)
    F = lambda s: 2.0 * np.sin(1.7 * s) + np.cos(0.4 * s)

    def rhs(s, x):
        q, p = x
        return [p, F(s) - 0.5 * np.sign(p) * abs(p) ** (4 / 3) - q - 2.0 * q ** 3]

    ref = solve_ivp(rhs, (0, 10), [0.3, 0.0], t_eval=t, rtol=1e-11, atol=1e-12, method="DOP853")
    tr = simulate(sys, t, F(t), x0=[0.3, 0.0])
    err = np.abs(tr.x - ref.y.T).max() / np.abs(ref.y).max()
    # AVF is second order: h = 5e-3 over 10 s (measured 9.0e-5 relative to max |x|)
    assert err < 3e-4
    assert abs(tr.energy_residual) <= 1e-11 * tr.energy_scale


def test_an_acceleration_output_reads_the_rate_of_the_momentum(tmp_path):
    """A mass of 2 kg on the cubic spring with the power-law damper, velocity (its port) and
    acceleration ``a = ṗ/m`` (``Cdx``) out: the acceleration is scipy's at the simulated
    states, it feeds the force through (1/m), the file keeps it, and the monolithic form
    gives the same."""
    m = 2.0
    sys = _mass_damper_spring(m=m)
    pm = PortMap(("F",), ("v", "a"), ("N",), ("m/s", "m/s2"), [[1.0]], [0.0], [[1.0], [0.0]],
                 np.zeros((2, 2)), np.zeros((2, 1)), np.zeros(2), Cdx=[[0.0, 0.0], [0.0, 1 / m]])
    sur = PortedSystem(sys, pm, x0=[0.3, 0.0])
    np.testing.assert_allclose(sur.feedthrough, [[0.0], [1 / m]], rtol=1e-15)
    t = np.linspace(0.0, 5.0, 1001)
    F = 2.0 * np.sin(1.7 * t) + np.cos(0.4 * t)
    tr = simulate(sur, t, F, hold="linear")
    q, v = tr.x[:, 0], tr.x[:, 1] / m
    a = (F - 0.5 * np.sign(v) * np.abs(v) ** (4 / 3) - q - 2.0 * q ** 3) / m
    # the same law at the same states and inputs: round-off of the terms (|a| ≲ 3)
    np.testing.assert_allclose(tr.y[:, 1], a, rtol=0, atol=1e-13)
    np.testing.assert_allclose(tr.y[:, 0], v, rtol=0, atol=1e-15)
    # the acceleration is the velocity's slope: central differences of the AVF states agree
    # to the scheme's O(h²) (measured 6.1e-5 of max |a|)
    slope = np.gradient(tr.y[:, 0], t)[1:-1]
    assert np.abs(slope - tr.y[1:-1, 1]).max() <= 3e-4 * np.abs(a).max()
    back = load(save(sur, tmp_path / "acc.json"))
    assert back.ports == sur.ports and np.array_equal(back.ports.Cdx, pm.Cdx)
    import json

    assert json.loads((tmp_path / "acc.json").read_text())["version"] == 9
    np.testing.assert_array_equal(simulate(back, t, F, hold="linear").y, tr.y)


def test_flow_is_the_explicit_ode():
    sys = _mass_damper_spring()
    x = np.array([[0.5, -2.0], [1.0, 3.0]])
    u = np.array([[1.0], [-1.0]])
    v = x[:, 1]
    ref = np.column_stack([v, u[:, 0] - 0.5 * np.sign(v) * np.abs(v) ** (4 / 3)
                           - x[:, 0] - 2.0 * x[:, 0] ** 3])
    assert np.allclose(sys.flow(x, u), ref, rtol=1e-12)
    assert np.allclose(sys.flow(x[0], u[0]), ref[0], rtol=1e-12)
    assert np.allclose(sys.dissipation_matrix(x[1])[1, 1], 0.5 * 3.0 ** (1 / 3), rtol=1e-12)


def test_surrogate_files_round_trip_exactly(tmp_path):
    rng = np.random.default_rng(3)
    sys = random_nonlinear(rng)
    back = load(save(sys, tmp_path / "nl.json"))
    assert type(back) is NonlinearPH
    for k in ("J", "R", "B", "P", "S", "N"):
        assert np.array_equal(getattr(back, k), getattr(sys, k)), k
    t = np.linspace(0, 2, 201)
    u = np.column_stack([np.sin(t), np.cos(3 * t)])
    a, b = simulate(sys, t, u), simulate(back, t, u)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.y, b.y)
    ported = PortedSystem(sys, PortMap.identity(2, ["F1", "F2"], ["v1", "v2"]), x0=[0.1, 0, 0])
    pb = load(save(ported, tmp_path / "ported.json"))
    assert isinstance(pb, PortedSystem) and type(pb.system) is NonlinearPH
    assert np.array_equal(simulate(pb, t, u).y, simulate(ported, t, u).y)


def test_terminate_keeps_the_nonlinear_dissipation():
    sys = random_nonlinear(np.random.default_rng(4), feedthrough=False)
    closed = terminate(sys, 1, 0.5)
    assert type(closed) is NonlinearPH and closed.dissipation is sys.dissipation
    assert closed.n_inputs == 1


def test_interconnect_stacks_energies_and_dissipations():
    """Two NonlinearPH (one with preloaded ridges) and a linear part coupled by a gyrator and a
    transformer-like bond: the coupled NonlinearPH has the parts' flows under û = −Ĉ ŷ, and
    AVF keeps its energy balance."""
    from fmu_surrogate.ph import LinearPH

    rng = np.random.default_rng(6)
    a = random_nonlinear(rng, feedthrough=False, shifted=True)
    b = random_nonlinear(rng, feedthrough=False)
    lin = LinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, 0.3]), np.diag([2.0, 1.0]),
                   [[0.0], [1.0]])
    C = np.array([[0.0, 1.5, 0.0], [-1.5, 0.0, 0.7], [0.0, -0.7, 0.0]])
    both = interconnect([a, b, lin], C, [[0], [1], [0]])
    assert type(both) is NonlinearPH and both.dissipation.n_terms == 4
    x = rng.normal(size=8)
    ue = rng.normal(size=2)  # a.u2, b.u1 stay external
    xa, xb, xl = x[:3], x[3:6], x[6:]
    ya, yb = a.output(xa[None])[0], b.output(xb[None])[0]
    yl = lin.output(xl[None])[0]
    yhat = np.array([ya[0], yb[1], yl[0]])
    uhat = -C @ yhat
    ref = np.concatenate([a.flow(xa, [uhat[0], ue[0]]), b.flow(xb, [ue[1], uhat[1]]),
                          lin.flow(xl, [uhat[2]])])
    # the same terms summed in another order: measured 4e-16 relative
    assert np.abs(both.flow(x, ue) - ref).max() < 1e-13 * np.abs(ref).max()
    assert both.hamiltonian(x[None])[0] == pytest.approx(
        a.hamiltonian(xa[None])[0] + b.hamiltonian(xb[None])[0] + lin.hamiltonian(xl[None])[0],
        rel=1e-14)
    t = np.linspace(0.0, 3.0, 1201)
    tr = simulate(both, t, np.column_stack([np.sin(t), 0.5 * np.cos(2 * t)]), 0.3 * x)
    # AVF's discrete balance with the parts' R_nl: the Newton tolerance and the 4-point
    # quadrature of the logcosh ridge, O(|Δ|⁸) per step (measured 5e-14 of the energy scale at
    # h = 2.5e-3; 1.8e-10 at h = 1e-2, where a step moves the ridge's argument by 0.5)
    assert abs(tr.energy_residual) < 1e-11 * tr.energy_scale
    with pytest.raises(StructureError, match="couples with NonlinearPH parts"):
        interconnect([a, LinearPH([[0.0]], [[0.0]], [[1.0]], [[1.0]], E=[[2.0]])],
                     np.array([[0.0, 1.0], [-1.0, 0.0]]), [[0], [0]])


def test_needs_a_convex_effort():
    from fmu_surrogate.ph import LinearEffort

    with pytest.raises(StructureError, match="ConvexEffort"):
        NonlinearPH(np.zeros((1, 1)), np.zeros((1, 1)), [[1.0]], LinearEffort(np.eye(1)))


def with_port_law(sys, rng, terms=2):
    """``sys`` with a random nonlinear feedthrough ``S_nl(u)`` (admissible parameters)."""
    m = sys.n_inputs
    port = PowerDissipation(rng.normal(size=(terms, m)), rng.uniform(0, 1, terms),
                            rng.uniform(-0.5, 2.0, terms), rng.uniform(1e-3, 0.1, terms))
    return NonlinearPH(sys.J, sys.R, sys.B, sys.effort_function, sys.dissipation,
                       port_dissipation=port, P=sys.P, S=sys.S, N=sys.N)


@pytest.mark.parametrize("seed", range(3))
def test_nonlinear_feedthrough_is_passive_and_kept_by_the_scheme(seed, tmp_path):
    """``y = … + S_nl(u) u`` adds ``uᵀS_nl(u)u ≥ 0`` to the dissipation: the pointwise balance
    and the AVF scheme's discrete one hold as without it, and files keep it exactly."""
    rng = np.random.default_rng(seed)
    sys = with_port_law(random_nonlinear(rng), rng)
    assert sys.has_feedthrough and sys.port_dissipation.n_terms == 2
    t = np.linspace(0.0, 4.0, 401)
    u = np.cumsum(rng.normal(size=(t.size, 2)), axis=0) * 0.2
    tr = simulate(sys, t, u, x0=rng.normal(size=3))
    z = sys.effort(tr.x)
    # the law by hand: Σ_j β_j (s_j² + δ_j²)^(p_j/2) s_j m_j with s_j = m_jᵀu
    pd = sys.port_dissipation
    s = tr.u @ pd.directions.T
    extra = (pd.gains * (s * s + pd.smoothing ** 2) ** (0.5 * pd.exponents) * s) @ pd.directions
    y_lin = z @ sys.output_matrix + tr.u @ sys.D.T
    scale = np.abs(tr.y).max()
    # the same formula evaluated in another order: round-off (measured ≤ 1e-15 of the scale)
    assert np.abs(tr.y - y_lin - extra).max() <= 1e-12 * scale
    dHdt = (z * sys.flow(tr.x, tr.u)).sum(axis=1)
    supplied = (tr.y * tr.u).sum(axis=1)
    diss = sys.dissipation_rate(z, tr.u)
    assert np.abs(dHdt - supplied + diss).max() <= 1e-12 * (np.abs(dHdt).max() + np.abs(
        supplied).max())
    assert diss.min() >= 0.0
    # the AVF step: H(x_{k+1}) − H(x_k) = h (ȳᵀū − dissipation) to the Newton tolerance
    assert abs(tr.energy_residual) <= 1e-9 * tr.energy_scale
    back = load(save(sys, tmp_path / "port.json"))
    assert np.array_equal(back.port_dissipation.directions, pd.directions)
    assert np.array_equal(simulate(back, t, u, x0=tr.x[0]).y, tr.y)
    with pytest.raises(StructureError, match="pass the inputs"):
        with_port_law(random_nonlinear(rng, feedthrough=False), rng).output(tr.x)
    only_port = NonlinearPH(sys.J, sys.R, sys.B, sys.effort_function,
                            port_dissipation=sys.port_dissipation)
    # both sides' S_nl on one bond: a nonlinear algebraic loop (tests/ph/test_port_laws.py)
    with pytest.raises(StructureError, match="nonlinear algebraic equation"):
        interconnect([only_port, only_port], [[0.0, 1.0], [-1.0, 0.0]], [[0], [0]])
    with pytest.raises(StructureError, match="nonlinear algebraic equation"):
        terminate(only_port, 1, 0.5)  # both terms read port 1: the resistor closes a loop
    with pytest.raises(StructureError, match="port inputs"):
        NonlinearPH(sys.J, sys.R, sys.B, sys.effort_function,
                    port_dissipation=PowerDissipation.empty(3))


def test_order_zero_is_the_static_law():
    """A NonlinearPH without states is its feedthrough alone: simulate gives y = S_nl(u) u + D u
    at the nodes, and the dissipated energy is the supplied one (nothing is stored)."""
    e = np.zeros((0, 0))
    law = PowerDissipation([[1.0]], [4.0], [1 / 3], [1e-3])
    sys = NonlinearPH(e, e, np.zeros((0, 1)), ConvexEffort(np.eye(0), [], [], np.zeros((0, 0))),
                      port_dissipation=law, S=[[0.5]])
    t = np.linspace(0.0, 1.0, 21)
    v = np.sin(7.0 * t)
    tr = simulate(sys, t, v, hold="zoh")
    assert tr.x.shape == (21, 0) and np.all(tr.newton_iterations == 0)
    # the law by hand: β (v² + δ²)^(p/2) v + S v; one pow, exact up to round-off (measured 0)
    ref = 4.0 * (v * v + 1e-6) ** (1 / 6) * v + 0.5 * v
    assert np.abs(tr.y[:, 0] - ref).max() <= 1e-14 * np.abs(ref).max()
    # held inputs: the step's power is v_k F(v_k), dissipated and supplied alike (measured 0)
    assert tr.dissipated[-1] == pytest.approx(np.sum(np.diff(t) * v[:-1] * ref[:-1]), rel=1e-14)
    assert abs(tr.energy_residual) <= 1e-15 * tr.energy_scale


def _stopped_mass(dc: float) -> NonlinearPH:
    """A mass (1 kg) on a spring (40 N/m) and a damper (2 N·s/m) between stops at ±5 cm:
    contact springs 400 N/m and contact dampers ``dc`` limited by the contact's force
    (Modelica's ElastoGap), state ``(q, p)``: a gap ridge and a gated damper on the velocity
    whose gate reads the effort ``z₁ = k q ± k_c (|q| − g)₊`` (``κ = k_c k g / (k + k_c)``)."""
    k, kc, g = 40.0, 400.0, 0.05
    eff = ConvexEffort(np.diag([k, 1.0]), ["gap"], [kc * g * g], [[1 / g, 0.0]])
    diss = PowerDissipation([[0.0, 1.0]], [dc], [0.0], [1e-3],
                            gates=([[1 / (k * g), 0.0]], [0.0], [kc * k * g / (k + kc)]))
    return NonlinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, 2.0]), [[0.0], [1.0]], eff,
                       diss)


def test_a_mass_between_damped_stops_matches_scipy():
    """The contact dampers' force ``clip(d_c v, −f_c, f_c)`` in the scheme against scipy's
    DOP853 on the written-out law (each contact's entry and exit a kink the steps cross)."""
    dc, k, kc, g = 20.0, 40.0, 400.0, 0.05
    sys = _stopped_mass(dc)
    t = np.linspace(0.0, 4.0, 8001)
    F = lambda s: 12.0 * np.sin(2.1 * s)

    def rhs(s, x):
        q, v = x
        pen = max(abs(q) - g, 0.0)
        fc = kc * pen
        stop = np.sign(q) * fc + np.clip(dc * v, -fc, fc) if pen > 0 else 0.0
        return [v, F(s) - k * q - 2.0 * v - stop]

    ref = solve_ivp(rhs, (0, 4), [0.0, 0.0], t_eval=t, rtol=1e-11, atol=1e-12, method="DOP853",
                    max_step=1e-3)
    tr = simulate(sys, t, F(t))
    assert np.abs(ref.y[0]).max() > 0.07  # the stops are struck, 2 cm deep
    damping = sys.dissipation.force(sys.effort(tr.x))[:, 1]  # nonzero in contact, limited at
    assert np.any(np.abs(damping) > 0) and np.any(np.abs(damping - dc * tr.x[:, 1]) > 1e-3)
    err = np.abs(tr.x - ref.y.T).max(axis=0) / np.abs(ref.y).max(axis=1)
    # AVF is second order (h = 5e-4) but first order across each kink of the contact law:
    # measured 4.7e-6 (q) and 1.7e-5 (p) of their largest values
    assert err.max() < 1e-4, err
    # without the contact dampers the motion differs by far more than that (measured 58 %)
    free = simulate(_stopped_mass(0.0), t, F(t))
    assert np.abs(free.x - ref.y.T).max(axis=0)[1] / np.abs(ref.y[1]).max() > 0.2


def test_interconnect_keeps_a_contacts_damper():
    """The stopped mass with contact dampers coupled to a spring-mass (a gyrator between their
    ports): the coupled system's flow is the parts' flows under û = −Ĉ ŷ, the gate with them."""
    from fmu_surrogate.ph import LinearPH

    a = _stopped_mass(20.0)
    lin = LinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, 0.3]), np.diag([2.0, 1.0]),
                   [[0.0], [1.0]])
    C = np.array([[0.0, 1.0], [-1.0, 0.0]])
    both = interconnect([lin, a], C, [[0], [0]])
    assert both.dissipation.gated.tolist() == [True]
    rng = np.random.default_rng(8)
    for x in rng.normal(size=(20, 4)) * [0.1, 1.0, 0.1, 1.0]:  # in and out of contact
        xl, xa = x[:2], x[2:]
        yhat = np.array([lin.output(xl[None])[0][0], a.output(xa[None])[0][0]])
        uhat = -C @ yhat
        ref = np.concatenate([lin.flow(xl, [uhat[0]]), a.flow(xa, [uhat[1]])])
        # the same terms summed in another order: round-off
        np.testing.assert_allclose(both.flow(x, np.zeros(0)), ref, rtol=1e-13, atol=1e-13)
