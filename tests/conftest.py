"""Shared pytest fixtures for the whole test suite."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fmu_surrogate.couple.example import example_system
from fmu_surrogate.testing.fmus import build_faulty, build_faulty3, make_broken
from fmu_surrogate.testing.typed import build_arrays3, build_typed


def pytest_configure(config: pytest.Config) -> None:
    """With pytest-xdist's workers (``-n``, on by default: one per core), each worker's BLAS and
    PyTorch run on one thread: a worker's two threads on a machine whose cores all run workers
    spin against each other (the GP tests took minutes).  The workers inherit the variables; an
    explicit setting wins."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")


#: Test files that share an expensive session fixture, run on the worker of another file:
#: file -> the file whose worker it joins (``--dist loadfile`` keeps each file on one worker)
SHARED_WORKER = {"tests/identify/nonlinear/test_sensor_ports.py":
                 "tests/identify/test_order_search.py"}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``--dist loadfile`` with the files of :data:`SHARED_WORKER` on one worker: the mass on a
    cubic spring is identified once (``spring_force_choice``, 150 s on this project's 2-core
    machine) instead of once per worker."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedFiles(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SHARED_WORKER.get(scope, scope)

    return SharedFiles(config, log)


@pytest.fixture(scope="session")
def benchmark_fmus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """All benchmark FMUs, ``name -> Path`` of the ``.fmu`` (every key of
    ``fmu_surrogate.benchmarks.build.BENCHMARKS``), built once per session into the FMU cache
    (``$FMU_SURROGATE_CACHE`` or ``~/.cache/fmu-surrogate/fmus``) so that reruns only check the
    build hashes.  Falls back to a temporary folder when the cache is not writable.

    Treat the files as read-only: copy one before modifying it.
    """
    from fmu_surrogate.benchmarks.build import build_benchmarks, default_cache_dir

    cache = default_cache_dir()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        writable = os.access(cache, os.W_OK)
    except OSError:
        writable = False
    if not writable:
        cache = tmp_path_factory.mktemp("benchmark-fmus")
    return build_benchmarks(cache)
pytest_plugins = ["pytester"]


@pytest.fixture
def private_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder that is this process's and its children's temporary directory
    (``tempfile.tempdir`` and ``TMPDIR``), outside any harvest: what is left in it is a leak."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.delenv("FMU_SURROGATE_TMP", raising=False)
    return tmp


# the purpose-built faulty FMUs (FMI 2 and 3) and broken archives
@pytest.fixture(scope="session")
def faulty_fmu(tmp_path_factory) -> Path:
    """Path of the compiled faulty FMU (FMI 2.0, CS and ME)."""
    return build_faulty(tmp_path_factory.getbasetemp() / "faulty-fmu")


@pytest.fixture(scope="session")
def faulty3_fmu(tmp_path_factory) -> Path:
    """Path of the compiled FMI 3.0 faulty FMU."""
    return build_faulty3(tmp_path_factory.getbasetemp() / "faulty-fmu")


@pytest.fixture(scope="session")
def typed_fmu(tmp_path_factory) -> Path:
    """Path of the compiled FMI 2.0 FMU with Real, Integer, Enumeration, Boolean and String
    inputs and outputs (``fmu_surrogate.testing.typed``)."""
    return build_typed(tmp_path_factory.getbasetemp() / "typed-fmu")


@pytest.fixture(scope="session")
def arrays3_fmu(tmp_path_factory) -> Path:
    """Path of the compiled FMI 3.0 state-space FMU with array variables
    (``fmu_surrogate.testing.typed``)."""
    return build_arrays3(tmp_path_factory.getbasetemp() / "typed-fmu")


@pytest.fixture(scope="session")
def broken_fmus(faulty_fmu, tmp_path_factory) -> dict[str, Path]:
    """``{"truncated" | "no_binary" | "broken_xml": path}``, all derived from the faulty FMU."""
    d = tmp_path_factory.mktemp("broken-fmus")
    return {k: make_broken(faulty_fmu, k, d / f"{k}.fmu")
            for k in ("truncated", "no_binary", "broken_xml")}


# coupled systems
@pytest.fixture(scope="session")
def system_factory():
    """A fresh chain + spring example system per call (components are mutable)."""
    return lambda **kw: example_system(**kw)


def _duffing_experiment(seed, std, v0=0.0, f_high=5.0):
    """The Duffing benchmark's oscillator ``y'' + 2.151 y' + 10 y + 1e5 y³ = u`` (docs/design.md
    §5) under the harvest's band-limited noise (below ``f_high`` Hz, standard deviation ``std``,
    zero-order hold, 10 s at 10 ms) from ``y = 0, y' = v0``: ``(t, u (K, 1), (y, y', y'') (K, 3))``, one
    scipy solve per hold interval (rtol 1e-10)."""
    from fmu_surrogate.fmu.signals.excitation import BandLimitedNoise

    t = np.arange(0.0, 10.0 + 1e-9, 0.01)
    u = BandLimitedNoise(f_high=f_high, duration=10.0, std=std, seed=seed)(t)

    def rhs(s, x):
        return [x[1], u[min(int(s / 0.01 + 1e-9), t.size - 1)] - 2.151 * x[1] - 10.0 * x[0]
                - 1e5 * x[0] ** 3]

    x = np.empty((t.size, 2))
    x[0] = (0.0, v0)
    for k in range(t.size - 1):
        x[k + 1] = solve_ivp(rhs, (t[k], t[k + 1]), x[k], rtol=1e-10, atol=1e-12).y[:, -1]
    a = u - 2.151 * x[:, 1] - 10.0 * x[:, 0] - 1e5 * x[:, 0] ** 3
    return t, u[:, None], np.column_stack([x, a])


@pytest.fixture(scope="session")
def duffing_experiment():
    """``duffing_experiment(seed, std, v0=0.0, f_high=5.0) -> (t, u, y)``: the Duffing
    oscillator with displacement, velocity and acceleration out (no units)."""
    return _duffing_experiment


def _mass_experiment(seed, T=20.0, dt=0.02, c=0.5, k1=1.0, k3=2.0, spring_force=False):
    """A random multisine force (0.05–0.6 Hz, peak ≈ 4) on the unit mass, from rest; with
    ``spring_force`` the spring's force ``k1 q + k3 q³`` as a second output column."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, T + dt / 2, dt)
    f, ph, a = rng.uniform(0.05, 0.6, 6), rng.uniform(0, 2 * np.pi, 6), rng.uniform(0.5, 1, 6)

    def F(s):
        return 4.0 * (np.sin(2 * np.pi * np.multiply.outer(s, f) + ph) @ a) / a.sum()

    def rhs(s, x):
        q, v = x
        return [v, F(s) - c * np.sign(v) * abs(v) ** (4 / 3) - k1 * q - k3 * q ** 3]

    sol = solve_ivp(rhs, (0, T), [0.0, 0.0], t_eval=t, rtol=1e-10, atol=1e-12, method="DOP853")
    q, v = sol.y
    y = np.column_stack([v, k1 * q + k3 * q ** 3]) if spring_force else v[:, None]
    return t, F(t)[:, None], y


@pytest.fixture(scope="session")
def mass_experiment():
    """``mass_experiment(seed, T=20.0, dt=0.02, c=0.5, k1=1.0, k3=2.0, spring_force=False) ->
    (t, u, y)``: the unit mass with the power-law damper ``c sign(v)|v|^(4/3)`` and the spring
    ``k1 q + k3 q³``, driven from rest by a random multisine force, velocity out (and the
    spring's force; scipy, DOP853, rtol 1e-10)."""
    return _mass_experiment


@pytest.fixture(autouse=True)
def _live_fmpy_logger():
    """After every test, point fmpy's C logging proxy back at a live logger: a test that gave
    ``fmpy.simulate_fmu`` its own ``logger=`` leaves the proxy's one global pointer at a callback
    that is freed with the test (fmpy's design), and the next FMU logging through fmpy's default
    callbacks would crash the test process."""
    yield
    import sys

    if "fmpy.logging" in sys.modules:
        from fmu_surrogate.fmu.backends.fmpy_instance import restore_logger_proxy

        restore_logger_proxy()
