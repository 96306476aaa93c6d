"""A harvest session: drive a co-simulation FMU step by step in this process and record what
happens as runs of the dataset format."""

from __future__ import annotations

import os
import time as _time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.fmu.campaigns.experiment import check_record, default_record
from fmu_surrogate.fmu.errors import ExperimentError
from fmu_surrogate.fmu.runner.failures import classify
from fmu_surrogate.fmu.runner.runs import DEFAULT_EXPLODE_THRESHOLD

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr
    from typing_extensions import Self

    from fmu_surrogate.fmu.dataset import RunRecord

__all__ = ["HarvestSession"]


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
        from fmu_surrogate.fmu.backends.registry import FmpyBackend
        from fmu_surrogate.fmu.model.loading import open_fmu

        if backend not in ("auto", "fmpy"):
            raise ExperimentError("HarvestSession supports the fmpy backend only.")
        self.info = open_fmu(fmu)
        self.info.require_binary()
        if not self.info.supports_cs:
            raise ExperimentError(f"{self.info.name} has no co-simulation interface; a stepwise "
                                  f"session needs one (use harvest() for model exchange).")
        self.record = list(record) if record is not None else default_record(self.info)
        check_record(self.info, self.record)
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
        from fmu_surrogate.fmu.backends.registry import RunOutput
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
