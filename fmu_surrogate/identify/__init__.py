"""identify layer: datasets / arrays in, ``ph`` objects out.

Names are imported lazily (``fmu_surrogate.identify.X`` loads its module on first access), so
importing the package does not pull in torch for users of the torch-free parts.
"""

from __future__ import annotations

import importlib

# name -> module (add yours here)
_LAZY = {
    # GP identification of pH-DAE efforts
    "GPEffortIdentifier": "fmu_surrogate.identify.gp_effort",
    "effort_targets": "fmu_surrogate.identify.gp_effort",
    "TransformedMultitaskGP": "fmu_surrogate.identify.kronecker_gp",
    "KroneckerMLL": "fmu_surrogate.identify.kronecker_gp",
    "kron_mll": "fmu_surrogate.identify.kronecker_gp",
    "HamiltonianEffortGP": "fmu_surrogate.identify.gp_hamiltonian",
    "farthest_point_subset": "fmu_surrogate.identify.sampling",
    # derivative data from trajectories
    "estimate_derivatives": "fmu_surrogate.identify.derivatives",
    # adjoint-based identification of linear pH systems
    "LinearPHIdentifier": "fmu_surrogate.identify.linear_ph",
    "LinearPHFit": "fmu_surrogate.identify.linear_ph",
    "Experiment": "fmu_surrogate.identify.adjoint",
    "Regularization": "fmu_surrogate.identify.adjoint",
    "cost_and_gradient": "fmu_surrogate.identify.adjoint",
    "taylor_test": "fmu_surrogate.identify.gradient_check",
    "compare_with_autograd": "fmu_surrogate.identify.gradient_check",
}


def __getattr__(name: str):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'fmu_surrogate.identify' has no attribute {name!r}")
    return getattr(importlib.import_module(mod), name)


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_LAZY))


__all__ = list(_LAZY)
