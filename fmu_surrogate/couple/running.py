"""Run a coupled system on libcosim (fixed step or ECCO) and account the energy of every bond.

libcosim's communication is non-iterative (Jacobi): during a step ``(t_k, t_{k+1}]`` every
input holds the value its source had at ``t_k`` (measured: the input read after step ``k+1``
equals the source output after step ``k``).  Over one step a bond's effort emitter A therefore
sees the power ``f_B(t_k) · e_A(t)`` and the flow emitter B sees ``e_A(t_k) · f_B(t)``; their
energies (trapezoid over the side's own output) differ by
``h/2 [e_A(t_k) f_B(t_{k+1}) − f_B(t_k) e_A(t_{k+1})] = O(h²)`` per step, so the energy
residual ``∫ (P_out − P_in) dt`` of a run falls like ``O(h)``.  The residual is the energy the
coupling itself created (> 0: the side that gives power gave more than the side that takes it
received).
"""

from __future__ import annotations

import tempfile
import time as _time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from fmu_surrogate.couple.inputs import check_cover
from fmu_surrogate.couple.results.energy import bond_units, unit_attrs, with_units
from fmu_surrogate.couple.results.recording import Recorder, step_powers
from fmu_surrogate.couple.system import CouplingError, PowerBond, System
from fmu_surrogate.couple.validation import ComponentInfo, describe, validate
from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

__all__ = ["ALGORITHMS", "ECCO_DEFAULTS", "bond_energy", "cosimulate", "observed_names", "run"]

ALGORITHMS = ("fixed", "ecco", "monolithic")
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


def observed_names(system: System, infos: dict[str, ComponentInfo]) -> list[str]:
    """``"component.variable"`` of every connected Real variable (in connection order), then the
    driven inputs and the recorded variables (``system.inputs``, ``system.record``)."""
    names: dict[str, None] = {}
    for c in system.all_connections():
        for comp, var in (c.source, c.target):
            if infos[comp].variables[var].type == "Real":
                names.setdefault(f"{comp}.{var}", None)
    for ref in [*system.inputs, *system.record]:
        names.setdefault(ref, None)
    return list(names)


def _unconnected(system: System, observed: Sequence[str]) -> list[int]:
    """Positions in ``observed`` of the variables no connection touches."""
    ends = {".".join(r) for c in system.all_connections() for r in (c.source, c.target)}
    return [k for k, n in enumerate(observed) if n not in ends]


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
    first = _unconnected(system, observed)
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


def bond_energy(bond: PowerBond, time: np.ndarray, values: dict[str, np.ndarray]
                ) -> dict[str, np.ndarray]:
    """Mean power each side saw over every step, and the cumulative energy residual.

    Parameters
    ----------
    bond : PowerBond
    time : ndarray, shape (T,)
        Communication points, ``time[0] = 0``.
    values : dict of str to ndarray, shape (T,)
        Output values by ``"component.variable"`` at the communication points.

    Returns
    -------
    dict
        ``P_<component>`` (shape (T,), mean power ``effort · flow`` seen by that side over the
        step ending at ``time[k]``, of its own port variables (an inverted connection's sign
        included); entry 0 is the instantaneous product) and ``residual``
        (shape (T,), ``∫ (P_out − P_in) dt`` up to ``time[k]``).
    """
    a, b = bond.components
    e = values[".".join(bond.effort.source)]
    f = values[".".join(bond.flow.source)]
    h = np.diff(time)
    p_a, p_b = step_powers(e[:-1], e[1:], f[:-1], f[1:])
    (pi_a, s_a), (pi_b, s_b) = bond.sides()
    p_a = s_a * np.concatenate([[e[0] * f[0]], p_a])  # as each side sees its port
    p_b = s_b * np.concatenate([[e[0] * f[0]], p_b])
    res = np.concatenate([[0.0], -np.cumsum(h * (pi_a * p_a[1:] + pi_b * p_b[1:]))])
    return {f"P_{a}": p_a, f"P_{b}": p_b, "residual": res}


def run(system: System, stop_time: float, step: float, algorithm: str = "fixed", *,
        ecco: dict[str, float] | None = None, progress: bool = True,
        run_index: int = 0) -> xr.Dataset:
    """Simulate a coupled system and record every connected variable and every bond's energy.

    Parameters
    ----------
    system : System
        Validated first (names, causalities, types, loops, bond signs) — before any FMU runs.
    stop_time, step : float
        Seconds; ``step`` is the fixed communication step, or ECCO's initial step.
    algorithm : {"fixed", "ecco", "monolithic"}
        ``"monolithic"`` solves the interconnected pH system of the components' surrogates;
        see :func:`fmu_surrogate.couple.monolithic.run_monolithic`.
    ecco : dict, optional
        Overrides of libcosim's ``EccoParams`` (``abs_tolerance``, ``rel_tolerance``, ...).
        Defaults: :data:`ECCO_DEFAULTS`, ``min_step_size = step / 100``,
        ``max_step_size = 100 step``.
    progress : bool
        Show a progress bar.
    run_index : int
        Label of the run in the dataset.

    Returns
    -------
    xarray.Dataset
        Harvest dataset format (dims run × time), variables ``component.variable`` (with their
        declared ``units``) and per bond ``bond:<name>:P_<component>`` and
        ``bond:<name>:residual`` in W and J when the ports' units are known
        (:mod:`fmu_surrogate.couple.results.energy`); attributes ``algorithm``, ``n_steps``,
        ``driven_inputs`` (comma-separated), the bonds' units, ``jacobi_loop_gain`` when every
        component has a pH model; a failing component gives ``status = "failed"`` with
        libcosim's message.

    Raises
    ------
    CouplingError
        Invalid system or arguments (nothing has run); a co-simulation whose algebraic loop
        has a gain of 1 or more (it cannot be stable).
    """
    if algorithm not in ALGORITHMS:
        raise CouplingError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}.")
    if not (stop_time > 0 and step > 0 and step <= stop_time):
        raise CouplingError(f"need 0 < step <= stop_time, got step={step}, stop_time={stop_time}.")
    check_cover(system, stop_time)
    if algorithm == "monolithic":
        from fmu_surrogate.couple.monolithic import run_monolithic
        from fmu_surrogate.couple.validation import check_bond

        if all(c.path is not None for c in system.components.values()):
            infos = validate(system, accept_loops=True)
        else:  # the units of those that have an FMU; a surrogate brings its own
            infos = {n: describe(c.path) for n, c in system.components.items()
                     if c.path is not None}
        for b in system.bonds:
            check_bond(b)
        units = bond_units(system, infos)
        ds = run_monolithic(system, stop_time, step, run_index=run_index, units=units)
        return with_units(ds, system, infos, units)  # the variables' declared units too
    from fmu_surrogate.couple.monolithic import jacobi_loop_gain
    from fmu_surrogate.couple.surrogates import surrogate_fmu

    gain = jacobi_loop_gain(system)
    if gain is not None and gain >= 1.0:
        raise CouplingError(
            f"the co-simulation of this system cannot be stable: its algebraic loop of direct "
            f"feedthrough has the gain {gain:.4g} >= 1, and libcosim's Jacobi exchange iterates "
            f"the loop once per step, multiplying its error by that gain every step whatever "
            f"the step size. Use algorithm='monolithic' (--algorithm monolithic), which solves "
            f"the loop, or put a component with a state on the loop's path.")
    for c in system.components.values():
        if c.path is None and c.surrogate is not None:
            c.path = surrogate_fmu(c.surrogate)
    infos = validate(system, libcosim=True, accept_loops=gain is not None)
    t0 = _time.perf_counter()
    observed = observed_names(system, infos)
    units = bond_units(system, infos)
    recorder = Recorder(system, observed, [units[b.name].scale for b in system.bonds])
    times, rows = [], []

    def keep(t: float, raw: list[float], initial: list[float] | None) -> bool:
        for t_k, row in recorder.add(t, raw, initial):
            times.append(t_k)
            rows.append(row)
        return False

    message = cosimulate(system, infos, stop_time, step, algorithm, ecco, observed, keep,
                         progress)
    names = recorder.names
    data = np.array(rows, dtype=float).reshape(len(rows), len(names))
    values = {n: data[:, k] for k, n in enumerate(names)}
    failed = bool(message) or not np.all(np.isfinite(np.concatenate(
        [v for v in values.values()] or [np.zeros(0)])))
    rec = RunRecord(
        run_index, status="failed" if failed else "ok",
        failure_kind=("error_status" if message else "non_finite") if failed else "",
        message=message, values=values, wall_time=_time.perf_counter() - t0)
    time = np.array(times) if times else np.array([0.0])
    ds = records_to_dataset([rec], time, None, names, parameters=[], attrs={
        "algorithm": algorithm, "n_steps": int(max(len(times) - 1, 0)),
        "step": float(step), "stop_time": float(stop_time), **unit_attrs(units),
        "driven_inputs": ",".join(system.inputs),
        **({} if gain is None else {"jacobi_loop_gain": float(gain)})})
    return with_units(ds, system, infos, units)
