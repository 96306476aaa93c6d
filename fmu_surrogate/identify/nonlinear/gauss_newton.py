"""Levenberg–Marquardt steps on the shooting residuals: their Jacobian, and the bounded step.

The nonlinear fit minimises a sum of squares: the weighted output errors of every segment and
the continuity defects between consecutive segments (:mod:`.optimise`).  A quasi-Newton method
on that sum (L-BFGS-B, used before) learns the curvature from gradients one iteration at a time
and needed 300–1500 iterations on the benchmark and third-party nonlinear FMUs, ending at
0.2–1 % errors; a Gauss–Newton method takes the curvature ``JᵀJ`` from the residuals' Jacobian
at every step and reaches errors of 1e-5 or below in 6–40 iterations, as it converges fast
near a fit with small residuals — which is what a surrogate of a deterministic FMU is.

The Jacobian.  Its columns are the parameters of the model (tens to a few hundred) and the free
start states of the segments (``n`` per segment: hundreds to thousands).  A segment's outputs
and end state depend on its own start state only, so all the start-state columns come from
``n`` forward-mode derivatives (one tangent per state component, set in every segment at
once), the model's from one per parameter: all in one forward-mode pass (dual numbers) through
the RK4 rollout of a batch of copies of ``θ`` (:class:`~.shooting.VectorField` takes a batch).
``torch.func.vmap`` over ``jvp`` gives the same numbers 2.4 times slower: its per-operation
overhead dominates these small tensors.  A defect ``x_end,s − x_start,s+1`` sees the next
segment's start state through ``−I``, added by hand.  The matrix is dense when it is small and
sparse otherwise (then the normal equations are solved by a sparse LU), so that long records
do not need memory quadratic in their length.

The step.  Levenberg's damped Gauss–Newton step ``(JᵀJ + λμI) s = −Jᵀr`` with Nielsen's update
of ``λ``, held inside the box constraints of the fit (``α, β ≥ 0``, the exponents' and
smoothings' ranges, the asymmetries in ``[−1, 1]``) by an active set: a variable on its bound
whose step would leave the box is held there, and the step is shortened to the first bound it
meets, so that the variable lands on it exactly.  Own code rather than scipy's
``least_squares``: its trust-region reflective method keeps every iterate strictly inside the
box, so a law whose exponent belongs on its bound (a saturating friction at ``p = −1``)
approached it by a factor per iteration and stopped at 1e-6 after 100 iterations instead of
1e-13 after 6, and a term that is not needed ends at a tiny gain instead of exactly zero
(:func:`~.parametrisation.to_system` leaves zero-gain terms out).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from numpy.typing import NDArray

Array = NDArray[np.float64]

#: a Jacobian with more entries than this (8 bytes each: 160 MB) is kept sparse
DENSE_LIMIT = 20_000_000
#: Levenberg's damping ``λ μ I`` (``μ`` the mean of ``diag(JᵀJ)``, in the optimiser's units, in
#: which the parameters are of comparable size) starts at this ``λ`` (a Gauss–Newton step where
#: the linear model of the residuals holds, shortened fast where it does not) and gives up above
#: LAMBDA_MAX.  Not Marquardt's ``λ diag(JᵀJ)``: a direction the residuals barely see yet (a
#: ridge's direction while its weight is zero) would be damped by almost nothing and take huge
#: steps (the mass on a progressive spring stopped at 10 % error so, 0.005 % with ``I``).
LAMBDA_START, LAMBDA_MAX = 1e-3, 1e12
#: rounds of holding the variables at a bound that the step would leave
PIN_ROUNDS = 3
#: A fit whose cost fell by less than STALL_FACTOR in the last STALL_WINDOW iterations stops:
#: Gauss–Newton converges only linearly where the residuals do not vanish (RK4 against a
#: solver's samples), and there the last tenth of an error costs most of the iterations (the
#: mass on a progressive spring: 1e-7 after 30 iterations, 1.9e-9 after 100)
STALL_WINDOW, STALL_FACTOR = 10, 2.0
#: Between the costs of STALL_BAND (RMS errors of 0.1 % and 10 % of the outputs: a max error
#: near a user's tolerance) a fit stops only when its cost fell by less than STALL_FACTOR_NEAR:
#: a fit crossing a valley there progresses slowly but far (a turbulent orifice about 0 bar: 2x
#: in 10 iterations stopped it at 2.2 %, this rule at 0.37 % of the peak flow; a gas
#: accumulator 0.25 % → 0.12 %).  Above the band the model class or its start is wrong and the
#: caller changes them (:mod:`.continuation`): a pendulum's convex fits, 0.07 to 0.11 there,
#: took 154 iterations under the slower rule for nothing.
STALL_BAND, STALL_FACTOR_NEAR = (1e-6, 1e-2), 1.1


@dataclass(frozen=True)
class Shooting:
    """How the residual vector is built from a rollout.

    Parameters
    ----------
    n_model : int
        Number of model parameters: the leading entries of ``θ`` (the free start states follow,
        ``(n_free, n)`` row by row).
    n : int
        States.
    free_segments : ndarray of int, shape (n_free,)
        The segment each free start state belongs to.
    cur, nxt : ndarray of int, shape (n_pairs,)
        The consecutive segment pairs whose continuity defects are residuals.
    defect_scale : ndarray, shape (n,)
        The factor of each defect component in the residual vector.
    n_segments : int
        Number of segments.
    """

    n_model: int
    n: int
    free_segments: NDArray[np.int64]
    cur: NDArray[np.int64]
    nxt: NDArray[np.int64]
    defect_scale: Array
    n_segments: int


def residuals(shoot: Shooting, ry: Array, x_end: Array, x_free: Array) -> Array:
    """The residual vector from a rollout.

    Parameters
    ----------
    shoot : Shooting
        The layout.
    ry : ndarray, shape (S, R)
        Weighted output residuals of each segment.
    x_end : ndarray, shape (S, n)
        End states of the segments.
    x_free : ndarray, shape (n_free, n)
        The free start states.

    Returns
    -------
    ndarray, shape (S R + n_pairs n,)
    """
    start = np.zeros((shoot.n_segments, shoot.n))
    start[shoot.free_segments] = x_free
    d = (x_end[shoot.cur] - start[shoot.nxt]) * shoot.defect_scale
    return np.concatenate([ry.ravel(), d.ravel()])


def jacobian(shoot: Shooting, forward: Callable[..., Any], theta: Any,
             skip: NDArray[np.bool_] | None = None) -> Array | sp.csr_matrix:
    """The Jacobian of :func:`residuals` at ``θ`` (module doc).

    Parameters
    ----------
    shoot : Shooting
        The layout.
    forward : callable
        ``forward(theta) -> (ry (..., S, R), x_end (..., S, n))`` in torch, for a batch
        ``(..., len(θ))`` of parameter vectors.
    theta : Tensor, shape (n_model + n_free n,)
        The parameters.
    skip : ndarray of bool, shape (n_model,), optional
        Model parameters whose columns are left at zero, not computed (held ones that no step
        moves).

    Returns
    -------
    ndarray or scipy.sparse.csr_matrix, shape (S R + n_pairs n, len(θ))
    """
    import torch
    import torch.autograd.forward_ad as fwad

    Pm, n = shoot.n_model, shoot.n
    nf = shoot.free_segments.size
    k = n if nf else 0
    cols = np.arange(Pm) if skip is None else np.flatnonzero(~np.asarray(skip, dtype=bool))
    q = cols.size
    tangent = torch.zeros((q + k, theta.numel()), dtype=theta.dtype)
    tangent[np.arange(q), cols] = 1.0
    for i in range(k):  # component i of every free start state at once
        tangent[q + i, Pm + i::n] = 1.0
    with fwad.dual_level():
        ry, xe = forward(fwad.make_dual(theta.expand(q + k, -1).contiguous(), tangent))
        dry, dxe = fwad.unpack_dual(ry).tangent, fwad.unpack_dual(xe).tangent
    dry, dxe = dry.numpy(), dxe.numpy()
    S, R = dry.shape[1], dry.shape[2]
    scale = shoot.defect_scale
    computed = np.concatenate([dry[:q].reshape(q, S * R),
                               (dxe[:q, shoot.cur] * scale).reshape(q, -1)], axis=1)
    model = np.zeros((Pm, computed.shape[1]))
    model[cols] = computed
    model = model.T
    n_rows = model.shape[0]
    if k == 0:
        return model if model.size <= DENSE_LIMIT else sp.csr_matrix(model)
    dry_s, dxe_s = dry[q:], dxe[q:]  # (n, S, R), (n, S, n)
    seg = shoot.free_segments
    col = np.arange(nf)[:, None] * n + np.arange(n)[None, :]  # (nf, n), in the states' block
    rows, cols, vals = [], [], []
    # the segment's own outputs: rows s R + r, every component i
    r_out = seg[:, None] * R + np.arange(R)[None, :]  # (nf, R)
    rows.append(np.broadcast_to(r_out[:, None, :], (nf, n, R)).ravel())
    cols.append(np.broadcast_to(col[:, :, None], (nf, n, R)).ravel())
    vals.append(dry_s[:, seg, :].transpose(1, 0, 2).ravel())
    pair_of_cur = np.full(S, -1)
    pair_of_cur[shoot.cur] = np.arange(shoot.cur.size)
    pair_of_nxt = np.full(S, -1)
    pair_of_nxt[shoot.nxt] = np.arange(shoot.nxt.size)
    base = S * R
    own = pair_of_cur[seg] >= 0  # the defect after the segment: its end state
    if own.any():
        c = pair_of_cur[seg[own]]
        r_def = base + c[:, None] * n + np.arange(n)[None, :]  # (q, n) rows j
        q = int(own.sum())
        rows.append(np.broadcast_to(r_def[:, None, :], (q, n, n)).ravel())
        cols.append(np.broadcast_to(col[own][:, :, None], (q, n, n)).ravel())
        vals.append((dxe_s[:, seg[own], :].transpose(1, 0, 2) * scale).ravel())
    into = pair_of_nxt[seg] >= 0  # the defect before the segment: −I
    if into.any():
        c = pair_of_nxt[seg[into]]
        rows.append((base + c[:, None] * n + np.arange(n)[None, :]).ravel())
        cols.append(col[into].ravel())
        vals.append(np.broadcast_to(-scale, (int(into.sum()), n)).ravel())
    states = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                           shape=(n_rows, nf * n))
    if n_rows * (Pm + nf * n) <= DENSE_LIMIT:
        return np.hstack([model, states.toarray()])
    return sp.hstack([sp.csr_matrix(model), states], format="csr")


def projected_lm(fun: Callable[[Array], Array], jac: Callable[[Array], Any], x0: Array,
                 lo: Array, hi: Array, max_iter: int, tol: float, target: float,
                 callback: Callable[[list[float]], None] | None = None,
                 deadline: float | None = None,
                 counted: NDArray[np.bool_] | None = None) -> tuple[Array, list[float], str]:
    """Levenberg–Marquardt steps projected onto the box ``lo ≤ x ≤ hi`` (module doc).

    Parameters
    ----------
    fun : callable
        ``fun(x) -> r``: the residuals (non-finite values make a step fail).
    jac : callable
        ``jac(x) -> J``: their Jacobian (dense or sparse).
    x0 : ndarray, shape (p,)
        The start (projected onto the box).
    lo, hi : ndarray, shape (p,)
        The bounds (``±inf`` where there is none).
    max_iter : int
        Iterations (Jacobian evaluations).
    tol : float
        Stop when an accepted step lowers the cost ``|r|²`` by less than this fraction of it.
    target : float
        Stop when the cost is at most this.
    callback : callable, optional
        ``callback(costs)`` after each iteration (a progress bar).
    deadline : float, optional
        ``time.monotonic()`` at which no further iteration starts (a wall-time budget).
    counted : ndarray of bool, shape (p,), optional
        The variables whose curvature sets the damping's scale (all by default).

    Returns
    -------
    (ndarray, list of float, str)
        The parameters, the cost after each iteration (the start's first), why it stopped.
    """
    x = np.clip(np.asarray(x0, dtype=float), lo, hi)
    r = fun(x)
    costs = [float(r @ r)]
    lam, nu = LAMBDA_START, 2.0
    for _ in range(int(max_iter)):
        if costs[-1] <= target:
            return x, costs, f"cost {costs[-1]:.3g} at most {target:g}"
        if deadline is not None and time.monotonic() >= deadline:
            return x, costs, "the time budget (max_time) is spent"
        J = jac(x)
        g = J.T @ r
        A = J.T @ J
        # a variable at its bound whose descent direction leaves the box stays on the bound
        pinned = ((x <= lo) & (g > 0)) | ((x >= hi) & (g < 0))
        diag = A.diagonal()
        level = max(float(np.mean(diag if counted is None else diag[counted])), 1e-300)
        while True:
            step = _step(A, g, level * lam, pinned, x, lo, hi)
            # the whole step shortened to the first bound it meets: the direction is kept and
            # the variable that meets its bound lands on it exactly
            x_new = _to_box(x, step, lo, hi)
            r_new = fun(x_new)
            c_new = float(r_new @ r_new) if np.all(np.isfinite(r_new)) else np.inf
            lin = r + J @ (x_new - x)
            predicted = costs[-1] - float(lin @ lin)
            rho = (costs[-1] - c_new) / predicted if predicted > 0 else -1.0
            if rho > 0:
                lam *= max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3)
                nu = 2.0
                break
            lam *= nu
            nu *= 2.0
            if lam > LAMBDA_MAX or not np.any(x_new != x):
                return x, costs, "no step lowers the cost (a local minimum)"
        gain = costs[-1] - c_new
        x, r = x_new, r_new
        costs.append(c_new)
        if callback is not None:
            callback(costs)
        if gain < tol * costs[-2]:
            return x, costs, f"the cost fell by less than {tol:g} of itself"
        factor = stalled(costs)
        if factor:
            return x, costs, (f"the cost fell by less than {factor:g}x in "
                              f"{STALL_WINDOW} iterations")
    return x, costs, f"max_iter = {int(max_iter)} reached"


def stalled(costs: list[float]) -> float:
    """The factor the cost fell by less than in the last :data:`STALL_WINDOW` iterations, if
    the fit stalls (:data:`STALL_FACTOR`, inside :data:`STALL_BAND` :data:`STALL_FACTOR_NEAR`),
    else 0.

    Parameters
    ----------
    costs : list of float
        The cost after each iteration, the start's first.

    Returns
    -------
    float
    """
    near = STALL_BAND[0] < costs[-1] <= STALL_BAND[1]
    factor = STALL_FACTOR_NEAR if near else STALL_FACTOR
    # near a tolerance the first window does not count: a fit may cross a plateau there before
    # its steps find the valley (a heated body's radiation law: 3.18e-3 → 3.01e-3 in the first
    # 10 iterations, 2.1e-5 ten later, 1e-10 at the end; held out 4.8 % stopped, 0.005 % not)
    if len(costs) <= STALL_WINDOW * (2 if near else 1):
        return 0.0
    return factor if costs[-1 - STALL_WINDOW] < factor * costs[-1] else 0.0


def _step(A: Any, g: Array, damping: float, pinned: Array, x: Array, lo: Array,
          hi: Array) -> Array:
    """The damped Gauss–Newton step with the pinned variables held, and with those at a bound
    that the step would leave held too (at most :data:`PIN_ROUNDS` rounds)."""
    pinned = pinned.copy()
    for _ in range(PIN_ROUNDS):
        free = np.flatnonzero(~pinned)
        Af = A[free][:, free] if sp.issparse(A) else A[np.ix_(free, free)]
        step = np.zeros_like(g)
        step[free] = _solve(Af, damping, -g[free])
        out = ~pinned & (((x <= lo) & (step < 0)) | ((x >= hi) & (step > 0)))
        if not out.any():
            break
        pinned |= out
    return step


def _to_box(x: Array, step: Array, lo: Array, hi: Array) -> Array:
    """``x + t step`` with the largest ``t ≤ 1`` inside the box (the variables that meet their
    bound set on it exactly)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(step > 0, (hi - x) / step, np.where(step < 0, (lo - x) / step, np.inf))
    t = float(min(1.0, room.min(initial=np.inf)))
    x_new = x + t * step
    hit = room <= t
    x_new[hit & (step > 0)] = hi[hit & (step > 0)]
    x_new[hit & (step < 0)] = lo[hit & (step < 0)]
    return np.clip(x_new, lo, hi)


def _solve(A: Any, damping: float, b: Array) -> Array:
    """``(A + damping I) s = b`` for the symmetric positive semidefinite ``A``."""
    if sp.issparse(A):
        from scipy.sparse.linalg import spsolve

        return np.asarray(spsolve((A + damping * sp.identity(A.shape[0])).tocsc(), b),
                          dtype=float)
    M = A + damping * np.eye(A.shape[0])
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(M), b)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(M, b, rcond=None)[0]


@contextmanager
def progress_bar(est: Any, n: int) -> Iterator[Callable[[list[float]], None] | None]:
    """A tqdm bar over the iterations of one fit where ``est.progress`` asks for it: the
    callback of :func:`projected_lm` (``None`` otherwise)."""
    if not getattr(est, "progress", False):
        yield None
        return
    from tqdm.auto import tqdm

    bar = tqdm(total=int(est.max_iter), desc=f"NonlinearPH fit (order {n})", leave=False)

    def update(costs: list[float]) -> None:
        bar.update(1)
        bar.set_postfix(cost=f"{costs[-1]:.3e}")

    try:
        yield update
    finally:
        bar.close()
