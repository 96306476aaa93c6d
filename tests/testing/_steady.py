"""Shared references of the steady-start tests: the mass's exact response, its inputs."""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import expm
from scipy.optimize import brentq

from fmu_surrogate.testing.fmus import STEADY_MASS

M, K, D, PRELOAD = (STEADY_MASS[k] for k in ("m", "k", "d", "preload"))
T, DT = 10.0, 0.01  # record length and communication step (s)
#: the force source's parameters for the new input: F(0) = offset = -9 N
SOURCE = {"offset": -9.0, "a1": 3.0, "f1": 0.3, "a2": 2.0, "f2": 1.1, "a3": 1.0, "f3": 2.3}


def grid() -> np.ndarray:
    """The communication points ``0, DT, …, T``."""
    return np.arange(round(T / DT) + 1) * DT


def rest(force: float) -> tuple[float, float, float]:
    """``(v, a, q)`` at rest under ``force``: ``q = (F + preload) / k``."""
    return 0.0, 0.0, (force + PRELOAD) / K


def exact(t: np.ndarray, F: np.ndarray) -> np.ndarray:
    """``(v, a, q)`` at the points ``t`` (uniform step) of the mass from rest under ``F[0]``,
    ``F`` held over every step: the exact discretisation ``expm([[A, B], [0, 0]] h)``."""
    A = np.array([[0.0, 1.0], [-K / M, -D / M]])
    Mx = np.zeros((4, 4))
    Mx[:2, :2], Mx[1, 2], Mx[1, 3] = A, 1.0 / M, PRELOAD / M  # inputs (F, 1)
    P = expm(Mx * (t[1] - t[0]))
    x = np.array([rest(F[0])[2], 0.0])
    out = np.empty((t.size, 3))
    for k in range(t.size):
        a = (F[k] + PRELOAD - K * x[0] - D * x[1]) / M
        out[k] = x[1], a, x[0]
        x = P[:2, :2] @ x + P[:2, 2] * F[k] + P[:2, 3]
    return out


def source_force(t: np.ndarray, source: dict | None = None) -> np.ndarray:
    """The force source's output with ``source`` (default :data:`SOURCE`)."""
    s = SOURCE if source is None else source
    return s["offset"] + sum(s[f"a{i}"] * np.sin(2 * np.pi * s[f"f{i}"] * t) for i in (1, 2, 3))


def multisine(seed: int, offset: float, amplitude: float = 4.0) -> np.ndarray:
    """A random-phase multisine on :func:`grid` (harmonics of 1/T from 0.2 to 3 Hz, peak
    ``amplitude``) shifted to start at ``offset``."""
    rng = np.random.default_rng(seed)
    t = grid()
    f = np.arange(2, 31) / T
    u = np.cos(2 * np.pi * f[:, None] * t[None] + rng.uniform(0, 2 * np.pi, f.size)[:, None])
    u = amplitude * u.sum(axis=0) / np.abs(u.sum(axis=0)).max()
    return offset + u - u[0]


#: the hardening spring of the nonlinear tests: k3 (N/m³) and the preload (N) set at harvest
HARDENING = {"k3": 100.0, "preload": 10.0}


def cubic_rest(force: float) -> float:
    """The deflection at rest of the hardening mass under ``force``: the root of
    ``k q + k3 q³ = F + preload`` (Brent's method to round-off)."""
    f = force + HARDENING["preload"]
    return brentq(lambda q: K * q + HARDENING["k3"] * q**3 - f, -10.0, 10.0, xtol=1e-300,
                  rtol=4 * np.finfo(float).eps)


def cubic_exact(t: np.ndarray, F: np.ndarray) -> np.ndarray:
    """``(v, a, q)`` at the points ``t`` of the hardening mass from rest under ``F[0]``, ``F``
    held over every step: DOP853 at rtol 1e-13 step by step (its error ~1e-12, far below the
    FMU's RK4 error it checks)."""
    k3, pre = HARDENING["k3"], HARDENING["preload"]

    def accel(F_k, q, v):
        return (F_k + pre - K * q - k3 * q**3 - D * v) / M

    x = np.array([cubic_rest(F[0]), 0.0])
    out = np.empty((t.size, 3))
    for k in range(t.size):
        out[k] = x[1], accel(F[k], x[0], x[1]), x[0]
        if k + 1 < t.size:
            x = solve_ivp(lambda _t, z, F_k=F[k]: [z[1], accel(F_k, z[0], z[1])],
                          (t[k], t[k + 1]), x, method="DOP853", rtol=1e-13,
                          atol=1e-14).y[:, -1]
    return out


def cosimulate(folder, target: str, source_fmu: str, source: dict | None = None,
               mass_parameters: dict | None = None, driven: str | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """``(F, [v, a, q])`` of [force source -> ``target``] run in libcosim over :func:`grid`.

    ``target`` is a file in ``folder``: an FMU, or a surrogate file (``.json``);
    ``source_fmu`` the source's file there, with ``source`` its parameters (default
    :data:`SOURCE`); ``mass_parameters`` set on the target; ``driven``: the target's ``F``
    driven by that signal instead of the source.
    """
    import fmu_surrogate as fs

    params = ", ".join(f"{k} = {v}" for k, v in (source or SOURCE).items())
    kind = "surrogate" if target.endswith(".json") else "fmu"
    text = f'record = ["mass.v", "mass.a", "mass.q"]\n[components.mass]\n{kind} = "{target}"\n'
    if mass_parameters:
        text += ("parameters = { " + ", ".join(f"{k} = {v}" for k, v in mass_parameters.items())
                 + " }\n")
    if driven is None:
        text += (f'[components.source]\nfmu = "{source_fmu}"\n'
                 f'parameters = {{ {params} }}\n'
                 '[[connections]]\nfrom = "source.F"\nto = "mass.F"\n')
    else:
        text += f'[inputs]\n"mass.F" = "{driven}"\n'
    path = folder / f"{target}-{'source' if driven is None else 'driven'}.toml"
    path.write_text(text, encoding="utf-8")
    ds = fs.couple.run(fs.couple.read_toml(path), T, DT, progress=False)
    assert ds.attrs.get("status", "ok") != "failed"
    np.testing.assert_allclose(ds.time.values, grid(), rtol=0, atol=1e-12)
    return ds["mass.F"].values[0], np.column_stack(
        [ds[f"mass.{n}"].values[0] for n in ("v", "a", "q")])
