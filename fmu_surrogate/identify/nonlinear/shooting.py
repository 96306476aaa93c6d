"""The differentiable output-error objective: RK4 over multiple-shooting segments (the model's
terms in torch, its steps in NumPy).

Discretisation.  The classical Runge–Kutta scheme on the explicit ODE
``ẋ = (J − R₀ − R_nl(z)) z + (G − P) u``, the input at the stages as the data hold it (linear:
``u_k``, the mean ``(u_k + u_{k+1})/2``, ``u_{k+1}``; zero-order hold: ``u_k`` throughout),
with as many substeps per sample step as the linear start's fastest mode needs to stay in
RK4's stability region.
RK4 rather than the implicit midpoint rule with a fixed number of Newton or fixed-point
iterations: it is explicit, so its forward-mode derivatives are exact through four
evaluations of the vector field per step (no truncated inner solve whose derivative is only
approximately that of the scheme), and it is of fourth order, so at the sampling rates of
harvested data (tens of samples per period) its error stays orders of magnitude below the
output errors being fitted.  The fitted model is validated with the structure-preserving AVF
scheme of :func:`fmu_surrogate.ph.simulate`, which is what users simulate.

Multiple shooting.  Each experiment is cut into segments of ``L`` steps (samples after the last
whole segment are left out); every segment starts from a free state (the first of an experiment
from the known initial state), all segments are integrated in parallel as one batch, and the
defects between a segment's end and the next one's start are penalised.  Long horizons thus
become many short ones: the objective stays smooth in the parameters (no chaotic or unstable
growth over thousands of steps) and a step of the optimiser costs ``L`` sequential steps, not
the length of the record.

Speed.  The residuals' Jacobian comes from one forward-mode pass (:mod:`.gauss_newton`): the
parameters as a batch of dual numbers, one tangent per column.  PyTorch's dual numbers cost
5–130 µs per operation on these tensors (``scripts/bench_nonlinear_fit.py``; with a plain
operand 200–800 µs), and a rollout is thousands of them, so :func:`rollout` takes the model's
matrices and their tangents out of torch once and steps in NumPy, the tangents carried by hand
(a value without the batch axes where every member holds the same ``θ``): a hanging mass's
Jacobian pass (27 columns, 8 segments of 50 steps) 154 → 40 ms, a cost 35 → 13 ms.
:class:`VectorField` holds the terms in torch and evaluates those outside the rollout (the
measured outputs' efforts, the static law) on whole rollouts at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.autograd.forward_ad as fwad
from numpy.typing import NDArray

from fmu_surrogate.identify.nonlinear.parametrisation import Layout, structure, weights
from fmu_surrogate.ph.efforts.convex import ridge

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Segments:
    """The training data cut into equal segments (tensors, batch first).

    Parameters
    ----------
    h : Tensor, shape (S, L)
        Step sizes.
    u0, u1 : Tensor, shape (S, L, m)
        Inputs at the start and the end of each step (equal for a zero-order hold).
    unode : Tensor, shape (S, L + 1, m)
        Inputs the outputs at the nodes see (those of the node, or of the node before for a
        delayed feedthrough).
    y : Tensor, shape (S, L + 1, m_out)
        Measured outputs at the nodes.
    first : ndarray of bool, shape (S,)
        Whether a segment starts an experiment (its start state is not free).
    next_index : ndarray of int, shape (S,)
        Index of the following segment of the same experiment, −1 for the last.
    starts : tuple of (int, int)
        ``(experiment, first sample)`` of each segment.
    weight : Tensor, shape (S, L + 1), or None
        Weights of the output samples in the cost (``None``: all one; a delayed feedthrough
        leaves out each experiment's first output, which sees inputs the data do not hold).
    """

    h: torch.Tensor
    u0: torch.Tensor
    u1: torch.Tensor
    unode: torch.Tensor
    y: torch.Tensor
    first: NDArray[np.bool_]
    next_index: NDArray[np.int64]
    starts: tuple[tuple[int, int], ...]
    weight: torch.Tensor | None = None


def make_segments(exps: list[tuple[Array, Array, Array, str]], length: int | None,
                  delayed: bool = False) -> Segments:
    """Cut ``(t, u, y, hold)`` experiments into segments of ``length`` steps.

    Parameters
    ----------
    exps : list of tuple
        ``t`` (K,), ``u`` (K, m), ``y`` (K, m), hold.
    length : int or None
        Steps per segment; ``None``: one segment per experiment (single shooting; the
        experiments are cut to the shortest).
    delayed : bool
        Whether the outputs see the inputs of the sample before (a delayed feedthrough,
        :class:`~fmu_surrogate.ph.PortedSystem`); the first output of each experiment is then
        left out of the cost.
    """
    L = min(len(e[0]) for e in exps) - 1 if length is None else int(length)
    L = min(L, min(len(e[0]) for e in exps) - 1)
    H, U0, U1, UN, Y, first, starts = [], [], [], [], [], [], []
    for i, (t, u, y, hold) in enumerate(exps):
        seen = np.concatenate([u[:1], u[:-1]]) if delayed else u
        for a in range(0, len(t) - L, L):
            sl = slice(a, a + L + 1)
            tt, uu = t[sl], u[sl]
            H.append(np.diff(tt))
            U0.append(uu[:-1])
            U1.append(uu[1:] if hold == "linear" else uu[:-1])
            UN.append(seen[sl])
            Y.append(y[sl])
            first.append(a == 0)
            starts.append((i, a))
    nxt = np.full(len(starts), -1, dtype=np.int64)
    for k in range(len(starts) - 1):
        if starts[k + 1][0] == starts[k][0]:
            nxt[k] = k + 1
    T = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.float64)
    weight = None
    if delayed:
        w = np.ones((len(starts), L + 1))
        w[np.asarray(first), 0] = 0.0
        weight = T(w)
    return Segments(T(H), T(U0), T(U1), T(UN), T(Y), np.asarray(first), nxt,
                    tuple(starts), weight)


def _row(v: torch.Tensor, k: int = 1) -> torch.Tensor:
    """A parameter vector ``(..., K)`` with ``k`` axes before its last (broadcasts against
    values ``(..., *k axes, K)`` of every batch member)."""
    return v.reshape(v.shape[:-1] + (1,) * k + v.shape[-1:])


class VectorField:
    """The terms of the vector field ``f(x, u)`` and the outputs ``y(x, u)`` of a parameter
    vector, in torch (module doc; :func:`rollout` steps them).

    ``θ`` may be a batch ``(B, size)``: the states are then ``(B, S, n)``, one rollout per
    member, the inputs ``(S, m)`` shared (all the Jacobian's columns from one pass).
    """

    def __init__(self, layout: Layout, theta: torch.Tensor) -> None:
        n = layout.n
        b = layout.unpack(theta)
        st = structure(layout, b, torch)
        W = st["W"]
        self.T = (st["J"] - W[..., :n, :n]).mT
        G, P = st["G"], (W[..., :n, n:] if layout.feedthrough else None)
        self.Bin, self.Bout = (G.mT, G) if P is None else ((G - P).mT, G + P)
        self.D = (W[..., n:, n:] - st["N"]).mT if layout.feedthrough else None
        self.alpha, self.w = _row(weights(layout, b, torch)), b["w"]
        self.kinds = layout.effort_kinds
        self.slopes = _slopes(self.kinds)
        self.c = _row(b["rc"])  # the ridges' shifts (preloads) and their slopes there
        self.slope_c = self.slopes(self.c)
        half = _like(torch.tensor(0.5, dtype=theta.dtype), theta)  # module doc, "Speed"
        self.beta, self.M, self.p = _row(b["beta"]), b["mdir"], _row(half * b["p"])
        self.delta2 = _row(torch.exp(b["ld"] + b["ld"]))
        self.port_delta2 = _row(torch.exp(b["pld"] + b["pld"]))
        self.a, self.pa = _row(b["asym"]), _row(b["pasym"])
        self.gdir, self.gshift, self.gkappa = b["gdir"], _row(b["gshift"]), _row(b["gkappa"])
        self.pbeta, self.pM, self.pp = _row(b["pbeta"]), b["pdir"], _row(half * b["pp"])
        self.blocks = b

    def effort(self, x: torch.Tensor) -> torch.Tensor:
        """``z = x + Σ α_k (ψ_k'(w_kᵀx + c_k) − ψ_k'(c_k)) w_k`` (``Q = I``)."""
        if self.w.shape[-2] == 0:
            return x
        s = x @ self.w.mT + self.c
        return x + ((self.slopes(s) - self.slope_c) * self.alpha) @ self.w

    def law(self, u_ext: torch.Tensor, directions: torch.Tensor,
            kinds: tuple[str, ...]) -> torch.Tensor:
        """The static law ``Σ_k c_k f_k(a_k d_kᵀ u + b_k)`` (directions ``d_k`` fixed,
        :mod:`.input_law`) of the inputs ``u_ext`` (S, L + 1, k_in), (..., S, L + 1, k_out)."""
        b = self.blocks
        s = (u_ext @ directions.T) * _row(b["la"], 2) + _row(b["lb"], 2)
        cubic, tanh = (torch.as_tensor([k == kind for k in kinds]) for kind in ("cubic", "tanh"))
        f = torch.where(cubic, s ** 3, torch.where(tanh, torch.tanh(s), torch.relu(s)))
        return f @ b["lC"].mT.unsqueeze(-3)


@np.errstate(over="ignore", invalid="ignore", divide="ignore")  # a diverging trial: inf, NaN
def rollout(field: VectorField, x_start: torch.Tensor, seg: Segments,
            substeps: int = 1, rates: bool = False) -> tuple[torch.Tensor, ...]:
    """RK4 over all segments at once: outputs (..., S, L + 1, m) and states (..., S, L + 1, n)
    at the nodes (the leading axes those of a batch of parameter vectors), with ``rates`` also
    the states' rates ``ẋ = f(x, u)`` there (..., S, L + 1, n), the inputs of the nodes'; dual
    numbers in (parameters, start states) give dual numbers out (module doc, "Speed").

    Parameters
    ----------
    field : VectorField
        The model.
    x_start : Tensor, shape (..., S, n)
        Segment start states.
    seg : Segments
        The data.
    substeps : int
        RK4 steps per sample step (the input held as the data say within the step): keeps a
        fast mode inside RK4's stability region, ``h ρ / substeps ≲ 2.5``.
    rates : bool
        Whether to return the states' rates at the nodes too (measured outputs that read them).
    """
    lead = tuple(field.T.shape[:-2])
    f = _Tangents(field, lead)
    x, dx = _split(x_start, lead)
    tangents = f.dual or dx is not None
    if tangents and dx is None:
        dx = np.zeros(lead + x.shape[-2:])
    ns = int(substeps)
    h = seg.h.numpy() / ns
    u0, u1, unode = seg.u0.numpy(), seg.u1.numpy(), seg.unode.numpy()
    # the inputs through B_in at every step, and their change over the step (linear hold)
    ub0, dub0 = f.inputs(u0)
    ramp = not np.array_equal(u0, u1)
    ubd, dubd = f.inputs(u1 - u0) if ramp else (None, None)
    y, dy, z = f.output(x, dx, unode[:, 0])
    ys, dys, xs, dxs = [y], [dy], [x], [dx]
    if rates:  # the field at the nodes' inputs (the first step's k1 where they are its own)
        ubn, dubn = f.inputs(unode)
        r, dr = f(x, dx, ubn[..., 0, :], _at(dubn, 0), z)
        rs, drs = [r], [dr]
    for k in range(h.shape[1]):
        hk = h[:, k : k + 1]
        half, sixth = 0.5 * hk, hk / 6.0
        a, da = ub0[..., k, :], _at(dub0, k)
        for j in range(ns):
            if ramp:
                d, dd = ubd[..., k, :], _at(dubd, k)
                ua, um, ub = (a + (c / ns) * d for c in (j, j + 0.5, j + 1))
                dua, dum, dub = ((None if dd is None else _sum(da, (c / ns) * dd))
                                 for c in (j, j + 0.5, j + 1))
            else:
                ua = um = ub = a
                dua = dum = dub = da
            k1, d1 = f(x, dx, ua, dua, z if j == 0 else None)
            k2, d2 = f(x + half * k1, _sum(dx, _mul(half, d1)), um, dum)
            k3, d3 = f(x + half * k2, _sum(dx, _mul(half, d2)), um, dum)
            k4, d4 = f(x + hk * k3, _sum(dx, _mul(hk, d3)), ub, dub)
            x = x + sixth * (k1 + 2.0 * (k2 + k3) + k4)
            if tangents:
                dx = dx + sixth * (d1 + 2.0 * (d2 + d3) + d4)
        y, dy, z = f.output(x, dx, unode[:, k + 1])
        ys.append(y)
        dys.append(dy)
        xs.append(x)
        dxs.append(dx)
        if rates:
            r, dr = f(x, dx, ubn[..., k + 1, :], _at(dubn, k + 1), z)
            rs.append(r)
            drs.append(dr)
    out = _torch(ys, dys, lead), _torch(xs, dxs, lead)
    return out + (_torch(rs, drs, lead),) if rates else out


class _Tangents:
    """The vector field and outputs of a :class:`VectorField` in NumPy, each value with its
    forward-mode tangents (..., shape) or ``None`` where nothing varies (module doc, "Speed");
    the values without the batch axes where every member holds the same.
    """

    def __init__(self, field: VectorField, lead: tuple[int, ...]) -> None:
        pairs = {name: _split(getattr(field, name), lead)
                 for name in ("T", "Bin", "Bout", "D", "alpha", "w", "c", "beta", "M", "p",
                              "delta2", "a", "pbeta", "pM", "pp", "port_delta2", "pa", "gdir",
                              "gshift", "gkappa")}
        self.dual = any(t is not None for _, t in pairs.values())
        for name, (v, t) in pairs.items():
            setattr(self, name, v)
            setattr(self, "d" + name, t)
        self.rates = _rates(field.kinds)
        self.wT, self.dwT, self.MT, self.dMT = _T(self.w), _T(self.dw), _T(self.M), _T(self.dM)
        self.pMT, self.dpMT = _T(self.pM), _T(self.dpM)
        self.gT, self.dgT = _T(self.gdir), _T(self.dgdir)
        self.K, self.Kd, self.Kp, self.Kg = (field.w.shape[-2], field.M.shape[-2],
                                             field.pM.shape[-2], field.gdir.shape[-2])
        if self.K:
            self.sc, rc = self.rates(self.c)
            self.dsc = _mul(rc, self.dc)

    def inputs(self, u: Array) -> tuple[Array, Array | None]:
        """``u B_in`` (..., S, L, n) of inputs ``u`` (S, L, m) and its tangent."""
        dB = None if self.dBin is None else self.dBin[..., None, :, :]  # broadcast over S
        return u @ self.Bin[..., None, :, :], _mm(u, dB)

    def effort(self, x: Array, dx: Array | None) -> tuple[Array, Array | None]:
        """``z = x + Σ α_k (ψ_k'(w_kᵀx + c_k) − ψ_k'(c_k)) w_k`` and its tangent."""
        if not self.K:
            return x, dx
        wT, dwT = self.wT, self.dwT
        s = x @ wT + self.c
        g, r = self.rates(s)
        g = g - self.sc
        ga = g * self.alpha
        z = x + ga @ self.w
        ds = _sum(_mm(dx, wT), _mm(x, dwT), self.dc)
        dga = _sum(_mul(self.alpha, _sum(_mul(r, ds), _mul(-1.0, self.dsc))), _mul(g, self.dalpha))
        return z, _sum(dx, _mm(dga, self.w), _mm(ga, self.dw))

    def __call__(self, x: Array, dx: Array | None, ub: Array, dub: Array | None,
                 effort: tuple | None = None) -> tuple[Array, Array | None]:
        """``f = z T + u B_in − Σ F_j(m_jᵀz) m_j`` (``ub`` the inputs through ``B_in``; the
        effort ``(z, dz)`` at ``x`` where known) and its tangent."""
        z, dz = self.effort(x, dx) if effort is None else effort
        f = z @ self.T + ub
        df = _sum(_mm(dz, self.T), _mm(z, self.dT), dub)
        if self.Kd:
            MT = self.MT
            s = z @ MT
            F, dF = _power(s, _sum(_mm(dz, MT), _mm(z, self.dMT)), self.beta, self.dbeta,
                           self.p, self.dp, self.delta2, self.ddelta2, self.a, self.da)
            if self.Kg:
                F, dF = self._limited(F, dF, z, dz)
            f = f - F @ self.M
            df = _sum(df, _mul(-1.0, _sum(_mm(dF, self.M), _mm(F, self.dM))))
        return f, df

    def _limited(self, F: Array, dF: Array | None, z: Array,
                 dz: Array | None) -> tuple[Array, Array | None]:
        """The forces ``F`` of the dissipation terms with the contacts' dampers (the last ones)
        limited, ``clip(F, −f, f)``, ``f = κ (|gᵀz + e| − 1)₊``, and their tangents
        (:class:`~fmu_surrogate.ph.PowerDissipation`)."""
        k = F.shape[-1] - self.Kg
        r = z @ self.gT + self.gshift
        out = np.maximum(np.abs(r) - 1.0, 0.0)
        f = self.gkappa * out
        Fg = F[..., k:]
        lim = np.maximum(-f, np.minimum(Fg, f))
        F = _joined(F[..., :k], lim)
        held = lim != Fg  # where the limit holds, F = ± f
        df = _sum(_mul(out, self.dgkappa), _mul(self.gkappa * np.sign(r) * (out > 0),
                                                _sum(_mm(dz, self.gT), _mm(z, self.dgT),
                                                     self.dgshift)))
        dFg = _sum(_mul(np.where(held, 0.0, 1.0), None if dF is None else dF[..., k:]),
                   _mul(np.where(held, np.sign(lim), 0.0), df))
        if dFg is None:
            return F, None
        return F, _joined(np.zeros(dFg.shape[:-1] + (k,)) if dF is None else dF[..., :k], dFg)

    def jacobian(self, x: Array, u: Array) -> Array:
        """``∂f/∂x`` (N, n, n) at states ``x`` (N, n) and inputs ``u`` (N, m), its columns as
        tangents (of a field whose parameters have none)."""
        dx = np.broadcast_to(np.eye(x.shape[-1])[:, None, :], x.shape[-1:] + x.shape)
        return np.moveaxis(self(x, dx, u @ self.Bin, None)[1], 0, -1)

    def output(self, x: Array, dx: Array | None, u: Array) -> tuple[Array, Array | None, tuple]:
        """``y = (G + P)ᵀ z + D u + S_nl(u) u``, its tangent, and the effort ``(z, dz)``."""
        z, dz = self.effort(x, dx)
        y = z @ self.Bout
        dy = _sum(_mm(dz, self.Bout), _mm(z, self.dBout))
        if self.D is not None:
            y = y + u @ self.D
            dy = _sum(dy, _mm(u, self.dD))
        if self.Kp:
            s = u @ self.pMT
            F, dF = _power(s, _mm(u, self.dpMT), self.pbeta, self.dpbeta, self.pp, self.dpp,
                           self.port_delta2, self.dport_delta2, self.pa, self.dpa)
            y = y + F @ self.pM
            dy = _sum(dy, _mm(dF, self.pM), _mm(F, self.dpM))
        return y, dy, (z, dz)


def _power(s: Array, ds: Array | None, beta: Array, dbeta: Array | None, p: Array,
           dp: Array | None, d2: Array, dd2: Array | None, a: Array,
           da: Array | None) -> tuple[Array, Array | None]:
    """The forces ``β q^p (1 + a s / √q) s``, ``q = s² + δ²``, of power-law terms (``p`` the
    half exponent) at their arguments ``s`` (..., K), and their tangents."""
    q = s * s + d2
    lq = np.log(q)
    qp = np.exp(p * lq)
    c = beta * qp
    rq = 1.0 / np.sqrt(q)
    r = s * rq
    fac = 1.0 + a * r
    F = c * fac * s
    if ds is None and dbeta is None and dp is None and dd2 is None and da is None:
        return F, None
    dq = _sum(_mul(s + s, ds), dd2)
    dc = _sum(_mul(qp, dbeta), _mul(c, _sum(_mul(lq, dp), _mul(p / q, dq))))
    dr = _mul(rq, _sum(ds, _mul(-0.5 * r * rq, dq)))
    return F, _sum(_mul(fac * s, dc), _mul(c * fac, ds),
                   _mul(c * s, _sum(_mul(r, da), _mul(a, dr))))


def _rates(kinds: tuple[str, ...]) -> Callable[[Array], tuple[Array, Array]]:
    """``s ↦ (ψ_k'(s_k), ψ_k''(s_k))`` of the ridge kinds at their arguments ``s`` (..., K)
    (:func:`fmu_surrogate.ph.efforts.convex.ridge`; one kind without masks)."""
    first = kinds[0] if kinds else "quartic"
    masks = [(np.array([k == kind for k in kinds]), kind)
             for kind in dict.fromkeys(kinds) if kind != first]

    def rates(s: Array) -> tuple[Array, Array]:
        g, r = ridge(first, s, 1), ridge(first, s, 2)
        for mask, kind in masks:
            g, r = np.where(mask, ridge(kind, s, 1), g), np.where(mask, ridge(kind, s, 2), r)
        return g, r

    return rates


def _split(v: torch.Tensor | None, lead: tuple[int, ...]) -> tuple[Array | None, Array | None]:
    """A tensor's value (without the batch axes ``lead`` where every member holds the same)
    and tangent in NumPy (``None`` for none)."""
    if v is None:
        return None, None
    value, tangent = fwad.unpack_dual(v)
    value = value.detach().numpy()
    k = len(lead)
    if k and value.shape[:k] == lead:
        flat = value.reshape((int(np.prod(lead)),) + value.shape[k:])
        if (flat == flat[:1]).all():
            value = flat[0]
    return value, None if tangent is None else tangent.numpy()


def _torch(values: list[Array], tangents: list[Array | None],
           lead: tuple[int, ...]) -> torch.Tensor:
    """The node values stacked (..., S, L + 1, k), batch axes ``lead`` restored, as a tensor
    (dual where they have tangents)."""
    v = np.stack(np.broadcast_arrays(*values), axis=-2)
    tangent = None if tangents[0] is None else np.stack(tangents, axis=-2)
    shape = (tangent.shape if tangent is not None
             else np.broadcast_shapes(lead + v.shape[-3:], v.shape))
    out = torch.from_numpy(np.array(np.broadcast_to(v, shape)))
    if tangent is None:
        return out
    return fwad.make_dual(out, torch.from_numpy(np.ascontiguousarray(tangent)))


def _joined(a: Array, b: Array) -> Array:
    """``a`` and ``b`` side by side along the last axis, their other axes broadcast."""
    lead = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    return np.concatenate([np.broadcast_to(a, lead + a.shape[-1:]),
                           np.broadcast_to(b, lead + b.shape[-1:])], axis=-1)


def _sum(*terms: Array | None) -> Array | None:
    """The sum of the terms that are not ``None`` (``None`` if all are)."""
    out = None
    for t in terms:
        if t is not None:
            out = t if out is None else out + t
    return out


def _mul(a: Array, b: Array | None) -> Array | None:
    """``a b``, ``None`` where ``b`` is (a tangent that does not exist)."""
    return None if b is None else a * b


def _mm(a: Array | None, b: Array | None) -> Array | None:
    """``a @ b``, ``None`` where either is."""
    return None if a is None or b is None else a @ b


def _T(a: Array | None) -> Array | None:
    """The transpose of the last two axes (``None`` stays)."""
    return None if a is None else np.swapaxes(a, -1, -2)


def _at(a: Array | None, k: int) -> Array | None:
    """Step ``k`` of per-step values (..., S, L, n) (``None`` stays)."""
    return None if a is None else a[..., k, :]


def _slopes(kinds: tuple[str, ...]) -> Callable[[torch.Tensor], torch.Tensor]:
    """``s ↦ ψ_k'(s_k)`` of the ridge kinds at their arguments ``s`` (..., K): one kind without
    a mask (the common case; a mask's ``torch.where`` costs as much as the ridge), the masks of
    several made once."""
    slope = {"quartic": lambda v: v ** 3, "logcosh": torch.tanh,
             "periodic": lambda v: torch.sin(v) - v,
             "gap": lambda v: v - torch.clamp(v, -1.0, 1.0)}
    first = kinds[0] if kinds else "quartic"
    if all(k == first for k in kinds):
        return slope[first]
    masks = [(torch.as_tensor([k == kind for k in kinds]), slope[kind])
             for kind in dict.fromkeys(kinds) if kind != first]

    def slopes(s: torch.Tensor) -> torch.Tensor:
        out = slope[first](s)
        for mask, f in masks:
            out = torch.where(mask, f(s), out)
        return out

    return slopes


def _like(v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``v`` as a dual number of zero tangent where ``x`` is one (the Jacobian's pass)."""
    if fwad.unpack_dual(x).tangent is None:
        return v
    v = v.contiguous()
    return fwad.make_dual(v, torch.zeros_like(v))
