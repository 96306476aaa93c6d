"""The parent's handle of a worker: a replacement worker's log starts empty, so the output of
its first run (what a crashing FMU printed last) reaches that run's message."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.fmu.model.loading import open_fmu
from fmu_surrogate.fmu.runner.pool import RunnerConfig, RunSpec, WorkerPool
from fmu_surrogate.fmu.signals.standard import Constant

T = np.linspace(0.0, 1.0, 101)


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_first_run_of_a_replaced_worker_keeps_its_crash_output(faulty_fmu, start_method):
    # mode 2 prints one line on stderr and aborts at t = 0.5: the first worker's log holds that
    # line when it is replaced, and the replacement prints the same number of bytes in its first
    # run, so an offset carried over from the dead worker's log points at the end of the new one
    cfg = RunnerConfig(str(faulty_fmu), open_fmu(faulty_fmu), T, ("x",), ({"u": Constant(0.0)},))
    got = {}
    with WorkerPool(cfg, workers=1, timeout=10, start_method=start_method) as pool:
        pool.run([RunSpec(0, {"mode": 2}), RunSpec(1, {"mode": 2}), RunSpec(2, {"mode": 2})],
                 lambda r: got.__setitem__(r.index, r))
        assert pool.respawns == 3
    for i in range(3):
        assert got[i].failure_kind == "crash", got[i].message
        assert "internal consistency check failed at t=0.5" in got[i].message, (i, got[i].message)
