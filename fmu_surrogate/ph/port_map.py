"""The affine wiring of a pH surrogate's ports to the FMU's variables (:class:`PortMap`).

A drop-in surrogate of an FMU keeps the FMU's variable names, causalities, units, signs and
operating point.  Its pH core ``system`` (structure exact by construction) talks in pH ports
``(u_ph, y_ph)`` whose product is the power supplied to the core; the FMU's variables
``(u_ext, y_ext)`` are an affine image of them (:class:`PortMap`)::

    u_ph  = Tu u_ext + cu
    y_ext = Ty y_ph + Cx x + Cdx ẋ + Du u_ext + cy

* a power port delivering power in the FMU's convention (power "out") has ``Tu[i, j] = −1`` and
  ``Ty[j', i] = 1``: the external ``y_extᵀu_ext`` is then minus the port power;
* a modulating (non-power) input is a pH port whose conjugate output is not shown (no row of
  ``Ty`` uses it);
* a constant offset or preload is a pH port driven by a constant (its entry of ``cu``, a zero row
  of ``Tu``); its power is supplied by an internal source and reported as such by
  :func:`fmu_surrogate.ph.simulate`;
* a measured non-power output (a position, a temperature) is a row with ``Ty = 0`` and ``Cx``,
  ``Du``, ``cy`` as fitted;
* a measured output that reads the state's rate (an acceleration beside a momentum state: the
  net force through the mass, the damper's nonlinear force with it) is a row of ``Cdx``:
  ``ẋ = (J − R(x)) z(x) + (G − P) u_ph`` at the point's state and inputs, so it also feeds
  the inputs through (:attr:`PortedSystem.feedthrough`); only a core with ``E = I`` has one
  (an ODE, as every surrogate identified from input-output data);
* a static nonlinear law of the inputs in the outputs (a spring's force of a displacement
  input) is the optional ``law``, a :class:`~fmu_surrogate.ph.StaticLaw`:
  ``y_ext = … + law(u_ext)``.

Interface notes
---------------
* ``PortMap.identity(m, input_names=None, output_names=None, *, n_states=0, input_units=None,
  output_units=None)``: three positional arguments, plus keywords.  A ``PortMap`` whose ``Cx`` has
  no columns (``n_states=0``, the default of ``identity``) reads no state; a :class:`PortedSystem`
  widens it to zeros of the system's ``n`` (its ``.ports`` is then a copy with the full ``Cx``).
  ``Cdx`` (the same shape as ``Cx``) is zero unless given.
* ``PortMap`` compares by value (arrays bit for bit); its arrays are read-only.
* ``PortedSystem.feedthrough``: the external feedthrough ``Ty D Tu + Cdx (G − P) Tu + Du``
  (k_out, k_in), the
  matrix whose nonzeros are an FMU's output→input dependencies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.ph.static_law import StaticLaw
from fmu_surrogate.ph.structure import StructureError
from fmu_surrogate.ph.system import _names

Array = NDArray[np.float64]

__all__ = ["PortMap"]

_ARRAYS = ("Tu", "cu", "Ty", "Cx", "Du", "cy", "Cdx")


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
        ``y_ext = Ty y_ph + Cx x + Cdx ẋ + Du u_ext + cy``.
    law : StaticLaw, optional
        A static nonlinear law of the external inputs added to the outputs,
        ``y_ext = … + law.values(u_ext)`` (none by default).
    Cdx : ndarray, shape (k_out, n), optional
        How the outputs read the state's rate ``ẋ`` (zero by default).

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
    Cdx: Array | None = None

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
        if self.Cdx is None:
            set_(self, "Cdx", np.zeros((k_out, n)))
        shapes["Cdx"] = (k_out, n)
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
    def reads_rate(self) -> bool:
        """Whether an output reads the state's rate (a nonzero ``Cdx``)."""
        return bool(self.Cdx.any())

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
        d.update({k: getattr(self, k).tolist() for k in _ARRAYS if k != "Cdx"})
        if self.reads_rate:  # written when used (schema version 9 on)
            d["Cdx"] = self.Cdx.tolist()
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
        arr = {"Tu": (m, k_in), "Ty": (k_out, m), "Cx": (k_out, n), "Du": (k_out, k_in),
               "Cdx": (k_out, n)}
        # JSON keeps no shape for an empty matrix; a filled one is checked as it is
        kw = {k: np.reshape(d[k], s) if np.size(d[k]) == 0 else d[k] for k, s in arr.items()
              if k in d}
        law = StaticLaw.from_dict(d["law"]) if d.get("law") is not None else None
        return cls(tuple(d["input_names"]), tuple(d["output_names"]), tuple(d["input_units"]),
                   tuple(d["output_units"]), cu=d["cu"], cy=d["cy"], law=law, **kw)
