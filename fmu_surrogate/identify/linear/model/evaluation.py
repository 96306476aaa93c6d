"""The evaluation core of the cost and its adjoint gradient (the theory is in
:mod:`fmu_surrogate.identify.linear.model.adjoint`): experiments prepared once (step-size
groups, quadrature weights, held inputs), the forward solve, the adjoint solve for the gradients
of the base matrices ``A, B(input), C, x0``, and the chain rule through ``A = (J − R) Q``,
``C = Bᵀ Q`` with the regularisation.  Parameters are not checked here: the checked entry points
(:mod:`~fmu_surrogate.identify.linear.model.adjoint_checked`) and the
:class:`~fmu_surrogate.identify.linear.model.adjoint.Evaluator` validate at their boundary.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import expm

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.identify.linear.model.discretisation import (
    _foh_frechet_adjoint,
    _Forward,
    _forward,
    _plan,
    foh_block_matrix,
    quadrature_weights,
)
from fmu_surrogate.identify.linear.model.experiments import (
    Experiment,
    Regularization,
    _regularization,
)
from fmu_surrogate.identify.linear.model.recurrence import (
    scan_constant,
    scan_powers,
    solve_adjoint_recurrence,
)

Array = NDArray[np.float64]


# ---------------------------------------------------------------------------------------------
# Evaluation core: experiments prepared once, parameters not checked
# ---------------------------------------------------------------------------------------------
class _ExpData:
    """Per-experiment arrays of the evaluation, computed once per experiment set and mode."""

    __slots__ = ("K", "V", "g0", "h", "hold", "idx", "u", "ul", "uniform", "w", "wcol", "y")

    def __init__(self, e: Experiment, idx: NDArray[np.intp], hs: Array, mode: str) -> None:
        self.K = e.n_samples
        self.u, self.y = e.u, e.y
        self.idx = idx
        self.g0 = int(idx[0])
        self.uniform = bool(np.all(idx == self.g0))
        self.h = hs[idx]
        self.w = quadrature_weights(self.h, mode)
        self.wcol = np.ascontiguousarray(self.w[:, None])
        self.ul = np.ascontiguousarray(e.u[:-1])
        # exact mode: b_k = Γ0 u_k + Γ1 u_{k+1} = Γ_a u_k + Γ_b (u_{k+1} − u_k), i.e. one product
        # V @ [Γ_a Γ_b]ᵀ with V = [u_k, u_{k+1} − u_k]; the same V gives G_Γa and G_Γb at once.
        # zero-order hold: b_k = Γ_a u_k, the same product with the difference columns zero
        self.hold = e.hold
        if mode != "exact":
            self.V = None
        elif e.hold == "zoh":
            self.V = np.concatenate([e.u[:-1], np.zeros_like(e.u[:-1])], axis=1)
        else:
            self.V = np.concatenate([e.u[:-1], e.u[1:] - e.u[:-1]], axis=1)


class _State:
    """A forward solve: the parameters it was computed for and the per-experiment trajectories."""

    __slots__ = ("A", "B", "C", "E", "J", "JR", "M", "Q", "R", "fwds", "misfit", "x0")


class _Prepared:
    """Experiments (already validated) and mode, with everything that does not depend on w."""

    def __init__(self, exps: list[Experiment], mode: str) -> None:
        self.exps = exps
        self.mode = mode
        self.plan = _plan(exps)
        self.data = [_ExpData(e, self.plan.index[i], self.plan.h, mode) for i, e in enumerate(exps)]
        self._eye: dict[int, Array] = {}
        self._hcol = self.plan.h[:, None, None]
        self._template: dict[tuple[int, int], Array] = {}

    def _block_matrix(self, A: Array, B: Array) -> Array:
        """:func:`foh_block_matrix` for the plan's step sizes (from a cached template)."""
        n, m = B.shape
        tmpl = self._template.get((n, m))
        if tmpl is None:
            tmpl = self._template[(n, m)] = foh_block_matrix(np.zeros((n, n)), B * 0.0, self.plan.h)
        M = tmpl.copy()
        M[:, :n, :n] = self._hcol * A
        M[:, :n, n : n + m] = self._hcol * B
        return M

    def _identity(self, n: int) -> Array:
        eye = self._eye.get(n)
        if eye is None:
            eye = self._eye[n] = np.eye(n)
            eye.setflags(write=False)
        return eye

    def forward(self, J: Array, R: Array, Q: Array, B: Array, x0: Array) -> _State:
        """State trajectories, residuals and data misfit (no validation, no error state)."""
        st = _State()
        st.J, st.R, st.Q, st.B, st.x0 = J, R, Q, B, x0
        st.JR = JR = J - R
        st.A = A = JR @ Q
        st.C = C = B.T @ Q
        n, m = B.shape
        hs = self.plan.h
        st.M = st.E = None
        disc = None
        if self.mode == "exact":
            st.M = self._block_matrix(A, B)
            st.E = expm(st.M)
        fwds = []
        for d in self.data:
            if d.uniform:
                fwds.append(self._forward_uniform(d, A, B, C, x0, st.E, n))
                continue
            if self.mode == "exact" and disc is None:
                E = st.E
                Gb = E[:, :n, n + m :]
                disc = (E[:, :n, :n], E[:, :n, n : n + m] - Gb, Gb)
            fwds.append(_forward(A, B, C, x0, d.u, d.y, hs, d.idx, self.mode, disc, d.hold))
        st.fwds = fwds
        st.misfit = fwds[0].misfit if len(fwds) == 1 else sum(f.misfit for f in fwds)
        return st

    def _forward_uniform(
        self, d: _ExpData, A: Array, B: Array, C: Array, x0: Array, E: Array | None, n: int
    ) -> _Forward:
        Y = np.empty((d.K, n))
        Y[0] = x0
        if self.mode == "euler":
            h = self.plan.h[d.g0]
            Phi = self._identity(n) + h * A
            np.matmul(d.ul, (h * B).T, out=Y[1:])  # b_k = h B u_k
        else:
            Eg = E[d.g0]  # type: ignore[index]
            Phi = Eg[:n, :n]
            np.matmul(d.V, Eg[:n, n:].T, out=Y[1:])  # b_k = Γ_a u_k + Γ_b (u_{k+1} − u_k)
        powers = scan_powers(Phi.T, d.K)  # powers[0] = Φᵀ (C-contiguous)
        scan_constant(powers[0], Y, powers=powers)
        r = Y @ C.T
        r -= d.y
        misfit = 0.5 * float(np.dot(d.w, r * r).sum())
        return _Forward(Y, r, d.w, d.h, Phi, d.idx, True, misfit, powers)

    def base_gradients(
        self, st: _State, wrt: Sequence[str], gradient: str
    ) -> tuple[Array, Array, Array, Array]:
        """``(G_A, G_B(input), G_C, G_x0)`` of the data misfit at ``st`` (see module docstring)."""
        mode = self.mode
        B, C = st.B, st.C
        n, m = B.shape
        hs = self.plan.h
        need_AB = any(k in wrt for k in ("J", "R", "Q", "B"))
        G_A = np.zeros((n, n))
        G_Bin = np.zeros((n, m))
        G_C = np.zeros((m, n))
        G_x0 = np.zeros(n)
        GE = None
        if mode == "exact" and need_AB:
            GE = np.zeros((hs.shape[0], n, n + 2 * m))  # rows :n of G_E (the others are 0)
        for d, f in zip(self.data, st.fwds):
            X, r, u = f.X, f.r, d.u
            if gradient == "paper":
                # p_{K−1} = 0;  p_k = Φ_kᵀ p_{k+1} + h_k Cᵀ r_{k+1}  (explicit Euler backwards)
                g = np.zeros_like(X)
                g[:-1] = (r[1:] @ C) * f.h[:, None]
                P = solve_adjoint_recurrence(f.Phi, g, None if f.uniform else f.idx)
                Lh = P[:-1] * f.h[:, None]  # h_k p_k (left endpoint)
                G_C += (r[:-1] * f.h[:, None]).T @ X[:-1]
                G_x0 += P[0]
                if need_AB:
                    G_A += Lh.T @ X[:-1]
                    G_Bin += Lh.T @ u[:-1]
                continue
            rw = r * d.wcol
            g = rw @ C  # g_k = w_k Cᵀ r_k
            if f.uniform:
                # λ_k = Φᵀ λ_{k+1} + g_k, solved in place backwards in time
                # the squares of Φ are the transposes of those of the forward scan
                lam = scan_constant(f.Phi, g, True, f.powers, transpose_powers=True)
            else:
                lam = solve_adjoint_recurrence(f.Phi, g, f.idx)
            G_x0 += lam[0]
            G_C += rw.T @ X
            if not need_AB:
                continue
            L1 = lam[1:]
            if mode == "euler":
                if f.uniform:
                    h = hs[d.g0]
                    G_A += h * (L1.T @ X[:-1])
                    G_Bin += h * (L1.T @ d.ul)
                else:
                    Lh = L1 * f.h[:, None]
                    G_A += Lh.T @ X[:-1]
                    G_Bin += Lh.T @ d.ul
            elif f.uniform:
                GE[d.g0, :n, :n] += L1.T @ X[:-1]  # type: ignore[index]
                GE[d.g0, :n, n:] += L1.T @ d.V  # type: ignore[index]
            else:
                for gi in np.unique(f.idx):
                    sel = f.idx == gi
                    GE[gi, :n, :n] += L1[sel].T @ X[:-1][sel]  # type: ignore[index]
                    GE[gi, :n, n:] += L1[sel].T @ d.V[sel]  # type: ignore[index]
        if GE is not None:
            GM = _foh_frechet_adjoint(st.M, GE, n)  # type: ignore[arg-type]
            if hs.shape[0] == 1:
                G_A += hs[0] * GM[0, :n, :n]
                G_Bin += hs[0] * GM[0, :n, n : n + m]
            else:
                G_A += np.einsum("g,gij->ij", hs, GM[:, :n, :n])
                G_Bin += np.einsum("g,gij->ij", hs, GM[:, :n, n : n + m])
        return G_A, G_Bin, G_C, G_x0


def _state_params(st: _State) -> dict[str, Array]:
    return {"J": st.J, "R": st.R, "Q": st.Q, "B": st.B, "x0": st.x0}


def _finish(
    prep: _Prepared,
    st: _State,
    reg: Regularization,
    wrt: Sequence[str],
    need_grad: bool,
    gradient: str,
) -> tuple[float, dict[str, Array]]:
    """Cost (and gradient) at a forward solve: regularisation, chain rule through A and C."""
    reg_active = reg.lam > 0 or (reg.log_q > 0 and "Q" in wrt)
    rgrad: dict[str, Array] = {}
    total = st.misfit
    if reg_active:
        rval, rgrad = _regularization(_state_params(st), reg, wrt, need_grad)
        total = total + rval
    if not np.isfinite(total):
        total = float("inf")
    if not need_grad:
        return total, {}
    if not np.isfinite(total):
        p = _state_params(st)
        return total, {k: np.full_like(p[k], np.nan) for k in wrt}
    G_A, G_Bin, G_C, G_x0 = prep.base_gradients(st, wrt, gradient)
    grads: dict[str, Array] = {}
    GQ = G_A @ st.Q.T if ("J" in wrt or "R" in wrt) else None
    for k in wrt:
        if k == "J":
            gk = GQ
        elif k == "R":
            gk = -GQ  # type: ignore[operator]
        elif k == "Q":
            gk = st.JR.T @ G_A + st.B @ G_C
        elif k == "B":
            gk = G_Bin + st.Q @ G_C.T
        else:
            gk = G_x0
        if k in rgrad:
            gk = gk + rgrad[k]
        grads[k] = gk
    return total, grads


def _check_gradient(gradient: str, mode: str) -> None:
    if gradient not in ("exact", "paper"):
        raise InvalidInputError(f"gradient must be 'exact' or 'paper', got {gradient!r}.")
    if gradient == "paper" and mode != "euler":
        raise InvalidInputError(
            "gradient='paper' (continuous adjoint, explicit Euler) exists only for mode='euler'; "
            "use gradient='exact' with mode='exact'."
        )
