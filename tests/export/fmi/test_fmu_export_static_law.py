"""Exported drop-in surrogates with a static nonlinear law of their inputs (``PortMap.law``): a
linear core and a NonlinearPH core, each with a power port (velocity v in, force F out) and a
displacement-like modulating input s whose law reaches the power output F (a progressive spring
``50 s³`` and a stop ``80 max(s − 0.2, 0)``) and a measured output pos (a sensor's
``0.3 tanh(2 s − 0.5 v + 0.1)``).  In co-simulation (FMI 2 and 3, with and without a delayed
feedthrough) the FMUs reproduce ``fs.ph.simulate`` to round-off; in model exchange their outputs
and directional derivatives are the Python model's and the law's analytic slope; the
``<ModelStructure>`` declares the law's output→input pairs."""

from dataclasses import replace

import numpy as np
import pytest

from fmu_surrogate.export import export_fmu
from fmu_surrogate.export.fmi.spec import surrogate_spec
from fmu_surrogate.export.wiring import wiring
from fmu_surrogate.ph import LinearPH, PortedSystem, PortMap, StaticLaw
from tests.export.fmi.test_fmu_export_delayed import _harvest, _reference
from tests.export.fmi.test_fmu_export_port_law import STEP, _Point
from tests.export.fmi.test_fmu_export_port_law import core as nonlinear_core
from tests.export.fmi.test_structure import _structure

HC, T_END = 0.05, 1.0  # the communication grid of _harvest/_reference (delayed tests)
BEFORE = np.array([0.3, 0.25])  # v, s held before the first step (past the stop at 0.2)


def law():
    """F += 50 s³ + 80 max(s − 0.2, 0); pos += 0.3 tanh(2 s − 0.5 v + 0.1)."""
    return StaticLaw(("cubic", "tanh", "hinge"), W=[[0.0, 1.0], [-0.5, 2.0], [0.0, 1.0]],
                     b=[0.0, 0.1, -0.2], C=[[50.0, 0.0, 80.0], [0.0, 0.3, 0.0]])


def _law_slope(u):
    """d law / d (v, s) at u = (v, s), from the formula of :func:`law` (independent of
    StaticLaw)."""
    v, s = u
    dF = np.array([0.0, 150.0 * s ** 2 + (80.0 if s > 0.2 else 0.0)])
    dpos = 0.3 * (1.0 - np.tanh(2 * s - 0.5 * v + 0.1) ** 2) * np.array([-0.5, 2.0])
    return np.vstack([dF, dpos])


def _ports(n, n_ports, Tu, cu, Cx):
    Ty = np.zeros((2, n_ports))
    Ty[0, 0] = 1.0
    return PortMap(("v", "s"), ("F", "pos"), ("m/s", "m"), ("N", "m"), Tu=Tu, cu=cu, Ty=Ty,
                   Cx=Cx, Du=[[0.0, 20.0], [0.0, 1.0]], cy=[0.0, 0.1], law=law())


def linear(delayed=False):
    """Core n = 2: a mass on a spring with a damper, the port (v, F) with a viscous feedthrough
    S = 0.4; pos reads x1 (and v through the law only)."""
    core = LinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, 0.3]), np.diag([2.0, 0.5]),
                    [[0.0], [1.0]], S=[[0.4]])
    pm = _ports(2, 1, [[1.0, 0.0]], [0.0], [[0.0, 0.0], [0.5, 0.0]])
    return PortedSystem(core, pm, x0=[0.3, -0.2], delayed_feedthrough=delayed,
                        inputs_before=BEFORE if delayed else None)


def nonlinear(delayed=False):
    """The NonlinearPH of test_fmu_export_port_law (quartic ridge, power-law dissipation and
    feedthrough S_nl): v drives port 1, port 2 is a constant source 0.4."""
    pm = _ports(2, 2, [[1.0, 0.0], [0.0, 0.0]], [0.0, 0.4], [[0.0, 0.0], [1.0, 0.0]])
    return PortedSystem(nonlinear_core(), pm, x0=[0.3, -0.2], delayed_feedthrough=delayed,
                        inputs_before=BEFORE if delayed else None)


CASES = {"linear": (linear, False), "nonlinear": (nonlinear, False),
         "linear-delayed": (linear, True), "nonlinear-delayed": (nonlinear, True)}
#: FMI versions compiled per case (FMU compilation is the cost: the delayed and the nonlinear
#: code each in one version)
VERSIONS = {"linear": (2, 3), "nonlinear": (2,), "linear-delayed": (2,),
            "nonlinear-delayed": (3,)}


def _case(name):
    make, delayed = CASES[name]
    return make(delayed)


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("staticlaw")
    return {(name, v): export_fmu(_case(name), d / f"{name}{v}.fmu", fmi_version=v, step=STEP)
            for name, versions in VERSIONS.items() for v in versions}


def _inputs():
    """v a random walk, s a sine through the stop at 0.2 and back (both sides of the kink)."""
    t = np.arange(0.0, T_END + HC / 2, HC)
    v = np.cumsum(np.random.default_rng(9).normal(size=t.size)) * 0.4
    return t, np.column_stack([v, 0.5 * np.sin(2 * np.pi * t) + 0.1])


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max()


@pytest.mark.parametrize("name, version", [(n, v) for n, vs in VERSIONS.items() for v in vs])
def test_co_simulation_reproduces_ph_simulate(fmus, name, version):
    ps = _case(name)
    t, U = _inputs()
    assert np.any(U[:, 1] > 0.2) and np.any(U[:, 1] < 0.2)
    Y, H = _harvest(fmus[name, version], ps, t, U)
    kind = name.split("-")[0]
    Y_ref, H_ref = _reference(kind, ps, t, U)
    # linear: the exact step against Romberg-extrapolated ph.simulate; nonlinear: the same AVF
    # steps and Newton iterations in another summation order (Newton tolerance 1e-12 of both);
    # with the law's few products and one tanh per term on top: measured ≤ 1.3e-16 (y), 9.2e-15
    # (H, linear: the exact step against the extrapolation), 8.2e-17 (H, nonlinear)
    assert _rel(Y, Y_ref) <= 1e-12
    assert _rel(H, H_ref) <= 1e-12
    # the law is there: without it the outputs are another signal (measured 3.7 relative: the
    # spring's s³ and the stop are most of F)
    bare = PortedSystem(ps.system, replace(ps.ports, law=None), ps.x0,
                        delayed_feedthrough=ps.delayed_feedthrough,
                        inputs_before=ps.inputs_before)
    assert _rel(Y_ref, _reference(kind, bare, t, U)[0]) > 0.1
    if ps.delayed_feedthrough:  # the first outputs see inputs_before, through the law too
        # (the same products: measured bit for bit)
        assert np.allclose(Y[0], ps.outputs(ps.x0, BEFORE), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("name, version", [("linear", 2), ("linear", 3), ("nonlinear", 2)])
def test_model_exchange_outputs_and_directional_derivatives(fmus, name, version):
    ps = _case(name)
    pt = _Point(fmus[name, version], version)
    for u in (np.array([0.7, 0.45]), np.array([-0.4, -0.3])):  # past the stop, and before it
        x = np.array([0.4, -0.7])
        got = pt.values(x, {"v": u[0], "s": u[1]}, ["F", "pos"])
        # the Python model's outputs: a few products and one tanh per term (measured 3.5e-18
        # relative: the last bit of pos)
        assert np.abs(got - ps.outputs(x, u)).max() <= 1e-14 * np.abs(got).max()
        # d(F, pos)/d(v, s): the law's analytic slope plus the linear part Ty (D + dS_nl/du)
        # Tu + Du (a NonlinearPH's S_nl at the port inputs, as in test_fmu_export_port_law)
        p = ps.ports
        D = ps.system.D.copy()
        pdis = getattr(ps.system, "port_dissipation", None)
        if pdis is not None:
            D += pdis.force_jacobian((p.Tu @ u + p.cu)[None])[0]
        expected = _law_slope(u) + p.Ty @ D @ p.Tu + p.Du
        J = np.column_stack([pt.derivatives(["F", "pos"], ["v", "s"], e) for e in np.eye(2)])
        # the same sums and one tanh: measured bit for bit (0), 1e-13 allows another order
        assert np.abs(J - expected).max() <= 1e-13 * np.abs(expected).max()
    pt.close()


def _inputs_of(deps):
    return {d for d in deps if d in ("v", "s", "v_before", "s_before")}


@pytest.mark.parametrize("version", [2, 3])
def test_model_structure_declares_the_law(fmus, version):
    """pos reads v through the law only: declared with the law, not without it; F reads s
    through Du and the law, v through S; with a delayed feedthrough (co-simulation only) no
    output depends on an input, and at the start on the inputs held before."""
    ps = linear()
    got = _structure(fmus["linear", version])
    assert got["F"][0] == {"x2", "v", "s"} and got["pos"][0] == {"x1", "v", "s"}
    dep = ps.output_dependencies
    for i, y in enumerate(("F", "pos")):
        assert _inputs_of(got[y][0]) == {u for j, u in enumerate(("v", "s")) if dep[i, j]}
    # the same surrogate without its law declares pos of s alone (its wiring's Du)
    bare = PortedSystem(ps.system, replace(ps.ports, law=None), ps.x0)
    spec = surrogate_spec(wiring(bare), "bare")
    pos = next(v for v in spec.variables if v.name == "pos")
    assert set(pos.dependencies) == {"x1", "s"}
    nl = _structure(fmus["nonlinear", 2])
    assert _inputs_of(nl["pos"][0]) == {"v", "s"}
    delayed = _structure(fmus["linear-delayed", 2]) if version == 2 else _structure(
        fmus["nonlinear-delayed", 3])
    for y in ("F", "pos"):
        assert delayed[y][0] == set()
        assert _inputs_of(delayed[y][1]) == {"v_before", "s_before"}


def test_a_saved_surrogate_with_a_law_exports_through_the_cli(tmp_path):
    """save (file version 4) -> ``fmu-surrogate export --fmu --modelica`` -> the FMU is the
    loaded surrogate's ph.simulate, the Modelica model has the law."""
    import json

    from fmu_surrogate.cli.main import main
    from fmu_surrogate.ph import load, save

    path = save(linear(), tmp_path / "spring.json")
    assert json.loads(path.read_text())["version"] == 4 and load(path).ports.law == law()
    fmu, mo = tmp_path / "spring.fmu", tmp_path / "Spring.mo"
    assert main(["export", str(path), "--fmu", str(fmu), "--modelica", str(mo)]) == 0
    t, U = _inputs()
    Y, _ = _harvest(fmu, linear(), t, U)
    # as test_co_simulation_reproduces_ph_simulate (measured 3.3e-17)
    assert _rel(Y, _reference("linear", load(path), t, U)[0]) <= 1e-12
    assert "law_C*{law_s[1]^3, tanh(law_s[2]), max(law_s[3], 0.0)}" in mo.read_text()
