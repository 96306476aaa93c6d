"""identify layer: datasets / arrays in, ``ph`` objects out.

Names are imported lazily (``fmu_surrogate.identify.X`` loads its module on first access), so
importing the package does not pull in torch for users of the torch-free parts.
"""

from __future__ import annotations

from fmu_surrogate.lazy import lazy_exports

# name -> module (add yours here)
_LAZY = {
    # GP identification of pH-DAE efforts
    "GPEffortIdentifier": "fmu_surrogate.identify.gp.effort",
    "effort_targets": "fmu_surrogate.identify.gp.samples",
    "TransformedMultitaskGP": "fmu_surrogate.identify.gp.kronecker",
    "KroneckerMLL": "fmu_surrogate.identify.gp.kronecker",
    "kron_mll": "fmu_surrogate.identify.gp.kronecker",
    "HamiltonianEffortGP": "fmu_surrogate.identify.gp.hamiltonian",
    "farthest_point_subset": "fmu_surrogate.identify.gp.sampling",
    "propose_structure": "fmu_surrogate.identify.gp.proposal",
    "StructureProposal": "fmu_surrogate.identify.gp.proposal",
    # derivative data from trajectories
    "estimate_derivatives": "fmu_surrogate.identify.derivatives",
    # adjoint-based identification of linear pH systems
    "LinearPHIdentifier": "fmu_surrogate.identify.linear.estimator",
    "LinearPHFit": "fmu_surrogate.identify.linear.estimator",
    "Experiment": "fmu_surrogate.identify.linear.model.experiments",
    "Regularization": "fmu_surrogate.identify.linear.model.experiments",
    "cost_and_gradient": "fmu_surrogate.identify.linear.model.adjoint_checked",
    "LM": "fmu_surrogate.identify.linear.optim.lm",
    "CG": "fmu_surrogate.identify.linear.optim.first_order",
    # nonlinear pH systems with a latent state from input-output data
    "NonlinearPHIdentifier": "fmu_surrogate.identify.nonlinear.estimator",
    "NonlinearPHFit": "fmu_surrogate.identify.nonlinear.estimator",
    "select_model": "fmu_surrogate.identify.selection",
    "select_dataset": "fmu_surrogate.identify.selection",
    "ModelChoice": "fmu_surrogate.identify.selection",
    "taylor_test": "fmu_surrogate.identify.linear.model.gradient_check",
    "compare_with_autograd": "fmu_surrogate.identify.linear.model.gradient_check",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = list(_LAZY)
