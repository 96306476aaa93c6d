"""What an exported surrogate FMU contains: its variables (one :class:`ModelSpec`) and the
generated C header with the surrogate's data (``surrogate_data.h``).

Variables, in value-reference order (all Real): the input ports, the output ports, ``H`` and
``energy_residual`` (when the surrogate has a Hamiltonian), the parameters ``x_start[i]`` (the
initial state, settable before initialisation), the states (calculated from ``x_start``), the
derivatives of the differential states, ``energy_dissipated``, ``energy_supplied`` and their
derivatives.  The value references the C code needs are ``#define``\\ d from the same list, so
the XML and the binary cannot disagree.  Outputs and derivatives declare their true dependencies
(:mod:`fmu_surrogate.export.fmi.structure`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from fmu_surrogate.export.expressions.effort import ExportError, effort_c_source
from fmu_surrogate.export.fmi.model_description import Experiment, ModelSpec, Var
from fmu_surrogate.export.fmi.structure import Sparsity, linear_sparsity, nonlinear_sparsity
from fmu_surrogate.export.names import exported_names

__all__ = ["is_exact_linear", "linear_matrices", "surrogate_data", "surrogate_spec"]

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

    return isinstance(system, LinearPH) and np.linalg.cond(system.E) < 1.0 / _E_RCOND


def _algebraic(system: Any) -> tuple[np.ndarray, np.ndarray]:
    E = np.asarray(system.E)
    rows_a = np.flatnonzero(~np.any(E != 0, axis=1))
    cols_a = np.flatnonzero(~np.any(E != 0, axis=0))
    if rows_a.size != cols_a.size:
        raise ExportError(f"E has {rows_a.size} zero rows but {cols_a.size} zero columns; write "
                          "the DAE with as many algebraic equations as algebraic states.")
    return rows_a, cols_a


def _units(system: Any, group: str, count: int) -> list[str | None]:
    units = getattr(system, "units", None) or {}
    vals = list(units.get(group, []) or [])
    return [str(u) if u else None for u in vals] if len(vals) == count else [None] * count


def _has_h(system: Any) -> bool:
    return is_exact_linear(system) or bool(system.has_hamiltonian)


def _start_name(i: int) -> str:
    return f"x_start[{i + 1}]"


def _sparsity(system: Any) -> Sparsity:
    if is_exact_linear(system):
        return linear_sparsity(linear_matrices(system))
    return nonlinear_sparsity(system, *_algebraic(system))


def _with_dependencies(v: list[Var], system: Any, names: dict[str, dict[str, str]],
                       cols_d: np.ndarray) -> list[Var]:
    """``v`` with the ``<ModelStructure>`` dependencies of its unknowns (:mod:`.structure`)."""
    sp = _sparsity(system)
    ins, outs, sts = (list(names[g].values()) for g in ("inputs", "outputs", "states"))
    energies = ("energy_dissipated", "energy_supplied")

    def deps(mx: np.ndarray, mu: np.ndarray) -> tuple[tuple[str, ...], tuple[str, ...]]:
        us = tuple(ins[k] for k in np.flatnonzero(mu))
        return (tuple(sts[j] for j in np.flatnonzero(mx)) + us,
                tuple(_start_name(j) for j in np.flatnonzero(mx)) + us)

    table = {outs[i]: deps(sp.y_x[i], sp.y_u[i]) for i in range(len(outs))}
    table.update({f"der({sts[j]})": deps(sp.dx_x[k], sp.dx_u[k]) for k, j in enumerate(cols_d)})
    table.update({sts[j]: ((), (_start_name(j),)) for j in cols_d})
    table["H"] = deps(sp.h_x, sp.h_u)
    table["energy_residual"] = (table["H"][0] + energies, table["H"][1] + energies)
    table["der(energy_dissipated)"] = deps(sp.diss_x, sp.diss_u)
    table["der(energy_supplied)"] = deps(sp.supp_x, sp.supp_u)
    return [replace(var, dependencies=table[var.name][0],
                    initial_dependencies=table[var.name][1]) if var.name in table else var
            for var in v]


def surrogate_spec(system: Any, identifier: str, *, step: float | None = None,
                   x0: Any = None) -> ModelSpec:
    """The :class:`ModelSpec` of an exported surrogate.

    Parameters
    ----------
    system : LinearPH or PHDAE
        The surrogate.
    identifier : str
        ``modelIdentifier`` (a C identifier).
    step : float, optional
        Internal step of the scheme (written as the default experiment's step size).
    x0 : array_like, shape (n,), optional
        Initial state: the start values of the parameters ``x_start[i]`` (default zero).

    Returns
    -------
    ModelSpec
    """
    names = exported_names(system)
    n, m = system.n_states, system.n_inputs
    ins, outs, sts = (list(names[g].values()) for g in ("inputs", "outputs", "states"))
    x_init = np.zeros(n) if x0 is None else np.asarray(x0, dtype=float).reshape(n)
    exact = is_exact_linear(system)
    cols_d = np.arange(n) if exact else np.setdiff1d(np.arange(n), _algebraic(system)[1])
    u_units, y_units = _units(system, "inputs", m), _units(system, "outputs", m)
    x_units = _units(system, "states", n)

    def orig(group: str, i: int, default: str) -> str:
        o = list(names[group])[i]
        return f"{default} (surrogate name {o!r})" if names[group][o] != o else default

    v = [Var(ins[i], "input", start=0.0, unit=u_units[i],
             description=orig("inputs", i, f"input port {i + 1}")) for i in range(m)]
    v += [Var(outs[i], "output", unit=y_units[i],
              description=orig("outputs", i, f"output port {i + 1}, y = B^T z(x)"))
          for i in range(m)]
    if _has_h(system):
        v += [Var("H", "output", description="Hamiltonian H(x) (stored energy)"),
              Var("energy_residual", "output",
                  description="H(x) - H(x_init) + dissipated - supplied (0 for an exact balance)")]
    xs0 = len(v)
    algebraic = set(range(n)) - set(cols_d.tolist())
    v += [Var(_start_name(i), "parameter", "fixed", float(x_init[i]), unit=x_units[i],
              description=f"initial value of {sts[i]}"
              + (" (a guess: made consistent with the inputs)" if i in algebraic else ""))
          for i in range(n)]
    x0_vr = len(v)
    v += [Var(sts[i], "local", "continuous", unit=x_units[i],
              description=orig("states", i, "algebraic state" if i in algebraic
                               else f"state {i + 1}")) for i in range(n)]
    dx0 = len(v)
    v += [Var(f"der({sts[i]})", derivative=sts[i]) for i in cols_d]
    v += [Var("energy_dissipated", "local", "continuous", 0.0,
              description="dissipated energy, integral of z^T R z"),
          Var("energy_supplied", "local", "continuous", 0.0,
              description="energy supplied through the ports, integral of y^T u"),
          Var("der(energy_dissipated)", derivative="energy_dissipated",
              description="dissipated power z^T R z"),
          Var("der(energy_supplied)", derivative="energy_supplied",
              description="supplied power y^T u")]
    v = _with_dependencies(v, system, names, cols_d)
    changed = [f"{o!r} -> {s}" for g in names.values() for o, s in g.items() if o != s]
    scheme = ("steps exactly for inputs held over a step" if exact else
              "steps with the average-vector-field scheme of fmu_surrogate.ph.simulate "
              f"(hold='zoh', internal step {step if step else 'one per communication step'})")
    desc = (f"port-Hamiltonian surrogate ({type(system).__name__}, n = {n}, m = {m}) exported by "
            f"fmu-surrogate; co-simulation {scheme}")
    if changed:
        desc += "; names sanitised: " + ", ".join(changed)
    if exact:
        data = "double sur_h0;"
        work = ("int sur_cached; double sur_h; double sur_phi[NW * NW]; double sur_wr[NW * NW]; "
                "double sur_ws[NW * NW];")
    else:
        data = "double sur_h0; int sur_started; double sur_hprev; double sur_xprev[NX];"
        work = "double sur_jz[NX * NX]; double sur_dzb[NX * NX]; double sur_jac[NX * NX];"
    defines: dict[str, int | float | str] = {
        "NX": n, "NU": m, "NW": "(NX + NU)", "SUR_VR_U0": 0, "SUR_VR_Y0": m,
        "SUR_VR_XS0": xs0, "SUR_VR_X0": x0_vr, "SUR_VR_DX0": dx0, "MODEL_DO_STEP": 1,
        "MODEL_EXTRA_DATA": data, "MODEL_EXTRA_WORKSPACE": work,
    }
    return ModelSpec(identifier, desc,
                     "surrogate_linear.c" if exact else "surrogate_nonlinear.c", tuple(v),
                     Experiment(0.0, 1.0, step), defines=defines,
                     directional_derivatives=not algebraic,
                     generation_tool="fmu-surrogate (fmu_surrogate.export)")


def _c_array(name: str, a: Any) -> str:
    flat = np.asarray(a, dtype=float).reshape(-1)
    if flat.size == 0:
        flat = np.zeros(1)
    body = ", ".join(repr(float(v)) for v in flat)
    return f"static const double {name}[{flat.size}] = {{{body}}};"


def _c_ints(name: str, a: Any) -> str:
    flat = [int(v) for v in np.asarray(a).reshape(-1)] or [0]
    return f"static const int {name}[{len(flat)}] = {{{', '.join(map(str, flat))}}};"


def linear_matrices(system: Any) -> dict[str, np.ndarray]:
    """The matrices of an exact linear surrogate's C code.

    Parameters
    ----------
    system : LinearPH
        The surrogate (invertible ``E``).

    Returns
    -------
    dict of str to ndarray
        ``x' = A x + B u``, ``y = C x + D u``, ``H = ½ xᵀ HM x``; with ``w = (x, u)``:
        ``w' = M w``, dissipated power ``wᵀ PR w``, supplied power ``wᵀ PS w``.
    """
    n, m = system.n_states, system.n_inputs
    E, Q = np.asarray(system.E, dtype=float), system.Q
    A = np.linalg.solve(E, (system.J - system.R) @ Q)
    Bu = np.linalg.solve(E, system.B)
    C = system.B.T @ Q
    p = n + m
    M, PR, PS = np.zeros((p, p)), np.zeros((p, p)), np.zeros((p, p))
    M[:n, :n], M[:n, n:] = A, Bu
    PR[:n, :n] = Q.T @ system.R @ Q
    PS[:n, n:], PS[n:, :n] = 0.5 * C.T, 0.5 * C
    return {"A": A, "B": Bu, "C": C, "D": np.zeros((m, m)), "HM": Q.T @ E, "M": M, "PR": PR,
            "PS": PS}


def _linear_data(system: Any) -> list[str]:
    n, m = system.n_states, system.n_inputs
    k = linear_matrices(system)
    return ["/* x' = SUR_A x + SUR_B u,  y = SUR_C x,  H = 1/2 x' SUR_HM x */",
            _c_array("SUR_A", k["A"]), _c_array("SUR_B", k["B"] if m else np.zeros((n, 1))),
            _c_array("SUR_C", k["C"]), _c_array("SUR_HM", k["HM"]),
            "/* w = (x, u): w' = SUR_M w; dissipated power w' SUR_PR w, supplied w' SUR_PS w */",
            _c_array("SUR_M", k["M"]), _c_array("SUR_PR", k["PR"]), _c_array("SUR_PS", k["PS"])]


def _scheme_data(system: Any, step: float | None, max_newton: int) -> list[str]:
    from fmu_surrogate.ph.integrators import GL_NODES, GL_WEIGHTS

    n, m = system.n_states, system.n_inputs
    E = np.asarray(system.E, dtype=float)
    rows_a, cols_a = _algebraic(system)
    rows_d = np.setdiff1d(np.arange(n), rows_a)
    cols_d = np.setdiff1d(np.arange(n), cols_a)
    Edd = E[np.ix_(rows_d, cols_d)]
    if np.linalg.cond(Edd) > 1.0 / _E_RCOND:
        raise ExportError("the differential block of E is singular: write E = diag(E_dd, 0) with "
                          "an invertible E_dd (algebraic states are zero columns of E).")
    return [
        f"#define SUR_NA {rows_a.size}", f"#define SUR_NA_ALLOC {max(rows_a.size, 1)}",
        f"#define SUR_ND {cols_d.size}", f"#define SUR_BS {max(m, 1)}",
        f"#define SUR_NQ {GL_NODES.size}", f"#define SUR_STEP {float(step or 0.0)!r}",
        f"#define SUR_MAX_NEWTON {int(max_newton)}",
        _c_array("SUR_E", E), _c_array("SUR_T", system.J - system.R), _c_array("SUR_R", system.R),
        _c_array("SUR_B", system.B if m else np.zeros((n, 1))),
        _c_array("SUR_EINV", np.linalg.inv(Edd)), _c_ints("SUR_ROWS_D", rows_d),
        _c_ints("SUR_ROWS_A", rows_a), _c_ints("SUR_COLS_A", cols_a),
        _c_array("SUR_NODES", GL_NODES), _c_array("SUR_WEIGHTS", GL_WEIGHTS),
        effort_c_source(system, "eff"), "#define SUR_HAS_H eff_HAS_H",
    ]


def surrogate_data(system: Any, *, step: float | None = None, max_newton: int = 25) -> str:
    """Text of ``surrogate_data.h``: the matrices (linear) or the scheme's data and the effort's
    C code (nonlinear).

    Parameters
    ----------
    system : LinearPH or PHDAE
        The surrogate.
    step : float, optional
        Internal step of the nonlinear scheme (0: one per communication step).
    max_newton : int
        Newton iterations per step before the FMU reports a failure.

    Returns
    -------
    str
    """
    body = _linear_data(system) if is_exact_linear(system) else _scheme_data(system, step,
                                                                               max_newton)
    return "\n".join(["/* Generated by fmu_surrogate.export: the surrogate's data (row-major). */",
                      "#ifndef SURROGATE_DATA_H", "#define SURROGATE_DATA_H", *body, "#endif",
                      ""])
