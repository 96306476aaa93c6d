"""Constraint discovery searches on cheap FMUs (docs/design.md §6): failures are data."""

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

import fmu_surrogate as fs
from fmu_surrogate.identify.constraints.evaluations import EvaluationStore
from fmu_surrogate.testing.fmus import build_halfplane

T = np.arange(21) * 0.05  # the halfplane FMU's default grid: y = a t + b t²


@pytest.fixture(scope="module")
def halfplane(tmp_path_factory):
    return build_halfplane(tmp_path_factory.mktemp("fmus"))


def _data(a, b):
    return a * T + b * T**2


def test_failures_are_labelled_and_the_search_goes_on(halfplane):
    # the true law lies 0.2 inside the infeasible half-plane a + b < 0
    cd = fs.ConstraintDiscovery(halfplane, ["a", "b"], ["y"], algorithm=3,
                                optimizer="Nelder-Mead", max_runs=60, workers=2)
    r = cd.fit(_data(3.0, -2.8), [2.0, 1.0], progress=False)
    ds = r.evaluations
    W = np.column_stack([ds["param:a"].values, ds["param:b"].values])
    ok = ds["status"].values == "ok"
    assert r.n_runs == 60 and ds.sizes["run"] == 60  # the budget, every vector once
    assert len({tuple(w) for w in W}) == 60
    # the FMU's own labels: failed exactly on the infeasible half-plane
    np.testing.assert_array_equal(ok, W.sum(axis=1) >= 0)
    assert r.n_failed == (~ok).sum() >= 2  # measured 2 (runs 15 and 38)
    failed = fs.failed_runs(ds)
    assert set(failed["failure_kind"]) == {"error_status"}
    assert all("infeasible parameters: a + b =" in m for m in failed["message"])
    assert np.flatnonzero(~ok)[0] < 55  # the search went on after its first failure
    # the barrier -log q keeps the answer on the feasible side of the learned boundary:
    # measured w = (2.847, -2.610), 0.19 from the truth, a + b = 0.237 > 0.2 after 60 runs
    np.testing.assert_allclose(r.w, [3.0, -2.8], atol=0.3)
    assert r.w.sum() > 0.2
    np.testing.assert_allclose(ds["J"].values[ok].min(), r.cost)
    assert np.isnan(ds["J"].values[~ok]).all()


def test_crash_and_hang_never_end_the_search(halfplane):
    # start next to the crash (a > 10) and hang (b > 10) regions: the initial simplex of
    # Nelder-Mead steps into both
    cd = fs.ConstraintDiscovery(halfplane, ["a", "b"], ["y"], algorithm=3,
                                optimizer="Nelder-Mead", max_runs=40, workers=2, timeout=0.5)
    r = cd.fit(_data(9.5, 9.4), [9.8, 9.6], progress=False)
    failed = fs.failed_runs(r.evaluations)
    assert {"crash", "timeout"} <= set(failed["failure_kind"])
    assert any("SIGSEGV" in m for m in failed["message"])
    assert r.n_runs == 40
    # measured |w - (9.5, 9.4)| = 7.5e-3 after 40 runs
    np.testing.assert_allclose(r.w, [9.5, 9.4], atol=0.02)


def test_gradient_batches_and_no_runs_around_an_infeasible_centre(halfplane):
    # Algorithm 2 with BFGS from an infeasible start (a + b < 0)
    cd = fs.ConstraintDiscovery(halfplane, ["a", "b"], ["y"], algorithm=2, optimizer="BFGS",
                                max_runs=60, workers=2)
    r = cd.fit(_data(3.0, -2.8), [-1.0, 0.5], progress=False)
    W, ok = r.history["w"], r.history["ok"]
    assert not ok[0] and r.n_failed == 1
    evaluated = {tuple(w) for w in W}
    h = 1e-4  # the paper's finite-difference step
    # forward differences: the centre and its p = 2 neighbours, evaluated as one batch
    fd = [i for i in range(len(W)) if (W[i, 0] + h, W[i, 1]) in evaluated]
    assert len(fd) >= 10 and all(ok[i] for i in fd)  # measured 20 gradients, none at a failure
    # the gradient at the failed start came from -log p~ alone and led into the feasible half
    assert W[1].sum() > 0
    # measured |w - (3, -2.8)| = 1.1e-4 after 60 runs
    np.testing.assert_allclose(r.w, [3.0, -2.8], atol=1e-3)


def test_population_generations_run_as_parallel_batches(halfplane, monkeypatch):
    sizes = []
    simulate = EvaluationStore._simulate

    def spy(self, W):
        sizes.append(len(W))
        return simulate(self, W)

    monkeypatch.setattr(EvaluationStore, "_simulate", spy)
    cd = fs.ConstraintDiscovery(halfplane, ["a", "b"], ["y"], algorithm=3,
                                optimizer="differential-evolution", max_runs=120, workers=2,
                                bounds=[(-3.0, 5.0), (-4.0, 4.0)])
    r = cd.fit(_data(3.0, -2.8), [2.0, 1.0], progress=False)
    # scipy's population of 15 p = 30 vectors per generation, one batch each; later generations
    # repeat some vectors (clipped to the box), which the cache does not run again (measured
    # batches 30, 30, 28, 29 and the 3 the budget left)
    assert sizes[0] == 30 and max(sizes) == 30 and len(sizes) >= 4
    assert sum(sizes) == r.n_evaluations == 120
    assert r.n_failed == int((r.history["w"].sum(axis=1) < 0).sum()) > 10  # measured 34
    with pytest.raises(ValueError, match="needs algorithm 2 or 3 and bounds"):
        fs.ConstraintDiscovery(halfplane, ["a", "b"], ["y"],
                               optimizer="differential-evolution").fit(_data(1, 0), [1, 0],
                                                                       progress=False)


SCRIPT = """
import numpy as np, fmu_surrogate as fs
T = np.arange(21) * 0.05
cd = fs.ConstraintDiscovery({fmu!r}, ["a", "b"], ["y"], algorithm=3, optimizer="Nelder-Mead",
                            max_runs=150, workers=2)
cd.fit(3.0 * T - 2.8 * T**2, [2.0, 1.0], out={out!r}, progress=False)
"""


def _search(halfplane, out):
    cd = fs.ConstraintDiscovery(halfplane, ["a", "b"], ["y"], algorithm=3,
                                optimizer="Nelder-Mead", max_runs=150, workers=2)
    return cd.fit(_data(3.0, -2.8), [2.0, 1.0], out=out, progress=False)


def test_killed_search_resumes_without_rerunning(halfplane, tmp_path):
    out = tmp_path / "evals"
    code = textwrap.dedent(SCRIPT.format(fmu=str(halfplane), out=str(out)))
    env = dict(os.environ, PYTHONPATH=str(Path(fs.__file__).parents[1]))
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    runs = out / "runs.parts" / "runs.bin"
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60 and proc.poll() is None:
        if runs.is_file() and runs.stat().st_size > 15_000:  # some 30 runs stored
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = EvaluationStore(halfplane, ["a", "b"], ["y"], np.zeros((21, 1)), directory=out)
    n_before = len(before.evaluations())
    before.close()
    assert 10 <= n_before < 150
    r = _search(halfplane, out)
    # the resumed search replays the killed one from the cache: only new vectors run, and it
    # ends where an uninterrupted search ends
    W = r.history["w"]
    assert len({tuple(w) for w in W}) == r.n_evaluations == W.shape[0]
    assert r.n_runs == r.n_evaluations - n_before
    reference = _search(halfplane, tmp_path / "reference")
    np.testing.assert_array_equal(reference.history["w"], W)
    np.testing.assert_array_equal(reference.history["ok"], r.history["ok"])
    assert _search(halfplane, out).n_runs == 0  # a finished search runs nothing again


def test_bad_settings_are_named(halfplane):
    with pytest.raises(ValueError, match="Algorithm 1 solves constrained problems"):
        fs.ConstraintDiscovery(halfplane, ["a", "b"], ["y"], algorithm=1,
                               optimizer="Powell").fit(_data(1, 0), [1, 0], progress=False)
    with pytest.raises(ValueError, match="x0 must be 2 finite numbers"):
        fs.ConstraintDiscovery(halfplane, ["a", "b"], ["y"]).fit(_data(1, 0), [1.0],
                                                                 progress=False)
    with pytest.raises(ValueError, match=r"must be \(N, len\(outputs\)\) = \(21, 1\)"):
        fs.ConstraintDiscovery(halfplane, ["a", "b"], ["y"]).fit(np.zeros(5), [1, 0],
                                                                 progress=False)
    with pytest.raises(ValueError, match="needs bounds"):
        fs.ConstraintDiscovery(halfplane, ["a", "b"], ["y"], algorithm="bo").fit(
            _data(1, 0), [1, 0], progress=False)


def test_discover_command(halfplane, tmp_path, capsys):
    from fmu_surrogate.cli import main

    data = tmp_path / "measured.nc"
    fs.harvest(halfplane, data, parameters=[{"a": 3.0, "b": -2.8}], record=["y"],
               progress=False)
    out = tmp_path / "result.json"
    assert main(["discover", str(halfplane), "--data", str(data), "--param", "a", "--param", "b",
                 "--x0", "2,1", "--max-runs", "60", "--workers", "2", "-q", "-o", str(out)]) == 0
    d = json.loads(out.read_text())
    text = capsys.readouterr().out
    assert "FMU runs: 60 this call, 60 evaluations, 2 failed" in text
    # the same search as test_failures_are_labelled_and_the_search_goes_on, from the file
    np.testing.assert_allclose(d["w"], [2.847061, -2.609967], atol=1e-5)
    assert d["outputs"] == ["y"] and d["n_failed"] == 2
    beta = np.array(d["feasibility_boundary"]["beta"])
    assert beta[0] > 0 and beta[1] > 0  # feasible towards a + b > 0
    assert (tmp_path / "result.json.evals" / "runs.parts" / "runs.bin").is_file()
    evals = fs.load_dataset(d["evaluations"])  # every evaluation as a harvest dataset
    assert evals.sizes["run"] == 60 and (evals["status"].values == "failed").sum() == 2
    assert main(["discover", str(halfplane), "--data", str(data), "--param", "a", "--param", "b",
                 "--x0", "2", "-o", str(out)]) == 2  # one line, exit status 2
    assert "--x0 has 1 values; give one per --param (2)" in capsys.readouterr().err
