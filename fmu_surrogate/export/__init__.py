"""Export layer: pH surrogates as standalone FMUs (:func:`export_fmu`) and Modelica models
(:func:`export_modelica`, from :mod:`fmu_surrogate.export.modelica`, imported on first use).
"""

from __future__ import annotations

import importlib
from typing import Any

from fmu_surrogate.export.expressions import ExportError
from fmu_surrogate.export.fmu_export import export_fmu

__all__ = ["ExportError", "export_fmu", "export_modelica"]


def __getattr__(name: str) -> Any:
    if name == "export_modelica":
        return importlib.import_module("fmu_surrogate.export.modelica").export_modelica
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
