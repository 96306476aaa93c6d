"""Simulation backends: one FMU instance, many runs.

A backend extracts and instantiates an FMU once (:meth:`Backend.open`) and then executes runs on
that instance (:meth:`Backend.run`: reset, set start values, initialise, step, record).  Reusing
the instance matters: docs/design.md §8 measured ``simulate_fmu`` at about 84 runs/s against about
213 runs/s for a hand-written stepping loop on the same tiny FMU.

Backends do not classify failures and never raise for a failing *run*: :meth:`Backend.run`
returns a :class:`RunOutput` that carries the partial data, the FMU's own log messages (captured
through the logger callback) and the exception, if any.  The isolated runner
(:mod:`fmu_surrogate.fmu.runner`) turns that into a failure kind.

* :class:`FmpyBackend` (default) — FMI 2.0 and 3.0.  Co-simulation runs use a hand-written stepping
  loop that calls the FMU's C functions directly (one ``fmi2GetReal`` of all recorded value
  references per communication point, written straight into a preallocated array); model
  exchange runs go through ``fmpy.simulate_fmu`` with CVode on the reused instance.
* :class:`PyFMIBackend` — used when ``pyfmi`` is importable.
* :func:`get_backend` — ``"auto"`` picks fmpy.

Input convention (co-simulation): the input value at communication point ``t[i]`` is set before the
values of row ``i`` are read and held constant over the step ``[t[i], t[i+1])`` (zero-order hold).
Model exchange interpolates the input samples linearly (fmpy's ``Input``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from ctypes import CFUNCTYPE, byref, c_bool, c_double, c_int, c_size_t, c_uint, c_void_p
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import Self

__all__ = [
    "STATUS_NAMES",
    "Backend",
    "FmpyBackend",
    "PyFMIBackend",
    "RunOutput",
    "available_backends",
    "get_backend",
]

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
        """Extract and instantiate the FMU (``info``: its :class:`~fmu_surrogate.fmu.model.FMUInfo`)."""

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


# ---------------------------------------------------------------------------- helpers
def _column_layout(variables: Sequence[Any]) -> tuple[dict[str, tuple[int, tuple]], int]:
    cols, c = {}, 0
    for v in variables:
        shape = tuple(v.shape or ())
        cols[v.name] = (c, shape)
        c += int(np.prod(shape)) if shape else 1
    return cols, c


def _as_type(value: Any, vtype: str) -> Any:
    if vtype in ("Real", "Float64", "Float32"):
        return float(value)
    if vtype == "Boolean":
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "yes")
        return bool(value)
    if vtype == "String":
        return str(value)
    v = float(value)
    if v != round(v):
        raise ValueError(f"value {value!r} is not an integer but the variable has type {vtype}")
    return round(v)


def _setter_type(vtype: str, fmi3: bool) -> str:
    if vtype == "Enumeration":
        return "Int64" if fmi3 else "Integer"
    return vtype


_FMI2_GET = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, c_void_p)
_FMI2_STEP = CFUNCTYPE(c_int, c_void_p, c_double, c_double, c_int)
_FMI2_STATUS_BOOL = CFUNCTYPE(c_int, c_void_p, c_int, c_void_p)
_FMI3_GET = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, c_void_p, c_size_t)
_FMI3_STEP = CFUNCTYPE(c_int, c_void_p, c_double, c_double, c_bool, c_void_p, c_void_p, c_void_p,
                       c_void_p)


def _fmi_call_exception(function: str, status: int) -> Exception:
    from fmpy.fmi1 import FMICallException

    return FMICallException(function=function, status=status)


# ---------------------------------------------------------------------------- fmpy
class FmpyBackend:
    """fmpy-based backend: FMI 2.0 / 3.0, co-simulation (fast loop) and model exchange (CVode).

    Parameters
    ----------
    interface : {"auto", "cs", "me"}
        ``"auto"`` uses co-simulation when the FMU supports it, else model exchange.
    tolerance : float, optional
        Relative tolerance passed to ``SetupExperiment`` / CVode (default: the FMU's default
        experiment, else the solver default).
    reuse_instance : bool
        Reset and reuse one instance for all runs (default).  ``False`` frees and re-instantiates
        before every run (for FMUs whose ``Reset`` is broken).
    log_sink : callable, optional
        ``log_sink(status, category, message)`` is called for every FMU log message in addition to
        collecting it in :attr:`RunOutput.messages` (the isolated runner echoes messages to its log
        file so that they survive a crash).
    """

    name = "fmpy"

    def __init__(self, interface: str = "auto", tolerance: float | None = None,
                 reuse_instance: bool = True, log_sink: LogSink | None = None) -> None:
        if interface not in ("auto", "cs", "me"):
            raise ValueError(f"interface must be 'auto', 'cs' or 'me', got {interface!r}")
        self.interface = interface
        self.tolerance = tolerance
        self.reuse_instance = reuse_instance
        self.log_sink = log_sink
        self._fmu = None
        self._unzipdir: str | None = None
        self._messages: BoundedLog = BoundedLog()
        self._dirty = False
        self._fatal = False
        self._cache: dict[tuple, Any] = {}
        self._grid_cache: tuple | None = None

    # ------------------------------------------------------------------ lifecycle
    def open(self, fmu_path: str | os.PathLike, info: Any = None) -> None:
        """Extract the FMU once and instantiate it.

        Parameters
        ----------
        fmu_path : path-like
        info : FMUInfo, optional
            From :func:`fmu_surrogate.fmu.model.open_fmu` (read here when not given).
        """
        from fmpy import extract
        from fmpy.model_description import read_model_description

        if info is None:
            from fmu_surrogate.fmu.model import open_fmu

            info = open_fmu(fmu_path)
        info.require_binary()
        self.info = info
        self.fmi3 = str(info.fmi_version).startswith("3")
        if self.interface == "cs" or (self.interface == "auto" and info.supports_cs):
            if not info.supports_cs:
                raise ValueError(f"{info.name} does not support co-simulation; use "
                                 f"interface='me' or 'auto'.")
            self.kind = "cs"
        else:
            if not info.supports_me:
                raise ValueError(f"{info.name} does not support model exchange; use "
                                 f"interface='cs' or 'auto'.")
            self.kind = "me"
        self._vars = {v.name: v for v in info.variables}
        self._unzipdir = _extract_checked(fmu_path, extract)
        self._md = read_model_description(self._unzipdir, validate=False)
        if self.tolerance is None and info.default_experiment.tolerance is not None:
            self.tolerance = info.default_experiment.tolerance
        self._instantiate()

    def _log(self, status: int, category: str, message: str) -> None:
        self._messages.append((status, category, message))
        if self.log_sink is not None:
            self.log_sink(status, category, message)

    def _instantiate(self) -> None:
        from fmpy import calloc, free
        from fmpy.fmi2 import (
            FMU2Model,
            FMU2Slave,
            fmi2CallbackAllocateMemoryTYPE,
            fmi2CallbackFreeMemoryTYPE,
            fmi2CallbackFunctions,
            fmi2CallbackLoggerTYPE,
        )

        ident = self.info.model_identifier_cs if self.kind == "cs" else \
            self.info.model_identifier_me
        args = {"guid": self.info.guid, "unzipDirectory": self._unzipdir, "modelIdentifier": ident,
                    "instanceName": self.info.name}
        if self.fmi3:
            from fmpy.fmi3 import FMU3Model, FMU3Slave

            def logger3(env, status, category, message):
                self._log(int(status), (category or b"").decode("utf-8", "replace"),
                          (message or b"").decode("utf-8", "replace"))

            self._fmu = (FMU3Slave if self.kind == "cs" else FMU3Model)(**args)
            self._fmu.instantiate(logMessage=logger3)
        else:
            def logger2(env, instance, status, category, message):
                self._log(int(status), (category or b"").decode("utf-8", "replace"),
                          (message or b"").decode("utf-8", "replace"))

            cb = fmi2CallbackFunctions()
            cb.logger = fmi2CallbackLoggerTYPE(logger2)
            cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
            cb.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
            from fmpy.logging import addLoggerProxy

            addLoggerProxy(byref(cb))  # formats the printf-style varargs in C
            self._callbacks = cb
            self._fmu = (FMU2Slave if self.kind == "cs" else FMU2Model)(**args)
            self._fmu.instantiate(callbacks=cb)
        self._dirty = False
        self._fatal = False
        self._cache.clear()
        self._bind_raw()

    def _bind_raw(self) -> None:
        """Raw C entry points (no per-call Python wrapping) for the co-simulation loop."""
        dll = self._fmu.dll
        if self.fmi3:
            self._getF64 = _FMI3_GET(("fmi3GetFloat64", dll))
            self._setF64 = _FMI3_GET(("fmi3SetFloat64", dll))
            if self.kind == "cs":
                self._doStep3 = _FMI3_STEP(("fmi3DoStep", dll))
        else:
            self._getReal = _FMI2_GET(("fmi2GetReal", dll))
            self._setReal = _FMI2_GET(("fmi2SetReal", dll))
            if self.kind == "cs":
                self._doStep = _FMI2_STEP(("fmi2DoStep", dll))
                self._getBoolStatus = _FMI2_STATUS_BOOL(("fmi2GetBooleanStatus", dll))
        self._comp = self._fmu.component

    def _free_instance(self) -> None:
        if self._fmu is None:
            return
        with contextlib.suppress(Exception):  # best effort on a broken instance
            if self.fmi3:
                self._fmu.fmi3FreeInstance(self._fmu.component)
            else:
                self._fmu.fmi2FreeInstance(self._fmu.component)

    def close(self) -> None:
        """Free the instance, unload the library and delete the extracted files."""
        if self._fmu is not None:
            self._free_instance()
            with contextlib.suppress(Exception):
                self._fmu.freeLibrary()
            self._fmu = None
        if self._unzipdir:
            shutil.rmtree(self._unzipdir, ignore_errors=True)
            self._unzipdir = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ run preparation
    def _fresh_instance(self) -> None:
        """Bring the instance back to the *instantiated* state (reset, or re-instantiate)."""
        if not self._dirty:
            return
        if self.reuse_instance and not self._fatal:
            with contextlib.suppress(Exception):  # else fall back to a new instance
                self._fmu.reset()
                self._dirty = False
                return
        self._free_instance()
        self._instantiate()

    def _apply_start_values(self, start_values: Mapping[str, Any]) -> None:
        fmu = self._fmu
        for name, value in start_values.items():
            v = self._vars.get(name)
            if v is None:
                from fmu_surrogate.fmu.errors import UnknownVariableError

                raise UnknownVariableError(name, self._vars, model=self.info.name)
            t = _setter_type(v.type, self.fmi3)
            if v.shape:
                vals = [_as_type(x, v.type) for x in np.ravel(value)]
            else:
                vals = [_as_type(value, v.type)]
            getattr(fmu, "set" + t)([v.value_reference], vals)

    def _layout(self, record: tuple[str, ...], input_names: tuple[str, ...]):
        key = (record, input_names)
        lay = self._cache.get(key)
        if lay is not None:
            return lay
        rec_vars = []
        for n in record:
            v = self._vars.get(n)
            if v is None:
                from fmu_surrogate.fmu.errors import UnknownVariableError

                raise UnknownVariableError(n, self._vars, model=self.info.name)
            rec_vars.append(v)
        cols, ncol = _column_layout(rec_vars)
        fast_type = "Float64" if self.fmi3 else "Real"
        fast = [v for v in rec_vars if v.type == fast_type]
        slow = [v for v in rec_vars if v.type != fast_type]
        # fast columns are contiguous only if fast vars are a prefix in record order; map them
        fast_cols = []
        for v in fast:
            c0, shape = cols[v.name]
            fast_cols.extend(range(c0, c0 + (int(np.prod(shape)) if shape else 1)))
        in_vars = [self._vars[n] for n in input_names]
        fast_in = [v for v in in_vars if v.type == fast_type and not v.shape]
        slow_in = [v for v in in_vars if not (v.type == fast_type and not v.shape)]
        vr = (c_uint * max(1, len(fast)))(*[v.value_reference for v in fast])
        in_vr = (c_uint * max(1, len(fast_in)))(*[v.value_reference for v in fast_in])
        lay = {"cols": cols, "ncol": ncol, "fast": fast, "slow": slow, "fast_cols": fast_cols,
                   "n_fast_values": len(fast_cols), "fast_in": fast_in, "slow_in": slow_in, "vr": vr,
                   "in_vr": in_vr, "contiguous": fast_cols == list(range(len(fast_cols)))}
        self._cache[key] = lay
        return lay

    # ------------------------------------------------------------------ run
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
        """Execute one run; see :meth:`Backend.run`.  Never raises for a failing run."""
        time = np.ascontiguousarray(time, dtype=np.float64)
        record = tuple(record)
        input_names = tuple(inputs)
        lay = self._layout(record, input_names)
        n = time.shape[0]
        if out is None:
            out = np.empty((n, lay["ncol"]))
        if progress is None:
            progress = np.zeros(1, dtype=np.int64)
        progress[0] = 0
        self._messages = BoundedLog()
        res = RunOutput(record, lay["cols"], out, 0, messages=self._messages)
        try:
            self._fresh_instance()
            self._dirty = True
            if self.kind == "cs":
                self._run_cs(start_values, inputs, time, lay, out, progress, res)
            else:
                self._run_me(start_values, inputs, time, record, lay, out, progress, res)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            res.error = exc
            if getattr(exc, "status", None) == 4:  # fmi2Fatal / fmi3Fatal: only free is allowed
                self._fatal = True
        res.n_done = int(progress[0])
        res.messages = list(self._messages)
        return res

    def _initialize(self, start_values, inputs, t0, t_end) -> None:
        fmu = self._fmu
        if self.fmi3:
            self._apply_start_values(start_values)
            self._apply_start_values({k: v[0] for k, v in inputs.items()})
            fmu.enterInitializationMode(tolerance=self.tolerance, startTime=t0, stopTime=t_end)
            fmu.exitInitializationMode()
        else:
            fmu.setupExperiment(tolerance=self.tolerance, startTime=t0, stopTime=t_end)
            self._apply_start_values(start_values)
            self._apply_start_values({k: v[0] for k, v in inputs.items()})
            fmu.enterInitializationMode()
            fmu.exitInitializationMode()

    def _grid(self, time: np.ndarray) -> tuple[list[float], list[float]]:
        """``time`` and its steps as lists, computed once per grid (runs share it)."""
        g = self._grid_cache
        if g is None or not np.array_equal(g[0], time):  # O(T) compare, no Python objects
            g = self._grid_cache = (time.copy(), time.tolist(), np.diff(time).tolist())
        return g[1], g[2]

    @staticmethod
    def _input_block(fast_in, inputs) -> np.ndarray:
        """The fast inputs as one (T, n_inputs) C array (a single float64 input: no copy)."""
        if len(fast_in) == 1:
            return np.ascontiguousarray(inputs[fast_in[0].name], dtype=np.float64).reshape(-1, 1)
        return np.ascontiguousarray(np.column_stack([inputs[v.name] for v in fast_in]),
                                    dtype=np.float64)

    def _run_cs(self, start_values, inputs, time, lay, out, progress, res) -> None:
        n = time.shape[0]
        t_list, h_list = self._grid(time)
        self._initialize(start_values, inputs, t_list[0], t_list[-1])
        comp = self._fmu.component
        nf = lay["n_fast_values"]
        nfv = len(lay["fast"])
        vr = ctypes.addressof(lay["vr"])
        contiguous = lay["contiguous"] and out.flags.c_contiguous and out.dtype == np.float64
        if contiguous:
            base = out.ctypes.data
            stride = out.strides[0]
            tmp = None
        else:
            tmp = np.empty(max(1, nf))
            base, stride = tmp.ctypes.data, 0
            fast_cols = lay["fast_cols"]
        fast_in = lay["fast_in"]
        nin = len(fast_in)
        in_base = in_stride = in_vr = 0
        if nin:
            u = self._input_block(fast_in, inputs)
            in_base, in_stride = u.ctypes.data, u.strides[0]
            in_vr = ctypes.addressof(lay["in_vr"])
        slow_in = [(v, inputs[v.name]) for v in lay["slow_in"]]
        slow = lay["slow"]
        slow_get = [(getattr(self._fmu, "get" + _setter_type(v.type, self.fmi3)),
                     v.value_reference, lay["cols"][v.name], v) for v in slow]
        fmu = self._fmu
        last = n - 1
        if not self.fmi3 and contiguous and not slow_in and not slow_get:
            self._loop_fmi2(comp, n, t_list, h_list, nin, in_vr, in_base, in_stride, nfv, vr,
                            base, stride, progress, res)
            with contextlib.suppress(Exception):  # the data is complete; terminate is courtesy
                fmu.terminate()
            return
        if self.fmi3:
            get = self._getF64
            setf = self._setF64
            step3 = self._doStep3
            ev, term, early, lst = c_bool(), c_bool(), c_bool(), c_double()
            a_ev, a_term, a_early, a_lst = (ctypes.addressof(ev), ctypes.addressof(term),
                                            ctypes.addressof(early), ctypes.addressof(lst))
            fn_get, fn_set, fn_step = "fmi3GetFloat64", "fmi3SetFloat64", "fmi3DoStep"
        else:
            get = self._getReal
            setf = self._setReal
            step = self._doStep
            fn_get, fn_set, fn_step = "fmi2GetReal", "fmi2SetReal", "fmi2DoStep"
        for i in range(n):
            if nin:
                st = (setf(comp, in_vr, nin, in_base + i * in_stride, nin) if self.fmi3
                      else setf(comp, in_vr, nin, in_base + i * in_stride))
                if st > 1:
                    res.error_time = t_list[i]
                    raise _fmi_call_exception(fn_set, st)
            for v, arr in slow_in:
                self._apply_start_values({v.name: arr[i]})
            if nfv:
                st = (get(comp, vr, nfv, base + i * stride, nf) if self.fmi3
                      else get(comp, vr, nfv, base + i * stride))
                if st > 1:
                    res.error_time = t_list[i]
                    raise _fmi_call_exception(fn_get, st)
                if tmp is not None:
                    out[i, fast_cols] = tmp[:nf]
            for getter, ref, (c0, shape), v in slow_get:
                vals = getter([ref]) if not self.fmi3 else getter(
                    [ref], nValues=int(np.prod(shape)) if shape else 1)
                out[i, c0:c0 + len(vals)] = vals
            progress[0] = i + 1
            if i == last:
                break
            if self.fmi3:
                st = step3(comp, t_list[i], h_list[i], True, a_ev, a_term, a_early, a_lst)
                if st > 1:
                    res.error_time = t_list[i]
                    raise _fmi_call_exception(fn_step, st)
                if term.value:
                    # the step up to lastSuccessfulTime was completed: record it if it is ours
                    if abs(lst.value - t_list[i + 1]) <= 1e-9 * max(1.0, abs(t_list[i + 1])):
                        j = i + 1
                        if nfv:
                            get(comp, vr, nfv, base + j * stride, nf)
                            if tmp is not None:
                                out[j, fast_cols] = tmp[:nf]
                        for getter, ref, (c0, shape), v in slow_get:
                            vals = getter([ref], nValues=int(np.prod(shape)) if shape else 1)
                            out[j, c0:c0 + len(vals)] = vals
                        progress[0] = j + 1
                    res.stopped_early = True
                    res.error_time = t_list[i]
                    break
            else:
                st = step(comp, t_list[i], h_list[i], 1)
                if st > 1:
                    res.error_time = t_list[i]
                    if st == 2:  # fmi2Discard: terminated by the FMU, or a step it cannot do
                        flag = c_int(0)
                        self._getBoolStatus(comp, 3, ctypes.addressof(flag))  # fmi2Terminated
                        if flag.value:
                            res.stopped_early = True
                            break
                    raise _fmi_call_exception(fn_step, st)
        with contextlib.suppress(Exception):  # the data is complete; terminate is courtesy
            fmu.terminate()

    def _loop_fmi2(self, comp, n, t_list, h_list, nin, in_vr, in_base, in_stride, nfv, vr, base,
                   stride, progress, res) -> None:
        """The FMI 2 co-simulation loop of the common case: Real inputs and outputs written
        straight from/into C arrays, no per-step Python work beyond the three C calls."""
        setf, get, step = self._setReal, self._getReal, self._doStep
        in_addr, out_addr = in_base, base
        last = n - 1
        for i in range(n):
            if nin:
                st = setf(comp, in_vr, nin, in_addr)
                if st > 1:
                    res.error_time = t_list[i]
                    raise _fmi_call_exception("fmi2SetReal", st)
                in_addr += in_stride
            if nfv:
                st = get(comp, vr, nfv, out_addr)
                if st > 1:
                    res.error_time = t_list[i]
                    raise _fmi_call_exception("fmi2GetReal", st)
                out_addr += stride
            progress[0] = i + 1
            if i == last:
                return
            st = step(comp, t_list[i], h_list[i], 1)
            if st > 1:
                res.error_time = t_list[i]
                if st == 2:  # fmi2Discard: terminated by the FMU, or a step it cannot do
                    flag = c_int(0)
                    self._getBoolStatus(comp, 3, ctypes.addressof(flag))  # fmi2Terminated
                    if flag.value:
                        res.stopped_early = True
                        return
                raise _fmi_call_exception("fmi2DoStep", st)

    def _run_me(self, start_values, inputs, time, record, lay, out, progress, res) -> None:
        from fmpy import simulate_fmu

        n = time.shape[0]
        dt = np.diff(time)
        if n > 2 and not np.allclose(dt, dt[0], rtol=1e-9, atol=0):
            raise ValueError("model exchange needs a uniform time grid (start, stop, step)")
        sig = None
        if inputs:
            sig = np.zeros(n, dtype=[("time", np.float64)] + [(k, np.float64) for k in inputs])
            sig["time"] = time
            for k, v in inputs.items():
                sig[k] = v
        holder: dict[str, Any] = {}

        def step_finished(t, recorder):
            holder["rec"] = recorder
            return True

        def copy_partial() -> None:
            rec = holder.get("rec")
            if rec is None or not rec.rows:
                return
            arr = np.array(rec.rows, dtype=np.dtype(rec.cols))
            self._fill_from_structured(arr, time, record, lay, out, progress)

        def unraisable(u) -> None:
            # an FMI error inside CVode's right-hand-side callback cannot propagate through C;
            # keep it as a log message of the run instead of a stray warning
            exc = u.exc_value
            status = getattr(exc, "status", 3)
            self._log(int(status) if isinstance(status, int) else 3, "solver callback",
                      f"{type(exc).__name__}: {exc}")

        old_hook = sys.unraisablehook
        sys.unraisablehook = unraisable
        try:
            result = simulate_fmu(
                self._unzipdir, validate=False, start_time=float(time[0]),
                stop_time=float(time[-1]), output_interval=float(dt[0]) if n > 1 else 1.0,
                relative_tolerance=self.tolerance, record_events=False,
                start_values=dict(start_values), input=sig, output=list(record),
                model_description=self._md, fmu_instance=self._fmu,
                step_finished=step_finished, fmi_type="ModelExchange",
            )
        except BaseException:
            copy_partial()
            raise
        finally:
            sys.unraisablehook = old_hook
        self._fill_from_structured(result, time, record, lay, out, progress)
        if progress[0] < n:
            res.stopped_early = True

    @staticmethod
    def _fill_from_structured(arr, time, record, lay, out, progress) -> None:
        n = time.shape[0]
        tt = np.asarray(arr["time"], dtype=float)
        # one row per grid point: match by time (fmpy may add the last sample twice)
        idx = np.searchsorted(time, tt - 1e-9 * max(1.0, abs(time[-1])))
        keep = (idx < n) & np.isclose(time[np.minimum(idx, n - 1)], tt, rtol=1e-9, atol=1e-12)
        k = 0
        for row, j in enumerate(idx):
            if not keep[row] or j != k:
                continue
            for name in record:
                c0, _shape = lay["cols"][name]
                val = np.ravel(arr[name][row]).astype(float)
                out[k, c0:c0 + val.size] = val
            k += 1
        progress[0] = k

    # ------------------------------------------------------------------ stepwise API
    def start(self, start_values: Mapping[str, Any], start_time: float,
              stop_time: float | None = None, inputs: Mapping[str, float] | None = None) -> None:
        """Reset, set start values and initial inputs, initialise (co-simulation only)."""
        if self.kind != "cs":
            raise ValueError("stepwise sessions need a co-simulation FMU")
        self._messages = BoundedLog()
        self._fresh_instance()
        self._dirty = True
        self._initialize(start_values, {k: [v] for k, v in (inputs or {}).items()},
                         float(start_time), stop_time)

    def set_values(self, values: Mapping[str, Any]) -> None:
        """Set variables (inputs, tunable parameters) by name."""
        self._apply_start_values(values)

    def get_values(self, names: Sequence[str]) -> np.ndarray:
        """Current values of ``names`` (one column per scalar, FMI 3 arrays flattened)."""
        lay = self._layout(tuple(names), ())
        row = np.empty(lay["ncol"])
        for name in names:
            v = self._vars[name]
            c0, shape = lay["cols"][name]
            getter = getattr(self._fmu, "get" + _setter_type(v.type, self.fmi3))
            vals = getter([v.value_reference]) if not self.fmi3 else getter(
                [v.value_reference], nValues=int(np.prod(shape)) if shape else 1)
            row[c0:c0 + len(vals)] = vals
        return row

    def do_step(self, t: float, h: float) -> bool:
        """One communication step from ``t`` of size ``h``; ``True`` if the FMU terminated."""
        if self.fmi3:
            _, term, _, _ = self._fmu.doStep(t, h)
            return bool(term)
        st = self._doStep(self._fmu.component, t, h, 1)
        if st <= 1:
            return False
        if st == 2:
            flag = c_int(0)
            self._getBoolStatus(self._fmu.component, 3, ctypes.addressof(flag))
            if flag.value:
                return True
        raise _fmi_call_exception("fmi2DoStep", st)

    @property
    def messages(self) -> list[tuple[int, str, str]]:
        """Log messages since the last :meth:`run` / :meth:`start`."""
        return self._messages


# ---------------------------------------------------------------------------- PyFMI
class PyFMIBackend:
    """PyFMI-based backend (only when ``pyfmi`` is importable; it has no usable wheel here).

    Runs use ``model.simulate`` with ``ncp`` communication points on the same grid; the instance is
    reset between runs.  FMU log messages come from ``model.get_log()``.
    """

    name = "pyfmi"

    def __init__(self, interface: str = "auto", tolerance: float | None = None, **_: Any) -> None:
        import pyfmi  # noqa: F401 - raises ImportError when absent

        self.interface = interface
        self.tolerance = tolerance
        self._model = None

    def open(self, fmu_path: str | os.PathLike, info: Any = None) -> None:
        import pyfmi

        if info is None:
            from fmu_surrogate.fmu.model import open_fmu

            info = open_fmu(fmu_path)
        info.require_binary()
        self.info = info
        kind = "CS" if (self.interface == "cs" or (self.interface == "auto" and info.supports_cs)) \
            else "ME"
        self.kind = kind.lower()
        self._model = pyfmi.load_fmu(str(fmu_path), kind=kind, log_level=4)
        self._used = False

    def run(self, start_values, inputs, time, record, *, out=None, progress=None) -> RunOutput:
        time = np.asarray(time, dtype=float)
        record = list(record)
        vars_ = [self.info.variable(n) for n in record]
        cols, ncol = _column_layout(vars_)
        n = time.shape[0]
        if out is None:
            out = np.empty((n, ncol))
        if progress is None:
            progress = np.zeros(1, dtype=np.int64)
        progress[0] = 0
        res = RunOutput(record, cols, out, 0)
        m = self._model
        try:
            if self._used:
                m.reset()
            self._used = True
            for k, v in start_values.items():
                m.set(k, v)
            opts = m.simulate_options()
            opts["ncp"] = n - 1
            opts["result_handling"] = "memory"
            if self.tolerance is not None and self.kind == "me":
                opts["CVode_options"]["rtol"] = self.tolerance
            inp = None
            if inputs:
                names = list(inputs)
                table = np.column_stack([time] + [np.asarray(inputs[k]) for k in names])
                inp = (names, table)
            r = m.simulate(start_time=float(time[0]), final_time=float(time[-1]), input=inp,
                           options=opts)
            tt = np.asarray(r["time"])
            k = min(n, tt.shape[0])
            for name in record:
                c0, _ = cols[name]
                out[:k, c0] = np.interp(time[:k], tt, np.asarray(r[name], dtype=float))
            progress[0] = k
            res.stopped_early = k < n or tt[-1] < time[-1] - 1e-9 * max(1.0, abs(time[-1]))
        except Exception as exc:  # noqa: BLE001
            res.error = exc
        with contextlib.suppress(Exception):
            res.messages = [(3 if "error" in str(line).lower() else 0, "", str(line))
                            for line in m.get_log()[-50:]]
        res.n_done = int(progress[0])
        return res

    def close(self) -> None:
        if self._model is not None:
            with contextlib.suppress(Exception):
                self._model.free_instance()
            self._model = None


# ---------------------------------------------------------------------------- factory
def available_backends() -> list[str]:
    """Names of the backends usable here (``"fmpy"`` always, ``"pyfmi"`` when importable)."""
    names = ["fmpy"]
    try:
        import pyfmi  # noqa: F401

        names.append("pyfmi")
    except ImportError:
        pass
    return names


def get_backend(name: str = "auto", **options: Any) -> Backend:
    """Create a backend by name.

    Parameters
    ----------
    name : {"auto", "fmpy", "pyfmi"}
        ``"auto"`` is fmpy (PyFMI is used only when asked for).
    **options
        Passed to the backend constructor (``interface``, ``tolerance``, ...).

    Raises
    ------
    ValueError
        Unknown name, or ``"pyfmi"`` when PyFMI is not installed.
    """
    key = (name or "auto").lower()
    if key in ("auto", "fmpy"):
        return FmpyBackend(**options)
    if key == "pyfmi":
        try:
            return PyFMIBackend(**options)
        except ImportError:
            raise ValueError("backend 'pyfmi' needs PyFMI, which is not installed (it has no pip "
                             "wheel here; install it with conda: `conda install -c conda-forge "
                             "pyfmi`), or use --backend fmpy.") from None
    raise ValueError(f"unknown backend {name!r}; choose one of: auto, "
                     f"{', '.join(available_backends())}.")


def _extract_checked(fmu_path: Any, extract: Any) -> str:
    """Extract the FMU once, after the archive limits; CRCs are checked by the extraction."""
    import zipfile

    from fmu_surrogate.fmu.archive import check_archive
    from fmu_surrogate.fmu.tempdirs import scratch_root

    with zipfile.ZipFile(fmu_path) as z:
        check_archive(z, fmu_path)
    target = tempfile.mkdtemp(prefix="fmu-surrogate-fmu-", dir=scratch_root())
    try:
        return extract(str(fmu_path), target)
    except BaseException:
        import shutil

        shutil.rmtree(target, ignore_errors=True)
        raise
