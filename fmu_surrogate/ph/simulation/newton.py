"""Newton building blocks of the implicit integrators (:mod:`fmu_surrogate.ph.simulation.integrators`):
the effort and its Jacobian as raw callables, the linear solve that survives a numerically
singular Jacobian, the stopping thresholds, and the error raised when Newton's method fails.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.errors import FmuSurrogateError
from fmu_surrogate.ph.system import PHDAE

Array = NDArray[np.float64]

__all__ = ["ConvergenceError"]


class ConvergenceError(FmuSurrogateError, RuntimeError):
    """Newton's method did not converge in a step; the message names the step and time."""


#: singular values below this, relative to the largest, count as zero in a Newton solve
RCOND = 1e-9
#: a first Newton correction below this fraction of the state keeps the Jacobian for the step
CHORD = 1e-4
#: a Newton residual below this fraction of the step's terms is converged (after 3 iterations)
_FLOOR = 1e-11
#: a Newton residual that stalls below this fraction of the step's terms is at round-off level
_STALL = 1e-8
#: a first correction is accepted when the error it leaves, estimated from the change of the
#: Jacobian since the last step, is below this fraction of the tolerance (:func:`_one_correction`)
ACCEPT = 1e-3


def _solve(A: Array, b: Array) -> Array:
    """``A⁻¹ b``, or the minimum-norm least-squares step when ``A`` is numerically singular.

    A learned effort can leave a direction of the state undetermined by the equations (a
    surrogate of an index-1 DAE whose algebraic rows are identically zero in the data, such as
    the RC network's second row): there the state keeps its value instead of jumping on
    round-off.
    """
    if A.shape == (1, 1):  # one state: LAPACK's b / a, and the pseudo-inverse 0 of a zero
        return b / A[0, 0] if A[0, 0] != 0.0 else np.zeros_like(b)
    try:
        x = np.linalg.solve(A, b)
        # the condition number in the max-norm, ‖A‖∞ ‖A⁻¹‖∞, as the exported step computes it
        # from its LU factors (export/c/surrogate_nonlinear.c, newton_factor); written out,
        # as np.linalg.cond(A, inf) costs three times the inverse on these small matrices
        ainv = np.abs(np.linalg.inv(A)).sum(axis=1).max()
        if np.abs(A).sum(axis=1).max() * ainv < 1.0 / RCOND:
            return x
    except np.linalg.LinAlgError:
        pass
    return np.linalg.lstsq(A, b, rcond=RCOND)[0]


def _one_correction(Jac: Array, Jp: Array, x0: Array, x0p: Array, xk: Array, xkp: Array,
                    step: float, scale: float, tol: float) -> bool:
    """Whether the first Newton correction of a step (largest entry ``step``, the new state's
    largest entry ``scale − 1``) leaves an error below ``ACCEPT · tol · scale``, so that the
    iteration that would confirm it can be skipped.

    After a correction ``δ`` with the Jacobian ``A`` at the start ``x0``, the residual is the
    second-order term, at most ``½ L |δ|²`` for a Lipschitz constant ``L`` of the Jacobian, and
    the next correction at most ``‖A⁻¹‖ ½ L |δ|²`` (Kantorovich).  ``L`` is estimated from the
    Jacobian ``Jp`` of the last step, taken at ``(xkp, x0p)``: ``‖A − Jp‖ / Δ``, ``Δ`` the larger
    move of the step's start and of Newton's start (the mean effort's points move by at most
    ``Δ``; the change along them overestimates the change with the new state alone by 3/2), and
    ``‖A⁻¹‖∞`` from the inverse (a Newton matrix whose condition number ``‖A‖∞ ‖A⁻¹‖∞`` reaches
    ``1/RCOND`` accepts none: :func:`_solve` takes the least-squares step there).  Only
    corrections within the distance the estimate spans (``|δ| ≤ Δ``) and below ``CHORD`` of the
    state are accepted.  ``ph.simulate`` and the exported FMUs
    (``export/c/surrogate_nonlinear.c``) decide alike.
    """
    delta = max(np.abs(x0 - x0p).max(), np.abs(xk - xkp).max())
    if not (0.0 < step <= delta and step <= CHORD * scale):
        return False
    norm = np.abs(Jac - Jp).sum(axis=1).max()
    if Jac.shape[0] == 1:  # ‖A⁻¹‖ L / 2 |δ|² ≤ ACCEPT tol scale, multiplied out by |a|
        a = abs(Jac[0, 0])
        return a != 0.0 and 0.5 * norm * step * step <= ACCEPT * tol * scale * a * delta
    try:
        ainv = np.abs(np.linalg.inv(Jac)).sum(axis=1).max()
    except np.linalg.LinAlgError:
        return False
    if not ainv * np.abs(Jac).sum(axis=1).max() < 1.0 / RCOND:
        return False
    return 0.5 * ainv * norm * step * step <= ACCEPT * tol * scale * delta


class _Effort:
    """The effort of a system and its Jacobian as raw callables on (q, n) arrays (the hot loop
    skips the public methods' validation)."""

    def __init__(self, system: PHDAE) -> None:
        self.f = system.effort_function
        self.n = system.n_states
        self._jac = getattr(self.f, "jacobian", None)

    def __call__(self, x: Array) -> Array:
        return np.asarray(self.f(x), dtype=float).reshape(x.shape)

    def jacobian(self, x: Array) -> Array:
        """``∂z/∂x`` (q, n, n): analytic if the effort has it, else central differences."""
        if self._jac is not None:
            return np.asarray(self._jac(x), dtype=float).reshape(x.shape[0], self.n, self.n)
        out = np.empty((x.shape[0], self.n, self.n))
        for k in range(self.n):
            h = 1e-6 * np.maximum(1.0, np.abs(x[:, k]))
            e = np.zeros_like(x)
            e[:, k] = h
            out[:, :, k] = (self(x + e) - self(x - e)) / (2 * h[:, None])
        return out
