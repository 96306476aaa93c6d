"""Fitting :class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier` to a harvested
dataset: FMU variable names, units, power pairs and the other variables' roles."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from fmu_surrogate.identify.linear.errors import LinearIdentificationError


def fit_dataset(est: Any, ds: Any, inputs: Sequence[str], outputs: Sequence[str],
                runs: Iterable[int] | None) -> Any:
    """:meth:`LinearPHIdentifier.fit_dataset` (see there); returns ``est``.

    Parameters
    ----------
    est : LinearPHIdentifier
    ds : xarray.Dataset
    inputs, outputs : sequence of str
    runs : iterable of int or None
    """
    from fmu_surrogate.fmu.dataset import data_var_name, run_arrays
    from fmu_surrogate.identify.linear.model.experiments import Experiment, hold_from_dataset
    from fmu_surrogate.identify.linear.ports import parse_pairs

    inputs, outputs = list(inputs), list(outputs)
    pairs = parse_pairs(est.ports, inputs, outputs)
    if not inputs or (pairs is None and len(inputs) != len(outputs)):
        raise LinearIdentificationError(
            f"need as many outputs as inputs (power pairs), got {len(inputs)} inputs and "
            f"{len(outputs)} outputs; name the power pairs with ports=[{{'u': …, 'y': …}}] "
            "(CLI --port u=NAME,y=NAME): the other inputs are then modulating, the other "
            "outputs measured.")
    arrays = run_arrays(ds, inputs + outputs, runs=runs)
    if not arrays:
        raise LinearIdentificationError(
            "the dataset has no usable runs (none with status 'ok' selected).")
    m = len(inputs)
    hold = est.input_hold or hold_from_dataset(ds)
    if pairs is None:
        est.fit([Experiment.from_arrays(t, X[:, :m], X[:, m:], hold) for t, X in arrays])
    else:
        from threadpoolctl import threadpool_limits

        from fmu_surrogate.identify.linear.ported_fit import fit_roles
        from fmu_surrogate.identify.linear.settings import BLAS_THREADS

        est._check_settings()
        with threadpool_limits(limits=BLAS_THREADS, user_api="blas"):
            fit_roles(est, [(t, X[:, :m], X[:, m:], hold) for t, X in arrays], pairs)

    def unit(name: str) -> str | None:
        v = ds[data_var_name(ds, name)].attrs.get("units")
        return None if v is None else str(v)

    est.names_ = (inputs, outputs, [unit(v) for v in inputs], [unit(v) for v in outputs])
    return est
