"""``fmu-surrogate harvest`` end to end, option parsing, and one-line errors."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from fmu_surrogate.cli import main
from fmu_surrogate.cli.commands.harvest import parse_bounds_option, parse_input_option
from fmu_surrogate.fmu.dataset import load_dataset
from fmu_surrogate.fmu.errors import ExperimentError, SignalError
from fmu_surrogate.fmu.signals.standard import Chirp, Constant, SchroederMultisine, Step


def test_no_options_runs_the_default_experiment(faulty_fmu, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["harvest", str(faulty_fmu), "-q"]) == 0
    out = capsys.readouterr().out
    assert "1 runs: 1 ok, 0 failed; wrote faulty.nc" in out
    # the input stays at rest, and a line says how to excite it for an identification
    assert "note: no --input given, so u stays at its start value; a surrogate" in out
    assert "--input u=noise:f_high=5,std=1,duration=1,seed=1" in out
    # at three amplitudes (the continuation of identify/nonlinear/continuation.py), the middle one
    # last: held out
    assert "repeated at std=0.2 (seed=2) and std=0.5 (seed=3, the last run is held out)" in out
    ds = load_dataset(tmp_path / "faulty.nc")
    # default experiment of the fixture: 0..1 s, step 0.01; u stays at its start value 0
    assert ds.sizes == {"run": 1, "time": 101}
    np.testing.assert_array_equal(ds["u"].values[0], 0.0)
    np.testing.assert_allclose(ds["x"].values[0], np.exp(-ds["time"].values), atol=1e-14)


def test_params_inputs_and_failures(faulty_fmu, tmp_path, capsys):
    out = tmp_path / "d.nc"
    argv = ["harvest", str(faulty_fmu), "-o", str(out), "--param", "k=1,2",
            "--param", "mode=0,4", "--input", "u=step:t0=0.5,after=2", "--stop", "2",
            "--step", "0.05", "--workers", "1", "--timeout", "5", "-q"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "4 runs: 2 ok, 2 failed (error_status: 2)" in text and "note: no --input" not in text
    # the summary shows the FMU's own reason, not only the FMI status
    assert ("error_status: e.g. run 1: [ERROR] logStatusError: fmi2DoStep failed at t=0.5: "
            "reason: x=0.606531 left the admissible range (mode 4)") in text
    assert "4 runs x 41 samples x 3 values: dataset about 3.9 kB uncompressed" in text
    ds = load_dataset(out)
    np.testing.assert_array_equal(ds["param:k"].values, [1, 1, 2, 2])
    np.testing.assert_array_equal(ds["param:mode"].values, [0, 4, 0, 4])
    t = ds["time"].values
    k = 2.0
    x05 = np.exp(-k * 0.5)
    ref = np.where(t < 0.5, np.exp(-k * t), 1.0 + (x05 - 1.0) * np.exp(-k * (t - 0.5)))
    np.testing.assert_allclose(ds["x"].values[2], ref, atol=1e-13)  # rounding only
    # same command again: nothing to do; another command at the same path: refused
    assert main(argv) == 0
    assert main(["harvest", str(faulty_fmu), "-o", str(out), "-q"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["harvest", str(faulty_fmu), "-o", str(out), "-q", "--overwrite"]) == 0


def test_lhs_and_signal_file(faulty_fmu, tmp_path, capsys):
    spec = tmp_path / "signals.json"
    spec.write_text(json.dumps([{"u": Constant(1.0).describe()},
                                {"u": Step(t0=0.5).describe()}]))
    out = tmp_path / "lhs.nc"
    assert main(["harvest", str(faulty_fmu), "-o", str(out), "--lhs", "3", "--bounds",
                 "k=0.5:2", "--signals", str(spec), "--record", "x,u", "-q",
                 "--workers", "2"]) == 0
    ds = load_dataset(out)
    assert ds.sizes["run"] == 6
    k = ds["param:k"].values
    assert np.all((k >= 0.5) & (k <= 2)) and len(set(k)) == 3
    assert json.loads(ds.attrs["variables"]) == ["x", "u"]


@pytest.mark.parametrize("argv, text", [
    (["--param", "kk=1"], "unknown variable 'kk'"),
    (["--stop", "-1"], "stop time -1 is negative"),
    (["--input", "u=step:aftr=1"], "unknown parameter(s) ['aftr']"),
    (["--input", "v=1"], "unknown input 'v'"),
    (["--lhs", "4"], "--bounds"),
    (["--record", "y"], "unknown variable 'y'"),
])
def test_errors_are_one_line(faulty_fmu, tmp_path, capsys, argv, text):
    assert main(["harvest", str(faulty_fmu), "-o", str(tmp_path / "e.nc"), "-q"] + argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("fmu-surrogate: error: ") and text in err


def test_not_an_fmu(tmp_path, capsys):
    p = tmp_path / "x.fmu"
    p.write_text("hello")
    assert main(["harvest", str(p), "-q"]) == 2
    assert "not a valid FMU" in capsys.readouterr().err


def test_option_parsers():
    assert parse_input_option("u=1.5") == ("u", Constant(1.5))
    assert parse_input_option("u=step:t0=1,after=2") == ("u", Step(t0=1.0, after=2.0))
    name, sig = parse_input_option("u=chirp:f0=0.1,f1=5,t1=10")
    assert name == "u" and sig == Chirp(f0=0.1, f1=5.0, t1=10.0)
    name, sig = parse_input_option("u=multisine:frequencies=0.5;1;2")
    assert isinstance(sig, SchroederMultisine) and tuple(sig.frequencies) == (0.5, 1.0, 2.0)
    with pytest.raises(SignalError, match="unknown signal kind"):
        parse_input_option("u=sawtooth:f=1")
    with pytest.raises(SignalError, match="NAME=KIND"):
        parse_input_option("u")
    assert parse_bounds_option("k=0.5:2") == ("k", (0.5, 2.0))
    with pytest.raises(ExperimentError, match="NAME=LO:HI"):
        parse_bounds_option("k=2")


def test_complevel_option(faulty_fmu, tmp_path):
    import h5py

    for level, expected in (("0", None), ("4", 4)):
        out = tmp_path / f"c{level}.nc"
        assert main(["harvest", str(faulty_fmu), "-o", str(out), "-q", "--complevel", level]) == 0
        with h5py.File(out) as f:
            assert f["x"].compression_opts == expected
        np.testing.assert_allclose(load_dataset(out)["x"].values[0],
                                   np.exp(-np.linspace(0, 1, 101)), rtol=0, atol=1e-14)


def test_all_runs_failed_exits_3_and_folders_are_refused_before_any_run(faulty_fmu, tmp_path,
                                                                         capsys):
    out = tmp_path / "f.nc"
    argv = ["harvest", str(faulty_fmu), "-o", str(out), "--param", "mode=4,8", "-q",
            "--workers", "1"]
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert "no run succeeded (exit status 3)" in err
    assert load_dataset(out).sizes["run"] == 2  # the failures are still data on disk
    folder = tmp_path / "folder"
    folder.mkdir()
    for extra in ([], ["--overwrite"]):
        assert main(["harvest", str(faulty_fmu), "-o", str(folder), "-q"] + extra) == 2
        err = capsys.readouterr().err
        assert "is a folder; give a file name" in err and "Traceback" not in err
        assert not (tmp_path / "folder.parts").exists()


def test_disk_full_is_one_line_and_the_harvest_resumes(faulty_fmu, tmp_path, capsys,
                                                       monkeypatch):
    import errno

    from fmu_surrogate.fmu.campaigns import store_records

    real = store_records.append_once

    def fill_up(fd, rec):  # the disk is full once the store holds two records
        # (by the file's size: the forked worker appends too, with its own copy of this)
        if os.fstat(fd).st_size >= 1.5 * len(rec):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, rec)

    monkeypatch.setattr(store_records, "append_once", fill_up)
    # forked workers (not spawned ones, whatever threads other tests left) carry the full disk
    from fmu_surrogate.fmu.runner.pool import WorkerPool

    monkeypatch.setattr(WorkerPool, "_fork_now", lambda self: True)
    out = tmp_path / "full.nc"
    argv = ["harvest", str(faulty_fmu), "-o", str(out), "--param", "k=1,2,3,4,5", "-q",
            "--workers", "1"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "no space left on the device while writing" in err and "runs.bin" in err
    assert "the 2 finished runs are kept in" in err and "run the same command again" in err
    monkeypatch.setattr(store_records, "append_once", real)
    assert main(argv) == 0  # space freed: resumes, redoing only the 3 missing runs
    assert load_dataset(out).sizes["run"] == 5


def _flip_bit_in_record(store, k: int, n: int) -> None:
    """Flip one bit in the data of record ``k`` of ``n`` (records of ok runs differ in length
    by a few header bytes only, so the middle of the k-th n-th of the file is inside it)."""
    runs = store / "runs.bin"
    raw = bytearray(runs.read_bytes())
    rec = len(raw) // n
    raw[k * rec + rec // 2] ^= 0x10
    runs.write_bytes(bytes(raw))


def test_damage_in_the_run_store_is_one_plain_line_with_the_runs_redone(faulty_fmu, tmp_path,
                                                                        capsys):
    import warnings

    out, store = tmp_path / "d.nc", tmp_path / "d.nc.parts"
    argv = ["harvest", str(faulty_fmu), "-o", str(out), "--param",
            "k=" + ",".join(str(k) for k in range(1, 11)), "-q", "--workers", "1",
            "--keep-store"]
    assert main(argv) == 0
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a notice, not a Python warning
        # 1. a bit of run 3's record (one worker: records in run order); the dataset is gone
        out.unlink()
        _flip_bit_in_record(store, 3, 10)
        assert main(argv) == 0
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert "dropped 1 damaged record(s)" in err[0]
        assert "kept 9 intact run(s); 1 run(s) lost with them will be simulated again (3)" \
            in err[0]
        # 2. the store now holds run 3's damaged record and its new one at the end: a bit of
        # run 0's record costs run 0 only, though two damaged records are in the file
        out.unlink()
        _flip_bit_in_record(store, 0, 11)
        assert main(argv) == 0
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert "dropped 2 damaged record(s)" in err[0]
        assert "kept 9 intact run(s); 1 run(s) lost with them will be simulated again (0)" \
            in err[0]
        # 3. the last record: cut as a torn tail, and still counted
        out.unlink()
        runs = store / "runs.bin"
        raw = bytearray(runs.read_bytes())
        raw[-100] ^= 0x10
        runs.write_bytes(bytes(raw))
        assert main(argv) == 0
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert "dropped 3 damaged record(s)" in err[0]
        assert "1 run(s) lost with them will be simulated again (0)" in err[0]
    ds = load_dataset(out)
    np.testing.assert_allclose(ds["x"].values, np.exp(-np.outer(np.arange(1, 11),
                                                                ds["time"].values)),
                               rtol=0, atol=1e-14)  # exact steps of the fixture: rounding only


def test_info_of_a_dataset_tells_fmu_failures_from_interrupted_runs(faulty_fmu, tmp_path,
                                                                     capsys):
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset, save_dataset
    from fmu_surrogate.fmu.model.loading import open_fmu

    t = np.linspace(0.0, 1.0, 3)
    recs = [RunRecord(0, values={"x": t}),
            RunRecord(1, status="failed", failure_kind="crash", message="SIGSEGV"),
            RunRecord(2, status="failed", failure_kind="interrupted", message="SIGTERM"),
            RunRecord(3, status="failed", failure_kind="interrupted", message="SIGKILL")]
    path = tmp_path / "d.nc"
    save_dataset(records_to_dataset(recs, t, open_fmu(faulty_fmu), ["x"]), path)
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("faulty: 4 runs: 1 ok, 1 failed (crash: 1), 2 interrupted (the "
                             "worker was stopped from outside, not by the FMU")
    assert out[1] == "failures of the FMU:" and out[2].startswith("  crash: 1 run(s) (the worker")
    assert out[3] == "not failures of the FMU (harvesting again simulates them again):"
    assert out[4].startswith("  interrupted: 2 run(s) (the worker was stopped from outside")


# ---------------------------------------------------------------------------- variable types
def test_string_variables_are_left_out_with_one_line(typed_fmu, tmp_path, capsys):
    out = tmp_path / "t.nc"
    argv = ["harvest", str(typed_fmu), "-o", str(out), "--workers", "1", "-q",
            "--input", "n=prbs:bit_period=0.1,levels=-2:5", "--input", "b=1"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert ("not recorded: s, s_out (not numbers: a dataset records numeric variables only)"
            in text.splitlines())
    ds = load_dataset(out)
    assert "s" not in ds and set(ds["n"].values[0]) == {-2.0, 5.0}
    np.testing.assert_array_equal(ds["m"].values[0], 2 * ds["n"].values[0] + 1)  # offset 1
    np.testing.assert_array_equal(ds["not_b"].values[0], 0.0)


def test_one_signal_on_two_inputs_is_warned_of(typed_fmu, tmp_path, capsys):
    out = tmp_path / "t.nc"
    prbs = "prbs:bit_period=0.1,levels=-2:5"
    assert main(["harvest", str(typed_fmu), "-o", str(out), "--workers", "1", "-q",
                 "--input", f"u={prbs}", "--input", f"n={prbs}"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("warning:")]
    assert len(lines) == 1 and lines[0].startswith(
        "warning: inputs u and n change as one signal scaled in every run, with the same ratio "
        "in every run: their effects cannot be told apart")


@pytest.mark.parametrize("option, message", [
    (["--record", "y,s_out"], "'s_out' is a String variable: a dataset records numbers only"),
    (["--input", "s=1"], "input 's' is a String variable: signals drive numeric inputs only"),
    (["--input", "n=chirp:f0=0.5,f1=2,t1=1"], "input 'n' has type Integer: its values must"),
    (["--input", "b=prbs:bit_period=0.1,levels=-1:1"], "input 'b' is a Boolean"),
])
def test_type_mistakes_are_one_line_errors(typed_fmu, tmp_path, capsys, option, message):
    argv = ["harvest", str(typed_fmu), "-o", str(tmp_path / "t.nc"), "-q", *option]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t.nc").exists()


def test_array_elements_and_whole_arrays_on_the_command_line(arrays3_fmu, tmp_path):
    out = tmp_path / "a.nc"
    argv = ["harvest", str(arrays3_fmu), "-o", str(out), "--workers", "1", "-q",
            "--input", "u[2]=0.7", "--param", "A=-1 0 0 0 -2 0 0 0 -3",
            "--param", "x0[3]=0,2"]
    assert main(argv) == 0
    ds = load_dataset(out)
    t = ds["time"].values
    assert ds["param:x0[3]"].values.tolist() == [0.0, 2.0]
    assert ds["param:A[2,2]"].values.tolist() == [-2.0, -2.0]
    np.testing.assert_array_equal(ds["u[1]"].values, 1.0)  # its start value
    np.testing.assert_array_equal(ds["u[2]"].values, 0.7)
    for r, x0 in enumerate((0.0, 2.0)):  # x3' = -3 x3 + 3; RK4 substeps, measured 2.4e-15
        np.testing.assert_allclose(ds["x[3]"].values[r], 1 + (x0 - 1) * np.exp(-3 * t),
                                   rtol=0, atol=1e-14)
    np.testing.assert_allclose(ds["y[2]"].values[0], 0.35 * (1 - np.exp(-2 * t)), rtol=0,
                               atol=1e-14)
