"""Expression programs of the explicit efforts: sums of elementary terms and known polynomials.

* :class:`~fmu_surrogate.ph.TermEffort` (discovered laws): ``zᵢ = Σₜ fₜ(xᵢ)``, a diagonal
  Jacobian ``fₜ'`` and ``H = Σᵢ Σₜ Fₜ(xᵢ)`` with the exact antiderivatives of
  :mod:`fmu_surrogate.ph.efforts.term` — powers as products of the state, ``sin``/``cos`` and,
  for a ``gaussian`` term, one loop over its embedded centres and weights (``erf`` for ``H``;
  the constants ``erf(−cⱼ/√2ℓ)`` embedded as an array, computed as the Python class does).
* :class:`~fmu_surrogate.ph.PolynomialEffort` (known effort parts): each term
  ``coefficient · Πⱼ xⱼ^eⱼ`` written out (powers as products; known parts are a few terms), its
  Jacobian term by term in the order the class accumulates it; no Hamiltonian.
* :class:`~fmu_surrogate.ph.PartlyKnownEffort`: the learned part's programs (any translatable
  effort, e.g. a GP's kernel expansion with its loops) plus the known polynomial; ``H`` is the
  learned part's ``H̄``.
* :class:`~fmu_surrogate.ph.ConvexEffort` (the energy of a
  :class:`~fmu_surrogate.ph.NonlinearPH`): ``z = Q x + Σ_k α_k ψ_k'(s_k) w_k`` with
  ``s_k = w_kᵀx``, ``∂z/∂x = Q + Σ_k α_k ψ_k''(s_k) w_k w_kᵀ`` and ``H = ½ xᵀQx + Σ_k α_k
  ψ_k(s_k)``, the ridge functions as :func:`fmu_surrogate.ph.efforts.convex.ridge` writes them
  (``s³``, ``3 s s``, ``s⁴/4`` as products; ``tanh s``, ``1 − tanh² s`` and ``log cosh s = |s| +
  log1p(exp(−2|s|)) − log 2``; ``sin s − s``, ``cos s − 1`` and ``2 sin²(s/2) − s²/2``; a gap's
  ``d = s − min(max(s, −1), 1)``, ``½ d d`` and the step ``1 if |s| > 1 else 0`` — numpy's
  ``s − clip(s, −1, 1)`` and ``(|s| > 1)·1`` bit for bit); ``Q`` and the ridges' weights and
  directions are arrays.

Each function returns what :func:`fmu_surrogate.export.expressions.effort.effort_expressions` asks of
one effort: the ``n`` effort expressions (``which = "z"``), the ``n × n`` Jacobian rows
(``"dz"``) or the Hamiltonian expression (``"H"``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.special import erf as _erf

from fmu_surrogate.export.expressions.program import (
    LOOP,
    Builder,
    Expr,
    Let,
    Num,
    Op,
    Par,
    absolute,
    add,
    cos,
    erf,
    exp,
    if_greater,
    log1p,
    maximum,
    minimum,
    mul,
    sin,
    sub,
    tanh,
)

__all__ = ["convex_effort", "partly_known_effort", "polynomial_effort", "term_effort"]


def _power(s: Expr, k: int) -> Expr:
    """``s^k`` as a product (``1`` for ``k = 0``)."""
    return mul(*([s] * k))


def _gaussian(t: dict, s: Expr, b: Builder, P: Any, name: str, which: str) -> Expr:
    """A ``gaussian`` term's value, slope or primitive: one loop over its centres (an empty
    term adds exactly zero, as in the Python class)."""
    if t["centers"].size == 0:
        return Num(0.0)
    c = P.add(f"{name}_centres", t["centers"], "the centres of a gaussian term")
    w = P.add(f"{name}_weights", t["weights"], "the weights of a gaussian term")
    ell = float(t["length_scale"])
    r = np.sqrt(2.0) * ell
    if which == "H":
        e0 = P.add(f"{name}_erf0", _erf(-t["centers"] / r), "erf(-c/sqrt(2) l) of a gaussian term")

    def body(lets: list[Let]) -> list[Expr]:
        diff = b.let(sub(s, Par(c, (LOOP,))), lets)
        if which == "H":
            F = sub(erf(Op("/", (diff, Num(r)))), Par(e0, (LOOP,)))
            return [mul(F, Par(w, (LOOP,)))]
        d = b.let(Op("/", (diff, Num(ell))), lets)
        k = b.let(exp(mul(Num(-0.5), d, d)), lets)
        if which == "z":
            return [mul(k, Par(w, (LOOP,)))]
        return [mul(Op("/", (mul(Num(-1.0), d), Num(ell))), k, Par(w, (LOOP,)))]

    total, = b.loop(int(t["centers"].size), body)
    return mul(Num(ell * np.sqrt(np.pi / 2.0)), total) if which == "H" else total


def _term(t: dict, s: Expr, b: Builder, P: Any, name: str, which: str) -> Expr:
    """``f(s)`` (``z``), ``f'(s)`` (``dz``) or ``F(s)`` (``H``) of one term, as the Python
    class writes them."""
    kind = t["kind"]
    if kind == "gaussian":
        return _gaussian(t, s, b, P, name, which)
    coef = float(t["coef"])
    if kind == "power":
        k = int(t["exponent"])
        if which == "z":
            return mul(Num(coef), _power(s, k))
        if which == "dz":
            return mul(Num(k * coef), _power(s, k - 1)) if k > 0 else Num(0.0)
        return Op("/", (mul(Num(coef), _power(s, k + 1)), Num(float(k + 1))))
    if kind == "sin":
        return {"z": lambda: mul(Num(coef), sin(s)), "dz": lambda: mul(Num(coef), cos(s)),
                "H": lambda: mul(Num(coef), sub(Num(1.0), cos(s)))}[which]()
    return {"z": lambda: mul(Num(coef), cos(s)), "dz": lambda: mul(Num(-coef), sin(s)),
            "H": lambda: mul(Num(coef), sin(s))}[which]()


def term_effort(e: Any, xs: Sequence[Expr], b: Builder, P: Any, pre: str, which: str) -> Any:
    """The programs' expressions of a :class:`~fmu_surrogate.ph.TermEffort`.

    Parameters
    ----------
    e : TermEffort
        The effort.
    xs : sequence of Expr
        Its state components.
    b : Builder
        Collects the statements (loops of the gaussian terms).
    P : mapping with ``add(name, value, what)``
        The constant arrays.
    pre : str
        Prefix of the constant arrays' names.
    which : {"z", "dz", "H"}
        What to return.

    Returns
    -------
    list of Expr, list of list of Expr, or Expr
        ``z``, ``∂z/∂x`` (diagonal) or ``H``.
    """
    n = len(xs)
    per_state = []
    for i, ts in enumerate(e.terms):
        s = xs[i]
        per_state.append(add(*(_term(t, s, b, P, f"{pre}x{i + 1}_t{j + 1}", which)
                               for j, t in enumerate(ts))))
    if which == "z":
        return [b.let(v) for v in per_state]
    if which == "H":
        return add(*per_state)
    return [[per_state[r] if r == c else Num(0.0) for c in range(n)] for r in range(n)]


def _monomial(xs: Sequence[Expr], exponents: Any, coef: float) -> Expr:
    """``(Πⱼ xⱼ^eⱼ) · coef`` (factors in increasing ``j``, as the Python class multiplies)."""
    return mul(*(_power(xs[j], int(k)) for j, k in enumerate(exponents) if k), Num(coef))


def polynomial_effort(e: Any, xs: Sequence[Expr], which: str) -> Any:
    """The programs' expressions of a :class:`~fmu_surrogate.ph.PolynomialEffort`.

    Parameters
    ----------
    e : PolynomialEffort
        The effort.
    xs : sequence of Expr
        Its state components.
    which : {"z", "dz"}
        What to return (a polynomial effort has no Hamiltonian).

    Returns
    -------
    list of Expr or list of list of Expr
        ``z`` or ``∂z/∂x``.
    """
    n = len(xs)
    if which == "z":
        z: list[list[Expr]] = [[] for _ in range(n)]
        for t, i in enumerate(e.components):
            z[int(i)].append(_monomial(xs, e.exponents[t], float(e.coefficients[t])))
        return [add(*zi) for zi in z]
    dz: list[list[list[Expr]]] = [[[] for _ in range(n)] for _ in range(n)]
    for t, k in zip(*np.nonzero(e.exponents)):
        dexp = e.exponents[t].copy()
        dexp[k] -= 1
        c = e.exponents[t, k] * e.coefficients[t]
        dz[int(e.components[t])][int(k)].append(_monomial(xs, dexp, float(c)))
    return [[add(*entry) for entry in row] for row in dz]


def partly_known_effort(e: Any, xs: Sequence[Expr], which: str,
                        learned: Callable[[Any, str], Any]) -> Any:
    """The programs' expressions of a :class:`~fmu_surrogate.ph.PartlyKnownEffort`.

    Parameters
    ----------
    e : PartlyKnownEffort
        The effort.
    xs : sequence of Expr
        Its state components.
    which : {"z", "dz", "H"}
        What to return.
    learned : callable
        ``learned(effort, which)``: the expressions of the learned part (the translation of
        its own kind).

    Returns
    -------
    list of Expr, list of list of Expr, or Expr
        ``z_learned + z_known``, ``∂z_learned/∂x + ∂z_known/∂x`` or the learned part's ``H̄``.
    """
    out = learned(e.learned, which)
    if which == "H":
        return out
    known = polynomial_effort(e.known, xs, which)
    if which == "z":
        return [add(a, k) for a, k in zip(out, known)]
    return [[add(a, k) for a, k in zip(ra, rk)] for ra, rk in zip(out, known)]


def _ridge(kind: str, s: Expr, b: Builder, order: int) -> Expr:
    """``ψ(s)``, ``ψ'(s)`` or ``ψ''(s)`` of a ridge kind, as
    :func:`fmu_surrogate.ph.efforts.convex.ridge` computes them."""
    if kind == "quartic":
        # powers as products (numpy's s**3 is pow: the two differ in the last bit at most)
        return (mul(Num(0.25), s, s, s, s), mul(s, s, s), mul(Num(3.0), s, s))[order]
    if kind == "gap":
        # s − clip(s, −1, 1) as s + (−1)·fmin(fmax(s, −1), 1): the same rounding as numpy's
        if order == 2:
            return if_greater(absolute(s), Num(1.0), Num(1.0), Num(0.0))
        d = b.let(sub(s, minimum(maximum(s, Num(-1.0)), Num(1.0))))
        return mul(Num(0.5), d, d) if order == 0 else d
    if kind == "periodic":
        if order == 0:
            h = b.let(sin(mul(Num(0.5), s)))
            return sub(mul(Num(2.0), h, h), mul(Num(0.5), s, s))
        return sub(sin(s), s) if order == 1 else sub(cos(s), Num(1.0))
    if order == 0:
        a = b.let(absolute(s))
        return sub(add(a, log1p(exp(mul(Num(-2.0), a)))), Num(float(np.log(2.0))))
    th = b.let(tanh(s))
    return th if order == 1 else sub(Num(1.0), mul(th, th))


def _shifted_ridge(e: Any, kind: str, k: int, s: Expr, b: Builder, P: Any, pre: str,
                   order: int) -> Expr:
    """Ridge ``k`` of ``e`` at ``s``: with a shift ``c`` (a preload) ``ψ(s + c) − ψ(c) − ψ'(c) s``
    and its derivatives, in the order of operations of
    :class:`~fmu_surrogate.ph.ConvexEffort` (``ψ(c)``, ``ψ'(c)`` as it computed them)."""
    if not np.any(e.shifts != 0):
        return _ridge(kind, s, b, order)
    cs = P.add(f"{pre}ridge_shifts", e.shifts, "the ridge shifts (preloads)")
    at = P.add(f"{pre}ridge_at_shift", e.shift_terms, "psi and psi' of each ridge at its shift")
    r = _ridge(kind, b.let(add(s, Par(cs, (k,)))), b, order)
    if order == 1:
        return sub(r, Par(at, (1, k)))
    return sub(sub(r, Par(at, (0, k))), mul(Par(at, (1, k)), s)) if order == 0 else r


def convex_effort(e: Any, xs: Sequence[Expr], b: Builder, P: Any, pre: str, which: str) -> Any:
    """The programs' expressions of a :class:`~fmu_surrogate.ph.ConvexEffort`.

    Parameters
    ----------
    e : ConvexEffort
        The effort.
    xs : sequence of Expr
        Its state components.
    b : Builder
        Collects the statements (the ridges' arguments and functions as temporaries).
    P : mapping with ``add(name, value, what)``
        The constant arrays.
    pre : str
        Prefix of the constant arrays' names.
    which : {"z", "dz", "H"}
        What to return.

    Returns
    -------
    list of Expr, list of list of Expr, or Expr
        ``z``, ``∂z/∂x`` or ``H``.
    """
    n, K = len(xs), len(e.kinds)
    Q = P.add(f"{pre}Q", e.Q, "the quadratic part Q of the energy")
    if K:
        a = P.add(f"{pre}ridge_weights", e.weights, "the ridge weights")
        w = P.add(f"{pre}ridge_directions", e.directions, "the ridge directions")
    order = {"H": 0, "z": 1, "dz": 2}[which]
    s = [b.let(add(*(mul(xs[j], Par(w, (k, j))) for j in range(n)))) for k in range(K)]
    c = [b.let(mul(_shifted_ridge(e, kind, k, s[k], b, P, pre, order), Par(a, (k,))))
         for k, kind in enumerate(e.kinds)]
    if which == "z":
        return [b.let(add(add(*(mul(Par(Q, (i, j)), xs[j]) for j in range(n))),
                          *(mul(c[k], Par(w, (k, i))) for k in range(K)))) for i in range(n)]
    if which == "dz":
        return [[add(Par(Q, (i, j)), *(mul(c[k], Par(w, (k, i)), Par(w, (k, j)))
                                       for k in range(K))) for j in range(n)] for i in range(n)]
    Qx = [add(*(mul(xs[j], Par(Q, (j, i))) for j in range(n))) for i in range(n)]
    return add(mul(Num(0.5), add(*(mul(Qx[i], xs[i]) for i in range(n)))), *c)
