"""Exported NonlinearPH surrogates with a nonlinear feedthrough S_nl(u) (``port_dissipation``):
a pure static law of order 0 and a drop-in of order 2 reproduce fmu_surrogate.ph.simulate in
co-simulation to round-off, show the Python model's derivatives and outputs in model exchange,
declare the outputs' dependence on the inputs, and write the law into Modelica."""

import numpy as np
import pytest

from fmu_surrogate.export import export_fmu
from fmu_surrogate.ph import (
    ConvexEffort,
    NonlinearPH,
    PortedSystem,
    PowerDissipation,
    simulate,
)
from fmu_surrogate.ph.ports import PortMap

HC, STEP, T_END = 0.05, 0.01, 2.0
C, P43 = 4.0, 1.0 / 3.0  # the damper law F = c sign(v)|v|^(4/3)
X0 = np.array([0.3, -0.2])


def static_law():
    """Order 0: ``F = c (v² + δ²)^(1/6) v`` (≈ c sign(v)|v|^(4/3)) plus a viscous part 0.5 v."""
    e = np.zeros((0, 0))
    law = PowerDissipation([[1.0]], [C], [P43], [1e-3])
    return NonlinearPH(e, e, np.zeros((0, 1)), ConvexEffort(np.eye(0), [], [], np.zeros((0, 0))),
                       port_dissipation=law, S=[[0.5]], input_names=["v"], output_names=["F"])


def core():
    """n = 2, m = 2: a quartic ridge, a p = 1/3 state damper, a feedthrough P, S, N and a
    nonlinear feedthrough of two terms (p = 1/3 on port 1, p = 1 across both ports)."""
    r = np.random.default_rng(3)
    n, m = 2, 2
    eff = ConvexEffort(np.diag([2.0, 0.5]), ["quartic"], [0.6], r.normal(size=(1, n)))
    diss = PowerDissipation([[0.0, 1.0]], [0.7], [P43], [1e-2])
    law = PowerDissipation([[1.0, 0.0], [0.6, -0.8]], [C, 0.9], [P43, 1.0], [1e-3, 0.05])
    L = 0.3 * r.normal(size=(n + m, n + m))
    W = L @ L.T
    return NonlinearPH([[0.0, 1.0], [-1.0, 0.0]], W[:n, :n], r.normal(size=(n, m)), eff, diss,
                       port_dissipation=law, P=W[:n, n:], S=W[n:, n:],
                       N=[[0.0, 0.2], [-0.2, 0.0]], input_names=["u1", "u2"],
                       output_names=["y1", "y2"])


def ported():
    """The core behind an FMU's names: input v drives port 1, port 2 is a constant source 0.4;
    outputs F = y1 and a measured x1 + 0.2 v."""
    pm = PortMap(("v",), ("F", "pos"), ("m/s",), ("N", "m"), Tu=[[1.0], [0.0]], cu=[0.0, 0.4],
                 Ty=[[1.0, 0.0], [0.0, 0.0]], Cx=[[0.0, 0.0], [1.0, 0.0]], Du=[[0.0], [0.2]],
                 cy=[0.0, 0.0])
    return PortedSystem(core(), pm, X0)


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("portlaw")
    return {(kind, v): export_fmu(make(), d / f"{kind}{v}.fmu", step=STEP, fmi_version=v)
            for kind, make in (("static", static_law), ("ported", ported)) for v in (2, 3)}


def _inputs(seed):
    """A random walk through both signs on the communication grid (held over each step)."""
    t = np.arange(0.0, T_END + HC / 2, HC)
    v = np.cumsum(np.random.default_rng(seed).normal(size=t.size)) * 0.4
    sig = np.zeros(t.size, dtype=[("time", float), ("v", float)])
    sig["time"], sig["v"] = t, v
    return t, v[:, None], sig


def _fine(system, t, U):
    """ph.simulate on the internal grid (STEP) with the input held over each communication step."""
    k = round(HC / STEP)
    tf = np.linspace(t[0], t[-1], (t.size - 1) * k + 1)
    Uf = np.concatenate([np.repeat(U[:-1], k, axis=0), U[-1:]])
    return simulate(system, tf, Uf, hold="zoh"), k


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max()


@pytest.mark.parametrize("version", [2, 3])
def test_static_law_co_simulation_is_ph_simulate(fmus, version):
    from fmpy import simulate_fmu

    sysm = static_law()
    t, U, sig = _inputs(1)
    r = simulate_fmu(str(fmus["static", version]), stop_time=T_END, output_interval=HC,
                     input=sig, output=["v", "F", "energy_dissipated", "energy_supplied",
                                        "energy_residual"])
    tr, k = _fine(sysm, t, U)
    # fmpy reads the outputs after a step, before the next input: F(t_k) of the recorded input
    F_ref = sysm.output_from_effort(np.zeros((t.size, 0)), r["v"][:, None])[:, 0]
    # the same formula in another summation order: measured 0 (x^(p/2) by pow, as numpy)
    assert _rel(r["F"], F_ref) <= 1e-12
    assert _rel(r["F"], C * np.sign(r["v"]) * np.abs(r["v"]) ** (4 / 3) + 0.5 * r["v"]) < 1e-3
    # energies: sums of h u S_nl(u) u over the steps, as the scheme's: measured 2e-16
    assert _rel(r["energy_dissipated"], tr.dissipated[::k]) <= 1e-12
    assert _rel(r["energy_supplied"], tr.supplied[::k]) <= 1e-12
    # no storage: dissipated and supplied are the same sums (measured 0)
    assert np.abs(r["energy_residual"]).max() <= 1e-12 * tr.energy_scale
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale


@pytest.mark.parametrize("version", [2, 3])
def test_ported_co_simulation_is_ph_simulate(fmus, version):
    from fmpy import simulate_fmu

    ps = ported()
    t, U, sig = _inputs(2)
    r = simulate_fmu(str(fmus["ported", version]), stop_time=T_END, output_interval=HC,
                     input=sig, output=["x1", "x2", "v", "F", "pos", "H", "energy_residual",
                                        "energy_dissipated", "energy_supplied_sources"])
    tr, k = _fine(ps, t, U)
    assert np.array_equal([r["x1"][0], r["x2"][0]], X0)  # starts from ps.x0
    X = np.column_stack([r["x1"], r["x2"]])
    U_ph = ps.inputs_to_ports(r["v"][:, None])
    Y = ps.external_outputs(tr.x[::k], r["v"][:, None],
                            ps.system.output_from_effort(tr.core.z[::k], U_ph))
    # the same AVF steps and Newton iterations in another summation order; 1e-12 is the Newton
    # tolerance of both (measured below 1e-14)
    assert _rel(X, tr.x[::k]) <= 1e-12
    assert _rel(np.column_stack([r["F"], r["pos"]]), Y) <= 1e-12
    assert _rel(r["H"], tr.core.H[::k]) <= 1e-12
    assert _rel(r["energy_dissipated"], tr.core.dissipated[::k]) <= 1e-12
    # the scheme's discrete balance with u'S_nl(u)u in the dissipation (ph.simulate's own
    # residual is of the Newton tolerance times the effort)
    assert np.abs(r["energy_residual"]).max() <= 1e-11 * tr.energy_scale
    assert _rel(r["energy_supplied_sources"][-1:], tr.supplied_sources[-1:]) <= 1e-12
