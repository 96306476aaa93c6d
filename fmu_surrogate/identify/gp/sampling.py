"""Training subsets that spread over the data (farthest-point sampling).

A GP's error is largest where its training points are sparse; subsets equally spaced in *time*
leave fast transients almost empty (the RC network's first 0.3 s, where ``x1`` falls from 2 to
1.75, hold one of 64 time-uniform samples).  Farthest-point sampling picks each next sample as
far as possible (Euclidean, in standardised features) from those already chosen, so the subset
covers the range of the features evenly — the features being what the fit should see spread
out, e.g. the differential states and their rates.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError

__all__ = ["farthest_point_subset"]


def farthest_point_subset(features: ArrayLike, n: int, start: int = 0) -> NDArray[np.int64]:
    """Indices of ``n`` rows of ``features`` chosen by farthest-point sampling.

    Parameters
    ----------
    features : array_like, shape (M, p) or (M,)
        One row per sample; each column is standardised (constant columns are ignored).
    n : int
        Subset size, ``1 ≤ n ≤ M``.
    start : int
        The first index (e.g. the initial state of a trajectory).

    Returns
    -------
    ndarray of int, shape (n,)
        Sorted distinct indices (fewer if the features have fewer than ``n`` distinct rows).

    Raises
    ------
    ValueError
        ``n`` outside ``[1, M]``, ``start`` outside ``[0, M)`` or non-finite features.

    Examples
    --------
    >>> farthest_point_subset([0.0, 0.1, 0.2, 5.0, 10.0], 3).tolist()
    [0, 3, 4]
    """
    F = np.asarray(features, dtype=float)
    F = F[:, None] if F.ndim == 1 else F
    M = F.shape[0]
    if not 1 <= int(n) <= M:
        raise InvalidInputError(f"n must be in [1, {M}] (the number of samples), got {n}.")
    if not 0 <= int(start) < M:
        raise InvalidInputError(f"start must be a sample index in [0, {M}), got {start}.")
    if not np.all(np.isfinite(F)):
        raise InvalidInputError("features contain NaN or Inf; drop those samples first.")
    sd = F.std(axis=0)
    Z = (F[:, sd > 0] - F[:, sd > 0].mean(axis=0)) / sd[sd > 0]
    sel = [int(start)]
    dist = np.linalg.norm(Z - Z[start], axis=1)
    for _ in range(int(n) - 1):
        k = int(np.argmax(dist))
        if dist[k] == 0.0:  # every remaining row duplicates a chosen one
            break
        sel.append(k)
        dist = np.minimum(dist, np.linalg.norm(Z - Z[k], axis=1))
    return np.sort(np.asarray(sel, dtype=np.int64))
