"""Plots of constraint discovery: feasible/infeasible points with the learned boundary, progress."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["plot_feasibility", "plot_progress"]


def plot_feasibility(model: Any, W: Any, y: Any, *, names: Sequence[str] | None = None,
                     dims: Sequence[int] | None = None, normalize: int | None = None,
                     title: str = "", path: str | Path | None = None) -> Any:
    """Feasible (o) and infeasible (x) points with the learned separating surface ``q = 0.5``.

    Three parameters with a linear model: a 3-D scatter with the separating plane.  Otherwise a
    2-D slice through the mean of the feasible points over ``dims`` with the contours of ``q``.

    Parameters
    ----------
    model : FeasibilityModel
        The trained model ``q``.
    W : array_like, shape (n, p)
        Evaluated parameter vectors.
    y : array_like, shape (n,)
        Labels (1 = feasible).
    names : sequence of str, optional
        Parameter names for the axes.
    dims : sequence of int, optional
        Two (slice) or three (3-D) parameter indices; default all when ``p <= 3``, else 0, 1.
    normalize : int, optional
        Divide the points by this coordinate first (for the 2-D slice of a scale-invariant law;
        the model is evaluated at the un-normalised points of the slice, with that coordinate 1).
    title : str
        Figure title.
    path : path, optional
        Save the figure here (PNG) and close it.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from fmu_surrogate.figures import finish, pyplot

    plt = pyplot()
    W = np.atleast_2d(np.asarray(W, dtype=float))
    y = np.asarray(y).astype(bool)
    p = W.shape[1]
    names = list(names) if names is not None else [f"w{i + 1}" for i in range(p)]
    dims = list(dims) if dims is not None else (list(range(p)) if p <= 3 else [0, 1])
    linear = hasattr(model, "decision_boundary") and getattr(model, "separable_", False)
    beta = None
    if linear:
        try:
            beta, b = model.decision_boundary()
        except Exception:  # noqa: BLE001 - a non-linear model: use the slice
            beta = None
    if len(dims) == 3 and beta is not None and normalize is None:
        fig = plt.figure(figsize=(7, 6))
        ax = fig.add_subplot(projection="3d")
        i, j, k = dims
        ax.scatter(W[y, i], W[y, j], W[y, k], c="tab:green", marker="o", s=14, label="feasible")
        ax.scatter(W[~y, i], W[~y, j], W[~y, k], c="tab:red", marker="x", s=18,
                   label="infeasible")
        # the plane βᵀw + b = 0 solved for the coordinate with the largest |β|
        order = sorted(dims, key=lambda d: abs(beta[d]))
        a1, a2, s = order
        g1 = np.linspace(W[:, a1].min(), W[:, a1].max(), 20)
        g2 = np.linspace(W[:, a2].min(), W[:, a2].max(), 20)
        G1, G2 = np.meshgrid(g1, g2)
        rest = b + sum(beta[d] * W[:, d].mean() for d in range(p) if d not in dims)
        S = -(beta[a1] * G1 + beta[a2] * G2 + rest) / beta[s]
        grid = {a1: G1, a2: G2, s: S}
        ax.plot_surface(grid[i], grid[j], grid[k], alpha=0.3, color="tab:blue")
        ax.set_xlabel(names[i])
        ax.set_ylabel(names[j])
        ax.set_zlabel(names[k])
        ax.legend(loc="upper left")
    else:
        i, j = dims[:2]
        fig, ax = plt.subplots(figsize=(6.5, 5))
        P = W / W[:, normalize:normalize + 1] if normalize is not None else W
        centre = P[y].mean(axis=0) if y.any() else P.mean(axis=0)
        span_i = np.ptp(P[:, i]) or 1.0
        span_j = np.ptp(P[:, j]) or 1.0
        gi = np.linspace(P[:, i].min() - 0.05 * span_i, P[:, i].max() + 0.05 * span_i, 120)
        gj = np.linspace(P[:, j].min() - 0.05 * span_j, P[:, j].max() + 0.05 * span_j, 120)
        GI, GJ = np.meshgrid(gi, gj)
        Q = np.tile(centre, (GI.size, 1))
        Q[:, i], Q[:, j] = GI.ravel(), GJ.ravel()
        q = model.predict_proba(Q).reshape(GI.shape)
        cs = ax.contourf(GI, GJ, q, levels=np.linspace(0, 1, 11), cmap="RdYlGn", alpha=0.5)
        ax.contour(GI, GJ, q, levels=[0.5], colors="k", linewidths=1.5)
        fig.colorbar(cs, ax=ax, label="q(w): probability of feasibility")
        ax.scatter(P[y, i], P[y, j], c="tab:green", marker="o", s=14, label="feasible")
        ax.scatter(P[~y, i], P[~y, j], c="tab:red", marker="x", s=18, label="infeasible")
        suffix = f" / {names[normalize]}" if normalize is not None else ""
        ax.set_xlabel(names[i] + suffix)
        ax.set_ylabel(names[j] + suffix)
        ax.legend(loc="best")
    ax.set_title(title or f"feasibility ({type(model).__name__}), q = 0.5 surface")
    return finish(fig, path)


def plot_progress(results: dict[str, Any], *, target: float | None = None,
                  path: str | Path | None = None) -> Any:
    """Best feasible cost against FMU runs for several searches.

    Parameters
    ----------
    results : dict of str to DiscoveryResult
        Label -> result.
    target : float, optional
        A horizontal reference line (e.g. the paper's accuracy).
    path : path, optional
        Save the figure here (PNG) and close it.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from fmu_surrogate.figures import finish, pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    styles = ("-", "--", ":", "-.")
    for k, (label, r) in enumerate(results.items()):
        best = r.history["best_cost"]
        ax.semilogy(np.arange(1, best.size + 1), best, ls=styles[(k // 10) % 4],
                    label=f"{label} ({r.n_failed} failed)")
    if target is not None:
        ax.axhline(target, color="k", ls="--", lw=1, label="target")
    ax.set_xlabel("FMU runs (distinct parameter vectors)")
    ax.set_ylabel("best feasible J(w)")
    ax.legend(fontsize=8)
    return finish(fig, path)
