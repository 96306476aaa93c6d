"""Choosing between a linear and a nonlinear pH surrogate from held-out data.

:func:`select_model` fits the linear pH model first
(:class:`~fmu_surrogate.identify.LinearPHIdentifier`), simulates it on the held-out
experiments, and moves on to the nonlinear one
(:class:`~fmu_surrogate.identify.NonlinearPHIdentifier`, started from that same linear fit)
only when the linear model's held-out error exceeds ``tolerance``.  The nonlinear model is kept
when it is better on the held-out data; the :class:`ModelChoice` reports both errors and why
one was kept.  Errors are relative, ``‖ŷ − y‖_F / ‖y‖_F`` over all held-out samples, the models
simulated by :func:`fmu_surrogate.ph.simulate` (the training experiments stand in, and the
report says so, when none is held out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["ModelChoice", "ModelSelectionError", "select_model"]


class ModelSelectionError(FmuSurrogateError, ValueError):
    """Bad arguments of :func:`select_model`; the message says the fix."""


@dataclass(frozen=True)
class ModelChoice:
    """The outcome of :func:`select_model`.

    Parameters
    ----------
    method : {"linear", "nonlinear"}
        The kept model.
    estimator : LinearPHIdentifier or NonlinearPHIdentifier
        Its fitted estimator (``to_surrogate()`` gives the system).
    linear_error, nonlinear_error : float
        Held-out errors (``nonlinear_error`` NaN when the nonlinear model was not fitted).
    tolerance : float
        The error a linear model had to reach to be kept without trying the nonlinear one.
    reason : str
        Why this model was kept, in words.
    """

    method: str
    estimator: Any
    linear_error: float
    nonlinear_error: float
    tolerance: float
    reason: str

    def report(self) -> str:
        """Both errors and the decision, a few lines."""
        nl = ("not fitted" if np.isnan(self.nonlinear_error)
              else f"{self.nonlinear_error:.3%}")
        return (f"  linear pH model:    held-out error {self.linear_error:.3%}\n"
                f"  nonlinear pH model: held-out error {nl}\n"
                f"  kept: {self.method} — {self.reason}")


def _experiments(data: Sequence[Any], hold: str) -> list[Any]:
    from fmu_surrogate.identify.linear.model.experiments import Experiment

    return [e if isinstance(e, Experiment) else Experiment.from_arrays(*e, hold) for e in data]


def _error(system: Any, exps: list[Any], x0: Any) -> float:
    from fmu_surrogate.ph import simulate

    num = den = 0.0
    for e in exps:
        y_hat = simulate(system, e.t, e.u, x0, hold=e.hold).y
        num += float(np.sum((y_hat - e.y) ** 2))
        den += float(np.sum(np.asarray(e.y) ** 2))
    return float(np.sqrt(num / den)) if den > 0 else float("nan")


def select_model(
    train: Sequence[Any],
    held_out: Sequence[Any] = (),
    *,
    order: int,
    tolerance: float = 0.02,
    hold: str = "linear",
    linear: Mapping[str, Any] | None = None,
    nonlinear: Mapping[str, Any] | None = None,
) -> ModelChoice:
    """Fit linear, validate, and fit nonlinear only where the linear model falls short.

    Parameters
    ----------
    train, held_out : sequence of (t, u, y) tuples or Experiment
        Training and held-out experiments.
    order : int
        State dimension of both models.
    tolerance : float
        Held-out relative error below which the linear model is kept as it is.
    hold : {"linear", "zoh"}
        Input between samples for tuples (an Experiment keeps its own).
    linear, nonlinear : mapping, optional
        Further settings of :class:`~fmu_surrogate.identify.LinearPHIdentifier` and
        :class:`~fmu_surrogate.identify.NonlinearPHIdentifier`.

    Returns
    -------
    ModelChoice

    Raises
    ------
    ModelSelectionError
        No training experiment, or a tolerance that is not a positive number.
    """
    from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
    from fmu_surrogate.identify.nonlinear.estimator import NonlinearPHIdentifier

    if not len(train):
        raise ModelSelectionError("select_model needs at least one training experiment.")
    if not (np.isfinite(tolerance) and tolerance > 0):
        raise ModelSelectionError(f"tolerance must be a positive relative error, got {tolerance!r}.")
    tr, va = _experiments(train, hold), _experiments(held_out, hold)
    check = va or tr
    where = "held-out" if va else "training (nothing held out)"
    lin_kw = {"learn": ("J", "R", "B"), **dict(linear or {})}
    lin = LinearPHIdentifier(int(order), **lin_kw).fit(tr)
    x0 = getattr(lin, "x0_", None)
    e_lin = _error(lin.system_, check, x0)
    if e_lin <= tolerance:
        return ModelChoice("linear", lin, e_lin, float("nan"), tolerance,
                           f"its {where} error {e_lin:.3%} is within the tolerance "
                           f"{tolerance:.3%}; no nonlinear model needed")
    from fmu_surrogate.identify.nonlinear.parametrisation import NonlinearFitError

    try:
        nl = NonlinearPHIdentifier(int(order), linear=lin, validation_runs=len(va),
                                   **dict(nonlinear or {})).fit(tr + va)
    except NonlinearFitError as exc:
        return ModelChoice("linear", lin, e_lin, float("nan"), tolerance,
                           f"the linear {where} error {e_lin:.3%} exceeds the tolerance "
                           f"{tolerance:.3%}, but no nonlinear model could be fitted: {exc}")
    e_nl = _error(nl.system_, check, nl.x0_)
    if e_nl < e_lin:
        return ModelChoice("nonlinear", nl, e_lin, e_nl, tolerance,
                           f"the linear {where} error {e_lin:.3%} exceeds the tolerance "
                           f"{tolerance:.3%} and the nonlinear model lowers it to {e_nl:.3%}")
    return ModelChoice("linear", lin, e_lin, e_nl, tolerance,
                       f"the linear {where} error {e_lin:.3%} exceeds the tolerance "
                       f"{tolerance:.3%}, but the nonlinear model is no better ({e_nl:.3%})")
