"""The known structure of a GP effort identification: ``E, J, R, B``, the differential states,
the known parts of the effort and the components the GP learns.

**Known efforts** (``known_effort``).  Algebraic rows whose targets are identically zero on the
data (RC ``y2``, pendulum ``y5``) are learned as zero *everywhere*: data on a constraint manifold
carry no information across it, so such a surrogate does not determine its algebraic states
(measured: the plain RC surrogate with N = 64 simulates ``x3`` with an error of 0.14) and the
pendulum surrogate has no constraint.  What is known is therefore stated, as explicit
polynomials (:class:`~fmu_surrogate.ph.PolynomialEffort`: the RC network's ``z2 = x2, z3 = x3``;
the pendulum's ``z5 = l² − |q|²`` and constraint force ``−2qλ``), and the GP learns the rest:
``z = z_known + P_L z_GP`` with the GP's prior restricted to the ``learned`` components ``L``
(rows/columns of the task covariance outside ``L`` are zero), fitted to the residual targets
``y − T z_known(x)``.  Components with a known part are not learned by default, except the
differential ones of the Hamiltonian variant (``∇H̄`` always covers them, and a known part there
is *added* — a known constraint force).

Measured against the benchmark FMUs (``tests/identify/gp/test_known_effort.py``,
``scripts/reproduce_gp_simulation.py``), Hamiltonian variant: RC (128 samples) within 8.3e-4
(``x3``) under the paper's input, pendulum with known constraint and force (32 samples)
within 2.5e-4 on [0, 30] — the scheme's own error on the FMU's grid.  The *plain* RC variant
with the same known parts still drifts (``x3`` off by 6e-2): on the data
``√(2 x1) = x2 − x3``, and the GP prefers that linear function of the algebraic states to the
differential one, so its algebraic row nearly cancels; ``hamiltonian=True`` (``z1 = H̄'(x1)``)
rules this out.

**Collocated outputs** (:func:`with_outputs`).  The targets ``E ẋ − B u`` see the effort only
through ``J − R``; where ``(J − R) z = 0`` (a lossless spring, ``x' = v``: ``J = R = 0``) they say
nothing about it.  The power-conjugate outputs ``y = Bᵀ z(x)`` do: they are stacked under the
targets, and the GP's transform becomes ``[J − R; Bᵀ]`` (``(n + m) × n``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.ph import PHDAE
from fmu_surrogate.ph.efforts.known import PolynomialEffort

Array = NDArray[np.float64]

__all__ = ["EffortProblem", "effort_problem", "with_outputs"]


@dataclass(frozen=True)
class EffortProblem:
    """Validated structure of ``E ẋ = (J − R) z(x) + B u`` and what the GP is to learn.

    Parameters
    ----------
    E, J, R, B : ndarray
        The structure matrices (validated by :class:`~fmu_surrogate.ph.PHDAE`).
    T : ndarray, shape (n, n)
        ``J − R``.
    differential : ndarray of bool, shape (n,)
        The differential states.
    known : PolynomialEffort or None
        The known part of the effort (``None`` if there is none).
    learned : ndarray of bool, shape (n,)
        The effort components the GP models.
    """

    E: Array
    J: Array
    R: Array
    B: Array
    T: Array
    differential: NDArray[np.bool_]
    known: PolynomialEffort | None
    learned: NDArray[np.bool_]


def effort_problem(
    E: ArrayLike | None,
    J: ArrayLike | None,
    R: ArrayLike | None,
    B: ArrayLike | None,
    *,
    task_rank: int | None,
    differential: ArrayLike | None,
    known_effort: Any,
    learned: ArrayLike | None,
    hamiltonian: bool,
) -> EffortProblem:
    """Validate the structure and resolve the known and learned components (module doc).

    Parameters
    ----------
    E, J, R, B : array_like or None
        As :class:`~fmu_surrogate.identify.gp.effort.GPEffortIdentifier` takes them (``E``
        defaults to the identity).
    task_rank, differential, known_effort, learned, hamiltonian
        The identifier's settings of the same names.

    Returns
    -------
    EffortProblem

    Raises
    ------
    ValueError
        Missing or inconsistent settings (``StructureError`` for matrices that are not pH).
    """
    missing = [k for k, v in (("J", J), ("R", R), ("B", B)) if v is None]
    if missing:
        raise InvalidInputError(
            f"the structure matrices {', '.join(missing)} are not set; pass the known "
            "structure as GPEffortIdentifier(E=..., J=..., R=..., B=...)."
        )
    E = np.eye(np.shape(J)[0]) if E is None else E
    sysm = PHDAE(E, J, R, B, effort=lambda x: x)
    n = sysm.J.shape[0]
    if task_rank is not None and not (1 <= int(task_rank) <= n):
        raise InvalidInputError(
            f"task_rank must be in [1, {n}] (or None for {n}), got {task_rank!r}."
        )
    if differential is None:
        diff = (np.abs(sysm.E).sum(0) + np.abs(sysm.E).sum(1)) > 0
    else:
        diff = np.asarray(differential, dtype=bool).reshape(-1)
        if diff.shape != (n,):
            raise InvalidInputError(
                f"differential must be {n} booleans (one per state), got shape {diff.shape}."
            )
    known, lm = _known_parts(n, diff, known_effort, learned, hamiltonian)
    return EffortProblem(sysm.E, sysm.J, sysm.R, sysm.B, sysm.J - sysm.R, diff, known, lm)


def _known_parts(
    n: int, diff: NDArray[np.bool_], k: Any, learned: ArrayLike | None, hamiltonian: bool
) -> tuple[PolynomialEffort | None, NDArray[np.bool_]]:
    """The known part (PolynomialEffort or None) and the learned mask (module doc)."""
    if k is None or isinstance(k, PolynomialEffort):
        known = k
    elif isinstance(k, dict):
        known = PolynomialEffort.from_terms(n, k)
    else:
        raise InvalidInputError(
            f"known_effort must be a dict {{component: 'identity' | [(coefficient, "
            f"{{state: exponent}}), ...]}} or a PolynomialEffort, got {type(k).__name__}.")
    if known is not None and known.n_states != n:
        raise InvalidInputError(f"known_effort describes {known.n_states} states, the structure "
                                f"matrices {n}; give one known part per effort component index.")
    if learned is None:
        lm = np.ones(n, dtype=bool)
        if known is not None:
            lm[known.known_components] = False
        if hamiltonian:
            lm |= diff
    else:
        la = np.asarray(learned).reshape(-1)
        if la.dtype == bool:
            if la.shape != (n,):
                raise InvalidInputError(f"learned as a mask needs {n} booleans, got {la.shape}.")
            lm = la.copy()
        else:
            if la.size and (la.min() < 0 or la.max() >= n):
                raise InvalidInputError(f"learned must hold component indices in [0, {n}), "
                                        f"got {la.tolist()}.")
            lm = np.zeros(n, dtype=bool)
            lm[la.astype(int)] = True
    if hamiltonian and not np.all(lm[diff]):
        raise InvalidInputError(
            "hamiltonian=True models every differential effort as ∇H̄; `learned` leaves out "
            f"components {np.flatnonzero(diff & ~lm).tolist()} — put known terms there "
            "into known_effort (they are added) and keep the components learned.")
    if not lm.any():
        raise InvalidInputError("no effort component is left to learn (known_effort covers them "
                                "all); use the known system directly instead of fitting a GP.")
    return (known if known is not None and known.components.size else None), lm


def with_outputs(
    problem: EffortProblem, Y: Array, y: ArrayLike, *, hamiltonian: bool = False
) -> tuple[Array, EffortProblem]:
    """Targets and structure with the collocated outputs ``y = Bᵀ z(x)`` observed (module doc).

    Parameters
    ----------
    problem : EffortProblem
        The structure; its ``T`` becomes ``[J − R; Bᵀ]``.
    Y : ndarray, shape (N, n)
        The targets ``E ẋ − B u``.
    y : array_like, shape (N, m) or (N,)
        Outputs power-conjugate to the inputs (``yᵀu`` is power into the system), one per column
        of ``B``.
    hamiltonian : bool
        The identifier's setting: the Hamiltonian GP does not take outputs (refused).

    Returns
    -------
    Y : ndarray, shape (N, n + m)
        ``[E ẋ − B u, y]``.
    problem : EffortProblem
        The same problem with ``T = [J − R; Bᵀ]``.
    """
    if hamiltonian:
        raise InvalidInputError("collocated outputs are taken by the plain GP only; fit with "
                                "hamiltonian=False or without y.")
    N, m = Y.shape[0], problem.B.shape[1]
    ya = np.asarray(y, dtype=float)
    ya = ya[:, None] if ya.ndim == 1 else ya
    if ya.shape != (N, m):
        raise InvalidInputError(f"y must have shape ({N}, {m}) (one collocated output per input, "
                                f"one row per sample), got {np.shape(y)}.")
    if not np.all(np.isfinite(ya)):
        raise InvalidInputError("y contains NaN/Inf; drop those samples before fitting.")
    T = np.vstack([problem.T, problem.B.T])
    return np.hstack([Y, ya]), replace(problem, T=T)
