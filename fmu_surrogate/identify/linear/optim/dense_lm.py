"""Levenberg–Marquardt on a flat parameter vector (the drop-in model's θ).

The drop-in model (:mod:`~fmu_surrogate.identify.linear.model.ported`) keeps its structure by
its parametrisation (``J = U − Uᵀ``, ``W = LLᵀ``, ``N = V − Vᵀ``), so its parameters live in a
flat space and the step is the plain damped Gauss–Newton step ``(𝒥ᵀ𝒥 + μI) ξ = −𝒥ᵀρ`` from the
thin SVD of 𝒥 (every damping at the cost of one SVD), with Nielsen's damping rule as in the
Riemannian solver (:mod:`~fmu_surrogate.identify.linear.optim.lm`: accept when the gain ratio
is positive, ``μ ← μ · max(MU_DECREASE, 1 − (2ρ̂ − 1)³)``, else ``μ ← μν``, ``ν ← 2ν``).  Stops
at ``max_iter``, a gradient below ``tol``, a relative cost decrease below ``ftol`` over
``STALL_WINDOW`` iterations, or a step below round-off.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.optim.lm import TAU, damping_update

Array = NDArray[np.float64]

#: Initial damping relative to the largest diagonal entry of 𝒥ᵀ𝒥, and its fastest decrease.
#: Stop when the cost fell by less than a factor 2 over this many iterations.
STALL_WINDOW = 20


@dataclass
class DenseLMOutcome:
    """Result of :func:`levenberg_marquardt`."""

    theta: Array
    cost_history: list[float]
    gradient_norm: float
    n_iter: int
    stopping_reason: str
    singular_values: Array


def levenberg_marquardt(
    residual: Callable[[Array], Array],
    jacobian: Callable[[Array], tuple[Array, Array]],
    theta: Array,
    *,
    max_iter: int = 200,
    tol: float = 1e-14,
    callback: Callable[[int, float, float], None] | None = None,
    held: NDArray[np.bool_] | None = None,
) -> DenseLMOutcome:
    """Minimise ``½‖ρ(θ)‖²`` (module docstring).

    Parameters
    ----------
    residual : callable
        ``ρ(θ)``.
    jacobian : callable
        ``θ ↦ (ρ(θ), ∂ρ/∂θ)``.
    theta : ndarray
        Start.
    max_iter : int
        Iteration budget.
    tol : float
        Stop when ``‖𝒥ᵀρ‖`` falls below ``tol · max(1, ‖ρ‖²)``.
    callback : callable, optional
        ``callback(iteration, cost, gradient_norm)``.
    held : ndarray of bool, shape like ``theta``, optional
        Entries held at their start values (the others are fitted; a nested model).

    Returns
    -------
    DenseLMOutcome
    """
    theta = np.array(theta, dtype=float)
    if held is not None and np.any(held):
        free = ~np.asarray(held, dtype=bool)

        def full(tf: Array) -> Array:
            th = theta.copy()
            th[free] = tf
            return th

        def jac(tf: Array) -> tuple[Array, Array]:
            r, J = jacobian(full(tf))
            return r, J[:, free]

        out = levenberg_marquardt(lambda tf: residual(full(tf)), jac, theta[free],
                                  max_iter=max_iter, tol=tol, callback=callback)
        return dataclasses.replace(out, theta=full(out.theta))
    r, Jm = jacobian(theta)
    f = 0.5 * float(r @ r)
    costs = [f]
    mu = nu = None
    reason = f"maximum iterations ({max_iter}) reached"
    it = 0
    gn = float("nan")
    sv = np.zeros(0)
    with np.errstate(all="ignore"):
        while True:
            g = Jm.T @ r
            gn = float(np.linalg.norm(g))
            _, sv, Vt = np.linalg.svd(Jm, full_matrices=False)
            if not math.isfinite(f):
                reason = "the cost is not finite at the initial point"
                break
            if gn <= tol * max(1.0, 2.0 * f):
                reason = f"gradient norm {gn:.3e} below tol"
                break
            if it >= max_iter:
                break
            if mu is None:
                mu, nu = TAU * max(float(np.max(np.sum(Jm * Jm, axis=0))), 1e-300), 2.0
            accepted = False
            for _ in range(60):
                xi = -Vt.T @ ((Vt @ g) / (sv**2 + mu))
                Jxi = sv * (Vt @ xi)
                pred = -float(g @ xi) - 0.5 * float(Jxi @ Jxi)
                if float(np.linalg.norm(xi)) <= 1e-15 * (float(np.linalg.norm(theta)) + 1e-15) \
                        or pred <= 0:
                    reason = "step below round-off"
                    break
                trial = theta + xi
                r_new = residual(trial)
                f_new = 0.5 * float(r_new @ r_new)
                gain = (f - f_new) / pred if math.isfinite(f_new) else -1.0
                mu, nu = damping_update(gain, mu, nu)
                if gain > 0:
                    theta, f = trial, f_new
                    accepted = True
                    break
            if not accepted:
                if not reason.startswith("step"):
                    reason = "no decrease found (damping exhausted)"
                break
            it += 1
            costs.append(f)
            if callback is not None:
                callback(it, f, gn)
            r, Jm = jacobian(theta)
            if it >= STALL_WINDOW and costs[-1 - STALL_WINDOW] < 2.0 * f:
                reason = f"stalled: the cost fell by less than a factor 2 over {STALL_WINDOW} " \
                         "iterations"
                gn = float(np.linalg.norm(Jm.T @ r))
                break
    return DenseLMOutcome(theta, costs, gn, it, reason, sv)
