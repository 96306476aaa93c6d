"""Export layer: pH surrogates as standalone FMUs (:func:`export_fmu`) and Modelica models
(:func:`export_modelica`).  Names are imported on first use, so the command line stays fast and
:func:`export_modelica` comes from :mod:`fmu_surrogate.export.modelica` when it is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fmu_surrogate.lazy import lazy_exports

__all__ = ["ExportError", "export_fmu", "export_modelica"]

_LAZY = {
    "ExportError": "fmu_surrogate.export.expressions.effort",
    "export_fmu": "fmu_surrogate.export.fmi.fmu_export",
    "export_modelica": "fmu_surrogate.export.modelica",
}

if TYPE_CHECKING:  # pragma: no cover
    from fmu_surrogate.export.expressions.effort import ExportError as ExportError
    from fmu_surrogate.export.fmi.fmu_export import export_fmu as export_fmu


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
