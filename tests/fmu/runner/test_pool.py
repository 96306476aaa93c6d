"""Isolated runner: every failure kind of the fixture FMU is classified, with the FMU's own
reason in the message, partial data is kept, and the pool survives crashes and hangs."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from fmu_surrogate.fmu.backends.registry import RunOutput
from fmu_surrogate.fmu.campaigns.store import RunStore, StoreLockedError
from fmu_surrogate.fmu.dataset import FAILURE_KINDS
from fmu_surrogate.fmu.errors import NoBinaryError
from fmu_surrogate.fmu.model.loading import open_fmu
from fmu_surrogate.fmu.runner.pool import RunnerConfig, RunSpec, WorkerPool, classify, run_isolated
from fmu_surrogate.fmu.signals.standard import Constant

T = np.linspace(0.0, 1.0, 101)
REC = ("x", "der(x)", "u")

#: mode -> (failure kind, text that must be in the message, rows kept)
EXPECTED = {
    0: ("", "", 101),
    1: ("crash", "SIGSEGV", 51),
    2: ("crash", "SIGABRT", 51),
    3: ("timeout", "time limit of 2 s", 51),
    4: ("error_status", "reason: x=", 51),
    5: ("non_finite", "x is nan at t=0.51", 101),
    6: ("exploding", "exceeds the bound 1e+10 at t=0.51", 101),
    7: ("early_stop", "reason: end condition reached", 51),
    8: ("error_status", "reason: parameter mode=8", 0),
}


@pytest.fixture(scope="module", params=["fork", "spawn"])
def all_modes(faulty_fmu, request):
    """Every mode once, with forked and with spawned workers (same expectations)."""
    cfg = RunnerConfig(str(faulty_fmu), open_fmu(faulty_fmu), T, REC, ({"u": Constant(0.0)},))
    specs = [RunSpec(m, {"mode": m}) for m in range(9)] + [RunSpec(9, {"k": 2.0})]
    with WorkerPool(cfg, workers=2, timeout=2.0, start_method=request.param) as pool:
        got = {}
        pool.run(specs, lambda r: got.__setitem__(r.index, r))
        respawns = pool.respawns
        # 2 workers + 3 replacements (segfault, abort, hang), all made the requested way
        assert pool.forked == (2 + respawns if request.param == "fork" else 0)
    return got, respawns


def test_every_failure_kind_is_classified(all_modes):
    got, _ = all_modes
    assert sorted(got) == list(range(10))
    for mode, (kind, text, rows) in EXPECTED.items():
        r = got[mode]
        assert r.failure_kind == kind, (mode, r.failure_kind, r.message)
        assert text in r.message, (mode, r.message)
        assert r.n_samples == rows == r.data.shape[0], (mode, r.n_samples)
        assert kind == "" or kind in FAILURE_KINDS


def test_partial_data_of_killed_runs_is_the_true_trajectory(all_modes):
    got, _ = all_modes
    for mode in (1, 2, 3, 4, 7):  # crash, abort, hang, error, early stop: rows t = 0 .. 0.5
        x = got[mode].data[:, 0]
        # exact discretisation in the FMU: equal to exp(-t) up to accumulated rounding
        np.testing.assert_allclose(x, np.exp(-T[:51]), rtol=0, atol=1e-14)


def test_crash_messages_carry_the_worker_output(all_modes):
    got, _ = all_modes
    # abort() printed its reason on stderr before dying; the message must show it
    assert "internal consistency check failed at t=0.5" in got[2].message
    assert "Segmentation fault" in got[1].message


def test_pool_goes_on_after_crashes_and_hangs(all_modes):
    got, respawns = all_modes
    assert respawns == 3  # segfault, abort, hang
    r = got[9]
    assert r.ok and r.status == "ok"
    np.testing.assert_allclose(r.data[:, 0], np.exp(-2.0 * T), rtol=0, atol=1e-14)
    assert r.wall_time > 0 and r.finished >= r.started


def test_run_isolated_returns_spec_order(faulty_fmu):
    cfg = RunnerConfig(str(faulty_fmu), open_fmu(faulty_fmu), T, ("x",),
                       ({"u": Constant(1.0)}, {"u": Constant(2.0)}))
    specs = [RunSpec(7, {"k": 1.0}, 1), RunSpec(3, {"k": 4.0}, 0)]
    res = run_isolated(cfg, specs, workers=1, timeout=10)
    assert [r.index for r in res] == [7, 3]
    # x(t) = u/k + (1 - u/k) e^{-k t}
    np.testing.assert_allclose(res[0].data[:, 0], 2.0 - np.exp(-T), atol=1e-14)
    np.testing.assert_allclose(res[1].data[:, 0], 0.25 + 0.75 * np.exp(-4 * T), atol=1e-14)


def test_open_failure_is_an_error_of_the_campaign(broken_fmus):
    info = open_fmu(broken_fmus["no_binary"])
    cfg = RunnerConfig(str(broken_fmus["no_binary"]), info, T, ("x",))
    with pytest.raises(NoBinaryError, match="no binary for this platform"):
        run_isolated(cfg, [RunSpec(0)], timeout=10)


def _output(data, **kw):
    cols = {"a": (0, ()), "b": (1, ())}
    return RunOutput(["a", "b"], cols, np.asarray(data, dtype=float), len(data), **kw)


def test_classify_precedence():
    t = np.arange(4.0)
    # exploding first (t=1), NaN later (t=2): the earlier event decides
    out = _output([[0, 0], [0, 1e12], [np.nan, 0], [0, 0]])
    kind, msg = classify(out, t)
    assert kind == "exploding" and "|b| = 1e+12" in msg and "t=1" in msg
    out = _output([[0, 0], [np.inf, 1e12], [0, 0], [0, 0]])
    assert classify(out, t)[0] == "non_finite"
    # an exception wins over the data
    out = _output([[0, np.nan]], error=RuntimeError("solver gave up"))
    kind, msg = classify(out, t)
    assert kind == "exception" and "RuntimeError: solver gave up" in msg
    # ...and becomes an error status when the FMU logged an error
    out = _output([[0, 0]], error=RuntimeError("x"), messages=[(3, "cat", "the reason")])
    kind, msg = classify(out, t)
    assert kind == "error_status" and "[ERROR] cat: the reason" in msg
    # short data without an error is an early stop; warnings of an ok run are kept
    assert classify(_output([[0, 0]]), t)[0] == "early_stop"
    kind, msg = classify(_output([[0, 0]] * 4, messages=[(1, "w", "careful")]), t)
    assert kind == "" and "careful" in msg


def test_results_carry_the_store_record(faulty_fmu):
    from fmu_surrogate.fmu.campaigns.store_records import decode_record

    cfg = RunnerConfig(str(faulty_fmu), open_fmu(faulty_fmu), T, REC, ({"u": Constant(1.0)},),
                       campaign="c0ffee")
    (r,) = run_isolated(cfg, [RunSpec(4, {"k": 3.0})], timeout=10)
    header, data = decode_record(r.record, len(REC))
    assert header.pop("campaign") == "c0ffee"  # every record names its campaign
    assert header == r.store_header() and header["index"] == 4 and header["kind"] == ""
    np.testing.assert_array_equal(data, r.data)
    # x = 1/3 + (2/3) e^{-3t}: exact discretisation in the FMU, rounding only
    np.testing.assert_allclose(r.data[:, 0], 1 / 3 + 2 / 3 * np.exp(-3 * T), rtol=0, atol=1e-14)


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_workers_append_their_records_to_the_store(faulty_fmu, tmp_path, start_method):
    """With the store named, a worker appends each run's record itself and the parent reads it
    back: the same header and data as a record sent through the pipe; a crash is still made by
    the parent (``stored`` false), and the store holds every worker-made record intact."""
    cfg = RunnerConfig(str(faulty_fmu), open_fmu(faulty_fmu), T, REC, ({"u": Constant(1.0)},),
                       campaign="c0ffee")
    store = RunStore.open(tmp_path / "s", {"campaign_hash": "c0ffee", "n_columns": len(REC)})
    specs = [RunSpec(0, {"k": 2.0}), RunSpec(1, {"mode": 4}), RunSpec(2, {"mode": 1}),
             RunSpec(3, {"k": 3.0}), RunSpec(4, {"mode": 5})]
    got = {}
    with WorkerPool(cfg, workers=2, timeout=10, start_method=start_method,
                    store_path=store.runs_path) as pool:
        pool.run(specs, lambda r: got.__setitem__(r.index, r))
    piped = {r.index: r for r in run_isolated(cfg, specs, workers=2, timeout=10)}
    for i, r in got.items():
        assert r.stored == (i != 2) and r.record is None, (i, r.failure_kind)
        assert (r.failure_kind, r.n_samples) == (piped[i].failure_kind, piped[i].n_samples)
        np.testing.assert_array_equal(r.data, piped[i].data)  # same FMU calls: bit-identical
    on_disk = {h["index"]: (h, d) for h, d in store.read()}
    store.close()
    assert sorted(on_disk) == [0, 1, 3, 4] and not store.discarded_text()
    for i, (h, d) in on_disk.items():
        assert h.pop("campaign") == "c0ffee" and h == got[i].store_header()
        np.testing.assert_array_equal(d, got[i].data)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and fork: Linux")
def test_forked_workers_inherit_no_descriptors(faulty_fmu, tmp_path):
    """A forked worker must not keep the parent's files open: here the run store's lock, which
    would otherwise stay taken while the worker lives."""
    store = RunStore.open(tmp_path / "s", {"campaign_hash": "h", "n_columns": 1})
    cfg = RunnerConfig(str(faulty_fmu), open_fmu(faulty_fmu), T, ("x",))
    with WorkerPool(cfg, workers=1, start_method="fork") as pool:
        pool.start()
        pid = pool._workers[0].proc.pid
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        assert not [x for x in links if str(tmp_path) in x], links
        store.close()
        again = RunStore.open(tmp_path / "s", {"campaign_hash": "h", "n_columns": 1})
        with pytest.raises(StoreLockedError):  # the lock works, and is ours, not the worker's
            RunStore.open(tmp_path / "s", {"campaign_hash": "h", "n_columns": 1})
        again.close()
        got = []
        pool.run([RunSpec(0, {"k": 2.0})], got.append)
    np.testing.assert_allclose(got[0].data[:, 0], np.exp(-2 * T), rtol=0, atol=1e-14)


def test_bad_start_method_is_refused(faulty_fmu):
    cfg = RunnerConfig(str(faulty_fmu), open_fmu(faulty_fmu), T, ("x",))
    with pytest.raises(ValueError, match="start_method must be one of"):
        WorkerPool(cfg, start_method="thread")


def test_worker_killed_between_runs_leaves_no_stale_data(faulty_fmu):
    """A worker that dies after run 7 and before run 8 started: run 8's crash record must not
    carry run 7's data, and a SIGKILL is an interruption from outside, not a model fault."""
    import signal

    cfg = RunnerConfig(str(faulty_fmu), open_fmu(faulty_fmu), T, REC, ({"u": Constant(1.0)},))
    seen = []
    with WorkerPool(cfg, workers=1, timeout=10) as pool:
        pool.run([RunSpec(7, {"k": 3.0})], seen.append)
        assert seen[0].n_samples == len(T) and not seen[0].failure_kind
        w = pool._workers[0]
        assert int(w.header[1]) == 7 and int(w.header[0]) == len(T)  # run 7 is in the scratch
        os.kill(w.proc.pid, signal.SIGKILL)
        w.proc.wait()
        w.queue.append(RunSpec(8, {"k": 3.0}))  # sent, never started
        pool._on_death(w, __import__("collections").deque(), seen.append)
    r = seen[1]
    assert r.index == 8 and r.failure_kind == "interrupted"
    assert r.n_samples == 0 and r.data.shape == (0, len(REC))
    assert "stopped by SIGKILL from outside" in r.message and "not by the FMU" in r.message
    assert "run 8 had not started" in r.message


def test_worker_log_is_bounded_and_keeps_head_and_tail(tmp_path):
    """A log flood: 2 MB of messages in one run keep the file ≤ limit + one line, with the first
    message (what failed) and the last ones, and a count of what was dropped."""
    from fmu_surrogate.fmu.runner.worker import _BoundedEcho

    path = tmp_path / "worker.log"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    echo = _BoundedEcho(fd, limit=64_000, head=8_000)
    echo(3, "logStatusError", "FIRST: the reason the run failed")
    for i in range(20_000):
        echo(0, "logAll", f"chatter {i:06d} " + "x" * 80)
    echo(3, "logStatusError", "LAST words")
    text = path.read_text()
    assert len(text.encode()) <= 64_000 + 200
    assert text.startswith("[FMU ERROR] logStatusError: FIRST: the reason the run failed")
    assert text.rstrip().endswith("LAST words") and "bytes of log dropped" in text
    echo.reset()  # the next run starts with an empty log
    assert path.stat().st_size == 0
    os.close(fd)


def test_messages_keep_their_head_when_trimmed():
    from fmu_surrogate.fmu.backends.api import BoundedLog
    from fmu_surrogate.fmu.runner.failures import _trim

    text = "fmi2DoStep failed: reason: x left the admissible range\n" + "noise\n" * 5000
    t = _trim(text, 600)
    assert t.startswith("fmi2DoStep failed: reason") and len(t) <= 650
    assert "characters dropped" in t
    log = BoundedLog(head=3, tail=5)
    for i in range(1000):
        log.append((3 if i == 0 else 0, "c", f"m{i}"))
    got = list(log)
    assert [m for _, _, m in got[:3]] == ["m0", "m1", "m2"]
    assert got[3][2] == "[... 992 log messages dropped ...]"
    assert [m for _, _, m in got[4:]] == [f"m{i}" for i in range(995, 1000)]
