"""The dataset format: round trips, awkward names, NaN tails, versions, foreign files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import fmu_surrogate
from fmu_surrogate.fmu.dataset import (
    FAILURE_KINDS,
    FORMAT_VERSION,
    RERUN_KINDS,
    RunRecord,
    data_var_name,
    dataset_to_records,
    escape_name,
    failed_runs,
    fmu_variables,
    load_dataset,
    parameter_names,
    proportional_inputs,
    records_to_dataset,
    run_arrays,
    runs_table,
    save_dataset,
    unescape_name,
)
from fmu_surrogate.fmu.dataset.upgrade import _UPGRADERS
from fmu_surrogate.fmu.dataset.write import _chunk_rows
from fmu_surrogate.fmu.errors import DatasetError, FMUError, UnknownVariableError
from fmu_surrogate.fmu.model.loading import DefaultExperiment, FMUInfo, Variable
from fmu_surrogate.fmu.signals.standard import Chirp, Step

NAMES = ["x", "der(x)", "u", "a.b[1]", "a/b%c", "status", "y z"]
T = np.linspace(0.0, 1.0, 21)


@pytest.fixture
def info() -> FMUInfo:
    def v(name, causality, unit=None, shape=(), dependencies=None):
        return Variable(name, 0, causality, "continuous", "Real", None, unit, None, shape,
                        dependencies=dependencies)

    return FMUInfo(
        path=Path("/models/m.fmu"), sha256="ab" * 32, name="m", guid="{g}", fmi_version="2.0",
        generation_tool="tool 1.0", model_identifier_cs="m", model_identifier_me=None,
        platforms=("linux64",), has_binary=True,
        variables=(v("x", "output", "m", dependencies=()), v("der(x)", "local", "m/s"),
                   v("u", "input"), v("a.b[1]", "local"), v("a/b%c", "local"),
                   v("status", "local"), v("y z", "output", dependencies=("u", "x")),
                   v("arr", "output", shape=(2,)),
                   v("k", "parameter")),
        states=("x",), derivatives={"x": "der(x)"},
        default_experiment=DefaultExperiment(0.0, 1.0, 0.05, None),
    )


def _records() -> list[RunRecord]:
    rng = np.random.default_rng(0)
    full = {n: rng.standard_normal(T.size) for n in NAMES}
    short = {n: rng.standard_normal(8) for n in NAMES}  # ended early after 8 samples
    return [
        RunRecord(0, {"k": 1.0}, {"u": Step(0.5).describe()}, values=full, wall_time=0.25),
        RunRecord(3, {"k": 2.0, "w/1": 0.5}, {"u": Chirp().describe()}, "failed", "early_stop",
                  "stopped at t=0.35", values=short, wall_time=0.1),
        RunRecord(7, {}, {}, "failed", "crash", "worker died (signal 11)"),
    ]


@pytest.fixture
def ds(info) -> xr.Dataset:
    return records_to_dataset(_records(), T, info, NAMES)


# ------------------------------------------------------------------ layout
def test_layout(ds):
    assert dict(ds.sizes) == {"run": 3, "time": T.size}
    np.testing.assert_array_equal(ds["run"].values, [0, 3, 7])
    assert ds["time"].dtype == np.float64 and ds["run"].dtype == np.int64
    for n in NAMES:
        key = data_var_name(ds, n)
        assert ds[key].dims == ("run", "time") and ds[key].dtype == np.float64
        assert ds[key].attrs["fmu_variable"] == n
    # stored under their own names except the two that cannot be
    assert {"x", "der(x)", "u", "a.b[1]", "y z"} <= set(ds.data_vars)
    assert data_var_name(ds, "a/b%c") == "a%2Fb%25c"
    assert data_var_name(ds, "status") == "var:status"
    assert ds["x"].attrs["units"] == "m" and ds["x"].attrs["causality"] == "output"
    # the outputs' declared direct dependencies (JSON), absent where nothing is declared
    assert json.loads(ds["x"].attrs["dependencies"]) == []
    assert json.loads(ds["y z"].attrs["dependencies"]) == ["u", "x"]
    assert "dependencies" not in ds["u"].attrs
    assert list(ds["status"].values) == ["ok", "failed", "failed"]
    assert list(ds["failure_kind"].values) == ["", "early_stop", "crash"]
    np.testing.assert_array_equal(ds["n_samples"].values, [T.size, 8, 0])
    np.testing.assert_array_equal(ds["param:k"].values, [1.0, 2.0, np.nan])
    assert ds["param:w%2F1"].attrs["parameter"] == "w/1"
    assert json.loads(ds["signal"].values[0]) == {"u": Step(0.5).describe()}
    a = ds.attrs
    assert (a["fmu_name"], a["fmu_guid"], a["fmi_version"], a["generation_tool"]) == \
        ("m", "{g}", "2.0", "tool 1.0")
    assert a["fmu_sha256"] == "ab" * 32 and a["fmu_path"] == "/models/m.fmu"
    assert a["format_version"] == FORMAT_VERSION == 2
    assert a["fmu_surrogate_version"] == fmu_surrogate.__version__
    assert json.loads(a["states"]) == ["x"] and json.loads(a["derivatives"]) == ["der(x)"]
    assert json.loads(a["inputs"]) == ["u"] and json.loads(a["outputs"]) == ["x", "y z", "arr"]
    assert json.loads(a["variables"]) == NAMES and json.loads(a["parameters"]) == ["k", "w/1"]


def test_escape_is_reversible():
    tricky = ["x", "der(x)", "a.b[1]", "a/b", "%", "%2F", "50%/s", ".", "..", "...", "time",
              "run", "signal", "param:k", "var:x", "var:var:x", "x y", "é/ü"]
    stored = [escape_name(n) for n in tricky]
    assert [unescape_name(s) for s in stored] == tricky
    assert len(set(stored)) == len(tricky)
    assert all("/" not in s and s not in (".", "..") for s in stored)
    assert escape_name("der(x)") == "der(x)" and escape_name("a.b[1]") == "a.b[1]"


# ------------------------------------------------------------------ round trip
def test_round_trip(ds, tmp_path):
    path = save_dataset(ds, tmp_path / "sub" / "data.nc")
    assert path.is_file() and not (tmp_path / "sub" / "data.nc.part").exists()
    back = load_dataset(path)
    xr.testing.assert_identical(back.drop_attrs(), ds.drop_attrs())  # values bit-identical
    for k in ("fmu_name", "fmu_guid", "variables", "parameters", "states", "created"):
        assert back.attrs[k] == ds.attrs[k]
    assert int(back.attrs["format_version"]) == 2
    assert back["y z"].attrs["dependencies"] == ds["y z"].attrs["dependencies"]
    assert fmu_variables(back) == NAMES
    assert parameter_names(back) == ["k", "w/1"]
    for n in NAMES:
        np.testing.assert_array_equal(back[data_var_name(back, n)].values,
                                      ds[data_var_name(ds, n)].values)
    # the file can be replaced while the loaded dataset is in use (it was closed after loading)
    save_dataset(back, path)
    assert load_dataset(path)["message"].values[2] == "worker died (signal 11)"


def test_records_round_trip(ds, tmp_path):
    again = dataset_to_records(load_dataset(save_dataset(ds, tmp_path / "d.nc")))
    for a, b in zip(_records(), again):
        assert (a.index, a.params, a.signals, a.status, a.failure_kind, a.message) == \
            (b.index, b.params, b.signals, b.status, b.failure_kind, b.message)
        assert set(b.values) == set(NAMES) and a.n_samples == b.n_samples
        for n, v in a.values.items():
            np.testing.assert_array_equal(b.values[n], v)
        assert a.wall_time == b.wall_time or (math.isnan(a.wall_time) and math.isnan(b.wall_time))


# ------------------------------------------------------------------ reading runs
def test_run_arrays_trims_the_nan_tail(ds):
    recs = _records()
    ok = run_arrays(ds, ["x", "der(x)", "a/b%c"])
    assert len(ok) == 1
    t, X = ok[0]
    np.testing.assert_array_equal(t, T)
    np.testing.assert_array_equal(X, np.column_stack([recs[0].values[n]
                                                      for n in ["x", "der(x)", "a/b%c"]]))
    everything = run_arrays(ds, ["u", "status"], only_ok=False)
    assert [len(t) for t, _ in everything] == [T.size, 8, 0]
    t1, X1 = everything[1]
    np.testing.assert_array_equal(t1, T[:8])
    np.testing.assert_array_equal(X1[:, 1], recs[1].values["status"])
    assert everything[2][1].shape == (0, 2)
    (_t3, X3), = run_arrays(ds, ["x"], runs=[3], only_ok=False)
    assert X3.shape == (8, 1)
    with pytest.raises(DatasetError, match="run 3 of .* failed"):  # asked for by label: an error
        run_arrays(ds, ["x"], runs=[3])
    with pytest.raises(KeyError, match="run 5 is not in the dataset"):
        run_arrays(ds, ["x"], runs=[5])
    with pytest.raises(UnknownVariableError, match=r"'der\(x\)'"):
        run_arrays(ds, ["der(X)"])


def test_trailing_nan_rows_inside_n_samples_are_trimmed_but_inner_nans_kept():
    x = np.arange(10.0)
    x[3] = np.nan  # a hole in the middle stays (it is data)
    y = x.copy()
    x[7:], y[7:] = np.nan, np.nan
    ds = records_to_dataset([RunRecord(0, values={"x": x, "y": y})], np.arange(12.0), None,
                            ["x", "y"])
    assert int(ds["n_samples"].values[0]) == 10
    (t, X), = run_arrays(ds, ["x", "y"])
    assert t.shape == (7,) and np.isnan(X[3]).all() and np.isfinite(X[6]).all()


def test_array_variables_are_stored_element_wise(info):
    arr = np.arange(10.0).reshape(5, 2)
    ds = records_to_dataset([RunRecord(0, values={"arr": arr}), RunRecord(1)], T, info, ["arr"])
    assert fmu_variables(ds) == ["arr[1]", "arr[2]"]
    assert fmu_variables(ds, elements=False) == ["arr"]
    assert ds["arr[2]"].attrs == {"fmu_variable": "arr", "element": "2", "causality": "output",
                                  "type": "Real"}
    (_t, X), (_, X1) = run_arrays(ds, ["arr[1]", "arr[2]"])
    np.testing.assert_array_equal(X, arr)
    assert X1.shape == (0, 2)


def test_failed_runs_table(ds):
    tab = failed_runs(ds)
    assert list(tab["run"]) == [3, 7]
    assert list(tab["failure_kind"]) == ["early_stop", "crash"]
    assert list(tab["message"]) == ["stopped at t=0.35", "worker died (signal 11)"]
    assert tab["k"].iloc[0] == 2.0 and math.isnan(tab["k"].iloc[1])
    assert list(tab.columns[:6]) == ["run", "status", "failure_kind", "message", "n_samples",
                                     "wall_time"]
    assert len(runs_table(ds)) == 3


# ------------------------------------------------------------------ validation
def test_record_and_build_validation(info):
    with pytest.raises(ValueError, match="status must be 'ok' or 'failed'"):
        RunRecord(0, status="broken")
    with pytest.raises(ValueError, match="failure_kind 'oops' is not one of"):
        RunRecord(0, status="failed", failure_kind="oops")
    with pytest.raises(ValueError, match="an ok run has failure_kind ''"):
        RunRecord(0, failure_kind="timeout")
    assert {"error_status", "exception", "non_finite", "exploding", "crash", "timeout",
            "early_stop", "interrupted"} == set(FAILURE_KINDS)
    assert RERUN_KINDS == {"interrupted"}  # not failures of the FMU
    with pytest.raises(ValueError, match="more than the 21 of the time grid"):
        records_to_dataset([RunRecord(0, values={"x": np.zeros(22)})], T, info, ["x"])
    with pytest.raises(ValueError, match="unique"):
        records_to_dataset([RunRecord(0), RunRecord(0)], T, info, ["x"])
    with pytest.raises(ValueError, match="strictly increasing"):
        records_to_dataset([RunRecord(0)], T[::-1], info, ["x"])
    with pytest.raises(ValueError, match="more than once"):
        records_to_dataset([RunRecord(0)], T, info, ["x", "x"])


def test_without_fmu_and_extra_attrs():
    ds = records_to_dataset([RunRecord(0, values={"q": np.ones(3)})], [0.0, 0.1, 0.2], None,
                            ["q"], attrs={"source": "euler", "n": 3, "flag": True,
                                          "tags": ["a", "b"]})
    assert ds.attrs["fmu_name"] == "" and ds.attrs["states"] == "[]"
    assert ds.attrs["source"] == "euler" and ds.attrs["flag"] == 1
    assert json.loads(ds.attrs["tags"]) == ["a", "b"]


# ------------------------------------------------------------------ versions and foreign files
def _with_version(ds: xr.Dataset, v: int, path: Path) -> Path:
    ds = ds.copy()
    ds.attrs["format_version"] = np.int64(v)
    return save_dataset(ds, path)


def test_future_version_is_refused(ds, tmp_path):
    p = _with_version(ds, FORMAT_VERSION + 1, tmp_path / "future.nc")
    with pytest.raises(DatasetError, match=r"format_version 3, written by a newer fmu-surrogate.*"
                                           r"reads format_version <= 2.*pip install -U") as exc:
        load_dataset(p)
    assert isinstance(exc.value, FMUError)


def test_older_version_upgraded_or_refused(ds, tmp_path, monkeypatch):
    p = _with_version(ds, 0, tmp_path / "old.nc")
    with pytest.raises(DatasetError, match="format_version 0, which this fmu-surrogate "
                                           r"\(format_version 2\) cannot convert; re-harvest"):
        load_dataset(p)

    def up(old):
        new = old.copy()
        new.attrs["upgraded"] = "yes"
        return new

    monkeypatch.setitem(_UPGRADERS, 0, up)
    back = load_dataset(p)
    assert back.attrs["upgraded"] == "yes" and int(back.attrs["format_version"]) == 2


def test_foreign_netcdf_and_garbage_are_refused(tmp_path):
    p = tmp_path / "other.nc"
    xr.Dataset({"a": ("x", [1.0, 2.0])}).to_netcdf(p, engine="h5netcdf")
    with pytest.raises(DatasetError, match="no attribute format='fmu-surrogate dataset', so it "
                                           "is not an fmu-surrogate dataset"):
        load_dataset(p)
    g = tmp_path / "garbage.nc"
    g.write_bytes(b"CDF\x01 not really")
    with pytest.raises(DatasetError, match="cannot be read as NetCDF-4/HDF5.*not an fmu-surrogate"):
        load_dataset(g)
    with pytest.raises(FileNotFoundError, match="no such dataset file"):
        load_dataset(tmp_path / "missing.nc")


def test_damaged_dataset_is_refused(ds, tmp_path):
    p = save_dataset(ds.drop_vars("n_samples"), tmp_path / "damaged.nc")
    with pytest.raises(DatasetError, match=r"lacks \['n_samples'\].*re-harvest"):
        load_dataset(p)


def test_failed_save_keeps_the_old_file(ds, tmp_path):
    p = save_dataset(ds, tmp_path / "d.nc")
    before = p.read_bytes()
    bad = ds.copy()
    bad.attrs["unserialisable"] = {"a": object()}
    with pytest.raises(TypeError):  # h5netcdf cannot store a dict attribute
        save_dataset(bad, p)
    assert p.read_bytes() == before and not (tmp_path / "d.nc.part").exists()


# ------------------------------------------------------------------ format 2: signals, writers
def test_each_distinct_signal_is_stored_once(info, tmp_path):
    import h5py

    arr = {"u": {"kind": "array", "t": T.tolist(), "values": np.sin(T).tolist()}}
    shared = [RunRecord(i, {"k": float(i)}, arr if i % 3 else {"u": Step(0.5).describe()},
                        values={"x": np.exp(-i * T)}) for i in range(30)]
    ds = records_to_dataset(shared, T, info, ["x"])
    assert dict(ds.sizes) == {"run": 30, "time": T.size}  # in memory: one text per run
    assert json.loads(ds["signal"].values[1]) == arr
    path = save_dataset(ds, tmp_path / "s.nc")
    with h5py.File(path) as f:
        assert "signal" not in f and f["signal_table"].shape == (2,)  # 2 distinct, not 30
        # first seen first: run 0 has the step
        np.testing.assert_array_equal(f["signal_index"][:], [int(i % 3 != 0) for i in range(30)])
        assert json.loads(f["signal_table"][1]) == arr
    back = load_dataset(path)
    assert dict(back.sizes) == {"run": 30, "time": T.size}
    assert list(back["signal"].values) == list(ds["signal"].values)
    xr.testing.assert_identical(back.drop_attrs(), ds.drop_attrs())


def test_version_1_files_are_upgraded():
    """A file written by format_version 1 (tests/fmu/fixtures/dataset_v1.nc, made with the
    version-1 writer: one signal text per run, an FMU variable named ``signal_table``)."""
    v1 = Path(__file__).parent / "fixtures" / "dataset_v1.nc"
    ds = load_dataset(v1)
    assert int(ds.attrs["format_version"]) == FORMAT_VERSION == 2
    assert dict(ds.sizes) == {"run": 3, "time": 6}
    t = np.linspace(0, 0.5, 6)
    assert data_var_name(ds, "signal_table") == "var:signal_table"  # reserved since version 2
    np.testing.assert_allclose(ds["var:signal_table"].values[1], 3 * t, rtol=0, atol=1e-15)
    _, (_, X1) = run_arrays(ds, ["x", "signal_table"])
    np.testing.assert_allclose(X1[:, 0], np.exp(-2 * t), rtol=0, atol=1e-15)
    assert json.loads(ds["signal"].values[0])["u"]["kind"] == "step"
    assert json.loads(ds["signal"].values[1])["u"]["kind"] == "array"
    assert ds["signal"].values[2] == ds["signal"].values[0]
    assert list(ds["failure_kind"].values) == ["", "", "crash"]
    recs = dataset_to_records(ds)
    assert recs[2].values["x"].shape == (3,) and recs[1].params == {"k": 2.0}


def _big(info, n_runs=100, n_time=3000):
    """Enough data for several chunks, the last one partial (1 MB chunks: 43 runs of 3000)."""
    rng = np.random.default_rng(2)
    t = np.linspace(0.0, 1.0, n_time)
    recs = [RunRecord(i, {"k": float(i)}, {"u": Step(0.5).describe()},
                      "ok" if i % 7 else "failed", "" if i % 7 else "non_finite",
                      values={"x": np.cumsum(rng.standard_normal(n_time if i % 7 else 50)),
                              "u": np.ones(n_time if i % 7 else 50)})
            for i in range(n_runs)]
    return records_to_dataset(recs, t, info, ["x", "u"])


def test_parallel_and_serial_writers_store_the_same(info, tmp_path):
    import h5py
    import netCDF4

    ds = _big(info)
    assert _chunk_rows(100, 3000) == 43
    par = save_dataset(ds, tmp_path / "par.nc", threads=3)  # chunks compressed by threads
    ser = save_dataset(ds, tmp_path / "ser.nc", threads=1)  # HDF5 compresses (via xarray)
    raw = save_dataset(ds, tmp_path / "raw.nc", complevel=0)
    for p in (par, ser, raw):
        xr.testing.assert_identical(load_dataset(p).drop_attrs(), ds.drop_attrs())
        with h5py.File(p) as f:
            assert f["x"].chunks == (43, 3000)
            assert (f["x"].compression, f["x"].shuffle) == (
                (None, False) if p == raw else ("gzip", True))
        with netCDF4.Dataset(p) as nc:  # the netCDF-C library reads it too
            np.testing.assert_array_equal(np.ma.filled(nc["x"][:], np.nan), ds["x"].values)
            assert list(nc["status"][:]) == list(ds["status"].values)
    assert par.stat().st_size < 0.8 * raw.stat().st_size  # the NaN tails and u compress


def test_chunks_deflated_ahead_are_the_chunks_save_dataset_makes(info, tmp_path):
    import threading

    import h5py

    from fmu_surrogate.fmu.dataset import ChunkDeflater

    ds = _big(info)
    x = np.asarray(ds["x"].values)
    ahead = ChunkDeflater(100, 3000, 1)
    for r0 in (0, 43, 86):
        ahead.submit(x, r0)
    ahead.submit(x, 43)  # handed over again (a run stored twice): the latest counts
    ahead.submit(x.copy(), 0)  # another array: never taken for ds["x"]
    ahead.take(x, 0).result()
    thread = ahead._thread
    if thread is not None:
        thread.join()
    # idle: its thread has ended (a process without other threads may fork a worker again)
    assert ahead._thread is None
    assert not any(t.name == "fmu-surrogate-deflate" for t in threading.enumerate())
    assert ahead.matches(43, 1) and not ahead.matches(43, 3)
    ahead.submit(x, 0)
    p = save_dataset(ds, tmp_path / "ahead.nc", deflated=ahead)
    q = save_dataset(ds, tmp_path / "plain.nc")
    assert len(ahead._ahead) == 1  # x's three chunks were taken; the copy's was not
    xr.testing.assert_identical(load_dataset(p).drop_attrs(), ds.drop_attrs())
    with h5py.File(p) as f, h5py.File(q) as g:  # byte for byte the same chunks
        for r0 in (0, 43, 86):
            assert f["x"].id.read_direct_chunk((r0, 0)) == g["x"].id.read_direct_chunk((r0, 0))
    stale = ChunkDeflater(100, 3000, 3)  # another level: save_dataset compresses itself
    stale.submit(x, 0)
    r = save_dataset(ds, tmp_path / "stale.nc", deflated=stale)
    xr.testing.assert_identical(load_dataset(r).drop_attrs(), ds.drop_attrs())
    stale.close()
    ahead.close()


def _chunks(path, name="x"):
    import h5py

    with h5py.File(path) as f:
        dsid = f[name].id
        return [dsid.read_direct_chunk((r0, 0)) for r0 in range(0, f[name].shape[0], 43)]


def test_chunks_stored_ahead_make_the_file_save_dataset_makes(info, tmp_path):
    from fmu_surrogate.fmu.dataset import ChunkDeflater, part_path
    from fmu_surrogate.fmu.dataset.write import WRITTEN

    ds = _big(info)
    out = tmp_path / "ahead.nc"
    ahead = ChunkDeflater(100, 3000, 1)
    made = []
    ahead.stream_into(part_path(out), lambda: made.append(1) or ds)
    assert not made and not part_path(out).exists()  # made by the thread, before a chunk
    x, u = np.asarray(ds["x"].values), np.asarray(ds["u"].values)
    for r0 in (0, 43):
        ahead.submit(x, r0)
    ahead.submit(u, 0)
    futures = [ahead._ahead[k] for k in list(ahead._ahead)]
    assert all(f.result() is WRITTEN for f in futures)  # stored, not kept in memory
    assert made == [1] and part_path(out).exists()
    p = save_dataset(ds, out, deflated=ahead)
    q = save_dataset(ds, tmp_path / "plain.nc")
    assert not part_path(out).exists()
    xr.testing.assert_identical(load_dataset(p).drop_attrs(), ds.drop_attrs())
    assert _chunks(p) == _chunks(q) and _chunks(p, "u") == _chunks(q, "u")  # the same bytes
    ahead.close()
    assert p.exists()  # closing after the save leaves the dataset alone


def test_a_stream_the_save_does_not_take_over_is_removed(info, tmp_path):
    from fmu_surrogate.fmu.dataset import ChunkDeflater, part_path

    ds = _big(info)
    x = np.asarray(ds["x"].values)
    # the campaign stops before its save: close removes the file
    ahead = ChunkDeflater(100, 3000, 1)
    ahead.stream_into(part_path(tmp_path / "a.nc"), lambda: ds)
    ahead.submit(x, 0)
    ahead.take(x, 0).result()
    assert part_path(tmp_path / "a.nc").exists()
    ahead.close()
    assert not part_path(tmp_path / "a.nc").exists()
    # saved under another name: that file is made anew, the stream's removed, nothing lost
    ahead = ChunkDeflater(100, 3000, 1)
    ahead.stream_into(part_path(tmp_path / "b.nc"), lambda: ds)
    ahead.submit(x, 0)
    ahead._ahead[next(iter(ahead._ahead))].result()
    p = save_dataset(ds, tmp_path / "c.nc", deflated=ahead)
    assert not part_path(tmp_path / "b.nc").exists()
    xr.testing.assert_identical(load_dataset(p).drop_attrs(), ds.drop_attrs())
    ahead.close()
    # saved through xarray (one thread): the stream's file is closed and written anew
    ahead = ChunkDeflater(100, 3000, 1)
    ahead.stream_into(part_path(tmp_path / "d.nc"), lambda: ds)
    ahead.submit(x, 0)
    ahead._ahead[next(iter(ahead._ahead))].result()
    p = save_dataset(ds, tmp_path / "d.nc", deflated=ahead, threads=1)
    assert not part_path(p).exists()
    xr.testing.assert_identical(load_dataset(p).drop_attrs(), ds.drop_attrs())
    ahead.close()
    assert p.exists()
    # chunks of another gzip level stored ahead: the file is made anew at the save's level
    import h5py

    ahead = ChunkDeflater(100, 3000, 3)
    ahead.stream_into(part_path(tmp_path / "e.nc"), lambda: ds)
    ahead.submit(x, 0)
    ahead._ahead[next(iter(ahead._ahead))].result()
    p = save_dataset(ds, tmp_path / "e.nc", deflated=ahead)
    xr.testing.assert_identical(load_dataset(p).drop_attrs(), ds.drop_attrs())
    with h5py.File(p) as f:
        assert f["x"].compression_opts == 1
    ahead.close()


def test_a_stream_that_cannot_be_written_leaves_the_chunks_to_the_save(info, tmp_path):
    from fmu_surrogate.fmu.dataset import ChunkDeflater, part_path

    ds = _big(info)
    out = tmp_path / "out.nc"
    part_path(out).mkdir()  # the file cannot be created: no stream, nothing stored
    ahead = ChunkDeflater(100, 3000, 1)
    ahead.stream_into(part_path(out), lambda: ds)
    x = np.asarray(ds["x"].values)
    ahead.submit(x, 0)
    assert isinstance(ahead._ahead[next(iter(ahead._ahead))].result(), bytes)
    part_path(out).rmdir()
    p = save_dataset(ds, out, deflated=ahead)
    xr.testing.assert_identical(load_dataset(p).drop_attrs(), ds.drop_attrs())
    ahead.close()


def test_save_checks_its_options(ds, tmp_path):
    with pytest.raises(ValueError, match="complevel must be an integer 0"):
        save_dataset(ds, tmp_path / "a.nc", complevel=12)
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        save_dataset(ds, tmp_path / "a.nc", threads=0)
    assert not (tmp_path / "a.nc").exists()


def test_run_arrays_accepts_paths_and_names_failed_runs_and_bad_values(faulty_fmu, tmp_path):
    from fmu_surrogate.fmu.campaigns.campaign import harvest
    from fmu_surrogate.fmu.errors import DatasetError

    out = tmp_path / "d.nc"
    harvest(faulty_fmu, out, parameters=[{"mode": 0}, {"mode": 4}], progress=False, workers=1)
    (t, X), = run_arrays(out, ["x"])  # a path works, failed runs are skipped when not asked for
    np.testing.assert_allclose(X[:, 0], np.exp(-t), atol=1e-14)
    with pytest.raises(DatasetError, match=r"run 1 of .*d\.nc failed \(error_status: .*only_ok"):
        run_arrays(out, ["x"], runs=[1])
    (t1, _X1), = run_arrays(out, ["x"], runs=[1], only_ok=False)  # partial data up to t_fault
    assert t1[-1] < 0.6 and len(t1) < len(t)
    ds = load_dataset(out)
    ds["n_samples"].values[0] = -3
    with pytest.raises(DatasetError, match="run 0 has n_samples = -3, outside 0"):
        run_arrays(ds, ["x"])
    ds = load_dataset(out)
    ds["x"] = ds["x"].astype(object)
    ds["x"].values[0, 5] = "n/a"  # a hand-edited cell
    with pytest.raises(DatasetError, match="variable 'x' holds values that are not numbers"):
        run_arrays(ds, ["x"])


def test_input_start_values_are_read_as_numbers_or_nothing():
    from fmu_surrogate.fmu.dataset import input_start_values

    ds = xr.Dataset(attrs={"input_start_values": '{"v": 0.5, "F": -2}'})
    assert input_start_values(ds) == {"v": 0.5, "F": -2.0}
    assert input_start_values(xr.Dataset()) == {}  # an older harvest does not say
    assert input_start_values(xr.Dataset(attrs={"input_start_values": "not json"})) == {}


def test_inputs_no_run_excites_apart_are_named():
    t = np.linspace(0.0, 10.0, 501)
    s, c = np.sin(2.0 * t) + 0.3 * np.sin(5.1 * t), np.cos(0.7 * t)

    def dataset(*runs):
        return records_to_dataset([RunRecord(k, values=dict(zip(("a", "b", "c"), r)))
                                   for k, r in enumerate(runs)], t, None, ["a", "b", "c"])

    # a multisine on a and b (other ratios, offsets), c its own signal
    ds = dataset((s, 4 * s + 1, c), (2 * s, 4 * s, c), (s, -s, 2 * c))
    assert proportional_inputs(ds, ["a", "b", "c"]) == [("a", "b", False)]
    # one ratio in every run: the effects cannot be told apart at all
    assert proportional_inputs(dataset((s, 2 * s, c), (3 * s, 6 * s, c)), ["a", "b"]) == \
        [("a", "b", True)]
    # a run with a alone (b held) tells them apart; so does another signal on b
    assert proportional_inputs(dataset((s, 2 * s, c), (s, 0 * s, c)), ["a", "b"]) == []
    assert proportional_inputs(dataset((s, 2 * s, c), (s, c, c)), ["a", "b"]) == []
    # runs where neither changes say nothing
    assert proportional_inputs(dataset((s, 2 * s, c), (0 * s, 0 * s, c)), ["a", "b"]) == \
        [("a", "b", True)]
