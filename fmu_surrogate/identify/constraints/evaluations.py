"""The objective ``J(w)`` over an FMU and the store of its evaluations (docs/design.md §6).

Every parameter vector ``w`` that is not in the cache becomes one run of a harvest
(:func:`fmu_surrogate.harvest`): worker isolation, wall-clock timeout, failure classification
with the FMU's own message.  A batch of vectors (a finite-difference gradient, a population, a
design) is one harvest whose runs go to parallel workers.  Each batch is written as a harvest
dataset ``DIR/batch-<hash>.nc``; the harvest's own run store makes a batch resumable after
``kill -9``, and the finished batch files are the evaluation cache: a search started again on the
same directory re-runs nothing (the optimisers are deterministic, so they ask for the same
vectors, which are then read from the cache).

The store keeps simulations, not costs: measured data can change between searches on the same
directory; the cost is recomputed from the stored outputs.
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

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["BudgetExhausted", "Evaluation", "EvaluationStore", "StoreDefinitionError"]

_DEFINITION = "search.json"
_ORDER = "order.jsonl"


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
        Simulations allowed (cached vectors are free); beyond it :class:`BudgetExhausted`.
    on_run : callable, optional
        Called with each new :class:`Evaluation` (progress bars).
    """

    def __init__(self, fmu: str | os.PathLike, parameters: Sequence[str],
                 outputs: Sequence[str], y_measured: Any, *,
                 inputs: Mapping[str, Any] | None = None, stop_time: float | None = None,
                 step: float | None = None, workers: int | None = None, timeout: float = 60.0,
                 directory: str | os.PathLike | None = None, max_runs: int | None = None,
                 on_run: Callable[[Evaluation], None] | None = None) -> None:
        from fmu_surrogate.fmu.campaign import experiment_grid
        from fmu_surrogate.fmu.model import open_fmu

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
            raise ValueError(
                f"y_measured has shape {y.shape}; it must be (N, len(outputs)) = "
                f"({self.time.size}, {len(self.outputs)}) on the experiment grid "
                f"{self.start_time:g}:{self.step:g}:{self.stop_time:g}; resample the "
                f"measurements or give stop_time/step of their grid.")
        if not np.all(np.isfinite(y)):
            raise ValueError("y_measured contains NaN or inf; remove or interpolate those "
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
        self._datasets: list[Any] = []  # the batch datasets, in evaluation order
        self.n_runs = 0  # simulations of this session (not the cached ones)
        self._check_definition()
        self._load()

    # ------------------------------------------------------------------ persistence
    def _definition(self) -> dict[str, Any]:
        return {"format": "fmu-surrogate constraint-discovery evaluations", "version": 1,
                "fmu_sha256": self.info.sha256, "parameters": self.parameters,
                "outputs": self.outputs,
                "time": [self.start_time, self.stop_time, self.step],
                "inputs": {k: s.describe() for k, s in sorted(self.inputs.items())},
                "timeout": self.timeout}

    def _check_definition(self) -> None:
        path = self.directory / _DEFINITION
        text = json.dumps(self._definition(), sort_keys=True, default=float)
        if path.is_file():
            old = json.loads(path.read_text())
            if old != json.loads(text):
                raise StoreDefinitionError(
                    f"{self.directory} holds the evaluations of a different set-up (FMU, "
                    f"parameters, outputs, experiment or inputs differ); use another directory "
                    f"or delete this one.")
        else:
            path.write_text(text)

    def _batch_files(self) -> list[Path]:
        order = self.directory / _ORDER
        names: list[str] = []
        if order.is_file():
            for line in order.read_text().splitlines():
                try:
                    names.append(json.loads(line))
                except json.JSONDecodeError:  # a line cut by a kill: its batch is found below
                    pass
        listed = set(names)
        rest = sorted(p.name for p in self.directory.glob("batch-*.nc") if p.name not in listed)
        return [self.directory / n for n in [*names, *rest] if (self.directory / n).is_file()]

    def _load(self) -> None:
        from fmu_surrogate.fmu.dataset import load_dataset

        for path in self._batch_files():
            self._ingest(load_dataset(path), count=False)

    def _ingest(self, ds: Any, count: bool) -> list[bytes]:
        from fmu_surrogate.fmu.dataset import run_arrays

        keys = []
        self._datasets.append(ds)
        n = ds.sizes["run"]
        W = np.column_stack([np.asarray(ds[f"param:{p}"].values, dtype=float)
                             for p in self.parameters]).reshape(n, len(self.parameters))
        arrays = run_arrays(ds, self.outputs, only_ok=False)
        for i in range(n):
            k = _key(W[i])
            keys.append(k)
            if k in self._sims:
                continue
            ok = str(ds["status"].values[i]) == "ok"
            Y = arrays[i][1] if ok else None
            self._sims[k] = (ok, str(ds["failure_kind"].values[i]), str(ds["message"].values[i]),
                             float(ds["wall_time"].values[i]), Y)
            self._w[k] = W[i].copy()
            self._pos[k] = len(self._order)
            self._order.append(k)
            if count:
                self.n_runs += 1
                if self.on_run is not None:
                    self.on_run(self._evaluation(k))
        return keys

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
            raise ValueError(f"W has {W.shape[1]} columns; give one per parameter "
                             f"{self.parameters}.")
        if not np.all(np.isfinite(W)):
            raise ValueError("parameter vectors must be finite.")
        todo: dict[bytes, np.ndarray] = {}
        for w in W:
            k = _key(w)
            if k not in self._sims:
                todo.setdefault(k, w)
        exhausted = False
        if self.max_runs is not None and len(todo) > self.max_runs - self.n_runs:
            keep = max(0, self.max_runs - self.n_runs)
            todo = dict(list(todo.items())[:keep])
            exhausted = True
        if todo:
            self._simulate(np.array(list(todo.values())))
        if exhausted:
            raise BudgetExhausted(f"the budget of {self.max_runs} FMU runs is used up.")
        return [self._evaluation(_key(w)) for w in W]

    def _simulate(self, W: np.ndarray) -> None:
        from fmu_surrogate.fmu.campaign import harvest

        h = hashlib.sha256(W.tobytes()).hexdigest()[:20]
        name = f"batch-{h}.nc"
        ds = harvest(self.fmu, self.directory / name,
                     signals=[self.inputs] if self.inputs else None,
                     parameters=[dict(zip(self.parameters, map(float, w))) for w in W],
                     stop_time=self.stop_time, step=self.step, record=self.outputs,
                     workers=min(self.workers or os.cpu_count() or 1, len(W)),
                     timeout=self.timeout, progress=False, complevel=0)
        with open(self.directory / _ORDER, "a") as f:
            f.write(json.dumps(name) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self._ingest(ds, count=True)

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

        from fmu_surrogate.fmu.dataset import dataset_to_records, records_to_dataset

        records = {}
        for batch in self._datasets:
            for r in dataset_to_records(batch):
                k = _key(np.array([r.params[p] for p in self.parameters]))
                records.setdefault(k, r)
        ordered = []
        for i, k in enumerate(self._order):
            r = records[k]
            ordered.append(type(r)(index=i, params=r.params, signals=r.signals, status=r.status,
                                   failure_kind=r.failure_kind, message=r.message,
                                   values=r.values, wall_time=r.wall_time))
        if not ordered:
            raise ValueError("no evaluations yet; run a search first.")
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
        """Remove the temporary directory (if the store made one)."""
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
