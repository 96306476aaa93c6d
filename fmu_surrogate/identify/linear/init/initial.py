"""Initial pH models from data: subspace identification, then the passive pH form.

``init="subspace"`` of :class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier`:
:func:`~fmu_surrogate.identify.linear.init.subspace.subspace_identify` (PO-MOESP, hold-aware least squares
for B and x0) → :func:`~fmu_surrogate.identify.linear.init.passivity.passive_realisation` (KYP Riccati,
least-squares port matrix; if no positive definite storage exists — a non-minimal or unstable
part, e.g. at an order the data hardly support — the order is lowered one state at a time) →
decoupled padding up to the requested order → state coordinates with the prescribed storage
matrix (the fixed Q, or ``Q = I`` when Q is learned).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.errors import LinearIdentificationError
from fmu_surrogate.identify.linear.init.passivity import (
    PassiveModel,
    pad_states,
    passive_realisation,
    to_storage,
)
from fmu_surrogate.identify.linear.init.subspace import SubspaceModel, subspace_identify
from fmu_surrogate.identify.linear.ports import refusal

Array = NDArray[np.float64]

#: Eigenvalues of the initial R below this fraction of the largest are lifted to it before
#: factorising R = YYᵀ (a rank-deficient factor cannot grow to first order; see ph_manifold).
SUBSPACE_R_FLOOR = 1e-10
#: Eigenvalues of the initial R above this fraction of the largest count for its rank.
R_RANK_RTOL = 1e-8
#: Relative change of the port matrix (nearest passive model) above which the identified model
#: counts as not passive: a port with the wrong orientation changes it by ~100 % (then, with a
#: port that delivers power, the fit is refused), noise and round-off by far less than 1 %
#: (measured on the test systems); reduced orders may change it as much.
PORT_CHANGE_LIMIT = 0.5


def factor_rank(R: Array) -> int:
    """Columns of the factor of R: the numerical rank of the initial R (at least 1).

    The storage ``Q`` of the subspace model is the centre of the KYP solution set, whose R has
    the largest rank among the pH forms of the model; directions in which R vanishes there
    vanish for every pH form (lossless parts), so a factor with vanishing columns would only
    slow the refinement down (it converges sublinearly to a rank-deficient R).
    """
    lam = np.linalg.eigvalsh(R)
    return max(1, int(np.sum(lam > R_RANK_RTOL * max(float(lam[-1]), 1e-300))))


@dataclass(frozen=True)
class SubspaceInit:
    """The subspace initial model and how it was obtained.

    Attributes
    ----------
    values : dict of str to ndarray
        ``J, R, Q, B, x0`` of the initial pH model (order n).
    core : dict of str to ndarray
        The same model before padding (order ``subspace.rank``), in coordinates with
        ``Q = q I`` (``q`` = ``core_q``) — what the refinement fits when the data determine
        fewer states than requested (the padded states stay decoupled).
    core_q : float
        Scale of the core model's storage matrix.
    subspace : SubspaceModel
        Unstructured model and singular values (order selection).
    passive : PassiveModel
        pH form before the change of coordinates (passivity violation, δ, port change).
    """

    values: dict[str, Array]
    subspace: SubspaceModel
    passive: PassiveModel
    core: dict[str, Array]
    core_q: float


def subspace_applicable(names: tuple[str, ...], given: dict[str, Any]) -> str | None:
    """Why the subspace initialisation cannot be used (None if it can).

    It needs J, R and B learned from their defaults (an initial or fixed J, R or B fixes the state
    coordinates, which the subspace model does not know), no initial value of a learned Q or
    x0 (same reason), and a fixed x0 only if it is zero.
    """
    for p in ("J", "R", "B"):
        if p not in names:
            return f"{p} is fixed"
        if p in given:
            return f"an initial value of {p} was given"
    if "Q" in names and "Q" in given:
        return "an initial value of Q was given"
    if "x0" in names and "x0" in given:
        return "an initial value of x0 was given"
    if "x0" not in names and "x0" in given and np.any(np.asarray(given["x0"]) != 0):
        return "x0 is fixed at a nonzero value"
    return None


def subspace_initial_values(
    exps: list[Any], n: int, names: tuple[str, ...], Q_fixed: Array, horizon: int | None,
    rank: int | None = None,
) -> SubspaceInit:
    """The initial pH model of order n from the experiments (see the module docstring).

    Parameters
    ----------
    exps : list of Experiment
        Uniformly sampled, with one step size.
    n : int
        Model order.
    names : tuple of str
        Learned parameters.
    Q_fixed : ndarray, shape (n, n)
        The storage matrix when Q is not learned.
    horizon : int, optional
        Hankel block rows (default: :func:`~fmu_surrogate.identify.linear.init.subspace.default_horizon`).
    rank : int, optional
        States to identify whatever the numerical rank (see
        :func:`~fmu_surrogate.identify.linear.init.subspace.subspace_identify`).

    Returns
    -------
    SubspaceInit
    """
    data = [(e.t, e.u, e.y, e.hold) for e in exps]
    sm = subspace_identify(data, n, horizon=horizon, with_x0="x0" in names, rank=rank)
    rate = 1.0 / max(float(e.t[-1] - e.t[0]) for e in exps)
    core = None
    while core is None:
        try:
            core = passive_realisation(sm.A, sm.B, sm.C, sm.x0, rate=rate)
        except LinearIdentificationError as err:
            # no positive definite storage: a non-minimal or unstable part; one state fewer
            if sm.rank == 1:
                raise LinearIdentificationError(refusal(exps, str(err), _signs(exps))) from None
            sm = subspace_identify(data, sm.rank - 1, horizon=sm.horizon, with_x0="x0" in names)
    if core.port_change > PORT_CHANGE_LIMIT:
        signs = _signs(exps)
        if signs is not None and np.any(signs < 0):  # a port oriented "out": refuse, say why
            raise LinearIdentificationError(refusal(exps, (
                f"the nearest passive port matrix differs from the identified one by "
                f"{100 * core.port_change:.0f} %"), signs))
    pm = pad_states(core, n)
    target = np.eye(n) if "Q" in names else Q_fixed
    pq = to_storage(pm, target)
    values = {"J": pq.J, "R": pq.R, "Q": pq.Q, "B": pq.B, "x0": pq.x0}
    q = 1.0 if "Q" in names else float(Q_fixed[0, 0])
    pc = to_storage(core, q * np.eye(core.J.shape[0]))
    core_values = {"J": pc.J, "R": pc.R, "Q": pc.Q, "B": pc.B, "x0": pc.x0}
    return SubspaceInit(values, sm, pm, core_values, q)


def _signs(exps: list[Any]) -> Array | None:
    """The orientation test of the ports (None if it cannot run)."""
    from fmu_surrogate.identify.linear.init.orientation import detect_orientation

    try:
        return detect_orientation(exps)
    except (ValueError, np.linalg.LinAlgError):
        return None


def pad_parameters(p: dict[str, Array], n: int) -> dict[str, Array]:
    """Parameters of order r extended to order n by decoupled states (see ``pad_states``).

    ``J`` zero-padded (bitwise skew), ``R`` with a damped block, ``Q`` with ``q I`` (``q`` the
    core's storage scale), ``B`` and ``x0`` with zeros: the output is unchanged.
    """
    pm = PassiveModel(p["J"], p["R"], p["Q"], p["B"], p["x0"], 0.0, 0.0, 0.0)
    out = pad_states(pm, n)
    r = p["J"].shape[0]
    Q = out.Q.copy()
    Q[r:, r:] *= float(p["Q"][0, 0]) if r else 1.0
    return {"J": out.J, "R": out.R, "Q": Q, "B": out.B, "x0": out.x0}


def core_applicable(names: tuple[str, ...], Q_fixed: Array) -> bool:
    """Whether the refinement may run on the identified states only: the fixed storage is a
    multiple of the identity (padded states then stay decoupled in its coordinates)."""
    if "Q" in names:
        return True
    q = Q_fixed[0, 0]
    return bool(q > 0 and np.array_equal(Q_fixed, q * np.eye(Q_fixed.shape[0])))


def coupled_start(p: dict[str, Array], r: int, scale: float, seed: int) -> dict[str, Array]:
    """The padded model of order n with its added states weakly coupled to the first r.

    At the padded model the added states are decoupled and unobservable: the output does not
    depend on their couplings to first order (a stationary point of the cost in those
    directions).  Couplings ``J[:r, r:] = −J[r:, :r]ᵀ`` and input columns ``B[r:]`` of size
    ``scale`` (normal random numbers, ``seed``) give the refinement a descent direction into
    them; J stays bitwise skew.
    """
    rng = np.random.default_rng(seed)
    n = p["J"].shape[0]
    J, B = p["J"].copy(), p["B"].copy()
    c = scale * rng.standard_normal((r, n - r))
    J[:r, r:] += c
    J[r:, :r] = -J[:r, r:].T
    B[r:] += scale * rng.standard_normal((n - r, B.shape[1]))
    return dict(p, J=J, B=B)
