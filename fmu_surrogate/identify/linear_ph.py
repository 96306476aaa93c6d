"""Structure-preserving identification of linear port-Hamiltonian systems (docs/design.md §4).

:class:`LinearPHIdentifier` fits any subset of ``w = (J, R, Q, B, x0)`` of

    ẋ = (J − R) Q x + B u,     y = Bᵀ Q x,      J = −Jᵀ,  R = Rᵀ ⪰ 0,  Q ≻ 0

to input/output data by Riemannian optimisation (Günther, Jacob & Totzeck, Algorithm 1) on the
product of

==========  ===============================================  =====================================
parameter   manifold (pymanopt)                              point ↦ matrix
==========  ===============================================  =====================================
J           ``SkewSymmetric(n)``                              J itself (bitwise skew, see below)
R           ``PSDFixedRank(n, k)`` if ``rank_R = k``          R = ½(P + Pᵀ), P = Y Yᵀ
            ``Euclidean(n, n)`` factor if ``rank_R = None``   (same map)
Q           ``SymmetricPositiveDefinite(n)``                  Q itself
B, x0       ``Euclidean``                                     itself
==========  ===============================================  =====================================

The Euclidean gradients with respect to the full matrices come from the adjoint method
(:func:`fmu_surrogate.identify.adjoint.cost_and_gradient`); the chain rule through ``R = YYᵀ``
gives ``∂f/∂Y = (G_R + G_Rᵀ) Y``, and the manifolds turn Euclidean into Riemannian gradients with
their own ``euclidean_to_riemannian_gradient`` (skew projection for J, ``Q sym(G) Q`` for the
affine-invariant SPD metric, identity for the factor and the Euclidean parts).

Structure by construction, in floating point
--------------------------------------------
* **J**: the iterate starts bitwise skew (``(J₀ − J₀ᵀ)/2`` of the initial guess, which is exactly
  skew because IEEE subtraction satisfies ``a ⊖ b = −(b ⊖ a)`` and halving is exact), the Riemannian
  gradient is ``(G − Gᵀ)/2`` (bitwise skew, zero diagonal) and every later operation (sums, scalar
  multiples, the retraction ``J + σ η``) is sign-symmetric in IEEE arithmetic, so
  ``J + Jᵀ == 0`` holds exactly for every iterate.  :meth:`LinearPHIdentifier.fit` checks it.
* **R**: assembled from its factor as ``½(P + Pᵀ)``, ``P = Y Yᵀ`` — bitwise symmetric because
  floating-point addition is commutative, PSD up to the rounding of the product (eigenvalues
  ≥ −O(k ε ‖Y‖²)).  No projection of the iterate happens anywhere.
* **Q**: pymanopt's SPD retraction ``herm(Q + ξ + ½ ξ Q⁻¹ ξ) = herm(½Q + ½(Q+ξ)Q⁻¹(Q+ξ))`` is SPD in
  exact arithmetic for every ξ; a trial point that is not numerically SPD (Cholesky fails — only
  possible for enormous line-search trials) gets cost ``+inf`` and is rejected by the line search.

Full-rank R (``rank_R=None``)
-----------------------------
pymanopt's ``PSDFixedRank(n, n)`` is a quotient geometry whose projection and vector transport
solve a Lyapunov equation with ``YᵀY``; it breaks down at rank-deficient factors — and the paper's
initial guess ``R = diag(1, 1, 0, …)`` is rank-deficient, as are typical dissipation matrices (the
MSD chain's R has rank n/2).  The default therefore optimises the factor ``Y ∈ ℝ^{n×n}`` on the
*total space* of that quotient (``Euclidean(n, n)``, flat metric, identity transport): the same
Riemannian gradient (pymanopt's ``PSDFixedRank`` also returns the Euclidean one), complete, valid at
every point, and ``R = YYᵀ`` stays PSD.  Gradient flow on a factor never increases its rank
(``Y⁺ = (I + 2σ G) Y``), so zero eigenvalues of the initial R are lifted to
``1e-2 · λ_max(R₀)`` before factorising (documented deviation from the paper's initial guess).
With ``rank_R = k`` the factor is ``n × k`` on ``PSDFixedRank(n, k)``; missing directions of a
lower-rank initial R are filled the same way.

Discretisations (``mode``) — see :mod:`fmu_surrogate.identify.adjoint`: ``"euler"`` is the paper's
explicit Euler scheme with left-endpoint quadrature (reproduction), ``"exact"`` the exact
discretisation for piecewise-linear inputs with the exact gradient of that discrete cost.

Inside the optimisation loop
----------------------------
Everything is validated once in :meth:`LinearPHIdentifier.fit` (settings, experiments, fixed and
initial values); the loop then runs on unchecked fast paths: the prepared
:class:`~fmu_surrogate.identify.adjoint.Evaluator` (the forward solve of the last line-search
trial is kept, so the gradient at the accepted point costs the adjoint solve only), points
identified by the identities of their arrays (no hashing), the paper's CG talking to the objective
directly (no pymanopt ``Problem`` wrappers; the other optimisers keep them), and a product
manifold whose flat components (J, the factor of R, B, x0) have their retraction ``x + u``,
identity transport, gradient projection and inner product inlined — the same arithmetic as
pymanopt's, so the exact structure guarantees above are untouched.  Floating-point warnings
are silenced once around the optimisation (overflowing trial points get cost ``inf``).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.identify.base import FitResult, PHEstimator
from fmu_surrogate.ph import LinearPH, check_psd, check_skew, check_spd

Array = NDArray[np.float64]
_add_reduce = np.add.reduce

__all__ = ["PARAMETER_NAMES", "LinearPHFit", "LinearPHIdentifier", "paper_initial_guess"]

#: The parameters that can be fitted or held fixed, in canonical order.
PARAMETER_NAMES = ("J", "R", "Q", "B", "x0")
_MODES = ("exact", "euler")
_OPTIMIZERS = ("cg", "steepest", "trust_regions", "pymanopt_cg")
_LINE_SEARCHES = ("armijo", "backtracking")
#: Relative floor for the eigenvalues of the initial R before factorising (see module docstring).
R_EIGEN_FLOOR = 1e-2


# --------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class LinearPHFit(FitResult):
    """Result of :meth:`LinearPHIdentifier.fit` (``n_iter``, ``stopping_reason``,
    ``cost_history`` and ``time`` as every estimator's result, and the following).

    Attributes
    ----------
    system : LinearPH
        The fitted system (validated pH structure).
    x0 : ndarray, shape (n,)
        Fitted (or fixed) initial state.
    cost_history : tuple of float
        Cost at the initial guess and after every iteration.
    stopping_reason : str
    gradient_norm : float
        Riemannian gradient norm at the returned point.
    cpu_time_s : float
        Processor time of the optimisation (``time.process_time``; less sensitive than
        ``time_s`` to other processes on a shared machine).
    iteration_time_s, iteration_cpu_time_s : tuple of float
        Wall / processor time since the start of the optimisation at the end of each iteration
        (for pymanopt's optimisers: at each new iterate whose gradient is evaluated) — for
        time-to-accuracy curves and timings of a window of iterations.
    mode : str
        ``"exact"`` or ``"euler"``.
    fitted : tuple of str
        Names of the fitted parameters.
    optimizer : str
    n_cost_evaluations, n_gradient_evaluations : int
        Forward solves for the cost alone and forward+adjoint solves for cost and gradient.
    """

    system: LinearPH = None  # type: ignore[assignment]
    x0: Array = None  # type: ignore[assignment]
    gradient_norm: float = float("nan")
    mode: str = "exact"
    fitted: tuple[str, ...] = ()
    optimizer: str = "cg"
    n_cost_evaluations: int = 0
    n_gradient_evaluations: int = 0
    gradient_norm_history: tuple[float, ...] = field(default=(), repr=False)
    cpu_time_s: float = 0.0
    iteration_time_s: tuple[float, ...] = field(default=(), repr=False)
    iteration_cpu_time_s: tuple[float, ...] = field(default=(), repr=False)

    @property
    def initial_cost(self) -> float:
        """Cost at the initial guess."""
        return self.cost_history[0]

    @property
    def final_cost(self) -> float:
        """Cost at the returned point."""
        return self.cost_history[-1]

    @property
    def iterations(self) -> int:
        """Same as ``n_iter``."""
        return self.n_iter

    @property
    def time_s(self) -> float:
        """Same as ``time``: wall-clock seconds of the optimisation."""
        return self.time


# ------------------------------------------------------------------------------ validation
def _as_time_grid(t: ArrayLike, where: str) -> Array:
    a = np.asarray(t, dtype=float)
    if a.ndim != 1:
        raise ValueError(f"{where}: t must be a 1-D array of time points, got shape {a.shape}.")
    if a.size < 2:
        raise ValueError(f"{where}: t needs at least 2 time points, got {a.size}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{where}: t contains NaN or Inf; pass finite time points.")
    if not np.all(np.diff(a) > 0):
        k = int(np.argmax(~(np.diff(a) > 0)))
        raise ValueError(
            f"{where}: time grid must be strictly increasing, but t[{k + 1}] = {a[k + 1]!r} "
            f"<= t[{k}] = {a[k]!r}. Sort the samples and drop duplicate time points."
        )
    return a


def _as_signal(v: ArrayLike, K: int, name: str, where: str) -> Array:
    a = np.asarray(v, dtype=float)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2 or a.shape[0] != K:
        raise ValueError(
            f"{where}: {name} must have shape (K, m) with K = len(t) = {K} rows, got {np.shape(v)}."
        )
    if not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0]
        raise ValueError(
            f"{where}: {name} contains NaN or Inf (first at row {bad[0]}, column {bad[1]}); "
            f"remove or interpolate the missing samples."
        )
    return a


def _validate_triplet(
    t: ArrayLike, u: ArrayLike, y: ArrayLike, where: str
) -> tuple[Array, Array, Array]:
    tt = _as_time_grid(t, where)
    uu = _as_signal(u, tt.size, "u", where)
    yy = _as_signal(y, tt.size, "y", where)
    if uu.shape[1] != yy.shape[1]:
        raise ValueError(
            f"{where}: a pH system has as many outputs as inputs (y = Bᵀ Q x), but u has "
            f"{uu.shape[1]} columns and y has {yy.shape[1]}. Pass collocated input/output pairs."
        )
    return tt, uu, yy


def _adjoint():
    from fmu_surrogate.identify import adjoint

    return adjoint


def _to_experiments(experiments: Any) -> list[Any]:
    """Normalise Experiment objects / (t, u, y) tuples / lists thereof to validated Experiments."""
    adj = _adjoint()
    Experiment = adj.Experiment
    if isinstance(experiments, Experiment):
        items: list[Any] = [experiments]
    elif (
        isinstance(experiments, tuple)
        and len(experiments) == 3
        and not any(isinstance(e, (tuple, list, Experiment)) for e in experiments)
    ):
        items = [experiments]
    else:
        try:
            items = list(experiments)
        except TypeError:
            raise TypeError(
                "experiments must be an Experiment, a (t, u, y) tuple or a list of those, got "
                f"{type(experiments).__name__}."
            ) from None
    if not items:
        raise ValueError("experiments is empty; pass at least one (t, u, y) experiment.")
    out = []
    for i, e in enumerate(items):
        where = f"experiment {i}"
        if isinstance(e, Experiment):
            t, u, y = e.t, e.u, e.y
        else:
            try:
                t, u, y = e
            except (TypeError, ValueError):
                raise TypeError(
                    f"{where}: expected an Experiment or a (t, u, y) tuple, got {type(e).__name__}."
                ) from None
        t, u, y = _validate_triplet(t, u, y, where)
        out.append(e if isinstance(e, Experiment) else Experiment.from_arrays(t, u, y))
    m = {np.shape(e.u)[1] for e in out}
    if len(m) != 1:
        raise ValueError(f"all experiments must have the same number of inputs, got {sorted(m)}.")
    return out


# --------------------------------------------------------------------------- initial guess
def paper_initial_guess(
    n: int, m: int, seed: int | np.random.Generator | None = 0
) -> dict[str, Array]:
    """The paper's initial guess (docs/design.md §4).

    ``B`` zero except the leading ``min(n, m)`` diagonal, which is ``(1, 3, 1, 3, …)`` (the
    paper's ``diag(1, 3)`` for m = 2), ``Q = I``, ``R = diag(1, 1, 0, …)``, ``J`` skew with the
    strictly upper triangle drawn from ``uniform[−1, 1]`` (``J = U − Uᵀ``), ``x0 = 0``.

    Parameters
    ----------
    n, m : int
        State and port dimensions.
    seed : int or numpy Generator
        Randomness of J.
    """
    rng = np.random.default_rng(seed)
    B = np.zeros((n, m))
    k = min(n, m)
    B[np.arange(k), np.arange(k)] = np.where(np.arange(k) % 2 == 0, 1.0, 3.0)
    R = np.zeros((n, n))
    r = min(2, n)
    R[np.arange(r), np.arange(r)] = 1.0
    U = np.triu(rng.uniform(-1.0, 1.0, size=(n, n)), 1)
    return {"J": U - U.T, "R": R, "Q": np.eye(n), "B": B, "x0": np.zeros(n)}


def _gram(Y: Array) -> Array:
    """``R = ½(P + Pᵀ)`` with ``P = Y Yᵀ``: bitwise symmetric, PSD up to rounding."""
    P = Y @ Y.T
    return 0.5 * (P + P.T)


def _factor(R: Array, k: int) -> Array:
    """An ``n × k`` factor Y with ``YYᵀ ≈ R``; eigenvalues below ``R_EIGEN_FLOOR·λ_max`` lifted."""
    lam, V = np.linalg.eigh(0.5 * (R + R.T))
    lam, V = lam[::-1][:k], V[:, ::-1][:, :k]
    floor = R_EIGEN_FLOOR * max(float(lam[0]) if lam.size else 0.0, 1e-300)
    if floor <= 1e-300:  # R = 0: a small random full-rank factor
        floor = R_EIGEN_FLOOR
    lifted = lam < floor
    if np.any(lifted):
        # Directions of the zero eigenvalues: keep the eigenvectors (orthonormal complement).
        lam = np.where(lifted, floor, lam)
    return V * np.sqrt(lam)[None, :]


# --------------------------------------------------------------------------- the objective
class _Objective:
    """Cost / Euclidean gradient on the manifold point, with a small cache and counters.

    Built once per fit from validated pieces (fixed values, experiments and settings are checked
    in :meth:`LinearPHIdentifier.fit`); the calls go to the unchecked
    :class:`~fmu_surrogate.identify.adjoint.Evaluator`.  The forward solve of the last evaluated
    point is kept, so the gradient at an accepted line-search point costs only the adjoint solve.

    Points are identified by the identities of their component arrays (the optimisers never
    modify a point in place; every retraction returns new arrays); a cache entry holds references
    to the arrays, so their ids cannot be reused while it exists.
    """

    _CACHE_SIZE = 8

    def __init__(self, names: tuple[str, ...], fixed: dict[str, Array], evaluator: Any) -> None:
        self.names = names
        self.fixed = fixed
        self.ev = evaluator
        self.n_cost = 0
        self.n_grad = 0
        # key -> [arrays (kept alive), cost, gradient or None]
        self._cache: dict[tuple[int, ...], list[Any]] = {}
        self._last: tuple[tuple[int, ...], Any] | None = None  # (key, forward state)
        self._base = [fixed.get(k) for k in PARAMETER_NAMES]
        self._slots = [PARAMETER_NAMES.index(k) for k in names]
        self._fit_q = "Q" in names
        self._has_r = "R" in names

    def _arrays(self, point: Sequence[Array]) -> list[Array]:
        """``[J, R, Q, B, x0]`` at the manifold point (R assembled from its factor)."""
        a = list(self._base)
        if self._has_r:
            for i, name, v in zip(self._slots, self.names, point):
                a[i] = _gram(v) if name == "R" else v
        else:
            for i, v in zip(self._slots, point):
                a[i] = v
        return a

    def params(self, point: Sequence[Array]) -> dict[str, Array]:
        return dict(zip(PARAMETER_NAMES, self._arrays(point)))

    def _feasible(self, point: Sequence[Array], a: list[Array]) -> bool:
        # fixed values were validated finite; a NaN/Inf in a fitted one propagates into its sum
        # (a sum that overflows means entries ~1e308, as infeasible as Inf)
        for v in point:
            if not math.isfinite(_add_reduce(v, axis=None)):
                return False
        if self._fit_q:
            try:
                np.linalg.cholesky(a[2])
            except np.linalg.LinAlgError:
                return False
        return True

    def _remember(self, key: tuple[int, ...], entry: list[Any]) -> None:
        if len(self._cache) >= self._CACHE_SIZE:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = entry

    def cost(self, point: Sequence[Array]) -> float:
        key = tuple(map(id, point))
        hit = self._cache.get(key)
        if hit is not None:
            return hit[1]
        a = self._arrays(point)
        if not self._feasible(point, a):
            c = math.inf
        else:
            self.n_cost += 1
            state = self.ev.forward(*a)
            c = float(self.ev.cost(state))
            self._last = (key, state)
        self._remember(key, [tuple(point), c, None])
        return c

    def euclidean_gradient(self, point: Sequence[Array]) -> list[Array]:
        key = tuple(map(id, point))
        hit = self._cache.get(key)
        if hit is not None and hit[2] is not None:
            return hit[2]
        last = self._last
        if last is not None and last[0] == key:
            state = last[1]
        else:
            state = self.ev.forward(*self._arrays(point))
        self.n_grad += 1
        c, g = self.ev.cost_and_gradient(state)
        out = []
        for name, v in zip(self.names, point):
            G = g[name]
            out.append((G + G.T) @ v if name == "R" else G)
        if hit is not None:
            hit[2] = out
        else:
            self._remember(key, [tuple(point), float(c), out])
        return out


@functools.lru_cache(maxsize=1)
def _product_class() -> type:
    """pymanopt's Product with cheap operations on its flat components.

    Same geometry as :class:`pymanopt.manifolds.Product`: for the flat components (``Euclidean``,
    ``SkewSymmetric``) the retraction ``x + u``, the identity transport, the gradient projection
    (identity, resp. ``½(G − Gᵀ)`` exactly as pymanopt's ``multiskew``) and the Frobenius inner
    product are inlined (bitwise the same results); SPD and ``PSDFixedRank`` components use their
    own methods (``PSDFixedRank`` only shares the Frobenius inner product).  pymanopt's generic
    dispatch costs ~10–25 µs per call and the optimiser makes several calls per line-search trial.
    """
    from pymanopt.manifolds import Euclidean, Product, PSDFixedRank, SkewSymmetric

    class FastProduct(Product):
        def __init__(self, manifolds: list[Any]) -> None:
            super().__init__(manifolds)
            self._flat = [
                isinstance(m, (Euclidean, SkewSymmetric, PSDFixedRank)) for m in manifolds
            ]
            # 0: Euclidean, 1: skew-symmetric, 2: delegate to the component manifold
            self._kind = [
                0 if type(m) is Euclidean else 1 if type(m) is SkewSymmetric else 2
                for m in manifolds
            ]

        def inner_product(self, point: Any, a: Any, b: Any) -> float:
            total = 0.0
            for m, is_flat, x, u, v in zip(self.manifolds, self._flat, point, a, b):
                total += float(np.vdot(u, v)) if is_flat else float(m.inner_product(x, u, v))
            return total

        def norm(self, point: Any, a: Any) -> float:
            return float(np.sqrt(self.inner_product(point, a, a)))

        def retraction(self, point: Any, u: Any) -> list[Array]:
            return [
                x + v if k < 2 else m.retraction(x, v)
                for m, k, x, v in zip(self.manifolds, self._kind, point, u)
            ]

        def transport(self, point_a: Any, point_b: Any, u: Any) -> Any:
            return _TangentVector(
                v if k < 2 else m.transport(xa, xb, v)
                for m, k, xa, xb, v in zip(self.manifolds, self._kind, point_a, point_b, u)
            )

        def euclidean_to_riemannian_gradient(self, point: Any, egrad: Any) -> Any:
            out = _TangentVector()
            for m, k, x, g in zip(self.manifolds, self._kind, point, egrad):
                if k == 0:
                    out.append(g)
                elif k == 1:
                    out.append(0.5 * (g - g.T))  # pymanopt's multiskew, bitwise
                else:
                    out.append(m.euclidean_to_riemannian_gradient(x, g))
            return out

    return FastProduct


class _TangentVector(list):
    """Tangent vector of the product manifold: a list of arrays with vector-space arithmetic.

    Same role (and numpy-scalar behaviour, via ``__array_ufunc__ = None``) as pymanopt's
    product tangent vector, with the operations written out (fewer Python calls).
    """

    __array_priority__ = 1000
    __array_ufunc__ = None

    def __add__(self, other: Any) -> _TangentVector:
        return _TangentVector([a + b for a, b in zip(self, other)])

    def __sub__(self, other: Any) -> _TangentVector:
        return _TangentVector([a - b for a, b in zip(self, other)])

    def __mul__(self, c: Any) -> _TangentVector:
        return _TangentVector([c * a for a in self])

    __rmul__ = __mul__

    def __truediv__(self, c: Any) -> _TangentVector:
        return _TangentVector([a / c for a in self])

    def __neg__(self) -> _TangentVector:
        return _TangentVector([-a for a in self])


def _Product(parts: list[Any]) -> Any:
    return _product_class()(parts)


class _DirectProblem:
    """The part of :class:`pymanopt.Problem` that :class:`RestartedConjugateGradient` uses."""

    def __init__(self, manifold: Any, obj: _Objective) -> None:
        self.manifold = manifold
        self.cost = obj.cost
        self._egrad = obj.euclidean_gradient

    def riemannian_gradient(self, point: Any) -> Any:
        return self.manifold.euclidean_to_riemannian_gradient(point, self._egrad(point))


# ------------------------------------------------------------------------------- estimator
class LinearPHIdentifier(PHEstimator):
    """Fit a linear pH system ``ẋ = (J − R) Q x + B u, y = Bᵀ Q x`` to input/output data.

    Parameters
    ----------
    n_states : int
        Model order n (≥ 1); may differ from the true order (model reduction).
    learn : sequence of str
        Parameters to learn, any non-empty subset of ``("J", "R", "Q", "B", "x0")``.
    J, R, Q, B, x0 : array_like, optional
        Known values: a parameter not in ``learn`` is held fixed at its value (bitwise; validated:
        J skew, R symmetric PSD, Q SPD — :class:`~fmu_surrogate.ph.StructureError` otherwise), a
        learned one starts there.  Default: the paper's initial guess
        (:func:`paper_initial_guess`).
    rank_R : int, optional
        Fixed rank k of R (``R = YYᵀ``, ``Y ∈ ℝ^{n×k}`` on pymanopt's ``PSDFixedRank``);
        ``None``: full n × n factor on the total space (see module docstring).
    mode : {"exact", "euler"}
        Discretisation of state, adjoint and cost.
    reg_lambda : float
        Weight λ of ``(λ/2)‖w − w_ref‖²`` (needs ``reference``).
    reference : dict, optional
        Reference values ``w_ref`` (any subset of the parameter names).
    log_q : float
        Weight of the ``½‖log Q‖²_F`` regulariser (the paper's λ = 0.001 when Q is fitted).
    optimizer : {"cg", "steepest", "trust_regions", "pymanopt_cg"}
        ``"cg"``: :class:`~fmu_surrogate.identify.rcg.RestartedConjugateGradient` (the paper's
        Algorithm 1); ``"steepest"``: pymanopt steepest descent with the same line search;
        ``"trust_regions"``: pymanopt trust regions with a finite-difference Hessian (one extra
        gradient per Hessian-vector product); ``"pymanopt_cg"``: pymanopt's CG (no periodic
        restart).
    max_iter : int
        Iteration budget (the paper: 100).
    line_search : {"armijo", "backtracking"}
        ``"armijo"``: fixed first trial ``initial_step`` (paper); ``"backtracking"``: pymanopt's
        ``BackTrackingLineSearcher`` (first trial of length ``initial_step``, then warm-started).
    initial_step : float
        First Armijo trial (paper: 1000).
    restart_every : int or None
        CG restart period (paper: 5).
    beta_rule : str
        CG coefficient, see :data:`fmu_surrogate.identify.rcg.BETA_RULE_NAMES`.
    tol : float
        Stop when the Riemannian gradient norm falls below ``tol``.
    max_time : float, optional
        Wall-time budget in seconds.
    seed : int
        Seed of the random parts of the default initial guess (J).
    progress : bool
        Show a tqdm progress bar.

    Attributes
    ----------
    system_ : LinearPH
        Fitted system.
    x0_ : ndarray, shape (n,)
    result_ : LinearPHFit
    n_inputs_ : int
        Number of ports m seen in :meth:`fit`.

    Notes
    -----
    Measured on the paper's n = 5 problem (``scripts/reproduce_adjoint_ph.py``): with the paper's
    Algorithm 1 (``optimizer="cg"``, 100 iterations) the max output error ends at ~1e-2 in the
    Euler mode — its O(h) discretisation floor at h = 1e-3 (a converged trust-region Euler fit
    ends at ~9e-3 too) — and at ~4e-3 in the exact mode, where the limit is the slow first-order
    convergence on this ill-conditioned problem.  For accurate fits use ``mode="exact",
    optimizer="trust_regions"`` (~1e-5 after 100 iterations).
    """

    _fitted_attribute = "system_"

    def __init__(
        self,
        n_states: int = 2,
        *,
        learn: Sequence[str] = ("J", "R", "B"),
        J: ArrayLike | None = None,
        R: ArrayLike | None = None,
        Q: ArrayLike | None = None,
        B: ArrayLike | None = None,
        x0: ArrayLike | None = None,
        rank_R: int | None = None,
        mode: str = "exact",
        reg_lambda: float = 0.0,
        reference: dict[str, ArrayLike] | None = None,
        log_q: float = 0.0,
        optimizer: str = "cg",
        max_iter: int = 100,
        line_search: str = "armijo",
        initial_step: float = 1000.0,
        restart_every: int | None = 5,
        beta_rule: str = "FletcherReeves",
        tol: float = 1e-12,
        max_time: float | None = None,
        seed: int = 0,
        progress: bool = False,
    ) -> None:
        self.n_states = n_states
        self.learn = learn
        self.J = J
        self.R = R
        self.Q = Q
        self.B = B
        self.x0 = x0
        self.rank_R = rank_R
        self.mode = mode
        self.reg_lambda = reg_lambda
        self.reference = reference
        self.log_q = log_q
        self.optimizer = optimizer
        self.max_iter = max_iter
        self.line_search = line_search
        self.initial_step = initial_step
        self.restart_every = restart_every
        self.beta_rule = beta_rule
        self.tol = tol
        self.max_time = max_time
        self.seed = seed
        self.progress = progress

    # -- validation of settings ------------------------------------------------------------
    def _check_settings(self) -> tuple[int, tuple[str, ...]]:
        n = self.n_states
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n_states must be an integer >= 1, got {n!r}.")
        names = (self.learn,) if isinstance(self.learn, str) else self.learn
        names = tuple(names)
        unknown = [p for p in names if p not in PARAMETER_NAMES]
        if unknown:
            raise ValueError(
                f"learn contains unknown parameter(s) {unknown}; choose from {PARAMETER_NAMES}."
            )
        if not names:
            raise ValueError(f"learn is empty; name at least one of {PARAMETER_NAMES} to learn.")
        if len(set(names)) != len(names):
            raise ValueError(f"learn names a parameter twice: {names}.")
        if self.reference is not None:
            bad = [k for k in self.reference if k not in PARAMETER_NAMES]
            if bad:
                raise ValueError(
                    f"reference has unknown key(s) {bad}; valid keys: {PARAMETER_NAMES}."
                )
        if self.mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {self.mode!r}.")
        if self.optimizer not in _OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {_OPTIMIZERS}, got {self.optimizer!r}.")
        if self.line_search not in _LINE_SEARCHES:
            raise ValueError(
                f"line_search must be one of {_LINE_SEARCHES}, got {self.line_search!r}."
            )
        if self.rank_R is not None and not (1 <= int(self.rank_R) <= n):
            raise ValueError(
                f"rank_R must be None or an integer in [1, n_states={n}], got {self.rank_R!r}."
            )
        if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 0):
            raise ValueError(f"max_iter must be an integer >= 0, got {self.max_iter!r}.")
        for label, v in (("reg_lambda", self.reg_lambda), ("log_q", self.log_q)):
            if not (np.isfinite(v) and v >= 0):
                raise ValueError(f"{label} must be a finite number >= 0, got {v!r}.")
        if self.reg_lambda > 0 and not self.reference:
            raise ValueError("reg_lambda > 0 needs `reference` values (a dict like {'Q': Q_ref}).")
        return int(n), tuple(p for p in PARAMETER_NAMES if p in names)

    @staticmethod
    def _matrix(v: ArrayLike, shape: tuple[int, ...], name: str, where: str) -> Array:
        a = np.array(v, dtype=float)  # a copy: the caller's array is never aliased
        if name == "B" and a.ndim == 1 and len(shape) == 2 and shape[1] == 1:
            a = a[:, None]
        if a.shape != shape:
            raise ValueError(f"{where} value of {name} must have shape {shape}, got {a.shape}.")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{where} value of {name} contains NaN or Inf.")
        return a

    def _values(
        self, n: int, m: int, names: tuple[str, ...]
    ) -> tuple[dict[str, Array], dict[str, Array]]:
        """(fixed values, initial values of the fitted parameters), validated."""
        shapes = {"J": (n, n), "R": (n, n), "Q": (n, n), "B": (n, m), "x0": (n,)}
        default = paper_initial_guess(n, m, self.seed)
        fixed, init = {}, {}
        given = {p: getattr(self, p) for p in PARAMETER_NAMES if getattr(self, p) is not None}
        for p in PARAMETER_NAMES:
            where = "initial" if p in names else "fixed"
            v = self._matrix(given[p], shapes[p], p, where) if p in given else default[p]
            if p == "J":
                check_skew(v, f"{where} J")
                if p in names:
                    v = (v - v.T) / 2  # the initial point on the manifold, bitwise skew
            elif p == "R":
                check_psd(v, f"{where} R")
            elif p == "Q":
                check_spd(v, f"{where} Q")
                if p in names:
                    v = 0.5 * (v + v.T)
            (init if p in names else fixed)[p] = v
        return fixed, init

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, experiments: Any) -> LinearPHIdentifier:
        """Fit to one or several experiments.

        Parameters
        ----------
        experiments : Experiment, (t, u, y) tuple, or a list of those
            ``t`` of shape (K,) strictly increasing, ``u`` and ``y`` of shape (K, m) (or (K,)
            for m = 1).  Experiments may have different time grids.

        Returns
        -------
        self
        """
        n, names = self._check_settings()
        exps = _to_experiments(experiments)
        m = int(np.shape(exps[0].u)[1])
        fixed, init = self._values(n, m, names)
        return self._fit(exps, n, m, names, fixed, init)

    def fit_dataset(
        self,
        ds: Any,
        *,
        inputs: Sequence[str],
        outputs: Sequence[str],
        runs: Iterable[int] | None = None,
    ) -> LinearPHIdentifier:
        """Fit to the runs of a harvested dataset (:mod:`fmu_surrogate.fmu.dataset`).

        Parameters
        ----------
        ds : xarray.Dataset
        inputs, outputs : sequence of str
            FMU variable names of the m inputs and the m collocated outputs (same order).
        runs : iterable of int, optional
            Run labels to use (default: all runs with status ``"ok"``).
        """
        inputs, outputs = list(inputs), list(outputs)
        if not inputs or len(inputs) != len(outputs):
            raise ValueError(
                f"need as many outputs as inputs (collocated ports), got {len(inputs)} inputs "
                f"and {len(outputs)} outputs."
            )
        from fmu_surrogate.fmu.dataset import run_arrays

        arrays = run_arrays(ds, inputs + outputs, runs=runs)
        if not arrays:
            raise ValueError("the dataset has no usable runs (none with status 'ok' selected).")
        m = len(inputs)
        return self.fit([(t, X[:, :m], X[:, m:]) for t, X in arrays])

    def _manifold(self, n: int, m: int, names: tuple[str, ...]) -> Any:
        from pymanopt.manifolds import (
            Euclidean,
            PSDFixedRank,
            SkewSymmetric,
            SymmetricPositiveDefinite,
        )

        parts = []
        for p in names:
            if p == "J":
                parts.append(SkewSymmetric(n))
            elif p == "R":
                parts.append(PSDFixedRank(n, int(self.rank_R)) if self.rank_R else Euclidean(n, n))
            elif p == "Q":
                parts.append(SymmetricPositiveDefinite(n))
            elif p == "B":
                parts.append(Euclidean(n, m))
            else:
                parts.append(Euclidean(n))
        return _Product(parts)

    def _make_optimizer(self, callback: Any) -> Any:
        from pymanopt.optimizers import ConjugateGradient, SteepestDescent, TrustRegions
        from pymanopt.optimizers.line_search import BackTrackingLineSearcher

        from fmu_surrogate.identify.rcg import ArmijoLineSearch, RestartedConjugateGradient

        if self.line_search == "armijo":
            ls = ArmijoLineSearch(initial_step=self.initial_step)
        else:
            ls = BackTrackingLineSearcher(initial_step_size=self.initial_step, max_iterations=60)
        common: dict[str, Any] = {
            "max_iterations": int(self.max_iter),
            "min_gradient_norm": float(self.tol),
            "min_step_size": 0.0,
            "max_time": float(self.max_time) if self.max_time else np.inf,
            "max_cost_evaluations": 10**9,
            "verbosity": 0,
            "log_verbosity": 1,
        }
        if self.optimizer == "cg" or self.max_iter == 0:  # max_iter = 0: just the initial guess
            return RestartedConjugateGradient(
                restart_every=self.restart_every,
                beta_rule=self.beta_rule,
                line_searcher=ls,
                callback=callback,
                **common,
            )
        if self.optimizer == "steepest":
            return SteepestDescent(line_searcher=ls, **common)
        if self.optimizer == "pymanopt_cg":
            return ConjugateGradient(beta_rule=self.beta_rule, line_searcher=ls, **common)
        return TrustRegions(**common)

    def _fit(
        self,
        exps: list[Any],
        n: int,
        m: int,
        names: tuple[str, ...],
        fixed: dict[str, Array],
        init: dict[str, Array],
    ) -> LinearPHIdentifier:
        import pymanopt

        adj = _adjoint()
        reg = adj.Regularization(
            lam=float(self.reg_lambda),
            reference={k: np.asarray(v, dtype=float) for k, v in self.reference.items()}
            if self.reference
            else None,
            log_q=float(self.log_q),
        )
        manifold = self._manifold(n, m, names)
        x_init = []
        for p in names:
            if p == "R":
                x_init.append(_factor(init["R"], int(self.rank_R) if self.rank_R else n))
            else:
                x_init.append(init[p])
        # validated once here; the optimisation loop calls the unchecked evaluator
        ev = adj.Evaluator(exps, mode=self.mode, reg=reg, wrt=names, n_ports=m)
        obj = _Objective(names, fixed, ev)

        if self.optimizer == "cg" or self.max_iter == 0:
            # RestartedConjugateGradient uses only these three members: no pymanopt wrappers
            problem: Any = _DirectProblem(manifold, obj)
        else:

            @pymanopt.function.numpy(manifold)
            def cost(*point: Array) -> float:
                return obj.cost(point)

            @pymanopt.function.numpy(manifold)
            def egrad(*point: Array) -> list[Array]:
                return obj.euclidean_gradient(point)

            problem = pymanopt.Problem(manifold, cost, euclidean_gradient=egrad)

        bar = None
        stamps: list[tuple[float, float]] = []  # (wall, cpu) seconds at the end of each iteration
        clock0 = [0.0, 0.0]
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=int(self.max_iter), desc=f"LinearPH fit ({self.mode})", leave=False)

        def callback(it: int, c: float, g: float) -> None:
            stamps.append((time.perf_counter() - clock0[0], time.process_time() - clock0[1]))
            if bar is not None:
                bar.update(1)
                bar.set_postfix(cost=f"{c:.3e}", grad=f"{g:.1e}")

        opt = self._make_optimizer(callback)
        record: list[tuple[float, float]] = []
        if self.optimizer != "cg" and self.max_iter > 0:
            problem = self._adapter(
                problem, manifold, obj, self.optimizer == "trust_regions", record, callback
            )
        c0 = clock0[1] = time.process_time()
        t0 = clock0[0] = time.perf_counter()
        try:
            with np.errstate(all="ignore"):  # overflowing trial points have cost inf
                res = opt.run(problem, initial_point=x_init)
        finally:
            if bar is not None:
                bar.close()
        elapsed = time.perf_counter() - t0
        cpu = time.process_time() - c0

        log = res.log or {}
        if "cost_history" in log:
            costs = tuple(float(c) for c in log["cost_history"])
            gnorms = tuple(float(g) for g in log["gradient_norm_history"])
        else:  # cost and gradient norm at every iterate whose gradient the optimiser asked for
            costs = tuple(c for c, _ in record) or (float(res.cost),)
            gnorms = tuple(g for _, g in record)

        params = obj.params(list(res.point))
        J = params["J"]
        if "J" in names and not np.array_equal(J, -J.T):  # pragma: no cover - invariant
            raise AssertionError("internal error: the fitted J lost its exact skew-symmetry.")
        system = LinearPH(J, params["R"], params["Q"], params["B"])
        x0 = np.asarray(params["x0"], dtype=float)
        self.n_inputs_ = m
        self.system_ = system
        self.x0_ = x0
        self.result_ = LinearPHFit(
            system=system,
            x0=x0,
            cost_history=costs,
            stopping_reason=str(res.stopping_criterion),
            gradient_norm=float(res.gradient_norm),
            n_iter=int(res.iterations),
            time=elapsed,
            cpu_time_s=cpu,
            iteration_time_s=tuple(w for w, _ in stamps),
            iteration_cpu_time_s=tuple(c for _, c in stamps),
            mode=self.mode,
            fitted=names,
            optimizer=self.optimizer,
            n_cost_evaluations=obj.n_cost,
            n_gradient_evaluations=obj.n_grad,
            gradient_norm_history=gnorms,
        )
        return self

    @staticmethod
    def _adapter(
        problem: Any,
        manifold: Any,
        obj: _Objective,
        fd_hessian: bool,
        record: list[tuple[float, float]],
        callback: Any,
    ) -> Any:
        """Problem adapter for pymanopt's optimisers: records (cost, ‖grad‖) at every new iterate.

        With ``fd_hessian`` it adds a finite-difference Riemannian Hessian-vector product
        ``Hess f(x)[v] ≈ (T_{x⁺→x} grad f(x⁺) − grad f(x)) / h``, ``x⁺ = R_x(h v)``,
        ``h = 1e-6 / ‖v‖`` — one extra gradient per product.  (pymanopt returns a plain list from
        a user-supplied Riemannian Hessian on product manifolds, which its trust-region solver
        cannot do arithmetic with, hence this adapter.)
        """

        def rgrad(point: Any) -> Any:
            return manifold.euclidean_to_riemannian_gradient(point, obj.euclidean_gradient(point))

        def recorded_gradient(point: Any) -> Any:
            g = problem.riemannian_gradient(point)
            gn = float(manifold.norm(point, g))
            record.append((float(problem.cost(point)), gn))
            if callback is not None and len(record) > 1:
                callback(len(record) - 1, record[-1][0], gn)
            return g

        def hess(point: Any, v: Any) -> Any:
            nv = float(manifold.norm(point, v))
            if nv == 0.0:
                return manifold.zero_vector(point)
            h = 1e-6 / nv
            xp = manifold.retraction(point, v * h)
            return (manifold.transport(xp, point, rgrad(xp)) - rgrad(point)) / h

        class _Adapter:
            pass

        a = _Adapter()
        a.manifold = manifold
        a.cost = problem.cost
        a.riemannian_gradient = recorded_gradient
        a.preconditioner = problem.preconditioner
        if fd_hessian:
            a.riemannian_hessian = hess
        return a

    # -- prediction ---------------------------------------------------------------------------
    def to_surrogate(self) -> LinearPH:
        """The fitted system.

        Returns
        -------
        LinearPH
        """
        self._check_fitted()
        return self.system_

    def fitted_params(self) -> dict[str, Array]:
        """The fitted parameters as a dict ``{J, R, Q, B, x0}`` (copies)."""
        self._check_fitted()
        s = self.system_
        return {
            "J": s.J.copy(),
            "R": s.R.copy(),
            "Q": s.Q.copy(),
            "B": s.B.copy(),
            "x0": self.x0_.copy(),
        }

    def predict(
        self, t: ArrayLike, u: ArrayLike, x0: ArrayLike | None = None, mode: str | None = None
    ) -> Array:
        """Output of the fitted system for input ``u`` on grid ``t``.

        Parameters
        ----------
        t : array_like, shape (K,)
        u : array_like, shape (K, m) or (K,) for m = 1
        x0 : array_like, shape (n,), optional
            Initial state (default: the fitted/fixed ``x0_``).
        mode : {"exact", "euler"}, optional
            Discretisation (default: the one used for fitting, so that the training error is
            what the optimiser saw; ``"exact"`` gives the continuous-time model's response to
            the piecewise-linear input).

        Returns
        -------
        ndarray, shape (K, m)
        """
        self._check_fitted()
        tt = _as_time_grid(t, "predict")
        uu = _as_signal(u, tt.size, "u", "predict")
        if uu.shape[1] != self.n_inputs_:
            raise ValueError(f"predict: u must have {self.n_inputs_} columns, got {uu.shape[1]}.")
        mode = self.mode if mode is None else mode
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {mode!r}.")
        p = self.fitted_params()
        if x0 is not None:
            p["x0"] = self._matrix(x0, (self.system_.n_states,), "x0", "predict")
        _, y = _adjoint().simulate(p, tt, uu, mode=mode)
        return np.asarray(y)

    def score(
        self,
        t: ArrayLike,
        u: ArrayLike,
        y: ArrayLike,
        x0: ArrayLike | None = None,
        mode: str | None = None,
    ) -> float:
        """Coefficient of determination R² of :meth:`predict`, averaged over the outputs.

        Parameters
        ----------
        t : array_like, shape (K,)
            Time grid [s].
        u, y : array_like, shape (K, m)
            Inputs and measured outputs.
        x0 : array_like, shape (n,), optional
            Initial state (default: the fitted one).
        mode : {"exact", "euler"}, optional
            Discretisation (default: the estimator's).

        Returns
        -------
        float
        """
        tt, uu, yy = _validate_triplet(t, u, y, "score")
        yp = self.predict(tt, uu, x0=x0, mode=mode)
        ss_res = np.sum((yy - yp) ** 2, axis=0)
        ss_tot = np.sum((yy - yy.mean(axis=0)) ** 2, axis=0)
        r2 = np.where(
            ss_tot > 0,
            1.0 - ss_res / np.where(ss_tot > 0, ss_tot, 1.0),
            np.where(ss_res == 0, 1.0, 0.0),
        )
        return float(np.mean(r2))
