"""Variable lists of the detailed vendor-like benchmark FMUs (the ``*_detailed`` components), of
the saturating motor (:func:`saturating_motor_spec`, lumped), of the progressive spring with
a displacement input (:func:`progressive_spring_displacement_spec`,
:func:`progressive_spring_damper_spec`), of the coupled mass that counts its own time as
20-sim's FMUs do (:func:`coupled_mass_clock_spec`), of the pendulum on a driven joint that
turns over (:func:`pendulum_joint_spec`) and of the nonlinear hydraulic components in bar and l/min,
the gas-charged accumulator and the turbulent orifice (:func:`gas_accumulator_spec`,
:func:`turbulent_orifice_spec`, physics in :mod:`.vendor.hydraulic`) and of the mass on the
progressive spring with an acceleration sensor (:func:`sprung_mass_sensor_spec`) and of the mass
with end stops and a position sensor (:func:`end_stop_mass_spec`);
:mod:`.specs` has no room left.

Each detailed component has the variables, units and causalities of its lumped original in
:mod:`.specs` (so the same experiments apply), the parameters of its detailed physics, and many
internal states that its own SUNDIALS CVODE integrates (:mod:`fmu_surrogate.benchmarks.cvode`):
co-simulation only, states not in the model description.  Their physics:
:mod:`.vendor.progressive_spring_detailed`, :mod:`.vendor.power_damper_detailed`,
:mod:`.vendor.saturating_inductor_detailed`; that of the motor: :mod:`.vendor.saturating_motor`.
"""

from __future__ import annotations

import dataclasses

from fmu_surrogate.benchmarks.cvode import cvode_variant
from fmu_surrogate.benchmarks.specs import fixed_step_variables
from fmu_surrogate.benchmarks.vendor import free_mass as _free_mass
from fmu_surrogate.benchmarks.vendor import hydraulic as _hydraulic
from fmu_surrogate.benchmarks.vendor import power_damper_detailed as _damper
from fmu_surrogate.benchmarks.vendor import progressive_spring as _lumped_spring
from fmu_surrogate.benchmarks.vendor import progressive_spring_detailed as _spring
from fmu_surrogate.benchmarks.vendor import saturating_inductor_detailed as _coil
from fmu_surrogate.benchmarks.vendor import saturating_motor as _motor
from fmu_surrogate.benchmarks.vendor.rotating import pendulum_joint as _joint
from fmu_surrogate.benchmarks.vendor.stepping import coupled_mass_clock as _clock
from fmu_surrogate.export.fmi.model_description import Experiment, ModelSpec, Var

__all__ = ["coupled_mass_clock_spec", "end_stop_mass_spec", "gas_accumulator_spec", "pendulum_joint_spec",
           "power_damper_detailed_spec", "progressive_spring_damper_spec",
           "progressive_spring_detailed_spec", "progressive_spring_displacement_spec",
           "saturating_inductor_detailed_spec", "saturating_motor_spec",
           "sprung_mass_sensor_spec", "turbulent_orifice_spec"]


def _with_cvode(spec: ModelSpec) -> ModelSpec:
    """``spec`` integrated by its own CVODE, under its own identifier."""
    solved = cvode_variant(spec)
    return dataclasses.replace(solved, identifier=spec.identifier)


def progressive_spring_detailed_spec() -> ModelSpec:
    """The progressive spring as a coil of 20 segments with mass and material damping."""
    p = _spring.PARAMS
    n = _spring.N_SEGMENTS
    v = [
        Var("v", "input", start=0.0, unit="m/s", description="velocity of the driven end (flow)"),
        Var("k", "parameter", "tunable", p["k"], unit="N/m",
            description="stiffness of the whole spring at x = 0 (> 0)"),
        Var("x_ref", "parameter", "tunable", p["x_ref"], unit="m",
            description="elongation at which the stiffness term has doubled (> 0)"),
        Var("x0", "parameter", "fixed", p["x0"], unit="m",
            description="initial elongation (uniform preload, at rest)"),
        Var("m_coil", "parameter", "tunable", p["m_coil"], unit="kg",
            description="mass of the coil (> 0), m_coil / N on each inner node"),
        Var("c_seg", "parameter", "tunable", p["c_seg"], unit="N.s/m",
            description="material damping of each segment (>= 0)"),
        Var("X", unit="m", description="elongation of the whole spring (state)"),
        *(Var(f"s[{j}]", unit="m", description=f"displacement of node {j} (state)")
          for j in range(1, n)),
        *(Var(f"w[{j}]", unit="m/s", description=f"velocity of node {j} (state)")
          for j in range(1, n)),
        Var("der(X)", derivative="X", unit="m/s"),
        *(Var(f"der(s[{j}])", derivative=f"s[{j}]", unit="m/s") for j in range(1, n)),
        *(Var(f"der(w[{j}])", derivative=f"w[{j}]", unit="m/s2") for j in range(1, n)),
        Var("F", "output", unit="N", dependencies=("v",),
            description="force at the driven end: tension of the last segment, spring and "
            "damper (F v: power into the spring)"),
    ]
    return _with_cvode(ModelSpec(
        "progressive_spring_detailed",
        f"Progressive spring as a coil of {n} segments with mass and material damping, velocity "
        "in, force out (fmu-surrogate vendor-style detailed model, co-simulation only, "
        f"{2 * n - 1} states internal)",
        "progressive_spring_detailed.c",
        tuple(v),
        Experiment(0.0, 1.0, 1e-2),
        defines={"N_SEG": n},
        model_exchange=False,
    ))


def power_damper_detailed_spec() -> ModelSpec:
    """Hydraulic damper: piston, two compressible oil chambers, an orifice."""
    p = _damper.PARAMS
    par = [("A", "m2", "piston area on either side (> 0)"),
           ("a_o", "m2", "orifice area (> 0)"), ("Cd", "1", "discharge coefficient (> 0)"),
           ("rho", "kg/m3", "oil density (> 0)"), ("beta", "Pa", "oil bulk modulus (> 0)"),
           ("V1", "m3", "oil volume of chamber 1 (> 0)"),
           ("V2", "m3", "oil volume of chamber 2 (> 0)"),
           ("p_pre", "Pa", "precharge pressure of both chambers (> 0)"),
           ("dp_tr", "Pa", "pressure difference of the laminar-turbulent transition (> 0)")]
    v = (
        Var("v", "input", start=0.0, unit="m/s", description="rod velocity (flow)"),
        *(Var(k, "parameter", "tunable", p[k], unit=u, description=d) for k, u, d in par),
        Var("p1", unit="Pa", description="pressure of chamber 1 above p_pre (state)"),
        Var("p2", unit="Pa", description="pressure of chamber 2 above p_pre (state)"),
        Var("der(p1)", derivative="p1", unit="Pa/s", description="(V1 / beta) p1' = A v - Q"),
        Var("der(p2)", derivative="p2", unit="Pa/s", description="(V2 / beta) p2' = Q - A v"),
        Var("F", "output", unit="N", dependencies=(),
            description="force to move the rod, A (p1 - p2) (F v: power into the damper)"),
    )
    return _with_cvode(ModelSpec(
        "power_damper_detailed",
        "Hydraulic damper: piston, two chambers of compressible oil, an orifice with a laminar "
        "transition; F close to c v |v| (fmu-surrogate vendor-style detailed model, "
        "co-simulation only, states internal)",
        "power_damper_detailed.c",
        v,
        Experiment(0.0, 1.0, 1e-2),
        model_exchange=False,
    ))


def saturating_inductor_detailed_spec() -> ModelSpec:
    """Saturating coil with a 20-section Cauer ladder of lamination eddy currents."""
    p = _coil.PARAMS
    n = _coil.N_SECTIONS
    v = (
        Var("V", "input", start=0.0, unit="V", description="terminal voltage (effort)"),
        Var("L0", "parameter", "tunable", p["L0"], unit="H",
            description="unsaturated inductance at low frequency (> 0)"),
        Var("psi_sat", "parameter", "tunable", p["psi_sat"], unit="Wb",
            description="saturation flux linkage (> 0)"),
        Var("R", "parameter", "tunable", p["R"], unit="Ohm", description="winding resistance (>= 0)"),
        Var("R_core", "parameter", "tunable", p["R_core"], unit="Ohm",
            description="low-frequency core-loss resistance of the eddy currents (> 0)"),
        Var("psi0", "parameter", "fixed", p["psi0"], unit="Wb",
            description="initial flux linkage, shared equally by the layers"),
        *(Var(f"psi[{k}]", unit="Wb", description=f"flux linkage of layer {k} (state)")
          for k in range(1, n + 1)),
        *(Var(f"der(psi[{k}])", derivative=f"psi[{k}]", unit="V") for k in range(1, n + 1)),
        Var("i", "output", unit="A", dependencies=(),
            description="winding current, that of the outer layer (V i: power into the coil)"),
    )
    return _with_cvode(ModelSpec(
        "saturating_inductor_detailed",
        f"Coil with saturating flux and lamination eddy currents (Cauer ladder of {n} sections), "
        "voltage in, current out (fmu-surrogate vendor-style detailed model, co-simulation "
        "only, states internal)",
        "saturating_inductor_detailed.c",
        v,
        Experiment(0.0, 2.0, 1e-3),
        defines={"N_SEC": n},
        model_exchange=False,
    ))


def saturating_motor_spec() -> ModelSpec:
    """DC motor with a saturating magnetic circuit, co-simulation only, flux internal."""
    p = _motor.PARAMS
    v = (
        Var("V", "input", start=0.0, unit="V", description="armature voltage (effort)"),
        Var("w", "input", start=0.0, unit="rad/s",
            description="shaft speed, imposed by the load (flow)"),
        Var("R", "parameter", "tunable", p["R"], unit="Ohm",
            description="armature resistance (>= 0)"),
        Var("L0", "parameter", "tunable", p["L0"], unit="H",
            description="unsaturated armature inductance (> 0)"),
        Var("k", "parameter", "tunable", p["k"], unit="N.m/A",
            description="torque constant = back-EMF constant in V.s/rad (> 0)"),
        Var("psi_sat", "parameter", "tunable", p["psi_sat"], unit="Wb",
            description="saturation flux linkage (> 0)"),
        Var("psi0", "parameter", "fixed", p["psi0"], unit="Wb",
            description="initial flux linkage"),
        Var("psi", unit="Wb", description="armature flux linkage (state)"),
        Var("der(psi)", derivative="psi", unit="V", description="psi' = V - R i - k w"),
        Var("i", "output", unit="A", dependencies=(),
            description="armature current (psi / L0) (1 + (psi / psi_sat)^2) "
            "(V i: power into the motor)"),
        Var("tau", "output", unit="N.m", dependencies=(),
            description="torque delivered to the load, k i (tau w: power out of the motor)"),
        *fixed_step_variables(10),
    )
    return ModelSpec(
        "saturating_motor",
        "DC motor with a saturating magnetic circuit: armature voltage and shaft speed in, "
        "current and delivered torque out (fmu-surrogate vendor-style, co-simulation only, "
        "state internal)",
        "saturating_motor.c",
        v,
        Experiment(0.0, 2.0, 1e-3),
        defines={"MODEL_RK4": 1},
        model_exchange=False,
    )


def progressive_spring_displacement_spec(damper: bool = False) -> ModelSpec:
    """The progressive spring with the displacement of its driven end as an input, no state
    (:mod:`fmu_surrogate.benchmarks.vendor.progressive_spring`): ``progressive_spring_displacement``
    (force out), or (``damper=True``, ``progressive_spring_damper``) in the adaptor convention
    with a power-law damper in parallel (displacement and velocity in, force out)."""
    p = _lumped_spring.ADAPTOR_PARAMS
    out = "f" if damper else "F"
    law = "k x (1 + (x / x_ref)^2), x = x0 + s"
    v = [
        Var("s", "input", start=0.0, unit="m",
            description="displacement of the driven end from its preloaded position"),
        *((Var("v", "input", start=0.0, unit="m/s",
               description="velocity of the driven end (flow; set independently of s)"),)
          if damper else ()),
        Var("k", "parameter", "tunable", p["k"], unit="N/m", description="stiffness at x = 0 (> 0)"),
        Var("x_ref", "parameter", "tunable", p["x_ref"], unit="m",
            description="elongation at which the stiffness term has doubled (> 0)"),
        Var("x0", "parameter", "tunable", p["x0"], unit="m",
            description="elongation at s = 0 (preload)"),
        *((Var("c", "parameter", "tunable", p["c"],
               description="damper coefficient c in N / (m/s)^(4/3) (>= 0)"),) if damper else ()),
        Var(out, "output", unit="N", dependencies=("s", "v") if damper else ("s",),
            description=(f"force {law} + c sign(v) |v|^(4/3) (f v: power into the component)"
                         if damper else f"spring force {law}")),
    ]
    return ModelSpec(
        "progressive_spring_damper" if damper else "progressive_spring_displacement",
        ("Progressive spring and power-law damper in parallel, displacement and velocity in, "
         "force out (adaptor convention)" if damper else
         "Progressive spring, displacement in, force out")
        + " (fmu-surrogate vendor-style, co-simulation only, no state)",
        "progressive_spring.c",
        tuple(v),
        Experiment(0.0, 1.0, 1e-2),
        defines={"MODEL_DO_STEP": 1, "MODEL_DISPLACEMENT": 1,
                 **({"MODEL_DAMPER": 1} if damper else {})},
        model_exchange=False,
    )


def progressive_spring_damper_spec() -> ModelSpec:
    """The progressive spring and a power-law damper in the adaptor convention."""
    return progressive_spring_displacement_spec(damper=True)


def coupled_mass_clock_spec() -> ModelSpec:
    """Mass coupled to a driven end, stepped with a clock of its own as 20-sim's exported FMUs
    step (:mod:`fmu_surrogate.benchmarks.vendor.stepping.coupled_mass_clock`): co-simulation
    only, the state internal, no units (a unitless export)."""
    p = _clock.PARAMS
    par = [("m2", "mass in kg (> 0)"),
           ("c2", "stiffness of the spring from the mass to ground in N/m (>= 0)"),
           ("d2", "damping of the damper from the mass to ground in N.s/m (>= 0)"),
           ("cc", "stiffness of the coupling spring in N/m (>= 0)"),
           ("dc", "damping of the coupling damper in N.s/m (>= 0)")]
    v = (
        Var("x1", "input", start=0.0, description="position of the driven end in m"),
        Var("v1", "input", start=0.0, description="velocity of the driven end in m/s (flow)"),
        *(Var(k, "parameter", "tunable", p[k], description=d) for k, d in par),
        Var("solver_step", "parameter", "fixed", p["solver_step"],
            description="fixed step in s of the FMU's Runge-Kutta 4 integrator (> 0); its "
            "clock, from the start time, advances by it"),
        Var("fk", "output", dependencies=(),
            description="coupling force in N at the driven end, cc (x1 - x2) + dc (v1 - v2), "
            "positive when it pushes the driven end back (fk v1: power into the component); "
            "computed at the end of the step with the inputs it held"),
        Var("x2", "output", dependencies=(), description="position of the mass in m"),
        Var("v2", "output", dependencies=(), description="velocity of the mass in m/s"),
    )
    return ModelSpec(
        "coupled_mass_clock",
        "Mass on a spring and damper to ground coupled to a driven end, fixed-step RK4 with a "
        "clock of its own compared with the communication points without a tolerance, as "
        "20-sim exports (fmu-surrogate vendor-style, co-simulation only, state internal, "
        "unitless)",
        "coupled_mass_clock.c",
        v,
        Experiment(0.0, 3.0, 0.01),
        defines={"MODEL_DO_STEP": 1, "MODEL_EXTRA_DATA": "double clock; double s[2];"},
        model_exchange=False,
        # the tool it imitates, as its FMUs name it (a harvest steps them through the points
        # of a master that adds the step: fmu.campaigns.experiment.communication_points)
        generation_tool="20-sim (imitated by fmu_surrogate.benchmarks)",
    )


def pendulum_joint_spec() -> ModelSpec:
    """Pendulum on a driven joint (:mod:`fmu_surrogate.benchmarks.vendor.rotating.pendulum_joint`):
    torque in, angular velocity out, co-simulation only, angle and rate internal, its own
    CVODE."""
    p = _joint.PARAMS
    par = [("m", "kg", "pendulum mass (> 0)"), ("l", "m", "rod length (> 0)"),
           ("g", "m/s2", "gravitational acceleration"),
           ("d", "N.m.s/rad", "viscous friction of the joint (>= 0)")]
    v = (
        Var("tau", "input", start=0.0, unit="N.m",
            description="torque the drive applies to the joint (tau w: power into the pendulum)"),
        *(Var(k, "parameter", "tunable", p[k], unit=u, description=d) for k, u, d in par),
        Var("phi0", "parameter", "fixed", p["phi0"], unit="rad", description="initial angle"),
        Var("w0", "parameter", "fixed", p["w0"], unit="rad/s",
            description="initial angular velocity"),
        Var("phi", unit="rad", description="angle from the bottom (state)"),
        Var("omega", unit="rad/s", description="angular velocity (state)"),
        Var("der(phi)", derivative="phi", unit="rad/s"),
        Var("der(omega)", derivative="omega", unit="rad/s2"),
        Var("w", "output", unit="rad/s", dependencies=(), description="angular velocity"),
    )
    return _with_cvode(ModelSpec(
        "pendulum_joint",
        "Pendulum on a driven joint that turns over, torque in, angular velocity out "
        "(fmu-surrogate vendor-style, co-simulation only, states internal)",
        "pendulum_joint.c",
        v,
        Experiment(0.0, 10.0, 1e-2),
        model_exchange=False,
    ))


def gas_accumulator_spec() -> ModelSpec:
    """Gas-charged hydraulic accumulator in bar and l/min, polytropic, power-out port, starts
    charged; co-simulation only, the fluid volume internal, fixed-step RK4
    (:mod:`fmu_surrogate.benchmarks.vendor.hydraulic`)."""
    p = _hydraulic.GAS_ACCUMULATOR
    v = (
        Var("Q", "input", start=0.0, unit="l/min",
            description="flow drawn from the accumulator (p Q: power out of the port)"),
        Var("p_pre", "parameter", "fixed", p["p_pre"], unit="bar",
            description="gas precharge pressure, the pressure of the empty accumulator (> 0)"),
        Var("V0", "parameter", "fixed", p["V0"], unit="l",
            description="gas volume at the precharge pressure, the capacity (> 0)"),
        Var("n", "parameter", "fixed", p["n"], unit="1",
            description="polytropic exponent of the gas (>= 1; 1 isothermal, 1.4 adiabatic)"),
        Var("p_init", "parameter", "fixed", p["p_init"], unit="bar",
            description="initial pressure (> p_pre: it starts charged)"),
        Var("V", unit="l", description="fluid volume (state), within (0, V0)"),
        Var("der(V)", derivative="V", unit="l/s", description="V' = -Q / 60"),
        Var("p", "output", unit="bar", dependencies=(),
            description="pressure p_pre (V0 / (V0 - V))^n"),
        *fixed_step_variables(10),
    )
    return ModelSpec(
        "gas_accumulator",
        "Gas-charged hydraulic accumulator V' = -Q / 60, p = p_pre (V0 / (V0 - V))^n in bar and "
        "l/min, power-out port (fmu-surrogate vendor-style, co-simulation only, state internal)",
        "gas_accumulator.c",
        v,
        Experiment(0.0, 10.0, 1e-2),
        defines={"MODEL_RK4": 1},
        model_exchange=False,
    )


def turbulent_orifice_spec() -> ModelSpec:
    """Hydraulic orifice to tank with a laminar-turbulent transition, pressure in, flow out,
    feedthrough (:mod:`fmu_surrogate.benchmarks.vendor.hydraulic`)."""
    p = _hydraulic.TURBULENT_ORIFICE
    v = (
        Var("p", "input", start=0.0, unit="bar", description="upstream pressure (effort)"),
        # (l/min)/sqrt(bar) has a half-integer exponent: no unit string the readers know
        Var("K", "parameter", "tunable", p["K"],
            description="flow coefficient in (l/min)/sqrt(bar): Q = K sqrt(p) in turbulent flow "
            "(> 0)"),
        Var("p_crit", "parameter", "tunable", p["p_crit"], unit="bar",
            description="pressure of the laminar-turbulent transition (> 0)"),
        Var("Q", "output", unit="l/min", dependencies=("p",),
            description="flow to tank K sign(p) sqrt(|p|) tanh(2 sqrt(|p| / p_crit)) "
            "(p Q: power into the orifice)"),
    )
    return ModelSpec(
        "turbulent_orifice",
        "Hydraulic orifice Q = K sign(p) sqrt(|p|) tanh(2 sqrt(|p| / p_crit)) in bar and l/min, "
        "laminar-turbulent transition, direct feedthrough, order 0 (fmu-surrogate vendor-style)",
        "turbulent_orifice.c",
        v,
        Experiment(0.0, 1.0, 1e-2),
        defines={"MODEL_DO_STEP": 1},
    )


def sprung_mass_sensor_spec() -> ModelSpec:
    """Mass on the progressive spring with the power-law damper to ground
    (:mod:`fmu_surrogate.benchmarks.vendor.progressive_spring`): force in, velocity out (the
    power port) and acceleration out (a measured output with a direct feedthrough of the
    force); co-simulation only, elongation and momentum internal, fixed-step RK4."""
    p = _lumped_spring.SPRUNG_MASS_PARAMS
    v = (
        Var("F", "input", start=0.0, unit="N",
            description="force on the mass (effort; F v: power into the component)"),
        Var("m", "parameter", "tunable", p["m"], unit="kg", description="mass (> 0)"),
        Var("k", "parameter", "tunable", p["k"], unit="N/m",
            description="spring stiffness at x = 0 (> 0)"),
        Var("x_ref", "parameter", "tunable", p["x_ref"], unit="m",
            description="elongation at which the stiffness term has doubled (> 0)"),
        Var("c", "parameter", "tunable", p["c"],
            description="damper coefficient c in N / (m/s)^(4/3) (>= 0)"),
        Var("x0", "parameter", "fixed", p["x0"], unit="m", description="initial elongation"),
        Var("v0", "parameter", "fixed", p["v0"], unit="m/s", description="initial velocity"),
        Var("x", unit="m", description="elongation of the spring (state)"),
        Var("p", unit="N.s", description="momentum m v of the mass (state)"),
        Var("der(x)", derivative="x", unit="m/s", description="x' = p / m"),
        Var("der(p)", derivative="p", unit="N",
            description="p' = F - k x (1 + (x / x_ref)^2) - c sign(v) |v|^(4/3)"),
        Var("v", "output", unit="m/s", dependencies=(),
            description="velocity of the mass, p / m (F v: power into the component)"),
        Var("a", "output", unit="m/s2", dependencies=("F",),
            description="acceleration of the mass, p' / m, of the current state and force"),
        *fixed_step_variables(10),
    )
    return ModelSpec(
        "sprung_mass_sensor",
        "Mass on a progressive spring with a power-law damper to ground, force in, velocity "
        "and acceleration out (fmu-surrogate vendor-style, co-simulation only, states "
        "internal)",
        "sprung_mass_sensor.c",
        v,
        Experiment(0.0, 10.0, 1e-2),
        defines={"MODEL_RK4": 1},
        model_exchange=False,
    )


def end_stop_mass_spec() -> ModelSpec:
    """Mass on a spring and a damper in a housing with end stops (ElastoGap contacts,
    :mod:`fmu_surrogate.benchmarks.vendor.free_mass`): force in, velocity out (the power port)
    and position out (a measured output); co-simulation only, position and momentum internal,
    its own fixed-step RK4 in substeps of at most ``max_step``, contacts not located."""
    p = _free_mass.END_STOP_PARAMS
    par = [("m", "kg", "mass (> 0)"), ("k", "N/m", "spring to the housing (>= 0)"),
           ("c", "N.s/m", "damper to the housing (>= 0)"),
           ("kc", "N/m", "contact spring of each stop (>= 0)"),
           ("dc", "N.s/m", ("contact damper of each stop (>= 0), its force limited by the "
                             "contact spring's (the contact never pulls)")),
           ("s_max", "m", "upper stop: contact for s > s_max (> 0)"),
           ("s_min", "m", "lower stop: contact for s < s_min (< 0)")]
    v = (
        Var("F", "input", start=0.0, unit="N",
            description="force on the mass (effort; F v: power into the component)"),
        *(Var(k, "parameter", "tunable", p[k], unit=u, description=d) for k, u, d in par),
        Var("s0", "parameter", "fixed", p["s0"], unit="m", description="initial position"),
        Var("v0", "parameter", "fixed", p["v0"], unit="m/s", description="initial velocity"),
        Var("max_step", "parameter", "fixed", 5e-4, unit="s",
            description="co-simulation: longest substep of the FMU's fixed-step Runge-Kutta 4, "
            "ceil(H / max_step) equal substeps per communication step H (> 0); contacts are "
            "not located"),
        Var("x", unit="m", description="position of the mass (state)"),
        Var("p", unit="N.s", description="momentum m v of the mass (state)"),
        Var("der(x)", derivative="x", unit="m/s", description="x' = p / m"),
        Var("der(p)", derivative="p", unit="N",
            description="p' = F - k x - c v + force of the stops"),
        Var("v", "output", unit="m/s", dependencies=(),
            description="velocity of the mass, p / m (F v: power into the component)"),
        Var("s", "output", unit="m", dependencies=(),
            description="position of the mass from rest (position sensor)"),
    )
    return ModelSpec(
        "end_stop_mass",
        "Mass on a spring and a damper with elastic end stops (ElastoGap contacts), force in, "
        "velocity and position out (fmu-surrogate vendor-style, co-simulation only, states "
        "internal, fixed-step RK4, contacts not located)",
        "end_stop_mass.c",
        v,
        Experiment(0.0, 10.0, 1e-2),
        defines={"MODEL_DO_STEP": 1},
        model_exchange=False,
    )
