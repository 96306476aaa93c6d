r"""Linear pH model with feedthrough, modulating inputs, a constant source and measured outputs.

The drop-in model of an FMU (pyMOR's PHLTIModel convention, in coordinates with ``Q = I``)::

    ẋ = (J − R) x + (G − P) v,      y_ph = (G + P)ᵀ x + (S − N) v,
    W = [[R, P], [Pᵀ, S]] ⪰ 0,  J = −Jᵀ,  N = −Nᵀ

with the pH ports ``v`` ordered as: the ``n_power`` power pairs (their conjugate outputs
``y_ph[:n_power]`` are shown), the modulating inputs (their conjugate outputs are not shown),
and, when offsets are learned, one constant source port (``v = 1``).  The shown outputs are
``y = [y_ph[:n_power]; Cx x + Du v]`` — the power outputs, then the measured (non-power) outputs,
whose ``Cx`` and ``Du`` have no structure.  Every linear pH system has coordinates with
``Q = I`` (``x' = Q^{1/2} x``), so fixing it loses no input–output behaviour and removes the
state-similarity gauge but for orthogonal transformations.

Parametrisation (structure by construction)
-------------------------------------------
A flat vector θ holds: the strict upper triangle of ``U`` (``J = U − Uᵀ``, bitwise skew); the
lower triangle of ``L`` (``W = ½(LLᵀ + (LLᵀ)ᵀ)``, bitwise symmetric and PSD up to rounding; ``L``
is ``(n+m) × (n+m)`` with feedthrough, ``n × n`` without, then ``P = S = 0``); ``G``; the strict
upper triangle of ``V`` (``N = V − Vᵀ``, feedthrough only); ``x0`` (when learned); ``Cx``, ``Du``.

Output sensitivities
--------------------
The model matrices ``(A, B, C, D)`` are quadratic in θ; a direction δθ changes them by
``δA = δJ − δR``, ``δB = δG − δP``, ``δC = (δG + δP)ᵀ``, ``δD = δS − δN`` with
``δW = δL Lᵀ + L δLᵀ``.  The exact discretisation (zero- or first-order hold) changes by the
Fréchet derivative of the block exponential (batched over all directions,
:func:`~fmu_surrogate.identify.linear.model.sensitivities._disc_directions`), and the state
sensitivity obeys ``δx_{k+1} = Φ δx_k + δΦ x_k + δΓ V_k`` (``V_k`` the held inputs),
``δy_k = C δx_k + δC x_k + δD v_k``.  A record that starts at the equilibrium of its first
inputs, ``x₀ = −A⁻¹ B v₀``, starts its sensitivity at ``δx₀ = −A⁻¹ (δA x₀ + δB v₀)``.  The Jacobian of the weighted residual
``√w (y − y_data)`` (trapezoid weights) is what
:func:`~fmu_surrogate.identify.linear.optim.dense_lm.levenberg_marquardt` needs; its product
with the residual is the gradient of ``½‖ρ‖²`` (checked by a Taylor test).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import expm

from fmu_surrogate.identify.linear.errors import LinearIdentificationError
from fmu_surrogate.identify.linear.model.discretisation import foh_block_matrix, quadrature_weights
from fmu_surrogate.identify.linear.model.recurrence import solve_linear_recurrence
from fmu_surrogate.identify.linear.model.sensitivities import _disc_directions

Array = NDArray[np.float64]


#: Smallest output magnitude, relative to the largest, by which a residual is divided.
WEIGHT_FLOOR = 1e-6
#: An output whose noise level (from its second differences) exceeds this fraction of its
#: magnitude is noise (white noise: about 1/3; a smooth signal sampled at 20 points per period:
#: 0.03) and is not weighted up.
NOISE_FRACTION = 0.2


def output_weights(ys: list[Array]) -> Array:
    """Per output, the factor of its residual: one over its largest swing in the records
    (:func:`~fmu_surrogate.fmu.dataset.output_scale`: its magnitude, or its excursion from the
    start where that is smaller — a temperature of 293 K ± 2 K next to a heat flow of ± 100 W
    weighed a 1 K miss as a 0.3 W one).

    An output that is noise (round-off: an energy residual the FMU shows; its noise level
    ``std(Δ²y)/√6`` above :data:`NOISE_FRACTION` of its magnitude) is divided by the largest
    output's magnitude instead — weighted up, what no model explains would outweigh the rest —
    and no divisor is below :data:`WEIGHT_FLOOR` times that.

    Parameters
    ----------
    ys : list of ndarray, shape (K, n_outputs)

    Returns
    -------
    ndarray, shape (n_outputs,)
    """
    from fmu_surrogate.fmu.dataset import output_scale

    scale = np.max([output_scale(y) for y in ys], axis=0)
    top = max(float(scale.max()), 1e-300)
    long = [y for y in ys if y.shape[0] > 3]
    if long:
        noise = np.max([np.std(np.diff(y, 2, axis=0), axis=0) for y in long], axis=0) / 6 ** 0.5
        scale = np.where(noise > NOISE_FRACTION * scale, top, scale)
    return 1.0 / np.maximum(scale, WEIGHT_FLOOR * top)


@dataclass(frozen=True)
class Layout:
    """Sizes of the drop-in model and the positions of its parameters in θ.

    Parameters
    ----------
    n : int
        States (0: a static map).
    m : int
        pH ports (power pairs, modulating inputs, source).
    n_power : int
        Power pairs (the first ``n_power`` ports; their conjugate outputs are shown first).
    n_measured : int
        Measured outputs ``Cx x + Du v``.
    feedthrough : bool
        Learn ``P, S, N`` (else zero).
    learn_x0 : bool
        Learn the initial state (else zero).
    delayed : bool
        The outputs see the inputs of the step before (``y_k = C x_k + D v_{k−1}``, the first
        point the first inputs): outputs computed at the end of ``doStep``.
    equilibrium : bool
        Each record starts at the equilibrium of its first inputs, ``x₀ = −A⁻¹ B v₀`` (a
        vendor's model initialised in steady state; ``learn_x0`` then False).
    """

    n: int
    m: int
    n_power: int
    n_measured: int
    feedthrough: bool
    learn_x0: bool
    delayed: bool = False
    equilibrium: bool = False

    @property
    def n_factor(self) -> int:
        """Size of the factor ``L`` of ``W``."""
        return self.n + self.m if self.feedthrough else self.n

    @property
    def sizes(self) -> dict[str, int]:
        """Entries of each parameter block in θ (canonical order)."""
        n, m, f = self.n, self.m, self.n_factor
        return {"J": n * (n - 1) // 2, "L": f * (f + 1) // 2, "G": n * m,
                "N": m * (m - 1) // 2 if self.feedthrough else 0,
                "x0": n if self.learn_x0 else 0,
                "Cx": self.n_measured * n, "Du": self.n_measured * m}

    @property
    def slices(self) -> dict[str, slice]:
        """Position of each block in θ."""
        out, off = {}, 0
        for k, s in self.sizes.items():
            out[k] = slice(off, off + s)
            off += s
        return out

    @property
    def size(self) -> int:
        """Length of θ."""
        return sum(self.sizes.values())

    @property
    def n_outputs(self) -> int:
        """Shown outputs."""
        return self.n_power + self.n_measured


def _skew(c: Array, k: int) -> Array:
    """``U − Uᵀ`` from strict-upper entries ``c`` (leading batch axes kept)."""
    iu = np.triu_indices(k, 1)
    U = np.zeros(c.shape[:-1] + (k, k))
    U[..., iu[0], iu[1]] = c
    return U - np.swapaxes(U, -1, -2)


def _lower(c: Array, k: int) -> Array:
    il = np.tril_indices(k)
    L = np.zeros(c.shape[:-1] + (k, k))
    L[..., il[0], il[1]] = c
    return L


def blocks(lay: Layout, theta: Array) -> dict[str, Array]:
    """The parameter matrices ``J, L, W, R, P, S, G, N, x0, Cx, Du`` of θ.

    Parameters
    ----------
    lay : Layout
    theta : ndarray, shape (size,)

    Returns
    -------
    dict of str to ndarray
    """
    n, m = lay.n, lay.m
    sl = lay.slices
    L = _lower(theta[sl["L"]], lay.n_factor)
    PP = L @ L.T
    W = 0.5 * (PP + PP.T)
    out = {"J": _skew(theta[sl["J"]], n), "L": L, "W": W, "R": W[:n, :n],
           "G": theta[sl["G"]].reshape(n, m),
           "x0": theta[sl["x0"]] if lay.learn_x0 else np.zeros(n),
           "Cx": theta[sl["Cx"]].reshape(lay.n_measured, n),
           "Du": theta[sl["Du"]].reshape(lay.n_measured, m)}
    if lay.feedthrough:
        out["P"], out["S"] = W[:n, n:], W[n:, n:]
        out["N"] = _skew(theta[sl["N"]], m)
    else:
        out["P"], out["S"], out["N"] = np.zeros((n, m)), np.zeros((m, m)), np.zeros((m, m))
    return out


def state_space(lay: Layout, b: dict[str, Array]) -> tuple[Array, Array, Array, Array]:
    """``(A, B, C, D)`` of the shown outputs from :func:`blocks`."""
    p = lay.n_power
    A = b["J"] - b["R"]
    B = b["G"] - b["P"]
    C = np.vstack([(b["G"] + b["P"]).T[:p], b["Cx"]])
    D = np.vstack([(b["S"] - b["N"])[:p], b["Du"]])
    return A, B, C, D


def _directions(lay: Layout, b: dict[str, Array], E: Array) -> tuple[Array, ...]:
    """``(δA, δB, δC, δD, δx0)`` for the directions ``E`` (rows, shape (Lb, size))."""
    n, m, p = lay.n, lay.m, lay.n_power
    sl = lay.slices
    Lb = E.shape[0]
    dL = _lower(E[:, sl["L"]], lay.n_factor)
    PP = dL @ b["L"].T
    dW = PP + np.swapaxes(PP, -1, -2)
    dJ = _skew(E[:, sl["J"]], n)
    dG = E[:, sl["G"]].reshape(Lb, n, m)
    if lay.feedthrough:
        dP, dS = dW[:, :n, n:], dW[:, n:, n:]
        dN = _skew(E[:, sl["N"]], m)
    else:
        dP, dS, dN = (np.zeros((Lb, n, m)), np.zeros((Lb, m, m)), np.zeros((Lb, m, m)))
    dA = dJ - dW[:, :n, :n]
    dB = dG - dP
    dC = np.concatenate([np.swapaxes(dG + dP, -1, -2)[:, :p],
                         E[:, sl["Cx"]].reshape(Lb, lay.n_measured, n)], axis=1)
    dD = np.concatenate([(dS - dN)[:, :p], E[:, sl["Du"]].reshape(Lb, lay.n_measured, m)],
                        axis=1)
    dx0 = E[:, sl["x0"]] if lay.learn_x0 else np.zeros((Lb, n))
    return dA, dB, dC, dD, dx0


def _solve_rows(A: Array, rhs: Array) -> Array:
    """``A⁻¹ r`` for each row ``r`` of ``rhs`` (least squares where ``A`` is singular)."""
    try:
        return np.linalg.solve(A, rhs.T).T
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(A, rhs.T, rcond=None)[0].T


class PortedModel:
    """Simulation, residuals and their Jacobian for fixed data (see the module docstring).

    Parameters
    ----------
    lay : Layout
    data : list of (t, v, y, hold)
        Uniformly sampled records: pH port inputs ``v`` (K, m) — source column included — and
        shown outputs ``y`` (K, n_outputs).

    Notes
    -----
    Each output's residual is divided by the output's largest magnitude in the data: outputs in
    different units (a force of 10⁴ N beside a position of 0.1 m, as vendors' FMUs show them)
    count alike, as in the relative error the fit is judged by; unweighted, the largest output
    decides the fit and the others miss by percents (:func:`output_weights`).
    """

    def __init__(self, lay: Layout, data: list[tuple[Array, Array, Array, str]]) -> None:
        self.lay = lay
        self.data = []
        weight = output_weights([y for _t, _v, y, _h in data])
        for t, v, y, hold in data:
            h = np.diff(t)
            if np.max(np.abs(h - h[0])) > 1e-9 * h[0]:
                raise LinearIdentificationError(
                    "the drop-in model (feedthrough, offsets, non-power variables) needs "
                    "uniformly sampled records; resample the data, or feedthrough=False and "
                    "offsets=False for the (J, R, Q, B) model.")
            V = np.concatenate([v[:-1], v[1:] - v[:-1] if hold == "linear"
                                else np.zeros_like(v[:-1])], axis=1)
            w = np.sqrt(quadrature_weights(h, "exact"))[:, None] * weight
            self.data.append((float(h[0]), np.asarray(v, float), np.asarray(y, float), V, w))
        self.rows = sum(d[2].size for d in self.data)

    def _disc(self, A: Array, B: Array, h: float) -> tuple[Array, Array, Array]:
        M = foh_block_matrix(A, B, h)
        E = expm(M)
        n = A.shape[0]
        return M, E[:n, :n], E[:n, n:]

    def simulate(self, theta: Array) -> list[tuple[Array, Array]]:
        """States and shown outputs ``(X, Y)`` per record."""
        lay = self.lay
        b = blocks(lay, theta)
        A, B, C, D = state_space(lay, b)
        out = []
        for h, v, _y, V, _w in self.data:
            if lay.n:
                _, Phi, Gam = self._disc(A, B, h)
                X = solve_linear_recurrence(Phi, V @ Gam.T, self._start(A, B, b["x0"], v))
            else:
                X = np.zeros((v.shape[0], 0))
            out.append((X, X @ C.T + self._seen(v) @ D.T))
        return out

    def _start(self, A: Array, B: Array, x0: Array, v: Array) -> Array:
        """A record's first state: ``x0``, or the equilibrium of its first inputs."""
        return -_solve_rows(A, (B @ v[0])[None])[0] if self.lay.equilibrium else x0

    def _seen(self, v: Array) -> Array:
        """The port inputs the outputs see at each point."""
        return np.concatenate([v[:1], v[:-1]]) if self.lay.delayed else v

    def residual(self, theta: Array) -> Array:
        """Weighted residual ``√w (y − y_data)``, flattened (record, sample, output)."""
        sims = self.simulate(theta)
        return np.concatenate([((Y - y) * w).ravel()
                               for (_X, Y), (_h, _v, y, _V, w) in zip(sims, self.data)])

    def jacobian(self, theta: Array) -> tuple[Array, Array]:
        """``(ρ, ∂ρ/∂θ)`` (rows as :meth:`residual`, one column per entry of θ)."""
        lay = self.lay
        n = lay.n
        b = blocks(lay, theta)
        A, B, C, D = state_space(lay, b)
        E = np.eye(lay.size)
        dA, dB, dC, dD, dx0 = _directions(lay, b, E)
        Lb = lay.size
        res, jac = [], []
        for h, v, y, V, w in self.data:
            K = v.shape[0]
            if n:
                M, Phi, Gam = self._disc(A, B, h)
                x_start = self._start(A, B, b["x0"], v)
                X = solve_linear_recurrence(Phi, V @ Gam.T, x_start)
                dPhi, dGam = _disc_directions("exact", M[None], np.array([h]), dA, dB)
                dTop = np.concatenate([dPhi[:, 0], dGam[:, 0]], axis=-1)  # (Lb, n, n + 2m)
                XV = np.concatenate([X[:-1], V], axis=1)
                F = (XV @ dTop.reshape(Lb * n, -1).T).reshape(K - 1, Lb, n)
                Dx = np.empty((K, Lb, n))
                Dx[0] = dx0 if not lay.equilibrium else -_solve_rows(
                    A, dA @ x_start + dB @ v[0])
                PhiT = np.ascontiguousarray(Phi.T)
                for k in range(K - 1):
                    np.matmul(Dx[k], PhiT, out=Dx[k + 1])
                    Dx[k + 1] += F[k]
                dy = Dx @ C.T + np.einsum("kn,lan->kla", X, dC, optimize=True)
            else:
                X = np.zeros((K, 0))
                dy = np.zeros((K, Lb, C.shape[0]))
            vs = self._seen(v)
            dy += np.einsum("kb,lab->kla", vs, dD, optimize=True)
            Y = X @ C.T + vs @ D.T
            res.append(((Y - y) * w).ravel())
            jac.append((np.swapaxes(dy, 1, 2) * w[:, :, None]).reshape(-1, Lb))
        return np.concatenate(res), np.concatenate(jac)


def pack(lay: Layout, values: dict[str, Any]) -> Array:
    """θ from matrices ``J, L, G, N, x0, Cx, Du`` (``L`` lower triangular; missing: zero).

    Parameters
    ----------
    lay : Layout
    values : dict of str to ndarray

    Returns
    -------
    ndarray, shape (size,)
    """
    n, m, f = lay.n, lay.m, lay.n_factor
    parts = []
    iu = np.triu_indices(n, 1)
    parts.append(np.asarray(values.get("J", np.zeros((n, n))))[iu])
    parts.append(np.asarray(values.get("L", np.zeros((f, f))))[np.tril_indices(f)])
    parts.append(np.ravel(values.get("G", np.zeros((n, m)))))
    if lay.feedthrough:
        parts.append(np.asarray(values.get("N", np.zeros((m, m))))[np.triu_indices(m, 1)])
    if lay.learn_x0:
        parts.append(np.ravel(values.get("x0", np.zeros(n))))
    parts.append(np.ravel(values.get("Cx", np.zeros((lay.n_measured, n)))))
    parts.append(np.ravel(values.get("Du", np.zeros((lay.n_measured, m)))))
    return np.concatenate([np.asarray(p, float).ravel() for p in parts])
