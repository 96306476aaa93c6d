"""Text renderings of the expression programs of :mod:`fmu_surrogate.export.expressions.effort`
and :mod:`fmu_surrogate.export.expressions.dissipation`: C99 (only ``<math.h>``) and Modelica
functions.  Numbers are written with Python's shortest
round-trip representation, so every double survives the trip into the generated source.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from fmu_surrogate.export.expressions.dissipation import dissipation_expressions
from fmu_surrogate.export.expressions.effort import (
    EffortExpressions,
    ExportError,
    effort_expressions,
)
from fmu_surrogate.export.expressions.program import (
    LOOP,
    Expr,
    Let,
    Num,
    Op,
    Par,
    Program,
    State,
    Tmp,
)

_C_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def number(v: float) -> str:
    """Shortest round-trip literal of a finite double, valid in C and Modelica."""
    v = float(v)
    if not np.isfinite(v):
        raise ExportError(f"cannot write the non-finite number {v} into generated code.")
    s = repr(v)
    return s if ("." in s or "e" in s) else s + ".0"


def _neg(e: Expr) -> Expr | None:
    """``b`` if ``e`` is ``−1·b`` (a product led by −1), else ``None``."""
    if isinstance(e, Op) and e.op == "*" and isinstance(e.args[0], Num) and e.args[0].value == -1:
        rest = e.args[1:]
        return rest[0] if len(rest) == 1 else Op("*", rest)
    return None


#: the unary functions in C99 (``<math.h>``) and in Modelica (language and MSL): templates with
#: ``$`` standing for the argument
C_FUNCTIONS = {"exp": "exp($)", "sin": "sin($)", "cos": "cos($)", "erf": "erf($)",
               "tanh": "tanh($)", "abs": "fabs($)", "log1p": "log1p($)"}
MODELICA_FUNCTIONS = {"exp": "exp($)", "sin": "sin($)", "cos": "cos($)",
                      "erf": "Modelica.Math.Special.erf($)", "tanh": "tanh($)", "abs": "abs($)",
                      "log1p": "log(1 + $)"}


def _expr(e: Expr, leaf: Callable[[Expr], str], first: bool = True,
          fns: dict[str, str] = C_FUNCTIONS) -> str:
    """Infix text valid in C and Modelica (unary minus only where Modelica allows it: at the
    start of a sum, else in parentheses); evaluation order as the tree says; ``fns`` names the
    unary functions (and with them the language: ``min``/``max`` are C99's ``fmin``/``fmax``,
    ``if>`` a parenthesised ``?:`` in C and a ``noEvent(if … then … else …)`` in Modelica)."""
    if isinstance(e, Num):
        s = number(e.value)
        return s if first or not s.startswith("-") else f"({s})"
    if not isinstance(e, Op):
        return leaf(e)
    if e.op in fns:
        return fns[e.op].replace("$", _expr(e.args[0], leaf, True, fns))
    if e.op == "pow":
        a, b = (_expr(v, leaf, True, fns) for v in e.args)
        return f"pow({a}, {b})" if fns is C_FUNCTIONS else f"({a})^({b})"
    if e.op in ("min", "max"):
        a, b = (_expr(v, leaf, True, fns) for v in e.args)
        return f"{'f' if fns is C_FUNCTIONS else ''}{e.op}({a}, {b})"
    if e.op == "if>":
        # Modelica: noEvent, as a surrogate's functions are evaluated inside Newton iterations
        a, b, then, other = (_expr(v, leaf, True, fns) for v in e.args)
        if fns is C_FUNCTIONS:
            return f"({a} > {b} ? {then} : {other})"
        return f"noEvent(if {a} > {b} then {then} else {other})"
    if e.op == "+":
        out = _expr(e.args[0], leaf, True, fns)
        for a in e.args[1:]:
            b = _neg(a)
            if b is not None:
                out += " - " + _factor(b, leaf, fns)
            elif isinstance(a, Num) and a.value < 0:
                out += " - " + number(-a.value)
            else:
                out += " + " + _expr(a, leaf, False, fns)
        return out if first else f"({out})"
    b = _neg(e)
    if b is not None:
        s = "-" + _factor(b, leaf, fns)
        return s if first else f"({s})"
    if e.op == "*":
        return "*".join(_factor(a, leaf, fns) for a in e.args)
    num, den = e.args
    den_s = _expr(den, leaf, False, fns)
    if isinstance(den, Op) and den.op in "*/":
        den_s = f"({den_s})"
    return f"{_factor(num, leaf, fns)}/{den_s}"


def _factor(e: Expr, leaf: Callable[[Expr], str], fns: dict[str, str]) -> str:
    """``e`` as an operand of ``*`` or ``/``: sums, quotients and negations in parentheses."""
    s = _expr(e, leaf, False, fns)
    return f"({s})" if isinstance(e, Op) and e.op == "/" else s


# -- C -------------------------------------------------------------------------------------------
def _c_leaf(params: dict[str, np.ndarray], prefix: str) -> Callable[[Expr], str]:
    def leaf(e: Expr) -> str:
        if isinstance(e, State):
            return f"x[{e.j}]"
        if isinstance(e, Tmp):
            return e.name
        assert isinstance(e, Par)
        shape = params[e.name].shape
        if not e.idx:
            return f"{prefix}_{e.name}"
        terms, stride = [], 1
        for k, size in reversed(list(zip(e.idx, shape))):
            terms.append(("i" if stride == 1 else f"i*{stride}") if k is LOOP else k * stride)
            stride *= size
        fixed = sum(t for t in terms if isinstance(t, int))
        flat = [t for t in terms if isinstance(t, str)][::-1] + ([str(fixed)] if fixed else [])
        return f"{prefix}_{e.name}[{' + '.join(flat) or '0'}]"

    return leaf


def _c_body(prog: Program, leaf: Callable[[Expr], str], out: str) -> list[str]:
    lines = []
    for st in prog.statements:
        if isinstance(st, Let):
            lines.append(f"    const double {st.name} = {_expr(st.expr, leaf)};")
            continue
        lines.append("    " + "double " + ", ".join(f"{s} = 0.0" for s, _ in st.sums) + ";")
        lines.append(f"    for (int i = 0; i < {st.count}; ++i) {{")
        lines += [f"        const double {b.name} = {_expr(b.expr, leaf)};" for b in st.body]
        lines += [f"        {s} += {_expr(e, leaf)};" for s, e in st.sums]
        lines.append("    }")
    if not prog.shape:
        lines.append(f"    return {_expr(prog.outputs[0], leaf)};")
    else:
        lines += [f"    {out}[{k}] = {_expr(e, leaf)};" for k, e in enumerate(prog.outputs)]
    if not any("x[" in line for line in lines):
        lines.insert(0, "    (void)x;")
    return lines


def _c_array(name: str, a: np.ndarray) -> str:
    if a.ndim == 0:
        return f"static const double {name} = {number(a)};"
    flat = [number(v) for v in a.reshape(-1)] or ["0.0"]  # C has no empty arrays: one unused 0
    rows = [", ".join(flat[k : k + 4]) for k in range(0, len(flat), 4)]
    body = ",\n    ".join(rows)
    return (f"/* shape {tuple(a.shape)}, row-major */\n"
            f"static const double {name}[{len(flat)}] = {{\n    {body}\n}};")


def _check_prefix(prefix: str) -> None:
    if not isinstance(prefix, str) or not _C_IDENT.match(prefix):
        raise ExportError(f"prefix {prefix!r} is not a C identifier; use letters, digits and "
                          f"underscores, not starting with a digit.")


def render_c(ex: EffortExpressions, prefix: str) -> str:
    """C99 source of the three programs (see :func:`effort_c_source`).

    Parameters
    ----------
    ex : EffortExpressions
        The programs.
    prefix : str
        Prefix of the generated names (a C identifier).
    """
    _check_prefix(prefix)
    leaf = _c_leaf(ex.params, prefix)
    p = prefix
    out = [f"/* effort of {ex.kind}: z(x), dz/dx and H(x); generated by fmu_surrogate.export */",
           "#include <math.h>", "", f"#define {p}_N {ex.n}",
           f"#define {p}_HAS_H {int(ex.H is not None)}", ""]
    out += [_c_array(f"{p}_{name}", a) for name, a in ex.params.items()]
    # static inline: where the step needs both at one point, the compiler that inlines them
    # computes their common transcendental terms once (a ridge's tanh: 8.5 % of an order-3
    # surrogate's step); the arithmetic is the same either way (no contraction in ISO C)
    out += ["", f"static inline void {p}_z(const double *x, double *z)", "{"]
    out += _c_body(ex.z, leaf, "z") + ["}", ""]
    out += [f"/* dz[i*{ex.n} + j] = dz_i/dx_j */",
            f"static inline void {p}_dz(const double *x, double *dz)", "{"]
    out += _c_body(ex.dz, leaf, "dz") + ["}", ""]
    out += [f"static double {p}_H(const double *x)", "{"]
    out += _c_body(ex.H, leaf, "H") if ex.H is not None else ["    (void)x;", "    return NAN;"]
    out += ["}", ""]
    return "\n".join(out)


# -- Modelica ------------------------------------------------------------------------------------
def used_params(prog: Program) -> list[str]:
    """Names of the constant arrays a program reads, in order of first use."""
    seen: dict[str, None] = {}

    def walk(e: Expr) -> None:
        if isinstance(e, Par):
            seen.setdefault(e.name)
        elif isinstance(e, Op):
            for a in e.args:
                walk(a)

    for st in prog.statements:
        for ex in ([st.expr] if isinstance(st, Let) else
                   [b.expr for b in st.body] + [s for _, s in st.sums]):
            walk(ex)
    for ex in prog.outputs:
        walk(ex)
    return list(seen)


def _mo_leaf(names: dict[str, str]) -> Callable[[Expr], str]:
    def leaf(e: Expr) -> str:
        if isinstance(e, State):
            return f"x[{e.j + 1}]"
        if isinstance(e, Tmp):
            return e.name
        assert isinstance(e, Par)
        if not e.idx:
            return names[e.name]
        idx = ", ".join("i" if k is LOOP else str(k + 1) for k in e.idx)
        return f"{names[e.name]}[{idx}]"

    return leaf


def _mo_dims(shape: tuple[int, ...]) -> str:
    return f"[{', '.join(map(str, shape))}]" if shape else ""


def render_modelica_function(prog: Program, name: str, output: str, params: dict[str, np.ndarray],
                             names: dict[str, str], comment: str, n: int,
                             annotation: str = "", argument: str = "State") -> str:
    """A Modelica function ``output = name(x, <params the program reads>)``.

    Parameters
    ----------
    prog : Program
        The program.
    name : str
        The function's name.
    output : str
        Name of its output (an array of ``prog.shape``).
    params : dict of str to ndarray
        The constant arrays (for their shapes).
    names : dict of str to str
        Modelica name of each constant array.
    comment : str
        Description string.
    n : int
        State dimension.
    annotation : str
        Text of an ``annotation(...)`` of the function, if any.
    argument : str
        Description of the argument ``x`` (the state, or the effort of a dissipation law).
    """
    leaf = _mo_leaf(names)

    def mo(e: Expr) -> str:
        return _expr(e, leaf, True, MODELICA_FUNCTIONS)

    decl = [f"    input Real x[{n}] \"{argument}\";"]
    decl += [f"    input Real {names[p]}{_mo_dims(params[p].shape)};" for p in used_params(prog)]
    decl.append(f"    output Real {output}{_mo_dims(prog.shape)};")
    temps, body = [], []
    for st in prog.statements:
        if isinstance(st, Let):
            temps.append(st.name)
            body.append(f"    {st.name} := {mo(st.expr)};")
            continue
        temps += [s for s, _ in st.sums] + [b.name for b in st.body]
        body += [f"    {s} := 0;" for s, _ in st.sums]
        body.append(f"    for i in 1:{st.count} loop")
        body += [f"      {b.name} := {mo(b.expr)};" for b in st.body]
        body += [f"      {s} := {mo(Op('+', (Tmp(s), e)))};" for s, e in st.sums]
        body.append("    end for;")
    shape = prog.shape
    for k, e in enumerate(prog.outputs):
        idx = np.unravel_index(k, shape) if shape else ()
        sub = f"[{', '.join(str(int(j) + 1) for j in idx)}]" if shape else ""
        body.append(f"    {output}{sub} := {mo(e)};")
    lines = [f"  function {name} \"{comment}\""] + decl
    if temps:
        lines += ["  protected"] + [f"    Real {t};" for t in temps]
    lines += ["  algorithm"] + body
    if annotation:
        lines.append(f"    annotation({annotation});")
    lines.append(f"  end {name};")
    return "\n".join(lines)


def effort_c_source(system: Any, prefix: str = "eff") -> str:
    """C99 source (only ``<math.h>``) of ``z(x)``, ``∂z/∂x`` and ``H(x)`` as static functions.

    ``static inline void P_z(const double *x, double *z)``, ``static inline void P_dz(const
    double *x, double *dz)`` (``dz[i*n + j] = ∂z_i/∂x_j``), ``static double P_H(const double
    *x)`` (``NAN`` without a Hamiltonian) and the macros ``P_N`` (the state dimension) and ``P_HAS_H`` (0 or 1),
    ``P`` being ``prefix``.  Constant arrays are embedded with round-trip precision and kernel
    sums are C loops over them.

    Parameters
    ----------
    system : PHDAE, LinearPH or effort
        The surrogate or its effort.
    prefix : str
        Prefix of every generated name (a C identifier).

    Returns
    -------
    str
        The C source.

    Raises
    ------
    UnsupportedEffortError, ExportError
        As :func:`effort_expressions`; an invalid ``prefix``.
    """
    return render_c(effort_expressions(system), prefix)


def dissipation_c_source(dissipation: Any, prefix: str = "dis") -> str:
    """C99 source of a power-law dissipation's force, its Jacobian and its rate.

    ``static inline`` functions ``void P_f(const double *x, double *f)`` (``F(z) = R_nl(z) z``
    at the effort ``x``), ``void P_df(const double *x, double *df)`` (``df[i*n + j] =
    ∂F_i/∂z_j``), ``double P_rate(const double *x)`` (``zᵀR_nl(z)z``), ``void P_fr(const
    double *x, double *fr)`` (``F(z)`` in ``fr[0 … n−1]`` and the rate in ``fr[n]``, bit for bit ``P_f``'s
    and ``P_rate``'s from one evaluation of their common terms) and the macro ``P_K`` (the
    number of terms), ``P`` being ``prefix``
    (:mod:`fmu_surrogate.export.expressions.dissipation`).

    Parameters
    ----------
    dissipation : PowerDissipation
        The state-dependent dissipation of a ``NonlinearPH`` (at least one term).
    prefix : str
        Prefix of every generated name (a C identifier).

    Returns
    -------
    str
        The C source.

    Raises
    ------
    ExportError
        As :func:`~fmu_surrogate.export.expressions.dissipation.dissipation_expressions`; an
        invalid ``prefix``.
    """
    _check_prefix(prefix)
    ex = dissipation_expressions(dissipation)
    leaf = _c_leaf(ex.params, prefix)
    p = prefix
    out = [(f"/* dissipation {ex.kind}: F(z) = R_nl(z) z, dF/dz and z'R_nl(z)z; generated by "
            "fmu_surrogate.export */"), "#include <math.h>", "",
           f"#define {p}_K {dissipation.n_terms}", ""]
    out += [_c_array(f"{p}_{name}", a) for name, a in ex.params.items()]
    # static inline: a user of the functions calls those it needs, no compiler warns of the rest
    out += ["", f"static inline void {p}_f(const double *x, double *f)", "{"]
    out += _c_body(ex.force, leaf, "f") + ["}", ""]
    out += [f"/* df[i*{ex.n} + j] = dF_i/dz_j */",
            f"static inline void {p}_df(const double *x, double *df)", "{"]
    out += _c_body(ex.dforce, leaf, "df") + ["}", ""]
    out += [f"static inline double {p}_rate(const double *x)", "{"]
    out += _c_body(ex.rate, leaf, "rate") + ["}", ""]
    out += [f"/* fr[0 .. {ex.n - 1}] = F(z), fr[{ex.n}] = z'R_nl(z)z */",
            f"static inline void {p}_fr(const double *x, double *fr)", "{"]
    out += _c_body(ex.force_rate, leaf, "fr") + ["}", ""]
    return "\n".join(out)
