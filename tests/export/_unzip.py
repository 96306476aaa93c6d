"""Extracting an exported FMU for raw FMI calls, inside the test's temporary folder."""

from __future__ import annotations

import tempfile
from pathlib import Path


def extracted(fmu: str | Path) -> str:
    """Extract ``fmu`` into a fresh folder next to it (so it goes with the test's folder)."""
    from fmpy import extract

    return extract(str(fmu), unzipdir=tempfile.mkdtemp(prefix="unzip-", dir=Path(fmu).parent))
