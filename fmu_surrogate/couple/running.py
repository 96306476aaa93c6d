"""Run a coupled system on libcosim (fixed step or ECCO; FMI 3.0 systems on our own fixed-step
master, :mod:`.engines.fmpy_master`) and account the energy of every bond.

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

import time as _time

import numpy as np
import xarray as xr

from fmu_surrogate.couple.engines.libcosim import ECCO_DEFAULTS, cosimulate
from fmu_surrogate.couple.engines.observed import observed_names
from fmu_surrogate.couple.inputs import check_cover
from fmu_surrogate.couple.results.energy import bond_units, unit_attrs, with_units
from fmu_surrogate.couple.results.recording import Recorder, step_powers
from fmu_surrogate.couple.system import CouplingError, PowerBond, System
from fmu_surrogate.couple.validation import describe, validate
from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

__all__ = ["ALGORITHMS", "ECCO_DEFAULTS", "bond_energy", "observed_names", "run"]

ALGORITHMS = ("fixed", "ecco", "monolithic")


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
        run_index: int = 0, engine: str = "auto") -> xr.Dataset:
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
    engine : {"auto", "libcosim", "fmpy"}
        Who co-simulates: libcosim, or fmu-surrogate's own fixed-step master on fmpy
        (:mod:`fmu_surrogate.couple.engines.fmpy_master`: the same scheme, the same numbers to
        the last bit, and FMI 3.0 FMUs, which libcosim does not load).  ``"auto"``: libcosim
        where every component is an FMI 1.0/2.0 FMU, else the master (ECCO needs libcosim).

    Returns
    -------
    xarray.Dataset
        Harvest dataset format (dims run × time), variables ``component.variable`` (with their
        declared ``units``) and per bond ``bond:<name>:P_<component>`` and
        ``bond:<name>:residual`` in W and J when the ports' units are known
        (:mod:`fmu_surrogate.couple.results.energy`); attributes ``algorithm``, ``engine``
        (``"libcosim"`` or ``"fmpy"``; absent in a monolithic run), ``n_steps``,
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
    if engine not in ("auto", "libcosim", "fmpy"):
        raise CouplingError(f"engine must be 'auto', 'libcosim' or 'fmpy', got {engine!r}.")
    if engine == "fmpy" and algorithm == "ecco":
        raise CouplingError("ECCO runs on libcosim only; use engine='libcosim' (or 'auto').")
    infos = validate(system, libcosim=engine == "libcosim", accept_loops=gain is not None)
    if engine == "auto":
        foreign = sorted(n for n, i in infos.items() if not i.libcosim_loads)
        if foreign and algorithm == "ecco":
            raise CouplingError(f"components {foreign} are FMI 3.0 or model-exchange FMUs, "
                                "which libcosim does not load; the fixed-step algorithm runs "
                                "them on fmu-surrogate's own master (algorithm='fixed'), ECCO "
                                "only on libcosim.")
        engine = "fmpy" if foreign else "libcosim"
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

    if engine == "libcosim":
        message = cosimulate(system, infos, stop_time, step, algorithm, ecco, observed, keep,
                             progress)
    else:
        from fmu_surrogate.couple.engines.fmpy_master import cosimulate as on_fmpy

        message = on_fmpy(system, infos, stop_time, step, observed, keep, progress)
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
        "algorithm": algorithm, "engine": engine, "n_steps": int(max(len(times) - 1, 0)),
        "step": float(step), "stop_time": float(stop_time), **unit_attrs(units),
        "driven_inputs": ",".join(system.inputs),
        **({} if gain is None else {"jacobi_loop_gain": float(gain)})})
    return with_units(ds, system, infos, units)
