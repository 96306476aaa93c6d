"""The product manifold of linear pH identification and the objective on it.

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
(:func:`fmu_surrogate.identify.linear.model.adjoint_checked.cost_and_gradient`); the chain rule through ``R = YYᵀ``
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

Inside the optimisation loop
----------------------------
Everything is validated once in :meth:`LinearPHIdentifier.fit` (settings, experiments, fixed and
initial values); the loop then runs on unchecked fast paths: the prepared
:class:`~fmu_surrogate.identify.linear.model.adjoint.Evaluator` (the forward solve of the last line-search
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
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
_add_reduce = np.add.reduce

#: The parameters that can be fitted or held fixed, in canonical order.
PARAMETER_NAMES = ("J", "R", "Q", "B", "x0")
#: Relative floor for the eigenvalues of the initial R before factorising (see module docstring).
R_EIGEN_FLOOR = 1e-2


def _gram(Y: Array) -> Array:
    """``R = ½(P + Pᵀ)`` with ``P = Y Yᵀ``: bitwise symmetric, PSD up to rounding."""
    P = Y @ Y.T
    return 0.5 * (P + P.T)


def psd_factor(R: Array, k: int, rel_floor: float = R_EIGEN_FLOOR) -> Array:
    """An ``n × k`` factor Y with ``YYᵀ ≈ R``; eigenvalues below ``rel_floor·λ_max`` lifted."""
    lam, V = np.linalg.eigh(0.5 * (R + R.T))
    lam, V = lam[::-1][:k], V[:, ::-1][:, :k]
    floor = rel_floor * max(float(lam[0]) if lam.size else 0.0, 1e-300)
    if floor <= 1e-300:  # R = 0: a small random full-rank factor
        floor = rel_floor
    lifted = lam < floor
    if np.any(lifted):
        # Directions of the zero eigenvalues: keep the eigenvectors (orthonormal complement).
        lam = np.where(lifted, floor, lam)
    return V * np.sqrt(lam)[None, :]


# --------------------------------------------------------------------------- the objective
class Objective:
    """Cost / Euclidean gradient on the manifold point, with a small cache and counters.

    Built once per fit from validated pieces (fixed values, experiments and settings are checked
    in :meth:`LinearPHIdentifier.fit`); the calls go to the unchecked
    :class:`~fmu_surrogate.identify.linear.model.adjoint.Evaluator`.  The forward solve of the last evaluated
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

    def state(self, point: Sequence[Array]) -> Any:
        """The forward solve at ``point`` (reused from the last cost evaluation when possible)."""
        last = self._last
        if last is not None and last[0] == tuple(map(id, point)):
            return last[1]
        state = self.ev.forward(*self._arrays(point))
        self._last = (tuple(map(id, point)), state)
        return state

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


def product_manifold(parts: list[Any]) -> Any:
    return _product_class()(parts)


class DirectProblem:
    """The part of :class:`pymanopt.Problem` that :class:`RestartedConjugateGradient` uses."""

    def __init__(self, manifold: Any, obj: Objective) -> None:
        self.manifold = manifold
        self.cost = obj.cost
        self._egrad = obj.euclidean_gradient

    def riemannian_gradient(self, point: Any) -> Any:
        return self.manifold.euclidean_to_riemannian_gradient(point, self._egrad(point))
