"""Candidate orders fitted in worker processes (identify/linear/init/order_processes.py): the
same numbers as the serial loop, and the serial loop where the fit cannot go to a worker."""

from __future__ import annotations

import functools
import threading

import numpy as np
from joblib import cpu_count

import fmu_surrogate.identify.linear.init.order_processes as op
from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
from fmu_surrogate.identify.linear.init.order import heldout_error, select_order
from fmu_surrogate.identify.linear.model.adjoint import Experiment
from fmu_surrogate.identify.linear.prepare import _candidate
from tests.identify.linear.optim.test_lm_fits import experiment, random_ph


def _data(seed: int = 3, n: int = 3, m: int = 1) -> tuple[list, list]:
    p = random_ph(seed, n, m)
    exps = [Experiment.from_arrays(*experiment(p, s)) for s in range(3)]
    return exps[:2], [(e.t, e.u, e.y, e.hold) for e in exps[2:]]


def test_pooled_errors_are_those_of_the_serial_loop():
    train, held = _data()
    fit = functools.partial(_candidate, LinearPHIdentifier(max_iter=5))
    orders = [1, 2, 3, 4]
    serial = {r: op.heldout_of(heldout_error, fit, train, held, r) for r in orders}
    pooled = op.heldout_in_processes(heldout_error, fit, train, held, orders)
    if cpu_count() < 2:
        assert pooled is None  # one core: nothing to gain, the caller loops
        return
    # the same code on the same arrays with one BLAS thread: bit for bit
    assert pooled == serial
    assert serial[3] <= 1e-6 < serial[2]  # exact data of order 3: the true order is exact


def test_a_fit_that_cannot_go_to_a_worker_runs_here():
    train, held = _data()
    lock = threading.Lock()  # not picklable

    def fit(tr, r, _lock=lock):
        return _candidate(LinearPHIdentifier(max_iter=5), tr, r)

    assert op.heldout_in_processes(heldout_error, fit, train, held, [1, 2]) is None


def test_select_order_chooses_alike_with_the_pool(monkeypatch):
    exps, _ = _data(5, 3, 1)
    fit = functools.partial(_candidate, LinearPHIdentifier(max_iter=5))
    serial, _ = select_order(exps, fit=fit, max_order=5)
    monkeypatch.setattr(op, "PARALLEL_SECONDS", 0.0)  # any scan goes to the pool
    pooled, _ = select_order(exps, fit=fit, max_order=5)
    assert pooled.order == serial.order == 3
    assert [c.heldout_error for c in pooled.candidates] == \
        [c.heldout_error for c in serial.candidates]
    assert np.isfinite(serial.candidates[0].heldout_error)
