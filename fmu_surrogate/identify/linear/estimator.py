"""Structure-preserving identification of linear port-Hamiltonian systems (docs/design.md §4).

:class:`LinearPHIdentifier` fits any subset of ``w = (J, R, Q, B, x0)`` of

    ẋ = (J − R) Q x + B u,     y = Bᵀ Q x,      J = −Jᵀ,  R = Rᵀ ⪰ 0,  Q ≻ 0

to input/output data.  The default is the method of choice for a sum-of-squares cost with an
ill-conditioned Jacobian: a **subspace initial model** (PO-MOESP, converted to pH form through
the KYP Riccati equation; :mod:`~fmu_surrogate.identify.linear.init.initial`) refined by **Riemannian
Levenberg–Marquardt** with forward sensitivities of the exact discretisation
(:mod:`~fmu_surrogate.identify.linear.optim.lm`).  The paper's set-up (Günther, Jacob & Totzeck:
:func:`paper_initial_guess`, Riemannian CG with Armijo steps) stays available as ``init="paper",
optimizer="cg"``, as do steepest descent and trust regions (:mod:`.optim.first_order`).

The pieces, one job per module: ``model/`` (data, discretisation, adjoint gradients,
sensitivities, the manifold; ``model/ported.py`` the drop-in model with feedthrough), ``init/``
(subspace, KYP, order, orientation), ``optim/``, :mod:`~fmu_surrogate.identify.linear.prepare`
(order, orientation, x0, offsets from the data), :mod:`~fmu_surrogate.identify.linear.report`.

Discretisations (``mode``): ``"euler"``, the paper's explicit Euler scheme (reproduction);
``"exact"``, the exact discretisation with the input held between samples as the data say —
piecewise linear for arrays, zero-order hold for a co-simulation FMU's harvest.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidTypeError
from fmu_surrogate.identify.base import PHEstimator
from fmu_surrogate.identify.linear.data import (
    _to_experiments,
    paper_initial_guess,
)
from fmu_surrogate.identify.linear.model.experiments import Regularization
from fmu_surrogate.identify.linear.model.manifold import (
    PARAMETER_NAMES,
    R_EIGEN_FLOOR,
    Objective,
    psd_factor,
)
from fmu_surrogate.identify.linear.optim.base import Optimizer
from fmu_surrogate.identify.linear.predict import LinearPHPredictions
from fmu_surrogate.identify.linear.report import LinearPHFit
from fmu_surrogate.identify.linear.settings import (
    BLAS_THREADS,
    as_matrix,
    check_settings,
    initial_values,
    optimizer_from_settings,
)
from fmu_surrogate.ph import LinearPH

Array = NDArray[np.float64]


__all__ = ["PARAMETER_NAMES", "LinearPHFit", "LinearPHIdentifier", "paper_initial_guess"]


def _adjoint():
    from fmu_surrogate.identify.linear.model import adjoint

    return adjoint


# ------------------------------------------------------------------------------- estimator
class LinearPHIdentifier(LinearPHPredictions, PHEstimator):
    """Fit a linear pH system ``ẋ = (J − R) Q x + B u, y = Bᵀ Q x`` to input/output data.

    Parameters
    ----------
    order : int, optional
        Model order n (≥ 1); may differ from the true order (model reduction).  ``None``
        (default): chosen from the data — Hankel singular values bound the candidates, the
        held-out error chooses (:mod:`~fmu_surrogate.identify.linear.init.order`; the table is
        ``result_.order_selection``).  When the
        subspace method finds that the data determine only r < n states (singular values at
        round-off), the refinement fits those r and the model is completed by n − r decoupled,
        damped states without input (:func:`~fmu_surrogate.identify.linear.init.initial.pad_parameters`;
        they do not change the output).
    ports : None, "auto", str, sequence or mapping
        Orientation of the power pairs ``(u_i, y_i)``: ``"in"`` (``y_iu_i`` is the power the
        component receives, the pH convention) or ``"out"`` (it delivers it; the pH port is
        ``−u_i``), one for all pairs, a sequence with one entry per pair (``None`` entries
        detected), or ``{pair index: orientation}``.  ``None`` (default): detected from the
        data (:mod:`~fmu_surrogate.identify.linear.ports`); ``port_signs_`` holds the result.
        :meth:`fit_dataset` also takes pairs ``[{"u": …, "y": …, "power": …}, …]``; there
        ``None`` pairs by the declared units (``"auto"``: and refuses data without units).
    feedthrough : bool or "auto"
        Learn a feedthrough ``P, S, N`` (``y = (G + P)ᵀ Q x + (S − N) u``, ``W = [[R, P], [Pᵀ, S]]
        ⪰ 0`` by construction; :mod:`~fmu_surrogate.identify.linear.ported_fit`).  ``"auto"``
        (default): when the data show one and ``learn`` is the default; order 0 (a static
        passive map) always has one.
    offsets : bool or "auto"
        Learn constant offsets (preload, gravity) as a pH port driven by a constant source;
        ``"auto"`` (default): see :func:`~fmu_surrogate.identify.linear.prepare.try_offsets`.
    initial : {"auto", "state", "equilibrium"}
        Where every run starts: at ``x0`` (``"state"``), or at the equilibrium of its first
        inputs (``"equilibrium"``: a model initialised in steady state; drop-in model with a
        constant source); ``"auto"`` (default): :mod:`~fmu_surrogate.identify.linear.steady_start`.
    delayed_feedthrough : bool
        :meth:`fit_dataset` only: the outputs see the inputs of the step before (``y_k = C x_k
        + D u_{k−1}``: computed at the end of ``doStep``).
    learn : sequence of str, optional
        Parameters to learn, any non-empty subset of ``("J", "R", "Q", "B", "x0")``.  ``None``
        (default): ``J, R, B``, and ``x0`` when the data do not start at rest
        (:func:`~fmu_surrogate.identify.linear.prepare.starts_at_rest`).
    J, R, Q, B, x0 : array_like, optional
        Known values: a parameter not in ``learn`` is held fixed at its value (bitwise; validated:
        J skew, R symmetric PSD, Q SPD — :class:`~fmu_surrogate.ph.StructureError` otherwise), a
        learned one starts there (then ``init`` does not apply to it).  Default: from ``init``.
    rank_R : int, optional
        Fixed rank k of R (``R = YYᵀ``, ``Y ∈ ℝ^{n×k}`` on pymanopt's ``PSDFixedRank``);
        ``None``: full n × n factor on the total space (see module docstring).
    mode : {"exact", "euler"}
        Discretisation of state, adjoint and cost.
    reg_lambda : float
        Weight λ of ``(λ/2)‖w − w_ref‖²`` (needs ``reference``).
    reference : dict, optional
        Reference values ``w_ref`` (any subset of the parameter names).
    log_q : float
        Weight of the ``½‖log Q‖²_F`` regulariser (the paper's λ = 0.001 when Q is fitted).
    init : {"subspace", "paper"}
        Initial model.  ``"subspace"`` (default): PO-MOESP subspace identification converted to
        pH form (:mod:`~fmu_surrogate.identify.linear.init.initial`; needs uniformly sampled data and
        J, R, B learned without given values, else the paper's guess is used and
        ``result_.init`` says so).  ``"paper"``: :func:`paper_initial_guess`.
    optimizer : {"lm", "cg", "steepest", "trust_regions", "pymanopt_cg"} or optimizer object
        ``"lm"`` (default): Riemannian Levenberg–Marquardt (:mod:`~fmu_surrogate.identify.linear.optim.lm`).
        ``"cg"``: :class:`~fmu_surrogate.identify.linear.optim.rcg.RestartedConjugateGradient` (the paper's
        Algorithm 1); ``"steepest"``: pymanopt steepest descent with the same line search;
        ``"trust_regions"``: pymanopt trust regions with a finite-difference Hessian (one extra
        gradient per Hessian-vector product); ``"pymanopt_cg"``: pymanopt's CG (no periodic
        restart).  A string takes the settings ``max_iter``, ``tol``, ``max_time`` (and, for the
        first-order methods, ``line_search``, ``initial_step``, ``restart_every``,
        ``beta_rule``) of the identifier; an object carries its own and those are not used:
        :class:`~fmu_surrogate.identify.linear.optim.lm.LM`,
        :class:`~fmu_surrogate.identify.linear.optim.first_order.CG`, ``SteepestDescent``,
        ``TrustRegions``, ``PymanoptCG`` (e.g. ``optimizer=LM(max_iter=50, dense=False)``).
    max_iter : int
        Iteration budget (the paper: 100; Levenberg–Marquardt usually stops far earlier).
    line_search : {"armijo", "backtracking"}
        ``"armijo"``: fixed first trial ``initial_step`` (paper); ``"backtracking"``: pymanopt's
        ``BackTrackingLineSearcher`` (first trial of length ``initial_step``, then warm-started).
    initial_step : float
        First Armijo trial (paper: 1000).
    restart_every : int or None
        CG restart period (paper: 5).
    beta_rule : str
        CG coefficient, see :data:`fmu_surrogate.identify.linear.optim.rcg.BETA_RULE_NAMES`.
    tol : float
        Stop when the Riemannian gradient norm falls below ``tol``.
    input_hold : {"linear", "zoh"}, optional
        Input between samples for array data (exact mode): ``"linear"`` (default for arrays) or
        zero-order hold.  :meth:`fit_dataset` takes it from the dataset unless set here.
    subspace_horizon : int, optional
        Block rows of the subspace method's Hankel matrices (default: from the order).
    complete : {"auto", "pad", "refine"}
        When the subspace step finds only r < n states in the data: ``"pad"`` refines those r
        and adds decoupled damped states; ``"refine"`` then refines all n states, the added
        ones weakly coupled; ``"auto"`` refines when the data's noise limited r (measured: the
        median max error on the paper's n = 5 problem at σ = 0.01 halved); when round-off did
        (exact data) it refines r + 1, r + 2, … states kept while each lowers the cost 4×
        (:mod:`~fmu_surrogate.identify.linear.init.grow`; optimizer ``"lm"``), and pads the rest.
        Needs Q learned or fixed to a multiple of the identity.
    max_time : float, optional
        Wall-time budget in seconds.
    seed : int
        Seed of the random parts of the default initial guess (J).
    progress : bool
        Show a tqdm progress bar.

    Attributes
    ----------
    system_ : LinearPH
        Fitted system.
    x0_, initial_, result_ : ndarray, shape (n,), str, and LinearPHFit
        ``start_rule_open_`` (bool): every run starts from the same inputs, so ``"auto"``
        could not tell a start in steady state from one at a fixed state.
    n_inputs_ : int
        Number of ports m seen in :meth:`fit`.
    port_signs_ : ndarray, shape (m,)
        +1 for a power pair oriented "in", −1 for "out" (given or detected).
    order_selection_ : OrderSelection or None
        The candidate orders and the choice (``order=None``).
    hold_ : str
        Input hold of the (first) training experiment; :meth:`predict` uses it by default.
    subspace_, pairing_ : SubspaceInit or None, Pairing or None
        The subspace initial model (``init="subspace"``, for :meth:`plot_order_selection`);
        the power pairs :meth:`fit_dataset` read from the units, with the reasons.
    input_offsets_, inputs_before_, fast_feedthrough_ : ndarray or None
        Inputs with one value in every run of :meth:`fit_dataset`, fitted as deviations from
        it (0 for the others); with a delayed feedthrough, the surrogate's ``inputs_before``
        and ``fast_feedthrough`` (:mod:`~fmu_surrogate.identify.delayed_feedthrough`).

    Notes
    -----
    Measured (``scripts/bench_adjoint.py``): on the paper's n = 5 problem ~1e-9 relative error
    in under a second, where its Algorithm 1 (``init="paper", optimizer="cg"``) ends at ~1e-2.
    """

    _fitted_attribute = "system_"

    def __init__(
        self,
        order: int | None = None,
        *,
        ports: Any = None,
        feedthrough: bool | str = "auto",
        offsets: bool | str = "auto",
        initial: str = "auto",
        delayed_feedthrough: bool = False,
        learn: Sequence[str] | None = None,
        J: ArrayLike | None = None,
        R: ArrayLike | None = None,
        Q: ArrayLike | None = None,
        B: ArrayLike | None = None,
        x0: ArrayLike | None = None,
        rank_R: int | None = None,
        mode: str = "exact",
        reg_lambda: float = 0.0,
        reference: dict[str, ArrayLike] | None = None,
        log_q: float = 0.0,
        optimizer: str | Optimizer = "lm",
        max_iter: int = 100,
        line_search: str = "armijo",
        initial_step: float = 1000.0,
        restart_every: int | None = 5,
        beta_rule: str = "FletcherReeves",
        tol: float = 1e-12,
        max_time: float | None = None,
        seed: int = 0,
        progress: bool = False,
        init: str = "subspace",
        input_hold: str | None = None,
        subspace_horizon: int | None = None,
        complete: str = "auto",
    ) -> None:
        self.order = order
        self.ports = ports
        self.feedthrough = feedthrough
        self.offsets = offsets
        self.initial = initial
        self.delayed_feedthrough = delayed_feedthrough
        self.learn = learn
        self.J = J
        self.R = R
        self.Q = Q
        self.B = B
        self.x0 = x0
        self.rank_R = rank_R
        self.mode = mode
        self.reg_lambda = reg_lambda
        self.reference = reference
        self.log_q = log_q
        self.optimizer = optimizer
        self.max_iter = max_iter
        self.line_search = line_search
        self.initial_step = initial_step
        self.restart_every = restart_every
        self.beta_rule = beta_rule
        self.tol = tol
        self.max_time = max_time
        self.seed = seed
        self.progress = progress
        self.init = init
        self.input_hold = input_hold
        self.subspace_horizon = subspace_horizon
        self.complete = complete

    # -- validation of settings ------------------------------------------------------------
    def _check_settings(self) -> tuple[int, tuple[str, ...]]:
        return check_settings(self)

    _matrix = staticmethod(as_matrix)

    def _values(
        self, n: int, m: int, names: tuple[str, ...], exps: list[Any]
    ) -> tuple[dict[str, Array], dict[str, Array], str]:
        """(fixed values, initial values of the fitted parameters, init used), validated."""
        return initial_values(self, n, m, names, exps)

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, experiments: Any, u: ArrayLike | None = None, y: ArrayLike | None = None, *,
            no_feedthrough_declared: bool = False) -> Any:
        """Fit to one or several experiments.

        Parameters
        ----------
        experiments : Experiment, (t, u, y) tuple, list of those, or the time grid t
            ``t`` of shape (K,) strictly increasing, ``u`` and ``y`` of shape (K, m) (or (K,)
            for m = 1).  Experiments may have different time grids.  ``fit(t, u, y)`` fits one
            experiment.
        u, y : array_like, optional
            Inputs and outputs when the first argument is the time grid.
        no_feedthrough_declared : bool
            The source (an FMU's ``<ModelStructure>``) declares the outputs independent of the
            inputs: ``feedthrough="auto"`` then fits none unless the data need one.

        Returns
        -------
        self
        """
        n, names = self._check_settings()
        self.names_ = None
        self.no_feedthrough_declared_ = bool(no_feedthrough_declared)
        if u is not None or y is not None:
            if u is None or y is None:
                raise InvalidTypeError(
                    "fit(t, u, y) needs both u and y (or pass a list of experiments).")
            experiments = [(experiments, u, y)]
        exps = _to_experiments(experiments, self.input_hold or "linear")
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=BLAS_THREADS, user_api="blas"):
            return self._fit_experiments(exps, n, names)

    def _fit_experiments(self, exps: list[Any], n: int | None, names: tuple[str, ...]) -> Any:
        from fmu_surrogate.identify.linear.prepare import prepare, try_offsets
        from fmu_surrogate.identify.linear.steady_start import try_equilibrium

        self.initial_ = "state"
        raw, (exps, n, names) = exps, prepare(self, exps, n, names, self.no_feedthrough_declared_)
        if self.ported_:
            from fmu_surrogate.identify.linear.ported_fit import fit_chosen_order

            fit_chosen_order(self, [(e.t, np.asarray(e.u), np.asarray(e.y), e.hold)
                                    for e in exps], self.roles_, n, "x0" in names)
        else:
            self._fit_plain(exps, n, names)
        self.result_ = dataclasses.replace(
            self.result_, order_selection=self.order_selection_,
            port_signs=tuple(float(v) for v in self.port_signs_))
        try_offsets(self, raw)
        try_equilibrium(self, [(e.t, np.asarray(e.u), np.asarray(e.y), e.hold) for e in raw])
        return self

    def _fit_plain(self, exps: list[Any], n: int, names: tuple[str, ...]) -> Any:
        self.theta_ = self.layout_ = None
        m = int(np.shape(exps[0].u)[1])
        t0 = time.perf_counter()
        fixed, init, used = self._values(n, m, names, exps)
        sub = self.subspace_
        r = sub.core["J"].shape[0] if sub is not None else n
        Qf = fixed.get("Q", np.eye(n))
        if sub is not None and r < n and self.rank_R is None:
            from fmu_surrogate.identify.linear.init.initial import core_applicable

            if core_applicable(names, Qf):
                # the data determine r < n states: refine those, pad with decoupled states
                init = {p: sub.core[p] for p in names}
                fixed = {p: sub.core[p] for p in PARAMETER_NAMES if p not in names}
                self._fit(exps, r, m, names, fixed, init, used, time.perf_counter() - t0,
                          pad_to=n)
                from fmu_surrogate.identify.linear import noise as noisy

                if noisy.noisy(sub):
                    noisy.second_start(self, exps, r, m, names, fixed, n)
                elif self.complete == "auto" and optimizer_from_settings(self).name == "lm":
                    from fmu_surrogate.identify.linear.init.grow import grow

                    grow(self, exps, r, m, names, n, Qf, used)
                if noisy.refine_all(self, sub):
                    noisy.refine_completed(self, exps, n, m, names, r, used)
                return self
        return self._fit(exps, n, m, names, fixed, init, used, time.perf_counter() - t0)

    def fit_dataset(
        self,
        ds: Any,
        *,
        inputs: Sequence[str] | None = None,
        outputs: Sequence[str] | None = None,
        runs: Iterable[int] | None = None,
    ) -> Any:
        """Fit to the runs of a harvested dataset (:mod:`fmu_surrogate.fmu.dataset`).

        The input hold is the dataset's (``input_interpolation``: zero-order hold for
        co-simulation harvests) unless ``input_hold`` is set.  :meth:`to_surrogate` then returns
        a :class:`~fmu_surrogate.ph.PortedSystem` with the FMU's names, units and signs.

        Parameters
        ----------
        ds : xarray.Dataset
        inputs, outputs : sequence of str, optional
            FMU variable names (default: the dataset's inputs and Real outputs).  Pairs from
            ``ports`` or the units (:mod:`~fmu_surrogate.identify.linear.interface.pairing`): inputs in
            no pair are modulating, outputs in no pair measured.  Without: paired in order.
        runs : iterable of int, optional
            Run labels to use (default: all runs with status ``"ok"``).

        Returns
        -------
        self
        """
        from fmu_surrogate.identify.linear.dataset import fit_dataset

        return fit_dataset(self, ds, inputs, outputs, runs)

    def _fit(
        self,
        exps: list[Any],
        n: int,
        m: int,
        names: tuple[str, ...],
        fixed: dict[str, Array],
        init: dict[str, Array],
        used: str,
        init_time: float,
        pad_to: int | None = None,
        reg: tuple[float, dict[str, Array]] | None = None,
        tol: float | None = None,
    ) -> Any:
        from fmu_surrogate.identify.linear.model.sensitivities import Coordinates
        from fmu_surrogate.identify.linear.optim.first_order import make_manifold

        opt = optimizer_from_settings(self)
        if tol is not None:
            opt = dataclasses.replace(opt, tol=float(tol))
        adj = _adjoint()
        lam, reference = (float(self.reg_lambda), self.reference) if reg is None else reg
        reg = Regularization(
            lam=lam,
            reference={k: np.asarray(v, dtype=float) for k, v in reference.items()}
            if reference
            else None,
            log_q=float(self.log_q),
        )
        k = int(self.rank_R) if self.rank_R else n
        floor = R_EIGEN_FLOOR
        if used == "subspace":
            from fmu_surrogate.identify.linear.init.initial import SUBSPACE_R_FLOOR, factor_rank

            floor = SUBSPACE_R_FLOOR
            if not self.rank_R:
                k = factor_rank(init["R"])
        manifold = make_manifold(n, m, names, self.rank_R, k)
        x_init = [psd_factor(init["R"], k, floor) if p == "R" else init[p] for p in names]
        # validated once here; the optimisation loop calls the unchecked evaluator
        ev = adj.Evaluator(exps, mode=self.mode, reg=reg, wrt=names, n_ports=m)
        obj = Objective(names, fixed, ev)

        bar = None
        stamps: list[tuple[float, float]] = []  # (wall, cpu) seconds at the end of each iteration
        clock0 = [0.0, 0.0]
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=int(opt.max_iter), desc=f"LinearPH fit ({opt.name})",
                       leave=False)

        def callback(it: int, c: float, g: float) -> None:
            stamps.append((time.perf_counter() - clock0[0], time.process_time() - clock0[1]))
            if bar is not None:
                bar.update(1)
                bar.set_postfix(cost=f"{c:.3e}", grad=f"{g:.1e}")

        c0 = clock0[1] = time.process_time()
        t0 = clock0[0] = time.perf_counter()
        try:
            with np.errstate(all="ignore"):  # overflowing trial points have cost inf
                out = opt.run(obj, manifold, Coordinates(names, n, m, k), x_init,
                              callback=callback)
        finally:
            if bar is not None:
                bar.close()
        elapsed = time.perf_counter() - t0
        cpu = time.process_time() - c0

        point, costs, gnorms = out.point, tuple(out.cost_history), tuple(out.gradient_norm_history)
        reason, gnorm, n_iter, sv = (out.stopping_reason, float(out.gradient_norm), int(out.n_iter),
                                     out.singular_values)
        params = obj.params(list(point))
        if pad_to is not None:
            from fmu_surrogate.identify.linear.init.initial import pad_parameters

            params = pad_parameters(params, pad_to)
        J = params["J"]
        if "J" in names and not np.array_equal(J, -J.T):  # pragma: no cover - invariant
            raise AssertionError("internal error: the fitted J lost its exact skew-symmetry.")
        system = LinearPH(J, params["R"], params["Q"], params["B"])
        x0 = np.asarray(params["x0"], dtype=float)
        self.n_inputs_, self.hold_, self.system_, self.x0_ = m, exps[0].hold, system, x0
        self.result_ = LinearPHFit(
            system=system, x0=x0, cost_history=costs, stopping_reason=reason,
            gradient_norm=gnorm, n_iter=n_iter, time=elapsed, cpu_time_s=cpu,
            iteration_time_s=tuple(w for w, _ in stamps),
            iteration_cpu_time_s=tuple(c for _, c in stamps), mode=self.mode, fitted=names,
            optimizer=opt.name, n_cost_evaluations=obj.n_cost, n_gradient_evaluations=obj.n_grad,
            gradient_norm_history=gnorms, init=used, init_time_s=init_time,
            jacobian_singular_values=() if sv is None else tuple(float(v) for v in sv))
        return self
