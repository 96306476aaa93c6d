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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fmu_surrogate.errors import FmuSurrogateError
from fmu_surrogate.identify.derivatives import estimate_derivatives

__all__ = ["LawDataError", "dataset_columns", "law_arrays"]


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


def law_arrays(ds: Any, *, target: str, library: Any, gp_inputs: Sequence[str] = (),
               runs: Sequence[int] | None = None, derivative: str = "spline",
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
    derivative : {"spline", "fd", "gp", "interval"}
        How derivatives the dataset does not hold are estimated; ``"interval"``: the integral
        form of a second-order law (module doc; ``target = "der(VELOCITY)"``, rows are the
        sample intervals).
    position : str, optional
        With ``"interval"``: the recorded position whose derivative is the velocity.

    Returns
    -------
    Phi : ndarray, shape (N, K)
    y : ndarray, shape (N,)
    X : ndarray, shape (N, q) or None
    sources : dict
        ``"recorded"``, ``"estimated (<method>)"`` or ``"interval mean (exact)"`` per column.
    """
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
