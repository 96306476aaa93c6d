"""Fixtures of the ``fmu`` tests: the purpose-built faulty FMUs (FMI 2 and 3) and broken archives."""

from __future__ import annotations

from pathlib import Path

import pytest

from fmu_surrogate.testing.fmus import build_faulty, build_faulty3, make_broken


@pytest.fixture(scope="session")
def faulty_fmu(tmp_path_factory) -> Path:
    """Path of the compiled faulty FMU (FMI 2.0, CS and ME)."""
    return build_faulty(tmp_path_factory.getbasetemp() / "faulty-fmu")


@pytest.fixture(scope="session")
def faulty3_fmu(tmp_path_factory) -> Path:
    """Path of the compiled FMI 3.0 faulty FMU."""
    return build_faulty3(tmp_path_factory.getbasetemp() / "faulty-fmu")


@pytest.fixture(scope="session")
def broken_fmus(faulty_fmu, tmp_path_factory) -> dict[str, Path]:
    """``{"truncated" | "no_binary" | "broken_xml": path}``, all derived from the faulty FMU."""
    d = tmp_path_factory.mktemp("broken-fmus")
    return {k: make_broken(faulty_fmu, k, d / f"{k}.fmu")
            for k in ("truncated", "no_binary", "broken_xml")}
