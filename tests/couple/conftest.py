"""Fixtures of the coupling tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import tomllib

import fmu_surrogate.benchmarks
from fmu_surrogate.couple.toml_form import read_toml

SYSTEMS = Path(fmu_surrogate.benchmarks.__file__).parent / "systems"


@pytest.fixture
def benchmark_system(benchmark_fmus, tmp_path):
    """``benchmark_system(name)``: ``benchmarks/systems/<name>.toml`` read from a copy next to
    links to the benchmark FMUs it names."""

    def load(name: str):
        path = SYSTEMS / f"{name}.toml"
        shutil.copy(path, tmp_path)
        for c in tomllib.loads(path.read_text(encoding="utf-8"))["components"].values():
            (tmp_path / c["fmu"]).symlink_to(benchmark_fmus[Path(c["fmu"]).stem])
        return read_toml(tmp_path / path.name)

    return load
