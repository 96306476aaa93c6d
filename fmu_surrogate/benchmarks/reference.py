"""Reference solutions of the benchmark equations for a held (zero-order-hold) input.

Co-simulation importers hold every input constant over a communication step; the reference
solves each step ``[t_k, t_{k+1}]`` with ``u_k`` by scipy's DOP853 at tight tolerances, so FMU
outputs can be checked against it sample by sample.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["ReferenceSolveError", "solve_zoh"]


class ReferenceSolveError(FmuSurrogateError, RuntimeError):
    """The scipy reference solve of a benchmark failed (the message names the step)."""


def solve_zoh(
    rhs: Callable[[np.ndarray, np.ndarray], Sequence[float]],
    t: np.ndarray,
    u: np.ndarray,
    x0: Sequence[float],
    rtol: float = 1e-12,
    atol: float = 1e-14,
    method: str = "DOP853",
    jac: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    """States at ``t`` of ``x' = rhs(x, u_k)`` with ``u_k`` held on ``[t_k, t_{k+1})`` (DOP853,
    or the implicit ``method`` of scipy for a stiff model).

    Parameters
    ----------
    rhs : callable
        ``rhs(x (n,), u_k) -> x' (n,)``; ``u_k`` is ``u[k]`` (a scalar or a row).
    t : array_like, shape (N,)
        Increasing sample times.
    u : array_like, shape (N,) or (N, m)
        Input samples (the last one is not used).
    x0 : sequence of float, length n
        State at ``t[0]``.
    rtol, atol : float
        Tolerances of the solver.
    method : str
        Method of :func:`scipy.integrate.solve_ivp` (``"Radau"`` or ``"BDF"`` for stiff models).
    jac : callable, optional
        ``jac(x, u_k) -> ∂rhs/∂x`` for the implicit methods (default: finite differences).

    Returns
    -------
    ndarray, shape (N, n)

    Raises
    ------
    ReferenceSolveError
        A step of the solve failed.
    """
    from scipy.integrate import solve_ivp

    t = np.asarray(t, dtype=float)
    u = np.asarray(u, dtype=float)
    X = np.empty((len(t), len(x0)))
    X[0] = x0
    for k in range(len(t) - 1):
        extra = {} if jac is None else {"jac": lambda s, x, uk=u[k]: jac(x, uk)}
        sol = solve_ivp(lambda s, x, uk=u[k]: rhs(x, uk), (t[k], t[k + 1]), X[k],
                        method=method, rtol=rtol, atol=atol, **extra)
        if not sol.success:
            raise ReferenceSolveError(f"reference solve failed on [{t[k]}, {t[k + 1]}]: {sol.message}; "
                                      "check the parameters and the input, or loosen rtol/atol.")
        X[k + 1] = sol.y[:, -1]
    return X
