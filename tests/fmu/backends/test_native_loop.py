"""The compiled stepping loop (fmu/backends/native_loop.py, c/cs_loop.c) against the Python loop:
bit-identical datasets on the benchmark FMUs, every failure kind of the faulty test FMUs (FMI 2
and FMI 3), and the crash isolation of the worker processes."""

from __future__ import annotations

import numpy as np
import pytest

import fmu_surrogate as fs
from fmu_surrogate.fmu.backends import native_loop
from fmu_surrogate.fmu.backends.fmpy_instance import FmpyBackend

# wall_time is the only field that measures the machine rather than the FMU
VOLATILE_VARS = {"wall_time"}
VOLATILE_ATTRS = {"created"}


def _harvest_both(monkeypatch, tmp_path, fmu, **kw):
    monkeypatch.setenv("FMU_SURROGATE_NATIVE_LOOP", "0")
    python = fs.harvest(fmu, tmp_path / "python.nc", overwrite=True, **kw)
    monkeypatch.delenv("FMU_SURROGATE_NATIVE_LOOP")
    native = fs.harvest(fmu, tmp_path / "native.nc", overwrite=True, **kw)
    return python, native


def _assert_identical(a, b, compare_messages=True):
    assert set(a.data_vars) == set(b.data_vars)
    for name in a.data_vars:
        if name in VOLATILE_VARS or (name == "message" and not compare_messages):
            continue
        va, vb = a[name].values, b[name].values
        if va.dtype.kind == "f":
            assert va.tobytes() == vb.tobytes(), name  # bit for bit, NaN patterns included
        else:
            assert va.tolist() == vb.tolist(), name
    assert {k: v for k, v in a.attrs.items() if k not in VOLATILE_ATTRS} == {
        k: v for k, v in b.attrs.items() if k not in VOLATILE_ATTRS}


def test_the_loop_builds_here():
    # CI has gcc: the fast path must really be taken there, or the tests below compare the
    # Python loop with itself
    assert native_loop.native_library() is not None


@pytest.mark.parametrize("name", ["rc_network", "msd_chain", "cauer", "pendulum", "duffing"])
def test_benchmark_datasets_are_bit_identical(name, monkeypatch, tmp_path, benchmark_fmus):
    fmu = benchmark_fmus[name] if name in benchmark_fmus else fs.benchmark_fmu(name)
    info = fs.open_fmu(fmu)
    inputs = [v.name for v in info.variables if v.causality == "input" and v.type == "Real"]
    signals = [{n: fs.signals.Chirp(f0=0.1 * (k + 1), f1=1.0, t1=2.0, offset=0.5)
                for k, n in enumerate(inputs)}]
    python, native = _harvest_both(monkeypatch, tmp_path, fmu, signals=signals, stop_time=2.0,
                                   step=0.01)
    assert (python["status"].values == "ok").all()
    _assert_identical(python, native)


def test_every_failure_kind_is_classified_alike(monkeypatch, tmp_path, faulty_fmu):
    plan = fs.plans.explicit([{"mode": m, "t_fault": 0.5} for m in (0, 4, 5, 6, 7, 8)])
    python, native = _harvest_both(
        monkeypatch, tmp_path, faulty_fmu, parameters=plan, stop_time=1.0, step=0.01,
        signals=[{"u": fs.signals.Chirp(f0=0.1, f1=2.0, t1=1.0)}])
    kinds = python["failure_kind"].values.tolist()
    assert kinds == ["", "error_status", "non_finite", "exploding", "early_stop",
                     "error_status"]
    _assert_identical(python, native)


def test_fmi3_failure_kinds_and_arrays_are_identical(monkeypatch, tmp_path, faulty3_fmu):
    plan = fs.plans.explicit([{"mode": m, "t_fault": 0.5} for m in (0, 4, 5, 7, 8)])
    python, native = _harvest_both(
        monkeypatch, tmp_path, faulty3_fmu, parameters=plan, stop_time=1.0, step=0.01,
        signals=[{"u": fs.signals.Chirp(f0=0.1, f1=2.0, t1=1.0)}])
    assert python["failure_kind"].values.tolist() == ["", "error_status", "non_finite",
                                                      "early_stop", "error_status"]
    _assert_identical(python, native)


def test_crashes_and_hangs_stay_isolated(monkeypatch, tmp_path, faulty_fmu):
    # segfault, abort, hang inside fmi2DoStep: the worker dies (or is killed), the run is a
    # recorded failure, the campaign goes on to the normal run after them
    plan = fs.plans.explicit([{"mode": m, "t_fault": 0.2} for m in (1, 2, 3, 0)])
    python, native = _harvest_both(monkeypatch, tmp_path, faulty_fmu, parameters=plan,
                                   stop_time=0.5, step=0.01, timeout=3.0)
    assert native["failure_kind"].values.tolist() == python["failure_kind"].values.tolist()
    assert native["status"].values.tolist() == ["failed", "failed", "failed", "ok"]
    # the messages carry process ids and addresses; the data of every run must agree
    _assert_identical(python, native, compare_messages=False)


def test_backend_takes_the_compiled_path(monkeypatch, faulty_fmu):
    calls = []
    real = native_loop.NativeRun.fmi2

    def counting(self, *args, **kw):
        calls.append(1)
        return real(self, *args, **kw)

    monkeypatch.setattr(native_loop.NativeRun, "fmi2", counting)
    b = FmpyBackend(interface="cs")
    b.open(faulty_fmu)
    t = np.linspace(0.0, 1.0, 101)
    u = np.sin(t)
    out = b.run({"k": 2.0, "x0": 1.0}, {"u": u}, t, ["x"])
    # one compiled run, and its start repeated once after Reset (the reset check of a new
    # instance: fmpy_instance.RESET_CHECK_POINTS points)
    assert calls == [1, 1] and out.error is None and out.n_done == 101
    # the model integrates exactly for the held input: x(t+h) = x e^{-kh} + u (1 - e^{-kh})/k
    x = np.empty(101)
    x[0] = 1.0
    e = np.exp(-2.0 * 0.01)
    for i in range(100):
        x[i + 1] = x[i] * e + u[i] * (1 - e) / 2.0
    # rounding of the FMU's own update against this recurrence: a few ulp over 100 steps
    np.testing.assert_allclose(out.values["x"], x, rtol=1e-13, atol=1e-15)
    b.close()


def test_without_a_compiler_the_python_loop_runs_and_says_why(monkeypatch, tmp_path, capsys,
                                                              faulty_fmu):
    monkeypatch.setenv("FMU_SURROGATE_NATIVE_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("CC", "no-such-compiler")
    native_loop._load.cache_clear()
    try:
        assert native_loop.native_library() is None
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "slower Python loop" in err[0] and "no-such-compiler" in err[0]
        b = FmpyBackend(interface="cs")
        b.open(faulty_fmu)
        t = np.linspace(0.0, 1.0, 11)
        out = b.run({}, {"u": np.ones(11)}, t, ["x"])
        assert out.error is None and out.n_done == 11
        b.close()
    finally:
        native_loop._load.cache_clear()
