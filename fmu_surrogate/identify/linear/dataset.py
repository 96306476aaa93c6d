"""Fitting :class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier` to a harvested
dataset: FMU variable names, units, power pairs and the other variables' roles."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from fmu_surrogate.identify.linear.errors import LinearIdentificationError


def fit_dataset(est: Any, ds: Any, inputs: Sequence[str] | None, outputs: Sequence[str] | None,
                runs: Iterable[int] | None) -> Any:
    """:meth:`LinearPHIdentifier.fit_dataset` (see there); returns ``est``.

    Parameters
    ----------
    est : LinearPHIdentifier
    ds : xarray.Dataset
    inputs, outputs : sequence of str or None
        None: the dataset's inputs and Real outputs
        (:func:`~fmu_surrogate.identify.linear.interface.variables.dataset_interface`).
    runs : iterable of int or None
    """
    from fmu_surrogate.fmu.dataset import constant_columns, data_var_name, run_arrays
    from fmu_surrogate.identify.linear.interface.pairing import detect_pairs
    from fmu_surrogate.identify.linear.interface.variables import REAL_TYPES, dataset_interface
    from fmu_surrogate.identify.linear.model.experiments import hold_from_dataset
    from fmu_surrogate.identify.linear.ports import parse_pairs

    if inputs is None or outputs is None:
        iface = dataset_interface(ds)
        inputs = iface.inputs if inputs is None else inputs
        outputs = iface.outputs if outputs is None else outputs
    inputs, outputs = list(inputs), list(outputs)

    def attr(name: str, key: str) -> str | None:
        v = ds[data_var_name(ds, name)].attrs.get(key)
        return None if v is None else str(v)

    in_units, out_units = [attr(v, "units") for v in inputs], [attr(v, "units") for v in outputs]
    pairs = parse_pairs(est.ports, inputs, outputs)
    arrays = run_arrays(ds, inputs + outputs, runs=runs)
    if not arrays or not inputs:
        raise LinearIdentificationError(
            "the dataset has no usable runs (none with status 'ok' selected)." if inputs else
            "no input to fit: name them with inputs=… (CLI --inputs).")
    m = len(inputs)
    hold = est.input_hold or hold_from_dataset(ds)
    # inputs with one value in every run (not excited) are fitted as deviations from it: a
    # constant input is an operating point, not a signal (as a signal, an ambient temperature
    # of 293.15 K drove a mass's integrator: 2.2e4 % held out); the surrogate's wiring adds it
    U = np.concatenate([X[:, :m] for _, X in arrays])
    held = np.where(constant_columns(U), U[0], 0.0)
    raw = [(t, X[:, :m] - held, X[:, m:], hold) for t, X in arrays]
    pairing = None
    if pairs is None and (est.ports is None or est.ports == "auto"):
        discrete = [v for v in inputs if (attr(v, "type") or "Real") not in REAL_TYPES]
        pairing = detect_pairs(inputs, outputs, in_units, out_units, raw, discrete)
        if pairing is None and est.ports == "auto":
            raise LinearIdentificationError(
                f"no power pair can be read from the units (inputs {inputs} in "
                f"{in_units}, outputs {outputs} in {out_units}: units missing); name the power "
                "pairs with ports=[{'u': …, 'y': …}] (CLI --port u=NAME,y=NAME): the other "
                "inputs are then modulating, the other outputs measured.")
        in_order = pairing is not None and len(pairing.pairs) == m == len(outputs) and all(
            p.u == inputs[k] and p.y == outputs[k] for k, p in enumerate(pairing.pairs))
        if pairing is not None and not in_order:
            pairs = [(inputs.index(p.u), outputs.index(p.y), None) for p in pairing.pairs]
    if pairs is None and est.delayed_feedthrough:  # the drop-in model has the delay
        pairs = [(k, k, None) for k in range(m)] if m == len(outputs) else []
    if pairs is None and len(inputs) != len(outputs):
        # no units to pair by and no order to pair in: an input-output model, every input
        # modulating and every output measured (the report says so and how to name pairs)
        pairs = []
    power = pairs if pairs is not None else [(k, k, None) for k in range(m)]
    declared = [parse_dependencies(attr(outputs[o], "dependencies")) for _, o, _ in power]
    power_inputs = {inputs[i] for i, _, _ in power}
    declared_ok = bool(power) and all(d is not None and not power_inputs & set(d)
                                      for d in declared)
    from fmu_surrogate.identify.delayed_feedthrough import (
        fast_feedthrough,
        with_first_response,
        without_fast_response,
    )
    from fmu_surrogate.identify.first_outputs import input_starts

    runs_ = [(t, X[:, :m], X[:, m:], hold) for t, X in arrays]
    fast = fast_feedthrough(runs_) if est.delayed_feedthrough else None
    starts = input_starts(ds, inputs)
    if fast is not None:  # the response to the inputs just set taken out of the data
        raw = without_fast_response(raw, fast, None if starts is None else starts - held)
    est.input_offsets_ = None  # the records are deviations from the held inputs already
    _fit(est, raw, pairs, declared_ok)
    est.names_ = (inputs, outputs, in_units, out_units)
    est.pairing_ = pairing
    est.input_offsets_ = held if held.any() else None
    est.inputs_before_, est.fast_feedthrough_ = (None if fast is None else starts), fast
    if est.delayed_feedthrough and fast is None:  # where the predictor saw no change
        sur = with_first_response(est.to_surrogate(), runs_, starts)
        est.inputs_before_, est.fast_feedthrough_ = sur.inputs_before, sur.fast_feedthrough
    return est


def _fit(est: Any, raw: list[tuple], pairs: list[tuple] | None, declared: bool) -> None:
    """Fit ``est`` to the records ``raw`` with the power ``pairs`` (``None``: in order), the
    source declaring the power outputs independent of the power inputs where ``declared``."""
    from fmu_surrogate.identify.linear.model.experiments import Experiment

    if pairs is None:
        est.fit([Experiment.from_arrays(t, u, y, h) for t, u, y, h in raw],
                no_feedthrough_declared=declared)
    else:
        from threadpoolctl import threadpool_limits

        from fmu_surrogate.identify.linear.ported_fit import fit_roles
        from fmu_surrogate.identify.linear.settings import BLAS_THREADS

        est._check_settings()
        est.no_feedthrough_declared_ = declared
        from fmu_surrogate.identify.linear.prepare import try_without_offsets
        from fmu_surrogate.identify.linear.steady_start import try_equilibrium

        est.initial_ = "state"
        with threadpool_limits(limits=BLAS_THREADS, user_api="blas"):
            fit_roles(est, raw, pairs, declared)
            try_without_offsets(est, raw, pairs, declared)
            try_equilibrium(est, raw, pairs, declared)


def parse_dependencies(text: str | None) -> tuple[str, ...] | None:
    """The ``dependencies`` attribute of a dataset's output (a JSON list of the variables it
    depends on directly, as its FMU declares them): ``None`` where nothing or something
    unreadable is declared.

    Parameters
    ----------
    text : str or None

    Returns
    -------
    tuple of str or None
    """
    import json

    if text is None:
        return None
    try:
        names = json.loads(text)
    except ValueError:
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return tuple(names)
