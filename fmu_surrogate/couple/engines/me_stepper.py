"""A model-exchange FMU stepped from one communication point to the next, as a co-simulation
master steps a co-simulation FMU: what the fixed-step master
(:mod:`~fmu_surrogate.couple.engines.fmpy_master`) needs of a component that ships model
exchange only (libcosim loads co-simulation FMUs only).

Between communication points the FMU's continuous states are integrated by SUNDIALS CVODE (BDF,
through fmpy's ``CVodeSolver``) with the inputs held, its state, time and step events handled as
FMI prescribes (event mode, the discrete-state iteration, back to continuous time, the solver
restarted); the solver restarts at every communication point too, where the master may have
changed the inputs.  The relative tolerance is the FMU's default experiment's, else
:data:`RTOL`.  The loop follows fmpy's ``simulateME``; it is our own because fmpy runs a whole
simulation in one call, with its inputs known in advance.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["RTOL", "ModelExchangeStepper"]

#: Relative tolerance of CVODE where the FMU's default experiment gives none.
RTOL = 1e-10


class _HeldInputs:
    """fmpy's solver asks its input object to apply the signals at every root evaluation; the
    master sets the inputs itself, held over each step."""

    def apply(self, *args: Any, **kwargs: Any) -> None:
        return None


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-14)


class ModelExchangeStepper:
    """Step a model-exchange FMU (FMI 2.0 or 3.0) between communication points (module docs).

    The interface of the fixed-step master's components: :meth:`initialize`,
    :meth:`set_values` / :meth:`get_values`, :meth:`end_initialization`, :meth:`do_step`,
    :attr:`messages`, :meth:`close`.
    """

    def __init__(self) -> None:
        self._fmu: Any = None
        self._unzipdir: str | None = None
        self._next_event: float | None = None
        self.messages: list[tuple[int, str, str]] = []

    def open(self, fmu_path: str | os.PathLike) -> None:
        """Extract and instantiate the FMU.

        Parameters
        ----------
        fmu_path : path
        """
        from fmpy import extract, read_model_description

        md = read_model_description(str(fmu_path))
        if md.modelExchange is None:
            from fmu_surrogate.errors import InvalidInputError

            raise InvalidInputError(f"{fmu_path} supports no model exchange.")
        self._md = md
        self.fmi3 = str(md.fmiVersion).startswith("3")
        self._vars = {v.name: v for v in md.modelVariables}
        self._unzipdir = extract(str(fmu_path))
        if self.fmi3:
            from fmpy.fmi3 import FMU3Model

            self._fmu = FMU3Model(guid=md.instantiationToken, unzipDirectory=self._unzipdir,
                                  modelIdentifier=md.modelExchange.modelIdentifier,
                                  instanceName=md.modelName)
        else:
            from fmpy.fmi2 import FMU2Model

            self._fmu = FMU2Model(guid=md.guid, unzipDirectory=self._unzipdir,
                                  modelIdentifier=md.modelExchange.modelIdentifier,
                                  instanceName=md.modelName)
        self._fmu.instantiate()
        tol = md.defaultExperiment.tolerance if md.defaultExperiment is not None else None
        self.rtol = float(tol) if tol else RTOL

    def _call(self, kind: str, name: str) -> Any:
        v = self._vars[name]
        t = v.type if self.fmi3 else {"Enumeration": "Integer"}.get(v.type, v.type)
        return getattr(self._fmu, kind + t), v.valueReference

    def set_values(self, values: Mapping[str, Any]) -> None:
        """Set variables (inputs, parameters) by name.

        Parameters
        ----------
        values : mapping of str to number
        """
        for name, value in values.items():
            setter, vr = self._call("set", name)
            kind = self._vars[name].type
            cast = bool if kind == "Boolean" else (float if kind in ("Real", "Float64",
                                                                     "Float32") else int)
            setter([vr], [cast(value)])

    def get_values(self, names: Sequence[str]) -> np.ndarray:
        """Current values of ``names``.

        Parameters
        ----------
        names : sequence of str
        """
        out = np.empty(len(names))
        for k, name in enumerate(names):
            getter, vr = self._call("get", name)
            out[k] = float(getter([vr])[0])
        return out

    def initialize(self, start_values: Mapping[str, Any], start_time: float,
                   stop_time: float | None = None) -> None:
        """Set the start values and enter the initialisation mode.

        Parameters
        ----------
        start_values : mapping of str to number
        start_time : float
        stop_time : float, optional
        """
        self._t0 = float(start_time)
        if self.fmi3:
            self.set_values(start_values)
            self._fmu.enterInitializationMode(startTime=self._t0, stopTime=stop_time)
        else:
            self._fmu.setupExperiment(startTime=self._t0, stopTime=stop_time)
            self.set_values(start_values)
            self._fmu.enterInitializationMode()

    def _discrete_states(self) -> bool:
        """The event iteration; ``True`` when the FMU asks to terminate."""
        update = self._fmu.updateDiscreteStates if self.fmi3 else self._fmu.newDiscreteStates
        again, terminate = True, False
        while again and not terminate:
            again, terminate, _, _, defined, next_time = update()
        self._next_event = float(next_time) if defined else None
        return bool(terminate)

    def end_initialization(self) -> None:
        """Leave the initialisation mode, settle the discrete states, start the solver."""
        from fmpy.sundials import CVodeSolver

        fmu, md = self._fmu, self._md
        fmu.exitInitializationMode()
        if self._discrete_states():
            from fmu_surrogate.errors import ComputationError

            raise ComputationError(f"{self._md.modelName} asked to terminate at its initial "
                                   "event update; check its parameters.")
        fmu.enterContinuousTimeMode()
        self._error: BaseException | None = None
        g = self._guarded
        self._solver = CVodeSolver(
            nx=md.numberOfContinuousStates, nz=md.numberOfEventIndicators,
            get_x=g(fmu.getContinuousStates), set_x=g(fmu.setContinuousStates),
            get_dx=g(fmu.getContinuousStateDerivatives if self.fmi3 else fmu.getDerivatives),
            get_z=g(fmu.getEventIndicators), get_nominals=fmu.getNominalsOfContinuousStates,
            set_time=g(fmu.setTime), input=_HeldInputs(), startTime=self._t0,
            relativeTolerance=self.rtol, maxNumSteps=100000)

    def _guarded(self, fn: Any) -> Any:
        """``fn`` as a solver callback: an FMU error inside it (which the C solver cannot
        pass on) is kept and raised when the solver returns."""

        def call(*args: Any) -> Any:
            try:
                return fn(*args)
            except Exception as exc:  # noqa: BLE001 - re-raised by _step
                if self._error is None:
                    self._error = exc
                return None

        return call

    def _step(self, time: float, target: float) -> tuple[bool, float]:
        """One solver call; the FMU's own error where a callback failed."""
        try:
            state_event, _, time = self._solver.step(time, target)
        except RuntimeError:
            if self._error is None:
                raise
        if self._error is not None:
            raise self._error
        return state_event, time

    def do_step(self, t: float, h: float) -> bool:
        """Integrate from ``t`` to ``t + h`` with the inputs held; ``True`` if the FMU asks to
        terminate.

        Parameters
        ----------
        t, h : float
        """
        fmu, solver = self._fmu, self._solver
        end = t + h
        fmu.setTime(t)
        solver.reset(t)  # the master may have changed the inputs
        time = t
        while time < end and not _close(time, end):
            target = end
            ahead = self._next_event  # a time event the FMU asked for, still ahead of us
            if ahead is not None and time < ahead < end and not _close(ahead, end) \
                    and not _close(ahead, time):
                target = ahead
            state_event, time = self._step(time, target)
            fmu.setTime(time)
            step_event = False
            if self._md.modelExchange.needsCompletedIntegratorStep:
                step_event, terminate = fmu.completedIntegratorStep()
                if terminate:
                    return True
            time_event = self._next_event is not None and _close(time, self._next_event)
            if state_event or time_event or step_event:
                fmu.enterEventMode()
                if self._discrete_states():
                    return True
                fmu.enterContinuousTimeMode()
                solver.reset(time)
        return False

    def close(self) -> None:
        """Terminate and free the instance and remove its extracted files."""
        import contextlib
        import shutil

        if self._fmu is not None:
            with contextlib.suppress(Exception):
                self._fmu.terminate()
            with contextlib.suppress(Exception):
                self._fmu.freeInstance()
            self._fmu = None
        if self._unzipdir is not None:
            shutil.rmtree(self._unzipdir, ignore_errors=True)
            self._unzipdir = None
