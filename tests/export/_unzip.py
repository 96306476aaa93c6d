"""Extracting an exported FMU for raw FMI calls, inside the test's temporary folder, and an
instance of it for those calls."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any


def extracted(fmu: str | Path) -> str:
    """Extract ``fmu`` into a fresh folder next to it (so it goes with the test's folder)."""
    from fmpy import extract

    return extract(str(fmu), unzipdir=tempfile.mkdtemp(prefix="unzip-", dir=Path(fmu).parent))


def cs_slave(fmu: str | Path, name: str = "s") -> tuple[Any, dict[str, int]]:
    """An FMI 2 co-simulation instance of ``fmu`` (extracted as :func:`extracted`), instantiated
    and set up at time 0, and the value references by variable name."""
    from fmpy import read_model_description
    from fmpy.fmi2 import FMU2Slave

    md = read_model_description(str(fmu))
    slave = FMU2Slave(guid=md.guid, unzipDirectory=extracted(fmu),
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
    slave.instantiate()
    slave.setupExperiment(startTime=0.0)
    return slave, {v.name: v.valueReference for v in md.modelVariables}
