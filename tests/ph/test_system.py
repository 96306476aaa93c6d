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
