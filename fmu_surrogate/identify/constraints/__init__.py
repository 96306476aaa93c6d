"""Constraint discovery: learn component parameters and their feasible region from failed runs.

docs/design.md §6 (Matei, de Kleer and Minhas).  Modules:

* :mod:`.evaluations` — ``J(w)`` over an FMU: cached, persistent, parallel harvest runs;
* :mod:`.feasibility` — feasibility models ``q(w)`` (logistic, GP classifier, small MLP);
* :mod:`.algorithms` — Algorithms 1, 2 and 3 of the paper over scipy optimisers;
* :mod:`.bayesopt` — Bayesian optimisation with constrained expected improvement;
* :mod:`.discovery` — :class:`ConstraintDiscovery` and its frozen :class:`DiscoveryResult`;
* :mod:`.plots` — feasible/infeasible points with the learned boundary, search progress.
"""

from __future__ import annotations

from fmu_surrogate.identify.constraints.discovery import (
    ConstraintDiscovery,
    DiscoveryError,
    DiscoveryResult,
)
from fmu_surrogate.identify.constraints.feasibility import (
    GPFeasibility,
    LogisticFeasibility,
    MLPFeasibility,
)

__all__ = ["ConstraintDiscovery", "DiscoveryError", "DiscoveryResult", "GPFeasibility",
           "LogisticFeasibility", "MLPFeasibility"]
