"""A coupled system as a target of the harvest campaign machinery.

:func:`system_target` describes a system file (SSP or TOML) as a
:class:`~fmu_surrogate.fmu.campaigns.targets.Target`: its settable variables are the parameters and inputs
of the components (``component.parameter``), its recorded variables those of
:func:`fmu_surrogate.couple.run` (connected variables, per bond ``bond:<name>:P_<component>`` and
``bond:<name>:residual``), its content hash covers the system file, every component file and the
algorithm.  :class:`SystemBackend`, registered as ``"libcosim-system"`` when this module is
imported, runs it in the campaign's worker processes: it loads the system once per worker and
co-simulates one run per parameter set on libcosim, writing every communication point into the
worker's output buffer as it goes, so that a component that crashes or hangs keeps the run's data
up to its last step.

Fixed-step runs fill the campaign's grid step by step (the values equal those of
:func:`~fmu_surrogate.couple.run`).  ECCO chooses its own steps; its values are interpolated
linearly onto the grid ``0, step, …, stop`` between the communication points around each grid
point.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fmu_surrogate.couple.engines.libcosim import cosimulate
from fmu_surrogate.couple.engines.observed import observed_names
from fmu_surrogate.couple.results.energy import bond_units
from fmu_surrogate.couple.results.recording import Recorder
from fmu_surrogate.couple.system import CouplingError, System
from fmu_surrogate.couple.validation import ComponentInfo, validate
from fmu_surrogate.errors import FmuSurrogateError
from fmu_surrogate.fmu.backends.api import RunOutput
from fmu_surrogate.fmu.backends.registry import register_backend
from fmu_surrogate.fmu.campaigns.targets import Target, target_info
from fmu_surrogate.fmu.model.info import DefaultExperiment, Variable
from fmu_surrogate.fmu.model.loading import file_sha256

__all__ = ["BACKEND", "CosimulationError", "SystemBackend", "prepare_system", "system_target"]

#: Name of the backend in :func:`fmu_surrogate.fmu.backends.registry.get_backend`.
BACKEND = "libcosim-system"
_SWEEP_ALGORITHMS = ("fixed", "ecco")


class CosimulationError(FmuSurrogateError, RuntimeError):
    """libcosim could not complete a step of a run (its message is in the run's log)."""


def prepare_system(system: System) -> dict[str, ComponentInfo]:
    """Export the surrogate components to FMUs (cached) and validate the system for libcosim.

    Parameters
    ----------
    system : System
        Modified in place: surrogate components get their FMU path.

    Returns
    -------
    dict of str to ComponentInfo

    Raises
    ------
    CouplingError
        The system is invalid (nothing has run).
    """
    from fmu_surrogate.couple.surrogates import surrogate_fmu

    for c in system.components.values():
        if c.path is None and c.surrogate is not None:
            c.path = surrogate_fmu(c.surrogate)
    return validate(system)  # FMI 3.0 components run on the fmpy master


def with_parameters(system: System, params: Mapping[str, Any]) -> System:
    """A copy of ``system`` with ``{"component.parameter": value}`` added to its components.

    Raises
    ------
    CouplingError
        A name that is not ``component.parameter`` of one of the components.
    """
    s = copy.deepcopy(system)
    for key, value in params.items():
        comp, dot, par = str(key).partition(".")
        if not dot or comp not in s.components:
            raise CouplingError(f"sweep parameter {key!r} is not 'component.parameter' of one "
                                f"of {sorted(s.components)}.")
        s.components[comp].parameters[par] = float(value)
    return s


def _variables(system: System, infos: dict[str, ComponentInfo], recorded: Sequence[str]
               ) -> list[Variable]:
    units = bond_units(system, infos)
    out: dict[str, Variable] = {}
    for comp in system.components:
        for v in infos[comp].variables.values():
            if v.causality in ("parameter", "input") and v.variability != "constant" \
                    or f"{comp}.{v.name}" in recorded:
                name = f"{comp}.{v.name}"
                out[name] = Variable(name, len(out), v.causality, v.variability, v.type,
                                     None if v.start is None else str(v.start), v.unit,
                                     v.description)
    for name in recorded:
        if name not in out:  # bond columns
            u = units[name.split(":")[1]]
            unit = u.energy_unit if name.endswith(":residual") else u.power_unit
            out[name] = Variable(name, len(out), "local", "continuous", "Real", unit=unit)
    return list(out.values())


def system_target(path: str | os.PathLike, stop_time: float, step: float,
                  algorithm: str = "fixed", ecco: Mapping[str, float] | None = None, *,
                  name: str | None = None) -> tuple[Target, list[str]]:
    """Describe the system file ``path`` as a campaign target.

    Parameters
    ----------
    path : path
        ``.ssp``, ``.ssd`` or ``.toml`` system description.
    stop_time, step : float
        The default experiment (runs start at 0).
    algorithm : {"fixed", "ecco"}
    ecco : dict, optional
        Overrides of :data:`fmu_surrogate.couple.running.ECCO_DEFAULTS`.
    name : str, optional
        The dataset's ``fmu_name`` (default: the file name without its suffix).

    Returns
    -------
    (Target, list of str)
        The target and its recorded variables (in :func:`~fmu_surrogate.couple.run` order).

    Raises
    ------
    CouplingError
        An unknown algorithm or an invalid system (nothing has run).
    """
    from fmu_surrogate.couple.descriptions import load_system

    if algorithm not in _SWEEP_ALGORITHMS:
        raise CouplingError(f"a sweep runs algorithm 'fixed' or 'ecco' on libcosim, got "
                            f"{algorithm!r}.")
    path = Path(path).resolve()
    system = load_system(path)
    infos = prepare_system(system)
    foreign = sorted(n for n, i in infos.items() if not i.libcosim_loads)
    if foreign and algorithm != "fixed":
        raise CouplingError(f"components {foreign} are FMI 3.0 FMUs, which libcosim (and its ECCO) "
                            "does not load (or model-exchange ones): such a system runs on the "
                            "fixed-step master only; sweep it with algorithm 'fixed'.")
    recorded = Recorder(system, observed_names(system, infos)).names  # the names only
    options = {"algorithm": algorithm, "ecco": dict(ecco or {})}
    h = hashlib.sha256(path.read_bytes())
    for comp, c in system.components.items():
        h.update(f"\0{comp}\0{file_sha256(c.path)}".encode())
    h.update(json.dumps(options, sort_keys=True).encode())
    info = target_info(name or path.stem, path, h.hexdigest(), _variables(system, infos, recorded),
                       DefaultExperiment(0.0, float(stop_time), float(step)),
                       description=f"coupled system {path.name} on libcosim ({algorithm})")
    attrs = {"algorithm": algorithm, "system": path.name}
    if ecco:
        attrs["ecco"] = json.dumps(dict(ecco), sort_keys=True)
    return Target(info, BACKEND, __name__, options, attrs), recorded


class SystemBackend:
    """Campaign backend of a coupled system (see the module docstring).

    Parameters
    ----------
    algorithm : {"fixed", "ecco"}
    ecco : dict, optional
        Overrides of libcosim's ``EccoParams``.
    """

    name = BACKEND

    def __init__(self, algorithm: str = "fixed", ecco: Mapping[str, float] | None = None) -> None:
        self.algorithm = algorithm
        self.ecco = dict(ecco or {})

    def open(self, fmu_path: str | os.PathLike, info: Any = None) -> None:
        """Load and validate the system file (once per worker).

        Parameters
        ----------
        fmu_path : path
            The system description (``.ssp``, ``.ssd``, ``.toml``).
        info : FMUInfo, optional
            The target's description (unused).
        """
        from fmu_surrogate.couple.descriptions import load_system

        self.system = load_system(fmu_path)
        self.infos = prepare_system(self.system)
        self.observed = observed_names(self.system, self.infos)
        units = bond_units(self.system, self.infos)
        self.scales = [units[b.name].scale for b in self.system.bonds]

    def run(self, start_values: Mapping[str, Any], inputs: Mapping[str, np.ndarray],
            time: np.ndarray, record: Sequence[str], *, out: np.ndarray | None = None,
            progress: np.ndarray | None = None) -> RunOutput:
        """Co-simulate one parameter set on the grid ``time`` (which starts at 0).

        Parameters
        ----------
        start_values : mapping
            ``{"component.parameter": value}``.
        inputs : mapping
            Must be empty (a system has no free inputs here).
        time : ndarray, shape (T,)
        record : sequence of str
            Recorded variables (a subset of the target's, any order).
        out : ndarray, shape (T, len(record)), optional
            Receives the rows as they are computed.
        progress : ndarray, optional
            ``progress[0]`` counts the rows written.

        Returns
        -------
        RunOutput
        """
        columns = {n: (k, ()) for k, n in enumerate(record)}
        if out is None:
            out = np.empty((len(time), len(record)))
        grid = _GridWriter(time, out, progress, self.algorithm == "ecco")
        try:
            if inputs:
                raise CouplingError(f"a coupled system takes no input signals, got "
                                    f"{sorted(inputs)}; set inputs as parameters instead.")
            system = with_parameters(self.system, start_values)
            recorder = Recorder(system, self.observed, self.scales)
            cols = np.array([recorder.names.index(n) for n in record], dtype=int)

            def on_step(t: float, raw: list[float], initial: list[float] | None) -> bool:
                full = False
                for t_k, row in recorder.add(t, raw, initial):
                    full = grid.add(t_k, row[cols])
                return full

            stop, step = float(time[-1]), float(time[1] - time[0])
            if all(i.libcosim_loads for i in self.infos.values()):
                message = cosimulate(system, self.infos, stop, step, self.algorithm, self.ecco,
                                     self.observed, on_step)
            elif self.algorithm == "fixed":  # FMI 3.0: our own master, libcosim's scheme
                from fmu_surrogate.couple.engines.fmpy_master import cosimulate as on_fmpy

                message = on_fmpy(system, self.infos, stop, step, self.observed, on_step)
            else:  # (system_target refuses it before any run)
                raise CouplingError("a system with FMI 3.0 components runs on the fixed-step "
                                    "master only; sweep it with algorithm 'fixed'.")
        except Exception as exc:  # noqa: BLE001 - the run's failure, classified by the runner
            return RunOutput(record, columns, out, grid.n, error=exc, error_time=grid.t_last)
        if not message:
            return RunOutput(record, columns, out, grid.n)
        error = CosimulationError(f"the co-simulation could not complete the step after "
                                  f"t={grid.t_last:g} s")
        return RunOutput(record, columns, out, grid.n, error=error, error_time=grid.t_last,
                         messages=[(3, "libcosim", message)])

    def close(self) -> None:
        """Nothing to free: every run makes and drops its own libcosim execution."""


class _GridWriter:
    """Rows of a run written onto the campaign's grid (exactly, or interpolated for ECCO)."""

    def __init__(self, time: np.ndarray, out: np.ndarray, progress: np.ndarray | None,
                 interpolate: bool) -> None:
        self.time, self.out, self.progress, self.interpolate = time, out, progress, interpolate
        self.n = 0
        self.t_last = 0.0
        self._prev: tuple[float, np.ndarray] | None = None

    def add(self, t: float, row: np.ndarray) -> bool:
        """The row at communication point ``t``; true when the grid is full."""
        T = len(self.time)
        if not self.interpolate:
            if self.n < T:
                self.out[self.n] = row
                self.n += 1
        else:
            while self.n < T and self.time[self.n] <= t + 0.5e-9:  # libcosim counts ns
                tg = self.time[self.n]
                if self._prev is None or t <= self._prev[0]:
                    self.out[self.n] = row
                else:
                    t0, r0 = self._prev
                    w = min(max((tg - t0) / (t - t0), 0.0), 1.0)
                    self.out[self.n] = r0 + w * (row - r0)
                self.n += 1
            self._prev = (t, row)
        self.t_last = t
        if self.progress is not None:
            self.progress[0] = self.n  # after the row: a reader sees whole rows only
        return self.n >= T


register_backend(BACKEND, SystemBackend)
