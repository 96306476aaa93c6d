"""The internal step of a fitted nonlinear surrogate: how finely its scheme must step.

The fit integrates the model with RK4 and enough substeps for its fastest mode
(:mod:`.shooting`), so what it learns is the continuous-time model; users simulate it with the
structure-preserving AVF scheme (:func:`fmu_surrogate.ph.simulate`, the exported FMUs), which is
of second order.  At the sampling step of the harvest a model whose dynamics are fast against
that step then lags the data by the scheme's error, not the fit's: two masses coupled by a
progressive spring (a 2 Hz mode sampled at 10 ms), fitted to an RK4 error of 1e-5, followed
the FMU within 0.63 % with one AVF step per sample, 0.16 % with two, 0.038 % with four
(0.0084 % with eight).
:func:`with_internal_step` halves the scheme's step (:attr:`~fmu_surrogate.ph.NonlinearPH.max_step`)
while the training error is above :data:`SCHEME_FLOOR` and the halving divides it by
:data:`STEP_GAIN`, at most :data:`MAX_HALVINGS` times: a model whose error is the fit's keeps one
step per sample, and no sub-step is paid (in every step of an exported FMU) for digits far
below the error a drop-in surrogate is accepted with.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fmu_surrogate.identify.nonlinear.pruning import relative_error
from fmu_surrogate.ph import NonlinearPH

__all__ = ["MAX_HALVINGS", "SCHEME_FLOOR", "STEP_GAIN", "with_internal_step"]

#: a halving of the step is kept when it divides the training error by at least this
STEP_GAIN = 1.25
#: at most this many halvings (16 sub-steps per sample)
MAX_HALVINGS = 4
#: no halving below this training error (0.1 % RMS of the outputs' swing, a tenth of the 1 % the
#: drop-in selection accepts): each sub-step costs a Newton solve in every step of an exported
#: FMU, paid only where the scheme would take a noticeable part of the error budget (the
#: saturating inductor at 1 ms, 0.03 %, keeps its 10x speed-up over the CVODE original)
SCHEME_FLOOR = 1e-3


def with_internal_step(surrogate: Any, train: list[tuple]) -> tuple[Any, float]:
    """``surrogate`` with the longest internal step that the training data tell apart.

    Parameters
    ----------
    surrogate : PortedSystem
        A fitted drop-in surrogate whose core is a :class:`~fmu_surrogate.ph.NonlinearPH`.
    train : list of tuple
        ``(t, u_ext, y_ext, hold)`` training experiments.

    Returns
    -------
    (PortedSystem, float)
        Itself when one step per sample is as good (or the core has no state), else a copy
        whose core has ``max_step`` = the sampling step / 2^k; and its training error
        (:func:`~.pruning.relative_error`).
    """
    core = surrogate.system
    if not isinstance(core, NonlinearPH) or core.n_states == 0 or not train:
        return surrogate, relative_error(surrogate, train)
    h = max(float(np.max(np.diff(t))) for t, *_ in train)
    best, err = surrogate, relative_error(surrogate, train)
    for k in range(1, MAX_HALVINGS + 1):
        if not err > SCHEME_FLOOR:
            break
        cand = surrogate.replace(system=core.with_max_step(h / 2 ** k))
        e = relative_error(cand, train)
        if not e * STEP_GAIN <= err:
            break
        best, err = cand, e
    return best, err
