"""A static nonlinear law of a surrogate's external inputs in its outputs.

Some components show a variable that is not half of a power pair and depends on an input
through a nonlinear law with no dynamics in between: a spring driven by a displacement input
(``s`` in m, its force in N: the force is the spring's law of ``s``), a position sensor's
reading, the force of a component coupled through the adaptor convention (position, velocity
and acceleration in, force out: the force a law of the position plus what the velocity does).
The affine :class:`~fmu_surrogate.ph.PortMap` can only scale such an input into an output
(``Du``); a :class:`StaticLaw` adds the nonlinear part as a sum of ridge terms::

    y_ext += Σ_k c_k f_k(w_kᵀ u_ext + b_k)

with a direction ``w_k`` over the external inputs, an offset ``b_k``, output gains ``c_k`` and
a kind ``f_k``:

==========  ==============  ==========================================================
kind        f(s)            what it models
==========  ==============  ==========================================================
``cubic``   ``s³``          a progressive (hardening) law ``k₁ s + k₃ s³`` with ``Du``
``tanh``    ``tanh s``      a saturating (softening) law, a smoothed step
``hinge``   ``max(s, 0)``   a kink: piecewise-linear laws (tables, dead zones, stops)
==========  ==============  ==========================================================

Each term is a closed-form function of one linear combination of the inputs (exportable as
an expression), the sum of them covers the laws of one or two inputs that components show
(a law of a difference ``s₁ − s₂``: a direction with two entries).

Structure.  The law reads the external inputs only, never the state, so the pH core and its
power balance are untouched: the law is part of the outside, like ``Du``.  An output that the
law reaches is an algebraic function of the inputs (a direct feedthrough: the FMU's
output→input dependencies list it; with a delayed feedthrough it sees the inputs of the step
before, as ``Du`` does).  Where an output is the effort of a displacement input (the spring's
force of ``s``), the law of a single input is the gradient of a potential (any function of one
variable is), so the surrogate stores the energy the FMU does; laws of several inputs are not
required to be gradients (a sensor's reading need not be).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.ph.structure import StructureError

Array = NDArray[np.float64]

__all__ = ["STATIC_LAW_KINDS", "StaticLaw"]

#: the term kinds f of :class:`StaticLaw`
STATIC_LAW_KINDS = ("cubic", "tanh", "hinge")


def _matrix(a: ArrayLike, shape: tuple[int, int], name: str) -> Array:
    m = np.array(a, dtype=float)
    if m.size == 0:
        m = m.reshape(shape)
    if m.shape != shape:
        raise StructureError(f"StaticLaw.{name} must have shape {shape}, got {m.shape}.")
    if not np.all(np.isfinite(m)):
        raise StructureError(f"StaticLaw.{name} contains NaN or Inf entries; pass finite "
                             f"numbers.")
    m.flags.writeable = False
    return m


@dataclass(frozen=True, eq=False)
class StaticLaw:
    """``Σ_k c_k f_k(w_kᵀ u_ext + b_k)``: K ridge terms of the external inputs (module docs).

    Parameters
    ----------
    kinds : sequence of str, length K
        Each term's kind, one of :data:`STATIC_LAW_KINDS`.
    W : array_like, shape (K, k_in)
        Directions ``w_k`` (rows) over the external inputs.
    b : array_like, shape (K,)
        Offsets ``b_k``.
    C : array_like, shape (k_out, K)
        Output gains ``c_k`` (columns).

    Raises
    ------
    StructureError
        An unknown kind, shapes that do not fit together, non-finite numbers.

    Examples
    --------
    A progressive spring's force of its displacement input, ``F = 2 s³`` (the linear part
    ``k₁ s`` is the wiring's ``Du``):

    >>> law = StaticLaw(["cubic"], W=[[1.0]], b=[0.0], C=[[2.0]])
    >>> law.values([[0.5], [-1.0]]).ravel().tolist()
    [0.25, -2.0]
    """

    kinds: tuple[str, ...]
    W: Array
    b: Array
    C: Array

    def __post_init__(self) -> None:
        kinds = tuple(str(k) for k in self.kinds)
        bad = [k for k in kinds if k not in STATIC_LAW_KINDS]
        if bad:
            raise StructureError(f"StaticLaw kinds {bad} are unknown; use {STATIC_LAW_KINDS}.")
        W = np.asarray(self.W, dtype=float)
        C = np.asarray(self.C, dtype=float)
        K = len(kinds)
        k_in = W.shape[1] if W.ndim == 2 else -1
        k_out = C.shape[0] if C.ndim == 2 else -1
        if k_in < 0 or k_out < 0:
            raise StructureError(f"StaticLaw.W and StaticLaw.C must be 2-D, got shapes "
                                 f"{W.shape} and {C.shape}.")
        set_ = object.__setattr__
        set_(self, "kinds", kinds)
        set_(self, "W", _matrix(W, (K, k_in), "W"))
        set_(self, "C", _matrix(C, (k_out, K), "C"))
        b = _matrix(np.reshape(self.b, (1, -1)), (1, K), "b")[0]
        set_(self, "b", b)

    # -- sizes -----------------------------------------------------------------------------
    @property
    def n_terms(self) -> int:
        """Number of terms K."""
        return len(self.kinds)

    @property
    def n_inputs(self) -> int:
        """Number of external inputs k_in it reads."""
        return self.W.shape[1]

    @property
    def n_outputs(self) -> int:
        """Number of external outputs k_out it adds to."""
        return self.C.shape[0]

    @property
    def dependencies(self) -> NDArray[np.bool_]:
        """Which output the law makes depend on which input, ``(k_out, k_in)``."""
        return ((self.C != 0).astype(int) @ (self.W != 0).astype(int)) > 0

    # -- evaluation ------------------------------------------------------------------------
    def values(self, u_ext: ArrayLike) -> Array:
        """The law's part of the outputs, ``(N, k_in) -> (N, k_out)``.

        Parameters
        ----------
        u_ext : array_like, shape (N, k_in)
            External inputs.

        Returns
        -------
        ndarray, shape (N, k_out)
        """
        s = np.asarray(u_ext, dtype=float) @ self.W.T + self.b
        f = np.empty_like(s)
        for k, kind in enumerate(self.kinds):
            f[:, k] = _KIND[kind](s[:, k])
        return f @ self.C.T

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StaticLaw):
            return NotImplemented
        return self.kinds == other.kinds and all(
            np.array_equal(getattr(self, a), getattr(other, a)) for a in ("W", "b", "C"))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking arrays: not hashable

    # -- files -----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """JSON-ready description (exact floats)."""
        return {"kinds": list(self.kinds), "W": self.W.tolist(), "b": self.b.tolist(),
                "C": self.C.tolist(), "n_inputs": self.n_inputs, "n_outputs": self.n_outputs}

    @classmethod
    def from_dict(cls, d: dict) -> StaticLaw:
        """Inverse of :meth:`to_dict`.

        Parameters
        ----------
        d : dict
            As written by :meth:`to_dict`.
        """
        K = len(d["kinds"])
        W = np.asarray(d["W"], dtype=float)
        C = np.asarray(d["C"], dtype=float)
        W = W.reshape(K, int(d["n_inputs"])) if W.size == 0 else W
        C = C.reshape(int(d["n_outputs"]), K) if C.size == 0 else C
        return cls(tuple(d["kinds"]), W, np.asarray(d["b"], dtype=float), C)


_KIND = {"cubic": lambda s: s * s * s, "tanh": np.tanh, "hinge": lambda s: np.maximum(s, 0.0)}
