"""Variable lists of the benchmark FMUs (the one place that defines them).

Each ``*_spec`` function returns the :class:`~fmu_surrogate.export.fmi.model_description.ModelSpec`
of one FMU; its C file in ``c/`` uses the generated ``VR_<symbol>`` names.  Every FMU also has the
co-simulation integrator settings of :func:`solver_variables`.
"""

from __future__ import annotations

import math

from fmu_surrogate.benchmarks import cauer as _cauer
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
