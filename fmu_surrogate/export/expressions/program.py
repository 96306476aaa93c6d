"""The expression representation of the exporters: small programs over named constant arrays.

    Program = statements (Let: t = expr;  Loop: for i < N { Let ...; s += expr }) + outputs

Expressions are numbers, state components ``x[j]``, temporaries, elements of named constant
arrays (``centres[i, j]`` with ``i`` the loop index or a fixed index) and the operations
``+ - * /``, negation, the power ``a^b`` (:func:`power`), the functions ``exp``, ``sin``,
``cos``, ``erf``, ``tanh``, ``abs`` and ``log1p`` (C99's; Modelica's, ``log1p(a)`` written
``log(1 + a)``), the smaller and larger of two numbers (:func:`minimum`, :func:`maximum`: C99's
``fmin``/``fmax``, Modelica's ``min``/``max``) and the choice ``c if a > b else d``
(:func:`if_greater`: C's ``a > b ? c : d``, Modelica's ``noEvent(if a > b then c else d)``) —
what a piecewise law such as a gap ridge's clip and step needs, evaluated without events (a
surrogate's functions run inside Newton iterations).  :func:`evaluate` runs a program with numpy (loops vectorised
over their index); :mod:`fmu_surrogate.export.expressions.render` writes it as C or as a Modelica function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from fmu_surrogate.errors import InvalidInputError

Array = NDArray[np.float64]

__all__ = ["FUNCTIONS", "LOOP", "Builder", "Let", "Loop", "Num", "Op", "Par", "Program", "State",
           "Tmp", "absolute", "add", "as_expr", "cos", "erf", "evaluate", "exp", "if_greater",
           "log1p", "maximum", "minimum", "mul", "power", "sin", "sub", "tanh"]

# -- the expression representation ---------------------------------------------------------------
class Expr:
    """Base of the expression nodes (``+``, ``-``, ``*``, ``/`` build :class:`Op` nodes)."""

    __slots__ = ()

    def __add__(self, other: Expr | float) -> Expr:
        return add(self, other)

    def __radd__(self, other: Expr | float) -> Expr:
        return add(other, self)

    def __sub__(self, other: Expr | float) -> Expr:
        return sub(self, other)

    def __mul__(self, other: Expr | float) -> Expr:
        return mul(self, other)

    def __rmul__(self, other: Expr | float) -> Expr:
        return mul(other, self)

    def __truediv__(self, other: Expr | float) -> Expr:
        return Op("/", (self, as_expr(other)))

    def __neg__(self) -> Expr:
        return mul(Num(-1.0), self)


@dataclass(frozen=True, eq=False)
class Num(Expr):
    """A floating-point constant."""

    value: float


@dataclass(frozen=True, eq=False)
class State(Expr):
    """The state component ``x[j]`` (0-based)."""

    j: int


@dataclass(frozen=True, eq=False)
class Tmp(Expr):
    """A temporary (scalar) defined by a :class:`Let` or summed by a :class:`Loop`."""

    name: str


class _LoopIndex:
    def __repr__(self) -> str:
        return "i"


#: the index of the enclosing :class:`Loop` (0-based), usable in :class:`Par` indices
LOOP = _LoopIndex()
Index = int | _LoopIndex


@dataclass(frozen=True, eq=False)
class Par(Expr):
    """Element ``name[idx]`` of a named constant array (``idx = ()`` for a scalar)."""

    name: str
    idx: tuple[Index, ...]


@dataclass(frozen=True, eq=False)
class Op(Expr):
    """``op`` applied to ``args``: n-ary ``+`` and ``*``, binary ``/``, ``pow``, ``min`` and
    ``max``, the 4-ary ``if>`` (``args[2] if args[0] > args[1] else args[3]``), or one of the
    unary :data:`FUNCTIONS`."""

    op: str
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Let:
    """``name = expr`` (a temporary; inside a loop body it is local to one iteration)."""

    name: str
    expr: Expr


@dataclass(frozen=True)
class Loop:
    """``s = 0 for every s; for i in 0..count-1: body; s += expr`` — a reduction over ``i``."""

    count: int
    body: tuple[Let, ...]
    sums: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True)
class Program:
    """Straight-line statements and loops computing the outputs (flattened row-major)."""

    statements: tuple[Let | Loop, ...]
    outputs: tuple[Expr, ...]
    shape: tuple[int, ...]


def as_expr(v: Expr | float) -> Expr:
    """``v`` as an expression (a number becomes :class:`Num`)."""
    return v if isinstance(v, Expr) else Num(float(v))


def _zero(e: Expr) -> bool:
    return isinstance(e, Num) and e.value == 0.0


def add(*terms: Expr | float) -> Expr:
    """Sum of the terms, structural zeros left out (``Num(0)`` if nothing remains)."""
    ts: list[Expr] = []
    for t in map(as_expr, terms):
        if isinstance(t, Op) and t.op == "+":
            ts.extend(t.args)
        elif not _zero(t):
            ts.append(t)
    return Num(0.0) if not ts else ts[0] if len(ts) == 1 else Op("+", tuple(ts))


def sub(a: Expr | float, b: Expr | float) -> Expr:
    """``a − b``."""
    b = as_expr(b)
    return as_expr(a) if _zero(b) else add(a, mul(Num(-1.0), b))


def mul(*factors: Expr | float) -> Expr:
    """Product of the factors (``Num(0)`` if one is a structural zero, ones left out)."""
    fs: list[Expr] = []
    for f in map(as_expr, factors):
        if _zero(f):
            return Num(0.0)
        if isinstance(f, Op) and f.op == "*":
            fs.extend(f.args)
        elif not (isinstance(f, Num) and f.value == 1.0):
            fs.append(f)
    return Num(1.0) if not fs else fs[0] if len(fs) == 1 else Op("*", tuple(fs))


def exp(a: Expr) -> Expr:
    """``exp(a)``."""
    return Op("exp", (a,))


def sin(a: Expr) -> Expr:
    """``sin(a)``."""
    return Op("sin", (a,))


def cos(a: Expr) -> Expr:
    """``cos(a)``."""
    return Op("cos", (a,))


def erf(a: Expr) -> Expr:
    """The error function ``erf(a)``."""
    return Op("erf", (a,))


def tanh(a: Expr) -> Expr:
    """``tanh(a)``."""
    return Op("tanh", (a,))


def absolute(a: Expr) -> Expr:
    """``|a|``."""
    return Op("abs", (a,))


def log1p(a: Expr) -> Expr:
    """``log(1 + a)``, accurate for small ``a`` where the language has it (C99)."""
    return Op("log1p", (a,))


def power(a: Expr | float, b: Expr | float) -> Expr:
    """``a^b`` (C's ``pow``; ``a ≥ 0`` unless ``b`` is an integer)."""
    return Op("pow", (as_expr(a), as_expr(b)))


def minimum(a: Expr | float, b: Expr | float) -> Expr:
    """The smaller of ``a`` and ``b`` (``np.minimum``, C99's ``fmin``, Modelica's ``min``)."""
    return Op("min", (as_expr(a), as_expr(b)))


def maximum(a: Expr | float, b: Expr | float) -> Expr:
    """The larger of ``a`` and ``b`` (``np.maximum``, C99's ``fmax``, Modelica's ``max``)."""
    return Op("max", (as_expr(a), as_expr(b)))


def if_greater(a: Expr | float, b: Expr | float, then: Expr | float,
               otherwise: Expr | float) -> Expr:
    """``then`` where ``a > b``, else ``otherwise`` (a step, a piecewise law; no event in
    Modelica).

    Parameters
    ----------
    a, b : Expr or float
        The compared values.
    then, otherwise : Expr or float
        The values where ``a > b`` and where not (both evaluated).
    """
    return Op("if>", tuple(as_expr(v) for v in (a, b, then, otherwise)))


#: the unary functions of the expressions and their numpy evaluations
FUNCTIONS: dict[str, Callable[[Any], Any]] = {"exp": np.exp, "sin": np.sin, "cos": np.cos,
                                               "erf": special.erf, "tanh": np.tanh,
                                               "abs": np.abs, "log1p": np.log1p}


# -- building programs -------------------------------------------------------------------------
@dataclass
class Builder:
    """Collects statements; temporaries get unique names ``t<k>`` (lets) and ``s<k>`` (sums)."""

    statements: list[Let | Loop] = field(default_factory=list)
    count: int = 0

    def let(self, expr: Expr, body: list[Let] | None = None) -> Expr:
        """A temporary holding ``expr`` (appended to ``body`` inside a loop); leaves as they are."""
        if isinstance(expr, (Num, State, Tmp, Par)):
            return expr
        self.count += 1
        name = f"t{self.count}"
        (self.statements if body is None else body).append(Let(name, expr))
        return Tmp(name)

    def loop(self, count: int, make: Callable[[list[Let]], list[Expr]]) -> list[Expr]:
        """A reduction: ``make(body)`` appends the body's lets and returns the summands."""
        body: list[Let] = []
        summands = make(body)
        names = []
        for _ in summands:
            self.count += 1
            names.append(f"s{self.count}")
        self.statements.append(Loop(count, tuple(body), tuple(zip(names, summands))))
        return [Tmp(n) for n in names]


# -- the numpy rendering -------------------------------------------------------------------------
def _value(e: Expr, env: dict[str, Any], x: Array, params: dict[str, Array]) -> Any:
    if isinstance(e, Num):
        return e.value
    if isinstance(e, State):
        return x[:, e.j : e.j + 1]
    if isinstance(e, Tmp):
        return env[e.name]
    if isinstance(e, Par):
        a = params[e.name]
        if any(k is LOOP for k in e.idx):
            return a[tuple(slice(None) if k is LOOP else k for k in e.idx)][None, :]
        return a[e.idx] if e.idx else float(a)
    vals = [_value(a, env, x, params) for a in e.args]
    if e.op == "+":
        return sum(vals[1:], vals[0])
    if e.op == "*":
        out = vals[0]
        for v in vals[1:]:
            out = out * v
        return out
    if e.op == "/":
        return vals[0] / vals[1]
    if e.op == "pow":
        return np.power(vals[0], vals[1])
    if e.op == "min":
        return np.minimum(vals[0], vals[1])
    if e.op == "max":
        return np.maximum(vals[0], vals[1])
    if e.op == "if>":
        return np.where(np.greater(vals[0], vals[1]), vals[2], vals[3])
    if e.op in FUNCTIONS:
        return FUNCTIONS[e.op](vals[0])
    raise InvalidInputError(f"unknown operation {e.op!r}")


def evaluate(program: Program, params: dict[str, Array], x: Array) -> Array:
    """Evaluate ``program`` at the rows of ``x`` ((M, n) -> (M, *program.shape)), loops
    vectorised over their index.

    Parameters
    ----------
    program : Program
        The program.
    params : dict of str to ndarray
        Its constant arrays.
    x : ndarray, shape (M, n)
        States.
    """
    M = x.shape[0]
    env: dict[str, Any] = {}
    for st in program.statements:
        if isinstance(st, Let):
            env[st.name] = _value(st.expr, env, x, params)
            continue
        local = dict(env)
        for let in st.body:
            local[let.name] = _value(let.expr, local, x, params)
        for name, expr in st.sums:
            v = np.broadcast_to(_value(expr, local, x, params), (M, st.count))
            env[name] = v.sum(axis=1, keepdims=True)
    out = np.empty((M, len(program.outputs)))
    for k, expr in enumerate(program.outputs):
        out[:, k] = np.broadcast_to(_value(expr, env, x, params), (M, 1))[:, 0]
    return out.reshape((M, *program.shape))
