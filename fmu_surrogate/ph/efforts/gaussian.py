"""The Gaussian (squared-exponential) kernel in numpy: the one home of its formula for every layer
(the kernel-expansion effort of ``ph``, the GPs and the derivative estimates of ``identify``; the
torch GPs use its twin in :mod:`fmu_surrogate.identify.gp.kernels`)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

__all__ = ["gaussian_kernel", "squared_distances"]


def squared_distances(X1: Array, X2: Array) -> Array:
    """Squared Euclidean distances ``Σⱼ (x1ⱼ − x2ⱼ)²``; ``(M, n), (N, n) -> (M, N)``.

    One column: the differences squared, exactly; several: ``|a|² + |b|² − 2 a·b`` (one matrix
    product), clipped at 0 against round-off.

    Parameters
    ----------
    X1, X2 : ndarray, shape (M, n) and (N, n)
        Points.

    Returns
    -------
    ndarray, shape (M, N)
    """
    if X1.shape[1] == 1:
        return (X1[:, :1] - X2[:, 0][None, :]) ** 2
    sq = (X1 * X1).sum(-1)[:, None] + (X2 * X2).sum(-1)[None, :] - 2.0 * (X1 @ X2.T)
    return np.maximum(sq, 0.0)


def gaussian_kernel(X1: Array, X2: Array, lengthscale: Array | float) -> Array:
    """The Gaussian (RBF) kernel matrix ``exp(−½ Σⱼ (x1ⱼ − x2ⱼ)² / ℓⱼ²)``, with unit variance.

    The package's one numpy evaluation of this kernel (``identify`` uses it too; the torch twin
    for autograd is ``fmu_surrogate.identify.gp.kernels.rbf``, the same formula; for one input
    column this one takes the differences exactly, see :func:`squared_distances`).

    Parameters
    ----------
    X1, X2 : ndarray, shape (M, n) and (N, n)
        Inputs.
    lengthscale : ndarray, shape (n,) or (1,), or float
        One length scale per input dimension, or one shared.

    Returns
    -------
    ndarray, shape (M, N)
    """
    return np.exp(-0.5 * squared_distances(X1 / lengthscale, X2 / lengthscale))
