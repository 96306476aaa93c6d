"""Simulation of a drop-in surrogate (:class:`~fmu_surrogate.ph.PortedSystem`) in its FMU's terms.

:func:`fmu_surrogate.ph.simulate` maps the external inputs to the pH ports
(``u_ph = Tu u_ext + cu``, :func:`port_inputs`), simulates the core from the operating point and
reads the external outputs back (:func:`ported_trajectory`).  The scheme's energy balance is the
core's; the energy supplied through the ports is split by where it comes from.  With the step
means ``ȳ_k`` (the core's step outputs) and ``ū_ph = Tu ū_ext + cu``::

    supplied_external = Σ_k h ȳ_kᵀ Tu ū_ext,k        (through the FMU's inputs)
    supplied_sources  = Σ_k h ȳ_kᵀ cu                 (by the internal constant sources)

so ``H(x_N) − H(x_0) + dissipated − supplied_external − supplied_sources`` is round-off.  The
energy through the external ports is that of the pH ports: the FMU's own ``y_extᵀu_ext`` differs
from it in sign on a power-out port and is not defined on a non-power one.  A surrogate with a
delayed feedthrough reports at each point the outputs of the inputs one point earlier
(:class:`~fmu_surrogate.ph.PortedSystem`), one with late outputs those of the point before;
the energy balance is the core's, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.ph.ports import PortedSystem
from fmu_surrogate.ph.structure import StructureError

if TYPE_CHECKING:
    from fmu_surrogate.ph.simulation.trajectory import Trajectory

Array = NDArray[np.float64]

__all__ = ["PortedTrajectory", "port_inputs", "ported_trajectory"]


@dataclass(frozen=True)
class PortedTrajectory:
    """A simulated drop-in surrogate: external variables, states and the split energy balance.

    Parameters
    ----------
    t : ndarray, shape (N,)
        Time grid [s].
    x : ndarray, shape (N, n)
        States of the core.
    u, y : ndarray, shape (N, k_in), (N, k_out)
        External inputs and outputs at the nodes.
    H : ndarray, shape (N,)
        Hamiltonian at the nodes.
    stored, dissipated, supplied_external, supplied_sources : ndarray, shape (N,)
        Cumulative ``H − H_0``, dissipation and supplied energies (module docs).
    core : Trajectory
        The pH core's trajectory (port inputs and outputs, efforts, Newton iterations).
    input_names, output_names : tuple of str
        External names.
    """

    t: Array = field(repr=False)
    x: Array = field(repr=False)
    u: Array = field(repr=False)
    y: Array = field(repr=False)
    H: Array = field(repr=False)
    stored: Array = field(repr=False)
    dissipated: Array = field(repr=False)
    supplied_external: Array = field(repr=False)
    supplied_sources: Array = field(repr=False)
    core: Trajectory = field(repr=False)
    input_names: tuple[str, ...] = ()
    output_names: tuple[str, ...] = ()

    @property
    def supplied(self) -> Array:
        """Total supplied energy, ``supplied_external + supplied_sources`` (cumulative)."""
        return self.supplied_external + self.supplied_sources

    @property
    def energy_residual(self) -> float:
        """``H(x_N) − H(x_0) + dissipated − supplied_external − supplied_sources``."""
        return float(self.stored[-1] + self.dissipated[-1] - self.supplied_external[-1]
                     - self.supplied_sources[-1])

    @property
    def energy_scale(self) -> float:
        """A scale for the residual: the largest magnitude of the energy terms and of H."""
        vals = [np.max(np.abs(a)) for a in (self.stored, self.dissipated, self.supplied_external,
                                            self.supplied_sources, self.H)]
        return float(np.nanmax(vals)) or 1.0


def port_inputs(ported: PortedSystem, t: ArrayLike, u_ext: ArrayLike | None,
                x0: ArrayLike | None) -> tuple[Array, Array, Array]:
    """External inputs as an ``(N, k_in)`` array, the pH port inputs and the initial state.

    Parameters
    ----------
    ported : PortedSystem
        The surrogate.
    t : array_like, shape (N,)
        Time grid.
    u_ext : array_like, shape (N, k_in) or (N,) for one input, or None
        External inputs (``None`` or empty when ``k_in = 0``).
    x0 : array_like, shape (n,), optional
        Initial state; default ``ported.initial_state`` of the first inputs (``ported.x0``,
        or the equilibrium of the first inputs).

    Returns
    -------
    tuple of ndarray
        ``U_ext`` (N, k_in), ``U_ph`` (N, m), ``x0`` (n,).
    """
    N, k = np.asarray(t).reshape(-1).size, ported.n_inputs
    if u_ext is None or np.size(u_ext) == 0:
        if k:
            raise StructureError(f"the surrogate has {k} inputs {list(ported.input_names)}; pass "
                             f"u of shape ({N}, {k}).")
        U = np.zeros((N, 0))
    else:
        U = np.asarray(u_ext, dtype=float)
        if U.ndim == 1 and k == 1:
            U = U[:, None]
        if U.shape != (N, k):
            raise StructureError(f"u must have shape ({N}, {k}) (one column per input "
                             f"{list(ported.input_names)}), got {U.shape}.")
    if x0 is not None:
        x = np.asarray(x0, dtype=float).reshape(-1)
    else:
        x = ported.initial_state(U[0]) if N else ported.x0
    return U, ported.inputs_to_ports(U), x


def ported_trajectory(ported: PortedSystem, core: Trajectory, U_ext: Array,
                      hold: str) -> PortedTrajectory:
    """The external view of a core trajectory and the split of its supplied energy.

    Parameters
    ----------
    ported : PortedSystem
        The surrogate.
    core : Trajectory
        The core's trajectory driven by ``ported.inputs_to_ports(U_ext)``.
    U_ext : ndarray, shape (N, k_in)
        External inputs at the nodes.
    hold : {"linear", "zoh"}
        The hold the core was simulated with (decides the step means of the inputs).

    Returns
    -------
    PortedTrajectory
    """
    p = ported.ports
    Ubar = 0.5 * (U_ext[1:] + U_ext[:-1]) if hold == "linear" else U_ext[:-1]
    h = np.diff(core.t)
    ext = h * (core.ybar * (Ubar @ p.Tu.T)).sum(axis=1)
    src = h * (core.ybar @ p.cu)
    zero = np.zeros(1)
    if ported.delayed_feedthrough:
        Y = ported.sampled_outputs(ported.outputs(core.x, ported.inputs_seen_by_outputs(U_ext)),
                                   U_ext)
    else:
        Y = ported.sampled_outputs(ported.external_outputs(core.x, U_ext, core.y), U_ext)
    return PortedTrajectory(core.t, core.x, U_ext, Y, core.H, core.stored, core.dissipated,
                            np.concatenate([zero, np.cumsum(ext)]),
                            np.concatenate([zero, np.cumsum(src)]), core,
                            ported.input_names, ported.output_names)
