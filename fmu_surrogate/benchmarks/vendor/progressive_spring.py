"""A progressive (hardening) spring with an internal state: velocity in, force out.

The elongation ``x`` (m) is the state, ``x' = v``; the force grows faster than linearly::

    F = k x (1 + (x / x_ref)²),      H = k x² / 2 + k x⁴ / (4 x_ref²)

``F · v = dH/dt`` is power into the spring (lossless).  It starts preloaded (``x0 ≠ 0``, so the
force is nonzero at ``t = 0``).  The benchmark ``progressive_spring`` is co-simulation only and
keeps ``x`` internal (not in its model description), as vendors' FMUs do;
``progressive_spring_me`` is the same model with model exchange, declaring ``x`` as its state;
``progressive_spring_cvode`` integrates ``x`` with its own SUNDIALS CVODE (BDF, reinitialised at
every communication point, :mod:`fmu_surrogate.benchmarks.cvode`) instead of fixed-step RK4.
Both solvers are exact here up to round-off (``x`` is linear in time on a step).

The same spring exported with another interface, as component libraries export a spring whose
position an importer sets (no state, the force a static law of an input):

* ``progressive_spring_displacement``: the displacement ``s`` (m) of the driven end in, the force
  ``F`` out, ``F = force(x0 + s)`` (:func:`displacement_force`): at ``s = 0`` the spring carries
  its preload.  ``F · s`` is not a power (J, not W): ``F`` is a measured output of ``s``.
* ``progressive_spring_damper``: the adaptor convention of Modelica's mechanical connectors —
  the displacement ``s`` and the velocity ``v`` (m/s) of the driven end in, the force ``f`` out —
  of the spring in parallel with the power-law damper of
  :mod:`~fmu_surrogate.benchmarks.vendor.power_damper` (coefficient ``c``),
  ``f = force(x0 + s) + c sign(v) |v|^(4/3)`` (:func:`adaptor_force`).  An importer sets ``s``
  and ``v`` as it likes (a harvest drives them independently); ``f v`` is power.
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import parameters
from fmu_surrogate.benchmarks.vendor import power_damper

__all__ = ["ADAPTOR_PARAMS", "PARAMS", "adaptor_force", "displacement_force", "elongation",
           "force", "hamiltonian"]

#: Defaults: stiffness ``k`` (N/m), reference elongation ``x_ref`` (m), initial ``x0`` (m).
PARAMS: dict[str, float] = {"k": 100.0, "x_ref": 0.05, "x0": 0.01}
#: Defaults of ``progressive_spring_damper``: the spring's and the damper's coefficient ``c``
#: (N / (m/s)^(4/3)).
ADAPTOR_PARAMS: dict[str, float] = {**PARAMS, **power_damper.PARAMS}


def _p(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("progressive_spring", PARAMS, params, positive=("k", "x_ref"))


def force(x: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """``F = k x (1 + (x / x_ref)²)`` (N) for the elongation ``x`` (m)."""
    p = _p(params)
    x = np.asarray(x, dtype=float)
    return p["k"] * x * (1.0 + (x / p["x_ref"]) ** 2)


def hamiltonian(x: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Stored energy ``k x² / 2 + k x⁴ / (4 x_ref²)`` (J)."""
    p = _p(params)
    x = np.asarray(x, dtype=float)
    return p["k"] * x**2 / 2 + p["k"] * x**4 / (4 * p["x_ref"] ** 2)


def elongation(t: np.ndarray, v: np.ndarray, params: dict[str, float] | None = None
               ) -> np.ndarray:
    """Elongation at ``t`` (N,) for the velocity ``v`` (N,) held on each sample period (exact:
    ``x`` is piecewise linear)."""
    p = _p(params)
    t = np.asarray(t, dtype=float)
    v = np.asarray(v, dtype=float)
    return p["x0"] + np.concatenate([[0.0], np.cumsum(v[:-1] * np.diff(t))])


def displacement_force(s: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """``F = force(x0 + s)`` (N) for the displacement ``s`` (m) of the driven end
    (``progressive_spring_displacement``)."""
    p = _p(params)
    return force(p["x0"] + np.asarray(s, dtype=float), p)


def adaptor_force(s: np.ndarray, v: np.ndarray, params: dict[str, float] | None = None
                  ) -> np.ndarray:
    """``f = force(x0 + s) + c sign(v) |v|^(4/3)`` (N) for the displacement ``s`` (m) and the
    velocity ``v`` (m/s) of the driven end (``progressive_spring_damper``)."""
    p = parameters("progressive_spring_damper", ADAPTOR_PARAMS, params,
                   positive=("k", "x_ref"), nonnegative=("c",))
    spring = {k: p[k] for k in PARAMS}
    return displacement_force(s, spring) + power_damper.force(v, {"c": p["c"]})
