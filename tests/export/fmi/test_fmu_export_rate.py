"""Exported drop-in surrogates whose outputs read the state's rate (``PortMap.Cdx``): a mass on a
spring with a damper, state ``(p, q)``, force ``F`` in, velocity ``v`` (a port) and acceleration
``a = ṗ/m`` (a row of ``Cdx``) out, as a vendor's mass component shows them.  The core is linear
(a viscous damper) or a ``NonlinearPH`` (a progressive spring and a power-law damper besides,
whose force the acceleration holds).  In co-simulation (FMI 2 and 3, with and without a delayed
feedthrough) the FMUs reproduce ``fs.ph.simulate`` to round-off, and the acceleration is
``(F − c v − d(v) − f_s(q))/m`` of their own states; in model exchange their derivatives, outputs
and directional derivatives are the Python model's and the analytic slopes; the
``<ModelStructure>`` says that ``a`` depends on the force and on both states."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fmu_surrogate.export import export_fmu
from fmu_surrogate.export.fmi.c_data import surrogate_data
from fmu_surrogate.export.wiring import wiring
from fmu_surrogate.fmu.backends.fmpy_instance import FmpyBackend
from fmu_surrogate.ph import (
    ConvexEffort,
    LinearPH,
    NonlinearPH,
    PortedSystem,
    PortMap,
    PowerDissipation,
    simulate,
)
from tests.export._reference import extrapolated
from tests.export.fmi.test_fmu_export_port_law import STEP, _Point
from tests.export.fmi.test_structure import _structure

HC, T_END = 0.05, 1.0  # the communication grid
M, K, C = 2.0, 3.0, 0.4  # mass, spring stiffness, viscous damping
K3, BETA, P, DELTA = 1.5, 0.8, 1.0 / 3.0, 1e-2  # f_s = K q + K3 q³, d(v) = β (v² + δ²)^(p/2) v
X0 = np.array([0.6, -0.2])  # (p, q)
BEFORE = np.array([0.5])  # the force held before the first step (delayed feedthrough)
NAMES = ("v", "a", "F", "H")


def _ports():
    """F drives the port; v = y (the port's velocity p/m), a = ṗ/m (Cdx)."""
    return PortMap(("F",), ("v", "a"), ("N",), ("m/s", "m/s2"), Tu=[[1.0]], cu=[0.0],
                   Ty=[[1.0], [0.0]], Cx=np.zeros((2, 2)), Du=np.zeros((2, 1)), cy=[0.0, 0.0],
                   Cdx=[[0.0, 0.0], [1.0 / M, 0.0]])


def linear(delayed=False):
    """ṗ = F − c p/m − k q, q̇ = p/m: Q = diag(1/m, k), J = [[0, −1], [1, 0]], R = diag(c, 0)."""
    core = LinearPH([[0.0, -1.0], [1.0, 0.0]], np.diag([C, 0.0]), np.diag([1.0 / M, K]),
                    [[1.0], [0.0]], input_names=["F_core"], output_names=["v_core"])
    return PortedSystem(core, _ports(), X0, delayed_feedthrough=delayed,
                        inputs_before=BEFORE if delayed else None)


def nonlinear(delayed=False):
    """The same mass with a progressive spring (a quartic ridge along q: f_s = k q + k₃ q³) and
    a power-law damper on the velocity z₁ = p/m beside the viscous one (R₀ = diag(c, 0))."""
    eff = ConvexEffort(np.diag([1.0 / M, K]), ["quartic"], [K3], [[0.0, 1.0]])
    diss = PowerDissipation([[1.0, 0.0]], [BETA], [P], [DELTA])
    core = NonlinearPH([[0.0, -1.0], [1.0, 0.0]], np.diag([C, 0.0]), [[1.0], [0.0]], eff, diss,
                       input_names=["F_core"], output_names=["v_core"])
    return PortedSystem(core, _ports(), X0, delayed_feedthrough=delayed,
                        inputs_before=BEFORE if delayed else None)


MAKE = {"linear": linear, "nonlinear": nonlinear}
#: FMI versions compiled per case (compilation is the cost: every code path in one version at
#: least, FMI 3 for each core)
VERSIONS = {("linear", False): (2, 3), ("nonlinear", False): (2, 3), ("linear", True): (3,),
            ("nonlinear", True): (2,)}


def _case(kind, delayed):
    return MAKE[kind](delayed)


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("rate")
    return {(kind, delayed, v): export_fmu(_case(kind, delayed),
                                           d / f"{kind}{int(delayed)}{v}.fmu", fmi_version=v,
                                           step=STEP)
            for (kind, delayed), versions in VERSIONS.items() for v in versions}


def _inputs():
    """A force through both signs on the communication grid (held over each step)."""
    t = np.arange(0.0, T_END + HC / 2, HC)
    F = 2.0 * np.sin(2 * np.pi * t) + np.cumsum(np.random.default_rng(5).normal(size=t.size))
    return t, F[:, None]


def _harvest(fmu, t, U, names):
    """The FMU run as the harvest runs it (inputs set at t_k, outputs read, then the step)."""
    b = FmpyBackend(interface="cs")
    b.open(fmu)
    out = b.run({}, {"F": U[:, 0]}, t, names)
    b.close()
    assert out.error is None and out.n_done == t.size
    return {k: out.values[k] for k in names}


def _simulated(kind, ps, t, U):
    """fs.ph.simulate on the FMU's grid (states, outputs, H): the linear FMU steps exactly
    (ph.simulate extrapolated to a zero sub-step, tests/export/_reference.py), the nonlinear one
    with the scheme on its internal grid STEP (the input and the delay held over each
    communication step)."""
    if kind == "linear":
        return extrapolated(ps, t, U, keys=("x", "y", "H"))
    k = round(HC / STEP)
    tf = np.linspace(t[0], t[-1], (t.size - 1) * k + 1)
    tr = simulate(ps, tf, np.concatenate([np.repeat(U[:-1], k, axis=0), U[-1:]]), hold="zoh")
    return {"x": tr.x[::k], "y": tr.y[::k], "H": tr.H[::k]}


def _acceleration(kind, x, F):
    """a = (F − c v − d(v) − f_s(q))/m from the states (p, q): the mass's law written out,
    independent of the pH objects (d = 0, f_s = k q for the linear core)."""
    p, q = x[:, 0], x[:, 1]
    v = p / M
    if kind == "linear":
        return (F - C * v - K * q) / M
    damper = BETA * (v ** 2 + DELTA ** 2) ** (P / 2) * v
    return (F - C * v - damper - K * q - K3 * q ** 3) / M


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max()


CASES = [(kind, delayed, v) for (kind, delayed), vs in VERSIONS.items() for v in vs]


@pytest.mark.parametrize("kind, delayed, version", CASES)
def test_co_simulation_reproduces_ph_simulate(fmus, kind, delayed, version):
    ps = _case(kind, delayed)
    t, U = _inputs()
    # a delayed feedthrough is exported for co-simulation only: its states are internal
    names = NAMES if delayed else (*NAMES, "x1", "x2")
    r = _harvest(fmus[kind, delayed, version], t, U, names)
    assert np.array_equal(r["F"], U[:, 0])
    ref = _simulated(kind, ps, t, U)
    # linear: the exact step against Romberg-extrapolated ph.simulate; nonlinear: the same AVF
    # steps and Newton iterations in another summation order (two Gauss nodes for the quartic
    # energy against four), bounded by the Newton tolerance 1e-12 of both; the acceleration is a
    # few more products of the same state: measured ≤ 7.4e-15 (y) and 7.6e-14 (H) linear,
    # 1.0e-16 and 6.5e-16 nonlinear
    assert _rel(np.column_stack([r["v"], r["a"]]), ref["y"]) <= 1e-12
    assert _rel(r["H"], ref["H"]) <= 1e-12
    # the acceleration is the mass's law of the simulated states (and of the FMU's own, when it
    # shows them) and of the force the outputs see (with a delayed feedthrough the input held
    # over the step before, inputs_before at the start): the exact step or the scheme against
    # the law written out, measured ≤ 2.5e-15 relative (the states' own deviation, 1e-12 as
    # above)
    seen = ps.inputs_seen_by_outputs(U)[:, 0] if delayed else U[:, 0]
    assert _rel(r["a"], _acceleration(kind, ref["x"], seen)) <= 1e-12
    if not delayed:
        X = np.column_stack([r["x1"], r["x2"]])
        assert _rel(X, ref["x"]) <= 1e-12  # the same states (measured ≤ 4.5e-14)
        # a few products in another order: measured ≤ 2.0e-16
        assert _rel(r["a"], _acceleration(kind, X, seen)) <= 1e-13
    # the rate is there: without Cdx a would be 0 (measured up to 2.3 m/s²)
    assert np.abs(r["a"]).max() > 0.5
    if delayed:  # an input set now reaches a only after the next step: another signal (the
        # force's steps over one step divided by m, measured 0.41 relative)
        assert _rel(_acceleration(kind, ref["x"], U[:, 0]), r["a"]) > 1e-2


@pytest.mark.parametrize("kind, version", [("linear", 2), ("nonlinear", 2), ("nonlinear", 3)])
def test_model_exchange_outputs_and_directional_derivatives(fmus, kind, version):
    """At a point, ẋ, v and a are the Python model's (a = the flow's first row over m) and
    ∂a/∂(p, q, F) the mass's law's slopes: (−(c + d'(v))/m², −f_s'(q)/m, 1/m)."""
    ps = _case(kind, False)
    pt = _Point(fmus[kind, False, version], version)
    for x, F in ((np.array([0.7, -0.4]), 1.3), (np.array([-1.1, 0.5]), -0.6)):
        got = pt.values(x, {"F": F}, ["der(x1)", "der(x2)", "v", "a"])
        u = np.array([F])
        ref = np.concatenate([ps.system.flow(x, ps.inputs_to_ports(u)), ps.outputs(x, u)])
        # a few products and one pow (nonlinear), 1e-14 allows another order: measured 0
        # (bit for bit), here and below
        assert np.abs(got - ref).max() <= 1e-14 * np.abs(ref).max()
        assert got[3] == pytest.approx(_acceleration(kind, x[None], F)[0], rel=1e-14)
        v, q = x[0] / M, x[1]
        dd = 0.0 if kind == "linear" else BETA * (v ** 2 + DELTA ** 2) ** (P / 2 - 1) * (
            v ** 2 + DELTA ** 2 + P * v ** 2)  # d'(v)
        ds = K if kind == "linear" else K + 3 * K3 * q ** 2  # f_s'(q)
        expected = np.array([-(C + dd) / M ** 2, -ds / M, 1.0 / M])
        J = np.array([pt.derivatives(["a"], ["x1", "x2", "F"], e)[0] for e in np.eye(3)])
        # the analytic Jacobians (effort, dissipation), 1e-13 allows another order: measured 0
        assert np.abs(J - expected).max() <= 1e-13 * np.abs(expected).max()
        # the velocity does not see the force: its derivative is the port's alone
        assert pt.derivatives(["v"], ["F"], [1.0])[0] == 0.0
    pt.close()


def test_linear_model_exchange_integrates_to_the_solver_tolerance(fmus):
    """CVode integrating the model-exchange FMU under a constant force: the acceleration read
    off it is the exact solution's to the solver's tolerance."""
    from fmpy import simulate_fmu

    from tests.export._reference import extrapolated

    ps, F = linear(), 0.9
    sig = np.zeros(2, dtype=[("time", float), ("F", float)])
    sig["time"], sig["F"] = [0.0, T_END], F
    r = simulate_fmu(str(fmus["linear", False, 2]), fmi_type="ModelExchange", stop_time=T_END,
                     output_interval=HC, input=sig, relative_tolerance=1e-12,
                     output=["x1", "x2", "v", "a"])
    t = np.arange(0.0, T_END + HC / 2, HC)
    assert np.allclose(r["time"], t)
    ref = extrapolated(ps, t, np.full((t.size, 1), F))
    # CVode's global error at rtol 1e-12 over 20 output intervals (the exact step extrapolated
    # from ph.simulate is exact to round-off for a held input): measured 1.9e-11 (1.5e-9 at rtol
    # 1e-10: it is the solver's, falling with its tolerance), bound 5x that
    assert _rel(np.column_stack([r["v"], r["a"]]), ref["y"]) < 1e-10
    X = np.column_stack([r["x1"], r["x2"]])
    # a of the integrated states: the same products (measured 8.0e-17)
    assert _rel(r["a"], _acceleration("linear", X, F)) <= 1e-13


@pytest.mark.parametrize("version", [2, 3])
def test_model_structure_declares_the_rate(fmus, version):
    """a = Cdx ẋ reads the force (Cdx (G − P) Tu = 1/m) and both states (through the flow);
    v reads p alone; with a delayed feedthrough (co-simulation only) no output reads an input
    but for the start, where a sees the force held before."""
    kind = "linear" if version == 2 else "nonlinear"
    got = _structure(fmus[kind, False, version])
    assert got["a"][0] == {"x1", "x2", "F"}
    # the linear v = p/m reads p alone; a nonlinear effort is taken as dense in the states
    assert got["v"][0] == ({"x1"} if kind == "linear" else {"x1", "x2"})
    assert got["a"][1] == {"x_start[1]", "x_start[2]", "F"}
    assert _case(kind, False).output_dependencies.tolist() == [[False], [True]]
    delayed = _structure(fmus[("linear", True, 3) if version == 3 else ("nonlinear", True, 2)])
    assert delayed["a"][0] == set() and "F_before" in delayed["a"][1]


@pytest.mark.parametrize("kind", ["linear", "nonlinear"])
def test_no_rate_read_leaves_the_data_as_they_were(kind):
    """A zero Cdx writes nothing of it (the C code's SUR_CDX_ON is off: no cost), and the data
    are those of the same surrogate whose PortMap has no Cdx."""
    ps = _case(kind, False)
    zero = replace(ps.ports, Cdx=np.zeros((2, 2)))
    bare = PortMap(zero.input_names, zero.output_names, zero.input_units, zero.output_units,
                   Tu=zero.Tu, cu=zero.cu, Ty=zero.Ty, Cx=zero.Cx, Du=zero.Du, cy=zero.cy)
    a, b = (surrogate_data(wiring(PortedSystem(ps.system, p, ps.x0)), step=STEP)
            for p in (zero, bare))
    assert a == b and "SUR_CDX" not in a
    assert "#define SUR_CDX_ON 1" in surrogate_data(wiring(ps), step=STEP)


@pytest.mark.parametrize("kind", ["linear", "nonlinear"])
def test_a_surrogate_file_exports_the_same_data(kind, tmp_path):
    """Saved (file version 9, which writes Cdx) and loaded, the surrogate exports the same data
    (exact floats in the file)."""
    import json

    from fmu_surrogate.ph import load, save

    ps = _case(kind, False)
    path = save(ps, tmp_path / f"{kind}.json")
    assert json.loads(path.read_text())["version"] == 9
    assert load(path).ports == ps.ports
    assert (surrogate_data(wiring(load(path)), step=STEP)
            == surrogate_data(wiring(ps), step=STEP))
