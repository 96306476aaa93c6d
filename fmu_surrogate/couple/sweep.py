"""Parameter sweeps of a coupled system: one fixed-step run per parameter set, one dataset.

Every run shares the fixed communication grid, so the runs stack into the harvest dataset format
(dims run × time, ``param:<component.parameter>`` per run); a run whose component fails is a
recorded failure (its samples up to the failure kept, the rest NaN) and the sweep goes on.  The
runs execute in this process, one after the other: libcosim runs its FMUs in the calling process,
so the harvest campaign's worker isolation (crash/timeout), resume and Dask distribution are not
applied here.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr
from tqdm.auto import tqdm

from fmu_surrogate.couple.running import run
from fmu_surrogate.couple.system import CouplingError, System
from fmu_surrogate.fmu.dataset import dataset_to_records, records_to_dataset

__all__ = ["sweep"]


def sweep(system: System, parameter_sets: Sequence[Mapping[str, float]], stop_time: float,
          step: float, *, progress: bool = True) -> xr.Dataset:
    """Run ``system`` once per parameter set (fixed step) and stack the runs.

    Parameters
    ----------
    system : System
    parameter_sets : sequence of mapping
        ``{"component.parameter": value}`` per run (added to the components' own parameters).
    stop_time, step : float
    progress : bool
        One progress bar over the runs.

    Returns
    -------
    xarray.Dataset
        Dims run × time; ``param:<component.parameter>`` variables; per-run status.

    Raises
    ------
    CouplingError
        An unknown component in a parameter name (the system itself is validated per run).
    """
    records, grid, names, attrs = [], None, None, {}
    for k, params in enumerate(tqdm(list(parameter_sets), disable=not progress, desc="sweep")):
        s = copy.deepcopy(system)
        for key, value in params.items():
            comp, dot, par = key.partition(".")
            if not dot or comp not in s.components:
                raise CouplingError(f"sweep parameter {key!r} is not 'component.parameter' of "
                                    f"one of {sorted(s.components)}.")
            s.components[comp].parameters[par] = float(value)
        ds = run(s, stop_time, step, "fixed", progress=False, run_index=k)
        rec = dataset_to_records(ds)[0]
        records.append(dataclasses.replace(rec, params={key: float(v) for key, v in params.items()}))
        if grid is None or len(ds.time) > len(grid):
            grid = ds.time.values
        names = names or [str(v) for v in ds.data_vars if ds[v].dims == ("run", "time")]
        attrs = {"algorithm": "fixed", "step": float(step), "stop_time": float(stop_time)}
    n_full = round(stop_time / step) + 1
    if grid is None or len(grid) < n_full:
        grid = step * np.arange(n_full)
    return records_to_dataset(records, grid, None, names, attrs=attrs)
