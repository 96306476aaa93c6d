"""The generated C header with an exported surrogate's data (``surrogate_data.h``).

A linear surrogate (``LinearPH`` with an invertible ``E``) steps exactly (``c/surrogate_linear.c``):
its header holds the state-space matrices with the feedthrough, the block matrices of the exact
step and of the energy integrals, and the wiring of the pH ports to the FMU's variables
(:mod:`fmu_surrogate.export.wiring`).  A nonlinear surrogate runs the scheme of
:func:`fmu_surrogate.ph.simulate` (``c/surrogate_nonlinear.c``): its header holds the scheme's
data, the effort's C code and, for a :class:`~fmu_surrogate.ph.NonlinearPH` with power-law
dissipation, the C code of its force ``R_nl(z) z`` (``SUR_NL`` 1; ``R`` is then the constant
part ``R₀``) and, with a nonlinear feedthrough, that of ``S_nl(u) u`` (``SUR_PNL`` 1).  A
static law of the external inputs in the outputs (``PortMap.law``) is ``SUR_LAW_K`` terms with
constant arrays, evaluated by ``c/wiring.h`` wherever the outputs are; outputs that read the
state's rate (``PortMap.Cdx``) are ``SUR_CDX_ON`` with the matrix ``SUR_CDX``.  A surrogate
that starts at the equilibrium of its first inputs (``initial="equilibrium"``) is
``SUR_EQUILIBRIUM`` (``c/equilibrium.h``), a linear one with the matrices of its one solve.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fmu_surrogate.export.expressions.effort import ExportError
from fmu_surrogate.export.expressions.render import dissipation_c_source, effort_c_source
from fmu_surrogate.export.fmi.model_description import _c_string
from fmu_surrogate.export.names import exported_names
from fmu_surrogate.export.wiring import Wiring

__all__ = ["algebraic", "is_exact_linear", "linear_matrices", "surrogate_data"]

#: singular values of E below this (relative) make a state algebraic
_E_RCOND = 1e-12


def is_exact_linear(system: Any) -> bool:
    """Whether the surrogate steps exactly (a ``LinearPH`` with an invertible ``E``).

    Parameters
    ----------
    system : LinearPH or PHDAE
        The surrogate.
    """
    from fmu_surrogate.ph import LinearPH

    if not isinstance(system, LinearPH):
        return False
    return system.n_states == 0 or bool(np.linalg.cond(system.E) < 1.0 / _E_RCOND)


def algebraic(system: Any) -> tuple[np.ndarray, np.ndarray]:
    """The algebraic equations (zero rows of ``E``) and states (zero columns).

    Parameters
    ----------
    system : PHDAE
        The surrogate.

    Returns
    -------
    tuple of ndarray
        ``(rows_a, cols_a)``.

    Raises
    ------
    ExportError
        As many zero rows as zero columns are needed.
    """
    E = np.asarray(system.E)
    rows_a = np.flatnonzero(~np.any(E != 0, axis=1))
    cols_a = np.flatnonzero(~np.any(E != 0, axis=0))
    if rows_a.size != cols_a.size:
        raise ExportError(f"E has {rows_a.size} zero rows but {cols_a.size} zero columns; write "
                          "the DAE with as many algebraic equations as algebraic states.")
    return rows_a, cols_a


def _c_array(name: str, a: Any) -> str:
    flat = np.asarray(a, dtype=float).reshape(-1)
    if flat.size == 0:
        flat = np.zeros(1)
    body = ", ".join(repr(float(v)) for v in flat)
    return f"static const double {name}[{flat.size}] = {{{body}}};"


def _c_matvec(name: str, a: Any, transposed: bool = False) -> str:
    """C of ``mv_NAME(v, out)``, ``out = a v`` (or with ``transposed`` ``mvta_NAME(v, acc)``,
    ``acc += aᵀ v``) with the matrix's entries written in: its zeros left out, ±1 an addition or
    a subtraction.

    The same sums in the same order as ``dn_matvec`` over the array (``c/dense.h``) — only
    ``0 · v`` and ``1 · v`` are not computed, which C may not simplify itself (``0 · ∞`` is not
    0) — so the hot paths of a surrogate with sparse wiring and structure (identity wiring,
    no feedthrough, ``J − R = 0``) do no work for the absent terms.
    """
    a = np.asarray(a, dtype=float)
    a = a.T if transposed else a
    lines = []
    for i, row in enumerate(a):
        terms = [(j, x) for j, x in enumerate(row) if x != 0.0]
        body = "".join(
            (" + " if x == 1.0 else " - ") + f"v[{j}]" if abs(x) == 1.0 else f" + {float(x)!r} * v[{j}]"
            for j, x in terms)
        if transposed:
            lines.append(f"    acc[{i}] = acc[{i}]{body};" if terms else "")
        else:
            first = body[3:] if body.startswith(" + ") else f"-{body[3:]}" if body else "0.0"
            lines.append(f"    out[{i}] = {first};")
    head = (f"static void mvta_{name}(const double *v, double *acc)" if transposed
            else f"static void mv_{name}(const double *v, double *out)")
    unused = "    (void)v; (void)acc;" if transposed else "    (void)v; (void)out;"
    return "\n".join([head, "{", unused, *[ln for ln in lines if ln], "}"])


def _c_ints(name: str, a: Any) -> str:
    flat = [int(v) for v in np.asarray(a).reshape(-1)] or [0]
    return f"static const int {name}[{len(flat)}] = {{{', '.join(map(str, flat))}}};"


def linear_matrices(w: Wiring) -> dict[str, np.ndarray]:
    """The matrices of an exact linear surrogate's C code.

    Parameters
    ----------
    w : Wiring
        The surrogate (a ``LinearPH`` core with an invertible ``E``) and its wiring.

    Returns
    -------
    dict of str to ndarray
        On the pH ports: ``x' = A x + B u``, ``y = C x + D u``, ``H = ½ xᵀ HM x``; with
        ``w = (x, u)``: ``w' = M w``, dissipated power ``wᵀ PR w = [z; u]ᵀ W [z; u]``, supplied
        power ``wᵀ PS w = yᵀu``.  On the external variables (``Tu``, ``Ty``, … of the wiring):
        ``BE = B Tu`` (n, k_in), ``CE = Ty C + Cx`` (k_out, n), ``DE = DY Tu + Du``
        (k_out, k_in), the derivatives of ``x'`` and ``y_ext``, with ``DY = Ty D`` (k_out, m)
        how the outputs see the pH port inputs; outputs that read the rate (``Cdx``) add
        ``Cdx A`` to ``CE`` and ``Cdx B`` to ``DY``.
    """
    s = w.system
    n, m = s.n_states, s.n_inputs
    E, Q = np.asarray(s.E, dtype=float), s.Q
    A = np.linalg.solve(E, (s.J - s.R) @ Q) if n else np.zeros((0, 0))
    Bu = np.linalg.solve(E, s.input_matrix) if n else np.zeros((0, m))
    C = s.output_matrix.T @ Q
    D = s.D
    p = n + m
    M, PR, PS = np.zeros((p, p)), np.zeros((p, p)), np.zeros((p, p))
    M[:n, :n], M[:n, n:] = A, Bu
    # [z; u]ᵀ W [z; u] with z = Q x
    PR[:n, :n], PR[:n, n:], PR[n:, :n], PR[n:, n:] = Q.T @ s.R @ Q, Q.T @ s.P, s.P.T @ Q, s.S
    # yᵀu = xᵀCᵀu + uᵀDu, and uᵀDu = uᵀ S u (N is skew)
    PS[:n, n:], PS[n:, :n], PS[n:, n:] = 0.5 * C.T, 0.5 * C, 0.5 * (D + D.T)
    CE, DY = w.Ty @ C + w.Cx, w.Ty @ D
    if w.Cdx is not None:  # y_ext += Cdx x' = Cdx (A x + B u)
        CE, DY = CE + w.Cdx @ A, DY + w.Cdx @ Bu
    return {"A": A, "B": Bu, "C": C, "D": D, "HM": Q.T @ E, "M": M, "PR": PR, "PS": PS,
            "BE": Bu @ w.Tu, "CE": CE, "DY": DY, "DE": DY @ w.Tu + w.Du}


def _wiring_data(w: Wiring) -> list[str]:
    return ["/* u = SUR_TU u_ext + SUR_CU; y_ext = SUR_TY y + SUR_CX x + SUR_DU u_ext + SUR_CY */",
            _c_array("SUR_TU", w.Tu), _c_array("SUR_CU", w.cu), _c_array("SUR_TY", w.Ty),
            _c_array("SUR_CX", w.Cx), _c_array("SUR_DU", w.Du), _c_array("SUR_CY", w.cy),
            f"#define SUR_NSRC {w.sources.size}", _c_ints("SUR_SRC", w.sources), *_law_data(w),
            _c_matvec("SUR_TU", w.Tu), _c_matvec("SUR_TY", w.Ty), _c_matvec("SUR_CX", w.Cx),
            _c_matvec("SUR_DU", w.Du), *_rate_data(w)]


def _rate_data(w: Wiring) -> list[str]:
    """``SUR_CDX_ON`` and ``SUR_CDX``: how the outputs read the state's rate (none when no
    output does, so that such a surrogate's data are as before)."""
    if w.Cdx is None:
        return []
    return [("/* y_ext += SUR_CDX x', the state's rate at the state and inputs the outputs "
             "see (c/wiring.h) */"), "#define SUR_CDX_ON 1", _c_array("SUR_CDX", w.Cdx),
            _c_matvec("SUR_CDX", w.Cdx)]


#: the codes of a static law's term kinds in ``c/wiring.h`` (``SUR_LAW_KIND``)
_LAW_KINDS = {"cubic": 0, "tanh": 1, "hinge": 2}


def _law_data(w: Wiring) -> list[str]:
    """``SUR_LAW_K`` and the arrays of the static law of the external inputs (none without
    one, so that such a surrogate's data are as before)."""
    law = w.law
    if law is None:
        return []
    unknown = sorted(set(law.kinds) - set(_LAW_KINDS))
    if unknown:
        raise ExportError(f"the static law's term kinds {unknown} have no C translation; "
                          f"the exporter writes {sorted(_LAW_KINDS)}.")
    return [("/* y_ext += SUR_LAW_C f(SUR_LAW_W u_ext + SUR_LAW_B), f_k by SUR_LAW_KIND: "
             "0 cubic, 1 tanh, 2 hinge */"),
            f"#define SUR_LAW_K {law.n_terms}",
            _c_ints("SUR_LAW_KIND", [_LAW_KINDS[k] for k in law.kinds]),
            _c_array("SUR_LAW_W", law.W), _c_array("SUR_LAW_B", law.b),
            _c_array("SUR_LAW_C", law.C)]


def _first_data(w: Wiring) -> list[str]:
    """``SUR_FIRST_Y``: the outputs shown before the first step (none when the model's); and
    ``SUR_FAST_D``: the fast feedthrough, through which they see the inputs set since the last
    step held them."""
    out = []
    if w.fast_feedthrough is not None:
        out += [("/* the outputs add SUR_FAST_D (u_ext - the inputs the last step held) "
                 "(c/wiring.h) */"), "#define SUR_FAST_D_ON 1",
                _c_array("SUR_FAST_D", w.fast_feedthrough)]
    if w.first is not None:
        out += ["/* the outputs before the first step, fixed values (c/wiring.h) */",
                _c_array("SUR_FIRST_Y", w.first)]
    return out


def _equilibrium_data(w: Wiring) -> list[str]:
    """``SUR_EQUILIBRIUM``: the FMU starts at the equilibrium of the inputs it has when it leaves
    initialisation (``c/equilibrium.h``); for a linear core the matrices of its one solve
    ``(J − R) Q x = −(G − P) u`` and of the check that the flow vanishes there, as
    :func:`fmu_surrogate.ph.simulation.equilibrium.equilibrium` (none without the rule, so that
    such a surrogate's data are as before)."""
    from fmu_surrogate.ph.simulation.equilibrium import linear_equilibrium_matrix

    if not w.equilibrium:
        return []
    names = ", ".join(_c_string(x) for x in exported_names(w)["inputs"].values()) or '""'
    out = [("/* the state at the start: the equilibrium of the inputs (c/equilibrium.h), whose "
            "names a failure reports */"), "#define SUR_EQUILIBRIUM 1",
           f"static const char *const SUR_INPUT_NAMES[] = {{{names}}};"]
    s = w.system
    if is_exact_linear(s):
        out += [("/* (J - R) Q x = -(G - P) u: SUR_EQ_M = (J - R) Q, SUR_EQ_T = J - R, "
                 "SUR_EQ_Q = Q, SUR_EQ_B = G - P */"),
                _c_array("SUR_EQ_M", linear_equilibrium_matrix(s)),
                _c_array("SUR_EQ_T", s.J - s.R), _c_array("SUR_EQ_Q", s.Q),
                _c_array("SUR_EQ_B", s.input_matrix)]
    return out


def _linear_data(w: Wiring) -> list[str]:
    k = linear_matrices(w)
    return ["/* pH ports: x' = SUR_A x + SUR_B u, y = SUR_C x + SUR_D u, H = 1/2 x' SUR_HM x */",
            _c_array("SUR_A", k["A"]), _c_array("SUR_B", k["B"]), _c_array("SUR_C", k["C"]),
            _c_array("SUR_D", k["D"]), _c_array("SUR_HM", k["HM"]),
            "/* w = (x, u): w' = SUR_M w; dissipated power w' SUR_PR w, supplied w' SUR_PS w */",
            _c_array("SUR_M", k["M"]), _c_array("SUR_PR", k["PR"]), _c_array("SUR_PS", k["PS"]),
            *_wiring_data(w),
            "/* derivatives on the external inputs: d x'/d u_ext, d y_ext/dx, d y_ext/d u_ext */",
            _c_array("SUR_BE", k["BE"]), _c_array("SUR_CE", k["CE"]), _c_array("SUR_DE", k["DE"])]


def _quadrature(system: Any) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights on [0, 1] of the AVF path integral in the exported step.

    ``fmu_surrogate.ph.simulate`` integrates with four Gauss–Legendre nodes (exact for a
    gradient of degree 7).  An energy that is a polynomial of degree 4 at most (a quadratic form
    plus quartic ridges: progressive springs, the saturating inductor's identified flux law)
    has a cubic gradient, integrated exactly by two nodes: the same step to round-off at half
    the effort evaluations.  Every other energy takes the four nodes of ``ph.simulate`` — a
    gap ridge's piecewise-quadratic energy too, whose quadrature across a stop is exact for
    neither, so that only the same nodes give the same step.
    """
    from fmu_surrogate.ph.efforts.convex import ConvexEffort
    from fmu_surrogate.ph.simulation.time_steps import GL_NODES, GL_WEIGHTS

    effort = getattr(system, "effort_function", None)
    if isinstance(effort, ConvexEffort) and all(k == "quartic" for k in effort.kinds):
        x, wt = np.polynomial.legendre.leggauss(2)
        return 0.5 * (x + 1.0), 0.5 * wt
    return GL_NODES, GL_WEIGHTS


def _scheme_data(w: Wiring, step: float | None, max_newton: int) -> list[str]:
    from fmu_surrogate.ph.simulation.time_steps import explicit_step

    system = w.system
    nodes, weights = _quadrature(system)
    n, m = system.n_states, system.n_inputs

    def ports(name: str, a: np.ndarray) -> str:  # (n, m) with the row stride SUR_BS
        return _c_array(name, a if m else np.zeros((n, 1)))

    E = np.asarray(system.E, dtype=float)
    rows_a, cols_a = algebraic(system)
    rows_d = np.setdiff1d(np.arange(n), rows_a)
    cols_d = np.setdiff1d(np.arange(n), cols_a)
    Edd = E[np.ix_(rows_d, cols_d)]
    if Edd.size and np.linalg.cond(Edd) > 1.0 / _E_RCOND:
        raise ExportError("the differential block of E is singular: write E = diag(E_dd, 0) with "
                          "an invertible E_dd (algebraic states are zero columns of E).")
    return [
        f"#define SUR_EXPLICIT {int(explicit_step(system))}",  # ẋ = B u: no Newton
        f"#define SUR_NA {rows_a.size}", f"#define SUR_NA_ALLOC {max(rows_a.size, 1)}",
        f"#define SUR_ND {cols_d.size}", f"#define SUR_BS {max(m, 1)}",
        f"#define SUR_NQ {nodes.size}", f"#define SUR_STEP {float(step or 0.0)!r}",
        f"#define SUR_MAX_NEWTON {int(max_newton)}",
        _c_array("SUR_E", E), _c_array("SUR_T", system.J - system.R), _c_array("SUR_R", system.R),
        "/* E x' = SUR_T z + SUR_B u, y = SUR_BO' z + SUR_D u; W = [[R, SUR_P], [P', SUR_S]] */",
        ports("SUR_B", system.input_matrix), ports("SUR_BO", system.output_matrix),
        ports("SUR_P", system.P), _c_array("SUR_S", system.S), _c_array("SUR_D", system.D),
        # whether W's cross and port blocks have terms (their powers are not computed for none)
        f"#define SUR_HAS_P {int(np.any(system.P != 0))}",
        f"#define SUR_HAS_S {int(np.any(system.S != 0))}",
        *_wiring_data(w),
        _c_array("SUR_EINV", np.linalg.inv(Edd)), _c_ints("SUR_ROWS_D", rows_d),
        _c_ints("SUR_ROWS_A", rows_a), _c_ints("SUR_COLS_A", cols_a),
        _c_array("SUR_NODES", nodes), _c_array("SUR_WEIGHTS", weights),
        effort_c_source(system, "eff"), "#define SUR_HAS_H eff_HAS_H", *_dissipation(system),
        *(_c_matvec(name, a) for name, a in (
            ("SUR_E", E), ("SUR_T", system.J - system.R), ("SUR_R", system.R),
            ("SUR_B", system.input_matrix), ("SUR_P", system.P), ("SUR_S", system.S),
            ("SUR_D", system.D))),
        _c_matvec("SUR_BO", system.output_matrix, transposed=True),
    ]


def _dissipation(system: Any) -> list[str]:
    """``SUR_NL``, ``SUR_PNL`` and the C code of a ``NonlinearPH``'s state-dependent dissipation
    ``R_nl(z)`` (``dis_*``) and of its nonlinear feedthrough ``S_nl(u)`` (``pdis_*``: the same
    programs with the port inputs as argument)."""
    nl = getattr(system, "nonlinear_dissipation", None)
    out = ["#define SUR_NL 0"] if nl is None else [dissipation_c_source(nl, "dis"),
                                                    "#define SUR_NL 1"]
    law = getattr(system, "nonlinear_feedthrough", None)
    if law is None:
        return [*out, "#define SUR_PNL 0"]
    return [*out, dissipation_c_source(law, "pdis"), "#define SUR_PNL 1"]


def surrogate_data(w: Wiring, *, step: float | None = None, max_newton: int = 25) -> str:
    """Text of ``surrogate_data.h``: the matrices and the wiring (linear) or the scheme's data
    and the effort's C code (nonlinear).

    Parameters
    ----------
    w : Wiring
        The surrogate and its wiring.
    step : float, optional
        Internal step of the nonlinear scheme (0: one per communication step).
    max_newton : int
        Newton iterations per step before the FMU reports a failure.

    Returns
    -------
    str
    """
    body = (_linear_data(w) if is_exact_linear(w.system)
            else _scheme_data(w, step, max_newton))
    return "\n".join(["/* Generated by fmu_surrogate.export: the surrogate's data (row-major). */",
                      "#ifndef SURROGATE_DATA_H", "#define SURROGATE_DATA_H", *body,
                      *_first_data(w), *_equilibrium_data(w), "#endif",
                      ""])
