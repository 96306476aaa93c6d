"""Modelica export of pH surrogates: one ``.mo`` model, or a package of several.

The model writes the pH-DAE out as equations over parameters that hold the surrogate's numbers::

    E*der(x) = (J - R)*z + B*u;   y = transpose(B)*z;   z = effort(x, <effort data>);
    H = hamiltonian(x, ...);      P_supplied = y*u;     P_dissipated = z*(R*z);
    der(E_supplied) = P_supplied; der(E_dissipated) = P_dissipated;
    energy_residual = H - H_start - E_supplied + E_dissipated     (zero for an exact solution)

``effort``, ``effortJacobian`` (declared as the analytic derivative of ``effort`` for index
reduction) and ``hamiltonian`` are Modelica functions rendered from the same expression source
as the C code of the FMU exporter (:mod:`fmu_surrogate.export.expressions.effort`), kernel sums as
``for`` loops over parameter arrays.  Ports are ``Modelica.Blocks.Interfaces.RealInput`` /
``RealOutput`` named after the surrogate's ports, sanitised to Modelica identifiers; the mapping
is recorded in the model's documentation.  A feedthrough adds the parameters ``P, S, N``::

    E*der(x) = (J - R)*z + (B - P)*u;   y = transpose(B + P)*z + (S - N)*u;
    P_dissipated = z*(R*z) + 2*z*(P*u) + u*(S*u);

a :class:`~fmu_surrogate.ph.NonlinearPH` its state-dependent dissipation ``R_nl(z)`` as the
functions ``dissipationForce`` (``R_nl(z)*z``) and ``dissipationRate`` (``z*R_nl(z)*z``) of the
same expression source, over the parameters ``diss_directions``, ``diss_gains``,
``diss_exponents`` and ``diss_smoothing`` (``R`` is then the constant part ``R₀``)::

    der(x) = (J - R)*z - dissipationForce(z, ...) + (B - P)*u;
    P_dissipated = z*(R*z) + dissipationRate(z, ...) + 2*z*(P*u) + u*(S*u);

its nonlinear feedthrough ``S_nl(u)`` the same two functions of the port inputs,
``portDissipationForce`` (``S_nl(u)*u``) and ``portDissipationRate`` (``u*S_nl(u)*u``), over the
parameters ``port_diss_*``::

    y = transpose(B + P)*z + (S - N)*u + portDissipationForce(u, ...);
    P_dissipated = ... + portDissipationRate(u, ...);

and a ``PortedSystem`` shows its external variables (names, units) wired to the pH ports
``(u, y_ph)`` by the parameters of its ``PortMap`` (``u = Tu*inputs + cu``,
``outputs = Ty*y_ph + Cx*x + Du*inputs + cy``: signs, constant sources in ``cu``, measured
outputs; ``+ Cdx*der(x)`` for outputs that read the state's rate, ``PortMap.Cdx``; plus
``law_C*{law_s[1]^3, tanh(law_s[2]), max(law_s[3], 0.0), …}`` with
``law_s = law_W*inputs + law_b`` for a static law of the inputs, ``PortMap.law``:
:mod:`fmu_surrogate.export.modelica_wiring`), starting from its operating point ``x_start``;
or, with ``initial="equilibrium"``, at the equilibrium of its inputs at the start (the states
not fixed, ``x_start`` their start values, the guess of the initial equations)::

    initial equation
      der(x) = zeros(n);            (der(x[i]) = 0 for each differential state of a DAE)

the model is continuous-time, so a
delayed feedthrough (a co-simulation trait, ``PortedSystem.delayed_feedthrough``) is the direct
one here, and late outputs (another, ``PortedSystem.late_outputs``: those read at a communication
point are those of the point before) are the outputs of the current state and inputs, as are
the first outputs (fixed values, ``first_outputs``) and a fast feedthrough (the response to
inputs set since the last step, ``fast_feedthrough``) of a co-simulation FMU.  Several
surrogates become a package directory (``package.mo``, ``package.order``, one file per model),
as ``modelica/FmuSurrogateBenchmarks``.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fmu_surrogate.export.expressions.dissipation import dissipation_expressions
from fmu_surrogate.export.expressions.effort import (
    EffortExpressions,
    ExportError,
    effort_expressions,
)
from fmu_surrogate.export.expressions.render import number, render_modelica_function, used_params
from fmu_surrogate.export.modelica_wiring import (
    LAW_NAMES,
    RATE_NAMES,
    WIRING_NAMES,
    array_literal,
    equilibrium_equations,
    io_lines,
    string_literal,
    wiring_equation,
    wiring_locals,
    wiring_parameters,
)
from fmu_surrogate.export.names import MODELICA_KEYWORDS as KEYWORDS
from fmu_surrogate.export.names import identifier
from fmu_surrogate.export.source import check_finite, load_surrogate
from fmu_surrogate.export.wiring import wiring

__all__ = ["export_modelica", "modelica_identifier", "modelica_model"]

#: names the generated model uses itself, and built-ins it calls
_INTERNAL = frozenset([
    "E", "J", "R", "B", "x", "x_start", "z", "u", "H", "H_start", "P_supplied", "P_dissipated",
    "energy_residual", "E_supplied", "E_dissipated", "effort", "effortJacobian",
    "effortDerivative", "hamiltonian", "dissipationForce", "dissipationRate",
    "portDissipationForce", "portDissipationRate", "der_x", "der_z", "dz", "i", "Modelica",
    "time", "exp", "transpose", "Real", "Integer", "Boolean", "String"])
#: names the model uses only with a feedthrough (P, S, N)
_FEEDTHROUGH = frozenset(["P", "S", "N"])
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def modelica_identifier(name: str) -> str:
    """``name`` made a valid Modelica identifier (not a keyword): other characters become ``_``.

    The same identifiers as the FMU exporter's (:func:`fmu_surrogate.export.names.identifier`).

    Parameters
    ----------
    name : str
        Any name, e.g. a port name ``"s1.F"`` or ``"2nd"``.

    Returns
    -------
    str
        ``"s1_F"``, ``"p2nd"``; a keyword gets a trailing ``_`` (``"end_"``).
    """
    return identifier(name)


def _check_name(name: str, what: str) -> str:
    if not isinstance(name, str) or not _IDENT.match(name) or name in KEYWORDS:
        raise ExportError(f"{what} {name!r} is not a valid Modelica identifier (letters, digits "
                          f"and underscores, starting with a letter, not a keyword); use e.g. "
                          f"{modelica_identifier(str(name))!r}.")
    return name


class _Names:
    """Modelica names of ports and states: sanitised, unique, clear of the model's own names."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)
        self.mapping: list[tuple[str, str, str]] = []

    def add(self, original: str, group: str) -> str:
        base = modelica_identifier(original)
        name, k = base, 2
        while name in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        self.mapping.append((group, original, name))
        return name


def _documentation(system: Any, ex: EffortExpressions, names: _Names, static_law: Any) -> str:
    rows = "\n".join(f"<tr><td>{g}</td><td>{html.escape(o)}</td><td>{m}</td></tr>"
                     for g, o, m in names.mapping)
    prov = getattr(system, "provenance", None) or {}
    src = prov.get("source_fmu", {}) if isinstance(prov, dict) else {}
    origin = (f"<p>Identified from the FMU <code>{html.escape(str(src.get('name')))}</code> "
              f"by method <code>{html.escape(str(prov.get('method')))}</code>.</p>\n"
              if src else "")
    nl = getattr(system, "nonlinear_dissipation", None)
    nl_text = ("" if nl is None else f" and the state-dependent dissipation R(x) = R + R_nl(z) of "
               f"{nl.n_terms} power-law terms (dissipationForce)")
    law = getattr(system, "nonlinear_feedthrough", None)
    nl_text += ("" if law is None else f", and the nonlinear feedthrough y += S_nl(u) u of "
                f"{law.n_terms} power-law terms (portDissipationForce)")
    nl_text += ("" if static_law is None else f"; the outputs add a static law of the inputs "
                f"of {static_law.n_terms} terms (law_C, law_W, law_b)")
    info = (f"<html>\n<p>Port-Hamiltonian surrogate exported by fmu-surrogate: "
            f"E der(x) = (J - R) z(x) + (B - P) u, y = (B + P)' z(x) + (S - N) u (P, S, N zero "
            f"unless declared), with the effort {html.escape(ex.kind)}"
            f"{nl_text}."
            f"</p>\n{origin}<p>Names of the surrogate and their Modelica identifiers:</p>\n"
            f"<table border=\"1\">\n<tr><th>kind</th><th>surrogate</th><th>Modelica</th></tr>\n"
            f"{rows}\n</table>\n</html>")
    return string_literal(info)


def modelica_model(surrogate: Any, model_name: str = "Surrogate", *,
                   within: str | None = None) -> str:
    """The Modelica source of one surrogate model.

    Parameters
    ----------
    surrogate : PHDAE, LinearPH, PortedSystem or path
        The surrogate, or its JSON file.  A feedthrough ``P, S, N`` appears as parameters of
        those names; a ``PortedSystem`` shows its external inputs and outputs (names, units) and
        the wiring ``u = Tu*inputs + cu``, ``outputs = Ty*y_ph + Cx*x + Du*inputs + cy`` to the pH
        ports ``(u, y_ph)`` (``+ Cdx*der(x)`` for outputs that read the state's rate); its
        operating point is ``x_start`` (with ``initial="equilibrium"`` the guess of the initial
        equations that put it at rest).
    model_name : str
        Name of the model (a Modelica identifier).
    within : str, optional
        The package the model belongs to (writes ``within <package>;``).

    Returns
    -------
    str
        The text of the ``.mo`` file.

    Raises
    ------
    ExportError
        Invalid names, NaN or infinite parameters, an empty kernel expansion, no states.
    UnsupportedEffortError
        An effort kind without a translation.
    """
    sur, _ = load_surrogate(surrogate)
    w = wiring(sur)
    system = w.system
    _check_name(model_name, "model name")
    check_finite(system)
    if system.n_states == 0:
        raise ExportError("an order-0 surrogate (a static map y = (S - N) u + S_nl(u) u) has no "
                          "Modelica form here; export it as an FMU (export_fmu), which handles "
                          "it.")
    ex = effort_expressions(system)
    nl = getattr(system, "nonlinear_dissipation", None)
    dx = dissipation_expressions(nl) if nl is not None else None
    law = getattr(system, "nonlinear_feedthrough", None)
    px = dissipation_expressions(law) if law is not None else None
    n, m, has_h = system.n_states, system.n_inputs, ex.H is not None
    ft, ported = system.has_feedthrough, not w.identity
    ident = np.array_equal(system.E, np.eye(n))
    # effort data keep their names unless one means a system matrix with other values
    sys_mats = {"E": system.E, "J": system.J, "R": system.R, "B": system.B}
    internal = set(_INTERNAL) | (_FEEDTHROUGH if ft else set()) | (
        WIRING_NAMES if ported else set()) | (LAW_NAMES if w.law is not None else set()) | (
        RATE_NAMES if w.Cdx is not None else set()) | ({"zeros"} if w.equilibrium else set())
    pnames = {}
    for p, a in ex.params.items():
        clash = p in sys_mats and not (p == "E" and not ident and np.array_equal(a, system.E))
        pnames[p] = f"effort_{p}" if clash or p in internal - {"E"} else p
    dnames = {p: p for p in (dx.params if dx else {})}  # diss_*: no effort data has that prefix
    lnames = {p: f"port_{p}" for p in (px.params if px else {})}  # port_diss_*: nor that one
    names = _Names(internal | set(pnames.values()) | set(dnames) | set(lnames) | {model_name})
    ins = [names.add(s, "input") for s in w.input_names]
    outs = [names.add(s, "output") for s in w.output_names]
    fixed_pars = {names.add(k, "parameter"): v for k, v in w.parameters.items()}
    names.mapping += [("state", s, f"x[{k + 1}]") for k, s in enumerate(system.state_names)]
    diff = np.any(system.E != 0, axis=0)
    Bin, Bout = ("B - P", "B + P") if ft else ("B", "B")

    lines = [f"within {within};"] if within else []
    lines.append(f'model {model_name} "pH surrogate: E*der(x) = (J - R)*z(x) + ({Bin})*u, '
                 f'y = transpose({Bout})*z(x){" + (S - N)*u" if ft else ""}"')
    if not ident:
        lines.append(f'  parameter Real E[{n}, {n}] = {array_literal(system.E, "    ")} '
                     f'"Descriptor matrix" annotation (Evaluate = true);')
    lines += [(f'  parameter Real J[{n}, {n}] = {array_literal(system.J, "    ")} '
              f'"Structure matrix (skew-symmetric)";'),
              (f'  parameter Real R[{n}, {n}] = {array_literal(system.R, "    ")} '
              f'"Dissipation matrix (symmetric positive semi-definite)";'),
              *([f'  parameter Real B[{n}, {m}] = {array_literal(system.B, "    ")} "Port matrix";']
                if m else [])]
    if ft:
        lines += [(f'  parameter Real P[{n}, {m}] = {array_literal(system.P, "    ")} '
                   f'"Dissipative coupling of states and ports";'),
                  (f'  parameter Real S[{m}, {m}] = {array_literal(system.S, "    ")} '
                   f'"Symmetric feedthrough ([[R, P], [transpose(P), S]] is PSD)";'),
                  (f'  parameter Real N[{m}, {m}] = {array_literal(system.N, "    ")} '
                   f'"Skew-symmetric feedthrough";')]
    if ported:
        lines += wiring_parameters(w, n, m)
    lines.append(f'  parameter Real x_start[{n}] = {array_literal(w.x0, "    ")} "Start values of '
                 + ('the states: the guess for the equilibrium the model starts at";'
                    if w.equilibrium else 'the states (fixed where E has a nonzero column)";'))
    lines += [f'  parameter Real {k} = {number(np.float64(v))} "Parameter of the source FMU: '
              f'identified at this value, holds for it only";' for k, v in fixed_pars.items()]
    declared = {"E"} if not ident else set()
    for p, a in ex.params.items():
        if pnames[p] in declared:
            continue
        declared.add(pnames[p])
        dims = "" if a.ndim == 0 else f"[{', '.join(map(str, a.shape))}]"
        lines.append(f'  parameter Real {pnames[p]}{dims} = {array_literal(a, "    ")} "Effort data";')
    for p, a in (dx.params if dx else {}).items():
        lines.append(f'  parameter Real {p}{_dims(a)} = {array_literal(a, "    ")} '
                     f'"Power-law dissipation R_nl(z) (diss_gains >= 0)";')
    for p, a in (px.params if px else {}).items():
        lines.append(f'  parameter Real {lnames[p]}{_dims(a)} = {array_literal(a, "    ")} '
                     f'"Nonlinear feedthrough S_nl(u) (port_diss_gains >= 0)";')
    lines += io_lines(w, ins, outs)
    if has_h:
        lines += ['  Modelica.Blocks.Interfaces.RealOutput H "Hamiltonian H(x)";',
                  ('  Modelica.Blocks.Interfaces.RealOutput energy_residual '
                  '"H - H_start - E_supplied + E_dissipated (zero for an exact solution)";')]
    lines += [('  Modelica.Blocks.Interfaces.RealOutput P_supplied "Power supplied at the pH '
              'ports, y*u";'),
              ('  Modelica.Blocks.Interfaces.RealOutput P_dissipated "Power dissipated, '
              f'{"[z; u]*W*[z; u]" if ft else "z*R*z"}";')]
    fixed = "{" + ", ".join("true" if d and not w.equilibrium else "false" for d in diff) + "}"
    lines += [(f'  Real x[{n}](start = x_start, fixed = {fixed}) '
              f'"States: {string_literal(", ".join(system.state_names))}";'),
              f'  Real z[{n}] "Effort z(x)";']
    if has_h:
        lines += ['  Real E_supplied(start = 0, fixed = true) "Energy supplied since the start";',
                  ('  Real E_dissipated(start = 0, fixed = true) '
                  '"Energy dissipated since the start";')]
    lines.append("protected")
    if has_h:
        lines.append('  parameter Real H_start(fixed = false) "H at the start";')
    if m:
        lines.append(f'  Real u[{m}] "{"pH port inputs" if ported else "Inputs as a vector"}";')
    if ported:
        lines += wiring_locals(w, m)
    lines.append(_functions(ex, pnames, n))
    if dx:
        lines += [render_modelica_function(dx.force, "dissipationForce", "f", dx.params, dnames,
                                           "State-dependent dissipative force R_nl(z)*z", n,
                                           argument="Effort z"),
                  render_modelica_function(dx.rate, "dissipationRate", "p", dx.params, dnames,
                                           "State-dependent dissipated power z*R_nl(z)*z", n,
                                           argument="Effort z")]
    if px:
        lines += [render_modelica_function(px.force, "portDissipationForce", "f", px.params,
                                           lnames, "Nonlinear feedthrough S_nl(u)*u", m,
                                           argument="Port input u"),
                  render_modelica_function(px.rate, "portDissipationRate", "p", px.params, lnames,
                                           "Power dissipated by the feedthrough u*S_nl(u)*u", m,
                                           argument="Port input u")]
    fnl = f" - {_call('dissipationForce', 'z', dx.force, dnames)}" if dx else ""
    pnl = f" + {_call('dissipationRate', 'z', dx.rate, dnames)}" if dx else ""
    ynl = f" + {_call('portDissipationForce', 'u', px.force, lnames)}" if px else ""
    pnl += f" + {_call('portDissipationRate', 'u', px.rate, lnames)}" if px else ""
    if has_h or w.equilibrium:
        lines += ["initial equation", *(["  H_start = H;"] if has_h else []),
                  *equilibrium_equations(w, diff)]
    call = ", ".join(["x"] + [pnames[p] for p in used_params(ex.z)])
    ext_u = "{" + ", ".join(ins) + "}"
    y = "y_ph" if ported else "{" + ", ".join(outs) + "}"
    lhs = "der(x)" if ident else "E*der(x)"
    lines += ["equation"]
    lines += [f'  assert(abs({k} - {number(np.float64(v))}) <= 1e-12*abs({number(np.float64(v))}), '
              f'"{k} differs from the value the surrogate was identified at; identify it again '
              f'from runs at the new value");' for k, v in fixed_pars.items()]
    held = {ins[w.input_names.index(k)]: v for k, v in w.held_inputs.items()
            if k in w.input_names}
    lines += [f'  assert(abs({k} - {number(np.float64(v))}) <= 1e-12*abs({number(np.float64(v))}), '
              f'"{k} differs from the value it kept in all the data the surrogate was identified '
              f'from; harvest with {k} varied and identify it again");' for k, v in held.items()]
    if m:
        u_eq = (f"Tu*{ext_u} + cu" if ins else "cu") if ported else ext_u
        lines += [f"  u = {u_eq};", f"  z = effort({call});",
                  f"  {lhs} = (J - R)*z{fnl} + {'(B - P)' if ft else 'B'}*u;",
                  f"  {y} = transpose({'B + P' if ft else 'B'})*z{' + (S - N)*u' if ft else ''}{ynl};",
                  f"  P_supplied = {y}*u;"]
    else:
        lines += [f"  z = effort({call});", f"  {lhs} = (J - R)*z{fnl};", "  P_supplied = 0;"]
    if ported:
        lines += wiring_equation(w, ins, outs)
    lines.append(f"  P_dissipated = z*(R*z){pnl} + 2*z*(P*u) + u*(S*u);" if ft
                 else f"  P_dissipated = z*(R*z){pnl};")
    if has_h:
        hcall = ", ".join(["x"] + [pnames[p] for p in used_params(ex.H)])
        lines += [f"  H = hamiltonian({hcall});",
                  "  der(E_supplied) = P_supplied;",
                  "  der(E_dissipated) = P_dissipated;",
                  "  energy_residual = H - H_start - E_supplied + E_dissipated;"]
    lines += [f'  annotation (Documentation(info = "{_documentation(system, ex, names, w.law)}"));',
              f"end {model_name};", ""]
    return "\n".join(lines)


def _functions(ex: EffortExpressions, pnames: dict[str, str], n: int) -> str:
    zp = used_params(ex.z)
    zero = ", ".join(f"zeroDerivative = {pnames[p]}" for p in zp)
    deriv = f"derivative({zero}) = effortDerivative" if zp else "derivative = effortDerivative"
    parts = [render_modelica_function(ex.z, "effort", "z", ex.params, pnames, "Effort z(x)", n,
                                      annotation=deriv),
             render_modelica_function(ex.dz, "effortJacobian", "dz", ex.params, pnames,
                                      "Jacobian dz/dx of the effort", n)]
    jp = used_params(ex.dz)
    if not set(jp) <= set(zp):
        raise AssertionError("the Jacobian reads data the effort does not")
    args = ", ".join(["x"] + [pnames[p] for p in jp])
    decl = "\n".join(f"    input Real {pnames[p]}{_dims(ex.params[p])};" for p in zp)
    parts.append(
        f'  function effortDerivative "Time derivative of the effort, dz/dx*der(x)"\n'
        f'    input Real x[{n}] "State";\n' + (decl + "\n" if decl else "")
        + f'    input Real der_x[{n}] "Time derivative of the state";\n'
        f'    output Real der_z[{n}];\n  algorithm\n'
        f"    der_z := effortJacobian({args})*der_x;\n  end effortDerivative;")
    if ex.H is not None:
        parts.append(render_modelica_function(ex.H, "hamiltonian", "H", ex.params, pnames,
                                              "Hamiltonian H(x)", n))
    return "\n".join(parts)


def _call(function: str, argument: str, prog: Any, names: dict[str, str]) -> str:
    """``function(argument, <the data prog reads>)``."""
    return f"{function}({', '.join([argument, *(names[p] for p in used_params(prog))])})"


def _dims(a: np.ndarray) -> str:
    return "" if a.ndim == 0 else f"[{', '.join(map(str, a.shape))}]"


def export_modelica(surrogate: Any, path: str | os.PathLike, *,
                    model_name: str | Sequence[str] | None = None,
                    package: str | None = None) -> Path:
    """Write pH surrogates as Modelica: one ``.mo`` model, or a package of several.

    Parameters
    ----------
    surrogate : PHDAE, LinearPH, path, or a sequence of them
        The surrogate(s): ``ph`` systems or surrogate JSON files.  Several need ``package``.
    path : path
        Without ``package``: the ``.mo`` file to write (or a directory to write
        ``<model_name>.mo`` into).  With ``package``: the directory in which the package
        directory ``<package>/`` (``package.mo``, ``package.order``, one ``.mo`` per model) is
        written.
    model_name : str or sequence of str, optional
        Model names (Modelica identifiers); default: the JSON file's name made an identifier,
        else ``Surrogate`` (``Surrogate1``, ``Surrogate2``, … for several).
    package : str, optional
        Name of the package (a Modelica identifier).

    Returns
    -------
    Path
        The ``.mo`` file, or the package directory.

    Raises
    ------
    ExportError
        Invalid or duplicate names, several surrogates without ``package``, NaN or infinite
        parameters, an empty kernel expansion.
    UnsupportedEffortError
        An effort kind without a translation.

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib
    >>> from fmu_surrogate.ph import LinearPH
    >>> osc = LinearPH([[0, 1], [-1, 0]], np.zeros((2, 2)), np.eye(2), [[0], [1]],
    ...                input_names=["F"], output_names=["v"])
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     mo = export_modelica(osc, pathlib.Path(folder) / "Oscillator.mo")
    ...     "Modelica.Blocks.Interfaces.RealInput F" in mo.read_text()
    True
    """
    many = isinstance(surrogate, (list, tuple))
    items = list(surrogate) if many else [surrogate]
    if not items:
        raise ExportError("no surrogate to export: pass at least one.")
    if many and package is None:
        raise ExportError(f"{len(items)} surrogates need a package: pass package='MySurrogates'.")
    loaded = [load_surrogate(s) for s in items]
    if model_name is None:
        names = [modelica_identifier(stem) if stem else
                 ("Surrogate" if len(items) == 1 else f"Surrogate{k + 1}")
                 for k, (_, stem) in enumerate(loaded)]
    else:
        names = [model_name] if isinstance(model_name, str) else list(model_name)
    if len(names) != len(items):
        raise ExportError(f"model_name gives {len(names)} names for {len(items)} surrogates.")
    for nm in names:
        _check_name(nm, "model name")
    if len(set(names)) != len(names):
        raise ExportError(f"model names must be distinct, got {names}; pass model_name=[...].")
    path = Path(path)
    if package is None:
        target = path / f"{names[0]}.mo" if path.is_dir() else path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(modelica_model(loaded[0][0], names[0]), encoding="utf-8")
        return target
    _check_name(package, "package name")
    if package in names:
        raise ExportError(f"the package and a model are both called {package!r}; rename one.")
    root = path / package
    root.mkdir(parents=True, exist_ok=True)
    for (system, _), nm in zip(loaded, names):
        (root / f"{nm}.mo").write_text(modelica_model(system, nm, within=package),
                                       encoding="utf-8")
    items_html = "\n".join(f'<li><a href=\\"modelica://{package}.{nm}\\">{nm}</a></li>'
                           for nm in names)
    (root / "package.mo").write_text(
        f'within;\npackage {package} "pH surrogates exported by fmu-surrogate"\n'
        f'  annotation (Documentation(info = "<html>\n<p>Port-Hamiltonian surrogates exported '
        f'by fmu-surrogate; each model documents its port names.</p>\n<ul>\n{items_html}\n'
        f'</ul>\n</html>"));\nend {package};\n', encoding="utf-8")
    (root / "package.order").write_text("".join(f"{nm}\n" for nm in names), encoding="utf-8")
    return root
