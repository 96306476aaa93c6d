"""Exported linear surrogates with a feedthrough (P, S, N): the exact step, the energy integrals
and the output-on-input dependencies, against fs.ph.simulate and scipy."""

import numpy as np
import pytest
from scipy.integrate import quad_vec
from scipy.linalg import expm

from fmu_surrogate.export import export_fmu
from fmu_surrogate.ph import LinearPH
from tests.export._reference import extrapolated
from tests.export.fmi.test_structure import _structure

N, M = 4, 2
H_STEP, T_END = 0.02, 2.0
X0 = np.array([0.8, -0.4, 0.3, 0.5])


def _feedthrough_ph(seed=5):
    """W = [[R, P], [Pᵀ, S]] = L Lᵀ ⪰ 0 by construction; N = [[0, S01], [−S01, 0]] makes
    D = S − N lower triangular (D01 = S01 − S01 = 0 exactly): y1 does not depend on u2."""
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(N, N))
    L = 0.5 * rng.normal(size=(N + M, N + M))
    W = L @ L.T
    K = rng.normal(size=(N, N))
    S = W[N:, N:]
    Nk = np.array([[0.0, S[0, 1]], [-S[0, 1], 0.0]])
    return LinearPH(G - G.T, W[:N, :N], K @ K.T + N * np.eye(N), rng.normal(size=(N, M)),
                    P=W[:N, N:], S=S, N=Nk, input_names=["u1", "u2"], output_names=["y1", "y2"])


@pytest.fixture(scope="module")
def system():
    return _feedthrough_ph()


@pytest.fixture(scope="module")
def fmus(system, tmp_path_factory):
    d = tmp_path_factory.mktemp("ft")
    return {v: export_fmu(system, d / f"ft{v}.fmu", fmi_version=v, x0=X0) for v in (2, 3)}


def _grid():
    t = np.arange(0.0, T_END + H_STEP / 2, H_STEP)
    U = np.column_stack([np.sin(3 * t), 0.5 + np.cos(2 * t)])
    sig = np.zeros(t.size, dtype=[("time", float), ("u1", float), ("u2", float)])
    sig["time"], sig["u1"], sig["u2"] = t, U[:, 0], U[:, 1]
    return t, U, sig


@pytest.mark.parametrize("version", [2, 3])
def test_co_simulation_reproduces_ph_simulate(system, fmus, version):
    from fmpy import simulate_fmu

    t, U, sig = _grid()
    r = simulate_fmu(str(fmus[version]), stop_time=T_END, output_interval=H_STEP, input=sig,
                     output=["y1", "y2", "u1", "u2", "x1", "x2", "x3", "x4", "energy_residual"])
    ref = extrapolated(system, t, U, X0)
    X = np.column_stack([r[f"x{i + 1}"] for i in range(N)])
    # fmpy records the outputs after a step, before it applies the next input: y(t_k) is read
    # with the input of the step just done, so the feedthrough term uses the recorded input
    U_read = np.column_stack([r["u1"], r["u2"]])
    Y = np.column_stack([r["y1"], r["y2"]]) - (U_read - U) @ system.D.T
    # the exact step vs ph.simulate extrapolated to a zero sub-step (tests/export/_reference.py):
    # measured 1.7e-14 (x) and 7.6e-15 (y, with the feedthrough D u) relative
    assert np.abs(X - ref["x"]).max() < 1e-12 * np.abs(ref["x"]).max()
    assert np.abs(Y - ref["y"]).max() < 1e-12 * np.abs(ref["y"]).max()
    # Van Loan integrals of [z; u]ᵀW[z; u] and yᵀu with the feedthrough: measured 2.9e-15 on
    # a dissipated energy of 6.9
    assert np.abs(r["energy_residual"]).max() < 1e-12


def test_energy_integrals_with_feedthrough_match_quadrature(system, fmus):
    from fmpy import simulate_fmu

    h, u = 0.37, np.array([0.8, -1.1])
    A, B, C = system.state_space()
    Mb = np.zeros((N + M, N + M))
    Mb[:N, :N], Mb[:N, N:] = A, B

    def x(s):
        return (expm(Mb * s) @ np.concatenate([X0, u]))[:N]

    def w(s):
        return np.concatenate([system.Q @ x(s), u])

    diss = quad_vec(lambda s: w(s) @ system.W @ w(s), 0, h, epsabs=1e-14, epsrel=1e-13)[0]
    supp = quad_vec(lambda s: (C @ x(s) + system.D @ u) @ u, 0, h, epsabs=1e-14,
                    epsrel=1e-13)[0]
    sig = np.zeros(2, dtype=[("time", float), ("u1", float), ("u2", float)])
    sig["time"], sig["u1"], sig["u2"] = [0.0, h], u[0], u[1]
    r = simulate_fmu(str(fmus[2]), stop_time=h, output_interval=h, input=sig,
                     output=["energy_dissipated", "energy_supplied"])
    # Van Loan's exponential vs adaptive quadrature: measured 3.8e-15 (dissipated) and 8.9e-16
    # (supplied) relative
    assert r["energy_dissipated"][-1] == pytest.approx(diss, rel=1e-11)
    assert r["energy_supplied"][-1] == pytest.approx(supp, rel=1e-11)


@pytest.mark.parametrize("version", [2, 3])
def test_outputs_depend_on_inputs_exactly_where_d_is_nonzero(system, fmus, version):
    from fmpy.validation import validate_fmu

    assert system.D[0, 1] == 0.0 and system.D[1, 0] != 0.0
    assert validate_fmu(str(fmus[version])) == []
    got = _structure(fmus[version])
    states = {f"x{i + 1}" for i in range(N)}
    assert got["y1"][0] == states | {"u1"}  # D01 = 0: no dependency on u2
    assert got["y2"][0] == states | {"u1", "u2"}
    assert got["y1"][1] == {f"x_start[{i + 1}]" for i in range(N)} | {"u1"}


@pytest.mark.parametrize("version", [2, 3])
def test_co_simulation_only_keeps_the_states_inside(system, tmp_path, version):
    from fmpy import read_model_description
    from fmpy.validation import validate_fmu

    fmu = export_fmu(system, tmp_path / f"cs{version}.fmu", fmi_version=version, x0=X0,
                     model_exchange=False)
    assert validate_fmu(str(fmu)) == []
    md = read_model_description(str(fmu))
    assert md.modelExchange is None
    assert not {"x1", "der(x1)", "energy_supplied"} & {v.name for v in md.modelVariables}
    got = _structure(fmu)
    # the outputs list the inputs only (the states are no knowns of co-simulation), at the
    # start the states' start values as with model exchange
    assert got["y1"][0] == {"u1"} and got["y2"][0] == {"u1", "u2"}
    assert got["y1"][1] == {f"x_start[{i + 1}]" for i in range(N)} | {"u1"}
    assert got["energy_residual"][0] == set()


def test_directional_derivatives_carry_the_feedthrough(system, fmus):
    from fmpy import read_model_description
    from fmpy.fmi2 import FMU2Model

    from tests.export._unzip import extracted

    f = str(fmus[2])
    md = read_model_description(f)
    inst = FMU2Model(guid=md.guid, unzipDirectory=extracted(f),
                     modelIdentifier=md.modelExchange.modelIdentifier, instanceName="d")
    inst.instantiate()
    inst.setupExperiment(startTime=0.0)
    inst.enterInitializationMode()
    inst.exitInitializationMode()
    vr = {v.name: v.valueReference for v in md.modelVariables}
    knowns = [vr[f"x{i + 1}"] for i in range(N)] + [vr["u1"], vr["u2"]]
    seed = np.array([0.3, -0.2, 0.5, 0.1, 1.0, -2.0])
    dd = inst.getDirectionalDerivative([vr["y1"], vr["y2"], vr["der(x1)"]], knowns, list(seed))
    A, B, C = system.state_space()
    ref = np.concatenate([C @ seed[:N] + system.D @ seed[N:], [A[0] @ seed[:N] + B[0] @ seed[N:]]])
    assert np.allclose(dd, ref, rtol=1e-13, atol=1e-14)  # linear: exact up to round-off
    inst.terminate()
    inst.freeInstance()


@pytest.mark.parametrize("version", [2, 3])
def test_order_zero_is_the_static_map(tmp_path, version):
    from fmpy import simulate_fmu

    from fmu_surrogate.export import ExportError, export_modelica

    e = np.zeros((0, 0))
    static = LinearPH(e, e, e, np.zeros((0, 2)), S=[[2.0, 0.5], [0.5, 1.0]],
                      N=[[0.0, 0.3], [-0.3, 0.0]])
    fmu = export_fmu(static, tmp_path / "static.fmu", fmi_version=version)
    sig = np.zeros(3, dtype=[("time", float), ("u1", float), ("u2", float)])
    sig["time"], sig["u1"], sig["u2"] = [0.0, 0.5, 1.0], [1.0, 1.0, -1.0], [2.0, 2.0, 0.5]
    for kind in ("CoSimulation", "ModelExchange"):
        r = simulate_fmu(str(fmu), fmi_type=kind, stop_time=0.5, output_interval=0.5,
                         input=sig, output=["y1", "y2", "energy_dissipated", "energy_residual"])
        u = np.array([1.0, 2.0])
        # y = (S − N) u and ∫ uᵀSu dt, sums of a few products: exact to round-off
        assert np.allclose([r["y1"][-1], r["y2"][-1]], static.D @ u, rtol=1e-15, atol=0)
        assert r["energy_dissipated"][-1] == pytest.approx(0.5 * u @ static.S @ u, rel=1e-14)
        assert abs(r["energy_residual"][-1]) < 1e-14
    with pytest.raises(ExportError, match="order-0 surrogate"):
        export_modelica(static, tmp_path / "static.mo")
