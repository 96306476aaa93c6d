"""Structure-preserving simulation against exact solutions and the energy balance."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from fmu_surrogate.benchmarks import hardening_spring, pendulum, rc_network
from fmu_surrogate.ph import (
    ConvergenceError,
    LinearPH,
    interconnect,
    simulate,
)


def random_ph(rng, n, m):
    """A random pH system with eigenvalues of (J − R)Q of order 1 (|λ| ≲ 3)."""
    A = 0.5 * rng.normal(size=(n, n))
    Y = 0.3 * rng.normal(size=(n, n))
    Z = rng.normal(size=(n, n))
    return LinearPH(A - A.T, Y @ Y.T, Z @ Z.T / n + np.eye(n), rng.normal(size=(n, m)))


def exact_linear(system, t, u, x0):
    """Matrix exponential of the augmented system for inputs linear between grid points."""
    A = (system.J - system.R) @ system.Q
    n, m = system.B.shape
    x, out = np.array(x0, float), [np.array(x0, float)]
    for k in range(len(t) - 1):
        h = t[k + 1] - t[k]
        M = np.zeros((n + 2 * m, n + 2 * m))
        M[:n, :n], M[:n, n:n + m], M[n:n + m, n + m:] = A, system.B, np.eye(m)
        z = np.concatenate([x, u[k], (u[k + 1] - u[k]) / h])
        x = (expm(M * h) @ z)[:n]
        out.append(x)
    return np.array(out)


def test_coupled_random_systems_match_the_exact_solution_and_balance_energy():
    rng = np.random.default_rng(7)
    a, b = random_ph(rng, 4, 2), random_ph(rng, 3, 2)
    C = np.array([[0.0, 1.3], [-1.3, 0.0]])
    c = interconnect([a, b], C, [[1], [0]], names=["a", "b"])
    assert np.array_equal(c.J, -c.J.T)  # skew exactly, by construction
    t = np.linspace(0.0, 2.0, 2001)  # h = 1e-3
    u = np.column_stack([np.sin(3 * t), np.cos(2 * t)])
    x0 = rng.normal(size=7)
    tr = simulate(c, t, u, x0, method="midpoint")
    ref = exact_linear(c, t, u, x0)
    # midpoint is second order: measured 8.1e-6 relative at h = 1e-3 (the bound is the spec)
    assert np.abs(tr.x - ref).max() <= 1e-5 * np.abs(ref).max()
    # the scheme's own balance: round-off only (measured ≈ 1e-13 relative)
    assert abs(tr.energy_residual) <= 1e-10 * tr.energy_scale
    assert tr.dissipated[-1] > 0 and np.all(np.diff(tr.dissipated) >= 0)


def spring(R):
    return hardening_spring.system(damping=float(R[1][1]))


def test_avf_conserves_a_non_quadratic_hamiltonian_and_midpoint_does_not():
    t = np.linspace(0.0, 100.0, 10_001)
    lossless = spring(np.zeros((2, 2)))
    avf = simulate(lossless, t, None, [1.5, 0.0], method="avf")
    mid = simulate(lossless, t, None, [1.5, 0.0], method="midpoint")
    drift_avf = np.abs(avf.H - avf.H[0]).max() / avf.H[0]
    drift_mid = np.abs(mid.H - mid.H[0]).max() / mid.H[0]
    assert drift_avf <= 1e-10  # quadrature exact for degree 3 (measured 1.5e-14)
    assert drift_mid > 1e-6  # midpoint changes H by O(h²) here (measured 3.3e-5)
    # both are second order: the trajectories agree to O(h²) with each other
    assert np.abs(avf.x - mid.x).max() < 5e-2


def test_newton_starts_from_a_quadratic_extrapolation():
    """Newton's method starts each step from the quadratic through the last three nodes: its
    first correction is O(h³), so the second is below the tolerance from the third step on."""
    t = np.linspace(0.0, 10.0, 1001)  # h = 0.01
    tr = simulate(spring(np.diag([0.0, 0.3])), t, None, [1.5, 0.0], method="avf")
    # measured: 998 of the 1000 steps in 2 iterations, 2 in 3 (a linear extrapolation: 761 in 3)
    assert np.count_nonzero(tr.newton_iterations > 2) <= 2
    assert tr.newton_iterations.max() <= 3
    # the discrete energy balance stays at round-off (measured 1.5e-15 of the energy scale)
    assert abs(tr.energy_residual) <= 1e-13 * tr.energy_scale


def test_dissipation_never_increases_h():
    t = np.linspace(0.0, 30.0, 3001)
    tr = simulate(spring(np.diag([0.0, 0.3])), t, None, [1.5, 0.0])
    assert np.all(np.diff(tr.H) <= 1e-15 * tr.H[0])
    assert tr.H[-1] < 0.05 * tr.H[0]
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale


def test_index1_rc_network_matches_the_analytic_solution_of_its_ode():
    """RC network with a constant input: x1' = G (u − √(2 x1)) has the implicit solution
    t(x1) below; x2 = u and x3 = G (u − √(2 x1)) hold at every node."""
    t = np.linspace(0.0, 5.0, 5001)
    u = np.full((t.size, 1), 1.5)
    tr = simulate(rc_network.system(1.0), t, u, [2.0, 0.0, 0.0])  # x2, x3 made consistent
    s, s0, c = np.sqrt(2 * tr.x[:, 0]), 2.0, 1.5
    # d s/dt = (c − s)/s  ⇒  t = (s0 − s) + c ln((s0 − c)/(s − c))
    t_of_s = (s0 - s) + c * np.log((s0 - c) / (s - c))
    assert np.abs(t_of_s - t).max() < 1e-5  # second order, h = 1e-3 (measured 2e-7)
    assert np.abs(tr.x[:, 1] - 1.5).max() < 1e-12
    assert np.abs(tr.x[:, 2] - (1.5 - s)).max() < 1e-6
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale


def test_index3_pendulum_stays_on_its_constraint_and_conserves_energy():
    t = np.linspace(0.0, 10.0, 2001)
    a0 = np.pi / 4
    x0 = [np.sin(a0), -np.cos(a0), 0.0, 0.0, 0.5 * np.cos(a0) * (0.0 - 1.0)]
    tr = simulate(pendulum.system(), t, np.zeros((t.size, 1)), x0)
    q = tr.x[:, :2]
    assert np.abs(np.sum(q**2, 1) - 1.0).max() < 1e-10  # on the manifold at every node
    # no input, no dissipation (the multiplier's row carries no power): H conserved
    assert np.abs(tr.H - tr.H[0]).max() < 1e-6
    # angle against an accurate solution of α'' = −sin α
    from scipy.integrate import solve_ivp

    sol = solve_ivp(lambda _t, y: [y[1], -np.sin(y[0])], (0, 10), [a0, 0.0], t_eval=t,
                    rtol=1e-12, atol=1e-12)
    alpha = np.arctan2(q[:, 0], -q[:, 1])
    assert np.abs(alpha - sol.y[0]).max() < 1e-4  # second order in h = 5e-3


def test_index3_multipliers_at_the_nodes_solve_the_hidden_constraint_with_the_node_input():
    # a held input that jumps at every node: the step's multiplier lags it, the node value must
    # not — λ = ½ (q2 (g − u) − |p|²) / |q|² (m = l = g = 1) from g̈(q) = 0 at each node
    t = np.linspace(0.0, 2.0, 201)
    u = pendulum.input_signal(t)
    a0 = np.pi / 4
    x0 = [np.sin(a0), -np.cos(a0), 0.0, 0.0, 0.0]
    tr = simulate(pendulum.system(), t, u, x0, hold="zoh")
    q, p = tr.x[:, :2], tr.x[:, 2:4]
    lam = 0.5 * (q[:, 1] * (1.0 - u) - (p**2).sum(1)) / (q**2).sum(1)
    # central differences along the flow of an effort Jacobian that is itself taken by
    # differences (this effort has no analytic one): measured 4.1e-8
    assert np.abs(tr.x[:, 4] - lam).max() < 1e-7


def test_zero_order_hold_inputs_match_the_exact_held_solution_to_second_order():
    rng = np.random.default_rng(3)
    s = random_ph(rng, 3, 1)
    t = np.linspace(0.0, 1.0, 401)
    u = np.sign(np.sin(9 * t))[:, None]
    zoh = simulate(s, t, u, np.zeros(3), hold="zoh")
    A = (s.J - s.R) @ s.Q
    x = np.zeros(3)
    for k in range(len(t) - 1):  # the input held at u_k: exact via the matrix exponential
        h = t[k + 1] - t[k]
        M = np.zeros((4, 4))
        M[:3, :3], M[:3, 3:] = A, s.B
        x = (expm(M * h) @ np.concatenate([x, u[k]]))[:3]
    # second order in h = 2.5e-3 around the switching input (measured 1.1e-5 relative)
    assert np.abs(zoh.x[-1] - x).max() < 3e-5 * np.abs(x).max()


def test_bad_input_and_newton_failure_are_clear():
    s = spring(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="strictly increasing"):
        simulate(s, [0.0, 0.0, 1.0], None, [1.0, 0.0])
    with pytest.raises(ValueError, match="x0 must be 2 finite numbers"):
        simulate(s, [0.0, 1.0], None, [1.0])
    with pytest.raises(ValueError, match="hold must be"):
        simulate(s, [0.0, 1.0], None, [1.0, 0.0], hold="cubic")
    with pytest.raises(ConvergenceError, match=r"step 0 \(t = 0 s → 50 s\)"):
        simulate(s, [0.0, 50.0], None, [3.0, 0.0], max_newton=3)


# -- feedthrough P, S, N ----------------------------------------------------------------------


def random_feedthrough_ph(rng, n, m, lossless=False):
    """A random pH system with W = L Lᵀ (blocks R, P, S), a skew N; lossless: W = 0."""
    L = 0.5 * rng.normal(size=(n + m, n + m))
    W = np.zeros((n + m, n + m)) if lossless else L @ L.T
    A, Mn, Z = rng.normal(size=(n, n)), rng.normal(size=(m, m)), rng.normal(size=(n, n))
    return LinearPH(A - A.T, W[:n, :n], Z @ Z.T / n + np.eye(n), rng.normal(size=(n, m)),
                    P=W[:n, n:], S=W[n:, n:], N=Mn - Mn.T)


@pytest.mark.parametrize("hold", ["linear", "zoh"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_feedthrough_keeps_the_discrete_energy_balance_to_round_off(seed, hold):
    rng = np.random.default_rng(seed)
    sys = random_feedthrough_ph(rng, 5, 3)
    t = np.linspace(0.0, 3.0, 601)
    u = rng.normal(size=(t.size, 3))
    tr = simulate(sys, t, u, rng.normal(size=5), "midpoint", hold=hold)
    # H(x_N) − H(x_0) + Σ h [z̄; ū]ᵀW[z̄; ū] − Σ h ȳᵀū: round-off of 600 steps (measured ≤ 2e-15
    # relative to the energy scale)
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale
    # the dissipation is the feedthrough-aware one, step by step
    ub = 0.5 * (u[1:] + u[:-1]) if hold == "linear" else u[:-1]
    zb = 0.5 * (tr.z[1:] + tr.z[:-1])
    zu = np.hstack([zb, ub])
    ref = np.diff(t) * np.einsum("ij,jk,ik->i", zu, sys.W, zu)
    # the same quadratic form summed in another order: round-off of its largest terms (measured
    # 9e-16 absolute on steps of 3e-3)
    np.testing.assert_allclose(np.diff(tr.dissipated), ref, rtol=0, atol=1e-12 * ref.max())
    np.testing.assert_allclose(tr.ybar, zb @ (sys.B + sys.P) + ub @ sys.D.T, rtol=1e-13,
                               atol=1e-14)
    # node outputs: y = (G + P)ᵀ z + (S − N) u
    np.testing.assert_allclose(tr.y, tr.z @ (sys.B + sys.P) + u @ sys.D.T, rtol=1e-13,
                               atol=1e-14)


def test_lossless_feedthrough_dissipates_nothing():
    rng = np.random.default_rng(5)
    sys = random_feedthrough_ph(rng, 4, 2, lossless=True)
    t = np.linspace(0.0, 2.0, 401)
    u = rng.normal(size=(t.size, 2))
    tr = simulate(sys, t, u, rng.normal(size=4), hold="zoh")
    assert np.all(tr.dissipated == 0.0)
    # stored = supplied (uᵀNu = 0 up to round-off): measured 4e-16 relative
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale


def test_feedthrough_outputs_match_scipys_exact_zoh_discretisation():
    from scipy.signal import cont2discrete, dlsim

    rng = np.random.default_rng(9)
    sys = random_feedthrough_ph(rng, 4, 2)
    A, B, C = sys.state_space()
    h = 1e-3
    t = h * np.arange(3001)
    u = np.column_stack([np.sign(np.sin(5 * t)), np.cos(3 * t)])  # held values, with jumps
    x0 = rng.normal(size=4)
    Ad, Bd, Cd, Dd, _ = cont2discrete((A, B, C, sys.D), h, method="zoh")
    _, y_ref, x_ref = dlsim((Ad, Bd, Cd, Dd, h), u, t, x0=x0)
    tr = simulate(sys, t, u, x0, hold="zoh")
    # implicit midpoint vs the exact map of a held input: second order (|λ|max ≈ 10), measured
    # 2.1e-6 of max |y| and 1.5e-6 of max |x| at h = 1e-3, a quarter of that at h/2 (the
    # feedthrough D u itself is exact at the nodes)
    assert np.abs(tr.y - y_ref).max() <= 5e-6 * np.abs(y_ref).max()
    assert np.abs(tr.x - x_ref).max() <= 5e-6 * np.abs(x_ref).max()


def test_order_zero_system_simulates_as_its_static_map():
    S, N = np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([[0.0, 3.0], [-3.0, 0.0]])
    sys = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 2)),
                   S=S, N=N)
    t = np.linspace(0.0, 1.0, 11)
    u = np.column_stack([np.sin(t), t])
    tr = simulate(sys, t, u, None)
    assert tr.x.shape == (11, 0)
    np.testing.assert_allclose(tr.y, u @ (S - N).T, rtol=1e-15)
    # all supplied energy is dissipated (H ≡ 0)
    assert tr.dissipated[-1] > 0
    assert abs(tr.energy_residual) <= 1e-14 * tr.energy_scale


class _CubicEffort:
    """z = Q x + c x³ (componentwise), H = ½ xᵀQx + c Σ x⁴/4: AVF is exact (degree 3)."""

    def __init__(self, Q, c):
        self.Q, self.c = Q, c

    def __call__(self, x):
        return x @ self.Q.T + self.c * x**3

    def jacobian(self, x):
        return self.Q[None] + np.einsum("ni,ij->nij", 3 * self.c * x**2, np.eye(x.shape[1]))

    def hamiltonian(self, x):
        return 0.5 * ((x @ self.Q) * x).sum(axis=1) + 0.25 * self.c * (x**4).sum(axis=1)


def test_nonlinear_feedthrough_keeps_the_avf_energy_balance():
    from fmu_surrogate.ph import PHDAE

    rng = np.random.default_rng(4)
    lin = random_feedthrough_ph(rng, 3, 2)
    eff = _CubicEffort(lin.Q, 0.7)
    sys = PHDAE(np.eye(3), lin.J, lin.R, lin.B, effort=eff, hamiltonian=eff.hamiltonian,
                P=lin.P, S=lin.S, N=lin.N)
    t = np.linspace(0.0, 2.0, 401)
    u = np.column_stack([np.sin(4 * t), np.cos(t)])
    tr = simulate(sys, t, u, [0.5, -0.3, 0.8], hold="zoh")
    assert tr.method == "avf"
    # Newton stops at 1e-12 of the state: measured 3e-15 relative to the energy scale
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_method_is_the_held_input_solution_with_exact_energy_integrals(seed):
    """method "exact" (the default for a LinearPH with hold="zoh"): the states are the exact
    solution for inputs held over each step, and the energy terms the exact integrals."""
    from scipy.integrate import quad
    from scipy.linalg import expm

    rng = np.random.default_rng(seed)
    sys = random_feedthrough_ph(rng, 4, 2)
    t = np.concatenate([np.linspace(0.0, 1.0, 21), [1.07, 1.2, 1.5]])  # steps of three sizes
    u = rng.normal(size=(t.size, 2))
    x0 = rng.normal(size=4)
    tr = simulate(sys, t, u, x0, hold="zoh")
    assert tr.method == "exact"
    A, B = (sys.J - sys.R) @ sys.Q, sys.B - sys.P
    x, xs = x0.copy(), [x0]
    for k in range(t.size - 1):  # reference: exp of the augmented matrix, one step at a time
        M = np.zeros((6, 6))
        M[:4, :4], M[:4, 4:] = A, B
        x = (expm(M * (t[k + 1] - t[k])) @ np.concatenate([x, u[k]]))[:4]
        xs.append(x)
    xs = np.array(xs)
    # two exponentials of the same matrices: round-off (measured 4e-16 relative)
    np.testing.assert_allclose(tr.x, xs, rtol=0, atol=1e-13 * np.abs(xs).max())
    # the dissipated energy of the last step by quadrature of [z; u]ᵀW[z; u] along the exact
    # solution (quad to 1e-13 relative)
    k, h = t.size - 2, t[-1] - t[-2]

    def rate(s):
        xx = expm(A * s) @ xs[k] + np.linalg.solve(A, (expm(A * s) - np.eye(4)) @ B @ u[k])
        zu = np.concatenate([sys.Q @ xx, u[k]])
        return zu @ sys.W @ zu

    ref = quad(rate, 0.0, h, epsabs=0, epsrel=1e-13)[0]
    assert abs(np.diff(tr.dissipated)[-1] - ref) <= 1e-11 * ref
    # the balance closes to round-off (measured 1e-15 of the energy scale)
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale
    with pytest.raises(ValueError, match="hold='zoh'"):
        simulate(sys, t, u, x0, "exact", hold="linear")


def _lossless_core(R=0.0):
    """Two integrators with a convex energy (a quadratic form, a quartic and a logcosh ridge),
    two ports, ``J = 0``; ``R = R · I`` (0: lossless, its step explicit)."""
    from fmu_surrogate.ph import ConvexEffort, NonlinearPH

    eff = ConvexEffort([[2.0, 0.3], [0.3, 1.0]], ["quartic", "logcosh"], [0.8, 1.5],
                       [[1.0, -0.5], [0.4, 0.9]])
    return NonlinearPH(np.zeros((2, 2)), R * np.eye(2), [[1.0, 0.2], [-0.3, 0.7]], eff)


@pytest.mark.parametrize("hold", ["zoh", "linear"])
def test_a_lossless_core_of_integrators_steps_explicitly(hold):
    """``ẋ = B u`` whatever the energy: the states are the sums of ``h B ū`` (exact up to
    round-off), no Newton iteration, and the AVF mean efforts keep the energy balance; the same
    system with a dissipation of 1e-300 (Newton's path) gives the same trajectory."""
    t = np.linspace(0.0, 3.0, 601)
    u = np.column_stack([np.sin(3 * t), np.cos(1.7 * t) - 0.5])
    x0 = np.array([0.4, -0.2])
    tr = simulate(_lossless_core(), t, u, x0, hold=hold)
    ubar = 0.5 * (u[1:] + u[:-1]) if hold == "linear" else u[:-1]
    X = x0 + np.concatenate([np.zeros((1, 2)), np.cumsum(np.diff(t)[:, None] * ubar
                                                         @ np.array([[1.0, 0.2], [-0.3, 0.7]]).T,
                                                         axis=0)])
    # sums of 600 terms of order 0.01 in another order: measured 1.1e-15 (of |x| ≈ 1.8)
    np.testing.assert_allclose(tr.x, X, rtol=0, atol=1e-14)
    assert not tr.newton_iterations.any() and tr.dissipated[-1] == 0.0
    # the four-node quadrature is exact for the cubic part of the effort only, yet the
    # logcosh ridge's share is far below round-off at this step (measured 1.0e-15 of the
    # energy scale)
    assert abs(tr.energy_residual) <= 1e-13 * tr.energy_scale
    newton = simulate(_lossless_core(1e-300), t, u, x0, hold=hold)
    assert newton.newton_iterations.min() >= 1
    # Newton stops at 1e-12 of the state (measured 2.2e-16 in x, 3.6e-15 in y)
    np.testing.assert_allclose(newton.x, tr.x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(newton.y, tr.y, rtol=0, atol=1e-12)


def test_a_first_correction_whose_bounded_error_is_round_off_ends_the_step(monkeypatch):
    """Newton's first correction ends the step when the error it leaves, bounded with the change
    of the Jacobian since the last step, is below ``ACCEPT · tol`` of the state: the trajectory
    is that of the confirming iterations to round-off, and a change of the step size (no bound
    from the last step) takes them again."""
    from fmu_surrogate.ph.simulation import newton

    h = 1e-3
    t = np.concatenate([np.arange(0.0, 5.0, h), 5.0 + np.arange(1, 2001) * (2 * h)])
    system = spring(np.diag([0.0, 0.3]))
    tr = simulate(system, t, None, [1.5, 0.0], method="avf")
    monkeypatch.setattr(newton, "ACCEPT", 0.0)  # never accepted: the iteration confirms
    ref = simulate(system, t, None, [1.5, 0.0], method="avf")
    its = tr.newton_iterations
    # measured: every step in one iteration but the first (no last step) and the two at the
    # change of h (steps 4999 and 5000); with the confirming iterations, all in two
    assert np.count_nonzero(its > 1) <= 3 and its[4999] >= 2 and its[5000] >= 2
    assert ref.newton_iterations.min() == 2
    # differences of round-off carried along 7000 steps of a nonlinear oscillator (measured
    # 3.6e-14 of |x| = 1.5 with h = 1e-3 throughout)
    np.testing.assert_allclose(tr.x, ref.x, rtol=0, atol=1e-12)
    # the mean efforts moved to first order keep the energy balance (measured 1.1e-15; 1.1e-14
    # with the confirming iterations)
    assert abs(tr.energy_residual) <= 1e-13 * tr.energy_scale


def test_a_mode_far_faster_than_the_step_has_its_exact_energies():
    # ẋ = −R x + G u, y = G x with R h = 1.4e4 (a linear fit's fast lag: the Van Loan block's
    # exp(+R h) overflowed, the energies were NaN); from rest under a held u0, x = c (1 − e^{−Rt}),
    # c = G u0 / R: over the first step ∫ R x² = R c² h − 1.5 c², ∫ y u = G u0 c (h − 1/R)
    # (e^{−Rh} = 0 in double precision)
    import warnings

    R, G, u0, h = 1.4e6, 1009.4, 0.3, 0.01
    system = LinearPH(np.zeros((1, 1)), np.array([[R]]), np.eye(1), np.array([[G]]))
    t = np.arange(6) * h
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way
        tr = simulate(system, t, np.full((t.size, 1), u0), hold="zoh")
    c = G * u0 / R
    # the doubled integral's round-off: 14 doublings, each a relative 1e-16 (measured 2e-16)
    assert tr.dissipated[1] - tr.dissipated[0] == pytest.approx(R * c * c * h - 1.5 * c * c,
                                                                 rel=1e-12)
    assert tr.supplied[1] - tr.supplied[0] == pytest.approx(G * u0 * c * (h - 1 / R), rel=1e-12)
    assert np.allclose(tr.x[1:, 0], c, rtol=1e-13)
    assert abs(tr.energy_residual) <= 1e-12 * tr.supplied[-1]
