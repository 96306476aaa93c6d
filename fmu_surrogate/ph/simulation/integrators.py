"""Structure-preserving simulation of pH systems: implicit midpoint and average vector field.

For ``E ẋ = (J − R) z(x) + B u`` on a grid ``t_0 < … < t_N`` with inputs ``u_k`` interpolated
linearly (so ``ū_k = (u_k + u_{k+1})/2`` is the exact mean over a step), one step of size
``h = t_{k+1} − t_k`` solves for ``x_{k+1}``::

    E (x_{k+1} − x_k) = h [(J − R) z̄_k + B ū_k],      ȳ_k = Bᵀ z̄_k

(with a feedthrough, ``B`` is ``G − P`` in the state equation and ``ȳ_k = (G + P)ᵀ z̄_k + D ū_k``,
the dissipation ``h [z̄; ū]ᵀ W [z̄; ū]``; a state-dependent ``R₀ + R_nl(z)`` of a
:class:`~fmu_surrogate.ph.NonlinearPH` enters as ``R₀ + R_nl(z̄)``: the balance below holds
unchanged)

* ``"midpoint"``: ``z̄_k = z((x_k + x_{k+1})/2)``;
* ``"avf"`` (average vector field, a discrete gradient): ``z̄_k = ∫₀¹ z(x_k + s Δ) ds`` with
  ``Δ = x_{k+1} − x_k``, the integral by 4-point Gauss–Legendre quadrature — exact when ``z`` is
  a polynomial of degree ≤ 7 (``H`` of degree ≤ 8); for smooth efforts its error per step is
  ``O(|Δ|⁸)`` relative, below round-off once ``|Δ|`` is a few per cent of the effort's scale.

Because ``Eᵀz = ∇H``, AVF gives ``H(x_{k+1}) − H(x_k) = z̄ᵀ E Δ`` exactly, hence the discrete
energy balance of the scheme itself::

    H(x_N) − H(x_0) + Σ_k h z̄_kᵀ R z̄_k − Σ_k h ȳ_kᵀ ū_k = 0

which :attr:`Trajectory.energy_residual` reports (round-off and the Newton tolerance only).
Implicit midpoint has the same property for quadratic ``H`` (linear systems), not otherwise.

Solving a step.  Linear systems (``z = Q x``) need no iteration: ``(E − h/2 A) x_{k+1} =
(E + h/2 A) x_k + h B ū_k`` with ``A = (J − R) Q``, one LU factorisation per distinct step
size, turned into the one-step map ``x_{k+1} = Φ x_k + Γ ū_k``.  Otherwise Newton's method with
the analytic Jacobian of the effort where it has one (``effort.jacobian``, e.g.
:class:`~fmu_surrogate.ph.KernelEffort`), else central differences; it stops when the update is
below ``tol`` relative to the state (default 1e-12) and fails after ``max_newton`` iterations with
a :class:`ConvergenceError` naming the step and time.  A core with ``E = I``, ``J − R = 0`` and no
state-dependent dissipation (a lossless set of integrators: a spring whose elongation integrates
its velocity) has the explicit step ``x_{k+1} = x_k + h B ū_k`` whatever its energy: no Newton
iteration, and the mean efforts of all steps from one call of the effort.

Algebraic states (zero columns of ``E``):

* **index 1** (the algebraic rows can be solved for the algebraic states: ``[(J − R) ∂z/∂x]``
  restricted to them is regular, e.g. the RC network) — the algebraic rows are part of the same
  Newton system, with the path average ``z̄`` like the differential rows, and the initial state
  is made consistent first (its algebraic part solved from the algebraic rows at ``t_0``);
* **higher index** (the algebraic states do not enter the algebraic rows, e.g. the pendulum's
  multiplier λ with the position constraint ``g(q) = 0``, index 3): the algebraic states are
  treated as the step's multipliers — constant over the step in the AVF path — and the
  algebraic rows are enforced at the new node, ``[(J − R) z(x_{k+1}) + B u_{k+1}]_a = 0``.  This is
  index reduction by projection onto the constraint manifold at every step (the SHAKE
  construction of constrained mechanics): the constraint holds at every node to the Newton
  tolerance, without drift.  The step's multiplier is a mean over the step (for a symmetric
  scheme ``λ(t_k + h/2) + O(h²)``), not the value at a node, and it lags an input that jumps at
  the nodes; so the *reported* algebraic states at every node are the node values of the
  hidden constraint instead: with ``c(x) = [(J − R) z(x) + B u]_a`` and the flow ``v(x)``
  (``E_d v_d = [(J − R) z + B u]_d``, ``v_a = 0``), ``c₁ = (∂c/∂x) v`` if it depends on the
  algebraic states (index 2), else ``c₂ = (∂c₁/∂x) v`` (index 3, e.g. the pendulum's
  acceleration-level constraint), solved for the algebraic states at the node with the node's
  input (``∂c₁/∂x · v`` by a central difference along ``v``, the input's own rate ``u̇`` is
  not included — exact for held inputs and for inputs that do not enter ``c₁``, such as forces
  on a mechanical system).  The energy balance uses the steps' multipliers; ``H`` does not
  depend on the algebraic states.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.ph.ports import PortedSystem
from fmu_surrogate.ph.simulation.ported_simulation import (
    PortedTrajectory,
    port_inputs,
    ported_trajectory,
)
from fmu_surrogate.ph.simulation.substeps import at_nodes, fine_grid
from fmu_surrogate.ph.simulation.time_steps import _exact_steps, _linear_steps, _newton_steps
from fmu_surrogate.ph.simulation.trajectory import Trajectory, _trajectory
from fmu_surrogate.ph.system import PHDAE, LinearPH

Array = NDArray[np.float64]

__all__ = ["simulate"]


def _exact_trajectory(system: LinearPH, t: Array, U: Array, x0: Array) -> Trajectory:
    X, Ybar, diss, supp = _exact_steps(system, t, U, x0)
    Z = system.effort(X)
    H = system.hamiltonian(X)
    zero = np.zeros(1)
    return Trajectory(t, X, Z, U, system.output_from_effort(Z, U), H, H - H[0],
                      np.concatenate([zero, np.cumsum(diss)]),
                      np.concatenate([zero, np.cumsum(supp)]),
                      np.zeros(t.size - 1, dtype=np.int64), "exact", tuple(system.state_names),
                      tuple(system.output_names), Ybar)


def simulate(
    system: PHDAE | PortedSystem,
    t: ArrayLike,
    u: ArrayLike | None,
    x0: ArrayLike | None = None,
    method: str = "auto",
    *,
    hold: str | None = None,
    tol: float = 1e-12,
    max_newton: int = 25,
) -> Trajectory | PortedTrajectory:
    """Simulate a pH system on the grid ``t`` with a structure-preserving scheme.

    Parameters
    ----------
    system : LinearPH, PHDAE or PortedSystem
        The system.  A :class:`~fmu_surrogate.ph.PortedSystem` takes its external inputs as
        ``u``, starts from its operating point ``x0`` (or the equilibrium of its first inputs,
        ``initial="equilibrium"``) unless one is given, and returns a
        :class:`~fmu_surrogate.ph.simulation.ported_simulation.PortedTrajectory` (external outputs, the
        supplied energy split into external ports and internal constant sources).  A
        :class:`~fmu_surrogate.ph.NonlinearPH` with a ``max_step`` takes equal sub-steps of at
        most that within each interval (:mod:`.substeps`), the result given at ``t``.
    t : array_like, shape (N,)
        Strictly increasing times [s].
    u : array_like, shape (N, m) or (N,) for one port, or None
        Inputs at ``t``, linear in between (``None`` or an empty array for m = 0).
    x0 : array_like, shape (n,), optional
        Initial state (algebraic parts of index-1 systems are made consistent); default: the
        rest state ``0``.
    method : {"auto", "midpoint", "avf", "exact"}
        ``"auto"``: ``"exact"`` for a :class:`LinearPH` with ``E = I`` and held inputs, else
        midpoint for linear systems (exact energy balance for quadratic H), AVF otherwise.
        ``"exact"`` (a :class:`LinearPH` with ``E = I`` and ``hold="zoh"``): the
        exact solution for the held inputs (matrix exponentials, as the exported FMUs step)
        with the exact energy integrals of every step (Van Loan), so the outputs carry no
        discretisation error at any step size and the balance closes to round-off.
    hold : {"linear", "zoh"}, optional
        How the input varies between grid points: linearly (``ū_k = (u_k + u_{k+1})/2``), or
        held at ``u_k`` over the step — what a co-simulation FMU sees from its importer (the
        harvest records this in the dataset's ``input_interpolation``).  Default ``"zoh"``
        for a PortedSystem, ``"linear"`` otherwise.  With ``"zoh"`` the
        algebraic states of an index-1 system jump at the nodes to stay consistent with the
        new input (``H`` does not depend on them, so the energy balance is unaffected).
    tol : float
        Newton stops when ``‖δx‖∞ ≤ tol (1 + ‖x‖∞)``.
    max_newton : int
        Newton iterations per step before :class:`ConvergenceError`.

    Returns
    -------
    Trajectory or PortedTrajectory
        ``t, x, z, u, y, H``, the energy terms and ``energy_residual``.

    Raises
    ------
    ConvergenceError
        Newton failed at some step (the message names the step and time).
    ValueError
        Shapes, a grid that is not increasing, non-finite inputs, an unknown method.

    Examples
    --------
    A lossless oscillator keeps its energy:

    >>> import numpy as np
    >>> from fmu_surrogate.ph import LinearPH
    >>> osc = LinearPH([[0, 1], [-1, 0]], np.zeros((2, 2)), np.eye(2), np.zeros((2, 0)))
    >>> tr = simulate(osc, np.linspace(0, 10, 1001), None, [1.0, 0.0])
    >>> bool(abs(tr.H[-1] - tr.H[0]) < 1e-12)
    True
    >>> # midpoint's phase lag h²t/12 = 8.3e-5 rad: x1(10) − cos 10 = sin(10)·8.3e-5 = −4.5e-5
    >>> print(f"{tr.x[-1, 0] - np.cos(10):.1e}")
    -4.5e-05
    """
    if method not in ("auto", "midpoint", "avf", "exact"):
        raise InvalidInputError(f"method must be 'auto', 'midpoint', 'avf' or 'exact', got "
                                f"{method!r}.")
    if hold not in (None, "linear", "zoh"):
        raise InvalidInputError(f"hold must be 'linear' or 'zoh', got {hold!r}.")
    if isinstance(system, PortedSystem):  # a drop-in surrogate: its ports in ported_simulation
        hold = hold or "zoh"
        U_ext, U_ph, x0 = port_inputs(system, t, u, x0)
        core = simulate(system.system, t, U_ph, x0, method, hold=hold, tol=tol,
                        max_newton=max_newton)
        return ported_trajectory(system, core, U_ext, hold)
    hold = hold or "linear"
    n, m = system.n_states, system.n_inputs
    t = np.asarray(t, dtype=float).reshape(-1)
    if t.size < 2 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise InvalidInputError(
            "t must be a strictly increasing, finite grid of at least 2 points.")
    N = t.size
    if u is None or np.size(u) == 0:
        if m:
            raise InvalidInputError(f"the system has {m} inputs; pass u of shape ({N}, {m}).")
        U = np.zeros((N, 0))
    else:
        U = np.asarray(u, dtype=float)
        if U.ndim == 1 and m == 1:
            U = U[:, None]
        if U.shape != (N, m):
            raise InvalidInputError(f"u must have shape ({N}, {m}) (one row per time point), got "
                                    f"{U.shape}.")
        if not np.all(np.isfinite(U)):
            raise InvalidInputError("u contains NaN or Inf; pass finite inputs.")
    x0 = np.zeros(n) if x0 is None else np.asarray(x0, dtype=float).reshape(-1)
    if x0.shape != (n,) or not np.all(np.isfinite(x0)):
        raise InvalidInputError(f"x0 must be {n} finite numbers, got shape {x0.shape}.")
    step = getattr(system, "max_step", None)
    if step is not None and np.any(np.diff(t) > step * (1.0 + 1e-12)):  # sub-steps (substeps.py)
        tf, Uf, nodes = fine_grid(t, U, hold, step)
        fine = simulate(system, tf, Uf, x0, method, hold=hold, tol=tol, max_newton=max_newton)
        return at_nodes(fine, t, U, nodes)
    linear = isinstance(system, LinearPH)
    if method == "auto":
        exact = linear and hold == "zoh" and np.array_equal(system.E, np.eye(n))
        method = "exact" if exact else "midpoint" if linear else "avf"
    Ubar = 0.5 * (U[1:] + U[:-1]) if hold == "linear" else U[:-1]
    if method == "exact":
        if not linear or hold != "zoh" or not np.array_equal(system.E, np.eye(n)):
            raise InvalidInputError("method='exact' solves a LinearPH with E = I for inputs held "
                                    "over each step: pass hold='zoh', or use method='midpoint'.")
        return _exact_trajectory(system, t, U, x0)
    if linear:
        X, zbar, its = _linear_steps(system, t, Ubar, x0)
    else:
        X, zbar, its = _newton_steps(system, t, U, Ubar, x0, method, tol, max_newton,
                                     hold == "zoh")
    return _trajectory(system, t, U, Ubar, X, zbar, its, method)
