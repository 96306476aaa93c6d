"""What the isolated runner exchanges: the configuration of a campaign's runs, one run's
specification and one run's result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["DEFAULT_EXPLODE_THRESHOLD", "RunResult", "RunSpec", "RunnerConfig"]

#: Default bound for "exploding" values: ``|x| > 1e10``.
DEFAULT_EXPLODE_THRESHOLD = 1e10


@dataclass(frozen=True)
class RunnerConfig:
    """Everything a worker needs to open the FMU and execute runs (sent once per worker).

    Attributes
    ----------
    fmu_path : str
    info : FMUInfo
        From :func:`fmu_surrogate.fmu.model.loading.open_fmu`.
    time : ndarray, shape (T,)
        The communication grid of every run.
    record : tuple of str
        Variables recorded at every grid point.
    signal_sets : tuple of dict
        ``({input name: Signal}, ...)``; a :class:`RunSpec` refers to one by position.
    backend : str
        ``"auto"``, ``"fmpy"`` or ``"pyfmi"``.
    backend_options : dict
        Passed to the backend (``interface``, ``tolerance``, ``reuse_instance``).
    explode_threshold : float
        Finite values with ``|x|`` above this are a failure of kind ``"exploding"``.
    input_arrays : tuple of dict, optional
        The signal sets sampled on the grid (:meth:`with_input_arrays`).
    campaign : str
        Hash of the campaign; every store record a worker makes carries it.
    backend_module : str
        Dotted name of a module the worker imports before making the backend: the module that
        registers ``backend`` (:func:`fmu_surrogate.fmu.backends.registry.register_backend`) for a
        target that is not an FMU file (:mod:`fmu_surrogate.fmu.campaigns.targets`); ``""`` for FMUs.
    points : ndarray, shape (T,), optional
        The communication points a co-simulation steps through (``None``: ``time``): a master's,
        each the one before plus the step in floating point
        (:func:`~fmu_surrogate.fmu.campaigns.experiment.experiment_grid`); the inputs are
        sampled and the outputs recorded on ``time`` all the same.
    """

    fmu_path: str
    info: Any
    time: np.ndarray
    record: tuple[str, ...]
    signal_sets: tuple[dict, ...] = ({},)
    backend: str = "auto"
    backend_options: dict = field(default_factory=dict)
    explode_threshold: float = DEFAULT_EXPLODE_THRESHOLD
    input_arrays: tuple[dict, ...] | None = None
    campaign: str = ""
    backend_module: str = ""
    points: np.ndarray | None = None

    def with_input_arrays(self, max_bytes: float = 2**28) -> RunnerConfig:
        """A copy carrying every signal set sampled on the grid (``input_arrays``).

        Workers then neither evaluate signals nor import what that needs (scipy.signal for a
        chirp costs a fraction of a second per worker start).  Skipped when the arrays would
        exceed ``max_bytes``; workers evaluate the signals themselves then.
        """
        from dataclasses import replace

        n = sum(len(s) for s in self.signal_sets) * np.asarray(self.time).shape[0] * 8
        if n > max_bytes:
            return self
        arrays = tuple(self.sample_inputs(i) for i in range(len(self.signal_sets)))
        return replace(self, input_arrays=arrays)

    def sample_inputs(self, i: int) -> dict[str, np.ndarray]:
        """Signal set ``i`` sampled on the grid, as the backend sets it: ``{input: (T,)}``, and
        an array input driven by signals on its elements as one ``(T, size)`` array (the other
        elements at their start values, :func:`~fmu_surrogate.fmu.model.elements.
        gather_elements`)."""
        from fmu_surrogate.fmu.model.elements import gather_elements
        from fmu_surrogate.fmu.signals.standard import sample_inputs

        return gather_elements(self.info, sample_inputs(self.signal_sets[i], self.time))

    @property
    def columns(self) -> dict[str, tuple[int, tuple[int, ...]]]:
        """``{name: (first column, shape)}`` of the recorded variables in a data block."""
        cols, c = {}, 0
        by_name = {v.name: v for v in self.info.variables}
        for n in self.record:
            shape = tuple(by_name[n].shape or ())
            cols[n] = (c, shape)
            c += int(np.prod(shape)) if shape else 1
        return cols

    @property
    def n_columns(self) -> int:
        """Number of float64 columns of a data block."""
        return sum(int(np.prod(s)) if s else 1 for _, s in self.columns.values())


@dataclass(frozen=True)
class RunSpec:
    """One run: its label, parameter values and the position of its signal set."""

    index: int
    params: dict = field(default_factory=dict)
    signal_set: int = 0


@dataclass
class RunResult:
    """Outcome of one run as reported by the runner.

    Attributes
    ----------
    index : int
    failure_kind : str
        ``""`` for an ok run, else a key of ``dataset.FAILURE_KINDS``.
    message : str
    n_samples : int
        Valid leading rows of ``data``.
    data : ndarray, shape (n_samples, n_columns)
    wall_time : float
        Seconds from the start of the run to its result.
    started, finished : float
        Wall-clock stamps (``time.time()``) of the run.
    worker : int
        Process id of the worker that executed it.
    record : bytes or None
        The run as a record of the run store (:func:`fmu_surrogate.fmu.campaigns.store.encode_record`,
        header :meth:`store_header`), made by the worker; ``None`` for results made by the
        parent (timeouts, crashes).
    stored : bool
        The worker appended the record to the run store itself (``record`` is ``None`` then):
        the store has it already.
    """

    index: int
    failure_kind: str
    message: str
    n_samples: int
    data: np.ndarray
    wall_time: float
    started: float
    finished: float
    worker: int
    record: bytes | None = field(default=None, repr=False)
    stored: bool = False

    def store_header(self) -> dict[str, Any]:
        """The header of this run's record in the run store."""
        return {"index": self.index, "kind": self.failure_kind, "message": self.message,
                "n": self.n_samples, "wall": self.wall_time, "t0": self.started,
                "t1": self.finished, "worker": self.worker}

    @property
    def ok(self) -> bool:
        return not self.failure_kind

    @property
    def status(self) -> str:
        return "ok" if self.ok else "failed"
