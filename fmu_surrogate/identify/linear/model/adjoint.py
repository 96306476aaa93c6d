r"""Forward models, discrete costs and adjoint gradients for linear pH identification.

Model (docs/design.md §4, Günther–Jacob–Totzeck)::

    ẋ = (J − R) Q x + B u,   x(0) = x0,   y = Bᵀ Q x          (A = (J − R) Q,  C = Bᵀ Q)

    cost(w) = Σ_experiments ½ Σ_k w_k |y_k − y_data,k|²  +  regularisation

The discretisations (``mode``) are described in :mod:`fmu_surrogate.identify.linear.model.discretisation`;
the containers and checks live in :mod:`fmu_surrogate.identify.linear.model.experiments`.

Gradients (``cost_and_gradient``)
---------------------------------
All gradients are plain Euclidean partial derivatives w.r.t. every entry of ``J, R, Q, B, x0``
(entries treated as independent; no symmetrisation).  A manifold layer projects them, e.g.
for ``R = Y Yᵀ`` the gradient in ``Y`` is ``2 sym(G_R) Y``.

``gradient="exact"`` (default, both modes) — the exact gradient of the *discrete* cost
(discrete adjoint).  With ``x_{k+1} = Φ_k x_k + b_k``, residuals ``r_k = C x_k − y_data,k``::

    λ_{K−1} = w_{K−1} Cᵀ r_{K−1},     λ_k = Φ_kᵀ λ_{k+1} + w_k Cᵀ r_k
    G_x0 = λ_0,   G_C = Σ_k w_k r_k x_kᵀ

  Euler (``Φ_k = I + h_k A``, ``b_k = h_k B u_k``)::

    G_A = Σ_k h_k λ_{k+1} x_kᵀ,   G_B(input) = Σ_k h_k λ_{k+1} u_kᵀ

  Exact: ``G_Φ = Σ_k λ_{k+1} x_kᵀ``, ``G_Γ0 = Σ_k λ_{k+1} u_kᵀ``, ``G_Γ1 = Σ_k λ_{k+1} u_{k+1}ᵀ``
  (sums per distinct step size), assembled into ``G_E`` (blocks ``G_Φ``, ``G_Γ_a = G_Γ0``,
  ``G_Γ_b = G_Γ1 − G_Γ0``), pulled back through the exponential with the adjoint of the
  Fréchet derivative, ``G_M = L_exp(Mᵀ, G_E)`` (one call per distinct step size and gradient,
  shared across experiments), and ``G_A = h G_M[:n, :n]``, ``G_B(input) = h G_M[:n, n:n+m]``.

``gradient="paper"`` (Euler mode only) — the paper's continuous adjoint
``−ṗ = Q (J − R)ᵀ p + Q B (y − y_data)``, ``p(T) = 0`` (Q symmetric; we use ``Aᵀ``, ``Cᵀ``
for the general case) discretised as in the paper: explicit Euler backwards in time,
``p_{K−1} = 0``, ``p_k = p_{k+1} + h_k (Aᵀ p_{k+1} + Cᵀ r_{k+1})``, and left-endpoint
quadrature of Theorem 5's integrals: ``G_A = Σ_k h_k p_k x_kᵀ``,
``G_B(input) = Σ_k h_k p_k u_kᵀ``, ``G_C = Σ_k h_k r_k x_kᵀ``, ``G_x0 = p_0``.
Compared with the discrete adjoint it uses ``r_{k+1}`` instead of ``r_k`` in the adjoint forcing
and ``p_k`` instead of ``λ_{k+1}`` in the integrals, so it differs by O(h): it is the gradient
of the continuous cost, not of the discrete one (a line search on the discrete cost sees an
inexact gradient).

In both cases the chain rule through ``A = (J − R) Q`` and ``C = Bᵀ Q`` gives::

    G_J = G_A Qᵀ,   G_R = −G_A Qᵀ,   G_Q = (J − R)ᵀ G_A + B G_C,   G_B = G_B(input) + Q G_Cᵀ

the discrete counterpart of the paper's optimality conditions (Section 3, derived from the
Lagrangian): ``∇_J = ∫ p (Qx)ᵀ``, ``∇_R = −∫ p (Qx)ᵀ``, ``∇_B = ∫ p uᵀ + Q x rᵀ``,
``∇_x0 = p(0)`` agree term by term; for Q the paper writes ``∫ x ⊗ ((J−R)ᵀp) + x ⊗ (B r)``,
the *transpose* of the plain partial derivative ``∫ (J−R)ᵀ p xᵀ + B r xᵀ`` used here — the
two coincide after projection onto symmetric matrices (the paper's Q is symmetric).  (The
statement of Theorem 5 in the text version of the paper is partly garbled, e.g. (8b), (8e);
we follow the derivation.)  Verified by Taylor tests and torch autograd
(``tests/identify/linear/model/test_adjoint.py``).

Entry points
------------
:func:`~fmu_surrogate.identify.linear.model.adjoint_checked.cost`,
:func:`~fmu_surrogate.identify.linear.model.adjoint_checked.cost_and_gradient` and
:func:`~fmu_surrogate.identify.linear.model.discretisation.simulate` validate their arguments on
every call.  :class:`Evaluator` is the optimiser's fast path: it validates the experiments and settings
once, precomputes what does not depend on the parameters (step-size groups, quadrature weights,
shifted and differenced inputs) and then evaluates unchecked arrays, returning an opaque forward
state so that the gradient at an accepted line-search point reuses its forward solve (and the
repeated squares of Φ its scan used).  Both run the same code after validation, so their results
are bitwise equal.  The checked functions keep a single-entry cache of the last forward solve
(``cost(w)`` followed by ``cost_and_gradient(w)`` solves the state equation once);
:func:`~fmu_surrogate.identify.linear.model.adjoint_checked.clear_forward_cache` drops it.
The shared evaluation code (prepared experiments, forward and adjoint solves, chain rule) is
:mod:`~fmu_surrogate.identify.linear.model.evaluation`.

Cost of one evaluation
----------------------
No Python loop over time steps: both recurrences use the parallel-prefix scans of
:mod:`fmu_surrogate.identify.linear.model.recurrence` (forward in time, and the mirrored scan backward
for the adjoint); the sums over k are single matrix products.  In the exact mode the forcing is
one product ``[u_k, u_{k+1} − u_k] [Γ_a Γ_b]ᵀ``, and the adjoint of the Fréchet derivative needs
only the rows ``:n`` (the block exponential of size n + N instead of 2N, see
:func:`_foh_frechet_adjoint`).  Time grids may be non-uniform: step sizes equal to a relative
``STEP_RTOL`` are grouped (snapped to the group mean, a model change ≤ STEP_RTOL relative).  A
uniform grid per experiment is the fast path; experiments on different grids are looped over
(shared step sizes share their exponential and Fréchet derivative).  With G distinct step sizes
the exact mode needs G matrix exponentials (one batched call) and G Fréchet derivatives per
gradient, the recurrences become time-varying (``O(K n³)`` Brent–Kung scan for n ≤ 24,
sequential loop above) and the gradient sums are grouped per step size (G matrix products).

Measured (1 thread, K = 1001 samples, m = 2, median processor time on a shared 2-core machine,
:class:`Evaluator`; the per-step loop reference is
:func:`fmu_surrogate.identify.linear.model.gradient_check.loop_cost_and_gradient`): forward solve + cost
≈ 70 / 100 µs (n = 5, Euler / exact), 115 / 160 µs (n = 20), 1.7 / 2.8 ms (n = 100); adjoint
solve + gradient on top of it ≈ 70 / 110 µs, 135 / 230 µs, 2 / 4.5 ms.  The loop reference
takes ≈ 6 / 7.5 ms per cost and 18 / 25 ms per cost and gradient at n = 5 and 20.  Figures per
CG iteration and against the loop in ``scripts/bench_adjoint.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.errors import InvalidTypeError
from fmu_surrogate.identify.linear.model.discretisation import _Forward
from fmu_surrogate.identify.linear.model.evaluation import (
    _check_gradient,
    _finish,
    _Prepared,
    _State,
)
from fmu_surrogate.identify.linear.model.experiments import (
    NO_REGULARIZATION,
    PARAMS,
    Experiment,
    GradientKind,
    Mode,
    Regularization,
    _as_experiments,
    _check_mode,
    _check_wrt,
)

Array = NDArray[np.float64]


class Evaluator:
    """Cost and gradient for fixed experiments and settings, validated once: the fast path.

    Everything that does not depend on the parameters (step-size groups, quadrature weights,
    shifted and differenced inputs) is computed here once; the methods then take plain arrays
    and check nothing — an optimiser validates its parameters at its boundary and calls these in
    its inner loop.  Results are bitwise those of :func:`cost` / :func:`cost_and_gradient` (same
    code after validation).

    Parameters
    ----------
    experiments : Experiment or sequence of Experiment
    mode : {"exact", "euler"}
    reg : Regularization
    wrt : sequence of str
        Fitted parameters (gradients are returned for these, only these are regularised).
    gradient : {"exact", "paper"}
        As in :func:`cost_and_gradient`.
    n_ports : int, optional
        Number of ports m of the model (default: that of the first experiment).

    Notes
    -----
    The arrays passed to :meth:`forward` must be float64 with shapes ``J, R, Q`` (n, n),
    ``B`` (n, m), ``x0`` (n,) and finite; they are referenced, not copied, by the returned
    state.  Floating-point warnings are not suppressed here (wrap the optimisation in
    ``np.errstate``); an overflowing simulation gives cost ``inf`` and a NaN gradient.
    """

    def __init__(
        self,
        experiments: Experiment | Sequence[Experiment],
        mode: Mode = "exact",
        reg: Regularization = NO_REGULARIZATION,
        wrt: Sequence[str] = PARAMS,
        gradient: GradientKind = "exact",
        n_ports: int | None = None,
    ) -> None:
        exps, self.wrt = evaluator_settings(experiments, mode, reg, wrt, gradient, n_ports)
        self.mode = mode
        self.reg = reg
        self.gradient_kind = gradient
        self._reg_active = reg.lam > 0 or (reg.log_q > 0 and "Q" in self.wrt)
        self._prep = _Prepared(exps, mode)

    @property
    def experiments(self) -> list[Experiment]:
        """The experiments (validated)."""
        return self._prep.exps

    def forward(self, J: Array, R: Array, Q: Array, B: Array, x0: Array) -> _State:
        """Solve the state equation for all experiments; returns an opaque state."""
        return self._prep.forward(J, R, Q, B, x0)

    def cost(self, state: _State) -> float:
        """Cost at a :meth:`forward` state (``inf`` if the simulation overflowed)."""
        if self._reg_active:
            return _finish(self._prep, state, self.reg, self.wrt, False, self.gradient_kind)[0]
        c = state.misfit  # what _finish returns without regularisation
        return c if math.isfinite(c) else math.inf

    def cost_and_gradient(self, state: _State) -> tuple[float, dict[str, Array]]:
        """Cost and the gradients w.r.t. ``wrt`` at a :meth:`forward` state (adjoint solve)."""
        return _finish(self._prep, state, self.reg, self.wrt, True, self.gradient_kind)

    def residual_gradient(self, state: _State, residuals: Sequence[Array]) -> dict[str, Array]:
        """``Σ_e Σ_k w_k (∂y_k/∂p)ᵀ z_k`` for given "residuals" ``z`` (one (K, m) array each).

        The data-misfit gradient with the residuals replaced by ``z`` (no regularisation): with
        ``z = ∂y·v`` (a forward sensitivity) this is the Gauss–Newton product ``JᵀWJ v`` of
        :mod:`fmu_surrogate.identify.linear.optim.lm`.  One adjoint solve.
        """
        st = _State()
        for k in _State.__slots__:
            setattr(st, k, getattr(state, k))
        st.fwds = [
            _Forward(f.X, z, f.w, f.h, f.Phi, f.idx, f.uniform, 0.0, f.powers)
            for f, z in zip(state.fwds, residuals)
        ]
        st.misfit = 0.0
        return _finish(self._prep, st, NO_REGULARIZATION, self.wrt, True, self.gradient_kind)[1]

    @property
    def prepared(self) -> _Prepared:
        """Per-experiment arrays that do not depend on the parameters (weights, held inputs)."""
        return self._prep


def evaluator_settings(
    experiments: Experiment | Sequence[Experiment],
    mode: str,
    reg: Regularization,
    wrt: Sequence[str],
    gradient: str,
    n_ports: int | None,
) -> tuple[list[Experiment], tuple[str, ...]]:
    """Validate the settings shared by :class:`Evaluator` and its loop reference.

    Returns the validated experiments and ``wrt``; raises with a message naming the fix.
    """
    _check_mode(mode)
    wrt_checked = _check_wrt(wrt)
    _check_gradient(gradient, mode)
    if not isinstance(reg, Regularization):
        raise InvalidTypeError(f"reg must be a Regularization, got {type(reg).__name__}.")
    exps = [experiments] if isinstance(experiments, Experiment) else list(experiments)
    if n_ports is None:
        n_ports = exps[0].n_ports if exps and isinstance(exps[0], Experiment) else 1
    return _as_experiments(exps, int(n_ports)), wrt_checked
