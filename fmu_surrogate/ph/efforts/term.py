"""A separable effort written as sums of named elementary terms, with its exact Hamiltonian.

    zᵢ(x) = Σₜ fₜ(xᵢ),        H(x) = Σᵢ Σₜ Fₜ(xᵢ),   Fₜ' = fₜ,  Fₜ(0) = 0

so ``∇H = z`` holds by construction (``E = I``).  Term kinds (each a JSON-ready dict):

====================  ===========================================  ===============================
kind                  f(s)                                         F(s)
====================  ===========================================  ===============================
``power``             ``coef · s^k`` (``exponent`` k = 0, 1, …)    ``coef · s^(k+1) / (k+1)``
``sin``               ``coef · sin s``                             ``coef · (1 − cos s)``
``cos``               ``coef · cos s``                             ``coef · sin s``
``gaussian``          ``Σⱼ wⱼ exp(−(s − cⱼ)² / 2ℓ²)``               ``Σⱼ wⱼ ℓ √(π/2) (erf((s − cⱼ)/√2ℓ)
                                                                   − erf(−cⱼ/√2ℓ))``
====================  ===========================================  ===============================

A ``gaussian`` term is a kernel expansion (e.g. the posterior mean of a Gaussian process over one
state).  A mechanical law ``m q̈ + c q̇ + k(q) = u`` is the pH system with ``x = (q, p)``,
``z = (k(q), p/m)`` — ``k`` a sum of terms of ``q``, ``p/m`` one ``power`` term of ``p``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import erf

from fmu_surrogate.errors import InvalidInputError

Array = NDArray[np.float64]

__all__ = ["TermEffort"]

_KINDS = ("power", "sin", "cos", "gaussian")


def _check_term(t: dict, where: str) -> dict:
    kind = t.get("kind")
    if kind not in _KINDS:
        raise InvalidInputError(
            f"{where}: term kind {kind!r} is unknown; known: {', '.join(_KINDS)}.")
    out: dict[str, Any] = {"kind": kind, "name": str(t.get("name", kind))}
    if kind == "gaussian":
        c = np.asarray(t["centers"], dtype=float).reshape(-1)
        w = np.asarray(t["weights"], dtype=float).reshape(-1)
        ell = float(t["length_scale"])
        if c.shape != w.shape or not (np.all(np.isfinite(c)) and np.all(np.isfinite(w))):
            raise InvalidInputError(
                f"{where}: gaussian centers and weights must be finite and of one "
                f"length, got {c.shape} and {w.shape}.")
        if not (np.isfinite(ell) and ell > 0):
            raise InvalidInputError(
                f"{where}: gaussian length_scale must be finite and > 0, got {ell}.")
        out.update(centers=c, weights=w, length_scale=ell)
        return out
    coef = float(t["coef"])
    if not np.isfinite(coef):
        raise InvalidInputError(f"{where}: coef must be finite, got {coef}.")
    out["coef"] = coef
    if kind == "power":
        k = t.get("exponent")
        if not (isinstance(k, (int, np.integer)) and k >= 0):
            raise InvalidInputError(f"{where}: power exponent must be an integer >= 0, got {k!r}.")
        out["exponent"] = int(k)
    return out


def _value(t: dict, s: Array) -> Array:
    kind = t["kind"]
    if kind == "power":
        return t["coef"] * s ** t["exponent"]
    if kind == "sin":
        return t["coef"] * np.sin(s)
    if kind == "cos":
        return t["coef"] * np.cos(s)
    d = (s[:, None] - t["centers"][None, :]) / t["length_scale"]
    return np.exp(-0.5 * d * d) @ t["weights"]


def _slope(t: dict, s: Array) -> Array:
    kind = t["kind"]
    if kind == "power":
        k = t["exponent"]
        return k * t["coef"] * s ** (k - 1) if k > 0 else np.zeros_like(s)
    if kind == "sin":
        return t["coef"] * np.cos(s)
    if kind == "cos":
        return -t["coef"] * np.sin(s)
    ell = t["length_scale"]
    d = (s[:, None] - t["centers"][None, :]) / ell
    return (-d / ell * np.exp(-0.5 * d * d)) @ t["weights"]


def _primitive(t: dict, s: Array) -> Array:
    kind = t["kind"]
    if kind == "power":
        k = t["exponent"]
        return t["coef"] * s ** (k + 1) / (k + 1)
    if kind == "sin":
        return t["coef"] * (1.0 - np.cos(s))
    if kind == "cos":
        return t["coef"] * np.sin(s)
    ell, c = t["length_scale"], t["centers"]
    r = np.sqrt(2.0) * ell
    F = erf((s[:, None] - c[None, :]) / r) - erf(-c / r)[None, :]
    return ell * np.sqrt(np.pi / 2.0) * (F @ t["weights"])


class TermEffort:
    """Separable effort ``zᵢ(x) = Σₜ fₜ(xᵢ)`` with ``H = Σᵢ Σₜ Fₜ(xᵢ)`` (see the module).

    Parameters
    ----------
    terms : sequence of sequence of dict
        One list of term dicts per state (``kind``, optional ``name``, and ``coef`` /
        ``exponent`` or ``centers`` / ``weights`` / ``length_scale``).

    Raises
    ------
    ValueError
        An unknown kind, a non-finite number or a malformed term (the state and term named).
    """

    def __init__(self, terms: Sequence[Sequence[dict]]) -> None:
        self.terms = [[_check_term(t, f"state {i}, term {j}") for j, t in enumerate(ts)]
                      for i, ts in enumerate(terms)]
        if not self.terms:
            raise InvalidInputError("TermEffort needs the terms of at least one state.")

    @property
    def n_states(self) -> int:
        """Number of states."""
        return len(self.terms)

    def _x(self, x: ArrayLike) -> Array:
        a = np.atleast_2d(np.asarray(x, dtype=float))
        if a.shape[1] != self.n_states:
            raise InvalidInputError(
                f"x must have {self.n_states} columns, got shape {np.shape(x)}.")
        return a

    def _apply(self, fn, x: ArrayLike) -> Array:
        a = self._x(x)
        out = np.zeros_like(a)
        for i, ts in enumerate(self.terms):
            for t in ts:
                out[:, i] += fn(t, a[:, i])
        return out

    def __call__(self, x: ArrayLike) -> Array:
        """Effort ``z(x)``; ``(N, n) -> (N, n)``.

        Parameters
        ----------
        x : array_like, shape (N, n)
        """
        return self._apply(_value, x)

    def jacobian(self, x: ArrayLike) -> Array:
        """``∂z/∂x`` (diagonal); ``(N, n) -> (N, n, n)``.

        Parameters
        ----------
        x : array_like, shape (N, n)
        """
        d = self._apply(_slope, x)
        out = np.zeros((d.shape[0], self.n_states, self.n_states))
        idx = np.arange(self.n_states)
        out[:, idx, idx] = d
        return out

    def hamiltonian(self, x: ArrayLike) -> Array:
        """``H(x) = Σᵢ Σₜ Fₜ(xᵢ)``; ``(N, n) -> (N,)``.

        Parameters
        ----------
        x : array_like, shape (N, n)
        """
        return self._apply(_primitive, x).sum(axis=1)

    def describe(self) -> list[str]:
        """One line per state: ``z_i = name₁ + name₂ …`` with the coefficients."""
        lines = []
        for i, ts in enumerate(self.terms):
            parts = [f"{t['coef']:.6g}·{t['name']}" if "coef" in t else
                     f"{t['name']}[{t['centers'].size} kernels, ℓ={t['length_scale']:.3g}]"
                     for t in ts]
            lines.append(f"z{i + 1} = " + (" + ".join(parts) if parts else "0"))
        return lines

    def to_dict(self) -> dict:
        """JSON-ready description (exact floats)."""
        def enc(t: dict) -> dict:
            return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in t.items()}

        return {"format": "fmu_surrogate.term_effort", "version": 1,
                "terms": [[enc(t) for t in ts] for ts in self.terms]}

    @classmethod
    def from_dict(cls, d: dict) -> TermEffort:
        """Inverse of :meth:`to_dict`.

        Parameters
        ----------
        d : dict
            As written by :meth:`to_dict`.
        """
        if d.get("format") != "fmu_surrogate.term_effort" or d.get("version") != 1:
            raise InvalidInputError(f"not a version-1 term effort (format {d.get('format')!r}, "
                                    f"version {d.get('version')!r}).")
        return cls(d["terms"])
