"""The append-only run store: round trip, torn tails, campaign identity, locking."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.fmu.campaigns.store import (
    RunStore,
    StoreLockedError,
    StoreMismatchError,
    encode_record,
)
from fmu_surrogate.fmu.campaigns.store_records import decode_record, is_record


def manifest(h="abc", ncol=3):
    return {"campaign_hash": h, "n_columns": ncol, "fmu_name": "m"}


def test_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    blocks = [rng.normal(size=(n, 3)) for n in (5, 0, 7)]
    with RunStore.open(tmp_path / "s", manifest()) as st:
        for i, b in enumerate(blocks):
            st.append({"index": i, "kind": "" if i else "crash", "message": "ü"}, b)
    st = RunStore.open(tmp_path / "s", manifest())
    got = list(st.read())
    assert [h["index"] for h, _ in got] == [0, 1, 2]
    assert got[0][0]["kind"] == "crash" and got[0][0]["message"] == "ü"
    for (_, d), b in zip(got, blocks):
        np.testing.assert_array_equal(d, b)  # float64 bytes are stored verbatim
    st.close()


@pytest.mark.parametrize("cut", [1, 10, 40, -3])
def test_torn_tail_is_dropped_and_truncated(tmp_path, cut):
    path = tmp_path / "s"
    with RunStore.open(path, manifest()) as st:
        for i in range(3):
            st.append({"index": i}, np.full((4, 3), float(i)))
    runs = path / "runs.bin"
    size3 = runs.stat().st_size
    with RunStore.open(path, manifest()) as st:
        st.append({"index": 3}, np.ones((4, 3)))
    raw = runs.read_bytes()
    # simulate a process killed in the middle of writing record 3
    runs.write_bytes(raw[:size3 + cut] if cut > 0 else raw[:cut])
    st = RunStore.open(path, manifest())
    assert sorted(st.finished()) == [0, 1, 2]
    assert runs.stat().st_size == size3  # the torn record is gone
    st.append({"index": 3}, np.ones((4, 3)))
    assert sorted(st.finished()) == [0, 1, 2, 3]
    st.close()


def test_corrupted_record_stops_the_scan(tmp_path):
    path = tmp_path / "s"
    with RunStore.open(path, manifest()) as st:
        for i in range(2):
            st.append({"index": i}, np.full((4, 3), float(i)))
    runs = path / "runs.bin"
    raw = bytearray(runs.read_bytes())
    raw[-10] ^= 0xFF  # flip bits in the data of the last record: CRC mismatch
    runs.write_bytes(bytes(raw))
    assert sorted(RunStore(path, manifest()).finished()) == [0]


def test_other_campaign_is_refused_unless_overwrite(tmp_path):
    path = tmp_path / "s"
    RunStore.open(path, manifest("one")).close()
    with pytest.raises(StoreMismatchError, match="different campaign.*--overwrite"):
        RunStore.open(path, manifest("two"))
    st = RunStore.open(path, manifest("two"), overwrite=True)
    assert st.manifest["campaign_hash"] == "two" and st.finished() == {}
    st.close()


def test_concurrent_writer_is_refused(tmp_path):
    a = RunStore.open(tmp_path / "s", manifest())
    try:
        with pytest.raises(StoreLockedError, match="another harvest process"):
            RunStore.open(tmp_path / "s", manifest())
    finally:
        a.close()
    RunStore.open(tmp_path / "s", manifest()).close()  # lock released


def test_wrong_shape_is_rejected(tmp_path):
    with RunStore.open(tmp_path / "s", manifest()) as st, \
            pytest.raises(ValueError, match=r"shape \(n, 3\)"):
        st.append({"index": 0}, np.zeros((2, 2)))


def test_records_encoded_elsewhere_are_appended_verbatim(tmp_path):
    """Workers encode their results; the store appends the bytes and reads them back (CRC)."""
    rng = np.random.default_rng(1)
    data = rng.normal(size=(6, 3))
    rec = encode_record({"index": 5, "kind": "", "message": "é"}, data)
    assert is_record(rec) and not is_record(b"\x80\x04garbage")
    header, view = decode_record(rec, 3)
    assert header == {"index": 5, "kind": "", "message": "é"}
    np.testing.assert_array_equal(view, data)
    # a transposed (non-contiguous) input is stored in row order all the same
    rec_t = encode_record({"index": 6}, np.asfortranarray(data))
    with RunStore.open(tmp_path / "s", manifest()) as st:
        st.append_record(rec)
        st.append_record(rec_t)
        st.append({"index": 7}, data[:0])  # a run that produced no rows
    with RunStore.open(tmp_path / "s", manifest()) as st:
        got = list(st.read())
    assert [h["index"] for h, _ in got] == [5, 6, 7]
    np.testing.assert_array_equal(got[0][1], data)
    np.testing.assert_array_equal(got[1][1], data)
    assert got[2][1].shape == (0, 3)
