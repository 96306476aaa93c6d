"""An energy of a quadratic form plus ridge terms, bounded below by construction.

    H(x) = ½ xᵀ Q x + Σ_k α_k ψ_k(w_kᵀ x),          Q ≻ 0,  α_k ≥ 0
    z(x) = ∇H(x) = Q x + Σ_k α_k ψ_k'(w_kᵀ x) w_k
    ∂z/∂x = Q + Σ_k α_k ψ_k''(w_kᵀ x) w_k w_kᵀ

and, for a ridge with a preload ``c_k`` (a spring at rest under a static load),
``ψ_k(s)`` replaced by ``ψ_k(s + c_k) − ψ_k(c_k) − ψ_k'(c_k) s`` (below).

Ridge kinds ``ψ`` (each even, ``ψ(0) = ψ'(0) = 0``):

===========  =====================  ==================  =======================================
kind         ψ(s)                   ψ'(s)               what it models
===========  =====================  ==================  =======================================
``quartic``  ``s⁴ / 4``             ``s³``              a progressive (hardening) spring
                                                        ``k₁ q + k₃ q³``
``logcosh``  ``log cosh s``         ``tanh s``          a stiffness ``Q + α w wᵀ`` near rest
                                                        that falls to ``Q`` far from it
                                                        (softening, saturating spring/inductor)
``periodic`` ``1 − cos s − s²/2``   ``sin s − s``       an angle whose energy repeats every
                                                        turn (a pendulum, a crank, a cam)
``gap``      ``½ (|s| − 1)₊²``      ``s − clip(s, −1,   end stops, a contact, a spring that
                                    1)``                engages beyond a clearance: no force
                                                        inside the gap ``|s| ≤ 1``, the
                                                        stiffness ``α w wᵀ`` added beyond it
===========  =====================  ==================  =======================================

Why these.  A quartic, logcosh or gap term is ≥ 0, so ``H(x) ≥ ½ λ_min(Q) |x|² ≥ 0`` whatever
the parameters (``Q ≻ 0``, ``α ≥ 0``, any directions ``w_k``): the energy is bounded below
and radially unbounded (trajectories of a passive system stay bounded), its only minimum is
the rest state ``x = 0``, which stays an equilibrium, and ``H`` is convex, so its Hessian
``∂z/∂x`` is positive definite and the implicit schemes' Newton matrices stay regular for small
steps.  A ridge term
acts along one direction of the state (``w_kᵀ x`` is, up to the linear part's coordinates, one
spring's deflection), which is where the nonlinearity of a mechanical or electrical component
usually sits, and its derivatives are closed-form (exportable as expressions).  The quartic's
``H`` is a polynomial of degree 4, for which the AVF scheme is exact.

The gap kind.  End stops at ``q = ±g`` with the contact stiffness ``k_c`` on a spring ``k q``
are ``Q = k``, ``w = 1/g``, ``α = k_c g²``: the force ``k q + k_c (|q| − g)₊ sign q``.  Its
``ψ'' = 1`` where ``|s| > 1`` and ``0`` inside is piecewise constant, so ``H`` is ``C¹`` with
a Lipschitz gradient (not ``C²``: the stiffness jumps at the stops), and Newton in the implicit
schemes, which takes ``ψ''`` as the Jacobian's, is semismooth Newton (locally superlinear).
The AVF scheme's 4-point Gauss–Legendre quadrature of ``z`` along a step is exact where the
step stays on one side of a stop but not across one: along a step that crosses a stop the
ridge's slope is ``Δs (τ − τ*)₊`` (``Δs = wᵀΔx``), whose 4-node quadrature is off by at most
``9.2e-3 Δs²``, so each such step puts up to ``9.2e-3 α Δs²`` (second order in the step, not
round-off) into the energy balance of the scheme.

A preload.  A part at rest under a static load (a strut under a car's weight, a hanging mass, an
accumulator at its charge pressure) works around a deflection where its spring law is not odd:
``k₁ q + k₃ q³`` about ``q_e`` adds the quadratic ``3 k₃ q_e δ²`` to the force of the deflection
``δ`` from there.  A ridge with the shift ``c`` (a quartic, logcosh or gap one) takes
``ψ(s + c) − ψ(c) − ψ'(c) s``: the Bregman divergence of the convex ``ψ``, so it is convex,
``≥ 0`` and zero with its slope at ``s = 0`` — everything said above holds as it is, the rest
state ``x = 0`` included.  Its force is ``ψ'(s + c) − ψ'(c)`` and its Hessian ``ψ''(s + c)``;
a shifted quartic is still a polynomial of degree 4.  A shifted gap ridge puts the two stops
asymmetrically about rest: the gap of width ``2/|w|`` along ``w/|w|`` is centred at ``−c/|w|``
(a part resting against one stop, or closer to one than the other; with ``|c| > 1`` rest lies
in contact, beyond a stop).  A periodic ridge takes no shift.

The file (:meth:`ConvexEffort.to_dict`) is version 1 unless it holds a gap ridge, which
version 2 added: each file in the oldest version that holds its content, so a reader that
knows no gap refuses such a file as a newer version instead of failing on an unknown kind.

The periodic kind.  A pendulum's energy ``k (1 − cos θ)`` is not convex and grows without bound
in no direction of its angle: no quadratic form plus convex ridges approaches it once the
pendulum turns over.  ``ψ(s) = 1 − cos s − s²/2 ≤ 0`` takes the quadratic form's share along
``w`` away and puts a cosine in its place: with ``α (w wᵀ)`` below ``Q``, that is
``Q − Σ_periodic α_k w_k w_kᵀ ⪰ 0`` (checked), ``H ≥ ½ xᵀ(Q − Σ α_k w_k w_kᵀ)x + Σ α_k (1 −
cos s_k) ≥ 0``, so the energy stays bounded below, and at equality along ``w`` it is exactly
``α (1 − cos wᵀx)`` plus the rest of the form: ``H = p²/2 + k (1 − cos θ)`` with ``Q = I``,
``x = (√k θ, p)``, ``w = (1/√k, 0)``, ``α = k``.  The Hessian ``Q + α (cos s − 1) w wᵀ`` equals
``Q`` at ``s = 0``: the term leaves the small-signal (linear) model as it is.  Such an energy is
not convex (``H`` has a minimum every turn), and the Hessian is indefinite over the top; the
implicit schemes stay solvable for steps short against the motion, as they do for any energy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.ph.structure import StructureError, check_spd

Array = NDArray[np.float64]

__all__ = ["RIDGE_KINDS", "ConvexEffort"]

#: the ridge kinds ψ of :class:`ConvexEffort`
RIDGE_KINDS = ("quartic", "logcosh", "periodic", "gap")

FORMAT = "fmu_surrogate.convex_effort"
#: the newest file version written (2: gap ridges; files without one are written as version 1)
VERSION = 2


def _logcosh(s: Array) -> Array:
    a = np.abs(s)
    return a + np.log1p(np.exp(-2.0 * a)) - np.log(2.0)


def ridge(kind: str, s: Array, order: int) -> Array:
    """``ψ(s)``, ``ψ'(s)`` or ``ψ''(s)`` (``order`` 0, 1, 2) of a ridge kind.

    Parameters
    ----------
    kind : str
        One of :data:`RIDGE_KINDS`.
    s : ndarray
        Arguments ``wᵀx``.
    order : int
        Derivative order 0, 1 or 2.
    """
    if kind == "quartic":
        return 0.25 * s ** 4 if order == 0 else s ** 3 if order == 1 else 3.0 * s * s
    if kind == "gap":
        # ψ'(s) = s − clip(s, −1, 1): zero inside the gap |s| ≤ 1, a spring beyond it
        d = s - np.clip(s, -1.0, 1.0)
        return 0.5 * d * d if order == 0 else d if order == 1 else (np.abs(s) > 1.0) * 1.0
    if kind == "periodic":
        if order == 0:
            h = np.sin(0.5 * s)
            return 2.0 * h * h - 0.5 * s * s
        return np.sin(s) - s if order == 1 else np.cos(s) - 1.0
    if order == 0:
        return _logcosh(s)
    th = np.tanh(s)
    return th if order == 1 else 1.0 - th * th


class ConvexEffort:
    """The effort ``z = ∇H`` of ``H(x) = ½ xᵀQx + Σ_k α_k ψ_k(w_kᵀx)`` (see the module).

    Parameters
    ----------
    Q : array_like, shape (n, n)
        Symmetric positive definite quadratic part.
    kinds : sequence of str, length K
        Ridge kind of each term (:data:`RIDGE_KINDS`).
    weights : array_like, shape (K,)
        ``α_k ≥ 0``.
    directions : array_like, shape (K, n)
        ``w_k`` (any real vectors).
    shifts : array_like, shape (K,), optional
        The preloads ``c_k`` of the ridges (module doc; default none: zeros).  Zero for a
        periodic ridge.

    Raises
    ------
    StructureError
        Q not SPD, a negative weight or periodic ridges whose ``α w wᵀ`` exceed ``Q`` (the
        energy would not be bounded below), an unknown kind, non-finite numbers or shapes that
        do not fit.

    Examples
    --------
    A spring ``k₁ q + k₃ q³`` (k₁ = 2, k₃ = 0.5) and a unit mass, ``x = (q, p)``:

    >>> eff = ConvexEffort([[2.0, 0.0], [0.0, 1.0]], ["quartic"], [0.5], [[1.0, 0.0]])
    >>> eff(np.array([[1.0, 3.0]])).tolist(), eff.hamiltonian(np.array([[1.0, 3.0]])).tolist()
    ([[2.5, 3.0]], [5.625])
    """

    def __init__(self, Q: ArrayLike, kinds: Sequence[str] = (), weights: ArrayLike = (),
                 directions: ArrayLike = (), shifts: ArrayLike | None = None) -> None:
        self.Q = check_spd(Q, "Q")
        n = self.Q.shape[0]
        self.kinds = tuple(str(k) for k in kinds)
        K = len(self.kinds)
        bad = [k for k in self.kinds if k not in RIDGE_KINDS]
        if bad:
            raise StructureError(f"unknown ridge kinds {bad}; known: {', '.join(RIDGE_KINDS)}.")
        a = np.array(weights, dtype=float).reshape(-1)
        w = np.array(directions, dtype=float)
        w = w.reshape(K, n) if w.size == 0 else w
        if a.shape != (K,) or w.shape != (K, n):
            raise StructureError(f"{K} ridge terms need {K} weights and directions of shape "
                                 f"({K}, {n}), got {a.shape} and {w.shape}.")
        c = np.zeros(K) if shifts is None else np.array(shifts, dtype=float).reshape(-1)
        if c.shape != (K,):
            raise StructureError(f"{K} ridge terms need {K} shifts, got shape {c.shape}.")
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(w)) and np.all(np.isfinite(c))):
            raise StructureError("ridge weights, directions and shifts must be finite numbers.")
        if np.any(a < 0):
            raise StructureError(f"ridge weights must be >= 0 (else H is not bounded below), got "
                                 f"{a.tolist()}; parametrise them as non-negative numbers.")
        per = np.array([k == "periodic" for k in self.kinds], dtype=bool)
        if np.any(c[per] != 0):
            raise StructureError("a periodic ridge takes no shift (its energy repeats every turn "
                                 "whatever the preload); set its shift to 0.")
        if per.any():
            rest = self.Q - (w[per].T * a[per]) @ w[per]
            lam = float(np.linalg.eigvalsh(rest).min())
            # round-off of forming α w wᵀ at equality (a pendulum: α |w|² = 1 along w)
            if lam < -1e-12 * float(np.abs(self.Q).max()):
                raise StructureError(
                    f"periodic ridges take more than the quadratic form holds: Q − Σ α w wᵀ "
                    f"has the eigenvalue {lam:.3e} < 0, so H is not bounded below. Keep "
                    f"α_k w_kᵀ Q⁻¹ w_k ≤ 1 (summed over the periodic ridges).")
        self.weights, self.directions, self.shifts = a, w, c
        # per shifted ridge ψ(c) and ψ'(c): subtracted so that the term and its force vanish at 0
        self._shifted = bool(np.any(c != 0))
        #: ``ψ_k(c_k)`` and ``ψ_k'(c_k)`` (2, K): what a shifted ridge subtracts
        self.shift_terms = np.zeros((2, K))
        for kind in set(self.kinds):
            mask = np.array([k == kind for k in self.kinds], dtype=bool)
            self.shift_terms[:, mask] = [ridge(kind, c[mask], 0), ridge(kind, c[mask], 1)]
        self._kinds = [(k, np.array([c == k for c in self.kinds], dtype=bool))
                       for k in RIDGE_KINDS if k in self.kinds]

    @property
    def n_states(self) -> int:
        """Number of states n."""
        return self.Q.shape[0]

    @property
    def has_hamiltonian(self) -> bool:
        """Always true: ``z = ∇H`` by construction."""
        return True

    def _ridges(self, x: Array, order: int) -> Array:
        s = x @ self.directions.T  # (N, K)
        arg = s + self.shifts if self._shifted else s
        if len(self._kinds) < 2:  # one kind: no masks (a simulation step calls this often)
            kind = self._kinds[0][0] if self._kinds else "quartic"
            out = ridge(kind, arg, order)
        else:
            out = np.empty_like(s)
            for kind, mask in self._kinds:
                out[:, mask] = ridge(kind, arg[:, mask], order)
        if self._shifted and order == 1:
            out = out - self.shift_terms[1]
        elif self._shifted and order == 0:
            out = out - self.shift_terms[0] - self.shift_terms[1] * s
        return out * self.weights

    def __call__(self, x: ArrayLike) -> Array:
        """``z(x) = ∇H(x)``; ``(N, n) -> (N, n)``.

        Parameters
        ----------
        x : array_like, shape (N, n)
            States.
        """
        a = np.atleast_2d(np.asarray(x, dtype=float))
        return a @ self.Q.T + self._ridges(a, 1) @ self.directions

    def jacobian(self, x: ArrayLike) -> Array:
        """``∂z/∂x``, the Hessian of ``H`` (symmetric; ``Q`` plus PSD terms without periodic
        ridges); ``(N, n) -> (N, n, n)``.

        Parameters
        ----------
        x : array_like, shape (N, n)
            States.
        """
        a = np.atleast_2d(np.asarray(x, dtype=float))
        c = self._ridges(a, 2)  # (N, K)
        return self.Q[None] + np.einsum("nk,ki,kj->nij", c, self.directions, self.directions)

    def hamiltonian(self, x: ArrayLike) -> Array:
        """``H(x)`` (≥ 0, up to round-off with periodic ridges); ``(N, n) -> (N,)``.

        Parameters
        ----------
        x : array_like, shape (N, n)
            States.
        """
        a = np.atleast_2d(np.asarray(x, dtype=float))
        return 0.5 * ((a @ self.Q) * a).sum(axis=1) + self._ridges(a, 0).sum(axis=1)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description (exact floats): version 2 with a gap ridge, else 1."""
        version = 2 if "gap" in self.kinds else 1
        out = {"format": FORMAT, "version": version, "Q": self.Q.tolist(),
               "kinds": list(self.kinds), "weights": self.weights.tolist(),
               "directions": self.directions.tolist()}
        if self._shifted:  # files without preloads stay as they were
            out["shifts"] = self.shifts.tolist()
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ConvexEffort:
        """Inverse of :meth:`to_dict` (file versions 1 and 2).

        Parameters
        ----------
        d : dict
            As written by :meth:`to_dict`.

        Raises
        ------
        InvalidInputError
            Another format, or a version other than 1 and 2 (a newer one: upgrade).
        """
        version = d.get("version")
        if d.get("format") != FORMAT or type(version) is not int or version < 1:
            raise InvalidInputError(
                f"not a convex effort of version 1 to {VERSION} (format {d.get('format')!r}, "
                f"version {version!r}).")
        if version > VERSION:
            raise InvalidInputError(
                f"a convex effort of version {version}, newer than this fmu_surrogate reads "
                f"(versions 1 to {VERSION}); upgrade fmu_surrogate.")
        Q = np.asarray(d["Q"], dtype=float)  # of a static map (n = 0): written as []
        return cls(Q.reshape(0, 0) if Q.size == 0 else Q, d["kinds"], d["weights"],
                   d["directions"], d.get("shifts"))

    def __repr__(self) -> str:
        return f"ConvexEffort(n={self.n_states}, ridges={list(self.kinds)})"
