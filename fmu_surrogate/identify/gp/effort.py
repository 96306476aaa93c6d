"""Gaussian-process identification of the effort of a pH-DAE (docs/design.md §3, Zaspel & Günther).

Given the constant structure ``E, J, R, B`` and samples ``(x, ẋ, u)``, the targets

    y = E ẋ − B u = (J − R) z(x) = T z(x)

are regressed with a multi-task GP on ``f = T z`` whose kernel is the linearly transformed
``k(x, x') T K_T Tᵀ`` (paper eq. 7), and the effort follows by *direct* conditioning,
``z̄(X*) = (k(X*, X) ⊗ K_T Tᵀ) [k(X, X) ⊗ T K_T Tᵀ + I ⊗ Σ]⁻¹ vec(Y)`` — which equals the paper's
two-step route (predict ``f̄`` at ``X*``, then ``T⁻¹ f̄``) whenever ``T`` is regular, and is still
defined when it is not.  The Kronecker structure of the training covariance is exploited
(:mod:`fmu_surrogate.identify.gp.kronecker`): one likelihood evaluation with gradient costs
O(N³ + D³), not O((ND)³).

Modules: :mod:`.samples` (targets, checked arrays, dataset samples), :mod:`.structure` (the known
structure and components), :mod:`.standardise` (units), :mod:`.models` (the torch GP),
:mod:`.training` (Adam on the marginal likelihood), this one (the estimator).

With ``hamiltonian=True`` the differential efforts are modelled as the gradient of a scalar GP
``H`` instead (:mod:`fmu_surrogate.identify.gp.hamiltonian`), so the surrogate satisfies the
compatibility condition ``Eᵀ z = ∇H`` by construction and has an explicit Hamiltonian.

Choices (documented because they matter):

* **Length scales: ARD by default** (one per state).  States of a pH-DAE carry different units
  (charges, voltages, currents; positions, momenta, multipliers) and ranges, so one shared scale
  is a compromise the data cannot undo; ARD costs ``n − 1`` extra hyperparameters.  ``ard=False``
  gives the paper's single, isotropic scale (then all states share one standardisation factor).
* **Standardisation.**  Internally the states are scaled to unit standard deviation per
  dimension and the targets by their overall RMS; all learned attributes are reported in the
  original units, the map is exact (:mod:`~fmu_surrogate.identify.gp.standardise`).
* **Singular T and noise** (:mod:`~fmu_surrogate.identify.gp.models`): nothing inverts ``T``;
  noise per target component (``noise="task"``) or shared, bounded below by ``noise_floor``.
* **Optimiser.**  Adam on log-parameters (lr 0.1, 200 steps, as the paper); the hyperparameters
  with the best marginal likelihood seen are kept (Adam's last iterate can be slightly worse).
* **Known efforts** (``known_effort``, :mod:`~fmu_surrogate.identify.gp.structure`): what is
  known of the effort is stated as explicit polynomials and the GP learns the rest,
  ``z = z_known + P_L z_GP``.  The surrogate's effort is a
  :class:`~fmu_surrogate.ph.PartlyKnownEffort` (``KernelEffort`` + polynomial, storable in
  surrogate files); its ``KernelEffort`` is the learned part, unchanged in form.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.identify.base import FitResult, PHEstimator
from fmu_surrogate.identify.gp.models import DTYPES, check_settings, effort_model
from fmu_surrogate.identify.gp.samples import check_samples, dataset_samples
from fmu_surrogate.identify.gp.standardise import (
    initial_lengthscale,
    kernel_effort,
    learned_attributes,
    scales_of,
)
from fmu_surrogate.identify.gp.structure import effort_problem, with_outputs
from fmu_surrogate.identify.gp.training import maximise_mll
from fmu_surrogate.ph import PHDAE
from fmu_surrogate.ph.efforts.kernel import KernelEffort
from fmu_surrogate.ph.efforts.known import PartlyKnownEffort

Array = NDArray[np.float64]

__all__ = ["GPEffortFit", "GPEffortIdentifier"]


@dataclass(frozen=True)
class GPEffortFit(FitResult):
    """What :meth:`GPEffortIdentifier.fit` did.

    ``cost_history`` is the negative log marginal likelihood (original units) at each Adam step;
    ``n_iter`` the steps taken.

    Parameters
    ----------
    log_marginal_likelihood : float
        At the returned hyperparameters (the best seen), original units.
    """

    log_marginal_likelihood: float = float("nan")


class GPEffortIdentifier(PHEstimator):
    """Identify the effort ``z(x)`` of ``E ẋ = (J − R) z(x) + B u`` with a transformed multi-task GP.

    Parameters
    ----------
    E : array_like, shape (n, n), optional
        Descriptor matrix (default: the identity, an ODE).
    J, R : array_like, shape (n, n)
        Structure (skew) and dissipation (symmetric PSD) matrices; validated in :meth:`fit`
        (a :class:`~fmu_surrogate.ph.StructureError` names any violation).
    B : array_like, shape (n, m) or (n,)
        Port matrix.
    hamiltonian : bool
        Model the differential efforts as ``E_dd^{-T} ∇H`` of a scalar GP ``H(x_d)`` (exact
        compatibility ``Eᵀz = ∇H``, explicit Hamiltonian); see
        :mod:`fmu_surrogate.identify.gp.hamiltonian` for what this can and cannot represent.
    differential : array_like of bool, shape (n,), optional
        Which states are differential (the variables of ``H``).  Default: the states whose row
        or column of ``E`` is nonzero.  Only used with ``hamiltonian=True``.
    max_iter, lr : int, float
        Adam iterations and learning rate for the log marginal likelihood (paper: 200, 0.1).
    dtype : {"float64", "float32"}
    task_rank : int, optional
        Rank of the low-rank part of ``K_T = F Fᵀ + diag(d)``; default ``n`` (a general PD
        ``K_T``; rank 1 is the paper's choice, but then components with different shapes, such as
        the RC network's ``√(2x1)`` and ``x2``, must share one latent function).
    noise : {"task", "shared"}
        One noise variance per target component or one for all.
    init_lengthscale : float or array_like (n,), optional
        Initial length scale(s) in state units; default: the per-dimension standard deviation.
    seed : int
        Seed of the random initial task factor.
    progress : bool
        Show a tqdm progress bar over the Adam steps.
    ard : bool
        One length scale per state (default) or a single shared one (the paper's kernel).
    mean : {"zero", "constant"}
        Prior mean of ``z``: zero (the paper) or a learned constant vector.
    noise_floor : float
        Lower bound of each noise variance relative to the mean square of the targets.
    constraint_force : bool
        Only with ``hamiltonian=True``: add a constraint-force term ``E_dd^{-T} Φ(x_d) x_a``
        linear in the algebraic states (mechanical DAEs such as the pendulum, whose ``z_q``
        contains ``−(∂g/∂q)ᵀ λ``).  The surrogate then satisfies ``Eᵀz = ∇H + Φ x_a`` instead of
        ``Eᵀz = ∇H`` (see :mod:`fmu_surrogate.identify.gp.hamiltonian`).
    hamiltonian_scales : int
        Only with ``hamiltonian=True``: number of Gaussian components (length scales) in the
        kernel of ``H`` (default 2, a short and a long one; see the module doc of
        :mod:`~fmu_surrogate.identify.gp.hamiltonian`).
    known_effort : mapping or PolynomialEffort, optional
        Known parts of the effort (module doc): ``{component: "identity" | [(coefficient,
        {state: exponent, …}), …]}`` (see :meth:`PolynomialEffort.from_terms
        <fmu_surrogate.ph.PolynomialEffort.from_terms>`) or a ``PolynomialEffort``.  They are
        subtracted from the targets before the fit and added to the surrogate's effort.
    learned : array_like of int or bool, optional
        Effort components the GP models (indices or an n-mask).  Default: those without a known
        part, plus every differential component when ``hamiltonian=True`` (which needs them all).

    Attributes
    ----------
    X_train_ : ndarray (N, n)
        Training states.
    y_train_ : ndarray (N, n) or (N, n + m)
        Training targets ``E ẋ − B u`` (and the outputs ``y`` if given).
    lengthscale_ : ndarray (n,)
        Length scales of the effort kernel (state units; all equal if ``ard=False``).
    task_covariance_ : ndarray (n, n)
        ``K_T`` in the effort's units (for ``hamiltonian=True``: the algebraic block only, zero
        elsewhere).
    task_factor_, task_diag_ : ndarray (n, r), (n,)
        ``K_T = task_factor_ task_factor_ᵀ + diag(task_diag_)`` (GPyTorch IndexKernel's
        ``covar_factor`` and ``var``); plain variant only.
    noise_ : ndarray (n,)
        Noise variance per target component (target units²).
    mean_ : ndarray (n,)
        Prior mean of ``z``.
    weights_ : ndarray (N, n)
        ``W`` of the effort expansion ``z̄(x) = mean_ + Σᵢ k(x, xᵢ) Wᵢ`` (plain variant; the
        differential columns are zero for ``hamiltonian=True``, see ``surrogate_.effort``).
    log_marginal_likelihood_ : float
        At the returned hyperparameters, in the original units.
    known_effort_ : PolynomialEffort or None
        The known part (``None`` without ``known_effort``).
    learned_ : ndarray of bool (n,)
        The components the GP models.
    loss_history_ : ndarray (max_iter,)
        Negative log marginal likelihood at each Adam step (original units).
    result_ : GPEffortFit
        Iterations, stopping reason, cost history and seconds of the fit.
    surrogate_ : PHDAE
        The identified system (same as :meth:`to_surrogate`).
    n_features_in_ : int
        n.

    Examples
    --------
    The RC network's effort from 40 exact samples (docs/design.md §3):

    >>> import numpy as np
    >>> from fmu_surrogate.benchmarks import rc_network
    >>> m = rc_network.matrices()
    >>> x1 = np.linspace(0.5, 2.0, 40)
    >>> u = 1.0 + np.sin(3 * x1)
    >>> x = np.column_stack([x1, u, u - np.sqrt(2 * x1)])     # x2 = u, x3 = u − √(2 x1)
    >>> xdot = np.column_stack([x[:, 2], 0 * x1, 0 * x1])     # ẋ1 = x3; x2, x3 algebraic
    >>> gp = GPEffortIdentifier(**m, max_iter=100).fit(x, xdot, u)
    >>> err = np.abs(gp.predict(x) - rc_network.effort(x)).max()
    >>> bool(err < 1e-3)  # measured 4.4e-4
    True
    """

    _fitted_attribute = "_post"  # the posterior; set before the surrogate is assembled

    def __init__(
        self,
        *,
        E: ArrayLike | None = None,
        J: ArrayLike | None = None,
        R: ArrayLike | None = None,
        B: ArrayLike | None = None,
        hamiltonian: bool = False,
        differential: ArrayLike | None = None,
        max_iter: int = 200,
        lr: float = 0.1,
        dtype: str = "float64",
        task_rank: int | None = None,
        noise: str = "task",
        init_lengthscale: float | ArrayLike | None = None,
        seed: int = 0,
        progress: bool = False,
        ard: bool = True,
        mean: str = "zero",
        noise_floor: float = 1e-10,
        constraint_force: bool = False,
        hamiltonian_scales: int = 2,
        known_effort: Any = None,
        learned: ArrayLike | None = None,
    ) -> None:
        self.E = E
        self.J = J
        self.R = R
        self.B = B
        self.hamiltonian = hamiltonian
        self.differential = differential
        self.max_iter = max_iter
        self.lr = lr
        self.dtype = dtype
        self.task_rank = task_rank
        self.noise = noise
        self.init_lengthscale = init_lengthscale
        self.seed = seed
        self.progress = progress
        self.ard = ard
        self.mean = mean
        self.noise_floor = noise_floor
        self.constraint_force = constraint_force
        self.hamiltonian_scales = hamiltonian_scales
        self.known_effort = known_effort
        self.learned = learned

    def _structure(self) -> None:
        """Validate E, J, R, B (PHDAE raises StructureError) and set ``T`` and the split."""
        p = effort_problem(self.E, self.J, self.R, self.B, task_rank=self.task_rank,
                           differential=self.differential, known_effort=self.known_effort,
                           learned=self.learned, hamiltonian=self.hamiltonian)
        self._problem = p
        self._E, self._J, self._R, self._B, self._T = p.E, p.J, p.R, p.B, p.T
        self._diff, self._known, self._learned = p.differential, p.known, p.learned

    def fit(self, x: ArrayLike, xdot: ArrayLike, u: ArrayLike,
            y: ArrayLike | None = None) -> GPEffortIdentifier:
        """Fit to samples of the state, its derivative and the input (and the output).

        Parameters
        ----------
        x : array_like, shape (N, n)
        xdot : array_like, shape (N, n)
            ``ẋ`` at the same samples (only ``E ẋ`` is used: algebraic entries may be anything finite).
        u : array_like, shape (N, m) or (N,)
        y : array_like, shape (N, m) or (N,), optional
            Collocated outputs ``y = Bᵀ z(x)`` (plain variant): observed too, they carry the effort
            where ``J − R`` hides it (:func:`~fmu_surrogate.identify.gp.structure.with_outputs`).

        Returns
        -------
        self : GPEffortIdentifier
            The fitted estimator.
        """
        t_start = time.perf_counter()
        check_settings(dtype=self.dtype, noise=self.noise, mean=self.mean,
                       max_iter=self.max_iter, lr=self.lr, noise_floor=self.noise_floor)
        self._structure()
        X, Y = check_samples(x, xdot, u, self._E, self._B)
        problem = self._problem
        if y is not None:
            Y, problem = with_outputs(problem, Y, y, hamiltonian=self.hamiltonian)
        Yfit = Y if self._known is None else Y - self._known(X) @ problem.T.T
        tdtype = DTYPES[self.dtype]
        N, n = X.shape
        sc = scales_of(X, Yfit, self.ard)  # standardise (exactly undone below)
        mu, sd, ys = sc
        Xs = torch.as_tensor((X - mu) / sd, dtype=tdtype)
        Ys = torch.as_tensor(Yfit / ys, dtype=tdtype)
        ls0 = initial_lengthscale(self.init_lengthscale, sc, self.ard)
        self._scales = sc
        self.X_train_ = X
        self.y_train_ = Y
        self.n_features_in_ = n
        self.known_effort_ = self._known
        self.learned_ = self._learned.copy()
        model = effort_model(
            problem, sc, ls0, hamiltonian=self.hamiltonian, ard=self.ard,
            task_rank=self.task_rank, noise=self.noise, mean=self.mean,
            noise_floor=self.noise_floor, seed=self.seed, dtype=tdtype,
            constraint_force=self.constraint_force, hamiltonian_scales=self.hamiltonian_scales,
        )
        hist = maximise_mll(model, Xs, Ys, int(self.max_iter), float(self.lr), bool(self.progress))
        const = N * n * math.log(ys)  # log p_raw = log p_std − N D log(ys)
        self.loss_history_ = hist["loss"] + const
        self.log_marginal_likelihood_ = float(hist["best"] - const)
        self.model_ = model
        self._post = model.posterior(Xs, Ys)
        if y is not None:  # report the targets J − R z, not the observed outputs
            self._post.T_target = self._T
        diff = self._diff if self.hamiltonian else None
        for name, value in learned_attributes(self._post, model, sc, self._learned, diff).items():
            setattr(self, name, value)
        self.surrogate_ = self._surrogate()
        self.result_ = GPEffortFit(
            n_iter=hist["steps"],
            stopping_reason=hist["reason"],
            cost_history=self.loss_history_,
            time=time.perf_counter() - t_start,
            log_marginal_likelihood=self.log_marginal_likelihood_,
        )
        return self

    def fit_dataset(
        self,
        ds: Any,
        *,
        states: Sequence[str],
        derivatives: Sequence[str | None],
        inputs: Sequence[str],
        runs: Sequence[int] | None = None,
    ) -> GPEffortIdentifier:
        """Fit on a harvested dataset (:mod:`fmu_surrogate.fmu.dataset`).

        Parameters
        ----------
        ds : xarray.Dataset
            Harvested dataset.
        states, derivatives, inputs : sequence of str
            Variable names of ``x`` (in the order of the rows of ``E, J, R, B``), of ``ẋ`` (same
            order; ``None`` for an algebraic state whose derivative the FMU does not expose —
            only ``E ẋ`` enters the targets) and of ``u`` (order of the columns of ``B``).
        runs : sequence of int, optional
            Run labels to use (values of the dataset's ``run`` coordinate); default all
            successful runs.  Samples of all selected runs are pooled.

        Returns
        -------
        self : GPEffortIdentifier
            The fitted estimator.
        """
        x, xdot, u = dataset_samples(ds, self.E, states=states, derivatives=derivatives,
                                     inputs=inputs, runs=runs)
        return self.fit(x, xdot, u)

    def _points(self, x: ArrayLike) -> tuple[Array, bool]:
        self._check_fitted()
        n = self.n_features_in_
        a = np.asarray(x, dtype=float)
        single = a.ndim == 1
        a = np.atleast_2d(a)
        if a.ndim != 2 or a.shape[1] != n:
            raise InvalidInputError(f"x must have shape (M, {n}) or ({n},), got {np.shape(x)}.")
        if not np.all(np.isfinite(a)):
            raise InvalidInputError("x contains NaN/Inf; evaluate at finite states only.")
        mu, sd, _ = self._scales
        return (a - mu) / sd, single

    def _predict(self, x, return_cov, mean_fn, cov_fn, known_map=None):
        xs, single = self._points(x)
        _, _, ys = self._scales
        m = mean_fn(xs) * ys
        if self._known is not None:  # the known part is exact: it adds to the mean only
            k = self._known(np.atleast_2d(np.asarray(x, dtype=float)))
            m = m + (k if known_map is None else k @ known_map.T)
        if not return_cov:
            return m[0] if single else m
        full = return_cov == "full"
        c = cov_fn(xs, full=full) * ys**2
        if single and not full:
            return m[0], c[0]
        return (m[0] if single else m), c

    def effort(self, x: ArrayLike, return_cov: bool | str = False):
        """Posterior mean of the effort ``z`` at states ``x``.

        Parameters
        ----------
        x : array_like, shape (M, n) or (n,)
        return_cov : bool or "full"
            Also return the posterior covariance: ``True`` gives one ``(n, n)`` block per point,
            shape ``(M, n, n)``; ``"full"`` gives the joint ``(M n, M n)`` matrix ordered
            point-major (``[m·n + j]`` is component ``j`` at point ``m``).

        Returns
        -------
        mean : ndarray (M, n)
        cov : ndarray, only if ``return_cov``
        """
        self._check_fitted()
        p = self._post
        return self._predict(x, return_cov, p.effort_mean, p.effort_cov)

    def predict(self, x: ArrayLike, return_cov: bool | str = False):
        """Posterior mean of the effort at ``x`` (the learned function; same as :meth:`effort`).

        Parameters
        ----------
        x : array_like, shape (M, n) or (n,)
        return_cov : bool or "full"
            See :meth:`effort`.
        """
        return self.effort(x, return_cov)

    def score(self, x: ArrayLike, xdot: ArrayLike, u: ArrayLike) -> float:
        """Coefficient of determination R² of the targets ``E ẋ − B u`` on held-out samples.

        Parameters
        ----------
        x, xdot : array_like, shape (M, n)
            States and their derivatives.
        u : array_like, shape (M, m) or (M,)
            Inputs.

        Returns
        -------
        float
            ``1 − ‖Y − T z̄(x)‖² / ‖Y − mean(Y)‖²`` over all components (1 is perfect).
        """
        self._check_fitted()
        X, Y = check_samples(x, xdot, u, self._E, self._B)
        F = self.predict_targets(X)
        den = float(np.sum((Y - Y.mean(0)) ** 2))
        return 1.0 - float(np.sum((Y - F) ** 2)) / (den if den > 0 else 1.0)

    def predict_targets(self, x: ArrayLike, return_cov: bool | str = False):
        """Posterior mean of the noise-free targets ``f = (J − R) z`` at ``x``.

        Parameters
        ----------
        x : array_like, shape (M, n) or (n,)
            States.
        return_cov : bool or "full"
            Also return the posterior covariance, as in :meth:`effort`.

        Returns
        -------
        mean : ndarray, shape (M, n)
            ``f̄(x)``.
        cov : ndarray
            Only if ``return_cov``.
        """
        self._check_fitted()
        p = self._post
        return self._predict(x, return_cov, p.target_mean, p.target_cov, self._T)

    def kernel_effort(self) -> KernelEffort:
        """The posterior-mean effort as an explicit :class:`KernelEffort` (original units).

        With ``known_effort`` this is the learned part only; the surrogate's effort adds
        ``known_effort_`` to it (:meth:`to_surrogate`).

        The model works in standardised units; the expansion is mapped back exactly
        (:func:`~fmu_surrogate.identify.gp.standardise.kernel_effort`).
        """
        self._check_fitted()
        diff = self._diff if self.hamiltonian else None
        return kernel_effort(self._post, self.X_train_, self._scales, diff, self._E)

    def to_surrogate(self) -> PHDAE:
        """The identified pH-DAE: ``PHDAE(E, J, R, B, effort, hamiltonian=H̄ or None)``.

        The effort is the :meth:`kernel_effort`, or with ``known_effort`` a
        :class:`~fmu_surrogate.ph.PartlyKnownEffort` (kernel expansion + known polynomial).

        Returns
        -------
        PHDAE
            A new system object on every call.
        """
        self._check_fitted()
        return self._surrogate()

    def _surrogate(self) -> PHDAE:
        ke = self.kernel_effort()
        eff = ke if self._known is None else PartlyKnownEffort(ke, self._known)
        return PHDAE(
            self._E,
            self._J,
            self._R,
            self._B,
            effort=eff,
            hamiltonian=eff.hamiltonian if ke.has_hamiltonian else None,
        )

