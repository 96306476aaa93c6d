"""The outside of an exported surrogate: its external variables and how they wire to the pH ports.

A bare ``LinearPH``/``PHDAE`` shows its pH ports as they are (the identity wiring, names and units
of the system).  A :class:`~fmu_surrogate.ph.ports.PortedSystem` shows the external variables of
its :class:`~fmu_surrogate.ph.ports.PortMap`::

    u_ph = Tu u_ext + cu,       y_ext = Ty y_ph + Cx x + Cdx ẋ + Du u_ext + cy (+ law(u_ext))

with the optional static nonlinear law of the inputs (``PortMap.law``, a
:class:`~fmu_surrogate.ph.StaticLaw`) evaluated wherever the outputs are, and the optional
``Cdx``: outputs that read the state's rate ``ẋ = (J − R(x)) z(x) + (G − P) u_ph`` (an
acceleration beside a momentum state; a core with ``E = I`` only), the rate at the state and
the port inputs the outputs see.  Ports driven by a constant only (a zero row of ``Tu``) are
*sources*: the exporters make their value (``cu``) a parameter, so a user can change the
preload.  A ``PortedSystem`` with a delayed
feedthrough (its outputs at a communication point see the inputs held over the step before,
:mod:`fmu_surrogate.ph.ports`) keeps that in ``delayed`` and ``inputs_before``, one with late
outputs (those read at a communication point are those of the point before, state and inputs)
in ``late``, one that starts at the equilibrium of its first inputs (``initial="equilibrium"``,
``x0`` then Newton's starting point) in ``equilibrium``.  The exporters read everything about
the outside from one :class:`Wiring`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.export.expressions.effort import ExportError

if TYPE_CHECKING:  # pragma: no cover
    from fmu_surrogate.ph import StaticLaw

__all__ = ["Wiring", "identified_at", "wiring"]


@dataclass(frozen=True)
class Wiring:
    """A surrogate's pH core and its outside.

    Attributes
    ----------
    system : LinearPH or PHDAE
        The pH core.
    input_names, output_names : tuple of str
        External inputs (``k_in``) and outputs (``k_out``), unsanitised.
    state_names : tuple of str
        The core's states.
    input_units, output_units : tuple of str or None
        Units of the external variables.
    state_units : tuple of str or None
        Units of the states (from the core's ``units``).
    Tu, cu, Ty, Cx, Du, cy : ndarray
        The affine wiring (shapes as in :class:`~fmu_surrogate.ph.ports.PortMap`).
    x0 : ndarray, shape (n,)
        Initial state (with ``equilibrium``: Newton's starting point).
    sources : ndarray of int
        pH ports driven by a constant only (zero rows of ``Tu``).
    identity : bool
        Whether the external variables are the pH ports themselves.
    parameters : dict of str to float
        The source's parameter values the surrogate was identified at (``parameters`` of its
        provenance, :mod:`fmu_surrogate.ph.files`); exported as fixed parameters that refuse
        another value.
    input_starts : dict of str to float
        Start values of the source's inputs (``input_starts`` of the provenance; 0 for the
        others): what an input holds when nothing sets it.
    held_inputs : dict of str to float
        Inputs that kept one value in all the data (``held_inputs`` of the provenance): the
        exported FMU refuses another value.
    delayed : bool
        Whether the outputs at a communication point see the inputs of the step before
        (``PortedSystem.delayed_feedthrough``).
    inputs_before : ndarray, shape (k_in,), or None
        With ``delayed``: the external inputs held before the first step (``None``: the inputs
        at the first point).
    law : StaticLaw or None
        The static law of the external inputs in the outputs (``PortMap.law``; ``None`` for none
        or one without terms).
    late : bool
        Whether the outputs at a communication point are those of the point before, state and
        inputs (``PortedSystem.late_outputs``).
    first : ndarray, shape (k_out,), or None
        The outputs shown before the first step when they are fixed values
        (``PortedSystem.first_outputs``).
    fast_feedthrough : ndarray, shape (k_out, k_in), or None
        With ``delayed``: the outputs also see the change of the inputs from those the last
        step held through it (``PortedSystem.fast_feedthrough``).
    Cdx : ndarray, shape (k_out, n), or None
        How the outputs read the state's rate ``ẋ`` (``PortMap.Cdx``; ``None`` when none does).
    equilibrium : bool
        Whether the surrogate starts at the equilibrium of the inputs it is given at its start
        (``PortedSystem.initial == "equilibrium"``; ``x0`` is then Newton's starting point).
    """

    system: Any
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    state_names: tuple[str, ...]
    input_units: tuple[str | None, ...]
    output_units: tuple[str | None, ...]
    state_units: tuple[str | None, ...]
    Tu: np.ndarray
    cu: np.ndarray
    Ty: np.ndarray
    Cx: np.ndarray
    Du: np.ndarray
    cy: np.ndarray
    x0: np.ndarray
    sources: np.ndarray
    identity: bool
    parameters: dict[str, float] = field(default_factory=dict)
    input_starts: dict[str, float] = field(default_factory=dict)
    held_inputs: dict[str, float] = field(default_factory=dict)
    delayed: bool = False
    inputs_before: np.ndarray | None = None
    law: StaticLaw | None = None
    late: bool = False
    first: np.ndarray | None = None
    fast_feedthrough: np.ndarray | None = None
    Cdx: np.ndarray | None = None
    equilibrium: bool = False

    @property
    def source_names(self) -> tuple[str, ...]:
        """The core's names of the source ports."""
        return tuple(self.system.input_names[i] for i in self.sources)


def _units(system: Any, group: str, count: int) -> tuple[str | None, ...]:
    units = getattr(system, "units", None) or {}
    vals = list(units.get(group, []) or [])
    return tuple(str(u) if u else None for u in vals) if len(vals) == count else (None,) * count


def _x0(x0: Any, n: int) -> np.ndarray:
    x = np.zeros(n) if x0 is None else np.asarray(x0, dtype=float)
    if x.shape != (n,) or not np.all(np.isfinite(x)):
        raise ExportError(f"x0 must be {n} finite numbers (one per state), got shape "
                          f"{x.shape}.")
    return x


def identified_at(surrogate: Any, what: str = "parameters") -> dict[str, float]:
    """The source's parameter values a surrogate was identified at (``{}`` when unknown).

    Parameters
    ----------
    surrogate : PHDAE or PortedSystem
        Loaded from a surrogate file (its ``provenance`` has them when the dataset knew them).
    what : {"parameters", "input_starts", "held_inputs"}
        The parameters, the start values of the source's inputs, or the inputs that kept one
        value in all the data.
    """
    prov = getattr(surrogate, "provenance", None) or {}
    return {str(k): float(v) for k, v in (prov.get(what) or {}).items()}


def wiring(surrogate: Any, x0: Any = None) -> Wiring:
    """The :class:`Wiring` of a pH system or a ``PortedSystem``.

    Parameters
    ----------
    surrogate : LinearPH, PHDAE or PortedSystem
        The surrogate.
    x0 : array_like, shape (n,), optional
        Initial state (Newton's starting point for a surrogate that starts at an equilibrium);
        default the ``PortedSystem``'s operating point ``x0``, else zero.

    Returns
    -------
    Wiring

    Raises
    ------
    ExportError
        ``x0`` is not ``n`` finite numbers.
    """
    from fmu_surrogate.ph import PHDAE

    if isinstance(surrogate, PHDAE):
        s = surrogate
        n, m = s.n_states, s.n_inputs
        eye = np.eye(m)
        return Wiring(s, tuple(s.input_names), tuple(s.output_names), tuple(s.state_names),
                      _units(s, "inputs", m), _units(s, "outputs", m),
                      _units(s, "states", n), eye, np.zeros(m), eye,
                      np.zeros((m, n)), np.zeros((m, m)), np.zeros(m), _x0(x0, n),
                      np.zeros(0, int), True, identified_at(s),
                      identified_at(s, "input_starts"), identified_at(s, "held_inputs"))
    s, p = surrogate.system, surrogate.ports
    n = s.n_states
    x_init = surrogate.x0 if x0 is None else x0
    sources = np.flatnonzero(~np.any(np.asarray(p.Tu) != 0, axis=1))
    return Wiring(s, tuple(p.input_names), tuple(p.output_names), tuple(s.state_names),
                  tuple(p.input_units), tuple(p.output_units), _units(s, "states", n),
                  np.asarray(p.Tu, float),
                  np.asarray(p.cu, float), np.asarray(p.Ty, float),
                  np.asarray(p.Cx, float).reshape(len(p.output_names), n),
                  np.asarray(p.Du, float), np.asarray(p.cy, float), _x0(x_init, n), sources,
                  False, identified_at(surrogate), identified_at(surrogate, "input_starts"),
                  identified_at(surrogate, "held_inputs"), bool(surrogate.delayed_feedthrough),
                  None if surrogate.inputs_before is None
                  else np.asarray(surrogate.inputs_before, float),
                  p.law if p.law is not None and p.law.n_terms else None,
                  bool(surrogate.late_outputs),
                  None if surrogate.first_outputs is None
                  else np.asarray(surrogate.first_outputs, float),
                  None if surrogate.fast_feedthrough is None
                  else np.asarray(surrogate.fast_feedthrough, float),
                  _rate_reading(p, s), getattr(surrogate, "initial", "state") == "equilibrium")


def _rate_reading(p: Any, system: Any) -> np.ndarray | None:
    """``PortMap.Cdx`` as a ``(k_out, n)`` array, ``None`` when no output reads the rate."""
    cdx = getattr(p, "Cdx", None)
    if cdx is None or not np.any(cdx):
        return None
    n = system.n_states
    if not np.array_equal(system.E, np.eye(n)):  # PortedSystem refuses it too
        raise ExportError("PortMap.Cdx reads the state's rate, which a core with E ≠ I does not "
                          "give explicitly; export it with Cdx = 0.")
    return np.asarray(cdx, float).reshape(len(p.output_names), n)
