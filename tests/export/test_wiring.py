"""A drop-in surrogate (PortedSystem: a power-out port, a constant source, a measured output,
feedthrough) exported as FMI 2 and FMI 3 co-simulation FMUs: external names, causalities, units
and dependencies, and the same numbers as fs.ph.simulate(ported) from the same operating point."""

import xml.etree.ElementTree as ET
import zipfile

import numpy as np
import pytest

from fmu_surrogate.export import export_fmu
from fmu_surrogate.export.wiring import wiring
from fmu_surrogate.ph import LinearPH, PortedSystem, PortMap
from tests.export._reference import extrapolated
from tests.export.fmi.test_structure import _structure

H_STEP, T_END = 0.02, 2.0
X0 = np.array([0.4, -0.3, 0.25])


def ported(cu_source=0.5):
    """Core n = 3 with ports (power-out force, preload, voltage) and W = L Lᵀ ⪰ 0, N skew.
    External: inputs F [N] (port 1, power out: Tu = −1) and u3 [V] (port 3); outputs v [m/s]
    (port 1), q [m] (measured: Cx, Du on F only, offset cy) and i3 [A] (port 3)."""
    rng = np.random.default_rng(11)
    n, m = 3, 3
    G = rng.normal(size=(n, n))
    L = 0.4 * rng.normal(size=(n + m, n + m))
    W = L @ L.T
    K = rng.normal(size=(n, n))
    Nk = rng.normal(size=(m, m))
    core = LinearPH(G - G.T, W[:n, :n], K @ K.T + n * np.eye(n), rng.normal(size=(n, m)),
                    P=W[:n, n:], S=W[n:, n:], N=0.3 * (Nk - Nk.T),
                    input_names=["F_core", "preload", "V_core"],
                    output_names=["v_core", "f_preload", "i_core"])
    Tu = np.array([[-1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    Ty = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    Cx = np.array([[0.0, 0.0, 0.0], [1.0, 0.5, 0.0], [0.0, 0.0, 0.0]])
    Du = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.0]])
    ports = PortMap(("F", "u3"), ("v", "q", "i3"), ("N", "V"), ("m/s", "m", "A"), Tu=Tu,
                    cu=[0.0, cu_source, 0.0], Ty=Ty, Cx=Cx, Du=Du, cy=[0.0, 0.2, 0.0])
    return PortedSystem(core, ports, x0=X0)


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("ported")
    return {v: export_fmu(ported(), d / f"ported{v}.fmu", fmi_version=v) for v in (2, 3)}


def _grid():
    t = np.arange(0.0, T_END + H_STEP / 2, H_STEP)
    U = np.column_stack([np.sin(3 * t), 0.5 * np.cos(2 * t)])
    sig = np.zeros(t.size, dtype=[("time", float), ("F", float), ("u3", float)])
    sig["time"], sig["F"], sig["u3"] = t, U[:, 0], U[:, 1]
    return t, U, sig


def _run(fmu, sig, start=None):
    from fmpy import simulate_fmu

    r = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=T_END, output_interval=H_STEP,
                     input=sig, start_values=start or {},
                     output=["v", "q", "i3", "F", "u3", "x1", "x2", "x3", "energy_residual",
                             "energy_supplied", "energy_dissipated", "energy_supplied_sources"])
    X = np.column_stack([r[f"x{i + 1}"] for i in range(3)])
    return r, X, np.column_stack([r["v"], r["q"], r["i3"]]), np.column_stack([r["F"], r["u3"]])


@pytest.mark.parametrize("version", [2, 3])
def test_ported_fmu_reproduces_ph_simulate_from_the_operating_point(fmus, version):
    sur = ported()
    t, U, sig = _grid()
    r, X, Y, U_read = _run(fmus[version], sig)
    # ph.simulate(ported, ...) from ported.x0
    ref = extrapolated(sur, t, U, keys=("x", "y", "supplied", "dissipated", "supplied_sources"))
    assert np.array_equal(X[0], X0)
    # fmpy reads the outputs after a step with the input of that step (tests/export/fmi/
    # test_fmu_export_feedthrough.py): the external feedthrough term uses the recorded input
    Y = Y - (U_read - U) @ sur.feedthrough.T
    # the exact step vs ph.simulate extrapolated to a zero sub-step: measured 3.0e-14 (x) and
    # 3.3e-14 (y) relative
    assert np.abs(X - ref["x"]).max() < 1e-12 * np.abs(ref["x"]).max()
    assert np.abs(Y - ref["y"]).max() < 1e-12 * np.abs(ref["y"]).max()
    # the energy through all pH ports, the preload's included (ph's supplied_external +
    # supplied_sources), the dissipation, and the preload's share (∫ cuᵀy from the integral of
    # the exponential): measured 8.4e-15, 3.8e-14 and 3.0e-15 relative
    for key, name in (("supplied", "energy_supplied"), ("dissipated", "energy_dissipated"),
                      ("supplied_sources", "energy_supplied_sources")):
        assert np.abs(r[name] - ref[key]).max() < 1e-12 * np.abs(ref[key]).max(), key
    # the exact balance: measured 6.7e-16
    assert np.abs(r["energy_residual"]).max() < 1e-12


def test_the_constant_source_is_a_tunable_parameter(fmus):
    t, U, sig = _grid()
    name = "preload"
    _, X, _, _ = _run(fmus[2], sig, {name: 0.8, "x_start[2]": 0.1})
    ref = extrapolated(ported(cu_source=0.8), t, U, x0=[X0[0], 0.1, X0[2]])
    # as above: measured 2.3e-14 relative
    assert np.abs(X - ref["x"]).max() < 1e-12 * np.abs(ref["x"]).max()


@pytest.mark.parametrize("version", [2, 3])
def test_external_names_causalities_units_and_dependencies(fmus, version):
    from fmpy import read_model_description
    from fmpy.validation import validate_fmu

    fmu = fmus[version]
    assert validate_fmu(str(fmu)) == []
    md = read_model_description(str(fmu))
    v = {x.name: x for x in md.modelVariables}
    assert [(n, v[n].causality, v[n].unit) for n in ("F", "u3", "v", "q", "i3")] == [
        ("F", "input", "N"), ("u3", "input", "V"), ("v", "output", "m/s"),
        ("q", "output", "m"), ("i3", "output", "A")]
    assert (v["preload"].causality, v["preload"].variability) == ("parameter", "tunable")
    assert float(v["preload"].start) == 0.5
    assert [float(v[f"x_start[{i + 1}]"].start) for i in range(3)] == X0.tolist()
    root = ET.fromstring(zipfile.ZipFile(fmu).read("modelDescription.xml"))
    assert {u.get("name") for u in root.find("UnitDefinitions")} == {"N", "V", "m/s", "m", "A"}
    got = _structure(fmu)
    states = {"x1", "x2", "x3"}
    # the dependencies are the nonzeros of Ty D Tu + Du: q reads F through Du only
    fd = ported().feedthrough
    assert fd[1, 1] == 0.0 and np.all(fd[[0, 2]] != 0.0)
    assert got["v"][0] == states | {"F", "u3"} and got["i3"][0] == states | {"F", "u3"}
    assert got["q"][0] == {"x1", "x2", "F"}
    # at initialisation the port outputs also depend on the preload (through D)
    assert "preload" in got["v"][1] and "preload" not in got["q"][1]


def test_wiring_of_a_bare_system_is_the_identity():
    sur = ported()
    w = wiring(sur.system)
    assert w.identity and w.sources.size == 0 and np.array_equal(w.Tu, np.eye(3))
    w = wiring(sur)
    assert not w.identity and w.sources.tolist() == [1] and w.source_names == ("preload",)
    assert np.array_equal(w.x0, X0)


def test_model_exchange_derivatives_through_the_wiring(fmus):
    from ctypes import POINTER, c_double

    from fmpy import read_model_description
    from fmpy.fmi2 import FMU2Model

    from tests.export._unzip import extracted

    sur = ported()
    f = str(fmus[2])
    md = read_model_description(f)
    inst = FMU2Model(guid=md.guid, unzipDirectory=extracted(f),
                     modelIdentifier=md.modelExchange.modelIdentifier, instanceName="me")
    inst.instantiate()
    inst.setupExperiment(startTime=0.0)
    inst.enterInitializationMode()
    inst.exitInitializationMode()
    inst.enterContinuousTimeMode()
    vr = {v.name: v.valueReference for v in md.modelVariables}
    knowns = [vr[k] for k in ("x1", "x2", "x3", "F", "u3")]
    unknowns = [vr[k] for k in ("der(x1)", "der(x2)", "der(x3)", "v", "q", "i3",
                                "der(energy_dissipated)", "der(energy_supplied)",
                                "der(energy_supplied_sources)")]

    def values(w):
        x = np.concatenate([w[:3], [0.0, 0.0, 0.0]])  # then the three energy states
        inst.setContinuousStates(x.ctypes.data_as(POINTER(c_double)), x.size)
        inst.setReal([vr["F"], vr["u3"]], list(w[3:]))
        return np.array(inst.getReal(unknowns))

    base = np.array([0.3, -0.2, 0.5, 0.7, -0.4])
    got = values(base)
    # the values: x' = A x + B (Tu u + cu), y_ext from ph, the powers of the pH ports
    x, ue = base[:3], base[3:]
    u = sur.inputs_to_ports(ue)
    z = sur.system.effort(x)
    y = sur.system.output_from_effort(z, u)
    ref = np.concatenate([sur.system.flow(x, u), sur.outputs(x, ue),
                          [sur.system.dissipation_rate(z, u), y @ u, y @ sur.ports.cu]])
    # the same sums in another order: measured 8.9e-16 absolute
    assert np.allclose(got, ref, rtol=1e-13, atol=1e-14)
    seed = np.random.default_rng(2).normal(size=5)
    dd = np.array(inst.getDirectionalDerivative(unknowns, knowns, list(seed)))
    eps = 1e-6
    fd = (values(base + eps * seed) - values(base - eps * seed)) / (2 * eps)
    # central differences of a quadratic: exact up to the differences' round-off (eps 1e-6 on
    # values of order 1: ~1e-10), measured 1.0e-10 relative
    assert np.abs(dd - fd).max() < 1e-9 * np.abs(fd).max()
    inst.terminate()
    inst.freeInstance()


def _kernel_ported():
    """The kernel oscillator of test_fmu_export_nonlinear with a feedthrough on two ports
    (W = [[R, P], [Pᵀ, S]] = L Lᵀ), a power-out force F, a preload and a measured position."""
    from fmu_surrogate.ph import PHDAE, KernelEffort

    rng = np.random.default_rng(3)
    eff = KernelEffort(rng.uniform(-1.5, 1.5, size=(8, 2)), np.zeros((8, 2)), 1.0,
                       differential=[0, 1], h_weights=0.2 * rng.normal(size=(8, 2)),
                       h_lengthscale=[0.9, 1.1])
    L = 0.3 * rng.normal(size=(4, 4))
    W = L @ L.T
    core = PHDAE(np.eye(2), [[0, 1], [-1, 0]], W[:2, :2], [[0.0, 0.0], [1.0, 1.0]], eff,
                 hamiltonian=eff.hamiltonian, P=W[:2, 2:], S=W[2:, 2:],
                 N=[[0.0, 0.2], [-0.2, 0.0]], input_names=["F_core", "preload"])
    ports = PortMap(("F",), ("v", "q"), ("N",), ("m/s", "m"), Tu=[[-1.0], [0.0]],
                    cu=[0.0, 0.3], Ty=[[1.0, 0.0], [0.0, 0.0]], Cx=[[0.0, 0.0], [1.0, 0.0]],
                    Du=[[0.0], [0.1]], cy=[0.0, 0.05])
    return PortedSystem(core, ports, x0=[0.5, -0.3])


@pytest.mark.parametrize("version", [2, 3])
def test_nonlinear_ported_fmu_reproduces_ph_simulate(tmp_path, version):
    from fmpy import simulate_fmu

    from fmu_surrogate.ph import simulate

    hc, step, stop = 0.05, 0.01, 3.0
    sur = _kernel_ported()
    fmu = export_fmu(sur, tmp_path / "knl.fmu", fmi_version=version, step=step)
    t = np.arange(0.0, stop + hc / 2, hc)
    sig = np.zeros(t.size, dtype=[("time", float), ("F", float)])
    sig["time"], sig["F"] = t, np.sin(2 * t)
    r = simulate_fmu(str(fmu), stop_time=stop, output_interval=hc, input=sig,
                     output=["x1", "x2", "v", "q", "F", "energy_residual", "energy_supplied",
                             "energy_dissipated", "energy_supplied_sources"])
    # ph.simulate on the internal grid with the input held over each communication step
    k = round(hc / step)
    tf = np.linspace(0.0, stop, (t.size - 1) * k + 1)
    uf = np.append(np.repeat(sig["F"][:-1], k), sig["F"][-1])
    tr = simulate(sur, tf, uf, hold="zoh")
    X = np.column_stack([r["x1"], r["x2"]])
    Y = np.column_stack([r["v"], r["q"]]) - np.outer(r["F"] - sig["F"], sur.feedthrough[:, 0])
    # the same AVF steps, Newton to 1e-12: measured 8.9e-16 (x), 4.4e-16 (y) relative
    assert np.abs(X - tr.x[::k]).max() < 1e-12 * np.abs(tr.x).max()
    assert np.abs(Y - tr.y[::k]).max() < 1e-12 * np.abs(tr.y).max()
    # the scheme's energies, the preload's power (0.13 of 0.32) included in the supplied
    # energy: measured 7.8e-16 (supplied), 7.0e-16 (dissipated), 6.6e-16 (the preload's
    # share) relative, residual 1.9e-15
    for name, ref in (("energy_supplied", tr.supplied[::k]),
                      ("energy_dissipated", tr.dissipated[::k]),
                      ("energy_supplied_sources", tr.supplied_sources[::k])):
        assert np.abs(r[name] - ref).max() < 1e-12 * np.abs(ref).max(), name
    assert np.abs(r["energy_residual"]).max() < 1e-12 * tr.energy_scale
    got = _structure(fmu)
    assert got["v"][0] == {"x1", "x2", "F"} and got["q"][0] == {"x1", "F"}


def test_nonlinear_ported_directional_derivatives(tmp_path):
    from ctypes import POINTER, c_double

    from fmpy import read_model_description
    from fmpy.fmi2 import FMU2Model

    from tests.export._unzip import extracted

    sur = _kernel_ported()
    f = str(export_fmu(sur, tmp_path / "knl_me.fmu"))
    md = read_model_description(f)
    inst = FMU2Model(guid=md.guid, unzipDirectory=extracted(f),
                     modelIdentifier=md.modelExchange.modelIdentifier, instanceName="nme")
    inst.instantiate()
    inst.setupExperiment(startTime=0.0)
    inst.enterInitializationMode()
    inst.exitInitializationMode()
    inst.enterContinuousTimeMode()
    vr = {v.name: v.valueReference for v in md.modelVariables}
    knowns = [vr[k] for k in ("x1", "x2", "F")]
    unknowns = [vr[k] for k in ("der(x1)", "der(x2)", "v", "q", "H", "der(energy_dissipated)",
                                "der(energy_supplied)", "der(energy_supplied_sources)")]

    def values(w):
        x = np.concatenate([w[:2], [0.0, 0.0, 0.0]])
        inst.setContinuousStates(x.ctypes.data_as(POINTER(c_double)), x.size)
        inst.setReal([vr["F"]], [w[2]])
        return np.array(inst.getReal(unknowns))

    base = np.array([0.4, -0.6, 0.8])
    x, ue = base[:2], base[2:]
    u = sur.inputs_to_ports(ue)
    z = sur.system.effort(x)
    y = sur.system.output_from_effort(z, u)
    ref = np.concatenate([sur.system.flow(x, u), sur.outputs(x, ue),
                          [sur.system.hamiltonian(x), sur.system.dissipation_rate(z, u), y @ u,
                           y @ sur.ports.cu]])
    # the same sums of the kernel expansion in C and numpy: measured 1.1e-16 absolute
    assert np.allclose(values(base), ref, rtol=1e-13, atol=1e-14)
    seed = np.array([0.7, -0.2, 1.3])
    dd = np.array(inst.getDirectionalDerivative(unknowns, knowns, list(seed)))
    eps = 1e-6
    fd = (values(base + eps * seed) - values(base - eps * seed)) / (2 * eps)
    # central differences: truncation eps² · (third derivatives ~1) and round-off 1e-16/eps:
    # measured 7.6e-11 relative
    assert np.abs(dd - fd).max() < 1e-9 * np.abs(fd).max()
    inst.terminate()
    inst.freeInstance()


def test_a_drop_in_surrogate_file_exports_with_its_wiring_and_operating_point(tmp_path):
    from fmpy import read_model_description

    from fmu_surrogate.export import export_modelica
    from fmu_surrogate.ph import save

    path = save(ported(), tmp_path / "drop.json",
                provenance={"source_fmu": {"name": "vendor", "guid": "g", "sha256": "0"}})
    md = read_model_description(str(export_fmu(path, tmp_path / "drop.fmu")))
    v = {x.name: x for x in md.modelVariables}
    assert md.coSimulation.modelIdentifier == "vendor_surrogate"
    assert [n for n in v if v[n].causality in ("input", "output")][:5] == ["F", "u3", "v", "q",
                                                                           "i3"]
    assert [float(v[f"x_start[{i + 1}]"].start) for i in range(3)] == X0.tolist()
    text = export_modelica(path, tmp_path).read_text()
    assert "  {v, q, i3} = Ty*y_ph + Cx*x + Du*{F, u3} + cy;" in text
