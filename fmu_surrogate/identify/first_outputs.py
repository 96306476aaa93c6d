"""Outputs that an FMU shows before its first step as fixed values, not as its model's.

Co-simulation FMUs written by hand or by small frameworks often compute their outputs in
``doStep`` only: read after initialisation, before the first step, they are their start values
or zeros, whatever the state and the inputs (measured on a vendor's wheel FMU: a tire force of 0
where the model's is −1.5·10⁴ N, 100 % of the output's range at that one point).  A surrogate
that shows its model's outputs there misses the FMU by that much at ``t₀`` however well it fits
the rest, and a co-simulation master that reads the outputs before the first step sees other
values than with the FMU.

The test.  The outputs at ``t₀`` of every run are the same values bit for bit (whatever the
runs' inputs and parameters), and the fitted surrogate misses them by more than the tolerance of
the fit (relative to each output's largest magnitude) and by more than twice its largest miss
at the next ten points: the surrogate then shows those values before its first step
(:class:`~fmu_surrogate.ph.PortedSystem` ``first_outputs``).  Outputs that are the model's at
``t₀`` are matched by the surrogate and left alone; a surrogate that misses the start as it
misses the points after it is wrong there, not shown fixed values (every run of a mass thrown
into its end stops starts from the same state: its linear fit, 100 % off, showed the thrown
velocity as a fixed first output).

The fit.  Taken as data, such values pull the fit towards them: an initial state learned to
explain them, or none learned because the outputs look at rest.  When the outputs at ``t₀``
are the same in every run and the quadratic extrapolation of the next three points misses them
by more than the tolerance (:func:`suspect_first_points`:
a jump no dynamics make in one step — or a delayed feedthrough from rest, whose first point is
right), the models are also fitted to data whose first points are replaced: first by that
extrapolation, then by the first outputs of the model fitted to it (:func:`with_first_points`),
and that fit is kept when it halves the error
(:func:`~fmu_surrogate.identify.selection.select_dataset`; measured on the damped mass with
fixed values at ``t₀``: 7·10³ % → 5.6·10⁻⁴ %).  Whether the model fitted to them meets the
tolerance does not decide: the same mass, its fit to those values taken without a constant
source, met its held-out run within 0.55 %, and to 5.5·10⁻⁸ of its largest output fitted
without them.

An FMU whose outputs see the inputs set at ``t₀`` through dynamics far faster than its step
shows there their response, as at every later point: its fast feedthrough
(:func:`~fmu_surrogate.identify.delayed_feedthrough.fast_feedthrough`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["first_point_repeated", "fixed_first_outputs", "input_starts",
           "model_first_points", "suspect_first_points", "with_first_outputs",
           "with_first_points", "without_first_points"]

Array = NDArray[np.float64]

#: Points after ``t₀`` at which the surrogate's miss is compared with its miss at ``t₀``.
LATER_POINTS = 10
#: Fixed values at ``t₀`` are those the surrogate misses by this factor more than any of the
#: next :data:`LATER_POINTS` points (a doStep-only FMU's zeros: 100 % of the swing against a
#: fit within the tolerance there; a model that misses the whole run misses its start alike).
LATER_FACTOR = 2.0

def fixed_first_outputs(surrogate: Any, ds: Any, inputs: Sequence[str], outputs: Sequence[str],
                        runs: Sequence[int], tolerance: float) -> Array | None:
    """The outputs the FMU shows before its first step when they are fixed values the
    surrogate misses (module docstring), else ``None``.

    Parameters
    ----------
    surrogate : PortedSystem
        The fitted surrogate (as it samples its outputs: late outputs included).
    ds : xarray.Dataset
        The harvested dataset, outputs at their own points.
    inputs, outputs : sequence of str
        The surrogate's inputs and outputs.
    runs : sequence of int
        The runs compared (all successful runs).
    tolerance : float
        Relative miss (per output, of its largest magnitude) above which the values are kept.

    Returns
    -------
    ndarray, shape (k_out,), or None
    """
    F, scale, model, later = _first_points(surrogate, ds, inputs, outputs, runs, short=False)
    if not F.shape[0]:
        return None
    if np.any(F.view(np.uint64) != F[0].view(np.uint64)):
        return None  # they differ from run to run: the model's
    miss = np.abs(model - F[0]).max(axis=0)
    # a miss the surrogate makes at the next points as well is its error, not fixed values (a
    # mass thrown into its stops, every run from the same state, fitted by a linear model)
    fixed = (miss > tolerance * np.maximum(np.max(scale, axis=0), 1e-300)) \
        & (miss > LATER_FACTOR * later.max(axis=0))
    return F[0].copy() if bool(fixed.any()) else None


def _first_points(surrogate: Any, ds: Any, inputs: Sequence[str], outputs: Sequence[str],
                  runs: Sequence[int], short: bool) -> tuple[Array, Array, Array, Array]:
    """Per run: the data's outputs at ``t₀``, their largest magnitudes over the run, the
    surrogate's outputs at ``t₀`` and its largest miss at the next :data:`LATER_POINTS` points
    (each ``(n_runs, k_out)``; NaN misses count as infinite); runs shorter than two points only
    when ``short`` (which computes no later misses: zeros)."""
    from fmu_surrogate.fmu.dataset import run_arrays
    from fmu_surrogate.identify.linear.model.experiments import hold_from_dataset
    from fmu_surrogate.ph import simulate

    hold, k = hold_from_dataset(ds), len(inputs)
    first, scale, model, later = [], [], [], []
    for t, X in run_arrays(ds, list(inputs) + list(outputs), runs=list(runs)):
        if t.shape[0] < 2 and not short:
            continue
        n = 2 if short else min(t.shape[0], LATER_POINTS + 1)
        # only the outputs are used: the energy integrals of the steps, which a wild
        # candidate (fitted with fixed values taken as data) overflows, are not
        with np.errstate(over="ignore", invalid="ignore"):
            y = simulate(surrogate, t[:n], X[:n, :k], hold=hold).y
            miss = np.abs(y[1:n] - X[1:n, k:]).max(axis=0) if not short else np.zeros(len(outputs))
        model.append(y[0])
        later.append(np.where(np.isnan(miss), np.inf, miss))
        first.append(X[0, k:])
        scale.append(np.abs(X[:, k:]).max(axis=0))
    return np.array(first), np.array(scale), np.array(model), np.array(later)


def with_first_outputs(surrogate: Any, first: Array | None) -> Any:
    """``surrogate`` showing ``first`` before its first step (itself when ``first`` is None),
    fixed values in place of a first feedthrough.

    Parameters
    ----------
    surrogate : PortedSystem
    first : ndarray, shape (k_out,), or None

    Returns
    -------
    PortedSystem
    """
    return (surrogate if first is None
            else surrogate.replace(first_outputs=first))


def _first_rows(ds: Any, outputs: Sequence[str], runs: Sequence[int]) -> tuple[Array, Array]:
    """The outputs' first four points ``(n_runs, 4, k_out)`` and largest magnitudes."""
    from fmu_surrogate.fmu.dataset import run_arrays

    arrays = run_arrays(ds, list(outputs), runs=list(runs))
    if not arrays or min(X.shape[0] for _t, X in arrays) < 4:
        return np.zeros((0, 4, len(outputs))), np.zeros(len(outputs))
    return (np.array([X[:4] for _t, X in arrays]),
            np.max([np.abs(X).max(axis=0) for _t, X in arrays], axis=0))


def suspect_first_points(ds: Any, outputs: Sequence[str], runs: Sequence[int],
                         tolerance: float) -> bool:
    """Whether the outputs at ``t₀`` may be fixed values the fit must not take as data (module
    docstring): the same in every run (at least two), and off the quadratic extrapolation
    ``3y₁ − 3y₂ + y₃`` by more than ``tolerance`` of an output's largest magnitude.

    Parameters
    ----------
    ds : xarray.Dataset
    outputs : sequence of str
    runs : sequence of int
    tolerance : float

    Returns
    -------
    bool
    """
    Y, scale = _first_rows(ds, outputs, runs)
    if Y.shape[0] < 2 or np.any(Y[:, 0] != Y[0, 0]):
        return False
    guess = 3.0 * Y[:, 1] - 3.0 * Y[:, 2] + Y[:, 3]
    return bool(np.any(np.abs(guess - Y[:, 0]) > tolerance * np.maximum(scale, 1e-300)))


def with_first_points(ds: Any, outputs: Sequence[str], runs: Sequence[int],
                      values: Array | None = None) -> Any:
    """A copy of ``ds`` whose outputs at ``t₀`` are ``values`` (per run, ``(n_runs, k_out)``)
    or, by default, the quadratic extrapolation of the next three points.

    Parameters
    ----------
    ds : xarray.Dataset
    outputs : sequence of str
    runs : sequence of int
        The runs changed (the rows of ``values``).
    values : ndarray, optional

    Returns
    -------
    xarray.Dataset
    """
    if values is None:
        Y, _ = _first_rows(ds, outputs, runs)
        values = 3.0 * Y[:, 1] - 3.0 * Y[:, 2] + Y[:, 3]
    from fmu_surrogate.fmu.dataset import data_var_name

    out = ds.copy(deep=False)
    labels = list(np.asarray(ds["run"].values))
    for j, name in enumerate(outputs):
        var = data_var_name(ds, name)
        a = np.array(ds[var].values, dtype=float)
        for i, r in enumerate(runs):
            a[labels.index(r), 0] = values[i, j]
        out[var] = (ds[var].dims, a, ds[var].attrs)
    return out


def model_first_points(surrogate: Any, ds: Any, inputs: Sequence[str],
                       outputs: Sequence[str], runs: Sequence[int]) -> Array:
    """The surrogate's outputs at ``t₀`` of each run, ``(n_runs, k_out)``.

    Parameters
    ----------
    surrogate : PortedSystem or pH system
    ds : xarray.Dataset
    inputs, outputs : sequence of str
    runs : sequence of int

    Returns
    -------
    ndarray
    """
    return _first_points(surrogate, ds, inputs, outputs, runs, short=True)[2]


def first_point_repeated(ds: Any, outputs: Sequence[str], runs: Sequence[int]) -> bool:
    """Whether every run shows the same outputs at its first two points, bit for bit (late
    outputs: the point after initialisation and the first step's, both of the start).

    Parameters
    ----------
    ds : xarray.Dataset
    outputs : sequence of str
    runs : sequence of int

    Returns
    -------
    bool
    """
    Y, _ = _first_rows(ds, outputs, runs)
    return bool(Y.shape[0]) and bool(np.all(Y[:, 0] == Y[:, 1]))


def without_first_points(ds: Any, inputs: Sequence[str], outputs: Sequence[str],
                         fit: Sequence[int], runs: Sequence[int], tolerance: float,
                         linear: Any) -> tuple[Any, str]:
    """The data to fit: ``ds`` itself, or, when its first points are suspect
    (:func:`suspect_first_points`), ``ds`` with them replaced by the first outputs of the linear
    model fitted to their extrapolation (module docstring), and a report line.

    Parameters
    ----------
    ds : xarray.Dataset
    inputs, outputs : sequence of str
    fit : sequence of int
        Training runs.
    runs : sequence of int
        All runs compared.
    tolerance : float
    linear : LinearPHIdentifier
        Unfitted.

    Returns
    -------
    (xarray.Dataset, str)
    """
    if not suspect_first_points(ds, outputs, runs, tolerance):
        return ds, ""
    guess = with_first_points(ds, outputs, runs)
    sur = linear.fit_dataset(guess, inputs=list(inputs), outputs=list(outputs),
                             runs=list(fit)).to_surrogate()
    line = ("\n  outputs at the first point are the same in every run and do not continue it "
            "(a jump no dynamics make in one step): fitted without them")
    return with_first_points(ds, outputs, runs, model_first_points(sur, ds, inputs, outputs,
                                                                   runs)), line


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
