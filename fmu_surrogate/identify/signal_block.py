"""An FMU without units whose inputs and outputs were paired in order, fitted as a signal block.

Where no unit declares which output is the power conjugate of which input, the drop-in model
pairs them in order (:mod:`~fmu_surrogate.identify.linear.interface.pairing`): the surrogate
is then passive from each input to its output, as a physical part is.  A block that is not —
a controller, a filter, a sensor's lag of higher order (``2/(s+1)³``, whose phase passes −90°)
— is out of reach of that model: 82 % held out at every order, however exact the data.

:func:`as_signal_block` fits, where the paired linear model misses the tolerance, the same
model with no power pair: the inputs modulating, the outputs measured (any stable linear
block; its state keeps a storage and a dissipation by construction, it has no power port).
It is kept where it divides the held-out error by :data:`BLOCK_GAIN` or more: a passive part
is held as well by its pairs (the measured outputs' free maps add nothing there), so only a
block the pairing kept from its data gains so much (the lag: 3e-14 held out).  The surrogate
then couples through its signals, as the FMU did, and the report says so and how to name
pairs where there are some (``--port``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from fmu_surrogate.identify.fit_report import percent

__all__ = ["BLOCK_GAIN", "as_signal_block", "paired_in_order"]

#: The signal block is kept where it divides the paired model's held-out error by this much
BLOCK_GAIN = 10.0


def paired_in_order(lin: Any) -> bool:
    """Whether a fitted linear drop-in model paired its inputs and outputs in order because
    nothing else decided (no pairs given, none from units, names or data), and has pairs.

    Parameters
    ----------
    lin : LinearPHIdentifier
        Fitted by :meth:`~fmu_surrogate.identify.LinearPHIdentifier.fit_dataset`.
    """
    if lin.ports not in (None, "auto") or getattr(lin, "pairing_", None) is not None:
        return False
    roles = getattr(lin, "roles_", None) if getattr(lin, "ported_", False) else None
    return bool(roles.pairs) if roles is not None else True


def as_signal_block(late: Any, inputs: Sequence[str], outputs: Sequence[str],
                    fit: Sequence[int], tolerance: float,
                    error: Callable[[Any], float]) -> tuple[Any, str]:
    """The linear drop-in fit as a signal block where that explains the data (module doc).

    Parameters
    ----------
    late : LateOutputs
        The linear fit so far (:func:`~fmu_surrogate.identify.late_outputs.fit_late_outputs`):
        its estimator, the data it was fitted to and its held-out error.
    inputs, outputs : sequence of str
    fit : sequence of int
        Training runs.
    tolerance : float
    error : callable
        ``error(estimator) -> float``: a fitted estimator's held-out error on ``late.dataset``.

    Returns
    -------
    (LateOutputs, str)
        ``late`` with the block's estimator and error where it is kept, and the report's line
        (empty where the question does not arise).
    """
    from sklearn.base import clone

    if late.error <= tolerance or not paired_in_order(late.estimator):
        return late, ""
    try:
        block = clone(late.estimator).set_params(ports=[]).fit_dataset(
            late.dataset, inputs=list(inputs), outputs=list(outputs), runs=list(fit))
        e = float(error(block))
    except Exception as exc:  # noqa: BLE001 - the paired model stays, the reason reported
        return late, (f"\n  fitted as a signal block too (no power pair), which failed "
                      f"({type(exc).__name__}): the pairs in order kept")
    if not e * BLOCK_GAIN <= late.error:
        return late, (f"\n  fitted as a signal block too (no power pair, no units declared): "
                      f"{percent(e)} held out against {percent(late.error)} paired in order, "
                      f"so the pairs are kept")
    return replace(late, estimator=block, error=e), (
        f"\n  kept as a signal block (no power pair: inputs modulating, outputs measured): "
        f"held-out error {percent(e)}, against {percent(late.error)} with the inputs and "
        f"outputs paired in order (no units declared) — a block not passive from its inputs to "
        f"its outputs (a controller, a filter, a lag of higher order); name power pairs with "
        f"--port u=NAME,y=NAME where it has some")
