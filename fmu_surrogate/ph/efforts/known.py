"""Known parts of an effort: explicit polynomials, and their sum with a learned effort.

A surrogate of a DAE must know its algebraic equations across the constraint manifold, but data
sampled *on* the manifold say nothing about them there (docs/design.md §3, "limit found in
simulation").  What the user knows — the RC network's algebraic efforts ``z2 = x2``,
``z3 = x3``; the pendulum's constraint ``−g(q) = l² − q1² − q2²`` and its force ``−2 q λ`` — is
written as a :class:`PolynomialEffort` and the learned rest (a
:class:`~fmu_surrogate.ph.KernelEffort`) is added to it by :class:`PartlyKnownEffort`::

    z(x) = z_learned(x) + z_known(x),
    z_known,i(x) = Σ_{t : component_t = i} coefficient_t · Π_j x_j ** exponents_t[j]

Exponents are non-negative integers (``x ** 0 = 1``, also at ``x = 0``), so identities, linear
maps and polynomial constraints are all exact and easy to re-implement in generated code.

**Hamiltonian.**  The sum's Hamiltonian is the learned part's ``H̄`` (a known part carries
none).  A known part on algebraic components (zero columns of ``E``) does not enter
``Eᵀz``, so ``Eᵀz = ∇H̄`` still holds; a known part on differential components adds to it
(``Eᵀz = ∇H̄ + Eᵀ z_known``) — the case of a known constraint force ``−(∂g/∂q)ᵀ λ``, which does
no work while the constraint holds (so the energy balance of a simulation that enforces
``g(q) = 0`` at every node is unaffected).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError, InvalidTypeError, UnavailableError
from fmu_surrogate.ph.system import as_state_rows

Array = NDArray[np.float64]

__all__ = ["PartlyKnownEffort", "PolynomialEffort"]

FORMAT = "fmu_surrogate.polynomial_effort"
VERSION = 1


def _monomials(x: Array, exponents: NDArray[np.int64]) -> Array:
    """``Π_j x_j ** e_tj`` for every point and term; ``(M, n), (T, n) -> (M, T)``."""
    out = np.ones((x.shape[0], exponents.shape[0]))
    for j in np.flatnonzero(exponents.any(axis=0)):
        out *= x[:, j : j + 1] ** exponents[:, j][None, :]
    return out


class PolynomialEffort:
    """An effort (or part of one) whose components are explicit polynomials of the state.

    ``z_i(x) = Σ_{t : components[t] = i} coefficients[t] · Π_j x_j ** exponents[t, j]``;
    components without a term are zero.

    Parameters
    ----------
    n_states : int
        State dimension n.
    components : array_like of int, shape (T,)
        Effort component of each term.
    coefficients : array_like of float, shape (T,)
        Coefficient of each term.
    exponents : array_like of int, shape (T, n)
        Non-negative integer exponent of every state in each term.

    Raises
    ------
    ValueError
        On inconsistent shapes, components outside ``[0, n)``, non-finite coefficients or
        negative / non-integer exponents.

    Examples
    --------
    The pendulum's known constraint row ``z5 = l² − q1² − q2²`` (``l = 1``):

    >>> pe = PolynomialEffort.from_terms(5, {4: [(1.0, {}), (-1.0, {0: 2}), (-1.0, {1: 2})]})
    >>> pe([0.6, -0.8, 0.0, 0.0, 0.3]).round(12).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0]
    """

    def __init__(self, n_states: int, components: ArrayLike, coefficients: ArrayLike,
                 exponents: ArrayLike) -> None:
        n = int(n_states)
        if n < 1:
            raise InvalidInputError(f"n_states must be >= 1, got {n_states!r}.")
        comp = np.asarray(components).reshape(-1)
        coef = np.asarray(coefficients, dtype=float).reshape(-1)
        expo = np.asarray(exponents)
        expo = expo.reshape(0, n) if expo.size == 0 else expo
        T = comp.size
        if coef.shape != (T,) or expo.shape != (T, n):
            raise InvalidInputError(
                f"a polynomial effort with {T} terms needs {T} coefficients and exponents of "
                f"shape ({T}, {n}), got {coef.shape} and {expo.shape}.")
        if T and (not np.issubdtype(comp.dtype, np.integer) or comp.min() < 0 or comp.max() >= n):
            raise InvalidInputError(
                f"components must be integers in [0, {n}), got {comp.tolist()}.")
        if not np.all(np.isfinite(coef)):
            raise InvalidInputError("coefficients contain NaN or Inf; pass finite numbers.")
        if T and (not np.issubdtype(expo.dtype, np.integer) or expo.min() < 0):
            raise InvalidInputError(
                f"exponents must be non-negative integers, got {expo.tolist()}.")
        self.n_states = n
        self.components = comp.astype(np.int64)
        self.coefficients = coef
        self.exponents = expo.astype(np.int64)
        # ∂/∂x_k of term t: (exponent e_tk) · coefficient · monomial with e_tk − 1
        rows, cols = np.nonzero(self.exponents)
        dexp = self.exponents[rows].copy()
        dexp[np.arange(rows.size), cols] -= 1
        self._d_terms = (rows, cols, self.exponents[rows, cols] * coef[rows], dexp)

    @classmethod
    def from_terms(cls, n_states: int,
                   terms: Mapping[int, str | Sequence[tuple[float, Mapping[int, int]]]]
                   ) -> PolynomialEffort:
        """Build from ``{component: terms}``.

        Parameters
        ----------
        n_states : int
            State dimension n.
        terms : mapping
            Per effort component ``i``: ``"identity"`` (``z_i = x_i``) or a sequence of terms
            ``(coefficient, {state index: exponent, …})`` (an empty mapping is a constant).

        Returns
        -------
        PolynomialEffort
        """
        n = int(n_states)
        comp: list[int] = []
        coef: list[float] = []
        expo: list[list[int]] = []
        for i, spec in terms.items():
            i = int(i)
            if isinstance(spec, str):
                if spec != "identity":
                    raise InvalidInputError(
                        f"known effort of component {i}: {spec!r} is not a known "
                        "form; use 'identity' or a list of (coefficient, "
                        "{state: exponent}) terms.")
                spec = [(1.0, {i: 1})]
            for term in spec:
                try:
                    c, powers = term
                    e = [0] * n
                    for j, p in dict(powers).items():
                        if not 0 <= int(j) < n or int(p) != p:
                            raise ValueError
                        e[int(j)] = int(p)
                except (TypeError, ValueError):
                    raise InvalidInputError(
                        f"known effort of component {i}: term {term!r} is not (coefficient, "
                        f"{{state index in [0, {n}): integer exponent}})."
                    ) from None
                comp.append(i)
                coef.append(float(c))
                expo.append(e)
        return cls(n, np.array(comp, dtype=np.int64), coef, np.array(expo, dtype=np.int64))

    @property
    def known_components(self) -> NDArray[np.int64]:
        """Sorted indices of the components that have at least one term."""
        return np.unique(self.components)

    def __call__(self, x: ArrayLike) -> Array:
        """``z(x)``: (M, n) -> (M, n), (n,) -> (n,)."""
        a, single = as_state_rows(x, self.n_states, "x")
        z = np.zeros_like(a)
        vals = _monomials(a, self.exponents) * self.coefficients
        np.add.at(z.T, self.components, vals.T)
        return z[0] if single else z

    def jacobian(self, x: ArrayLike) -> Array:
        """``∂z/∂x``: (M, n) -> (M, n, n) with ``[m, i, k] = ∂z_i/∂x_k`` ((n, n) for one point).

        Parameters
        ----------
        x : array_like, shape (M, n) or (n,)
            States.
        """
        a, single = as_state_rows(x, self.n_states, "x")
        rows, cols, c, dexp = self._d_terms
        J = np.zeros((a.shape[0], self.n_states, self.n_states))
        vals = _monomials(a, dexp) * c  # (M, number of derivative terms)
        for t in range(rows.size):
            J[:, self.components[rows[t]], cols[t]] += vals[:, t]
        return J[0] if single else J

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description (exact floats), versioned; see :meth:`from_dict`."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "formula": "z[component[t]] += coefficient[t] * prod_j x[j]**exponents[t][j]",
            "n_states": self.n_states,
            "component": self.components.tolist(),
            "coefficient": self.coefficients.tolist(),
            "exponents": self.exponents.tolist(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PolynomialEffort:
        """Rebuild from :meth:`to_dict` output (validates format, version and shapes).

        Parameters
        ----------
        d : dict
            The description.

        Returns
        -------
        PolynomialEffort
        """
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise InvalidInputError(
                f"not a polynomial-effort description (expected format {FORMAT!r}).")
        if d.get("version") != VERSION:
            raise InvalidInputError(
                f"polynomial-effort version {d.get('version')!r} is not supported "
                f"(this code reads version {VERSION}); upgrade fmu_surrogate.")
        n = d["n_states"]
        expo = np.asarray(d["exponents"], dtype=np.int64) if d["exponents"] else \
            np.zeros((0, n), dtype=np.int64)
        return cls(n, np.asarray(d["component"], dtype=np.int64), d["coefficient"], expo)

    def __repr__(self) -> str:
        return (f"PolynomialEffort(n={self.n_states}, {self.components.size} terms on "
                f"components {self.known_components.tolist()})")


class PartlyKnownEffort:
    """``z(x) = learned(x) + known(x)``: a learned effort plus known polynomial parts.

    Parameters
    ----------
    learned : callable
        The learned effort (e.g. a :class:`~fmu_surrogate.ph.KernelEffort`), ``(M, n) -> (M, n)``;
        its ``jacobian`` and ``hamiltonian`` are used when it has them.
    known : PolynomialEffort
        The known part, on the same n states.

    Raises
    ------
    TypeError
        If ``known`` is not a :class:`PolynomialEffort`.
    ValueError
        If its dimension differs from the learned effort's.
    """

    def __init__(self, learned: Any, known: PolynomialEffort) -> None:
        if not isinstance(known, PolynomialEffort):
            raise InvalidTypeError(f"known must be a PolynomialEffort, got {type(known).__name__}.")
        n = getattr(learned, "n_states", known.n_states)
        if n != known.n_states:
            raise InvalidInputError(
                f"the known part has {known.n_states} states, the learned effort "
                f"{n}; they must describe the same state.")
        self.learned = learned
        self.known = known
        self.n_states = known.n_states

    def __call__(self, x: ArrayLike) -> Array:
        """``z(x)``: (M, n) -> (M, n), (n,) -> (n,)."""
        z = np.asarray(self.learned(x), dtype=float)
        return z + self.known(x)

    def jacobian(self, x: ArrayLike) -> Array:
        """``∂z/∂x`` (M, n, n) ((n, n) for one point); a learned part without an analytic
        Jacobian is differentiated by central differences.

        Parameters
        ----------
        x : array_like, shape (M, n) or (n,)
            States.
        """
        a = np.asarray(x, dtype=float)
        jac = getattr(self.learned, "jacobian", None)
        if jac is not None:
            Jl = np.asarray(jac(a), dtype=float)
        else:
            from fmu_surrogate.ph.interconnect import finite_difference_jacobian

            Jl = finite_difference_jacobian(self.learned, np.atleast_2d(a))
            Jl = Jl[0] if a.ndim == 1 else Jl
        return Jl + self.known.jacobian(a)

    @property
    def has_hamiltonian(self) -> bool:
        """Whether the learned part carries a Hamiltonian ``H̄``."""
        return bool(getattr(self.learned, "has_hamiltonian", False))

    def hamiltonian(self, x: ArrayLike) -> Array:
        """The learned part's ``H̄(x)`` (the known part carries no energy; module doc).

        Parameters
        ----------
        x : array_like, shape (M, n) or (n,)
            States.
        """
        if not self.has_hamiltonian:
            raise UnavailableError("the learned part of this effort has no Hamiltonian; fit "
                                   "with hamiltonian=True to get one.")
        return self.learned.hamiltonian(x)

    def __repr__(self) -> str:
        return f"PartlyKnownEffort({self.learned!r} + {self.known!r})"
