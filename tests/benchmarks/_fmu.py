"""Helpers of the benchmark-FMU tests: run an FMU with fmpy, capture its log, reference solves."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from ctypes import POINTER, byref, c_double
from pathlib import Path
from typing import Self

import numpy as np
import pytest
from fmpy import simulate_fmu
from scipy.integrate import solve_ivp

from fmu_surrogate.benchmarks.cvode import sundials_unavailable_reason
from fmu_surrogate.fmu.backends.fmpy_instance import restore_logger_proxy


def built(benchmark_fmus: dict[str, Path], name: str) -> Path:
    """The FMU ``name`` of the ``benchmark_fmus`` fixture; skips the test when it was not built
    (a ``*_cvode`` benchmark on a host for which fmpy ships no SUNDIALS: the reason is given)."""
    if name not in benchmark_fmus:
        pytest.skip(sundials_unavailable_reason() or f"{name} was not built")
    return benchmark_fmus[name]


class LogCapture:
    """``logger=`` callback for fmpy that keeps ``(status, category, message)`` tuples."""

    def __init__(self) -> None:
        self.records: list[tuple[int, str, str]] = []

    def __call__(self, component, instance_name, status, category, message) -> None:
        self.records.append((int(status), category.decode(), message.decode()))

    def errors(self) -> list[str]:
        """Messages logged with status fmi2Error (3)."""
        return [m for s, _, m in self.records if s == 3]


def input_table(t: np.ndarray, **signals: np.ndarray) -> np.ndarray:
    """Structured input array for fmpy (``time`` plus one column per input)."""
    dtype = [("time", float)] + [(k, float) for k in signals]
    a = np.zeros(len(t), dtype=dtype)
    a["time"] = t
    for k, v in signals.items():
        a[k] = v
    return a


def run(
    fmu: Path,
    stop: float,
    dt: float,
    output: Sequence[str],
    fmi_type: str = "CoSimulation",
    inputs: np.ndarray | None = None,
    start_values: dict | None = None,
    rtol: float | None = 1e-10,
    logger: Callable | None = None,
) -> np.ndarray:
    """``simulate_fmu`` with the given output grid ``dt`` (``relative_tolerance`` = ``rtol``: the CS
    integrator tolerance via fmi2SetupExperiment, the CVode tolerance for ME)."""
    return simulate_fmu(
        str(fmu),
        stop_time=stop,
        output_interval=dt,
        fmi_type=fmi_type,
        input=inputs,
        start_values=start_values or {},
        output=list(output),
        relative_tolerance=rtol,
        logger=logger,
    )


def solve_zoh(
    rhs: Callable[[np.ndarray, float], np.ndarray],
    t: np.ndarray,
    u: np.ndarray,
    x0: Sequence[float],
    rtol: float = 1e-12,
    atol: float = 1e-14,
) -> np.ndarray:
    """States at ``t`` (N, n) of ``x' = rhs(x, u_k)`` with ``u`` held on ``[t_k, t_{k+1})`` (DOP853)."""
    X = np.empty((len(t), len(x0)))
    X[0] = x0
    for k in range(len(t) - 1):
        sol = solve_ivp(lambda s, x, uk=u[k]: rhs(x, uk), (t[k], t[k + 1]), X[k],
                        method="DOP853", rtol=rtol, atol=atol)
        assert sol.success, sol.message
        X[k + 1] = sol.y[:, -1]
    return X


def solve_smooth(
    rhs: Callable[[np.ndarray, float], np.ndarray],
    t: np.ndarray,
    u: Callable[[float], float],
    x0: Sequence[float],
    rtol: float = 1e-12,
    atol: float = 1e-14,
) -> np.ndarray:
    """States at ``t`` (N, n) of ``x' = rhs(x, u(t))`` in one DOP853 solve."""
    sol = solve_ivp(lambda s, x: rhs(x, u(s)), (t[0], t[-1]), x0, method="DOP853",
                    t_eval=t, rtol=rtol, atol=atol)
    assert sol.success, sol.message
    return sol.y.T


class ModelExchangeInstance:
    """An initialised model-exchange instance in continuous-time mode (context manager).

    ``vr`` maps variable names to value references; use ``.fmu`` for raw FMI calls.
    """

    def __init__(self, fmu: Path, start_values: dict | None = None) -> None:
        from fmpy import extract, read_model_description
        from fmpy.fmi2 import FMU2Model

        self.md = read_model_description(str(fmu))
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.nx = self.md.numberOfContinuousStates
        self._dir = extract(str(fmu))
        self.fmu = FMU2Model(guid=self.md.guid, unzipDirectory=self._dir,
                             modelIdentifier=self.md.modelExchange.modelIdentifier,
                             instanceName="test")
        self.fmu.instantiate()
        self.fmu.setupExperiment(startTime=0.0)
        for k, v in (start_values or {}).items():
            self.fmu.setReal([self.vr[k]], [v])
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()
        self.fmu.newDiscreteStates()
        self.fmu.enterContinuousTimeMode()

    def derivatives(self, x: np.ndarray) -> np.ndarray:
        """Set the continuous states to ``x`` (n,) and return the derivatives (n,)."""
        x = np.ascontiguousarray(x, dtype=float)
        self.fmu.setContinuousStates(x.ctypes.data_as(POINTER(c_double)), self.nx)
        dx = np.zeros(self.nx)
        self.fmu.getDerivatives(dx.ctypes.data_as(POINTER(c_double)), self.nx)
        return dx

    def get(self, *names: str) -> list[float]:
        return self.fmu.getReal([self.vr[n] for n in names])

    def set(self, **values: float) -> None:
        self.fmu.setReal([self.vr[k] for k in values], list(values.values()))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        import shutil

        self.fmu.terminate()
        self.fmu.freeInstance()
        restore_logger_proxy()  # this instance's logger is about to be freed
        shutil.rmtree(self._dir, ignore_errors=True)


def callbacks(log: LogCapture):
    """fmi2CallbackFunctions whose logger feeds ``log`` (as fmpy's ``simulate_fmu`` builds them)."""
    from fmpy.fmi1 import calloc, free
    from fmpy.fmi2 import (
        fmi2CallbackAllocateMemoryTYPE,
        fmi2CallbackFreeMemoryTYPE,
        fmi2CallbackFunctions,
        fmi2CallbackLoggerTYPE,
    )
    from fmpy.logging import addLoggerProxy

    cb = fmi2CallbackFunctions()
    cb.logger = fmi2CallbackLoggerTYPE(log)
    cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
    cb.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
    addLoggerProxy(byref(cb))
    return cb


class Slave:
    """A co-simulation instance with a captured log (context manager); ``.fmu`` is the FMU2Slave."""

    def __init__(self, fmu: Path, guid: str | None = None) -> None:
        from fmpy import extract, read_model_description
        from fmpy.fmi2 import FMU2Slave

        self.md = read_model_description(str(fmu))
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self._dir = extract(str(fmu))
        self.log = LogCapture()
        self._cb = callbacks(self.log)
        self.fmu = FMU2Slave(guid=guid or self.md.guid, unzipDirectory=self._dir,
                             modelIdentifier=self.md.coSimulation.modelIdentifier,
                             instanceName="slave")
        self._instantiated = False

    def instantiate(self, logging_on: bool = False) -> Slave:
        self.fmu.instantiate(callbacks=self._cb, loggingOn=logging_on)
        self._instantiated = True
        return self

    def initialize(self, start_values: dict | None = None, tolerance: float | None = None) -> None:
        self.fmu.setupExperiment(tolerance=tolerance, startTime=0.0)
        self.set(**(start_values or {}))
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()

    def set(self, **values: float) -> None:
        reals = {k: v for k, v in values.items() if isinstance(v, float)}
        ints = {k: v for k, v in values.items() if isinstance(v, int)}
        if reals:
            self.fmu.setReal([self.vr[k] for k in reals], list(reals.values()))
        if ints:
            self.fmu.setInteger([self.vr[k] for k in ints], list(ints.values()))

    def get(self, *names: str) -> list[float]:
        return self.fmu.getReal([self.vr[n] for n in names])

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        import shutil

        if self._instantiated:
            self.fmu.freeInstance()
        else:
            self.fmu.freeLibrary()
        shutil.rmtree(self._dir, ignore_errors=True)
