"""A linear surrogate fitted as late outputs, rewritten with a delayed feedthrough.

At one communication step ``h`` two kinds of FMU show the same samples: generated code that
computes its outputs before it advances its states (late outputs, ``y_k = C x_{k−1} +
D u_{k−1}``) and code that computes them at the end of ``doStep`` from the new state and the
inputs the step held (a delayed feedthrough, ``y_k = C x_k + D u_{k−1}``).  Both are fitted as
late outputs (:mod:`~fmu_surrogate.identify.late_outputs`), exact at the harvest's step; at
another step (an importer's choice, or a variable-step master such as ECCO) only the kind the
FMU is reproduces it.  An FMU that shows fixed values before its first step computes its
outputs in ``doStep`` only (:mod:`~fmu_surrogate.identify.first_outputs`): the second kind.

With a linear core and outputs that read no pH port (no power pair), the late surrogate's
outputs are rewritten exactly: over a step with the inputs held, ``x_k = Φ x_{k−1} +
Γ (Tu u_{k−1} + cu)`` (the core's exact discretisation), so that ``Cx' x_{k−1} + Du' u_{k−1} +
cy'`` is ``Cx x_k + Du u_{k−1} + cy`` with ``Cx = Cx' Φ⁻¹``, ``Du = Du' − Cx Γ Tu`` and ``cy =
cy' − Cx Γ cu`` — the same samples at the harvest's step (round-off), the FMU's behaviour at
every other step.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from scipy.linalg import expm

__all__ = ["as_delayed_feedthrough", "prefer_delayed"]


def as_delayed_feedthrough(surrogate: Any, step: float) -> Any:
    """The late-output ``surrogate`` with a delayed feedthrough instead (module docstring), or
    ``None`` where it cannot be rewritten (a nonlinear core, outputs that read a pH port, a
    descriptor matrix ``E ≠ I``, a singular step matrix).

    Parameters
    ----------
    surrogate : PortedSystem
        With ``late_outputs``.
    step : float
        The step it was fitted at.

    Returns
    -------
    PortedSystem or None
        Its ``first_outputs`` kept, ``inputs_before`` the first inputs.
    """
    from fmu_surrogate.ph import LinearPH

    core, p = surrogate.system, surrogate.ports
    if not (surrogate.late_outputs and isinstance(core, LinearPH)) or np.any(p.Ty != 0) or \
            p.reads_rate or not np.array_equal(core.E, np.eye(core.n_states)):
        return None
    A, B, _ = core.state_space()
    n, m = B.shape
    M = np.zeros((n + m, n + m))
    M[:n, :n], M[:n, n:] = A, B
    E = expm(M * float(step))
    Phi, Gam = E[:n, :n], E[:n, n:]
    if n and np.linalg.cond(Phi) > 1e12:
        return None
    Cx = np.linalg.solve(Phi.T, np.asarray(p.Cx, float).T).T if n else np.asarray(p.Cx, float)
    ports = replace(p, Cx=Cx, Du=np.asarray(p.Du, float) - Cx @ Gam @ np.asarray(p.Tu, float),
                    cy=np.asarray(p.cy, float) - Cx @ Gam @ np.asarray(p.cu, float))
    return surrogate.replace(ports=ports, late_outputs=False, delayed_feedthrough=True)


def prefer_delayed(late: Any, data: Any, fit_delayed: Any, tolerance: float,
                   try_it: bool) -> Any:
    """The linear fit with a delayed feedthrough of its own instead of late outputs, where the
    rewrite cannot take the surrogate (outputs that read a pH port: power pairs) and the FMU
    is of the delayed kind; kept when within the tolerance.

    Parameters
    ----------
    late : LateOutputs
        The late-output fit (:func:`~fmu_surrogate.identify.late_outputs.fit_late_outputs`).
    data : xarray.Dataset
        The data at the outputs' own points.
    fit_delayed : callable
        ``fit_delayed(data) -> (fitted LinearPHIdentifier, held-out error)``.
    tolerance : float
    try_it : bool
        Whether to try (a late fit of the delayed kind the rewrite cannot take).

    Returns
    -------
    LateOutputs
        ``late``, or the delayed fit (not late) with its reason.
    """
    from fmu_surrogate.identify.fit_report import percent
    from fmu_surrogate.identify.late_outputs import LateOutputs

    if not (late.late and try_it):
        return late
    try:
        est, err = fit_delayed(data)
    except (ValueError, np.linalg.LinAlgError):  # the late fit stays
        return late
    if not err <= tolerance:  # a linear model of its own: the nonlinear fit starts from late
        return late
    return LateOutputs(False, data, est, err,
                       f"the outputs see the inputs of the step before (delayed feedthrough: the "
                       f"first point is not repeated, or fixed): fitted so, {percent(err)} "
                       f"(as late outputs {percent(late.error)})")
