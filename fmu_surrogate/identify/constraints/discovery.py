"""``ConstraintDiscovery``: learn component parameters and where they are feasible, from FMU runs.

See docs/design.md §6 and :mod:`~fmu_surrogate.identify.constraints.algorithms`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from fmu_surrogate.errors import FmuSurrogateError
from fmu_surrogate.identify.constraints.algorithms import (
    OPTIMIZERS,
    POPULATION_OPTIMIZERS,
    Search,
    SearchSettings,
    run_algorithm1,
    run_restarting,
)
from fmu_surrogate.identify.constraints.evaluations import EvaluationStore
from fmu_surrogate.identify.constraints.feasibility import FeasibilityModel, make_feasibility

__all__ = ["ConstraintDiscovery", "DiscoveryError", "DiscoveryResult"]


class DiscoveryError(FmuSurrogateError, ValueError):
    """A bad setting of :class:`ConstraintDiscovery`; the message names the fix."""


@dataclass(frozen=True)
class DiscoveryResult:
    """What a constraint-discovery search found.

    Parameters
    ----------
    w : ndarray, shape (p,)
        The best feasible parameters (lowest ``J`` among the successful runs), divided by
        ``w[normalize]`` when ``normalize`` was given.
    w_raw : ndarray, shape (p,)
        The same, not normalised (the values the FMU ran with).
    cost : float
        ``J(w)``: mean over the time grid of the squared output error summed over outputs.
    error : float
        Average absolute output error at ``w`` (mean over time and outputs, output units).
    feasibility : FeasibilityModel
        ``q`` trained on every evaluation of the search.
    evaluations : xarray.Dataset
        Every evaluation as a harvest dataset (status, failure kind, FMU message, parameters,
        outputs, ``J``, ``output_error``).
    n_runs : int
        FMU simulations of this call (cached vectors not counted).
    n_failed : int
        Failed evaluations among all evaluations of the search.
    n_evaluations : int
        Distinct parameter vectors evaluated (including earlier sessions on the same store).
    stopping_reason : str
        Why the search ended.
    history : dict of ndarray
        Per evaluation, in order: ``w`` (n, p), ``ok``, ``cost`` (J), ``error``,
        ``best_cost`` (the lowest feasible J so far), ``best_w`` (n, p, normalised) and
        ``best_error`` (the average output error there); and
        ``objective``: the value of the algorithm's objective at each call (``J̃``, ``J'`` or
        the acquisition's target) as pairs (run, value), shape (m, 2).
    time : float
        Wall-clock seconds.
    algorithm : str
        ``"1"``, ``"2"``, ``"3"`` or ``"bo"`` and the optimiser.
    """

    w: np.ndarray
    w_raw: np.ndarray
    cost: float
    error: float
    feasibility: FeasibilityModel = field(repr=False)
    evaluations: Any = field(repr=False)
    n_runs: int
    n_failed: int
    n_evaluations: int
    stopping_reason: str
    history: dict[str, np.ndarray] = field(repr=False)
    time: float
    algorithm: str

    def summary(self) -> dict[str, Any]:
        """The numbers of the result as plain JSON-ready values.

        Returns
        -------
        dict
        """
        return {"algorithm": self.algorithm, "w": self.w.tolist(), "w_raw": self.w_raw.tolist(),
                "cost": self.cost, "average_output_error": self.error, "n_runs": self.n_runs,
                "n_failed": self.n_failed, "n_evaluations": self.n_evaluations,
                "stopping_reason": self.stopping_reason, "time": self.time}


class ConstraintDiscovery(BaseEstimator):
    """Learn parameters of a component law inside an FMU and a model of where they are feasible.

    The method of Matei, de Kleer and Minhas (docs/design.md §6): failed simulations are data.
    Every evaluation of ``J(w)`` is a harvest run (isolated worker, timeout, failure kind and the
    FMU's message), cached and stored so that a killed search resumes without re-running
    anything; batches (finite-difference gradients, designs) run in parallel workers.

    Parameters
    ----------
    fmu : path
        The system FMU.
    parameters : sequence of str
        FMU parameters that make up ``w``.
    outputs : sequence of str
        FMU variables compared with the measurements.
    inputs : dict, optional
        ``{input name: Signal}`` of the experiment.
    stop_time, step : float, optional
        The experiment grid (default: the FMU's default experiment).
    algorithm : {1, 2, 3, "bo"}
        1: sequence of constrained problems; 2: bump cost only; 3: one-shot barrier heuristic
        with ``q`` updated after every simulation; ``"bo"``: Bayesian optimisation with a GP of
        ``log J`` and constrained expected improvement ``EI · q`` (needs ``bounds``).
    optimizer : str
        scipy method: COBYLA, SLSQP, Powell, Nelder-Mead, BFGS, CG, L-BFGS-B (case-insensitive;
        Algorithm 1 needs COBYLA or SLSQP), or ``"differential-evolution"`` (Algorithms 2 and 3
        with ``bounds``: each generation is one batch of parallel runs).  Ignored by ``"bo"``.
    feasibility : {"logistic", "gp", "mlp"} or FeasibilityModel
        The model ``q``.
    max_runs : int
        FMU simulations allowed (distinct parameter vectors, counting those already in the
        store of a resumed search).
    normalize : int, optional
        Index of the parameter that ``w`` is divided by in the result (a law invariant to
        scaling, as ``w1 i = w2 v² + w3 v³``).
    workers : int, optional
        Worker processes for batches (default: CPU count).
    timeout : float
        Wall-clock limit per simulation (s).
    bounds : sequence of (low, high), optional
        Search box of ``"bo"`` (a parameter with ``low == high`` is held fixed) and of
        differential evolution.
    settings : SearchSettings, optional
        Constants of the algorithms (default: the paper's).
    random_state : int
        Seed (``"bo"``, differential evolution).
    """

    def __init__(self, fmu: str | os.PathLike, parameters: Sequence[str], outputs: Sequence[str],
                 inputs: Mapping[str, Any] | None = None, stop_time: float | None = None,
                 step: float | None = None, algorithm: int | str = 3,
                 optimizer: str = "Nelder-Mead", feasibility: str | FeasibilityModel = "logistic",
                 max_runs: int = 300, normalize: int | None = None, workers: int | None = None,
                 *, timeout: float = 60.0, bounds: Sequence[tuple[float, float]] | None = None,
                 settings: SearchSettings | None = None, random_state: int = 0) -> None:
        self.fmu = fmu
        self.parameters = parameters
        self.outputs = outputs
        self.inputs = inputs
        self.stop_time = stop_time
        self.step = step
        self.algorithm = algorithm
        self.optimizer = optimizer
        self.feasibility = feasibility
        self.max_runs = max_runs
        self.normalize = normalize
        self.workers = workers
        self.timeout = timeout
        self.bounds = bounds
        self.settings = settings
        self.random_state = random_state

    # ------------------------------------------------------------------ checks
    def _method(self) -> str:
        key = str(self.optimizer).lower().replace("_", "-")
        key = {"nelder": "nelder-mead", "lbfgs": "l-bfgs-b", "l-bfgs": "l-bfgs-b"}.get(key, key)
        if key in POPULATION_OPTIMIZERS:
            if str(self.algorithm) not in ("2", "3") or self.bounds is None:
                raise DiscoveryError("optimizer 'differential-evolution' needs algorithm 2 or 3 "
                                     "and bounds=[(low, high)] per parameter.")
            return POPULATION_OPTIMIZERS[key]
        if key not in OPTIMIZERS:
            raise DiscoveryError(f"optimizer {self.optimizer!r} is not supported; choose one of "
                                 f"{', '.join(OPTIMIZERS.values())} or differential-evolution.")
        method = OPTIMIZERS[key]
        if str(self.algorithm) == "1" and method not in ("COBYLA", "SLSQP"):
            raise DiscoveryError(f"Algorithm 1 solves constrained problems: use optimizer "
                                 f"'COBYLA' or 'SLSQP', not {method!r} (or algorithm=3).")
        return method

    def _check(self, x0: Any) -> tuple[str, np.ndarray]:
        algorithm = str(self.algorithm).lower()
        if algorithm not in ("1", "2", "3", "bo"):
            raise DiscoveryError(f"algorithm must be 1, 2, 3 or 'bo', got {self.algorithm!r}.")
        if not (isinstance(self.max_runs, int) and self.max_runs >= 1):
            raise DiscoveryError(f"max_runs must be a positive integer, got {self.max_runs!r}.")
        x0 = np.asarray(x0, dtype=float).ravel()
        p = len(self.parameters)
        if x0.shape != (p,) or not np.all(np.isfinite(x0)):
            raise DiscoveryError(f"x0 must be {p} finite numbers (one per parameter "
                                 f"{list(self.parameters)}), got {x0.tolist()}.")
        if self.normalize is not None and not (isinstance(self.normalize, int)
                                               and 0 <= self.normalize < p):
            raise DiscoveryError(f"normalize must be a parameter index 0..{p - 1} or None, got "
                                 f"{self.normalize!r}.")
        if algorithm == "bo":
            b = np.asarray(self.bounds if self.bounds is not None else [], dtype=float)
            if b.shape != (p, 2) or np.any(b[:, 1] < b[:, 0]):
                raise DiscoveryError(f"algorithm='bo' needs bounds=[(low, high)] * {p} with "
                                     f"low <= high, got {self.bounds!r}.")
        return algorithm, x0

    # ------------------------------------------------------------------ fit
    def fit(self, y_measured: Any, x0: Any, *, out: str | os.PathLike | None = None,
            progress: bool = True) -> DiscoveryResult:
        """Search ``w`` from ``x0`` to match ``y_measured``; return the frozen result.

        Parameters
        ----------
        y_measured : array_like, shape (N, len(outputs))
            Measurements on the experiment grid.
        x0 : array_like, shape (p,)
            Initial parameters.
        out : path, optional
            Directory of the evaluation store (kept; a search started again on it re-runs
            nothing that finished).  Default: a temporary directory.
        progress : bool
            Show a progress bar of the FMU runs.

        Returns
        -------
        DiscoveryResult
            Also stored as ``self.result_``.
        """
        algorithm, x0 = self._check(x0)
        method = "GP-EI" if algorithm == "bo" else self._method()
        t0 = time.perf_counter()
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=self.max_runs, desc=f"discover (alg. {algorithm}, {method})",
                       unit="run", mininterval=0.5)

        def on_run(e: Any) -> None:
            if bar is not None:
                bar.update(1)
                if not e.ok:
                    bar.set_postfix_str(f"last failure: {e.failure_kind}", refresh=False)

        store = EvaluationStore(self.fmu, self.parameters, self.outputs, y_measured,
                                inputs=self.inputs, stop_time=self.stop_time, step=self.step,
                                workers=self.workers, timeout=self.timeout, directory=out,
                                max_runs=self.max_runs, on_run=on_run)
        try:
            search = Search(store, make_feasibility(self.feasibility),
                            self.settings or SearchSettings())
            if algorithm == "1":
                reason = run_algorithm1(search, x0, method)
            elif algorithm in ("2", "3"):
                bounds = None if self.bounds is None else np.asarray(self.bounds, dtype=float)
                reason = run_restarting(search, x0, method, int(algorithm), bounds,
                                        self.random_state)
            else:
                from fmu_surrogate.identify.constraints.bayesopt import run_bayesopt

                reason = run_bayesopt(search, x0, np.asarray(self.bounds, dtype=float),
                                      self.random_state)
            search.retrain()
            self.result_ = self._result(search, reason, f"{algorithm} ({method})",
                                        time.perf_counter() - t0)
        finally:
            if bar is not None:
                bar.close()
            store.close()
        return self.result_

    def _normalised(self, W: np.ndarray) -> np.ndarray:
        if self.normalize is None:
            return W
        d = W[..., self.normalize:self.normalize + 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return W / d

    def _result(self, search: Search, reason: str, algorithm: str,
                seconds: float) -> DiscoveryResult:
        evs = search.store.evaluations()
        if not evs:
            raise DiscoveryError("the search evaluated nothing; raise max_runs.")
        W = np.array([e.w for e in evs])
        ok = np.array([e.ok for e in evs])
        cost = np.array([e.cost for e in evs])
        err = np.array([e.error for e in evs])
        masked = np.where(ok, cost, np.inf)
        best = np.minimum.accumulate(masked)
        idx = np.array([int(np.argmin(masked[:i + 1])) for i in range(len(evs))])
        if not ok.any():
            raise DiscoveryError(
                f"none of the {len(evs)} evaluations simulated (last failure: "
                f"{evs[-1].failure_kind}: {evs[-1].message[:200]}); start from parameters that "
                f"run, or raise max_runs.")
        i_best = int(np.argmin(masked))
        trace = np.array(search.trace, dtype=float).reshape(-1, 2)
        history = {"w": W, "ok": ok, "cost": cost, "error": err,
                   "best_cost": np.where(np.isfinite(best), best, np.nan),
                   "best_w": self._normalised(W[idx]),
                   "best_error": np.where(np.isfinite(best), err[idx], np.nan),
                   "objective": trace}
        for v in history.values():
            v.setflags(write=False)
        return DiscoveryResult(
            w=self._normalised(W[i_best]), w_raw=W[i_best].copy(), cost=float(cost[i_best]),
            error=float(err[i_best]), feasibility=search.model,
            evaluations=search.store.dataset(), n_runs=search.store.n_runs,
            n_failed=int((~ok).sum()), n_evaluations=len(evs), stopping_reason=reason,
            history=history, time=seconds, algorithm=algorithm)
