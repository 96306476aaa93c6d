"""Execution of a campaign under faults: a race for one output path, an output written by
someone else meanwhile, a worker stopped from outside (its run is redone by the next harvest)."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

from fmu_surrogate.fmu.campaigns.campaign import Campaign, summarize
from fmu_surrogate.fmu.campaigns.store import RunStore, StoreMismatchError
from fmu_surrogate.fmu.dataset import load_dataset
from fmu_surrogate.fmu.runner import pool as pool_module

T = np.linspace(0.0, 1.0, 101)


def campaign(fmu, k, **kw):
    return Campaign(fmu, parameters=[{"k": k}], stop_time=1.0, step=0.01, **kw)


def test_a_finished_dataset_is_not_replaced_by_a_campaign_that_looked_before_it_existed(
        faulty_fmu, tmp_path, monkeypatch):
    # B looks at OUT (absent) and then spends its time building the manifest (a long measured
    # input takes seconds); A finishes on OUT in that window.  B must find A's dataset under
    # the store's lock and refuse, leaving A's dataset and no store of its own.
    out = tmp_path / "out.nc"
    a, b = campaign(faulty_fmu, 1.0), campaign(faulty_fmu, 2.0)
    manifest = b._manifest

    def slow_manifest(cfg):
        a.run(out, workers=1, progress=False)
        return manifest(cfg)

    monkeypatch.setattr(b, "_manifest", slow_manifest)
    with pytest.raises(StoreMismatchError, match="already exists and holds a dataset of a "
                                                 "different campaign"):
        b.run(out, workers=1, progress=False)
    ds = load_dataset(out)
    assert ds.attrs["campaign_hash"] == a.campaign_hash
    np.testing.assert_allclose(ds["x"].values[0], np.exp(-T), rtol=0, atol=1e-14)
    assert not (tmp_path / "out.nc.parts").exists()
    # with --overwrite B replaces it: the refusal was about the missing option, not a lock
    monkeypatch.undo()
    ds = b.run(out, workers=1, progress=False, overwrite=True)
    assert load_dataset(out).attrs["campaign_hash"] == b.campaign_hash


def test_an_output_written_meanwhile_by_another_process_is_not_replaced(faulty_fmu, tmp_path,
                                                                        monkeypatch):
    out = tmp_path / "out.nc"
    camp = campaign(faulty_fmu, 1.0)
    collected = camp._collected_dataset

    def someone_writes_out(col, cfg):  # between the check under the lock and the replace
        out.write_bytes(b"not ours")
        return collected(col, cfg)

    monkeypatch.setattr(camp, "_collected_dataset", someone_writes_out)
    with pytest.raises(StoreMismatchError, match="was created by another process"):
        camp.run(out, workers=1, progress=False)
    assert out.read_bytes() == b"not ours"
    assert not (tmp_path / "out.nc.part").exists()
    kept = list(RunStore(tmp_path / "out.nc.parts",
                         RunStore.read_manifest(tmp_path / "out.nc.parts")).read())
    assert [h["index"] for h, _ in kept] == [0]  # the finished run is kept for --overwrite
    monkeypatch.undo()
    ds = camp.run(out, workers=1, progress=False, overwrite=True)
    assert (ds["status"].values == "ok").all()
    assert not (tmp_path / "out.nc.parts").exists()


def test_a_run_interrupted_by_sigterm_to_its_worker_is_redone_by_the_next_harvest(
        faulty_fmu, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out.nc"
    plan = [{"mode": 3}, {"k": 2.0}]  # run 0 spins in fmi2DoStep from t = 0.5
    workers = []
    spawn = pool_module.spawn_worker

    def spawn_and_note(*a, **kw):
        w = spawn(*a, **kw)
        workers.append(w)
        return w

    monkeypatch.setattr(pool_module, "spawn_worker", spawn_and_note)

    def stop_first_worker() -> None:  # SIGTERM, as a cluster's OOM handling or an admin sends
        deadline = time.monotonic() + 30
        while not (workers and int(workers[0].header[1]) == 0
                   and int(workers[0].header[0]) >= 51):
            assert time.monotonic() < deadline
            time.sleep(0.005)
        time.sleep(0.05)
        os.kill(workers[0].proc.pid, signal.SIGTERM)

    killer = threading.Thread(target=stop_first_worker)
    killer.start()
    camp = Campaign(faulty_fmu, parameters=plan, stop_time=1.0, step=0.01)
    ds = camp.run(out, workers=1, timeout=60, progress=False, start_method="spawn")
    killer.join()
    assert list(ds["failure_kind"].values) == ["interrupted", ""]
    text = summarize(ds)
    assert text.startswith("2 runs: 1 ok, 0 failed, 1 interrupted (the worker was stopped "
                           "from outside, not by the FMU")
    assert "run the same command again" in capsys.readouterr().err
    store = tmp_path / "out.nc.parts"
    first = {h["index"]: h for h, _ in RunStore(store, RunStore.read_manifest(store)).read()}
    # the same harvest again: run 0 only (now with a short timeout, so it ends as a timeout)
    ds = Campaign(faulty_fmu, parameters=plan, stop_time=1.0, step=0.01).run(
        out, workers=1, timeout=0.5, progress=False)
    assert list(ds["failure_kind"].values) == ["timeout", ""]
    assert ds["wall_time"].values[1] == first[1]["wall"]  # run 1 was not simulated again
    assert not store.exists()
    assert summarize(ds) == "2 runs: 1 ok, 1 failed (timeout: 1)"
