"""Lazy re-exports: a package's public names, imported on first access.

A package lists its names in a table and hands it to :func:`lazy_exports`::

    _LAZY = {"harvest": "fmu_surrogate.fmu.campaigns.campaign",   # the attribute of that name
             "plans": "fmu_surrogate.fmu.campaigns.plans:"}       # the module itself
    __getattr__, __dir__ = lazy_exports(__name__, _LAZY)

so importing the package costs nothing beyond the table, and heavy dependencies (torch, xarray)
load only with the module that needs them.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Module-level ``__getattr__`` and ``__dir__`` resolving the names of ``table`` on first use.

    Parameters
    ----------
    package : str
        Name of the package whose namespace gets the names (its ``__name__``).
    table : Mapping[str, str]
        Public name -> full module path.  A path ending in ``":"`` stands for the module itself;
        otherwise the name is the attribute of the same name in that module.

    Returns
    -------
    getattr_ : callable
        ``__getattr__(name)``: imports the module, stores the value in the package namespace (later
        look-ups do not come back here) and returns it; ``AttributeError`` for a name not in the
        table.
    dir_ : callable
        ``__dir__()``: the package's own names and the lazy ones, sorted.
    """

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if target.endswith(":"):
            value = importlib.import_module(target[:-1])
        else:
            value = getattr(importlib.import_module(target), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
