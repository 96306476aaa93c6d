"""Store hardening: the lock comes first, records name their campaign, damage costs one record.

Each test forces one failure mode that used to store wrong data silently or destroy more than
needed: two campaigns racing for one path, foreign or short records appended to a store, a store
that lost its manifest, a flipped bit in the middle of the file.
"""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.fmu.campaigns.store import (
    RunStore,
    StoreLockedError,
    StoreMismatchError,
    encode_record,
)

NT = 4  # samples per run of these manifests


def manifest(h="aaa", ncol=2, n_runs=20):
    return {"campaign_hash": h, "n_columns": ncol, "fmu_name": "m", "n_runs": n_runs,
            "time": {"n": NT}}


def fill(st, indices, value=0.0):
    for i in indices:
        st.append({"index": i, "kind": "", "message": "", "n": NT}, np.full((NT, 2), value + i))


def test_race_loser_is_told_the_truth_and_cannot_touch_the_winners_manifest(tmp_path, monkeypatch):
    """Force the interleaving of the race: campaign B arrives while A holds the lock but has not
    written its manifest yet.  B must be refused before it reads or writes anything, and say so;
    A's manifest must be A's."""
    path = tmp_path / "out.nc.parts"
    seen = {}
    original = RunStore._settle_manifest.__func__

    def settle_with_intruder(cls, p, man, overwrite, recover):
        with pytest.raises(StoreLockedError, match="another harvest process is starting") as e:
            RunStore.open(p, manifest("bbb"), overwrite=True)
        seen["message"] = str(e.value)
        return original(cls, p, man, overwrite, recover)

    monkeypatch.setattr(RunStore, "_settle_manifest", classmethod(settle_with_intruder))
    a = RunStore.open(path, manifest("aaa"))
    monkeypatch.undo()
    assert RunStore.read_manifest(path)["campaign_hash"] == "aaa"
    # once A's manifest is there, the loser learns that another campaign runs on the path
    with pytest.raises(StoreLockedError, match="different campaign \\(aaa\\)"):
        RunStore.open(path, manifest("bbb"), overwrite=True)
    with pytest.raises(StoreLockedError, match="this same campaign"):
        RunStore.open(path, manifest("aaa"))
    a.close()
    assert "starting on this path" in seen["message"]


def test_records_of_another_campaign_are_refused(tmp_path):
    path = tmp_path / "s"
    with RunStore.open(path, manifest("aaa")) as st:
        fill(st, [0, 1])
    with open(path / "runs.bin", "ab") as f:  # another campaign's record appended behind
        f.write(encode_record({"campaign": "zzz", "index": 2, "kind": "", "n": NT},
                              np.zeros((NT, 2))))
    st = RunStore.open(path, manifest("aaa"))
    assert sorted(st.finished()) == [0, 1]
    assert st.discarded["foreign"] == 1 and "1 record(s) of another campaign" in st.discarded_text()
    st.close()


def test_ok_record_with_fewer_samples_than_the_grid_is_refused(tmp_path):
    path = tmp_path / "s"
    with RunStore.open(path, manifest()) as st:
        st.append({"index": 0, "kind": "", "n": 2}, np.zeros((2, 2)))     # "ok" but 2 of 4
        st.append({"index": 1, "kind": "crash", "n": 2}, np.zeros((2, 2)))  # a failure may be short
        st.append({"index": 99, "kind": "", "n": NT}, np.zeros((NT, 2)))   # no such run
    st = RunStore.open(path, manifest())
    assert sorted(st.finished()) == [1]
    assert st.discarded["invalid"] == 2
    st.close()


def test_store_without_manifest_is_not_adopted_but_can_be_recovered(tmp_path):
    path = tmp_path / "s"
    with RunStore.open(path, manifest("aaa")) as st:
        fill(st, [0, 1, 2])
    with open(path / "runs.bin", "ab") as f:
        f.write(encode_record({"campaign": "zzz", "index": 3, "kind": "", "n": NT},
                              np.zeros((NT, 2))))
    (path / "campaign.json").write_text("{ truncated")
    with pytest.raises(StoreMismatchError, match="unreadable, so it is not adopted.*--recover-store"):
        RunStore.open(path, manifest("aaa"))
    (path / "campaign.json").unlink()
    with pytest.raises(StoreMismatchError, match="missing, so it is not adopted"):
        RunStore.open(path, manifest("aaa"))
    st = RunStore.open(path, manifest("aaa"), recover=True)  # keeps the runs of this campaign
    assert sorted(st.finished()) == [0, 1, 2] and st.discarded["foreign"] == 1
    np.testing.assert_array_equal({h["index"]: d for h, d in st.read()}[2], np.full((NT, 2), 2.0))
    st.close()
    assert RunStore.read_manifest(path)["campaign_hash"] == "aaa"


def test_a_flipped_bit_costs_one_record_not_the_rest(tmp_path):
    path = tmp_path / "s"
    with RunStore.open(path, manifest()) as st:
        fill(st, range(10))
    raw = bytearray((path / "runs.bin").read_bytes())
    rec = len(raw) // 10
    raw[3 * rec + rec // 2] ^= 0x10  # a bit in the data of record 3
    (path / "runs.bin").write_bytes(bytes(raw))
    st = RunStore.open(path, manifest())
    got = {h["index"]: d for h, d in st.read()}
    assert sorted(got) == [0, 1, 2, 4, 5, 6, 7, 8, 9]
    for i, d in got.items():
        np.testing.assert_array_equal(d, np.full((NT, 2), float(i)))
    assert st.discarded["damaged"] == 1 and st.discarded["damaged_bytes"] == rec
    assert "1 damaged record(s)" in st.discarded_text()
    # the file is not truncated: the damage sits in the middle, the later records stay on disk
    assert (path / "runs.bin").stat().st_size == len(raw)
    st.close()


def test_output_path_that_is_a_file_instead_of_a_store_folder(tmp_path):
    (tmp_path / "s").write_text("x")
    with pytest.raises(StoreMismatchError, match="not a folder"):
        RunStore.open(tmp_path / "s", manifest())
