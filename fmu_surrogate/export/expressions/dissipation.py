"""Expression programs of a state-dependent dissipation: the power-law terms of a
:class:`~fmu_surrogate.ph.NonlinearPH`.

For ``R_nl(z) = Σ_k c_k m_k m_kᵀ`` with ``s_k = m_kᵀz``, ``q_k = s_k² + δ_k²``, ``c_k =
β_k q_k^(p_k/2) w_k`` and the asymmetry factor ``w_k = 1 + a_k s_k q_k^(−1/2)`` (written only
for terms with ``a_k ≠ 0``; :class:`~fmu_surrogate.ph.dissipation.PowerDissipation`) the
forces ``F_k = c_k s_k``, for a gated term (a contact's damper) clipped by its gate::

    r_k = g_kᵀz + e_k,     f_k = κ_k max(|r_k| − 1, 0),     F_k = max(−f_k, min(c_k s_k, f_k))

and four programs of the effort ``z`` (the programs' argument, written ``x`` like a state):

* ``force``: ``F(z) = R_nl(z) z = Σ_k F_k m_k``, shape ``(n,)``;
* ``dforce``: ``∂F/∂z = Σ_k D_k m_k m_kᵀ``, ``D_k = β_k [q_k^(p_k/2 − 1) (q_k + p_k s_k²) w_k
  + a_k s_k δ_k² q_k^(p_k/2 − 3/2)]``; where a gate's limit holds (``|c_k s_k| > f_k``) ``D_k =
  0`` and, if ``f_k > 0``, ``± κ_k m_k g_kᵀ`` instead (the sign of ``c_k s_k r_k``; not
  symmetric), shape ``(n, n)``;
* ``rate``: ``zᵀR_nl(z)z = Σ_k F_k s_k``, shape ``()``;
* ``force_rate``: ``F(z)`` and the rate from one evaluation of their common terms, shape
  ``(n + 1,)`` (the rate last; bit for bit the two programs' values, with half the powers);

formula for formula as the Python class evaluates them (``q^(p/2)`` as ``pow``: libm's in C,
which numpy's SIMD power may differ from in the last bit; the clip as ``fmin``/``fmax``, the
choices as ``?:``, Modelica's ``min``/``max`` and ``noEvent(if …)``), the directions, gains,
exponents and smoothing values as constant arrays, the gates' ``g, e, κ`` as
``diss_gate_directions`` (G, n), ``diss_gate_shifts`` and ``diss_gate_gains`` (G,): the rows of
the G gated terms in term order, written only when a term has a gate.
The FMU's scheme adds ``h F(z̄)`` to the step equations, its Jacobian ``h ∂F/∂z · ∂z̄/∂x`` and
``rate(z̄)`` to the dissipated power, as :func:`fmu_surrogate.ph.simulate` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.export.expressions.effort import ExportError, _Params
from fmu_surrogate.export.expressions.program import (
    Builder,
    Expr,
    Num,
    Par,
    Program,
    State,
    absolute,
    add,
    as_expr,
    evaluate,
    if_greater,
    maximum,
    minimum,
    mul,
    power,
    sub,
)
from fmu_surrogate.ph.dissipation import PowerDissipation

Array = NDArray[np.float64]

__all__ = ["DissipationExpressions", "dissipation_expressions"]


@dataclass(frozen=True)
class DissipationExpressions:
    """The programs of a power-law dissipation and the constant arrays they read.

    Attributes
    ----------
    n : int
        Dimension of the effort ``z``.
    params : dict of str to ndarray
        Constant arrays, names valid C and Modelica identifiers (prefixed ``diss_``).
    force, dforce, rate, force_rate : Program
        ``F(z)`` (shape (n,)), ``∂F/∂z`` (shape (n, n), ``[i, j] = ∂F_i/∂z_j``),
        ``zᵀR_nl(z)z`` (shape ()) and ``F(z)`` followed by the rate (shape (n + 1,)).
    kind : str
        Description (for comments in generated code).
    """

    n: int
    params: dict[str, Array]
    force: Program
    dforce: Program
    rate: Program
    force_rate: Program
    kind: str

    def evaluate(self, which: str, z: ArrayLike) -> Array:
        """Evaluate a program with numpy (the reference the tests compare against).

        Parameters
        ----------
        which : {"force", "dforce", "rate", "force_rate"}
            The program.
        z : array_like, shape (M, n) or (n,)
            Efforts.

        Returns
        -------
        ndarray
            Shape ``(M, *shape)``, or ``shape`` for a single point.
        """
        prog = {"force": self.force, "dforce": self.dforce, "rate": self.rate,
                "force_rate": self.force_rate}[which]
        a = np.asarray(z, dtype=float)
        out = evaluate(prog, self.params, np.atleast_2d(a))
        return out[0] if a.ndim == 1 else out


def _programs(d: PowerDissipation, which: str, P: _Params) -> Program:
    n, K = d.n_states, d.n_terms
    zs = [State(j) for j in range(n)]
    b = Builder()
    M = P.add("diss_directions", d.directions, "the dissipation directions")
    g = P.add("diss_gains", d.gains, "the dissipation gains")
    p = P.add("diss_exponents", d.exponents, "the dissipation exponents")
    dl = P.add("diss_smoothing", d.smoothing, "the dissipation smoothing values")
    s = [b.let(add(*(mul(zs[j], Par(M, (k, j))) for j in range(n)))) for k in range(K)]
    q = [b.let(add(mul(s[k], s[k]), mul(Par(dl, (k,)), Par(dl, (k,))))) for k in range(K)]
    w: list[Expr | None] = [None] * K
    if not d.is_symmetric:
        a = P.add("diss_asymmetry", d.asymmetry, "the dissipation asymmetries")
        w = [b.let(add(Num(1.0), mul(Par(a, (k,)), mul(s[k], power(q[k], Num(-0.5))))))
             if d.asymmetry[k] else None for k in range(K)]
    row = {int(k): i for i, k in enumerate(np.flatnonzero(d.gated))}  # term: its gate's row
    if row:
        on = d.gated
        G = P.add("diss_gate_directions", d.gate_directions[on], "the gate directions")
        e = P.add("diss_gate_shifts", d.gate_shifts[on], "the gate shifts")
        kap = P.add("diss_gate_gains", d.gate_gains[on], "the gate gains")

    def cs(k: int) -> Expr:
        """``c_k s_k`` before a gate's limit, ``c_k = β_k q_k^(p_k/2) w_k``."""
        c = mul(Par(g, (k,)), power(q[k], mul(Num(0.5), Par(p, (k,)))))
        return b.let(mul(c, s[k]) if w[k] is None else mul(c, w[k], s[k]))

    def limit(k: int) -> tuple[Expr, Expr]:
        """``r_k = g_kᵀz + e_k`` and ``f_k = κ_k (|r_k| − 1)₊`` of a gated term."""
        i = row[k]
        r = b.let(add(*(mul(zs[j], Par(G, (i, j))) for j in range(n)), Par(e, (i,))))
        return r, b.let(mul(Par(kap, (i,)), maximum(sub(absolute(r), Num(1.0)), Num(0.0))))

    if which == "dforce":
        c: list[Expr] = []
        cross: dict[int, Expr] = {}  # a gated term's slope along m gᵀ
        for k in range(K):
            slope = mul(Par(g, (k,)), power(q[k], sub(mul(Num(0.5), Par(p, (k,))), Num(1.0))),
                        add(q[k], mul(Par(p, (k,)), s[k], s[k])))
            if w[k] is not None:  # + β a s δ² q^(p/2 − 3/2), the asymmetry's own slope
                slope = add(mul(slope, w[k]), mul(
                    Par(g, (k,)), Par(a, (k,)), s[k], mul(Par(dl, (k,)), Par(dl, (k,))),
                    power(q[k], sub(mul(Num(0.5), Par(p, (k,))), Num(1.5)))))
            if k in row:  # the limit holds where |c s| > f: ± κ sign(r) m gᵀ where f > 0
                ck, (r, f) = cs(k), limit(k)
                kr = b.let(if_greater(r, Num(0.0), Par(kap, (row[k],)),
                                      mul(Num(-1.0), Par(kap, (row[k],)))))
                held = if_greater(absolute(ck), f, if_greater(ck, Num(0.0), kr,
                                                              mul(Num(-1.0), kr)), Num(0.0))
                cross[k] = b.let(if_greater(f, Num(0.0), held, Num(0.0)))
                slope = if_greater(absolute(ck), f, Num(0.0), b.let(slope))
            c.append(b.let(slope))
        out: list[Expr] = [add(*(mul(c[k], Par(M, (k, i)), Par(M, (k, j))) for k in range(K)),
                               *(mul(cross[k], Par(M, (k, i)), Par(G, (row[k], j)))
                                 for k in row))
                           for i in range(n) for j in range(n)]
        return Program(tuple(b.statements), tuple(map(as_expr, out)), (n, n))
    F = [cs(k) for k in range(K)]  # the forces F_k, a gated one clipped to [−f_k, f_k]
    for k in row:
        f = limit(k)[1]
        F[k] = b.let(maximum(mul(Num(-1.0), f), minimum(F[k], f)))
    rate = as_expr(add(*(mul(F[k], s[k]) for k in range(K))))
    if which == "rate":
        return Program(tuple(b.statements), (rate,), ())
    out = [as_expr(add(*(mul(F[k], Par(M, (k, i))) for k in range(K)))) for i in range(n)]
    if which == "force_rate":
        return Program(tuple(b.statements), (*out, rate), (n + 1,))
    return Program(tuple(b.statements), tuple(out), (n,))


def dissipation_expressions(dissipation: Any) -> DissipationExpressions:
    """The programs of a :class:`~fmu_surrogate.ph.dissipation.PowerDissipation`.

    Parameters
    ----------
    dissipation : PowerDissipation
        The state-dependent dissipation (at least one term).

    Returns
    -------
    DissipationExpressions

    Raises
    ------
    ExportError
        Not a ``PowerDissipation``, no terms, or non-finite numbers.
    """
    if not isinstance(dissipation, PowerDissipation):
        raise ExportError(f"cannot export a dissipation of kind {type(dissipation).__name__!r}; "
                          f"the exporters translate PowerDissipation only.")
    if dissipation.n_terms == 0:
        raise ExportError("the dissipation has no terms: there is nothing to export (export the "
                          "system without it).")
    P = _Params()
    progs = {w: _programs(dissipation, w, P) for w in ("force", "dforce", "rate", "force_rate")}
    return DissipationExpressions(dissipation.n_states, dict(P), progs["force"],
                                  progs["dforce"], progs["rate"], progs["force_rate"],
                                  repr(dissipation))
