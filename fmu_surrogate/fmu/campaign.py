"""Harvesting campaigns: FMU × input signals × parameter sets → dataset.

* :func:`harvest` — one call: validate, simulate every run in isolated workers (locally or on a
  Dask cluster), store finished runs as they complete, consolidate into a NetCDF dataset.
* :class:`Campaign` — the same in two steps (build and validate, then :meth:`Campaign.run`).
* :class:`HarvestSession` — drive an FMU yourself (set values, step, read) and record what you
  did as runs of the same dataset format.

Runs
----
Run ``i_p * n_signals + i_s`` uses parameter set ``parameters[i_p]`` and signal set
``signals[i_s]`` (``{input name: Signal}``); inputs without a signal keep their start value.
Every run is recorded on the common grid ``start, start + step, ..., stop``.

Storage and resume
------------------
Finished runs are appended to ``OUT.parts/`` (see :mod:`fmu_surrogate.fmu.store`) as they
complete, and consolidated into ``OUT`` once at the end (the store is then deleted).  The
campaign is identified by a hash of (FMU sha256, plan, signals, time grid, recorded variables,
interface, tolerance, explode threshold), kept in the store and as the dataset attribute
``campaign_hash``.  Running the same campaign again after an interruption — even ``kill -9`` —
skips the finished runs; a different campaign at the same path is refused unless
``overwrite=True``.  Running a finished campaign again returns the existing dataset.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import tempfile
import time as _time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.fmu.errors import ExperimentError, FMUError, SignalError
from fmu_surrogate.fmu.runner import (
    DEFAULT_EXPLODE_THRESHOLD,
    RunnerConfig,
    RunResult,
    RunSpec,
    WorkerPool,
    classify,
)
from fmu_surrogate.fmu.tempdirs import in_harvest_space, scratch_root

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr
    from typing_extensions import Self

    from fmu_surrogate.fmu.dataset import RunRecord
    from fmu_surrogate.fmu.model import FMUInfo

__all__ = ["Campaign", "HarvestSession", "experiment_grid", "harvest", "summarize"]


# ---------------------------------------------------------------------------- validation
def _finite_number(name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ExperimentError(f"{name} = {value!r} is not a number; give a time in seconds.") \
            from None
    if not math.isfinite(v):
        raise ExperimentError(f"{name} = {value!r} is not finite; give a finite time in seconds.")
    return v


def experiment_grid(info: FMUInfo | None, start_time: float | None = None,
                    stop_time: float | None = None, step: float | None = None
                    ) -> tuple[float, float, float, np.ndarray]:
    """Resolve and check the experiment; return ``(start, stop, step, time grid)``.

    Missing values come from the FMU's default experiment (start 0, stop start + 1, step
    (stop - start) / 500 when it has none).

    Raises
    ------
    ExperimentError
        Negative or non-finite times, ``stop <= start``, ``step <= 0``, a step larger than the
        experiment, or ``stop - start`` not a whole number of steps.
    """
    de = info.default_experiment if info is not None else None
    start = start_time if start_time is not None else (
        de.start_time if de is not None and de.start_time is not None else 0.0)
    start = _finite_number("start time", start)
    if stop_time is None:
        stop_time = de.stop_time if de is not None and de.stop_time is not None else start + 1.0
    stop = _finite_number("stop time", stop_time)
    if start < 0:
        raise ExperimentError(f"start time {start:g} is negative; experiments start at t >= 0 "
                              f"(use --start 0 / start_time=0).")
    if stop < 0:
        raise ExperimentError(f"stop time {stop:g} is negative; give a stop time after the start "
                              f"time {start:g} (e.g. --stop {start + 1:g}).")
    if stop <= start:
        raise ExperimentError(f"stop time {stop:g} is not after the start time {start:g}; give "
                              f"stop > start (e.g. --stop {start + 1:g}).")
    if step is None:
        step = de.step_size if de is not None and de.step_size else (stop - start) / 500.0
    step = _finite_number("step", step)
    if step <= 0:
        raise ExperimentError(f"step {step:g} must be > 0; give a positive communication step "
                              f"(e.g. --step {(stop - start) / 500:g}).")
    span = stop - start
    if step > span * (1 + 1e-12):
        raise ExperimentError(f"step {step:g} is longer than the experiment ({start:g} to "
                              f"{stop:g}); use a step of at most {span:g}.")
    n_exact = span / step
    n = round(n_exact)
    if abs(n_exact - n) > 1e-6 * max(1.0, n):
        raise ExperimentError(
            f"the experiment {start:g}..{stop:g} is not a whole number of steps of {step:g} "
            f"({n_exact:.6g} steps); use e.g. step = {span / max(1, n):.6g} or stop = "
            f"{start + max(1, n) * step:.6g}.")
    t = start + step * np.arange(n + 1, dtype=np.float64)
    t[-1] = stop
    return start, stop, step, t


def _settable(v) -> bool:
    return (v.causality in ("parameter", "input", "structuralParameter")
            or (v.initial in ("exact", "approx") and v.variability != "constant"))


def _normalise_signals(signals: Any) -> list[dict]:
    from fmu_surrogate.fmu.signals import Constant, Signal

    if signals is None:
        sets: list[Any] = [{}]
    elif isinstance(signals, Mapping):
        sets = [signals]
    elif isinstance(signals, (list, tuple)):
        sets = list(signals) or [{}]
    else:
        raise SignalError(f"signals must be a dict {{input name: Signal}} or a list of such dicts, "
                          f"got {type(signals).__name__}.")
    out = []
    for i, s in enumerate(sets):
        if not isinstance(s, Mapping):
            raise SignalError(f"signals[{i}] must be a dict {{input name: Signal}}, got "
                              f"{type(s).__name__}.")
        d = {}
        for name, sig in s.items():
            if isinstance(sig, (int, float)) and not isinstance(sig, bool):
                sig = Constant(float(sig))
            if not isinstance(sig, Signal):
                raise SignalError(f"input {name!r}: expected a Signal (Step, Chirp, ArraySignal, "
                                  f"...) or a number, got {type(sig).__name__}; wrap sampled "
                                  f"arrays in ArraySignal(t, values).")
            d[str(name)] = sig
        out.append(d)
    return out


def _normalise_parameters(parameters: Any) -> list[dict]:
    if parameters is None:
        return [{}]
    if isinstance(parameters, Mapping):
        parameters = [parameters]
    if not isinstance(parameters, (list, tuple)):
        raise ExperimentError(f"parameters must be a list of dicts {{name: value}} (one per run), "
                              f"got {type(parameters).__name__}; see fmu_surrogate.fmu.plans.")
    out = []
    for i, p in enumerate(parameters):
        if not isinstance(p, Mapping):
            raise ExperimentError(f"parameters[{i}] must be a dict {{name: value}}, got "
                                  f"{type(p).__name__}.")
        d = {}
        for k, v in p.items():
            if isinstance(v, (bool, np.bool_)):
                v = bool(v)
            elif isinstance(v, (int, float, np.integer, np.floating)):
                v = float(v)
                if not math.isfinite(v):
                    raise ExperimentError(f"parameters[{i}][{k!r}] = {v} is not finite; give a "
                                          f"finite value.")
            elif not isinstance(v, str):
                raise ExperimentError(f"parameters[{i}][{k!r}] = {v!r}: give a number, a bool "
                                      f"or a string.")
            d[str(k)] = v
        out.append(d)
    return out or [{}]


def default_record(info: FMUInfo) -> list[str]:
    """Inputs, outputs, states and state derivatives (in that order, without duplicates)."""
    names: dict[str, None] = {}
    for group in (info.inputs, info.outputs, info.states,
                  tuple(info.derivatives[s] for s in info.states if s in info.derivatives)):
        for n in group:
            names.setdefault(n, None)
    if not names:  # an FMU that declares none of these: record every non-constant variable
        for v in info.variables:
            if v.variability in ("continuous", "discrete") and v.type != "String":
                names.setdefault(v.name, None)
    return list(names)


# ---------------------------------------------------------------------------- campaign
class Campaign:
    """An FMU × signal sets × parameter sets, validated at construction.

    Parameters
    ----------
    fmu : path
        The ``.fmu`` file.
    signals : dict or list of dict, optional
        ``{input name: Signal}`` per signal set (numbers become :class:`Constant`); default: one
        set with every input at its start value.
    parameters : dict or list of dict, optional
        One dict ``{name: value}`` per parameter set (see :mod:`fmu_surrogate.fmu.plans`);
        default: one set with the FMU's defaults.
    start_time, stop_time, step : float, optional
        The experiment (default: the FMU's default experiment; see :func:`experiment_grid`).
    record : list of str, optional
        Variables to record (default: inputs, outputs, states, derivatives).
    interface : {"auto", "cs", "me"}
        Co-simulation or model exchange (auto: co-simulation if supported).
    tolerance : float, optional
        Relative tolerance for the FMU / CVode.
    explode_threshold : float
        ``|x|`` above this is a failure of kind ``"exploding"`` (default 1e10).
    allow_longer : bool
        Accept bounded signals that last longer than the experiment.

    Raises
    ------
    NotAnFMUError, ModelDescriptionError, NoBinaryError
        The path is not a usable FMU.
    UnknownVariableError
        A parameter, input or recorded name the FMU does not have (with close matches).
    ExperimentError, SignalError
        Bad times, a signal that does not fit the experiment, a name that cannot be set.
    """

    def __init__(self, fmu: str | os.PathLike, signals: Any = None, parameters: Any = None, *,
                 start_time: float | None = None, stop_time: float | None = None,
                 step: float | None = None, record: Sequence[str] | None = None,
                 interface: str = "auto", tolerance: float | None = None,
                 explode_threshold: float = DEFAULT_EXPLODE_THRESHOLD,
                 allow_longer: bool = False) -> None:
        from fmu_surrogate.fmu.model import open_fmu
        from fmu_surrogate.fmu.signals import check_signal_fits

        if interface not in ("auto", "cs", "me"):
            raise ExperimentError(f"interface must be 'auto', 'cs' or 'me', got {interface!r}.")
        info = open_fmu(fmu)
        info.require_binary()
        if interface == "cs" and not info.supports_cs:
            raise ExperimentError(f"{info.name} has no co-simulation interface; use "
                                  f"interface='me' or 'auto'.")
        if interface == "me" and not info.supports_me:
            raise ExperimentError(f"{info.name} has no model-exchange interface; use "
                                  f"interface='cs' or 'auto'.")
        if not (isinstance(explode_threshold, (int, float)) and explode_threshold > 0):
            raise ExperimentError(f"explode_threshold must be a positive number, got "
                                  f"{explode_threshold!r}.")
        self.info = info
        self.fmu_path = str(info.path)
        self.start_time, self.stop_time, self.step, self.time = experiment_grid(
            info, start_time, stop_time, step)

        self.signal_sets = _normalise_signals(signals)
        for s in self.signal_sets:
            info.check_names(s, "input")
            for name, sig in s.items():
                check_signal_fits(sig, self.start_time, self.stop_time, name=name,
                                  allow_longer=allow_longer)

        self.parameter_sets = _normalise_parameters(parameters)
        seen: dict[str, None] = {}
        for p in self.parameter_sets:
            for k in p:
                seen.setdefault(k, None)
        info.check_names(seen, "variable")
        for k in seen:
            v = info.variable(k)
            if not _settable(v):
                raise ExperimentError(
                    f"{k!r} is a {v.causality} variable ({v.variability}, initial="
                    f"{v.initial or 'calculated'}) and cannot be set; set a parameter instead "
                    f"(`fmu-surrogate info` lists them): {', '.join(info.parameters[:8])}.")
        self.parameter_names = list(seen)

        self.record = list(record) if record is not None else default_record(info)
        if not self.record:
            raise ExperimentError(f"{info.name}: nothing to record; pass record=[names].")
        info.check_names(self.record, "variable")
        if len(set(self.record)) != len(self.record):
            raise ExperimentError("record lists a variable twice; give each name once.")
        self.interface = interface
        self.tolerance = tolerance
        self.explode_threshold = float(explode_threshold)
        ns = len(self.signal_sets)
        self.runs = [RunSpec(ip * ns + js, p, js) for ip, p in enumerate(self.parameter_sets)
                     for js in range(ns)]

    # ------------------------------------------------------------------ identity
    @property
    def uses_cs(self) -> bool:
        """Whether runs use co-simulation (else model exchange)."""
        return self.interface == "cs" or (self.interface == "auto" and self.info.supports_cs)

    @property
    def n_runs(self) -> int:
        """Number of runs (parameter sets × signal sets)."""
        return len(self.runs)

    def _definition(self) -> dict[str, Any]:
        return {
            "fmu_sha256": self.info.sha256,
            "time": {"start": self.start_time, "stop": self.stop_time, "step": self.step,
                     "n": int(self.time.shape[0])},
            "record": self.record,
            "parameters": self.parameter_sets,
            "signals": [{k: s.describe() for k, s in ss.items()} for ss in self.signal_sets],
            "interface": self.interface,
            "tolerance": self.tolerance,
            "explode_threshold": self.explode_threshold,
        }

    @property
    def campaign_hash(self) -> str:
        """sha256 of the campaign definition (FMU hash, grid, record, plan, signals, options)."""
        text = json.dumps(self._definition(), sort_keys=True, separators=(",", ":"),
                          default=_json_default)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def runner_config(self, backend: str = "auto") -> RunnerConfig:
        """The :class:`~fmu_surrogate.fmu.runner.RunnerConfig` of this campaign."""
        opts: dict[str, Any] = {"interface": self.interface}
        if self.tolerance is not None:
            opts["tolerance"] = self.tolerance
        return RunnerConfig(self.fmu_path, self.info, self.time, tuple(self.record),
                            tuple(self.signal_sets), backend, opts,
                            self.explode_threshold,
                            campaign=self.campaign_hash).with_input_arrays()

    def _manifest(self, cfg: RunnerConfig) -> dict[str, Any]:
        d = self._definition()
        d.update(
            format="fmu-surrogate run store", version=1, campaign_hash=self.campaign_hash,
            fmu_name=self.info.name, fmu_path=self.fmu_path, n_runs=self.n_runs,
            n_columns=cfg.n_columns,
            columns={k: [c0, list(s)] for k, (c0, s) in cfg.columns.items()},
            created=_time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        )
        return json.loads(json.dumps(d, default=_json_default))

    # ------------------------------------------------------------------ records
    def _signal_texts(self) -> tuple[list[str], np.ndarray]:
        """Distinct JSON descriptions of the signal sets and, per signal set, its position."""
        from fmu_surrogate.fmu.dataset import signal_table

        texts = [json.dumps({k: s.describe() for k, s in ss.items()}, sort_keys=True)
                 for ss in self.signal_sets]
        return signal_table(texts)

    def _dataset_attrs(self) -> dict[str, Any]:
        return {
            "campaign_hash": self.campaign_hash,
            "start_time": self.start_time, "stop_time": self.stop_time, "step": self.step,
            "explode_threshold": self.explode_threshold, "interface": self.interface,
            "input_interpolation": ("zero-order hold over each step" if self.uses_cs else
                                    "linear between grid points (fmpy Input, model exchange)"),
        }

    def _numeric_parameters(self) -> list[str]:
        return [p for p in self.parameter_names
                if all(not isinstance(ps.get(p, 0.0), str) for ps in self.parameter_sets)]

    def _collected_dataset(self, col: _Collector, cfg: RunnerConfig) -> xr.Dataset:
        """The dataset of a complete collector, without per-run Python work on the data."""
        from fmu_surrogate.fmu.dataset import _element_suffixes, assemble_dataset

        columns = []
        for name, (c0, shape) in cfg.columns.items():
            if shape:
                for k, (suffix, _) in enumerate(_element_suffixes(shape)):
                    columns.append((name, suffix, col.buf[c0 + k]))
            else:
                columns.append((name, "", col.buf[c0]))
        ns = len(self.signal_sets)
        table, set_pos = self._signal_texts()
        params = {}
        for p in self._numeric_parameters():
            per_set = np.array([float(ps.get(p, np.nan)) for ps in self.parameter_sets])
            params[p] = np.repeat(per_set, ns)  # run = parameter set * ns + signal set
        return assemble_dataset(
            self.time, self.info, self.record, columns,
            runs=np.arange(self.n_runs, dtype=np.int64), failure_kind=col.kind,
            message=col.message, n_samples=col.n, wall_time=col.wall, params=params,
            signal_table=table, signal_index=np.tile(set_pos, len(self.parameter_sets)),
            attrs=self._dataset_attrs())

    def to_dataset(self, records: Sequence[RunRecord]) -> xr.Dataset:
        """Assemble records of this campaign into a dataset (format of ``fmu.dataset``)."""
        from fmu_surrogate.fmu.dataset import records_to_dataset

        return records_to_dataset(records, self.time, self.info, self.record,
                                  parameters=self._numeric_parameters(),
                                  attrs=self._dataset_attrs())

    # ------------------------------------------------------------------ run
    @in_harvest_space
    def run(self, out: str | os.PathLike | None = None, *, workers: int | None = None,
            timeout: float | None = 60.0, scheduler: Any = None, progress: bool = True,
            backend: str = "auto", overwrite: bool = False, keep_store: bool = False,
            batch_size: int | None = None, complevel: int = 1,
            start_method: str = "auto", recover_store: bool = False) -> xr.Dataset:
        """Simulate every run not yet on disk and return the dataset.

        Parameters
        ----------
        out : path, optional
            NetCDF file to write (its store is ``out + ".parts"``).  ``None``: keep the runs in a
            temporary store and only return the dataset.
        workers : int, optional
            Local worker processes (default ``os.cpu_count()``, at most one per run).
        timeout : float or None
            Wall-clock limit per run in seconds.
        scheduler : str or distributed.Client, optional
            Run on a Dask cluster (address or client) instead of local workers.
        progress : bool
            Show a tqdm progress bar.
        backend : {"auto", "fmpy", "pyfmi"}
        overwrite : bool
            Replace an existing dataset or store of a *different* campaign at ``out``.
        keep_store : bool
            Keep ``out + ".parts"`` after consolidation (for inspection).
        recover_store : bool
            The store ``out + ".parts"`` lost its ``campaign.json`` (or it is unreadable): keep
            the records that carry this campaign's hash and redo the rest, instead of refusing.
        batch_size : int, optional
            Runs sent to a worker (or Dask task) at once.
        complevel : int
            gzip level of the NetCDF file (0 = none; see :func:`~fmu_surrogate.fmu.dataset.
            save_dataset`).
        start_method : {"auto", "fork", "spawn"}
            How local worker processes are made (see :class:`~fmu_surrogate.fmu.runner.
            WorkerPool`).

        Returns
        -------
        xarray.Dataset

        Notes
        -----
        After the call, ``self.timings`` holds the seconds spent preparing (input samples,
        store, resumed runs), starting the workers (until all have loaded the FMU), simulating,
        assembling the dataset and writing it (NetCDF); ``prepare + start + simulate +
        consolidate = total``, ``consolidate = assemble + write``.  ``self.cpu_timings`` has the
        CPU seconds of this process (not of the workers) in the same phases, and those of the
        calling thread while writing (``write_main_thread``; the rest of ``write`` is the
        compression, spread over threads).
        """
        from fmu_surrogate.fmu.backends import get_backend  # validates the backend name
        from fmu_surrogate.fmu.dataset import load_dataset, save_dataset
        from fmu_surrogate.fmu.store import RunStore, StoreMismatchError

        if backend not in ("auto", "fmpy"):
            get_backend(backend).close()
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise ExperimentError(f"workers must be a positive integer, got {workers!r}.")
        if timeout is not None and not timeout > 0:
            raise ExperimentError(f"timeout must be > 0 seconds (or None), got {timeout!r}.")
        if isinstance(complevel, bool) or not isinstance(complevel, int) \
                or not 0 <= complevel <= 9:
            raise ExperimentError(f"complevel must be an integer 0 (no compression) ... 9, got "
                                  f"{complevel!r}.")
        if start_method not in ("auto", "fork", "spawn"):
            raise ExperimentError(f"start_method must be 'auto', 'fork' or 'spawn', got "
                                  f"{start_method!r}.")
        t_begin = _time.perf_counter()
        c_begin = _time.process_time()
        self.timings = {}
        self.cpu_timings = {}
        h = self.campaign_hash
        tmpdir = None
        if out is None:
            tmpdir = tempfile.TemporaryDirectory(prefix="store-", dir=scratch_root())
            store_path = Path(tmpdir.name) / "runs.parts"
        else:
            out = Path(out)
            store_path = out.with_name(out.name + ".parts")
            if out.is_dir():
                raise ExperimentError(f"the output path {out} is a folder; give a file name such "
                                      f"as {out / (self.info.name + '.nc')}.")
            if not out.parent.is_dir():
                raise ExperimentError(f"the folder of the output path {out} does not exist; "
                                      f"create {out.parent} first.")
            if out.exists():
                old_hash = _dataset_hash(out)
                if old_hash == h:
                    if store_path.exists():
                        RunStore._remove_dir(store_path)
                    _say(progress, f"{out}: this campaign is already complete; loaded it.")
                    ds = load_dataset(out)
                    t = _time.perf_counter() - t_begin
                    self.timings = {"prepare": t, "start": 0.0, "simulate": 0.0,
                                    "assemble": 0.0, "write": 0.0, "consolidate": 0.0,
                                    "total": t}
                    return ds
                if not overwrite:
                    what = ("a dataset of a different campaign" if old_hash else
                            "a file that is not a dataset of this campaign")
                    raise StoreMismatchError(
                        f"{out} already exists and holds {what}; use another output path, or "
                        f"--overwrite (overwrite=True) to replace it.")
        cfg = self.runner_config(backend)
        store = RunStore.open(store_path, self._manifest(cfg), overwrite=overwrite,
                              recover=recover_store)
        pool = None
        try:
            col = _Collector(self.n_runs, self.time.shape[0], cfg.n_columns)
            counts: Counter = Counter()
            for hd, data in store.read():  # resumed runs (the latest record of a run wins)
                col.add(int(hd["index"]), hd.get("kind", ""), hd.get("message", ""),
                        float(hd.get("wall", float("nan"))), data)
            if store.discarded_text():
                import warnings

                warnings.warn(store.discarded_text(), RuntimeWarning, stacklevel=2)
            for k in col.kind[col.have]:
                counts[k] += 1
            todo = [s for s in self.runs if not col.have[s.index]]
            if todo and scheduler is None:
                n_workers = min(workers or os.cpu_count() or 1, len(todo))
                pool = WorkerPool(cfg, workers=n_workers, timeout=timeout,
                                  batch_size=batch_size, start_method=start_method)
                pool.launch()  # the workers load the FMU while we set up the progress bar
            bar = _progress_bar(progress, self.n_runs, int(col.have.sum()), self.info.name,
                                counts)

            def on_result(r: RunResult) -> None:
                try:
                    if r.record is not None:  # encoded by the worker: append it as it is
                        store.append_record(r.record)
                    else:
                        store.append(r.store_header(), r.data)
                except OSError as exc:
                    raise _storage_error(exc, store_path / "runs.bin", store_path,
                                         int(col.have.sum())) from None
                col.add(r.index, r.failure_kind, r.message, r.wall_time, r.data)
                if bar is not None:
                    if r.failure_kind:
                        counts[r.failure_kind] += 1
                        bar.set_postfix_str(_count_text(counts), refresh=False)
                    bar.update(1)

            t_start, c_start = _time.perf_counter(), _time.process_time()
            t_sim, c_sim = t_start, c_start
            try:
                if pool is not None:
                    with pool:  # an exception kills the workers, else they are stopped
                        pool.start()
                        t_sim, c_sim = _time.perf_counter(), _time.process_time()
                        pool.run(todo, on_result)
                elif todo:
                    _run_dask(scheduler, cfg, todo, timeout, on_result, batch_size)
            finally:
                if bar is not None:
                    bar.close()
            t_cons, c_cons = _time.perf_counter(), _time.process_time()
            if not col.have.all():  # pragma: no cover - every spec produces a result
                missing = int((~col.have).sum())
                raise FMUError(f"{missing} runs are missing from the store {store_path}; run the "
                               f"same command again to complete them.")
            ds = self._collected_dataset(col, cfg)
            t_write, c_write = _time.perf_counter(), _time.process_time()
            m_write = _time.thread_time()
            if out is not None:
                try:
                    save_dataset(ds, out, complevel=complevel)
                except OSError as exc:
                    raise _storage_error(exc, out, store_path, self.n_runs) from None
            if keep_store and out is not None:
                store.close()
            else:
                store.remove()
            t_end, c_end = _time.perf_counter(), _time.process_time()
            self.timings = {"prepare": t_start - t_begin, "start": t_sim - t_start,
                            "simulate": t_cons - t_sim, "assemble": t_write - t_cons,
                            "write": t_end - t_write, "consolidate": t_end - t_cons,
                            "total": t_end - t_begin}
            self.cpu_timings = {"prepare": c_start - c_begin, "start": c_sim - c_start,
                                "simulate": c_cons - c_sim, "assemble": c_write - c_cons,
                                "write": c_end - c_write, "consolidate": c_end - c_cons,
                                "total": c_end - c_begin,
                                "write_main_thread": _time.thread_time() - m_write}
        finally:
            if pool is not None:
                pool.terminate()  # no-op unless something failed before the pool ran
            store.close()
            if tmpdir is not None:
                tmpdir.cleanup()
        return ds


class _Collector:
    """The campaign's output arrays, filled as runs finish (and with resumed runs).

    ``buf[c, i, :]`` is column ``c`` of run ``i`` (NaN after the run's end): every (run, time)
    variable of the dataset is one contiguous ``buf[c]``, so assembling the dataset copies
    nothing and costs no per-run work.
    """

    def __init__(self, n_runs: int, n_time: int, n_columns: int) -> None:
        # not filled: every run is added before the dataset is made (``have``), NaN tails then
        self.buf = np.empty((n_columns, n_runs, n_time))
        self.kind = np.full(n_runs, "", dtype=object)
        self.message = np.full(n_runs, "", dtype=object)
        self.n = np.zeros(n_runs, dtype=np.int64)
        self.wall = np.full(n_runs, np.nan)
        self.have = np.zeros(n_runs, dtype=bool)

    def add(self, index: int, kind: str, message: str, wall: float, data: np.ndarray) -> None:
        """Run ``index`` produced ``data`` (shape (n, n_columns))."""
        n = data.shape[0]
        self.buf[:, index, :n] = data.T
        if n < self.buf.shape[2]:
            self.buf[:, index, n:] = np.nan
        self.kind[index] = kind
        self.message[index] = message
        self.n[index] = n
        self.wall[index] = wall
        self.have[index] = True


class StorageError(FMUError, OSError):
    """Writing the store or the dataset failed (disk full, quota, permissions); nothing finished
    is lost and the same command resumes."""

    def __str__(self) -> str:
        return str(self.strerror)


def _storage_error(exc: OSError, file: Path, store_path: Path, n_kept: int) -> StorageError:
    import errno

    what = {errno.ENOSPC: "no space left on the device",
            errno.EDQUOT: "the disk quota is exceeded",
            errno.EACCES: "permission denied"}.get(exc.errno, exc.strerror or str(exc))
    return StorageError(exc.errno or 0, f"{what} while writing {file}; the {n_kept} finished runs "
                        f"are kept in {store_path}: free space (or fix the permissions) and run "
                        f"the same command again to resume.")


def _json_default(o: Any) -> Any:
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _dataset_hash(path: Path) -> str | None:
    try:
        import h5py

        with h5py.File(path, "r") as f:
            v = f.attrs.get("campaign_hash")
    except Exception:  # noqa: BLE001 - not a NetCDF-4 file: not ours
        return None
    if isinstance(v, bytes):
        v = v.decode()
    return None if v is None else str(v)


def _count_text(counts: Counter) -> str:
    failed = {k: v for k, v in counts.items() if k}
    return ", ".join(f"{k}: {v}" for k, v in sorted(failed.items()))


def _progress_bar(progress: bool, total: int, initial: int, name: str, counts: Counter):
    if not progress:
        return None
    from tqdm.auto import tqdm

    class _Bar(tqdm):  # no monitor thread: workers are forked from a single-threaded process
        monitor_interval = 0

    bar = _Bar(total=total, initial=initial, desc=f"harvest {name}", unit="run",
               mininterval=0.5, file=sys.stderr)
    if _count_text(counts):
        bar.set_postfix_str(_count_text(counts), refresh=False)
    return bar


def _say(progress: bool, text: str) -> None:
    if progress:
        print(text, file=sys.stderr)


# ---------------------------------------------------------------------------- dask
_LOCAL_FMUS: dict[str, str] = {}


def _dask_batch(cfg: RunnerConfig, specs: list[RunSpec], timeout: float | None,
                fmu_bytes: bytes | None) -> list[RunResult]:
    """Dask task: run ``specs`` in an isolated subprocess on the Dask worker."""
    from fmu_surrogate.fmu.model import file_sha256

    path = cfg.fmu_path
    sha = cfg.info.sha256
    if sha in _LOCAL_FMUS:
        path = _LOCAL_FMUS[sha]
    elif not (os.path.isfile(path) and file_sha256(path) == sha):
        if fmu_bytes is None:  # pragma: no cover - guarded by the caller
            raise FMUError(f"{path} is not available on the Dask worker.")
        d = Path(tempfile.gettempdir()) / "fmu-surrogate-fmus"
        d.mkdir(exist_ok=True)
        path = str(d / f"{sha}.fmu")
        if not os.path.isfile(path):
            tmp = f"{path}.{os.getpid()}.part"
            Path(tmp).write_bytes(fmu_bytes)
            os.replace(tmp, path)
    _LOCAL_FMUS[sha] = path
    if path != cfg.fmu_path:
        cfg = replace(cfg, fmu_path=path)
    results: list[RunResult] = []
    with WorkerPool(cfg, workers=1, timeout=timeout, batch_size=len(specs)) as pool:
        pool.run(specs, results.append)
    return results


def _run_dask(scheduler: Any, cfg: RunnerConfig, specs: list[RunSpec], timeout: float | None,
              on_result: Callable[[RunResult], None], batch_size: int | None) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:  # pragma: no cover - a dependency
        raise FMUError("scheduler= needs dask.distributed: pip install 'dask[distributed]'.") \
            from None
    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler) if own else scheduler
    except OSError as exc:
        raise FMUError(f"cannot connect to the Dask scheduler {scheduler!r} ({exc}); check the "
                       f"address (tcp://HOST:8786) and that the scheduler is running.") from None
    try:
        n_threads = max(1, sum(client.nthreads().values()))
        bs = batch_size or max(1, math.ceil(len(specs) / (2 * n_threads)))
        batches = [specs[i:i + bs] for i in range(0, len(specs), bs)]
        blob = client.scatter(Path(cfg.fmu_path).read_bytes(), hash=False)
        cfg_f = client.scatter(cfg, hash=False)
        futures = [client.submit(_dask_batch, cfg_f, b, timeout, blob, pure=False)
                   for b in batches]
        for fut in as_completed(futures):
            for r in fut.result():
                on_result(r)
    finally:
        if own:
            client.close()


# ---------------------------------------------------------------------------- one call
def harvest(
    fmu: str | os.PathLike,
    out: str | os.PathLike | None = None,
    *,
    signals: Any = None,
    parameters: Any = None,
    start_time: float | None = None,
    stop_time: float | None = None,
    step: float | None = None,
    record: Sequence[str] | None = None,
    workers: int | None = None,
    timeout: float | None = 60.0,
    scheduler: Any = None,
    progress: bool = True,
    backend: str = "auto",
    overwrite: bool = False,
    interface: str = "auto",
    tolerance: float | None = None,
    explode_threshold: float = DEFAULT_EXPLODE_THRESHOLD,
    allow_longer: bool = False,
    keep_store: bool = False,
    recover_store: bool = False,
    batch_size: int | None = None,
    complevel: int = 1,
    start_method: str = "auto",
) -> xr.Dataset:
    """Simulate an FMU under designed inputs and parameter sets; return (and write) the dataset.

    With no options this runs the FMU's default experiment once, inputs at their start values.
    Every run executes in a worker process with a wall-clock timeout: an FMU that errors,
    blows up, crashes or hangs becomes a recorded failure and the campaign goes on.  This is
    crash isolation, not a sandbox: the FMU's code runs with the user's rights.

    Parameters
    ----------
    fmu : path
        The ``.fmu`` file.
    out : path, optional
        NetCDF file to write (finished runs are kept in ``out + ".parts"`` until the end, so an
        interrupted harvest resumes); ``None`` only returns the dataset.
    signals : dict or list of dict, optional
        ``{input name: Signal}`` per signal set (:mod:`fmu_surrogate.fmu.signals`).
    parameters : dict or list of dict, optional
        ``{name: value}`` per parameter set (:mod:`fmu_surrogate.fmu.plans`).
    start_time, stop_time, step : float, optional
        The experiment (default: the FMU's default experiment).
    record : sequence of str, optional
        Variables to record (default: inputs, outputs, states, derivatives).
    workers : int, optional
        Local worker processes (default: the CPU count, at most one per run).
    timeout : float or None
        Wall-clock limit per run [s].
    scheduler : str or distributed.Client, optional
        Run on a Dask cluster instead of local workers.
    progress : bool
        Show a progress bar.
    backend : {"auto", "fmpy", "pyfmi"}
        Simulation backend.
    overwrite : bool
        Replace an existing dataset or store of a different campaign at ``out``.
    interface : {"auto", "cs", "me"}
        Co-simulation or model exchange.
    tolerance : float, optional
        Relative tolerance of the FMU / CVode.
    explode_threshold : float
        ``|x|`` above this is a failure of kind ``"exploding"``.
    allow_longer : bool
        Accept signals that last longer than the experiment.
    keep_store : bool
        Keep ``out + ".parts"`` after the dataset is written.
    recover_store : bool
        Keep the runs of a store whose ``campaign.json`` was lost (see :meth:`Campaign.run`).
    batch_size : int, optional
        Runs sent to a worker at once.
    complevel : int
        gzip level of the NetCDF file (0 = none).
    start_method : {"auto", "fork", "spawn"}
        How worker processes are made.

    Returns
    -------
    xarray.Dataset
        Dims ``(run, time)``; per-run ``status``, ``failure_kind``, ``message`` and parameters
        (``docs/dataset-format.md``).

    Examples
    --------
    >>> import fmu_surrogate as fs
    >>> ds = fs.harvest(fs.benchmark_fmu("rc_network"), "rc.nc", progress=False,
    ...                 signals=[{"u": fs.signals.Constant(1.5)}],
    ...                 parameters=fs.plans.grid(G=[0.5, 1.0]), stop_time=2.0, step=0.01)
    >>> fs.runs_table(ds)["status"].tolist()
    ['ok', 'ok']
    >>> (t, X), = fs.run_arrays(ds, ["x1"], runs=[0])
    >>> print(f"{X[-1, 0]:.8f}")  # x1' = G (u − √(2 x1)), x1(0) = 2, G = 0.5: scipy 1.60996602
    1.60996602
    """
    camp = Campaign(fmu, signals, parameters, start_time=start_time, stop_time=stop_time,
                    step=step, record=record, interface=interface, tolerance=tolerance,
                    explode_threshold=explode_threshold, allow_longer=allow_longer)
    return camp.run(out, workers=workers, timeout=timeout, scheduler=scheduler,
                    progress=progress, backend=backend, overwrite=overwrite,
                    keep_store=keep_store, recover_store=recover_store, batch_size=batch_size,
                    complevel=complevel,
                    start_method=start_method)


def summarize(ds: xr.Dataset) -> str:
    """One-line summary: runs ok / failed by kind."""
    status = [str(s) for s in ds["status"].values]
    kinds = Counter(str(k) for k in ds["failure_kind"].values if str(k))
    n_ok = sum(s == "ok" for s in status)
    text = f"{len(status)} runs: {n_ok} ok, {len(status) - n_ok} failed"
    if kinds:
        text += " (" + ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items())) + ")"
    return text


# ---------------------------------------------------------------------------- session
class HarvestSession:
    """Drive a co-simulation FMU step by step and record what happens as runs.

    The FMU runs in this process: a crashing FMU takes the session down.  :func:`harvest` runs
    each run in a worker process instead, so that a crash, hang or blow-up becomes a recorded
    failure — crash isolation, not a sandbox: in both cases the FMU's code runs with your user's
    rights and can read and write what you can, so run FMUs you do not trust in a container or
    virtual machine.  Each run starts with :meth:`reset` and ends with
    :meth:`finish`, which returns a :class:`~fmu_surrogate.fmu.dataset.RunRecord` (also kept in
    :attr:`records`); :meth:`dataset` assembles them.

    Recording convention (as in campaigns): the row at time ``t`` holds the values after the
    inputs for the step starting at ``t`` were set.

    Parameters
    ----------
    fmu : path
    record : list of str, optional
        Default: inputs, outputs, states, derivatives.
    backend : str
        ``"auto"`` / ``"fmpy"``.
    explode_threshold : float

    Examples
    --------
    >>> with HarvestSession("rc.fmu") as s:                     # doctest: +SKIP
    ...     s.reset(params={"G": 2.0})
    ...     for k in range(100):
    ...         s.step(0.01, u=1.0)
    ...     rec = s.finish()
    """

    def __init__(self, fmu: str | os.PathLike, record: Sequence[str] | None = None,
                 backend: str = "auto",
                 explode_threshold: float = DEFAULT_EXPLODE_THRESHOLD) -> None:
        from fmu_surrogate.fmu.backends import FmpyBackend
        from fmu_surrogate.fmu.model import open_fmu

        if backend not in ("auto", "fmpy"):
            raise ExperimentError("HarvestSession supports the fmpy backend only.")
        self.info = open_fmu(fmu)
        self.info.require_binary()
        if not self.info.supports_cs:
            raise ExperimentError(f"{self.info.name} has no co-simulation interface; a stepwise "
                                  f"session needs one (use harvest() for model exchange).")
        self.record = list(record) if record is not None else default_record(self.info)
        self.info.check_names(self.record, "variable")
        self.explode_threshold = float(explode_threshold)
        self._backend = FmpyBackend(interface="cs")
        self._backend.open(self.info.path, self.info)
        self.records: list[RunRecord] = []
        self._rows: list[np.ndarray] | None = None
        self._times: list[float] = []

    # ------------------------------------------------------------------ run control
    def reset(self, params: Mapping[str, Any] | None = None, start_time: float = 0.0,
              inputs: Mapping[str, float] | None = None, stop_time: float | None = None) -> None:
        """Start a new run: reset the FMU, set ``params`` and initial ``inputs``, initialise.

        Parameters
        ----------
        params : mapping, optional
            Parameter values of this run.
        start_time : float
            Start time [s].
        inputs : mapping, optional
            Initial input values.
        stop_time : float, optional
            Stop time announced to the FMU (``None``: open-ended).
        """
        params = dict(params or {})
        self.info.check_names(params, "variable")
        self.info.check_names(inputs or {}, "input")
        if self._rows is not None and self._times:
            self.finish()
        self._params = params
        self._inputs: dict[str, float] = dict(inputs or {})
        self._error: BaseException | None = None
        self._error_time: float | None = None
        self._stopped = False
        self._t_wall = _time.perf_counter()
        self._rows, self._times = [], []
        self.time = float(start_time)
        try:
            self._backend.start(params, self.time, stop_time, self._inputs)
            self._rows.append(self._backend.get_values(self.record))
            self._times.append(self.time)
        except Exception as exc:  # noqa: BLE001 - failure is data
            self._error, self._error_time = exc, self.time

    @property
    def failed(self) -> bool:
        """Whether the current run has hit an error or was terminated by the FMU."""
        return self._error is not None or self._stopped

    def set(self, **values: Any) -> None:
        """Set inputs or tunable parameters now (they apply to the next step)."""
        self._require_run()
        self.info.check_names(values, "variable")
        if self.failed:
            return
        try:
            self._backend.set_values(values)
            self._inputs.update({k: v for k, v in values.items() if k in self.info.inputs})
            self._rows[-1] = self._backend.get_values(self.record)  # row shows what applies now
        except Exception as exc:  # noqa: BLE001
            self._error, self._error_time = exc, self.time

    def step(self, h: float, **inputs: float) -> np.ndarray | None:
        """Set ``inputs`` (if any), advance by ``h`` and record; returns the new row or ``None``.

        After an error or an FMU-requested stop the session ignores further steps until
        :meth:`reset`.

        Parameters
        ----------
        h : float
            Communication step [s].
        **inputs : float
            Input values held over the step.
        """
        self._require_run()
        if not h > 0:
            raise ExperimentError(f"step size {h!r} must be > 0.")
        if inputs:
            self.set(**inputs)
        if self.failed:
            return None
        try:
            stopped = self._backend.do_step(self.time, h)
        except Exception as exc:  # noqa: BLE001
            self._error, self._error_time = exc, self.time
            return None
        if stopped:
            self._stopped = True
            return None
        self.time += h
        row = self._backend.get_values(self.record)
        self._rows.append(row)
        self._times.append(self.time)
        return row

    def advance(self, duration: float, h: float, **inputs: float) -> int:
        """Take steps of ``h`` for ``duration`` (inputs held); return the number of steps.

        Parameters
        ----------
        duration : float
            Time to advance [s], a whole number of steps.
        h : float
            Communication step [s].
        **inputs : float
            Input values held over the steps.

        Returns
        -------
        int
            Steps taken (fewer if the run failed or stopped).
        """
        n = round(duration / h)
        if n < 1 or abs(n * h - duration) > 1e-9 * max(1.0, duration):
            raise ExperimentError(f"duration {duration:g} is not a whole number of steps {h:g}.")
        for k in range(n):
            if self.step(h, **(inputs if k == 0 else {})) is None:
                return k
        return n

    def read(self, names: Sequence[str] | None = None) -> dict[str, float]:
        """Current values of ``names`` (default: the recorded variables).

        Parameters
        ----------
        names : sequence of str, optional
            FMU variable names.

        Returns
        -------
        dict
            ``{name: value}``.
        """
        self._require_run()
        names = list(names) if names is not None else self.record
        self.info.check_names(names, "variable")
        row = self._backend.get_values(names)
        return dict(zip(names, row.tolist()))

    def finish(self) -> RunRecord:
        """End the current run and return its record (appended to :attr:`records`)."""
        from fmu_surrogate.fmu.backends import RunOutput
        from fmu_surrogate.fmu.dataset import RunRecord

        self._require_run()
        rows = np.array(self._rows) if self._rows else np.empty((0, len(self.record)))
        times = np.array(self._times)
        cols = {n: (i, ()) for i, n in enumerate(self.record)}
        out = RunOutput(self.record, cols, rows, len(rows), self._error, self._error_time,
                        self._stopped, self._backend.messages)
        kind, message = classify(out, times if len(times) else np.array([self.time]),
                                 self.explode_threshold)
        if kind == "early_stop" and not self._stopped:
            kind, message = "", ""  # a session run ends wherever the user stops it
        rec = RunRecord(index=len(self.records), params=dict(self._params),
                        signals={}, status="failed" if kind else "ok", failure_kind=kind,
                        message=message,
                        values={n: rows[:, i].copy() for i, n in enumerate(self.record)},
                        wall_time=_time.perf_counter() - self._t_wall)
        self.records.append(rec)
        self._run_times = getattr(self, "_run_times", [])
        self._run_times.append(times)
        self._rows, self._times = None, []
        return rec

    def dataset(self) -> xr.Dataset:
        """All finished runs as a dataset (they must share one time grid, or be prefixes of it)."""
        from fmu_surrogate.fmu.dataset import records_to_dataset

        if self._rows is not None and self._times:
            self.finish()
        times = getattr(self, "_run_times", [])
        if not times:
            raise ExperimentError("no finished runs; call reset(), step(), finish() first.")
        grid = max(times, key=len)
        for t in times:
            if not np.allclose(t, grid[:len(t)], rtol=1e-12, atol=1e-12):
                raise ExperimentError("the session's runs do not share one time grid; a dataset "
                                      "needs a common grid (use the same start time and steps).")
        return records_to_dataset(self.records, grid, self.info, self.record)

    def _require_run(self) -> None:
        if self._rows is None:
            raise ExperimentError("no run in progress; call reset() first.")

    def close(self) -> None:
        """Free the FMU instance."""
        self._backend.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
