"""Parameter sweeps of a coupled system on the harvest campaign machinery.

One run per parameter set, every run in an isolated worker process with a wall-clock timeout
(a component that crashes or hangs inside libcosim becomes a recorded failure of kind
``"crash"`` or ``"timeout"``, one whose FMU reports an error a failure of kind
``"error_status"`` with libcosim's message; the others go on), finished runs on disk at once,
resume after an interruption (even ``kill -9``) without running the finished runs again, and the
option to run on a Dask cluster — exactly as :func:`fmu_surrogate.harvest`
(:class:`~fmu_surrogate.fmu.campaigns.campaign.Campaign` with the target of
:mod:`fmu_surrogate.couple.system_backend`).

The result is one dataset in the harvest format: dims run × time on the grid
``0, step, …, stop``, ``param:<component.parameter>`` per run, the connected variables and per
power bond ``bond:<name>:P_<component>`` and ``bond:<name>:residual`` as
:func:`~fmu_surrogate.couple.run` records them.

A :class:`~fmu_surrogate.couple.system.System` given as an object is written in TOML form next
to the output (``OUT.system.toml``, deleted when the sweep is complete; without ``out`` in the
harvest's temporary folder), because the worker processes load the system from a file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import xarray as xr

from fmu_surrogate.couple.system import CouplingError, System

__all__ = ["sweep"]


def sweep(system: System | str | os.PathLike, parameter_sets: Sequence[Mapping[str, float]],
          stop_time: float, step: float, *, out: str | os.PathLike | None = None,
          workers: int | None = None, timeout: float | None = 60.0, scheduler: Any = None,
          algorithm: str = "fixed", ecco: Mapping[str, float] | None = None,
          progress: bool = True, overwrite: bool = False) -> xr.Dataset:
    """Run ``system`` once per parameter set in isolated workers and stack the runs.

    Parameters
    ----------
    system : System or path
        The system, or its description file (``.ssp``, ``.ssd``, ``.toml``).
    parameter_sets : sequence of mapping
        ``{"component.parameter": value}`` per run (added to the components' own parameters).
    stop_time, step : float
        Runs go from 0 to ``stop_time``; ``step`` is the communication step (ECCO: the initial
        step and the output grid).
    out : path, optional
        NetCDF file to write; its run store ``out + ".parts"`` keeps finished runs, so the same
        call after an interruption resumes.  ``None``: only return the dataset.
    workers : int, optional
        Local worker processes (default: the CPU count, at most one per run).
    timeout : float or None
        Wall-clock limit per run [s] (``None``: no limit).
    scheduler : str or distributed.Client, optional
        Run on a Dask cluster (the workers must see the system's files at the same paths).
    algorithm : {"fixed", "ecco"}
        libcosim's master algorithm.  ECCO values are interpolated linearly onto the grid.
    ecco : dict, optional
        Overrides of :data:`~fmu_surrogate.couple.running.ECCO_DEFAULTS`.
    progress : bool
        One progress bar over the runs.
    overwrite : bool
        Replace a dataset or store of a different sweep at ``out``.

    Returns
    -------
    xarray.Dataset
        Dims run × time; ``param:<component.parameter>``; per-run ``status``, ``failure_kind``,
        ``message``; attributes ``algorithm``, ``campaign_hash``.

    Raises
    ------
    CouplingError
        An invalid system, algorithm or parameter name (before any run).
    """
    from fmu_surrogate.couple.descriptions import load_system
    from fmu_surrogate.couple.system_backend import prepare_system, system_target, with_parameters
    from fmu_surrogate.couple.toml_form import write_toml
    from fmu_surrogate.fmu.campaigns.campaign import Campaign
    from fmu_surrogate.fmu.runner.tempdirs import harvest_space

    sets = [dict(p) for p in parameter_sets]
    if not sets:
        raise CouplingError("parameter_sets is empty; give one {'component.parameter': value} "
                            "dict per run ({} runs the system as it is).")
    if not (stop_time > 0 and step > 0 and step <= stop_time):
        raise CouplingError(f"need 0 < step <= stop_time, got step={step}, stop_time={stop_time}.")
    with harvest_space() as space:  # removed on every way out (SIGTERM included)
        written = None
        if isinstance(system, System):
            prepare_system(system)  # refuse an invalid system before writing anything
            path = Path(space) / "system.toml" if out is None else \
                Path(out).with_name(Path(out).name + ".system.toml")
            written = write_toml(system, path)
        else:
            path = Path(system)
            system = load_system(path)
        for p in sets:
            with_parameters(system, p)  # names 'component.parameter' of known components
        target, recorded = system_target(path, stop_time, step, algorithm, ecco,
                                         name="system" if written is not None else None)
        camp = Campaign(target, parameters=sets, start_time=0.0, stop_time=stop_time, step=step,
                        record=recorded)
        ds = camp.run(out, workers=workers, timeout=timeout, scheduler=scheduler,
                      progress=progress, overwrite=overwrite)
        if written is not None:
            written.unlink(missing_ok=True)
    return ds
