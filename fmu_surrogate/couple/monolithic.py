"""The monolithic alternative: interconnect the components' pH models and integrate them as one.

Each connection ``source -> target`` between pH ports gives ``u_i = K_ij y_j`` with
``K_ij = s_i s_j`` (the ports' signs).  The coupled ports form ``û + Ĉ ŷ = 0`` with
``Ĉ = −K`` on them (docs/design.md §2); :func:`fmu_surrogate.ph.interconnect` builds the coupled
system (refusing a non-skew ``Ĉ``) and :func:`fmu_surrogate.ph.simulate` integrates it with the
implicit midpoint rule, which keeps ``H(t_N) − H(t_0) + ∫ zᵀ R z dt − ∫ yᵀu dt = 0`` to
round-off for quadratic H.  Every bond then conserves power at every instant.

Driven inputs (``system.inputs``) are external inputs of the coupled system, held over each
step like in a co-simulation (``simulate(..., hold="zoh")``); every other uncoupled input is
held at 0.

Components with a feedthrough (``y = (G + P)ᵀ Q x + D u``) close an algebraic loop through
their coupled ports; ``interconnect`` solves it (and refuses a loop without a unique solution),
and the port values are read back from ``(I − D K) y = (G + P)ᵀ Q x``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import scipy.linalg as sla
import xarray as xr

from fmu_surrogate.couple.results.energy import BondUnits, bond_units, unit_attrs, with_units
from fmu_surrogate.couple.system import CouplingError, System
from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset
from fmu_surrogate.ph import LinearPH, StructureError, interconnect, simulate

__all__ = ["Assembled", "assemble", "exact", "jacobi_loop_gain", "run_monolithic"]


class Assembled:
    """The interconnected linear pH system and the maps back to FMU variables.

    Attributes
    ----------
    system : LinearPH
        The coupled system from :func:`fmu_surrogate.ph.interconnect` (external ports only).
    parts : LinearPH
        The uncoupled block-diagonal system with every port (maps states to port values).
    x0 : ndarray, shape (n,)
    outputs : dict of str to (int, int)
        ``"component.variable" -> (global output index, sign)``.
    inputs : dict of str to (int, int)
    K : ndarray, shape (m, m)
        Coupling ``u = K y`` (zero rows for uncoupled inputs).
    external : list of int
        Global indices of the uncoupled inputs: the inputs of ``system``, in its order.
    """

    def __init__(self, system: LinearPH, x0: np.ndarray, outputs: dict, inputs: dict,
                 K: np.ndarray, parts: LinearPH, external: list[int] | None = None) -> None:
        self.system, self.x0, self.outputs, self.inputs, self.K = system, x0, outputs, inputs, K
        self.parts = parts
        self.external = list(external or [])

    def external_inputs(self, drivers: dict, time: np.ndarray) -> np.ndarray:
        """Inputs of ``system`` on ``time``, shape (T, n_external): the driven ones from their
        signals (``"component.variable" -> Signal``), the others 0.

        Raises
        ------
        CouplingError
            A driven variable that is no uncoupled pH input.
        """
        U = np.zeros((len(time), len(self.external)))
        for ref, sig in drivers.items():
            if ref not in self.inputs or self.inputs[ref][0] not in self.external:
                raise CouplingError(f"driven input {ref} is no free pH input of its component "
                                    f"(free inputs: {self.free_inputs()}); drive one of those, "
                                    "or run the system on libcosim.")
            i, sign = self.inputs[ref]
            U[:, self.external.index(i)] = sign * sig(time)
        return U

    def free_inputs(self) -> list[str]:
        """``"component.variable"`` of the uncoupled inputs."""
        return [k for k, (i, _) in self.inputs.items() if i in self.external]


def assemble(system: System) -> Assembled:
    """Interconnect the components' pH models along the system's connections.

    Raises
    ------
    CouplingError
        A component has no pH model, a connected variable no port, or the coupling is not skew.
    """
    Js, Rs, Qs, Bs, Ps, Ss, Ns, x0s = [], [], [], [], [], [], [], []
    outputs, inputs, off_m, off_n = {}, {}, 0, 0
    for name, c in system.components.items():
        if c.ph is None:
            raise CouplingError(f"component {name!r} has no pH model; the monolithic algorithm "
                                "needs every component to be a pH surrogate.")
        J, R, B = c.ph.J, c.ph.R, c.ph.B
        Js.append(J), Rs.append(R), Qs.append(c.ph.Q), Bs.append(B)
        Ps.append(c.ph.P), Ss.append(c.ph.S), Ns.append(c.ph.N)
        x0s.append(np.zeros(J.shape[0]) if c.x0 is None else np.asarray(c.x0, float))
        for var, (kind, i, sign) in c.ports.items():
            (outputs if kind == "y" else inputs)[f"{name}.{var}"] = (off_m + i, int(sign))
        off_m += B.shape[1]
        off_n += J.shape[0]
    m = off_m
    K = np.zeros((m, m))
    for con in system.all_connections():
        s, t = ".".join(con.source), ".".join(con.target)
        if s not in outputs or t not in inputs:
            raise CouplingError(f"connection {con}: {s if s not in outputs else t} is not a pH "
                                "port of its component (add it to the component's ports).")
        (j, sj), (i, si) = outputs[s], inputs[t]
        K[i, j] = si * sj
    B = sla.block_diag(*Bs)
    coupled = sorted(set(np.nonzero(K.any(axis=1))[0]) | set(np.nonzero(K.any(axis=0))[0]))
    if any(not K[i].any() or not K[:, i].any() for i in coupled):
        raise CouplingError("the monolithic form needs every connected pH port coupled both ways "
                            "(its input driven and its output used); connect them in pairs.")
    C = -K[np.ix_(coupled, coupled)]
    ports, off = [], 0
    for c in system.components.values():
        mi = c.ph.B.shape[1]
        ports.append([i - off for i in coupled if off <= i < off + mi])
        off += mi
    try:
        ph = interconnect([c.ph for c in system.components.values()], C, ports,
                          names=list(system.components))
    except StructureError as exc:
        if np.array_equal(C, -C.T):  # skew: the loop through the feedthroughs is singular
            raise CouplingError(f"the components cannot be interconnected: {exc}") from exc
        raise CouplingError(f"the coupling is not skew (a bond creates energy): {exc}") from exc
    full = LinearPH(sla.block_diag(*Js), sla.block_diag(*Rs), sla.block_diag(*Qs), B,
                    P=sla.block_diag(*Ps), S=sla.block_diag(*Ss), N=sla.block_diag(*Ns))
    external = [i for i in range(m) if i not in coupled]
    return Assembled(ph, np.concatenate(x0s), outputs, inputs, K, full, external)


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
    """Exact solution (matrix exponential) of the coupled system at ``time``, by variable."""
    ph = asm.system
    A = (ph.J - ph.R) @ ph.Q
    x = np.array([sla.expm(A * t) @ asm.x0 for t in time])
    return _variables(asm, x, np.zeros((len(time), len(asm.external))))


def _variables(asm: Assembled, x: np.ndarray, U: np.ndarray) -> dict[str, np.ndarray]:
    parts = asm.parts
    u_ext = np.zeros((len(x), parts.n_inputs))
    u_ext[:, asm.external] = U
    y = x @ (parts.output_matrix.T @ parts.Q).T
    if parts.D.any():  # the loop through the feedthrough: y = C x + D (K y + u_ext)
        y = np.linalg.solve(np.eye(parts.n_inputs) - parts.D @ asm.K,
                            (y + u_ext @ parts.D.T).T).T
    u = y @ asm.K.T + u_ext
    out = {k: s * y[:, i] for k, (i, s) in asm.outputs.items()}
    out.update({k: s * u[:, i] for k, (i, s) in asm.inputs.items()})
    return out


def run_monolithic(system: System, stop_time: float, step: float, *, run_index: int = 0,
                   units: Mapping[str, BondUnits] | None = None) -> xr.Dataset:
    """Dataset of the monolithic run (same variables as :func:`~fmu_surrogate.couple.running.run`).

    The attribute ``energy_residual`` is the energy balance relative to ``H(t_0)``; every bond's
    residual is zero (power is exchanged at every instant).  ``units`` (from
    :func:`~fmu_surrogate.couple.results.energy.bond_units`) scales the bonds' power to watts;
    without it the power is ``effort · flow``.
    """
    import time as _time

    t0 = _time.perf_counter()
    asm = assemble(system)
    n_steps = round(stop_time / step)
    time = step * np.arange(n_steps + 1)
    U = asm.external_inputs(system.inputs, time)
    traj = simulate(asm.system, time, U, asm.x0, "midpoint", hold="zoh")
    balance = traj.energy_residual
    values = _variables(asm, traj.x, U)
    missing = [r for r in system.record if r not in values]
    if missing:
        raise CouplingError(f"the monolithic algorithm records pH ports only; {missing} are "
                            "none: drop them from the recorded variables or run on libcosim.")
    names = [n for n in values]
    units = dict(units or bond_units(system, None))
    for b in system.bonds:
        e = values[".".join(b.effort.source)]
        f = values[".".join(b.flow.source)]
        for c in b.components:
            values[f"bond:{b.name}:P_{c}"] = units[b.name].scale * e * f
        values[f"bond:{b.name}:residual"] = np.zeros_like(e)
        names += [f"bond:{b.name}:P_{c}" for c in b.components] + [f"bond:{b.name}:residual"]
    H0 = 0.5 * asm.x0 @ asm.system.Q @ asm.x0
    rec = RunRecord(run_index, values=values, wall_time=_time.perf_counter() - t0)
    ds = records_to_dataset([rec], time, None, names, parameters=[], attrs={
        "algorithm": "monolithic", "n_steps": n_steps, "step": float(step),
        "stop_time": float(stop_time), "energy_residual": balance / H0 if H0 else balance,
        **unit_attrs(units), "driven_inputs": ",".join(system.inputs)})
    return with_units(ds, system, None, units)
