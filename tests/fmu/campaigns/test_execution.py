"""Execution of a campaign under faults: a worker stopped from outside (its run is redone by the
next harvest)."""

from __future__ import annotations

import os
import signal
import threading
import time

from fmu_surrogate.fmu.campaigns.campaign import Campaign, summarize
from fmu_surrogate.fmu.campaigns.store import RunStore
from fmu_surrogate.fmu.runner import pool as pool_module


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
    ds = camp.run(out, workers=1, timeout=60, progress=False, start_method="fork")
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
