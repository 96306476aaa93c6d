"""A linear damper with direct feedthrough: velocity in, force out, ``F = c v`` (order 0).

``F`` is the force needed to move the damper's rod at the velocity ``v``, so ``F · v = c v²`` is
power flowing *into* the damper and dissipated (the usual pH port convention).  It has no state:
the force answers the velocity within the same instant, as a vendor's damper FMU declares
through the ``dependencies`` of its output.  Bonded to the power-out port of
:mod:`~fmu_surrogate.benchmarks.vendor.free_mass` it brakes the mass: ``m v' = −c v``.
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import parameters

__all__ = ["PARAMS", "force"]

#: Default damping coefficient ``c`` (N·s/m).
PARAMS: dict[str, float] = {"c": 4.0}


def force(v: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """``F = c v`` (N) for the velocity ``v`` (m/s)."""
    p = parameters("damper", PARAMS, params, nonnegative=("c",))
    return p["c"] * np.asarray(v, dtype=float)
