"""The surrogate an exporter starts from: a ``ph`` system or its JSON file, checked once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from fmu_surrogate.export.expressions.effort import ExportError

__all__ = ["check_finite", "load_surrogate"]


def load_surrogate(surrogate: Any) -> tuple[Any, str | None]:
    """The pH system to export, and the stem of its file (``None`` for an object).

    Parameters
    ----------
    surrogate : PHDAE, LinearPH, PortedSystem or path
        A pH system, a drop-in surrogate (a pH core with its port wiring), or the path of a
        surrogate JSON file (:func:`fmu_surrogate.ph.save`).

    Returns
    -------
    tuple
        ``(surrogate, stem)``.

    Raises
    ------
    ExportError
        Neither a pH system nor a path.
    SurrogateFileError
        The file cannot be read.
    """
    from fmu_surrogate.ph import PHDAE, load
    from fmu_surrogate.ph.ports import PortedSystem

    if isinstance(surrogate, (str, os.PathLike)):
        return load(surrogate), Path(surrogate).stem
    if not isinstance(surrogate, (PHDAE, PortedSystem)):
        raise ExportError(f"cannot export a {type(surrogate).__name__}: pass a pH system "
                          f"(LinearPH, PHDAE), a PortedSystem or the path of a surrogate JSON "
                          f"file.")
    return surrogate, None


def check_finite(system: Any) -> None:
    """Refuse a system whose matrices (``E, J, R, B``, ``P, S, N`` and a linear system's ``Q``)
    are not finite.

    Parameters
    ----------
    system : PHDAE or LinearPH
        The surrogate.

    Raises
    ------
    ExportError
        Naming the first matrix with a NaN or infinite entry.
    """
    for key in ("E", "J", "R", "B", "Q", "P", "S", "N"):
        a = getattr(system, key, None)
        if a is not None and not np.all(np.isfinite(np.asarray(a, dtype=float))):
            raise ExportError(f"the surrogate's matrix {key} contains NaN or Inf; an exported "
                              f"surrogate needs finite parameters: re-identify or repair it.")
