"""Integral (interval) form of a second-order law, consistent with a zero-order-hold input.

A co-simulated FMU holds its input over each communication step, so along a sampled trajectory
the acceleration ``ÿ`` jumps at every sample (by ``Δu / m``).  A derivative estimate of ``ÿ``
(finite differences, splines) spans these jumps and mixes ``u_{k-1}`` with ``u_k``: under a
white-noise force the central difference halves the coefficient of ``u`` (``m`` twice too large)
and biases every other coefficient by tens of per cent; under a smooth (band-limited) force held
over 20 ms it still biases ``c`` by 1-10 % (docs/design.md §5).

Instead of differentiating, the law ``ÿ = Σⱼ θⱼ φⱼ(y, ẏ, u)`` is averaged over each sample
interval ``[t_k, t_{k+1}]``::

    (ẏ_{k+1} − ẏ_k) / h_k = Σⱼ θⱼ (1/h_k) ∫ φⱼ(y(t), ẏ(t), u_k) dt

The left side is exact (no derivative is estimated).  On the right the held columns (the inputs)
are constant, ``u = u_k``; the position and the velocity are the cubic Hermite interpolant of
``(y_k, ẏ_k, y_{k+1}, ẏ_{k+1})`` and its derivative, which uses only samples of the interval
itself (no smoothness across the input jumps is assumed; error ``O(h⁴)`` in ``y``), and the
integral is a Gauss-Legendre rule on that interpolant.  The column ``ẏ`` then averages to
``(y_{k+1} − y_k) / h_k`` exactly.

Meant for simulator data (noise-free samples of ``y``, ``ẏ``, ``u``) that do not record ``ÿ``.
With measurement noise the differences ``Δẏ / h`` and ``Δy / h`` amplify it by ``√2 / h``, and
noise in a regressor attenuates its coefficient (errors in variables): with 1 % noise on ``y``
and ``ẏ`` at 50-100 Hz ``c`` comes out 1.5-30 % low, so noisy data that record ``ÿ`` are better
regressed sample by sample (docs/design.md §5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from fmu_surrogate.identify.laws.library import LibraryError

__all__ = ["interval_form"]


def _hermite(y0, v0, y1, v1, h, s):
    """Cubic Hermite interpolant on ``[t_k, t_k + h]`` at ``s = (t − t_k) / h``: value, slope."""
    value = ((2 * s**3 - 3 * s**2 + 1) * y0 + (s**3 - 2 * s**2 + s) * h * v0
             + (3 * s**2 - 2 * s**3) * y1 + (s**3 - s**2) * h * v1)
    slope = ((6 * s**2 - 6 * s) * (y0 - y1) / h + (3 * s**2 - 4 * s + 1) * v0
             + (3 * s**2 - 2 * s) * v1)
    return value, slope


def interval_form(t: ArrayLike, X: ArrayLike, columns: Sequence[str], *, position: str,
                  velocity: str, transform: Callable[[np.ndarray], np.ndarray] | None = None,
                  n_nodes: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Interval means of candidate terms and of the acceleration of a sampled trajectory.

    Parameters
    ----------
    t : array_like, shape (N,)
        Strictly increasing sample times, ``N >= 2``.
    X : array_like, shape (N, len(columns))
        Samples of the named columns at ``t``.
    columns : sequence of str
        Column names.  ``position`` and ``velocity`` are states (``d position / dt = velocity``);
        every other column is taken as held over each interval at its left sample (a
        zero-order-hold input).
    position, velocity : str
        Names of the position ``y`` and the velocity ``ẏ`` among ``columns``.
    transform : callable, optional
        Maps an ``(M, len(columns))`` array to the ``(M, K)`` candidate terms, e.g.
        :meth:`CandidateLibrary.transform <fmu_surrogate.identify.laws.library.CandidateLibrary.transform>`;
        default: the columns themselves (e.g. interval-mean inputs of a discrepancy GP).
    n_nodes : int
        Gauss-Legendre nodes per interval (3 integrates polynomials of degree 5 in ``t`` exactly).

    Returns
    -------
    Phi : ndarray, shape (N - 1, K)
        ``(1/h_k) ∫ φⱼ dt`` over ``[t_k, t_{k+1}]``.
    target : ndarray, shape (N - 1,)
        ``(ẏ_{k+1} − ẏ_k) / h_k``, the exact interval mean of ``ÿ``.

    Raises
    ------
    LibraryError
        On mis-shaped or non-finite input, unknown ``position``/``velocity``, times not strictly
        increasing, or ``n_nodes < 1``.
    """
    tt = np.asarray(t, dtype=float)
    XX = np.asarray(X, dtype=float)
    cols = list(columns)
    if tt.ndim != 1 or tt.size < 2 or XX.shape != (tt.size, len(cols)):
        raise LibraryError(f"t must have shape (N,) with N >= 2 and X shape (N, {len(cols)}) for "
                           f"columns {cols}; got {tt.shape} and {XX.shape}.")
    if not (np.all(np.isfinite(tt)) and np.all(np.isfinite(XX))):
        raise LibraryError("t and X must be finite; drop the samples with NaN or inf first.")
    h = np.diff(tt)
    if np.any(h <= 0):
        raise LibraryError("t must be strictly increasing; sort the samples and drop duplicates.")
    for name in (position, velocity):
        if name not in cols:
            raise LibraryError(f"{name!r} is not among the columns {cols}; name the position and "
                               f"velocity columns.")
    if int(n_nodes) < 1:
        raise LibraryError(f"n_nodes must be >= 1, got {n_nodes!r}.")
    ip, iv = cols.index(position), cols.index(velocity)
    nodes, weights = np.polynomial.legendre.leggauss(int(n_nodes))
    y0, v0, y1, v1 = XX[:-1, ip], XX[:-1, iv], XX[1:, ip], XX[1:, iv]
    f = transform if transform is not None else (lambda A: A)
    Phi = 0.0
    for s, w in zip(0.5 * (nodes + 1), 0.5 * weights):
        Xs = XX[:-1].copy()                     # held columns: left sample
        Xs[:, ip], Xs[:, iv] = _hermite(y0, v0, y1, v1, h, s)
        Phi = Phi + w * np.asarray(f(Xs), dtype=float).reshape(len(h), -1)
    return np.asarray(Phi), (v1 - v0) / h
