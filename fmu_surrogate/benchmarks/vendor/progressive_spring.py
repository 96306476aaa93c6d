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

The spring with a mass on it, as a vendor's mass component with an acceleration sensor:

* ``sprung_mass_sensor``: a mass ``m`` on the spring (elongation ``x``, no preload by default)
  with the power-law damper to ground, the force ``F`` (N) on the mass in; its velocity ``v``
  out (the power port: ``F v`` is power into the component) and its acceleration ``a`` out (a
  measured output), ``m a = F − force(x) − c sign(v) |v|^(4/3)``, ``x' = v``
  (:func:`sprung_mass_rhs`).  ``a`` is computed from the current state and the current force,
  so it follows a force set at a communication point at once (a direct feedthrough of ``F``);
  ``v`` is a state.  Co-simulation only, ``x`` and the momentum ``m v`` internal, fixed-step
  Runge-Kutta 4.  ``H = m v² / 2 + k x² / 2 + k x⁴ / (4 x_ref²)``;
  ``F v = dH/dt + c |v|^(7/3)``.
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import parameters
from fmu_surrogate.benchmarks.reference import solve_zoh
from fmu_surrogate.benchmarks.vendor import power_damper

__all__ = ["ADAPTOR_PARAMS", "PARAMS", "SPRUNG_MASS_PARAMS", "adaptor_force",
           "displacement_force", "elongation", "force", "hamiltonian", "sprung_mass_acceleration",
           "sprung_mass_rhs", "sprung_mass_simulate"]

#: Defaults: stiffness ``k`` (N/m), reference elongation ``x_ref`` (m), initial ``x0`` (m).
PARAMS: dict[str, float] = {"k": 100.0, "x_ref": 0.05, "x0": 0.01}
#: Defaults of ``progressive_spring_damper``: the spring's and the damper's coefficient ``c``
#: (N / (m/s)^(4/3)).
ADAPTOR_PARAMS: dict[str, float] = {**PARAMS, **power_damper.PARAMS}
#: Defaults of ``sprung_mass_sensor``: mass ``m`` (kg), stiffness ``k`` (N/m), reference
#: elongation ``x_ref`` (m), damper coefficient ``c`` (N / (m/s)^(4/3)), initial elongation
#: ``x0`` (m) and velocity ``v0`` (m/s).  Undamped, the mass swings at sqrt(k / m) = 10 rad/s
#: for small x and at 36 rad/s about x = 2 x_ref (stiffness 13 k there).
SPRUNG_MASS_PARAMS: dict[str, float] = {"m": 2.0, "k": 200.0, "x_ref": 0.05, "c": 20.0,
                                        "x0": 0.0, "v0": 0.0}


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


def _sprung(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("sprung_mass_sensor", SPRUNG_MASS_PARAMS, params,
                      positive=("m", "k", "x_ref"), nonnegative=("c",))


def _sprung_rhs(X: np.ndarray, F: np.ndarray | float, p: dict[str, float]) -> list[np.ndarray]:
    """``(x', v')`` for states ``X = (x, v)`` of shape (2,) or (2, N) (broadcasting)."""
    x, v = X
    spring = {k: p[k] for k in ("k", "x_ref")}
    return [v, (F - force(x, spring) - power_damper.force(v, {"c": p["c"]})) / p["m"]]


def sprung_mass_rhs(X: np.ndarray, F: float, params: dict[str, float] | None = None
                    ) -> list[float]:
    """``(x', v')`` of ``sprung_mass_sensor`` for the state ``X = (x, v)`` and the force ``F``.

    Parameters
    ----------
    X : array_like, shape (2,)
        Elongation ``x`` (m) and velocity ``v`` (m/s).
    F : float
        Force on the mass (N).
    params : dict, optional
        Overrides of :data:`SPRUNG_MASS_PARAMS`.

    Returns
    -------
    list of float
        ``[v, (F − k x (1 + (x / x_ref)²) − c sign(v) |v|^(4/3)) / m]``.
    """
    return [float(d) for d in _sprung_rhs(np.asarray(X, dtype=float), F, _sprung(params))]


def sprung_mass_acceleration(X: np.ndarray, F: np.ndarray,
                             params: dict[str, float] | None = None) -> np.ndarray:
    """Acceleration ``a`` (m/s²) of ``sprung_mass_sensor`` for states ``X`` (N, 2) of
    ``(x, v)`` and the forces ``F`` (N,) acting at the same instants."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    return np.asarray(_sprung_rhs(X.T, np.asarray(F, dtype=float), _sprung(params))[1])


def sprung_mass_simulate(t: np.ndarray, F: np.ndarray, params: dict[str, float] | None = None
                         ) -> np.ndarray:
    """States ``(x, v)`` of ``sprung_mass_sensor`` at ``t`` (N, 2) for the force ``F`` (N,) held
    on each sample period, from ``(x0, v0)`` (scipy's DOP853 at tight tolerances).

    Parameters
    ----------
    t : array_like, shape (N,)
        Increasing sample times.
    F : array_like, shape (N,)
        Force samples (the last one is not used).
    params : dict, optional
        Overrides of :data:`SPRUNG_MASS_PARAMS`.

    Returns
    -------
    ndarray, shape (N, 2)
    """
    p = _sprung(params)
    return solve_zoh(lambda X, f: _sprung_rhs(X, f, p), t, F, [p["x0"], p["v0"]])
