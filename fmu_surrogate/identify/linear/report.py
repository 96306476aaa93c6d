"""Result of a linear pH fit: numbers (:class:`LinearPHFit`) and figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.fmu.dataset import relative_errors
from fmu_surrogate.identify.base import FitResult
from fmu_surrogate.ph import LinearPH

Array = NDArray[np.float64]


# --------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class LinearPHFit(FitResult):
    """Result of :meth:`LinearPHIdentifier.fit` (``n_iter``, ``stopping_reason``,
    ``cost_history`` and ``time`` as every estimator's result, and the following).

    Attributes
    ----------
    system : LinearPH
        The fitted system (validated pH structure).
    x0 : ndarray, shape (n,)
        Fitted (or fixed) initial state.
    cost_history : tuple of float
        Cost at the initial guess and after every iteration.
    stopping_reason : str
    gradient_norm : float
        Riemannian gradient norm at the returned point.
    cpu_time_s : float
        Processor time of the optimisation (``time.process_time``; less sensitive than
        ``time_s`` to other processes on a shared machine).
    iteration_time_s, iteration_cpu_time_s : tuple of float
        Wall / processor time since the start of the optimisation at the end of each iteration
        (for pymanopt's optimisers: at each new iterate whose gradient is evaluated) — for
        time-to-accuracy curves and timings of a window of iterations.
    mode : str
        ``"exact"`` or ``"euler"``.
    fitted : tuple of str
        Names of the fitted parameters.
    optimizer : str
    n_cost_evaluations, n_gradient_evaluations : int
        Forward solves for the cost alone and forward+adjoint solves for cost and gradient.
    init : str
        Initial model used: ``"subspace"``, ``"paper"``, or ``"paper (…)"`` with the reason the
        subspace initialisation did not apply.
    init_time_s : float
        Wall-clock seconds of the initial model (subspace identification and pH conversion).
    jacobian_singular_values : tuple of float
        Singular values of the weighted output Jacobian in tangent coordinates at the returned
        point (dense Levenberg–Marquardt only; empty otherwise).
    order_selection : OrderSelection or None
        The candidate table when the order was chosen from the data (``order=None``).
    port_signs : tuple of float
        Orientation of each power pair (+1: power in, −1: power out), given or detected.
    """

    system: LinearPH = None  # type: ignore[assignment]
    x0: Array = None  # type: ignore[assignment]
    gradient_norm: float = float("nan")
    mode: str = "exact"
    fitted: tuple[str, ...] = ()
    optimizer: str = "cg"
    n_cost_evaluations: int = 0
    n_gradient_evaluations: int = 0
    gradient_norm_history: tuple[float, ...] = field(default=(), repr=False)
    cpu_time_s: float = 0.0
    iteration_time_s: tuple[float, ...] = field(default=(), repr=False)
    iteration_cpu_time_s: tuple[float, ...] = field(default=(), repr=False)
    init: str = "paper"
    init_time_s: float = 0.0
    jacobian_singular_values: tuple[float, ...] = field(default=(), repr=False)
    order_selection: Any = field(default=None, repr=False)
    port_signs: tuple[float, ...] = ()

    @property
    def jacobian_rank(self) -> int:
        """Numerical rank of the output Jacobian: the number of identifiable directions.

        Singular values above ``P·ε·s₁`` (P coordinates); the others span the invariance of the
        parametrisation (state similarity, the choice of the storage among the KYP solutions,
        rotations of the factor of R).
        """
        s = self.jacobian_singular_values
        if not s:
            return 0
        return int(sum(v > len(s) * np.finfo(float).eps * s[0] for v in s))

    @property
    def condition(self) -> float:
        """Condition number ``s₁ / s_r`` of the output Jacobian on its identifiable directions.

        ``r`` = :attr:`jacobian_rank`; NaN when the Jacobian was not formed.
        """
        r = self.jacobian_rank
        s = self.jacobian_singular_values
        return float(s[0] / s[r - 1]) if r else float("nan")

    def report(self) -> str:
        """A few lines for people: initial model, iterations, costs, condition, time."""
        lines = [
            (f"linear pH fit: {self.optimizer} from the {self.init} initial model, "
            f"{self.mode} discretisation, learned {', '.join(self.fitted)}"),
            (f"  cost {self.initial_cost:.3e} -> {self.final_cost:.3e} in {self.n_iter} "
            f"iterations ({self.stopping_reason})"),
            (f"  gradient norm {self.gradient_norm:.3e}, Jacobian condition (gauge removed) "
            f"{self.condition:.3e}"),
            f"  time {self.init_time_s:.3f} s initial model + {self.time:.3f} s optimisation",
        ]
        return "\n".join(lines)

    @property
    def initial_cost(self) -> float:
        """Cost at the initial guess."""
        return self.cost_history[0]

    @property
    def final_cost(self) -> float:
        """Cost at the returned point."""
        return self.cost_history[-1]

    @property
    def iterations(self) -> int:
        """Same as ``n_iter``."""
        return self.n_iter

    @property
    def time_s(self) -> float:
        """Same as ``time``: wall-clock seconds of the optimisation."""
        return self.time


@dataclass(frozen=True)
class OutputErrors:
    """Relative output errors of a prediction.

    Attributes
    ----------
    relative_max : float
        The worst output's ``max_t |ŷ_j − y_j|`` relative to its swing (the error ``identify``
        compares with its tolerance: :func:`~fmu_surrogate.fmu.dataset.relative_errors`).
    relative_rms : float
        ``‖ŷ − y‖_F / ‖y‖_F``.
    """

    relative_max: float
    relative_rms: float


def output_errors(y: Array, y_hat: Array) -> OutputErrors:
    """:class:`OutputErrors` of ``y_hat`` against ``y`` (arrays of the same shape).

    Parameters
    ----------
    y, y_hat : ndarray, shape (K, m)
        Reference and prediction.

    Returns
    -------
    OutputErrors
    """
    e = np.asarray(y_hat) - np.asarray(y)
    return OutputErrors(
        float(np.max(relative_errors(y, y_hat))),
        float(np.linalg.norm(e)) / max(float(np.linalg.norm(y)), 1e-300),
    )


def plot_fit(result: LinearPHFit, data: tuple[Array, Array, Array] | None, *, path: Any = None) -> Any:
    """Cost and gradient-norm history; with ``data = (t, y, ŷ)`` the outputs and their error.

    Parameters
    ----------
    result : LinearPHFit
    data : (t, y, y_hat) or None
        Time grid, measured and predicted outputs.
    path : path, optional
        Save the figure there (PNG) and close it.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from fmu_surrogate.figures import finish, pyplot

    plt = pyplot()
    ncol = 1 if data is None else 3
    fig, axes = plt.subplots(1, ncol, figsize=(4.2 * ncol, 3.3), squeeze=False)
    ax = axes[0][0]
    ax.semilogy(result.cost_history, "o-", ms=3, label="cost")
    if result.gradient_norm_history:
        ax.semilogy(result.gradient_norm_history, "s--", ms=3, label="gradient norm")
    ax.set_xlabel("iteration")
    ax.set_title(f"{result.optimizer} from {result.init.split(' ')[0]} ({result.time:.2f} s)")
    ax.legend(fontsize=7)
    if data is not None:
        t, y, yh = data
        for j in range(y.shape[1]):
            axes[0][1].plot(t, y[:, j], "k-", lw=1)
            axes[0][1].plot(t, yh[:, j], "--", lw=1, label=f"model y{j + 1}")
            axes[0][2].semilogy(t, np.abs(yh[:, j] - y[:, j]) + 1e-300, lw=1, label=f"y{j + 1}")
        axes[0][1].set_xlabel("t [s]")
        axes[0][1].set_title("outputs (black: data)")
        axes[0][1].legend(fontsize=7)
        err = output_errors(y, yh)
        axes[0][2].set_xlabel("t [s]")
        axes[0][2].set_title(f"|error|, relative max {err.relative_max:.2e}")
    return finish(fig, path)


def plot_singular_values(sub: Any, order: int, *, path: Any = None) -> Any:
    """Singular values of the subspace method, normalised, with the chosen order marked.

    Parameters
    ----------
    sub : SubspaceModel
        From :func:`fmu_surrogate.identify.linear.init.subspace.subspace_identify`.
    order : int
        The requested model order.
    path : path, optional
        Save the figure there (PNG) and close it.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from fmu_surrogate.figures import finish, pyplot

    plt = pyplot()
    s = np.asarray(sub.singular_values)
    fig, ax = plt.subplots(figsize=(5.0, 3.3))
    idx = np.arange(1, s.size + 1)
    ax.semilogy(idx, s / s[0], "o-", ms=3)
    ax.axvline(order + 0.5, color="C3", ls="--", label=f"order {order} (identified {sub.rank})")
    ax.set_xlabel("index")
    ax.set_ylabel("singular value / largest")
    ax.set_title(f"subspace order selection (horizon {sub.horizon})")
    ax.legend(fontsize=7)
    return finish(fig, path)
