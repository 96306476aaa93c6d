"""How a pH surrogate appears outside: the affine wiring of its ports to the FMU's variables.

A drop-in surrogate of an FMU keeps the FMU's variable names, causalities, units, signs and
operating point.  Its pH core ``system`` (structure exact by construction) talks in pH ports
``(u_ph, y_ph)`` whose product is the power supplied to the core; the FMU's variables
``(u_ext, y_ext)`` are an affine image of them (:class:`PortMap`)::

    u_ph  = Tu u_ext + cu
    y_ext = Ty y_ph + Cx x + Du u_ext + cy

* a power port delivering power in the FMU's convention (power "out") has ``Tu[i, j] = −1`` and
  ``Ty[j', i] = 1``: the external ``y_extᵀu_ext`` is then minus the port power;
* a modulating (non-power) input is a pH port whose conjugate output is not shown (no row of
  ``Ty`` uses it);
* a constant offset or preload is a pH port driven by a constant (its entry of ``cu``, a zero row
  of ``Tu``); its power is supplied by an internal source and reported as such by
  :func:`fmu_surrogate.ph.simulate`;
* a measured non-power output (a position, a temperature) is a row with ``Ty = 0`` and ``Cx``,
  ``Du``, ``cy`` as fitted;
* a static nonlinear law of the inputs in the outputs (a spring's force of a displacement
  input) is the optional ``law``, a :class:`~fmu_surrogate.ph.StaticLaw`:
  ``y_ext = … + law(u_ext)``.

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

Late outputs.  Other generated code computes its outputs at the start of ``doStep``, before it
advances its states (the output-then-update order of fixed-step generated code, e.g. exported
from Simulink): the outputs read at ``t_k`` are those of ``t_{k−1}`` — state and inputs — and
those read after initialisation those of ``t_0`` (the first two points show the same values).
``PortedSystem(..., late_outputs=True)`` samples its outputs so; the core, its power balance and
its coupling are unchanged.  Its outputs see no input of their own point (no direct feedthrough
for a co-simulation importer); a surrogate has either a delayed feedthrough or late outputs.

Interface notes (the drop-in surrogate interface, as implemented)
-----------------------------------------------------------------
* ``PortMap.identity(m, input_names=None, output_names=None, *, n_states=0, input_units=None,
  output_units=None)``: three positional arguments, plus keywords.  A ``PortMap`` whose ``Cx`` has
  no columns (``n_states=0``, the default of ``identity``) reads no state; a :class:`PortedSystem`
  widens it to zeros of the system's ``n`` (its ``.ports`` is then a copy with the full ``Cx``).
* ``PortMap`` compares by value (``==`` on every field, arrays bit for bit); its arrays are
  read-only.
* ``PortedSystem.replace(**changes)``: a copy with some constructor arguments changed.
* ``PortedSystem.feedthrough``: the external feedthrough ``Ty D Tu + Du`` (k_out, k_in), the
  matrix whose nonzeros are an FMU's output→input dependencies.
* ``fs.ph.simulate(ported, t, u_ext, x0=None, hold=None)``: ``hold=None`` means ``"zoh"`` for a
  :class:`PortedSystem` (what a co-simulation importer gives an FMU) and ``"linear"`` for a bare
  system, as before; it returns a :class:`~fmu_surrogate.ph.simulation.ported_simulation.PortedTrajectory`.
  A bare system's ``x0`` defaults to the rest state ``0``; its ``Trajectory`` has the
  steps' outputs ``ybar`` (those of the energy balance).
* The pH systems also have ``input_matrix`` (``G − P``), ``output_matrix`` (``G + P``), ``W``,
  ``D``, ``has_feedthrough``, ``output_from_effort(z, u)`` and ``dissipation_rate(z, u)``;
  ``output(x, u=None)`` needs ``u`` only when ``D ≠ 0`` (else a :class:`StructureError`).
* ``fs.ph.load`` returns a ``PortedSystem`` for a file saved from one, else the bare system.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidTypeError
from fmu_surrogate.ph.static_law import StaticLaw
from fmu_surrogate.ph.structure import StructureError
from fmu_surrogate.ph.system import PHDAE, _names, as_state_rows

Array = NDArray[np.float64]

__all__ = ["PortMap", "PortedSystem"]

_ARRAYS = ("Tu", "cu", "Ty", "Cx", "Du", "cy")


def _frozen(a: ArrayLike, shape: tuple[int, ...], name: str) -> Array:
    m = np.array(a, dtype=float)  # a copy: the caller's array stays theirs
    m = m.reshape(shape) if m.size == 0 else m
    if m.shape != shape:
        raise StructureError(f"PortMap.{name} must have shape {shape}, got {m.shape}.")
    if not np.all(np.isfinite(m)):
        raise StructureError(f"PortMap.{name} contains NaN or Inf entries; pass finite numbers.")
    m.flags.writeable = False
    return m


def _units(units: Sequence[str | None] | None, count: int, what: str) -> tuple[str | None, ...]:
    out = (None,) * count if units is None else tuple(None if v is None else str(v)
                                                      for v in units)
    if len(out) != count:
        raise StructureError(f"{what} must give {count} units (None for none), got {len(out)}.")
    return out


@dataclass(frozen=True, eq=False)
class PortMap:
    """The affine wiring between external variables and pH ports (module docs).

    Parameters
    ----------
    input_names, output_names : tuple of str
        External inputs (``k_in``) and outputs (``k_out``), in the FMU's order.
    input_units, output_units : tuple of str or None
        Their units (``None`` for none).
    Tu : ndarray, shape (m, k_in)
    cu : ndarray, shape (m,)
        ``u_ph = Tu u_ext + cu``.
    Ty : ndarray, shape (k_out, m)
    Cx : ndarray, shape (k_out, n)
    Du : ndarray, shape (k_out, k_in)
    cy : ndarray, shape (k_out,)
        ``y_ext = Ty y_ph + Cx x + Du u_ext + cy``.
    law : StaticLaw, optional
        A static nonlinear law of the external inputs added to the outputs,
        ``y_ext = … + law.values(u_ext)`` (none by default).

    Raises
    ------
    StructureError
        Shapes that do not fit together, duplicate names, non-finite numbers, a ``law`` of
        other sizes.
    """

    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    input_units: tuple[str | None, ...]
    output_units: tuple[str | None, ...]
    Tu: Array
    cu: Array
    Ty: Array
    Cx: Array
    Du: Array
    cy: Array
    law: StaticLaw | None = None

    def __post_init__(self) -> None:
        Tu, Cx = np.asarray(self.Tu, dtype=float), np.asarray(self.Cx, dtype=float)
        if Tu.ndim != 2 or Cx.ndim != 2:
            raise StructureError(f"PortMap.Tu and PortMap.Cx must be 2-D, got shapes {Tu.shape} "
                                 f"and {Cx.shape}.")
        (m, k_in), n = Tu.shape, Cx.shape[1]
        k_out = len(tuple(self.output_names))
        shapes = {"Tu": (m, k_in), "cu": (m,), "Ty": (k_out, m), "Cx": (k_out, n),
                  "Du": (k_out, k_in), "cy": (k_out,)}
        set_ = object.__setattr__
        set_(self, "input_names", _names(self.input_names, "u", k_in, "PortMap.input_names"))
        set_(self, "output_names", _names(self.output_names, "y", k_out, "PortMap.output_names"))
        set_(self, "input_units", _units(self.input_units, k_in, "PortMap.input_units"))
        set_(self, "output_units", _units(self.output_units, k_out, "PortMap.output_units"))
        for name in _ARRAYS:
            set_(self, name, _frozen(getattr(self, name), shapes[name], name))
        if (law := self.law) is not None and not isinstance(law, StaticLaw):
            raise StructureError(f"PortMap.law must be a StaticLaw or None, got a "
                                 f"{type(law).__name__}.")
        if law is not None and (law.n_inputs, law.n_outputs) != (k_in, k_out):
            raise StructureError(f"PortMap.law reads {law.n_inputs} inputs into {law.n_outputs} "
                                 f"outputs but the wiring has {k_in} inputs and {k_out} outputs; "
                                 f"give the law's W {k_in} columns and its C {k_out} rows.")

    # -- sizes -----------------------------------------------------------------------------
    @property
    def n_ports(self) -> int:
        """Number of pH ports m."""
        return self.Tu.shape[0]

    @property
    def n_states(self) -> int:
        """Number of states read by ``Cx`` (0 when it reads none)."""
        return self.Cx.shape[1]

    @property
    def source_ports(self) -> NDArray[np.bool_]:
        """Which pH ports are driven by an internal constant source only (zero row of ``Tu``)."""
        return ~np.any(self.Tu != 0, axis=1)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PortMap):
            return NotImplemented
        return all(
            np.array_equal(getattr(self, f.name), getattr(other, f.name)) if f.name in _ARRAYS
            else getattr(self, f.name) == getattr(other, f.name) for f in fields(self))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking arrays: not hashable

    @classmethod
    def identity(
        cls,
        m: int,
        input_names: Sequence[str] | None = None,
        output_names: Sequence[str] | None = None,
        *,
        n_states: int = 0,
        input_units: Sequence[str | None] | None = None,
        output_units: Sequence[str | None] | None = None,
    ) -> PortMap:
        """The wiring of a surrogate whose external variables are its pH ports.

        Parameters
        ----------
        m : int
            Number of ports.
        input_names, output_names : sequence of str, optional
            External names (default ``u1 … um``, ``y1 … ym``).
        n_states : int
            Width of the (zero) ``Cx``; 0 lets :class:`PortedSystem` widen it.
        input_units, output_units : sequence of str or None, optional
            Units.

        Returns
        -------
        PortMap
            ``Tu = Ty = I``, everything else zero.
        """
        m = int(m)
        return cls(_names(input_names, "u", m, "input_names"),
                   _names(output_names, "y", m, "output_names"), input_units, output_units,
                   np.eye(m), np.zeros(m), np.eye(m), np.zeros((m, int(n_states))),
                   np.zeros((m, m)), np.zeros(m))

    def to_dict(self) -> dict:
        """JSON-ready description (exact floats)."""
        d: dict = {"input_names": list(self.input_names), "output_names": list(self.output_names),
                   "input_units": list(self.input_units),
                   "output_units": list(self.output_units), "n_states": self.n_states}
        d.update({k: getattr(self, k).tolist() for k in _ARRAYS})
        if self.law is not None:
            d["law"] = self.law.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> PortMap:
        """Inverse of :meth:`to_dict`.

        Parameters
        ----------
        d : dict
            As written by :meth:`to_dict`.
        """
        k_in, k_out, m, n = (len(d["input_names"]), len(d["output_names"]), len(d["cu"]),
                             int(d["n_states"]))
        arr = {"Tu": (m, k_in), "Ty": (k_out, m), "Cx": (k_out, n), "Du": (k_out, k_in)}
        # JSON keeps no shape for an empty matrix; a filled one is checked as it is
        kw = {k: np.reshape(d[k], s) if np.size(d[k]) == 0 else d[k] for k, s in arr.items()}
        law = StaticLaw.from_dict(d["law"]) if d.get("law") is not None else None
        return cls(tuple(d["input_names"]), tuple(d["output_names"]), tuple(d["input_units"]),
                   tuple(d["output_units"]), cu=d["cu"], cy=d["cy"], law=law, **kw)


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

    Raises
    ------
    StructureError
        The wiring does not fit the core (ports or states); ``x0``, ``inputs_before`` or
        ``first_outputs`` are not ``n``, ``k_in`` or ``k_out`` finite numbers; ``inputs_before``
        without a delayed feedthrough, or both a delayed feedthrough and late outputs.

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
                 late_outputs: bool = False, first_outputs: ArrayLike | None = None) -> None:
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
            ports = replace(ports, Cx=np.zeros((len(ports.output_names), n)))
        if ports.n_states != n:
            raise StructureError(f"PortMap.Cx reads {ports.n_states} states but the system has "
                                 f"{n}; give Cx {n} columns.")
        if inputs_before is not None and not delayed_feedthrough:
            raise StructureError("inputs_before is what a delayed feedthrough sees before the "
                                 "first point; pass delayed_feedthrough=True or leave it out.")
        if late_outputs and delayed_feedthrough:
            raise StructureError("late outputs already see the inputs of the point before; pass "
                                 "either delayed_feedthrough=True or late_outputs=True.")
        self.system, self.ports = system, ports
        self.x0 = _vector(np.zeros(n) if x0 is None else x0, system.state_names, "x0", "state")
        self.delayed_feedthrough, self.late_outputs = bool(delayed_feedthrough), bool(late_outputs)
        self.inputs_before = None if inputs_before is None else _vector(
            inputs_before, ports.input_names, "inputs_before", "input")
        self.first_outputs = None if first_outputs is None else _vector(
            first_outputs, ports.output_names, "first_outputs", "output")

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
        """External linear feedthrough ``Ty D Tu + Du`` (k_out, k_in)."""
        return self.ports.Ty @ self.system.D @ self.ports.Tu + self.ports.Du

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

    def sampled_outputs(self, y: ArrayLike) -> Array:
        """The outputs read at the sampling points from those of each point, ``(N, k_out)``.

        ``y`` itself, or with late outputs each point's row replaced by the row of the point
        before (the first row kept); with ``first_outputs`` those in the first row.

        Parameters
        ----------
        y : array_like, shape (N, k_out)
            External outputs of each point's state and inputs.
        """
        Y, _ = as_state_rows(y, self.n_outputs, "y")
        if self.late_outputs and Y.shape[0]:
            Y = np.concatenate([Y[:1], Y[:-1]])
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
        """``y_ext = Ty y_ph + Cx x + Du u_ext + cy (+ law)``; ``(N, n), (N, k_in) -> (N, k_out)``.

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
        """``Ty y_ph + Cx x + Du u_ext + cy (+ law)`` from port outputs (rows of 2-D arrays).

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
        return y if p.law is None else y + p.law.values(u_ext)
