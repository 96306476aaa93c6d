r"""Forward models, discrete costs and adjoint gradients for linear pH identification.

Model (docs/design.md §4, Günther–Jacob–Totzeck)::

    ẋ = (J − R) Q x + B u,   x(0) = x0,   y = Bᵀ Q x          (A = (J − R) Q,  C = Bᵀ Q)

    cost(w) = Σ_experiments ½ Σ_k w_k |y_k − y_data,k|²  +  regularisation

Two discretisations (``mode``)
------------------------------
``"euler"`` — the paper's scheme, for reproduction.
    Explicit Euler ``x_{k+1} = x_k + h_k (A x_k + B u_k)`` and left-endpoint quadrature:
    weights ``w_k = h_k`` for ``k < K−1`` and ``w_{K−1} = 0``.

``"exact"`` — exact discretisation for piecewise-linear (first-order hold) inputs.
    With ``M = [[A h, B h, 0], [0, 0, I_m], [0, 0, 0]]`` (size ``n + 2m``),
    ``expm(M) = [[Φ, Γ_a, Γ_b], [0, I, I], [0, 0, I]]`` where ``Φ = e^{Ah}``,
    ``Γ_a = ∫₀ʰ e^{A(h−s)} B ds`` and ``Γ_b = ∫₀ʰ e^{A(h−s)} B (s/h) ds``; the solution for
    ``u(t_k + s) = u_k + (s/h)(u_{k+1} − u_k)`` is exactly
    ``x_{k+1} = Φ x_k + Γ0 u_k + Γ1 u_{k+1}`` with ``Γ0 = Γ_a − Γ_b``, ``Γ1 = Γ_b``.
    The cost uses trapezoidal weights ``w_0 = h_0/2``, ``w_k = (h_{k−1} + h_k)/2``,
    ``w_{K−1} = h_{K−2}/2`` on the sample points.  (The data are only known at the samples; the
    trapezoidal rule is the natural O(h²) discrete L² norm of them.  Integrating the squared
    *linearly interpolated* residual exactly would give the same order — the model output
    between samples is not linear either — at the price of cross terms ``r_k·r_{k+1}``.)

Gradients (``cost_and_gradient``)
---------------------------------
All gradients are plain Euclidean partial derivatives w.r.t. every entry of ``J, R, Q, B, x0``
(entries treated as independent; no symmetrisation).  A manifold layer projects them, e.g.
for ``R = Y Yᵀ`` the gradient in ``Y`` is ``2 sym(G_R) Y``.

``gradient="exact"`` (default, both modes) — the exact gradient of the *discrete* cost
(discrete adjoint).  With ``x_{k+1} = Φ_k x_k + b_k``, residuals ``r_k = C x_k − y_data,k``::

    λ_{K−1} = w_{K−1} Cᵀ r_{K−1},     λ_k = Φ_kᵀ λ_{k+1} + w_k Cᵀ r_k
    G_x0 = λ_0,   G_C = Σ_k w_k r_k x_kᵀ

  Euler (``Φ_k = I + h_k A``, ``b_k = h_k B u_k``)::

    G_A = Σ_k h_k λ_{k+1} x_kᵀ,   G_B(input) = Σ_k h_k λ_{k+1} u_kᵀ

  Exact: ``G_Φ = Σ_k λ_{k+1} x_kᵀ``, ``G_Γ0 = Σ_k λ_{k+1} u_kᵀ``, ``G_Γ1 = Σ_k λ_{k+1} u_{k+1}ᵀ``
  (sums per distinct step size), assembled into ``G_E`` (blocks ``G_Φ``, ``G_Γ_a = G_Γ0``,
  ``G_Γ_b = G_Γ1 − G_Γ0``), pulled back through the exponential with the adjoint of the
  Fréchet derivative, ``G_M = L_exp(Mᵀ, G_E)`` (one call per distinct step size and gradient,
  shared across experiments), and ``G_A = h G_M[:n, :n]``, ``G_B(input) = h G_M[:n, n:n+m]``.

``gradient="paper"`` (Euler mode only) — the paper's continuous adjoint
``−ṗ = Q (J − R)ᵀ p + Q B (y − y_data)``, ``p(T) = 0`` (Q symmetric; we use ``Aᵀ``, ``Cᵀ``
for the general case) discretised as in the paper: explicit Euler backwards in time,
``p_{K−1} = 0``, ``p_k = p_{k+1} + h_k (Aᵀ p_{k+1} + Cᵀ r_{k+1})``, and left-endpoint
quadrature of Theorem 5's integrals: ``G_A = Σ_k h_k p_k x_kᵀ``,
``G_B(input) = Σ_k h_k p_k u_kᵀ``, ``G_C = Σ_k h_k r_k x_kᵀ``, ``G_x0 = p_0``.
Compared with the discrete adjoint it uses ``r_{k+1}`` instead of ``r_k`` in the adjoint forcing
and ``p_k`` instead of ``λ_{k+1}`` in the integrals, so it differs by O(h): it is the gradient
of the continuous cost, not of the discrete one (a line search on the discrete cost sees an
inexact gradient).

In both cases the chain rule through ``A = (J − R) Q`` and ``C = Bᵀ Q`` gives::

    G_J = G_A Qᵀ,   G_R = −G_A Qᵀ,   G_Q = (J − R)ᵀ G_A + B G_C,   G_B = G_B(input) + Q G_Cᵀ

the discrete counterpart of the paper's optimality conditions (Section 3, derived from the
Lagrangian): ``∇_J = ∫ p (Qx)ᵀ``, ``∇_R = −∫ p (Qx)ᵀ``, ``∇_B = ∫ p uᵀ + Q x rᵀ``,
``∇_x0 = p(0)`` agree term by term; for Q the paper writes ``∫ x ⊗ ((J−R)ᵀp) + x ⊗ (B r)``,
the *transpose* of the plain partial derivative ``∫ (J−R)ᵀ p xᵀ + B r xᵀ`` used here — the
two coincide after projection onto symmetric matrices (the paper's Q is symmetric).  (The
statement of Theorem 5 in the text version of the paper is partly garbled, e.g. (8b), (8e);
we follow the derivation.)  Verified by Taylor tests and torch autograd
(``tests/identify/test_adjoint.py``).

Entry points
------------
:func:`cost`, :func:`cost_and_gradient` and :func:`simulate` validate their arguments on every
call.  :class:`Evaluator` is the optimiser's fast path: it validates the experiments and settings
once, precomputes what does not depend on the parameters (step-size groups, quadrature weights,
shifted and differenced inputs) and then evaluates unchecked arrays, returning an opaque forward
state so that the gradient at an accepted line-search point reuses its forward solve (and the
repeated squares of Φ its scan used).  Both run the same code after validation, so their results
are bitwise equal.  The checked functions keep a single-entry cache of the last forward solve
(``cost(w)`` followed by ``cost_and_gradient(w)`` solves the state equation once);
:func:`clear_forward_cache` drops it.

Cost of one evaluation
----------------------
No Python loop over time steps: both recurrences use the parallel-prefix scans of
:mod:`fmu_surrogate.identify.linear_recurrence` (forward in time, and the mirrored scan backward
for the adjoint); the sums over k are single matrix products.  In the exact mode the forcing is
one product ``[u_k, u_{k+1} − u_k] [Γ_a Γ_b]ᵀ``, and the adjoint of the Fréchet derivative needs
only the rows ``:n`` (the block exponential of size n + N instead of 2N, see
:func:`_foh_frechet_adjoint`).  Time grids may be non-uniform: step sizes equal to a relative
``STEP_RTOL`` are grouped (snapped to the group mean, a model change ≤ STEP_RTOL relative).  A
uniform grid per experiment is the fast path; experiments on different grids are looped over
(shared step sizes share their exponential and Fréchet derivative).  With G distinct step sizes
the exact mode needs G matrix exponentials (one batched call) and G Fréchet derivatives per
gradient, the recurrences become time-varying (``O(K n³)`` Brent–Kung scan for n ≤ 24,
sequential loop above) and the gradient sums are grouped per step size (G matrix products).

Measured (1 thread, K = 1001 samples, m = 2, median processor time on a shared 2-core machine,
:class:`Evaluator`; the per-step loop reference is
:func:`fmu_surrogate.identify.gradient_check.loop_cost_and_gradient`): forward solve + cost
≈ 70 / 100 µs (n = 5, Euler / exact), 115 / 160 µs (n = 20), 1.7 / 2.8 ms (n = 100); adjoint
solve + gradient on top of it ≈ 70 / 110 µs, 135 / 230 µs, 2 / 4.5 ms.  The loop reference
takes ≈ 6 / 7.5 ms per cost and 18 / 25 ms per cost and gradient at n = 5 and 20.  Figures per
CG iteration and against the loop in ``scripts/bench_adjoint.py``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import eigh, expm, expm_frechet, logm

from fmu_surrogate.identify.linear_recurrence import (
    scan_constant,
    scan_powers,
    solve_adjoint_recurrence,
    solve_linear_recurrence,
)

Array = NDArray[np.float64]
Mode = Literal["exact", "euler"]
GradientKind = Literal["exact", "paper"]

#: Names of the identifiable parameters, in canonical order.
PARAMS: tuple[str, ...] = ("J", "R", "Q", "B", "x0")
MODES: tuple[str, ...] = ("exact", "euler")
#: Step sizes that agree to this relative tolerance are treated as one step size.
STEP_RTOL = 1e-9
#: Block-matrix size up to which the Fréchet adjoint uses the 2×2 block exponential
#: (batched; faster than scipy.linalg.expm_frechet for small matrices, measured).
_BLOCK_FRECHET_MAX = 48


# ---------------------------------------------------------------------------------------------
# Data containers
# ---------------------------------------------------------------------------------------------
def _check_time(t: ArrayLike, name: str = "t") -> Array:
    tt = np.array(t, dtype=float)
    if tt.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of sample times, got shape {tt.shape}.")
    if tt.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 sample times, got {tt.shape[0]}.")
    if not np.all(np.isfinite(tt)):
        raise ValueError(f"{name} contains NaN or Inf; remove or interpolate those samples.")
    d = np.diff(tt)
    if np.any(d <= 0):
        k = int(np.argmax(d <= 0))
        raise ValueError(
            f"{name} must be strictly increasing, but {name}[{k + 1}] = {tt[k + 1]!r} <= "
            f"{name}[{k}] = {tt[k]!r}; sort the samples and drop duplicate time points."
        )
    return tt


def _check_signal(a: ArrayLike, K: int, name: str, m: int | None = None) -> Array:
    arr = np.array(a, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != K:
        raise ValueError(
            f"{name} must have shape (K, m) = ({K}, m) with one row per sample time, "
            f"got shape {np.shape(a)}."
        )
    if arr.shape[1] < 1:
        raise ValueError(f"{name} needs at least one channel (m ≥ 1), got shape {arr.shape}.")
    if m is not None and arr.shape[1] != m:
        raise ValueError(
            f"{name} has {arr.shape[1]} channels but the model has m = {m} ports (B is n×{m}); "
            f"pass a ({K}, {m}) array."
        )
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"{name} contains NaN or Inf (first at row {bad[0]}, column {bad[1]}); "
            f"remove or interpolate those samples."
        )
    return arr


@dataclass(frozen=True)
class StepGroups:
    """Distinct step sizes of a time grid.

    Attributes
    ----------
    h : ndarray, shape (G,)
        Representative step sizes (mean of each group).
    index : ndarray of int, shape (K−1,)
        Group of each step.
    """

    h: Array
    index: NDArray[np.intp]

    @property
    def uniform(self) -> bool:
        """Whether the grid has a single step size."""
        return self.h.shape[0] == 1

    @property
    def steps(self) -> Array:
        """Snapped step sizes ``h[index]``, shape (K−1,)."""
        return self.h[self.index]


def _group_values(h: Array, rtol: float) -> tuple[Array, NDArray[np.intp]]:
    order = np.argsort(h, kind="stable")
    hs = h[order]
    brk = np.flatnonzero(np.diff(hs) > rtol * hs[1:]) + 1
    labels_sorted = np.zeros(h.shape[0], dtype=np.intp)
    labels_sorted[brk] = 1
    labels_sorted = np.cumsum(labels_sorted)
    G = int(labels_sorted[-1]) + 1 if h.shape[0] else 0
    means = np.bincount(labels_sorted, weights=hs, minlength=G) / np.bincount(
        labels_sorted, minlength=G
    )
    index = np.empty_like(labels_sorted)
    index[order] = labels_sorted
    return means, index


def step_groups(t: ArrayLike, rtol: float = STEP_RTOL) -> StepGroups:
    """Group the steps of a time grid by size (equal to ``rtol`` relative).

    Parameters
    ----------
    t : array_like, shape (K,)
        Strictly increasing sample times.
    rtol : float
        Relative tolerance under which two step sizes count as equal.
    """
    h = np.diff(np.asarray(t, dtype=float))
    means, index = _group_values(h, rtol)
    return StepGroups(means, index)


@dataclass(frozen=True, eq=False)
class Experiment:
    """One experiment: inputs and measured outputs on its own time grid.

    Parameters
    ----------
    t : ndarray, shape (K,)
        Strictly increasing sample times (K ≥ 2).  Uniform grids are the fast path; a grid with
        G distinct step sizes costs G matrix exponentials per evaluation (exact mode).
    u : ndarray, shape (K, m)
        Inputs at the sample times (interpreted as piecewise linear in exact mode, as
        left-endpoint piecewise constant in Euler mode).  ``(K,)`` is accepted for m = 1.
    y : ndarray, shape (K, m)
        Measured outputs ``y = Bᵀ Q x`` (no feedthrough), same shape as ``u``.

    Raises
    ------
    ValueError
        Inconsistent shapes, NaN/Inf, or ``t`` not strictly increasing.
    """

    t: Array
    u: Array
    y: Array
    groups: StepGroups = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        t = _check_time(self.t)
        K = t.shape[0]
        u = _check_signal(self.u, K, "u")
        y = _check_signal(self.y, K, "y")
        if y.shape != u.shape:
            raise ValueError(
                f"y must have the same shape as u (K, m) = {u.shape} — a pH port pairs each "
                f"input with one output — got {y.shape}."
            )
        for a in (t, u, y):
            a.setflags(write=False)
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "u", u)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "groups", step_groups(t))

    @classmethod
    def from_arrays(cls, t: ArrayLike, u: ArrayLike, y: ArrayLike) -> Experiment:
        """Validate and copy arrays into an :class:`Experiment` (see the class docstring)."""
        return cls(t, u, y)  # type: ignore[arg-type]

    @property
    def n_samples(self) -> int:
        """Number of sample times K."""
        return self.t.shape[0]

    @property
    def n_ports(self) -> int:
        """Number of ports m."""
        return self.u.shape[1]


@dataclass(frozen=True, eq=False)
class Regularization:
    """Regularisation added to the data misfit.

    ``(lam/2) Σ_{p fitted} ‖p − reference[p]‖²_F + (log_q/2) ‖log Q‖²_F`` (the latter only
    when Q is fitted).  Missing reference entries (or ``reference=None``) mean a zero
    reference.  The paper uses ``log_q = 0.001``.

    Parameters
    ----------
    lam : float
        Weight λ ≥ 0 of the reference term.
    reference : dict of str to ndarray, optional
        Reference values ``w_ref`` keyed by parameter name.
    log_q : float
        Weight ≥ 0 of ``½‖log Q‖²_F``.
    """

    lam: float = 0.0
    reference: Mapping[str, ArrayLike] | None = None
    log_q: float = 0.0

    def __post_init__(self) -> None:
        for name in ("lam", "log_q"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v >= 0):
                raise ValueError(f"Regularization.{name} must be a finite number ≥ 0, got {v!r}.")
        if self.reference is not None:
            unknown = set(self.reference) - set(PARAMS)
            if unknown:
                raise ValueError(
                    f"Regularization.reference has unknown keys {sorted(unknown)}; "
                    f"allowed: {PARAMS}."
                )


#: The default: no regularisation.
NO_REGULARIZATION = Regularization()


# ---------------------------------------------------------------------------------------------
# Validation of parameters
# ---------------------------------------------------------------------------------------------
def check_params(params: Mapping[str, ArrayLike]) -> dict[str, Array]:
    """Validate the model parameters and return float copies.

    Parameters
    ----------
    params : dict
        ``J, R, Q`` of shape (n, n), ``B`` of shape (n, m), optional ``x0`` of shape (n,)
        (defaults to zero).  No structure is required here (the gradients are w.r.t. all
        entries); only shapes and finiteness are checked.

    Returns
    -------
    dict of str to ndarray
        All five parameters.
    """
    missing = [k for k in ("J", "R", "Q", "B") if k not in params]
    if missing:
        raise ValueError(f"params is missing {missing}; pass a dict with keys {PARAMS}.")
    unknown = set(params) - set(PARAMS)
    if unknown:
        raise ValueError(f"params has unknown keys {sorted(unknown)}; allowed: {PARAMS}.")
    out: dict[str, Array] = {}
    J = np.array(params["J"], dtype=float)
    if J.ndim != 2 or J.shape[0] != J.shape[1]:
        raise ValueError(f"J must be a square (n, n) matrix, got shape {J.shape}.")
    n = J.shape[0]
    if n < 1:
        raise ValueError("the model order n must be at least 1 (J is 0×0).")
    out["J"] = J
    for k in ("R", "Q"):
        a = np.array(params[k], dtype=float)
        if a.shape != (n, n):
            raise ValueError(f"{k} must have shape ({n}, {n}) to match J, got {a.shape}.")
        out[k] = a
    B = np.array(params["B"], dtype=float)
    if B.ndim == 1:
        B = B[:, None]
    if B.ndim != 2 or B.shape[0] != n or B.shape[1] < 1:
        raise ValueError(f"B must have shape ({n}, m) with m ≥ 1, got {np.shape(params['B'])}.")
    out["B"] = B
    x0 = np.zeros(n) if params.get("x0") is None else np.array(params["x0"], dtype=float)
    if x0.shape != (n,):
        x0 = x0.reshape(-1) if x0.size == n else x0
        if x0.shape != (n,):
            raise ValueError(f"x0 must have shape ({n},), got {np.shape(params['x0'])}.")
    out["x0"] = x0
    for k, a in out.items():
        if not np.all(np.isfinite(a)):
            raise ValueError(f"parameter {k} contains NaN or Inf; pass finite values.")
    return out


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}.")


def _check_wrt(wrt: Sequence[str]) -> tuple[str, ...]:
    if isinstance(wrt, str):
        wrt = (wrt,)
    w = tuple(wrt)
    bad = [k for k in w if k not in PARAMS]
    if bad:
        raise ValueError(f"wrt has unknown parameter names {bad}; choose from {PARAMS}.")
    return w


def _as_experiments(experiments: Experiment | Sequence[Experiment], m: int) -> list[Experiment]:
    exps = [experiments] if isinstance(experiments, Experiment) else list(experiments)
    if not exps:
        raise ValueError("experiments is empty; pass at least one Experiment.")
    for i, e in enumerate(exps):
        if not isinstance(e, Experiment):
            raise TypeError(
                f"experiments[{i}] is a {type(e).__name__}; build it with Experiment.from_arrays."
            )
        if e.n_ports != m:
            raise ValueError(
                f"experiments[{i}] has {e.n_ports} ports but B is n×{m}; "
                f"the model and the data must have the same number of ports."
            )
    return exps


# ---------------------------------------------------------------------------------------------
# Discretisation
# ---------------------------------------------------------------------------------------------
def quadrature_weights(h: Array, mode: str) -> Array:
    """Cost weights ``w_k`` (shape (K,)) from the steps ``h`` (shape (K−1,)).

    ``"euler"``: left endpoint (``w_k = h_k``, ``w_{K−1} = 0``); ``"exact"``: trapezoidal.
    """
    K = h.shape[0] + 1
    w = np.zeros(K)
    if mode == "euler":
        w[:-1] = h
    else:
        w[:-1] += 0.5 * h
        w[1:] += 0.5 * h
    return w


def foh_block_matrix(A: Array, B: Array, h: float | Array) -> Array:
    """``M = [[A h, B h, 0], [0, 0, I], [0, 0, 0]]``; ``h`` of shape (G,) gives (G, N, N)."""
    n, m = B.shape
    hh = np.atleast_1d(np.asarray(h, dtype=float))
    N = n + 2 * m
    M = np.zeros((hh.shape[0], N, N))
    M[:, :n, :n] = hh[:, None, None] * A
    M[:, :n, n : n + m] = hh[:, None, None] * B
    M[:, n : n + m, n + m :] = np.eye(m)
    return M if np.ndim(h) else M[0]


def foh_matrices(A: Array, B: Array, h: ArrayLike) -> tuple[Array, Array, Array, Array]:
    """Exact first-order-hold discretisation.

    Returns ``(Phi, Gamma0, Gamma1, E)`` for step sizes ``h`` (shape (G,)): ``Phi`` (G, n, n),
    ``Gamma0``/``Gamma1`` (G, n, m) with ``x_{k+1} = Φ x_k + Γ0 u_k + Γ1 u_{k+1}`` and the
    full exponentials ``E = expm(M)`` (G, N, N).
    """
    n, m = B.shape
    M = foh_block_matrix(A, B, np.atleast_1d(np.asarray(h, dtype=float)))
    E = expm(M)
    Phi = E[:, :n, :n]
    Ga = E[:, :n, n : n + m]
    Gb = E[:, :n, n + m :]
    return Phi, Ga - Gb, Gb, E


def _expm_frechet_adjoint(M: Array, GE: Array) -> Array:
    """``L_exp(M_gᵀ, GE_g)`` for stacks (G, N, N): the adjoint of the Fréchet derivative."""
    G, N, _ = M.shape
    MT = np.swapaxes(M, -1, -2)
    if N <= _BLOCK_FRECHET_MAX:
        big = np.zeros((G, 2 * N, 2 * N))
        big[:, :N, :N] = MT
        big[:, N:, N:] = MT
        big[:, :N, N:] = GE
        return expm(big)[:, :N, N:]
    return np.stack([expm_frechet(MT[g], GE[g], compute_expm=False) for g in range(G)])


def _foh_frechet_adjoint(M: Array, GEtop: Array, n: int) -> Array:
    """Rows ``:n`` of ``L_exp(M_gᵀ, GE_g)`` when only the rows ``:n`` of ``GE_g`` are nonzero.

    ``M = [[A h, B h, 0], [0, 0, I], [0, 0, 0]]`` is block upper triangular, so the rows ``:n``
    of ``e^{s Mᵀ}`` are ``[e^{s (A h)ᵀ}, 0, 0]`` and
    ``L_exp(Mᵀ, GE)[:n] = ∫₀¹ e^{s (Ah)ᵀ} GE[:n] e^{(1−s) Mᵀ} ds``: the top-right block of the
    exponential of ``[[(Ah)ᵀ, GE[:n]], [0, Mᵀ]]`` (size n + N instead of 2N).

    Parameters
    ----------
    M : ndarray, shape (G, N, N)
    GEtop : ndarray, shape (G, n, N)

    Returns
    -------
    ndarray, shape (G, n, N)
    """
    G, N, _ = M.shape
    MT = np.swapaxes(M, -1, -2)
    if n + N <= 2 * _BLOCK_FRECHET_MAX:
        big = np.zeros((G, n + N, n + N))
        big[:, :n, :n] = MT[:, :n, :n]
        big[:, n:, n:] = MT
        big[:, :n, n:] = GEtop
        return expm(big)[:, :n, n:]
    GE = np.zeros((G, N, N))
    GE[:, :n] = GEtop
    return np.stack([expm_frechet(MT[g], GE[g], compute_expm=False)[:n] for g in range(G)])


@dataclass
class _Plan:
    """Global step sizes across experiments and, per experiment, their indices."""

    h: Array  # (G,)
    index: list[NDArray[np.intp]]  # per experiment, (K_e − 1,)


def _plan(experiments: Sequence[Experiment]) -> _Plan:
    if len(experiments) == 1:
        g = experiments[0].groups
        return _Plan(g.h, [g.index])
    reps = np.concatenate([e.groups.h for e in experiments])
    means, lab = _group_values(reps, STEP_RTOL)
    idx = []
    off = 0
    for e in experiments:
        G = e.groups.h.shape[0]
        idx.append(lab[off : off + G][e.groups.index])
        off += G
    return _Plan(means, idx)


@dataclass
class _Forward:
    X: Array  # (K, n)
    r: Array  # (K, m) residual C x − y_data
    w: Array  # (K,)
    h: Array  # (K−1,) snapped steps
    Phi: Array  # (n, n) if uniform, else a table (G, n, n) indexed by idx
    idx: NDArray[np.intp]
    uniform: bool
    misfit: float
    #: repeated squares of Φᵀ used by the forward scan (uniform grids; reused by the adjoint)
    powers: Array | None = None


def _forward(
    A: Array,
    B: Array,
    C: Array,
    x0: Array,
    u: Array,
    ydata: Array | None,
    hs: Array,
    idx: NDArray[np.intp],
    mode: str,
    disc: tuple[Array, Array, Array] | None,
) -> _Forward:
    n = A.shape[0]
    g0 = int(idx[0])
    uniform = bool(np.all(idx == g0))
    h = hs[idx]
    if mode == "euler":
        I = np.eye(n)
        Phi = I + hs[g0] * A if uniform else I + hs[:, None, None] * A  # table (G, n, n)
        b = (u[:-1] @ B.T) * h[:, None]
    else:
        assert disc is not None
        PhiG, G0, G1 = disc
        if uniform:
            Phi = PhiG[g0]
            b = u[:-1] @ G0[g0].T + u[1:] @ G1[g0].T
        else:
            Phi = PhiG
            b = np.einsum("kij,kj->ki", G0[idx], u[:-1]) + np.einsum("kij,kj->ki", G1[idx], u[1:])
    X = solve_linear_recurrence(Phi, b, x0, None if uniform else idx)
    Y = X @ C.T
    w = quadrature_weights(h, mode)
    if ydata is None:
        return _Forward(X, Y, w, h, Phi, idx, uniform, 0.0)
    r = Y - ydata
    misfit = 0.5 * float(w @ np.einsum("ij,ij->i", r, r))
    return _Forward(X, r, w, h, Phi, idx, uniform, misfit)


def simulate(
    params: Mapping[str, ArrayLike], t: ArrayLike, u: ArrayLike, mode: Mode = "exact"
) -> tuple[Array, Array]:
    """Simulate the discretised model.

    Parameters
    ----------
    params : dict
        ``J, R, Q`` (n, n), ``B`` (n, m), optional ``x0`` (n,).
    t : array_like, shape (K,)
        Strictly increasing sample times.
    u : array_like, shape (K, m)
        Inputs at the sample times.
    mode : {"exact", "euler"}
        Discretisation (see the module docstring).

    Returns
    -------
    x : ndarray, shape (K, n)
    y : ndarray, shape (K, m)
        ``y = Bᵀ Q x``.
    """
    _check_mode(mode)
    p = check_params(params)
    tt = _check_time(t)
    uu = _check_signal(u, tt.shape[0], "u", p["B"].shape[1])
    g = step_groups(tt)
    A = (p["J"] - p["R"]) @ p["Q"]
    C = p["B"].T @ p["Q"]
    disc = None
    if mode == "exact":
        disc = foh_matrices(A, p["B"], g.h)[:3]
    with np.errstate(over="ignore", invalid="ignore"):
        f = _forward(A, p["B"], C, p["x0"], uu, None, g.h, g.index, mode, disc)
    return f.X, f.r


# ---------------------------------------------------------------------------------------------
# Regularisation
# ---------------------------------------------------------------------------------------------
def _log_q_value_grad(Q: Array, need_grad: bool) -> tuple[float, Array | None]:
    """``½‖log Q‖²_F`` and its gradient ``Q⁻ᵀ (log Q)ᵀ`` (= Q⁻¹ log Q for symmetric Q)."""
    if np.array_equal(Q, Q.T):
        lam, U = eigh(Q)
        if lam[0] <= 0:
            raise ValueError(
                f"the log Q regulariser needs Q ≻ 0, but its smallest eigenvalue is {lam[0]:.3e}; "
                f"keep Q on the SPD manifold (or set log_q = 0)."
            )
        ll = np.log(lam)
        val = 0.5 * float(ll @ ll)
        grad = (U * (ll / lam)) @ U.T if need_grad else None
        return val, grad
    L = logm(Q)
    if np.iscomplexobj(L):
        L = L.real
    val = 0.5 * float(np.sum(L * L))
    grad = np.linalg.solve(Q.T, L.T) if need_grad else None
    return val, grad


def _regularization(
    p: Mapping[str, Array], reg: Regularization, wrt: Sequence[str], need_grad: bool
) -> tuple[float, dict[str, Array]]:
    val = 0.0
    grads: dict[str, Array] = {}
    for k in wrt:
        if reg.lam > 0:
            ref = None if reg.reference is None else reg.reference.get(k)
            d = p[k] - (0.0 if ref is None else np.asarray(ref, dtype=float).reshape(p[k].shape))
            val += 0.5 * reg.lam * float(np.sum(d * d))
            if need_grad:
                grads[k] = reg.lam * d
        if k == "Q" and reg.log_q > 0:
            v, g = _log_q_value_grad(p["Q"], need_grad)
            val += reg.log_q * v
            if need_grad:
                assert g is not None
                grads[k] = grads.get(k, 0.0) + reg.log_q * g
    return val, grads


# ---------------------------------------------------------------------------------------------
# Evaluation core: experiments prepared once, parameters not checked
# ---------------------------------------------------------------------------------------------
class _ExpData:
    """Per-experiment arrays of the evaluation, computed once per experiment set and mode."""

    __slots__ = ("K", "V", "g0", "h", "idx", "u", "ul", "uniform", "w", "wcol", "y")

    def __init__(self, e: Experiment, idx: NDArray[np.intp], hs: Array, mode: str) -> None:
        self.K = e.n_samples
        self.u, self.y = e.u, e.y
        self.idx = idx
        self.g0 = int(idx[0])
        self.uniform = bool(np.all(idx == self.g0))
        self.h = hs[idx]
        self.w = quadrature_weights(self.h, mode)
        self.wcol = np.ascontiguousarray(self.w[:, None])
        self.ul = np.ascontiguousarray(e.u[:-1])
        # exact mode: b_k = Γ0 u_k + Γ1 u_{k+1} = Γ_a u_k + Γ_b (u_{k+1} − u_k), i.e. one product
        # V @ [Γ_a Γ_b]ᵀ with V = [u_k, u_{k+1} − u_k]; the same V gives G_Γa and G_Γb at once.
        self.V = np.concatenate([e.u[:-1], e.u[1:] - e.u[:-1]], axis=1) if mode == "exact" else None


class _State:
    """A forward solve: the parameters it was computed for and the per-experiment trajectories."""

    __slots__ = ("A", "B", "C", "E", "J", "JR", "M", "Q", "R", "fwds", "misfit", "x0")


class _Prepared:
    """Experiments (already validated) and mode, with everything that does not depend on w."""

    def __init__(self, exps: list[Experiment], mode: str) -> None:
        self.exps = exps
        self.mode = mode
        self.plan = _plan(exps)
        self.data = [_ExpData(e, self.plan.index[i], self.plan.h, mode) for i, e in enumerate(exps)]
        self._eye: dict[int, Array] = {}
        self._hcol = self.plan.h[:, None, None]
        self._template: dict[tuple[int, int], Array] = {}

    def _block_matrix(self, A: Array, B: Array) -> Array:
        """:func:`foh_block_matrix` for the plan's step sizes (from a cached template)."""
        n, m = B.shape
        tmpl = self._template.get((n, m))
        if tmpl is None:
            tmpl = self._template[(n, m)] = foh_block_matrix(np.zeros((n, n)), B * 0.0, self.plan.h)
        M = tmpl.copy()
        M[:, :n, :n] = self._hcol * A
        M[:, :n, n : n + m] = self._hcol * B
        return M

    def _identity(self, n: int) -> Array:
        eye = self._eye.get(n)
        if eye is None:
            eye = self._eye[n] = np.eye(n)
            eye.setflags(write=False)
        return eye

    def forward(self, J: Array, R: Array, Q: Array, B: Array, x0: Array) -> _State:
        """State trajectories, residuals and data misfit (no validation, no error state)."""
        st = _State()
        st.J, st.R, st.Q, st.B, st.x0 = J, R, Q, B, x0
        st.JR = JR = J - R
        st.A = A = JR @ Q
        st.C = C = B.T @ Q
        n, m = B.shape
        hs = self.plan.h
        st.M = st.E = None
        disc = None
        if self.mode == "exact":
            st.M = self._block_matrix(A, B)
            st.E = expm(st.M)
        fwds = []
        for d in self.data:
            if d.uniform:
                fwds.append(self._forward_uniform(d, A, B, C, x0, st.E, n))
                continue
            if self.mode == "exact" and disc is None:
                E = st.E
                Gb = E[:, :n, n + m :]
                disc = (E[:, :n, :n], E[:, :n, n : n + m] - Gb, Gb)
            fwds.append(_forward(A, B, C, x0, d.u, d.y, hs, d.idx, self.mode, disc))
        st.fwds = fwds
        st.misfit = fwds[0].misfit if len(fwds) == 1 else sum(f.misfit for f in fwds)
        return st

    def _forward_uniform(
        self, d: _ExpData, A: Array, B: Array, C: Array, x0: Array, E: Array | None, n: int
    ) -> _Forward:
        Y = np.empty((d.K, n))
        Y[0] = x0
        if self.mode == "euler":
            h = self.plan.h[d.g0]
            Phi = self._identity(n) + h * A
            np.matmul(d.ul, (h * B).T, out=Y[1:])  # b_k = h B u_k
        else:
            Eg = E[d.g0]  # type: ignore[index]
            Phi = Eg[:n, :n]
            np.matmul(d.V, Eg[:n, n:].T, out=Y[1:])  # b_k = Γ_a u_k + Γ_b (u_{k+1} − u_k)
        powers = scan_powers(Phi.T, d.K)  # powers[0] = Φᵀ (C-contiguous)
        scan_constant(powers[0], Y, powers=powers)
        r = Y @ C.T
        r -= d.y
        misfit = 0.5 * float(np.dot(d.w, r * r).sum())
        return _Forward(Y, r, d.w, d.h, Phi, d.idx, True, misfit, powers)

    def base_gradients(
        self, st: _State, wrt: Sequence[str], gradient: str
    ) -> tuple[Array, Array, Array, Array]:
        """``(G_A, G_B(input), G_C, G_x0)`` of the data misfit at ``st`` (see module docstring)."""
        mode = self.mode
        B, C = st.B, st.C
        n, m = B.shape
        hs = self.plan.h
        need_AB = any(k in wrt for k in ("J", "R", "Q", "B"))
        G_A = np.zeros((n, n))
        G_Bin = np.zeros((n, m))
        G_C = np.zeros((m, n))
        G_x0 = np.zeros(n)
        GE = None
        if mode == "exact" and need_AB:
            GE = np.zeros((hs.shape[0], n, n + 2 * m))  # rows :n of G_E (the others are 0)
        for d, f in zip(self.data, st.fwds):
            X, r, u = f.X, f.r, d.u
            if gradient == "paper":
                # p_{K−1} = 0;  p_k = Φ_kᵀ p_{k+1} + h_k Cᵀ r_{k+1}  (explicit Euler backwards)
                g = np.zeros_like(X)
                g[:-1] = (r[1:] @ C) * f.h[:, None]
                P = solve_adjoint_recurrence(f.Phi, g, None if f.uniform else f.idx)
                Lh = P[:-1] * f.h[:, None]  # h_k p_k (left endpoint)
                G_C += (r[:-1] * f.h[:, None]).T @ X[:-1]
                G_x0 += P[0]
                if need_AB:
                    G_A += Lh.T @ X[:-1]
                    G_Bin += Lh.T @ u[:-1]
                continue
            rw = r * d.wcol
            g = rw @ C  # g_k = w_k Cᵀ r_k
            if f.uniform:
                # λ_k = Φᵀ λ_{k+1} + g_k, solved in place backwards in time
                # the squares of Φ are the transposes of those of the forward scan
                lam = scan_constant(f.Phi, g, True, f.powers, transpose_powers=True)
            else:
                lam = solve_adjoint_recurrence(f.Phi, g, f.idx)
            G_x0 += lam[0]
            G_C += rw.T @ X
            if not need_AB:
                continue
            L1 = lam[1:]
            if mode == "euler":
                if f.uniform:
                    h = hs[d.g0]
                    G_A += h * (L1.T @ X[:-1])
                    G_Bin += h * (L1.T @ d.ul)
                else:
                    Lh = L1 * f.h[:, None]
                    G_A += Lh.T @ X[:-1]
                    G_Bin += Lh.T @ d.ul
            elif f.uniform:
                GE[d.g0, :n, :n] += L1.T @ X[:-1]  # type: ignore[index]
                GE[d.g0, :n, n:] += L1.T @ d.V  # type: ignore[index]
            else:
                for gi in np.unique(f.idx):
                    sel = f.idx == gi
                    GE[gi, :n, :n] += L1[sel].T @ X[:-1][sel]  # type: ignore[index]
                    GE[gi, :n, n:] += L1[sel].T @ d.V[sel]  # type: ignore[index]
        if GE is not None:
            GM = _foh_frechet_adjoint(st.M, GE, n)  # type: ignore[arg-type]
            if hs.shape[0] == 1:
                G_A += hs[0] * GM[0, :n, :n]
                G_Bin += hs[0] * GM[0, :n, n : n + m]
            else:
                G_A += np.einsum("g,gij->ij", hs, GM[:, :n, :n])
                G_Bin += np.einsum("g,gij->ij", hs, GM[:, :n, n : n + m])
        return G_A, G_Bin, G_C, G_x0


def _state_params(st: _State) -> dict[str, Array]:
    return {"J": st.J, "R": st.R, "Q": st.Q, "B": st.B, "x0": st.x0}


def _finish(
    prep: _Prepared,
    st: _State,
    reg: Regularization,
    wrt: Sequence[str],
    need_grad: bool,
    gradient: str,
) -> tuple[float, dict[str, Array]]:
    """Cost (and gradient) at a forward solve: regularisation, chain rule through A and C."""
    reg_active = reg.lam > 0 or (reg.log_q > 0 and "Q" in wrt)
    rgrad: dict[str, Array] = {}
    total = st.misfit
    if reg_active:
        rval, rgrad = _regularization(_state_params(st), reg, wrt, need_grad)
        total = total + rval
    if not np.isfinite(total):
        total = float("inf")
    if not need_grad:
        return total, {}
    if not np.isfinite(total):
        p = _state_params(st)
        return total, {k: np.full_like(p[k], np.nan) for k in wrt}
    G_A, G_Bin, G_C, G_x0 = prep.base_gradients(st, wrt, gradient)
    grads: dict[str, Array] = {}
    GQ = G_A @ st.Q.T if ("J" in wrt or "R" in wrt) else None
    for k in wrt:
        if k == "J":
            gk = GQ
        elif k == "R":
            gk = -GQ  # type: ignore[operator]
        elif k == "Q":
            gk = st.JR.T @ G_A + st.B @ G_C
        elif k == "B":
            gk = G_Bin + st.Q @ G_C.T
        else:
            gk = G_x0
        if k in rgrad:
            gk = gk + rgrad[k]
        grads[k] = gk
    return total, grads


class Evaluator:
    """Cost and gradient for fixed experiments and settings, validated once: the fast path.

    Everything that does not depend on the parameters (step-size groups, quadrature weights,
    shifted and differenced inputs) is computed here once; the methods then take plain arrays
    and check nothing — an optimiser validates its parameters at its boundary and calls these in
    its inner loop.  Results are bitwise those of :func:`cost` / :func:`cost_and_gradient` (same
    code after validation).

    Parameters
    ----------
    experiments : Experiment or sequence of Experiment
    mode : {"exact", "euler"}
    reg : Regularization
    wrt : sequence of str
        Fitted parameters (gradients are returned for these, only these are regularised).
    gradient : {"exact", "paper"}
        As in :func:`cost_and_gradient`.
    n_ports : int, optional
        Number of ports m of the model (default: that of the first experiment).

    Notes
    -----
    The arrays passed to :meth:`forward` must be float64 with shapes ``J, R, Q`` (n, n),
    ``B`` (n, m), ``x0`` (n,) and finite; they are referenced, not copied, by the returned
    state.  Floating-point warnings are not suppressed here (wrap the optimisation in
    ``np.errstate``); an overflowing simulation gives cost ``inf`` and a NaN gradient.
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
        exps, self.wrt = evaluator_settings(experiments, mode, reg, wrt, gradient, n_ports)
        self.mode = mode
        self.reg = reg
        self.gradient_kind = gradient
        self._reg_active = reg.lam > 0 or (reg.log_q > 0 and "Q" in self.wrt)
        self._prep = _Prepared(exps, mode)

    @property
    def experiments(self) -> list[Experiment]:
        """The experiments (validated)."""
        return self._prep.exps

    def forward(self, J: Array, R: Array, Q: Array, B: Array, x0: Array) -> _State:
        """Solve the state equation for all experiments; returns an opaque state."""
        return self._prep.forward(J, R, Q, B, x0)

    def cost(self, state: _State) -> float:
        """Cost at a :meth:`forward` state (``inf`` if the simulation overflowed)."""
        if self._reg_active:
            return _finish(self._prep, state, self.reg, self.wrt, False, self.gradient_kind)[0]
        c = state.misfit  # what _finish returns without regularisation
        return c if math.isfinite(c) else math.inf

    def cost_and_gradient(self, state: _State) -> tuple[float, dict[str, Array]]:
        """Cost and the gradients w.r.t. ``wrt`` at a :meth:`forward` state (adjoint solve)."""
        return _finish(self._prep, state, self.reg, self.wrt, True, self.gradient_kind)


def evaluator_settings(
    experiments: Experiment | Sequence[Experiment],
    mode: str,
    reg: Regularization,
    wrt: Sequence[str],
    gradient: str,
    n_ports: int | None,
) -> tuple[list[Experiment], tuple[str, ...]]:
    """Validate the settings shared by :class:`Evaluator` and its loop reference.

    Returns the validated experiments and ``wrt``; raises with a message naming the fix.
    """
    _check_mode(mode)
    wrt_checked = _check_wrt(wrt)
    _check_gradient(gradient, mode)
    if not isinstance(reg, Regularization):
        raise TypeError(f"reg must be a Regularization, got {type(reg).__name__}.")
    exps = [experiments] if isinstance(experiments, Experiment) else list(experiments)
    if n_ports is None:
        n_ports = exps[0].n_ports if exps and isinstance(exps[0], Experiment) else 1
    return _as_experiments(exps, int(n_ports)), wrt_checked


def _check_gradient(gradient: str, mode: str) -> None:
    if gradient not in ("exact", "paper"):
        raise ValueError(f"gradient must be 'exact' or 'paper', got {gradient!r}.")
    if gradient == "paper" and mode != "euler":
        raise ValueError(
            "gradient='paper' (continuous adjoint, explicit Euler) exists only for mode='euler'; "
            "use gradient='exact' with mode='exact'."
        )


# ---------------------------------------------------------------------------------------------
# Cost and gradient (checked entry points)
# ---------------------------------------------------------------------------------------------
def cost(
    params: Mapping[str, ArrayLike],
    experiments: Experiment | Sequence[Experiment],
    mode: Mode = "exact",
    reg: Regularization = NO_REGULARIZATION,
    wrt: Sequence[str] = PARAMS,
) -> float:
    """Discrete cost ``Σ_e ½ Σ_k w_k |y_k − y_data,k|²`` + regularisation of the ``wrt`` params.

    Parameters
    ----------
    params : dict
        ``J, R, Q`` (n, n), ``B`` (n, m), optional ``x0`` (n,).
    experiments : Experiment or sequence of Experiment
    mode : {"exact", "euler"}
    reg : Regularization
    wrt : sequence of str
        The fitted parameters (only these are regularised).

    Returns
    -------
    float
        The cost; ``inf`` if the simulation overflows.

    See Also
    --------
    Evaluator : the same computation without per-call validation (optimiser inner loops).
    """
    val, _ = _evaluate(params, experiments, mode, reg, wrt, need_grad=False, gradient="exact")
    return val


def cost_and_gradient(
    params: Mapping[str, ArrayLike],
    experiments: Experiment | Sequence[Experiment],
    mode: Mode = "exact",
    reg: Regularization = NO_REGULARIZATION,
    wrt: Sequence[str] = PARAMS,
    gradient: GradientKind = "exact",
) -> tuple[float, dict[str, Array]]:
    """Cost and its Euclidean gradient w.r.t. the parameters in ``wrt``.

    Parameters
    ----------
    params, experiments, mode, reg, wrt
        As in :func:`cost`.
    gradient : {"exact", "paper"}
        ``"exact"``: exact gradient of the discrete cost (discrete adjoint; both modes).
        ``"paper"``: the paper's continuous adjoint discretised by explicit Euler with
        left-endpoint quadrature (Euler mode only; O(h) away from the exact gradient).

    Returns
    -------
    cost : float
    grad : dict of str to ndarray
        ``grad[k]`` has the shape of ``params[k]`` for each ``k`` in ``wrt`` (plain partial
        derivatives, all entries independent).  NaN if the simulation overflows (cost ``inf``).
    """
    return _evaluate(params, experiments, mode, reg, wrt, need_grad=True, gradient=gradient)


#: Single-entry cache of the last forward solve: an optimiser evaluates ``cost`` at the accepted
#: line-search point and then ``cost_and_gradient`` at the same point; the second call reuses the
#: state trajectories.  Keyed by the parameter bytes, the mode and the identities of the
#: (immutable) experiments, which the entry keeps alive.
_FORWARD_CACHE: list = [None]
#: Single-entry cache of the prepared experiments (keyed by mode and experiment identities).
_PREPARED_CACHE: list = [None]


def clear_forward_cache() -> None:
    """Drop the cached forward solve (e.g. to measure the cost of a cold evaluation)."""
    _FORWARD_CACHE[0] = None


def _prepared(exps: list[Experiment], mode: str) -> _Prepared:
    key = (mode, tuple(id(e) for e in exps))
    hit = _PREPARED_CACHE[0]
    if hit is not None and hit[0] == key:
        return hit[1]
    prep = _Prepared(exps, mode)
    _PREPARED_CACHE[0] = (key, prep)  # prep.exps keeps the experiments (and their ids) alive
    return prep


def _forward_all(p: Mapping[str, Array], exps: list[Experiment], mode: str) -> tuple:
    key = (mode, tuple(p[k].tobytes() for k in PARAMS), p["B"].shape, tuple(id(e) for e in exps))
    hit = _FORWARD_CACHE[0]
    if hit is not None and hit[0] == key:
        return hit[2], hit[3]
    prep = _prepared(exps, mode)
    st = prep.forward(p["J"], p["R"], p["Q"], p["B"], p["x0"])
    _FORWARD_CACHE[0] = (key, exps, prep, st)
    return prep, st


def _evaluate(
    params: Mapping[str, ArrayLike],
    experiments: Experiment | Sequence[Experiment],
    mode: str,
    reg: Regularization,
    wrt: Sequence[str],
    need_grad: bool,
    gradient: str,
) -> tuple[float, dict[str, Array]]:
    _check_mode(mode)
    wrt = _check_wrt(wrt)
    _check_gradient(gradient, mode)
    p = check_params(params)
    exps = _as_experiments(experiments, p["B"].shape[1])
    with np.errstate(over="ignore", invalid="ignore"):
        prep, st = _forward_all(p, exps, mode)
        return _finish(prep, st, reg, wrt, need_grad, gradient)
