"""Duffing oscillator of docs/design.md §5: ``m ÿ + c ẏ + (a + b y²) y = u``.

Defaults ``m = 1, c = 2.151, a = 10, b = 1e5`` (Zhu et al.).  State ``x = (y, ẏ)``.

**Default input** (:func:`white_noise_force`): a white-noise force, i.i.d. Gaussian samples of
standard deviation ``σ = 1`` held for one sample period ``dt = 1/50 s`` (the paper's 50 Hz for
10 s), from ``numpy.random.default_rng(seed)``.  With the default parameters and seed 0 the
displacement has standard deviation ≈ 0.009 (where ``b y² ≈ 8`` is comparable to ``a = 10``) and
peaks ``|y| ≈ 0.026`` (where ``b y² ≈ 66`` dominates), so both stiffness terms are identifiable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fmu_surrogate.errors import ComputationError, InvalidInputError

Array = np.ndarray

#: Default parameters.
PARAMS: dict[str, float] = {"m": 1.0, "c": 2.151, "a": 10.0, "b": 1e5}
#: Paper setting: 10 s at 50 Hz.
DEFAULT_STOP = 10.0
DEFAULT_DT = 0.02
FORCE_STD = 1.0


def _params(params: dict[str, float] | None) -> dict[str, float]:
    p = dict(PARAMS)
    if params:
        unknown = set(params) - set(PARAMS)
        if unknown:
            raise InvalidInputError(
                f"unknown Duffing parameters {sorted(unknown)}; known: {sorted(PARAMS)}.")
        p.update({k: float(v) for k, v in params.items()})
    if p["m"] <= 0:
        raise InvalidInputError(f"m must be > 0, got {p['m']}.")
    return p


def acceleration(y: Array, ydot: Array, u: Array, params: dict[str, float] | None = None) -> Array:
    """``ÿ = (u − c ẏ − (a + b y²) y) / m`` (broadcasting)."""
    p = _params(params)
    y = np.asarray(y, dtype=float)
    return (np.asarray(u, dtype=float) - p["c"] * np.asarray(ydot, dtype=float)
            - (p["a"] + p["b"] * y**2) * y) / p["m"]


def white_noise_force(
    stop: float = DEFAULT_STOP, dt: float = DEFAULT_DT, std: float = FORCE_STD, seed: int = 0
) -> tuple[Array, Array]:
    """White-noise force sampled every ``dt`` on ``[0, stop]``; ``(t (N,), u (N,))``.

    Meant to be held constant over each sample period (zero-order hold).
    """
    if dt <= 0 or stop <= 0:
        raise InvalidInputError("stop and dt must be > 0.")
    n = round(stop / dt)
    t = np.arange(n + 1) * dt
    u = np.random.default_rng(seed).normal(0.0, std, n + 1)
    return t, u


@dataclass(frozen=True)
class DuffingTrajectory:
    """Reference solution: ``t, y, ydot, yddot, u``, each ``(N,)``."""

    t: Array
    y: Array
    ydot: Array
    yddot: Array
    u: Array


def simulate(
    t: Array,
    u: Array,
    params: dict[str, float] | None = None,
    x0: tuple[float, float] = (0.0, 0.0),
    rtol: float = 1e-10,
    atol: float = 1e-13,
) -> DuffingTrajectory:
    """Reference solution with the input held constant on ``[t_k, t_{k+1})`` (DOP853).

    Parameters
    ----------
    t : array_like, shape (N,)
        Increasing sample times.
    u : array_like, shape (N,)
        Force samples.
    params : dict, optional
        Overrides of :data:`PARAMS`.
    x0 : (y0, ydot0)
    """
    from scipy.integrate import solve_ivp

    p = _params(params)
    t = np.asarray(t, dtype=float)
    u = np.asarray(u, dtype=float)
    if u.shape != t.shape:
        raise InvalidInputError(f"u must have the shape of t {t.shape}, got {u.shape}.")
    m, c, a, b = p["m"], p["c"], p["a"], p["b"]
    X = np.empty((len(t), 2))
    X[0] = x0
    for k in range(len(t) - 1):
        uk = u[k]
        sol = solve_ivp(
            lambda s, x, uk=uk: (x[1], (uk - c * x[1] - (a + b * x[0] ** 2) * x[0]) / m),
            (t[k], t[k + 1]), X[k], method="DOP853", rtol=rtol, atol=atol,
        )
        if not sol.success:
            raise ComputationError(f"reference solve failed on [{t[k]}, {t[k + 1]}]: {sol.message}")
        X[k + 1] = sol.y[:, -1]
    return DuffingTrajectory(t, X[:, 0], X[:, 1], acceleration(X[:, 0], X[:, 1], u, p), u)


def noisy_data_set(k: int, stop: float = DEFAULT_STOP, dt: float = DEFAULT_DT,
                   noise: float = 0.01) -> DuffingTrajectory:
    """Data set ``k`` of the equation-discovery study (Zhu et al., §7.2).

    The reference solution under :func:`white_noise_force` with seed ``k``; ``y``, ``ẏ`` and ``ÿ``
    each carry Gaussian noise of standard deviation ``noise`` times their own standard deviation
    (seed ``1000 + k``); the force is exact.

    Parameters
    ----------
    k : int
        Data-set number (seeds).
    stop, dt : float
        Duration and sample period.
    noise : float
        Relative noise level.
    """
    t, u = white_noise_force(stop=stop, dt=dt, seed=k)
    return with_noise(simulate(t, u), k, noise)


def with_noise(tr: DuffingTrajectory, k: int, noise: float = 0.01) -> DuffingTrajectory:
    """``tr`` with the measurement noise of data set ``k`` (see :func:`noisy_data_set`).

    Parameters
    ----------
    tr : DuffingTrajectory
        Clean trajectory (reference solution or FMU output).
    k : int
        Data-set number (noise seed ``1000 + k``).
    noise : float
        Relative noise level.
    """
    rng = np.random.default_rng(1000 + k)

    def noisy(v: Array) -> Array:
        return v + noise * v.std() * rng.normal(size=v.size)

    return DuffingTrajectory(tr.t, noisy(tr.y), noisy(tr.ydot), noisy(tr.yddot), tr.u)
