"""State-dependent dissipation ``R(x) = R₀ + Σ_j c_j(z(x)) m_j m_jᵀ``, PSD by construction.

The coefficient of each rank-one term depends on the effort ``z`` (velocities, currents: where
a damper's or a resistor's law lives) along its own direction::

    s_j = m_jᵀ z,     c_j(z) = β_j (s_j² + δ_j²)^(p_j / 2) (1 + a_j σ_j) ≥ 0
    σ_j = s_j / √(s_j² + δ_j²) ∈ (−1, 1)                      (β_j ≥ 0, δ_j > 0, |a_j| ≤ 1)

so the dissipative force of a term is ``c_j s_j m_j ≈ β_j sign(s_j) |s_j|^(1 + p_j) m_j`` once
``|s_j| ≫ δ_j``: a power-law damper ``F = c sign(v)|v|^(4/3)`` is ``p = 1/3``, a quadratic
(turbulent) one ``p = 1``, a dry-friction-like one ``p → −1``.  ``δ_j`` rounds the law off
inside ``|s_j| ≲ δ_j`` so that ``c_j`` and the force are smooth (the force's slope at rest is
``β_j δ_j^p_j``, finite) — Newton's method and gradient-based fitting need that.  The
asymmetry ``a_j`` makes a law differ between the two directions of motion, as a vehicle damper's
rebound and compression do: for ``|s_j| ≫ δ_j`` the coefficient is ``β_j (1 ± a_j)|s_j|^p_j``
(``a_j = 0``, the default, is the symmetric law; ``a_j = ±1`` acts in one direction only).
Every ``c_j ≥ 0`` whatever ``p_j``, ``m_j`` and the state, hence ``R(x) ⪰ 0`` and the
dissipation ``zᵀR(x)z = zᵀR₀z + Σ_j c_j s_j² ≥ 0`` hold for every parameter value.

A contact's damper (a gated term).  A damper that acts only while two parts touch (the damping
of an end stop, Modelica's ``Translational.Components.ElastoGap``) is a term whose force is
limited by the contact's own force::

    F_j = clip(c_j s_j, −f_j, f_j),     f_j(z) = κ_j (|g_jᵀz + e_j| − 1)₊      (κ_j ≥ 0)

``f_j`` is zero inside the clearance ``|g_jᵀz + e_j| ≤ 1`` and grows with the penetration
beyond it (a contact spring's force, read from the effort: an end stop's spring force is a
component of ``z``), so the damper is off between the stops, takes effect gradually as a contact
builds up, and never pulls the parts together (``|F_j| ≤ f_j``: ElastoGap's limit ``|f_d| ≤
f_c``).  Its coefficient ``F_j / s_j = min(c_j, f_j / |s_j|) ∈ [0, c_j]`` (zero where ``f_j =
0``), so the term stays PSD and ``F_j s_j ≥ 0`` for every parameter value.  Its Jacobian is no
longer symmetric where the limit holds (``∂F_j/∂z = ± κ_j m_j g_jᵀ`` beyond the clearance).

:class:`PowerDissipation` holds the state-dependent part; the constant ``R₀`` (and the
feedthrough ``P, S``) stay in the system (:class:`~fmu_surrogate.ph.NonlinearPH`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.ph.structure import StructureError

Array = NDArray[np.float64]

__all__ = ["PowerDissipation"]

FORMAT = "fmu_surrogate.power_dissipation"
#: version 2 adds the asymmetries, 3 the contact gates; each file is written in the oldest
#: version that holds its content
VERSION = 3


class PowerDissipation:
    """``R_nl(z) = Σ_j c_j(z) m_j m_jᵀ`` with ``s_j = m_jᵀ z`` (module doc).

    Parameters
    ----------
    directions : array_like, shape (K, n)
        ``m_j`` (any real vectors).
    gains : array_like, shape (K,)
        ``β_j ≥ 0``.
    exponents : array_like, shape (K,)
        ``p_j`` (any finite numbers).
    smoothing : array_like, shape (K,)
        ``δ_j > 0``.
    asymmetry : array_like, shape (K,), optional
        ``a_j`` in ``[−1, 1]`` (default 0: symmetric laws).
    gates : tuple of array_like, optional
        ``(g, e, κ)`` of shapes (K, n), (K,), (K,): the contact gates of the terms (module doc);
        ``κ_j = inf`` for a term without one (default: none has).

    Raises
    ------
    StructureError
        A negative gain or an asymmetry outside ``[−1, 1]`` (dissipation would be negative), a
        smoothing ``≤ 0``, a negative gate gain, non-finite numbers, shapes that do not fit.

    Examples
    --------
    A damper ``F = 2 sign(v)|v|^(4/3)`` on the velocity ``z₂`` of a two-state system:

    >>> d = PowerDissipation([[0.0, 1.0]], [2.0], [1 / 3], [1e-9])
    >>> print(np.round(d.force(np.array([[0.0, 8.0]])), 6))
    [[ 0. 32.]]
    """

    def __init__(self, directions: ArrayLike, gains: ArrayLike, exponents: ArrayLike,
                 smoothing: ArrayLike, asymmetry: ArrayLike | None = None,
                 gates: tuple[ArrayLike, ArrayLike, ArrayLike] | None = None) -> None:
        M = np.array(directions, dtype=float)
        if M.ndim != 2:
            raise StructureError(f"directions must be a (K, n) matrix, got shape {M.shape}.")
        K = M.shape[0]
        b, p, d = (np.array(v, dtype=float).reshape(-1) for v in (gains, exponents, smoothing))
        if b.shape != (K,) or p.shape != (K,) or d.shape != (K,):
            raise StructureError(f"{K} dissipation terms need {K} gains, exponents and smoothing "
                                 f"values, got {b.size}, {p.size} and {d.size}.")
        if not all(np.all(np.isfinite(a)) for a in (M, b, p, d)):
            raise StructureError("dissipation directions, gains, exponents and smoothing must be "
                                 "finite numbers.")
        if np.any(b < 0):
            raise StructureError(f"dissipation gains must be >= 0 (else R(x) is not PSD), got "
                                 f"{b.tolist()}; parametrise them as non-negative numbers.")
        if np.any(d <= 0):
            raise StructureError(f"dissipation smoothing values must be > 0, got {d.tolist()}.")
        a = np.zeros(K) if asymmetry is None else np.array(asymmetry, dtype=float).reshape(-1)
        if a.shape != (K,) or not np.all(np.isfinite(a)):
            raise StructureError(f"{K} dissipation terms need {K} finite asymmetries, got "
                                 f"{a.tolist()}.")
        if np.any(np.abs(a) > 1):
            raise StructureError(f"dissipation asymmetries must lie in [-1, 1] (else a "
                                 f"coefficient turns negative), got {a.tolist()}.")
        self.directions, self.gains, self.exponents, self.smoothing = M, b, p, d
        self.asymmetry = a
        n = M.shape[1]
        if gates is None:
            g, e, k = np.zeros((K, n)), np.zeros(K), np.full(K, np.inf)
        else:
            g = np.array(gates[0], dtype=float).reshape(K, n) if K else np.zeros((0, n))
            e, k = (np.array(v, dtype=float).reshape(-1) for v in gates[1:])
            if e.shape != (K,) or k.shape != (K,):
                raise StructureError(f"{K} dissipation terms need {K} gate shifts and gains, "
                                     f"got {e.size} and {k.size}.")
        on = np.isfinite(k)
        if not (np.all(np.isfinite(g[on])) and np.all(np.isfinite(e[on]))) or np.any(np.isnan(k)):
            raise StructureError("gate directions, shifts and gains must be finite numbers "
                                 "(a gain of inf: no gate).")
        if np.any(k < 0):
            raise StructureError(f"gate gains must be >= 0 (a negative limit would turn the "
                                 f"damper's power negative), got {k.tolist()}.")
        self.gate_directions = np.where(on[:, None], g, 0.0)
        self.gate_shifts, self.gate_gains = np.where(on, e, 0.0), k

    @classmethod
    def empty(cls, n: int) -> PowerDissipation:
        """No state-dependent dissipation on ``n`` states.

        Parameters
        ----------
        n : int
            Number of states.
        """
        return cls(np.zeros((0, int(n))), [], [], [])

    @property
    def n_terms(self) -> int:
        """Number of terms K."""
        return self.directions.shape[0]

    @property
    def n_states(self) -> int:
        """Number of states n."""
        return self.directions.shape[1]

    @property
    def gated(self) -> NDArray[np.bool_]:
        """Which terms have a contact gate (module doc), shape (K,)."""
        return np.isfinite(self.gate_gains)

    @property
    def is_symmetric(self) -> bool:
        """Whether every asymmetry is 0."""
        return not np.any(self.asymmetry)

    def _s(self, z: ArrayLike) -> tuple[Array, Array]:
        a = np.atleast_2d(np.asarray(z, dtype=float))
        s = a @ self.directions.T  # (N, K)
        return s, s * s + self.smoothing ** 2

    def _c(self, s: Array, q: Array) -> Array:
        """``c_j`` from ``s_j`` and ``q_j = s_j² + δ_j²`` (before a gate's limit)."""
        c = self.gains * q ** (0.5 * self.exponents)
        if self.is_symmetric:
            return c
        return c * (1.0 + self.asymmetry * (s * q ** -0.5))

    def _terms(self, z: ArrayLike) -> tuple[Array, Array, Array, Array, Array | None]:
        """``s``, ``q``, the unlimited coefficients ``c`` and the forces ``F_j`` (N, K), and
        the gates' arguments ``r = gᵀz + e`` (``None`` without a gate)."""
        s, q = self._s(z)
        c = self._c(s, q)
        F = c * s
        if not self.gated.any():
            return s, q, c, F, None
        r = np.atleast_2d(np.asarray(z, dtype=float)) @ self.gate_directions.T + self.gate_shifts
        on = self.gated
        f = self.gate_gains[on] * np.maximum(np.abs(r[:, on]) - 1.0, 0.0)
        F[:, on] = np.maximum(-f, np.minimum(F[:, on], f))
        return s, q, c, F, r

    def coefficients(self, z: ArrayLike) -> Array:
        """``c_j(z) ≥ 0`` (a gated term's ``F_j / s_j``: zero where ``f_j = 0``); ``(N, n) ->
        (N, K)``.

        Parameters
        ----------
        z : array_like, shape (N, n)
            Efforts.
        """
        s, _, c, F, r = self._terms(z)
        if r is None:
            return c
        on = self.gated
        with np.errstate(divide="ignore", invalid="ignore"):
            lim = np.where(s[:, on] != 0, F[:, on] / s[:, on], 0.0)
        f_pos = np.abs(r[:, on]) > 1.0
        c[:, on] = np.where(f_pos & (s[:, on] == 0), c[:, on], lim)
        return c

    def matrix(self, z: ArrayLike) -> Array:
        """``R_nl(z) = Σ_j c_j m_j m_jᵀ`` (PSD); ``(N, n) -> (N, n, n)``.

        Parameters
        ----------
        z : array_like, shape (N, n)
            Efforts.
        """
        return np.einsum("nk,ki,kj->nij", self.coefficients(z), self.directions, self.directions)

    def force(self, z: ArrayLike) -> Array:
        """``R_nl(z) z = Σ_j F_j m_j`` (``F_j = c_j s_j``, a gated one limited); ``(N, n) ->
        (N, n)``.

        Parameters
        ----------
        z : array_like, shape (N, n)
            Efforts.
        """
        return self._terms(z)[3] @ self.directions

    def force_jacobian(self, z: ArrayLike) -> Array:
        """``∂(R_nl(z) z)/∂z = Σ_j β_j [q^(p/2 − 1) (q + p s²)(1 + a σ) + a s δ² q^(p/2 − 3/2)]
        m_j m_jᵀ``, ``q = s² + δ²``, ``σ = s/√q``, a gated term where its limit holds
        ``sign(F_j) κ_j sign(r_j) m_j g_jᵀ`` instead; ``(N, n) -> (N, n, n)``.

        Parameters
        ----------
        z : array_like, shape (N, n)
            Efforts.
        """
        s, q, c, F, r = self._terms(z)
        p = self.exponents
        d = self.gains * q ** (0.5 * p - 1.0) * (q + p * s * s)
        if not self.is_symmetric:
            a = self.asymmetry
            d = d * (1.0 + a * (s * q ** -0.5)) + self.gains * a * s * self.smoothing ** 2 \
                * q ** (0.5 * p - 1.5)
        if r is None:
            return np.einsum("nk,ki,kj->nij", d, self.directions, self.directions)
        limited = self.gated & (F != c * s)  # where the limit holds, F_j = ± f_j(z)
        d = np.where(limited, 0.0, d)
        slope = np.where(limited & (np.abs(r) > 1.0),
                         np.sign(F) * np.sign(r) * np.where(self.gated, self.gate_gains, 0.0), 0.0)
        return np.einsum("nk,ki,kj->nij", d, self.directions, self.directions) \
            + np.einsum("nk,ki,kj->nij", slope, self.directions, self.gate_directions)

    def rate(self, z: ArrayLike) -> Array:
        """``zᵀ R_nl(z) z = Σ_j F_j s_j ≥ 0``; ``(N, n) -> (N,)``.

        Parameters
        ----------
        z : array_like, shape (N, n)
            Efforts.
        """
        s, _, _, F, _ = self._terms(z)
        return (F * s).sum(axis=1)

    def padded(self, offset: int, n: int) -> PowerDissipation:
        """The same terms on an effort of ``n`` components, this one's from ``offset`` on (a
        part's dissipation on a coupled state).

        Parameters
        ----------
        offset : int
            Index of this effort's first component in the larger one.
        n : int
            Size of the larger effort.
        """
        pad = ((0, 0), (int(offset), int(n) - int(offset) - self.n_states))
        return PowerDissipation(np.pad(self.directions, pad), self.gains, self.exponents,
                                self.smoothing, self.asymmetry,
                                (np.pad(self.gate_directions, pad), self.gate_shifts,
                                 self.gate_gains))

    @classmethod
    def joined(cls, parts: Sequence[PowerDissipation], n: int) -> PowerDissipation:
        """The terms of ``parts`` (each on an effort of ``n`` components) in one dissipation.

        Parameters
        ----------
        parts : sequence of PowerDissipation
            Dissipations of the same effort.
        n : int
            Size of the effort (the result when ``parts`` is empty).
        """
        if not parts:
            return cls.empty(n)
        cat = lambda name: np.concatenate([getattr(d, name) for d in parts])
        return cls(np.vstack([d.directions for d in parts]), cat("gains"), cat("exponents"),
                   cat("smoothing"), cat("asymmetry"),
                   (np.vstack([d.gate_directions for d in parts]), cat("gate_shifts"),
                    cat("gate_gains")))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description (exact floats)."""
        out = {"format": FORMAT, "version": 1, "n_states": self.n_states,
               "directions": self.directions.tolist(), "gains": self.gains.tolist(),
               "exponents": self.exponents.tolist(), "smoothing": self.smoothing.tolist()}
        if not self.is_symmetric:  # version 1 readers refuse it rather than drop a_j
            out.update(version=2, asymmetry=self.asymmetry.tolist())
        on = self.gated
        if on.any():  # older readers refuse it rather than drop the gates
            out.update(version=VERSION, asymmetry=self.asymmetry.tolist(),
                       gates={"terms": np.flatnonzero(on).tolist(),
                              "directions": self.gate_directions[on].tolist(),
                              "shifts": self.gate_shifts[on].tolist(),
                              "gains": self.gate_gains[on].tolist()})
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PowerDissipation:
        """Inverse of :meth:`to_dict`.

        Parameters
        ----------
        d : dict
            As written by :meth:`to_dict`.
        """
        if d.get("format") != FORMAT or d.get("version") not in range(1, VERSION + 1):
            raise InvalidInputError(f"not a power dissipation of version 1 ... {VERSION} "
                                    f"(format {d.get('format')!r}, version "
                                    f"{d.get('version')!r}); a newer fmu-surrogate wrote it: "
                                    f"upgrade to read it.")
        M = np.asarray(d["directions"], dtype=float)
        M = M.reshape(len(d["gains"]), int(d["n_states"]))  # (K, 0) too: a static map's
        K, n = M.shape
        gates = None
        if "gates" in d:
            gd = d["gates"]
            terms = np.asarray(gd["terms"], dtype=int).reshape(-1)
            if np.any(terms < 0) or np.any(terms >= K):
                raise InvalidInputError(f"gate terms {terms.tolist()} out of the {K} terms.")
            g, e, k = np.zeros((K, n)), np.zeros(K), np.full(K, np.inf)
            g[terms] = np.asarray(gd["directions"], dtype=float).reshape(terms.size, n)
            e[terms], k[terms] = gd["shifts"], gd["gains"]
            gates = (g, e, k)
        return cls(M, d["gains"], d["exponents"], d["smoothing"], d.get("asymmetry"), gates)

    def __repr__(self) -> str:
        return f"PowerDissipation(n={self.n_states}, terms={self.n_terms})"
