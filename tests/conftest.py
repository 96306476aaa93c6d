"""Shared pytest fixtures for the whole test suite."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def benchmark_fmus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """All benchmark FMUs, ``name -> Path`` of the ``.fmu`` (rc_network, pendulum, msd_chain,
    cauer, duffing), built once per session into the FMU cache
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
