"""Variable lists of the benchmark FMUs (the one place that defines them, with :mod:`.specs_detailed`
for the detailed vendor-like components and the saturating motor).

Each ``*_spec`` function returns the :class:`~fmu_surrogate.export.fmi.model_description.ModelSpec`
of one FMU; its C file in ``c/`` uses the generated ``VR_<symbol>`` names.  Every FMU also has the
co-simulation integrator settings of :func:`solver_variables`.
"""

from __future__ import annotations

import dataclasses
import math

from fmu_surrogate.benchmarks import cauer as _cauer
from fmu_surrogate.benchmarks.vendor import damper as _damper
from fmu_surrogate.benchmarks.vendor import dc_motor as _dc_motor
from fmu_surrogate.benchmarks.vendor import free_mass as _free_mass
from fmu_surrogate.benchmarks.vendor import hydraulic as _hydraulic
from fmu_surrogate.benchmarks.vendor import power_damper as _power_damper
from fmu_surrogate.benchmarks.vendor import progressive_spring as _progressive_spring
from fmu_surrogate.benchmarks.vendor import quarter_car as _quarter_car
from fmu_surrogate.benchmarks.vendor import saturating_inductor as _saturating_inductor
from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.export.fmi.model_description import Experiment, ModelSpec, Var

#: Upper limit of ``n_cells`` for the mass-spring-damper chain (keeps the XML and the C arrays
#: of a sensible size; the paper uses N = 50, the reference model of §4 N = 50/100 cells).
MSD_MAX_CELLS = 2000


def solver_variables() -> list[Var]:
    """Co-simulation integrator settings shared by all benchmark FMUs."""
    return [
        Var("cs_rtol", "parameter", "fixed", 1e-8,
            description="co-simulation: relative tolerance of the Dormand-Prince 5(4) integrator "
            "(the tolerance of fmi2SetupExperiment overrides it when defined)"),
        Var("cs_atol", "parameter", "fixed", 1e-10,
            description="co-simulation: absolute tolerance of the integrator"),
        Var("cs_max_steps", "parameter", "fixed", 100000, type="Integer",
            description="co-simulation: maximum number of internal steps per communication step"),
    ]


def fixed_step_variables(n_substeps: int = 10) -> list[Var]:
    """Settings of the framework's fixed-step integrator (``MODEL_RK4`` in ``fmi2_framework.h``).

    FMUs built with it integrate by the classical Runge-Kutta scheme of order 4 in ``n_substeps``
    equal substeps per communication step, as many vendors' FMUs do, instead of the adaptive
    Dormand-Prince scheme of :func:`solver_variables`.
    """
    return [Var("n_substeps", "parameter", "fixed", int(n_substeps), type="Integer",
                description="co-simulation: Runge-Kutta 4 substeps per communication step "
                "(fixed-step integrator of the FMU; >= 1)")]


def rc_network_spec() -> ModelSpec:
    """Benchmark 3a (RC network, index-1 pH-DAE)."""
    v = [
        Var("u", "input", start=1.0, description="input u (paper: a (1 + sin(omega t)))"),
        Var("G", "parameter", "tunable", 1.0, description="conductance G (> 0)"),
        Var("x1_0", "parameter", "fixed", 2.0, description="initial value of x1 (> 0)"),
        Var("x1", "output", description="differential state x1, H = (2 sqrt(2)/3) x1^(3/2)"),
        Var("der(x1)", derivative="x1", description="x1' = G (u - sqrt(2 x1))"),
        Var("x2", "output", description="algebraic state x2 = u"),
        Var("x3", "output", description="algebraic state x3 = G (u - sqrt(2 x1))"),
        *solver_variables(),
    ]
    return ModelSpec(
        "rc_network",
        "RC network pH-DAE of index 1 (fmu-surrogate benchmark 3a)",
        "rc_network.c",
        tuple(v),
        Experiment(0.0, 10 * math.pi, 10 * math.pi / 3000),
    )


def pendulum_spec() -> ModelSpec:
    """Benchmark 3b (planar pendulum, index-3 pH-DAE, integrated in the angle)."""
    v = [
        Var("u", "input", start=0.0,
            description="vertical acceleration input u (paper: beta g cos(2 pi t / tau))"),
        Var("m", "parameter", "tunable", 1.0, description="mass m (> 0)"),
        Var("l", "parameter", "tunable", 1.0, description="length l (> 0)"),
        Var("g", "parameter", "tunable", 1.0, description="gravitational acceleration g"),
        Var("alpha0", "parameter", "fixed", math.pi / 4, description="initial angle"),
        Var("alpha_dot0", "parameter", "fixed", 0.0, description="initial angular velocity"),
        Var("alpha", description="angle from the downward vertical (state)"),
        Var("alpha_dot", description="angular velocity (state)"),
        Var("der(alpha)", derivative="alpha"),
        Var("der(alpha_dot)", derivative="alpha_dot",
            description="alpha'' = -(1/l) (g - u) sin(alpha)"),
        Var("q1", "output", description="q1 = l sin(alpha)"),
        Var("q2", "output", description="q2 = -l cos(alpha)"),
        Var("p1", "output", description="p1 = m l alpha' cos(alpha)"),
        Var("p2", "output", description="p2 = m l alpha' sin(alpha)"),
        Var("lambda", "output",
            description="Lagrange multiplier m/(2l) (cos(alpha) (u - g) - l alpha'^2)"),
        Var("der(q1)", "output", description="time derivative of q1 (chain rule)"),
        Var("der(q2)", "output", description="time derivative of q2 (chain rule)"),
        Var("der(p1)", "output", description="time derivative of p1 (chain rule)"),
        Var("der(p2)", "output", description="time derivative of p2 (chain rule)"),
        *solver_variables(),
    ]
    return ModelSpec(
        "pendulum",
        "Planar pendulum as a pH-DAE of index 3 (fmu-surrogate benchmark 3b)",
        "pendulum.c",
        tuple(v),
        Experiment(0.0, 30.0, 0.01),
    )


def msd_chain_spec(n_cells: int = 50) -> ModelSpec:
    """Benchmark 4a (mass-spring-damper chain) with ``n_cells`` masses (2 ≤ n_cells ≤ 2000).

    The states are ``q[j]``, ``p[j]`` for every cell (x = (q[1], p[1], …, q[N], p[N]), the order
    of :func:`fmu_surrogate.benchmarks.msd_chain.msd_chain`); N is fixed at build time.
    """
    n_cells = int(n_cells)
    if not 2 <= n_cells <= MSD_MAX_CELLS:
        raise InvalidInputError(
            f"n_cells must lie in [2, {MSD_MAX_CELLS}] (two inputs act on masses 1 and 2), "
            f"got {n_cells}."
        )
    v = [
        Var("F1", "input", start=0.0, description="force on mass 1"),
        Var("F2", "input", start=0.0, description="force on mass 2"),
        Var("mass", "parameter", "tunable", 4.0, description="mass m_j of every cell (> 0)"),
        Var("spring", "parameter", "tunable", 4.0, description="spring constant k_j (> 0)"),
        Var("damper", "parameter", "tunable", 1.0, description="damper c_j to ground (>= 0)"),
    ]
    for j in range(1, n_cells + 1):
        v.append(Var(f"q[{j}]", start=0.0, description=f"position of mass {j}"))
        v.append(Var(f"p[{j}]", start=0.0, description=f"momentum of mass {j}"))
    for j in range(1, n_cells + 1):
        v.append(Var(f"der(q[{j}])", derivative=f"q[{j}]"))
        v.append(Var(f"der(p[{j}])", derivative=f"p[{j}]"))
    v += [
        Var("v1", "output", description="velocity of mass 1 (y1 = (B^T Q x)_1)"),
        Var("v2", "output", description="velocity of mass 2 (y2 = (B^T Q x)_2)"),
        Var("N", "local", "constant", n_cells, type="Integer", description="number of cells"),
        *solver_variables(),
    ]
    return ModelSpec(
        "msd_chain",
        f"Mass-spring-damper chain with {n_cells} cells (fmu-surrogate benchmark 4a)",
        "msd_chain.c",
        tuple(v),
        Experiment(0.0, 1.0, 1e-3),
        defines={"N_CELLS": n_cells},
    )


def cauer_spec() -> ModelSpec:
    """Benchmark 6a (Cauer low-pass filter with a nonlinear load branch)."""
    e = _cauer.ELEMENTS
    w = _cauer.TRUE_LAW
    v = [
        Var("vin", "input", start=0.0, unit="V", description="source voltage"),
        Var("R1", "parameter", "fixed", e["R1"], unit="Ohm", description="source resistor"),
        Var("R2", "parameter", "fixed", e["R2"], unit="Ohm", description="load resistor"),
        Var("R4", "parameter", "tunable", e["R4"], unit="Ohm",
            description="resistor in series with the nonlinear resistor (>= 0)"),
        *(
            Var(k, "parameter", "fixed", e[k], unit="F", description=f"capacitor {k}")
            for k in ("C1", "C2", "C3", "C4", "C5")
        ),
        Var("L1", "parameter", "fixed", e["L1"], unit="H", description="inductor L1"),
        Var("L2", "parameter", "fixed", e["L2"], unit="H", description="inductor L2"),
        Var("w1", "parameter", "tunable", w[0], description="law w1 i = w2 v^2 + w3 v^3"),
        Var("w2", "parameter", "tunable", w[1], description="law w1 i = w2 v^2 + w3 v^3"),
        Var("w3", "parameter", "tunable", w[2], description="law w1 i = w2 v^2 + w3 v^3"),
        Var("newton_tol", "parameter", "fixed", 1e-12,
            description="branch Newton iteration: converged when both residuals are below "
            "newton_tol times the magnitude of their terms (>= 1e-14, round-off)"),
        Var("v1", start=0.0, unit="V", description="voltage of node n1"),
        Var("v2", start=0.0, unit="V", description="voltage of node n2"),
        Var("v3", start=0.0, unit="V", description="voltage of node n3 (filter output)"),
        Var("iL1", start=0.0, unit="A", description="current through L1 (n1 -> n2)"),
        Var("iL2", start=0.0, unit="A", description="current through L2 (n2 -> n3)"),
        Var("der(v1)", derivative="v1", unit="V/s"),
        Var("der(v2)", derivative="v2", unit="V/s"),
        Var("der(v3)", derivative="v3", unit="V/s"),
        Var("der(iL1)", derivative="iL1", unit="A/s"),
        Var("der(iL2)", derivative="iL2", unit="A/s"),
        Var("v_R4", "output", unit="V", description="voltage across R4 (= R4 i_nl), the measured output"),
        Var("v_nl", "output", unit="V", description="voltage across the nonlinear resistor"),
        Var("i_nl", "output", unit="A", description="current of the nonlinear branch (n3 -> ground)"),
        Var("newton_max_iter", "parameter", "fixed", 50, type="Integer",
            description="iteration limit of the branch Newton iteration"),
        *solver_variables(),
    ]
    return ModelSpec(
        "cauer",
        "Cauer low-pass filter with a nonlinear resistor branch (fmu-surrogate benchmark 6a)",
        "cauer.c",
        tuple(v),
        Experiment(0.0, _cauer.DEFAULT_STOP, _cauer.DEFAULT_STEP),
    )


def duffing_spec() -> ModelSpec:
    """Duffing oscillator of docs/design.md §5."""
    v = [
        Var("u", "input", start=0.0, description="external force u"),
        Var("m", "parameter", "tunable", 1.0, description="mass m (> 0)"),
        Var("c", "parameter", "tunable", 2.151, description="damping c"),
        Var("a", "parameter", "tunable", 10.0, description="linear stiffness a"),
        Var("b", "parameter", "tunable", 1e5, description="cubic stiffness b"),
        Var("y0", "parameter", "fixed", 0.0, description="initial displacement"),
        Var("ydot0", "parameter", "fixed", 0.0, description="initial velocity"),
        Var("y", "output", description="displacement (state)"),
        Var("ydot", "output", description="velocity (state)"),
        Var("der(y)", derivative="y"),
        Var("der(ydot)", derivative="ydot", description="acceleration"),
        Var("yddot", "output", description="acceleration (u - c y' - (a + b y^2) y) / m"),
        *solver_variables(),
    ]
    return ModelSpec(
        "duffing",
        "Duffing oscillator m y'' + c y' + (a + b y^2) y = u (fmu-surrogate, docs/design.md §5)",
        "duffing.c",
        tuple(v),
        Experiment(0.0, 10.0, 0.02),
    )


def free_mass_spec(rotational: bool = False) -> ModelSpec:
    """Free mass with a power-out port (:mod:`fmu_surrogate.benchmarks.vendor.free_mass`).

    ``rotational=True`` gives the free inertia ``free_inertia``: same equation (and C source),
    rotational units.
    """
    p = _free_mass.PARAMS
    force, vel, mass = ("N.m", "rad/s", "kg.m2") if rotational else ("N", "m/s", "kg")
    what = "inertia" if rotational else "mass"
    v = [
        Var("F", "input", start=0.0, unit=force,
            description=f"reaction {'torque' if rotational else 'force'}: what the {what} exerts "
            "on its drive (F v is power out of the port); m v' = -F"),
        Var("m", "parameter", "tunable", p["m"], unit=mass, description=f"{what} (> 0)"),
        Var("v0", "parameter", "fixed", p["v0"], unit=vel, description="initial velocity"),
        Var("v", "output", unit=vel, description="velocity (state), H = m v^2 / 2"),
        Var("der(v)", derivative="v", unit=f"{vel}2",
            description="v' = -F / m"),
        *solver_variables(),
    ]
    return ModelSpec(
        "free_inertia" if rotational else "free_mass",
        f"Free {what} with a power-out port: m v' = -F, lossless (fmu-surrogate vendor-style)",
        "free_mass.c",
        tuple(v),
        Experiment(0.0, 5.0, 1e-2),
    )


def free_inertia_spec() -> ModelSpec:
    """The free mass in rotational units (torque, angular velocity, inertia)."""
    return free_mass_spec(rotational=True)


def quarter_car_spec() -> ModelSpec:
    """Quarter-car suspension (:mod:`fmu_surrogate.benchmarks.vendor.quarter_car`), fixed-step RK4."""
    p = _quarter_car.PARAMS
    zs0, _, zu0, _ = _quarter_car.initial_state()
    par = [("ms", "kg", "sprung mass (quarter body, > 0)"), ("mu", "kg", "unsprung mass (> 0)"),
           ("ks", "N/m", "suspension stiffness (> 0)"), ("cs", "N.s/m", "suspension damping (>= 0)"),
           ("kt", "N/m", "tyre stiffness (> 0)"), ("ls0", "m", "suspension free length (> 0)"),
           ("lt0", "m", "tyre free radius (> 0)"), ("g", "m/s2", "gravitational acceleration")]
    v = [
        Var("F", "input", start=0.0, unit="N", description="external force on the body, up"),
        *(Var(k, "parameter", "tunable", p[k], unit=u, description=d) for k, u, d in par),
        Var("zs0", "parameter", "fixed", float(zs0), unit="m",
            description="initial body height (default: suspension and tyre at free length)"),
        Var("vs0", "parameter", "fixed", 0.0, unit="m/s", description="initial body velocity"),
        Var("zu0", "parameter", "fixed", float(zu0), unit="m",
            description="initial wheel height (default: tyre at free radius)"),
        Var("vu0", "parameter", "fixed", 0.0, unit="m/s", description="initial wheel velocity"),
        Var("zs", "output", unit="m", description="body height above the road (state)"),
        Var("vs", "output", unit="m/s", description="body velocity (state)"),
        Var("zu", "output", unit="m", description="wheel height above the road (state)"),
        Var("vu", "output", unit="m/s", description="wheel velocity (state)"),
        Var("der(zs)", derivative="zs", unit="m/s"),
        Var("der(vs)", derivative="vs", unit="m/s2"),
        Var("der(zu)", derivative="zu", unit="m/s"),
        Var("der(vu)", derivative="vu", unit="m/s2"),
        Var("a_s", "output", unit="m/s2",
            description="body acceleration (responds to F without delay)"),
        Var("F_tyre", "output", unit="N", description="tyre load kt (lt0 - zu)"),
        *fixed_step_variables(10),
    ]
    return ModelSpec(
        "quarter_car",
        "Quarter-car suspension in gravity, fixed-step RK4 (fmu-surrogate vendor-style)",
        "quarter_car.c",
        tuple(v),
        Experiment(0.0, 5.0, 1e-3),
        defines={"MODEL_RK4": 1},
    )


def damper_spec() -> ModelSpec:
    """Linear damper with direct feedthrough, no state (:mod:`fmu_surrogate.benchmarks.vendor.damper`)."""
    v = (
        Var("v", "input", start=0.0, unit="m/s", description="rod velocity (flow)"),
        Var("c", "parameter", "tunable", _damper.PARAMS["c"], unit="N.s/m",
            description="damping coefficient (>= 0)"),
        Var("F", "output", unit="N", dependencies=("v",),
            description="force to move the rod, F = c v (F v = c v^2 into the damper)"),
    )
    return ModelSpec(
        "damper",
        "Linear damper F = c v with direct feedthrough, order 0 (fmu-surrogate vendor-style)",
        "damper.c",
        v,
        Experiment(0.0, 1.0, 1e-2),
        defines={"MODEL_DO_STEP": 1},
    )


def dc_motor_spec() -> ModelSpec:
    """DC motor with electrical and mechanical ports (:mod:`fmu_surrogate.benchmarks.vendor.dc_motor`)."""
    p = _dc_motor.PARAMS
    v = [
        Var("V", "input", start=0.0, unit="V", description="supply voltage (effort)"),
        Var("w", "input", start=0.0, unit="rad/s", description="shaft speed (flow)"),
        Var("field", "input", start=1.0, unit="1",
            description="field command: flux as a fraction of rated (>= 0; modulates k)"),
        Var("R", "parameter", "tunable", p["R"], unit="Ohm", description="armature resistance (> 0)"),
        Var("L", "parameter", "tunable", p["L"], unit="H", description="armature inductance (> 0)"),
        Var("k", "parameter", "tunable", p["k"], unit="N.m/A",
            description="torque constant at rated field (> 0)"),
        Var("i0", "parameter", "fixed", p["i0"], unit="A", description="initial armature current"),
        Var("i_a", unit="A", description="armature current (state), H = L i_a^2 / 2"),
        Var("der(i_a)", derivative="i_a", unit="A/s"),
        Var("i", "output", unit="A", dependencies=("i_a", "direction"),
            description="supply current direction * i_a (V i: power into the motor)"),
        Var("tau", "output", unit="N.m", dependencies=("i_a", "field"),
            description="flange torque -k field i_a, the torque of the shaft on the motor "
            "(tau w: power into the motor)"),
        *fixed_step_variables(10),
        Var("direction", "input", "discrete", 1, type="Integer",
            description="reversing contactor: 1 forward, -1 reverse, 0 armature short-circuited "
            "(dynamic braking)"),
        Var("braking", "output", "discrete", type="Boolean", dependencies=("direction",),
            description="true while direction = 0"),
    ]
    return ModelSpec(
        "dc_motor",
        "Separately excited DC motor: electrical and mechanical ports, field command, reversing "
        "contactor; fixed-step RK4 (fmu-surrogate vendor-style)",
        "dc_motor.c",
        tuple(v),
        Experiment(0.0, 2.0, 1e-3),
        defines={"MODEL_RK4": 1},
    )


def power_damper_spec() -> ModelSpec:
    """Power-law damper, co-simulation only (:mod:`fmu_surrogate.benchmarks.vendor.power_damper`)."""
    v = (
        Var("v", "input", start=0.0, unit="m/s", description="rod velocity (flow)"),
        Var("c", "parameter", "tunable", _power_damper.PARAMS["c"],
            description="coefficient c in N / (m/s)^(4/3) (>= 0)"),
        Var("F", "output", unit="N", dependencies=("v",),
            description="force to move the rod, F = c sign(v) |v|^(4/3)"),
    )
    return ModelSpec(
        "power_damper",
        "Power-law damper F = c sign(v) |v|^(4/3) with direct feedthrough (fmu-surrogate "
        "vendor-style, co-simulation only)",
        "power_damper.c",
        v,
        Experiment(0.0, 1.0, 1e-2),
        defines={"MODEL_DO_STEP": 1},
        model_exchange=False,
    )


def power_damper_stepped_spec() -> ModelSpec:
    """The power damper whose outputs are computed at initialisation and in ``doStep`` only (as
    much generated code does): ``F`` at a communication point is the law of the velocity held
    over the step before; its model description still declares ``F`` dependent on ``v``."""
    spec = power_damper_spec()
    return dataclasses.replace(
        spec, identifier="power_damper_stepped",
        description="Power-law damper F = c sign(v) |v|^(4/3) whose outputs are computed at "
        "initialisation and in doStep only (fmu-surrogate vendor-style, co-simulation only)",
        defines={**spec.defines, "MODEL_OUTPUTS_IN_STEP": 1,
                 "MODEL_EXTRA_WORKSPACE": "double held_v;"})


def progressive_spring_spec(model_exchange: bool = False) -> ModelSpec:
    """Progressive spring (:mod:`fmu_surrogate.benchmarks.vendor.progressive_spring`): co-simulation
    only with the elongation internal, or (``model_exchange=True``, ``progressive_spring_me``)
    with model exchange and the elongation declared as its state."""
    p = _progressive_spring.PARAMS
    v = (
        Var("v", "input", start=0.0, unit="m/s", description="elongation rate (flow)"),
        Var("k", "parameter", "tunable", p["k"], unit="N/m", description="stiffness at x = 0 (> 0)"),
        Var("x_ref", "parameter", "tunable", p["x_ref"], unit="m",
            description="elongation at which the stiffness term has doubled (> 0)"),
        Var("x0", "parameter", "fixed", p["x0"], unit="m", description="initial elongation (preload)"),
        Var("x", unit="m", description="elongation (state)"),
        Var("der(x)", derivative="x", unit="m/s", description="x' = v"),
        Var("F", "output", unit="N", dependencies=("x",) if model_exchange else (),
            description="spring force k x (1 + (x / x_ref)^2) (F v: power into the spring)"),
        *fixed_step_variables(4),
    )
    return ModelSpec(
        "progressive_spring_me" if model_exchange else "progressive_spring",
        "Progressive spring F = k x (1 + (x/x_ref)^2), velocity in, force out (fmu-surrogate "
        + ("vendor-style, model exchange)" if model_exchange else "vendor-style, co-simulation "
           "only, state internal)"),
        "progressive_spring.c",
        v,
        Experiment(0.0, 1.0, 1e-2),
        defines={"MODEL_RK4": 1},
        model_exchange=model_exchange,
    )


def progressive_spring_me_spec() -> ModelSpec:
    """The progressive spring with model exchange, its elongation declared as state."""
    return progressive_spring_spec(model_exchange=True)


def saturating_inductor_spec() -> ModelSpec:
    """Coil with saturating flux, co-simulation only, flux internal
    (:mod:`fmu_surrogate.benchmarks.vendor.saturating_inductor`)."""
    p = _saturating_inductor.PARAMS
    v = (
        Var("V", "input", start=0.0, unit="V", description="terminal voltage (effort)"),
        Var("L0", "parameter", "tunable", p["L0"], unit="H", description="unsaturated inductance (> 0)"),
        Var("psi_sat", "parameter", "tunable", p["psi_sat"], unit="Wb",
            description="saturation flux linkage (> 0)"),
        Var("R", "parameter", "tunable", p["R"], unit="Ohm", description="winding resistance (>= 0)"),
        Var("psi0", "parameter", "fixed", p["psi0"], unit="Wb", description="initial flux linkage"),
        Var("psi", unit="Wb", description="flux linkage (state)"),
        Var("der(psi)", derivative="psi", unit="V", description="psi' = V - R i"),
        Var("i", "output", unit="A", dependencies=(),
            description="current (psi / L0) (1 + (psi / psi_sat)^2) (V i: power into the coil)"),
        *fixed_step_variables(10),
    )
    return ModelSpec(
        "saturating_inductor",
        "Coil with saturating flux, voltage in, current out (fmu-surrogate vendor-style, "
        "co-simulation only, state internal)",
        "saturating_inductor.c",
        v,
        Experiment(0.0, 2.0, 1e-3),
        defines={"MODEL_RK4": 1},
        model_exchange=False,
    )


def hydraulic_accumulator_spec() -> ModelSpec:
    """Hydraulic accumulator in bar and l/min, power-out port, fixed-step RK4
    (:mod:`fmu_surrogate.benchmarks.vendor.hydraulic`)."""
    p = _hydraulic.ACCUMULATOR
    v = (
        Var("Q", "input", start=0.0, unit="l/min",
            description="flow drawn from the accumulator (p Q: power out of the port)"),
        Var("C", "parameter", "tunable", p["C"], unit="l/bar",
            description="hydraulic capacitance (> 0)"),
        Var("p0", "parameter", "fixed", p["p0"], unit="bar", description="initial pressure"),
        Var("p", "output", unit="bar", description="pressure (state), H = C p^2 / 2"),
        Var("der(p)", derivative="p", unit="bar/s", description="p' = -Q / (60 C)"),
        *fixed_step_variables(4),
    )
    return ModelSpec(
        "hydraulic_accumulator",
        "Hydraulic accumulator 60 C p' = -Q in bar and l/min, power-out port, fixed-step RK4 "
        "(fmu-surrogate vendor-style)",
        "hydraulic_accumulator.c",
        v,
        Experiment(0.0, 2.0, 1e-2),
        defines={"MODEL_RK4": 1},
    )


def hydraulic_orifice_spec() -> ModelSpec:
    """Linear hydraulic orifice to tank, pressure in, flow out, feedthrough
    (:mod:`fmu_surrogate.benchmarks.vendor.hydraulic`)."""
    v = (
        Var("p", "input", start=0.0, unit="bar", description="upstream pressure (effort)"),
        Var("R", "parameter", "tunable", _hydraulic.ORIFICE["R"], unit="bar.min/l",
            description="flow resistance in bar per l/min (> 0)"),
        Var("Q", "output", unit="l/min", dependencies=("p",),
            description="flow to tank Q = p / R (p Q: power into the orifice)"),
    )
    return ModelSpec(
        "hydraulic_orifice",
        "Linear hydraulic orifice Q = p / R in bar and l/min with direct feedthrough, order 0 "
        "(fmu-surrogate vendor-style)",
        "hydraulic_orifice.c",
        v,
        Experiment(0.0, 1.0, 1e-2),
        defines={"MODEL_DO_STEP": 1},
    )
