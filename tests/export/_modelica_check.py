"""A small checker of generated Modelica models, independent of the generator.

Parsing is the Modelica 3.5 grammar of the ``modelicalang`` package (Arpeggio PEG); on its parse
tree this module reads the declarations of one model and its functions, counts unknowns and
equations, finds declared names that nothing uses, and evaluates the subset of Modelica the
exporter writes with numpy: parameters from their bindings, equation residuals for given values
of the unknowns, and calls of the model's functions (algorithm sections with ``for`` loops,
1-based indexing) — so the equations are checked numerically from their text.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from arpeggio import EOF, ParserPython
from arpeggio import NonTerminal as _ArpNode
from modelicalang import v3_5
from scipy.special import erf

_S = v3_5.Syntax
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# the functions generated models call: Modelica's built-in ones and the MSL's erf (and the
# built-in min and max of two scalars and noEvent, in Evaluator.call)
_FUNCTIONS = {"exp": np.exp, "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "abs": np.abs,
              "log": np.log, "Modelica.Math.Special.erf": erf}
_RELATIONS = {">": np.greater, "<": np.less, ">=": np.greater_equal, "<=": np.less_equal,
              "==": np.equal, "<>": np.not_equal}
_INPUT_TYPES = {"Modelica.Blocks.Interfaces.RealInput"}
_OUTPUT_TYPES = {"Modelica.Blocks.Interfaces.RealOutput"}


def _root():
    return _S.stored_definition, EOF


class Terminal:
    """A token of the simplified parse tree."""

    def __init__(self, rule_name: str, value: str) -> None:
        self.rule_name, self.value = rule_name, value

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0


class NonTerminal(list):
    """A rule of the simplified parse tree (a list of its children)."""

    def __init__(self, rule_name: str, kids: list) -> None:
        super().__init__(kids)
        self.rule_name = rule_name


def _simplify(n: Any) -> Any:
    """Arpeggio's tree with every rule of a single child replaced by that child, and the
    right-recursive ``*_non_first`` lists of the grammar flattened into their parent."""
    if not isinstance(n, _ArpNode):
        return Terminal(n.rule_name, n.value)
    kids = []
    for k in n:
        if k.rule_name == "EOF":
            continue
        s = _simplify(k)
        if isinstance(s, NonTerminal) and s.rule_name.endswith("_non_first"):
            kids.extend(s)
        else:
            kids.append(s)
    return kids[0] if len(kids) == 1 else NonTerminal(n.rule_name, kids)


@functools.lru_cache(maxsize=1)
def _parser() -> ParserPython:
    with _S:
        return ParserPython(_root, comment_def=_S.COMMENT)


def parse(text: str) -> Any:
    """Simplified parse tree of a stored definition (arpeggio.NoMatch on a syntax error)."""
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))  # the grammar nests once per array element
    try:
        with _S:
            return _simplify(_parser().parse(text))
    finally:
        sys.setrecursionlimit(limit)


def _kids(n: Any) -> list:
    return list(n) if isinstance(n, NonTerminal) else []


def _collapse(n: Any) -> Any:
    while isinstance(n, NonTerminal) and len(n) == 1:
        n = n[0]
    return n


def _find(n: Any, rule: str) -> list:
    """All nodes named ``rule`` below ``n`` (not descending into matches)."""
    if getattr(n, "rule_name", "") == rule:
        return [n]
    return [m for c in _kids(n) for m in _find(c, rule)]


def _idents(n: Any) -> set[str]:
    if isinstance(n, Terminal):
        return {n.value} if _IDENT.match(n.value) else set()
    return set().union(*(_idents(c) for c in n)) if len(n) else set()


def _text(n: Any) -> str:
    return n.value if isinstance(n, Terminal) else " ".join(_text(c) for c in n)


@dataclass
class Component:
    name: str
    type: str
    prefix: str  # "parameter", "input", "output" or ""
    dims: tuple[int, ...]
    binding: Any
    modifiers: dict[str, Any]
    protected: bool


@dataclass
class ClassDef:
    kind: str
    name: str
    components: dict[str, Component] = field(default_factory=dict)
    classes: dict[str, ClassDef] = field(default_factory=dict)
    equations: list = field(default_factory=list)
    initial_equations: list = field(default_factory=list)
    algorithm: list = field(default_factory=list)
    annotation: str = ""
    within: str | None = None


def _type_name(n: Any) -> str:
    return "".join(_text(n).split())


def _component_clause(n: Any, protected: bool) -> Component:
    kids = list(n)
    prefix, k = "", 0
    while isinstance(kids[k], Terminal) and kids[k].value in ("parameter", "input", "output",
                                                              "constant"):
        prefix = kids[k].value
        k += 1
    typ = _type_name(kids[k])
    decl = kids[k + 1]
    if decl.rule_name == "component_declaration":
        decl = decl[0]
    if decl.rule_name == "component_list":
        raise ValueError("several declarations in one clause are not in the checked subset")
    parts = [decl] if isinstance(decl, Terminal) else list(decl)
    dims: tuple[int, ...] = ()
    binding, mods = None, {}
    for p in parts[1:]:
        if p.rule_name == "array_subscripts":
            dims = tuple(int(t.value) for t in p if t.rule_name == "UNSIGNED_NUMBER")
        elif p.rule_name == "class_modification":
            mods.update(_class_mods(p))
        elif p.rule_name == "modification":
            ps = list(p)
            if ps[0].rule_name == "class_modification":
                mods.update(_class_mods(ps[0]))
            binding = ps[-1]
    return Component(parts[0].value, typ, prefix, dims, binding, mods, protected)


def _class_mods(n: Any) -> dict[str, Any]:
    mods = {}
    for em in _find(n, "element_modification"):
        parts = list(em)
        mods[parts[0].value] = list(parts[1])[-1]
    return mods


def _class(n: Any) -> ClassDef:
    kind = n[0].value
    spec = n[1]
    name = spec[0].value
    c = ClassDef(kind, name)
    comp = _find(spec, "composition")[0]
    protected = False
    section = None
    for part in comp:
        rn = part.rule_name
        if rn == "PROTECTED":
            protected = True
        elif rn == "element_list" or rn in ("component_clause", "class_definition"):
            elems = [part] if rn != "element_list" else list(part)
            for e in elems:
                if e.rule_name == "component_clause":
                    cp = _component_clause(e, protected)
                    c.components[cp.name] = cp
                elif e.rule_name == "class_definition":
                    sub = _class(e)
                    c.classes[sub.name] = sub
        elif rn == "equation_section":
            initial = any(getattr(t, "value", "") == "initial" for t in part)
            target = c.initial_equations if initial else c.equations
            target += [e for e in part if e.rule_name == "equation"]
        elif rn == "algorithm_section":
            c.algorithm += [s for s in part if s.rule_name in ("statement", "for_statement")]
        elif rn == "annotation_clause" or (rn == "ANNOTATION"):
            section = part
    ann = _find(comp, "annotation_clause")
    c.annotation = _text(ann[-1]) if ann and section is not None or ann else ""
    return c


def model(text: str) -> ClassDef:
    """The first class of a ``.mo`` text (with its ``within``)."""
    sd = parse(text)
    within = None
    kids = list(sd)
    if kids and getattr(kids[0], "value", "") == "within":
        within = _text(kids[1]) if kids[1].value != ";" else ""
    c = _class(_find(sd, "class_definition")[0])
    c.within = within
    return c


# -- evaluation --------------------------------------------------------------------------------
class Evaluator:
    """Evaluate expressions of a model: parameters, residuals and function calls."""

    def __init__(self, cls: ClassDef) -> None:
        self.cls = cls
        self.params: dict[str, Any] = {}
        for c in cls.components.values():
            if c.prefix == "parameter" and c.binding is not None:
                self.params[c.name] = self.expr(c.binding, self.params)

    # expressions
    def expr(self, n: Any, env: dict[str, Any]) -> Any:
        n = _collapse(n)
        if isinstance(n, Terminal):
            if n.rule_name == "UNSIGNED_NUMBER":
                return float(n.value)
            if n.value in ("true", "false"):
                return n.value == "true"
            return env[n.value]
        rn, kids = n.rule_name, list(n)
        if rn == "component_reference":
            return self._ref(kids, env)
        if rn == "arithmetic_expression":
            k, sign = 0, 1.0
            if isinstance(kids[0], Terminal) and kids[0].value in "+-":
                sign, k = (-1.0 if kids[0].value == "-" else 1.0), 1
            val = sign * np.asarray(self.expr(kids[k], env))
            for op, t in zip(kids[k + 1 :: 2], kids[k + 2 :: 2]):
                rhs = np.asarray(self.expr(t, env))
                if np.shape(val) != np.shape(rhs):
                    raise ValueError(f"size mismatch {np.shape(val)} vs {np.shape(rhs)} in "
                                     f"{_text(n)!r}")
                val = val + rhs if op.value == "+" else val - rhs
            return val
        if rn == "term":
            val = self.expr(kids[0], env)
            for op, f in zip(kids[1::2], kids[2::2]):
                rhs = self.expr(f, env)
                if op.value == "*":
                    both = np.ndim(val) >= 1 and np.ndim(rhs) >= 1
                    val = np.asarray(val) @ np.asarray(rhs) if both else np.multiply(val, rhs)
                elif op.value == "/":
                    if np.ndim(rhs):
                        raise ValueError(f"division by an array in {_text(n)!r}")
                    val = np.divide(val, rhs)
                else:
                    raise ValueError(f"operator {op.value!r} is not in the checked subset")
            return val
        if rn == "factor":
            return np.power(self.expr(kids[0], env), self.expr(kids[2], env))
        if rn == "relation":
            a, op, b = kids
            if op.value not in _RELATIONS:
                raise ValueError(f"relation {op.value!r} is not in the checked subset")
            return _RELATIONS[op.value](self.expr(a, env), self.expr(b, env))
        if rn == "expression" and getattr(kids[0], "value", "") == "if":
            # if c1 then e1 elseif c2 then e2 ... else e: element-wise, every branch evaluated
            conds = [self.expr(c, env) for c in kids[1:-2:4]]
            vals = [self.expr(v, env) for v in kids[3:-2:4]] + [self.expr(kids[-1], env)]
            out = vals[-1]
            for c, v in zip(reversed(conds), reversed(vals[:-1])):
                out = np.where(c, v, out)
            return out
        if rn == "primary":
            first = kids[0]
            if getattr(first, "value", "") == "{":
                args = [self.expr(a, env) for a in self._args(kids[1])]
                return np.array(args, dtype=float)
            if getattr(first, "value", "") == "(":
                return self.expr(kids[1], env)
            fname = _type_name(first)
            if fname == "der":
                return env[("der", _text(self._args(kids[1])[0]))]
            args = [self.expr(a, env) for a in self._args(kids[1])]
            return self.call(fname, args, env)
        raise ValueError(f"{rn} is not in the checked subset: {_text(n)!r}")

    @staticmethod
    def _args(n: Any) -> list:
        n = _collapse(n)
        if getattr(n, "rule_name", "") == "function_call_args":
            inner = [k for k in n if getattr(k, "value", None) not in ("(", ")")]
            if not inner:
                return []
            n = _collapse(inner[0])
        if getattr(n, "rule_name", "") in ("array_arguments", "function_arguments",
                                           "function_arguments_non_first",
                                           "array_arguments_non_first"):
            out = []
            for k in n:
                if getattr(k, "value", None) == ",":
                    continue
                if getattr(k, "rule_name", "") in ("function_arguments_non_first",
                                                   "array_arguments_non_first"):
                    out += Evaluator._args(k)
                else:
                    out.append(k)
            return out
        return [n]

    def _ref(self, kids: list, env: dict[str, Any]) -> Any:
        val = env[kids[0].value]
        if len(kids) > 1:
            if kids[1].rule_name != "array_subscripts":
                raise ValueError("dotted references are not in the checked subset")
            idx = []
            for s in kids[1]:
                if getattr(s, "value", None) in ("[", "]", ","):
                    continue
                v = self.expr(s, env)
                if float(v) != int(v) or int(v) < 1:
                    raise IndexError(f"subscript {v} is not a 1-based index")
                idx.append(int(v) - 1)
            val = np.asarray(val)[tuple(idx)]
        return val

    def call(self, fname: str, args: list, env: dict[str, Any]) -> Any:
        if fname in _FUNCTIONS:
            return _FUNCTIONS[fname](args[0])
        if fname in ("min", "max"):  # the built-ins of two scalars
            if len(args) != 2 or np.ndim(args[0]) or np.ndim(args[1]):
                raise ValueError(f"{fname} takes two scalars, got {args}")
            return (np.minimum if fname == "min" else np.maximum)(args[0], args[1])
        if fname == "noEvent":  # the value of its argument (no event is the evaluator's way)
            if len(args) != 1:
                raise ValueError(f"noEvent takes one expression, got {args}")
            return args[0]
        if fname == "transpose":
            return np.asarray(args[0]).T
        if fname == "zeros":  # the built-in array of zeros, zeros(n1, n2, ...)
            return np.zeros([int(a) for a in args])
        fn = self.cls.classes.get(fname)
        if fn is None or fn.kind != "function":
            raise ValueError(f"unknown function {fname!r}")
        return self.run_function(fn, args)

    def call_at(self, fname: str, x: Any) -> Any:
        """Call the model's function ``fname`` at state ``x`` with the model's parameters as
        its other inputs (by name)."""
        fn = self.cls.classes[fname]
        rest = [self.params[c.name] for c in fn.components.values()
                if c.prefix == "input" and c.name != "x"]
        return self.call(fname, [x, *rest], {})

    def run_function(self, fn: ClassDef, args: list) -> Any:
        ins = [c for c in fn.components.values() if c.prefix == "input"]
        outs = [c for c in fn.components.values() if c.prefix == "output"]
        if len(args) != len(ins):
            raise ValueError(f"{fn.name} takes {len(ins)} inputs, got {len(args)}")
        local: dict[str, Any] = {}
        for c, a in zip(ins, args):
            if np.shape(a) != c.dims:
                raise ValueError(f"{fn.name}: input {c.name} has dims {c.dims}, got "
                                 f"{np.shape(a)}")
            local[c.name] = np.asarray(a, dtype=float)
        for c in fn.components.values():
            if c.prefix != "input":
                local[c.name] = np.full(c.dims, np.nan)
        self._statements(fn.algorithm, local)
        out = local[outs[0].name]
        if np.any(np.isnan(out)):
            raise ValueError(f"{fn.name} leaves part of {outs[0].name} unassigned")
        return out

    def _statements(self, stmts: list, env: dict[str, Any]) -> None:
        for st in stmts:
            if st.rule_name == "for_statement":
                kids = list(st)
                idx = _find(st, "for_index")[0]
                var = idx[0].value
                rng = _collapse(list(idx)[2])
                lo, hi = (self.expr(k, env) for k in list(rng)[::2])
                body = [k for k in kids if k.rule_name in ("statement", "for_statement")]
                for i in range(int(lo), int(hi) + 1):
                    env[var] = float(i)
                    self._statements(body, env)
                env.pop(var)
                continue
            kids = list(st)
            target, value = _collapse(kids[0]), self.expr(kids[2], env)
            if isinstance(target, Terminal):
                if np.shape(env[target.value]) != np.shape(value):
                    raise ValueError(f"assignment of {np.shape(value)} to {target.value}")
                env[target.value] = np.array(value, dtype=float) if np.ndim(value) else value
            else:
                name, subs = target[0].value, target[1]
                idx = tuple(int(self.expr(s, env)) - 1 for s in subs
                            if getattr(s, "value", None) not in ("[", "]", ","))
                env[name][idx] = value


def unknowns(cls: ClassDef) -> dict[str, int]:
    """Scalar size of every unknown of the model (not parameter, constant or input)."""
    return {c.name: int(np.prod(c.dims)) for c in cls.components.values()
            if c.prefix not in ("parameter", "constant", "input") and c.type not in _INPUT_TYPES}


def residuals(cls: ClassDef, values: dict[str, Any], der: dict[str, Any],
              initial: bool = False) -> list[tuple[str, np.ndarray]]:
    """``lhs − rhs`` of every equation, for values of the unknowns, inputs and derivatives."""
    ev = Evaluator(cls)
    env: dict[str, Any] = dict(ev.params)
    env.update(values)
    for k, v in der.items():
        env[("der", k)] = v
    out = []
    for eq in (cls.initial_equations if initial else cls.equations):
        lhs, rhs = eq[0], eq[2]
        a, b = ev.expr(lhs, env), ev.expr(rhs, env)
        if np.shape(a) != np.shape(b):
            raise ValueError(f"sides of different sizes in {_text(eq)!r}")
        out.append((_text(eq), np.atleast_1d(np.asarray(a, dtype=float) - b)))
    return out


def used_names(cls: ClassDef) -> set[str]:
    """Identifiers that occur in equations, bindings and modifiers of the model."""
    used: set[str] = set()
    for eq in cls.equations + cls.initial_equations:
        used |= _idents(eq)
    for c in cls.components.values():
        if c.binding is not None:
            used |= _idents(c.binding)
        for v in c.modifiers.values():
            used |= _idents(v)
    return used


def function_unused(fn: ClassDef) -> set[str]:
    """Inputs and locals of a function that its algorithm never reads or writes."""
    names: set[str] = set()
    for st in fn.algorithm:
        names |= _idents(st)
    return {c for c in fn.components if c not in names}
