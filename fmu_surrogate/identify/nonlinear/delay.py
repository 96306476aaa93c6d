"""What a nonlinear fit needs to know about a delayed feedthrough (outputs that see the inputs of
the step before, :class:`~fmu_surrogate.ph.PortedSystem`): the inputs it may see before the
first point and how they see the inputs set at initialisation, whether a linear start made the
delay a mode faster than the sampling, and the data in which the delay is a direct feedthrough."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.ph import PortedSystem

Array = NDArray[np.float64]

__all__ = ["FIRST_FEEDTHROUGH_GAIN", "input_starts", "inputs_before", "outputs_one_sample_earlier",
           "unresolved_mode", "with_first_feedthrough"]

#: How many times a first feedthrough must divide the first points' squared misses to be kept:
#: an effect of the inputs set at initialisation, not a fit to the first points' scatter (the
#: least-squares fit of one input to ``r`` runs leaves ``(r − 1) / r`` of a random scatter)
FIRST_FEEDTHROUGH_GAIN = 4.0


def input_starts(ds: Any, inputs: Sequence[str]) -> Array | None:
    """The inputs' declared start values of a dataset (``None`` when it does not say).

    Parameters
    ----------
    ds : xarray.Dataset
        A harvested dataset (attribute ``input_start_values``).
    inputs : sequence of str
        Input names, in the surrogate's order.

    Returns
    -------
    ndarray, shape (k_in,), or None
    """
    from fmu_surrogate.fmu.dataset import input_start_values

    declared = input_start_values(ds)
    if not all(name in declared for name in inputs):
        return None
    return np.array([declared[name] for name in inputs])


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
        return sum(float(np.sum((surrogate.outputs(surrogate.x0, u[0] if before is None
                                                   else before) - y[0]) ** 2))
                   for _, u, y, _ in train)

    return input_starts if miss(input_starts) < miss(None) else None


def with_first_feedthrough(surrogate: PortedSystem, train: list[tuple],
                           input_starts: Array | None) -> PortedSystem:
    """``surrogate`` with a first feedthrough where its first outputs see the inputs set at
    initialisation through dynamics far faster than the step (else ``surrogate`` itself).

    Such an FMU (a coil spring with mass, 0.6 N·s/m through its last segment where the whole
    coil shows 0.03 N·s/m once its surge modes settle within the step) reads at the first point
    ``y(t₀) = ŷ(x₀, u_before) + D₀ (u(t₀) − u_before)``, with ``u_before`` the inputs' declared
    start values.  ``D₀`` is fitted by least squares to the training runs' first points (the
    residuals of the model with ``inputs_before`` the starts), each output weighed by its swing,
    and kept where it divides the first points' squared misses, against the surrogate's own, by
    :data:`FIRST_FEEDTHROUGH_GAIN`.  Its columns are the inputs whose first values leave their
    starts; it needs two runs more than them (one left to judge it by), else nothing is fitted.

    Parameters
    ----------
    surrogate : PortedSystem
        The fitted surrogate, with a delayed feedthrough.
    train : list of tuple
        ``(t, u_ext, y_ext, hold)`` training experiments.
    input_starts : ndarray, shape (k_in,), or None
        The inputs' declared start values (``None``: unknown, nothing fitted).

    Returns
    -------
    PortedSystem
    """
    if (not surrogate.delayed_feedthrough or input_starts is None
            or surrogate.first_outputs is not None):
        return surrogate
    starts = np.asarray(input_starts, dtype=float)
    du = np.array([u[0] - starts for _, u, _, _ in train])
    span = np.array([np.ptp(u, axis=0) for _, u, _, _ in train]).max(axis=0) + np.abs(starts)
    cols = np.flatnonzero(np.abs(du).max(axis=0) > 1e-9 * np.maximum(span, 1e-300))
    if cols.size == 0 or len(train) < cols.size + 2:
        return surrogate
    from fmu_surrogate.fmu.dataset import output_scale

    scale = np.max([output_scale(y) for _, _, y, _ in train], axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    base = surrogate.replace(inputs_before=starts)
    miss = np.array([(y[0] - base.outputs(base.x0, starts)) / scale for _, _, y, _ in train])
    own = np.array([(y[0] - surrogate.sampled_outputs(surrogate.outputs(
        surrogate.x0, surrogate.inputs_seen_by_outputs(u[:1])), u[:1])[0]) / scale
        for _, u, y, _ in train])
    a = du[:, cols]
    if np.linalg.matrix_rank(a, tol=1e-9 * np.abs(a).max()) < cols.size:
        return surrogate
    coef = np.linalg.lstsq(a, miss, rcond=None)[0]  # (cols, k_out), in swing units
    left = miss - a @ coef
    if FIRST_FEEDTHROUGH_GAIN * float(np.sum(left ** 2)) > float(np.sum(own ** 2)):
        return surrogate
    d0 = np.zeros((surrogate.n_outputs, surrogate.n_inputs))
    d0[:, cols] = (coef * scale).T
    return base.replace(first_feedthrough=d0)
