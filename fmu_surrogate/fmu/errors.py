"""Exceptions of the ``fmu`` layer.

fmpy has no common exception base: a corrupt archive raises ``zipfile.BadZipFile`` or
``zlib.error``, a broken ``modelDescription.xml`` raises ``KeyError`` or lxml errors, a missing
binary raises a plain ``Exception`` (docs/design.md §8).  :mod:`fmu_surrogate.fmu.model.loading` maps those to
the classes below.  Every message names the problem *and* the fix, so that the CLI can print it as
one line (``fmu-surrogate: error: ...``).

Hierarchy::

    FMUError(FmuSurrogateError)
     ├── NotAnFMUError            path missing, not a zip archive, corrupt archive
     ├── ModelDescriptionError    modelDescription.xml missing or broken
     ├── NoBinaryError            no shared library for this platform (the XML is still readable)
     ├── UnknownVariableError     also a KeyError; suggests close matches
     ├── ExperimentError          also a ValueError; bad start/stop/step, signal vs experiment
     ├── SignalError              also a ValueError; bad signal parameters
     └── DatasetError             also a ValueError; not our dataset format / unreadable version
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from fmu_surrogate.errors import FmuSurrogateError

__all__ = [
    "DatasetError",
    "ExperimentError",
    "FMUError",
    "ModelDescriptionError",
    "NoBinaryError",
    "NotAnFMUError",
    "SignalError",
    "UnknownVariableError",
]


class FMUError(FmuSurrogateError):
    """Base class of all errors raised by :mod:`fmu_surrogate.fmu`."""


class NotAnFMUError(FMUError):
    """The path does not exist, is not a zip archive, or the archive is corrupt."""


class ModelDescriptionError(FMUError):
    """``modelDescription.xml`` is missing from the archive or cannot be parsed."""


class NoBinaryError(FMUError):
    """The FMU has no binary for this platform (its model description is still readable).

    Parameters
    ----------
    message : str
        The full message.
    platforms : iterable of str
        The platforms the FMU does ship binaries for.
    """

    def __init__(self, message: str, platforms: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.platforms = tuple(platforms)


class UnknownVariableError(FMUError, KeyError):
    """A variable name that the FMU does not have.

    The message lists the closest names (difflib) so that typos are easy to fix.

    Parameters
    ----------
    name : str
        The unknown name.
    known : iterable of str
        The names that exist.
    what : str
        What kind of name was expected, e.g. ``"variable"``, ``"input"``, ``"parameter"``.
    model : str
        Model name for the message (optional).
    hint : str
        Extra sentence inserted before the pointer to ``fmu-surrogate info`` (optional).
    """

    def __init__(
        self, name: str, known: Iterable[str] = (), what: str = "variable", model: str = "",
        hint: str = "",
    ) -> None:
        known = list(known)
        self.name = name
        self.suggestions = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        where = f" in {model}" if model else ""
        msg = f"unknown {what} {name!r}{where}"
        if self.suggestions:
            msg += "; did you mean " + " or ".join(repr(s) for s in self.suggestions) + "?"
        elif known:
            shown = ", ".join(known[:8]) + (", ..." if len(known) > 8 else "")
            msg += f"; the {what}s are: {shown}"
        else:
            msg += f"; the model has no {what}s"
        if hint:
            msg += f"; {hint}"
        msg += " (list all names with `fmu-surrogate info MODEL.fmu`)."
        super().__init__(msg)

    def __str__(self) -> str:  # KeyError would otherwise print the message quoted
        return str(self.args[0])


class ExperimentError(FMUError, ValueError):
    """Bad experiment settings: start/stop time, step, or a signal that does not fit."""


class SignalError(FMUError, ValueError):
    """Bad input-signal parameters (non-finite values, negative frequencies, unsorted times...)."""


class DatasetError(FMUError, ValueError):
    """A file that is not an fmu-surrogate dataset, or a dataset version this version cannot read."""
