"""The fit itself: initial nonlinear terms, the shooting objective, L-BFGS-B.

Initial directions.  In energy coordinates the collocated port direction ``G̃`` is the flow
variable the ports see (a velocity, a current) and ``J̃ G̃`` the one it integrates into (a
deflection, a charge); the ridges of the energy start along ``J̃G̃, G̃, …`` and the dissipation
terms along ``G̃, J̃G̃, …`` (then the principal directions of the linear model's states), each
scaled so that its argument has unit spread on the training data.  The terms of the nonlinear
feedthrough ``S_nl(u)`` start along the power ports, scaled likewise.  Weights and gains start at
zero, so the objective starts at the linear model's (up to the RK4 discretisation).

Two starts of the dissipation laws.  A term's exponent ``p`` and smoothing ``δ`` (both fitted)
describe laws of two families that gradients do not cross: a growing power law (``p > 0``,
small ``δ``: turbulent and power-law dampers) and a saturating one (``p = −1``, ``δ`` inside the
data: friction, valves, tanh-like limiters), whose best fits from the other family's start are
local minima (a friction damper fitted from ``p = 0.5`` stayed at the linear model's 121 %
error).  With dissipation terms the fit therefore runs from :attr:`exponent`/:attr:`smoothing`
and from :data:`SATURATING_START`, and keeps the lower training cost (one start when no term's
law depends on it).

Outputs.  The objective compares the data's outputs with the model's in the linear fit's
wiring: a power output is the port output ``Ty y_ph``, a measured output ``C_m x + D_m u_ph``
(:mod:`.start`), plus the static law of the modulating inputs when there is one
(:mod:`.input_law`: its gains start at the least-squares fit to the linear start's residual);
the experiments start from the learned common ``x0`` when the linear fit learned one.  A core
of order 0 (a static map) has no energy ridges or state dissipation to fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize

from fmu_surrogate.identify.nonlinear.parametrisation import (
    Layout,
    NonlinearFitError,
    initial_vector,
)
from fmu_surrogate.identify.nonlinear.shooting import VectorField, make_segments, rollout
from fmu_surrogate.identify.nonlinear.start import LinearStart
from fmu_surrogate.ph import LinearPH, simulate

Array = NDArray[np.float64]

#: the second start of the dissipation terms (exponent, smoothing relative to the spread)
SATURATING_START = (-1.0, 0.3)
#: RK4 is stable for h·λ on the negative real axis down to −2.78; substeps keep h ρ below this
RK4_REACH = 2.5
#: more substeps than this per sample step: the linear start is too stiff for the fit
MAX_SUBSTEPS = 20
#: The default budget (``max_iter``) is open: a fit it stopped goes on from where it stopped
#: (L-BFGS restarted) while its cost (mean squared relative output error) is above
#: CONTINUE_ABOVE (an RMS error of 0.3 %: a fit that still misses) and its last budget lowered
#: it by CONTINUE_GAIN, at most CONTINUE_ROUNDS more budgets (measured on a third-party mass on
#: a progressive spring and a power-law damper: 9.3 % held-out after 300 iterations, 0.84 %
#: after 1500).  Another ``max_iter`` is a hard budget.
OPEN_BUDGET = 300
CONTINUE_GAIN, CONTINUE_ROUNDS, CONTINUE_ABOVE = 1.5, 4, 1e-5


@dataclass(frozen=True)
class Optimised:
    """Result of :func:`optimise`: the layout and final ``θ`` (the dissipation terms' ``δ``
    included), the cost per iteration, iterations, the optimiser's message, the segments, and
    the static law's terms (:class:`~.input_law.LawStart`, or ``None``)."""

    layout: Layout
    theta: Array
    costs: Array
    n_iter: int
    reason: str
    n_segments: int
    segment_length: int
    substeps: int
    law: Any = None


def _candidates(lin: dict[str, Array], X: Array) -> list[Array]:
    """Unit directions: columns of ``J̃G̃`` and ``G̃``, then the states' principal axes."""
    G = lin["G"]
    cands = list((lin["J"] @ G).T) + list(G.T)
    _, _, Vt = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    cands += list(Vt)
    out = [c / np.linalg.norm(c) for c in cands if np.linalg.norm(c) > 1e-12]
    return out or list(np.eye(X.shape[1])[:1])


def _directions(first: list[Array], count: int, data: Array) -> Array:
    """``count`` directions cycling through ``first``, scaled to unit spread of ``data @ d``."""
    out = np.zeros((count, data.shape[1]))
    for k in range(count):
        d = first[k % len(first)]
        s = float(np.sqrt(np.mean((data @ d) ** 2)))
        out[k] = d / s if s > 0 else d
    return out


def _linear_states(lin: dict[str, Array], train: list[tuple]) -> list[Array]:
    n = lin["J"].shape[0]
    fw = {"P": lin["P"], "S": lin["S"], "N": lin["N"]}
    sys = LinearPH(lin["J"], lin["R"], np.eye(n), lin["G"], **fw)
    return [simulate(sys, t, u, lin["x0"], hold=h).x for t, u, _, h in train]


def _port_directions(count: int, n_power: int, U: Array) -> Array:
    """``count`` unit port directions cycling through the power ports, unit spread on ``U``."""
    m = U.shape[1]
    first = list(np.eye(m)[: max(n_power, 1)])
    return _directions(first, count, U)


def _scales(layout: Layout, X: Array, y_rms: Array) -> Array:
    """Units of the optimiser's variables: ``θ = scale · φ``.

    A ridge's effort ``α ψ'(wᵀx) w`` with ``wᵀx`` of unit spread has a size ``α / σ`` next to
    the linear effort ``x`` of size ``σ`` (``σ`` the states' spread), so ``α`` of order ``σ²``
    is already a large nonlinearity: measured in units of ``σ²``, the weights move as far per
    L-BFGS-B step as the structure matrices do (without, the progressive spring's hardening
    took 300 iterations instead of a few dozen).  The positive scale keeps the bounds.  The
    static law's gains multiply terms of unit size: they are measured in units of their output's
    RMS ``y_rms``.
    """
    sc = np.ones(layout.size)
    sigma2 = float(np.mean(np.sum(X * X, axis=1)))
    if sigma2 > 0:
        sc[layout.slices()["alpha"][0]] = sigma2
    if layout.n_law:
        sl = layout.slices()["lC"][0]
        sc[sl] = np.repeat(np.where(y_rms > 0, y_rms, 1.0), layout.n_law)
    return sc


def optimise(est: Any, start: LinearStart, train: list[tuple], feedthrough: bool,
             n_port: int, delayed: bool = False, static_law: Any = None,
             law_inputs: list[Array] | None = None) -> Optimised:
    """Fit the nonlinear model (module doc); ``est`` supplies the settings.

    Parameters
    ----------
    est : NonlinearPHIdentifier
        The settings.
    start : LinearStart
        The linear start in energy coordinates and its wiring.
    train : list of tuple
        ``(t, u_ph, y_ext, hold)`` experiments: pH port inputs, external outputs.
    feedthrough : bool
        Whether ``P, S, N`` are fitted.
    n_port : int
        Number of terms of the nonlinear feedthrough ``S_nl(u)``.
    delayed : bool
        Whether the outputs see the inputs of the sample before (delayed feedthrough).
    static_law : LawStart, optional
        The static law's terms and start (:func:`~.input_law.law_start`).
    law_inputs : list of ndarray, optional
        The external inputs ``u_ext`` (K, k_in) of each training experiment (with
        ``static_law``).
    """
    import torch

    lin = start.lin
    n, m = lin["G"].shape
    Xs = _linear_states(lin, train)
    X = np.vstack(Xs)
    Z = X  # Q = I: the effort of the linear model is its state
    seg = make_segments(train, est.segment_length, delayed)
    L = seg.h.shape[1]
    rho = float(np.abs(np.linalg.eigvals(lin["J"] - lin["R"])).max()) if n else 0.0
    substeps = max(1, int(np.ceil(float(seg.h.max()) * rho / RK4_REACH)))
    if substeps > MAX_SUBSTEPS:
        raise NonlinearFitError(
            f"the linear start has a mode of rate {rho:.3g}/s, {float(seg.h.max()) * rho:.0f} "
            f"times faster than the sampling step: RK4 would need {substeps} substeps per "
            f"sample. Fit with a lower order (n_states) or more and longer experiments, or "
            f"sample faster.")
    free = ~seg.first
    kinds = tuple(str(k) for k in est.ridges) if n else ()
    D = int(est.n_dissipation) if n else 0
    k_meas = len(start.measured)
    n_law = static_law.n_terms if static_law is not None else 0
    layout = Layout(n, m, kinds, D, feedthrough, int(free.sum()), n_port, start.learn_x0,
                    k_meas, n_law, start.ports.Ty.shape[0])
    cands = _candidates(lin, X)
    ridge_first = cands
    diss_first = cands[m:m + m] + cands[:m] + cands[2 * m:] if len(cands) > m else cands
    ridge_dirs = _directions(ridge_first, len(kinds), X)
    diss_dirs = _directions(diss_first, D, Z)
    starts = np.array([Xs[i][a] for i, a in seg.starts]).reshape(len(seg.starts), n)
    U = np.vstack([e[1] for e in train])
    n_power = int(np.count_nonzero(np.any(start.ports.Ty != 0, axis=0)))

    families = [(float(est.exponent), float(est.smoothing)), SATURATING_START]

    def theta_start(law: tuple[float, float]) -> Array:
        # the feedthrough's terms: with two per power port, one of each family; δ_j relative
        # to the spread of the term's argument (directions scaled to unit spread)
        other = families[1] if law == families[0] else families[0]
        fam = [law if n_port < 2 * n_power or (j // n_power) % 2 == 0 else other
               for j in range(n_port)]
        p_port = np.array([f[0] for f in fam]).reshape(n_port)
        d_port = np.array([f[1] for f in fam]).reshape(n_port)
        return initial_vector(layout, lin, ridge_dirs, diss_dirs, np.full(D, law[0]),
                              starts[free], _port_directions(n_port, n_power, U), p_port,
                              (start.Cm, start.Dm), np.concatenate([np.full(D, law[1]), d_port]),
                              static_law)

    # a second start only where it changes a term's law: state terms, or fewer feedthrough
    # terms than one of each family per power port (else both families are in the one start)
    second = bool(D and n) or 0 < n_port < 2 * n_power
    laws = families if second and families[0] != SATURATING_START else families[:1]
    Ty = torch.as_tensor(np.array(start.ports.Ty, dtype=float))
    Emeas = torch.as_tensor(np.eye(Ty.shape[0])[:, start.measured])

    y_rms = np.sqrt(np.mean(np.vstack([e[2] for e in train]) ** 2, axis=0))
    y_scale = torch.as_tensor(y_rms + 1e-300)
    x_scale = torch.as_tensor(np.sqrt(np.mean(X ** 2, axis=0)) + 1e-300)
    x_fixed = torch.as_tensor(starts[seg.first])
    first_idx = torch.as_tensor(np.flatnonzero(seg.first))
    free_idx = torch.as_tensor(np.flatnonzero(free))
    has_next = np.flatnonzero(seg.next_index >= 0)
    nxt = torch.as_tensor(seg.next_index[has_next])
    cur = torch.as_tensor(has_next)
    mu = float(est.continuity_weight)
    sc = _scales(layout, X, y_rms)
    if n_law:  # the external inputs the outputs see at the nodes, cut as the data
        lnode = make_segments([(e[0], ue, e[2], e[3]) for e, ue in zip(train, law_inputs)],
                              est.segment_length, delayed).unode
        ldirs = torch.as_tensor(static_law.directions)

    def objective(phi: Array) -> tuple[float, Array]:
        theta_np = sc * phi
        theta = torch.tensor(theta_np, dtype=torch.float64, requires_grad=True)
        field = VectorField(layout, theta)
        b = field.blocks
        x_start = torch.empty((len(seg.first), n), dtype=torch.float64)
        x_first = b["x0"].expand(first_idx.numel(), n) if layout.learn_x0 else x_fixed
        x_start = x_start.index_copy(0, first_idx, x_first)
        if free_idx.numel():
            x_start = x_start.index_copy(0, free_idx, b["x"])
        Yph, Xn = rollout(field, x_start, seg, substeps)
        x_end = Xn[:, -1]
        Y = Yph @ Ty.T
        if k_meas:
            Y = Y + (Xn @ b["Cm"].T + seg.unode @ b["Dm"].T) @ Emeas.T
        if n_law:
            Y = Y + field.law(lnode, ldirs, static_law.kinds)
        if seg.weight is None:
            cost = torch.mean(((Y - seg.y) / y_scale) ** 2)
        else:
            r2 = ((Y - seg.y) / y_scale) ** 2 * seg.weight[..., None]
            cost = r2.sum() / (seg.weight.sum() * r2.shape[-1])
        if cur.numel() and n:
            cost = cost + mu * torch.mean(((x_end[cur] - x_start[nxt]) / x_scale) ** 2)
        cost.backward()
        c = float(cost.detach())
        if not np.isfinite(c):
            return 1e300, np.zeros_like(theta_np)
        return c, sc * theta.grad.detach().numpy().astype(float)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    best = None
    try:
        for law in laws:
            theta0 = theta_start(law)
            costs: list[float] = []
            c0, _ = objective(theta0 / sc)
            if not c0 < 1e300:
                raise NonlinearFitError("the linear start's simulation over the shooting "
                                        "segments is not finite; check the data (NaN, units) "
                                        "or fit with a lower order.")
            costs.append(c0)
            if int(est.max_iter) == 0:  # the linear start itself (scipy would still step)
                return Optimised(layout, theta0, np.asarray(costs), 0,
                                 "max_iter = 0: the linear start", len(seg.first), L, substeps,
                                 static_law)
            res, nit = _lbfgs(objective, theta0 / sc, layout, costs, est), 0
            rounds = CONTINUE_ROUNDS if int(est.max_iter) == OPEN_BUDGET else 0
            for _ in range(rounds):  # stopped by the open budget while still improving
                last = int(res.nit)
                nit += last
                if res.status != 1 or len(costs) <= last or not costs[-1] > CONTINUE_ABOVE \
                        or not costs[-1 - last] > CONTINUE_GAIN * costs[-1]:
                    break
                res = _lbfgs(objective, res.x, layout, costs, est)
            else:
                nit += int(res.nit)
            res.nit = nit
            theta = sc * np.asarray(res.x, dtype=float)
            if best is None or float(res.fun) < best[0]:
                best = (float(res.fun), Optimised(
                    layout, theta, np.asarray(costs), int(res.nit), str(res.message),
                    len(seg.first), L, substeps, static_law))
    finally:
        torch.set_num_threads(threads)
    return best[1]


def _lbfgs(objective: Any, start: Array, layout: Layout, costs: list[float], est: Any) -> Any:
    """One budget of L-BFGS-B from ``start`` (costs appended to ``costs``)."""
    return minimize(objective, start, jac=True, method="L-BFGS-B", bounds=layout.bounds(),
                    callback=_recorder(costs),
                    options={"maxiter": int(est.max_iter), "ftol": float(est.tol),
                             "gtol": 1e-12, "maxcor": 30})


def _recorder(costs: list[float]) -> Any:
    """An L-BFGS-B callback appending each iterate's cost to ``costs``."""
    def callback(intermediate_result: Any) -> None:  # scipy passes the result by this name
        costs.append(float(intermediate_result.fun))
    return callback


