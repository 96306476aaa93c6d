"""The parameters of a :class:`~fmu_surrogate.ph.NonlinearPH` as one vector, structure by
construction.

Coordinates.  The linear fit is brought to energy coordinates first: with ``Q = C Cᵀ``
(Cholesky) the state ``x̃ = Cᵀx`` has ``H = ½|x̃|²`` and ``J̃ = CᵀJC``, ``R̃ = CᵀRC``,
``G̃ = CᵀG``, ``P̃ = CᵀP`` (:func:`energy_coordinates`).  ``Q = I`` is then a choice of
coordinates, not a restriction (any ``Q ≻ 0`` is reached by a change of state), which removes
the redundancy of fitting ``Q`` next to ``J``, ``R``, ``G``.

The vector ``θ`` holds, in this order (:class:`Layout`):

* ``J = U − Uᵀ`` from the strict upper triangle ``U`` (skew for every value);
* a square factor ``L`` with ``W₀ = L Lᵀ`` (``W₀ = [[R₀, P], [Pᵀ, S]]`` with a feedthrough, else
  ``R₀`` alone): PSD for every value;
* ``G``; with a feedthrough the strict upper triangle of ``N`` (``N = V − Vᵀ``);
* per ridge of the energy its weight ``α_k ≥ 0`` and direction ``w_k`` (a periodic ridge holds
  ``σ_k = α_k |w_k|² ∈ [0, 1]`` instead of ``α_k``: its energy stays bounded below, ``I −
  σ_k ŵ_k ŵ_kᵀ ⪰ 0``, for every value in the box; the fit has at most one), then per ridge its
  shift ``c_k`` (a preload, :class:`~fmu_surrogate.ph.ConvexEffort`: a part at rest under a
  static load; fixed at 0 for a periodic ridge);
* per dissipation term its gain ``β_j ≥ 0``, direction ``m_j``, exponent ``p_j``, the
  logarithm of its smoothing ``δ_j`` (``δ_j > 0`` for every value: where the law bends) and
  its asymmetry ``a_j ∈ [−1, 1]`` (rebound against compression; a box of the optimiser); a
  ``"contact"`` ridge (a gap ridge whose contact has a damper) adds a term after the others,
  then per such term its gate: direction ``g_j``, shift ``e_j`` and gain ``κ_j ≥ 0``
  (:class:`~fmu_surrogate.ph.PowerDissipation`: the damper limited by the contact's force);
* the same per term of the nonlinear feedthrough ``S_nl(u)`` (directions in the port space);
* the initial state ``x0`` shared by all experiments (when it is learned);
* the measured outputs' ``y = C_m x + K_m z(x) + D_m u + C_d ẋ`` (outputs that are not
  conjugate to a port: a position reads the state, a spring's force its effort, an
  acceleration the rate of a momentum, the damper's force with it);
* per term of the static law of the modulating inputs (:mod:`.input_law`) its scale ``a_k`` and
  offset ``b_k``, then the law's gains ``C`` (one row per external output);
* the free initial states of the shooting segments.

``α ≥ 0`` and ``β ≥ 0`` are box constraints of the optimiser (its active set holds them, so
every iterate is admissible and the terms can start at exactly zero with a nonzero gradient —
a smooth map onto ``[0, ∞)`` such as ``softplus`` or a square cannot start at zero and move).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.errors import FmuSurrogateError
from fmu_surrogate.ph import ConvexEffort, LinearPH, NonlinearPH, PowerDissipation
from fmu_surrogate.ph.efforts.convex import RIDGE_KINDS

Array = NDArray[np.float64]

class NonlinearFitError(FmuSurrogateError, ValueError):
    """Settings or data the nonlinear fit cannot work with; the message says the fix."""


#: the ridge kinds of a fit: the energy's, and ``"contact"``, a gap ridge whose contact has a
#: damper limited by its force (module doc)
FIT_KINDS = (*RIDGE_KINDS, "contact")

#: bounds of the dissipation exponents p (force ~ |s|^(1+p) for |s| ≫ δ): from a saturating
#: law (p = −1: force β s / √(s² + δ²), friction or a valve that saturates at β) to quartic
EXPONENT_BOUNDS = (-1.0, 3.0)
#: bounds of the smoothing δ of a term, relative to its argument's spread (directions start at
#: unit spread): from a near-corner (dry friction) to a law that bends outside the data
SMOOTHING_BOUNDS = (1e-4, 1e2)


@dataclass(frozen=True)
class Layout:
    """Sizes and slices of ``θ`` (module doc).

    Parameters
    ----------
    n, m : int
        States and ports.
    kinds : tuple of str
        Ridge kinds of the energy (:data:`FIT_KINDS`).
    n_dissipation : int
        Number of power-law dissipation terms (besides the contacts' dampers).
    feedthrough : bool
        Whether ``P, S, N`` are fitted.
    n_shoot : int
        Number of free shooting states.
    n_port_dissipation : int
        Number of terms of the nonlinear feedthrough ``S_nl(u)``.
    learn_x0 : bool
        Whether the experiments' common initial state is a parameter.
    n_measured : int
        Number of measured outputs ``C_m x + K_m z(x) + D_m u + C_d ẋ``.
    n_law : int
        Number of terms of the static law of the modulating inputs.
    n_outputs : int
        Number of external outputs (the rows of the law's gains).
    """

    n: int
    m: int
    kinds: tuple[str, ...]
    n_dissipation: int
    feedthrough: bool
    n_shoot: int
    n_port_dissipation: int = 0
    learn_x0: bool = False
    n_measured: int = 0
    n_law: int = 0
    n_outputs: int = 0

    def __post_init__(self) -> None:
        if self.kinds.count("periodic") > 1:
            raise NonlinearFitError(
                f"ridges {list(self.kinds)} hold {self.kinds.count('periodic')} periodic ridges; "
                f"the fit takes one (its share of the quadratic form, σ ∈ [0, 1], keeps the "
                f"energy bounded below; two could take more than the form holds).")

    @property
    def n_gated(self) -> int:
        """Number of the contacts' dampers: the last dissipation terms, one per ``"contact"``
        ridge."""
        return self.kinds.count("contact")

    @property
    def effort_kinds(self) -> tuple[str, ...]:
        """The ridge kinds of the energy (:data:`~fmu_surrogate.ph.efforts.convex.RIDGE_KINDS`:
        a contact's ridge is a gap ridge)."""
        return tuple("gap" if k == "contact" else k for k in self.kinds)

    @property
    def blocks(self) -> list[tuple[str, tuple[int, ...]]]:
        """``(name, shape)`` of each block, in order."""
        n, m, K, Dg = self.n, self.m, len(self.kinds), self.n_gated
        D = self.n_dissipation + Dg
        w = n + m if self.feedthrough else n
        out = [("U", (n * (n - 1) // 2,)), ("L", (w, w)), ("G", (n, m))]
        if self.feedthrough:
            out.append(("V", (m * (m - 1) // 2,)))
        Dp, k = self.n_port_dissipation, self.n_measured
        out += [("alpha", (K,)), ("w", (K, n)), ("rc", (K,)), ("beta", (D,)), ("mdir", (D, n)),
                ("p", (D,)),
                ("ld", (D,)), ("asym", (D,)), ("gdir", (Dg, n)), ("gshift", (Dg,)),
                ("gkappa", (Dg,)), ("pbeta", (Dp,)), ("pdir", (Dp, m)), ("pp", (Dp,)),
                ("pld", (Dp,)), ("pasym", (Dp,)),
                ("x0", (n if self.learn_x0 else 0,)), ("Cm", (k, n)), ("Dm", (k, m)),
                ("Km", (k, n)), ("Cd", (k, n)),
                ("la", (self.n_law,)), ("lb", (self.n_law,)),
                ("lC", (self.n_outputs if self.n_law else 0, self.n_law)),
                ("x", (self.n_shoot, n))]
        return out

    def slices(self) -> dict[str, tuple[slice, tuple[int, ...]]]:
        """``name -> (slice of θ, shape)``."""
        out, k = {}, 0
        for name, shape in self.blocks:
            size = int(np.prod(shape))
            out[name] = (slice(k, k + size), shape)
            k += size
        return out

    @property
    def size(self) -> int:
        """Length of ``θ``."""
        return sum(int(np.prod(s)) for _, s in self.blocks)

    def unpack(self, theta):
        """``θ`` (numpy or torch, shape ``(..., size)``: leading axes are a batch of parameter
        vectors) as a dict of blocks (views, shapes ``(..., *block)``)."""
        lead = tuple(theta.shape[:-1])
        return {k: theta[..., s].reshape(lead + shape) for k, (s, shape) in self.slices().items()}

    def bounds(self) -> list[tuple[float | None, float | None]]:
        """The optimiser's bounds: ``α, β ≥ 0``, ``p`` in :data:`EXPONENT_BOUNDS`, ``log δ`` in the
        logarithms of :data:`SMOOTHING_BOUNDS`, ``a`` in ``[−1, 1]`` (also for the
        feedthrough's terms), the gates' ``κ ≥ 0``, the rest free."""
        b: list[tuple[float | None, float | None]] = [(None, None)] * self.size
        ld = (float(np.log(SMOOTHING_BOUNDS[0])), float(np.log(SMOOTHING_BOUNDS[1])))
        lims = {"alpha": (0.0, None), "beta": (0.0, None), "p": EXPONENT_BOUNDS, "ld": ld,
                "asym": (-1.0, 1.0), "gkappa": (0.0, None), "pbeta": (0.0, None),
                "pp": EXPONENT_BOUNDS, "pld": ld, "pasym": (-1.0, 1.0)}
        for name, (s, _) in self.slices().items():
            lim = lims.get(name)
            if lim is not None:
                b[s] = [lim] * (s.stop - s.start)
        a, c = self.slices()["alpha"][0].start, self.slices()["rc"][0].start
        for k in np.flatnonzero(self.periodic):  # the share σ of the quadratic form it takes
            b[a + k], b[c + k] = (0.0, 1.0), (0.0, 0.0)  # and no preload
        return b

    @property
    def periodic(self) -> NDArray[np.bool_]:
        """Which ridges are periodic: their ``α`` entry holds the share ``σ ∈ [0, 1]`` of the
        quadratic form they take along their direction, ``α = σ / |w|²`` (:func:`weights`)."""
        return np.array([k == "periodic" for k in self.kinds], dtype=bool)


def energy_coordinates(system: LinearPH, x0: Array) -> dict[str, Array]:
    """A linear pH system in coordinates with ``Q = I`` (module doc).

    Parameters
    ----------
    system : LinearPH
        With ``E = I``.
    x0 : ndarray, shape (n,)
        An initial state in the system's coordinates.

    Returns
    -------
    dict
        ``J, R, G, P, S, N`` and ``x0`` in energy coordinates, and ``C`` (``x̃ = Cᵀx``).
    """
    C = np.linalg.cholesky(system.Q)
    return {"J": C.T @ system.J @ C, "R": C.T @ system.R @ C, "G": C.T @ system.B,
            "P": C.T @ system.P, "S": system.S, "N": system.N, "x0": C.T @ x0, "C": C}


def _psd_factor(W: Array) -> Array:
    lam, V = np.linalg.eigh(0.5 * (W + W.T))
    return V * np.sqrt(np.clip(lam, 0.0, None))


def initial_vector(layout: Layout, lin: dict[str, Array], ridge_dirs: Array,
                   diss_dirs: Array, exponents: Array, shoot: Array,
                   port_dirs: Array | None = None, port_exponents: Array | None = None,
                   measured: tuple[Array, Array] | None = None,
                   smoothing: Array | None = None, law: Any = None,
                   read_effort: bool = False) -> Array:
    """``θ`` of the linear model: ridge weights and dissipation gains exactly zero.

    Parameters
    ----------
    layout : Layout
        The sizes.
    lin : dict
        :func:`energy_coordinates` of the linear fit.
    ridge_dirs : ndarray, shape (K, n)
        Initial ridge directions.
    diss_dirs : ndarray, shape (D, n)
        Initial dissipation directions (``D`` the terms of the layout, the contacts' dampers
        last).
    exponents : ndarray, shape (D,)
        Initial exponents.
    shoot : ndarray, shape (n_shoot, n)
        Initial free shooting states.
    port_dirs : ndarray, shape (Dp, m), optional
        Initial directions of the feedthrough's terms.
    port_exponents : ndarray, shape (Dp,), optional
        Their initial exponents.
    measured : (ndarray (k, n), ndarray (k, m)), optional
        Initial ``C_m, D_m`` of the measured outputs.
    smoothing : ndarray, shape (D + Dp,), optional
        Initial ``δ`` of the dissipation terms, then of the feedthrough's (default ``1e-3``).
    law : LawStart, optional
        The start of the static law's scales, offsets and gains (:mod:`.input_law`).
    read_effort : bool
        Whether the measured outputs start as ``K_m z(x)`` (``K_m = C_m``) instead of
        ``C_m x``.

    ``x0`` (when learned) starts at ``lin["x0"]``; the gates are set by :func:`contact_gates`.
    """
    n, m = layout.n, layout.m
    theta = np.zeros(layout.size)
    b = layout.unpack(theta)
    b["U"][:] = lin["J"][np.triu_indices(n, 1)]
    W = np.block([[lin["R"], lin["P"]], [lin["P"].T, lin["S"]]]) if layout.feedthrough \
        else lin["R"]
    b["L"][:] = _psd_factor(W)
    b["G"][:] = lin["G"]
    if layout.feedthrough:
        b["V"][:] = lin["N"][np.triu_indices(m, 1)]
    b["w"][:] = ridge_dirs
    b["mdir"][:] = diss_dirs
    b["p"][:] = exponents
    D = layout.n_dissipation + layout.n_gated
    delta = np.full(D + layout.n_port_dissipation, 1e-3) if smoothing is None \
        else np.asarray(smoothing, dtype=float)
    b["ld"][:] = np.log(delta[:D])
    if layout.n_port_dissipation:
        b["pdir"][:] = port_dirs
        b["pp"][:] = port_exponents
        b["pld"][:] = np.log(delta[D:])
    if layout.learn_x0:
        b["x0"][:] = lin["x0"]
    if layout.n_measured:  # from the state, or from the effort (the same at the start: z = x)
        b["Km" if read_effort else "Cm"][:], b["Dm"][:] = measured
    if layout.n_law:
        b["la"][:], b["lb"][:], b["lC"][:] = law.scale, law.offset, law.C
    b["x"][:] = shoot
    return theta


def structure(layout: Layout, b: dict, xp) -> dict:
    """``J, W₀, G, N`` from the blocks (``xp`` is numpy or torch; torch blocks may carry
    leading batch axes); skew/PSD by construction."""
    n, m = layout.n, layout.m
    U = _upper(n, b["U"], xp)
    out = {"J": U - U.swapaxes(-1, -2), "W": b["L"] @ b["L"].swapaxes(-1, -2), "G": b["G"]}
    if layout.feedthrough:
        V = _upper(m, b["V"], xp)
        out["N"] = V - V.swapaxes(-1, -2)
    return out


def weights(layout: Layout, b: dict, xp: Any) -> Any:
    """The ridges' weights ``α`` (..., K) from the blocks: ``σ / |w|²`` for a periodic ridge
    (:attr:`Layout.periodic`), the ``alpha`` entry for the others (``xp`` numpy or torch)."""
    per = layout.periodic
    if not per.any():
        return b["alpha"]
    alpha, w = b["alpha"], b["w"]
    scaled = alpha / (w * w).sum(-1)
    return xp.where(xp.asarray(per) if xp is np else xp.as_tensor(per), scaled, alpha)


def _upper(n: int, values: Any, xp: Any) -> Any:
    """The ``n × n`` matrix with ``values`` in its strict upper triangle, row by row (in torch
    a product with a fixed 0/1 matrix, for a batch ``(..., n(n−1)/2)`` of values too)."""
    iu = np.triu_indices(n, 1)
    if xp is np:
        U = np.zeros((n, n))
        U[iu] = values
        return U
    E = np.zeros((n * n, iu[0].size))
    E[iu[0] * n + iu[1], np.arange(iu[0].size)] = 1.0
    return (values @ xp.as_tensor(E.T, dtype=values.dtype)).reshape(
        tuple(values.shape[:-1]) + (n, n))


def to_system(layout: Layout, theta: Array, names: dict | None = None) -> NonlinearPH:
    """The :class:`~fmu_surrogate.ph.NonlinearPH` of ``θ`` (energy coordinates, ``Q = I``).

    Parameters
    ----------
    layout : Layout
        The sizes.
    theta : ndarray
        The parameters (admissible: ``α, β ≥ 0``).
    names : dict, optional
        ``input_names``, ``output_names`` keywords.
    """
    n = layout.n
    b = layout.unpack(np.asarray(theta, dtype=float))
    st = structure(layout, b, np)
    W = st["W"]
    # sensor ports: a measured output K_m z(x) is the output of a port whose input is held at
    # zero (:func:`sensor_rows`): a column of G, no feedthrough, no power exchanged
    K = np.asarray(b["Km"])[sensor_rows(b)]
    s = K.shape[0]
    G = np.hstack([st["G"], K.T])
    fw = {}
    if layout.feedthrough:
        m = layout.m
        P = np.hstack([W[:n, n:], np.zeros((n, s))])
        S, N = np.zeros((m + s, m + s)), np.zeros((m + s, m + s))
        S[:m, :m], N[:m, :m] = W[n:, n:], st["N"]
        fw = {"P": P, "S": S, "N": N}
    # terms at a gain of exactly zero (on their bound, or dropped by pruning.prune_terms) add
    # nothing: left out, so that simulations and exported FMUs do not evaluate them
    ron = b["alpha"] != 0
    effort = ConvexEffort(np.eye(n), tuple(k for k, keep in zip(layout.effort_kinds, ron)
                                           if keep),
                          weights(layout, b, np)[ron], b["w"][ron], b["rc"][ron])
    on, pon = b["beta"] != 0, b["pbeta"] != 0
    D, Dg = layout.n_dissipation, layout.n_gated
    g, e, k = np.zeros((D + Dg, n)), np.zeros(D + Dg), np.full(D + Dg, np.inf)
    g[D:], e[D:], k[D:] = b["gdir"], b["gshift"], b["gkappa"]
    diss = PowerDissipation(b["mdir"][on], b["beta"][on], b["p"][on], np.exp(b["ld"][on]),
                            b["asym"][on], (g[on], e[on], k[on]))
    pdir = np.hstack([b["pdir"][pon], np.zeros((int(np.count_nonzero(pon)), s))])
    port = PowerDissipation(pdir, b["pbeta"][pon], b["pp"][pon], np.exp(b["pld"][pon]),
                            b["pasym"][pon])
    return NonlinearPH(st["J"], W[:n, :n], G, effort, diss, port_dissipation=port, **fw,
                       **(names or {}))


def contact_gates(layout: Layout, theta: Array, floor: float) -> Array:
    """``θ`` with the gate of each contact's damper on its ridge: ``g = w``, ``e = c`` and
    ``κ = α|w| / (1 + α|w|²)``, at least ``floor``.

    With ``Q = I`` beyond the stop ``|wᵀz + c| − 1 = (|wᵀx + c| − 1)(1 + α|w|²)`` (the ridge's
    own effort along ``w``), so ``κ`` makes the gate's limit the ridge's force ``α(|s| − 1)|w|``:
    Modelica's ``ElastoGap``, whose damping force never exceeds its contact spring's.  The floor
    keeps the damper's gain a gradient where the ridge has no weight yet.

    Parameters
    ----------
    layout : Layout
        The sizes.
    theta : ndarray
        The parameters.
    floor : float
        The least ``κ``.
    """
    out = np.array(theta, dtype=float)
    b = layout.unpack(out)
    ks = [i for i, kind in enumerate(layout.kinds) if kind == "contact"]
    alpha = weights(layout, b, np)
    for j, k in enumerate(ks):
        w = b["w"][k]
        a, w2 = float(alpha[k]), float(w @ w)
        b["gdir"][j], b["gshift"][j] = w, b["rc"][k]
        b["gkappa"][j] = max(a * np.sqrt(w2) / (1.0 + a * w2), floor)
    return out


def sensor_rows(b: dict) -> Array:
    """The measured outputs that read the effort (a row of ``K_m`` not all zero): each becomes a
    sensor port of the fitted core, in this order (:func:`to_system`,
    :meth:`.start.LinearStart.ports_for`)."""
    return np.flatnonzero(np.any(np.asarray(b["Km"]) != 0, axis=1))


def check_settings(est: Any) -> None:
    """Raise a :class:`NonlinearFitError` naming the fix for settings of ``est`` (a
    :class:`~fmu_surrogate.identify.NonlinearPHIdentifier`) no fit can work with."""
    bad = [k for k in est.ridges if k not in FIT_KINDS]
    if bad:
        raise NonlinearFitError(f"ridges {bad} unknown; use {FIT_KINDS}.")
    if (est.n_states is not None and int(est.n_states) < 1) or \
            int(est.n_dissipation) < 0 or int(est.max_iter) < 0 or \
            (est.max_time is not None and not float(est.max_time) >= 0):
        raise NonlinearFitError("n_states must be >= 1 (or None), n_dissipation, max_iter "
                                "and max_time >= 0.")
    npd = est.n_port_dissipation
    if not (npd == "auto" or (isinstance(npd, (int, np.integer)) and int(npd) >= 0)):
        raise NonlinearFitError(f"n_port_dissipation must be 'auto' or an int >= 0: {npd!r}.")
    if not (est.delayed_feedthrough == "auto"
            or isinstance(est.delayed_feedthrough, (bool, np.bool_))):
        raise NonlinearFitError(f"delayed_feedthrough must be 'auto', True or False, got "
                                f"{est.delayed_feedthrough!r}.")
    if est.segment_length is not None and int(est.segment_length) < 1:
        raise NonlinearFitError(f"segment_length must be >= 1 or None: {est.segment_length}.")
