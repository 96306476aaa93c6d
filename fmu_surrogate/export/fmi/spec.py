"""What an exported surrogate FMU contains: its variables (one :class:`ModelSpec`).

Variables, in value-reference order (all Real): the external inputs and outputs (the pH ports
of a bare system, the :class:`~fmu_surrogate.ph.ports.PortMap`'s variables of a
``PortedSystem``), ``H`` and ``energy_residual`` (when the surrogate has a Hamiltonian), the
parameters ``x_start[i]`` (the initial state, settable before initialisation), the constant
sources of a ``PortedSystem`` (tunable parameters named after their pH ports), the source FMU's
parameters at the values the surrogate was identified at (fixed; another value is refused when
the FMU leaves initialisation), the states
(calculated from ``x_start``), the derivatives of the differential states, ``energy_dissipated``,
``energy_supplied`` and their derivatives, and with a constant part ``cu`` of the port inputs
``energy_supplied_sources`` (its share of ``energy_supplied``) and its derivative.  The value
references the C code needs are ``#define``\\ d from the same list, so the XML and the binary
cannot disagree.  Outputs and derivatives declare their true dependencies
(:mod:`fmu_surrogate.export.fmi.structure`).

A surrogate with a delayed feedthrough (:mod:`fmu_surrogate.ph.ports`: in co-simulation its
outputs at a communication point see the inputs the last step held, ``c/wiring.h``) has, after
``x_start``, the parameters ``<input>_before`` when its ``inputs_before`` are given: the inputs
held before the first step, their start values those of ``inputs_before``.  Its co-simulation
outputs depend on no input, but for those of a fast feedthrough (``fast_feedthrough``: the
response to inputs set since the last step).  A co-simulation-only FMU declares exactly that; one
that also has model exchange (no steps: the continuous-time model, outputs with the direct
feedthrough) has one ``<ModelStructure>`` for both and declares the direct feedthrough: a
dependency declared but absent (in co-simulation) costs an importer at most an algebraic loop it
need not solve, one absent but real (in model exchange) would give it wrong outputs.  Without a
feedthrough (no output depends on an input) there is nothing to delay, and the FMU is exported
as one without.

A surrogate that starts at the equilibrium of its first inputs (``initial="equilibrium"``,
``c/equilibrium.h``) has the same variables: ``x_start`` is Newton's starting point (unused by
a linear core, whose equilibrium is one solve), the states are calculated at initialisation
from it, the inputs that reach the pH ports and the sources, and so is everything that reads
the states at the start (``<InitialUnknowns>``).

A surrogate with late outputs (:mod:`fmu_surrogate.ph.ports`: in co-simulation the outputs read
at a communication point are those of the point before, state and inputs, ``c/wiring.h``) is
co-simulation only (:mod:`fmu_surrogate.export.fmi.fmu_export`); its outputs depend on no input,
at the start on the states' start values and the inputs (the outputs after initialisation are
those of the start).  ``H`` and the energies are the core's at the current time, as without.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from fmu_surrogate.export.fmi.c_data import algebraic, is_exact_linear, linear_matrices
from fmu_surrogate.export.fmi.model_description import Experiment, ModelSpec, Var
from fmu_surrogate.export.fmi.structure import (
    Sparsity,
    linear_sparsity,
    nonlinear_sparsity,
    with_static_law,
)
from fmu_surrogate.export.names import exported_names, sanitize
from fmu_surrogate.export.wiring import Wiring

__all__ = ["surrogate_spec"]

def _has_h(system: Any) -> bool:
    return is_exact_linear(system) or bool(system.has_hamiltonian)


def _start_name(i: int) -> str:
    return f"x_start[{i + 1}]"


def _sparsity(w: Wiring) -> Sparsity:
    if is_exact_linear(w.system):
        sp = linear_sparsity(linear_matrices(w), w.Tu, w.sources)
    else:
        sp = nonlinear_sparsity(w, *algebraic(w.system))
    return with_static_law(sp, w.law)


def _with_dependencies(v: list[Var], w: Wiring, names: dict[str, dict[str, str]],
                       cols_d: np.ndarray, src: list[str], before: list[str],
                       model_exchange: bool) -> list[Var]:
    """``v`` with the ``<ModelStructure>`` dependencies of its unknowns (:mod:`.structure`);
    ``src`` names the source parameters, ``before`` the parameters ``<input>_before``."""
    sp = _sparsity(w)
    ins, outs, sts = (list(names[g].values()) for g in ("inputs", "outputs", "states"))
    energies = ("energy_dissipated", "energy_supplied")

    # at the start a state is x_start, or the equilibrium of the inputs that reach the ports
    # and of the sources, found from all of x_start (Newton's start; a linear core's one solve
    # needs none)
    start = {j: (_start_name(j),) for j in range(len(sts))}
    if w.equilibrium:
        guess = () if is_exact_linear(w.system) else tuple(map(_start_name, range(len(sts))))
        reach = (*guess,
                 *(ins[k] for k in np.flatnonzero(np.any(w.Tu != 0, axis=0))), *src)
        start = dict.fromkeys(start, reach)

    def deps(mx: np.ndarray, mu: np.ndarray, ms: np.ndarray | None = None
             ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        us = tuple(ins[k] for k in np.flatnonzero(mu))
        ss = () if ms is None else tuple(src[k] for k in np.flatnonzero(ms))
        init = tuple(d for j in np.flatnonzero(mx) for d in start[j]) + us + ss
        return tuple(sts[j] for j in np.flatnonzero(mx)) + us, tuple(dict.fromkeys(init))

    def row(a: np.ndarray | None, i: int) -> np.ndarray | None:
        return None if a is None else a[i]

    table = {outs[i]: deps(sp.y_x[i], sp.y_u[i], row(sp.y_s, i)) for i in range(len(outs))}
    table.update({f"der({sts[j]})": deps(sp.dx_x[k], sp.dx_u[k], row(sp.dx_s, k))
                  for k, j in enumerate(cols_d)})
    table.update({sts[j]: ((), start[j]) for j in cols_d})
    table["H"] = deps(sp.h_x, sp.h_u)
    table["energy_residual"] = (table["H"][0] + energies, table["H"][1] + energies)
    table["der(energy_dissipated)"] = deps(sp.diss_x, sp.diss_u, sp.diss_s)
    table["der(energy_supplied)"] = deps(sp.supp_x, sp.supp_u, sp.supp_s)
    table["der(energy_supplied_sources)"] = table["der(energy_supplied)"]
    if w.delayed or w.late:  # the outputs see the inputs of the step before (module docs)
        # at the start algebraic states follow the inputs themselves, whatever was held before
        # (and so do all states at an equilibrium)
        start_on_inputs = not before or cols_d.size < len(sts) or w.equilibrium
        for i, o in enumerate(outs):
            dy, init = table[o]
            seen = tuple(before[k] for k in np.flatnonzero(sp.y_u[i])) if before else ()
            fast: tuple[str, ...] = ()  # the inputs set since the last step held them
            if w.fast_feedthrough is not None:
                fast = tuple(ins[k] for k in np.flatnonzero(w.fast_feedthrough[i]))
                seen += tuple(before[ins.index(a)] for a in fast) if before else ()
            if not model_exchange:  # co-simulation only: no input, at the start the held ones
                dy = tuple(d for d in dy if d not in ins)
                init = tuple(d for d in init if d not in ins or start_on_inputs)
            table[o] = (tuple(dict.fromkeys(dy + fast)), tuple(dict.fromkeys(init + fast + seen)))
    if not model_exchange:  # the states are internal: an output lists the inputs only
        hidden = set(sts) | set(energies)
        table = {k: (tuple(d for d in dy if d in ins), tuple(d for d in init if d not in hidden))
                 for k, (dy, init) in table.items()}
    return [replace(var, dependencies=table[var.name][0] if var.causality == "output"
                    or model_exchange else None,
                    initial_dependencies=table[var.name][1]) if var.name in table else var
            for var in v]


def surrogate_spec(w: Wiring, identifier: str, *, step: float | None = None,
                   model_exchange: bool = True) -> ModelSpec:
    """The :class:`ModelSpec` of an exported surrogate.

    Parameters
    ----------
    w : Wiring
        The surrogate, its external variables and initial state
        (:func:`fmu_surrogate.export.wiring.wiring`).
    identifier : str
        ``modelIdentifier`` (a C identifier).
    step : float, optional
        Internal step of the scheme (written as the default experiment's step size).
    model_exchange : bool
        Declare model exchange as well as co-simulation (``False``: co-simulation only, the
        states internal).

    Returns
    -------
    ModelSpec
    """
    if w.delayed and w.fast_feedthrough is None and not _sparsity(w).y_u.any():
        w = replace(w, delayed=False, inputs_before=None)  # no feedthrough: nothing to delay
    system = w.system
    names = exported_names(w)
    n, m = system.n_states, system.n_inputs
    k_in, k_out = len(w.input_names), len(w.output_names)
    ins, outs, sts = (list(names[g].values()) for g in ("inputs", "outputs", "states"))
    exact = is_exact_linear(system)
    cols_d = np.arange(n) if exact else np.setdiff1d(np.arange(n), algebraic(system)[1])

    def orig(group: str, i: int, default: str) -> str:
        o = list(names[group])[i]
        return f"{default} (surrogate name {o!r})" if names[group][o] != o else default

    law = "" if getattr(system, "nonlinear_feedthrough", None) is None else " + S_nl(u) u"
    y_text = (f"y = (G + P)^T z(x) + (S - N) u{law}" if w.identity else
              "y_ext = Ty y + Cx x + Du u_ext + cy of the pH port outputs y")
    if w.Cdx is not None:
        y_text += " + Cdx x' (the states' rate)"
    if w.law is not None:
        y_text += f" + a static law of u_ext ({w.law.n_terms} terms)"
    if w.delayed:
        y_text += (", in co-simulation of the inputs the last step held" + (
            " and of the change of those set since" if w.fast_feedthrough is not None else ""))
    if w.late:
        y_text += ", in co-simulation that of the state and inputs the last step started from"
    v = [Var(ins[i], "input", start=w.input_starts.get(w.input_names[i], 0.0),
             unit=w.input_units[i],
             description=orig("inputs", i, f"input {i + 1}") + (
                 f" (held at {w.held_inputs[w.input_names[i]]:g} in all the data: the surrogate "
                 "refuses other values)" if w.input_names[i] in w.held_inputs else ""))
         for i in range(k_in)]
    v += [Var(outs[i], "output", unit=w.output_units[i],
              description=orig("outputs", i, f"output {i + 1}, {y_text}")) for i in range(k_out)]
    if _has_h(system):
        v += [Var("H", "output", description="Hamiltonian H(x) (stored energy)"),
              Var("energy_residual", "output",
                  description="H(x) - H(x_init) + dissipated - supplied (0 for an exact balance)")]
    xs0 = len(v)
    alg = set(range(n)) - set(cols_d.tolist())
    v += [Var(_start_name(i), "parameter", "fixed", float(w.x0[i]), unit=w.state_units[i],
              description=(f"unused: {sts[i]} starts at the equilibrium of the inputs, one "
                           "linear solve" if w.equilibrium and exact else
                           f"Newton's starting point for {sts[i]} at the equilibrium of the "
                           "inputs the FMU starts at" if w.equilibrium else
                           f"initial value of {sts[i]}"
                           + (" (a guess: made consistent with the inputs)" if i in alg else "")))
          for i in range(n)]
    ub0 = len(v)
    before = [] if w.inputs_before is None else sanitize(
        [f"{x}_before" for x in ins], taken=[x.name for x in v] + sts)
    v += [Var(before[k], "parameter", "fixed", float(w.inputs_before[k]), unit=w.input_units[k],
              description=f"{ins[k]} held over the step before the start: the co-simulation "
              "outputs at the start see it (delayed feedthrough)") for k in range(len(before))]
    src0 = len(v)
    src = sanitize(w.source_names, taken=[x.name for x in v] + sts)
    v += [Var(src[k], "parameter", "tunable", float(w.cu[i]),
              description=f"constant source driving pH port {i + 1} ({w.system.input_names[i]!r};"
              " its power counts as supplied)")
          for k, i in enumerate(w.sources)]
    par0 = len(v)
    pars = sanitize(list(w.parameters), taken=[x.name for x in v] + sts + ins + outs)
    v += [Var(pars[k], "parameter", "fixed", float(val),
              description=f"parameter {name!r} of the source FMU: the surrogate was identified at "
              "this value and holds for it only (another value is refused)")
          for k, (name, val) in enumerate(w.parameters.items())]
    x0_vr = len(v)
    v += [Var(sts[i], "local", "continuous", unit=w.state_units[i],
              description=orig("states", i, "algebraic state" if i in alg
                               else f"state {i + 1}")) for i in range(n)]
    dx0 = len(v)
    v += [Var(f"der({sts[i]})", derivative=sts[i]) for i in cols_d]
    v += [Var("energy_dissipated", "local", "continuous", 0.0,
              description=f"dissipated energy, integral of [z; u]^T W [z; u]"
                          f"{' + u^T S_nl(u) u' if law else ''}"),
          Var("energy_supplied", "local", "continuous", 0.0,
              description="energy supplied through the pH ports (sources included), "
                          "integral of y^T u"),
          Var("der(energy_dissipated)", derivative="energy_dissipated",
              description=f"dissipated power [z; u]^T W [z; u]"
                          f"{' + u^T S_nl(u) u' if law else ''}"),
          Var("der(energy_supplied)", derivative="energy_supplied",
              description="supplied power y^T u")]
    has_src = bool(w.sources.size or np.any(w.cu != 0))
    if has_src:
        v += [Var("energy_supplied_sources", "local", "continuous", 0.0,
                  description="energy supplied by the constant part cu of the pH port inputs "
                              "(sources, offsets; part of energy_supplied), integral of y^T cu"),
              Var("der(energy_supplied_sources)", derivative="energy_supplied_sources",
                  description="power of the constant part of the pH port inputs, y^T cu")]
    v = _with_dependencies(v, w, names, cols_d, src, before, model_exchange)
    changed = [f"{o!r} -> {s}" for g in names.values() for o, s in g.items() if o != s]
    longest = getattr(system, "max_step", None)  # the internal step when none is asked for
    internal = (step if step else f"at most {longest:g} s: ceil(H / {longest:g}) equal sub-steps "
                "of a communication step H" if longest else "one per communication step")
    scheme = ("steps exactly for inputs held over a step" if exact else
              "steps with the average-vector-field scheme of fmu_surrogate.ph.simulate "
              f"(hold='zoh', internal step {internal})")
    desc = (f"port-Hamiltonian surrogate ({type(system).__name__}, n = {n}, m = {m}) exported by "
            f"fmu-surrogate; co-simulation {scheme}")
    if w.delayed:
        desc += ("; its co-simulation outputs see the inputs the last step held (delayed "
                 "feedthrough)")
    if w.late:
        desc += ("; its co-simulation outputs are those of the state and inputs the last step "
                 "started from (late outputs)")
    if w.first is not None:
        desc += "; before its first step it shows fixed outputs, as the source FMU"
    if w.equilibrium:
        desc += ("; it starts at the equilibrium of the inputs it has when it leaves "
                 "initialisation (x_start: Newton's starting point)")
    if changed:
        desc += "; names sanitised: " + ", ".join(changed)
    if exact:
        data = "double sur_h0;"
        work = ("int sur_cached; double sur_h; double sur_phi[NW * NW]; double sur_wr[NW * NW]; "
                "double sur_ws[NW * NW]; double sur_psi[NW * NW];")
    else:
        # FMU_ALLOC_SIZE: one unused element for a surrogate without states (C has no empty
        # arrays)
        # the last step's first Newton Jacobian and Newton's start there are state: they decide
        # whether a first correction is accepted (c/surrogate_nonlinear.c, one_correction)
        data = ("double sur_h0; int sur_started; double sur_hprev; double sur_hprev2; "
                "double sur_xprev[FMU_ALLOC_SIZE(NX)]; double sur_xprev2[FMU_ALLOC_SIZE(NX)]; "
                "double sur_x0prev[FMU_ALLOC_SIZE(NX)]; "
                "double sur_jprev[FMU_ALLOC_SIZE(NX * NX)];")
        work = " ".join(f"double sur_{a}[FMU_ALLOC_SIZE(NX * NX)];"
                        for a in ("jz", "dzb", "jac", "jf"))
        # the Newton matrix's LU and inverse, or its SVD (c/surrogate_nonlinear.c)
        work += (" double sur_svd[FMU_ALLOC_SIZE(2 * NX * NX + NX)];"
                 " int sur_piv[FMU_ALLOC_SIZE(NX)];")
        # memos of z(x), H(x), the dissipation rate (by z) and the port law (by u); not state
        work += (" int sur_memo; double sur_mx[FMU_ALLOC_SIZE(NX)]; double sur_mz[FMU_ALLOC_SIZE(NX)];"
                 " double sur_mh; int sur_memo_z; double sur_mrz[FMU_ALLOC_SIZE(NX)]; double sur_mr;"
                 " int sur_memo_u; double sur_mu[FMU_ALLOC_SIZE(NU)];"
                 " double sur_mfu[FMU_ALLOC_SIZE(NU)]; double sur_mur;")
    defines: dict[str, int | float | str] = {
        "NX": n, "NU": m, "NUE": k_in, "NYE": k_out, "NW": "(NX + NU)", "SUR_VR_U0": 0,
        "SUR_VR_Y0": k_in, "SUR_VR_XS0": xs0, "SUR_VR_SRC0": src0, "SUR_VR_X0": x0_vr,
        "SUR_VR_DX0": dx0, "SUR_HAS_SRC": int(has_src), "MODEL_DO_STEP": 1,
        "MODEL_EXTRA_DATA": data, "MODEL_EXTRA_WORKSPACE": work,
    }
    if w.delayed:  # c/wiring.h: the inputs the last step held, saved with the FMU state
        defines["SUR_DELAYED"] = 1
        defines["MODEL_EXTRA_DATA"] = f"{data} double sur_ustep[FMU_ALLOC_SIZE(NUE)];"
        if before:
            defines["SUR_VR_UB0"] = ub0
    if w.late:  # c/wiring.h: the outputs frozen at the start of a step, saved with the FMU state
        defines["SUR_LATE"] = 1
        defines["MODEL_EXTRA_DATA"] = (f"{data} int sur_late; "
                                       "double sur_ylate[FMU_ALLOC_SIZE(NYE)];")
    if w.first is not None:  # c/wiring.h: until the first step fixed outputs; a state flag
        defines["SUR_FIRST"] = 1
        defines["MODEL_EXTRA_DATA"] = f"{defines['MODEL_EXTRA_DATA']} int sur_first;"
    if w.parameters:  # checked by the framework when the FMU leaves initialisation
        defines["MODEL_FIXED_VRS"] = ", ".join(str(par0 + k) for k in range(len(pars)))
        defines["MODEL_FIXED_VALUES"] = ", ".join(repr(float(x)) for x in w.parameters.values())
    held = [(w.input_names.index(k), float(x)) for k, x in w.held_inputs.items()
            if k in w.input_names]
    if held:  # checked by the framework whenever the model is evaluated
        defines["MODEL_HELD_VRS"] = ", ".join(str(i) for i, _ in held)  # inputs come first
        defines["MODEL_HELD_VALUES"] = ", ".join(repr(x) for _, x in held)
    return ModelSpec(identifier, desc,
                     "surrogate_linear.c" if exact else "surrogate_nonlinear.c", tuple(v),
                     Experiment(0.0, 1.0, step), defines=defines,
                     # delayed or late outputs have no derivative on the inputs in
                     # co-simulation, the C code's is the continuous-time model's: none declared
                     directional_derivatives=not alg and not w.delayed and not w.late,
                     generation_tool="fmu-surrogate (fmu_surrogate.export)",
                     model_exchange=model_exchange)
