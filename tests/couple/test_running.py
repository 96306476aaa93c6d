import itertools

import numpy as np
import pytest

import fmu_surrogate.couple.running as run_mod
from fmu_surrogate.couple.monolithic import assemble, exact
from fmu_surrogate.couple.running import bond_energy, run
from fmu_surrogate.couple.system import Component, Connection, CouplingError, PowerBond
from fmu_surrogate.fmu.dataset import load_dataset, save_dataset
from fmu_surrogate.testing.fmus import build_faulty, build_faulty3

STOP = 10.0


def _max_error(ds, system):
    ref = exact(assemble(system), ds.time.values)  # matrix exponential of the coupled pH system
    return max(np.max(np.abs(ds[k].values[0] - ref[k])) for k in ("chain.v1", "spring.F"))


def test_fixed_step_converges_to_the_monolithic_solution_at_first_order(system_factory):
    s = system_factory()
    errs, res = [], []
    for h in (0.1, 0.05, 0.025):
        ds = run(s, STOP, h, "fixed", progress=False)
        assert ds.attrs["n_steps"] == round(STOP / h)
        assert str(ds.status.values[0]) == "ok"
        errs.append(_max_error(ds, s))
        res.append(float(ds["bond:mass1:residual"].values[0, -1]))
    # measured: max error 0.120 / 0.0556 / 0.0268 (≈ 1.1-1.2 h), residual −0.0775 / −0.0355 /
    # −0.0170 of H(0) = 0.5: both first order, halving h halves them (ratios 2.15, 2.07 / 2.18, 2.09)
    for h, e in zip((0.1, 0.05, 0.025), errs):
        assert 0.8 * h < e < 1.5 * h
    for a, b in itertools.pairwise(res):
        assert 1.8 < a / b < 2.5
    assert all(r < 0 for r in res)


def test_bond_energy_of_a_held_exchange_matches_hand_computation():
    from fmu_surrogate.couple.system import Connection as C

    b = PowerBond("b", C.parse("a.e", "b.e"), C.parse("b.f", "a.f"), {"a": -1, "b": 1})
    t = np.array([0.0, 0.5, 1.0])
    vals = {"a.e": np.array([1.0, 2.0, 4.0]), "b.f": np.array([3.0, 1.0, 2.0])}
    out = bond_energy(b, t, vals)
    # a holds f(t_k) and integrates its own e by the trapezoid; b the other way round
    pa = [3.0, 3.0 * 1.5, 1.0 * 3.0]
    pb = [3.0, 1.0 * 2.0, 2.0 * 1.5]
    np.testing.assert_allclose(out["P_a"], pa)
    np.testing.assert_allclose(out["P_b"], pb)
    np.testing.assert_allclose(out["residual"], [0.0, 0.5 * (4.5 - 2.0), 0.5 * (4.5 - 2.0) + 0.5 * (3.0 - 3.0)])


def test_ecco_adapts_the_step_and_agrees_with_the_monolithic_solution(system_factory):
    s = system_factory()
    ds = run(s, STOP, 0.05, "ecco", progress=False)  # tolerances 1e-3
    assert str(ds.status.values[0]) == "ok"
    dt = np.diff(ds.time.values)
    # measured: 193 steps between 0.0166 and 0.252 s, max error 0.099, residual −0.0228; a fixed
    # step needs h ≈ 0.033 (about 300 steps) for that residual (fixed residual ≈ 0.69 h)
    assert dt.min() < 0.03 and dt.max() > 0.2
    assert 150 < ds.attrs["n_steps"] < 250
    assert _max_error(ds, s) < 0.15
    res = abs(float(ds["bond:mass1:residual"].values[0, -1]))
    assert res < 0.03
    assert ds.attrs["n_steps"] < STOP / (res / 0.69)


def test_dataset_format_round_trip(system_factory, tmp_path):
    ds = run(system_factory(), 1.0, 0.1, progress=False)
    assert ds["chain.v1"].dims == ("run", "time")
    np.testing.assert_allclose(ds.time.values, np.linspace(0, 1, 11), atol=1e-12)
    # inputs equal their sources (Jacobi: value held from t_k); spring.F(0) = −k q0 = −2
    np.testing.assert_array_equal(ds["chain.F1"].values, ds["spring.F"].values)
    assert ds["spring.F"].values[0, 0] == -2.0
    back = load_dataset(save_dataset(ds, tmp_path / "r.nc"))
    np.testing.assert_array_equal(back["bond:mass1:residual"].values, ds["bond:mass1:residual"].values)


def test_failing_component_is_a_recorded_failure(system_factory, tmp_path):
    s = system_factory()
    s.components["bad"] = Component("bad", build_faulty(tmp_path), {"mode": 4, "t_fault": 0.5})
    s.connections += [Connection.parse("bad.x", "chain.F2"), Connection.parse("chain.v2", "bad.u")]
    ds = run(s, 2.0, 0.1, progress=False)
    assert str(ds.status.values[0]) == "failed"
    assert str(ds.failure_kind.values[0]) == "error_status"
    assert "fmi2DoStep failed at t=0.5" in str(ds.message.values[0])
    assert ds.attrs["n_steps"] == 5  # the steps before the fault are kept


def test_invalid_systems_are_refused_before_any_fmu_runs(system_factory, tmp_path, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("an FMU ran")

    monkeypatch.setattr(run_mod, "cosimulate", boom)
    s = system_factory()
    s.bonds[0] = PowerBond("mass1", s.bonds[0].effort, s.bonds[0].flow, {"chain": -1, "spring": -1})
    with pytest.raises(CouplingError, match="not skew"):
        run(s, 1.0, 0.1, progress=False)
    s = system_factory()
    s.components["bad"] = Component("bad", build_faulty3(tmp_path))
    with pytest.raises(CouplingError, match="'bad' is an FMI 3.0 FMU; libcosim co-simulates"):
        run(s, 1.0, 0.1, progress=False, engine="libcosim")  # (by default our own master runs)
    with pytest.raises(CouplingError, match="algorithm must be one of"):
        run(system_factory(), 1.0, 0.1, "rk4")


def test_monolithic_energy_balance_and_agreement(system_factory):
    s = system_factory()
    ds = run(s, STOP, 0.01, "monolithic")
    # implicit midpoint keeps H(t_N) − H(0) + ∫ zᵀRz exactly for quadratic H: round-off only
    # (measured 4e-14 relative to H(0) = 0.5); target ≤ 1e-10
    assert abs(ds.attrs["energy_residual"]) < 1e-12
    ref = exact(assemble(s), ds.time.values)
    # midpoint is second order: measured max error 2.4e-5 at h = 0.01
    assert np.max(np.abs(ds["chain.v1"].values[0] - ref["chain.v1"])) < 1e-4
    np.testing.assert_array_equal(ds["bond:mass1:residual"].values, 0.0)
