"""The libcosim engine of a coupled run: the execution (fixed step or ECCO; from the system's
``SystemStructure.ssd`` where a connection transforms its value) and its step loop."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fmu_surrogate.couple.engines.observed import unconnected
from fmu_surrogate.couple.system import CouplingError, System
from fmu_surrogate.couple.validation import ComponentInfo

__all__ = ["ECCO_DEFAULTS", "cosimulate"]

_NS = 1e9  # libcosim counts time in nanoseconds
#: ECCO settings that differ from libcosimpy's ``EccoParams`` defaults.  Its default change-rate
#: bounds (0.01, 0.2) let the step only shrink (the new step is the old one times a factor
#: clamped to them), so every run ends at the minimum step; (0.2, 1.5) as in libcosimpy's own
#: ECCO test lets the controller grow it again.
ECCO_DEFAULTS = {"min_change_rate": 0.2, "max_change_rate": 1.5, "abs_tolerance": 1e-3,
                 "rel_tolerance": 1e-3}


def _engine(system: System, infos: dict[str, ComponentInfo], step: float, algorithm: str,
            ecco: dict[str, float] | None) -> tuple[Any, dict[str, int], Any]:
    from libcosimpy.CosimAlgorithm import CosimAlgorithm, EccoParams
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimSlave import CosimLocalSlave

    from fmu_surrogate.couple.surrogates import exported_start_values

    # a surrogate's exported FMU starts by its file's rule, from the state the system gives it
    starts = {name: exported_start_values(comp) if comp.surrogate is not None else {}
              for name, comp in system.components.items()}
    for name, values in starts.items():
        if missing := sorted(set(values) - set(infos[name].variables)):
            raise CouplingError(f"component {name!r}: its FMU {system.components[name].path} "
                                f"has no parameters {missing} to start from the initial state "
                                "the system gives it; export the surrogate again.")
    algo = None
    transformed = [c for c in system.all_connections() if c.transformed]
    if transformed:  # libcosim's API connects plainly; its SSP loader transforms
        if algorithm == "ecco":
            raise CouplingError(f"libcosim's ECCO algorithm joins plain connections only, and "
                                f"{transformed[0]} scales or shifts its value; run the system "
                                f"with the fixed-step or the monolithic algorithm.")
        ex = _ssp_execution(system, step)
    elif algorithm == "ecco":
        params = {**ECCO_DEFAULTS, "step_size": step, "min_step_size": step / 100,
                  "max_step_size": step * 100, **(ecco or {})}
        algo = CosimAlgorithm.create_ecco_algorithm(EccoParams(**params))
        ex = CosimExecution.from_algorithm(algo)
    else:
        ex = CosimExecution.from_step_size(round(step * _NS))
    idx = {}
    for name, comp in system.components.items():
        idx[name] = (ex.slave_index_from_instance_name(name) if transformed else
                     ex.add_local_slave(CosimLocalSlave(str(comp.path), name)))
        if idx[name] < 0:
            raise CouplingError(f"libcosim refused component {name!r} ({comp.path}); FMI "
                                f"{infos[name].fmi_version} — libcosim loads FMI 1.0/2.0 "
                                "co-simulation FMUs only.")
        for p, v in {**comp.parameters, **starts[name]}.items():
            var = infos[name].variables[p]
            _initial(ex, idx[name], var, v)
    for c in [] if transformed else system.all_connections():
        s = infos[c.source[0]].variables[c.source[1]]
        t = infos[c.target[0]].variables[c.target[1]]
        fn = {"Real": ex.connect_real_variables, "Integer": ex.connect_integer_variables,
              "Boolean": ex.connect_boolean_variables}[s.type]
        if fn(idx[c.source[0]], s.valueReference, idx[c.target[0]], t.valueReference) < 0:
            raise CouplingError(f"libcosim refused connection {c}.")
    if algo is not None:
        for b in system.bonds:
            a, bb = b.components
            vr = lambda ref: infos[ref[0]].variables[ref[1]].valueReference
            if algo.add_power_bond(idx[a], vr(b.effort.source), vr(b.flow.target),
                                   idx[bb], vr(b.flow.source), vr(b.effort.target)) < 0:
                raise CouplingError(f"libcosim refused power bond {b.name!r}.")
    return ex, idx, algo


def _ssp_execution(system: System, step: float) -> Any:
    """A fixed-step libcosim execution of ``system`` loaded from its ``SystemStructure.ssd``:
    libcosim applies a connection's ``ssc:LinearTransformation`` itself, in the initialisation
    as at every communication point, where its API connects plainly only."""
    from libcosimpy.CosimExecution import CosimExecution

    from fmu_surrogate.couple.ssp import system_structure

    sources = {n: Path(c.path).resolve().as_uri() for n, c in system.components.items()}
    bare = System(system.components, system.connections, system.bonds)  # SSP: no driven inputs
    with tempfile.TemporaryDirectory(prefix="fmu-surrogate-ssd-") as folder:
        ssd = Path(folder) / "SystemStructure.ssd"
        ssd.write_bytes(system_structure(bare, sources))
        try:  # libcosim unpacks every FMU at once, so the folder may go
            return CosimExecution.from_ssp_file(folder, step_size=round(step * _NS))
        except AssertionError as exc:  # libcosimpy asserts a non-null execution
            from libcosimpy._internal import get_last_error_message

            raise CouplingError(f"libcosim refused the system: "
                                f"{get_last_error_message() or exc}") from exc


def _initial(ex: Any, i: int, var: Any, value: float) -> None:
    if var.type == "Real":
        ex.real_initial_value(i, var.valueReference, float(value))
    elif var.type == "Integer":
        ex.integer_initial_value(i, var.valueReference, int(value))
    elif var.type == "Boolean":
        ex.boolean_initial_value(i, var.valueReference, bool(value))



def cosimulate(system: System, infos: dict[str, ComponentInfo], stop_time: float, step: float,
               algorithm: str, ecco: dict[str, float] | None, observed: Sequence[str],
               on_step: Callable[[float, list[float]], bool], progress: bool = False) -> str:
    """Step the system on libcosim to ``stop_time``; after every step call ``on_step``.

    Parameters
    ----------
    system : System
    infos : dict of str to ComponentInfo
        From :func:`~fmu_surrogate.couple.validation.validate`.
    stop_time, step : float
    algorithm : {"fixed", "ecco"}
    ecco : dict, optional
        Overrides of :data:`ECCO_DEFAULTS`.
    observed : sequence of str
        The variables whose values ``on_step`` receives (:func:`observed_names`).
    on_step : callable
        ``on_step(t, values, initial)`` after the step ending at ``t``; returning true ends the
        run.  A driven input's value is the one it holds from ``t`` on (its signal at ``t``).
        ``initial`` (first call only, else ``None``) gives the values at ``t = 0`` of the
        variables no connection touches (NaN for the others).
    progress : bool
        Show a progress bar.

    Returns
    -------
    str
        libcosim's message when a step failed, else ``""``.
    """
    from libcosimpy._internal import get_last_error_message
    from libcosimpy.CosimEnums import CosimVariableType
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimManipulator import CosimManipulator
    from libcosimpy.CosimObserver import CosimObserver
    from tqdm.auto import tqdm

    log_output_level(CosimLogLevel.ERROR)
    ex, idx, _algo = _engine(system, infos, step, algorithm, ecco)
    obs = CosimObserver.create_last_value()
    ex.add_observer(obs)
    refs = []
    for name in observed:
        comp, _, var = name.partition(".")
        refs.append((idx[comp], infos[comp].variables[var].valueReference))
    # the values at t = 0 of what no connection carries: libcosim samples them at step 0
    first = unconnected(system, observed)
    if first:
        series = CosimObserver.create_time_series()
        ex.add_observer(series)
        for k in first:
            series.start_time_series(*refs[k], CosimVariableType.REAL)
    driven = [(observed.index(n), sig) for n, sig in system.inputs.items()]
    if driven:
        override = CosimManipulator.create_override()
        ex.add_manipulator(override)
    for k, sig in driven:
        ex.real_initial_value(*refs[k], float(sig(0.0)))
    message = ""
    stop_ns = round(stop_time * _NS)
    bar = tqdm(total=stop_time, unit="s", disable=not progress, desc=f"couple ({algorithm})")
    t_ns = 0
    initial: list[float] | None = None
    while t_ns < stop_ns:
        for k, sig in driven:  # zero-order hold: the signal at the step's start
            override.slave_real_values(refs[k][0], [refs[k][1]], [float(sig(t_ns / _NS))])
        ok = ex.step(1)
        new = ex.status().current_time
        if not ok or new <= t_ns:
            message = get_last_error_message() or "libcosim stopped the step without a message"
            break
        bar.update(max(min(new / _NS, stop_time) - bar.n, 0.0))  # tqdm throttles the redraws
        if t_ns == 0:
            initial = [float("nan")] * len(refs)
            for k in first:
                _, steps, vals = series.time_series_real_samples(*refs[k], 0, 2)
                if steps and steps[0] == 0:  # (a count of 1 reads nothing in libcosimpy 0.0.6)
                    initial[k] = vals[0]
                series.stop_time_series(*refs[k], CosimVariableType.REAL)
        t_ns = new
        values = [obs.last_real_values(i, [vr])[0] for i, vr in refs]
        for k, sig in driven:
            values[k] = float(sig(t_ns / _NS))
        if on_step(t_ns / _NS, values, initial):
            break
        initial = None
    bar.close()
    return message


