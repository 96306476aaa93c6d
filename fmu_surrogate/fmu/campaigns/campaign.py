"""Harvesting campaigns: FMU × input signals × parameter sets → dataset.

* :func:`harvest` — one call: validate, simulate every run in isolated workers (locally or on a
  Dask cluster), store finished runs as they complete, consolidate into a NetCDF dataset.
* :class:`Campaign` — the same in two steps (build and validate, then :meth:`Campaign.run`).
* :class:`HarvestSession` — drive an FMU yourself (set values, step, read) and record what you
  did as runs of the same dataset format.

This module defines a campaign (its runs, its identity, its dataset);
:mod:`~fmu_surrogate.fmu.campaigns.experiment` checks the experiment, :mod:`~fmu_surrogate.fmu.campaigns.execution`
runs it (:mod:`~fmu_surrogate.fmu.campaigns.dask_runs` on a Dask cluster) and
:mod:`~fmu_surrogate.fmu.campaigns.session` holds the step-by-step session.

Runs
----
Run ``i_p * n_signals + i_s`` uses parameter set ``parameters[i_p]`` and signal set
``signals[i_s]`` (``{input name: Signal}``); inputs without a signal keep their start value.
Every run is recorded on the common grid ``start, start + step, ..., stop``.

Storage and resume
------------------
Finished runs are appended to ``OUT.parts/`` (see :mod:`fmu_surrogate.fmu.campaigns.store`) as they
complete, and consolidated into ``OUT`` once at the end (the store is then deleted).  The
campaign is identified by a hash of (FMU sha256, plan, signals, time grid, recorded variables,
interface, tolerance, explode threshold), kept in the store and as the dataset attribute
``campaign_hash``.  Running the same campaign again after an interruption — even ``kill -9`` —
skips the finished runs; a different campaign at the same path is refused unless
``overwrite=True``.  Running a finished campaign again returns the existing dataset.

Targets
-------
A campaign can also run a :class:`~fmu_surrogate.fmu.campaigns.targets.Target` that is not an ``.fmu``
file (e.g. a system of several FMUs on another engine): its registered backend runs it
in the same workers, and its content hash stands for the FMU's in the campaign's identity.
"""

from __future__ import annotations

import hashlib
import json
import os
import time as _time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.errors import InvalidTypeError
from fmu_surrogate.fmu.campaigns.execution import StorageError, run_campaign
from fmu_surrogate.fmu.campaigns.experiment import (
    _normalise_parameters,
    _normalise_signals,
    _parameter_elements,
    check_record,
    check_signals,
    communication_points,
    default_record,
    experiment_grid,
    not_recorded,
)
from fmu_surrogate.fmu.campaigns.session import HarvestSession
from fmu_surrogate.fmu.errors import ExperimentError
from fmu_surrogate.fmu.model.elements import gather_elements
from fmu_surrogate.fmu.runner.pool import DEFAULT_EXPLODE_THRESHOLD, RunnerConfig, RunSpec
from fmu_surrogate.fmu.runner.tempdirs import in_harvest_space

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

    from fmu_surrogate.fmu.campaigns.execution import _Collector
    from fmu_surrogate.fmu.dataset import RunRecord

__all__ = ["Campaign", "HarvestSession", "StorageError", "default_record", "experiment_grid",
           "harvest", "summarize"]


# ---------------------------------------------------------------------------- campaign
class Campaign:
    """An FMU × signal sets × parameter sets, validated at construction.

    Parameters
    ----------
    fmu : path or Target
        The ``.fmu`` file, or a :class:`~fmu_surrogate.fmu.campaigns.targets.Target` that is not an FMU
        file (run by its registered backend; ``interface`` and ``tolerance`` do not apply).
    signals : dict or list of dict, optional
        ``{input name: Signal}`` per signal set (numbers become :class:`Constant`); default: one
        set with every input at its start value.
    parameters : dict or list of dict, optional
        One dict ``{name: value}`` per parameter set (see :mod:`fmu_surrogate.fmu.campaigns.plans`);
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
        from fmu_surrogate.fmu.model.loading import open_fmu
        from fmu_surrogate.fmu.signals.standard import check_signal_fits

        if interface not in ("auto", "cs", "me"):
            raise ExperimentError(f"interface must be 'auto', 'cs' or 'me', got {interface!r}.")
        from fmu_surrogate.fmu.campaigns.targets import Target

        self.target = fmu if isinstance(fmu, Target) else None
        info = fmu.info if self.target is not None else open_fmu(fmu)
        info.require_binary()
        if self.target is None and not (info.supports_cs or info.supports_me):
            raise ExperimentError(f"{info.name} has neither a co-simulation nor a "
                                  f"model-exchange interface (FMI 3 scheduled execution only?); "
                                  f"harvesting needs one of them: export the FMU with one.")
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
        # the points a co-simulation steps through, where a tool's FMUs need others
        self.points = communication_points(info, self.start_time, self.stop_time, self.step) \
            if self.target is None and (interface == "cs" or (interface == "auto"
                                                               and info.supports_cs)) else None

        self.signal_sets = _normalise_signals(signals)
        for s in self.signal_sets:
            for name, sig in s.items():
                check_signal_fits(sig, self.start_time, self.stop_time, name=name,
                                  allow_longer=allow_longer)
        check_signals(info, self.signal_sets, self.time)

        self.parameter_sets = _parameter_elements(info, _normalise_parameters(parameters))
        self.parameter_names = list(dict.fromkeys(k for p in self.parameter_sets for k in p))

        #: inputs and outputs not recorded by default: not numbers (String, Binary, Clock)
        self.not_recorded = not_recorded(info) if record is None else []
        self.record = list(record) if record is not None else default_record(info)
        if not self.record:
            raise ExperimentError(f"{info.name}: nothing to record; pass record=[names].")
        check_record(info, self.record)
        if len(set(self.record)) != len(self.record):
            raise ExperimentError("record lists a variable twice; give each name once.")
        self.interface = interface
        self.tolerance = tolerance
        self.explode_threshold = float(explode_threshold)
        ns = len(self.signal_sets)
        self.runs = [RunSpec(ip * ns + js, gather_elements(info, p), js)
                     for ip, p in enumerate(self.parameter_sets) for js in range(ns)]

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
        } | ({} if self.target is None else {"backend": self.target.backend,
                                             "backend_options": dict(self.target.options)})

    @property
    def campaign_hash(self) -> str:
        """sha256 of the campaign definition (FMU hash, grid, record, plan, signals, options)."""
        text = json.dumps(self._definition(), sort_keys=True, separators=(",", ":"),
                          default=_json_default)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def runner_config(self, backend: str = "auto") -> RunnerConfig:
        """The :class:`~fmu_surrogate.fmu.runner.pool.RunnerConfig` of this campaign."""
        module = ""
        if self.target is not None:
            if backend not in ("auto", self.target.backend):
                raise ExperimentError(f"{self.info.name} runs on its own backend "
                                      f"{self.target.backend!r}; leave backend='auto'.")
            backend, module = self.target.backend, self.target.module
            opts: dict[str, Any] = dict(self.target.options)
        else:
            opts = {"interface": self.interface}
            if self.tolerance is not None:
                opts["tolerance"] = self.tolerance
        return RunnerConfig(self.fmu_path, self.info, self.time, tuple(self.record),
                            tuple(self.signal_sets), backend, opts,
                            self.explode_threshold, campaign=self.campaign_hash,
                            backend_module=module, points=self.points).with_input_arrays()

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
        from fmu_surrogate.fmu.dataset.schema import signal_table

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
        } | ({} if self.target is None else dict(self.target.attrs))

    def _numeric_parameters(self) -> list[str]:
        return [p for p in self.parameter_names
                if all(not isinstance(ps.get(p, 0.0), str) for ps in self.parameter_sets)]

    def _collected_dataset(self, col: _Collector, cfg: RunnerConfig) -> xr.Dataset:
        """The dataset of a complete collector, without per-run Python work on the data."""
        from fmu_surrogate.fmu.dataset.build import assemble_dataset
        from fmu_surrogate.fmu.dataset.schema import element_suffixes

        columns = []
        for name, (c0, shape) in cfg.columns.items():
            if shape:
                for k, (suffix, _) in enumerate(element_suffixes(shape)):
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
            How local worker processes are made (see :class:`~fmu_surrogate.fmu.runner.pool.
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
        compression, spread over threads).  ``self.notes`` holds the lines the call printed on
        stderr: damage found in the run store, runs interrupted from outside.
        """
        return run_campaign(self, out, workers=workers, timeout=timeout, scheduler=scheduler,
                            progress=progress, backend=backend, overwrite=overwrite,
                            keep_store=keep_store, batch_size=batch_size, complevel=complevel,
                            start_method=start_method, recover_store=recover_store)


def _json_default(o: Any) -> Any:
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, Path):
        return str(o)
    raise InvalidTypeError(f"not JSON serialisable: {type(o).__name__}")



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
        ``{input name: Signal}`` per signal set (:mod:`fmu_surrogate.fmu.signals.standard`).
    parameters : dict or list of dict, optional
        ``{name: value}`` per parameter set (:mod:`fmu_surrogate.fmu.campaigns.plans`).
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
    """One-line summary: runs ok / failed by kind / interrupted (not a failure of the FMU)."""
    from fmu_surrogate.fmu.dataset import RERUN_KINDS

    status = [str(s) for s in ds["status"].values]
    kinds = Counter(str(k) for k in ds["failure_kind"].values if str(k))
    n_ok = sum(s == "ok" for s in status)
    fmu = {k: v for k, v in kinds.items() if k not in RERUN_KINDS}
    n_redo = sum(v for k, v in kinds.items() if k in RERUN_KINDS)
    text = f"{len(status)} runs: {n_ok} ok, {len(status) - n_ok - n_redo} failed"
    if fmu:
        text += " (" + ", ".join(f"{k}: {v}" for k, v in sorted(fmu.items())) + ")"
    if n_redo:
        text += (f", {n_redo} interrupted (the worker was stopped from outside, not by the FMU; "
                 f"harvesting again simulates them again)")
    return text
