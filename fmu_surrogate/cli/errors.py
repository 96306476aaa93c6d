"""The command line's one error: a bad option or argument, reported as one line (exit status 2).

:func:`fmu_surrogate.cli.main.main` turns every :class:`~fmu_surrogate.errors.FmuSurrogateError`
(this one, and those the library raises) into ``fmu-surrogate: error: MESSAGE`` on stderr.
"""

from __future__ import annotations

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["CLIError"]


class CLIError(FmuSurrogateError, ValueError):
    """A user error on the command line; the message names the option and the fix."""
