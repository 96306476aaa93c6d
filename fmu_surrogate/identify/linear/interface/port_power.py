"""Outputs that are the power through a pair of the FMU's own variables.

Component FMUs often show the power they dissipate or exchange next to their port variables
(Modelica's ``lossPower``, a damper's ``P = F v``).  Such an output is the product of an input
and another output at every instant; a pH model's outputs are linear in its efforts and inputs
plus static laws of the modulating inputs, so it cannot fit that product, and fitting it
anyway spoils the fit of the port variables (a power-law damper with ``P = F v`` as a second
output: 7.8 % held out on ``F`` and 10 % on ``P``, identify 10 min, against 1e-5 in 11 s
without it).  :func:`power_outputs` finds them, and the dataset's interface leaves them out of
the fit (:func:`~fmu_surrogate.identify.linear.interface.variables.dataset_interface`); the
report names the product, which the user computes from the surrogate's own variables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fmu_surrogate.fmu.model.units import POWER, parse_unit, power_factor

__all__ = ["PRODUCT_RTOL", "power_outputs"]

#: An output is the product ``c u y`` (``c`` a constant: a unit factor or a sign) where the
#: least-squares ``c`` leaves at most this relative RMS residual: the FMU computes it from the
#: same values, so what remains is round-off (a power-law damper's ``F v``: 0 exactly).
PRODUCT_RTOL = 1e-9


def power_outputs(ds: Any, inputs: Sequence[str], outputs: Sequence[str],
                  units: Mapping[str, str | None]) -> list[tuple[str, str]]:
    """The outputs of ``ds`` in a unit of power that are a constant times the product of an
    input and another output whose units make a power.

    Only declared units qualify a product: a motor's torque is its field input times its
    current (``k Φ i``) and is a port variable, not a power.

    Parameters
    ----------
    ds : xarray.Dataset
        A harvested dataset (its successful runs are read).
    inputs, outputs : sequence of str
        Real inputs and outputs (the FMU's names).
    units : mapping
        The declared unit of each variable (None: none declared).

    Returns
    -------
    list of (str, str)
        ``(P, "P = c · u · y")`` for each such output ``P``, in the order of ``outputs`` (the
        constant to four digits).
    """
    from fmu_surrogate.fmu.dataset import run_arrays

    if len(outputs) < 2 or not inputs:
        return []
    names = [*inputs, *outputs]
    runs = run_arrays(ds, names)  # the successful runs, their NaN tails removed
    if not runs:
        return []
    X = np.vstack([x for _, x in runs])
    cols = dict(zip(names, X[np.all(np.isfinite(X), axis=1)].T))
    found = []
    for o in outputs:
        unit = parse_unit(units.get(o))
        if unit is None or unit.dims != POWER:
            continue
        products = ((u, other) for u in inputs for other in outputs
                    if other != o and power_factor(units.get(u), units.get(other)) is not None)
        for u, other in products:
            c = _factor(cols[o], cols[u] * cols[other])
            if c is not None:
                found.append((o, f"{o} = {c:.4g} · {u} · {other}"))
                break
    return found


def _factor(y: np.ndarray, p: np.ndarray) -> float | None:
    """The constant ``c`` with ``y = c p`` to :data:`PRODUCT_RTOL`, or None."""
    pp, yy = float(p @ p), float(y @ y)
    if not (np.isfinite(pp) and pp > 0.0 and yy > 0.0):
        return None
    c = float(p @ y) / pp
    return c if c != 0.0 and np.linalg.norm(y - c * p) <= PRODUCT_RTOL * np.sqrt(yy) else None
