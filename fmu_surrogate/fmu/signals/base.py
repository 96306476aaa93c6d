"""The base class of the input signals (:mod:`fmu_surrogate.fmu.signals.standard` describes them) and
the checks of their parameters."""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
from typing import Any, ClassVar, NamedTuple

import numpy as np

from fmu_surrogate.fmu.errors import SignalError

__all__ = ["Signal", "SignalParameter"]


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


class SignalParameter(NamedTuple):
    """One constructor parameter of a signal kind, as its class documents it.

    Parameters
    ----------
    name : str
        Keyword of the constructor and of the description.
    type : str
        The type as the docstring gives it (``float``, ``(float, float)``, ...).
    shape : {"scalar", "pair", "list"}
        One value, exactly two numbers, or a sequence of numbers (from the field's annotation).
    default : Any
        The default value (``dataclasses.MISSING`` for none).
    meaning : str
        The docstring's description, on one line.
    """

    name: str
    type: str
    shape: str
    default: Any
    meaning: str


def _shape(annotation: str) -> str:
    a = str(annotation).replace(" ", "")
    if a == "tuple[float,float]":
        return "pair"
    if a.startswith(("tuple[", "np.ndarray", "Sequence[")):
        return "list"
    return "scalar"


def _documented_parameters(doc: str | None) -> dict[str, tuple[str, str]]:
    """``name -> (type, meaning)`` from a numpydoc *Parameters* section."""
    lines = inspect.cleandoc(doc or "").splitlines()
    out: dict[str, tuple[str, str]] = {}
    try:
        i = next(k for k in range(len(lines) - 1)
                 if lines[k].strip() == "Parameters" and set(lines[k + 1].strip()) == {"-"}) + 2
    except StopIteration:
        return out
    names: list[str] = []
    for line in lines[i:]:
        if line and not line[0].isspace():
            if " : " not in line and set(line.strip()) <= {"-"}:
                break
            head, _, typ = line.partition(" : ")
            if not typ and names:  # the next section's title
                break
            names = [n.strip() for n in head.split(",")]
            for n in names:
                out[n] = (typ.strip(), "")
        elif line.strip() and names:
            for n in names:
                typ, text = out[n]
                out[n] = (typ, f"{text} {line.strip()}".strip())
    return out


class Signal:
    """Base class of the input signals (see the module docstring)."""

    kind: ClassVar[str] = ""

    @classmethod
    def parameters(cls) -> tuple[SignalParameter, ...]:
        """The constructor's parameters with their type, default and meaning.

        Read from the class itself (its fields and the *Parameters* section of its docstring),
        so help texts such as the command line's list of signal kinds are never written twice.

        Returns
        -------
        tuple of SignalParameter
            In the constructor's order.
        """
        documented = _documented_parameters(cls.__doc__)
        out = []
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if not f.init:
                continue
            default = f.default
            if default is dataclasses.MISSING and f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            typ, meaning = documented.get(f.name, (str(f.type), ""))
            out.append(SignalParameter(f.name, typ, _shape(str(f.type)), default, meaning))
        return tuple(out)

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
