"""The outside of an exported Modelica model: literals, its inputs and outputs, and the wiring of a
``PortedSystem`` to the pH ports (:mod:`fmu_surrogate.export.modelica` writes the pH core).

A ``PortedSystem``'s :class:`~fmu_surrogate.ph.PortMap` becomes the parameters ``Tu, cu, Ty, Cx,
Du, cy`` and the equations ``u = Tu*inputs + cu``, ``outputs = Ty*y_ph + Cx*x + Du*inputs + cy``;
its static nonlinear law of the inputs (``PortMap.law``, a :class:`~fmu_surrogate.ph.StaticLaw`)
the parameters ``law_W, law_b, law_C``, the terms' arguments ``law_s`` and one more part of the
outputs::

    law_s = law_W*inputs + law_b;
    outputs = Ty*y_ph + Cx*x + Du*inputs + cy + law_C*{law_s[1]^3, tanh(law_s[2]),
                                                     max(law_s[3], 0.0), ...};

each term written with its kind's built-in function (``^3`` for ``cubic``, ``tanh``, ``max``
for ``hinge``).  Outputs that read the state's rate (``PortMap.Cdx``, a core with ``E = I``: an
acceleration beside a momentum state) add the parameter ``Cdx`` and the term ``Cdx*der(x)``::

    outputs = Ty*y_ph + Cx*x + Cdx*der(x) + Du*inputs + cy;

A surrogate that starts at the equilibrium of its inputs (``initial="equilibrium"``) has the
initial equations of :func:`equilibrium_equations`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fmu_surrogate.export.expressions.render import number

__all__ = ["LAW_NAMES", "RATE_NAMES", "WIRING_NAMES", "array_literal", "equilibrium_equations",
           "io_lines", "string_literal", "wiring_equation", "wiring_locals", "wiring_parameters"]

#: names the model uses with a port wiring (a PortedSystem)
WIRING_NAMES = frozenset(["Tu", "cu", "Ty", "Cx", "Du", "cy", "y_ph"])
#: names the model uses with outputs that read the state's rate (``PortMap.Cdx``)
RATE_NAMES = frozenset(["Cdx"])
#: names the model uses with a static law, and the built-ins its terms call
LAW_NAMES = frozenset(["law_W", "law_b", "law_C", "law_s", "tanh", "max"])

#: a term of each kind of the static law, ``$`` standing for its argument
_LAW_TERMS = {"cubic": "$^3", "tanh": "tanh($)", "hinge": "max($, 0.0)"}


def array_literal(a: np.ndarray, indent: str) -> str:
    """A Modelica array literal of ``a`` (exact doubles), rows on their own lines.

    Parameters
    ----------
    a : ndarray
        Scalar, vector or matrix.
    indent : str
        Indentation of continued rows.
    """
    if a.ndim == 0:
        return number(a)
    if a.ndim == 1:
        return "{" + ", ".join(number(v) for v in a) + "}"
    rows = [array_literal(r, indent + "  ") for r in a]
    return "{" + f",\n{indent}  ".join(rows) + "}"


def string_literal(text: str) -> str:
    """``text`` escaped for a Modelica string literal (without the quotes).

    Parameters
    ----------
    text : str
        Any text.
    """
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _unit(u: str | None) -> str:
    return f'unit = "{string_literal(u)}"' if isinstance(u, str) and u else ""


def io_lines(w: Any, ins: list[str], outs: list[str]) -> list[str]:
    """Declarations of the external inputs and outputs.

    Parameters
    ----------
    w : Wiring
        The surrogate's outside (names as the surrogate has them, units).
    ins, outs : list of str
        Their Modelica names.
    """
    lines = []
    for name, orig, unit in zip(ins, w.input_names, w.input_units):
        mod = _unit(unit)
        lines.append(f'  Modelica.Blocks.Interfaces.RealInput {name}{f"({mod})" if mod else ""} '
                     f'"Input {string_literal(orig)}";')
    for name, orig, unit in zip(outs, w.output_names, w.output_units):
        mod = _unit(unit)
        lines.append(f'  Modelica.Blocks.Interfaces.RealOutput {name}{f"({mod})" if mod else ""}'
                     f' "Output {string_literal(orig)}";')
    return lines


def wiring_parameters(w: Any, n: int, m: int) -> list[str]:
    """Parameter declarations of a ``PortedSystem``'s wiring and static law.

    Parameters
    ----------
    w : Wiring
        The surrogate's outside.
    n, m : int
        Number of states and of pH ports of the core.
    """
    k_in, k_out = len(w.input_names), len(w.output_names)
    out = []
    if k_in:
        out.append(f'  parameter Real Tu[{m}, {k_in}] = {array_literal(w.Tu, "    ")} '
                   f'"pH port inputs from the inputs: u = Tu*inputs + cu";')
    out.append(f'  parameter Real cu[{m}] = {array_literal(w.cu, "    ")} '
               f'"Constant sources and offsets of the pH port inputs";')
    out.append(f'  parameter Real Ty[{k_out}, {m}] = {array_literal(w.Ty, "    ")} '
               f'"Outputs from the pH port outputs: outputs = Ty*y_ph + Cx*x + Du*inputs + cy";')
    out.append(f'  parameter Real Cx[{k_out}, {n}] = {array_literal(w.Cx, "    ")} '
               f'"Outputs measured from the state";')
    if w.Cdx is not None:
        out.append(f'  parameter Real Cdx[{k_out}, {n}] = {array_literal(w.Cdx, "    ")} '
                   f'"Outputs measured from the state\'s rate der(x)";')
    if k_in:
        out.append(f'  parameter Real Du[{k_out}, {k_in}] = {array_literal(w.Du, "    ")} '
                   f'"Outputs measured from the inputs";')
    out.append(f'  parameter Real cy[{k_out}] = {array_literal(w.cy, "    ")} "Output offsets";')
    law = w.law
    if law is None:
        return out
    K = law.n_terms
    if k_in:
        out.append(f'  parameter Real law_W[{K}, {k_in}] = {array_literal(law.W, "    ")} '
                   f'"Static law of the inputs: directions of its terms, '
                   f'law_s = law_W*inputs + law_b";')
    out.append(f'  parameter Real law_b[{K}] = {array_literal(law.b, "    ")} '
               f'"Static law: offsets of its terms";')
    out.append(f'  parameter Real law_C[{k_out}, {K}] = {array_literal(law.C, "    ")} '
               f'"Static law: gains of its terms ({", ".join(law.kinds)}) on the outputs";')
    return out


def wiring_locals(w: Any, m: int) -> list[str]:
    """Protected variables of a ``PortedSystem``: the pH port outputs, the law's arguments.

    Parameters
    ----------
    w : Wiring
        The surrogate's outside.
    m : int
        Number of pH ports of the core.
    """
    out = [f'  Real y_ph[{m}] "pH port outputs";']
    if w.law is not None:
        out.append(f'  Real law_s[{w.law.n_terms}] "Arguments of the static law\'s terms, '
                   f'law_W*inputs + law_b";')
    return out


def wiring_equation(w: Any, ins: list[str], outs: list[str]) -> list[str]:
    """The equations of the outputs: ``outputs = Ty*y_ph + Cx*x (+ Cdx*der(x)) + Du*inputs + cy
    (+ law)``.

    Parameters
    ----------
    w : Wiring
        The surrogate's outside.
    ins, outs : list of str
        Modelica names of the inputs and outputs.
    """
    ext_u = "{" + ", ".join(ins) + "}"
    rate = " + Cdx*der(x)" if w.Cdx is not None else ""
    rhs = f"Ty*y_ph + Cx*x{rate}{f' + Du*{ext_u}' if ins else ''} + cy"
    law = w.law
    if law is None:
        return [f"  {{{', '.join(outs)}}} = {rhs};"]
    terms = [_LAW_TERMS[kind].replace("$", f"law_s[{k + 1}]") for k, kind in enumerate(law.kinds)]
    return [f"  law_s = {f'law_W*{ext_u} + ' if ins else ''}law_b;",
            f"  {{{', '.join(outs)}}} = {rhs} + law_C*{{{', '.join(terms)}}};"]


def equilibrium_equations(w: Any, differential: np.ndarray) -> list[str]:
    """The initial equations of a surrogate that starts at the equilibrium of its inputs
    (``initial="equilibrium"``): the differential states at rest, ``der(x) = zeros(n)`` (for a
    DAE ``der(x[i]) = 0`` for each differential state: its algebraic equations hold anyway),
    so that the flow ``(J - R) z + (B - P) u`` vanishes; none without the rule.

    Parameters
    ----------
    w : Wiring
        The surrogate's outside (``equilibrium``).
    differential : ndarray of bool, shape (n,)
        Which states are differential (nonzero columns of ``E``).
    """
    if not w.equilibrium:
        return []
    if differential.all():
        return [f"  der(x) = zeros({differential.size});"]
    return [f"  der(x[{i + 1}]) = 0;" for i in np.flatnonzero(differential)]
