"""Whether an FMU's outputs see the inputs set at the same communication point.

A harvest sets the inputs of ``t_k`` and then reads the outputs.  Most FMUs compute their outputs
from the inputs just set; some do not: outputs computed in ``doStep`` only, or outputs that follow
the inputs through a lag far shorter than the step (a damper force behind a compressible oil
volume).  Their samples are ``y_k = g(x_k, u_{k−1})``, and a surrogate that feeds ``u_k`` through
misses them by the input's change over one step — 31 % on a damper driven at 20 samples per
period.  :class:`~fmu_surrogate.ph.PortedSystem` models them with ``delayed_feedthrough``; this
module decides from the data which kind an FMU is.

The test.  Two one-step predictors of every output are fitted by least squares over all the
training samples: ``y_k`` from the inputs ``u_{k−1} … u_{k−q}`` and the outputs ``y_{k−1} …
y_{k−p}`` (the delayed predictor), and the same with ``u_k`` added (the instantaneous one).  Each
input, and the difference and the sum of every two inputs (a damper between two flanges sees
``v₁ − v₂``), enters through a piecewise-linear basis on its quantiles (a static law of any
shape — a power law, a saturation — is then fitted to well below a percent), the outputs
linearly.  The
predictors are nested, so adding ``u_k`` can only lower the residual; for an output that sees
``u_k`` it lowers it by the input's unpredictable change over a step, for an output that does not
it cannot.  The outputs are *delayed* when for every output the residual with ``u_k`` is not
below ``1 / ratio_limit`` of the residual without, and the predictor with ``u_k`` explains
them (a residual at most ``residual_limit`` of their spread): a law the basis cannot follow
leaves both predictors at its error, which says nothing about timing — the outputs are then
taken to see the inputs of their own point, as most FMUs' do.  Nor does a ratio near 1 say
anything where the inputs' past predicts their present: a slow multisine sampled finely
changes over a step by what a cubic extrapolation of its last samples gives, to 9e-5 of its
spread, and an acceleration ``a = F/m − …`` that sees ``F_k`` then gains nothing from it next
to a residual of 4e-4 (ratio 1.02; fitted with a delayed feedthrough, the mass so was 3.4 %
off held out, at its own point 0.1 %).  The test is *clear* only where the inputs' innovation
(the residual of their linear prediction from the same lags, relative to their spread) is at
least every output's residual: a feedthrough carrying the output's swing would then show
(measured on the benchmark FMUs: 1.2 to 10⁹ times the residual).  :attr:`DelayEvidence.clear`
says so; an unclear test leaves the outputs at their own point too.  Outputs without any feedthrough (a spring's
force, a function of its state) are delayed in this sense, correctly: their FMU's outputs do not
see ``u_k`` either, and a delayed feedthrough that fits to zero costs nothing.

The fast feedthrough.  An FMU whose outputs see the held inputs through dynamics far faster
than its step, and that evaluates its outputs when inputs are set, shows in a harvest both: the
response settled over the step before, ``g(x_k, u_{k−1})``, and the instantaneous response to
the inputs just set, ``D_f (u_k − u_{k−1})`` (a coil spring with mass, 20 segments, each with a
material damper of 0.6 N·s/m: ``F_k`` is its lumped law of ``x_k``, ``0.03 v_{k−1}`` and
``0.604 (v_k − v_{k−1})`` to a residual of 2e-5 of the force).  :func:`fast_feedthrough`
finds ``D_f`` from the data alone, before any model, and :func:`without_fast_response` takes its
response out of the data the models are fitted to, so that they fit what their classes can
follow; the surrogate shows it again (``PortedSystem.fast_feedthrough``).  With ``D_f`` left in
the data, the coil's fitted stiffness was 0.24 % low (the fit traded it for the response it
cannot show), no feedthrough was fitted, and a mass swinging on the coil was 4.5 % off over 5 s;
with it taken out, the stiffness is within 2e-5 N of the law over the range and the swing
0.45 % off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["FAST_LAGS", "FAST_ROWS", "FAST_SHARE", "FAST_T", "FIRST_RESPONSE_GAIN",
           "DelayEvidence", "detect_delayed_feedthrough", "fast_feedthrough",
           "with_first_response", "without_fast_response"]

Array = NDArray[np.float64]

#: Input lags ``q`` and output lags ``p`` of the one-step predictors.
INPUT_LAGS, OUTPUT_LAGS = 3, 2
#: Knots of each input's piecewise-linear basis (at its quantiles).
KNOTS = 33
#: Budget of the predictors: at most this many basis columns (fewer knots for many inputs; the
#: differences and sums of two inputs only up to PAIRED_INPUTS inputs) and rows (every s-th
#: sample of long records).
MAX_COLUMNS, MAX_ROWS, PAIRED_INPUTS = 600, 12000, 4
#: An output sees the inputs of its own point when adding ``u_k`` divides the predictor's
#: residual by more than this (outputs that do not see them: about 1; instantaneous
#: feedthrough: 10 and more on harvested data).
RATIO_LIMIT = 3.0
#: Largest residual of the instantaneous predictor (relative to the output's spread) at which the
#: ratio tells the timing (measured on harvested data: 2e-4 … 6e-4; a law the basis misses: 3 %).
RESIDUAL_LIMIT = 0.01


@dataclass(frozen=True)
class DelayEvidence:
    """What :func:`detect_delayed_feedthrough` found.

    Parameters
    ----------
    delayed : bool
        Whether no output sees the inputs set at its own sampling point.
    ratios : tuple of float
        Per output: residual of the delayed predictor over that of the instantaneous one (≥ 1).
    residuals : tuple of float
        Per output: the instantaneous predictor's residual relative to the output's spread.
    innovation : float
        The inputs' change over a step that their past does not predict (the largest residual
        of an input's linear prediction from its lags, relative to its spread; ``inf`` when
        not measured).
    """

    delayed: bool
    ratios: tuple[float, ...]
    residuals: tuple[float, ...]
    innovation: float = float("inf")

    @property
    def clear(self) -> bool:
        """Whether the inputs change enough over a step for the ratios to tell the timing: their
        innovation is at least every output's residual (module doc)."""
        return all(not r > self.innovation for r in self.residuals)

    @property
    def decided_delayed(self) -> bool:
        """The outputs are taken to see the inputs of the step before: :attr:`delayed` and
        :attr:`clear`."""
        return self.delayed and self.clear

    def describe(self, output_names: Sequence[str] | None = None) -> str:
        """One line: the decision and each output's ratio."""
        names = list(output_names) if output_names is not None else \
            [f"y{j}" for j in range(len(self.ratios))]
        per = ", ".join(f"{n} {r:.3g}" for n, r in zip(names, self.ratios))
        if self.delayed and not self.clear:
            return (f"outputs taken to see the inputs set at the same point: their past "
                    f"predicts the inputs to {self.innovation:.2g} of their spread, below the "
                    f"one-step predictors' error ({max(self.residuals):.2g}), too little to "
                    f"tell (ratios {per})")
        if self.delayed:
            return (f"outputs see the inputs of the step before (delayed feedthrough): adding the "
                    f"inputs of the same point divides the one-step prediction error by {per} "
                    f"(≤ {RATIO_LIMIT})")
        if all(r <= RATIO_LIMIT for r in self.ratios):
            worst = max(self.residuals)
            return (f"outputs taken to see the inputs set at the same point: the one-step "
                    f"predictors miss them by {worst:.2g} of their spread, too much to tell "
                    f"(ratios {per})")
        return (f"outputs see the inputs set at the same point: adding them divides the one-step "
                f"prediction error by {per}")


def _hats(u: Array, knots: Array) -> Array:
    """Piecewise-linear hat functions of one input at sorted ``knots``: ``(K, len(knots))``."""
    k = len(knots)
    out = np.zeros((u.shape[0], k))
    idx = np.clip(np.searchsorted(knots, u) - 1, 0, k - 2)
    lo, hi = knots[idx], knots[idx + 1]
    w = np.clip((u - lo) / np.where(hi > lo, hi - lo, 1.0), 0.0, 1.0)
    rows = np.arange(u.shape[0])
    out[rows, idx] = 1.0 - w
    out[rows, idx + 1] = w
    return out


def _projections(u: Array) -> Array:
    """The inputs, and the difference and the sum of every two of them (as they are: the
    velocities of two flanges in the same unit)."""
    m = u.shape[1]
    if m < 2 or m > PAIRED_INPUTS:
        return u
    cols = [u] + [np.column_stack([u[:, i] - u[:, j], u[:, i] + u[:, j]])
                  for i in range(m) for j in range(i + 1, m)]
    return np.hstack(cols)


def _features(u: Array, y: Array, knots: list[Array], lags: range, rows: NDArray) -> Array:
    """Rows ``k`` of ``rows``: the inputs' bases at the given lags, the outputs' lags, a
    constant."""
    cols = [np.ones((rows.size, 1))]
    for lag in lags:
        for i, kn in enumerate(knots):
            cols.append(_hats(u[rows - lag, i], kn)[:, 1:])  # the constant is there
    for lag in range(1, OUTPUT_LAGS + 1):
        cols.append(y[rows - lag])
    return np.hstack(cols)


def detect_delayed_feedthrough(experiments: Sequence[Any], ratio_limit: float = RATIO_LIMIT,
                               residual_limit: float = RESIDUAL_LIMIT) -> DelayEvidence:
    """Decide whether the outputs see the inputs set at their own sampling point (module doc).

    Parameters
    ----------
    experiments : sequence of tuple
        ``(t, u, y, ...)`` per experiment: ``u`` (K, m), ``y`` (K, p) at the sampling points
        (further entries are ignored).
    ratio_limit : float
        Residual ratio above which an output sees the inputs of its own point.
    residual_limit : float
        Largest relative residual of the instantaneous predictor at which the ratio decides.

    Returns
    -------
    DelayEvidence
        ``delayed`` is ``False`` (nothing to decide from) when there are no inputs or too few
        samples.
    """
    exps = [(np.asarray(e[1], dtype=float), np.asarray(e[2], dtype=float)) for e in experiments]
    raw = [u.reshape(len(u), -1) for u, _ in exps]
    exps = [(_projections(u.reshape(len(u), -1)), y.reshape(len(y), -1)) for u, y in exps]
    start = max(INPUT_LAGS, OUTPUT_LAGS)
    exps = [(u, y) for u, y in exps if u.shape[0] > start + 1]
    p = exps[0][1].shape[1] if exps else 0
    if not exps or exps[0][0].shape[1] == 0:
        return DelayEvidence(False, (1.0,) * p, (np.nan,) * p)
    U = np.vstack([u for u, _ in exps])
    n_knots = int(np.clip(MAX_COLUMNS // (U.shape[1] * (INPUT_LAGS + 1)) + 1, 5, KNOTS))
    knots = [np.unique(np.quantile(U[:, i], np.linspace(0.0, 1.0, n_knots)))
             for i in range(U.shape[1])]
    knots = [kn if len(kn) > 1 else np.array([kn[0] - 1.0, kn[0] + 1.0]) for kn in knots]
    stride = max(1, -(-sum(u.shape[0] - start for u, _ in exps) // MAX_ROWS))
    rows = [np.arange(start, u.shape[0], stride) for u, _ in exps]
    now = np.vstack([_features(u, y, knots, range(INPUT_LAGS + 1), r)
                     for (u, y), r in zip(exps, rows)])
    before = np.vstack([_features(u, y, knots, range(1, INPUT_LAGS + 1), r)
                        for (u, y), r in zip(exps, rows)])
    Y = np.vstack([y[r] for (_, y), r in zip(exps, rows)])
    spread = np.maximum(Y.max(axis=0) - Y.min(axis=0), 1e-300)

    def residual(A: Array) -> Array:
        scale = np.maximum(np.abs(A).max(axis=0), 1e-300)  # column scaling for lstsq
        coef = np.linalg.lstsq(A / scale, Y, rcond=None)[0]
        return np.sqrt(np.mean((A / scale @ coef - Y) ** 2, axis=0)) / spread

    r_now, r_before = residual(now), residual(before)
    floor = 1e-13  # round-off of the fit: both residuals there means nothing to tell apart
    ratios = np.maximum(r_before, floor) / np.maximum(r_now, floor)
    delayed = bool(np.all(ratios <= ratio_limit) and np.all(r_now <= residual_limit))
    return DelayEvidence(delayed, tuple(float(r) for r in ratios),
                         tuple(float(r) for r in r_now),
                         _innovation([u for u in raw if u.shape[0] > start + 1], rows))


def _innovation(inputs: list[Array], rows: list[NDArray]) -> float:
    """The largest residual of an input's linear prediction from its last
    :data:`INPUT_LAGS` values at ``rows`` (one index array per experiment), relative to the
    input's spread (inputs without spread left out; ``inf`` when none has any)."""
    A = np.vstack([np.hstack([np.ones((r.size, 1))] + [u[r - lag] for lag in
                                                       range(1, INPUT_LAGS + 1)])
                   for u, r in zip(inputs, rows)])
    U = np.vstack([u[r] for u, r in zip(inputs, rows)])
    spread = U.max(axis=0) - U.min(axis=0)
    if not np.any(spread > 0):
        return float("inf")
    scale = np.maximum(np.abs(A).max(axis=0), 1e-300)
    coef = np.linalg.lstsq(A / scale, U, rcond=None)[0]
    miss = np.sqrt(np.mean((A / scale @ coef - U) ** 2, axis=0))
    return float(np.max(miss[spread > 0] / spread[spread > 0]))


#: A fast feedthrough's coefficient must stand this many standard errors from zero
#: (:func:`fast_feedthrough`): the coil spring with mass's stands 121 from it; those of the
#: benchmarks' other delayed outputs within 6.4 (a saturating motor, whose estimates change sign
#: with the predictor's lags)
FAST_T = 10.0
#: ... and move its output by this share of the output's swing somewhere in the data (deterministic
#: data leave residuals so small that a coefficient of round-off can stand far from zero)
FAST_SHARE = 1e-3
#: Past inputs and outputs of the one-step predictor of :func:`fast_feedthrough`: the outputs'
#: past stands for the state (a coil spring with mass: ``D_f`` 0.057, 0.80, 0.565, 0.6007 and
#: 0.6022 with 1, 2, 4, 8 and 16 of each, against 0.604 from its lumped law; more lags make the
#: past more collinear, its coefficient standing 121 standard errors from zero at 8, 18 at 16)
FAST_LAGS = 8
#: Most samples of the predictor's least-squares fit (beyond, every few of each run's are taken):
#: 20 000 rows of a part with ten inputs and outputs take 27 MB (the coil spring's 4 950)
FAST_ROWS = 20_000


def fast_feedthrough(experiments: Sequence[Any], lags: int = FAST_LAGS) -> Array | None:
    """The fast feedthrough ``D_f`` of outputs that see the inputs of the step before, or
    ``None`` when they show none (module doc).

    Each output's one-step predictor from the inputs just set ``u_k``, the ``lags`` past inputs
    and outputs and a constant, fitted by least squares over the experiments' samples: ``u_k``
    enters the outputs through ``D_f`` alone (the state ``x_k`` is a function of the past,
    which the past outputs stand for), and its coefficients are ``D_f``'s — unbiased whatever
    the predictor misses of the past, as long as that misses nothing of the inputs' change
    (their innovation, which no function of the past predicts).  An entry is kept where it
    stands :data:`FAST_T` standard errors from zero and moves its output by
    :data:`FAST_SHARE` of the output's swing.

    Parameters
    ----------
    experiments : sequence of tuple
        ``(t, u, y, hold)`` training experiments, inputs ``(K, k_in)`` and outputs ``(K, k_out)``.
    lags : int
        Past samples of each input and output in the predictor.

    Returns
    -------
    ndarray, shape (k_out, k_in), or None
    """
    from fmu_surrogate.fmu.dataset import output_scale

    runs = [(np.asarray(e[1], dtype=float), np.asarray(e[2], dtype=float))
            for e in experiments if len(e[1]) > lags]
    if not runs:
        return None
    # every stride-th sample: the QR's memory stays bounded (FAST_ROWS)
    stride = -(-sum(len(u) - lags for u, _ in runs) // FAST_ROWS)
    rows, targets = [], []
    for u, y in runs:
        k = np.arange(lags, len(u), stride)
        past = [u[k - j] for j in range(1, lags + 1)] + [y[k - j] for j in range(1, lags + 1)]
        rows.append(np.hstack([u[k], *past, np.ones((k.size, 1))]))
        targets.append(y[k])
    changes = [np.abs(np.diff(u, axis=0)).max(axis=0) for u, _ in runs]
    A, Y = np.vstack(rows), np.vstack(targets)
    k_in = np.shape(experiments[0][1])[1]
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(Y))):
        return None
    # held inputs and steady outputs are the constant's column again: left out
    cols = np.flatnonzero(np.ptp(A, axis=0) > 0)
    cols = np.append(cols, A.shape[1] - 1)
    now = np.flatnonzero(cols < k_in)  # the varying inputs just set, among the columns
    A = A[:, cols]
    if now.size == 0 or len(A) < 4 * A.shape[1]:
        return None
    scale = np.abs(A).max(axis=0)
    Q, R = np.linalg.qr(A / scale)
    if np.abs(np.diag(R)).min() <= 1e-12 * np.abs(np.diag(R)).max():
        return None  # collinear: an output a linear function of the others
    coef = np.linalg.solve(R, Q.T @ Y)
    sigma2 = np.sum((Y - (A / scale) @ coef) ** 2, axis=0) / (len(A) - A.shape[1])
    r_inv = np.linalg.inv(R)  # (AᵀA)⁻¹ = R⁻¹R⁻ᵀ: the coefficients' variances by row norms
    se = np.sqrt(np.outer(np.sum(r_inv[now] ** 2, axis=1), sigma2))  # (varying, k_out)
    d_f = np.zeros((Y.shape[1], k_in))
    d_f[:, cols[now]] = (coef[now] / scale[now, None]).T
    swing = np.max([output_scale(e[2]) for e in experiments], axis=0)
    moves = np.abs(d_f) * np.max(changes, axis=0)[None, :]
    keep = np.zeros(d_f.shape, dtype=bool)
    keep[:, cols[now]] = np.abs(coef[now].T) >= FAST_T * se.T
    keep &= moves >= FAST_SHARE * swing[:, None]
    return np.where(keep, d_f, 0.0) if keep.any() else None


def without_fast_response(experiments: list[tuple], fast_feedthrough: Array | None,
                          inputs_before: Array | None) -> list[tuple]:
    """``(t, u_ext, y_ext, hold)`` experiments with the outputs less a fast feedthrough's
    response ``D_f (u_k − u_{k−1})`` (module doc; at the first point ``u_0 − inputs_before``,
    nothing when that is ``None``): what the model is fitted to.

    Parameters
    ----------
    experiments : list of tuple
    fast_feedthrough : ndarray, shape (k_out, k_in), or None
        ``D_f`` (``PortedSystem.fast_feedthrough``); ``None``: the experiments themselves.
    inputs_before : ndarray, shape (k_in,), or None

    Returns
    -------
    list of tuple
    """
    if fast_feedthrough is None:
        return experiments
    out = []
    for t, u, y, h in experiments:
        before = u[:1] if inputs_before is None else np.reshape(inputs_before, (1, -1))
        du = u - np.concatenate([before, u[:-1]])
        out.append((t, u, y - du @ np.asarray(fast_feedthrough).T, h))
    return out


#: How many times a fast feedthrough fitted at the first points must divide their squared misses
#: to be kept (:func:`with_first_response`): an effect of the inputs set at initialisation, not a
#: fit to the first points' scatter (the least-squares fit of one input to ``r`` runs leaves
#: ``(r − 1) / r`` of a random scatter)
FIRST_RESPONSE_GAIN = 4.0


def with_first_response(surrogate: Any, train: list[tuple], input_starts: Array | None) -> Any:
    """``surrogate`` with a fast feedthrough fitted at the first points, where the one-step
    predictor could not find one (:func:`fast_feedthrough`: inputs their own past predicts, a
    chirp or a few sines, leave it no change to see), else ``surrogate`` itself.

    At initialisation the inputs leave their declared start values, a change no past predicts:
    such an FMU (the coil spring with mass) reads ``y(t₀) = ŷ(x₀, u_before) + D_f (u(t₀) −
    u_before)``.  ``D_f`` is fitted by least squares to the training runs' first points (the
    residuals of the model with ``inputs_before`` the starts), each output by its swing, on the
    inputs whose first values leave their starts, with two runs more than those inputs; it is
    kept where it divides the first points' squared misses, against the surrogate's own, by
    :data:`FIRST_RESPONSE_GAIN`, and the whole runs' misses not grow (it applies at every point).

    Parameters
    ----------
    surrogate : PortedSystem
        The fitted surrogate, with a delayed feedthrough and none fast.
    train : list of tuple
        ``(t, u_ext, y_ext, hold)`` training experiments.
    input_starts : ndarray, shape (k_in,), or None
        The inputs' declared start values (``None``: unknown, nothing fitted).

    Returns
    -------
    PortedSystem
    """
    from fmu_surrogate.fmu.dataset import output_scale
    from fmu_surrogate.ph import simulate

    if (not surrogate.delayed_feedthrough or input_starts is None
            or surrogate.first_outputs is not None or surrogate.fast_feedthrough is not None):
        return surrogate
    starts = np.asarray(input_starts, dtype=float)
    du = np.array([u[0] - starts for _, u, _, _ in train])
    span = np.array([np.ptp(u, axis=0) for _, u, _, _ in train]).max(axis=0) + np.abs(starts)
    cols = np.flatnonzero(np.abs(du).max(axis=0) > 1e-9 * np.maximum(span, 1e-300))
    if cols.size == 0 or len(train) < cols.size + 2:
        return surrogate
    scale = np.max([output_scale(y) for _, _, y, _ in train], axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    base = surrogate.replace(inputs_before=starts)
    miss = np.array([(y[0] - base.outputs(base.initial_state(u[0]), starts)) / scale
                     for _, u, y, _ in train])
    own = np.array([(y[0] - surrogate.sampled_outputs(surrogate.outputs(
        surrogate.initial_state(u[0]), surrogate.inputs_seen_by_outputs(u[:1])), u[:1])[0])
        / scale for _, u, y, _ in train])
    a = du[:, cols]
    if np.linalg.matrix_rank(a, tol=1e-9 * np.abs(a).max()) < cols.size:
        return surrogate
    coef = np.linalg.lstsq(a, miss, rcond=None)[0]  # (cols, k_out), in swing units
    if FIRST_RESPONSE_GAIN * float(np.sum((miss - a @ coef) ** 2)) > float(np.sum(own ** 2)):
        return surrogate
    d_f = np.zeros((surrogate.n_outputs, surrogate.n_inputs))
    d_f[:, cols] = (coef * scale).T
    fast = base.replace(fast_feedthrough=d_f)

    def misses(sur: Any) -> float:
        return sum(float(np.sum(((y - simulate(sur, t, u, hold=h).y) / scale) ** 2))
                   for t, u, y, h in train)

    return fast if misses(fast) <= misses(surrogate) else surrogate
