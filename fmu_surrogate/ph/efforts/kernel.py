"""A learned effort function as an explicit Gaussian-kernel expansion (pure NumPy).

    z(x) = c + Σᵢ k_ℓ(x, xᵢ) Wᵢ  +  P_d M ∇H̄(x_d)

    k_ℓ(x, x') = exp(−½ Σⱼ (xⱼ − x'ⱼ)² / ℓⱼ²)                          (Gaussian kernel)
    H̄(x_d)    = h₀ + aᵀ x_d + Σ_k Σᵢ k_k(x_d, xᵢ,d) (x_d − xᵢ,d)ᵀ Λ_k⁻¹ v_{k,i}   (Λ_k = diag(ℓ_k²))
    ∇H̄(x_d)   = a + Σ_k Σᵢ k_k(x_d, xᵢ,d) [Λ_k⁻¹ v_{k,i} − (rᵢᵀ v_{k,i}) rᵢ],  rᵢ = Λ_k⁻¹ (x_d − xᵢ,d)

(``K ≥ 1`` Gaussian components ``k_k`` with length scales ``ℓ_k`` in the Hamiltonian part)

``x_d = x[differential]`` are the variables the Hamiltonian depends on, ``M`` (``n_d × n_d``,
``E_dd^{-T}`` for a descriptor ``E = diag(E_dd, 0)``) maps ``∇H̄`` to the differential efforts and
``P_d`` scatters them into those components of ``z``.  Optionally (constraint forces of
mechanical DAEs, see :mod:`fmu_surrogate.identify.gp.hamiltonian`) ``z_d`` also carries a term
linear in the algebraic states ``x_a``:

    z_d += M Φ(x_d) x_a,   Φ(x_d) x_a = Σᵢ k_c(x_d, xᵢ,d) ((x_a + s)ᵀ Aᵢ) Cᵢ

— with it ``E_ddᵀ z_d = ∇H̄ + Φ x_a`` (the compatibility of constrained mechanics), without it
exactly ``∇H̄``.  The second part is optional; when it is
present, ``E_ddᵀ z_d = ∇H̄`` holds *by construction* (the effort is computed as the analytic
gradient of the very expansion that :meth:`KernelEffort.hamiltonian` evaluates), so a pH-DAE with
this effort satisfies the compatibility condition ``Eᵀ z = ∇H`` to round-off.

Everything is plain arrays — training inputs ``X``, weights, length scales — so the expansion can
be serialised (:meth:`KernelEffort.to_dict`, JSON-ready and versioned) and re-implemented in
generated C code.  Nothing here depends on torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError, UnavailableError
from fmu_surrogate.ph.efforts.gaussian import gaussian_kernel
from fmu_surrogate.ph.system import as_state_rows

Array = NDArray[np.float64]

FORMAT = "fmu_surrogate.kernel_effort"
VERSION = 1
_CHUNK = 512  # evaluation points per block in the O(M N n²) Jacobian (bounds memory)


def _mat(a: ArrayLike, shape: tuple[int, ...], name: str) -> Array:
    m = np.asarray(a, dtype=float)
    if m.shape != shape:
        raise InvalidInputError(f"{name} must have shape {shape}, got {m.shape}.")
    if not np.all(np.isfinite(m)):
        raise InvalidInputError(f"{name} contains NaN or Inf; pass finite values.")
    return m


def _lengthscale(a: ArrayLike, n: int, name: str) -> Array:
    ls = (
        np.broadcast_to(np.asarray(a, dtype=float).reshape(-1), (n,)).copy()
        if np.size(a) in (1, n)
        else None
    )
    if ls is None:
        raise InvalidInputError(
            f"{name} must be a scalar or have {n} entries, got shape {np.shape(a)}.")
    if not np.all(np.isfinite(ls) & (ls > 0)):
        raise InvalidInputError(f"{name} must be finite and positive, got {ls}.")
    return ls


class KernelEffort:
    """Effort ``z(x)`` as a Gaussian-kernel expansion, optionally with a Hamiltonian part.

    Parameters
    ----------
    X : array_like, shape (N, n)
        Training inputs (centres of the expansion).
    weights : array_like, shape (N, n)
        ``W`` of the direct part ``Σᵢ k_ℓ(x, xᵢ) Wᵢ`` (its differential columns must be zero
        when a Hamiltonian part is given, and so must ``offset[differential]``).
    lengthscale : float or array_like, shape (n,)
        ``ℓ`` of the direct part.
    offset : array_like, shape (n,), optional
        Constant ``c`` (prior mean); zero by default.
    differential : array_like of int, optional
        Indices ``d`` of the Hamiltonian's variables (and of the effort components ``z_d`` that
        equal ``M ∇H̄``).  Give it together with ``h_weights`` and ``h_lengthscale``.
    h_weights : array_like, shape (N, n_d) or (K, N, n_d)
        ``V`` of the Hamiltonian expansion (centres ``X[:, d]``), per kernel component.
    h_lengthscale : float or array_like, shape (n_d,) or (K, n_d)
    effort_map : array_like, shape (n_d, n_d), optional
        ``M`` with ``z_d = M ∇H̄`` (``E_dd^{-T}``); identity by default.
    h_linear : array_like, shape (n_d,), optional
        Linear term ``a`` of ``H̄`` (the prior mean of ``∇H̄``); zero by default.
    h_offset : float
        Constant of ``H̄`` (``H`` is defined up to a constant; 0 by default).
    c_weights, c_lengthscale, c_anchor, c_shift : optional
        Constraint-force part (module docstring): ``C`` (N, n_d), ``ℓ_c`` (n_d,), anchors ``A``
        (N, n_a; default ``X[:, algebraic]``) and shift ``s`` (n_a,; default 0).

    Raises
    ------
    ValueError
        On inconsistent shapes, non-finite values or non-positive length scales.
    """

    def __init__(
        self,
        X: ArrayLike,
        weights: ArrayLike,
        lengthscale: ArrayLike,
        offset: ArrayLike | None = None,
        *,
        differential: ArrayLike | None = None,
        h_weights: ArrayLike | None = None,
        h_lengthscale: ArrayLike | None = None,
        effort_map: ArrayLike | None = None,
        h_linear: ArrayLike | None = None,
        h_offset: float = 0.0,
        c_weights: ArrayLike | None = None,
        c_lengthscale: ArrayLike | None = None,
        c_anchor: ArrayLike | None = None,
        c_shift: ArrayLike | None = None,
    ) -> None:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] < 1:
            raise InvalidInputError(f"X must have shape (N, n) with N >= 1, got {X.shape}.")
        N, n = X.shape
        self.X = _mat(X, (N, n), "X")
        self.weights = _mat(weights, (N, n), "weights")
        self.lengthscale = _lengthscale(lengthscale, n, "lengthscale")
        self.offset = np.zeros(n) if offset is None else _mat(offset, (n,), "offset")
        if differential is None:
            if h_weights is not None or h_lengthscale is not None or c_weights is not None:
                raise InvalidInputError(
                    "h_weights/h_lengthscale/c_weights need `differential` (the H variables)."
                )
            self.differential = None
            self.c_weights = None
            return
        d = np.asarray(differential, dtype=int).reshape(-1)
        if d.size == 0 or d.min() < 0 or d.max() >= n or len(np.unique(d)) != d.size:
            raise InvalidInputError(f"differential must be distinct indices in [0, {n}), got {d}.")
        if h_weights is None or h_lengthscale is None:
            raise InvalidInputError("a Hamiltonian part needs both h_weights and h_lengthscale.")
        nd = d.size
        if np.any(self.weights[:, d] != 0) or np.any(self.offset[d] != 0):
            raise InvalidInputError(
                "with a Hamiltonian part the direct weights and offset of the differential "
                "components must be zero (z_d = M ∇H̄ exactly); put a constant into h_linear."
            )
        self.differential = d
        hw = np.asarray(h_weights, dtype=float)
        hw = hw[None] if hw.ndim == 2 else hw
        if hw.ndim != 3:
            raise InvalidInputError(
                f"h_weights must have shape (N, n_d) or (K, N, n_d), got {np.shape(h_weights)}."
            )
        K = hw.shape[0]
        self.h_weights = _mat(hw, (K, N, nd), "h_weights")
        hl = np.asarray(h_lengthscale, dtype=float)
        hl = (
            np.broadcast_to(hl.reshape(-1), (nd,))[None]
            if hl.ndim <= 1 and hl.size in (1, nd)
            else hl
        )
        if hl.ndim != 2 or hl.shape[0] != K:
            raise InvalidInputError(
                f"h_lengthscale must have shape (n_d,) or (K, n_d) with K = {K} components, got {np.shape(h_lengthscale)}."
            )
        self.h_lengthscale = np.stack([_lengthscale(r, nd, "h_lengthscale") for r in hl])
        self.effort_map = (
            np.eye(nd) if effort_map is None else _mat(effort_map, (nd, nd), "effort_map")
        )
        self.h_linear = np.zeros(nd) if h_linear is None else _mat(h_linear, (nd,), "h_linear")
        self.h_offset = float(h_offset)
        if not np.isfinite(self.h_offset):
            raise InvalidInputError("h_offset must be finite.")
        self.algebraic = np.setdiff1d(np.arange(n), d)
        self.c_weights = None
        if c_weights is not None:
            na = self.algebraic.size
            if na == 0 or c_lengthscale is None:
                raise InvalidInputError(
                    "a constraint-force part needs algebraic states and c_lengthscale."
                )
            self.c_weights = _mat(c_weights, (N, nd), "c_weights")
            self.c_lengthscale = _lengthscale(c_lengthscale, nd, "c_lengthscale")
            self.c_anchor = (
                X[:, self.algebraic].copy()
                if c_anchor is None
                else _mat(c_anchor, (N, na), "c_anchor")
            )
            self.c_shift = np.zeros(na) if c_shift is None else _mat(c_shift, (na,), "c_shift")

    # -- sizes -------------------------------------------------------------------------------
    @property
    def n_states(self) -> int:
        """State dimension n."""
        return self.X.shape[1]

    @property
    def n_centres(self) -> int:
        """Number of expansion centres N."""
        return self.X.shape[0]

    @property
    def has_hamiltonian(self) -> bool:
        """Whether the expansion carries a Hamiltonian part."""
        return self.differential is not None

    @property
    def has_constraint_force(self) -> bool:
        """Whether ``z_d`` carries the term ``M Φ(x_d) x_a`` (then ``E_ddᵀ z_d ≠ ∇H̄`` in general)."""
        return self.differential is not None and self.c_weights is not None

    def constraint_force(self, x: ArrayLike) -> Array:
        """``Φ(x_d) x_a = Σᵢ k_c(x_d, xᵢ,d) ((x_a + shift)·Aᵢ) Cᵢ``, shape (M, n_d) (before ``M``).

        Parameters
        ----------
        x : array_like, shape (M, n) or (n,)
            States.
        """
        a, single = as_state_rows(x, self.n_states, "x")
        if not self.has_constraint_force:
            g = np.zeros((len(a), 0 if self.differential is None else self.differential.size))
        else:
            Kc, lin = self._c_terms(a)
            g = (Kc * lin) @ self.c_weights
        return g[0] if single else g

    def _c_terms(self, a: Array) -> tuple[Array, Array]:
        d = self.differential
        Kc = gaussian_kernel(a[:, d], self.X[:, d], self.c_lengthscale)
        lin = (a[:, self.algebraic] + self.c_shift) @ self.c_anchor.T
        return Kc, lin

    # -- evaluation ----------------------------------------------------------------------------
    def _h_terms(self, xd: Array, k: int) -> tuple[Array, Array, Array, Array]:
        """Component ``k``: kernel ``K`` (M, N), ``S = rᵀv`` (M, N), ``1/ℓ²`` and ``V``."""
        Xd = self.X[:, self.differential]
        ls = self.h_lengthscale[k]
        il2 = 1.0 / ls**2
        K = gaussian_kernel(xd, Xd, ls)
        V = self.h_weights[k]
        S = (xd * il2) @ V.T - ((Xd * il2) * V).sum(1)[None, :]
        return K, S, il2, V

    def hamiltonian_gradient(self, x: ArrayLike) -> Array:
        """``∇_{x_d} H̄``, shape (M, n_d) (or (n_d,) for one point).

        Parameters
        ----------
        x : array_like, shape (M, n) or (n,)
            States.
        """
        self._need_h()
        a, single = as_state_rows(x, self.n_states, "x")
        xd = a[:, self.differential]
        Xd = self.X[:, self.differential]
        g = np.broadcast_to(self.h_linear, xd.shape).copy()
        for k in range(self.h_weights.shape[0]):
            K, S, il2, V = self._h_terms(xd, k)
            KS = K * S
            g += (K @ V) * il2 - il2 * (xd * KS.sum(1)[:, None] - KS @ Xd)
        return g[0] if single else g

    def hamiltonian(self, x: ArrayLike) -> Array:
        """``H̄(x)`` (up to the constant ``h_offset``), shape (M,) (or scalar for one point).

        Parameters
        ----------
        x : array_like, shape (M, n) or (n,)
            States.
        """
        self._need_h()
        a, single = as_state_rows(x, self.n_states, "x")
        xd = a[:, self.differential]
        h = xd @ self.h_linear + self.h_offset
        for k in range(self.h_weights.shape[0]):
            K, S, _, _ = self._h_terms(xd, k)
            h = h + (K * S).sum(1)
        return h[0] if single else h

    def __call__(self, x: ArrayLike) -> Array:
        """``z(x)``: (M, n) -> (M, n), (n,) -> (n,)."""
        a, single = as_state_rows(x, self.n_states, "x")
        z = gaussian_kernel(a, self.X, self.lengthscale) @ self.weights + self.offset
        if self.differential is not None:
            g = self.hamiltonian_gradient(a)
            if self.c_weights is not None:
                g = g + self.constraint_force(a)
            z[:, self.differential] += g @ self.effort_map.T
        return z[0] if single else z

    def jacobian(self, x: ArrayLike) -> Array:
        """``∂z/∂x``: (M, n) -> (M, n, n) with ``[m, j, k] = ∂z_j/∂x_k`` ((n, n) for one point).

        Parameters
        ----------
        x : array_like, shape (M, n) or (n,)
            States.
        """
        a, single = as_state_rows(x, self.n_states, "x")
        out = np.concatenate([self._jac(a[i : i + _CHUNK]) for i in range(0, len(a), _CHUNK)])
        return out[0] if single else out

    def _jac(self, a: Array) -> Array:
        M, n = a.shape
        N = self.n_centres
        il2 = 1.0 / self.lengthscale**2
        K = gaussian_kernel(a, self.X, self.lengthscale)
        KW = K @ self.weights  # (M, n)
        KWX = (K @ (self.weights[:, :, None] * self.X[:, None, :]).reshape(N, n * n)).reshape(
            M, n, n
        )
        Jm = -(KW[:, :, None] * a[:, None, :] - KWX) * il2[None, None, :]
        if self.differential is not None:
            d = self.differential
            Hs = self._hessian(a[:, d])  # (M, nd, nd)
            Jm[np.ix_(np.arange(M), d, d)] += np.einsum("ij,mjk->mik", self.effort_map, Hs)
            if self.c_weights is not None:
                al = self.algebraic
                Kc, lin = self._c_terms(a)
                KL = Kc * lin
                Xd = self.X[:, d]
                C = self.c_weights
                nd = d.size
                KLC = KL @ C  # (M, nd)
                KLCX = (KL @ (C[:, :, None] * Xd[:, None, :]).reshape(N, nd * nd)).reshape(
                    M, nd, nd
                )
                Jd = (
                    -(KLC[:, :, None] * a[:, d][:, None, :] - KLCX)
                    / self.c_lengthscale[None, None, :] ** 2
                )
                na = al.size
                Ja = (Kc @ (C[:, :, None] * self.c_anchor[:, None, :]).reshape(N, nd * na)).reshape(
                    M, nd, na
                )
                Jm[np.ix_(np.arange(M), d, d)] += np.einsum("ij,mjk->mik", self.effort_map, Jd)
                Jm[np.ix_(np.arange(M), d, al)] += np.einsum("ij,mjk->mik", self.effort_map, Ja)
        return Jm

    def _hessian(self, xd: Array) -> Array:
        """``∇²H̄`` (M, n_d, n_d), summed over the kernel components."""
        return sum(self._hessian_k(xd, k) for k in range(self.h_weights.shape[0]))

    def _hessian_k(self, xd: Array, k: int) -> Array:
        Xd = self.X[:, self.differential]
        M = xd.shape[0]
        K, S, il2, V = self._h_terms(xd, k)
        N, nd = V.shape
        KS = K * S
        c = KS.sum(1)  # (M,)
        KV = K @ V  # Σ k vᵢ
        KVX = (K @ (V[:, :, None] * Xd[:, None, :]).reshape(N, nd * nd)).reshape(M, nd, nd)
        KSX = KS @ Xd  # Σ k s xᵢ
        KSXX = (KS @ (Xd[:, :, None] * Xd[:, None, :]).reshape(N, nd * nd)).reshape(M, nd, nd)
        L = il2
        # T1 = −Λ⁻¹ Σ k vᵢ (x − xᵢ)ᵀ Λ⁻¹ ; T3 = T1ᵀ
        T1 = -(KV[:, :, None] * xd[:, None, :] - KVX) * L[None, :, None] * L[None, None, :]
        # T2 = Λ⁻¹ Σ k s (x − xᵢ)(x − xᵢ)ᵀ Λ⁻¹
        outer = (
            c[:, None, None] * xd[:, :, None] * xd[:, None, :]
            - xd[:, :, None] * KSX[:, None, :]
            - KSX[:, :, None] * xd[:, None, :]
            + KSXX
        )
        T2 = outer * L[None, :, None] * L[None, None, :]
        T4 = -c[:, None, None] * np.diag(L)[None]
        return T1 + np.swapaxes(T1, 1, 2) + T2 + T4

    def _need_h(self) -> None:
        if self.differential is None:
            raise UnavailableError(
                "this effort has no Hamiltonian part (it was learned without the compatibility "
                "condition); fit with GPEffortIdentifier(..., hamiltonian=True) to get one."
            )

    # -- serialisation -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description (plain lists and floats), versioned; see :meth:`from_dict`."""
        d: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "kernel": "gaussian",
            "formula": (
                "z(x) = offset + sum_i exp(-0.5*sum_j ((x_j - X[i,j])/lengthscale[j])**2) * weights[i]"
                "; if hamiltonian: z[d] += effort_map @ grad H(x[d]), "
                "H(xd) = offset + linear.xd + sum_k sum_i k_k(xd, X[i,d]) * sum_j (xd_j - X[i,d_j]) "
                "* weights[k][i][j] / lengthscale[k][j]**2, k_k Gaussian with lengthscale[k]"
                "; if constraint_force: z[d] += effort_map @ sum_i k_c(xd, X[i,d]) * "
                "((x[a] + shift).anchor[i]) * weights[i], a = states not in d"
            ),
            "n_states": int(self.n_states),
            "X": self.X.tolist(),
            "weights": self.weights.tolist(),
            "lengthscale": self.lengthscale.tolist(),
            "offset": self.offset.tolist(),
            "hamiltonian": None,
        }
        if self.differential is not None:
            d["hamiltonian"] = {
                "differential": self.differential.tolist(),
                "weights": self.h_weights.tolist(),
                "lengthscale": self.h_lengthscale.tolist(),
                "effort_map": self.effort_map.tolist(),
                "linear": self.h_linear.tolist(),
                "offset": self.h_offset,
                "constraint_force": None,
            }
            if self.c_weights is not None:
                d["hamiltonian"]["constraint_force"] = {
                    "weights": self.c_weights.tolist(),
                    "lengthscale": self.c_lengthscale.tolist(),
                    "anchor": self.c_anchor.tolist(),
                    "shift": self.c_shift.tolist(),
                }
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> KernelEffort:
        """Rebuild from :meth:`to_dict` output (validates format, version and shapes)."""
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise InvalidInputError(
                f"not a kernel-effort description (expected format {FORMAT!r}).")
        if d.get("version") != VERSION:
            raise InvalidInputError(
                f"kernel-effort version {d.get('version')!r} is not supported (this code reads "
                f"version {VERSION}); upgrade fmu_surrogate or re-export the surrogate."
            )
        if d.get("kernel") != "gaussian":
            raise InvalidInputError(
                f"unsupported kernel {d.get('kernel')!r}; only 'gaussian' is known.")
        h = d.get("hamiltonian")
        kw: dict[str, Any] = {}
        if h is not None:
            kw = {
                "differential": h["differential"],
                "h_weights": h["weights"],
                "h_lengthscale": h["lengthscale"],
                "effort_map": h["effort_map"],
                "h_linear": h["linear"],
                "h_offset": h["offset"],
            }
            c = h.get("constraint_force")
            if c is not None:
                kw.update(
                    c_weights=c["weights"],
                    c_lengthscale=c["lengthscale"],
                    c_anchor=c["anchor"],
                    c_shift=c["shift"],
                )
        return cls(d["X"], d["weights"], d["lengthscale"], d["offset"], **kw)

    def __repr__(self) -> str:
        h = (
            f", hamiltonian on {self.differential.tolist()}"
            if self.differential is not None
            else ""
        )
        return f"KernelEffort(N={self.n_centres}, n={self.n_states}{h})"
