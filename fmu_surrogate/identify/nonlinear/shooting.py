"""The differentiable output-error objective: RK4 over multiple-shooting segments, in torch.

Discretisation.  The classical Runge–Kutta scheme on the explicit ODE
``ẋ = (J − R₀ − R_nl(z)) z + (G − P) u``, the input at the stages as the data hold it (linear:
``u_k``, the mean ``(u_k + u_{k+1})/2``, ``u_{k+1}``; zero-order hold: ``u_k`` throughout),
with as many substeps per sample step as the linear start's fastest mode needs to stay in
RK4's stability region.
RK4 rather than the implicit midpoint rule with a fixed number of Newton or fixed-point
iterations: it is explicit, so the gradient is an exact backpropagation through four
evaluations of the vector field per step (no truncated inner solve whose gradient is only
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

Speed.  The residuals' Jacobian comes from one pass of dual numbers (:mod:`.gauss_newton`).
An elementwise operation of a dual number with a plain tensor or a Python number takes
PyTorch's reference path (its zero tangent goes through Python decompositions): 200–500 µs
against 6–50 µs between two dual numbers on these small tensors
(``scripts/bench_nonlinear_fit.py``).  The rollout therefore holds its step sizes, start
states and constants as dual numbers of zero tangent where the parameters are dual, and writes
small integer factors as sums (``2 k₂`` as ``k₂ + k₂``); the inputs enter by products with
matrices only, which are fast either way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.autograd.forward_ad as fwad
from numpy.typing import NDArray

from fmu_surrogate.identify.nonlinear.parametrisation import Layout, structure, weights

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
        Weights of the output samples in the cost (``None``: all one).  A delayed feedthrough
        leaves out each experiment's first output, which sees inputs the data do not hold.
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
    """A parameter vector ``(..., K)`` with ``k`` axes inserted before its last: it then
    broadcasts against values ``(..., *k axes, K)`` of every batch member."""
    return v.reshape(v.shape[:-1] + (1,) * k + v.shape[-1:])


class VectorField:
    """``f(x, u)`` and ``y(x, u)`` of a parameter vector, in torch (module doc).

    ``θ`` may be a batch ``(B, size)`` of parameter vectors: the states are then ``(B, S, n)``
    (one rollout per member; the inputs ``(S, m)`` are shared), which gives all the columns of
    the residuals' Jacobian from one forward-mode pass (:mod:`.gauss_newton`).
    """

    def __init__(self, layout: Layout, theta: torch.Tensor) -> None:
        n = layout.n
        b = layout.unpack(theta)
        st = structure(layout, b, torch)
        W = st["W"]
        self.T = (st["J"] - W[..., :n, :n]).mT
        G = st["G"]
        P = W[..., :n, n:] if layout.feedthrough else None
        self.Bin = (G - P if P is not None else G).mT
        self.Bout = G + P if P is not None else G
        self.D = (W[..., n:, n:] - st["N"]).mT if layout.feedthrough else None
        self.alpha, self.w = _row(weights(layout, b, torch)), b["w"]
        self.slopes = _slopes(layout.kinds)
        self.c = _row(b["rc"])  # the ridges' shifts (preloads) and their slopes there
        self.slope_c = self.slopes(self.c)
        half = _like(torch.tensor(0.5, dtype=theta.dtype), theta)  # module doc, "Speed"
        self.beta, self.M, self.p = _row(b["beta"]), b["mdir"], _row(half * b["p"])
        self.delta2 = _row(torch.exp(b["ld"] + b["ld"]))
        self.port_delta2 = _row(torch.exp(b["pld"] + b["pld"]))
        self.a, self.pa = _row(b["asym"]), _row(b["pasym"])
        self.pbeta, self.pM, self.pp = _row(b["pbeta"]), b["pdir"], _row(half * b["pp"])
        self.blocks = b

    def effort(self, x: torch.Tensor) -> torch.Tensor:
        """``z = x + Σ α_k (ψ_k'(w_kᵀx + c_k) − ψ_k'(c_k)) w_k`` (``Q = I``)."""
        if self.w.shape[-2] == 0:
            return x
        s = x @ self.w.mT + self.c
        return x + ((self.slopes(s) - self.slope_c) * self.alpha) @ self.w

    def __call__(self, x: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        z = self.effort(x)
        f = z @ self.T + u @ self.Bin
        if self.M.shape[-2]:
            s = z @ self.M.mT
            f = f - _power_law(s, self.beta, self.p, self.delta2, self.a) @ self.M
        return f

    def output(self, x: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        """``y = (G + P)ᵀ z + D u + S_nl(u) u``."""
        y = self.effort(x) @ self.Bout
        if self.D is not None:
            y = y + u @ self.D
        if self.pM.shape[-2]:
            s = u @ self.pM.mT
            y = y + _power_law(s, self.pbeta, self.pp, self.port_delta2, self.pa) @ self.pM
        return y

    def law(self, u_ext: torch.Tensor, directions: torch.Tensor,
            kinds: tuple[str, ...]) -> torch.Tensor:
        """The static law ``Σ_k c_k f_k(a_k d_kᵀ u + b_k)`` of the external inputs ``u_ext``
        (S, L + 1, k_in) in the external outputs (..., S, L + 1, k_out), the directions ``d_k``
        fixed (:mod:`.input_law`)."""
        b = self.blocks
        s = (u_ext @ directions.T) * _row(b["la"], 2) + _row(b["lb"], 2)
        cubic = torch.as_tensor([k == "cubic" for k in kinds])
        tanh = torch.as_tensor([k == "tanh" for k in kinds])
        f = torch.where(cubic, s ** 3, torch.where(tanh, torch.tanh(s), torch.relu(s)))
        return f @ b["lC"].mT.unsqueeze(-3)


def rollout(field: VectorField, x_start: torch.Tensor, seg: Segments,
            substeps: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """RK4 over all segments at once: outputs (..., S, L + 1, m) and states (..., S, L + 1, n)
    at the nodes (the leading axes those of a batch of parameter vectors).

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
    """
    x = x_start if fwad.unpack_dual(x_start).tangent is not None else _like(x_start, field.T)
    ys, xs = [field.output(x, seg.unode[:, 0])], [x]
    ns = int(substeps)
    # the step sizes as dual numbers where the parameters are (module doc, "Speed")
    H = _like(seg.h[..., None] / ns * torch.tensor([0.5, 1.0, 1.0 / 6.0], dtype=seg.h.dtype),
              field.T)
    for k in range(seg.h.shape[1]):
        half, h, sixth = H[:, k : k + 1, 0], H[:, k : k + 1, 1], H[:, k : k + 1, 2]
        u0, du = seg.u0[:, k], seg.u1[:, k] - seg.u0[:, k]  # zoh: du = 0
        for j in range(ns):
            ua, um, ub = (u0 + du * (c / ns) for c in (j, j + 0.5, j + 1))
            k1 = field(x, ua)
            k2 = field(x + half * k1, um)
            k3 = field(x + half * k2, um)
            k4 = field(x + h * k3, ub)
            k23 = k2 + k3
            x = x + sixth * (k1 + k23 + k23 + k4)
        ys.append(field.output(x, seg.unode[:, k + 1]))
        xs.append(x)
    return torch.stack(ys, dim=-2), torch.stack(xs, dim=-2)


def _slopes(kinds: tuple[str, ...]) -> Callable[[torch.Tensor], torch.Tensor]:
    """``s ↦ ψ_k'(s_k)`` of the ridge kinds at their arguments ``s`` (..., K): one kind without
    a mask (the common case; a mask's ``torch.where`` costs as much as the ridge), the masks of
    several made once."""
    slope = {"quartic": lambda v: v ** 3, "logcosh": torch.tanh,
             "periodic": lambda v: torch.sin(v) - v}
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


def _power_law(s: torch.Tensor, beta: torch.Tensor, p: torch.Tensor, delta2: torch.Tensor,
               a: torch.Tensor) -> torch.Tensor:
    """The forces ``β (s² + δ²)^(p/2) (1 + a s / √(s² + δ²)) s`` of power-law terms at their
    arguments ``s`` (``p`` here the half exponent; ``s² + δ² > 0``), without a Python scalar
    (module doc, "Speed")."""
    q = s * s + delta2
    c = beta * torch.exp(p * torch.log(q))
    return (c + c * (a * (s * torch.rsqrt(q)))) * s


def _like(v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``v`` as a dual number of zero tangent where ``x`` is one (the Jacobian's pass), else
    ``v``."""
    if fwad.unpack_dual(x).tangent is None:
        return v
    v = v.contiguous()
    return fwad.make_dual(v, torch.zeros_like(v))
