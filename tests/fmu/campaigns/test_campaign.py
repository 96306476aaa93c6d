"""Campaigns: the fixture's nine behaviours end to end, analytic data, resume after kill -9,
Dask LocalCluster, the stepwise session, and the errors for bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from fmu_surrogate.fmu.campaigns.campaign import Campaign, HarvestSession, harvest, summarize
from fmu_surrogate.fmu.campaigns.store import RunStore, StoreMismatchError
from fmu_surrogate.fmu.dataset import load_dataset, run_arrays
from fmu_surrogate.fmu.errors import (
    ExperimentError,
    ModelDescriptionError,
    NoBinaryError,
    NotAnFMUError,
    UnknownVariableError,
)
from fmu_surrogate.fmu.signals.standard import ArraySignal, Constant, Step

T = np.linspace(0.0, 1.0, 101)


def exact(t, k=1.0, x0=1.0, u=0.0):
    return u / k + (x0 - u / k) * np.exp(-k * np.asarray(t))


# ---------------------------------------------------------------------------- all modes
@pytest.fixture(scope="module")
def all_modes(faulty_fmu, tmp_path_factory):
    out = tmp_path_factory.mktemp("campaign") / "modes.nc"
    params = [{"mode": m} for m in range(9)]
    sigs = [{"u": Constant(0.0)}, {"u": Step(t0=0.2, before=0.0, after=2.0)}]
    ds = harvest(faulty_fmu, out, signals=sigs, parameters=params, stop_time=1.0, step=0.01,
                 workers=2, timeout=2.0, progress=False)
    return out, ds


def test_campaign_over_all_modes_records_everything(all_modes):
    out, ds = all_modes
    assert out.is_file() and not Path(str(out) + ".parts").exists()
    assert ds.sizes == {"run": 18, "time": 101}
    kinds = [str(k) for k in ds["failure_kind"].values]
    # run = mode * 2 + signal set
    expected = ["", "crash", "crash", "timeout", "error_status", "non_finite", "exploding",
                "early_stop", "error_status"]
    assert kinds == [k for k in expected for _ in range(2)]
    assert list(ds["n_samples"].values) == [n for n in (101, 51, 51, 51, 51, 101, 101, 51, 0)
                                            for _ in range(2)]
    msgs = [str(m) for m in ds["message"].values]
    assert "SIGSEGV" in msgs[2] and "reason: x=" in msgs[8] and "mode=8" in msgs[16]
    np.testing.assert_array_equal(ds["param:mode"].values, np.repeat(np.arange(9.0), 2))
    assert json.loads(str(ds["signal"].values[1]))["u"]["kind"] == "step"
    assert summarize(ds).startswith("18 runs: 2 ok, 16 failed (crash: 4, early_stop: 2")
    # the file on disk is the same dataset
    disk = load_dataset(out)
    np.testing.assert_array_equal(disk["x"].values, ds["x"].values)
    assert disk.attrs["campaign_hash"] == ds.attrs["campaign_hash"]


def test_normal_runs_equal_the_analytic_solution(all_modes):
    _, ds = all_modes
    (t0, X0), (t1, X1) = run_arrays(ds, ["x", "u"], runs=[0, 1])
    # constant input: x = e^{-t}; rounding only (exact discretisation in the FMU)
    np.testing.assert_allclose(X0[:, 0], np.exp(-t0), rtol=0, atol=1e-14)
    # step to 2 at t = 0.2, held between grid points: exact solution of the switched ODE
    x02 = np.exp(-0.2)
    ref = np.where(t1 < 0.2 - 1e-12, np.exp(-t1), 2.0 + (x02 - 2.0) * np.exp(-(t1 - 0.2)))
    np.testing.assert_allclose(X1[:, 0], ref, rtol=0, atol=1e-13)
    np.testing.assert_array_equal(X1[:, 1], np.where(t1 < 0.2 - 1e-12, 0.0, 2.0))


def test_finished_campaign_is_not_rerun_and_other_campaign_is_refused(all_modes, faulty_fmu):
    out, ds = all_modes
    sigs = [{"u": Constant(0.0)}, {"u": Step(t0=0.2, before=0.0, after=2.0)}]
    t = time.perf_counter()
    again = harvest(faulty_fmu, out, signals=sigs, parameters=[{"mode": m} for m in range(9)],
                    stop_time=1.0, step=0.01, workers=2, timeout=2.0, progress=False)
    assert time.perf_counter() - t < 2.0  # loaded, not simulated (the hang alone takes 2 s)
    np.testing.assert_array_equal(again["x"].values, ds["x"].values)
    with pytest.raises(StoreMismatchError, match="different campaign.*--overwrite"):
        harvest(faulty_fmu, out, stop_time=1.0, step=0.01, progress=False)


# ---------------------------------------------------------------------------- kill -9, resume
CHILD = textwrap.dedent("""
    import sys
    from fmu_surrogate.fmu.campaigns.campaign import harvest
    fmu, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    harvest(fmu, out, parameters=[{"k": 0.5 + 0.05 * i} for i in range(n)], stop_time=1.0,
            step=1e-4, workers=1, timeout=30, progress=False, batch_size=2)
""")


def test_kill_9_then_resume_loses_and_redoes_nothing(faulty_fmu, tmp_path):
    n = 40
    out = tmp_path / "killed.nc"
    store_dir = tmp_path / "killed.nc.parts"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(faulty_fmu), str(out), str(n)])
    try:
        deadline = time.monotonic() + 60
        before = {}
        while time.monotonic() < deadline:
            man = RunStore.read_manifest(store_dir)
            if man is not None:
                before = RunStore(store_dir, man).finished()
                if len(before) >= 5:
                    break
            assert proc.poll() is None, "the campaign finished before it could be killed"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        killed_at = time.time()
    finally:
        if proc.poll() is None:
            proc.kill()
    before = RunStore(store_dir, RunStore.read_manifest(store_dir)).finished()
    assert 5 <= len(before) < n and not out.exists()
    # the worker died with its parent (no orphan FMU process)
    pid = next(iter(before.values()))["worker"]
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"worker {pid} outlived its killed parent")

    params = [{"k": 0.5 + 0.05 * i} for i in range(n)]
    ds = harvest(faulty_fmu, out, parameters=params, stop_time=1.0, step=1e-4, workers=1,
                 timeout=30, progress=False, keep_store=True)
    after = list(RunStore(store_dir, RunStore.read_manifest(store_dir)).read())
    idx = [h["index"] for h, _ in after]
    assert sorted(idx) == list(range(n))  # every run exactly once: none lost, none redone
    for h, _ in after:
        if h["index"] in before:
            assert h == before[h["index"]]  # same record, same time stamps
        else:
            assert h["t0"] > killed_at  # simulated by the resumed campaign
    assert (ds["status"].values == "ok").all()

    fresh = harvest(faulty_fmu, tmp_path / "fresh.nc", parameters=params, stop_time=1.0,
                    step=1e-4, workers=2, timeout=30, progress=False)
    np.testing.assert_array_equal(ds["x"].values, fresh["x"].values)
    np.testing.assert_array_equal(ds["run"].values, fresh["run"].values)
    k = 0.5 + 0.05 * np.arange(n)
    np.testing.assert_allclose(ds["x"].values, np.exp(-np.outer(k, ds["time"].values)),
                               rtol=0, atol=1e-12)  # 10^4 exact steps: rounding only


# ---------------------------------------------------------------------------- dask
def test_dask_local_cluster_equals_local_run(faulty_fmu, tmp_path):
    distributed = pytest.importorskip("distributed")
    params = [{"mode": 0}, {"mode": 1}, {"mode": 4}, {"mode": 0, "k": 2.0}, {"mode": 5}]
    sigs = [{"u": Constant(1.0)}]
    kw = {"signals": sigs, "parameters": params, "stop_time": 1.0, "step": 0.01, "timeout": 10,
              "progress": False}
    local = harvest(faulty_fmu, tmp_path / "local.nc", workers=1, **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = harvest(faulty_fmu, tmp_path / "dask.nc", scheduler=client, batch_size=2, **kw)
        assert len(client.nthreads()) == 2  # the segfault did not take a Dask worker down
        # the CLI path: a scheduler address instead of a client
        from fmu_surrogate.cli import main

        assert main(["harvest", str(faulty_fmu), "-o", str(tmp_path / "cli.nc"), "-q",
                     "--param", "k=1,2", "--scheduler", cluster.scheduler_address]) == 0
    via_cli = load_dataset(tmp_path / "cli.nc")
    np.testing.assert_allclose(via_cli["x"].values[1], np.exp(-2 * via_cli["time"].values),
                               rtol=0, atol=1e-14)
    for v in ("x", "u", "der(x)"):
        np.testing.assert_array_equal(remote[v].values, local[v].values)
    for v in ("status", "failure_kind", "n_samples"):
        assert list(remote[v].values) == list(local[v].values)
    assert list(remote["failure_kind"].values) == ["", "crash", "error_status", "", "non_finite"]


def test_fmi3_campaign_stores_array_elements(faulty3_fmu, tmp_path):
    ds = harvest(faulty3_fmu, tmp_path / "f3.nc", parameters=[{"k": 2.0}, {"mode": 4}],
                 signals={"u": Constant(1.0)}, workers=1, progress=False)
    assert ds.attrs["fmi_version"] == "3.0"
    assert {"x", "y[1]", "y[2]", "u", "der(x)"} <= set(ds.data_vars)
    assert list(ds["failure_kind"].values) == ["", "error_status"]
    x = exact(ds["time"].values, k=2.0, u=1.0)
    np.testing.assert_allclose(ds["y[2]"].values[0], 2 * x, rtol=0, atol=1e-13)  # exact steps


def test_benchmark_fmu_cs_loop_agrees_with_model_exchange(benchmark_fmus):
    fmu = benchmark_fmus["duffing"]
    kw = {"signals": {"u": Constant(0.5)}, "parameters": [{"c": 2.151}, {"c": 0.5}],
              "stop_time": 5.0, "step": 0.02, "workers": 1, "progress": False}
    cs = harvest(fmu, None, interface="cs", **kw)
    me = harvest(fmu, None, interface="me", tolerance=1e-10, **kw)
    assert cs.attrs["input_interpolation"].startswith("zero-order")
    assert (cs["status"].values == "ok").all() and (me["status"].values == "ok").all()
    for v in ("y", "ydot"):
        # the FMU's own Dormand-Prince (rtol 1e-8, atol 1e-10) against CVode (rtol 1e-10) on a
        # constant input: both are accurate to ~1e-8 of the state scale (0.02 .. 0.1)
        np.testing.assert_allclose(cs[v].values, me[v].values, rtol=0, atol=1e-7)


def test_a_harvest_keeps_the_outputs_declared_dependencies(benchmark_fmus):
    """The accumulator declares its pressure a function of its state alone, the orifice its
    flow one of the pressure it is given: the dataset keeps both, for identify to follow."""
    kw = {"stop_time": 0.1, "step": 0.01, "workers": 1, "progress": False}
    acc = harvest(benchmark_fmus["gas_accumulator"], None, signals={"Q": Constant(1.0)}, **kw)
    ori = harvest(benchmark_fmus["turbulent_orifice"], None, signals={"p": Constant(50.0)}, **kw)
    assert json.loads(acc["p"].attrs["dependencies"]) == []
    assert json.loads(ori["Q"].attrs["dependencies"]) == ["p"]
    assert "dependencies" not in acc["Q"].attrs  # an input declares none


# ---------------------------------------------------------------------------- session
def test_session_records_like_a_campaign(faulty_fmu, tmp_path):
    u = np.where(T < 0.3 - 1e-12, 1.0, -1.0)
    camp = harvest(faulty_fmu, None, signals={"u": ArraySignal(T, u)},
                   parameters={"k": 3.0}, stop_time=1.0, step=0.01, workers=1,
                   progress=False)
    with HarvestSession(faulty_fmu) as s:
        s.reset(params={"k": 3.0}, inputs={"u": u[0]})
        for i in range(100):
            s.step(0.01, u=u[i])
        rec = s.finish()
        assert rec.ok and rec.n_samples == 101
        s.reset(params={"mode": 4})
        s.advance(1.0, 0.01)
        bad = s.finish()
        ds = s.dataset()
    # same FMU, same inputs; the session accumulates t += 0.01 while the campaign steps by
    # diff(grid), so step sizes differ by ~1e-17 and the states by a few ulp
    np.testing.assert_allclose(rec.values["x"], camp["x"].values[0], rtol=0, atol=1e-14)
    np.testing.assert_array_equal(rec.values["u"], u)
    assert bad.failure_kind == "error_status" and "reason" in bad.message
    assert bad.n_samples == 51
    assert list(ds["status"].values) == ["ok", "failed"]


# ---------------------------------------------------------------------------- bad input
def test_bad_input_names_the_problem_and_the_fix(faulty_fmu, broken_fmus, tmp_path):
    with pytest.raises(UnknownVariableError, match=r"'kk'.*did you mean 'k'"):
        Campaign(faulty_fmu, parameters={"kk": 1.0})
    with pytest.raises(UnknownVariableError, match=r"unknown input 'uu'.*did you mean 'u'"):
        Campaign(faulty_fmu, signals={"uu": Constant(1.0)})
    with pytest.raises(UnknownVariableError, match="did you mean 'x'"):
        Campaign(faulty_fmu, record=["xx"])
    with pytest.raises(ExperimentError, match=r"stop time -1 is negative.*--stop"):
        Campaign(faulty_fmu, stop_time=-1.0)
    with pytest.raises(ExperimentError, match="start time -0.5 is negative"):
        Campaign(faulty_fmu, start_time=-0.5)
    with pytest.raises(ExperimentError, match="not after the start time"):
        Campaign(faulty_fmu, start_time=2.0, stop_time=1.0)
    with pytest.raises(ExperimentError, match="step 0 must be > 0"):
        Campaign(faulty_fmu, step=0.0)
    with pytest.raises(ExperimentError, match="not a whole number of steps"):
        Campaign(faulty_fmu, stop_time=1.0, step=0.3)
    long = ArraySignal(np.linspace(0, 2, 21), np.zeros(21))
    with pytest.raises(ExperimentError, match=r"longer than the experiment.*stop_time = 2"):
        Campaign(faulty_fmu, signals={"u": long}, stop_time=1.0)
    short = ArraySignal(np.linspace(0, 0.5, 6), np.zeros(6))
    with pytest.raises(ExperimentError, match="shorter than the experiment"):
        Campaign(faulty_fmu, signals={"u": short}, stop_time=1.0)
    with pytest.raises(ExperimentError, match="cannot be set"):
        Campaign(faulty_fmu, parameters={"x": 1.0})
    text = tmp_path / "notes.fmu"
    text.write_text("not a zip")
    with pytest.raises(NotAnFMUError, match="not a valid FMU"):
        Campaign(text)
    with pytest.raises(NotAnFMUError, match="no such file"):
        Campaign(tmp_path / "missing.fmu")
    with pytest.raises(NotAnFMUError):
        Campaign(broken_fmus["truncated"])
    with pytest.raises(NoBinaryError, match="no binary for this platform"):
        Campaign(broken_fmus["no_binary"])
    with pytest.raises(ModelDescriptionError, match="modelDescription.xml"):
        Campaign(broken_fmus["broken_xml"])
    c = Campaign(faulty_fmu)  # defaults: the FMU's default experiment, inputs at start values
    assert (c.start_time, c.stop_time, c.step, c.n_runs) == (0.0, 1.0, 0.01, 1)
    assert c.record == ["u", "x", "der(x)"]
    with pytest.raises(ExperimentError, match="workers must be a positive integer"):
        c.run(None, workers=0, progress=False)


# ---------------------------------------------------------------------------- options, phases
def test_campaign_options_phases_and_file_layout(faulty_fmu, tmp_path):
    import h5py
    import xarray as xr

    u = ArraySignal(T, np.ones(T.size))
    camp = Campaign(faulty_fmu, signals={"u": u}, parameters=[{"k": k} for k in (1.0, 2.0, 4.0)],
                    stop_time=1.0, step=0.01)
    out = tmp_path / "opt.nc"
    ds = camp.run(out, workers=2, progress=False, complevel=0, start_method="spawn")
    t = camp.timings
    assert set(t) == {"prepare", "start", "simulate", "assemble", "write", "consolidate", "total"}
    assert t["prepare"] + t["start"] + t["simulate"] + t["consolidate"] == pytest.approx(
        t["total"], abs=1e-9)
    assert t["assemble"] + t["write"] == pytest.approx(t["consolidate"], abs=1e-9)
    assert set(camp.cpu_timings) >= set(t)
    for i, k in enumerate((1.0, 2.0, 4.0)):  # exact discretisation: rounding only
        np.testing.assert_allclose(ds["x"].values[i], exact(T, k=k, u=1.0), rtol=0, atol=1e-14)
    with h5py.File(out) as f:  # complevel=0: stored plainly; the sampled input stored once
        assert f["x"].compression is None and f["signal_table"].shape == (1,)
    disk = load_dataset(out)
    xr.testing.assert_identical(disk, ds)  # what run() returns is what the file holds
    assert json.loads(str(disk["signal"].values[2]))["u"]["kind"] == "array"
    with pytest.raises(ExperimentError, match="complevel must be an integer"):
        camp.run(tmp_path / "x.nc", complevel=10, progress=False)
    with pytest.raises(ExperimentError, match="start_method must be"):
        camp.run(tmp_path / "x.nc", start_method="thread", progress=False)


# ---------------------------------------------------------------------------- variable types
@pytest.mark.parametrize("interface", ["cs", "me"])
def test_integer_boolean_enumeration_inputs_reach_the_fmu(typed_fmu, interface):
    from fmu_surrogate.fmu.signals.excitation import PRBS

    signals = {"u": Step(t0=0.3, before=0.5, after=-1.25),
               "n": PRBS(bit_period=0.1, levels=(-2.0, 5.0)),
               "b": PRBS(bit_period=0.1, levels=(0.0, 1.0), seed=3),
               "e": Step(t0=0.5, before=1.0, after=3.0)}
    ds = harvest(typed_fmu, None, signals=signals, parameters={"gain": 2.0, "offset": 3.0},
                 interface=interface, workers=1, progress=False)
    assert list(ds["status"].values) == ["ok"]
    assert "s" not in ds and "s_out" not in ds  # String variables are not recorded
    v = {k: ds[k].values[0] for k in ("u", "y", "n", "m", "b", "not_b", "e", "e_next",
                                      "s_length")}
    # the outputs as typed.c defines them, exactly (integers and sums of small floats)
    np.testing.assert_array_equal(v["y"], 2.0 * v["u"])
    np.testing.assert_array_equal(v["m"], 2.0 * v["n"] + 3.0)
    np.testing.assert_array_equal(v["not_b"], 1.0 - v["b"])
    np.testing.assert_array_equal(v["e_next"], v["e"] % 3 + 1)
    np.testing.assert_array_equal(v["s_length"], 5.0)  # len("hello"), the start value
    assert set(v["n"]) == {-2.0, 5.0} and set(v["b"]) == {0.0, 1.0}
    assert set(v["e"]) == {1.0, 3.0} and set(v["u"]) == {0.5, -1.25}
    if interface == "cs":  # zero-order hold: the values set at the grid points are the signals'
        t = ds["time"].values
        for k in ("u", "n", "b", "e"):
            np.testing.assert_array_equal(v[k], signals[k](t))


def test_a_string_input_set_as_a_start_value(typed_fmu):
    ds = harvest(typed_fmu, None, parameters=[{"s": "abcd"}, {}], workers=1, progress=False)
    np.testing.assert_array_equal(ds["s_length"].values, [[4.0] * 101, [5.0] * 101])


def _state_space(t, x0_3, u2):
    """x' = diag(-1, -2, -3) x + u with u = [1, u2, 3] (u[1], u[3] at their start values),
    x(0) = [0, 0, x0_3]: each component relaxes to u_i / a_i."""
    return np.column_stack([1 - np.exp(-t), u2 / 2 * (1 - np.exp(-2 * t)),
                            x0_3 * np.exp(-3 * t) + (1 - np.exp(-3 * t))])


@pytest.mark.parametrize("interface, atol", [
    # co-simulation: 50 RK4 substeps per step (local error ~(3 * 2e-4)^5 / 120, rounding
    # dominates); measured 2.4e-15
    ("cs", 1e-14),
    # model exchange: CVode at rtol 1e-10 on states of order 1, the global error accumulates
    # over 100 output intervals; measured 4.2e-9
    ("me", 1e-8)])
def test_array_input_and_parameters_against_the_analytic_solution(arrays3_fmu, interface, atol):
    ds = harvest(arrays3_fmu, None, signals={"u[2]": Constant(0.7)},
                 parameters=[{"A": np.diag([-1.0, -2.0, -3.0]), "x0[3]": 2.0, "D[1,1]": 0.5}],
                 interface=interface, tolerance=1e-10, workers=1, progress=False)
    assert list(ds["status"].values) == ["ok"]
    t = ds["time"].values
    x = np.column_stack([ds[f"x[{i}]"].values[0] for i in (1, 2, 3)])
    y = np.column_stack([ds[f"y[{i}]"].values[0] for i in (1, 2, 3)])
    u = np.column_stack([ds[f"u[{i}]"].values[0] for i in (1, 2, 3)])
    np.testing.assert_array_equal(u, np.tile([1.0, 0.7, 3.0], (t.size, 1)))
    np.testing.assert_allclose(x, _state_space(t, 2.0, 0.7), rtol=0, atol=atol)
    np.testing.assert_allclose(y, x + [0.5, 0.0, 0.0], rtol=0, atol=atol)  # y = x + D u
    assert ds["param:A[3,3]"].values.tolist() == [-3.0] and ds["param:x0[3]"].values == 2.0


def test_a_step_on_an_array_element_is_held_over_each_step(arrays3_fmu):
    ds = harvest(arrays3_fmu, None, signals={"u[2]": Step(t0=0.5, before=0.0, after=1.0)},
                 parameters={"A": np.diag([-1.0, -2.0, -3.0])}, workers=1, progress=False)
    t = ds["time"].values
    x2 = np.where(t >= 0.5, (1 - np.exp(-2 * np.clip(t - 0.5, 0, None))) / 2, 0.0)
    # the same RK4 substeps as above, the step at a grid point; measured 2.8e-16
    np.testing.assert_allclose(ds["x[2]"].values[0], x2, rtol=0, atol=1e-14)


def test_session_on_an_fmu_with_string_and_integer_variables(typed_fmu):
    with HarvestSession(typed_fmu) as s:
        assert "s" not in s.record and "m" in s.record
        s.reset(params={"offset": 2}, inputs={"n": 4, "b": 1})
        s.step(0.1, s="abc", n=-3)
        got = s.read(["m", "not_b", "s_length"])
        assert got == {"m": -4.0, "not_b": 0.0, "s_length": 3.0}  # 2 n + offset, !b, len("abc")
    with pytest.raises(ExperimentError, match="'s_out' is a String variable"):
        HarvestSession(typed_fmu, record=["s_out"])
