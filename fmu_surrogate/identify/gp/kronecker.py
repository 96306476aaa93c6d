"""Kronecker-structured multi-task GP with a linearly transformed task covariance.

Model (docs/design.md §3, paper eq. 7).  A latent vector field ``z : Rⁿ → Rⁿ`` has the separable prior

    z ~ GP(c, k(x, x') K_T),     k(x, x') = exp(−½ Σ_j (x_j − x'_j)² / ℓ_j²),
    K_T = F Fᵀ + diag(d)         (low rank + diagonal, as GPyTorch's IndexKernel),

and the observed targets are ``y_i = T z(x_i) + ε_i`` with a constant ``T`` (``D × n``) and
Gaussian noise ``ε_i ~ N(0, diag(s))`` (one variance per task, or one shared).  Stacking the
``N × D`` target matrix ``Y`` point-major (``vec_r(Y)[i·D + a] = Y[i, a]``) gives

    Cov(vec_r Y) = C = K_x ⊗ B + I_N ⊗ S,     K_x = k(X, X),  B = T K_T Tᵀ,  S = diag(s).

**Kronecker algebra.**  Whitening by ``S^{-1/2}`` gives
``C = (I ⊗ S^{½}) (K_x ⊗ B̃ + I) (I ⊗ S^{½})`` with ``B̃ = S^{-½} B S^{-½}``.  With
``K_x = U Λ Uᵀ`` (N × N) and ``B̃ = V M Vᵀ`` (D × D) the middle factor is
``(U ⊗ V)(Λ ⊗ M + I)(U ⊗ V)ᵀ``, so with ``Dᵢₐ = λᵢ μₐ + 1``

    log det C  = N Σₐ log sₐ + Σᵢₐ log Dᵢₐ
    C⁻¹ vec Y  = vec_r(A),   A = U [(Uᵀ Y S^{-½} V) ⊘ D] Vᵀ S^{-½}

in O(N³ + D³ + N²D) instead of O((ND)³).  The negative eigenvalues that round-off produces in
the (numerically low-rank) Gaussian kernel matrix are clamped to 0, so ``Dᵢₐ ≥ 1`` and every
quantity is well defined as long as ``s > 0`` — which the noise floor of the model guarantees.
This also makes singular ``T`` (``B`` singular) and identically-zero target components harmless:
``B`` only ever enters through ``B̃``'s eigenvalues ``μₐ ≥ 0``.

**Gradient without eigenvector derivatives.**  ``log p`` depends on ``(K_x, B, s, Y)`` only, and

    ∂ log p/∂K_x = ½ (A B Aᵀ − U diag(w) Uᵀ),         wᵢ = Σₐ μₐ / Dᵢₐ
    ∂ log p/∂B   = ½ (Aᵀ K_x A − S^{-½} V diag(v) Vᵀ S^{-½}),   vₐ = Σᵢ λᵢ / Dᵢₐ
    ∂ log p/∂sₐ  = ½ (Σᵢ Aᵢₐ² − Σ_b V_ab² u_b / sₐ),   u_b = Σᵢ 1 / Dᵢ_b
    ∂ log p/∂Y   = −A

(from ``d log p = ½ αᵀ dC α − ½ tr(C⁻¹ dC)``).  :class:`KroneckerMLL` implements these as a
custom autograd function, so the backward pass never differentiates ``eigh`` — no
``1/(λᵢ − λⱼ)`` terms, hence no trouble with the clustered near-zero eigenvalues of Gaussian
kernel matrices — and costs one extra ``N³`` product.  Autograd carries the gradients on to the
hyperparameters through ``K_x(ℓ)`` and ``B(F, d)``.

**Cost, measured** (one thread, float64, CPU time per Adam step = likelihood + gradient):
N = 1024: 0.24–0.27 s for D = 3 and D = 5 (≈ 75 % of it is the ``syevd`` eigendecomposition of
``K_x``; the backward adds one ``dsyrk``), i.e. ≈ 50 s for 200 steps; N = 512: 0.04 s;
N = 2048: 1.7–2.0 s.  The same step through the dense ``(ND) × (ND)`` Cholesky with autograd
takes ≈ 24 s at N = 1024, D = 5.  Predictions (mean: ``k(X*, X) W``; covariance: one product
with ``U``) cost O(M N n) and O(M N²).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.linalg.blas
import torch

from fmu_surrogate.identify.gp.kernels import rbf
from fmu_surrogate.ph.efforts.gaussian import gaussian_kernel

__all__ = [
    "KroneckerEig",
    "KroneckerMLL",
    "TransformedMultitaskGP",
    "kron_eig",
    "kron_mll",
]


# ---------------------------------------------------------------------------------------------
# eigen-structure of C = K ⊗ B + I ⊗ diag(s)
# ---------------------------------------------------------------------------------------------
def _eigh(M: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric eigendecomposition.  float64 goes through LAPACK ``syevd`` via SciPy, which on
    this machine is ~25 % faster than ``torch.linalg.eigh`` at N = 1024; other dtypes use torch."""
    if M.dtype == torch.float64 and M.device.type == "cpu":
        lam, U = scipy.linalg.eigh(
            M.detach().numpy(), driver="evd", check_finite=False, overwrite_a=False
        )
        return torch.from_numpy(lam), torch.from_numpy(U)
    return torch.linalg.eigh(M)


def _gram(M: torch.Tensor) -> torch.Tensor:
    """``M Mᵀ`` (symmetric).  float64 uses BLAS ``dsyrk`` (half the flops of a matmul)."""
    if M.dtype == torch.float64 and M.device.type == "cpu":
        a = np.asfortranarray(M.numpy())
        C = scipy.linalg.blas.dsyrk(1.0, a)  # upper triangle
        C = C + np.triu(C, 1).T
        return torch.from_numpy(np.ascontiguousarray(C))
    return M @ M.T


@dataclass
class KroneckerEig:
    """Eigen-structure of ``C = K ⊗ B + I ⊗ diag(s)`` (all tensors, no autograd graph).

    Attributes
    ----------
    lam_x, U : (N,), (N, N)
        Eigenpairs of ``K`` (eigenvalues clamped at 0).
    lam_t, V : (D,), (D, D)
        Eigenpairs of the whitened task matrix ``S^{-½} B S^{-½}`` (clamped at 0).
    s : (D,)
        Noise variances.
    """

    lam_x: torch.Tensor
    U: torch.Tensor
    lam_t: torch.Tensor
    V: torch.Tensor
    s: torch.Tensor

    @property
    def denom(self) -> torch.Tensor:
        """``D = λ μᵀ + 1``, shape (N, D)."""
        return self.lam_x[:, None] * self.lam_t[None, :] + 1.0

    def solve(self, Y: torch.Tensor) -> torch.Tensor:
        """``A`` with ``vec_r(A) = C⁻¹ vec_r(Y)``; ``Y`` and ``A`` are (N, D)."""
        rs = self.s.rsqrt()
        P = self.U.T @ (Y * rs) @ self.V
        return (self.U @ (P / self.denom) @ self.V.T) * rs

    def logdet(self) -> torch.Tensor:
        """``log det C``."""
        return self.U.shape[0] * torch.log(self.s).sum() + torch.log(self.denom).sum()


def kron_eig(K: torch.Tensor, B: torch.Tensor, s: torch.Tensor) -> KroneckerEig:
    """Eigen-structure of ``K ⊗ B + I ⊗ diag(s)`` (see module docstring)."""
    with torch.no_grad():
        lam_x, U = _eigh(K)
        rs = s.rsqrt()
        Bw = B * rs[:, None] * rs[None, :]
        lam_t, V = torch.linalg.eigh(0.5 * (Bw + Bw.T))
        return KroneckerEig(lam_x.clamp_min(0.0), U, lam_t.clamp_min(0.0), V, s.detach().clone())


class KroneckerMLL(torch.autograd.Function):
    """``log N(vec_r Y | 0, K ⊗ B + I ⊗ diag(s))`` with the analytic backward of the module doc.

    Inputs: ``K`` (N, N) symmetric PSD, ``B`` (D, D) symmetric PSD, ``s`` (D,) positive,
    ``Y`` (N, D).  Output: scalar log marginal likelihood.
    """

    @staticmethod
    def forward(ctx, K, B, s, Y):
        eig = kron_eig(K, B, s)
        N, D = Y.shape
        rs = s.rsqrt()
        den = eig.denom
        P = eig.U.T @ (Y * rs) @ eig.V
        Q = P / den
        quad = (P * Q).sum()
        logdet = N * torch.log(s).sum() + torch.log(den).sum()
        mll = -0.5 * quad - 0.5 * logdet - 0.5 * N * D * math.log(2.0 * math.pi)
        ctx.save_for_backward(eig.lam_x, eig.U, eig.lam_t, eig.V, s, Q)
        return mll

    @staticmethod
    def backward(ctx, g):
        lam_x, U, lam_t, V, s, Q = ctx.saved_tensors
        rs = s.rsqrt()
        den = lam_x[:, None] * lam_t[None, :] + 1.0
        gK = gB = gs = gY = None
        UQ = U @ Q  # (N, D); A = UQ Vᵀ S^{-½}
        if ctx.needs_input_grad[0]:
            # A B Aᵀ = UQ diag(μ) (UQ)ᵀ (B = S^{½} V diag(μ) Vᵀ S^{½}); consistent with clamping
            w = (lam_t[None, :] / den).sum(1)
            gK = 0.5 * g * ((UQ * lam_t) @ UQ.T - _gram(U * w.sqrt()))
        if ctx.needs_input_grad[1]:
            # Aᵀ K A = S^{-½} V Qᵀ diag(λ) Q Vᵀ S^{-½}
            v = (lam_x[:, None] / den).sum(0)
            inner = (Q.T * lam_x) @ Q - torch.diag(v)
            Wv = V @ inner @ V.T
            gB = 0.5 * g * Wv * rs[:, None] * rs[None, :]
        if ctx.needs_input_grad[2] or ctx.needs_input_grad[3]:
            A = (UQ @ V.T) * rs
            if ctx.needs_input_grad[2]:
                u = (1.0 / den).sum(0)
                gs = 0.5 * g * ((A * A).sum(0) - (V * V) @ u / s)
            if ctx.needs_input_grad[3]:
                gY = -g * A
        return gK, gB, gs, gY


def kron_mll(K: torch.Tensor, B: torch.Tensor, s: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """Log marginal likelihood of ``vec_r Y ~ N(0, K ⊗ B + I ⊗ diag(s))`` (differentiable)."""
    return KroneckerMLL.apply(K, B, s, Y)


# ---------------------------------------------------------------------------------------------
# the model: hyperparameters of the transformed multi-task GP
# ---------------------------------------------------------------------------------------------
class TransformedMultitaskGP(torch.nn.Module):
    """Hyperparameters and likelihood of ``y = T z + ε``, ``z ~ GP(c, k K_T)`` (module doc).

    Works in whatever units its inputs are given; the estimator standardises before calling it.

    Parameters
    ----------
    T : array_like, shape (D, n)
        Constant output map (``J − R`` for the effort problem).
    n_features : int
        Input dimension.
    ard : bool
        One length scale per input dimension (True) or one shared (False).
    task_rank : int or None
        Rank of the low-rank factor ``F`` of ``K_T`` (None: ``n``, i.e. a general PD ``K_T``).
    noise : {"task", "shared"}
        One noise variance per target component, or one for all.
    mean : {"zero", "constant"}
        Prior mean ``c`` of ``z``: 0, or a learned constant vector (targets have mean ``T c``).
    noise_floor : float
        Lower bound added to every noise variance (keeps ``C`` positive definite).
    init_lengthscale : float or array_like (n,)
    init_task_scale : float
        Initial ``K_T ≈ init_task_scale · I``.
    init_noise : float
    seed : int
        Seed of the small random initial ``F`` (a zero ``F`` is a saddle of the likelihood).
    dtype : torch.dtype
    learned : array_like of bool, shape (n,), optional
        Components of ``z`` the GP models (default all); the others have zero prior variance
        and mean — rows and columns of ``K_T`` and entries of ``c`` are masked to zero (their
        values are known and were subtracted from the targets by the caller).
    """

    def __init__(
        self,
        T,
        n_features: int,
        *,
        ard: bool = True,
        task_rank: int | None = None,
        noise: str = "task",
        mean: str = "zero",
        noise_floor: float = 1e-10,
        init_lengthscale=1.0,
        init_task_scale: float = 1.0,
        init_noise: float = 1e-2,
        seed: int = 0,
        dtype: torch.dtype = torch.float64,
        learned=None,
    ) -> None:
        super().__init__()
        T = torch.as_tensor(np.asarray(T, dtype=float), dtype=dtype)
        D, n = T.shape
        self.register_buffer("T", T)
        mask = np.ones(n) if learned is None else np.asarray(learned, dtype=bool).astype(float)
        self.register_buffer("task_mask", torch.as_tensor(mask, dtype=dtype))
        self.noise_floor = float(noise_floor)
        r = n if task_rank is None else int(task_rank)
        gen = torch.Generator().manual_seed(int(seed))
        ls = torch.as_tensor(
            np.broadcast_to(np.asarray(init_lengthscale, float), (n if ard else 1,)).copy(),
            dtype=dtype,
        )
        self.raw_lengthscale = torch.nn.Parameter(torch.log(ls))
        self.task_factor = torch.nn.Parameter(
            math.sqrt(init_task_scale) * 0.1 * torch.randn(n, r, generator=gen, dtype=dtype)
        )
        self.raw_task_diag = torch.nn.Parameter(
            torch.full((n,), math.log(init_task_scale), dtype=dtype)
        )
        self.shared_noise = noise == "shared"
        self.raw_noise = torch.nn.Parameter(
            torch.full((1 if self.shared_noise else D,), math.log(init_noise), dtype=dtype)
        )
        if mean == "constant":
            self.mean_z = torch.nn.Parameter(torch.zeros(n, dtype=dtype))
        else:
            self.register_buffer("mean_z", torch.zeros(n, dtype=dtype))

    # -- hyperparameters -----------------------------------------------------------------------
    @property
    def n_tasks(self) -> int:
        """Number of target components D."""
        return self.T.shape[0]

    def lengthscale(self) -> torch.Tensor:
        """Length scale(s), shape (n,) or (1,)."""
        return torch.exp(self.raw_lengthscale)

    def prior_mean(self) -> torch.Tensor:
        """Prior mean ``c`` of ``z`` (``mean_z``, zero on components not learned), shape (n,)."""
        return self.mean_z * self.task_mask

    def task_covariance(self) -> torch.Tensor:
        """``K_T = F Fᵀ + diag(d)`` (masked to the learned components), shape (n, n)."""
        K = self.task_factor @ self.task_factor.T + torch.diag(torch.exp(self.raw_task_diag))
        return K * self.task_mask[:, None] * self.task_mask[None, :]

    def transformed_task_covariance(self) -> torch.Tensor:
        """``B = T K_T Tᵀ``, shape (D, D) (symmetrised)."""
        Bm = self.T @ self.task_covariance() @ self.T.T
        return 0.5 * (Bm + Bm.T)

    def noise(self) -> torch.Tensor:
        """Noise variances, shape (D,)."""
        s = self.noise_floor + torch.exp(self.raw_noise)
        return s.expand(self.n_tasks) if self.shared_noise else s

    # -- likelihood ----------------------------------------------------------------------------
    def mll(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        """Log marginal likelihood of (N, D) targets ``Y`` at (N, n) inputs ``X``."""
        K = rbf(X, X, self.lengthscale())
        return kron_mll(
            K, self.transformed_task_covariance(), self.noise(), Y - self.T @ self.prior_mean()
        )

    def posterior(self, X: torch.Tensor, Y: torch.Tensor) -> KroneckerPosterior:
        """Condition on the data at the current hyperparameters."""
        with torch.no_grad():
            ls = self.lengthscale()
            K = rbf(X, X, ls)
            Bm = self.transformed_task_covariance()
            s = self.noise()
            eig = kron_eig(K, Bm, s)
            A = eig.solve(Y - self.T @ self.prior_mean())
            return KroneckerPosterior(
                X=X.numpy().copy(),
                lengthscale=np.broadcast_to(ls.numpy(), (X.shape[1],)).copy(),
                T=self.T.numpy().copy(),
                K_T=self.task_covariance().numpy().copy(),
                mean_z=self.prior_mean().detach().numpy().copy(),
                noise=s.numpy().copy(),
                A=A.numpy(),
                lam_x=eig.lam_x.numpy(),
                U=eig.U.numpy(),
                lam_t=eig.lam_t.numpy(),
                V=eig.V.numpy(),
            )


@dataclass
class KroneckerPosterior:
    """Posterior of the transformed multi-task GP (NumPy, fixed hyperparameters).

    ``A`` (N, D) solves ``C vec_r(A) = vec_r(Y − T c)``; the rest is the eigen-structure of ``C``.
    ``T_target`` maps ``z`` to the targets reported by :meth:`target_mean` / :meth:`target_cov`
    (default ``T``; the effort fit observes ``[J − R; Bᵀ]`` with outputs and reports ``J − R``).
    """

    X: np.ndarray
    lengthscale: np.ndarray
    T: np.ndarray
    K_T: np.ndarray
    mean_z: np.ndarray
    noise: np.ndarray
    A: np.ndarray
    lam_x: np.ndarray
    U: np.ndarray
    lam_t: np.ndarray
    V: np.ndarray
    T_target: np.ndarray | None = None

    @property
    def effort_weights(self) -> np.ndarray:
        """``W = A T K_T`` (N, n): posterior mean ``z̄(x) = c + Σᵢ k(x, xᵢ) Wᵢ``."""
        return self.A @ self.T @ self.K_T

    def effort_mean(self, Xs: np.ndarray) -> np.ndarray:
        """``z̄(X*) = k(X*, X) ⊗ K_T Tᵀ · C⁻¹ (Y − T c) + c`` (direct conditioning), (M, n)."""
        return gaussian_kernel(Xs, self.X, self.lengthscale) @ self.effort_weights + self.mean_z

    def _reported(self) -> np.ndarray:
        return self.T if self.T_target is None else self.T_target

    def target_mean(self, Xs: np.ndarray) -> np.ndarray:
        """Posterior mean of the noise-free targets ``f = T z`` (``T_target``), (M, D)."""
        return self.effort_mean(Xs) @ self._reported().T

    def _cov(self, Xs: np.ndarray, prior_task: np.ndarray, cross_task: np.ndarray, full: bool):
        """Posterior covariance of ``g(x*) = L z(x*)`` with ``prior_task = L K_T Lᵀ`` and
        ``cross_task = L K_T Tᵀ``: per point (M, p, p) or full (M p, M p), point-major."""
        Ks = gaussian_kernel(Xs, self.X, self.lengthscale)  # (M, N)
        a = Ks @ self.U  # (M, N) = (Uᵀ k*)ᵀ
        den = self.lam_x[:, None] * self.lam_t[None, :] + 1.0  # (N, D)
        G = (cross_task / np.sqrt(self.noise)[None, :]) @ self.V  # (p, D)
        M, p = Xs.shape[0], prior_task.shape[0]
        if not full:
            c = (a * a) @ (1.0 / den)  # (M, D)
            corr = np.einsum("ma,ia,ja->mij", c, G, G)
            return prior_task[None] - corr  # k(x*, x*) = 1
        kss = gaussian_kernel(Xs, Xs, self.lengthscale)
        prior = np.kron(kss, prior_task)
        corr = np.zeros((M * p, M * p))
        for j in range(G.shape[1]):
            Aj = (a / den[:, j]) @ a.T  # (M, M)
            corr += np.kron(Aj, np.outer(G[:, j], G[:, j]))
        return prior - corr

    def effort_cov(self, Xs: np.ndarray, full: bool = False) -> np.ndarray:
        """Posterior covariance of ``z`` at ``X*``: (M, n, n) per point, or (M n, M n) if ``full``."""
        return self._cov(Xs, self.K_T, self.K_T @ self.T.T, full)

    def target_cov(self, Xs: np.ndarray, full: bool = False) -> np.ndarray:
        """Posterior covariance of ``f = T z`` at ``X*`` (noise-free), like :meth:`effort_cov`."""
        L = self._reported()
        return self._cov(Xs, L @ self.K_T @ L.T, L @ self.K_T @ self.T.T, full)
