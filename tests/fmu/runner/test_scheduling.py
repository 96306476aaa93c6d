"""Scheduling of runs over the workers: the parent reads each worker's messages in bulk."""

from __future__ import annotations

import os
import socket
import struct
from multiprocessing.connection import Connection

from fmu_surrogate.fmu.runner.scheduling import _Inbox


def test_inbox_reads_every_message_whole_however_the_bytes_arrive():
    """Messages framed as ``multiprocessing.connection`` frames them (pickled control messages
    and records alike) come out whole and in order, whether several arrive in one read or one
    arrives over several reads; the end of the connection drops a message cut short (its
    sender died while writing it) after the whole ones."""
    a, b = socket.socketpair()
    sender = Connection(a.detach())
    fd = b.fileno()
    inbox = _Inbox()
    try:
        sender.send(("ready", 1))  # a pickled control message
        sender.send_bytes(b"x" * 5)
        sender.send_bytes(b"")
        got = inbox.read(fd)
        assert [len(m) for m in got[1:]] == [5, 0] and got[1] == b"xxxxx"
        big = os.urandom(600_000)  # more than one read takes
        frame = struct.pack("!i", len(big)) + big
        os.write(sender.fileno(), frame[:3])  # not even the length header yet
        assert inbox.read(fd) == []
        pieces = []
        os.write(sender.fileno(), frame[3:100])
        pieces += inbox.read(fd)
        rest = memoryview(frame)[100:]
        while rest:
            n = os.write(sender.fileno(), rest[:50_000])
            rest = rest[n:]
            pieces += inbox.read(fd)
        assert pieces == [big]
        long_frame = struct.pack("!iQ", -1, 3) + b"abc"  # the header of messages above 2 GiB
        os.write(sender.fileno(), long_frame + struct.pack("!i", 10) + b"cut")
        assert inbox.read(fd) == [b"abc"]
        sender.close()
        assert inbox.read(fd) is None  # the end: the piece of the last message is dropped
    finally:
        b.close()


def test_results_gathered_while_workers_have_every_core_are_all_there(faulty_fmu, tmp_path,
                                                                      monkeypatch):
    """With a worker on every core the parent lets results gather between wake-ups; every run
    still gets exactly one result, a crash and a hang among them are still classified (the
    hang by the timeout), and the store holds every record a worker made."""
    import numpy as np

    from fmu_surrogate.fmu.campaigns.store import RunStore
    from fmu_surrogate.fmu.model.loading import open_fmu
    from fmu_surrogate.fmu.runner.pool import RunnerConfig, RunSpec, WorkerPool
    from fmu_surrogate.fmu.runner.scheduling import _Dispatch
    from fmu_surrogate.fmu.signals.standard import Constant

    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # 2 workers: every core taken
    pauses = []
    pause = _Dispatch._pause
    monkeypatch.setattr(_Dispatch, "_pause", lambda self: pauses.append(1) or pause(self))
    t = np.linspace(0.0, 1.0, 1001)
    cfg = RunnerConfig(str(faulty_fmu), open_fmu(faulty_fmu), t, ("x",), ({"u": Constant(0.0)},),
                       campaign="c0ffee")
    specs = [RunSpec(i, {"k": 1.0 + i / 100}) for i in range(300)]
    specs[100] = RunSpec(100, {"mode": 1})  # segfault at t = 0.5
    specs[200] = RunSpec(200, {"mode": 3})  # hangs from t = 0.5
    store = RunStore.open(tmp_path / "s", {"campaign_hash": "c0ffee", "n_columns": 1})
    got: dict = {}
    with WorkerPool(cfg, workers=2, timeout=1.0, store_path=store.runs_path) as pool:
        pool.run(specs, lambda r: got.setdefault(r.index, []).append(r))
    on_disk = {h["index"] for h, _ in store.read()}
    store.close()
    assert sorted(got) == list(range(300)) and all(len(v) == 1 for v in got.values())
    assert (got[100][0].failure_kind, got[200][0].failure_kind) == ("crash", "timeout")
    assert on_disk == set(range(300)) - {100, 200}  # those two were recorded by the parent
    assert pauses  # the parent did let results gather
    for i, (r,) in got.items():
        if i not in (100, 200):
            # x' = -k x, x(0) = 1: the FMU's exact discretisation, rounding only
            np.testing.assert_allclose(r.data[:, 0], np.exp(-(1.0 + i / 100) * t), rtol=0,
                                       atol=1e-13)
