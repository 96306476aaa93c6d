"""A simulated trajectory of a pH system and its discrete energy balance (the result of
:func:`fmu_surrogate.ph.simulation.integrators.simulate`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.figures import finish as _finish
from fmu_surrogate.figures import pyplot as _pyplot
from fmu_surrogate.ph.system import PHDAE

Array = NDArray[np.float64]

__all__ = ["Trajectory"]


@dataclass(frozen=True)
class Trajectory:
    """A simulated trajectory and its discrete energy balance.

    Parameters
    ----------
    t : ndarray, shape (N,)
        Time grid [s].
    x, z : ndarray, shape (N, n)
        States and efforts at the nodes.
    u, y : ndarray, shape (N, m)
        Inputs and outputs ``y = (G + P)ᵀ z + D u`` at the nodes.
    H : ndarray, shape (N,)
        Hamiltonian at the nodes (NaN when the system has none).
    stored, dissipated, supplied : ndarray, shape (N,)
        Cumulative ``H(x_k) − H(x_0)``, ``Σ h z̄ᵀRz̄`` and ``Σ h ȳᵀū`` of the scheme.
    newton_iterations : ndarray of int, shape (N − 1,)
        Newton iterations per step (0 for the linear direct solve and for a core whose step
        is explicit, ``ẋ = B u``).
    method : str
        ``"midpoint"`` or ``"avf"``.
    state_names, output_names : tuple of str
        For plots.
    ybar : ndarray, shape (N − 1, m)
        The steps' outputs ``ȳ_k`` (those of the energy balance).
    """

    t: Array = field(repr=False)
    x: Array = field(repr=False)
    z: Array = field(repr=False)
    u: Array = field(repr=False)
    y: Array = field(repr=False)
    H: Array = field(repr=False)
    stored: Array = field(repr=False)
    dissipated: Array = field(repr=False)
    supplied: Array = field(repr=False)
    newton_iterations: NDArray[np.int64] = field(repr=False)
    method: str
    state_names: tuple[str, ...] = ()
    output_names: tuple[str, ...] = ()
    ybar: Array | None = field(default=None, repr=False)

    @property
    def energy_residual(self) -> float:
        """``H(x_N) − H(x_0) + Σ h z̄ᵀRz̄ − Σ h ȳᵀū`` (NaN without a Hamiltonian)."""
        return float(self.stored[-1] + self.dissipated[-1] - self.supplied[-1])

    @property
    def energy_scale(self) -> float:
        """A scale for the residual: the largest of ``|H − H_0|``, dissipated and supplied."""
        vals = [np.max(np.abs(self.stored)), np.max(np.abs(self.dissipated)),
                np.max(np.abs(self.supplied)), np.max(np.abs(self.H))]
        return float(np.nanmax(vals)) or 1.0

    def plot(self, path: str | Path | None = None, *, max_states: int = 6) -> Any:
        """States and outputs over time.

        Parameters
        ----------
        path : path, optional
            Save the figure there (PNG) and close it.
        max_states : int
            At most this many states are drawn.

        Returns
        -------
        matplotlib.figure.Figure
        """
        plt = _pyplot()
        k = min(self.x.shape[1], max_states)
        m = self.y.shape[1]
        fig, axes = plt.subplots(2 if m else 1, 1, figsize=(8.5, 5.5 if m else 3.2),
                                 sharex=True, squeeze=False)
        names = self.state_names or tuple(f"x{i + 1}" for i in range(self.x.shape[1]))
        for j in range(k):
            axes[0, 0].plot(self.t, self.x[:, j], lw=0.9, label=names[j])
        axes[0, 0].set_ylabel("states")
        axes[0, 0].legend(fontsize=7, ncol=2, loc="upper right")
        if m:
            onames = self.output_names or tuple(f"y{i + 1}" for i in range(m))
            for j in range(m):
                axes[1, 0].plot(self.t, self.y[:, j], lw=0.9, label=onames[j])
            axes[1, 0].set_ylabel("outputs")
            axes[1, 0].legend(fontsize=7, loc="upper right")
        axes[-1, 0].set_xlabel("time [s]")
        fig.suptitle(f"simulation ({self.method}), {len(self.t) - 1} steps")
        return _finish(fig, path)

    def plot_energy(self, path: str | Path | None = None) -> Any:
        """Stored, dissipated and supplied energy over time, and the balance residual.

        Parameters
        ----------
        path : path, optional
            Save the figure there (PNG) and close it.

        Returns
        -------
        matplotlib.figure.Figure
        """
        plt = _pyplot()
        fig, (ax, ax_r) = plt.subplots(2, 1, figsize=(8.5, 5.5), sharex=True,
                                       gridspec_kw={"height_ratios": [2, 1]})
        ax.plot(self.t, self.stored, label="stored H − H₀")
        ax.plot(self.t, self.dissipated, label="dissipated ∫ zᵀRz")
        ax.plot(self.t, self.supplied, label="supplied ∫ yᵀu")
        ax.set_ylabel("energy")
        ax.legend(fontsize=8)
        res = self.stored + self.dissipated - self.supplied
        ax_r.plot(self.t, res, color="tab:red", lw=0.8)
        ax_r.set_ylabel("residual")
        ax_r.set_xlabel("time [s]")
        ax_r.set_title(f"energy-balance residual {self.energy_residual:.2e} "
                       f"({abs(self.energy_residual) / self.energy_scale:.1e} of the energy "
                       f"scale)", fontsize=8, loc="left")
        return _finish(fig, path)


def _trajectory(system: PHDAE, t: Array, U: Array, ubar: Array, X: Array, Zbar: Array,
                its: NDArray[np.int64], method: str) -> Trajectory:
    Z = system.effort(X)
    Y = system.output_from_effort(Z, U)
    h = np.diff(t)
    if system.has_hamiltonian:
        H = system.hamiltonian(X)
        stored = H - H[0]
    else:
        H = np.full(t.size, np.nan)
        stored = np.full(t.size, np.nan)
    Ybar = system.output_from_effort(Zbar, ubar)
    diss = h * system.dissipation_rate(Zbar, ubar)
    supp = h * (Ybar * ubar).sum(axis=1)
    zero = np.zeros(1)
    return Trajectory(t, X, Z, U, Y, H, stored, np.concatenate([zero, np.cumsum(diss)]),
                      np.concatenate([zero, np.cumsum(supp)]), its, method,
                      tuple(system.state_names), tuple(system.output_names), Ybar)
