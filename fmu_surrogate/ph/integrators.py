"""Structure-preserving simulation of pH systems: implicit midpoint and average vector field.

For ``E ẋ = (J − R) z(x) + B u`` on a grid ``t_0 < … < t_N`` with inputs ``u_k`` interpolated
linearly (so ``ū_k = (u_k + u_{k+1})/2`` is the exact mean over a step), one step of size
``h = t_{k+1} − t_k`` solves for ``x_{k+1}``::

    E (x_{k+1} − x_k) = h [(J − R) z̄_k + B ū_k],      ȳ_k = Bᵀ z̄_k

(with a feedthrough, ``B`` is ``G − P`` in the state equation and ``ȳ_k = (G + P)ᵀ z̄_k + D ū_k``,
the dissipation ``h [z̄; ū]ᵀ W [z̄; ū]``: the balance below holds unchanged)

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
a :class:`ConvergenceError` naming the step and time.

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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import lu_factor, lu_solve

from fmu_surrogate.errors import FmuSurrogateError
from fmu_surrogate.figures import finish as _finish
from fmu_surrogate.figures import pyplot as _pyplot
from fmu_surrogate.ph.ported_simulation import PortedTrajectory, port_inputs, ported_trajectory
from fmu_surrogate.ph.ports import PortedSystem
from fmu_surrogate.ph.system import PHDAE, LinearPH

Array = NDArray[np.float64]

__all__ = ["ConvergenceError", "Trajectory", "simulate"]

# 4-point Gauss–Legendre on [0, 1]
_GL_X, _GL_W = np.polynomial.legendre.leggauss(4)
GL_NODES = 0.5 * (_GL_X + 1.0)
GL_WEIGHTS = 0.5 * _GL_W


class ConvergenceError(FmuSurrogateError, RuntimeError):
    """Newton's method did not converge in a step; the message names the step and time."""


@dataclass(frozen=True)
class Trajectory:
    """A simulated trajectory and its discrete energy balance.

    Parameters
    ----------
    t : ndarray, shape (N,)
        Time grid [s].
    x, z : ndarray, shape (N, n)
        States and efforts at the nodes.
    u, y : ndarray, shape (N, m)
        Inputs and outputs ``y = (G + P)ᵀ z + D u`` at the nodes.
    H : ndarray, shape (N,)
        Hamiltonian at the nodes (NaN when the system has none).
    stored, dissipated, supplied : ndarray, shape (N,)
        Cumulative ``H(x_k) − H(x_0)``, ``Σ h z̄ᵀRz̄`` and ``Σ h ȳᵀū`` of the scheme.
    newton_iterations : ndarray of int, shape (N − 1,)
        Newton iterations per step (0 for the linear direct solve).
    method : str
        ``"midpoint"`` or ``"avf"``.
    state_names, output_names : tuple of str
        For plots.
    ybar : ndarray, shape (N − 1, m)
        The steps' outputs ``ȳ_k`` (those of the energy balance).
    """

    t: Array = field(repr=False)
    x: Array = field(repr=False)
    z: Array = field(repr=False)
    u: Array = field(repr=False)
    y: Array = field(repr=False)
    H: Array = field(repr=False)
    stored: Array = field(repr=False)
    dissipated: Array = field(repr=False)
    supplied: Array = field(repr=False)
    newton_iterations: NDArray[np.int64] = field(repr=False)
    method: str
    state_names: tuple[str, ...] = ()
    output_names: tuple[str, ...] = ()
    ybar: Array | None = field(default=None, repr=False)

    @property
    def energy_residual(self) -> float:
        """``H(x_N) − H(x_0) + Σ h z̄ᵀRz̄ − Σ h ȳᵀū`` (NaN without a Hamiltonian)."""
        return float(self.stored[-1] + self.dissipated[-1] - self.supplied[-1])

    @property
    def energy_scale(self) -> float:
        """A scale for the residual: the largest of ``|H − H_0|``, dissipated and supplied."""
        vals = [np.max(np.abs(self.stored)), np.max(np.abs(self.dissipated)),
                np.max(np.abs(self.supplied)), np.max(np.abs(self.H))]
        return float(np.nanmax(vals)) or 1.0

    def plot(self, path: str | Path | None = None, *, max_states: int = 6) -> Any:
        """States and outputs over time.

        Parameters
        ----------
        path : path, optional
            Save the figure there (PNG) and close it.
        max_states : int
            At most this many states are drawn.

        Returns
        -------
        matplotlib.figure.Figure
        """
        plt = _pyplot()
        k = min(self.x.shape[1], max_states)
        m = self.y.shape[1]
        fig, axes = plt.subplots(2 if m else 1, 1, figsize=(8.5, 5.5 if m else 3.2),
                                 sharex=True, squeeze=False)
        names = self.state_names or tuple(f"x{i + 1}" for i in range(self.x.shape[1]))
        for j in range(k):
            axes[0, 0].plot(self.t, self.x[:, j], lw=0.9, label=names[j])
        axes[0, 0].set_ylabel("states")
        axes[0, 0].legend(fontsize=7, ncol=2, loc="upper right")
        if m:
            onames = self.output_names or tuple(f"y{i + 1}" for i in range(m))
            for j in range(m):
                axes[1, 0].plot(self.t, self.y[:, j], lw=0.9, label=onames[j])
            axes[1, 0].set_ylabel("outputs")
            axes[1, 0].legend(fontsize=7, loc="upper right")
        axes[-1, 0].set_xlabel("time [s]")
        fig.suptitle(f"simulation ({self.method}), {len(self.t) - 1} steps")
        return _finish(fig, path)

    def plot_energy(self, path: str | Path | None = None) -> Any:
        """Stored, dissipated and supplied energy over time, and the balance residual.

        Parameters
        ----------
        path : path, optional
            Save the figure there (PNG) and close it.

        Returns
        -------
        matplotlib.figure.Figure
        """
        plt = _pyplot()
        fig, (ax, ax_r) = plt.subplots(2, 1, figsize=(8.5, 5.5), sharex=True,
                                       gridspec_kw={"height_ratios": [2, 1]})
        ax.plot(self.t, self.stored, label="stored H − H₀")
        ax.plot(self.t, self.dissipated, label="dissipated ∫ zᵀRz")
        ax.plot(self.t, self.supplied, label="supplied ∫ yᵀu")
        ax.set_ylabel("energy")
        ax.legend(fontsize=8)
        res = self.stored + self.dissipated - self.supplied
        ax_r.plot(self.t, res, color="tab:red", lw=0.8)
        ax_r.set_ylabel("residual")
        ax_r.set_xlabel("time [s]")
        ax_r.set_title(f"energy-balance residual {self.energy_residual:.2e} "
                       f"({abs(self.energy_residual) / self.energy_scale:.1e} of the energy "
                       f"scale)", fontsize=8, loc="left")
        return _finish(fig, path)


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
        ``u``, starts from its operating point ``x0`` unless one is given, and returns a
        :class:`~fmu_surrogate.ph.ported_simulation.PortedTrajectory` (external outputs, the
        supplied energy split into external ports and internal constant sources).
    t : array_like, shape (N,)
        Strictly increasing times [s].
    u : array_like, shape (N, m) or (N,) for one port, or None
        Inputs at ``t``, linear in between (``None`` or an empty array for m = 0).
    x0 : array_like, shape (n,), optional
        Initial state (algebraic parts of index-1 systems are made consistent); default: the
        rest state ``0``.
    method : {"auto", "midpoint", "avf"}
        ``"auto"``: midpoint for linear systems (exact energy balance for quadratic H), AVF
        otherwise.
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
    if method not in ("auto", "midpoint", "avf"):
        raise ValueError(f"method must be 'auto', 'midpoint' or 'avf', got {method!r}.")
    if hold not in (None, "linear", "zoh"):
        raise ValueError(f"hold must be 'linear' or 'zoh', got {hold!r}.")
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
        raise ValueError("t must be a strictly increasing, finite grid of at least 2 points.")
    N = t.size
    if u is None or np.size(u) == 0:
        if m:
            raise ValueError(f"the system has {m} inputs; pass u of shape ({N}, {m}).")
        U = np.zeros((N, 0))
    else:
        U = np.asarray(u, dtype=float)
        if U.ndim == 1 and m == 1:
            U = U[:, None]
        if U.shape != (N, m):
            raise ValueError(f"u must have shape ({N}, {m}) (one row per time point), got "
                             f"{U.shape}.")
        if not np.all(np.isfinite(U)):
            raise ValueError("u contains NaN or Inf; pass finite inputs.")
    x0 = np.zeros(n) if x0 is None else np.asarray(x0, dtype=float).reshape(-1)
    if x0.shape != (n,) or not np.all(np.isfinite(x0)):
        raise ValueError(f"x0 must be {n} finite numbers, got shape {x0.shape}.")
    linear = isinstance(system, LinearPH)
    if method == "auto":
        method = "midpoint" if linear else "avf"
    Ubar = 0.5 * (U[1:] + U[:-1]) if hold == "linear" else U[:-1]
    if linear:
        X, zbar, its = _linear_steps(system, t, Ubar, x0)
    else:
        X, zbar, its = _newton_steps(system, t, U, Ubar, x0, method, tol, max_newton,
                                     hold == "zoh")
    return _trajectory(system, t, U, Ubar, X, zbar, its, method)


def _linear_steps(system: LinearPH, t: Array, Ubar: Array,
                  x0: Array) -> tuple[Array, Array, NDArray[np.int64]]:
    """Implicit midpoint for ``E ẋ = A x + B u``: one LU per distinct step size."""
    A = (system.J - system.R) @ system.Q
    E, B = system.E, system.input_matrix
    h_all = np.diff(t)
    X = np.empty((t.size, x0.size))
    X[0] = x0
    # steps equal up to round-off (a linspace grid) share one factorisation
    keys = np.round(h_all / h_all.max(), 13)
    maps: dict[float, tuple[Array, Array]] = {}
    G = np.empty_like(X[1:])
    Phis = []
    for key in np.unique(keys):
        sel = keys == key
        h = float(h_all[sel][0])
        lu = lu_factor(E - 0.5 * h * A)
        Phi, Gam = lu_solve(lu, E + 0.5 * h * A), lu_solve(lu, h * B)
        maps[float(key)] = (Phi, Gam)
        G[sel] = Ubar[sel] @ Gam.T  # the input part of every step at once
        Phis.append(Phi)
    if len(maps) == 1:
        Phi = Phis[0]
        for k in range(h_all.size):
            X[k + 1] = Phi @ X[k] + G[k]
    else:
        for k in range(h_all.size):
            X[k + 1] = maps[float(keys[k])][0] @ X[k] + G[k]
    Zbar = 0.5 * (X[1:] + X[:-1]) @ system.Q.T
    return X, Zbar, np.zeros(t.size - 1, dtype=np.int64)


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


def _algebraic(system: PHDAE) -> tuple[Array, Array]:
    """Indices of algebraic rows (zero rows of E) and algebraic states (zero columns)."""
    E = system.E
    return (np.flatnonzero(~np.any(E != 0, axis=1)), np.flatnonzero(~np.any(E != 0, axis=0)))


def _newton_steps(system: PHDAE, t: Array, U: Array, Ubar: Array, x0: Array, method: str,
                  tol: float, max_newton: int,
                  zoh: bool) -> tuple[Array, Array, NDArray[np.int64]]:
    n = system.n_states
    T = system.J - system.R
    E, B = system.E, system.input_matrix
    rows_a, cols_a = _algebraic(system)
    eff = _Effort(system)
    high_index = False
    if rows_a.size:
        if rows_a.size != cols_a.size:
            raise ValueError(f"E has {rows_a.size} zero rows but {cols_a.size} zero columns; "
                             "write the DAE with E = diag(E_d, 0) (algebraic states last or "
                             "anywhere, but as many algebraic rows as states).")
        Jz0 = eff.jacobian(x0[None, :])[0]
        block = (T @ Jz0)[np.ix_(rows_a, cols_a)]
        high_index = np.linalg.matrix_rank(block) < rows_a.size
        if not high_index:
            x0 = _consistent(system, eff, x0, U[0], rows_a, cols_a, tol, max_newton)
    nodes, weights = (np.array([0.5]), np.array([1.0])) if method == "midpoint" else \
        (GL_NODES, GL_WEIGHTS)
    mask_a = None
    if high_index:
        mask_a = np.zeros(n, dtype=bool)
        mask_a[cols_a] = True
    N = t.size
    X = np.empty((N, n))
    X[0] = x0
    Zbar = np.empty((N - 1, n))
    its = np.zeros(N - 1, dtype=np.int64)
    x_prev = x0
    for k in range(N - 1):
        h = t[k + 1] - t[k]
        xk = X[k]
        ubar = Ubar[k]
        u_end = U[k] if zoh else U[k + 1]  # the input in force just before t_{k+1}
        # predictor: linear extrapolation of the last step
        xn = xk + (xk - x_prev) * (h / (t[k] - t[k - 1])) if k else xk.copy()
        converged = False
        Jac = None
        best = (np.inf, xn, None)
        prev = np.inf
        for it in range(1, max_newton + 1):
            # Newton; after the first two iterations of a step the Jacobian is kept (chord
            # steps, each one residual evaluation) — it changes by O(h·|δx|) within a step
            fresh = Jac is None or it <= 2
            F, Jnew, zb = _residual(eff, T, E, B, xk, xn, ubar, u_end, h, nodes, weights,
                                    mask_a, rows_a, jacobian=fresh)
            Jac = Jnew if fresh else Jac
            fn = np.abs(F).max()
            if fn < best[0]:
                best = (fn, xn, zb)
            # the residual stopped shrinking at the level of round-off in the effort: done
            scale = np.abs(E @ (xn - xk)).max() + h * (np.abs(T @ zb).max() + np.abs(B @ ubar).max()
                                                       if B.size else np.abs(T @ zb).max())
            if it > 3 and (fn > 0.5 * prev or fn <= _FLOOR * (scale + 1e-300)) \
                    and best[0] <= _STALL * (scale + 1e-300):
                converged = True
                _, xn, zb = best
                break
            prev = fn
            try:
                dx = _solve(Jac, -F)
            except np.linalg.LinAlgError:
                raise ConvergenceError(
                    f"step {k} (t = {t[k]:.6g} s): the Newton matrix is singular; the DAE may "
                    f"have a higher index than this scheme handles, or the state left the "
                    f"region where the effort is valid.") from None
            xn = xn + dx
            step = np.abs(dx).max()
            if not np.isfinite(step):
                break
            if step <= tol * (1.0 + np.abs(xn).max()):
                converged = True
                _, _, zb = _residual(eff, T, E, B, xk, xn, ubar, u_end, h, nodes, weights,
                                     mask_a, rows_a, jacobian=False)
                break
        if not converged:
            raise ConvergenceError(
                f"Newton did not converge at step {k} (t = {t[k]:.6g} s → {t[k + 1]:.6g} s) "
                f"after {max_newton} iterations (residual {best[0]:.2e}); reduce the step, or "
                f"check the input and the initial state.")
        its[k] = it
        if zoh and rows_a.size and not high_index:  # the new input: algebraic states jump
            xn = _consistent(system, eff, xn, U[k + 1], rows_a, cols_a, tol, max_newton)
        X[k + 1] = xn
        Zbar[k] = zb
        x_prev = xk
    if high_index:
        hidden = _HiddenConstraint(eff, T, E, B, rows_a, cols_a, X[0])
        X = hidden.node_states(X, U, tol, max_newton)
    return X, Zbar, its


def _residual(eff: _Effort, T: Array, E: Array, B: Array, xk: Array, xn: Array, ubar: Array,
              u_next: Array, h: float, nodes: Array, weights: Array, mask_a: Array | None,
              rows_a: Array, jacobian: bool = True) -> tuple[Array, Array | None, Array]:
    """Residual, Jacobian and path-averaged effort of one step (see the module docs).

    ``mask_a`` marks the multipliers of a higher-index system (constant over the step), or is
    ``None`` (index ≤ 1: the whole state moves linearly along the path).
    """
    delta = xn - xk
    if mask_a is None:
        xi = xk + nodes[:, None] * delta
    else:
        xi = np.where(mask_a, xn, xk) + nodes[:, None] * np.where(mask_a, 0.0, delta)
    # the new node is evaluated together with the quadrature points (one call: the cost of a
    # learned effort at a few points is mostly per call)
    pts = xi if mask_a is None else np.vstack([xi, xn[None, :]])
    zs = eff(pts)
    zb = weights @ zs[: xi.shape[0]]
    F = E @ delta - h * (T @ zb + B @ ubar)
    if mask_a is not None:  # higher index: the algebraic rows hold at the new node
        F[rows_a] = (T @ zs[-1] + B @ u_next)[rows_a]
    if not jacobian:
        return F, None, zb
    Jall = eff.jacobian(pts)
    Jz = Jall[: xi.shape[0]]                    # (q, n, n)
    if mask_a is None:
        dzb = np.tensordot(weights * nodes, Jz, axes=1)
    else:
        dxi = np.where(mask_a[None, :], 1.0, nodes[:, None])     # ∂ξ_q/∂x_{k+1} per column
        dzb = np.einsum("q,qij,qj->ij", weights, Jz, dxi)
    Jac = E - h * (T @ dzb)
    if mask_a is not None:
        Jac[rows_a] = (T @ Jall[-1])[rows_a]
    return F, Jac, zb


#: singular values below this, relative to the largest, count as zero in a Newton solve
RCOND = 1e-9
#: a Newton residual below this fraction of the step's terms is converged (after 3 iterations)
_FLOOR = 1e-11
#: a Newton residual that stalls below this fraction of the step's terms is at round-off level
_STALL = 1e-8
#: (∂c/∂x_d)(∂v_d/∂x_a) with singular values above this fraction of its scale: index 2
_INDEX2 = 1e-3


def _solve(A: Array, b: Array) -> Array:
    """``A⁻¹ b``, or the minimum-norm least-squares step when ``A`` is numerically singular.

    A learned effort can leave a direction of the state undetermined by the equations (a
    surrogate of an index-1 DAE whose algebraic rows are identically zero in the data, such as
    the RC network's second row): there the state keeps its value instead of jumping on
    round-off.
    """
    try:
        x = np.linalg.solve(A, b)
        if np.linalg.cond(A) < 1.0 / RCOND:
            return x
    except np.linalg.LinAlgError:
        pass
    return np.linalg.lstsq(A, b, rcond=RCOND)[0]


class _HiddenConstraint:
    """The hidden constraint of a higher-index system and its solution for the algebraic states
    at the nodes (module doc); vectorised over the nodes."""

    def __init__(self, eff: _Effort, T: Array, E: Array, B: Array, rows_a: Array,
                 cols_a: Array, x0: Array) -> None:
        n = E.shape[0]
        self.eff, self.T, self.B, self.rows_a, self.cols_a = eff, T, B, rows_a, cols_a
        self.rows_d = np.setdiff1d(np.arange(n), rows_a)
        self.cols_d = np.setdiff1d(np.arange(n), cols_a)
        self.E_d_pinv = np.linalg.pinv(E[np.ix_(self.rows_d, self.cols_d)])
        # index 2 when c₁ depends on x_a: (∂c/∂x_d)(∂v_d/∂x_a) regular (decided once, at x0,
        # with a loose threshold — a learned effort is not structurally exact)
        TJ = T @ eff.jacobian(x0[None, :])[0]
        G = TJ[np.ix_(rows_a, self.cols_d)]
        Ha = self.E_d_pinv @ TJ[np.ix_(self.rows_d, cols_a)]
        sv = np.linalg.svd(G @ Ha, compute_uv=False)
        scale = np.linalg.norm(G, 2) * np.linalg.norm(Ha, 2)
        self.constraint = self._c1 if sv.min() > _INDEX2 * scale else self._c2

    def _flow(self, X: Array, U: Array) -> Array:
        F = self.eff(X) @ self.T.T + (U @ self.B.T if self.B.size else 0.0)
        V = np.zeros_like(X)
        V[:, self.cols_d] = F[:, self.rows_d] @ self.E_d_pinv.T
        return V

    def _c1(self, X: Array, U: Array) -> Array:
        Jz = self.eff.jacobian(X)
        return np.einsum("ij,njk,nk->ni", self.T[self.rows_a], Jz, self._flow(X, U))

    def _c2(self, X: Array, U: Array) -> Array:
        V = self._flow(X, U)
        # O(ε²) truncation ≈ 1e-8 relative; a smaller ε amplifies the noise of an effort
        # Jacobian taken by differences
        eps = (1e-4 * (1.0 + np.abs(X).max(axis=1))
               / np.maximum(np.abs(V).max(axis=1), 1e-300))[:, None]
        return (self._c1(X + eps * V, U) - self._c1(X - eps * V, U)) / (2.0 * eps)

    def _jac_a(self, c, X: Array, U: Array, c0: Array) -> Array:
        """``∂c/∂x_a`` (N, n_a, n_a) by forward differences (exact when c is affine in x_a —
        constraint forces — else a chord slope; Newton then converges linearly to the root)."""
        out = np.empty((X.shape[0], self.rows_a.size, self.cols_a.size))
        for j, col in enumerate(self.cols_a):
            d = 1e-3 * (1.0 + np.abs(X[:, col]))
            Xe = X.copy()
            Xe[:, col] += d
            out[:, :, j] = (c(Xe, U) - c0) / d[:, None]
        return out

    def node_states(self, X: Array, U: Array, tol: float, max_newton: int) -> Array:
        """``X`` with the algebraic states solved from ``c₁ = 0`` (index 2) or ``c₂ = 0``."""
        c = self.constraint
        X = X.copy()
        c0 = c(X, U)
        Ja_inv = np.linalg.pinv(self._jac_a(c, X, U, c0), rcond=RCOND)
        for _ in range(max_newton):
            dx = -np.einsum("nij,nj->ni", Ja_inv, c0)
            X[:, self.cols_a] += dx
            if np.abs(dx).max() <= 1e3 * tol * (1.0 + np.abs(X[:, self.cols_a]).max()):
                break
            c0 = c(X, U)
        return X


def _consistent(system: PHDAE, eff: _Effort, x0: Array, u0: Array, rows_a: Array,
                cols_a: Array, tol: float, max_newton: int) -> Array:
    """Solve the algebraic rows at t_0 for the algebraic states (index 1)."""
    T = system.J - system.R
    x = x0.copy()
    best = (np.inf, x0.copy())
    prev = np.inf
    for it in range(max_newton):
        z = eff(x[None, :])[0]
        r = (T @ z + system.input_matrix @ u0)[rows_a]
        rn = np.abs(r).max()
        if rn < best[0]:
            best = (rn, x.copy())
        Bu = system.input_matrix @ u0
        scale = np.abs(T @ z).max() + np.abs(Bu).max() if Bu.size else 1.0
        if it > 1 and rn > 0.5 * prev and rn <= _STALL * (scale + 1e-300):
            return best[1]  # stalled at round-off
        prev = rn
        Jaa = (T @ eff.jacobian(x[None, :])[0])[np.ix_(rows_a, cols_a)]
        dx = _solve(Jaa, -r)
        x[cols_a] += dx
        if np.max(np.abs(dx)) <= tol * (1.0 + np.max(np.abs(x))):
            return x
    Jaa = (T @ eff.jacobian(x0[None, :])[0])[np.ix_(rows_a, cols_a)]
    cond = np.linalg.cond(Jaa)
    hint = "" if cond < 1e3 else (
        f" Their Jacobian with respect to the algebraic states is ill-conditioned at x0 "
        f"(condition number {cond:.1e}): the algebraic rows barely determine the algebraic "
        f"states — typical of a learned effort that expresses a differential effort through "
        f"algebraic states where they coincide on the data; give the algebraic efforts as "
        f"known parts and the differential ones as functions of the differential states.")
    raise ConvergenceError("the algebraic equations have no solution near x0 at t_0; pass a "
                           "consistent initial state." + hint)


def _trajectory(system: PHDAE, t: Array, U: Array, ubar: Array, X: Array, Zbar: Array,
                its: NDArray[np.int64], method: str) -> Trajectory:
    Z = system.effort(X)
    Y = system.output_from_effort(Z, U)
    h = np.diff(t)
    if system.has_hamiltonian:
        H = system.hamiltonian(X)
        stored = H - H[0]
    else:
        H = np.full(t.size, np.nan)
        stored = np.full(t.size, np.nan)
    Ybar = system.output_from_effort(Zbar, ubar)
    diss = h * system.dissipation_rate(Zbar, ubar)
    supp = h * (Ybar * ubar).sum(axis=1)
    zero = np.zeros(1)
    return Trajectory(t, X, Z, U, Y, H, stored, np.concatenate([zero, np.cumsum(diss)]),
                      np.concatenate([zero, np.cumsum(supp)]), its, method,
                      tuple(system.state_names), tuple(system.output_names), Ybar)
