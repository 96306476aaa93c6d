"""The fit itself: initial nonlinear terms, the shooting objective, Levenberg–Marquardt.

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
local minima for a gradient method (a friction damper fitted by L-BFGS-B from ``p = 0.5``
stayed at the linear model's 121 % error; the Gauss–Newton steps of :mod:`.gauss_newton` cross
over more often).  With dissipation terms the fit therefore runs from
:attr:`exponent`/:attr:`smoothing` and, unless that start reaches :data:`TARGET_COST`, from
:data:`SATURATING_START`, and keeps the lower training cost (one start when no term's law
depends on it).

What RK4 resolves.  The substeps are chosen from the linear start's fastest mode; a fit that
stiffens the model beyond ``h ρ / substeps ≤`` :data:`RK4_REACH` would be fitted to RK4's
response near the edge of its stability region (where it decays a mode at 0.65–0.9 per step
instead of ``e^{−2.5}``), not to the model's, and its surrogate would not simulate as fitted
(measured: a damper with a delayed force fitted with a direct feedthrough reached a training
cost of 7e-7 so, and the structure-preserving simulation failed).  A step that takes the
vector field's Jacobian beyond that rate at any node of the training rollout is therefore
rejected like one that raises the cost.

Outputs.  The objective compares the data's outputs with the model's in the linear fit's
wiring: a power output is the port output ``Ty y_ph``, a measured output ``C_m x + D_m u_ph``
(:mod:`.start`; ``+ K_m z(x)`` where that misses :data:`EFFORT_COST`: a spring's force reads
the effort; where that misses too, ``+ C_d ẋ`` from the best fit: an acceleration reads the
rate of a momentum, a damper's force with it), plus the static law of the modulating
inputs when there is one (:mod:`.input_law`: its gains start at the least-squares fit to the
linear start's residual); the experiments start from the learned common ``x0`` when the linear
fit learned one.  A core of order 0 (a static map) has no energy ridges or state dissipation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from fmu_surrogate.fmu.dataset import swing_origin
from fmu_surrogate.identify.nonlinear.gauss_newton import (
    Shooting,
    jacobian,
    progress_bar,
    projected_lm,
    residuals,
)
from fmu_surrogate.identify.nonlinear.parametrisation import (
    Layout,
    NonlinearFitError,
    contact_gates,
    initial_vector,
    structure,
)
from fmu_surrogate.identify.nonlinear.shooting import (
    VectorField,
    _like,
    _Tangents,
    make_segments,
    rollout,
)
from fmu_surrogate.identify.nonlinear.start import (
    LinearStart,
    linear_states,
    model_states,
    turn_directions,
)

Array = NDArray[np.float64]

TERM_ROWS = ("beta", "mdir", "p", "ld", "asym")  # a row per dissipation term (:func:`_transfer`)
#: the second start of the dissipation terms (exponent, smoothing relative to the spread)
SATURATING_START = (-1.0, 0.3)
#: RK4 is stable for h·λ on the negative real axis down to −2.78; substeps keep h ρ below this
RK4_REACH = 2.5
#: more substeps than this per sample step: the linear start is too stiff for the fit
MAX_SUBSTEPS = 20
#: A Gauss–Newton fit stops when its cost (mean squared relative output error plus the weighted
#: defects) is below this: an RMS error of 0.001 % of the outputs, below the tolerances of the
#: solvers inside the FMUs harvested, far below any error a user checks.
TARGET_COST = 1e-10
#: A fit with measured outputs whose cost stays above this (an RMS error above 1 % of the
#: outputs) is tried again with them reading the effort and the state (module doc), and the
#: better one kept (the state first: a position, a flux).
EFFORT_COST = 1e-4
#: Still above it, the fit reading the effort is continued with the state's rate read too, and
#: kept where that divides its cost by this: a term class earns its place (the mass with an
#: acceleration out: 5e-4 to 5e-8; a Duffing oscillator whose first level gains a little took
#: a worse path through the higher levels with it, 105 % held out against 0.84 % without)
RATE_GAIN = 4.0


@dataclass(frozen=True)
class Optimised:
    """Result of :func:`optimise`: layout, final ``θ``, cost per iteration, iterations, the
    optimiser's message, the segments, the static law's terms (:class:`~.input_law.LawStart`,
    or ``None``), and whether the measured outputs read the effort."""

    layout: Layout
    theta: Array
    costs: Array
    n_iter: int
    reason: str
    n_segments: int
    segment_length: int
    substeps: int
    law: Any = None
    reading: bool = False


def _candidates(lin: dict[str, Array], X: Array) -> list[Array]:
    """Unit directions: columns of ``J̃G̃`` and ``G̃``, then the states' principal axes."""
    G = lin["G"]
    _, _, Vt = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    cands = list((lin["J"] @ G).T) + list(G.T) + list(Vt)
    out = [c / np.linalg.norm(c) for c in cands if np.linalg.norm(c) > 1e-12]
    return out or list(np.eye(X.shape[1])[:1])


def _directions(first: list[Array], count: int, data: Array) -> Array:
    """``count`` directions cycling through ``first``, scaled to unit spread of ``data @ d``."""
    out = np.zeros((count, data.shape[1]))
    for k in range(count):
        s = float(np.sqrt(np.mean((data @ (d := first[k % len(first)])) ** 2)))
        out[k] = d / s if s > 0 else d
    return out


def _transfer(warm: Optimised, layout: Layout, theta: Array) -> Array:
    """``θ`` of ``layout`` with the blocks ``warm`` has taken from it (all but the shooting
    states, which depend on the experiments): whole where of the same shape, a block of terms
    with a term more (a contact's damper) in its leading rows."""
    out = np.array(theta, dtype=float)
    old, new = warm.layout.unpack(warm.theta), layout.unpack(out)
    for name, block in new.items():
        a = old.get(name)
        if name != "x" and a is not None and a.shape[1:] == block.shape[1:] and \
                (a.shape == block.shape or name in TERM_ROWS and a.shape[0] < block.shape[0]):
            block[:a.shape[0]] = a
    return out


def _port_directions(count: int, n_power: int, U: Array) -> Array:
    """``count`` unit port directions cycling through the power ports, unit spread on ``U``."""
    return _directions(list(np.eye(U.shape[1])[: max(n_power, 1)]), count, U)


def _state_scales(X: Array) -> Array:
    """The RMS of each state of the linear start over the training data, the units of the
    continuity defects: a state the linear start leaves at rest (a port it does not connect)
    gets the largest other RMS, or 1 when all rest."""
    rms = np.sqrt(np.mean(X ** 2, axis=0)) if X.size else np.zeros(X.shape[1])
    top = float(rms.max(initial=0.0))
    floor = top * 1e-6 if top > 0 else 1.0
    return np.where(rms > floor, rms, top if top > 0 else 1.0)


def _port_spreads(U: Array, Y: Array, Ty: Array) -> tuple[Array, Array]:
    """Per pH port, the RMS ``σ_u``, ``σ_y`` of its input and output in the port inputs ``U``
    (K, m) and the external outputs ``Y`` (K, k_out); 1 both where either has no spread, but a
    port whose output is not shown gets ``σ_y`` of the power ports' mean power (0.486 % so)."""
    su = np.sqrt(np.mean(U * U, axis=0)) if U.size else np.zeros(Ty.shape[1])
    Yph = Y @ np.linalg.pinv(Ty).T if Y.size else np.zeros((0, Ty.shape[1]))  # port outputs
    sy = np.sqrt(np.mean(Yph * Yph, axis=0)) if Yph.size else np.zeros(Ty.shape[1])
    ok = (su > 0) & (sy > 0) & np.isfinite(su) & np.isfinite(sy)  # shown outputs only
    lone = ~ok & (su > 0) & np.isfinite(su) & ~np.any(Ty != 0, axis=0)  # a source, modulating
    if ok.any():  # a gas accumulator in Pa and m³/s then fits as in bar and l/s: 0.065 %
        sy, ok = np.where(lone, np.exp(np.mean(np.log(su[ok] * sy[ok]))) / su, sy), ok | lone
    return np.where(ok, su, 1.0), np.where(ok, sy, 1.0)


def _scales(layout: Layout, X: Array, y_rms: Array, port: Array | None = None,
            power: Array | None = None, n_power: int = 1) -> Array:
    """Units of the optimiser's variables: ``θ = scale · φ``.

    A ridge's effort ``α ψ'(wᵀx) w`` with ``wᵀx`` of unit spread has a size ``α / σ`` next to
    the linear effort ``x`` of size ``σ`` (``σ`` the states' spread), so ``α`` of order ``σ²``
    is already a large nonlinearity: measured in units of ``σ²``, the weights move as far per
    step as the structure matrices do (without, the progressive spring's hardening took 300
    L-BFGS-B iterations, not a few dozen; the positive scale keeps the bounds).  Likewise the
    states (``x0``, the shooting states) are measured in ``σ``, the directions ``w_k``, ``m_j``
    in ``1/σ`` (not a periodic ridge's: its period; so the turning pendulum's fit failed), the
    dissipation gains in ``σ²``: a fit in other units (velocity in mm/s: ``σ²`` 1000 times
    larger) takes the same steps (before: 36 % after five iterations, 5 % in m/s).  The static
    law's gains multiply terms of unit size: they are measured in their output's RMS.
    The ports' variables depend on units too (``σ_u``, ``σ_y``: :func:`_port_spreads`): a
    damper harvested in mm/s and kN has a feedthrough 10⁶ times smaller than in m/s and N, for
    the same power, and Levenberg's isotropic damping (scaled by the mean curvature) then damped
    every other variable so much that the first step gained nothing (the fit stopped at the
    linear model's 12 %, where in SI it reaches 0.0007 %).  With ``port`` (``s = √(σ_u/σ_y)``)
    the port variables are measured as in the balanced ports ``u / s``, ``y s``: ``G`` and the
    port rows of ``L`` in ``1/s``, the skew feedthrough ``N`` in ``1/(s_i s_j)``, the
    feedthrough terms' directions and the measured outputs' ``D_m`` in ``1/s``, their gains
    (an output ``β m φ(mᵀu)`` of size ``β / σ_u``) in the power ``σ_u σ_y`` of their port
    (``power``): an orifice in bar and l/min (3000 bar·l/min) moved them by 0.004 per step
    without, and stopped after one at the linear model's 22 %.
    """
    sc = np.ones(layout.size)
    sl = layout.slices()
    sigma2 = float(np.mean(np.sum(X * X, axis=1)))
    if sigma2 > 0:  # a periodic ridge's share σ ∈ [0, 1] has no units
        sc[sl["alpha"][0]] = np.where(layout.periodic, 1.0, sigma2)
        sc[sl["x0"][0]] = sc[sl["x"][0]] = np.sqrt(sigma2)
        sc[sl["mdir"][0]], sc[sl["beta"][0]] = 1.0 / np.sqrt(sigma2), sigma2
        sc[sl["w"][0]] = np.repeat(np.where(layout.periodic, 1.0, 1 / np.sqrt(sigma2)), layout.n)
        sc[sl["gdir"][0]], sc[sl["gkappa"][0]] = 1.0 / np.sqrt(sigma2), np.sqrt(sigma2)
    if layout.n_law:
        sc[sl["lC"][0]] = np.repeat(np.where(y_rms > 0, y_rms, 1.0), layout.n_law)
    if port is not None and layout.m:
        inv = 1.0 / np.asarray(port, dtype=float)
        n, m = layout.n, layout.m
        sc[sl["G"][0]] = np.tile(inv, n)  # G (n, m), row-major
        if layout.feedthrough:
            L = np.ones((n + m, n + m))
            L[n:, :] = inv[:, None]  # W = L Lᵀ: the port rows of L carry P and S
            sc[sl["L"][0]] = L.ravel()
            sc[sl["V"][0]] = (inv[:, None] * inv[None, :])[np.triu_indices(m, 1)]
        sc[sl["pdir"][0]] = np.tile(inv, layout.n_port_dissipation)
        sc[sl["Dm"][0]] = np.tile(inv, layout.n_measured)
    if power is not None and layout.n_port_dissipation:  # ports cycled as _port_directions
        sc[sl["pbeta"][0]] = power[np.arange(layout.n_port_dissipation) % max(n_power, 1)]
    return sc


def optimise(est: Any, start: LinearStart, train: list[tuple], feedthrough: bool,
             n_port: int, delayed: bool = False, static_law: Any = None,
             law_inputs: list[Array] | None = None, warm: Optimised | None = None) -> Optimised:
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
    warm : Optimised, optional
        A fit in the same wiring (to other experiments, or with fewer terms) to start from: its
        blocks of the same shape replace the start's, the shooting states start on its
        trajectories, and its measured outputs read what they read there
        (:mod:`.continuation`).
    """
    import torch

    lin = start.lin
    n, m = lin["G"].shape
    Xs = linear_states(lin, train, start.steady) if warm is None else \
        model_states(warm.layout, warm.theta, lin, train, start.steady)
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
    # each run from the equilibrium of its first inputs: its first state is free as the others
    # (Newton's equilibrium inside the fit would be differentiated through; a defect on the
    # first states' rates changed nothing measured: the data hold them at rest); the fitted
    # model's own equilibria start its simulations
    free = np.ones_like(seg.first) if start.steady else ~seg.first
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
    # the contacts' dampers (last) along the power ports' flows: a stop's damper on its velocity
    diss_dirs = np.vstack([_directions(diss_first, D, Z),
                           _directions(diss_first, layout.n_gated, Z)])
    Dall = D + layout.n_gated
    starts = np.array([Xs[i][a] for i, a in seg.starts]).reshape(len(seg.starts), n)
    U = np.vstack([e[1] for e in train])
    n_power = int(np.count_nonzero(np.any(start.ports.Ty != 0, axis=0)))

    families = [(float(est.exponent), float(est.smoothing)), SATURATING_START]

    def theta_start(law: tuple[float, float], read_effort: bool = False) -> Array:
        # the feedthrough's terms: with two per power port, one of each family; δ_j relative
        # to the spread of the term's argument (directions scaled to unit spread)
        other = families[1] if law == families[0] else families[0]
        fam = [law if n_port < 2 * n_power or (j // n_power) % 2 == 0 else other
               for j in range(n_port)]
        p_port = np.array([f[0] for f in fam]).reshape(n_port)
        d_port = np.array([f[1] for f in fam]).reshape(n_port)
        p0 = np.concatenate([np.full(D, law[0]), np.zeros(Dall - D)])  # a contact's: linear
        return initial_vector(layout, lin, ridge_dirs, diss_dirs, p0, starts[free],
                              _port_directions(n_port, n_power, U), p_port, (start.Cm, start.Dm),
                              np.concatenate([np.full(D, law[1]), np.full(Dall - D, families[0][1]),
                                              d_port]), static_law, read_effort)

    # a second start only where it changes a term's law: state terms, or fewer feedthrough
    # terms than one of each family per power port (else both families are in the one start)
    second = bool(D and n) or 0 < n_port < 2 * n_power
    laws = families if second and families[0] != SATURATING_START else families[:1]
    Ty = torch.as_tensor(np.array(start.ports.Ty, dtype=float))
    Emeas = torch.as_tensor(np.eye(Ty.shape[0])[:, start.measured])

    # outputs about a large value by their swing (as the errors: fmu.dataset.swing_origin)
    y_rms = np.sqrt(np.mean(np.vstack([e[2] - swing_origin(e[2]) for e in train]) ** 2, axis=0))
    y_scale = torch.as_tensor(y_rms + 1e-300)
    x_scale = torch.as_tensor(_state_scales(X))
    x_fixed = torch.as_tensor(starts[~free])
    n_first = int((~free).sum())
    has_next = np.flatnonzero(seg.next_index >= 0) if n else np.zeros(0, dtype=np.int64)
    mu = float(est.continuity_weight)
    su, sy = _port_spreads(U, np.vstack([e[2] for e in train]), np.asarray(start.ports.Ty))
    sc = _scales(layout, X, y_rms, np.sqrt(su / sy), su * sy, n_power)
    if k_meas and n and X.shape == (U.shape[0], n):  # C_d in the states' time scale: as C_m
        rate = np.mean((X @ (lin["J"] - lin["R"]).T + U @ (lin["G"] - lin["P"]).T) ** 2)
        sc[layout.slices()["Cd"][0]] = np.sqrt(np.mean(X * X) / rate) if rate > 0 else 1.0
    if n_law:  # the external inputs the outputs see at the nodes, cut as the data
        lnode = make_segments([(e[0], ue, e[2], e[3]) for e, ue in zip(train, law_inputs)],
                              est.segment_length, delayed).unode
        ldirs = torch.as_tensor(static_law.directions)

    n_pairs = has_next.size
    wsqrt = (torch.as_tensor(1.0 / np.sqrt(seg.y.numel())) if seg.weight is None else
             torch.sqrt(seg.weight / (seg.weight.sum() * seg.y.shape[-1]))[..., None])
    w_res = wsqrt / y_scale  # the residuals (Y − y) w_res, both lifted to dual numbers in a
    y_res = seg.y * w_res    # Jacobian's pass (a plain operand takes the slow path: .shooting)
    order = torch.as_tensor(np.argsort(np.concatenate([np.flatnonzero(~free),
                                                       np.flatnonzero(free)])))
    n_model = layout.slices()["x"][0].start
    shoot = Shooting(n_model, n, np.flatnonzero(free), has_next, seg.next_index[has_next],
                     np.sqrt(mu / max(n_pairs * n, 1)) / x_scale.numpy(), len(seg.first))

    def forward_states(field: VectorField) -> torch.Tensor:
        """The segments' start states (..., S, n): the known or learned initial state, then the
        free ones."""
        b = field.blocks
        lead = tuple(b["x"].shape[:-2])
        x_first = b["x0"].unsqueeze(-2) if layout.learn_x0 else x_fixed
        return torch.cat([x_first.expand(lead + (n_first, n)), b["x"]], dim=-2)[..., order, :]

    def forward(theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Weighted output residuals (..., S, R) and end states (..., S, n) of ``θ`` (...,
        size)."""
        return run(theta)[:2]

    reading = [False]  # whether the measured outputs read the effort (the start being fitted)
    held = [np.zeros(n_model, dtype=bool)]  # the output maps held at zero: columns not computed

    def run(theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, VectorField, torch.Tensor]:
        """:func:`forward`, and the vector field and the states at the nodes."""
        field = VectorField(layout, theta)
        b = field.blocks
        Yph, Xn, *Rn = rollout(field, forward_states(field), seg, substeps,
                               rates=bool(k_meas and reading[0]))
        Y = Yph @ Ty.T
        if k_meas:
            Ym = Xn @ b["Cm"].mT.unsqueeze(-3) + seg.unode @ b["Dm"].mT.unsqueeze(-3)
            if reading[0]:  # K_m, C_d are held at zero while the outputs read the state
                Zn = field.effort(Xn.flatten(-3, -2)).reshape(Xn.shape)  # (..., S, L, n)
                Ym = Ym + Zn @ b["Km"].mT.unsqueeze(-3) + Rn[0] @ b["Cd"].mT.unsqueeze(-3)
            Y = Y + Ym @ Emeas.T
        if n_law:
            Y = Y + field.law(lnode, ldirs, static_law.kinds)
        ry = (Y * _like(w_res, Y) - _like(y_res, Y)).reshape(Y.shape[:-3] + (len(seg.first), -1))
        return ry, Xn[..., -1, :], field, Xn

    def fun(phi: Array) -> Array:
        theta = torch.as_tensor(sc * phi, dtype=torch.float64)
        with torch.no_grad():
            ry, xe, field, Xn = run(theta)
        r = residuals(shoot, ry.numpy(), xe.numpy(),
                      theta[n_model:].reshape(shoot.free_segments.size, n).numpy())
        # a step that makes the model faster than RK4 resolves fails (module doc)
        return r if np.all(np.isfinite(r)) and resolved(field, Xn) else np.full_like(r, 1e150)

    def jac(phi: Array) -> Any:
        J = jacobian(shoot, forward, torch.as_tensor(sc * phi, dtype=torch.float64), held[0])
        return J * sc if isinstance(J, np.ndarray) else J @ sp.diags(sc)

    def resolved(field: VectorField, Xn: torch.Tensor) -> bool:
        """Whether RK4 at the fit's substeps resolves the model ``field`` along its states
        ``Xn``: the vector field's Jacobian has a spectral radius ``ρ`` with ``h ρ / substeps``
        within :data:`RK4_REACH` at every node (its columns as tangents, all nodes at once)."""
        if n == 0:
            return True
        X = Xn[:, :-1].reshape(-1, n).numpy()
        U = seg.u0.reshape(-1, seg.u0.shape[-1]).numpy()
        Jx = _Tangents(field, ()).jacobian(X, U)  # (nodes, n, n)
        if not np.all(np.isfinite(Jx)):
            return False
        rate = float(np.abs(np.linalg.eigvals(Jx)).max(initial=0.0))
        return float(seg.h.max()) * rate / substeps <= RK4_REACH

    lo, hi = np.array([(-np.inf if a is None else a, np.inf if b is None else b)
                       for a, b in layout.bounds()]).T / sc
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    best = None
    rated = warm is not None and bool(np.any(warm.layout.unpack(warm.theta)["Cd"]))
    tries = [(law, False if warm is None else warm.reading, False, rated) for law in laws]
    if layout.periodic.any() and (warm is None or not warm.layout.periodic.any()):
        tries.append((laws[0], tries[0][1], True, rated))  # a turning start too (.continuation)
    tried: list[Array] = []
    try:
        for law, effort, turning, rate in tries:  # grows by the starts reading more (below)
            reading[0] = effort
            theta0 = theta_start(law, effort)
            if warm is not None:
                theta0 = _transfer(warm, layout, theta0)
            if layout.n_gated and (warm is None or not warm.layout.n_gated):  # on their ridges
                theta0 = contact_gates(layout, theta0, float(np.sqrt(np.mean(X * X) * n)))
            elif rate:  # from the best fit, which it can only improve
                theta0 = best[1].theta.copy()
            if turning:
                theta0 = _turning_start(layout, theta0, lin, train, seg, free,
                                        lambda th: float(np.sum(fun(th / sc) ** 2)),
                                        start.steady)
            if any(np.array_equal(theta0, th) for th in tried):
                continue  # the warm start fixes the law of every term: nothing new to try
            tried.append(theta0)
            c0 = float(np.sum(fun(theta0 / sc) ** 2))
            if not c0 < 1e300:
                raise NonlinearFitError("the linear start's simulation over the shooting "
                                        "segments is not finite; check the data (NaN, units) "
                                        "or fit with a lower order.")
            if int(est.max_iter) == 0:  # the linear start itself
                return Optimised(layout, theta0, np.asarray([c0]), 0,
                                 "max_iter = 0: the linear start", len(seg.first), L, substeps,
                                 static_law, effort)
            lo_, hi_ = lo.copy(), hi.copy()  # the state (K_m, C_d at 0), the effort too, or all
            held[0] = np.zeros(n_model, dtype=bool)
            for name in () if rate else ("Cd",) if effort else ("Km", "Cd"):
                lo_[layout.slices()[name][0]] = hi_[layout.slices()[name][0]] = 0.0
                held[0][layout.slices()[name][0]] = True
            # a held C_d is out of Levenberg's scale: the steps are a model's without it
            counted = np.ones(layout.size, dtype=bool)
            counted[layout.slices()["Cd"][0]] = rate
            with progress_bar(est, n) as bar:
                phi, costs, reason = projected_lm(
                    fun, jac, theta0 / sc, lo_, hi_, int(est.max_iter), float(est.tol),
                    TARGET_COST, bar, getattr(est, "_deadline", None), counted)
            if best is None or costs[-1] < best[0] / (RATE_GAIN if rate and warm is None else 1):
                best = (costs[-1], Optimised(
                    layout, sc * phi, np.asarray(costs),
                    len(costs) - 1, reason, len(seg.first), L, substeps, static_law, effort))
            if best[0] <= TARGET_COST:  # the second start cannot do better
                break
            if (law, effort, turning, rate) == tries[-1] and k_meas and not rate and \
                    best[0] > EFFORT_COST and warm is None:
                # the measured outputs read the state and the fit stays poor: they may read an
                # effort (a spring's force): the same starts with K_m z(x) instead of C_m x;
                # still poor, the state's rate (an acceleration holds a damper's force) too
                tries += ([(law, True, False, True)] if effort else
                          [(law_, True, False, False) for law_ in laws])
    finally:
        torch.set_num_threads(threads)
    return best[1]


def _turning_start(layout: Layout, theta: Array, lin: dict[str, Array], train: list[tuple],
                   seg: Any, free: Array, cost: Callable[[Array], float],
                   steady: bool = False) -> Array:
    """``θ`` with its periodic ridge taking the whole quadratic form (``σ = 1``) along the
    :func:`~.start.turn_directions` of lowest ``cost``, the shooting states on that model's
    trajectories."""
    k, n, best = int(np.flatnonzero(layout.periodic)[0]), layout.n, (np.inf, theta)
    st = structure(layout, layout.unpack(theta), np)
    for w in turn_directions(st["J"] - st["W"][:n, :n], st["G"]):
        b = layout.unpack(th := theta.copy())
        b["alpha"][k], b["w"][k] = 1.0, w
        Xs = model_states(layout, th, lin, train, steady)
        b["x"][:] = np.array([Xs[i][a] for i, a in seg.starts]).reshape(-1, n)[free]
        best = min(best, (cost(th), th), key=lambda cb: cb[0])
    return best[1]
