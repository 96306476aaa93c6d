"""Experiments, regularisation settings and parameter validation for linear pH identification.

Containers shared by the discretisation (:mod:`fmu_surrogate.identify.linear.model.discretisation`), the
gradients (:mod:`fmu_surrogate.identify.linear.model.adjoint`) and the sensitivities
(:mod:`fmu_surrogate.identify.linear.model.sensitivities`): :class:`Experiment` (time grid, inputs, outputs and
how the input is held between samples), :class:`StepGroups` (distinct step sizes of a grid),
:class:`Regularization`, and the checks of parameters and settings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import eigh, logm

from fmu_surrogate.errors import InvalidInputError, InvalidTypeError

Array = NDArray[np.float64]
Mode = Literal["exact", "euler"]
GradientKind = Literal["exact", "paper"]

#: Names of the identifiable parameters, in canonical order.
PARAMS: tuple[str, ...] = ("J", "R", "Q", "B", "x0")
MODES: tuple[str, ...] = ("exact", "euler")
#: Input interpolations between samples: first-order hold and zero-order hold.
HOLDS: tuple[str, ...] = ("linear", "zoh")
#: Step sizes that agree to this relative tolerance are treated as one step size.
STEP_RTOL = 1e-9


def check_time(t: ArrayLike, name: str = "t", where: str = "") -> Array:
    """Strictly increasing finite 1-D time grid; errors start with ``where: `` when given."""
    at = f"{where}: " if where else ""
    tt = np.array(t, dtype=float)
    if tt.ndim != 1:
        raise InvalidInputError(
            f"{at}{name} must be a 1-D array of sample times, got shape {tt.shape}.")
    if tt.shape[0] < 2:
        raise InvalidInputError(f"{at}{name} needs at least 2 sample times, got {tt.shape[0]}.")
    if not np.all(np.isfinite(tt)):
        raise InvalidInputError(
            f"{at}{name} contains NaN or Inf; remove or interpolate those samples.")
    d = np.diff(tt)
    if np.any(d <= 0):
        k = int(np.argmax(d <= 0))
        raise InvalidInputError(
            f"{at}{name} must be strictly increasing, but {name}[{k + 1}] = {tt[k + 1]!r} <= "
            f"{name}[{k}] = {tt[k]!r}; sort the samples and drop duplicate time points."
        )
    return tt


def check_signal(
    a: ArrayLike, K: int, name: str, m: int | None = None, where: str = ""
) -> Array:
    """Finite (K, m) signal, a 1-D one as one channel; errors start with ``where: `` if given."""
    at = f"{where}: " if where else ""
    arr = np.array(a, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != K:
        raise InvalidInputError(
            f"{at}{name} must have shape (K, m) = ({K}, m) with K = len(t) rows (one per "
            f"sample time), got shape {np.shape(a)}."
        )
    if arr.shape[1] < 1:
        raise InvalidInputError(
            f"{at}{name} needs at least one channel (m ≥ 1), got shape {arr.shape}.")
    if m is not None and arr.shape[1] != m:
        raise InvalidInputError(
            f"{at}{name} has {arr.shape[1]} channels but the model has m = {m} ports "
            f"(B is n×{m}); pass a ({K}, {m}) array."
        )
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidInputError(
            f"{at}{name} contains NaN or Inf (first at row {bad[0]}, column {bad[1]}); "
            f"remove or interpolate those samples."
        )
    return arr


@dataclass(frozen=True)
class StepGroups:
    """Distinct step sizes of a time grid.

    Attributes
    ----------
    h : ndarray, shape (G,)
        Representative step sizes (mean of each group).
    index : ndarray of int, shape (K−1,)
        Group of each step.
    """

    h: Array
    index: NDArray[np.intp]

    @property
    def uniform(self) -> bool:
        """Whether the grid has a single step size."""
        return self.h.shape[0] == 1

    @property
    def steps(self) -> Array:
        """Snapped step sizes ``h[index]``, shape (K−1,)."""
        return self.h[self.index]


def _group_values(h: Array, rtol: float) -> tuple[Array, NDArray[np.intp]]:
    order = np.argsort(h, kind="stable")
    hs = h[order]
    brk = np.flatnonzero(np.diff(hs) > rtol * hs[1:]) + 1
    labels_sorted = np.zeros(h.shape[0], dtype=np.intp)
    labels_sorted[brk] = 1
    labels_sorted = np.cumsum(labels_sorted)
    G = int(labels_sorted[-1]) + 1 if h.shape[0] else 0
    means = np.bincount(labels_sorted, weights=hs, minlength=G) / np.bincount(
        labels_sorted, minlength=G
    )
    index = np.empty_like(labels_sorted)
    index[order] = labels_sorted
    return means, index


def step_groups(t: ArrayLike, rtol: float = STEP_RTOL) -> StepGroups:
    """Group the steps of a time grid by size (equal to ``rtol`` relative).

    Parameters
    ----------
    t : array_like, shape (K,)
        Strictly increasing sample times.
    rtol : float
        Relative tolerance under which two step sizes count as equal.
    """
    h = np.diff(np.asarray(t, dtype=float))
    means, index = _group_values(h, rtol)
    return StepGroups(means, index)


@dataclass(frozen=True, eq=False)
class Experiment:
    """One experiment: inputs and measured outputs on its own time grid.

    Parameters
    ----------
    t : ndarray, shape (K,)
        Strictly increasing sample times (K ≥ 2).  Uniform grids are the fast path; a grid with
        G distinct step sizes costs G matrix exponentials per evaluation (exact mode).
    u : ndarray, shape (K, m)
        Inputs at the sample times (in exact mode held between samples as ``hold`` says, in
        Euler mode left-endpoint piecewise constant).  ``(K,)`` is accepted for m = 1.
    y : ndarray, shape (K, m)
        Measured outputs ``y = Bᵀ Q x`` (no feedthrough), same shape as ``u``.
    hold : {"linear", "zoh"}
        How the input behaves between samples (exact mode): ``"linear"`` — first-order hold,
        piecewise linear through the samples; ``"zoh"`` — zero-order hold, ``u_k`` over
        ``[t_k, t_{k+1})``, which is what a co-simulation FMU sees (a harvested dataset records it
        in its ``input_interpolation`` attribute, see :func:`hold_from_dataset`).

    Raises
    ------
    ValueError
        Inconsistent shapes, NaN/Inf, or ``t`` not strictly increasing.
    """

    t: Array
    u: Array
    y: Array
    hold: str = "linear"
    groups: StepGroups = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.hold not in HOLDS:
            raise InvalidInputError(
                f"hold must be one of {HOLDS} (input between samples: piecewise linear or "
                f"zero-order hold), got {self.hold!r}."
            )
        t = check_time(self.t)
        K = t.shape[0]
        u = check_signal(self.u, K, "u")
        y = check_signal(self.y, K, "y")
        if y.shape != u.shape:
            raise InvalidInputError(
                f"y must have the same shape as u (K, m) = {u.shape} — a pH port pairs each "
                f"input with one output — got {y.shape}."
            )
        for a in (t, u, y):
            a.setflags(write=False)
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "u", u)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "groups", step_groups(t))

    @classmethod
    def from_arrays(
        cls, t: ArrayLike, u: ArrayLike, y: ArrayLike, hold: str = "linear"
    ) -> Experiment:
        """Validate and copy arrays into an :class:`Experiment` (see the class docstring)."""
        return cls(t, u, y, hold)  # type: ignore[arg-type]

    @property
    def n_samples(self) -> int:
        """Number of sample times K."""
        return self.t.shape[0]

    @property
    def n_ports(self) -> int:
        """Number of ports m."""
        return self.u.shape[1]


@dataclass(frozen=True, eq=False)
class Regularization:
    """Regularisation added to the data misfit.

    ``(lam/2) Σ_{p fitted} ‖p − reference[p]‖²_F + (log_q/2) ‖log Q‖²_F`` (the latter only
    when Q is fitted).  Missing reference entries (or ``reference=None``) mean a zero
    reference.  The paper uses ``log_q = 0.001``.

    Parameters
    ----------
    lam : float
        Weight λ ≥ 0 of the reference term.
    reference : dict of str to ndarray, optional
        Reference values ``w_ref`` keyed by parameter name.
    log_q : float
        Weight ≥ 0 of ``½‖log Q‖²_F``.
    """

    lam: float = 0.0
    reference: Mapping[str, ArrayLike] | None = None
    log_q: float = 0.0

    def __post_init__(self) -> None:
        for name in ("lam", "log_q"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v >= 0):
                raise InvalidInputError(
                    f"Regularization.{name} must be a finite number ≥ 0, got {v!r}.")
        if self.reference is not None:
            unknown = set(self.reference) - set(PARAMS)
            if unknown:
                raise InvalidInputError(
                    f"Regularization.reference has unknown keys {sorted(unknown)}; "
                    f"allowed: {PARAMS}."
                )


#: The default: no regularisation.
NO_REGULARIZATION = Regularization()


# ---------------------------------------------------------------------------------------------
# Validation of parameters
# ---------------------------------------------------------------------------------------------
def check_params(params: Mapping[str, ArrayLike]) -> dict[str, Array]:
    """Validate the model parameters and return float copies.

    Parameters
    ----------
    params : dict
        ``J, R, Q`` of shape (n, n), ``B`` of shape (n, m), optional ``x0`` of shape (n,)
        (defaults to zero).  No structure is required here (the gradients are w.r.t. all
        entries); only shapes and finiteness are checked.

    Returns
    -------
    dict of str to ndarray
        All five parameters.
    """
    missing = [k for k in ("J", "R", "Q", "B") if k not in params]
    if missing:
        raise InvalidInputError(f"params is missing {missing}; pass a dict with keys {PARAMS}.")
    unknown = set(params) - set(PARAMS)
    if unknown:
        raise InvalidInputError(f"params has unknown keys {sorted(unknown)}; allowed: {PARAMS}.")
    out: dict[str, Array] = {}
    J = np.array(params["J"], dtype=float)
    if J.ndim != 2 or J.shape[0] != J.shape[1]:
        raise InvalidInputError(f"J must be a square (n, n) matrix, got shape {J.shape}.")
    n = J.shape[0]
    if n < 1:
        raise InvalidInputError("the model order n must be at least 1 (J is 0×0).")
    out["J"] = J
    for k in ("R", "Q"):
        a = np.array(params[k], dtype=float)
        if a.shape != (n, n):
            raise InvalidInputError(f"{k} must have shape ({n}, {n}) to match J, got {a.shape}.")
        out[k] = a
    B = np.array(params["B"], dtype=float)
    if B.ndim == 1:
        B = B[:, None]
    if B.ndim != 2 or B.shape[0] != n or B.shape[1] < 1:
        raise InvalidInputError(
            f"B must have shape ({n}, m) with m ≥ 1, got {np.shape(params['B'])}.")
    out["B"] = B
    x0 = np.zeros(n) if params.get("x0") is None else np.array(params["x0"], dtype=float)
    if x0.shape != (n,):
        x0 = x0.reshape(-1) if x0.size == n else x0
        if x0.shape != (n,):
            raise InvalidInputError(f"x0 must have shape ({n},), got {np.shape(params['x0'])}.")
    out["x0"] = x0
    for k, a in out.items():
        if not np.all(np.isfinite(a)):
            raise InvalidInputError(f"parameter {k} contains NaN or Inf; pass finite values.")
    return out


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise InvalidInputError(f"mode must be one of {MODES}, got {mode!r}.")


def _check_wrt(wrt: Sequence[str]) -> tuple[str, ...]:
    if isinstance(wrt, str):
        wrt = (wrt,)
    w = tuple(wrt)
    bad = [k for k in w if k not in PARAMS]
    if bad:
        raise InvalidInputError(f"wrt has unknown parameter names {bad}; choose from {PARAMS}.")
    return w


def _as_experiments(experiments: Experiment | Sequence[Experiment], m: int) -> list[Experiment]:
    exps = [experiments] if isinstance(experiments, Experiment) else list(experiments)
    if not exps:
        raise InvalidInputError("experiments is empty; pass at least one Experiment.")
    for i, e in enumerate(exps):
        if not isinstance(e, Experiment):
            raise InvalidTypeError(
                f"experiments[{i}] is a {type(e).__name__}; build it with Experiment.from_arrays."
            )
        if e.n_ports != m:
            raise InvalidInputError(
                f"experiments[{i}] has {e.n_ports} ports but B is n×{m}; "
                f"the model and the data must have the same number of ports."
            )
    return exps


def _check_inputs(
    params: Mapping[str, ArrayLike],
    experiments: Experiment | Sequence[Experiment],
    mode: str,
    wrt: Sequence[str],
) -> tuple[dict[str, Array], list[Experiment], tuple[str, ...]]:
    """Validate the arguments shared by every cost/gradient entry point.

    Returns the checked parameters, experiments and ``wrt`` (in the order validated: mode,
    ``wrt``, parameters, experiments against the number of ports of ``B``).
    """
    _check_mode(mode)
    wrt_checked = _check_wrt(wrt)
    p = check_params(params)
    return p, _as_experiments(experiments, p["B"].shape[1]), wrt_checked


def hold_from_dataset(ds: object) -> str:
    """The input hold of a harvested dataset, from its ``input_interpolation`` attribute.

    Co-simulation harvests record ``"zero-order hold over each step"`` (→ ``"zoh"``), model
    exchange ``"linear between grid points …"`` (→ ``"linear"``); datasets without the attribute
    are taken as ``"linear"``.

    Parameters
    ----------
    ds : xarray.Dataset
        A harvested dataset (anything with an ``attrs`` mapping).

    Returns
    -------
    str
        ``"zoh"`` or ``"linear"``.
    """
    text = str(getattr(ds, "attrs", {}).get("input_interpolation", "")).strip().lower()
    return "zoh" if text.startswith("zero") else "linear"


# ---------------------------------------------------------------------------------------------
# Regularisation
# ---------------------------------------------------------------------------------------------
def _log_q_value_grad(Q: Array, need_grad: bool) -> tuple[float, Array | None]:
    """``½‖log Q‖²_F`` and its gradient ``Q⁻ᵀ (log Q)ᵀ`` (= Q⁻¹ log Q for symmetric Q)."""
    if np.array_equal(Q, Q.T):
        lam, U = eigh(Q)
        if lam[0] <= 0:
            raise InvalidInputError(
                f"the log Q regulariser needs Q ≻ 0, but its smallest eigenvalue is {lam[0]:.3e}; "
                f"keep Q on the SPD manifold (or set log_q = 0)."
            )
        ll = np.log(lam)
        val = 0.5 * float(ll @ ll)
        grad = (U * (ll / lam)) @ U.T if need_grad else None
        return val, grad
    L = logm(Q)
    if np.iscomplexobj(L):
        L = L.real
    val = 0.5 * float(np.sum(L * L))
    grad = np.linalg.solve(Q.T, L.T) if need_grad else None
    return val, grad


def _regularization(
    p: Mapping[str, Array], reg: Regularization, wrt: Sequence[str], need_grad: bool
) -> tuple[float, dict[str, Array]]:
    val = 0.0
    grads: dict[str, Array] = {}
    for k in wrt:
        if reg.lam > 0:
            ref = None if reg.reference is None else reg.reference.get(k)
            d = p[k] - (0.0 if ref is None else np.asarray(ref, dtype=float).reshape(p[k].shape))
            val += 0.5 * reg.lam * float(np.sum(d * d))
            if need_grad:
                grads[k] = reg.lam * d
        if k == "Q" and reg.log_q > 0:
            v, g = _log_q_value_grad(p["Q"], need_grad)
            val += reg.log_q * v
            if need_grad:
                assert g is not None
                grads[k] = grads.get(k, 0.0) + reg.log_q * g
    return val, grads
