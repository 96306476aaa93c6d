"""Riemannian Levenberg–Marquardt for linear pH identification (``optimizer=LM(...)`` or ``"lm"``).

The cost ``½ Σ_e Σ_k w_k |y_k − y_data,k|²`` is a sum of squares ``½‖ρ(x)‖²`` with
``ρ = √w (y − y_data)``.  At the point ``x`` of the product manifold (J skew, the factor Y of
``R = YYᵀ``, Q SPD, B, x0) the residual is linearised in the tangent coordinates ξ of
:class:`~fmu_surrogate.identify.linear.model.sensitivities.Coordinates` (``ρ(R_x(ξ)) ≈ ρ + 𝒥ξ``, 𝒥 from the
forward sensitivities) and the damped Gauss–Newton step

    (𝒥ᵀ𝒥 + μ I) ξ = −𝒥ᵀρ

is retracted to the manifold (``J + ξ_J`` bitwise skew, ``Y + ξ_Y``, the SPD retraction for Q):
every iterate has the exact structure.  The damping μ follows Nielsen's rule (gain ratio ρ̂ of
actual to predicted decrease: accept if ρ̂ > 0 and scale μ by ``max(1/3, 1 − (2ρ̂ − 1)³)``, else
multiply μ by ν = 2, 4, 8, …; we let μ fall by up to 1/10 per step instead of Nielsen's 1/3),
started at ``μ₀ = 10⁻⁸ · max diag(𝒥ᵀ𝒥)`` (the subspace initial model is close).

Two ways to solve for the step
------------------------------
* **dense** (P coordinates with ``P·(2N)³`` and ``P · rows`` small): all P directions are
  propagated at once, 𝒥 (rows × P) is formed and its thin SVD gives the step for any μ at no
  extra cost — several rejected trials per iteration cost one forward solve each.
* **matrix-free** (large models, e.g. n = 100): conjugate gradients on the damped normal equations
  with the product ``𝒥ᵀ𝒥 v`` as one forward sensitivity (one Fréchet derivative and one scan) and
  one adjoint solve (:meth:`~fmu_surrogate.identify.linear.model.adjoint.Evaluator.residual_gradient`); at
  most ``cg_max`` products, relative residual ``η = min(0.1, √(‖g‖/‖g₀‖))`` (inexact Newton).

Geodesic acceleration
---------------------
When the cost stalls (``STALL_WINDOW`` / ``STALL_FACTOR``) the dense solver does not stop at
once: slow Gauss–Newton tails of this problem follow narrow curved valleys (gain ratios ≈ 0.6 at
a fixed damping; smaller damping gives steps the linearisation does not follow).  The step then
gets the second-order correction of Transtrum & Sethna (*Improvements to the
Levenberg–Marquardt algorithm for nonlinear least-squares minimization*, 2012):
``a = −½ (𝒥ᵀ𝒥 + μI)⁻¹ 𝒥ᵀ r''`` with ``r''`` the second directional derivative of the residual
along the velocity ``v`` (one extra forward solve and sensitivity, one adjoint solve), and the
step ``v + a`` is taken when ``2‖a‖ ≤ ACC_RATIO ‖v‖`` (else the damping grows).  The fit stops
when the cost stalls again.  Measured on the MSD chain with eight states from its FMU's data:
relative error ≈ 3e-8 where the plain solver stalls, 2.5e-9 after 52 more iterations (0.9 s).

Noisy data end differently: once the residual is noise, steps change the cost by relative amounts
far below what the noise lets the data resolve, and the fit stops when the cost has fallen by less
than ``NOISE_TOL · f / rows`` over ``NOISE_WINDOW`` iterations instead of waiting out the stall
window with acceleration.

Regularisation
--------------
With ``reg_lambda`` / ``log_q`` the cost has the terms ``(λ/2)‖w − w_ref‖²`` and
``(λ_Q/2)‖log Q‖²``; the step uses the full gradient and the model Hessian
``𝒥ᵀ𝒥 + (λ + λ_Q) I`` (exact for the reference term in the orthonormal coordinates of J, Q, B,
x0, the value at ``Q = I`` for the log term); the gain ratio guards the approximation.

Gauge freedom
-------------
The output is invariant under ``x ↦ Tx`` with ``T`` orthogonal when Q is fixed to a multiple of
the identity (general ``T`` when Q is fitted) and under ``Y ↦ YO`` for the factor: 𝒥 has an exact
null space of that dimension.  The damping makes ``𝒥ᵀ𝒥 + μI`` positive definite, and the step
never has a component along the null space: the gradient ``𝒥ᵀρ`` is orthogonal to it, the SVD
step ``−V diag(s/(s² + μ)) Uᵀρ`` lives in the row space of 𝒥, and CG started at 0 stays in the
Krylov space of the gradient, which lies in the same row space.  No gauge fixing is needed; the
condition number reported (``LinearPHFit.condition``) is that of 𝒥 with the gauge directions
removed (singular values ``s_1 / s_{P − g}``, g the gauge dimension).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.errors import ComputationError
from fmu_surrogate.identify.linear.model.sensitivities import Coordinates, output_sensitivities
from fmu_surrogate.identify.linear.optim.base import Optimizer, OptimizerOutcome
from fmu_surrogate.identify.linear.optim.first_order import CG

Array = NDArray[np.float64]

#: Stop when the cost fell by less than STALL_FACTOR over the last STALL_WINDOW iterations: a
#: slowly converging, poorly determined direction (measured: the held-out error then changes by
#: less than a factor 3 in 30 more iterations).
STALL_WINDOW, STALL_FACTOR = 20, 2.0
#: Converged at the noise level: the cost fell by less than ``NOISE_TOL · f / rows`` over the last
#: ``NOISE_WINDOW`` iterations.  ``f / rows`` is half the mean squared residual, so with noisy data
#: the parameters moved by far less than a tenth of their standard error (a move of one standard
#: error along one direction changes the cost by about ``f / rows``); with exact data the cost
#: keeps falling by a fixed fraction per iteration until the stall rule ends the fit.
NOISE_TOL, NOISE_WINDOW = 1e-2, 5
#: Dense Jacobian when P · (2N)³ ≤ this (batched Fréchet derivatives) and P · rows ≤ _DENSE_ROWS.
_DENSE_WORK = 4e9
_DENSE_ROWS = 6e7
#: Initial damping relative to the largest diagonal entry of 𝒥ᵀ𝒥.
TAU = 1e-8
#: Smallest factor by which a successful step reduces the damping (Nielsen: 1/3; the subspace
#: start is close, so faster: measured 2–3× fewer iterations on random systems).
MU_DECREASE = 0.1


def damping_update(gain: float, mu: float, nu: float) -> tuple[float, float]:
    """Nielsen's update of the damping ``μ`` and its growth factor ``ν`` after a trial step.

    Parameters
    ----------
    gain : float
        Actual over predicted decrease of the cost (``ρ̂``; ≤ 0: the step is rejected).
    mu, nu : float
        Damping and growth factor before the step.

    Returns
    -------
    tuple of float
        ``(μ · max(MU_DECREASE, 1 − (2ρ̂ − 1)³), 2)`` for an accepted step, ``(μν, 2ν)`` otherwise.
    """
    if gain > 0:
        return mu * max(MU_DECREASE, 1.0 - (2.0 * gain - 1.0) ** 3), 2.0
    return mu * nu, 2.0 * nu
#: Geodesic acceleration (Transtrum & Sethna 2012): finite-difference step along the velocity
#: and the largest accepted ratio 2‖a‖/‖v‖ of acceleration to velocity.
ACC_STEP, ACC_RATIO = 0.1, 0.75


class _Problem:
    """Residuals, Jacobian products and steps at manifold points for one fit."""

    def __init__(self, obj: Any, manifold: Any, coords: Coordinates) -> None:
        self.obj, self.manifold, self.coords = obj, manifold, coords
        self.ev = obj.ev
        self.names = coords.names
        self.sqrt_w = [np.sqrt(d.w)[:, None] for d in self.ev.prepared.data]
        self.work: dict[Any, Array] = {}  # the sensitivities' scratch arrays, kept between steps

    def state(self, point: list[Array]) -> Any:
        return self.obj.state(point)

    def factor(self, point: list[Array]) -> Array | None:
        return point[self.names.index("R")] if "R" in self.names else None

    def gradient(self, point: list[Array]) -> Array:
        return self.coords.gradient(self.obj.euclidean_gradient(point))

    def jacobian(self, point: list[Array], st: Any) -> Array:
        d = self.coords.tangent(self.coords.identity())
        dys = output_sensitivities(self.ev, st, d, self.factor(point), self.work)
        # rows (k, a) in the order of the residual vector, columns the P directions; built
        # transposed in a kept array, so 𝒥 is Fortran-ordered (LAPACK's) and no fresh memory
        P = dys[0].shape[1]
        rows = sum(dy.shape[0] * dy.shape[2] for dy in dys)
        Jt = self.work.get("jacobian")
        if Jt is None or Jt.shape != (P, rows):
            Jt = self.work["jacobian"] = np.empty((P, rows))
        off = 0
        for dy, s in zip(dys, self.sqrt_w):
            K, _, m = dy.shape
            np.multiply(np.swapaxes(dy, 0, 1), s[None], out=Jt[:, off : off + K * m].reshape(P, K, m))
            off += K * m
        return Jt.T

    def gn_product(self, point: list[Array], st: Any, v: Array) -> Array:
        d = self.coords.tangent(v[None])
        dys = output_sensitivities(self.ev, st, d, self.factor(point))
        g = self.ev.residual_gradient(st, [dy[:, 0] for dy in dys])
        out = []
        for name, x in zip(self.names, point):
            G = g[name]
            out.append((G + G.T) @ x if name == "R" else G)
        return self.coords.gradient(out)

    def _misfit_gradient(self, point: list[Array], st: Any, z: list[Array]) -> Array:
        g = self.ev.residual_gradient(st, z)
        out = []
        for name, x in zip(self.names, point):
            G = g[name]
            out.append((G + G.T) @ x if name == "R" else G)
        return self.coords.gradient(out)

    def acceleration(self, point: list[Array], st: Any, v: Array) -> Array:
        """``𝒥ᵀ r''`` with ``r''`` the second directional derivative of the residual along ``v``
        (finite differences: ``2/h · ((ρ(x + hv) − ρ(x))/h − 𝒥v)``, h = ACC_STEP)."""
        d = self.coords.tangent(v[None])
        dys = output_sensitivities(self.ev, st, d, self.factor(point))
        ph = self.retract(point, ACC_STEP * v)
        sth = self.obj.state(ph)
        z = [2.0 / ACC_STEP * ((fh.r - f.r) / ACC_STEP - dy[:, 0])
             for f, fh, dy in zip(st.fwds, sth.fwds, dys)]
        return self._misfit_gradient(point, st, z)

    def retract(self, point: list[Array], xi: Array) -> list[Array]:
        t = self.coords.tangent(xi)
        return self.manifold.retraction(point, [t[p] for p in self.names])


#: From this many columns on the R factor comes from LAPACK's ``dgeqrt`` (recursive panels,
#: block size :data:`QR_BLOCK`), below from ``dgeqrf`` (measured, 1 thread, 20004 rows:
#: P = 63: 9.3 / 9.4 ms; 90: 19.2 / 15.8 ms; 121: 35.9 / 25.0 ms; 174: 52.8 / 45.5 ms).
QR_RECURSIVE_MIN_COLUMNS, QR_BLOCK = 80, 16


def r_factor(a: Array) -> Array:
    """The triangular factor R (P × P) of the Householder QR ``a = Q R`` of a tall matrix.

    LAPACK's blocked ``dgeqrf`` (optimal workspace) or, for many columns, ``dgeqrt``
    (:data:`QR_RECURSIVE_MIN_COLUMNS`), on ``a`` itself: ``a`` (rows × P), Fortran-ordered
    float64 when it comes from :meth:`_Problem.jacobian`, is overwritten.  Measured (1 thread,
    20004 × 174): 45 ms against 73 ms for ``numpy.linalg.qr(a, mode="r")`` (which copies to and
    from C order).  The singular values and right singular vectors of R are those of ``a``.
    Fewer rows than columns: R padded with zero rows.
    """
    from scipy.linalg import lapack

    rows, P = a.shape
    if P >= QR_RECURSIVE_MIN_COLUMNS and rows >= P:
        qr, _t, info = lapack.dgeqrt(QR_BLOCK, a, overwrite_a=True)
    else:
        lwork = int(lapack.dgeqrf_lwork(rows, P)[0])
        qr, _tau, _work, info = lapack.dgeqrf(a, lwork=max(lwork, P, 1), overwrite_a=True)
    if info != 0:  # pragma: no cover - an illegal argument, not a property of the data
        raise ComputationError(f"LAPACK rejected argument {-info} of the QR of a {rows} × {P} "
                               "Jacobian; report this with the data that caused it.")
    R = np.zeros((P, P))
    k = min(rows, P)
    R[:k] = np.triu(qr[:k])
    return R


def _svd(a: Array) -> tuple[Array, Array, Array]:
    """Thin SVD; LAPACK's divide-and-conquer driver rarely fails to converge, then QR-iteration."""
    try:
        return np.linalg.svd(a, full_matrices=False)
    except np.linalg.LinAlgError:
        from scipy.linalg import svd

        return svd(a, full_matrices=False, lapack_driver="gesvd")


def _dense_ok(coords: Coordinates, n: int, m: int, rows: int, mode: str) -> bool:
    N = n + 2 * m
    work = coords.size * (2 * N) ** 3 if mode == "exact" else 0
    return work <= _DENSE_WORK and coords.size * rows <= _DENSE_ROWS


def _cg(apply: Any, b: Array, mu: float, tol: float, maxiter: int) -> Array:
    """Conjugate gradients for ``(H + μI) x = b`` from x = 0."""
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rr = float(r @ r)
    stop = tol**2 * rr
    for _ in range(maxiter):
        Ap = apply(p) + mu * p
        a = rr / float(p @ Ap)
        x += a * p
        r -= a * Ap
        rr_new = float(r @ r)
        if rr_new <= stop:
            break
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x


@dataclass(frozen=True)
class LM(Optimizer):
    """Riemannian Levenberg–Marquardt (``optimizer="lm"``; see the module docstring).

    Parameters
    ----------
    max_iter : int
        Iteration budget (``0``: the initial point, as the other optimisers).
    tol : float
        Stop when the coordinate gradient norm falls below ``tol``.
    max_time : float, optional
        Wall-time budget [s].
    dense : bool, optional
        Force the dense (True) or matrix-free (False) step; default by problem size.
    cg_max : int
        Matrix-free: CG iterations per step.
    acceleration : bool
        Dense: continue with geodesic acceleration when the cost stalls (module docstring).
    """

    name: ClassVar[str] = "lm"

    dense: bool | None = None
    cg_max: int = 200
    acceleration: bool = True

    def run(self, obj: Any, manifold: Any, coords: Coordinates, point: list[Array],
            callback: Any = None) -> OptimizerOutcome:
        """Minimise the least-squares cost of ``obj`` from ``point``.

        Parameters
        ----------
        obj : Objective
            Cost, gradient and forward states on the manifold.
        manifold : product manifold
            Provides ``retraction``.
        coords : Coordinates
            Tangent coordinates of the fitted parameters.
        point : list of ndarray
            Initial point.
        callback : callable, optional
            ``callback(iteration, cost, gradient_norm)`` after every iteration.

        Returns
        -------
        OptimizerOutcome
        """
        if self.max_iter == 0:  # the initial point: the same report as the first-order methods
            return CG(max_iter=0, tol=self.tol, max_time=self.max_time).run(
                obj, manifold, coords, point, callback)
        return _levenberg_marquardt(
            obj, manifold, coords, point, max_iter=int(self.max_iter), tol=float(self.tol),
            max_time=self.max_time, callback=callback, dense=self.dense, cg_max=self.cg_max,
            acceleration=self.acceleration)


def _levenberg_marquardt(
    obj: Any,
    manifold: Any,
    coords: Coordinates,
    point: list[Array],
    *,
    max_iter: int,
    tol: float,
    max_time: float | None,
    callback: Any,
    dense: bool | None,
    cg_max: int,
    acceleration: bool,
) -> OptimizerOutcome:
    """:meth:`LM.run` with its settings as arguments."""
    pb = _Problem(obj, manifold, coords)
    reg = obj.ev.reg
    curv = float(reg.lam) + (float(reg.log_q) if "Q" in coords.names else 0.0)
    f = obj.cost(point)
    costs, gnorms = [f], []
    rows = sum(d.K * obj.ev.prepared.data[0].y.shape[1] for d in obj.ev.prepared.data)
    n = point[0].shape[0]
    m = obj.ev.prepared.data[0].y.shape[1]
    if dense is None:
        dense = _dense_ok(coords, n, m, rows, obj.ev.mode)
    t0 = time.perf_counter()
    mu = nu = None
    g0 = None
    reason = f"maximum iterations ({max_iter}) reached"
    it = 0
    sv = None
    gn = float("nan")
    accel_from: int | None = None
    while True:
        if not math.isfinite(f):
            reason = "the cost is not finite at the initial point"
            break
        st = pb.state(point)
        g = pb.gradient(point)  # with the regulariser's gradient
        if dense:
            # 𝒥 = Q_J R: the SVD of the small triangular factor serves every damping μ
            Ra = r_factor(pb.jacobian(point, st))
            _, sv, Vt = _svd(Ra)
            diag_max = float(np.max(np.sum(Ra * Ra, axis=0)))  # columns of 𝒥 and R: same norms
        gn = float(np.linalg.norm(g))
        gnorms.append(gn)
        if g0 is None:
            g0 = gn
        if gn <= tol:
            reason = f"gradient norm {gn:.3e} below tol"
            break
        if it >= max_iter:
            break
        if max_time is not None and time.perf_counter() - t0 > max_time:
            reason = f"time budget {max_time} s reached"
            break
        if mu is None:
            if not dense:  # ≈ trace(𝒥ᵀ𝒥) from one random probe, an upper bound of the mean diagonal
                v = np.random.default_rng(0).standard_normal(coords.size)
                v /= np.linalg.norm(v)
                diag_max = coords.size * float(v @ pb.gn_product(point, st, v))
            mu, nu = TAU * max(diag_max, 1e-300), 2.0
        accepted = False
        for _trial in range(60):
            if dense:
                xi = -Vt.T @ ((Vt @ g) / (sv**2 + mu + curv))
                if accel_from is not None:
                    acc = pb.acceleration(point, st, xi)
                    a2 = -0.5 * (Vt.T @ ((Vt @ acc) / (sv**2 + mu + curv)))
                    if 2.0 * float(np.linalg.norm(a2)) > ACC_RATIO * float(np.linalg.norm(xi)):
                        mu *= nu
                        nu *= 2.0
                        continue
                Jxi = sv * (Vt @ xi)
                pred = -float(g @ xi) - 0.5 * (float(Jxi @ Jxi) + curv * float(xi @ xi))
                if accel_from is not None:
                    xi = xi + a2  # the gain ratio keeps the velocity's predicted decrease
            else:
                eta = min(0.1, math.sqrt(gn / g0))

                def apply(v: Array, st: Any = st, x: list[Array] = point) -> Array:
                    return pb.gn_product(x, st, v)

                xi = _cg(apply, -g, mu + curv, eta, cg_max)
                pred = -float(g @ xi) - 0.5 * (float(xi @ apply(xi)) + curv * float(xi @ xi))
            xnorm = math.sqrt(sum(float(np.vdot(p, p)) for p in point))
            if float(np.linalg.norm(xi)) <= 1e-15 * (xnorm + 1e-15) or pred <= 0:
                reason = "step below round-off"
                break
            trial = pb.retract(point, xi)
            f_new = obj.cost(trial)
            gain = (f - f_new) / pred if math.isfinite(f_new) else -1.0
            mu, nu = damping_update(gain, mu, nu)
            if gain > 0:
                point, f = trial, f_new
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
        stop = None
        since = it - (accel_from or 0)
        if it >= NOISE_WINDOW and costs[-1 - NOISE_WINDOW] - f < NOISE_TOL * f / rows:
            stop = (f"converged to the noise level: the cost fell by less than {NOISE_TOL:g}"
                    f" · cost/rows over {NOISE_WINDOW} iterations")
        elif since >= STALL_WINDOW and costs[-1 - STALL_WINDOW] < STALL_FACTOR * f:
            if dense and accel_from is None and acceleration:
                accel_from = it
                continue
            stop = (f"stalled: the cost fell by less than a factor {STALL_FACTOR:g} over "
                    f"{STALL_WINDOW} iterations")
            if accel_from is not None:
                stop += f" (with geodesic acceleration from iteration {accel_from})"
        if stop is not None:  # the gradient and singular values at the final point
            reason = stop
            gnorms.append(float(np.linalg.norm(pb.gradient(point))))
            gn = gnorms[-1]
            if dense:
                sv = None
            break
    if sv is None and dense and math.isfinite(f):
        sv = np.linalg.svd(r_factor(pb.jacobian(point, pb.state(point))), compute_uv=False)
    return OptimizerOutcome(point, tuple(costs), tuple(gnorms), it, reason, gn, sv)
