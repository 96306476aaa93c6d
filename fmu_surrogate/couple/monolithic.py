"""The monolithic alternative: interconnect the components' pH models and integrate them as one.

Every component is a pH core with an affine wiring to its FMU variables
(:class:`~fmu_surrogate.ph.PortMap`: ``u_ph = Tu u_ext + cu``,
``y_ext = Ty y_ph + Cx x + Du u_ext + cy``), a drop-in surrogate's own or the signed selection
that a component's ``ports`` describe.  A connection ``A.y -> B.u`` between power ports (the
output one pH port with a sign, the input feeding one pH port with a sign) gives
``u_i = K_ij y_j`` with ``K_ij = κ s_i s_j`` for the connection's factor ``κ`` (``−1`` where it
inverts the sign; an offset is refused); the coupled ports form ``û + Ĉ ŷ = 0`` with ``Ĉ = −K``
on them (docs/design.md §2), and :func:`fmu_surrogate.ph.interconnect` builds the coupled system
(refusing a non-skew ``Ĉ``).  The other pH ports stay *free*: driven by the unconnected inputs
(the system's driven inputs ``system.inputs``, held over each step like in a co-simulation;
else their values from the component's ``parameters`` that name inputs, else 0) and the
internal constant sources ``cu`` (a preload, an offset), whose power enters the energy balance
as supplied.
:func:`fmu_surrogate.ph.simulate` integrates the coupled system with the implicit midpoint rule,
which keeps ``H(t_N) − H(t_0) + ∫ [z; u]ᵀ W [z; u] dt − ∫ yᵀu dt = 0`` to round-off for
quadratic H; every bond conserves power at every instant.

Nonlinear surrogates (:class:`~fmu_surrogate.ph.NonlinearPH`, with linear parts of ``E = I``)
interconnect into one NonlinearPH (their convex energies and power-law dissipations stacked)
that :func:`~fmu_surrogate.ph.simulate` steps with the average-vector-field scheme, whose
discrete balance ``H(x_N) − H(x_0) + Σ h [z̄; ū]ᵀW(z̄)[z̄; ū] − Σ h ȳᵀū`` is the run's
``energy_residual`` (the Newton tolerance, and the quadrature of non-polynomial ridges).  A
surrogate's nonlinear feedthrough ``S_nl(u)`` (the identified power-law damper of
``braked_mass.toml``) couples where its port is bonded to one without feedthrough (the mass's
velocity): its law becomes a power-law dissipation of the coupled state, passive by construction
and inside the same balance; on a free port it stays the coupled system's ``S_nl``.  A law in an
algebraic loop (bonded to a port with feedthrough: a nonlinear equation at every instant) or
reading a state and an input at once (its partner passes a driven input or an internal source
through) is refused with :class:`~fmu_surrogate.couple.system.CouplingError`: run such a system
on libcosim.

Components with a feedthrough (``y = (G + P)ᵀ Q x + D u``) close an algebraic loop through
their coupled ports; ``interconnect`` solves it (and refuses a loop without a unique solution),
and the port values are read back from ``(I − D K) y = (G + P)ᵀ Q x + D u_free`` (plus the
force ``S_nl(u) u`` at the inputs that loop gives, which no ``S_nl`` term feeds).  Measured
outputs (a position, an acceleration) are computed from the states and inputs; they may feed
nothing in the monolithic form (a connection carries power between pH ports here).

The start.  A component starts from its initial state ``x0``, or, under the rule
``initial="equilibrium"`` (a drop-in surrogate of a vendor's FMU initialised in steady state),
where a co-simulation master would find the FMU it replaces: at rest under the inputs it sees
at ``t₀`` — the other components' outputs through the connections, the driven inputs' first
values, its parameters and sources.  Those inputs depend on the states (the connected ports'
outputs, through any loop of feedthrough), so the states ``x_e`` of all such components solve
at once the rows of the coupled system's flow that are theirs, with every other state held at
its ``x0``: ``[(J − R(x)) z(x) + (G − P) u_free(t₀)]_e = 0`` (:meth:`Assembled.start`, Newton
from the ``x0`` of each by :func:`~fmu_surrogate.ph.simulation.equilibrium.equilibrium`).  The
coupled rows are the components' own flows at the inputs the coupling gives them, the loops
solved; the energy balance of the run starts from the ``H`` of that state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import xarray as xr

from fmu_surrogate.couple.results.energy import BondUnits, bond_units, unit_attrs, with_units
from fmu_surrogate.couple.system import Component, CouplingError, System
from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset
from fmu_surrogate.ph import (
    PHDAE,
    ConvergenceError,
    LinearPH,
    PortMap,
    StructureError,
    interconnect,
    simulate,
)
from fmu_surrogate.ph.simulation.equilibrium import equilibrium

__all__ = ["Assembled", "assemble", "exact", "jacobi_loop_gain", "run_monolithic"]


@dataclass
class _Part:
    """One component in the assembly: its core, wiring, offsets and external input values."""

    name: str
    core: PHDAE
    wiring: PortMap
    port0: int  # first global pH port
    state0: int  # first global state
    u_ext: np.ndarray  # values of the external inputs (parameters, else 0; connected: unused)
    held: dict  # inputs the surrogate saw at one value only


class Assembled:
    """The interconnected pH system and the maps back to FMU variables.

    Attributes
    ----------
    system : LinearPH or NonlinearPH
        The coupled system from :func:`fmu_surrogate.ph.interconnect`; its inputs are the free
        pH ports (:attr:`free`).
    parts : LinearPH or NonlinearPH
        The uncoupled block-diagonal system with every port (maps states to port values).
    x0 : ndarray, shape (n,)
        The components' initial states (under the equilibrium rule: the guesses).
    at_rest : ndarray of int
        Global indices of the states of the components that start at an equilibrium
        (``initial="equilibrium"``; :meth:`start`).
    K : ndarray, shape (m, m)
        Coupling ``u = K y + u_free`` over all pH ports.
    free : ndarray of int
        Global indices of the free pH ports, in the order of ``system``'s inputs.
    u_free : ndarray, shape (len(free),)
        Their values with no input driven (parameters, internal sources).
    outputs, inputs : dict of str to (int, int)
        ``"component.variable" -> (global pH port, sign)`` of the connected power variables.
    """

    def __init__(self, system: PHDAE, x0: np.ndarray, K: np.ndarray, parts: PHDAE,
                 members: list[_Part], free: np.ndarray, u_free: np.ndarray,
                 outputs: dict, inputs: dict, at_rest: np.ndarray | None = None) -> None:
        self.system, self.x0, self.K, self.parts = system, x0, K, parts
        self.members, self.free, self.u_free = members, free, u_free
        self.outputs, self.inputs = outputs, inputs
        self.at_rest = np.zeros(0, dtype=int) if at_rest is None else np.asarray(at_rest, int)

    def start(self, u_free: np.ndarray) -> np.ndarray:
        """The coupled system's initial state under the free ports' first values ``u_free``:
        :attr:`x0`, the states :attr:`at_rest` replaced by the equilibrium of their rows of the
        coupled flow with the others held (module docstring).

        Parameters
        ----------
        u_free : ndarray, shape (len(free),)
            The free pH ports' values at ``t₀`` (:meth:`free_inputs`).

        Returns
        -------
        ndarray, shape (n,)

        Raises
        ------
        CouplingError
            No equilibrium (the inputs at ``t₀`` drive a lossless mode, as a constant force a
            free mass), naming the components.
        """
        if self.at_rest.size == 0:
            return self.x0
        try:
            return equilibrium(self.system, u_free, self.x0, states=self.at_rest)
        except ConvergenceError as exc:
            names = [p.name for p in self.members
                     if np.isin(self.at_rest, range(p.state0, p.state0 + p.core.n_states)).any()]
            raise CouplingError(
                f"components {names} start at the equilibrium of the inputs they see at t0 "
                f"(initial='equilibrium'), but the coupled system has none with the other "
                f"components at their initial states ({exc}); give them an initial state "
                f"(initial='state', or x0 in the system).") from exc

    def external(self, drivers: Mapping[str, object], time: np.ndarray) -> list[np.ndarray]:
        """Every component's external inputs on ``time``, shape (T, k_in) each: the driven ones
        from their signals (``"component.variable" -> Signal``), the others at their values
        (connected ones are overwritten by :func:`_variables`).

        Raises
        ------
        CouplingError
            A driven variable that is no unconnected input of a component's pH model.
        """
        out = [np.tile(p.u_ext, (len(time), 1)) for p in self.members]
        index = {p.name: k for k, p in enumerate(self.members)}
        for ref, sig in drivers.items():
            comp, _, var = ref.partition(".")
            k = index.get(comp)
            if k is None or var not in self.members[k].wiring.input_names or ref in self.inputs:
                free = [f"{p.name}.{v}" for p in self.members for v in p.wiring.input_names
                        if f"{p.name}.{v}" not in self.inputs]
                raise CouplingError(f"driven input {ref} is no free pH input of its component "
                                    f"(free inputs: {free}); drive one of those, or run the "
                                    "system on libcosim.")
            values = sig(time)
            held = self.members[k].held.get(var)
            if held is not None and np.any(np.abs(values - held) > 1e-12 * abs(held)):
                raise CouplingError(f"driven input {ref}: it was {held:g} in all the data its "
                                    f"surrogate was identified from, so it holds for that value "
                                    f"only; harvest the FMU with {var} varied and identify it "
                                    "again.")
            out[k][:, self.members[k].wiring.input_names.index(var)] = values
        return out

    def free_inputs(self, u_ext: list[np.ndarray]) -> np.ndarray:
        """Inputs of :attr:`system` (the free pH ports) from every component's external inputs,
        shape (T, len(free))."""
        u = np.hstack([e @ p.wiring.Tu.T + p.wiring.cu for e, p in zip(u_ext, self.members)])
        return u[:, self.free]


def _wiring(name: str, c: Component) -> PortMap:
    """A component's wiring: its drop-in surrogate's, or the signed selection of ``ports``."""
    if c.wiring is not None:
        return c.wiring
    m, n = c.ph.n_inputs, c.ph.n_states
    ins = [v for v, (kind, _, _) in c.ports.items() if kind == "u"]
    outs = [v for v, (kind, _, _) in c.ports.items() if kind == "y"]
    Tu, Ty = np.zeros((m, len(ins))), np.zeros((len(outs), m))
    for j, v in enumerate(ins):
        _, i, s = c.ports[v]
        Tu[i, j] = s
    for j, v in enumerate(outs):
        _, i, s = c.ports[v]
        Ty[j, i] = s
    return PortMap(tuple(ins), tuple(outs), None, None, Tu, np.zeros(m), Ty,
                   np.zeros((len(outs), n)), np.zeros((len(outs), len(ins))), np.zeros(len(outs)))


def _signed(row: np.ndarray) -> tuple[int, int] | None:
    nz = np.flatnonzero(row)
    if nz.size != 1 or abs(row[nz[0]]) != 1.0:
        return None
    return int(nz[0]), int(row[nz[0]])


def _power_output(p: _Part, var: str) -> tuple[int, int]:
    w = p.wiring
    j = w.output_names.index(var)
    got = _signed(w.Ty[j])
    law = w.law is not None and w.law.C[j].any()
    if got is None or w.Cx[j].any() or w.Cdx[j].any() or w.Du[j].any() or w.cy[j] or law:
        raise CouplingError(f"connection from {p.name}.{var}: it is not one pH port output with a "
                            "sign ±1 (it reads states, their rates, inputs, a static law of them "
                            "or an offset: a measured output); the monolithic form connects power "
                            "ports only — use a co-simulation algorithm.")
    return p.port0 + got[0], got[1]


def _power_input(p: _Part, var: str) -> tuple[int, int]:
    w = p.wiring
    j = w.input_names.index(var)
    got = _signed(w.Tu[:, j])
    if got is None or np.count_nonzero(w.Tu[got[0]]) != 1 or w.cu[got[0]]:
        raise CouplingError(f"connection to {p.name}.{var}: it does not drive one pH port alone "
                            "with a sign ±1; the monolithic form connects power ports only — use "
                            "a co-simulation algorithm.")
    return p.port0 + got[0], got[1]


def assemble(system: System) -> Assembled:
    """Interconnect the components' pH models along the system's connections.

    Raises
    ------
    CouplingError
        A component has no pH model, a connected variable is no power port, a port is coupled
        one way only, or the coupling is not skew.
    """
    members: list[_Part] = []
    at_rest: list[int] = []
    m = n = 0
    for name, c in system.components.items():
        if c.ph is None:
            raise CouplingError(f"component {name!r} has no pH model; the monolithic algorithm "
                                "needs every component to be a pH surrogate.")
        w = _wiring(name, c)
        unknown = sorted(set(c.parameters) - set(w.input_names))
        if unknown and c.surrogate is not None:  # an FMU's own parameters made its pH model
            raise CouplingError(f"component {name!r}: {unknown} are not inputs of its pH model; "
                                "the monolithic form sets inputs only (parameters are fixed in a "
                                "surrogate).")
        u_ext = np.array([float(c.parameters.get(v, 0.0)) for v in w.input_names])
        members.append(_Part(name, c.ph, w, m, n, u_ext, dict(c.held_inputs)))
        if c.initial == "equilibrium":
            at_rest.extend(range(n, n + c.ph.n_states))
        m += c.ph.n_inputs
        n += c.ph.n_states
    by_name = {p.name: p for p in members}
    K = np.zeros((m, m))
    outputs, inputs = {}, {}
    for con in system.all_connections():
        a, b = by_name[con.source[0]], by_name[con.target[0]]
        for p, var, names in ((a, con.source[1], a.wiring.output_names),
                              (b, con.target[1], b.wiring.input_names)):
            if var not in names:
                raise CouplingError(f"connection {con}: {p.name}.{var} is not a variable of the "
                                    "component's pH model (add it to the component's ports).")
        if con.offset:
            raise CouplingError(f"connection {con}: an offset is a source of power between pH "
                                "ports, which the monolithic form does not hold; run the system "
                                "on libcosim, or give the offset to the component.")
        j, sj = _power_output(a, con.source[1])
        i, si = _power_input(b, con.target[1])
        K[i, j] = con.factor * si * sj
        outputs[".".join(con.source)] = (j, sj)
        inputs[".".join(con.target)] = (i, si)
    coupled = sorted(set(np.nonzero(K.any(axis=1))[0]) | set(np.nonzero(K.any(axis=0))[0]))
    if any(not K[i].any() or not K[:, i].any() for i in coupled):
        raise CouplingError("the monolithic form needs every connected pH port coupled both ways "
                            "(its input driven and its output used); connect them in pairs.")
    C = -K[np.ix_(coupled, coupled)]
    ports = [[i - p.port0 for i in coupled if p.port0 <= i < p.port0 + p.core.n_inputs]
             for p in members]
    try:
        ph = interconnect([p.core for p in members], C, ports, names=[p.name for p in members])
    except StructureError as exc:
        if np.array_equal(C, -C.T):  # skew: the loop through the feedthroughs is singular
            raise CouplingError(f"the components cannot be interconnected: {exc}") from exc
        raise CouplingError(f"the coupling is not skew (a bond creates energy): {exc}") from exc
    free = np.array([i for i in range(m) if i not in set(coupled)], dtype=int)
    u_all = np.concatenate([p.wiring.Tu @ p.u_ext + p.wiring.cu for p in members] or
                           [np.zeros(0)])
    cores = [p.core for p in members]
    if isinstance(ph, LinearPH):
        full = LinearPH(sla.block_diag(*[c.J for c in cores]),
                        sla.block_diag(*[c.R for c in cores]),
                        sla.block_diag(*[c.Q for c in cores]),
                        sla.block_diag(*[c.B for c in cores]),
                        P=sla.block_diag(*[c.P for c in cores]),
                        S=sla.block_diag(*[c.S for c in cores]),
                        N=sla.block_diag(*[c.N for c in cores]))
    else:  # every port open: the parts side by side, their laws kept
        full = interconnect(cores, np.zeros((0, 0)), [[] for _ in cores])
    x0 = np.concatenate([np.zeros(p.core.n_states) if system.components[p.name].x0 is None
                         else np.asarray(system.components[p.name].x0, float) for p in members])
    return Assembled(ph, x0, K, full, members, free, u_all[free], outputs, inputs,
                     np.array(at_rest, dtype=int))


def jacobi_loop_gain(system: System) -> float | None:
    """Gain of the algebraic loops of a co-simulation: the spectral radius of ``D K``.

    A non-iterative (Jacobi) co-simulation evaluates ``y = C x + D K y`` with ``y`` of the
    previous step on the right, so along a loop of direct feedthrough its values go through the
    fixed-point iteration ``y ← D K y`` once per step: it converges only when ``ρ(D K) < 1``,
    whatever the step size.  The damper ``F = c v`` bonded to a mass behind a damper ``d``
    (``v = v_m + F_B / d``) has the gain ``c / d`` once around the loop, which takes two steps:
    ``ρ = sqrt(c / d)``.  ``0`` when no loop passes through feedthrough.

    Parameters
    ----------
    system : System

    Returns
    -------
    float or None
        ``None`` when a component has no pH model or a connection no pH port (unknown gain).
    """
    if any(c.ph is None for c in system.components.values()):
        return None
    try:
        asm = assemble(system)
    except CouplingError:
        return None
    if not asm.parts.D.any():
        return 0.0
    return float(np.max(np.abs(np.linalg.eigvals(asm.parts.D @ asm.K))))


def exact(asm: Assembled, time: np.ndarray) -> dict[str, np.ndarray]:
    """Exact solution (matrix exponential, constant free inputs) at ``time``, by variable,
    from :meth:`Assembled.start` of those inputs.

    Raises
    ------
    CouplingError
        The coupled system is not linear (there is no closed-form solution).
    """
    ph = asm.system
    if not isinstance(ph, LinearPH):
        raise CouplingError("the exact solution needs linear components; run_monolithic "
                            "simulates a nonlinear system.")
    A, Bf = (ph.J - ph.R) @ ph.Q, ph.B - ph.P
    n, k = A.shape[0], len(asm.free)
    M = np.zeros((n + k, n + k))
    M[:n, :n], M[:n, n:] = A, Bf
    w0 = np.concatenate([asm.start(asm.u_free), asm.u_free])
    x = np.array([(sla.expm(M * t) @ w0)[:n] for t in time])
    return _variables(asm, x, asm.external({}, time))


def _variables(asm: Assembled, x: np.ndarray, u_ext: list[np.ndarray]
               ) -> dict[str, np.ndarray]:
    """Every external variable of every component on the trajectory ``x`` (T, n), from the
    components' external inputs ``u_ext`` (:meth:`Assembled.external`)."""
    parts = asm.parts
    u_free = np.zeros((len(x), parts.n_inputs))
    u_free[:, asm.free] = asm.free_inputs(u_ext)
    if isinstance(parts, LinearPH):
        y0 = x @ (parts.output_matrix.T @ parts.Q).T + u_free @ parts.D.T
    else:
        y0 = parts.effort(x) @ parts.output_matrix + u_free @ parts.D.T
    loop = np.eye(parts.n_inputs) - parts.D @ asm.K
    # the loop through the feedthrough: y = C x + D (K y + u_free)
    y = np.linalg.solve(loop, y0.T).T if parts.D.any() else y0
    law = getattr(parts, "nonlinear_feedthrough", None)
    if law is not None:
        # S_nl(u) u reads inputs that no S_nl term feeds (interconnect refuses the other
        # couplings), so the linear loop gives them exactly; then the loop with its force
        y = np.linalg.solve(loop, (y0 + law.force(y @ asm.K.T + u_free)).T).T
    u = y @ asm.K.T + u_free
    out: dict[str, np.ndarray] = {}
    values: dict[str, np.ndarray] = {}
    for p, e in zip(asm.members, u_ext):  # every external variable of every component
        w, sl = p.wiring, slice(p.port0, p.port0 + p.core.n_inputs)
        xs = x[:, p.state0:p.state0 + p.core.n_states]
        e = e.copy()
        for j, var in enumerate(w.input_names):
            key = f"{p.name}.{var}"
            if key in asm.inputs:
                i, s = asm.inputs[key]
                e[:, j] = s * u[:, i]
        y_ext = y[:, sl] @ w.Ty.T + xs @ w.Cx.T + e @ w.Du.T + w.cy
        if w.reads_rate:  # the rate of the component's state, at its port inputs
            y_ext = y_ext + p.core.flow(xs, u[:, sl]) @ w.Cdx.T
        if w.law is not None:  # a static law of the inputs (on unconnected outputs only)
            y_ext = y_ext + w.law.values(e)
        values.update({f"{p.name}.{v}": y_ext[:, j] for j, v in enumerate(w.output_names)})
        values.update({f"{p.name}.{v}": e[:, j] for j, v in enumerate(w.input_names)})
    for key in list(asm.outputs) + list(asm.inputs):  # connected ones first (the old order)
        out[key] = values[key]
    out.update({k: v for k, v in values.items() if k not in out})
    return out


def run_monolithic(system: System, stop_time: float, step: float, *, run_index: int = 0,
                   units: Mapping[str, BondUnits] | None = None) -> xr.Dataset:
    """Dataset of the monolithic run (same variables as :func:`~fmu_surrogate.couple.running.run`,
    plus every external variable of every component).

    ``units`` (from :func:`~fmu_surrogate.couple.results.energy.bond_units`) scales the bonds'
    power to watts; without it the power is ``effort · flow``.

    The attribute ``energy_residual`` is the energy balance ``H(t_N) − H(t_0) + dissipated −
    supplied`` (the supplied energy includes the free ports': unconnected inputs and internal
    sources) relative to the run's energy scale (the largest of the stored, dissipated and
    supplied energies); every bond's residual is zero (power is exchanged at every instant).
    The run starts from :meth:`Assembled.start` (components under the equilibrium rule at rest
    under the inputs of ``t₀``), and ``H(t_0)`` is that state's.
    """
    import time as _time

    t0 = _time.perf_counter()
    asm = assemble(system)
    n_steps = round(stop_time / step)
    time = step * np.arange(n_steps + 1)
    u_ext = asm.external(system.inputs, time)
    u_free = asm.free_inputs(u_ext)
    traj = simulate(asm.system, time, u_free, asm.start(u_free[0]), hold="zoh")
    values = _variables(asm, traj.x, u_ext)
    missing = [r for r in system.record if r not in values]
    if missing:
        raise CouplingError(f"the monolithic algorithm records the variables of the pH models; "
                            f"{missing} are none: drop them from the recorded variables or run "
                            "on libcosim.")
    names = list(values)
    units = dict(units or bond_units(system, None))
    for b in system.bonds:
        e = values[".".join(b.effort.source)]
        f = values[".".join(b.flow.source)]
        for c, (_, sign) in zip(b.components, b.sides()):  # as each side sees its port
            values[f"bond:{b.name}:P_{c}"] = units[b.name].scale * sign * e * f
        values[f"bond:{b.name}:residual"] = np.zeros_like(e)
        names += [f"bond:{b.name}:P_{c}" for c in b.components] + [f"bond:{b.name}:residual"]
    rec = RunRecord(run_index, values=values, wall_time=_time.perf_counter() - t0)
    ds = records_to_dataset([rec], time, None, names, parameters=[], attrs={
        "algorithm": "monolithic", "n_steps": n_steps, "step": float(step),
        "stop_time": float(stop_time),
        "energy_residual": traj.energy_residual / traj.energy_scale,
        "energy_residual_model_units": traj.energy_residual, **unit_attrs(units),
        "driven_inputs": ",".join(system.inputs)})
    return with_units(ds, system, None, units)
