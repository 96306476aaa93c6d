"""The objective ``J(w)`` over an FMU and the store of its evaluations (docs/design.md §6).

Every parameter vector ``w`` that is not in the cache becomes one run of the harvest machinery:
a campaign of the FMU validates the set-up, and its persistent isolated workers
(:class:`~fmu_surrogate.fmu.runner.pool.WorkerPool`: wall-clock timeout, crash isolation, failure
classification with the FMU's own message) run the vectors; a batch of vectors (a
finite-difference gradient, a population, a design) goes to parallel workers at once.  Each
finished run is appended to a harvest run store (:class:`~fmu_surrogate.fmu.campaigns.store.RunStore`,
``DIR/runs.parts``: one CRC-checked record per run, a torn tail cut on reopening) together with
its parameter vector, so a search killed with ``kill -9`` loses nothing that finished.  The
store is the evaluation cache: a search started again on the same directory re-runs nothing
(the optimisers are deterministic, so they ask for the same vectors, now read from the cache).
:meth:`EvaluationStore.dataset` assembles the evaluations as a harvest dataset.

The store keeps simulations, not costs: the measured data may change between searches on the
same directory; the cost is recomputed from the stored outputs.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fmu_surrogate.errors import FmuSurrogateError, InvalidInputError

__all__ = ["BudgetExhausted", "Evaluation", "EvaluationStore", "StoreDefinitionError"]



class StoreDefinitionError(FmuSurrogateError, ValueError):
    """The evaluation directory belongs to a different simulation set-up."""


class BudgetExhausted(FmuSurrogateError, RuntimeError):
    """The run budget ``max_runs`` is used up (caught by the search, which then stops)."""


@dataclass(frozen=True)
class Evaluation:
    """One evaluated parameter vector.

    Parameters
    ----------
    w : ndarray, shape (p,)
        The parameter vector.
    ok : bool
        Whether the simulation succeeded (the feasibility label).
    failure_kind : str
        ``""`` when ok, else the harvest's failure kind (``error_status``, ``crash``,
        ``timeout``, ...).
    message : str
        The FMU's message for a failure.
    cost : float
        ``J(w)``: mean over the time grid of the squared output error summed over outputs
        (NaN for a failure).
    error : float
        Average absolute output error (mean over time and outputs; NaN for a failure).
    wall_time : float
        Seconds the run took in its worker.
    run : int
        Position of the evaluation in the search's dataset (order of first evaluation).
    """

    w: np.ndarray
    ok: bool
    failure_kind: str
    message: str
    cost: float
    error: float
    wall_time: float
    run: int


def _key(w: np.ndarray) -> bytes:
    return np.ascontiguousarray(w, dtype=np.float64).tobytes()


class EvaluationStore:
    """Cached, persistent, parallel evaluations of ``J(w)`` for one FMU set-up.

    Parameters
    ----------
    fmu : path
        The ``.fmu`` file.
    parameters : sequence of str
        FMU parameters that make up ``w``, in order.
    outputs : sequence of str
        FMU variables compared with the measurements.
    y_measured : array_like, shape (N, len(outputs))
        Measurements on the experiment grid ``start, start + step, ..., stop`` (N points).
    inputs : dict, optional
        ``{input name: Signal}`` of the experiment (:mod:`fmu_surrogate.signals`).
    stop_time, step : float, optional
        The experiment (default: the FMU's default experiment).
    workers : int, optional
        Worker processes per batch (default: the CPU count, at most one per run).
    timeout : float
        Wall-clock limit per run (s).
    directory : path, optional
        Where the evaluations are kept (default: a temporary directory, removed by
        :meth:`close`).
    max_runs : int, optional
        Distinct parameter vectors the store may hold (including those of earlier sessions on
        the same directory, so that a resumed search stops where the uninterrupted one would);
        beyond it :class:`BudgetExhausted`.
    on_run : callable, optional
        Called with each new :class:`Evaluation` (progress bars).
    """

    def __init__(self, fmu: str | os.PathLike, parameters: Sequence[str],
                 outputs: Sequence[str], y_measured: Any, *,
                 inputs: Mapping[str, Any] | None = None, stop_time: float | None = None,
                 step: float | None = None, workers: int | None = None, timeout: float = 60.0,
                 directory: str | os.PathLike | None = None, max_runs: int | None = None,
                 on_run: Callable[[Evaluation], None] | None = None) -> None:
        from fmu_surrogate.fmu.campaigns.campaign import experiment_grid
        from fmu_surrogate.fmu.model.loading import open_fmu

        self.info = open_fmu(fmu)
        self.fmu = str(fmu)
        self.parameters = list(parameters)
        self.outputs = list(outputs)
        self.info.check_names(self.parameters, "variable")
        self.info.check_names(self.outputs, "variable")
        self.inputs = dict(inputs or {})
        self.start_time, self.stop_time, self.step, self.time = experiment_grid(
            self.info, None, stop_time, step)
        y = np.asarray(y_measured, dtype=float)
        if y.ndim == 1 and len(self.outputs) == 1:
            y = y[:, None]
        if y.shape != (self.time.size, len(self.outputs)):
            raise InvalidInputError(
                f"y_measured has shape {y.shape}; it must be (N, len(outputs)) = "
                f"({self.time.size}, {len(self.outputs)}) on the experiment grid "
                f"{self.start_time:g}:{self.step:g}:{self.stop_time:g}; resample the "
                f"measurements or give stop_time/step of their grid.")
        if not np.all(np.isfinite(y)):
            raise InvalidInputError("y_measured contains NaN or inf; remove or interpolate those "
                                    "samples.")
        self.y_measured = y
        self.workers = workers
        self.timeout = timeout
        self.max_runs = max_runs
        self.on_run = on_run
        self._tmp = None
        if directory is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="constraint-discovery-")
            directory = self._tmp.name
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._sims: dict[bytes, tuple[bool, str, str, float, np.ndarray | None]] = {}
        self._order: list[bytes] = []  # first-evaluation order of the vectors
        self._w: dict[bytes, np.ndarray] = {}
        self._pos: dict[bytes, int] = {}
        self.n_runs = 0  # simulations of this session (not the cached ones)
        self._open_store()

    # ------------------------------------------------------------------ persistence
    def _definition(self) -> dict[str, Any]:
        return {"format": "fmu-surrogate constraint-discovery evaluations", "version": 1,
                "fmu_sha256": self.info.sha256, "parameters": self.parameters,
                "outputs": self.outputs,
                "time": [self.start_time, self.stop_time, self.step],
                "inputs": {k: s.describe() for k, s in sorted(self.inputs.items())},
                "timeout": self.timeout}

    def _open_store(self) -> None:
        from fmu_surrogate.fmu.campaigns.campaign import Campaign
        from fmu_surrogate.fmu.campaigns.store import RunStore, StoreMismatchError

        self._campaign = Campaign(self.fmu, [self.inputs] if self.inputs else None,
                                  [dict.fromkeys(self.parameters, 0.0)],
                                  stop_time=self.stop_time, step=self.step, record=self.outputs)
        self._cfg = self._campaign.runner_config()
        text = json.dumps(self._definition(), sort_keys=True, default=float)
        manifest = {**json.loads(text), "campaign_hash": hashlib.sha256(text.encode()).hexdigest(),
                    "n_columns": self._cfg.n_columns, "time": {"n": int(self.time.size)}}
        try:
            self._store = RunStore.open(self.directory / "runs.parts", manifest)
        except StoreMismatchError:
            raise StoreDefinitionError(
                f"{self.directory} holds the evaluations of a different set-up (FMU, parameters, "
                f"outputs, experiment or inputs differ); use another directory or delete this "
                f"one.") from None
        self._pool = None
        for header, data in self._store.read():
            self._add(header, data, count=False)

    def _add(self, header: dict[str, Any], data: np.ndarray, count: bool) -> None:
        w = np.asarray(header["w"], dtype=float)
        k = _key(w)
        if k in self._sims:
            return
        ok = not header.get("kind")
        Y = None
        if ok:
            Y = np.column_stack([data[:, self._cfg.columns[n][0]] for n in self.outputs])
        self._sims[k] = (ok, str(header.get("kind", "")), str(header.get("message", "")),
                         float(header.get("wall", float("nan"))), Y)
        self._w[k] = w
        self._pos[k] = len(self._order)
        self._order.append(k)
        if count:
            self.n_runs += 1
            if self.on_run is not None:
                self.on_run(self._evaluation(k))

    # ------------------------------------------------------------------ evaluation
    def _evaluation(self, k: bytes) -> Evaluation:
        ok, kind, message, wall, Y = self._sims[k]
        cost = error = float("nan")
        if ok:
            d = Y - self.y_measured
            cost = float(np.mean(np.sum(d**2, axis=1)))
            error = float(np.mean(np.abs(d)))
        return Evaluation(self._w[k], ok, kind, message, cost, error, wall, self._pos[k])

    def cached(self, w: Any) -> bool:
        """Whether ``w`` has been simulated (in this session or a previous one).

        Parameters
        ----------
        w : array_like, shape (p,)
            A parameter vector.

        Returns
        -------
        bool
        """
        return _key(np.asarray(w, dtype=float)) in self._sims

    def evaluate(self, W: Any) -> list[Evaluation]:
        """Evaluate the rows of ``W``: cached ones from the store, the others as one batch.

        Parameters
        ----------
        W : array_like, shape (n, p) or (p,)
            Parameter vectors.

        Returns
        -------
        list of Evaluation
            One per row, in order.

        Raises
        ------
        BudgetExhausted
            ``max_runs`` simulations were reached; the vectors that fitted in the budget are
            simulated and stored first.
        """
        W = np.atleast_2d(np.asarray(W, dtype=float))
        if W.shape[1] != len(self.parameters):
            raise InvalidInputError(f"W has {W.shape[1]} columns; give one per parameter "
                                    f"{self.parameters}.")
        if not np.all(np.isfinite(W)):
            raise InvalidInputError("parameter vectors must be finite.")
        todo: dict[bytes, np.ndarray] = {}
        for w in W:
            k = _key(w)
            if k not in self._sims:
                todo.setdefault(k, w)
        exhausted = False
        if self.max_runs is not None and len(todo) > self.max_runs - len(self._order):
            keep = max(0, self.max_runs - len(self._order))
            todo = dict(list(todo.items())[:keep])
            exhausted = True
        if todo:
            self._simulate(np.array(list(todo.values())))
        if exhausted:
            raise BudgetExhausted(f"the budget of {self.max_runs} FMU runs is used up.")
        return [self._evaluation(_key(w)) for w in W]

    def _simulate(self, W: np.ndarray) -> None:
        from fmu_surrogate.fmu.runner.pool import RunSpec, WorkerPool

        if self._pool is None:
            n = self.workers or os.cpu_count() or 1
            self._pool = WorkerPool(self._cfg, workers=n, timeout=self.timeout)
        first = len(self._order)
        specs = [RunSpec(first + i, dict(zip(self.parameters, map(float, w))), 0)
                 for i, w in enumerate(W)]
        by_index = {s.index: w for s, w in zip(specs, W)}
        results: dict[int, Any] = {}

        def on_result(r: Any) -> None:
            header = {**r.store_header(), "w": by_index[r.index].tolist()}
            self._store.append(header, r.data)  # on disk before anything else happens
            results[r.index] = (header, np.array(r.data))

        self._pool.run(specs, on_result)
        for i in sorted(results):  # evaluation order = request order, not completion order
            self._add(*results[i], count=True)

    # ------------------------------------------------------------------ results
    def evaluations(self) -> list[Evaluation]:
        """Every evaluation so far (including those of earlier sessions), in order."""
        return [self._evaluation(k) for k in self._order]

    def dataset(self) -> Any:
        """All evaluations as one harvest dataset (``run`` = order of first evaluation).

        Returns
        -------
        xarray.Dataset
            The harvest format (per-run ``status``, ``failure_kind``, ``message``,
            ``param:<w_i>``, the recorded outputs), with the per-run cost ``J`` and average
            output error ``output_error`` added.
        """
        import xarray as xr

        from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

        ordered = []
        for i, k in enumerate(self._order):
            ok, kind, message, wall, Y = self._sims[k]
            values = {n: Y[:, j] for j, n in enumerate(self.outputs)} if ok else {}
            ordered.append(RunRecord(index=i, params=dict(zip(self.parameters, self._w[k])),
                                     signals={n: s.describe() for n, s in self.inputs.items()},
                                     status="ok" if ok else "failed", failure_kind=kind,
                                     message=message, values=values, wall_time=wall))
        if not ordered:
            raise InvalidInputError("no evaluations yet; run a search first.")
        ds = records_to_dataset(ordered, self.time, self.info, self.outputs,
                                parameters=self.parameters,
                                attrs={"start_time": self.start_time,
                                       "stop_time": self.stop_time, "step": self.step,
                                       "constraint_discovery": json.dumps(
                                           self._definition(), default=float)})
        ev = self.evaluations()
        ds["J"] = xr.DataArray(np.array([e.cost for e in ev]), dims=("run",),
                               attrs={"long_name": "mean squared output error J(w)"})
        ds["output_error"] = xr.DataArray(np.array([e.error for e in ev]), dims=("run",),
                                          attrs={"long_name": "average absolute output error"})
        return ds

    def close(self) -> None:
        """Stop the workers, close the run store, remove the temporary directory (if any)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        self._store.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
