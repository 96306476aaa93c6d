"""Errors of the export layer."""

from __future__ import annotations

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["ExportError"]


class ExportError(FmuSurrogateError, ValueError):
    """A surrogate that cannot be exported as it is; the message names the problem and the fix."""
