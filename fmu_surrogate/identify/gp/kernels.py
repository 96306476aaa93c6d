"""The Gaussian (RBF) kernel in torch, for the GPs fitted by autograd.

``k(x, x') = exp(−½ Σ_j (x_j − x'_j)² / ℓ_j²)``.  Its numpy twin, for everything evaluated outside
autograd (surrogate efforts, the GP-RVM discrepancy, derivative smoothing), is
:func:`fmu_surrogate.ph.efforts.kernel.gaussian_kernel`: the same formula (which, for one input
column, takes the differences exactly).
"""

from __future__ import annotations

import torch

__all__ = ["rbf"]


def rbf(X1: torch.Tensor, X2: torch.Tensor, lengthscale: torch.Tensor) -> torch.Tensor:
    """Gaussian kernel matrix ``exp(−½ Σ_j (x_j − x'_j)² / ℓ_j²)``; ``(N1, n), (N2, n) -> (N1, N2)``.

    Parameters
    ----------
    X1, X2 : torch.Tensor, shape (N1, n) and (N2, n)
        Inputs.
    lengthscale : torch.Tensor, shape (n,) or (1,)
        One length scale per input (ARD) or one shared.

    Returns
    -------
    torch.Tensor, shape (N1, N2)
    """
    A = X1 / lengthscale
    Bm = X2 / lengthscale
    sq = (A * A).sum(-1)[:, None] + (Bm * Bm).sum(-1)[None, :] - 2.0 * (A @ Bm.T)
    return torch.exp(-0.5 * sq.clamp_min(0.0))
