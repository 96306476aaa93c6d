"""Hamiltonian-consistent GP effort: the differential efforts are the gradient of a GP ``H``.

**Why.**  The paper's multi-task GP on ``z`` (:mod:`~fmu_surrogate.identify.gp.kronecker`) does
not guarantee the compatibility condition ``Eᵀ z(x) = ∇H(x)`` (docs/design.md §2), so its surrogate
need not have a Hamiltonian and the dissipation inequality need not hold.

**Model.**  Split the states into differential ``x_d`` and algebraic ``x_a`` and require
``E = diag(E_dd, 0)`` in that split with ``E_dd`` regular (:func:`check_descriptor`).  Then
``Eᵀz = ∇H`` reads ``E_ddᵀ z_d = ∇_{x_d} H`` and ``0 = ∇_{x_a} H``: **H depends on ``x_d`` only**
and ``z_d = E_dd^{-T} ∇H(x_d)``.  We put a scalar GP prior on H,

    H ~ GP(aᵀ x_d, Σ_k σ_k² k_{ℓ_k}(x_d, x_d')),   z_d = E_dd^{-T} ∇H   (derivative kernel
    Cov(z_d(x), z_d(x')) = Σ_k σ_k² E_dd^{-T} ∂²k_{ℓ_k}/∂x_d ∂x_d' E_dd^{-1}),

with ``K = h_scales`` Gaussian components (default 2: a short and a long length scale; one
component reverts to the prior mean within a few length scales of the data, which a stiff
region — e.g. the RC network's ``√(2 x1)`` near ``x1 = 0`` — forces to be short, so gaps in the
data elsewhere are then bridged badly; the long component carries the trend across them),

and keep the algebraic efforts as in the paper, ``z_a ~ GP(c_a, k(x, x') K_a)`` on the full
state, independent of H.  The targets are ``y = T z + ε`` as before; the joint training
covariance ``(I ⊗ T) Cov(z) (I ⊗ Tᵀ) + I ⊗ Σ`` is no longer a Kronecker product, so it is
factorised densely (Cholesky, O((N n)³); fine for the N ≲ 500 this is meant for).  The posterior
mean of ``z_d`` is *computed as the analytic gradient of the posterior mean of H*, a kernel
expansion (:class:`~fmu_surrogate.ph.efforts.kernel.KernelEffort`), so the identified surrogate
satisfies ``Eᵀ z = ∇H̄`` exactly (to round-off) everywhere, not only on the data, and
``H̄`` (defined up to a constant) is its Hamiltonian.

**What this cannot represent — honestly.**  Everything hinges on ``z_d`` being a gradient field
of the differential variables alone.

* RC network (3a): ``E = diag(1,0,0)``, ``z1 = √(2 x1) = H'(x1)``, ``H = (2√2/3) x1^{3/2}``: the
  truth is inside the model class; the variant is as accurate as the plain one (report numbers in
  the issue note) and additionally returns ``H``.
* Pendulum (3b): ``E = diag(1,1,1,1,0)``, but the true ``z_q = ∇U(q) − 2qλ`` contains the
  constraint force ``−(∂g/∂q)ᵀ λ``, which depends on the algebraic ``λ``.  The pendulum's
  ``Eᵀ z = ∇H`` holds only on the constraint manifold and only for the *augmented* Hamiltonian
  ``H(q, p) − g(q) λ`` — which depends on ``λ`` and so violates ``∇_λ H = 0`` off the manifold.
  On the data ``λ`` is not a function of ``(q, p)`` (it also depends on the input ``u(t)``),
  so no ``H(q, p)`` can reproduce ``z_q``: the fit of ``z_q`` is limited to the best gradient
  field of ``(q, p)``, an O(|2 q δλ|) error, much larger than the plain variant's.  ``z_p = p``
  and ``z_λ`` are unaffected.  Use the plain variant (no Hamiltonian guarantee) or enable
  ``constraint_force=True``: it adds a term linear in the algebraic states,
  ``z_d = E_dd^{-T} (∇H(x_d) + Φ(x_d) x_a)`` with a matrix-valued GP ``Φ`` — the structure of
  constraint forces ``−G(q)ᵀ λ`` — which contains the pendulum's truth.  Then the surrogate
  satisfies ``Eᵀ z = ∇H + Φ x_a``: exactly the compatibility the true pendulum has (the extra
  term does no work on the hidden constraint ``G(q) q̇ = 0``), but **not** ``Eᵀz = ∇H``; the
  surrogate still carries ``H̄(x_d)``.

**Measured** (Euler data of ``benchmarks``, fixed 500-sample test set, 5 random training
subsets, RMSE of ``z``; plain variant for comparison):

==========================  ==========  =====================  ==========================
case                        N           plain                  this variant
==========================  ==========  =====================  ==========================
RC, z1 / z2 / z3            64          8e-7 / 4e-7 / 7e-7     1e-2 / 1e-6 / 8e-5
RC, z1 / z2 / z3            256         3e-7 / 2e-7 / 3e-7     6e-2 / 4e-7 / 4e-6
RC, H̄ − H (centred)         64          —                      7e-4
pendulum, z_q / z_p / z_λ   64          4e-5 / 1e-5 / 2e-7     0.33, 0.63 / 2e-6 / 0
pendulum + constraint_force 64          —                      2e-7…1e-6, H̄ − H: 3e-7
==========================  ==========  =====================  ==========================

RC: the median error of ``z1`` is ~1e-5; the RMSE is dominated by the few test states of the
initial transient (t < 0.3, x1 > 1.75) that random training subsets rarely contain — H is a GP in
``x1`` alone and must extrapolate there, whereas the plain GP uses the on-data identity
``√(2 x1) = x2 − x3`` (valid on the constraint manifold only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import torch

from fmu_surrogate.errors import InvalidInputError, NumericalError
from fmu_surrogate.identify.gp.kernels import rbf
from fmu_surrogate.ph.structure import StructureError

__all__ = ["HamiltonianEffortGP", "HamiltonianPosterior", "check_descriptor"]


def check_descriptor(E: np.ndarray, differential: np.ndarray) -> np.ndarray:
    """Check ``E = diag(E_dd, 0)`` w.r.t. the differential split and return the regular ``E_dd``.

    Raises
    ------
    ValueError
        If there is no differential state.
    StructureError
        If ``E`` has entries in algebraic rows/columns or ``E_dd`` is singular.
    """
    d = np.nonzero(differential)[0]
    a = np.nonzero(~np.asarray(differential, bool))[0]
    if d.size == 0:
        raise InvalidInputError(
            "hamiltonian=True needs at least one differential state (E is zero / `differential` "
            "is all False); fit the plain variant instead."
        )
    scale = max(float(np.abs(E).max()), 1e-300)
    off = max(float(np.abs(E[a, :]).max(initial=0.0)), float(np.abs(E[:, a]).max(initial=0.0)))
    if off > 1e-12 * scale:
        raise StructureError(
            f"hamiltonian=True needs E = diag(E_dd, 0) in the differential/algebraic split "
            f"(differential = {np.asarray(differential, bool).tolist()}), but E has entries of size "
            f"{off:.3e} in algebraic rows/columns; pass a `differential` mask matching E or bring "
            f"the system to semi-explicit form first."
        )
    E_dd = E[np.ix_(d, d)]
    if np.linalg.cond(E_dd) > 1e12:
        raise StructureError(
            "hamiltonian=True needs the differential block E_dd of E to be regular; it is "
            "(numerically) singular — mark the states of its null space as algebraic."
        )
    return E_dd


class HamiltonianEffortGP(torch.nn.Module):
    """Hyperparameters and dense likelihood of the Hamiltonian-consistent effort GP (module doc).

    Parameters
    ----------
    T : array_like (D, n)
        ``J − R``.
    differential : array_like of bool (n,)
    effort_map : array_like (n_d, n_d)
        ``M`` with ``z_d = M ∇H`` in the units the model works in.
    ard, task_rank, noise, mean, noise_floor, seed, dtype
        As :class:`~fmu_surrogate.identify.gp.kronecker.TransformedMultitaskGP` (the task
        covariance is the algebraic block ``K_a``; ``mean="constant"`` gives H a linear mean).
    init_lengthscale : array_like (n,)
    constraint_force : bool
        Add ``M Φ(x_d) x_a`` to ``z_d`` (see module doc); breaks exact ``Eᵀz = ∇H``.
    algebraic_shift : array_like (n_a,), optional
        Added to ``x_a`` inside the linear kernel of ``Φ(x_d) x_a`` (undoes the estimator's
        centring, so that the term is linear, not affine, in the original ``x_a``).
    h_scales : int
        Number of Gaussian components of the kernel of ``H``.
    algebraic_learned : array_like of bool (n_a,), optional
        Which algebraic efforts the GP models (default all); the others have zero prior mean
        and variance (rows/columns of ``K_a`` masked), their values being known to the caller.
    """

    def __init__(
        self,
        T,
        differential,
        effort_map,
        *,
        ard: bool = True,
        task_rank: int | None = None,
        noise: str = "task",
        mean: str = "zero",
        noise_floor: float = 1e-10,
        init_lengthscale=1.0,
        seed: int = 0,
        dtype: torch.dtype = torch.float64,
        constraint_force: bool = False,
        algebraic_shift=None,
        h_scales: int = 1,
        algebraic_learned=None,
    ) -> None:
        super().__init__()
        T = np.asarray(T, float)
        D, n = T.shape
        diff = np.asarray(differential, bool)
        self.d_idx = np.nonzero(diff)[0]
        self.a_idx = np.nonzero(~diff)[0]
        self._d = torch.as_tensor(self.d_idx, dtype=torch.long)
        self._a = torch.as_tensor(self.a_idx, dtype=torch.long)
        nd, na = self.d_idx.size, self.a_idx.size
        self.n, self.nd, self.na, self.D = n, nd, na, D
        tt = lambda a: torch.as_tensor(np.array(a, dtype=float), dtype=dtype)
        Mn = np.asarray(effort_map, float)
        self.register_buffer("T", tt(T))
        self.register_buffer("M", tt(Mn))
        self.register_buffer("Gd", tt(T[:, self.d_idx] @ Mn))  # T_d M
        self.register_buffer("Ta", tt(T[:, self.a_idx]))
        self.noise_floor = float(noise_floor)
        sh = np.zeros(na) if algebraic_shift is None else np.asarray(algebraic_shift, float)
        self.register_buffer("a_shift", tt(sh))
        am = np.ones(na) if algebraic_learned is None else np.asarray(algebraic_learned, bool)
        self.register_buffer("a_mask", tt(am.astype(float)))
        self.constraint_force = bool(constraint_force) and na > 0
        gen = torch.Generator().manual_seed(int(seed))
        ls0 = np.broadcast_to(np.asarray(init_lengthscale, float), (n,))
        lsd = ls0[self.d_idx] if ard else np.array([np.exp(np.mean(np.log(ls0[self.d_idx])))])
        lsa = ls0 if ard else np.array([np.exp(np.mean(np.log(ls0)))])
        # -- H: a sum of h_scales Gaussian kernels, length scales ℓ, 4ℓ, 16ℓ, … initially, each
        #    with σ_k² such that it contributes Var(z_d) ≈ 1/h_scales
        K = int(h_scales)
        if K < 1:
            raise InvalidInputError(f"h_scales must be >= 1, got {h_scales}.")
        self.h_scales = K
        lsk = np.stack([lsd * 4.0**k for k in range(K)])  # (K, nd or 1)
        vz = np.array([np.mean(np.diag((Mn / np.broadcast_to(l, (nd,)) ** 2) @ Mn.T)) for l in lsk])
        self.raw_h_lengthscale = torch.nn.Parameter(torch.log(tt(lsk)))
        self.raw_h_outputscale = torch.nn.Parameter(tt(np.log(1.0 / (K * np.maximum(vz, 1e-300)))))
        if mean == "constant":
            self.h_linear = torch.nn.Parameter(torch.zeros(nd, dtype=dtype))
            self.mean_a = torch.nn.Parameter(torch.zeros(na, dtype=dtype))
        else:
            self.register_buffer("h_linear", torch.zeros(nd, dtype=dtype))
            self.register_buffer("mean_a", torch.zeros(na, dtype=dtype))
        # -- algebraic multi-task GP (the paper's model restricted to z_a)
        r = na if task_rank is None else min(int(task_rank), max(na, 1))
        self.raw_lengthscale = torch.nn.Parameter(torch.log(tt(lsa)))
        self.task_factor = torch.nn.Parameter(0.1 * torch.randn(na, r, generator=gen, dtype=dtype))
        self.raw_task_diag = torch.nn.Parameter(torch.zeros(na, dtype=dtype))
        # -- constraint-force term Φ(x_d) x_a, Φ's columns iid GP(0, k_c K_c)
        if self.constraint_force:
            self.raw_c_lengthscale = torch.nn.Parameter(torch.log(tt(lsd)))
            self.c_factor = torch.nn.Parameter(
                0.1 * torch.randn(nd, nd, generator=gen, dtype=dtype)
            )
            self.raw_c_diag = torch.nn.Parameter(torch.full((nd,), -2.0, dtype=dtype))
        self.shared_noise = noise == "shared"
        self.raw_noise = torch.nn.Parameter(
            torch.full((1 if self.shared_noise else D,), math.log(1e-2), dtype=dtype)
        )

    # -- hyperparameters -----------------------------------------------------------------------
    def h_lengthscale(self) -> torch.Tensor:
        """Length scales of the components of ``k_h`` on ``x_d``, (K, n_d)."""
        return torch.exp(self.raw_h_lengthscale).expand(self.h_scales, self.nd)

    def h_outputscale(self) -> torch.Tensor:
        """``σ_k²`` of the components, (K,)."""
        return torch.exp(self.raw_h_outputscale)

    def lengthscale(self) -> torch.Tensor:
        """Length scale(s) of the algebraic kernel on the full state, (n,)."""
        return torch.exp(self.raw_lengthscale).expand(self.n)

    def c_lengthscale(self) -> torch.Tensor:
        """Length scale(s) of the constraint-force kernel on ``x_d``, (n_d,)."""
        return torch.exp(self.raw_c_lengthscale).expand(self.nd)

    def task_covariance_a(self) -> torch.Tensor:
        """``K_a`` (n_a, n_a), masked to the learned algebraic efforts."""
        K = self.task_factor @ self.task_factor.T + torch.diag(torch.exp(self.raw_task_diag))
        return K * self.a_mask[:, None] * self.a_mask[None, :]

    def c_covariance(self) -> torch.Tensor:
        """``K_c`` (n_d, n_d) of the constraint-force columns."""
        return self.c_factor @ self.c_factor.T + torch.diag(torch.exp(self.raw_c_diag))

    def noise(self) -> torch.Tensor:
        """Noise variances (D,)."""
        s = self.noise_floor + torch.exp(self.raw_noise)
        return s.expand(self.D) if self.shared_noise else s

    def mean_z(self) -> torch.Tensor:
        """Prior mean of ``z`` (constant), (n,)."""
        z = torch.zeros(self.n, dtype=self.T.dtype)
        z = z.index_put((self._d,), self.M @ self.h_linear)
        return z.index_put((self._a,), self.mean_a * self.a_mask)

    # -- covariances ---------------------------------------------------------------------------
    def _c_kernel(self, X1: torch.Tensor, X2: torch.Tensor) -> torch.Tensor:
        """``k_c(x_d, x_d') (x_a + shift)ᵀ (x_a' + shift)``, (N1, N2)."""
        d, a = self._d, self._a
        lin = (X1[:, a] + self.a_shift) @ (X2[:, a] + self.a_shift).T
        return rbf(X1[:, d], X2[:, d], self.c_lengthscale()) * lin

    def effort_cov_blocks(
        self, X1: torch.Tensor, X2: torch.Tensor, left=None, right=None
    ) -> torch.Tensor:
        """``L Cov(z(X1), z(X2)) Rᵀ`` as (N1, N2, p, q) with ``L``/``R`` (p, n)/(q, n) (identity if None)."""
        d, a = self._d, self._a
        eye = torch.eye(self.n, dtype=self.T.dtype)
        Lm = eye if left is None else left
        Rm = eye if right is None else right
        LdM, RdM = Lm[:, d] @ self.M, Rm[:, d] @ self.M
        out = 0.0
        diffs = X1[:, d][:, None, :] - X2[:, d][None, :, :]  # (N1, N2, nd)
        for ls, s2 in zip(self.h_lengthscale(), self.h_outputscale()):
            k = rbf(X1[:, d], X2[:, d], ls)
            il2 = 1.0 / ls**2
            Rr = diffs * il2
            P0 = (LdM * il2) @ RdM.T
            out = out + s2 * k[..., None, None] * (
                P0 - (Rr @ LdM.T)[..., :, None] * (Rr @ RdM.T)[..., None, :]
            )
        if self.na:
            ka = rbf(X1, X2, self.lengthscale())
            out = out + ka[..., None, None] * (Lm[:, a] @ self.task_covariance_a() @ Rm[:, a].T)
            if self.constraint_force:
                kc = self._c_kernel(X1, X2)
                out = out + kc[..., None, None] * (LdM @ self.c_covariance() @ RdM.T)
        return out

    def _train_cov(self, X: torch.Tensor) -> torch.Tensor:
        N = X.shape[0]
        C = self.effort_cov_blocks(X, X, self.T, self.T)
        C = C.permute(0, 2, 1, 3).reshape(N * self.D, N * self.D)
        C = 0.5 * (C + C.T)
        return C + torch.diag(self.noise().repeat(N))

    def mll(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        """Log marginal likelihood of the (N, D) targets (dense Cholesky)."""
        L = _safe_cholesky(self._train_cov(X))
        r = (Y - self.mean_z() @ self.T.T).reshape(-1, 1)
        alpha = torch.cholesky_solve(r, L)
        return (
            -0.5 * (r * alpha).sum()
            - torch.log(torch.diagonal(L)).sum()
            - 0.5 * r.numel() * math.log(2.0 * math.pi)
        )

    def posterior(self, X: torch.Tensor, Y: torch.Tensor) -> HamiltonianPosterior:
        """Condition on the data at the current hyperparameters."""
        with torch.no_grad():
            N = X.shape[0]
            L = _safe_cholesky(self._train_cov(X))
            mz = self.mean_z()
            r = (Y - mz @ self.T.T).reshape(-1, 1)
            alpha = torch.cholesky_solve(r, L).reshape(N, self.D)
            beta = (alpha @ self.T).numpy()  # (N, n): Tᵀ αᵢ
            d, a = self.d_idx, self.a_idx
            s2 = self.h_outputscale().numpy().copy()
            Mn = self.M.numpy()
            W = np.zeros((N, self.n))
            K_T = np.zeros((self.n, self.n))
            if self.na:
                Ka = self.task_covariance_a().numpy()
                W[:, a] = beta[:, a] @ Ka
                K_T[np.ix_(a, a)] = Ka
            post = HamiltonianPosterior(
                X=X.numpy().copy(),
                d_idx=d,
                a_idx=a,
                T=self.T.numpy().copy(),
                M=Mn.copy(),
                lengthscale=self.lengthscale().numpy().copy(),
                h_lengthscale=self.h_lengthscale().numpy().copy(),
                h_outputscale=s2,
                h_linear=self.h_linear.detach().numpy().copy(),
                K_T=K_T,
                mean_z=mz.detach().numpy().copy(),
                noise=self.noise().numpy().copy(),
                effort_weights=W,
                h_weights=s2[:, None, None] * (beta[:, d] @ Mn)[None],
                L=L.numpy(),
                model=self,
            )
            if self.constraint_force:
                post.c_lengthscale = self.c_lengthscale().numpy().copy()
                post.c_weights = beta[:, d] @ Mn @ self.c_covariance().numpy()
                post.c_anchor = X[:, a].numpy() + self.a_shift.numpy()
                post.c_shift = self.a_shift.numpy().copy()
            return post


def _safe_cholesky(C: torch.Tensor) -> torch.Tensor:
    """Cholesky with escalating diagonal jitter (1e-12 … 1e-6 × mean diagonal) on failure."""
    L, info = torch.linalg.cholesky_ex(C)
    if int(info) == 0:
        return L
    scale = float(torch.diagonal(C).mean().detach())
    eye = torch.eye(C.shape[0], dtype=C.dtype)
    for j in (1e-12, 1e-10, 1e-8, 1e-6):
        L, info = torch.linalg.cholesky_ex(C + j * scale * eye)
        if int(info) == 0:
            return L
    raise NumericalError(
        "the training covariance is not positive definite even with jitter 1e-6; raise noise_floor."
    )


@dataclass
class HamiltonianPosterior:
    """Posterior of :class:`HamiltonianEffortGP` at fixed hyperparameters (NumPy; model units).

    ``effort_weights`` (N, n) are the algebraic-part weights (differential columns zero),
    ``h_weights`` (K, N, n_d) the weights ``V`` of
    ``H̄(x) = aᵀx_d + Σ_k Σᵢ k_{h,k} (x_d − xᵢ)ᵀ Λ_k⁻¹ v_{k,i}`` (``h_lengthscale`` (K, n_d)),
    ``c_*`` the constraint-force expansion (if enabled).
    """

    X: np.ndarray
    d_idx: np.ndarray
    a_idx: np.ndarray
    T: np.ndarray
    M: np.ndarray
    lengthscale: np.ndarray
    h_lengthscale: np.ndarray
    h_outputscale: np.ndarray
    h_linear: np.ndarray
    K_T: np.ndarray
    mean_z: np.ndarray
    noise: np.ndarray
    effort_weights: np.ndarray
    h_weights: np.ndarray
    L: np.ndarray
    model: HamiltonianEffortGP
    c_lengthscale: np.ndarray | None = None
    c_weights: np.ndarray | None = None
    c_anchor: np.ndarray | None = None
    c_shift: np.ndarray | None = None

    def kernel_effort_kwargs(self) -> dict:
        """Keyword arguments of :class:`~fmu_surrogate.ph.efforts.kernel.KernelEffort` (model units)."""
        off = self.mean_z.copy()
        off[self.d_idx] = 0.0  # carried by h_linear
        kw = {
            "X": self.X,
            "weights": self.effort_weights,
            "lengthscale": self.lengthscale,
            "offset": off,
            "differential": self.d_idx,
            "h_weights": self.h_weights,
            "h_lengthscale": self.h_lengthscale,
            "effort_map": self.M,
            "h_linear": self.h_linear,
        }
        if self.c_weights is not None:
            kw.update(
                c_weights=self.c_weights,
                c_lengthscale=self.c_lengthscale,
                c_anchor=self.c_anchor,
                c_shift=self.c_shift,
            )
        return kw

    def effort_mean(self, Xs: np.ndarray) -> np.ndarray:
        """Posterior mean of ``z`` at (M, n) points (through the kernel expansion)."""
        from fmu_surrogate.ph.efforts.kernel import KernelEffort

        return KernelEffort(**self.kernel_effort_kwargs())(Xs)

    def target_mean(self, Xs: np.ndarray) -> np.ndarray:
        """Posterior mean of ``f = T z``."""
        return self.effort_mean(Xs) @ self.T.T

    def _cov(self, Xs: np.ndarray, Lmap: np.ndarray | None, full: bool) -> np.ndarray:
        m = self.model
        dt = m.T.dtype
        if not full:
            return np.stack([self._cov(Xs[i : i + 1], Lmap, True) for i in range(len(Xs))])
        with torch.no_grad():
            Xs_t = torch.as_tensor(Xs, dtype=dt)
            X_t = torch.as_tensor(self.X, dtype=dt)
            Lt = None if Lmap is None else torch.as_tensor(Lmap, dtype=dt)
            Mq, N = Xs.shape[0], self.X.shape[0]
            cross = m.effort_cov_blocks(Xs_t, X_t, Lt, m.T)  # (M, N, p, D)
            p = cross.shape[2]
            cross = cross.permute(0, 2, 1, 3).reshape(Mq * p, N * m.D).numpy()
            prior = (
                m.effort_cov_blocks(Xs_t, Xs_t, Lt, Lt)
                .permute(0, 2, 1, 3)
                .reshape(Mq * p, Mq * p)
                .numpy()
            )
        G = scipy.linalg.solve_triangular(self.L, cross.T, lower=True)
        C = prior - G.T @ G
        return 0.5 * (C + C.T)

    def effort_cov(self, Xs: np.ndarray, full: bool = False) -> np.ndarray:
        """Posterior covariance of ``z``: (M, n, n) per point or (M n, M n) point-major."""
        return self._cov(Xs, None, full)

    def target_cov(self, Xs: np.ndarray, full: bool = False) -> np.ndarray:
        """Posterior covariance of ``f = T z`` (noise-free), like :meth:`effort_cov`."""
        return self._cov(Xs, self.T, full)
