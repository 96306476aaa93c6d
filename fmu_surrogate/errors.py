"""The package's exception family.

Every error that fmu-surrogate raises on purpose derives from :class:`FmuSurrogateError`, so a
caller can catch all of them in one clause::

    import fmu_surrogate as fs

    try:
        fs.harvest("model.fmu", "out.nc")
    except fs.FmuSurrogateError as err:
        print(err)   # one line that names the problem and the fix

Each error also subclasses the builtin it always was (``ValueError``, ``TypeError``,
``KeyError``, ``RuntimeError``, ...), so existing ``except ValueError`` clauses still work.  A
layer with errors of its own (``fmu.errors``, ``ph.StructureError``, ...) derives them from
:class:`FmuSurrogateError` too; everywhere else the generic members below name the kind of
problem.  This module imports nothing of the package, so every layer may import it.

Hierarchy::

    FmuSurrogateError(Exception)
     ├── InvalidInputError                 also a ValueError: a value the tool cannot use
     ├── InvalidTypeError                  also a TypeError: an argument of the wrong type
     ├── NotFoundError                     also a KeyError: a name or run that does not exist
     ├── MissingFileError                  also a FileNotFoundError: a path that does not exist
     ├── UnavailableError                  also an AttributeError: a part the object does not have
     ├── ComputationError                  also a RuntimeError: a computation that failed
     ├── NumericalError                    also a FloatingPointError: non-finite or indefinite
     │                                     numbers met while fitting
     ├── fmu.FMUError                      harvesting (archives, variables, experiments, datasets)
     │    └── ...                          see fmu_surrogate.fmu.errors
     ├── fmu.compile.FMUBuildError         also a RuntimeError; C compiler output attached
     ├── ph.StructureError                 also a ValueError; J skew, R ⪰ 0, Q ≻ 0, shapes
     ├── NotFittedError                    also sklearn's NotFittedError (ValueError,
     │                                     AttributeError)
     └── cli.errors.CLIError               also a ValueError; a user error on the command line

Raising a bare builtin (``raise ValueError(...)``) in the package is a bug that
``tests/test_errors.py`` reports; only control flow that never reaches a user (abstract
methods, internal invariants, probes caught by their caller) keeps the builtins.
"""

from __future__ import annotations

__all__ = [
    "ComputationError",
    "FmuSurrogateError",
    "InvalidInputError",
    "InvalidTypeError",
    "MissingFileError",
    "NotFoundError",
    "NumericalError",
    "UnavailableError",
]


class FmuSurrogateError(Exception):
    """Base class of every error fmu-surrogate raises on purpose."""


class InvalidInputError(FmuSurrogateError, ValueError):
    """A value the tool cannot use: out of range, wrong shape, non-finite, unknown option."""


class InvalidTypeError(FmuSurrogateError, TypeError):
    """An argument of the wrong type, or a call that lacks a required argument."""


class NotFoundError(FmuSurrogateError, KeyError):
    """A name, key or run that does not exist; the message lists what does."""

    def __str__(self) -> str:  # KeyError would otherwise print the message quoted
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


class MissingFileError(FmuSurrogateError, FileNotFoundError):
    """A path that does not exist; the message says how such a file is made."""


class UnavailableError(FmuSurrogateError, AttributeError):
    """A part the object does not have (e.g. the Hamiltonian of an effort learned without one)."""


class ComputationError(FmuSurrogateError, RuntimeError):
    """A computation that failed (a reference solver, a worker process); the message says why."""


class NumericalError(FmuSurrogateError, FloatingPointError):
    """Non-finite or indefinite numbers met while fitting; the message names what to change."""
