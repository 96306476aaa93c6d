"""What a nonlinear fit needs to know about a delayed feedthrough (outputs that see the inputs of
the step before, :class:`~fmu_surrogate.ph.PortedSystem`): the inputs it may see before the
first point, whether a linear start made the delay a mode faster than the sampling, and the data
in which the delay is a direct feedthrough."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.ph import PortedSystem

Array = NDArray[np.float64]

__all__ = ["inputs_before", "outputs_one_sample_earlier", "unresolved_mode"]


def unresolved_mode(lin: Any, exps: list[tuple]) -> bool:
    """Whether a fitted linear model has a mode that decays by more than ``e²`` within one
    sampling step: beyond what sampled data resolve, the trace of a delay, not a dynamic.

    Parameters
    ----------
    lin : LinearPHIdentifier
        Fitted.
    exps : list of tuple
        ``(t, ...)`` experiments (their smallest step counts).

    Returns
    -------
    bool
    """
    core = lin.system_
    if core.n_states == 0:
        return False
    A = np.linalg.solve(core.E, core.state_space()[0])
    h = min(float(np.min(np.diff(e[0]))) for e in exps)
    return bool(np.abs(np.linalg.eigvals(A)).max() * h > 2.0)


def outputs_one_sample_earlier(ds: Any, outputs: Sequence[str]) -> Any:
    """A copy of ``ds`` without its last sample whose ``outputs`` at ``t_k`` are those of
    ``t_{k+1}``: the outputs of the inputs held from ``t_k``.

    Parameters
    ----------
    ds : xarray.Dataset
        A harvested dataset.
    outputs : sequence of str
        The outputs to move.

    Returns
    -------
    xarray.Dataset
        One sample shorter; every run's ``n_samples`` one less.
    """
    out = ds.isel(time=slice(0, ds.sizes["time"] - 1)).copy()
    for name in outputs:
        out[name] = ds[name].isel(time=slice(1, None)).assign_coords(time=out["time"])
        # the moved outputs are no longer the FMU's: its declared direct dependencies (none
        # for an output computed in doStep from the inputs before) do not hold for them
        out[name].attrs.pop("dependencies", None)
    if "n_samples" in out:
        out["n_samples"] = np.maximum(out["n_samples"] - 1, 0)
    return out


def inputs_before(surrogate: PortedSystem, train: list[tuple],
                   input_starts: Array | None) -> Array | None:
    """What a delayed feedthrough sees before the first point: the declared start values of the
    inputs or (``None``) the first inputs, whichever matches the first outputs better.

    Where every run's first inputs are the start values (to 1e-9 of each input's range: a
    multisine of Schroeder phases starts at zero), the data cannot tell the two apart and the
    first inputs are taken — the inputs a harvest, and an importer, set before initialisation
    (the stepped damper of the benchmarks sees them; taking the start values on such data
    missed its first output by 1.9 % of its range under another input).

    Parameters
    ----------
    surrogate : PortedSystem
        The fitted surrogate (its operating point ``x0`` starts every run).
    train : list of tuple
        ``(t, u_ext, y_ext, hold)`` training experiments.
    input_starts : ndarray, shape (k_in,), or None
        The declared start values (``None``: unknown, the first inputs are taken).

    Returns
    -------
    ndarray or None
    """
    if input_starts is None:
        return None
    starts = np.asarray(input_starts, dtype=float)
    if all(np.all(np.abs(u[0] - starts) <= 1e-9 * (np.ptp(u, axis=0) + np.abs(starts)))
           for _, u, _, _ in train):
        return None

    def miss(before: Array | None) -> float:
        return sum(float(np.sum((surrogate.outputs(surrogate.initial_state(u[0]),
                                                   u[0] if before is None else before)
                                 - y[0]) ** 2))
                   for _, u, y, _ in train)

    return input_starts if miss(input_starts) < miss(None) else None
