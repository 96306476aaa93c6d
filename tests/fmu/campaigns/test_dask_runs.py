"""Runs on a Dask cluster: a batch whose Dask workers were lost is recorded as interrupted (and
redone by the next harvest), not as failures of the FMU, and the campaign goes on."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from fmu_surrogate.fmu.campaigns import dask_runs
from fmu_surrogate.fmu.campaigns.campaign import Campaign


def test_runs_of_a_lost_dask_worker_are_interrupted_and_redone(faulty_fmu, tmp_path,
                                                               monkeypatch):
    distributed = pytest.importorskip("distributed")
    real = dask_runs._dask_batch

    def batch_or_lost_worker(cfg, specs, timeout, blob):  # what the scheduler reports when
        if any(s.index == 1 for s in specs):          # every worker running a task died
            raise distributed.KilledWorker("batch-1", SimpleNamespace(address="tcp://gone:1"), 3)
        return real(cfg, specs, timeout, blob)

    monkeypatch.setattr(dask_runs, "_dask_batch", batch_or_lost_worker)
    out = tmp_path / "d.nc"
    plan = [{"k": k} for k in (1.0, 2.0, 3.0)]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        ds = Campaign(faulty_fmu, parameters=plan, stop_time=1.0, step=0.01).run(
            out, scheduler=client, batch_size=1, progress=False)
        assert list(ds["failure_kind"].values) == ["", "interrupted", ""]
        assert "Dask workers running this run were lost (4 tries, the last on tcp://gone:1)" \
            in str(ds["message"].values[1])
        walls = ds["wall_time"].values.copy()
        monkeypatch.setattr(dask_runs, "_dask_batch", real)
        ds = Campaign(faulty_fmu, parameters=plan, stop_time=1.0, step=0.01).run(
            out, scheduler=client, batch_size=1, progress=False)
    assert (ds["status"].values == "ok").all()
    assert ds["wall_time"].values[0] == walls[0] and ds["wall_time"].values[2] == walls[2]
    np.testing.assert_allclose(ds["x"].values[1], np.exp(-2.0 * ds["time"].values), rtol=0,
                               atol=1e-14)  # exact steps of the fixture: rounding only
