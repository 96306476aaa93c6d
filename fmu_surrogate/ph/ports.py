"""How a pH surrogate appears outside: its core, the wiring of its ports, its operating point.

A drop-in surrogate of an FMU keeps the FMU's variable names, causalities, units, signs and
operating point: its pH core ``system`` (structure exact by construction) talks in pH ports whose
product is the power supplied to the core, and the FMU's variables are an affine image of them
(:class:`~fmu_surrogate.ph.port_map.PortMap`, where the wiring is described).

:class:`PortedSystem` bundles the core, the wiring and the operating point ``x0``.

Delayed feedthrough.  A co-simulation FMU is read at communication points, and some FMUs' outputs
there do not yet see the inputs just set: outputs computed in ``doStep`` only (a common trait of
generated code), or outputs that follow the inputs through a lag far shorter than the step (a
damper force behind a compressible oil volume).  Their outputs at ``t_k`` are those of the inputs
held over the step before, ``[t_{k−1}, t_k)``.  A surrogate of such an FMU keeps the
continuous-time pH core (the states see the inputs as always; power balance and coupling are the
core's) and samples its outputs the same way: ``PortedSystem(..., delayed_feedthrough=True)``
evaluates the feedthrough of the outputs at ``t_k`` with the inputs of ``t_{k−1}``, and at the
first point with ``inputs_before`` (what the FMU held before the first step: the inputs' start
values, its state at rest) or, when that is ``None``, with the first inputs (the FMU computed its
first outputs from the inputs set at initialisation).

Fast feedthrough.  An FMU whose outputs see the held inputs through dynamics far faster than
its step (a coil spring with mass: its last segment's damper meets a new velocity at once, the
whole coil's series damping shows once the surge settles, well within the step) and that
evaluates its outputs when inputs are set shows, read after new inputs are set, their
instantaneous response to the change: ``fast_feedthrough`` ``D_f`` adds ``D_f (u_ext[k] −
u_ext[k−1])`` to the outputs at every point (``u_ext[k] − inputs_before`` at the first, nothing
there when that is ``None``).  A harvest reads its outputs so (inputs set, outputs read, then
the step); a co-simulation master that reads the outputs after each step, before it sets new
inputs, sees none of it.  Ignored in the core's continuous-time model, it still matters to a
fit: ``D_f`` left out of the model bends the laws that are in it (the coil's stiffness by
0.24 %, which a lossless oscillation turns into a 4.5 % miss over 5 s).

Initial state.  A surrogate starts from its operating point ``x0`` (``initial="state"``, the
default), or, like a vendor's model initialised in steady state, at the equilibrium of the
inputs it is given at its start (``initial="equilibrium"``: ``0 = f(x, u(t₀))``,
:mod:`~fmu_surrogate.ph.simulation.equilibrium`, ``x0`` then Newton's starting point):
:meth:`PortedSystem.initial_state`.

Late outputs.  Other generated code computes its outputs at the start of ``doStep``, before it
advances its states (the output-then-update order of fixed-step generated code, e.g. exported
from Simulink): the outputs read at ``t_k`` are those of ``t_{k−1}`` — state and inputs — and
those read after initialisation those of ``t_0`` (the first two points show the same values).
``PortedSystem(..., late_outputs=True)`` samples its outputs so; the core, its power balance and
its coupling are unchanged.  Its outputs see no input of their own point (no direct feedthrough
for a co-simulation importer); a surrogate has either a delayed feedthrough or late outputs.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidTypeError
from fmu_surrogate.ph.port_map import PortMap
from fmu_surrogate.ph.simulation.equilibrium import equilibrium
from fmu_surrogate.ph.structure import StructureError
from fmu_surrogate.ph.system import PHDAE, as_state_rows

Array = NDArray[np.float64]

__all__ = ["PortedSystem"]

def _vector(value: ArrayLike, names: Sequence[str], label: str, kind: str) -> Array:
    """``value`` as a read-only vector of one finite number per name, else a StructureError."""
    v = np.array(value, dtype=float).reshape(-1)
    if v.shape != (len(names),) or not np.all(np.isfinite(v)):
        raise StructureError(f"{label} must be {len(names)} finite numbers (one per {kind} "
                             f"{list(names)}), got shape {np.shape(value)}.")
    v.flags.writeable = False
    return v


class PortedSystem:
    """A drop-in surrogate: a pH core, the wiring of its ports, its operating point.

    Parameters
    ----------
    system : PHDAE or LinearPH
        The pH core (structure exact by construction).
    ports : PortMap
        The wiring to the external variables; ``ports.Tu`` has one row per port of the core.
    x0 : array_like, shape (n,), optional
        Operating point: the default initial state (default ``0``).
    delayed_feedthrough : bool
        Whether the outputs at a sampling point see the inputs held over the step before
        (module docs); default ``False``: they see the inputs at that point.
    inputs_before : array_like, shape (k_in,), optional
        With ``delayed_feedthrough``: the external inputs held before the first point; default
        ``None``, the first inputs.
    late_outputs : bool
        Whether the outputs at a sampling point are those of the point before (module docs);
        default ``False``.
    first_outputs : array_like, shape (k_out,), optional
        The outputs read before the first step, when they are fixed values rather than the
        model's (vendors' FMUs that compute their outputs in ``doStep`` only show their start
        values, or zeros, there); default ``None``: the model's.
    fast_feedthrough : array_like, shape (k_out, k_in), optional
        With a delayed feedthrough: ``D_f``, through which the outputs at every point also see
        the change of the inputs from those of the point before (from ``inputs_before`` at the
        first; module docs); default ``None``.
    initial : {"state", "equilibrium"}
        Where a run starts: at ``x0`` (default), or at the equilibrium of the inputs it is given
        at its start, ``x0`` then Newton's starting point (module docs; a model initialised in
        steady state).

    Raises
    ------
    StructureError
        The wiring does not fit the core (ports or states); ``x0``, ``inputs_before`` or
        ``first_outputs`` are not ``n``, ``k_in`` or ``k_out`` finite numbers; ``inputs_before``
        without a delayed feedthrough, or both a delayed feedthrough and late outputs;
        ``fast_feedthrough`` not finite ``(k_out, k_in)`` or without a delayed feedthrough;
        ``initial`` neither ``"state"`` nor ``"equilibrium"``.

    Examples
    --------
    A mass on a spring, preloaded by a constant force 0.5 (an internal source), pushed by an
    external force, showing its velocity and its position:

    >>> import numpy as np
    >>> from fmu_surrogate.ph import LinearPH
    >>> core = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.1]), np.diag([2.0, 1.0]),
    ...                 [[0, 0], [1, 1]])
    >>> ports = PortMap(("F",), ("v", "q"), ("N",), ("m/s", "m"), Tu=[[1.0], [0.0]],
    ...                 cu=[0.0, 0.5], Ty=[[1.0, 0.0], [0.0, 0.0]], Cx=[[0.0, 0.0], [1.0, 0.0]],
    ...                 Du=np.zeros((2, 1)), cy=[0.0, 0.0])
    >>> sur = PortedSystem(core, ports, x0=[0.25, 0.0])
    >>> sur.outputs(sur.x0, [0.0]).tolist()
    [0.0, 0.25]
    """

    def __init__(self, system: PHDAE, ports: PortMap, x0: ArrayLike | None = None, *,
                 delayed_feedthrough: bool = False, inputs_before: ArrayLike | None = None,
                 late_outputs: bool = False, first_outputs: ArrayLike | None = None,
                 fast_feedthrough: ArrayLike | None = None, initial: str = "state") -> None:
        if not isinstance(system, PHDAE):
            raise StructureError(f"PortedSystem needs a pH system (LinearPH, PHDAE) as its core, "
                                 f"got a {type(system).__name__}.")
        if not isinstance(ports, PortMap):
            raise StructureError(f"PortedSystem needs a PortMap, got a {type(ports).__name__}.")
        n, m = system.n_states, system.n_inputs
        if ports.n_ports != m:
            raise StructureError(f"the PortMap wires {ports.n_ports} pH ports (rows of Tu) but "
                                 f"the system has {m}; give Tu one row per port of the system.")
        if ports.n_states == 0 and n:
            k_out = len(ports.output_names)
            ports = replace(ports, Cx=np.zeros((k_out, n)), Cdx=np.zeros((k_out, n)))
        if ports.n_states != n:
            raise StructureError(f"PortMap.Cx reads {ports.n_states} states but the system has "
                                 f"{n}; give Cx {n} columns.")
        if ports.reads_rate and not np.array_equal(system.E, np.eye(n)):
            raise StructureError("PortMap.Cdx reads the state's rate ẋ, which a core with E ≠ I "
                                 "(a DAE) does not give explicitly; read its states or efforts "
                                 "instead (Cdx = 0).")
        if inputs_before is not None and not delayed_feedthrough:
            raise StructureError("inputs_before is what a delayed feedthrough sees before the "
                                 "first point; pass delayed_feedthrough=True or leave it out.")
        if late_outputs and delayed_feedthrough:
            raise StructureError("late outputs already see the inputs of the point before; pass "
                                 "either delayed_feedthrough=True or late_outputs=True.")
        if initial not in ("state", "equilibrium"):
            raise StructureError(f"initial must be 'state' (start from x0) or 'equilibrium' (at "
                                 f"the equilibrium of the first inputs), got {initial!r}.")
        self.system, self.ports, self.initial = system, ports, initial
        self.x0 = _vector(np.zeros(n) if x0 is None else x0, system.state_names, "x0", "state")
        self.delayed_feedthrough, self.late_outputs = bool(delayed_feedthrough), bool(late_outputs)
        self.inputs_before = None if inputs_before is None else _vector(
            inputs_before, ports.input_names, "inputs_before", "input")
        self.first_outputs = None if first_outputs is None else _vector(
            first_outputs, ports.output_names, "first_outputs", "output")
        self.fast_feedthrough = None
        if fast_feedthrough is not None:
            if not self.delayed_feedthrough:
                raise StructureError("fast_feedthrough adds the inputs' change from those the "
                                     "step before held to the outputs of a delayed feedthrough; "
                                     "pass delayed_feedthrough=True, or leave it out.")
            d_f = np.array(fast_feedthrough, dtype=float)
            if d_f.shape != (self.n_outputs, self.n_inputs) or not np.all(np.isfinite(d_f)):
                raise StructureError(f"fast_feedthrough must be finite numbers of shape "
                                     f"{(self.n_outputs, self.n_inputs)} (outputs × inputs), "
                                     f"got shape {d_f.shape}.")
            d_f.flags.writeable = False
            self.fast_feedthrough = d_f

    def replace(self, **changes: Any) -> PortedSystem:
        """A copy with some constructor arguments changed, by name, and all others kept.

        Parameters
        ----------
        **changes
            New values of constructor arguments (``system``, ``ports``, ``x0``, ...), checked as
            by the constructor; another name is an :class:`~fmu_surrogate.errors.InvalidTypeError`.

        Returns
        -------
        PortedSystem
        """
        names = tuple(inspect.signature(type(self)).parameters)
        if unknown := sorted(set(changes) - set(names)):
            raise InvalidTypeError(f"PortedSystem.replace got {unknown}, which are not its "
                                   f"arguments; change any of {list(names)}.")
        return type(self)(**{k: changes.get(k, getattr(self, k)) for k in names})

    def initial_state(self, u_ext: ArrayLike) -> Array:
        """The state the surrogate starts from when its first inputs are ``u_ext``: ``x0``, or
        the equilibrium of ``u_ext`` (``initial="equilibrium"``, module docs).

        Parameters
        ----------
        u_ext : array_like, shape (k_in,)
            External inputs at the start.

        Returns
        -------
        ndarray, shape (n,)

        Raises
        ------
        ConvergenceError
            No equilibrium found (:func:`~fmu_surrogate.ph.simulation.equilibrium.equilibrium`).
        """
        if self.initial == "state":
            return self.x0
        u = _vector(u_ext, self.input_names, "u_ext", "input")
        return equilibrium(self.system, self.inputs_to_ports(u), self.x0)

    # -- the external view -----------------------------------------------------------------
    @property
    def input_names(self) -> tuple[str, ...]:
        """External input names."""
        return self.ports.input_names

    @property
    def output_names(self) -> tuple[str, ...]:
        """External output names."""
        return self.ports.output_names

    @property
    def input_units(self) -> tuple[str | None, ...]:
        """External input units."""
        return self.ports.input_units

    @property
    def output_units(self) -> tuple[str | None, ...]:
        """External output units."""
        return self.ports.output_units

    @property
    def n_states(self) -> int:
        """Number of states n of the core."""
        return self.system.n_states

    @property
    def n_inputs(self) -> int:
        """Number of external inputs k_in."""
        return len(self.ports.input_names)

    @property
    def n_outputs(self) -> int:
        """Number of external outputs k_out."""
        return len(self.ports.output_names)

    @property
    def feedthrough(self) -> Array:
        """External linear feedthrough ``Ty D Tu + Cdx (G − P) Tu + Du`` (k_out, k_in)."""
        p = self.ports
        return (p.Ty @ self.system.D + p.Cdx @ self.system.input_matrix) @ p.Tu + p.Du

    @property
    def output_dependencies(self) -> NDArray[np.bool_]:
        """Which external output depends directly on which input, ``(k_out, k_in)``.

        The nonzeros of :attr:`feedthrough` and of the static law's dependencies: an FMU's
        output→input dependencies.
        """
        deps, law = self.feedthrough != 0, self.ports.law
        return deps if law is None else deps | law.dependencies

    def inputs_seen_by_outputs(self, u_ext: ArrayLike) -> Array:
        """The external inputs the outputs at the sampling points see, ``(N, k_in)``.

        ``u_ext`` itself, or with a delayed feedthrough the inputs one point earlier (the first
        row ``inputs_before``, or ``u_ext[0]`` when that is ``None``).

        Parameters
        ----------
        u_ext : array_like, shape (N, k_in)
            External inputs at the sampling points.
        """
        u, _ = as_state_rows(u_ext, self.n_inputs, "u_ext")
        if not self.delayed_feedthrough or u.shape[0] == 0:
            return u
        first = u[:1] if self.inputs_before is None else self.inputs_before[None, :]
        return np.concatenate([first, u[:-1]])

    def sampled_outputs(self, y: ArrayLike, u_ext: ArrayLike | None = None) -> Array:
        """The outputs read at the sampling points from those of each point, ``(N, k_out)``.

        ``y`` itself, or with late outputs each point's row replaced by the row of the point
        before (the first row kept); with ``fast_feedthrough`` ``D_f (u_ext − u_seen)`` added,
        ``u_seen`` the inputs the outputs see (:meth:`inputs_seen_by_outputs`); with
        ``first_outputs`` those in the first row.

        Parameters
        ----------
        y : array_like, shape (N, k_out)
            External outputs of each point's state and of the inputs the outputs see.
        u_ext : array_like, shape (N, k_in), optional
            External inputs at the points (needed with ``fast_feedthrough``).
        """
        Y, _ = as_state_rows(y, self.n_outputs, "y")
        if self.late_outputs and Y.shape[0]:
            Y = np.concatenate([Y[:1], Y[:-1]])
        if self.fast_feedthrough is not None and Y.shape[0]:
            if u_ext is None:
                raise StructureError("this surrogate's outputs see the inputs' change from "
                                     "those held (fast_feedthrough): pass u_ext to "
                                     "sampled_outputs.")
            u, _ = as_state_rows(u_ext, self.n_inputs, "u_ext")
            Y = Y + (u - self.inputs_seen_by_outputs(u)) @ self.fast_feedthrough.T
        if self.first_outputs is not None and Y.shape[0]:
            Y = np.concatenate([self.first_outputs[None, :], Y[1:]])
        return Y

    def inputs_to_ports(self, u_ext: ArrayLike) -> Array:
        """``u_ph = Tu u_ext + cu``; ``(N, k_in) -> (N, m)``, one point ``(k_in,) -> (m,)``.

        Parameters
        ----------
        u_ext : array_like, shape (N, k_in) or (k_in,)
            External inputs.
        """
        u, single = as_state_rows(u_ext, self.n_inputs, "u_ext")
        out = u @ self.ports.Tu.T + self.ports.cu
        return out[0] if single else out

    def outputs(self, x: ArrayLike, u_ext: ArrayLike) -> Array:
        """``y_ext = Ty y_ph + Cx x + Cdx ẋ + Du u_ext + cy (+ law)``; ``(N, n), (N, k_in) ->
        (N, k_out)``.

        Parameters
        ----------
        x : array_like, shape (N, n) or (n,)
            States.
        u_ext : array_like, shape (N, k_in) or (k_in,)
            External inputs.
        """
        xx, single = as_state_rows(x, self.n_states, "x")
        u, _ = as_state_rows(u_ext, self.n_inputs, "u_ext")
        y = self.external_outputs(xx, u, self.system.output(xx, self.inputs_to_ports(u)))
        return y[0] if single else y

    def external_outputs(self, x: Array, u_ext: Array, y_ph: Array) -> Array:
        """``Ty y_ph + Cx x + Cdx ẋ + Du u_ext + cy (+ law)`` from port outputs (rows of 2-D
        arrays; ``ẋ`` the core's flow at ``x`` and ``u_ext``'s port inputs).

        Parameters
        ----------
        x : ndarray, shape (N, n)
            States.
        u_ext : ndarray, shape (N, k_in)
            External inputs.
        y_ph : ndarray, shape (N, m)
            pH port outputs.
        """
        p = self.ports
        y = y_ph @ p.Ty.T + x @ p.Cx.T + u_ext @ p.Du.T + p.cy
        if p.reads_rate:
            y = y + self.system.flow(x, self.inputs_to_ports(u_ext)) @ p.Cdx.T
        return y if p.law is None else y + p.law.values(u_ext)
