"""The relative error of a predicted output against a recorded one.

An output's error is measured against the output's own swing: the smaller of its magnitude
``max_t |y(t)|`` and its excursion from where the run starts, ``max_t |y(t) − y(t₀)|``.

* For an output that starts at zero (a velocity, a force, a current from rest) both are the
  same: the error is ``max |ŷ − y| / max |y|``.
* For an output that varies around a large value (an absolute pressure of 150 bar ± 30 bar, a
  temperature of 293 K ± 2 K, a ride height of 0.7 m ± 0.02 m) the magnitude hides the
  dynamics: a model that misses the 30-bar swing by half reads as 10 % of 180 bar, one that
  holds the pressure at 150 bar as 17 %, and at 1 bar ± 0.01 bar a model that holds the
  pressure reads as 1 %.  The excursion measures the part of the output a surrogate has to
  reproduce.
* The smaller of the two is taken, so the measure is never more lenient than the magnitude (an
  oscillation from +1 to −1 that starts at +1 has an excursion of 2).

An output whose excursion is below :data:`STEADY_RTOL` of its magnitude is steady within the
run: its error is measured against its magnitude (an excursion of round-off would otherwise
make any error look large).

:func:`~fmu_surrogate.identify` compares these errors with its tolerance and
:func:`~fmu_surrogate.validate` reports them; the fit reports and plots show the same figures.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["STEADY_RTOL", "output_scale", "relative_errors", "swing_origin"]

#: An output whose excursion from its start stays below this fraction of its magnitude is
#: steady: its error is measured against the magnitude.  A millionth: above the round-off and
#: solver noise of any output worth fitting (1e-16 … 1e-8 of its value), below any variation a
#: tolerance of a user (≥ 1e-4) is about.
STEADY_RTOL = 1e-6


def swing_origin(y: ArrayLike) -> np.ndarray:
    """Where each output's swing is measured from (module doc): its first sample where the
    excursion from it is the smaller measure, else zero.

    Parameters
    ----------
    y : array_like, shape (K, m) or (K,)
        A run's recorded outputs, samples along the first axis, the first sample the start.

    Returns
    -------
    ndarray, shape (m,) or ()
        ``y[0]`` or 0 per output: ``output_scale(y) == max |y − swing_origin(y)|``; RMS
        measures of a fit subtract it too (:func:`~fmu_surrogate.identify.NonlinearPHIdentifier`'s
        errors), so that they see the same swing.
    """
    y = np.asarray(y, dtype=float)
    magnitude = np.max(np.abs(y), axis=0)
    excursion = np.max(np.abs(y - y[0]), axis=0)
    moves = (excursion < magnitude) & (excursion > STEADY_RTOL * magnitude)
    return np.where(moves, y[0], 0.0)


def output_scale(y: ArrayLike) -> np.ndarray:
    """What each output's error is measured against (module doc).

    Parameters
    ----------
    y : array_like, shape (K, m) or (K,)
        A run's recorded outputs, samples along the first axis, the first sample the start.

    Returns
    -------
    ndarray, shape (m,) or ()
        Per output ``min(max |y|, max |y − y[0]|)``, or ``max |y|`` for a steady output; positive
        except for an output that is zero throughout (0).
    """
    y = np.asarray(y, dtype=float)
    return np.max(np.abs(y - swing_origin(y)), axis=0)


def relative_errors(y: ArrayLike, y_hat: ArrayLike) -> np.ndarray:
    """Each output's relative error ``max_t |ŷ − y| / output_scale(y)`` (module doc).

    Parameters
    ----------
    y, y_hat : array_like, shape (K, m) or (K,)
        Recorded and predicted outputs.

    Returns
    -------
    ndarray, shape (m,) or ()
        ``inf`` where the prediction is not finite (a surrogate that diverged) and where an
        output that is zero throughout is predicted nonzero; 0 where both are zero.
    """
    y, y_hat = np.asarray(y, dtype=float), np.asarray(y_hat, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        err = np.max(np.abs(y_hat - y), axis=0)
        rel = np.where(err == 0.0, 0.0, err / output_scale(y))
    return np.where(np.isnan(rel), np.inf, rel)  # NaN would pass through max() unseen
