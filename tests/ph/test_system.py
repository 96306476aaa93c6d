"""Tests of the pH data model against analytic references."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fmu_surrogate.benchmarks import rc_network
from fmu_surrogate.benchmarks.msd_chain import msd_chain
from fmu_surrogate.ph import PHDAE, LinearPH, StructureError, check_psd, check_skew, check_spd


def test_structure_checks_refuse_with_named_fix():
    with pytest.raises(StructureError, match="skew-symmetric"):
        check_skew([[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(StructureError, match="positive semidefinite"):
        check_psd(np.diag([1.0, -0.5]))
    with pytest.raises(StructureError, match="symmetric"):
        check_psd([[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(StructureError, match="positive definite"):
        check_spd(np.diag([1.0, 0.0]))
    with pytest.raises(StructureError, match="NaN"):
        check_skew([[0.0, np.nan], [-np.nan, 0.0]])


def test_shape_mismatch_refused():
    with pytest.raises(StructureError, match="B must have shape"):
        PHDAE(np.eye(2), np.zeros((2, 2)), np.zeros((2, 2)), np.ones((3, 1)), effort=lambda x: x)
    with pytest.raises(StructureError, match="E must have shape"):
        PHDAE(np.eye(3), np.zeros((2, 2)), np.zeros((2, 2)), np.ones((2, 1)), effort=lambda x: x)


def test_transfer_function_of_oscillator_is_analytic():
    # ẋ = [[0,1],[-1,-d]] diag(k, 1/m) x + (0,1)ᵀu: G(s) = (s/m) / (s² + (d/m) s + k/m)
    k, m, d = 2.0, 0.5, 0.3
    sys = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, d]), np.diag([k, 1 / m]), [[0.0], [1.0]])
    s = np.array([0.3j, 1.0 + 2.0j])
    expected = (s / m) / (s**2 + (d / m) * s + k / m)
    np.testing.assert_allclose(sys.transfer_function(s)[:, 0, 0], expected, rtol=1e-13)


def test_msd_chain_check_value():
    # docs/design.md §4: H11(0.1i) = 0.125712 + 0.0732172i (6 printed digits)
    G = msd_chain().transfer_function(0.1j)
    assert abs(G[0, 0] - (0.125712 + 0.0732172j)) < 1e-6


def test_power_balance_of_exact_linear_trajectory_vanishes():
    # An accurate trajectory of a pH-ODE satisfies H(T) - H(0) + ∫zᵀRz - ∫yᵀu = 0; the residual is
    # the trapezoidal quadrature error O(h²) ~ 1e-7 with 4001 points on [0, 10].
    sys = msd_chain(n_cells=3)
    A, B, _ = sys.state_space()
    t = np.linspace(0.0, 10.0, 4001)

    def u(tt):
        return np.stack([np.sin(tt), 0.5 * np.cos(2 * tt)], axis=-1)

    sol = solve_ivp(lambda tt, x: A @ x + B @ u(tt), (0, 10), np.zeros(6), t_eval=t, rtol=1e-12, atol=1e-12)
    pb = sys.power_balance(t, sol.y.T, u(t))
    assert pb.dissipated > 0.1
    assert abs(pb.residual) < 1e-6 * max(1.0, pb.supplied)


def test_rc_network_flow_matches_euler_data():
    # The paper's data recipe satisfies E ẋ = (J − R) z(x) + B u exactly at the samples.
    sys = rc_network.system()
    d = rc_network.euler_data()
    assert np.all(np.isfinite(d.x))
    np.testing.assert_allclose(sys.flow(d.x, d.u), d.xdot @ sys.E.T, atol=1e-14)
    assert sys.structure_violation() == {"J_skew": 0.0, "R_symmetric": 0.0, "R_psd": 0.0}


def test_rc_euler_recipe_refuses_too_coarse_steps():
    with pytest.raises(ValueError, match="use more steps"):
        rc_network.euler_data(100)


def test_hamiltonian_of_rc_matches_gradient_of_effort():
    # Eᵀz = ∇H on the differential state: dH/dx1 = √(2 x1) (central FD, error ~1e-10 at h=1e-5).
    sys = rc_network.system()
    x = np.array([[1.3, 0.2, 0.1]])
    h = 1e-5
    dH = (sys.hamiltonian(x + [h, 0, 0]) - sys.hamiltonian(x - [h, 0, 0])) / (2 * h)
    assert abs(dH[0] - sys.effort(x)[0, 0]) < 1e-9


# -- feedthrough P, S, N (pyMOR's PHLTIModel convention) -------------------------------------


def random_feedthrough_ph(rng, n, m, lossless=False):
    """A random pH system with W = L Lᵀ (its blocks R, P, S) and a skew N."""
    L = 0.5 * rng.normal(size=(n + m, n + m))
    W = np.zeros((n + m, n + m)) if lossless else L @ L.T
    A = rng.normal(size=(n, n))
    Mn = rng.normal(size=(m, m))
    Z = rng.normal(size=(n, n))
    return LinearPH(A - A.T, W[:n, :n], Z @ Z.T / max(n, 1) + np.eye(n), rng.normal(size=(n, m)),
                    P=W[:n, n:], S=W[n:, n:], N=Mn - Mn.T)


def test_feedthrough_defaults_to_zero_and_old_systems_are_unchanged():
    sys = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.3]), np.diag([2.0, 2.0]), [[0.0], [1.0]])
    assert not sys.has_feedthrough
    assert sys.P.shape == (2, 1) and sys.S.shape == sys.N.shape == (1, 1)
    assert not (sys.P.any() or sys.S.any() or sys.N.any())
    x = np.array([[0.3, -0.2]])
    np.testing.assert_array_equal(sys.output(x), x @ sys.Q.T @ sys.B)  # y = Bᵀ Q x, bit for bit
    assert set(sys.structure_violation()) == {"J_skew", "R_symmetric", "R_psd"}


def test_feedthrough_structure_is_checked_with_the_fix_named():
    J, R, Q, B = [[0, 1], [-1, 0]], np.diag([0.0, 0.5]), np.eye(2), [[0.0], [1.0]]
    with pytest.raises(StructureError, match="N must be skew-symmetric"):
        LinearPH(J, R, Q, B, N=[[1.0]])
    with pytest.raises(StructureError, match="S must be symmetric"):
        LinearPH(J, R, Q, np.zeros((2, 2)), S=[[1.0, 1.0], [0.0, 1.0]])
    # R ⪰ 0 and S ⪰ 0 each, but W = [[R, P], [Pᵀ, S]] is not: P² > R₂₂ S
    with pytest.raises(StructureError, match=r"W = \[\[R, P\], \[Pᵀ, S\]\] must be positive"):
        LinearPH(J, R, Q, B, P=[[0.0], [1.0]], S=[[1.0]])
    with pytest.raises(StructureError, match="P must have shape"):
        LinearPH(J, R, Q, B, P=np.zeros((2, 2)))
    # on the boundary of the cone (P² = R₂₂ S, W singular) it is accepted
    LinearPH(J, R, Q, B, P=[[0.0], [0.5]], S=[[0.5]])


def test_state_space_and_transfer_function_include_the_feedthrough():
    # reference: scipy's transfer-function polynomials of (A, G − P, (G + P)ᵀQ, S − N)
    from scipy.signal import ss2tf

    rng = np.random.default_rng(3)
    sys = random_feedthrough_ph(rng, 4, 2)
    A, B, C = sys.state_space()
    np.testing.assert_array_equal(A, (sys.J - sys.R) @ sys.Q)
    np.testing.assert_array_equal(B, sys.B - sys.P)
    np.testing.assert_array_equal(C, (sys.B + sys.P).T @ sys.Q)
    np.testing.assert_array_equal(sys.D, sys.S - sys.N)
    w = np.array([0.1, 1.0, 7.0])
    H = sys.transfer_function(1j * w)
    for i in range(2):  # ss2tf is single-input: one column at a time
        num, den = ss2tf(A, B, C, sys.D, input=i)
        ref = np.array([[np.polyval(nj, 1j * wk) / np.polyval(den, 1j * wk) for nj in num]
                        for wk in w])
        # polynomial coefficients (from eigenvalues) lose a few digits: measured 1e-14 relative
        np.testing.assert_allclose(H[:, :, i], ref, rtol=1e-11)
    # passivity: H(jω) + H(jω)ᴴ ⪰ 0 for a pH system with W ⪰ 0
    for Hk in H:
        assert np.linalg.eigvalsh(Hk + Hk.conj().T).min() >= -1e-12


def test_order_zero_is_a_static_passive_map():
    S, N = np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([[0.0, 3.0], [-3.0, 0.0]])
    sys = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 2)),
                   S=S, N=N)
    assert (sys.n_states, sys.n_inputs) == (0, 2)
    u = np.array([[1.0, -2.0], [0.5, 0.25]])
    np.testing.assert_array_equal(sys.output(np.zeros((2, 0)), u), u @ (S - N).T)
    np.testing.assert_array_equal(sys.transfer_function(5j), S - N)
    assert np.all(sys.hamiltonian(np.zeros((2, 0))) == 0.0)
    # the port power is the dissipation: yᵀu = uᵀSu (N lossless)
    y = sys.output(np.zeros((2, 0)), u)
    np.testing.assert_allclose((y * u).sum(axis=1), sys.dissipation_rate(np.zeros((2, 0)), u),
                               rtol=1e-15)


def test_output_needs_the_input_when_there_is_a_feedthrough():
    sys = random_feedthrough_ph(np.random.default_rng(0), 2, 1)
    with pytest.raises(ValueError, match="pass the inputs u"):
        sys.output(np.zeros(2))


def test_power_balance_with_feedthrough_of_an_accurate_trajectory_vanishes():
    # dH/dt = yᵀu − [z; u]ᵀW[z; u] along an accurate solve_ivp trajectory; residual = the
    # trapezoidal quadrature error O(h²): measured 5.2e-6 with 4001 points on [0, 5], 3.2e-7
    # with 16001 (ratio 16), against a supplied energy of 2.4
    rng = np.random.default_rng(11)
    sys = random_feedthrough_ph(rng, 3, 2)
    A, B, _ = sys.state_space()
    t = np.linspace(0.0, 5.0, 16001)

    def u(tt):
        return np.stack([np.sin(2 * tt), 0.5 * np.cos(tt)], axis=-1)

    sol = solve_ivp(lambda tt, x: A @ x + B @ u(tt), (0, 5), rng.normal(size=3), t_eval=t,
                    rtol=1e-12, atol=1e-12)
    pb = sys.power_balance(t, sol.y.T, u(t))
    zu = np.hstack([sol.y.T @ sys.Q.T, u(t)])
    assert pb.dissipated > 0.1
    np.testing.assert_allclose(pb.dissipated, np.trapezoid(np.einsum("ij,jk,ik->i", zu, sys.W, zu),
                                                           t), rtol=1e-12)
    assert abs(pb.residual) < 1e-6 * max(1.0, abs(pb.supplied))
