"""Settings validation and initial values of :class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier`.

Everything is checked once here, at the boundary; the optimisation loop runs unchecked.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError, InvalidTypeError
from fmu_surrogate.identify.linear.data import paper_initial_guess
from fmu_surrogate.identify.linear.model.manifold import PARAMETER_NAMES
from fmu_surrogate.identify.linear.optim.base import Optimizer
from fmu_surrogate.identify.linear.optim.first_order import (
    CG,
    LINE_SEARCHES,
    FirstOrder,
    PymanoptCG,
    SteepestDescent,
    TrustRegions,
)
from fmu_surrogate.identify.linear.optim.lm import LM
from fmu_surrogate.ph import check_psd, check_skew, check_spd

Array = NDArray[np.float64]

MODES = ("exact", "euler")
#: The optimisers by their shorthand strings (``LinearPHIdentifier(optimizer="lm")``).
OPTIMIZER_CLASSES: dict[str, type[Optimizer]] = {
    cls.name: cls for cls in (LM, CG, SteepestDescent, TrustRegions, PymanoptCG)}
OPTIMIZERS = tuple(OPTIMIZER_CLASSES)
INITS = ("subspace", "paper")
HOLDS = ("linear", "zoh")
COMPLETIONS = ("auto", "pad", "refine")
#: Parameters learned by default (``learn=None``); x0 joins when the data do not start at rest.
DEFAULT_LEARN = ("J", "R", "B")
_MODES, _OPTIMIZERS, _LINE_SEARCHES, _INITS, _HOLDS = MODES, OPTIMIZERS, LINE_SEARCHES, INITS, HOLDS


#: BLAS threads during a fit.  The fit's dense products are thin (rows × a few hundred
#: coordinates) and small (n × n exponentials), where threads cost more than they gain: measured
#: on 2 cores, one thread against two — n = 5 from 10⁴ noisy samples 6 s against 13 s wall
#: (5 s against 24 s CPU), the MSD chain at full order from its FMU's data 2.4 s against 5.3 s.
BLAS_THREADS = 1


def optimizer_from_settings(est: Any) -> Optimizer:
    """The optimiser of a LinearPHIdentifier: its ``optimizer`` object, or the one a shorthand
    string names, made with the identifier's ``max_iter``, ``tol``, ``max_time`` and (first-order
    methods) ``line_search``, ``initial_step``, ``restart_every``, ``beta_rule``."""
    if isinstance(est.optimizer, Optimizer):
        return est.optimizer
    cls = OPTIMIZER_CLASSES[est.optimizer]
    common: dict[str, Any] = {"max_iter": est.max_iter, "tol": est.tol, "max_time": est.max_time}
    if issubclass(cls, FirstOrder):
        common.update(line_search=est.line_search, initial_step=est.initial_step,
                      restart_every=est.restart_every, beta_rule=est.beta_rule)
    return cls(**common)


def check_settings(self: Any) -> tuple[int, tuple[str, ...]]:
    """Validate the settings of a LinearPHIdentifier; returns (n, learned names)."""
    n = self.order
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0):
        raise InvalidInputError(
            f"order must be None (chosen from the data) or an integer >= 0, got "
            f"{n!r}.")
    for label in ("feedthrough", "offsets"):
        v = getattr(self, label)
        if not (isinstance(v, bool) or v == "auto"):
            raise InvalidInputError(f"{label} must be True, False or 'auto', got {v!r}.")
    if self.initial not in ("auto", "state", "equilibrium"):
        raise InvalidInputError(f"initial must be 'auto', 'state' or 'equilibrium', got "
                                f"{self.initial!r}.")
    if n == 0 and self.feedthrough is False:
        raise InvalidInputError(
            "order 0 is a static map y = (S − N) u: it needs feedthrough=True or "
            "'auto'.")
    learn = DEFAULT_LEARN if self.learn is None else self.learn
    names = (learn,) if isinstance(learn, str) else learn
    names = tuple(names)
    unknown = [p for p in names if p not in PARAMETER_NAMES]
    if unknown:
        raise InvalidInputError(
            f"learn contains unknown parameter(s) {unknown}; choose from {PARAMETER_NAMES}."
        )
    if not names:
        raise InvalidInputError(f"learn is empty; name at least one of {PARAMETER_NAMES} to learn.")
    if len(set(names)) != len(names):
        raise InvalidInputError(f"learn names a parameter twice: {names}.")
    if self.reference is not None:
        bad = [k for k in self.reference if k not in PARAMETER_NAMES]
        if bad:
            raise InvalidInputError(
                f"reference has unknown key(s) {bad}; valid keys: {PARAMETER_NAMES}."
            )
    if self.mode not in _MODES:
        raise InvalidInputError(f"mode must be one of {_MODES}, got {self.mode!r}.")
    if isinstance(self.optimizer, Optimizer):
        self.optimizer.check()
    elif not isinstance(self.optimizer, str):
        raise InvalidTypeError(
            f"optimizer must be one of {_OPTIMIZERS} or an optimizer object such as "
            f"LM(max_iter=50), got {type(self.optimizer).__name__}.")
    elif self.optimizer not in _OPTIMIZERS:
        raise InvalidInputError(f"optimizer must be one of {_OPTIMIZERS}, got {self.optimizer!r}.")
    if self.line_search not in _LINE_SEARCHES:
        raise InvalidInputError(
            f"line_search must be one of {_LINE_SEARCHES}, got {self.line_search!r}."
        )
    if self.rank_R is not None and not (1 <= int(self.rank_R) <= (n or int(self.rank_R))):
        raise InvalidInputError(
            f"rank_R must be None or an integer in [1, order={n}], got {self.rank_R!r}."
        )
    if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 0):
        raise InvalidInputError(f"max_iter must be an integer >= 0, got {self.max_iter!r}.")
    for label, v in (("reg_lambda", self.reg_lambda), ("log_q", self.log_q)):
        if not (np.isfinite(v) and v >= 0):
            raise InvalidInputError(f"{label} must be a finite number >= 0, got {v!r}.")
    if self.init not in _INITS:
        raise InvalidInputError(f"init must be one of {_INITS}, got {self.init!r}.")
    if self.input_hold is not None and self.input_hold not in _HOLDS:
        raise InvalidInputError(
            f"input_hold must be None or one of {_HOLDS}, got {self.input_hold!r}.")
    if self.complete not in COMPLETIONS:
        raise InvalidInputError(f"complete must be one of {COMPLETIONS}, got {self.complete!r}.")
    if self.reg_lambda > 0 and not self.reference:
        raise InvalidInputError(
            "reg_lambda > 0 needs `reference` values (a dict like {'Q': Q_ref}).")
    return (None if n is None else int(n)), tuple(p for p in PARAMETER_NAMES if p in names)

def as_matrix(v: ArrayLike, shape: tuple[int, ...], name: str, where: str) -> Array:
    """A float copy of ``v`` with the given shape, finite (else a ValueError naming it)."""
    a = np.array(v, dtype=float)  # a copy: the caller's array is never aliased
    if name == "B" and a.ndim == 1 and len(shape) == 2 and shape[1] == 1:
        a = a[:, None]
    if a.shape != shape:
        raise InvalidInputError(f"{where} value of {name} must have shape {shape}, got {a.shape}.")
    if not np.all(np.isfinite(a)):
        raise InvalidInputError(f"{where} value of {name} contains NaN or Inf.")
    return a

def initial_values(
self: Any, n: int, m: int, names: tuple[str, ...], exps: list[Any]
) -> tuple[dict[str, Array], dict[str, Array], str]:
    """(fixed values, initial values of the fitted parameters, init used), validated."""
    shapes = {"J": (n, n), "R": (n, n), "Q": (n, n), "B": (n, m), "x0": (n,)}
    default = paper_initial_guess(n, m, self.seed)
    given = {p: getattr(self, p) for p in PARAMETER_NAMES if getattr(self, p) is not None}
    used = "paper"
    self.subspace_ = None
    if self.init == "subspace" and self.max_iter is not None:
        from fmu_surrogate.identify.linear.init.initial import (
            subspace_applicable,
            subspace_initial_values,
        )
        from fmu_surrogate.identify.linear.init.subspace import data_problem

        why = subspace_applicable(names, given) or data_problem(exps)
        if why is None:
            Qf = as_matrix(given["Q"], (n, n), "Q", "fixed") if "Q" in given else np.eye(n)
            if "Q" not in names:
                check_spd(Qf, "fixed Q")
            self.subspace_ = subspace_initial_values(
                exps, n, names, Qf, self.subspace_horizon
            )
            default = dict(default, **self.subspace_.values)
            used = "subspace"
        else:
            used = f"paper ({why}: subspace initialisation not applicable)"
    fixed, init = {}, {}
    for p in PARAMETER_NAMES:
        where = "initial" if p in names else "fixed"
        v = as_matrix(given[p], shapes[p], p, where) if p in given else default[p]
        if p == "J":
            check_skew(v, f"{where} J")
            if p in names:
                v = (v - v.T) / 2  # the initial point on the manifold, bitwise skew
        elif p == "R" and not (used == "subspace" and p not in given):
            check_psd(v, f"{where} R")
        elif p == "Q":
            check_spd(v, f"{where} Q")
            if p in names:
                v = 0.5 * (v + v.T)
        (init if p in names else fixed)[p] = v
    return fixed, init, used
