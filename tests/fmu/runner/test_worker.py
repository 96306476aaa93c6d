"""The worker process: a worker told to stop (SIGTERM) stops at once and its run is recorded as
interrupted, not as a failure of the FMU."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

from fmu_surrogate.fmu.model.loading import open_fmu
from fmu_surrogate.fmu.runner.pool import RunnerConfig, RunSpec, WorkerPool
from fmu_surrogate.fmu.runner.tempdirs import harvest_space
from fmu_surrogate.fmu.signals.standard import Constant


def _when(cond, limit=30.0) -> None:
    deadline = time.monotonic() + limit
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.002)


@pytest.mark.parametrize("where", ["in the FMU's C code", "between steps in Python"])
def test_sigterm_to_a_worker_stops_it_and_records_the_run_as_interrupted(faulty_fmu, where):
    # Inside a harvest the parent turns SIGTERM into an exception (to clean up); a forked worker
    # inherits that handler.  Run 0 is either stuck in C (mode 3 spins in fmi2DoStep from
    # t = 0.5: a Python handler never runs there, the worker would go on until the 60 s timeout)
    # or stepping through a long grid in Python (the handler's exception would be caught as a
    # failure "exception" of the FMU and the worker would go on).  Either way the worker must
    # die by the signal at once and the run be "interrupted"; run 1 then runs on a new worker.
    if where == "in the FMU's C code":
        t, params, at = np.linspace(0.0, 1.0, 101), {"mode": 3}, 51
    else:
        t, params, at = np.linspace(0.0, 100.0, 400_001), {"k": 0.01}, 2000
    cfg = RunnerConfig(str(faulty_fmu), open_fmu(faulty_fmu), t, ("x",), ({"u": Constant(0.0)},))
    got, sent = {}, {}
    with harvest_space(), WorkerPool(cfg, workers=1, timeout=60, start_method="fork") as pool:
        pool.start()
        w = pool._workers[0]

        def stop_it() -> None:  # SIGTERM once run 0 is under way at the chosen place
            _when(lambda: int(w.header[1]) == 0 and int(w.header[0]) >= at)
            time.sleep(0.05)
            sent["rows"] = int(w.header[0])
            os.kill(w.proc.pid, signal.SIGTERM)

        killer = threading.Thread(target=stop_it)
        killer.start()
        t0 = time.monotonic()
        pool.run([RunSpec(0, params), RunSpec(1, {"k": 2.0})],
                 lambda r: got.__setitem__(r.index, r))
        elapsed = time.monotonic() - t0
        killer.join()
    r = got[0]
    assert r.failure_kind == "interrupted", r.message
    assert "stopped by SIGTERM from outside" in r.message and "not by the FMU" in r.message
    assert r.n_samples >= sent["rows"] and r.n_samples < len(t)  # its partial data is kept
    assert elapsed < 20  # stopped at once, not at the 60 s timeout nor at the end of the run
    assert got[1].ok
    np.testing.assert_allclose(got[1].data[:, 0], np.exp(-2.0 * t), rtol=0, atol=1e-12)

