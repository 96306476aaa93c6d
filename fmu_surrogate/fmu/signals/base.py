"""The base class of the input signals (:mod:`fmu_surrogate.fmu.signals.standard` describes them) and
the checks of their parameters."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, ClassVar

import numpy as np

from fmu_surrogate.fmu.errors import SignalError

__all__ = ["Signal"]


def _finite(cls: str, **values: float) -> None:
    for k, v in values.items():
        try:
            ok = math.isfinite(float(v))
        except (TypeError, ValueError):
            raise SignalError(f"{cls}: {k} must be a number, got {v!r}; pass a finite float.") \
                from None
        if not ok:
            raise SignalError(f"{cls}: {k} = {v!r} is not finite; pass a finite number.")


def _nonneg(cls: str, **values: float) -> None:
    for k, v in values.items():
        if v < 0:
            raise SignalError(f"{cls}: {k} = {v!r} is negative; frequencies and durations must "
                              f"be >= 0 (use a positive value).")


def _positive(cls: str, **values: float) -> None:
    for k, v in values.items():
        if not v > 0:
            raise SignalError(f"{cls}: {k} = {v!r} must be > 0; pass a positive value.")


class Signal:
    """Base class of the input signals (see the module docstring)."""

    kind: ClassVar[str] = ""

    #: last time at which the signal is defined; ``None`` = defined for all t
    @property
    def t_end(self) -> float | None:
        return None

    @property
    def t_start(self) -> float | None:
        """First time at which the signal is defined; ``None`` = defined for all t."""
        return None

    def __call__(self, t) -> np.ndarray:
        """Evaluate at times ``t`` (array-like of any shape) → float64 array of that shape."""
        t = np.asarray(t, dtype=float)
        return np.asarray(self._eval(t), dtype=float).reshape(t.shape)

    def _eval(self, t: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """JSON-serialisable description with a ``"kind"`` key (round-trips exactly)."""
        d: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if not f.init:
                continue
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                v = v.tolist()
            elif isinstance(v, tuple):
                v = list(v)
            d[f.name] = v
        return d

    def to_json(self) -> str:
        """``json.dumps(self.describe())``."""
        return json.dumps(self.describe())
