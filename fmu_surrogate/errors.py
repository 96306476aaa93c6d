"""The package's exception base.

Every error that fmu-surrogate raises on purpose derives from :class:`FmuSurrogateError`, so a
caller can catch all of them in one clause::

    import fmu_surrogate as fs

    try:
        fs.harvest("model.fmu", "out.nc")
    except fs.FmuSurrogateError as err:
        print(err)   # one line that names the problem and the fix

Each layer's own exceptions also keep subclassing the builtin they always did (``ValueError``,
``KeyError``, ``RuntimeError``), so existing ``except ValueError`` clauses still work.  This module
imports nothing of the package, so every layer may import it.

Hierarchy::

    FmuSurrogateError(Exception)
     ├── fmu.FMUError                      harvesting (archives, variables, experiments, datasets)
     │    └── ...                          see fmu_surrogate.fmu.errors
     ├── fmu.compile.FMUBuildError         also a RuntimeError; C compiler output attached
     ├── ph.StructureError                 also a ValueError; J skew, R ⪰ 0, Q ≻ 0, shapes
     ├── NotFittedError                    also sklearn's NotFittedError (ValueError, AttributeError)
     └── cli.errors.CLIError               also a ValueError; a user error on the command line
"""

from __future__ import annotations

__all__ = ["FmuSurrogateError"]


class FmuSurrogateError(Exception):
    """Base class of every error fmu-surrogate raises on purpose."""
