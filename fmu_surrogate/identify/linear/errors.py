"""The error of linear pH identification: a refusal that names its cause and the fix."""

from __future__ import annotations

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["LinearIdentificationError"]


class LinearIdentificationError(FmuSurrogateError, ValueError):
    """The data or the settings do not admit the requested linear pH model.

    The message names the cause — port orientation, a model that is not passive, too little
    excitation, the order — and the setting (or CLI option) that fixes it.
    """
