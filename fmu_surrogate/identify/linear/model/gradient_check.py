"""Gradient checking tools for the adjoint gradients of :mod:`fmu_surrogate.identify.linear.model.adjoint`.

* :func:`taylor_test` — the remainder ``|f(x + εd) − f(x) − ε⟨∇f, d⟩|`` of a correct gradient
  falls like ε² (slope 2 in a log-log plot); a wrong gradient leaves an O(ε) remainder (slope 1).
* :func:`autograd_gradient`, :func:`autograd_cost_and_gradient`, :func:`compare_with_autograd` —
  an independent implementation of the same discretised forward model and discrete cost in
  torch (float64, plain sequential loop over time steps, ``torch.linalg.matrix_exp`` for the
  exact mode), differentiated by autograd.
* :func:`loop_cost_and_gradient` — reference implementation of the *same algorithm* as
  :func:`~fmu_surrogate.identify.linear.model.adjoint_checked.cost_and_gradient` with per-time-step Python loops
  (state, adjoint and gradient sums); the baseline of the speed-up measured by
  ``scripts/bench_adjoint.py``.
* :class:`LoopEvaluator` — those loop references behind the interface of
  :class:`~fmu_surrogate.identify.linear.model.adjoint.Evaluator`, so that the identifier's optimiser can run
  on them unchanged (the bench baseline).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.identify.linear.model.adjoint import evaluator_settings
from fmu_surrogate.identify.linear.model.discretisation import (
    _expm_frechet_adjoint,
    _plan,
    foh_block_matrix,
    foh_matrices,
    quadrature_weights,
)
from fmu_surrogate.identify.linear.model.evaluation import _check_gradient
from fmu_surrogate.identify.linear.model.experiments import (
    NO_REGULARIZATION,
    PARAMS,
    Experiment,
    GradientKind,
    Mode,
    Regularization,
    _check_inputs,
    _check_mode,
    _regularization,
)

Array = NDArray[np.float64]


# ---------------------------------------------------------------------------------------------
# Taylor test
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TaylorResult:
    """Outcome of :func:`taylor_test`.

    Attributes
    ----------
    eps : ndarray, shape (n,)
        Step sizes ``eps0 / 2^i``.
    remainders : ndarray, shape (n,)
        ``|f(x + εd) − f(x) − ε⟨∇f, d⟩|``.
    slopes : ndarray, shape (n − 1,)
        Local slopes ``log(r_{i+1}/r_i) / log(ε_{i+1}/ε_i)``.
    slope : float
        Least-squares slope of ``log r`` against ``log ε`` over the points above the rounding
        floor (``r > 1e3 · eps_machine · |f(x)|``); ``nan`` if fewer than two such points.
        2 for a correct gradient.
    """

    eps: Array
    remainders: Array
    slopes: Array
    slope: float


def _axpy(x: Mapping[str, Array], d: Mapping[str, Array], eps: float) -> dict[str, Array]:
    out = {k: np.asarray(v, dtype=float) for k, v in x.items()}
    for k, dk in d.items():
        out[k] = out[k] + eps * np.asarray(dk, dtype=float)
    return out


def taylor_test(
    f: Callable[[dict[str, Array]], float],
    x: Mapping[str, ArrayLike],
    direction: Mapping[str, ArrayLike],
    grad: Mapping[str, ArrayLike],
    eps0: float = 1e-2,
    n: int = 8,
) -> TaylorResult:
    """Taylor test of a gradient.

    Parameters
    ----------
    f : callable
        ``f(params_dict) -> float``.
    x : dict of str to array
        Point of the test (all arguments of ``f``).
    direction : dict of str to array
        Perturbation direction ``d`` (a subset of the keys of ``x``; the others stay fixed).
    grad : dict of str to array
        Claimed gradient at ``x``; must contain every key of ``direction``.
    eps0 : float
        Largest step.
    n : int
        Number of halvings (≥ 2).

    Returns
    -------
    TaylorResult
    """
    if n < 2:
        raise InvalidInputError(f"n must be at least 2 to measure a slope, got {n}.")
    missing = set(direction) - set(grad)
    if missing:
        raise InvalidInputError(f"grad has no entry for the direction keys {sorted(missing)}.")
    xx = {k: np.asarray(v, dtype=float) for k, v in x.items()}
    f0 = float(f(xx))
    dg = sum(float(np.sum(np.asarray(grad[k]) * np.asarray(direction[k]))) for k in direction)
    eps = eps0 / 2.0 ** np.arange(n)
    rem = np.array([abs(float(f(_axpy(xx, direction, e))) - f0 - e * dg) for e in eps])
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.log(rem[1:] / rem[:-1]) / np.log(eps[1:] / eps[:-1])
    ok = rem > 1e3 * np.finfo(float).eps * max(abs(f0), 1e-300)
    if ok.sum() >= 2:
        slope = float(np.polyfit(np.log(eps[ok]), np.log(rem[ok]), 1)[0])
    else:
        slope = float("nan")
    return TaylorResult(eps, rem, slopes, slope)


# ---------------------------------------------------------------------------------------------
# torch autograd reference
# ---------------------------------------------------------------------------------------------
def _torch_cost(
    params_t: dict, exps: Sequence[Experiment], mode: str, reg: Regularization, wrt: Sequence[str]
):
    import torch

    J, R, Q, B, x0 = (params_t[k] for k in PARAMS)
    n, m = B.shape
    A = (J - R) @ Q
    C = B.T @ Q
    plan = _plan(exps)
    hs = torch.as_tensor(plan.h, dtype=torch.float64)
    if mode == "exact":
        N = n + 2 * m
        Phis, G0s, G1s = [], [], []
        for g in range(hs.shape[0]):
            M = torch.zeros((N, N), dtype=torch.float64)
            top = torch.cat([A * hs[g], B * hs[g], torch.zeros((n, m), dtype=torch.float64)], 1)
            mid = torch.cat(
                [torch.zeros((m, n + m), dtype=torch.float64), torch.eye(m, dtype=torch.float64)], 1
            )
            M = torch.cat([top, mid, torch.zeros((m, N), dtype=torch.float64)], 0)
            E = torch.linalg.matrix_exp(M)
            Phis.append(E[:n, :n])
            G0s.append(E[:n, n : n + m] - E[:n, n + m :])
            G1s.append(E[:n, n + m :])
    total = torch.zeros((), dtype=torch.float64)
    for e, idx in zip(exps, plan.index):
        u = torch.tensor(e.u)  # copies (the experiment arrays are read-only)
        yd = torch.tensor(e.y)
        h = plan.h[idx]
        w = torch.as_tensor(quadrature_weights(h, mode))
        x = x0
        xs = [x]
        for k in range(e.n_samples - 1):
            if mode == "euler":
                x = x + float(h[k]) * (A @ x + B @ u[k])
            else:
                g = int(idx[k])
                x = Phis[g] @ x + G0s[g] @ u[k] + G1s[g] @ u[k + 1]
            xs.append(x)
        X = torch.stack(xs)
        r = X @ C.T - yd
        total = total + 0.5 * torch.sum(w * torch.sum(r * r, 1))
    for k in wrt:
        if reg.lam > 0:
            ref = None if reg.reference is None else reg.reference.get(k)
            d = params_t[k] - (
                0.0
                if ref is None
                else torch.as_tensor(np.asarray(ref, dtype=float).reshape(params_t[k].shape))
            )
            total = total + 0.5 * reg.lam * torch.sum(d * d)
        if k == "Q" and reg.log_q > 0:
            lam, V = torch.linalg.eig(Q)
            Lq = (V @ torch.diag(torch.log(lam)) @ torch.linalg.inv(V)).real
            total = total + 0.5 * reg.log_q * torch.sum(Lq * Lq)
    return total


def autograd_cost_and_gradient(
    params: Mapping[str, ArrayLike],
    experiments: Experiment | Sequence[Experiment],
    mode: Mode = "exact",
    reg: Regularization = NO_REGULARIZATION,
    wrt: Sequence[str] = PARAMS,
) -> tuple[float, dict[str, Array]]:
    """Cost and gradient of the discretised model by torch autograd (float64).

    An independent implementation of the forward model of
    :func:`~fmu_surrogate.identify.linear.model.adjoint_checked.cost` (same step grouping, quadrature weights and
    regulariser) with a plain sequential loop over time steps; slow, for checking only.

    Returns
    -------
    cost : float
    grad : dict of str to ndarray
        For the keys in ``wrt``.
    """
    import torch

    p, exps, wrt = _check_inputs(params, experiments, mode, wrt)
    pt = {k: torch.tensor(v, dtype=torch.float64, requires_grad=k in wrt) for k, v in p.items()}
    total = _torch_cost(pt, exps, mode, reg, wrt)
    leaves = [pt[k] for k in wrt]
    grads = torch.autograd.grad(total, leaves) if leaves else ()
    return float(total.detach()), {k: g.detach().numpy().copy() for k, g in zip(wrt, grads)}


def autograd_gradient(
    params: Mapping[str, ArrayLike],
    experiments: Experiment | Sequence[Experiment],
    mode: Mode = "exact",
    reg: Regularization = NO_REGULARIZATION,
    wrt: Sequence[str] = PARAMS,
) -> dict[str, Array]:
    """Gradient of the discretised cost by torch autograd (see :func:`autograd_cost_and_gradient`).

    Returns
    -------
    dict of str to ndarray
        For the keys in ``wrt``.
    """
    return autograd_cost_and_gradient(params, experiments, mode, reg, wrt)[1]


def compare_with_autograd(
    params: Mapping[str, ArrayLike],
    experiments: Experiment | Sequence[Experiment],
    mode: Mode = "exact",
    reg: Regularization = NO_REGULARIZATION,
    wrt: Sequence[str] = PARAMS,
) -> float:
    """Max over parameters of ``‖G_adjoint − G_autograd‖_F / ‖G_autograd‖_F``.

    Compares :func:`~fmu_surrogate.identify.linear.model.adjoint_checked.cost_and_gradient` (``gradient="exact"``)
    with :func:`autograd_cost_and_gradient`; also checks that the two costs agree (their relative
    difference enters the maximum).
    """
    from fmu_surrogate.identify.linear.model.adjoint_checked import cost_and_gradient

    c, g = cost_and_gradient(params, experiments, mode, reg, wrt)
    ca, ga = autograd_cost_and_gradient(params, experiments, mode, reg, wrt)
    rel = abs(c - ca) / max(abs(ca), np.finfo(float).tiny)
    for k in ga:
        den = max(float(np.linalg.norm(ga[k])), np.finfo(float).tiny)
        rel = max(rel, float(np.linalg.norm(g[k] - ga[k])) / den)
    return rel


# ---------------------------------------------------------------------------------------------
# Per-time-step loop reference implementation (bench baseline)
# ---------------------------------------------------------------------------------------------
def _loop_forward(
    A: Array,
    B: Array,
    C: Array,
    x0: Array,
    e: Experiment,
    h: Array,
    idx: NDArray[np.intp],
    mode: str,
    disc: tuple[Array, Array, Array] | None,
) -> tuple[Array, Array, list[Array], float]:
    """Per-step loop: states, residuals, transition matrices and the misfit of one experiment."""
    if mode == "exact" and e.hold != "linear":
        raise InvalidInputError(
            "the loop reference implements the exact mode for piecewise-linear inputs only; "
            "use the vectorised cost_and_gradient for zero-order-hold experiments."
        )
    u, yd = e.u, e.y
    K = e.n_samples
    n, m = B.shape
    w = quadrature_weights(h, mode)
    X = np.empty((K, n))
    X[0] = x0
    Phis = []
    if mode == "euler":  # I + h A once per distinct step size, as in the vectorised code
        table = {hk: np.eye(n) + hk * A for hk in np.unique(h)}
    for k in range(K - 1):
        if mode == "euler":
            Phi = table[h[k]]
            X[k + 1] = Phi @ X[k] + h[k] * (B @ u[k])
        else:
            assert disc is not None
            g = idx[k]
            Phi = disc[0][g]
            X[k + 1] = Phi @ X[k] + disc[1][g] @ u[k] + disc[2][g] @ u[k + 1]
        Phis.append(Phi)
    r = np.empty((K, m))
    total = 0.0
    for k in range(K):
        r[k] = C @ X[k] - yd[k]
        total += 0.5 * w[k] * float(r[k] @ r[k])
    return X, r, Phis, total


def loop_cost(
    params: Mapping[str, ArrayLike],
    experiments: Experiment | Sequence[Experiment],
    mode: Mode = "exact",
    reg: Regularization = NO_REGULARIZATION,
    wrt: Sequence[str] = PARAMS,
) -> float:
    """Reference implementation of :func:`~fmu_surrogate.identify.linear.model.adjoint_checked.cost` with a
    per-time-step Python loop (same discretisation and matrix exponentials); bench baseline
    for the line-search evaluations."""
    p, exps, wrt = _check_inputs(params, experiments, mode, wrt)
    J, R, Q, B, x0 = (p[k] for k in PARAMS)
    plan = _plan(exps)
    A = (J - R) @ Q
    C = B.T @ Q
    disc = foh_matrices(A, B, plan.h)[:3] if mode == "exact" else None
    total = 0.0
    for e, idx in zip(exps, plan.index):
        total += _loop_forward(A, B, C, x0, e, plan.h[idx], idx, mode, disc)[3]
    return total + _regularization(p, reg, wrt, False)[0]


def loop_cost_and_gradient(
    params: Mapping[str, ArrayLike],
    experiments: Experiment | Sequence[Experiment],
    mode: Mode = "exact",
    reg: Regularization = NO_REGULARIZATION,
    wrt: Sequence[str] = PARAMS,
    gradient: GradientKind = "exact",
) -> tuple[float, dict[str, Array]]:
    """Reference implementation of :func:`~fmu_surrogate.identify.linear.model.adjoint_checked.cost_and_gradient`.

    Same discretisation, cost, adjoint and gradient formulas, and the same matrix exponential
    and Fréchet calls (one per distinct step size), but with straightforward Python loops over
    the time steps for the state recurrence, the adjoint recurrence and the gradient sums
    (``np.outer`` per step).  It is the baseline of the speed-up figures; it also serves as an
    independent check of the vectorised code.  Same arguments and return value.
    """
    _check_mode(mode)
    _check_gradient(gradient, mode)
    p, exps, wrt = _check_inputs(params, experiments, mode, wrt)
    J, R, Q, B, x0 = (p[k] for k in PARAMS)
    n, m = B.shape
    plan = _plan(exps)
    JR = J - R
    A = JR @ Q
    C = B.T @ Q
    disc = foh_matrices(A, B, plan.h)[:3] if mode == "exact" else None
    if mode == "exact":
        GE = np.zeros((plan.h.shape[0], n + 2 * m, n + 2 * m))
    G_A = np.zeros((n, n))
    G_Bin = np.zeros((n, m))
    G_C = np.zeros((m, n))
    G_x0 = np.zeros(n)
    total = 0.0
    for e, idx in zip(exps, plan.index):
        u = e.u
        K = e.n_samples
        h = plan.h[idx]
        w = quadrature_weights(h, mode)
        X, r, Phis, c_e = _loop_forward(A, B, C, x0, e, h, idx, mode, disc)
        total += c_e
        lam = np.zeros(n)
        if gradient == "paper":
            # p_{K−1} = 0, p_k = Φ_kᵀ p_{k+1} + h_k Cᵀ r_{k+1}; left-endpoint sums with p_k.
            for k in range(K - 2, -1, -1):
                lam = Phis[k].T @ lam + h[k] * (C.T @ r[k + 1])
                G_A += h[k] * np.outer(lam, X[k])
                G_Bin += h[k] * np.outer(lam, u[k])
                G_C += h[k] * np.outer(r[k], X[k])
            G_x0 += lam
            continue
        lam = w[K - 1] * (C.T @ r[K - 1])
        G_C += w[K - 1] * np.outer(r[K - 1], X[K - 1])
        for k in range(K - 2, -1, -1):
            # here lam = λ_{k+1}
            if mode == "euler":
                G_A += h[k] * np.outer(lam, X[k])
                G_Bin += h[k] * np.outer(lam, u[k])
            else:
                g = idx[k]
                GE[g, :n, :n] += np.outer(lam, X[k])
                GE[g, :n, n : n + m] += np.outer(lam, u[k])
                GE[g, :n, n + m :] += np.outer(lam, u[k + 1] - u[k])
            G_C += w[k] * np.outer(r[k], X[k])
            lam = Phis[k].T @ lam + w[k] * (C.T @ r[k])
        G_x0 += lam
    if mode == "exact":
        M = foh_block_matrix(A, B, plan.h)
        GM = _expm_frechet_adjoint(M, GE)
        for g in range(plan.h.shape[0]):
            G_A += plan.h[g] * GM[g, :n, :n]
            G_Bin += plan.h[g] * GM[g, :n, n : n + m]
    rval, rgrad = _regularization(p, reg, wrt, True)
    total += rval
    grads: dict[str, Array] = {}
    for k in wrt:
        gk = {
            "J": lambda: G_A @ Q.T,
            "R": lambda: -(G_A @ Q.T),
            "Q": lambda: JR.T @ G_A + B @ G_C,
            "B": lambda: G_Bin + Q @ G_C.T,
            "x0": lambda: G_x0.copy(),
        }[k]()
        if k in rgrad:
            gk = gk + rgrad[k]
        grads[k] = gk
    return total, grads


class LoopEvaluator:
    """:class:`~fmu_surrogate.identify.linear.model.adjoint.Evaluator` interface on the loop reference.

    ``forward`` only records the parameters; :meth:`cost` runs :func:`loop_cost` and
    :meth:`cost_and_gradient` runs :func:`loop_cost_and_gradient` (forward, adjoint and gradient
    sums by per-time-step loops).  Plugged into :class:`~fmu_surrogate.identify.linear.estimator.
    LinearPHIdentifier` in place of the vectorised evaluator it runs the same optimiser with the
    same iterates on the loop implementation: the baseline of ``scripts/bench_adjoint.py``.
    Same constructor arguments as the vectorised evaluator.
    """

    def __init__(
        self,
        experiments: Experiment | Sequence[Experiment],
        mode: Mode = "exact",
        reg: Regularization = NO_REGULARIZATION,
        wrt: Sequence[str] = PARAMS,
        gradient: GradientKind = "exact",
        n_ports: int | None = None,
    ) -> None:
        self.experiments, self.wrt = evaluator_settings(
            experiments, mode, reg, wrt, gradient, n_ports
        )
        self.mode = mode
        self.reg = reg
        self.gradient_kind = gradient

    def forward(self, J: Array, R: Array, Q: Array, B: Array, x0: Array) -> dict[str, Array]:
        """The parameters (the loop reference solves the state equation in every call)."""
        return {"J": J, "R": R, "Q": Q, "B": B, "x0": x0}

    def cost(self, state: Mapping[str, Array]) -> float:
        """:func:`loop_cost` (``inf`` if not finite, like the vectorised evaluator)."""
        c = float(loop_cost(state, self.experiments, self.mode, self.reg, self.wrt))
        return c if np.isfinite(c) else float("inf")

    def cost_and_gradient(self, state: Mapping[str, Array]) -> tuple[float, dict[str, Array]]:
        """:func:`loop_cost_and_gradient`."""
        return loop_cost_and_gradient(
            state, self.experiments, self.mode, self.reg, self.wrt, self.gradient_kind
        )
