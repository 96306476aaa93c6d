"""Nonlinear pH surrogates with a latent state from input-output data only.

:class:`NonlinearPHIdentifier` fits a :class:`~fmu_surrogate.ph.NonlinearPH`::

    ẋ = (J − R₀ − R_nl(z)) z + (G − P) u,   y = (G + P)ᵀ z + (S − N) u + S_nl(u) u,   z = ∇H(x)
    H(x) = ½|x|² + Σ_k α_k ψ_k(w_kᵀx),      R_nl(z) = Σ_j β_j ((m_jᵀz)² + δ_j²)^(p_j/2) m_j m_jᵀ

(``S_nl`` a sum of the same power-law terms on the port inputs: a nonlinear dissipative
feedthrough) to the recorded ports of a component (no states needed):

1. a linear pH model is fitted first (:class:`~fmu_surrogate.identify.LinearPHIdentifier`) and
   brought to energy coordinates (``Q = I``, :mod:`.parametrisation`);
2. the nonlinear terms are added with weights and gains exactly zero, so the fit starts from the
   linear model's error;
3. all parameters are refined by Levenberg–Marquardt steps (:mod:`.gauss_newton`) on the output
   error of RK4 over multiple-shooting segments (:mod:`.shooting`), derivatives by torch (and a
   continuation from the linear model where one fit misses, :mod:`.continuation`);
4. the result is validated on held-out runs by :func:`fmu_surrogate.ph.simulate` (structure-
   preserving) — the linear start and the nonlinear model, both in ``result_``;
   :meth:`~NonlinearPHIdentifier.refine` then fits it to all runs (:mod:`.finish`).

:meth:`NonlinearPHIdentifier.fit_dataset` keeps the linear fit's wiring (its
:class:`~fmu_surrogate.ph.PortMap`: power ports' pairs and orientations, modulating inputs,
measured outputs, the offsets' constant-source port) and initial state as the start (:mod:`.start`)
and fits the nonlinear core, the measured outputs' maps and — where the linear fit learned them —
the initial state and offsets in that wiring: :meth:`to_surrogate
<NonlinearPHIdentifier.to_surrogate>` is a :class:`~fmu_surrogate.ph.PortedSystem` with the data's
names, units and signs.  :meth:`~NonlinearPHIdentifier.fit` keeps it too where it adds anything
to the core (orientations, the constant source, the runs' equilibrium start), its columns named
``u1 …``, ``y1 …``.  Whether the FMU's outputs see the inputs set at their own sampling point or
those of the step before is decided from the data
(:mod:`fmu_surrogate.identify.delayed_feedthrough`); a delayed feedthrough is fitted as such,
seeing before the first point the inputs' start values or the first inputs, and where the
outputs show it the fast response to the inputs just set, taken out of the data the model is
fitted to (:func:`~fmu_surrogate.identify.delayed_feedthrough.fast_feedthrough`).  Outputs that depend on a
modulating input (in no power pair) through a static nonlinear law (a spring's force of a
displacement input) get a
:class:`~fmu_surrogate.ph.StaticLaw` of those inputs in the wiring (:mod:`.input_law`), fitted with
the core; a linear start of order 0 then stays a static map.

Passivity does not depend on the fit: every parameter vector the optimiser can visit is a pH
system (``J`` skew, ``W₀ = LLᵀ``, ``α, β ≥ 0`` as box constraints).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.identify.base import FitResult, PHEstimator
from fmu_surrogate.identify.delayed_feedthrough import (
    fast_feedthrough,
    without_fast_response,
)
from fmu_surrogate.identify.first_outputs import input_starts
from fmu_surrogate.identify.nonlinear.delay import outputs_one_sample_earlier, unresolved_mode
from fmu_surrogate.identify.nonlinear.finish import FitSetup, Refit, adopt, refine_on_all
from fmu_surrogate.identify.nonlinear.input_law import law_candidates, law_start_of
from fmu_surrogate.identify.nonlinear.parametrisation import NonlinearFitError, check_settings
from fmu_surrogate.identify.nonlinear.start import LinearStart, linear_start
from fmu_surrogate.ph import NonlinearPH, PortedSystem, simulate

Array = NDArray[np.float64]

__all__ = ["NonlinearFitError", "NonlinearPHFit", "NonlinearPHIdentifier"]


@dataclass(frozen=True)
class NonlinearPHFit(FitResult):
    """What :meth:`NonlinearPHIdentifier.fit` did.

    Errors are relative, ``‖ŷ − y‖_F / ‖y − y_o‖_F`` (:func:`~.pruning.swing_energy`) over all
    samples, the model simulated from its initial state by :func:`fmu_surrogate.ph.simulate`
    (NaN: no held-out experiment).  ``cost_history`` is the shooting objective per iteration.

    Parameters
    ----------
    n_iter, stopping_reason, cost_history, time
        As :class:`~fmu_surrogate.identify.base.FitResult`.
    linear_train_error, linear_validation_error : float
        The linear start's errors on the training and held-out experiments.
    train_error, validation_error : float
        The nonlinear model's.
    n_train, n_validation : int
        Number of training and held-out experiments.
    n_segments, segment_length, substeps : int
        Shooting segments, their steps, RK4 steps per sample step.
    linear_time : float
        Seconds of the linear fit.
    refined : Refit, optional
        What :meth:`~NonlinearPHIdentifier.refine` did (:class:`~.finish.Refit`); the other
        fields describe the model checked on the held-out experiments.
    """

    linear_train_error: float = float("nan")
    linear_validation_error: float = float("nan")
    train_error: float = float("nan")
    validation_error: float = float("nan")
    n_train: int = 0
    n_validation: int = 0
    n_segments: int = 0
    segment_length: int = 0
    substeps: int = 1
    linear_time: float = 0.0
    refined: Refit | None = None

    def report(self) -> str:
        """A few lines: errors of the linear start and of the nonlinear model."""
        return (f"linear start:    train {self.linear_train_error:.3%}, held-out "
                f"{self.linear_validation_error:.3%}\nnonlinear model: train "
                f"{self.train_error:.3%}, held-out {self.validation_error:.3%}\n"
                f"{self.n_iter} Gauss-Newton iterations over {self.n_segments} segments of "
                f"{self.segment_length} steps ({self.stopping_reason}), {self.time:.1f} s"
                + ("" if self.refined is None else "\n" + self.refined.describe()))


class NonlinearPHIdentifier(PHEstimator):
    """Fit a nonlinear pH system with a latent state to input/output data (module doc).

    Parameters
    ----------
    n_states : int or None
        State dimension n; ``None``: the linear start's order (at least 1, unless the start is
        a static map with a static law to fit: then 0).  A larger n than the linear start's
        adds states that start uncoupled.
    ridges : sequence of str
        Ridge kinds of the energy, one each (:class:`~fmu_surrogate.ph.ConvexEffort`, or
        ``"contact"``: a gap ridge with a damper in its contact); a fit missing 10 % adds a
        ``"periodic"`` one, then a ``"gap"`` one (end stops; still missing 1 %, a ``"contact"``
        one instead), each kept where it lowers the cost (:mod:`.continuation`); ``()``:
        quadratic.
    n_dissipation : int
        Number of power-law dissipation terms (:class:`~fmu_surrogate.ph.PowerDissipation`).
    feedthrough : {"auto", True, False}
        Fit ``P, S, N``; ``"auto"``: when the linear start has a feedthrough.
    n_port_dissipation : int or "auto"
        Number of power-law terms of the nonlinear feedthrough ``S_nl(u)``; ``"auto"``: two
        per power port when the feedthrough is fitted (one starts as a growing power law, one
        as a saturating law: :mod:`~fmu_surrogate.identify.nonlinear.optimise`), else none.
    segment_length : int or None
        Steps per multiple-shooting segment; ``None``: single shooting.
    continuity_weight : float
        Weight of the segments' continuity defects (states scaled by their spread).
    max_iter : int
        Levenberg–Marquardt iterations per start (:mod:`.gauss_newton`); the fit also stops at
        a cost below :data:`~fmu_surrogate.identify.nonlinear.optimise.TARGET_COST`, or where
        it stalls (:func:`~.gauss_newton.stalled`).  A strongly stiffening oscillator may need
        more than 100 (the Duffing benchmark's FMU at three levels: 122, held out 0.84 %).
    max_rescue_cost : float or None
        A missed fit is rescued (:mod:`.continuation`) only where its training cost is at most
        this (None: always); the order search sets 0.5 (``LOW_ORDER_COST``) where a higher
        order follows: a model that explains less than half its outputs lacks states.
    max_time : float or None
        Wall-time budget [s] of the optimiser in one fit (its starts and continuation stages
        together, :meth:`refine` its own): where spent, the fit stops at its best so far.
    tol : float
        The fit stops when an iteration lowers the cost by less than this fraction of it.
    smoothing, exponent : float
        Initial ``δ`` of the dissipation terms relative to the spread of ``m_jᵀz``, and their
        initial exponent ``p`` (both fitted; a second start from a saturating law follows:
        :data:`~fmu_surrogate.identify.nonlinear.optimise.SATURATING_START`).
    validation_runs : int
        The last this many experiments are held out (when there are more).
    linear : estimator, optional
        Linear pH estimator for the start: an unfitted one is cloned and fitted to the training
        experiments, a fitted one (with ``system_``) is used as it is, fitted to the same data
        (by its ``fit_dataset`` for :meth:`fit_dataset`; its wiring and x0 the start's).  Default:
        ``LinearPHIdentifier(n_states, learn=("J", "R", "B"))`` for :meth:`fit`,
        ``LinearPHIdentifier(n_states, ports=ports)`` for :meth:`fit_dataset` (``None``: the
        order it selects from the data).
    ports : optional
        The ``ports`` setting of the default linear start of :meth:`fit_dataset` (power pairs
        and orientations, :class:`~fmu_surrogate.identify.LinearPHIdentifier`).
    input_hold : {"linear", "zoh"}, optional
        Input between samples for array data (default ``"linear"``); :meth:`fit_dataset` takes
        the dataset's unless set.
    seed : int
        Seed of the initial directions beyond the structural ones.
    delayed_feedthrough : {"auto", True, False}
        Whether the outputs see the inputs of the step before; ``"auto"``: decided from the
        training runs in :meth:`fit_dataset` (:mod:`~fmu_surrogate.identify.delayed_feedthrough`),
        no delay in :meth:`fit`.
    static_law : bool
        Fit a static law of the modulating inputs in the outputs (:mod:`.input_law`).
    progress : bool
        Show a tqdm progress bar over the iterations of each fit.

    Attributes
    ----------
    system_ : NonlinearPH
    linear_system_ : LinearPH
        The linear start (its own coordinates).
    result_ : NonlinearPHFit
    hold_ : str
    x0_, initial_ : ndarray, shape (n,), and str
        Initial state (learned where the linear start learned one); ``"equilibrium"`` where
        each run starts at the equilibrium of its first inputs (as the linear start).
    ports_ : PortMap or None
        The wiring to the data's variables (``None``: :meth:`fit`'s bare core).
    linear_ : LinearPHIdentifier
        The fitted linear start.
    delayed_feedthrough_ : bool
        Whether the fitted outputs see the inputs of the step before.
    inputs_before_, fast_feedthrough_ : ndarray, shape (k_in,) and (k_out, k_in), or None
        With a delayed feedthrough: the inputs it sees before the first point (``None``: the
        first inputs), and ``PortedSystem.fast_feedthrough``.
    delay_evidence_ : DelayEvidence or None
        The data's test (``None`` when the setting decided).
    pruned_terms_ : list of (str, int)
        Terms (and power-law asymmetries) the fit did not need, set to zero
        (:func:`~fmu_surrogate.identify.nonlinear.pruning.prune_terms`).
    law_ : StaticLaw or None
        The fitted static law of the modulating inputs (in ``ports_``).
    law_candidates_ : int
        Number of candidate terms of the static law (0: no modulating input to fit a law of).
    """

    _fitted_attribute = "system_"

    def __init__(self, n_states: int | None = None, *,
                 ridges: Sequence[str] = ("quartic", "logcosh"),
                 n_dissipation: int = 1, feedthrough: Any = "auto",
                 n_port_dissipation: int | str = "auto",
                 segment_length: int | None = 50, continuity_weight: float = 10.0,
                 max_iter: int = 300, max_rescue_cost: float | None = None,
                 max_time: float | None = None, tol: float = 1e-5, smoothing: float = 1e-3,
                 exponent: float = 0.5, validation_runs: int = 1, linear: Any = None,
                 input_hold: str | None = None, seed: int = 0, ports: Any = None,
                 delayed_feedthrough: Any = "auto", static_law: bool = True,
                 progress: bool = False) -> None:
        self.n_states = n_states
        self.ridges = ridges
        self.n_dissipation = n_dissipation
        self.feedthrough = feedthrough
        self.n_port_dissipation = n_port_dissipation
        self.segment_length = segment_length
        self.continuity_weight = continuity_weight
        self.max_iter, self.max_rescue_cost = max_iter, max_rescue_cost
        self.max_time, self.tol = max_time, tol
        self.smoothing, self.exponent = smoothing, exponent
        self.validation_runs, self.linear = validation_runs, linear
        self.input_hold, self.seed, self.ports = input_hold, seed, ports
        self.delayed_feedthrough = delayed_feedthrough
        self.static_law = static_law
        self.progress = progress

    def _experiments(self, experiments: Any, u: Any, y: Any, hold: str) -> list[tuple]:
        from fmu_surrogate.identify.linear.model.experiments import Experiment

        if u is not None or y is not None:
            if u is None or y is None:
                raise NonlinearFitError("fit(t, u, y) needs both u and y (or pass a list of "
                                        "experiments).")
            experiments = [(experiments, u, y)]
        if isinstance(experiments, Experiment) or (
                isinstance(experiments, tuple) and len(experiments) == 3
                and not isinstance(experiments[0], (tuple, list, Experiment))):
            experiments = [experiments]
        out = []
        for e in experiments:
            ex = e if isinstance(e, Experiment) else Experiment.from_arrays(*e, hold)
            out.append((np.asarray(ex.t), np.asarray(ex.u), np.asarray(ex.y), ex.hold))
        if not out:
            raise NonlinearFitError("no experiments given; pass at least one (t, u, y) experiment.")
        if len({e[1].shape[1] for e in out}) != 1:
            raise NonlinearFitError("all experiments must have the same number of inputs.")
        return out

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, experiments: Any, u: ArrayLike | None = None,
            y: ArrayLike | None = None) -> NonlinearPHIdentifier:
        """Fit to one or several experiments (collocated inputs and outputs).

        Parameters
        ----------
        experiments : (t, u, y) tuple, Experiment, list of those, or the time grid t
            ``t`` (K,) strictly increasing, ``u`` and ``y`` (K, m).  ``fit(t, u, y)`` fits one.
        u, y : array_like, optional
            Inputs and outputs when the first argument is the time grid.

        Returns
        -------
        self
        """
        from threadpoolctl import threadpool_limits

        from fmu_surrogate.identify.linear.model.experiments import Experiment

        exps = self._experiments(experiments, u, y, self.input_hold or "linear")
        check_settings(self)
        if self.delayed_feedthrough is True:
            raise NonlinearFitError("fit's bare system carries no delayed feedthrough; use "
                                    "fit_dataset, or delayed_feedthrough='auto' or False.")
        self.delayed_feedthrough_, self.inputs_before_, self.delay_evidence_ = False, None, None
        self.fast_feedthrough_, self._fast_from_data = None, False
        train, _ = self._split(exps)
        with threadpool_limits(limits=1, user_api="blas"):
            t0 = time.perf_counter()
            lin = self._fitted_linear(lambda est: est.fit(
                [Experiment.from_arrays(t, u, y, h) for t, u, y, h in train]), learn=True)
            start = linear_start(lin, self.n_states)  # the wiring kept unless it adds nothing
            self._fit(exps, start, time.perf_counter() - t0, wired=not start.bare)
        return self

    def fit_dataset(self, ds: Any, *, inputs: Sequence[str], outputs: Sequence[str],
                    runs: Iterable[int] | None = None) -> NonlinearPHIdentifier:
        """Fit to the runs of a harvested dataset in the linear fit's wiring (module doc).

        Parameters
        ----------
        ds : xarray.Dataset
            A harvested dataset.
        inputs, outputs : sequence of str
            FMU variable names, as for
            :meth:`~fmu_surrogate.identify.LinearPHIdentifier.fit_dataset` (power pairs in
            order, or named by ``ports``: the other inputs modulating, the other outputs
            measured).
        runs : iterable of int, optional
            Run labels to use (default: all runs with status ``"ok"``; the last
            ``validation_runs`` of them are held out from the nonlinear fit and, when the
            linear start is fitted here, from it too).

        Returns
        -------
        self
        """
        from threadpoolctl import threadpool_limits

        from fmu_surrogate.fmu.dataset import run_arrays
        from fmu_surrogate.identify.linear.model.experiments import hold_from_dataset

        inputs, outputs = list(inputs), list(outputs)
        if not inputs or not outputs:
            raise NonlinearFitError("name at least one input and one output of the dataset.")
        labels = ([int(r) for r in runs] if runs is not None else
                  [int(r) for r, st in zip(ds["run"].values, ds["status"].values)
                   if str(st) == "ok"])
        if not labels:
            raise NonlinearFitError("the dataset has no usable runs (none with status 'ok' "
                                    "selected).")
        check_settings(self)
        train_labels, _ = self._split(labels)
        t0 = time.perf_counter()
        lin = self._fitted_linear(lambda est: est.fit_dataset(
            ds, inputs=inputs, outputs=outputs, runs=train_labels), learn=False)
        lin_time = time.perf_counter() - t0
        k = len(inputs)
        hold = self.input_hold or hold_from_dataset(ds)
        exps = [(t, X[:, :k], X[:, k:], hold) for t, X in run_arrays(ds, inputs + outputs,
                                                                     runs=labels)]
        self._decide_delay(self._split(exps)[0])
        starts = input_starts(ds, inputs)
        if self.delayed_feedthrough_:  # the response to the inputs just set, out of the data
            self.fast_feedthrough_ = fast_feedthrough(self._split(exps)[0])
            exps = without_fast_response(exps, self.fast_feedthrough_, starts)
            self._fast_from_data = self.fast_feedthrough_ is not None
        if self.delayed_feedthrough_ and unresolved_mode(lin, exps):
            # the linear fit made the delay a state faster than the sampling: fit it again to
            # the outputs one sample earlier, where the delayed feedthrough is a direct one
            t0 = time.perf_counter()
            lin = self._fitted_linear(lambda est: est.fit_dataset(
                outputs_one_sample_earlier(ds, outputs), inputs=inputs, outputs=outputs,
                runs=train_labels), learn=False, refit=True)
            lin_time += time.perf_counter() - t0
        with threadpool_limits(limits=1, user_api="blas"):
            start = linear_start(lin, self.n_states)
            U = np.vstack([e[1] for e in self._split(exps)[0]])  # a static map with a law of
            if self.n_states is None and lin.system_.n_states == 0 and self.static_law and \
                    law_candidates(start.ports, U) is not None:  # its inputs stays static
                start = linear_start(lin, 0)
            if list(start.ports.input_names) != inputs or \
                    list(start.ports.output_names) != outputs:
                raise NonlinearFitError(
                    f"the linear start was fitted to inputs {list(start.ports.input_names)} and "
                    f"outputs {list(start.ports.output_names)}, not {inputs} and {outputs}; fit "
                    "it with fit_dataset on the same variables (or pass linear=None).")
            self._fit(exps, start, lin_time, starts)
        return self

    def _decide_delay(self, train: list[tuple]) -> None:
        """Set ``delayed_feedthrough_`` and ``delay_evidence_`` from the setting or the data."""
        from fmu_surrogate.identify.delayed_feedthrough import detect_delayed_feedthrough

        setting = self.delayed_feedthrough
        if setting == "auto":
            self.delay_evidence_ = detect_delayed_feedthrough(train)
            self.delayed_feedthrough_ = self.delay_evidence_.decided_delayed
        else:
            self.delay_evidence_, self.delayed_feedthrough_ = None, bool(setting)
        self.inputs_before_ = self.fast_feedthrough_ = None
        self._fast_from_data = False

    def _split(self, items: list) -> tuple[list, list]:
        """Training and held-out items: the last ``validation_runs`` held out (when more)."""
        k = int(self.validation_runs)
        return (items[:-k], items[-k:]) if 0 < k < len(items) else (list(items), [])

    def _fitted_linear(self, fit: Any, learn: bool, refit: bool = False) -> Any:
        """The linear start: ``linear`` as it is when fitted (unless ``refit``), else fitted
        here by ``fit``."""
        from sklearn.base import clone

        from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier

        if self.linear is not None and hasattr(self.linear, "system_") and not refit:
            self.linear_ = self.linear  # fitted already (on the same data)
            return self.linear_
        if self.linear is not None:
            est = clone(self.linear)
        elif learn:
            est = LinearPHIdentifier(self.n_states, learn=("J", "R", "B"))
        else:
            est = LinearPHIdentifier(self.n_states, ports=self.ports)
        self.linear_ = fit(est)
        return self.linear_

    def _fit(self, exps: list[tuple], start: LinearStart, lin_time: float,
             input_starts: Array | None = None, wired: bool = True) -> NonlinearPHIdentifier:
        """Fit the core in the start's wiring; ``exps`` are ``(t, u_ext, y_ext, hold)``;
        ``input_starts`` the inputs' declared start values (a candidate of ``inputs_before_``);
        ``wired``: the model keeps the wiring (``ports_``), else it is the bare core."""
        from fmu_surrogate.identify.nonlinear.continuation import optimise_continued

        t0, (train, val) = time.perf_counter(), self._split(exps)
        self._deadline = None if self.max_time is None else time.monotonic() + self.max_time
        core = start.surrogate.system
        fw, delayed = self.feedthrough, bool(self.delayed_feedthrough_)
        feed = bool(core.has_feedthrough) if fw == "auto" else bool(fw)
        n_power = int(np.count_nonzero(np.any(start.ports.Ty != 0, axis=0)))
        if fw == "auto" and getattr(self, "fast_feedthrough_", None) is not None:
            feed = True  # dynamics faster than the step settle to a feedthrough (fit_dataset)
        npd = self.n_port_dissipation
        n_port = (2 * n_power if feed else 0) if npd == "auto" else int(npd)
        law, start, self.law_candidates_ = law_start_of(start, train, delayed, feed) \
            if self.static_law else (None, start, 0)
        out = optimise_continued(
            self, start, [(t, start.port_inputs(u), y, h) for t, u, y, h in train], feed,
            n_port, delayed, law, [u for _, u, _, _ in train])
        self._setup = FitSetup(start, exps, feed, n_port, delayed, law, input_starts, core,
                               lin_time, wired)
        fields, _ = adopt(self, out, train, val)
        self.result_ = NonlinearPHFit(time=time.perf_counter() - t0 + lin_time, **fields)
        return self

    def refine(self) -> NonlinearPHIdentifier:
        """Fit again to all experiments, the held-out ones included, from the fitted parameters;
        kept where that lowers the error over all and keeps the training ones' (:mod:`.finish`).

        Returns
        -------
        self
            ``result_.refined`` says what the refit did.
        """
        self._check_fitted()
        return refine_on_all(self)

    # -- use ---------------------------------------------------------------------------------
    def predict(self, t: ArrayLike, u: ArrayLike, x0: ArrayLike | None = None,
                hold: str | None = None) -> Array:
        """Outputs of the fitted model (simulated with :func:`fmu_surrogate.ph.simulate`).

        Parameters
        ----------
        t : array_like, shape (K,)
            Time grid.
        u : array_like, shape (K, m) or (K,) for m = 1
            Inputs.
        x0 : array_like, shape (n,), optional
            Initial state (default ``x0_``).
        hold : {"linear", "zoh"}, optional
            Input between samples (default: that of the training data).

        Returns
        -------
        ndarray, shape (K, m)
        """
        self._check_fitted()
        sys_ = self.system_ if self.ports_ is None else self.to_surrogate()
        x = x0 if x0 is not None or self.ports_ is not None else self.x0_  # its start's rule
        return simulate(sys_, t, u, x, hold=hold or self.hold_).y

    def to_surrogate(self) -> NonlinearPH | PortedSystem:
        """The fitted system: a :class:`~fmu_surrogate.ph.PortedSystem` with the data's names and
        the initial state as operating point (or rule) where it has a wiring (``ports_``), else
        the :class:`~fmu_surrogate.ph.NonlinearPH`."""
        self._check_fitted()
        if self.ports_ is None:
            return self.system_
        return PortedSystem(self.system_, self.ports_, self.x0_,
                            delayed_feedthrough=self.delayed_feedthrough_,
                            inputs_before=self.inputs_before_,
                            fast_feedthrough=self.fast_feedthrough_,
                            initial=getattr(self, "initial_", "state"))
