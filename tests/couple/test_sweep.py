import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from fmu_surrogate.couple.running import run
from fmu_surrogate.couple.sweep import sweep
from fmu_surrogate.couple.system import Component, Connection, CouplingError
from fmu_surrogate.testing.fmus import build_faulty


def test_sweep_stacks_runs_with_their_parameters(system_factory):
    s = system_factory()
    ds = sweep(s, [{"spring.q0": 0.5}, {"spring.q0": 0.25}], 1.0, 0.1, progress=False)
    assert ds["spring.F"].dims == ("run", "time") and ds.sizes["run"] == 2
    np.testing.assert_array_equal(ds["param:spring.q0"].values, [0.5, 0.25])
    # linear system, zero input: halving q0 halves every signal; only the FMUs' adaptive
    # integrators (rtol 1e-8, atol 1e-10) break the exact scaling: measured 3e-11 relative
    np.testing.assert_allclose(ds["chain.v1"].values[1], 0.5 * ds["chain.v1"].values[0],
                               rtol=1e-9, atol=1e-12)
    single = run(system_factory(), 1.0, 0.1, progress=False)
    np.testing.assert_array_equal(ds["chain.v1"].values[0], single["chain.v1"].values[0])


def test_sweep_records_a_failing_run_and_goes_on(system_factory, tmp_path):
    s = system_factory()
    s.components["bad"] = Component("bad", build_faulty(tmp_path), {"t_fault": 0.5})
    s.connections += [Connection.parse("bad.x", "chain.F2"), Connection.parse("chain.v2", "bad.u")]
    ds = sweep(s, [{"bad.mode": 4}, {"bad.mode": 0}], 1.0, 0.1, progress=False)
    assert list(ds.status.values) == ["failed", "ok"]
    assert np.isnan(ds["chain.v1"].values[0, -1]) and np.isfinite(ds["chain.v1"].values[1]).all()
    with pytest.raises(CouplingError, match="'nope.k' is not 'component.parameter'"):
        sweep(s, [{"nope.k": 1.0}], 1.0, 0.1, progress=False)


# ------------------------------------------------------------------ the campaign machinery
# A run of each sweep below takes ~0.05 s; the chain + spring system with the faulty FMU bonded
# to the chain's second mass (mode 0: dx/dt = -k x + u, a stable load).


@pytest.fixture(scope="module")
def faulty_path(tmp_path_factory):
    return build_faulty(tmp_path_factory.mktemp("faulty"))


def _with_faulty(system, faulty_path):
    system.components["bad"] = Component("bad", faulty_path, {"t_fault": 0.5})
    system.connections += [Connection.parse("bad.x", "chain.F2"),
                           Connection.parse("chain.v2", "bad.u")]
    return system


def _in_process(system, params, stop_time, step, algorithm="fixed"):
    from fmu_surrogate.couple.system_backend import with_parameters

    return run(with_parameters(system, params), stop_time, step, algorithm, progress=False)


def test_crash_hang_and_fmu_error_are_recorded_and_the_other_runs_finish(system_factory,
                                                                          faulty_path):
    s = _with_faulty(system_factory(), faulty_path)
    sets = [{"bad.mode": 1}, {"bad.mode": 3}, {"bad.mode": 4}, {"bad.mode": 0}]
    t0 = time.perf_counter()
    ds = sweep(s, sets, 1.0, 0.1, workers=2, timeout=1.5, progress=False)
    assert time.perf_counter() - t0 < 20  # the hang ended by the timeout, not by the test
    assert list(ds.status.values) == ["failed", "failed", "failed", "ok"]
    assert list(ds.failure_kind.values) == ["crash", "timeout", "error_status", ""]
    assert "SIGSEGV" in str(ds.message.values[0])
    assert "fmi2DoStep failed at t=0.5" in str(ds.message.values[2])  # the FMU's own message
    ok = _in_process(s, sets[3], 1.0, 0.1)
    names = [v for v in ok.data_vars if ok[v].dims == ("run", "time")]
    assert any(n.startswith("bond:") for n in names)
    for i in range(3):  # every failed run keeps the steps before its fault (t = 0 ... 0.5)
        n = int(ds.n_samples.values[i])
        assert n == 6, (i, n)
        for v in names:
            np.testing.assert_array_equal(ds[v].values[i, :n], ok[v].values[0, :n])
            assert np.isnan(ds[v].values[i, n:]).all()
    for v in names:  # the ok run equals the in-process run of the same parameters bit for bit
        np.testing.assert_array_equal(ds[v].values[3], ok[v].values[0])
    np.testing.assert_array_equal(ds["param:bad.mode"].values, [1, 3, 4, 0])
    assert ds.attrs["fmu_name"] == "system" and ds.attrs["algorithm"] == "fixed"


def test_crashing_sweep_runs_leave_no_libcosim_files(system_factory, faulty_path,
                                                     private_tmpdir):
    # libcosim extracts every FMU into its own folder under TMPDIR and cannot remove it when a
    # component crashes its process; the sweep's workers point TMPDIR into the harvest folder
    tmp = private_tmpdir
    s = _with_faulty(system_factory(), faulty_path)
    ds = sweep(s, [{"bad.mode": 1}, {"bad.mode": 0}], 1.0, 0.1, workers=1, progress=False)
    assert list(ds.failure_kind.values) == ["crash", ""]
    assert not list(tmp.rglob("libcosim_*")), sorted(p.name for p in tmp.iterdir())


CHILD = """
import sys
from fmu_surrogate.couple.sweep import sweep
sets = [{"spring.q0": 0.5, "bad.mode": 0}, {"spring.q0": 0.25, "bad.mode": 0},
        {"spring.q0": 0.1, "bad.mode": 3}, {"spring.q0": 0.4, "bad.mode": 0}]
sweep(sys.argv[1], sets, 1.0, 0.1, out=sys.argv[2], workers=1, timeout=None, progress=False)
"""


def test_sweep_killed_with_sigkill_resumes_without_rerunning_finished_runs(
        system_factory, faulty_path, tmp_path, monkeypatch):
    from fmu_surrogate.couple.descriptions import load_system
    from fmu_surrogate.couple.toml_form import write_toml
    from fmu_surrogate.fmu.campaigns.store import RunStore

    path = write_toml(_with_faulty(system_factory(), faulty_path), tmp_path / "sys.toml")
    out, store_dir = tmp_path / "sweep.nc", tmp_path / "sweep.nc.parts"
    # run 2 hangs and the child has no timeout: it is stuck there after runs 0 and 1
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(out)])
    try:
        deadline = time.monotonic() + 60
        before: dict = {}
        while time.monotonic() < deadline and len(before) < 2:
            man = RunStore.read_manifest(store_dir)
            if man is not None:
                before = RunStore(store_dir, man).finished()
            assert proc.poll() is None, "the sweep ended before it could be killed"
            time.sleep(0.02)
        assert sorted(before) == [0, 1]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        killed_at = time.time()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not out.exists()

    monkeypatch.setattr(RunStore, "remove", RunStore.close)  # keep the store to count runs
    sets = [{"spring.q0": 0.5, "bad.mode": 0}, {"spring.q0": 0.25, "bad.mode": 0},
            {"spring.q0": 0.1, "bad.mode": 3}, {"spring.q0": 0.4, "bad.mode": 0}]
    ds = sweep(path, sets, 1.0, 0.1, out=out, workers=1, timeout=1.0, progress=False)
    after = [h for h, _ in RunStore(store_dir, RunStore.read_manifest(store_dir)).read()]
    assert sorted(h["index"] for h in after) == [0, 1, 2, 3]  # every run once: none redone
    for h in after:
        if h["index"] in before:
            assert h == before[h["index"]]  # the record of before the kill, time stamps and all
        else:
            assert h["t0"] > killed_at  # run by the resumed sweep
    assert list(ds.failure_kind.values) == ["", "", "timeout", ""]
    assert ds.attrs["fmu_name"] == "sys"
    assert out.exists()
    system = load_system(path)
    for i in (0, 1, 3):
        ref = _in_process(system, sets[i], 1.0, 0.1)
        np.testing.assert_allclose(ds.time.values, ref.time.values, rtol=0, atol=1e-15)
        for v in ref.data_vars:
            if ref[v].dims == ("run", "time"):
                np.testing.assert_array_equal(ds[v].values[i], ref[v].values[0])
    # the same call again loads the finished dataset (and removes the kept store)
    monkeypatch.undo()
    again = sweep(path, sets, 1.0, 0.1, out=out, workers=1, timeout=1.0, progress=False)
    assert not store_dir.exists()
    np.testing.assert_array_equal(again["chain.v1"].values, ds["chain.v1"].values)


def test_ecco_sweep_is_the_in_process_run_interpolated_onto_the_grid(system_factory, tmp_path):
    from fmu_surrogate.couple.system_backend import system_target
    from fmu_surrogate.couple.toml_form import write_toml

    s = system_factory()
    path = write_toml(s, tmp_path / "sys.toml")
    hashes = {system_target(path, 1.0, 0.05, a, e)[0].info.sha256
              for a, e in (("fixed", None), ("ecco", None), ("ecco", {"abs_tolerance": 1e-4}))}
    assert len(hashes) == 3  # the algorithm and its settings are part of the sweep's identity
    ds = sweep(s, [{"spring.q0": 0.5}], 1.0, 0.05, algorithm="ecco", workers=1,
               progress=False)
    ref = _in_process(system_factory(), {"spring.q0": 0.5}, 1.0, 0.05, algorithm="ecco")
    assert ds.attrs["algorithm"] == "ecco" and ref.attrs["n_steps"] != 20  # steps of its own
    for v in ("chain.v1", "spring.F", "bond:mass1:residual"):
        want = np.interp(ds.time.values, ref.time.values, ref[v].values[0])
        # linear interpolation of the same values: measured max difference 1.7e-18 (residual,
        # one ulp of its 9e-3), 0 for the signals
        np.testing.assert_allclose(ds[v].values[0], want, rtol=0, atol=1e-17)


def test_dask_sweep_equals_the_local_sweep(system_factory, faulty_path, tmp_path):
    distributed = pytest.importorskip("distributed")
    s = _with_faulty(system_factory(), faulty_path)
    sets = [{"bad.mode": 1}, {"bad.mode": 0, "spring.q0": 0.25}]
    local = sweep(s, sets, 1.0, 0.1, workers=1, timeout=10, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = sweep(s, sets, 1.0, 0.1, out=tmp_path / "dask.nc", scheduler=client,
                       timeout=10, progress=False)
    assert list(remote.failure_kind.values) == ["crash", ""]
    for v in ("chain.v1", "bad.x", "bond:mass1:residual", "n_samples"):
        np.testing.assert_array_equal(remote[v].values, local[v].values)


def test_sweep_of_an_ssp_file_equals_the_sweep_of_its_system(system_factory, tmp_path):
    from fmu_surrogate.couple.ssp import write_ssp

    sets = [{"spring.k": 2.0}, {"spring.k": 8.0}]
    path = write_ssp(system_factory(), tmp_path / "sys.ssp")
    from_file = sweep(path, sets, 1.0, 0.1, workers=1, progress=False)
    from_object = sweep(system_factory(), sets, 1.0, 0.1, workers=1, progress=False)
    assert from_file.attrs["fmu_name"] == "sys" and list(from_file.status.values) == ["ok"] * 2
    for v in ("chain.v1", "spring.F", "bond:mass1:residual"):
        np.testing.assert_array_equal(from_file[v].values, from_object[v].values)
    assert not np.array_equal(from_file["spring.F"].values[0], from_file["spring.F"].values[1])


def test_sweep_keeps_driven_inputs_and_recorded_variables(benchmark_fmus, tmp_path):
    """The system goes to the workers in its TOML form: its [inputs] and record go along."""
    from fmu_surrogate.couple.toml_form import read_toml
    from fmu_surrogate.fmu.signals import Step

    (tmp_path / "free_mass.fmu").symlink_to(benchmark_fmus["free_mass"])
    (tmp_path / "s.toml").write_text(
        'record = ["free.v"]\n[components.free]\nfmu = "free_mass.fmu"\n\n'
        '[inputs]\n"free.F" = "step:t0=0.25,before=1,after=-2"\n', encoding="utf-8")
    system = read_toml(tmp_path / "s.toml")
    assert system.inputs == {"free.F": Step(t0=0.25, before=1.0, after=-2.0)}
    ds = sweep(system, [{"free.m": 1.0}, {"free.m": 2.0}], 0.5, 0.1, workers=1, progress=False)
    assert list(ds.status.values) == ["ok", "ok"]
    np.testing.assert_array_equal(ds["free.F"].values, [[1, 1, 1, -2, -2, -2]] * 2)
    for k, m in enumerate((1.0, 2.0)):
        # v' = -F/m with F held over each step (exact for the FMU's integrator)
        v = -np.concatenate([[0.0], np.cumsum(ds["free.F"].values[k][:-1] * 0.1 / m)])
        np.testing.assert_allclose(ds["free.v"].values[k], v, rtol=0, atol=1e-15)


def test_a_system_with_an_fmi3_component_sweeps_on_the_master(system_factory, tmp_path):
    from fmu_surrogate.testing.fmus import build_faulty3

    s = system_factory()
    s.components["bad"] = Component("bad", build_faulty3(tmp_path), {"t_fault": 0.5})
    s.connections += [Connection.parse("bad.x", "chain.F2"), Connection.parse("chain.v2", "bad.u")]
    ds = sweep(s, [{"bad.mode": 4}, {"bad.mode": 0}], 1.0, 0.1, progress=False)
    assert list(ds.status.values) == ["failed", "ok"]
    one = system_factory()
    one.components["bad"] = Component("bad", build_faulty3(tmp_path), {"t_fault": 0.5,
                                                                      "mode": 0})
    one.connections = list(s.connections)
    single = run(one, 1.0, 0.1, progress=False)  # the same master
    assert single.attrs["engine"] == "fmpy"
    np.testing.assert_array_equal(ds["chain.v1"].values[1], single["chain.v1"].values[0])
    with pytest.raises(CouplingError, match="FMI 3.0 FMUs, which libcosim .and its ECCO."):
        sweep(s, [{"bad.mode": 0}], 1.0, 0.1, algorithm="ecco", progress=False)


def test_a_system_with_a_model_exchange_component_sweeps_on_the_master(system_factory,
                                                                       tmp_path):
    from tests.couple.engines.test_me_stepper import _me_only

    s = system_factory()
    lag = _me_only(build_faulty(tmp_path), tmp_path / "faulty_me.fmu")
    s.components["lag"] = Component("lag", lag, {"x0": 0.5})
    s.connections += [Connection.parse("lag.x", "chain.F2"), Connection.parse("chain.v2", "lag.u")]
    ds = sweep(s, [{"lag.k": 1.0}, {"lag.k": 4.0}], 1.0, 0.1, progress=False)
    assert list(ds.status.values) == ["ok", "ok"]
    one = system_factory()
    one.components["lag"] = Component("lag", lag, {"x0": 0.5, "k": 4.0})
    one.connections = list(s.connections)
    single = run(one, 1.0, 0.1, progress=False)  # the same master, the same numbers
    assert single.attrs["engine"] == "fmpy"
    np.testing.assert_array_equal(ds["chain.v1"].values[1], single["chain.v1"].values[0])
    # a faster lag (k = 4) pushes the chain less at the end: its force decays from 0.5 sooner
    assert abs(ds["lag.x"].values[1, -1]) < abs(ds["lag.x"].values[0, -1])
