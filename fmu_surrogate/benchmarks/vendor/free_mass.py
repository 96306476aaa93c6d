"""Masses: a free mass with a power-out port (force in, velocity out, ``m v' = −F``), and a mass
in a housing with end stops (force in, velocity and position out).

The free mass's input ``F`` is the *reaction* force, the force the mass exerts on whatever drives it (the
cut force at the drive), so ``F · v`` is power flowing **out of** the mass through its port —
the sign convention of many vendors' mechanical FMUs (and of Modelica flanges seen from the
driving side).  The mass is lossless and marginally stable: ``H = m v² / 2``,
``dH/dt = −F v``, one eigenvalue at 0.  The benchmark ``free_inertia`` is the same FMU in
rotational units: ``F`` is then a torque (N·m), ``v`` an angular velocity (rad/s), ``m`` an
inertia (kg·m²).

As a linear pH system: ``x = p = m v``, ``J = R = 0``, ``Q = 1/m``, ``B = 1``, with the port
``(u, y) = (−F, v)`` (:func:`free_mass_ph`).

The mass in a housing with end stops, as a vendor's mass with a position sensor:

* ``end_stop_mass``: a mass ``m`` on a soft spring ``k`` with a viscous damper ``c`` to the
  housing, its position ``s`` (m, 0 at rest) limited by end stops beyond a clearance, as
  Modelica's ``Translational.Components.ElastoGap`` between the mass and the housing: beyond
  ``s_max > 0`` a contact spring ``kc`` and a contact damper ``dc`` act,
  ``f_c = kc (s − s_max)``, ``f_d = dc v`` limited to ``|f_d| ≤ f_c``, so the contact force
  ``f_c + f_d`` pushes the mass back and never pulls it in (nor pushes with more than
  ``2 f_c``), and the same below ``s_min < 0`` with the signs mirrored (:func:`contact_force`)::

      s' = v,      m v' = F − k s − c v + f_stop(s, v)

  The force ``F`` (N) on the mass in; its velocity ``v`` out (``F v`` is power into the
  component) and its position ``s`` out (a measured output); both are states, so neither
  depends on the force at the same instant.  Co-simulation only, the position and the momentum
  ``m v`` internal; the FMU integrates with its own classical Runge-Kutta 4 in equal substeps of
  at most ``max_step`` (0.5 ms) per communication step, the force held.  The contact is not
  located: a substep that crosses a stop integrates across the kink of the force law (which is
  continuous, its slope jumps by ``kc``), as vendors' fixed-step solvers do: such a substep
  errs on ``v`` by about ``(kc |v| / m) h²`` times a constant of where in it the contact
  begins, instead of ``h⁵``, so over a run with contacts the scheme converges at about order 2
  (7.3e-7 m and 1.1e-5 m/s at 0.5 ms under a chirp of 6 N into both stops).  Inside the
  clearance the component is the linear mass-spring-damper.  ``H = m v² / 2 + k s² / 2 + kc (s − s_max)₊² / 2 +
  kc (s_min − s)₊² / 2``; ``F v = dH/dt + c v² + |f_d v|`` (the limited contact damper only
  dissipates).  :func:`end_stop_simulate` is the scipy reference.
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import BenchmarkError, parameters
from fmu_surrogate.benchmarks.reference import solve_zoh
from fmu_surrogate.ph import LinearPH

__all__ = ["END_STOP_PARAMS", "PARAMS", "contact_force", "end_stop_rhs", "end_stop_simulate",
           "free_mass_ph", "hamiltonian", "rhs", "simulate"]

#: Default parameters: mass ``m`` (kg, or kg·m² for the inertia), initial velocity ``v0``.
PARAMS: dict[str, float] = {"m": 2.0, "v0": 0.0}
#: Defaults of ``end_stop_mass``: mass ``m`` (kg), spring ``k`` (N/m) and damper ``c``
#: (N·s/m) to the housing (1 Hz, damping ratio 0.16), contact spring ``kc`` (N/m, 10 k) and
#: contact damper ``dc`` (N·s/m), the stops ``s_max`` > 0 and ``s_min`` < 0 (m), the initial
#: position ``s0`` (m) and velocity ``v0`` (m/s).  In contact the stiffness is ``k + kc``:
#: 21 rad/s (3.3 Hz).
END_STOP_PARAMS: dict[str, float] = {"m": 1.0, "k": 40.0, "c": 2.0, "kc": 400.0, "dc": 0.0,
                                     "s_max": 0.05, "s_min": -0.05, "s0": 0.0, "v0": 0.0}


def _p(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("free_mass", PARAMS, params, positive=("m",))


def rhs(x: np.ndarray, F: float, params: dict[str, float] | None = None) -> list[float]:
    """``v' = −F / m`` for the state ``x = (v,)``."""
    return _rhs(x, F, _p(params))


def _rhs(x: np.ndarray, F: float, p: dict[str, float]) -> list[float]:
    return [-float(F) / p["m"]]


def hamiltonian(v: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Kinetic energy ``m v² / 2`` (J)."""
    return 0.5 * _p(params)["m"] * np.asarray(v, dtype=float) ** 2


def simulate(t: np.ndarray, F: np.ndarray, params: dict[str, float] | None = None) -> np.ndarray:
    """Velocity at ``t`` (N,) for the reaction force ``F`` (N,) held on each sample period."""
    p = _p(params)
    return solve_zoh(lambda x, f: _rhs(x, f, p), t, F, [p["v0"]])[:, 0]


def free_mass_ph(m: float = PARAMS["m"]) -> LinearPH:
    """The mass as :class:`~fmu_surrogate.ph.LinearPH`: ``p' = u``, ``y = p / m`` with ``u = −F``."""
    m = _p({"m": m})["m"]
    return LinearPH(np.zeros((1, 1)), np.zeros((1, 1)), [[1.0 / m]], [[1.0]])


def _stops(params: dict[str, float] | None) -> dict[str, float]:
    p = parameters("end_stop_mass", END_STOP_PARAMS, params, positive=("m", "s_max"),
                   nonnegative=("k", "c", "kc", "dc"))
    if not p["s_min"] < 0:
        raise BenchmarkError(f"end_stop_mass parameter s_min = {p['s_min']} must be < 0.")
    return p


def _contact(s: np.ndarray, v: np.ndarray, p: dict[str, float]) -> np.ndarray:
    """Force of the stops on the mass along ``s`` (N): ElastoGap's law at each stop."""
    upper = p["kc"] * np.maximum(s - p["s_max"], 0.0)  # spring force of each stop, >= 0
    lower = p["kc"] * np.maximum(p["s_min"] - s, 0.0)
    # the damper's force limited by the spring's (|f_d| <= f_c): zero out of contact, and the
    # stop's force f_c + f_d between 0 and 2 f_c (it never pulls)
    return (-(upper + np.clip(p["dc"] * v, -upper, upper))
            + (lower + np.clip(-p["dc"] * v, -lower, lower)))


def contact_force(s: np.ndarray, v: np.ndarray, params: dict[str, float] | None = None
                  ) -> np.ndarray:
    """Force of the end stops on the mass of ``end_stop_mass`` (N, along ``s``).

    Parameters
    ----------
    s : array_like
        Position of the mass (m).
    v : array_like
        Velocity of the mass (m/s), broadcast with ``s``.
    params : dict, optional
        Overrides of :data:`END_STOP_PARAMS`.

    Returns
    -------
    ndarray
        ``−(f_c + f_d)`` beyond ``s_max`` (``f_c = kc (s − s_max)``, ``f_d = dc v`` limited to
        ``[−f_c, f_c]``), ``+(f_c + f_d)`` below ``s_min`` (``f_c = kc (s_min − s)``,
        ``f_d = −dc v`` limited), 0 in between: never toward the stop.
    """
    p = _stops(params)
    return _contact(np.asarray(s, dtype=float), np.asarray(v, dtype=float), p)


def _end_stop_rhs(X: np.ndarray, F: float, p: dict[str, float]) -> list:
    s, v = X
    return [v, (F - p["k"] * s - p["c"] * v + _contact(s, v, p)) / p["m"]]


def end_stop_rhs(X: np.ndarray, F: float, params: dict[str, float] | None = None
                 ) -> list[float]:
    """``(s', v')`` of ``end_stop_mass`` for the state ``X = (s, v)`` and the force ``F``.

    Parameters
    ----------
    X : array_like, shape (2,)
        Position ``s`` (m) and velocity ``v`` (m/s).
    F : float
        Force on the mass (N).
    params : dict, optional
        Overrides of :data:`END_STOP_PARAMS`.

    Returns
    -------
    list of float
        ``[v, (F − k s − c v + contact_force(s, v)) / m]``.
    """
    X = np.asarray(X, dtype=float)
    return [float(d) for d in _end_stop_rhs(X, float(F), _stops(params))]


def end_stop_simulate(t: np.ndarray, F: np.ndarray, params: dict[str, float] | None = None
                      ) -> np.ndarray:
    """States ``(s, v)`` of ``end_stop_mass`` at ``t`` (N, 2) for the force ``F`` (N,) held on
    each sample period, from ``(s0, v0)``.

    scipy's DOP853 at ``rtol`` 1e-12, ``atol`` 1e-14 on each sample period: its error control
    shrinks the step about a contact's kink, so the reference resolves it (the FMU's RK4 does
    not locate it).

    Parameters
    ----------
    t : array_like, shape (N,)
        Increasing sample times.
    F : array_like, shape (N,)
        Force samples (the last one is not used).
    params : dict, optional
        Overrides of :data:`END_STOP_PARAMS`.

    Returns
    -------
    ndarray, shape (N, 2)
    """
    p = _stops(params)
    return solve_zoh(lambda X, f: _end_stop_rhs(X, f, p), t, F, [p["s0"], p["v0"]])
