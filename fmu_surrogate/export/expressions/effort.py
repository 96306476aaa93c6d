"""One expression source for a surrogate's effort ``z(x)``, its Jacobian ``∂z/∂x`` and ``H(x)``.

Every exporter renders the same small programs (:mod:`fmu_surrogate.export.expressions.program`), so the
generated C code, the Modelica model and the numpy evaluator that the tests compare against the
``ph`` objects cannot drift apart.  Constant arrays stay arrays — a kernel expansion with
hundreds of centres becomes one loop over embedded data, never an unrolled expression.

The rendered code sums in its own order (and computes kernel distances as differences, not as
``|a|² + |b|² − 2ab``), so it agrees with the Python effort to round-off *of the expansion*:
≈ 1e-15 relative for well-scaled data, but identified GP expansions are ill-conditioned (weights
of 1e4 … 1e7 cancelling to efforts of order 1) and there both differ from the exact value of
the formula by ≈ 1e-8 relative, equally (tests/export/test_identified.py).  The efforts
translated are those the package makes: :class:`~fmu_surrogate.ph.LinearEffort` (``z = Q x``),
:class:`~fmu_surrogate.ph.KernelEffort` (the direct kernel expansion, the Hamiltonian part with
its derivative kernel and the optional constraint force, formula for formula as
:mod:`fmu_surrogate.ph.efforts.kernel` evaluates them), :class:`~fmu_surrogate.ph.CompositeEffort`
(coupled systems, block by block) and the explicit efforts of
:mod:`fmu_surrogate.export.expressions.terms` (discovered terms, known polynomials, the convex
energy of a :class:`~fmu_surrogate.ph.NonlinearPH`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import FmuSurrogateError
from fmu_surrogate.export.expressions.program import (
    LOOP,
    Builder,
    Expr,
    Let,
    Num,
    Par,
    Program,
    State,
    add,
    as_expr,
    evaluate,
    exp,
    mul,
    sub,
)
from fmu_surrogate.export.expressions.terms import (
    convex_effort,
    partly_known_effort,
    polynomial_effort,
    term_effort,
)
from fmu_surrogate.ph.efforts.convex import ConvexEffort
from fmu_surrogate.ph.efforts.kernel import KernelEffort
from fmu_surrogate.ph.efforts.known import PartlyKnownEffort, PolynomialEffort
from fmu_surrogate.ph.efforts.term import TermEffort
from fmu_surrogate.ph.interconnect import CompositeEffort
from fmu_surrogate.ph.system import PHDAE, LinearEffort

Array = NDArray[np.float64]

__all__ = [
    "EffortExpressions",
    "ExportError",
    "UnsupportedEffortError",
    "effort_expressions",
]


class ExportError(FmuSurrogateError, ValueError):
    """A surrogate that cannot be exported as it is (NaN data, empty expansion, bad names)."""


class UnsupportedEffortError(FmuSurrogateError, TypeError):
    """An effort kind the exporters cannot translate into equations."""


class _Params(dict):
    """Constant arrays by name; ``add`` refuses non-finite data and clashing redefinitions."""

    def add(self, name: str, value: ArrayLike, what: str) -> str:
        a = np.array(value, dtype=float)
        if not np.all(np.isfinite(a)):
            raise ExportError(f"{what} ({name}) contains NaN or Inf; an exported surrogate needs "
                              f"finite parameters: re-identify or repair the surrogate.")
        if name in self and not np.array_equal(self[name], a):
            raise ExportError(f"two different arrays would both be called {name!r}.")
        self[name] = a
        return name


@dataclass(frozen=True)
class EffortExpressions:
    """The programs of an effort and the constant arrays they read.

    Attributes
    ----------
    n : int
        State dimension.
    params : dict of str to ndarray
        Constant arrays (scalars as 0-d arrays), names valid C and Modelica identifiers.
    z, dz : Program
        ``z(x)`` (shape (n,)) and ``∂z/∂x`` (shape (n, n), ``[i, j] = ∂z_i/∂x_j``).
    H : Program or None
        ``H(x)`` (shape ()), ``None`` when the surrogate has no Hamiltonian.
    kind : str
        Description of the effort (for comments in generated code).
    """

    n: int
    params: dict[str, Array]
    z: Program
    dz: Program
    H: Program | None
    kind: str

    def evaluate(self, which: str, x: ArrayLike) -> Array:
        """Evaluate a program with numpy (the reference rendering the tests compare against).

        Parameters
        ----------
        which : {"z", "dz", "H"}
            The program.
        x : array_like, shape (M, n) or (n,)
            States.

        Returns
        -------
        ndarray
            Shape ``(M, *shape)``, or ``shape`` for a single point.
        """
        prog = {"z": self.z, "dz": self.dz, "H": self.H}[which]
        if prog is None:
            raise ExportError("this effort has no Hamiltonian program.")
        a = np.asarray(x, dtype=float)
        pts = np.atleast_2d(a)
        out = evaluate(prog, self.params, pts)
        return out[0] if a.ndim == 1 else out


# -- the efforts ---------------------------------------------------------------------------------
def _own_hamiltonian(h: Any, effort: Any) -> bool:
    """Whether ``h`` is ``effort.hamiltonian`` itself (the only H the exporters can write)."""
    return (getattr(h, "__self__", None) is effort
            and getattr(h, "__func__", None) is getattr(type(effort), "hamiltonian", None))


def _effort_has_h(effort: Any) -> bool:
    if isinstance(effort, LinearEffort):
        return True
    if isinstance(effort, KernelEffort):
        return effort.has_hamiltonian
    if isinstance(effort, (TermEffort, ConvexEffort)):
        return True
    if isinstance(effort, PartlyKnownEffort):
        return _effort_has_h(effort.learned)
    if isinstance(effort, CompositeEffort):
        return all(h is not None and _own_hamiltonian(h, p) and _effort_has_h(p)
                   for p, h in zip(effort.parts, effort.hamiltonians))
    return False


def _check_kind(effort: Any) -> None:
    if isinstance(effort, CompositeEffort):
        for p in effort.parts:
            _check_kind(p)
    elif isinstance(effort, PartlyKnownEffort):
        _check_kind(effort.learned)
    elif not isinstance(effort, (LinearEffort, KernelEffort, TermEffort, PolynomialEffort,
                                 ConvexEffort)):
        raise UnsupportedEffortError(
            f"cannot export an effort of kind {type(effort).__name__!r}: the exporters write "
            f"equations for LinearEffort, KernelEffort, TermEffort, PolynomialEffort, "
            f"ConvexEffort, PartlyKnownEffort and CompositeEffort only; identify the surrogate with a linear, "
            f"GP or law-discovery method, or add a translation for this kind to "
            f"fmu_surrogate.export.expressions.effort.")


def _linear(e: LinearEffort, xs: Sequence[Expr], b: Builder, P: _Params, pre: str,
            which: str) -> Any:
    n = len(xs)
    Q = P.add(f"{pre}Q", e.Q, "the energy matrix Q")
    if which == "dz":
        return [[Par(Q, (r, c)) for c in range(n)] for r in range(n)]
    z = [b.let(add(*(mul(Par(Q, (r, c)), xs[c]) for c in range(n)))) for r in range(n)]
    if which == "z":
        return z
    E = P.add(f"{pre}E", e.E, "the descriptor matrix E")
    Ex = [add(*(mul(Par(E, (r, c)), xs[c]) for c in range(n))) for r in range(n)]
    return mul(Num(0.5), add(*(mul(z[r], Ex[r]) for r in range(n))))


def _kernel_z_direct(e: KernelEffort, xs, b, P, pre, which, cols):
    """``offset + Σᵢ k(x, xᵢ) Wᵢ`` on ``cols`` and (for ``dz``) its derivative, dense."""
    n, N = len(xs), e.n_centres
    X = P.add(f"{pre}centres", e.X, "the kernel centres")
    W = P.add(f"{pre}weights", e.weights, "the kernel weights")
    ell = P.add(f"{pre}lengthscale", e.lengthscale, "the length scales")
    il2 = [b.let(Num(1.0) / mul(Par(ell, (j,)), Par(ell, (j,)))) for j in range(n)]

    def body(lets: list[Let]) -> list[Expr]:
        d = [b.let(sub(xs[j], Par(X, (LOOP, j))), lets) for j in range(n)]
        k = b.let(exp(mul(Num(-0.5), add(*(mul(d[j], d[j], il2[j]) for j in range(n))))), lets)
        kw = [b.let(mul(k, Par(W, (LOOP, c))), lets) for c in cols]
        if which == "z":
            return kw
        return [mul(kw[r], d[j]) for r in range(len(cols)) for j in range(n)]

    sums = b.loop(N, body)
    if which == "z":
        c = P.add(f"{pre}offset", e.offset, "the effort offset")
        return {col: add(Par(c, (col,)), s) for col, s in zip(cols, sums)}
    return {(col, j): mul(Num(-1.0), il2[j], sums[r * n + j])
            for r, col in enumerate(cols) for j in range(n)}


def _kernel_h_component(e: KernelEffort, xd, b, P, pre, which, k: int):
    """Component ``k`` of ``H̄``: its value, gradient or Hessian sums over the centres."""
    nd, N, d = len(xd), e.n_centres, e.differential
    X = P.add(f"{pre}centres", e.X, "the kernel centres")
    V = P.add(f"{pre}h_weights{k + 1}", e.h_weights[k], "the Hamiltonian weights")
    hl = P.add(f"{pre}h_lengthscale{k + 1}", e.h_lengthscale[k], "the Hamiltonian length scales")
    L = [b.let(Num(1.0) / mul(Par(hl, (j,)), Par(hl, (j,)))) for j in range(nd)]

    def body(lets: list[Let]) -> list[Expr]:
        ed = [b.let(sub(xd[j], Par(X, (LOOP, int(d[j])))), lets) for j in range(nd)]
        r = [b.let(mul(L[j], ed[j]), lets) for j in range(nd)]
        K = b.let(exp(mul(Num(-0.5), add(*(mul(ed[j], r[j]) for j in range(nd))))), lets)
        S = b.let(add(*(mul(r[j], Par(V, (LOOP, j))) for j in range(nd))), lets)
        if which == "H":
            return [mul(K, S)]
        KS = b.let(mul(K, S), lets)
        if which == "z":
            return [sub(mul(K, L[j], Par(V, (LOOP, j))), mul(KS, r[j])) for j in range(nd)]
        KV = [b.let(mul(K, Par(V, (LOOP, j))), lets) for j in range(nd)]
        out = []
        for j in range(nd):
            for m in range(nd):
                t = add(mul(Num(-1.0), L[j], KV[j], r[m]), mul(Num(-1.0), L[m], KV[m], r[j]),
                        mul(KS, r[j], r[m]))
                out.append(sub(t, mul(KS, L[j])) if j == m else t)
        return out

    return b.loop(N, body)


def _kernel_constraint(e: KernelEffort, xs, b, P, pre, which):
    """``Φ(x_d) x_a`` (``z``) or its derivatives ``[∂/∂x_d, ∂/∂x_a]`` (``dz``)."""
    d, al = e.differential, e.algebraic
    nd, na, N = d.size, al.size, e.n_centres
    X = P.add(f"{pre}centres", e.X, "the kernel centres")
    C = P.add(f"{pre}c_weights", e.c_weights, "the constraint-force weights")
    lc = P.add(f"{pre}c_lengthscale", e.c_lengthscale, "the constraint-force length scales")
    A = P.add(f"{pre}c_anchor", e.c_anchor, "the constraint-force anchors")
    sh = P.add(f"{pre}c_shift", e.c_shift, "the constraint-force shift")
    L = [b.let(Num(1.0) / mul(Par(lc, (j,)), Par(lc, (j,)))) for j in range(nd)]
    xa = [b.let(add(xs[int(al[a])], Par(sh, (a,)))) for a in range(na)]

    def body(lets: list[Let]) -> list[Expr]:
        ed = [b.let(sub(xs[int(d[j])], Par(X, (LOOP, int(d[j])))), lets) for j in range(nd)]
        K = b.let(exp(mul(Num(-0.5), add(*(mul(ed[j], ed[j], L[j]) for j in range(nd))))), lets)
        lin = add(*(mul(xa[a], Par(A, (LOOP, a))) for a in range(na)))
        KL = b.let(mul(K, lin), lets)
        if which == "z":
            return [mul(KL, Par(C, (LOOP, j))) for j in range(nd)]
        KC = [b.let(mul(K, Par(C, (LOOP, j))), lets) for j in range(nd)]
        return ([mul(KL, Par(C, (LOOP, j)), ed[m]) for j in range(nd) for m in range(nd)]
                + [mul(KC[j], Par(A, (LOOP, a))) for j in range(nd) for a in range(na)])

    s = b.loop(N, body)
    if which == "z":
        return s
    dd = [[mul(Num(-1.0), L[m], s[j * nd + m]) for m in range(nd)] for j in range(nd)]
    da = [[s[nd * nd + j * na + a] for a in range(na)] for j in range(nd)]
    return dd, da


def _kernel(e: KernelEffort, xs: Sequence[Expr], b: Builder, P: _Params, pre: str,
            which: str) -> Any:
    n = len(xs)
    if e.n_centres == 0:
        raise ExportError("the kernel expansion is empty (no centres): there is nothing to "
                          "export; identify the surrogate from data first.")
    has_h = e.has_hamiltonian
    d = [] if not has_h else [int(j) for j in e.differential]
    cols = [c for c in range(n) if c not in d]
    K = e.h_weights.shape[0] if has_h else 0
    if which == "H":
        hlin = P.add(f"{pre}h_linear", e.h_linear, "the linear term of H")
        h0 = P.add(f"{pre}h_offset", e.h_offset, "the constant of H")
        terms = [Par(h0, ())] + [mul(Par(hlin, (j,)), xs[dj]) for j, dj in enumerate(d)]
        for k in range(K):
            terms += _kernel_h_component(e, [xs[j] for j in d], b, P, pre, "H", k)
        return add(*terms)
    out = _kernel_z_direct(e, xs, b, P, pre, which, cols) if cols else {}
    if which == "z":
        z: list[Expr] = [out.get(c, Num(0.0)) for c in range(n)]
    else:
        dz: list[list[Expr]] = [[out.get((r, c), Num(0.0)) for c in range(n)] for r in range(n)]
    if not has_h:
        return z if which == "z" else dz
    nd = len(d)
    M = P.add(f"{pre}effort_map", e.effort_map, "the effort map")
    xd = [xs[j] for j in d]
    if which == "z":
        hlin = P.add(f"{pre}h_linear", e.h_linear, "the linear term of H")
        g = [Par(hlin, (j,)) for j in range(nd)]
        for k in range(K):
            g = [add(gj, sj) for gj, sj in
                 zip(g, _kernel_h_component(e, xd, b, P, pre, "z", k))]
        if e.has_constraint_force:
            g = [add(gj, fj) for gj, fj in zip(g, _kernel_constraint(e, xs, b, P, pre, "z"))]
        g = [b.let(gj) for gj in g]
        for a in range(nd):
            z[d[a]] = add(z[d[a]], *(mul(Par(M, (a, c)), g[c]) for c in range(nd)))
        return z
    hs = [[Num(0.0)] * nd for _ in range(nd)]
    for k in range(K):
        s = _kernel_h_component(e, xd, b, P, pre, "dz", k)
        hs = [[add(hs[j][m], s[j * nd + m]) for m in range(nd)] for j in range(nd)]
    da: list[list[Expr]] = []
    if e.has_constraint_force:
        dd, da = _kernel_constraint(e, xs, b, P, pre, "dz")
        hs = [[add(hs[j][m], dd[j][m]) for m in range(nd)] for j in range(nd)]
    hs = [[b.let(h) for h in row] for row in hs]
    al = [int(a) for a in e.algebraic]
    for a in range(nd):
        for m in range(nd):
            dz[d[a]][d[m]] = add(dz[d[a]][d[m]],
                                 *(mul(Par(M, (a, c)), hs[c][m]) for c in range(nd)))
        for q, aq in enumerate(al if da else []):
            dz[d[a]][aq] = add(dz[d[a]][aq], *(mul(Par(M, (a, c)), da[c][q]) for c in range(nd)))
    return dz


def _composite(e: CompositeEffort, xs: Sequence[Expr], b: Builder, P: _Params, pre: str,
               which: str) -> Any:
    n = len(xs)
    if e.offsets[-1] != n:
        raise ExportError(f"the composite effort covers {e.offsets[-1]} states, the system {n}.")
    parts = []
    for i, part in enumerate(e.parts):
        lo, hi = int(e.offsets[i]), int(e.offsets[i + 1])
        parts.append((lo, hi, _emit(part, list(xs[lo:hi]), b, P, f"{pre}p{i + 1}_", which)))
    if which == "H":
        return add(*(h for _, _, h in parts))
    if which == "z":
        return [zj for _, _, z in parts for zj in z]
    dz: list[list[Expr]] = [[Num(0.0)] * n for _ in range(n)]
    for lo, hi, block in parts:
        for r in range(hi - lo):
            dz[lo + r][lo:hi] = block[r]
    return dz


def _emit(effort: Any, xs: Sequence[Expr], b: Builder, P: _Params, pre: str,
          which: str) -> Any:
    if isinstance(effort, LinearEffort):
        return _linear(effort, xs, b, P, pre, which)
    if isinstance(effort, KernelEffort):
        return _kernel(effort, xs, b, P, pre, which)
    if isinstance(effort, CompositeEffort):
        return _composite(effort, xs, b, P, pre, which)
    if isinstance(effort, TermEffort):
        return term_effort(effort, xs, b, P, pre, which)
    if isinstance(effort, PolynomialEffort):
        return polynomial_effort(effort, xs, which)
    if isinstance(effort, ConvexEffort):
        return convex_effort(effort, xs, b, P, pre, which)
    if isinstance(effort, PartlyKnownEffort):
        return partly_known_effort(effort, xs, which,
                                   lambda part, w: _emit(part, xs, b, P, pre, w))
    raise AssertionError("unreachable: _check_kind admits only known kinds")


def _effort_and_h(system: Any) -> tuple[Any, int, bool]:
    if isinstance(system, PHDAE):
        effort, n = system.effort_function, system.n_states
        h = system._hamiltonian
        if h is not None and not (_own_hamiltonian(h, effort) and _effort_has_h(effort)):
            _check_kind(effort)
            raise ExportError(
                "the system's Hamiltonian is a Python function, not the Hamiltonian of its "
                f"{type(effort).__name__}, so it cannot be written as equations; build the "
                "system with hamiltonian=effort.hamiltonian (or None to export without H).")
        return effort, n, h is not None
    effort = system
    _check_kind(effort)
    if isinstance(effort, LinearEffort):
        n = effort.Q.shape[0]
    elif isinstance(effort, (KernelEffort, TermEffort, PolynomialEffort, PartlyKnownEffort,
                             ConvexEffort)):
        n = effort.n_states
    else:
        n = int(effort.offsets[-1])
    return effort, n, _effort_has_h(effort)


def effort_expressions(system: Any) -> EffortExpressions:
    """The programs for ``z(x)``, ``∂z/∂x`` and ``H(x)`` of a surrogate.

    Parameters
    ----------
    system : PHDAE, LinearPH or effort
        The surrogate, or its effort (``LinearEffort``, ``KernelEffort``, ``CompositeEffort``,
        ``TermEffort``, ``PartlyKnownEffort``, ``ConvexEffort``).

    Returns
    -------
    EffortExpressions
        The three programs (``H`` is ``None`` without a Hamiltonian) and their constant arrays.

    Raises
    ------
    UnsupportedEffortError
        An effort kind without a translation (the message names it).
    ExportError
        NaN or infinite parameters, an empty kernel expansion, or a Hamiltonian that is a
        Python function rather than the effort's own.
    """
    effort, n, has_h = _effort_and_h(system)
    _check_kind(effort)
    params = _Params()
    xs = [State(j) for j in range(n)]
    progs = {}
    for which in ("z", "dz", "H"):
        if which == "H" and not has_h:
            continue
        b = Builder()
        out = _emit(effort, xs, b, params, "", which)
        flat = [out] if which == "H" else out if which == "z" else [v for r in out for v in r]
        shape = {"z": (n,), "dz": (n, n), "H": ()}[which]
        progs[which] = Program(tuple(b.statements), tuple(map(as_expr, flat)), shape)
    return EffortExpressions(n, dict(params), progs["z"], progs["dz"], progs.get("H"),
                             _describe(effort))


def _describe(effort: Any) -> str:
    if isinstance(effort, CompositeEffort):
        return "CompositeEffort(" + ", ".join(_describe(p) for p in effort.parts) + ")"
    if isinstance(effort, LinearEffort):
        return f"LinearEffort(n={effort.Q.shape[0]})"
    if isinstance(effort, TermEffort):
        return (f"TermEffort(n={effort.n_states}, "
                f"{sum(len(ts) for ts in effort.terms)} terms)")
    if isinstance(effort, PartlyKnownEffort):
        return f"PartlyKnownEffort({_describe(effort.learned)} + {effort.known!r})"
    return repr(effort)
