"""Simulating a drop-in surrogate in its FMU's terms, against scipy and analytic solutions."""

import numpy as np
import pytest
from scipy.signal import cont2discrete, dlsim

from fmu_surrogate.ph import LinearPH, PortedSystem, PortedTrajectory, PortMap, simulate

K, MASS, C, F0 = 2.0, 0.5, 0.3, 0.8


def preloaded_spring():
    """Mass on a spring and damper, pushed by an external force F (a power port: its output is
    the velocity v) and preloaded by a constant force F0 (an internal source); the FMU shows v
    and the position q (a measured output, read through Cx)."""
    core = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, C]), np.diag([K, 1 / MASS]),
                    [[0.0, 0.0], [1.0, 1.0]], input_names=["F", "preload"],
                    output_names=["v", "v_preload"], state_names=["q", "p"])
    ports = PortMap(("F",), ("v", "q"), ("N",), ("m/s", "m"), Tu=[[1.0], [0.0]], cu=[0.0, F0],
                    Ty=[[1.0, 0.0], [0.0, 0.0]], Cx=[[0.0, 0.0], [1.0, 0.0]],
                    Du=np.zeros((2, 1)), cy=np.zeros(2))
    return PortedSystem(core, ports, x0=[-0.3, 0.2])


def exact_zoh(ported, t, u_ext, x0):
    """scipy's exact discretisation of the external system for held inputs; the constant
    sources are one more input, held at 1."""
    s, p = ported.system, ported.ports
    A, B, C_ = s.state_space()
    Bx = np.hstack([B @ p.Tu, (B @ p.cu)[:, None]])
    Cy = p.Ty @ C_ + p.Cx
    Dy = np.hstack([p.Ty @ s.D @ p.Tu + p.Du, (p.Ty @ s.D @ p.cu + p.cy)[:, None]])
    h = t[1] - t[0]
    sysd = cont2discrete((A, Bx, Cy, Dy), h, method="zoh")
    _, y, x = dlsim(sysd[:4] + (h,), np.hstack([u_ext, np.ones((t.size, 1))]), t, x0=x0)
    return y, x


def test_preloaded_spring_from_away_from_rest_matches_scipy_and_splits_the_energy():
    sur = preloaded_spring()
    h = 1e-3
    t = h * np.arange(6001)
    u = np.where(t < 3.0, 0.5 * np.sin(2 * t), 0.0)[:, None]  # then free: settles at F0 / K
    tr = simulate(sur, t, u)
    assert isinstance(tr, PortedTrajectory) and tr.output_names == ("v", "q")
    np.testing.assert_array_equal(tr.x[0], sur.x0)  # starts at the operating point
    y_ref, x_ref = exact_zoh(sur, t, u, sur.x0)
    # implicit midpoint vs the exact held-input map: its phase lag h²ω³t/12 = 4e-6 rad at
    # t = 6 s (ω = 2) on an amplitude ≈ 0.4 gives 1.6e-6; measured 1.4e-6 of max |y|, 1.1e-6
    # of max |x|
    assert np.abs(tr.y - y_ref).max() <= 3e-6 * np.abs(y_ref).max()
    assert np.abs(tr.x - x_ref).max() <= 3e-6 * np.abs(x_ref).max()
    # the measured position is the state q, read through Cx
    np.testing.assert_array_equal(tr.y[:, 1], tr.x[:, 0])
    # the source's work is F0 times the displacement, exactly for the midpoint rule
    # (Δq = h v̄ per step): agreement to round-off
    assert tr.supplied_sources[-1] == pytest.approx(F0 * (tr.x[-1, 0] - tr.x[0, 0]), rel=1e-12)
    assert tr.supplied_external[-1] != 0.0 and tr.dissipated[-1] > 0.0
    # H(T) − H(0) + dissipated − external − sources: round-off of 6000 steps (measured 1.4e-13
    # of the energy scale)
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale
    np.testing.assert_allclose(tr.supplied, tr.core.supplied, rtol=1e-12, atol=1e-15)


def test_preloaded_spring_at_its_operating_point_stays_there():
    # x0 = (F0 / K, 0): the preload balances the spring; nothing moves, no energy flows
    sur = preloaded_spring()
    t = np.linspace(0.0, 1.0, 101)
    tr = simulate(sur, t, np.zeros((101, 1)), x0=[F0 / K, 0.0])
    np.testing.assert_allclose(tr.x, np.tile([F0 / K, 0.0], (101, 1)), atol=1e-15)
    np.testing.assert_allclose(tr.y[:, 1], F0 / K, rtol=1e-15)
    assert abs(tr.supplied_sources[-1]) <= 1e-15


def battery(r=0.05, cap=2.0):
    """A capacitor with series resistance r (feedthrough S = r), seen as a source: the FMU's
    input is the current i drawn from it and its output the terminal voltage v, so the power
    v·i leaves the surrogate (a power-out port: Tu = −1, Ty = 1); it also shows its charge."""
    core = LinearPH([[0.0]], [[0.0]], [[1 / cap]], [[1.0]], S=[[r]])
    ports = PortMap(("i",), ("v", "charge"), ("A",), ("V", "C"), Tu=[[-1.0]], cu=[0.0],
                    Ty=[[1.0], [0.0]], Cx=[[0.0], [1.0]], Du=[[0.0], [0.0]], cy=[0.0, 0.0])
    return PortedSystem(core, ports, x0=[4.0])


def test_power_out_port_delivers_the_energy_the_core_loses():
    r, cap = 0.05, 2.0
    sur = battery(r, cap)
    h = 1e-2
    t = h * np.arange(1001)
    i = np.where(t < 4.0, 1.5, np.where(t < 7.0, 0.0, 0.5))[:, None]  # held, with jumps
    tr = simulate(sur, t, i)
    # analytic: q̇ = −i held over each step, q_k = q_0 − Σ h i_j (the midpoint rule is exact on
    # it: agreement to the round-off of the cumulative sums, measured 2.4e-14 of max |q|)
    q = 4.0 - np.concatenate([[0.0], np.cumsum(h * i[:-1, 0])])
    v = q / cap - r * i[:, 0]  # the series resistance drops r·i: the feedthrough
    np.testing.assert_allclose(tr.y[:, 0], v, rtol=0, atol=1e-13 * np.abs(v).max())
    np.testing.assert_allclose(tr.y[:, 1], q, rtol=0, atol=1e-13 * np.abs(q).max())
    # the only loss is the series resistance: r i² over each step
    np.testing.assert_allclose(tr.dissipated[-1], np.sum(h * r * i[:-1, 0] ** 2), rtol=1e-13)
    # the external power v·i has the opposite sign of the pH port power y_ph·u_ph
    p_ext = tr.y[:, 0] * i[:, 0]
    p_ph = (tr.core.y * tr.core.u).sum(axis=1)
    np.testing.assert_allclose(p_ext, -p_ph, rtol=1e-15)
    assert p_ext.max() > 0  # the battery delivers power
    # energy delivered through the port = Σ h v̄ i = −supplied_external, and the core's energy
    # pays for it and for the losses r i² + leak: H(T) − H(0) = −delivered − dissipated
    assert tr.supplied_external[-1] < 0 and tr.supplied_sources[-1] == 0.0
    H = 0.5 * tr.x[:, 0] ** 2 / cap
    assert H[-1] - H[0] == pytest.approx(tr.supplied_external[-1] - tr.dissipated[-1], rel=1e-12)
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale


def test_ported_simulation_checks_the_external_inputs():
    sur = battery()
    t = np.linspace(0.0, 1.0, 5)
    with pytest.raises(ValueError, match=r"one column per input \['i'\]"):
        simulate(sur, t, np.zeros((5, 2)))
    with pytest.raises(ValueError, match="the surrogate has 1 inputs"):
        simulate(sur, t, None)


@pytest.mark.parametrize("hold", ["linear", "zoh"])
def test_random_affine_wiring_keeps_the_split_balance(hold):
    rng = np.random.default_rng(12)
    n, m, k_in, k_out = 4, 3, 2, 3
    L = 0.5 * rng.normal(size=(n + m, n + m))
    W = L @ L.T
    A, Mn, Z = rng.normal(size=(n, n)), rng.normal(size=(m, m)), rng.normal(size=(n, n))
    core = LinearPH(A - A.T, W[:n, :n], Z @ Z.T / n + np.eye(n), rng.normal(size=(n, m)),
                    P=W[:n, n:], S=W[n:, n:], N=Mn - Mn.T)
    Tu = rng.normal(size=(m, k_in))
    Tu[2] = 0.0  # port 3: a pure constant source
    ports = PortMap(("a", "b"), ("p", "q", "r"), (None, None), (None, None, None), Tu=Tu,
                    cu=rng.normal(size=m), Ty=rng.normal(size=(k_out, m)),
                    Cx=rng.normal(size=(k_out, n)), Du=rng.normal(size=(k_out, k_in)),
                    cy=rng.normal(size=k_out))
    sur = PortedSystem(core, ports, x0=rng.normal(size=n))
    t = np.linspace(0.0, 2.0, 401)
    u = np.column_stack([np.sin(3 * t), np.sign(np.cos(2 * t))])
    tr = simulate(sur, t, u, hold=hold)
    # round-off of 400 steps (measured 1.2e-14 of the energy scale)
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale
    assert tr.supplied_sources[-1] != 0.0 and tr.supplied_external[-1] != 0.0
    # the outputs are the wiring applied to the core's nodes (the same operations: measured
    # equal to the bit)
    np.testing.assert_allclose(tr.y, sur.outputs(tr.x, u), rtol=0, atol=1e-14 * np.abs(tr.y).max())
    np.testing.assert_allclose(tr.core.u, sur.inputs_to_ports(u), rtol=1e-15, atol=1e-15)
