"""Settings validation and initial values of :class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier`.

Everything is checked once here, at the boundary; the optimisation loop runs unchecked.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.identify.linear.data import paper_initial_guess
from fmu_surrogate.identify.linear.model.manifold import PARAMETER_NAMES
from fmu_surrogate.ph import check_psd, check_skew, check_spd

Array = NDArray[np.float64]

MODES = ("exact", "euler")
OPTIMIZERS = ("lm", "cg", "steepest", "trust_regions", "pymanopt_cg")
LINE_SEARCHES = ("armijo", "backtracking")
INITS = ("subspace", "paper")
HOLDS = ("linear", "zoh")
COMPLETIONS = ("auto", "pad", "refine")
#: Parameters learned by default (``learn=None``); x0 joins when the data do not start at rest.
DEFAULT_LEARN = ("J", "R", "B")
_MODES, _OPTIMIZERS, _LINE_SEARCHES, _INITS, _HOLDS = MODES, OPTIMIZERS, LINE_SEARCHES, INITS, HOLDS


def check_settings(self: Any) -> tuple[int, tuple[str, ...]]:
    """Validate the settings of a LinearPHIdentifier; returns (n, learned names)."""
    n = self.order
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0):
        raise ValueError(f"order must be None (chosen from the data) or an integer >= 0, got "
                         f"{n!r}.")
    for label in ("feedthrough", "offsets"):
        v = getattr(self, label)
        if not (isinstance(v, bool) or v == "auto"):
            raise ValueError(f"{label} must be True, False or 'auto', got {v!r}.")
    if n == 0 and self.feedthrough is False:
        raise ValueError("order 0 is a static map y = (S − N) u: it needs feedthrough=True or "
                         "'auto'.")
    learn = DEFAULT_LEARN if self.learn is None else self.learn
    names = (learn,) if isinstance(learn, str) else learn
    names = tuple(names)
    unknown = [p for p in names if p not in PARAMETER_NAMES]
    if unknown:
        raise ValueError(
            f"learn contains unknown parameter(s) {unknown}; choose from {PARAMETER_NAMES}."
        )
    if not names:
        raise ValueError(f"learn is empty; name at least one of {PARAMETER_NAMES} to learn.")
    if len(set(names)) != len(names):
        raise ValueError(f"learn names a parameter twice: {names}.")
    if self.reference is not None:
        bad = [k for k in self.reference if k not in PARAMETER_NAMES]
        if bad:
            raise ValueError(
                f"reference has unknown key(s) {bad}; valid keys: {PARAMETER_NAMES}."
            )
    if self.mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {self.mode!r}.")
    if self.optimizer not in _OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {_OPTIMIZERS}, got {self.optimizer!r}.")
    if self.line_search not in _LINE_SEARCHES:
        raise ValueError(
            f"line_search must be one of {_LINE_SEARCHES}, got {self.line_search!r}."
        )
    if self.rank_R is not None and not (1 <= int(self.rank_R) <= (n or int(self.rank_R))):
        raise ValueError(
            f"rank_R must be None or an integer in [1, order={n}], got {self.rank_R!r}."
        )
    if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 0):
        raise ValueError(f"max_iter must be an integer >= 0, got {self.max_iter!r}.")
    for label, v in (("reg_lambda", self.reg_lambda), ("log_q", self.log_q)):
        if not (np.isfinite(v) and v >= 0):
            raise ValueError(f"{label} must be a finite number >= 0, got {v!r}.")
    if self.init not in _INITS:
        raise ValueError(f"init must be one of {_INITS}, got {self.init!r}.")
    if self.input_hold is not None and self.input_hold not in _HOLDS:
        raise ValueError(f"input_hold must be None or one of {_HOLDS}, got {self.input_hold!r}.")
    if self.complete not in COMPLETIONS:
        raise ValueError(f"complete must be one of {COMPLETIONS}, got {self.complete!r}.")
    if self.reg_lambda > 0 and not self.reference:
        raise ValueError("reg_lambda > 0 needs `reference` values (a dict like {'Q': Q_ref}).")
    return (None if n is None else int(n)), tuple(p for p in PARAMETER_NAMES if p in names)

def as_matrix(v: ArrayLike, shape: tuple[int, ...], name: str, where: str) -> Array:
    """A float copy of ``v`` with the given shape, finite (else a ValueError naming it)."""
    a = np.array(v, dtype=float)  # a copy: the caller's array is never aliased
    if name == "B" and a.ndim == 1 and len(shape) == 2 and shape[1] == 1:
        a = a[:, None]
    if a.shape != shape:
        raise ValueError(f"{where} value of {name} must have shape {shape}, got {a.shape}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{where} value of {name} contains NaN or Inf.")
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
            data_problem,
            subspace_applicable,
            subspace_initial_values,
        )

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
