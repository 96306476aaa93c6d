"""The torch GP behind :class:`~fmu_surrogate.identify.gp.effort.GPEffortIdentifier`: the
Kronecker multi-task GP on ``z`` (plain variant) or the GP with ``z_d = E_dd^{-T} ∇H``
(Hamiltonian variant), built in standardised units, and the check of their settings.

**Singular T.**  ``T = J − R`` is regular in both paper benchmarks (RC network:
``det T = −G``; pendulum: a signed permutation), but need not be in general, and some target
components are identically zero (the algebraic constraint rows: RC ``y2 ≡ 0``, pendulum
``y5 = g(q) ≡ 0``).  Nothing here inverts ``T`` or ``T K_T Tᵀ``: the likelihood only needs
``T K_T Tᵀ + Σ`` through the whitened eigenvalues ``μ ≥ 0`` and conditioning uses
``K_T Tᵀ``, so the effort is defined for singular ``T`` too (its component in ``ker T`` is
then the prior's, as the data say nothing about it).

**Noise** per target component (``noise="task"``) or shared, each bounded below by
``noise_floor`` × (target RMS)² so that the covariance stays positive definite even when
``T K_T Tᵀ`` is singular (singular ``T``, or identically-zero targets such as the algebraic
constraint rows).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from numpy.typing import NDArray

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.identify.gp.standardise import Scales
from fmu_surrogate.identify.gp.structure import EffortProblem

__all__ = ["DTYPES", "check_settings", "effort_model"]

#: torch dtypes by name (the ``dtype`` setting)
DTYPES = {"float64": torch.float64, "float32": torch.float32}


def check_settings(
    *, dtype: str, noise: str, mean: str, max_iter: int, lr: float, noise_floor: float
) -> None:
    """Validate the model settings of :class:`~fmu_surrogate.identify.gp.effort.GPEffortIdentifier`.

    Raises
    ------
    ValueError
        The first setting out of its range, named with its allowed values.
    """
    if dtype not in DTYPES:
        raise InvalidInputError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}.")
    if noise not in ("task", "shared"):
        raise InvalidInputError(f"noise must be 'task' or 'shared', got {noise!r}.")
    if mean not in ("zero", "constant"):
        raise InvalidInputError(f"mean must be 'zero' or 'constant', got {mean!r}.")
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 0):
        raise InvalidInputError(f"max_iter must be a non-negative integer, got {max_iter!r}.")
    if not (lr > 0 and math.isfinite(lr)):
        raise InvalidInputError(f"lr must be positive, got {lr!r}.")
    if not (noise_floor > 0):
        raise InvalidInputError(
            f"noise_floor must be > 0 (it keeps the covariance positive definite), got {noise_floor!r}."
        )


def effort_model(
    problem: EffortProblem,
    scales: Scales,
    ls0: NDArray[np.float64],
    *,
    hamiltonian: bool,
    ard: bool,
    task_rank: int | None,
    noise: str,
    mean: str,
    noise_floor: float,
    seed: int,
    dtype: torch.dtype,
    constraint_force: bool,
    hamiltonian_scales: int,
) -> torch.nn.Module:
    """The untrained GP model of the identification (a module with ``mll`` and ``posterior``).

    Parameters
    ----------
    problem : EffortProblem
        Structure, differential states and learned components.
    scales : Scales
        The standardisation (the Hamiltonian model's effort map is ``E_dd^{-T} diag(1/σ_d)``).
    ls0 : ndarray, shape (n,) or (1,)
        Initial length scales in standardised units.
    hamiltonian, ard, task_rank, noise, mean, noise_floor, seed, constraint_force, hamiltonian_scales
        Settings of :class:`~fmu_surrogate.identify.gp.effort.GPEffortIdentifier`.
    dtype : torch.dtype

    Returns
    -------
    TransformedMultitaskGP or HamiltonianEffortGP
    """
    T = problem.T
    n = T.shape[1]  # T is D × n: (n + m) × n with collocated outputs (structure.with_outputs)
    if not hamiltonian:
        from fmu_surrogate.identify.gp.kronecker import TransformedMultitaskGP

        return TransformedMultitaskGP(
            T,
            n,
            ard=ard,
            task_rank=task_rank,
            noise=noise,
            mean=mean,
            noise_floor=noise_floor,
            init_lengthscale=ls0,
            init_task_scale=n / max(float(np.sum(T**2)), 1e-300),
            seed=seed,
            dtype=dtype,
            learned=problem.learned,
        )
    from fmu_surrogate.identify.gp.hamiltonian import HamiltonianEffortGP, check_descriptor

    diff = problem.differential
    E_dd = check_descriptor(problem.E, diff)
    mu, sd, _ys = scales
    d = np.nonzero(diff)[0]
    # standardised effort map: ẑ_d = E_dd^{-T} diag(1/σ_d) ∇_x̂ Ĥ  (undone in kernel_effort)
    Mhat = np.linalg.inv(E_dd).T / sd[d][None, :]
    return HamiltonianEffortGP(
        T,
        diff,
        Mhat,
        ard=ard,
        task_rank=task_rank,
        noise=noise,
        mean=mean,
        noise_floor=noise_floor,
        init_lengthscale=ls0,
        seed=seed,
        dtype=dtype,
        constraint_force=constraint_force,
        algebraic_shift=(mu / sd)[~diff],
        h_scales=hamiltonian_scales,
        algebraic_learned=problem.learned[~diff],
    )
