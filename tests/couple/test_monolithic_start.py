"""The monolithic start of components that rest at the equilibrium of their first inputs
(``initial="equilibrium"``): the inputs come through the connections and from the driven
inputs, and the states of all such components are solved for at once."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm
from scipy.optimize import brentq

from fmu_surrogate.couple.monolithic import assemble, exact, run_monolithic
from fmu_surrogate.couple.surrogates import surrogate_component
from fmu_surrogate.couple.system import Component, Connection, CouplingError, System
from fmu_surrogate.fmu.signals.standard import Step
from fmu_surrogate.ph import (
    ConvexEffort,
    LinearPH,
    NonlinearPH,
    PortedSystem,
    PortMap,
    PowerDissipation,
    save,
)

C_D, M2, V2 = 1.5, 2.0, 1.0  # the damper between the two masses, the driving mass, its speed
PRELOAD = 0.5
GUESS = [0.1, 0.3]  # the surrogate's operating point: Newton's guess, or its start


def _preloaded_mass() -> PortedSystem:
    """A mass on a spring (k = 2, m = 1, c = 0.1; x = (q, p)), pushed by F, preloaded by 0.5 N
    (a constant source port), showing its velocity (the power port) and its deflection."""
    core = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.1]), np.diag([2.0, 1.0]),
                    [[0, 0], [1, 1]])
    ports = PortMap(("F",), ("v", "q"), ("N",), ("m/s", "m"), Tu=[[1.0], [0.0]],
                    cu=[0.0, PRELOAD], Ty=[[1.0, 0.0], [0.0, 0.0]], Cx=[[0.0, 0.0], [1.0, 0.0]],
                    Du=np.zeros((2, 1)), cy=[0.0, 0.0])
    return PortedSystem(core, ports, x0=GUESS, initial="equilibrium")


def _hardening_mass() -> PortedSystem:
    """``q̈ = F + Fx − 0.5 sign(v)|v|^(4/3) − q − 2q³`` (x = (q, p), m = 1): F the bonded
    force, Fx an external one."""
    eff = ConvexEffort(np.diag([1.0, 1.0]), ["quartic"], [2.0], [[1.0, 0.0]])
    diss = PowerDissipation([[0.0, 1.0]], [0.5], [1.0 / 3.0], [1e-9])
    core = NonlinearPH([[0.0, 1.0], [-1.0, 0.0]], np.zeros((2, 2)), [[0.0, 0.0], [1.0, 1.0]],
                       eff, diss)
    ports = PortMap(("F", "Fx"), ("v", "q"), ("N", "N"), ("m/s", "m"), Tu=np.eye(2),
                    cu=[0.0, 0.0], Ty=[[1.0, 0.0], [0.0, 0.0]], Cx=[[0.0, 0.0], [1.0, 0.0]],
                    Du=np.zeros((2, 2)), cy=[0.0, 0.0])
    return PortedSystem(core, ports, x0=GUESS, initial="equilibrium")


def _driven_through_a_damper(sur: Component) -> System:
    """``sur`` dragged by a moving mass (m2 = 2, v2(0) = 1) through a damper C_D between the
    two: the force ``sur`` sees at t0 comes from the other mass's velocity through the damper,
    whose feedthrough also closes a loop through ``sur``'s own velocity."""
    e = np.zeros((0, 0))
    # two ports, relative velocity w = va − vb, F = C_D w; the forces on the masses are −F, +F
    damper = LinearPH(e, e, e, np.zeros((0, 2)), S=C_D * np.array([[1.0, -1.0], [-1.0, 1.0]]))
    drive = LinearPH([[0.0]], [[0.0]], [[1 / M2]], [[1.0]])
    comps = {
        "sur": sur,
        "damper": Component("damper", None, ph=damper, x0=[], ports={
            "va": ("u", 0, 1), "vb": ("u", 1, 1), "Fa": ("y", 0, -1), "Fb": ("y", 1, -1)}),
        "drive": Component("drive", None, ph=drive, x0=[M2 * V2],
                           ports={"F": ("u", 0, 1), "v": ("y", 0, 1)}),
    }
    cons = [("sur.v", "damper.va"), ("damper.Fa", "sur.F"), ("drive.v", "damper.vb"),
            ("damper.Fb", "drive.F")]
    return System(comps, [Connection.parse(a, b) for a, b in cons])


def _rows(asm, name):
    p = next(p for p in asm.members if p.name == name)
    return slice(p.state0, p.state0 + p.core.n_states)


def test_a_linear_surrogate_starts_at_rest_under_the_force_a_connection_gives_it(tmp_path):
    path = save(_preloaded_mass(), tmp_path / "sur.json")
    system = _driven_through_a_damper(surrogate_component("sur", path))
    assert system.components["sur"].initial == "equilibrium"  # the file's rule
    asm = assemble(system)
    x = asm.start(asm.u_free)
    # at rest under the damper's drag of the moving mass: 2 q = C_D V2 + preload, p = 0
    # (one 2×2 solve of the surrogate's coupled rows: round-off)
    q_eq = (C_D * V2 + PRELOAD) / 2.0
    assert x[0] == pytest.approx(q_eq, rel=1e-15) and abs(x[1]) < 1e-15  # measured exact
    assert x[2] == M2 * V2  # the driving mass keeps its initial state
    flow = asm.system.flow(x, asm.u_free)
    assert np.abs(flow[_rows(asm, "sur")]).max() < 1e-15  # the surrogate's rows: at rest
    assert abs(flow[2]) > 1.0  # the other mass is not (the damper drags it)

    T, h = 4.0, 0.01
    ds = run_monolithic(system, T, h)
    t, v, q = ds.time.values, ds["sur.v"].values[0], ds["sur.q"].values[0]
    assert abs(v[0]) < 1e-15 and q[0] == pytest.approx(q_eq, rel=1e-15)

    def rhs(_t, w):  # q̇ = p, ṗ = −2q − 0.1p + C_D (v2 − p) + 0.5, ṗ2 = C_D (p − v2)
        qq, p, p2 = w
        F = C_D * (p2 / M2 - p)
        return [p, -2.0 * qq - 0.1 * p + F + PRELOAD, -F]

    ref = solve_ivp(rhs, (0.0, T), [q_eq, 0.0, M2 * V2], t_eval=t, method="DOP853",
                    rtol=1e-12, atol=1e-14)
    # no input changes over the run, so the linear system's exact step for held inputs is
    # the solution: what is left is DOP853's error at rtol 1e-12 (measured 1.4e-12 of max |v|,
    # 3.0e-13 of max |q|)
    assert np.abs(v - ref.y[1]).max() < 1e-10 * np.abs(ref.y[1]).max()
    assert np.abs(q - ref.y[0]).max() < 1e-10 * np.abs(ref.y[0]).max()
    # the energy balance starts from the equilibrium's H: round-off (measured 2.5e-15)
    assert abs(ds.attrs["energy_residual"]) < 1e-12
    # the closed-form solution starts there too (measured 5.6e-13 from DOP853; max |v| ≈ 0.3)
    assert np.abs(exact(asm, t)["sur.v"] - ref.y[1]).max() < 1e-10

    # the same surrogate under the rule initial="state" starts from its operating point: moving
    stated = _driven_through_a_damper(surrogate_component("sur", path, initial="state"))
    x_s = assemble(stated).start(asm.u_free)
    np.testing.assert_array_equal(x_s[:2], GUESS)
    v_s = run_monolithic(stated, 0.1, h)["sur.v"].values[0]
    assert v_s[0] == pytest.approx(GUESS[1], rel=1e-15) and abs(v_s[1] - v_s[0]) > 1e-3


def test_a_nonlinear_surrogate_rests_under_a_connection_and_a_driven_input(tmp_path):
    path = save(_hardening_mass(), tmp_path / "sur.json")
    F0, F1, t_step = 3.0, 1.0, 1.0  # the driven force starts at 3 N and steps to 1 N at 1 s
    system = _driven_through_a_damper(surrogate_component("sur", path))
    system.inputs["sur.Fx"] = Step(t0=t_step, before=F0, after=F1)
    # at rest: p = 0 and the spring holds the damper's drag and the driven force
    q_eq = brentq(lambda s: s + 2.0 * s ** 3 - (C_D * V2 + F0), -10.0, 10.0, xtol=1e-15)

    T, h = 3.0, 0.005
    ds = run_monolithic(system, T, h)
    t, v, q = ds.time.values, ds["sur.v"].values[0], ds["sur.q"].values[0]
    # Newton stops at 1e-12 of the state; the reference is brentq's to 1e-15
    assert q[0] == pytest.approx(q_eq, rel=1e-11) and abs(v[0]) < 1e-12
    assert ds["sur.Fx"].values[0][0] == F0

    def rhs(tt, w):
        qq, p, p2 = w
        F = C_D * (p2 / M2 - p)
        fx = F0 if tt < t_step else F1
        return [p, -qq - 2.0 * qq ** 3 - 0.5 * (p * p + 1e-18) ** (1 / 6) * p + F + fx, -F]

    w0 = [q_eq, 0.0, M2 * V2]
    ref = np.empty((t.size, 3))
    for lo, hi in ((0.0, t_step), (t_step, T)):  # the step at a communication point: no hold
        k = (t >= lo - 1e-12) & (t <= hi + 1e-12)
        sol = solve_ivp(rhs, (lo, hi), w0, t_eval=t[k], method="DOP853", rtol=1e-12,
                        atol=1e-14)
        ref[k], w0 = sol.y.T, sol.y[:, -1]
    # AVF, second order, h = 5e-3; the damper's |v|^(4/3) law is only C¹ at the turns of v
    # (measured 1.5e-5 of max |v|, 2.9e-6 of max |q|)
    assert np.abs(v - ref[:, 1]).max() < 4e-5 * np.abs(ref[:, 1]).max()
    assert np.abs(q - ref[:, 0]).max() < 1e-5 * np.abs(ref[:, 0]).max()
    # quartic H: AVF's quadrature is exact, the balance closes to the Newton tolerance
    # (measured 9e-16 relative)
    assert abs(ds.attrs["energy_residual"]) < 1e-12

    stated = _driven_through_a_damper(surrogate_component("sur", path, initial="state"))
    stated.inputs["sur.Fx"] = Step(t0=t_step, before=F0, after=F1)
    assert run_monolithic(stated, 0.1, h)["sur.v"].values[0][0] == pytest.approx(GUESS[1], rel=1e-15)


def _split_oscillator(mass_rule: str = "equilibrium", p0: float = 0.0) -> System:
    """A damped mass (m = 2, d = 0.3) and a spring (k = 5) as two components, the mass pushed
    by a driven force Fx; ``ξ̇ = v`` alone does not fix ``ξ`` and the mass's row alone does
    not fix ``v``: only both at once have an equilibrium, ``ξ = Fx / k``, ``p = 0``."""
    mass = LinearPH([[0.0]], [[0.3]], [[1 / 2.0]], [[1.0, 1.0]])
    spring = LinearPH([[0.0]], [[0.0]], [[5.0]], [[1.0]])
    comps = {
        "mass": Component("mass", None, ph=mass, x0=[p0], initial=mass_rule,
                          ports={"F": ("u", 0, -1), "Fx": ("u", 1, 1), "v": ("y", 0, 1)}),
        "spring": Component("spring", None, ph=spring, x0=[0.7], initial="equilibrium",
                            ports={"v": ("u", 0, 1), "F": ("y", 0, 1)}),
    }
    return System(comps, [Connection.parse("mass.v", "spring.v"),
                          Connection.parse("spring.F", "mass.F")],
                  inputs={"mass.Fx": Step(t0=0.5, before=2.0, after=0.0)})


def test_two_components_at_rest_are_solved_for_together():
    system = _split_oscillator()
    h, T = 0.01, 2.0
    ds = run_monolithic(system, T, h)
    t, F, v = ds.time.values, ds["spring.F"].values[0], ds["mass.v"].values[0]
    # ξ = Fx(0) / k, p = 0: the spring holds the driven force at t0 (one 2×2 solve)
    assert F[0] == pytest.approx(2.0, rel=1e-15) and abs(v[0]) < 1e-15
    # at rest until the force drops at 0.5 s: the exact step of a state at rest keeps it
    # there (measured: F exactly 2, |v| ≤ 8.5e-17)
    before = t < 0.5
    assert np.abs(F[before] - 2.0).max() < 1e-14 and np.abs(v[before]).max() < 1e-15
    # then the free damped oscillation from (ξ, p) = (0.4, 0): the matrix exponential, which
    # the exact step for held inputs reproduces to round-off (measured 3.8e-15 of max |v|)
    A = np.array([[0.0, 1 / 2.0], [-5.0, -0.3 / 2.0]])  # (ξ, p)
    ref = np.array([expm(A * (tk - 0.5)) @ [0.4, 0.0] for tk in t[~before]])
    assert np.abs(v[~before] - ref[:, 1] / 2.0).max() < 1e-12 * np.abs(v).max()
    assert abs(ds.attrs["energy_residual"]) < 1e-12  # measured 8.8e-15


def test_a_component_without_an_equilibrium_is_named():
    # the spring alone at rest while the mass moves (held at p = 1): ξ̇ = v ≠ 0 for every ξ
    with pytest.raises(CouplingError, match=r"components \['spring'\] start at the "
                                            r"equilibrium.*initial='state'"):
        run_monolithic(_split_oscillator(mass_rule="state", p0=1.0), 1.0, 0.01)


def test_an_initial_state_given_in_the_system_wins_over_the_rule(tmp_path):
    path = save(_preloaded_mass(), tmp_path / "sur.json")
    x0 = [0.4, -0.2]
    comp = surrogate_component("sur", path, x0=x0)
    assert comp.initial == "state" and comp.x0.tolist() == x0
    asm = assemble(_driven_through_a_damper(comp))
    np.testing.assert_array_equal(asm.start(asm.u_free)[:2], x0)
    # or the system keeps the rule and gives the guess only
    comp = surrogate_component("sur", path, x0=x0, initial="equilibrium")
    asm = assemble(_driven_through_a_damper(comp))
    assert asm.start(asm.u_free)[0] == pytest.approx((C_D * V2 + PRELOAD) / 2.0, rel=1e-15)
    with pytest.raises(CouplingError, match="x0 must be 2 finite numbers"):
        surrogate_component("sur", path, x0=[1.0])
    with pytest.raises(CouplingError, match="initial must be one of"):
        Component("c", None, initial="rest")
