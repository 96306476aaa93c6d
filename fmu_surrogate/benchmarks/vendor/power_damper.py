"""A power-law damper with direct feedthrough: ``F = c sign(v) |v|^(4/3)`` (order 0, nonlinear).

Velocity in, force out; ``F · v = c |v|^(7/3) ≥ 0`` is power into the damper (dissipated).  Like
many vendors' component FMUs it is co-simulation only and declares that its force follows the
velocity within the instant (the ``dependencies`` of its output).

``power_damper_cvode`` is the same FMU with its own solver as OpenModelica's co-simulation FMUs
carry: without a state of its own, it integrates a dummy state (derivative 0) with SUNDIALS
CVODE at every communication step all the same (:mod:`fmu_surrogate.benchmarks.cvode`); its
outputs are those of ``power_damper`` exactly.
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import parameters

__all__ = ["EXPONENT", "PARAMS", "force"]

#: Default coefficient ``c`` (N / (m/s)^(4/3)).
PARAMS: dict[str, float] = {"c": 4.0}
#: The damping law's exponent.
EXPONENT = 4.0 / 3.0


def force(v: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """``F = c sign(v) |v|^(4/3)`` (N) for the velocity ``v`` (m/s)."""
    p = parameters("power_damper", PARAMS, params, nonnegative=("c",))
    v = np.asarray(v, dtype=float)
    return p["c"] * np.sign(v) * np.abs(v) ** EXPONENT
