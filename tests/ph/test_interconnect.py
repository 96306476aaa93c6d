"""Power-conserving interconnection: the coupled matrices, refusals, and the helper cases."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.ph import (
    LinearPH,
    StructureError,
    feedback,
    interconnect,
    series,
    simulate,
    terminate,
)


def lin(seed, n=3, m=2):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    Y = rng.normal(size=(n, n))
    Z = rng.normal(size=(n, n))
    return LinearPH(A - A.T, Y @ Y.T, Z @ Z.T + np.eye(n), rng.normal(size=(n, m)))


def test_coupled_matrices_follow_the_formula():
    a, b = lin(0), lin(1)
    C = np.array([[0.0, 0.7], [-0.7, 0.0]])
    c = interconnect([a, b], C, [[0], [1]], names=["left", "right"])
    Bhat = np.zeros((6, 2))
    Bhat[:3, 0], Bhat[3:, 1] = a.B[:, 0], b.B[:, 1]
    J_ref = np.zeros((6, 6))
    J_ref[:3, :3], J_ref[3:, 3:] = a.J, b.J
    J_ref -= Bhat @ C @ Bhat.T
    np.testing.assert_allclose(c.J, J_ref, atol=1e-14)
    assert np.array_equal(c.J, -c.J.T)
    np.testing.assert_array_equal(c.B[:3, 0], a.B[:, 1])
    np.testing.assert_array_equal(c.B[3:, 1], b.B[:, 0])
    assert c.input_names == ("left.u2", "right.u1") and c.state_names[3] == "right.x1"
    # the closed loop equals substituting û = −Ĉ ŷ by hand in the stacked state equations
    x = np.random.default_rng(5).normal(size=6)
    ya, yb = a.B.T @ a.Q @ x[:3], b.B.T @ b.Q @ x[3:]
    uhat = -C @ np.array([ya[0], yb[1]])
    ua, ub = np.array([uhat[0], 0.0]), np.array([0.0, uhat[1]])
    rhs = np.concatenate([(a.J - a.R) @ a.Q @ x[:3] + a.B @ ua,
                          (b.J - b.R) @ b.Q @ x[3:] + b.B @ ub])
    np.testing.assert_allclose((c.J - c.R) @ c.Q @ x, rhs, atol=1e-12)


def test_non_skew_coupling_is_refused_with_its_size_and_the_fix():
    with pytest.raises(StructureError, match=r"not skew-symmetric: ‖Ĉ \+ Ĉᵀ‖_F = 2\.828e\+00.*"
                                             r"\(Ĉ − Ĉᵀ\)/2"):
        interconnect([lin(0), lin(1)], [[0, 1], [1, 0]], [[0], [0]])
    with pytest.raises(StructureError, match="must be 2×2"):
        interconnect([lin(0), lin(1)], [[0, 1, 0], [-1, 0, 0], [0, 0, 0]], [[0], [0]])
    with pytest.raises(StructureError, match="has inputs 0 … 1"):
        interconnect([lin(0), lin(1)], [[0, 1], [-1, 0]], [[0], [5]])


def test_helpers_feedback_series_terminate():
    a, b = lin(2, m=1), lin(3, m=1)
    fb = feedback(a, b, gain=2.0)
    assert fb.n_inputs == 0 and np.array_equal(fb.J, -fb.J.T)
    s = series(a, b)
    x = np.random.default_rng(1).normal(size=6)
    np.testing.assert_allclose(s.output(x), a.output(x[:3]) + b.output(x[3:]), atol=1e-14)
    r = terminate(a, 0, 3.0)
    assert r.n_inputs == 0
    np.testing.assert_allclose(r.R, a.R + 3.0 * np.outer(a.B[:, 0], a.B[:, 0]), atol=1e-14)
    assert np.array_equal(r.R, r.R.T)
    with pytest.raises(StructureError, match="resistance"):
        terminate(a, 0, -1.0)


def test_coupled_nonlinear_system_keeps_the_energy_balance():
    """A hardening spring (AVF-exact polynomial effort) coupled to a linear damper-mass."""

    from fmu_surrogate.benchmarks import hardening_spring

    sp = hardening_spring.system(port=True)
    c = interconnect([sp, lin(4, m=1)], [[0, 1.0], [-1.0, 0]], [[0], [0]])
    t = np.linspace(0, 20, 4001)
    tr = simulate(c, t, None, [1.0, 0.0, 0.1, 0.0, -0.1])
    # lossless coupling: stored + dissipated = 0 up to round-off (measured 1e-15 relative)
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale
    assert tr.dissipated[-1] > 0 and tr.H[-1] < tr.H[0]


# -- feedthrough: the algebraic loop ------------------------------------------------------------


def lin_ft(seed, n=3, m=2):
    """A random pH system with feedthrough: W = L Lᵀ (blocks R, P, S), N skew."""
    rng = np.random.default_rng(seed)
    L = 0.7 * rng.normal(size=(n + m, n + m))
    W = L @ L.T
    A, Mn, Z = rng.normal(size=(n, n)), rng.normal(size=(m, m)), rng.normal(size=(n, n))
    return LinearPH(A - A.T, W[:n, :n], Z @ Z.T + np.eye(n), rng.normal(size=(n, m)),
                    P=W[:n, n:], S=W[n:, n:], N=Mn - Mn.T)


def by_hand(systems, C, coupled, x, u_ext):
    """``E ẋ`` and the external outputs of the coupled systems from the parts' own equations:
    the coupled inputs û solve û + Ĉ ŷ(û) = 0 (affine in û: one linear solve)."""
    offs = np.cumsum([0] + [s.n_states for s in systems])
    rest = [[p for p in range(s.n_inputs) if p not in c] for s, c in zip(systems, coupled)]
    ext = np.split(np.asarray(u_ext, float), np.cumsum([len(r) for r in rest])[:-1])

    def parts(uhat):
        us, k = [], 0
        for s, c, r, e in zip(systems, coupled, rest, ext):
            u = np.zeros(s.n_inputs)
            u[c], u[r] = uhat[k:k + len(c)], e
            us.append(u)
            k += len(c)
        xs = [x[offs[i]:offs[i + 1]] for i in range(len(systems))]
        ys = [s.output(xi, u) for s, xi, u in zip(systems, xs, us)]
        return xs, us, ys

    def residual(uhat):
        _, _, ys = parts(uhat)
        return uhat + C @ np.concatenate([y[c] for y, c in zip(ys, coupled)])

    k = C.shape[0]
    r0 = residual(np.zeros(k))
    Jm = np.column_stack([residual(e) - r0 for e in np.eye(k)])
    xs, us, ys = parts(np.linalg.solve(Jm, -r0))
    flow = np.concatenate([s.flow(xi, u) for s, xi, u in zip(systems, xs, us)])
    return flow, np.concatenate([y[r] for y, r in zip(ys, rest)])


def test_coupling_with_feedthrough_solves_the_loop_and_stays_ph():
    a, b = lin_ft(0, 3, 2), lin_ft(1, 2, 3)
    C = np.array([[0.0, 1.3, 0.0], [-1.3, 0.0, 0.4], [0.0, -0.4, 0.0]])
    coupled = [[1], [0, 2]]
    c = interconnect([a, b], C, coupled, names=["a", "b"])
    # structure by construction: J and N skew bit for bit, W = [[R, P], [Pᵀ, S]] ⪰ 0
    assert np.array_equal(c.J, -c.J.T) and np.array_equal(c.N, -c.N.T)
    assert np.array_equal(c.W, c.W.T) and np.linalg.eigvalsh(c.W).min() >= -1e-13
    assert c.has_feedthrough and c.input_names == ("a.u1", "b.u2")
    rng = np.random.default_rng(2)
    for _ in range(3):
        x, u = rng.normal(size=5), rng.normal(size=2)
        flow, y = by_hand([a, b], C, coupled, x, u)
        # one 3×3 solve apart: measured ≤ 6e-16 of the largest entry
        np.testing.assert_allclose(c.flow(x, u), flow, atol=1e-13 * np.abs(flow).max())
        np.testing.assert_allclose(c.output(x, u), y, atol=1e-13 * np.abs(y).max())
    t = np.linspace(0.0, 2.0, 401)
    tr = simulate(c, t, np.column_stack([np.sin(3 * t), np.cos(t)]), rng.normal(size=5))
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale  # measured 2.3e-14


def test_loop_closure_without_feedthrough_is_the_classic_formula():
    from fmu_surrogate.ph.closed_loop import close_loop

    a, b = lin(0), lin(1)
    C = np.array([[0.0, 0.7], [-0.7, 0.0]])
    c = interconnect([a, b], C, [[0], [1]])
    J, R, G, P, S, N = close_loop([a, b], C, [0, 3], [1, 2])
    # the general congruence reproduces J − B̂ĈB̂ᵀ, R, B̄ (measured 3e-17 of max |J|, R and B̄
    # exactly)
    np.testing.assert_allclose(J, c.J, atol=1e-14 * np.abs(c.J).max())
    np.testing.assert_allclose(R, c.R, atol=1e-14 * np.abs(c.R).max())
    np.testing.assert_allclose(G, c.B, atol=1e-15)
    assert not (P.any() or S.any() or N.any())


def test_singular_algebraic_loop_is_refused():
    # two lossless 2-ports y = −N u with D₁ D₂ = −I: I + Ĉ D̂ is singular for Ĉ = [[0, I], [−I, 0]]
    Nm = np.array([[0.0, 1.0], [-1.0, 0.0]])
    g = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 2)), N=Nm)
    e = np.eye(2)
    C = np.block([[np.zeros((2, 2)), e], [-e, np.zeros((2, 2))]])
    with pytest.raises(StructureError, match=r"algebraic loop .* I \+ Ĉ D̂ is singular"):
        interconnect([g, g], C, [[0, 1], [0, 1]])


def test_feedback_of_two_resistive_one_ports_with_a_state():
    # a: capacitor behind a series resistance r (S = r), b: a conductance g (order 0, S = g);
    # u_a = −k y_b, u_b = k y_a ⇒ i = −k² g (q/C + r i) ⇒ q̇ = −q / (C (r + 1/(k² g)))
    r, cap, g, k = 0.5, 2.0, 0.8, 1.5
    a = LinearPH([[0.0]], [[0.0]], [[1 / cap]], [[1.0]], S=[[r]])
    b = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 1)), S=[[g]])
    fb = feedback(a, b, gain=k)
    A, _, _ = fb.state_space()
    assert A[0, 0] == pytest.approx(-1 / (cap * (r + 1 / (k**2 * g))), rel=1e-14)
    assert fb.R[0, 0] > 0 and fb.n_inputs == 0


def test_series_and_terminate_with_feedthrough():
    a, b = lin_ft(3, 2, 1), lin_ft(4, 3, 1)
    s = series(a, b)
    x, u = np.random.default_rng(6).normal(size=5), np.array([0.7])
    # same input, outputs add, E ẋ stacks
    np.testing.assert_allclose(s.output(x, u), a.output(x[:2], u) + b.output(x[2:], u),
                               rtol=1e-14)
    np.testing.assert_allclose(s.flow(x, u), np.concatenate([a.flow(x[:2], u),
                                                             b.flow(x[2:], u)]), rtol=1e-14)
    assert np.array_equal(s.W, s.W.T) and np.linalg.eigvalsh(s.W).min() >= -1e-13
    c = lin_ft(5, 3, 2)
    t = terminate(c, 0, 2.5)
    assert t.input_names == ("u2",) and t.state_names == c.state_names
    # u_0 = −2.5 y_0 by hand: the coupling with a resistor y_r = 2.5 u_r
    res = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 1)),
                   S=[[2.5]])
    rng = np.random.default_rng(7)
    for _ in range(2):
        x, u = rng.normal(size=3), rng.normal(size=1)
        flow, y = by_hand([c, res], np.array([[0.0, 1.0], [-1.0, 0.0]]), [[0], [0]], x, u)
        np.testing.assert_allclose(t.flow(x, u), flow, atol=1e-13 * np.abs(flow).max())
        np.testing.assert_allclose(t.output(x, u), y, atol=1e-13 * np.abs(y).max())
