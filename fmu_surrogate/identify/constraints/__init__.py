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

from fmu_surrogate.lazy import lazy_exports

_LAZY = {
    "ConstraintDiscovery": "fmu_surrogate.identify.constraints.discovery",
    "DiscoveryError": "fmu_surrogate.identify.constraints.discovery",
    "DiscoveryResult": "fmu_surrogate.identify.constraints.discovery",
    "SearchSettings": "fmu_surrogate.identify.constraints.algorithms",
    "LogisticFeasibility": "fmu_surrogate.identify.constraints.feasibility",
    "GPFeasibility": "fmu_surrogate.identify.constraints.feasibility",
    "MLPFeasibility": "fmu_surrogate.identify.constraints.feasibility",
    "plot_feasibility": "fmu_surrogate.identify.constraints.plots",
    "plot_progress": "fmu_surrogate.identify.constraints.plots",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = list(_LAZY)
