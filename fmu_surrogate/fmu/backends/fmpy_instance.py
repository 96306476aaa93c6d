"""The fmpy backend: FMI 2.0 and 3.0, one instance reused for many runs.

Co-simulation runs use a hand-written stepping loop that calls the FMU's C functions directly
(:mod:`~fmu_surrogate.fmu.backends.fmpy_cs`); model-exchange runs go through ``fmpy.simulate_fmu`` with
CVode on the reused instance (:mod:`~fmu_surrogate.fmu.backends.fmpy_me`).  This module holds the instance:
extraction, instantiation with the logger callback, reset, start values, initialisation, and the
stepwise API of a harvest session.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from ctypes import byref
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.fmu.backends.api import BoundedLog, LogSink, RunOutput, _opened_info
from fmu_surrogate.fmu.backends.fmpy_cs import (
    _FMI2_GET,
    _FMI2_STATUS_BOOL,
    _FMI2_STEP,
    _FMI3_GET,
    _FMI3_STEP,
    _as_type,
    _fmi_call_exception,
    _setter_type,
    fmi2_terminated,
    io_layout,
    run_cs,
)
from fmu_surrogate.fmu.backends.fmpy_me import run_me

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import Self

__all__ = ["RESET_CHECK_POINTS", "FmpyBackend", "restore_logger_proxy"]

#: Points of the first run repeated after ``Reset`` to check that it restores the initial state.
RESET_CHECK_POINTS = 11


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
        before every run.  Some vendors' ``Reset`` does not restore the initial state (measured:
        an FMU whose every second run after ``fmi2Reset`` stayed at the state the run before
        ended in, ``fmi2OK`` throughout); the first successful run of an instance is therefore
        repeated for its first :data:`RESET_CHECK_POINTS` points after a reset, and when the
        repetition is not bit-identical the backend re-instantiates before every run (one log
        message says so).
    log_sink : callable, optional
        ``log_sink(status, category, message)`` is called for every FMU log message in addition to
        collecting it in :attr:`RunOutput.messages` (the isolated runner echoes messages to its log
        file so that they survive a crash).
    native_loop : bool
        Step co-simulation runs with the compiled loop (:mod:`~fmu_surrogate.fmu.backends.
        native_loop`; bit-identical data, one C call per run) where it can be built (default);
        ``False`` keeps the Python loop.
    """

    name = "fmpy"

    def __init__(self, interface: str = "auto", tolerance: float | None = None,
                 reuse_instance: bool = True, log_sink: LogSink | None = None,
                 native_loop: bool = True) -> None:
        if interface not in ("auto", "cs", "me"):
            raise InvalidInputError(f"interface must be 'auto', 'cs' or 'me', got {interface!r}")
        self.interface = interface
        self.tolerance = tolerance
        self.reuse_instance = reuse_instance
        self.log_sink = log_sink
        self.native_loop = native_loop
        self._fmu = None
        self._unzipdir: str | None = None
        self._messages: BoundedLog = BoundedLog()
        self._dirty = False
        self._fatal = False
        self._cache: dict[tuple, Any] = {}
        self._grid_cache: tuple | None = None
        self._reset_checked = False

    # ------------------------------------------------------------------ lifecycle
    def open(self, fmu_path: str | os.PathLike, info: Any = None) -> None:
        """Extract the FMU once and instantiate it.

        Parameters
        ----------
        fmu_path : path-like
        info : FMUInfo, optional
            From :func:`fmu_surrogate.fmu.model.loading.open_fmu` (read here when not given).
        """
        from fmpy import extract
        from fmpy.model_description import read_model_description

        self.info = info = _opened_info(fmu_path, info)
        self.fmi3 = str(info.fmi_version).startswith("3")
        if self.interface == "cs" or (self.interface == "auto" and info.supports_cs):
            if not info.supports_cs:
                raise InvalidInputError(f"{info.name} does not support co-simulation; use "
                                        f"interface='me' or 'auto'.")
            self.kind = "cs"
        else:
            if not info.supports_me:
                raise InvalidInputError(f"{info.name} does not support model exchange; use "
                                        f"interface='cs' or 'auto'.")
            self.kind = "me"
        self._vars = info.variables_by_name
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
        self._fmu, self._callbacks = _new_instance(self.info, self._unzipdir, self.kind,
                                                   self.fmi3, self._log)
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
        if self._callbacks is not None:
            _LOGGERS.pop(self._callbacks, None)  # its messages no longer reach a closed instance
        self._callbacks = None
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
        check = self.reuse_instance and not self._reset_checked and not self._dirty
        try:
            self._fresh_instance()
            self._dirty = True
            self._step(start_values, inputs, time, record, lay, out, progress, res)
            if check:
                self._check_reset(start_values, inputs, time, record, lay, out,
                                  int(progress[0]))
        except Exception as exc:  # noqa: BLE001 - a failing run is data; a signal's exception
            # (KeyboardInterrupt, SystemExit, the harvest's SIGTERM) is not and ends the caller
            res.error = exc
            if getattr(exc, "status", None) == 4:  # fmi2Fatal / fmi3Fatal: only free is allowed
                self._fatal = True
        res.n_done = int(progress[0])
        res.messages = list(self._messages)
        return res

    def _step(self, start_values, inputs, time, record, lay, out, progress, res) -> None:
        if self.kind == "cs":
            run_cs(self, start_values, inputs, time, lay, out, progress, res)
        else:
            run_me(self, start_values, inputs, time, record, lay, out, progress, res)

    def _check_reset(self, start_values, inputs, time, record, lay, out, done: int) -> None:
        """Repeat the start of a successful first run after ``Reset``; keep reusing the
        instance only when the repetition is bit-identical (class docstring)."""
        k = min(done, RESET_CHECK_POINTS)
        if k < 2:
            return
        self._reset_checked = True
        again = np.empty((k, out.shape[1]))
        res = RunOutput(record, lay["cols"], again, 0, messages=BoundedLog())
        try:
            self._fmu.reset()
            self._step(start_values, {n: v[:k] for n, v in inputs.items()}, time[:k], record,
                       lay, again, np.zeros(1, dtype=np.int64), res)
            bits = np.ascontiguousarray(out[:k]).view(np.uint64) != again.view(np.uint64)
            if not bits.any():
                return
            row = int(np.flatnonzero(bits.any(axis=1))[0])
            where = f"after fmi2Reset the run differs from t = {time[row]:g} on"
        except Exception as exc:  # noqa: BLE001 - a reset that fails is a broken reset
            where = f"its reset or the run after it raised {type(exc).__name__}"
        self.reuse_instance = False
        self._log(0, "fmu-surrogate", f"{self.info.name}: {where}; a new instance for every "
                  "run (its Reset does not restore the initial state)")
        self._free_instance()
        self._instantiate()

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

    def _layout(self, record: tuple[str, ...], input_names: tuple[str, ...]) -> dict[str, Any]:
        key = (record, input_names)
        lay = self._cache.get(key)
        if lay is None:
            lay = self._cache[key] = io_layout(self._vars, record, input_names, self.fmi3,
                                               self.info.name)
        return lay

    def _grid(self, time: np.ndarray) -> tuple[list[float], list[float]]:
        """``time`` and its steps as lists, computed once per grid (runs share it)."""
        g = self._grid_cache
        if g is None or not np.array_equal(g[0], time):  # O(T) compare, no Python objects
            g = self._grid_cache = (time.copy(), time.tolist(), np.diff(time).tolist())
        return g[1], g[2]

    # ------------------------------------------------------------------ stepwise API
    def start(self, start_values: Mapping[str, Any], start_time: float,
              stop_time: float | None = None, inputs: Mapping[str, float] | None = None) -> None:
        """Reset, set start values and initial inputs, initialise (co-simulation only)."""
        if self.kind != "cs":
            raise InvalidInputError("stepwise sessions need a co-simulation FMU")
        self._messages = BoundedLog()
        self._fresh_instance()
        self._dirty = True
        self._initialize(start_values, {k: [v] for k, v in (inputs or {}).items()},
                         float(start_time), stop_time)

    def initialize(self, start_values: Mapping[str, Any], start_time: float,
                   stop_time: float | None = None) -> None:
        """Reset, set start values and enter initialisation mode (co-simulation only): a
        master exchanges the initial values of several FMUs with :meth:`set_values` and
        :meth:`get_values` before :meth:`end_initialization`."""
        if self.kind != "cs":
            raise InvalidInputError("stepwise sessions need a co-simulation FMU")
        self._messages = BoundedLog()
        self._fresh_instance()
        self._dirty = True
        fmu = self._fmu
        if self.fmi3:
            self._apply_start_values(start_values)
            fmu.enterInitializationMode(tolerance=self.tolerance, startTime=float(start_time),
                                        stopTime=stop_time)
        else:
            fmu.setupExperiment(tolerance=self.tolerance, startTime=float(start_time),
                                stopTime=stop_time)
            self._apply_start_values(start_values)
            fmu.enterInitializationMode()

    def end_initialization(self) -> None:
        """Leave the initialisation mode :meth:`initialize` entered."""
        self._fmu.exitInitializationMode()

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
        if st == 2 and fmi2_terminated(self._getBoolStatus, self._fmu.component):
            return True
        raise _fmi_call_exception("fmi2DoStep", st)

    @property
    def messages(self) -> list[tuple[int, str, str]]:
        """Log messages since the last :meth:`run` / :meth:`start`."""
        return self._messages


def _new_instance(info: Any, unzipdir: str, kind: str, fmi3: bool, log: LogSink) -> tuple:
    """A new fmpy instance of the extracted FMU (``kind``: ``"cs"`` or ``"me"``) whose log
    messages go to ``log(status, category, message)``; returns it with the key of its FMI 2 log
    function in the trampoline's table (``None`` for FMI 3)."""
    from fmpy.fmi2 import FMU2Model, FMU2Slave

    ident = info.model_identifier_cs if kind == "cs" else info.model_identifier_me
    args = {"guid": info.guid, "unzipDirectory": unzipdir, "modelIdentifier": ident,
            "instanceName": info.name}
    if fmi3:
        from fmpy.fmi3 import FMU3Model, FMU3Slave

        def logger3(env, status, category, message):
            log(int(status), (category or b"").decode("utf-8", "replace"),
                (message or b"").decode("utf-8", "replace"))

        fmu = (FMU3Slave if kind == "cs" else FMU3Model)(**args)
        fmu.instantiate(logMessage=logger3)
        return fmu, None

    def logger2(env, instance, status, category, message):
        log(int(status), (category or b"").decode("utf-8", "replace"),
            (message or b"").decode("utf-8", "replace"))

    key = next(_KEYS)
    _LOGGERS[key] = logger2
    cb = _trampoline_callbacks(key)  # fmpy's proxy formats the printf-style varargs in C
    fmu = (FMU2Slave if kind == "cs" else FMU2Model)(**args)
    fmu.instantiate(callbacks=cb)
    return fmu, key


#: fmpy's C logging proxy (``fmpy.logging.addLoggerProxy``) keeps *one* global pointer to the
#: Python logger it last wrapped, and every FMI 2 instance logs through it.  Ours is a permanent
#: trampoline that hands each message to the log function of the instance it comes from (keyed
#: by the ``componentEnvironment`` each instance is given), or to fmpy's printer: the pointer
#: never dangles (a freed logger crashed the process the next time an FMU logged) and two open
#: instances never log into each other.
_LOGGERS: dict[int, Any] = {}
_KEYS = itertools.count(1)
_TRAMPOLINE: list = []


def _trampoline_callbacks(key: int = 0) -> Any:
    """A callbacks structure whose logger is fmpy's proxy in front of the trampoline and whose
    component environment is ``key``."""
    from fmpy import calloc, free
    from fmpy.fmi2 import (
        fmi2CallbackAllocateMemoryTYPE,
        fmi2CallbackFreeMemoryTYPE,
        fmi2CallbackFunctions,
        fmi2CallbackLoggerTYPE,
        printLogMessage,
    )
    from fmpy.logging import addLoggerProxy

    if not _TRAMPOLINE:
        def forward(env, instance, status, category, message):
            (_LOGGERS.get(env or 0) or printLogMessage)(env, instance, status, category, message)

        _TRAMPOLINE.append(fmi2CallbackLoggerTYPE(forward))
    cb = fmi2CallbackFunctions()
    cb.logger = _TRAMPOLINE[0]
    cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
    cb.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
    cb.componentEnvironment = key
    addLoggerProxy(byref(cb))  # the global pointer is the trampoline; cb.logger the C proxy
    return cb


def restore_logger_proxy() -> None:
    """Point fmpy's logging proxy back at the trampoline.

    For code that gave fmpy a logger of its own: ``fmpy.simulate_fmu(..., logger=f)`` leaves the
    proxy's global pointer at ``f``, which is freed with it.
    """
    _trampoline_callbacks()


def _extract_checked(fmu_path: Any, extract: Any) -> str:
    """Extract the FMU once, after the archive limits; CRCs are checked by the extraction."""
    import zipfile

    from fmu_surrogate.fmu.model.archive import check_archive
    from fmu_surrogate.fmu.runner.tempdirs import scratch_root

    with zipfile.ZipFile(fmu_path) as z:
        check_archive(z, fmu_path)
    target = tempfile.mkdtemp(prefix="fmu-surrogate-fmu-", dir=scratch_root())
    try:
        return extract(str(fmu_path), target)
    except BaseException:
        import shutil

        shutil.rmtree(target, ignore_errors=True)
        raise
