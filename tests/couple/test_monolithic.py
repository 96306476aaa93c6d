"""The monolithic algorithm with components that have a feedthrough (the algebraic loop), and
with nonlinear surrogates."""

import numpy as np
import pytest
from scipy.linalg import expm

from fmu_surrogate.couple.monolithic import assemble, exact, run_monolithic
from fmu_surrogate.couple.system import Component, Connection, CouplingError, System
from fmu_surrogate.ph import LinearPH

M, K, C, D0 = 0.5, 3.0, 0.4, 0.1


def mass_and_spring_damper():
    """A mass (input force F, output velocity v, viscous loss D0) pushed back by a parallel
    spring–damper driven by that velocity: F = K ξ + C v, a feedthrough C (S = C)."""
    mass = LinearPH([[0.0]], [[D0]], [[1 / M]], [[1.0]])
    sd = LinearPH([[0.0]], [[0.0]], [[K]], [[1.0]], S=[[C]])
    comps = {
        # the mass receives the force with a minus sign (the spring–damper pushes back)
        "mass": Component("mass", None, ph=mass, ports={"F": ("u", 0, -1), "v": ("y", 0, 1)},
                          x0=[M * 1.0]),
        "sd": Component("sd", None, ph=sd, ports={"v": ("u", 0, 1), "F": ("y", 0, 1)},
                        x0=[0.2]),
    }
    return System(comps, [Connection.parse("mass.v", "sd.v"), Connection.parse("sd.F", "mass.F")])


def test_feedthrough_components_couple_into_the_damped_oscillator():
    asm = assemble(mass_and_spring_damper())
    # p = M v, ξ: ṗ = −K ξ − (C + D0) v, ξ̇ = v (the damper's feedthrough is a loss of the loop)
    A = np.array([[-(C + D0) / M, -K], [1 / M, 0.0]])
    np.testing.assert_allclose((asm.system.J - asm.system.R) @ asm.system.Q, A, rtol=1e-15)
    t = np.linspace(0.0, 3.0, 7)
    ref = np.array([expm(A * tk) @ [M * 1.0, 0.2] for tk in t])
    v = exact(asm, t)
    # the port values read back through the loop: F = K ξ + C v (one 2×2 solve; measured
    # equal to the last bit here)
    np.testing.assert_allclose(v["mass.v"], ref[:, 0] / M, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(v["sd.F"], K * ref[:, 1] + C * ref[:, 0] / M, rtol=1e-12,
                               atol=1e-14)
    # the connection copies the value; the mass's port sees it with its sign −1
    np.testing.assert_array_equal(v["mass.F"], v["sd.F"])


def test_monolithic_run_with_feedthrough_balances_energy():
    ds = run_monolithic(mass_and_spring_damper(), 3.0, 0.01)
    # implicit midpoint: round-off only (measured 9e-15 relative to H(0))
    assert abs(ds.attrs["energy_residual"]) < 1e-12
    ref = exact(assemble(mass_and_spring_damper()), ds.time.values)
    # second order at h = 0.01 (ω₀ ≈ 2.4, ζ ≈ 0.2): measured 1.1e-4 of max |v|
    assert np.abs(ds["mass.v"].values[0] - ref["mass.v"]).max() < 2e-4 * np.abs(ref["mass.v"]).max()


def test_singular_loop_is_a_coupling_error():
    # two lossless 2-ports y = −N u with D₁ D₂ = −I, connected crosswise: no unique solution
    Nm = np.array([[0.0, 1.0], [-1.0, 0.0]])
    g = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 2)), N=Nm)
    ports_a = {"u1": ("u", 0, 1), "u2": ("u", 1, 1), "y1": ("y", 0, -1), "y2": ("y", 1, -1)}
    ports_b = {"u1": ("u", 0, 1), "u2": ("u", 1, 1), "y1": ("y", 0, 1), "y2": ("y", 1, 1)}
    s = System({"a": Component("a", None, ph=g, ports=ports_a, x0=[]),
                "b": Component("b", None, ph=g, ports=ports_b, x0=[])},
               [Connection.parse("a.y1", "b.u1"), Connection.parse("a.y2", "b.u2"),
                Connection.parse("b.y1", "a.u1"), Connection.parse("b.y2", "a.u2")])
    with pytest.raises(CouplingError, match="cannot be interconnected: .*algebraic loop"):
        assemble(s)


def mass_and_progressive_spring():
    """A mass with a power-law damper F_d = β (v² + δ²)^(p/2) v (p = 1/3) on a progressive
    spring F = K ξ + K3 ξ³: two NonlinearPH surrogates, one bond."""
    from fmu_surrogate.ph import ConvexEffort, NonlinearPH, PowerDissipation

    mass = NonlinearPH([[0.0]], [[0.0]], [[1.0]], ConvexEffort([[1 / M]]),
                       PowerDissipation([[1.0]], [0.8], [1 / 3], [1e-3]))
    spring = NonlinearPH([[0.0]], [[0.0]], [[1.0]],
                         ConvexEffort([[K]], ["quartic"], [20.0], [[1.0]]))
    comps = {
        "mass": Component("mass", None, ph=mass, ports={"F": ("u", 0, -1), "v": ("y", 0, 1)},
                          x0=[M * 1.0]),
        "spring": Component("spring", None, ph=spring,
                            ports={"v": ("u", 0, 1), "F": ("y", 0, 1)}, x0=[0.2]),
    }
    return System(comps, [Connection.parse("mass.v", "spring.v"),
                          Connection.parse("spring.F", "mass.F")])


def test_nonlinear_surrogates_couple_monolithically_with_their_energy_balance():
    from scipy.integrate import solve_ivp

    from fmu_surrogate.ph import NonlinearPH

    asm = assemble(mass_and_progressive_spring())
    assert type(asm.system) is NonlinearPH and asm.system.n_inputs == 0
    ds = run_monolithic(mass_and_progressive_spring(), 3.0, 0.005)
    # AVF's discrete balance (quartic H: the quadrature is exact): round-off and the Newton
    # tolerance, measured 1.2e-15 relative to H(0)
    assert abs(ds.attrs["energy_residual"]) < 1e-12

    def rhs(_t, w):
        p, xi = w
        v = p / M
        return [-(K * xi + 20.0 * xi ** 3) - 0.8 * (v * v + 1e-6) ** (1 / 6) * v, v]

    ref = solve_ivp(rhs, (0.0, 3.0), [M * 1.0, 0.2], t_eval=ds.time.values, rtol=1e-12,
                    atol=1e-12)
    v = ds["mass.v"].values[0]
    # AVF is second order: h = 5e-3 over 3 s, measured 3.6e-5 of max |v|
    assert np.abs(v - ref.y[0] / M).max() < 1e-4 * np.abs(v).max()
    # the bond's force is the spring's law at the coupled state, seen with the mass's sign
    F = ds["spring.F"].values[0]
    np.testing.assert_array_equal(ds["mass.F"].values[0], F)
    with pytest.raises(CouplingError, match="needs linear components"):
        exact(asm, ds.time.values)


def mass_and_power_damper(m=2.0, c=4.0, v0=2.0):
    """The braked mass of benchmarks/systems/braked_mass.toml with pH models known exactly: a
    free mass (power out at its force port) and a static power-law damper F = S_nl(v) v."""
    from fmu_surrogate.ph import ConvexEffort, NonlinearPH, PowerDissipation

    e = np.zeros((0, 0))
    mass = LinearPH([[0.0]], [[0.0]], [[1 / m]], [[1.0]])
    brake = NonlinearPH(e, e, np.zeros((0, 1)), ConvexEffort(np.eye(0), [], [], e),
                        port_dissipation=PowerDissipation([[1.0]], [c], [1 / 3], [1e-9]))
    comps = {
        "mass": Component("mass", None, ph=mass, ports={"F": ("u", 0, -1), "v": ("y", 0, 1)},
                          x0=[m * v0]),
        "brake": Component("brake", None, ph=brake, ports={"v": ("u", 0, 1), "F": ("y", 0, 1)},
                           x0=[]),
    }
    return System(comps, [Connection.parse("brake.F", "mass.F"),
                          Connection.parse("mass.v", "brake.v")])


def test_power_law_damper_couples_monolithically_as_a_state_dissipation():
    from fmu_surrogate.ph import NonlinearPH

    m, c, v0 = 2.0, 4.0, 2.0
    asm = assemble(mass_and_power_damper(m, c, v0))
    # the damper's law on the mass's velocity: a dissipation of the coupled state, no input left
    assert type(asm.system) is NonlinearPH and asm.system.n_inputs == 0
    assert asm.system.dissipation.n_terms == 1 and asm.system.nonlinear_feedthrough is None
    ds = run_monolithic(mass_and_power_damper(m, c, v0), 2.0, 0.01)
    # quadratic H: the AVF balance closes to the Newton tolerance (measured 2.2e-16 of the 4 J)
    assert abs(ds.attrs["energy_residual"]) < 1e-12
    t, v = ds.time.values, ds["mass.v"].values[0]
    exact = (v0 ** (-1 / 3) + c * t / (3 * m)) ** -3
    # implicit midpoint, second order: 0.40 h² (measured 4.05e-5 m/s at h = 0.01)
    assert np.abs(v - exact).max() < 5e-5
    # the bond's force read back through the law: F = c (v² + δ²)^(1/6) v at the nodes, one
    # power apart from the formula here (measured equal)
    F = ds["brake.F"].values[0]
    np.testing.assert_allclose(F, c * (v * v + 1e-18) ** (1 / 6) * v, rtol=1e-14)
    np.testing.assert_array_equal(ds["mass.F"].values[0], F)


def test_power_law_damper_in_an_algebraic_loop_is_a_coupling_error():
    # the mass's velocity port with a feedthrough (a series damper 1/d = 0.5): the damper's force
    # and velocity would solve a nonlinear equation at every instant
    system = mass_and_power_damper()
    mass = system.components["mass"]
    mass.ph = LinearPH([[0.0]], [[0.0]], [[1 / 2.0]], [[1.0]], S=[[0.5]])
    with pytest.raises(CouplingError, match=r"cannot be interconnected: .*nonlinear algebraic "
                                            r"equation.*co-simulation"):
        assemble(system)


def test_an_acceleration_output_reads_the_coupled_rate():
    """The braked mass with the mass as a drop-in surrogate that also shows its acceleration
    (``PortMap.Cdx``): the monolithic run reads it from the coupled state's rate, ``a = ṗ/m =
    −F_brake/m``, a measured output that connects no bond."""
    from fmu_surrogate.ph import PortMap

    m, c = 2.0, 4.0
    sys_ = mass_and_power_damper(m=m, c=c)
    mass = sys_.components["mass"]
    # power out at the force port (Tu = −1), velocity and acceleration out
    wiring = PortMap(("F",), ("v", "a"), ("N",), ("m/s", "m/s2"), [[-1.0]], [0.0],
                     [[1.0], [0.0]], np.zeros((2, 1)), np.zeros((2, 1)), np.zeros(2),
                     Cdx=[[0.0], [1.0 / m]])  # a = ṗ/m, the rate of the momentum
    comps = dict(sys_.components)
    comps["mass"] = Component("mass", None, ph=mass.ph, wiring=wiring, x0=mass.x0)
    ds = run_monolithic(System(comps, sys_.connections), 2.0, 0.01)
    F, v, a = (ds[f"{k}"].values[0] for k in ("brake.F", "mass.v", "mass.a"))
    # the mass's law at every point, from the run's own force: round-off (measured exact;
    # |a| ≲ 5)
    np.testing.assert_allclose(a, -F / m, rtol=0, atol=1e-13)
    # and the velocity's slope: central differences agree to AVF's O(h²) (measured 3.0e-4 of
    # max |a| at h = 0.01, where the damper's law bends hardest as v → 0)
    slope = np.gradient(v, ds.time.values)[1:-1]
    assert np.abs(slope - a[1:-1]).max() < 1.5e-3 * np.abs(a).max()
    assert abs(ds.attrs["energy_residual"]) < 1e-12  # the bond's balance: round-off


def test_an_inverted_bond_between_two_power_in_ports_is_the_oscillator():
    from fmu_surrogate.couple.system import PowerBond

    # both ports take power in: the mass's force in and velocity out, the spring's velocity in
    # and force out; the force on the mass is minus the spring's
    mass = LinearPH([[0.0]], [[0.0]], [[1 / M]], [[1.0]])
    spring = LinearPH([[0.0]], [[0.0]], [[K]], [[1.0]])
    comps = {"mass": Component("mass", None, ph=mass, ports={"F": ("u", 0, 1), "v": ("y", 0, 1)},
                               x0=[M * 1.0]),
             "spring": Component("spring", None, ph=spring,
                                 ports={"v": ("u", 0, 1), "F": ("y", 0, 1)}, x0=[0.0])}
    bond = PowerBond("rod", Connection.parse("spring.F", "mass.F", -1.0),
                     Connection.parse("mass.v", "spring.v"), {"mass": 1, "spring": 1})
    asm = assemble(System(comps, [], [bond]))
    # p = M v, ξ: ṗ = −K ξ, ξ̇ = p / M, v = cos(ω t) with ω² = K / M
    t = np.linspace(0.0, 3.0, 7)
    v = exact(asm, t)
    w = np.sqrt(K / M)
    np.testing.assert_allclose(v["mass.v"], np.cos(w * t), rtol=0, atol=1e-13)
    np.testing.assert_array_equal(v["mass.F"], -v["spring.F"])
    ds = run_monolithic(System(comps, [], [bond]), 3.0, 0.01)
    # the bond's power as each side sees it: equal and opposite at every instant
    np.testing.assert_array_equal(ds["bond:rod:P_mass"].values, -ds["bond:rod:P_spring"].values)
    assert abs(ds.attrs["energy_residual"]) < 1e-12  # implicit midpoint, lossless: round-off
    plain = PowerBond("rod", Connection.parse("spring.F", "mass.F"),
                      Connection.parse("mass.v", "spring.v"), {"mass": 1, "spring": 1})
    with pytest.raises(CouplingError, match="not skew"):
        assemble(System(comps, [], [plain]))
    shifted = Connection.parse("spring.F", "mass.F", -1.0, 0.5)
    with pytest.raises(CouplingError, match="an offset is a source of power"):
        assemble(System(comps, [shifted, bond.flow]))
