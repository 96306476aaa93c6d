"""Columns of a harvested dataset for sparse equation discovery, derivatives included.

A column is a variable of the dataset (``"y"``, ``"i_nl"``) or ``"der(NAME)"``.  A derivative the
FMU recorded is read as it is; one it did not export is estimated per run from ``NAME`` with
:func:`fmu_surrogate.identify.derivatives.estimate_derivatives` (nested: ``"der(der(y))"``).
Samples of all selected runs are pooled.

``derivative="interval"`` estimates nothing: a second-order law ``der(v) = Σ θ φ(y, v, u)`` with
the recorded position ``y`` and velocity ``v`` is regressed in its integral form over each sample
interval (:func:`~fmu_surrogate.identify.laws.interval.interval_form`: the exact interval mean of
``der(v)`` against interval means of the terms, the other columns held at their left sample).  A
co-simulation FMU holds its input over each step, so ``der(v)`` jumps at every sample; any
derivative estimate spans the jumps and biases the damping (1-14 % on Duffing-type cases,
docs/design.md §5), the interval form does not.

``derivative="auto"`` (the default) takes the interval form wherever it applies
(:func:`choose_derivative`): the target is ``der(VELOCITY)``, not recorded, with the velocity,
the position and every other column recorded; the position is the one given, else the state the
dataset declares the velocity to be the derivative of, else the state whose recorded derivative
equals the velocity sample by sample.  Otherwise derivatives are estimated by splines.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from fmu_surrogate.errors import FmuSurrogateError, InvalidInputError
from fmu_surrogate.identify.derivatives import estimate_derivatives

__all__ = ["DERIVATIVE_METHODS", "LawDataError", "choose_derivative", "dataset_columns",
           "law_arrays"]

#: The values of ``derivative``: ``"auto"`` chooses between the interval form and splines
#: (:func:`choose_derivative`), the estimators of
#: :func:`~fmu_surrogate.identify.derivatives.estimate_derivatives`, the interval form.
DERIVATIVE_METHODS = ("auto", "spline", "fd", "gp", "interval")


class LawDataError(FmuSurrogateError, KeyError):
    """A requested column is neither in the dataset nor the derivative of one that is."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def _inner(name: str) -> str | None:
    name = name.strip()
    if name.startswith("der(") and name.endswith(")"):
        return name[4:-1].strip()
    return None


def _recorded(ds: Any) -> set[str]:
    from fmu_surrogate.fmu.dataset import fmu_variables

    return set(fmu_variables(ds))


def dataset_columns(ds: Any, names: Sequence[str], *, runs: Sequence[int] | None = None,
                    derivative: str = "spline") -> tuple[np.ndarray, dict[str, str]]:
    """The columns ``names`` of the selected runs, pooled, as an ``(N, len(names))`` array.

    Parameters
    ----------
    ds : xarray.Dataset or path
        A harvested dataset.
    names : sequence of str
        Variable names, or ``"der(NAME)"`` (estimated when the dataset does not hold it).
    runs : sequence of int, optional
        Run labels; default every successful run.
    derivative : {"spline", "fd", "gp"}
        Method of :func:`~fmu_surrogate.identify.derivatives.estimate_derivatives` for the
        derivatives the dataset does not hold.

    Returns
    -------
    X : ndarray, shape (N, len(names))
    sources : dict
        How each column was obtained: ``"recorded"`` or ``"estimated (<method>)"``.

    Raises
    ------
    LawDataError
        A name is neither recorded nor ``der(...)`` of something that can be obtained.
    """
    from fmu_surrogate.fmu.dataset import load_dataset, run_arrays

    if not hasattr(ds, "data_vars"):
        ds = load_dataset(ds)
    have = _recorded(ds)
    sources: dict[str, str] = {}
    plan: list[tuple[str, str | None]] = []   # (name, source variable or None if recorded)

    def need(name: str) -> None:
        if name in sources:
            return
        if name in have:
            sources[name] = "recorded"
            plan.append((name, None))
            return
        inner = _inner(name)
        if inner is None:
            raise LawDataError(f"column {name!r} is not in the dataset (recorded: "
                               f"{sorted(have)}); record it when harvesting or use der(NAME) "
                               f"to estimate a derivative.")
        need(inner)
        sources[name] = f"estimated ({derivative})"
        plan.append((name, inner))

    for n in names:
        need(n)
    recorded = [n for n, src in plan if src is None]
    blocks = []
    for t, X in run_arrays(ds, recorded, runs=runs):
        cols = dict(zip(recorded, X.T))
        for n, src in plan:
            if src is not None:
                cols[n] = estimate_derivatives(t, cols[src], method=derivative)
        blocks.append(np.column_stack([cols[n] for n in names]))
    if not blocks:
        raise LawDataError("no successful run to read: the dataset has no run with status ok "
                           "among those selected.")
    return np.vstack(blocks), {n: sources[n] for n in names}


def _declared_position(ds: Any, velocity: str, runs: Sequence[int] | None) -> str | None:
    """The recorded state whose derivative the dataset declares, or records, as ``velocity``."""
    from fmu_surrogate.fmu.dataset import run_arrays

    try:
        pairs = list(zip(json.loads(ds.attrs.get("states", "[]")),
                         json.loads(ds.attrs.get("derivatives", "[]"))))
    except (TypeError, ValueError):
        return None
    have = _recorded(ds)
    found = [s for s, d in pairs if d == velocity and s in have]
    if len(found) == 1:
        return found[0]
    for s, d in pairs:  # der(s) recorded and equal to the velocity: s is the position
        if s == velocity or s not in have or d not in have:
            continue
        arrays = run_arrays(ds, [d, velocity], runs=runs)
        if arrays and all(np.max(np.abs(A[:, 0] - A[:, 1]))
                          <= 1e-12 * max(np.max(np.abs(A[:, 1])), 1e-300) for _, A in arrays):
            found.append(s)
    return found[0] if len(found) == 1 else None


def choose_derivative(ds: Any, target: str, columns: Sequence[str] = (), *,
                      derivative: str = "auto", position: str | None = None,
                      runs: Sequence[int] | None = None) -> tuple[str, str | None]:
    """The method ``derivative="auto"`` stands for on a dataset, and the position it uses.

    Parameters
    ----------
    ds : xarray.Dataset or path
        A harvested dataset.
    target : str
        Left-hand side of the law.
    columns : sequence of str
        The other columns the law reads (candidate terms, GP inputs).
    derivative : {"auto", "spline", "fd", "gp", "interval"}
        Anything but ``"auto"`` is returned as it is.
    position : str, optional
        The position of a second-order law, when known.
    runs : sequence of int, optional
        Run labels (to compare a recorded derivative with the velocity).

    Returns
    -------
    method : str
        ``"interval"`` when ``target`` is ``der(VELOCITY)``, not recorded, and the velocity, the
        position and every column are recorded; else ``"spline"``.
    position : str or None
        ``position`` if given; with ``"interval"`` else the recorded state the dataset declares
        the velocity to be the derivative of (``states``/``derivatives`` attributes), or the one
        whose recorded derivative equals the velocity to round-off in every run.

    Raises
    ------
    InvalidInputError
        ``derivative`` is none of :data:`DERIVATIVE_METHODS`.
    """
    if derivative not in DERIVATIVE_METHODS:
        raise InvalidInputError(f"derivative must be one of {DERIVATIVE_METHODS}, got "
                           f"{derivative!r}.")
    if derivative != "auto":
        return derivative, position
    from fmu_surrogate.fmu.dataset import load_dataset

    if not hasattr(ds, "data_vars"):
        ds = load_dataset(ds)
    have = _recorded(ds)
    velocity = _inner(target)
    if (velocity is None or target in have or velocity not in have
            or not set(columns) <= have):
        return "spline", position
    if position is None:
        position = _declared_position(ds, velocity, runs)
    if position is None or position not in have:
        return "spline", position
    return "interval", position


def law_arrays(ds: Any, *, target: str, library: Any, gp_inputs: Sequence[str] = (),
               runs: Sequence[int] | None = None, derivative: str = "auto",
               position: str | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, dict[str, str]]:
    """Design matrix, target and GP inputs of a harvested dataset.

    Parameters
    ----------
    ds : xarray.Dataset or path
        A harvested dataset.
    target : str
        Column of the law's left-hand side (e.g. ``"yddot"``, ``"der(ydot)"``, ``"i_nl"``).
    library : CandidateLibrary
        Candidate terms; its ``columns`` are read from the dataset.
    gp_inputs : sequence of str
        Columns the discrepancy GP sees (empty: none).
    runs : sequence of int, optional
        Run labels; default every successful run.
    derivative : {"auto", "spline", "fd", "gp", "interval"}
        How derivatives the dataset does not hold are estimated; ``"interval"``: the integral
        form of a second-order law (module doc; ``target = "der(VELOCITY)"``, rows are the
        sample intervals); ``"auto"``: the interval form where it applies, else splines
        (:func:`choose_derivative`).
    position : str, optional
        With ``"interval"``: the recorded position whose derivative is the velocity (``"auto"``
        finds it from the dataset's declared states and derivatives when not given).

    Returns
    -------
    Phi : ndarray, shape (N, K)
    y : ndarray, shape (N,)
    X : ndarray, shape (N, q) or None
    sources : dict
        ``"recorded"``, ``"estimated (<method>)"`` or ``"interval mean (exact)"`` per column.

    Raises
    ------
    LawDataError
        A column cannot be obtained.
    InvalidInputError
        An unknown ``derivative``.
    """
    from fmu_surrogate.fmu.dataset import load_dataset

    if not hasattr(ds, "data_vars"):
        ds = load_dataset(ds)
    derivative, position = choose_derivative(ds, target, [*library.columns, *gp_inputs],
                                             derivative=derivative, position=position,
                                             runs=runs)
    if derivative == "interval":
        return _interval_arrays(ds, target, library, list(gp_inputs), runs, position)
    cols = list(library.columns)
    gp = list(gp_inputs)
    names = list(dict.fromkeys([target, *cols, *gp]))
    data, sources = dataset_columns(ds, names, runs=runs, derivative=derivative)
    idx = {n: i for i, n in enumerate(names)}
    Phi = library.transform(data[:, [idx[c] for c in cols]])
    X = data[:, [idx[c] for c in gp]] if gp else None
    return Phi, data[:, idx[target]], X, sources


def _interval_arrays(ds: Any, target: str, library: Any, gp: list[str],
                     runs: Sequence[int] | None, position: str | None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, dict[str, str]]:
    """:func:`law_arrays` with ``derivative="interval"`` (module doc)."""
    from fmu_surrogate.fmu.dataset import load_dataset, run_arrays
    from fmu_surrogate.identify.laws.interval import interval_form

    if not hasattr(ds, "data_vars"):
        ds = load_dataset(ds)
    velocity = _inner(target)
    if velocity is None or position is None:
        raise LawDataError(f"derivative='interval' regresses a second-order law der(VELOCITY) = "
                           f"…: give target='der(VELOCITY)' and position=POSITION (got "
                           f"target={target!r}, position={position!r}).")
    cols = list(library.columns)
    names = list(dict.fromkeys([position, velocity, *cols, *gp]))
    missing = sorted(set(names) - _recorded(ds))
    if missing:
        raise LawDataError(f"derivative='interval' needs the recorded columns {missing} (the "
                           f"position, the velocity and every term's column); record them when "
                           f"harvesting.")
    idx = [names.index(c) for c in cols]
    gidx = [names.index(c) for c in gp]
    Phi, y, X = [], [], []
    for t, A in run_arrays(ds, names, runs=runs):
        P, tgt = interval_form(t, A, names, position=position, velocity=velocity,
                               transform=lambda B: library.transform(B[:, idx]))
        Phi.append(P)
        y.append(tgt)
        if gp:
            X.append(interval_form(t, A, names, position=position, velocity=velocity,
                                   transform=lambda B: B[:, gidx])[0])
    if not Phi:
        raise LawDataError("no successful run to read: the dataset has no run with status ok "
                           "among those selected.")
    sources = {n: "recorded" for n in names}
    sources[target] = "interval mean (exact)"
    return (np.vstack(Phi), np.concatenate(y), np.vstack(X) if gp else None,
            {n: sources[n] for n in [target, *cols, *gp]})
