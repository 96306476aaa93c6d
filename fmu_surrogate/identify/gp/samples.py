"""Training samples of the GP effort identification: targets ``y = E ẋ − B u``, checked arrays,
and the pooled samples of a harvested dataset.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError

Array = NDArray[np.float64]

__all__ = ["check_samples", "dataset_samples", "effort_targets"]


def effort_targets(E: ArrayLike, B: ArrayLike, xdot: ArrayLike, u: ArrayLike) -> Array:
    """Targets ``y = E ẋ − B u``; ``(N, n), (N, m) -> (N, n)`` (no validation)."""
    E = np.asarray(E, dtype=float)
    B = np.asarray(B, dtype=float)
    B = B[:, None] if B.ndim == 1 else B
    u = np.asarray(u, dtype=float)
    u = u.reshape(len(u), -1)
    return np.asarray(xdot, dtype=float) @ E.T - u @ B.T


def check_samples(
    x: ArrayLike, xdot: ArrayLike, u: ArrayLike, E: Array, B: Array
) -> tuple[Array, Array]:
    """Validate samples against the structure and return ``x`` (N, n) and the targets (N, n).

    Parameters
    ----------
    x, xdot : array_like, shape (N, n) (or (N,) for one state)
        States and their derivatives.
    u : array_like, shape (N, m) or (N,)
        Inputs.
    E, B : ndarray, shape (n, n) and (n, m)
        Validated descriptor and port matrices.

    Returns
    -------
    x : ndarray, shape (N, n)
    y : ndarray, shape (N, n)
        ``E ẋ − B u``.

    Raises
    ------
    ValueError
        Shapes that do not match the structure, non-finite entries or fewer than 2 samples.
    """
    n, m = E.shape[0], B.shape[1]
    x = np.asarray(x, dtype=float)
    xdot = np.asarray(xdot, dtype=float)
    u = np.asarray(u, dtype=float)
    if x.ndim == 1 and n == 1:
        x = x[:, None]
    if xdot.ndim == 1 and n == 1:
        xdot = xdot[:, None]
    if u.ndim == 1:
        u = u[:, None]
    if x.ndim != 2 or x.shape[1] != n:
        raise InvalidInputError(
            f"x must have shape (N, {n}) (one row per sample, one column per state), got {x.shape}."
        )
    N = x.shape[0]
    if xdot.shape != (N, n):
        raise InvalidInputError(f"xdot must have the shape of x, ({N}, {n}), got {xdot.shape}.")
    if u.ndim != 2 or u.shape != (N, m):
        raise InvalidInputError(
            f"u must have shape ({N}, {m}) (or ({N},) for one port) to match x and B, got {u.shape}."
        )
    for name, a in (("x", x), ("xdot", xdot), ("u", u)):
        bad = ~np.isfinite(a)
        if bad.any():
            rows = np.unique(np.nonzero(bad)[0])
            raise InvalidInputError(
                f"{name} contains {bad.sum()} NaN/Inf entries (rows {rows[:5].tolist()}"
                f"{'…' if rows.size > 5 else ''}); drop those samples or fill them before fitting."
            )
    if N < 2:
        raise InvalidInputError(
            f"need at least 2 samples to learn the kernel hyperparameters, got N = {N}; "
            f"pass more time points."
        )
    return x, effort_targets(E, B, xdot, u)


def dataset_samples(
    ds: Any,
    E: ArrayLike | None,
    *,
    states: Sequence[str],
    derivatives: Sequence[str | None],
    inputs: Sequence[str],
    runs: Sequence[int] | None = None,
) -> tuple[Array, Array, Array]:
    """``x``, ``ẋ`` and ``u`` pooled over the selected runs of a harvested dataset.

    Parameters
    ----------
    ds : xarray.Dataset
        Harvested dataset (:mod:`fmu_surrogate.fmu.dataset`).
    E : array_like, shape (n, n), optional
        Descriptor matrix (default: the identity); a state whose column of ``E`` is nonzero
        needs its derivative.
    states, derivatives, inputs : sequence of str
        Variable names of ``x``, of ``ẋ`` (``None`` for an algebraic state whose derivative the
        FMU does not expose; its column of ``ẋ`` is zero) and of ``u``.
    runs : sequence of int, optional
        Run labels; default all successful runs.

    Returns
    -------
    x, xdot : ndarray, shape (N, n)
    u : ndarray, shape (N, m)
    """
    from fmu_surrogate.fmu.dataset import run_arrays  # lazy: identify reads datasets only here

    states, derivatives, inputs = list(states), list(derivatives), list(inputs)
    if len(states) != len(derivatives):
        raise InvalidInputError(
            f"need one derivative name per state, got {len(states)} states and "
            f"{len(derivatives)} derivatives (estimate missing derivatives with "
            f"fmu_surrogate.identify.derivatives and pass arrays to fit())."
        )
    ns = len(states)
    E = np.eye(ns) if E is None else np.asarray(E, dtype=float)
    have = [j for j, nm in enumerate(derivatives) if nm is not None]
    for j, nm in enumerate(derivatives):
        if nm is None and E.shape == (ns, ns) and np.any(E[:, j] != 0):
            raise InvalidInputError(
                f"derivative of state {states[j]!r} is None, but column {j} of E is nonzero "
                f"(a differential state); pass its derivative variable."
            )
    names = states + [derivatives[j] for j in have] + inputs
    arrays = run_arrays(ds, names, runs=runs)
    if not arrays:
        raise InvalidInputError(
            "no successful runs selected; check `runs` and the dataset's run status."
        )
    A = np.concatenate([X for _, X in arrays])
    xdot = np.zeros((A.shape[0], ns))
    xdot[:, have] = A[:, ns : ns + len(have)]
    return A[:, :ns], xdot, A[:, ns + len(have) :]
