"""The names of the dataset format (:mod:`fmu_surrogate.fmu.dataset` documents it): its version,
the failure kinds, the reserved names and how FMU variable names are escaped, the element names
of array variables, the table of signal descriptions, and :class:`RunRecord` (one run)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fmu_surrogate.errors import InvalidInputError

#: Version of the on-disk layout described in the module docstring.
FORMAT_VERSION = 2
#: Value of the global ``format`` attribute that marks our files.
FORMAT_NAME = "fmu-surrogate dataset"

STATUS_OK = "ok"
STATUS_FAILED = "failed"

#: The reasons a run can fail, ``{kind: meaning}``.  ``failure_kind`` is ``""`` for ok runs.
FAILURE_KINDS: dict[str, str] = {
    "error_status": "an FMI call returned an error status (fmi2Error/fmi2Fatal/Discard, fmpy "
                    "FMICallException); the FMU's own log message is in `message`",
    "exception": "a Python exception during set-up or simulation that is not an FMI status, "
                 "e.g. the model-exchange solver (CVode RuntimeError) giving up",
    "non_finite": "the FMU returned NaN or inf values (diverged without reporting an error)",
    "exploding": "the FMU returned finite but exploding values (beyond the campaign's bound, e.g. "
                 "1e104 from a diverged co-simulation step)",
    "crash": "the worker process died of a fault of the FMU (segmentation fault, abort, bus "
             "error, an exit in the model code)",
    "timeout": "the run exceeded its wall-clock time limit (the FMU hangs or is too slow)",
    "early_stop": "the FMU ended the run before the stop time without an error (the recorded "
                  "samples up to that point are kept)",
    "interrupted": "the worker was stopped from outside during the run (SIGTERM, SIGINT, SIGHUP "
                   "from a user or a batch system, SIGKILL from the out-of-memory killer or a "
                   "user) or lost; not a failure of the FMU: running the same harvest again "
                   "simulates the run again",
}

#: Failure kinds that say nothing about the FMU: the run did not end by itself, and a resumed
#: harvest simulates it again.  Datasets written before this kind existed have none of them
#: (a worker killed from outside was then recorded as ``"crash"``).
RERUN_KINDS: frozenset[str] = frozenset({"interrupted"})

_PER_RUN = ("status", "failure_kind", "message", "n_samples", "wall_time", "signal")
_SIGNAL_DIM = "signal_set"
#: Names that version 1 did not reserve (its FMU variables may be stored under them).
_NEW_IN_2 = ("signal_index", "signal_table", _SIGNAL_DIM)
_RESERVED = frozenset(("time", "run") + _PER_RUN + _NEW_IN_2)
_PARAM_PREFIX = "param:"
_VAR_PREFIX = "var:"


def escape_name(name: str) -> str:
    """NetCDF variable name of the FMU variable ``name`` (identity for almost all names).

    See the module docstring; :func:`unescape_name` inverts it exactly.
    """
    s = name.replace("%", "%25").replace("/", "%2F")
    if s in (".", ".."):
        s = s.replace(".", "%2E")
    if s in _RESERVED or s.startswith((_PARAM_PREFIX, _VAR_PREFIX)):
        s = _VAR_PREFIX + s
    return s


_UNESCAPE = {"%25": "%", "%2F": "/", "%2E": "."}


def unescape_name(stored: str) -> str:
    """Inverse of :func:`escape_name`."""
    stored = stored.removeprefix(_VAR_PREFIX)
    return re.sub(r"%(25|2F|2E)", lambda m: _UNESCAPE[m.group(0)], stored)


def param_var_name(name: str) -> str:
    """The data variable of parameter ``name``: ``param:`` and the name with ``%`` and ``/`` escaped."""
    return _PARAM_PREFIX + name.replace("%", "%25").replace("/", "%2F")


def element_suffixes(shape: tuple[int, ...]) -> list[tuple[str, tuple[int, ...]]]:
    """``("1,2", (0, 1))`` pairs of an array variable of ``shape``: 1-based text, 0-based index, row-major."""
    out = []
    for idx in np.ndindex(*shape):
        out.append((",".join(str(i + 1) for i in idx), idx))
    return out


def signal_table(descriptions: Iterable[str]) -> tuple[list[str], np.ndarray]:
    """The distinct texts of ``descriptions`` (first-seen order) and each one's position.

    Shared string objects are hashed once (Python caches a string's hash), so a campaign's
    ``signal`` column of many runs with few signals costs one dict lookup per run.
    """
    texts: dict[str, int] = {}
    index = np.array([texts.setdefault(d if type(d) is str else str(d), len(texts))
                      for d in descriptions], dtype=np.int64)
    return list(texts), index


@dataclass(frozen=True)
class RunRecord:
    """The result of one run, as produced by the runner.

    Attributes
    ----------
    index : int
        Run label (unique within a campaign; the ``run`` coordinate).
    params : dict of str to float
        Parameter values set for this run (others keep the FMU default).
    signals : dict of str to dict
        ``{input name: Signal.describe()}``.
    status : {"ok", "failed"}
    failure_kind : str
        ``""`` when ok, else a key of :data:`FAILURE_KINDS`.
    message : str
        FMU log / exception text.
    values : dict of str to ndarray
        ``{variable name: samples on the campaign's time grid}``; shape ``(n,)`` with
        ``n <= len(time)`` (a run that ended early is shorter), or ``(n, *shape)`` for FMI 3
        array variables.  May be empty for runs that failed before producing data.
    wall_time : float
        Seconds the run took.
    """

    index: int
    params: dict[str, float] = field(default_factory=dict)
    signals: dict[str, dict[str, Any]] = field(default_factory=dict)
    status: str = STATUS_OK
    failure_kind: str = ""
    message: str = ""
    values: dict[str, np.ndarray] = field(default_factory=dict)
    wall_time: float = float("nan")

    def __post_init__(self) -> None:
        if self.status not in (STATUS_OK, STATUS_FAILED):
            raise InvalidInputError(f"RunRecord {self.index}: status must be 'ok' or 'failed', got "
                                    f"{self.status!r}.")
        if self.status == STATUS_OK and self.failure_kind:
            raise InvalidInputError(f"RunRecord {self.index}: an ok run has failure_kind ''; got "
                                    f"{self.failure_kind!r}.")
        if self.status == STATUS_FAILED and self.failure_kind not in FAILURE_KINDS:
            raise InvalidInputError(
                f"RunRecord {self.index}: failure_kind {self.failure_kind!r} is not "
                f"one of {sorted(FAILURE_KINDS)}.")

    @property
    def ok(self) -> bool:
        """``status == "ok"``."""
        return self.status == STATUS_OK

    @property
    def n_samples(self) -> int:
        """Number of samples recorded (longest value array; 0 when there are none)."""
        return max((len(np.asarray(v)) for v in self.values.values()), default=0)
