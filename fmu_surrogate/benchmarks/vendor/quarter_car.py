"""Quarter-car suspension: two masses on a suspension spring-damper and a tyre spring, in gravity.

Vertical positions are absolute (the road is at 0, up is positive): ``zs`` of the sprung mass
``ms`` (a quarter of the body), ``zu`` of the unsprung mass ``mu`` (wheel, hub).  The tyre is a
linear spring of stiffness ``kt`` and free radius ``lt0``; the suspension a spring ``ks`` of free
length ``ls0`` in parallel with a damper ``cs``.  The input ``F`` is an external force on the
body (an active actuator or an added damper), positive up::

    ms zs'' = ks (ls0 − zs + zu) + cs (vu − vs) − ms g + F
    mu zu'' = kt (lt0 − zu) − ks (ls0 − zs + zu) − cs (vu − vs) − mu g

State ``x = (zs, vs, zu, vu)``.  Like vendors' FMUs the part is preloaded and does not start
at rest: by default it is released with both springs at their free length, so at ``t = 0`` the
positions are ``lt0 + ls0`` and ``lt0`` and the body accelerates at ``−g``; it then settles to
the static equilibrium :func:`equilibrium` (the springs carry the weight).  The interface is not
a set of power pairs: force in; positions, velocities and the body acceleration out (the
acceleration responds to ``F`` without delay).  The FMU integrates with its own fixed-step
Runge-Kutta 4 scheme (``n_substeps`` per communication step).  The tyre is linear (it would pull
the wheel down once ``zu > lt0``: lift-off is not modelled).
"""

from __future__ import annotations

import numpy as np

from fmu_surrogate.benchmarks.params import parameters
from fmu_surrogate.benchmarks.reference import solve_zoh

__all__ = ["PARAMS", "acceleration", "equilibrium", "initial_state", "rhs", "simulate"]

#: Default parameters (SI): a passenger-car corner, body mode ≈ 1.2 Hz, wheel hop ≈ 12 Hz.
PARAMS: dict[str, float] = {
    "ms": 300.0, "mu": 40.0, "ks": 2.0e4, "cs": 1.5e3, "kt": 2.0e5, "ls0": 0.4, "lt0": 0.3,
    "g": 9.81,
}
_POSITIVE = ("ms", "mu", "ks", "kt", "ls0", "lt0")


def _p(params: dict[str, float] | None) -> dict[str, float]:
    return parameters("quarter_car", PARAMS, params, positive=_POSITIVE, nonnegative=("cs", "g"))


def rhs(x: np.ndarray, F: float, params: dict[str, float] | None = None) -> list[float]:
    """``x' = (vs, as, vu, au)`` for ``x = (zs, vs, zu, vu)`` and the body force ``F``."""
    return [float(d) for d in _rhs(np.asarray(x, dtype=float), F, _p(params))]


def _rhs(x: np.ndarray, F: np.ndarray | float, p: dict[str, float]) -> list[np.ndarray]:
    """The right side for states ``x`` (4,) or (4, N) (broadcasting)."""
    zs, vs, zu, vu = x
    fs = p["ks"] * (p["ls0"] - zs + zu) + p["cs"] * (vu - vs)  # suspension force, pushes apart
    ft = p["kt"] * (p["lt0"] - zu)  # tyre force on the wheel
    return [vs, (fs - p["ms"] * p["g"] + F) / p["ms"], vu, (ft - fs - p["mu"] * p["g"]) / p["mu"]]


def acceleration(x: np.ndarray, F: np.ndarray, params: dict[str, float] | None = None
                 ) -> np.ndarray:
    """Body acceleration ``zs''`` for states ``x`` (N, 4) and forces ``F`` (N,)."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    return _rhs(x.T, np.asarray(F, dtype=float), _p(params))[1]


def equilibrium(params: dict[str, float] | None = None, F: float = 0.0) -> np.ndarray:
    """Static equilibrium ``(zs, 0, zu, 0)`` under the constant force ``F``."""
    p = _p(params)
    zu = p["lt0"] - ((p["ms"] + p["mu"]) * p["g"] - F) / p["kt"]
    zs = zu + p["ls0"] - (p["ms"] * p["g"] - F) / p["ks"]
    return np.array([zs, 0.0, zu, 0.0])


def initial_state(params: dict[str, float] | None = None) -> np.ndarray:
    """Default initial state: released at rest with both springs at their free length."""
    p = _p(params)
    return np.array([p["lt0"] + p["ls0"], 0.0, p["lt0"], 0.0])


def simulate(t: np.ndarray, F: np.ndarray, params: dict[str, float] | None = None,
             x0: np.ndarray | None = None) -> np.ndarray:
    """States ``(zs, vs, zu, vu)`` at ``t`` (N, 4) for the force ``F`` (N,) held on each period.

    Parameters
    ----------
    t : array_like, shape (N,)
        Increasing sample times.
    F : array_like, shape (N,)
        Body force samples.
    params : dict, optional
        Overrides of :data:`PARAMS`.
    x0 : array_like, shape (4,), optional
        Initial state (default :func:`initial_state`).

    Returns
    -------
    ndarray, shape (N, 4)
    """
    p = _p(params)
    x0 = initial_state(p) if x0 is None else np.asarray(x0, dtype=float)
    return solve_zoh(lambda x, f: _rhs(x, f, p), t, F, x0)
