"""The interface of a simulation backend: the :class:`Backend` protocol, what a run produced
(:class:`RunOutput`), the FMU's bounded log of a run (:class:`BoundedLog`) and the FMI status
names.

Backends do not classify failures and never raise for a failing *run*: :meth:`Backend.run`
returns a :class:`RunOutput` that carries the partial data, the FMU's own log messages (captured
through the logger callback) and the exception, if any.  The isolated runner turns that into a
failure kind (:mod:`fmu_surrogate.fmu.runner.failures`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["STATUS_NAMES", "Backend", "BoundedLog", "LogSink", "RunOutput"]

#: FMI status codes (identical in FMI 2.0 and 3.0).
STATUS_NAMES = ("OK", "Warning", "Discard", "Error", "Fatal", "Pending")

LogSink = Callable[[int, str, str], None]


# ---------------------------------------------------------------------------- run output
class RunOutput:
    """What one run produced.

    Attributes
    ----------
    names : list of str
        Recorded variable names.
    columns : dict
        ``{name: (first column, shape)}``; scalars have shape ``()`` and one column, FMI 3 arrays
        ``prod(shape)`` columns.
    data : ndarray, shape (T, n_columns)
        The output buffer; only the first ``n_done`` rows are valid.
    n_done : int
        Number of communication points recorded (``T`` for a complete run).
    error : BaseException or None
        The exception that ended the run (``fmpy.fmi1.FMICallException`` for an FMI error
        status: ``.function``, ``.status``), or ``None``.
    error_time : float or None
        Communication point at which the failing call was made.
    stopped_early : bool
        The FMU ended the run itself (fmi2Discard + fmi2Terminated, FMI 3 ``terminateSimulation``,
        or the model-exchange ``terminateSimulation`` flag).
    messages : list of (int, str, str)
        The FMU's log messages during the run: ``(status, category, message)``.
    """

    __slots__ = (
        "columns",
        "data",
        "error",
        "error_time",
        "messages",
        "n_done",
        "names",
        "stopped_early",
    )

    def __init__(self, names, columns, data, n_done, error=None, error_time=None,
                 stopped_early=False, messages=None) -> None:
        self.names = list(names)
        self.columns = dict(columns)
        self.data = data
        self.n_done = int(n_done)
        self.error = error
        self.error_time = error_time
        self.stopped_early = bool(stopped_early)
        self.messages = list(messages or [])

    @property
    def values(self) -> dict[str, np.ndarray]:
        """``{name: array of shape (n_done,) or (n_done, *shape)}`` (views of :attr:`data`)."""
        out = {}
        for name in self.names:
            c0, shape = self.columns[name]
            size = int(np.prod(shape)) if shape else 1
            block = self.data[: self.n_done, c0:c0 + size]
            out[name] = block[:, 0] if not shape else block.reshape((self.n_done, *shape))
        return out

    def log_text(self, min_status: int = 0) -> str:
        """The log messages with status >= ``min_status``, one per line (``[ERROR] cat: msg``)."""
        return "\n".join(
            f"[{STATUS_NAMES[s].upper() if 0 <= s < len(STATUS_NAMES) else s}] "
            f"{c + ': ' if c else ''}{m}"
            for s, c, m in self.messages if s >= min_status
        )


class BoundedLog:
    """The FMU's log messages of one run, bounded: the first ``head`` and the last ``tail``.

    A chatty FMU can log gigabytes in one run; what matters is the head (what went wrong first)
    and the tail (what happened last).  Messages in between are counted, not kept; iterating
    yields the head, one ``(status, "", "[... N messages dropped ...]")`` marker and the tail.

    Parameters
    ----------
    head, tail : int
        Messages kept at each end.
    """

    def __init__(self, head: int = 100, tail: int = 400) -> None:
        from collections import deque

        self.head: list[tuple[int, str, str]] = []
        self.tail: deque = deque(maxlen=tail)
        self._head_size = head
        self.dropped = 0
        self._worst_dropped = 0

    def append(self, message: tuple[int, str, str]) -> None:
        """Keep ``message`` (status, category, text) at the head or in the tail window."""
        if len(self.head) < self._head_size:
            self.head.append(message)
            return
        if len(self.tail) == self.tail.maxlen:
            old = self.tail[0]
            self.dropped += 1
            self._worst_dropped = max(self._worst_dropped, old[0])
        self.tail.append(message)

    def __iter__(self):
        yield from self.head
        if self.dropped:
            yield (self._worst_dropped, "", f"[... {self.dropped} log messages dropped ...]")
        yield from self.tail

    def __len__(self) -> int:
        return len(self.head) + len(self.tail) + (1 if self.dropped else 0)


@runtime_checkable
class Backend(Protocol):
    """Interface of a simulation backend (one FMU, one instance, many runs)."""

    name: str

    def open(self, fmu_path: str | os.PathLike, info: Any = None) -> None:
        """Extract and instantiate the FMU (``info``: its :class:`~fmu_surrogate.fmu.model.loading.FMUInfo`)."""

    def run(
        self,
        start_values: Mapping[str, Any],
        inputs: Mapping[str, np.ndarray],
        time: np.ndarray,
        record: Sequence[str],
        *,
        out: np.ndarray | None = None,
        progress: np.ndarray | None = None,
    ) -> RunOutput:
        """Execute one run on the grid ``time`` (shape (T,)); ``inputs[name]`` has shape (T,).

        ``out`` (optional, shape (T, n_columns) float64) receives the recorded values in place;
        ``progress[0]`` (optional int64 array) is updated with the number of rows written so far,
        so that a supervising process can recover partial data after a crash.
        """

    def close(self) -> None:
        """Free the instance and delete the extracted files."""


def _opened_info(fmu_path: str | os.PathLike, info: Any) -> Any:
    """The FMU's :class:`~fmu_surrogate.fmu.model.loading.FMUInfo` (read from ``fmu_path`` unless given),
    checked to have a binary for this platform (what every backend's ``open`` needs first)."""
    if info is None:
        from fmu_surrogate.fmu.model.loading import open_fmu

        info = open_fmu(fmu_path)
    info.require_binary()
    return info


def _column_layout(variables: Sequence[Any]) -> tuple[dict[str, tuple[int, tuple]], int]:
    cols, c = {}, 0
    for v in variables:
        shape = tuple(v.shape or ())
        cols[v.name] = (c, shape)
        c += int(np.prod(shape)) if shape else 1
    return cols, c
