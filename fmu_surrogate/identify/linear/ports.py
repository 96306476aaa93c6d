"""Ports of a linear pH fit: orientation of the power pairs, and why a fit is refused.

Orientation
-----------
A power pair ``(u_i, y_i)`` of an FMU may follow either convention: power *into* the component
(``y_iu_i`` is the power it receives — the pH convention) or power *out of* it (the FMU's input is
the force the component exerts on its neighbour, say).  The pH port of an "out" pair is
``u_ph = −u_ext`` (contract: ``Tu[i, j] = −1``, ``Ty[j, i] = 1``).  Detected from the energy
the component absorbs from rest (:func:`orientation_from_energy`; for records that do not start
at rest, from the forced response of an unstructured model,
:mod:`~fmu_surrogate.identify.linear.init.orientation`); overridden by the ``ports`` setting
(:func:`parse_orientations`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.errors import LinearIdentificationError

Array = NDArray[np.float64]

#: Orientation names of a power pair.
ORIENTATIONS = ("in", "out")
#: Tolerance of the passivity test on the cumulative energy, relative to its magnitude
#: (round-off and the quadrature of sampled data; measured ≤ 1e-9 on exact data).
ENERGY_RTOL = 1e-6
#: Orientation detection tries 2^m sign patterns up to this many power pairs.
MAX_ORIENTATION_PORTS = 12
#: Outputs at t = 0 below this fraction of their largest magnitude (or within 3σ of the
#: noise) count as "at rest".
AT_REST_RTOL = 1e-6


def inputs_start_away(inputs: Sequence[Any]) -> bool:
    """Whether some record's first inputs are away from zero: ``|u(0)| > AT_REST_RTOL · max |u|``
    for an input, its largest magnitude over all records.

    Parameters
    ----------
    inputs : sequence of array_like, shape (K, m)
        The records' inputs.

    Returns
    -------
    bool
    """
    us = [np.abs(np.asarray(u, dtype=float)) for u in inputs]
    scale = np.max([u.max(axis=0) for u in us], axis=0)
    return bool(np.any([u[0] > AT_REST_RTOL * scale for u in us]))


def starts_at_rest(exps: Sequence[Any]) -> bool:
    """Whether every experiment starts at rest: every output at ``t = 0`` is ~0 —
    ``|y(0)| ≤ max(AT_REST_RTOL · max |y|, 3σ)`` with σ the noise level estimated from second
    differences (``std(Δ²y)/√6``; smooth signals have ``Δ²y ≈ 0``, white noise ``√6 σ``).

    Parameters
    ----------
    exps : sequence of Experiment

    Returns
    -------
    bool
    """
    for e in exps:
        y = np.asarray(e.y)
        scale = np.abs(y).max(axis=0)
        sigma = np.std(np.diff(y, 2, axis=0), axis=0) / np.sqrt(6.0) if y.shape[0] > 3 else 0.0
        if np.any(np.abs(y[0]) > np.maximum(AT_REST_RTOL * scale, 3.0 * sigma) + 1e-300):
            return False
    return True


def cumulative_energy(t: Array, u: Array, y: Array, hold: str) -> Array:
    """``∫_0^t y_i u_i dτ`` per column at every sample, for inputs held as the data say.

    Zero-order hold: ``Σ_k u_k (y_k + y_{k+1})/2 · h_k`` (the input is constant over each step, the
    output is integrated by the trapezoid rule); linear hold: the trapezoid rule on ``u·y``.
    The trapezoid rule on ``u·y`` with held inputs errs by O(h) per jump of u — enough to flip
    the sign of the small net energy of a nearly lossless component (measured on the MSD
    chain's data).

    Parameters
    ----------
    t : ndarray, shape (K,)
    u, y : ndarray, shape (K, m)
    hold : {"zoh", "linear"}

    Returns
    -------
    ndarray, shape (K, m)
    """
    dt = np.diff(t)[:, None]
    if hold == "zoh":
        inc = u[:-1] * 0.5 * (y[:-1] + y[1:]) * dt
    else:
        p = u * y
        inc = 0.5 * (p[:-1] + p[1:]) * dt
    out = np.zeros_like(u, dtype=float)
    np.cumsum(inc, axis=0, out=out[1:])
    return out


def energy(t: Array, u: Array, y: Array, hold: str) -> Array:
    """``∫ y_i u_i dt`` per column over the record (:func:`cumulative_energy` at the end).

    Parameters
    ----------
    t : ndarray, shape (K,)
    u, y : ndarray, shape (K, m)
    hold : {"zoh", "linear"}

    Returns
    -------
    ndarray, shape (m,)
    """
    return cumulative_energy(t, u, y, hold)[-1]


def orientation_from_energy(energies: Sequence[Array]) -> Array:
    """The orientation closest to the pH convention under which the data are passive.

    A passive component supplied from rest has absorbed a non-negative energy at every instant,
    ``Σ_i s_i ∫_0^t y_i u_i dτ ≥ 0`` for all ``t`` (``s_i = ±1`` the orientation of pair i).
    The sign vectors are tried by increasing number of "out" ports; the first under which the
    cumulative energy of every record stays above ``−ENERGY_RTOL`` times its largest magnitude
    wins.  When none does (noise, data not from rest), the one with the largest relative
    minimum.  Per port, "the sign of ``∫ y_iu_i dt``" is not enough: a passive multi-port may
    deliver energy through one port what it takes through another.

    Parameters
    ----------
    energies : sequence of ndarray, shape (K_e, m)
        Cumulative per-port energies of the records (:func:`cumulative_energy`).

    Returns
    -------
    ndarray, shape (m,)
        ``+1`` (power in) or ``−1`` (power out) per pair.
    """
    return scored_orientation(energies)[0]


def scored_orientation(energies: Sequence[Array]) -> tuple[Array, float]:
    """:func:`orientation_from_energy` with its score: the smallest cumulative energy of the
    records under that orientation relative to its largest magnitude, in ``[−1, 1]``.

    ``≥ −ENERGY_RTOL``: the records are passive under it.  Near ``−1``: under every orientation
    the energy dips as far below zero as it rises above (a model's response that both takes and
    gives large energies through the same port), which no orientation of a passive component
    from rest explains: the test says nothing.

    Parameters
    ----------
    energies : sequence of ndarray, shape (K_e, m)

    Returns
    -------
    (ndarray of shape (m,), float)
    """
    import itertools

    m = energies[0].shape[1]
    if m > MAX_ORIENTATION_PORTS:
        raise LinearIdentificationError(
            f"detecting the orientation of {m} power pairs tries 2^{m} sign patterns; give "
            f"them with ports=[…] (CLI --port …,power=in|out) for more than "
            f"{MAX_ORIENTATION_PORTS} pairs.")
    best, best_score = np.ones(m), -np.inf
    for k in range(m + 1):
        for flips in itertools.combinations(range(m), k):
            s = np.ones(m)
            s[list(flips)] = -1.0
            score = min(float((E @ s).min()) / max(float(np.abs(E).sum(axis=1).max()), 1e-300)
                        for E in energies)
            if score >= -ENERGY_RTOL:
                return s, score
            if score > best_score:
                best, best_score = s, score
    return best, best_score


def supplied_energy(exps: Sequence[Any]) -> Array:
    """Energy supplied through each port, ``Σ_runs ∫ y_i u_i dt`` (:func:`energy`).

    Parameters
    ----------
    exps : sequence of Experiment
        With as many output as input columns (power pairs).

    Returns
    -------
    ndarray, shape (m,)
    """
    return sum(energy(np.asarray(e.t), np.asarray(e.u), np.asarray(e.y), e.hold) for e in exps)


def energy_orientation(exps: Sequence[Any]) -> Array:
    """:func:`orientation_from_energy` of the records themselves (data from rest).

    Parameters
    ----------
    exps : sequence of Experiment

    Returns
    -------
    ndarray, shape (m,)
    """
    return orientation_from_energy([cumulative_energy(
        np.asarray(e.t), np.asarray(e.u), np.asarray(e.y), e.hold) for e in exps])


def parse_orientations(ports: Any, m: int) -> Array | None:
    """Orientation signs from the ``ports`` setting (None: detect from data).

    Parameters
    ----------
    ports : None, str, sequence of str or mapping
        ``None`` or ``"auto"``: detect; ``"in"``/``"out"`` for every pair; a sequence of
        ``"in"``/``"out"`` (or ``None`` = detect) per pair, or a mapping
        ``{pair index: "in" | "out"}``.
    m : int
        Number of power pairs.

    Returns
    -------
    ndarray of shape (m,) with entries ±1 or NaN (detect), or None when nothing is given.
    """
    if ports is None or ports == "auto":
        return None
    if isinstance(ports, str):
        ports = [ports] * m
    if isinstance(ports, Mapping):
        items = [ports.get(i) for i in range(m)]
        extra = [k for k in ports if not (isinstance(k, int) and 0 <= k < m)]
        if extra:
            raise LinearIdentificationError(
                f"ports has keys {extra} that are not power-pair indices 0..{m - 1}; key the "
                "orientations by pair index.")
    else:
        items = list(ports)
    if len(items) != m:
        raise LinearIdentificationError(
            f"ports gives {len(items)} orientations for {m} power pairs; give one of "
            f"{ORIENTATIONS} (or None to detect it) per pair.")
    out = np.full(m, np.nan)
    for i, v in enumerate(items):
        if v is None:
            continue
        if v not in ORIENTATIONS:
            raise LinearIdentificationError(
                f"ports[{i}] = {v!r}: the orientation of a power pair is one of {ORIENTATIONS} "
                "('in': y·u is the power the component receives, 'out': the power it delivers)."
            )
        out[i] = 1.0 if v == "in" else -1.0
    return out


def parse_pairs(ports: Any, inputs: Sequence[str],
                outputs: Sequence[str]) -> list[tuple[int, int, str | None]] | None:
    """Power pairs named by the ``ports`` setting: ``[{"u": name, "y": name, "power": "in" |
    "out" | None}, …]`` (None: the setting names no pairs).

    Inputs in no pair are modulating inputs, outputs in no pair measured outputs.

    Parameters
    ----------
    ports : any
        The estimator's ``ports`` setting.
    inputs, outputs : sequence of str
        External variables of the data.

    Returns
    -------
    list of (input index, output index, orientation or None), or None
    """
    if ports is None or isinstance(ports, (str, Mapping)) or not all(
            isinstance(p, Mapping) for p in ports):
        return None
    out = []
    for k, p in enumerate(ports):
        u, y, power = p.get("u"), p.get("y"), p.get("power")
        if u not in inputs or y not in outputs:
            raise LinearIdentificationError(
                f"ports[{k}] pairs u={u!r} with y={y!r}, but the inputs are {list(inputs)} and "
                f"the outputs {list(outputs)}; name one of each (CLI --port u=NAME,y=NAME).")
        if power is not None and power not in ORIENTATIONS:
            raise LinearIdentificationError(
                f"ports[{k}]: power={power!r} must be one of {ORIENTATIONS} (or left out to "
                "detect it).")
        out.append((list(inputs).index(u), list(outputs).index(y), power))
    if len({i for i, _, _ in out}) != len(out) or len({o for _, o, _ in out}) != len(out):
        raise LinearIdentificationError("ports pairs an input or an output twice; each "
                                        "variable belongs to at most one power pair.")
    return out


def refusal(exps: Sequence[Any], reason: str, signs: Array | None = None) -> str:
    """The message of a refused initialisation: its likely cause and the fix.

    Checks, in this order: a port oriented "out" (``signs`` from the per-port passivity test when
    given, else a negative supplied energy), inputs with too little excitation (a constant input
    column), otherwise the model is not passive at any order the data support.

    Parameters
    ----------
    exps : sequence of Experiment
    reason : str
        The technical reason (kept at the end of the message).
    signs : ndarray, optional
        Orientation test of each port (−1: delivers power).
    """
    m = np.shape(exps[0].u)[1]
    if np.shape(exps[0].y)[1] == m:
        if signs is not None:
            out = [int(i) for i in np.flatnonzero(np.asarray(signs) < 0)]
            why = "driven alone from rest, the port delivers energy"
        else:
            supplied = supplied_energy(exps)
            out = [i for i in range(m) if supplied[i] < 0]
            why = "the supplied energy ∫ y·u dt is negative"
        if out:
            return (
                f"port(s) {out} deliver power in the data ({why}): their orientation is "
                "'out'; pass ports=['out', …] (CLI: --port u=NAME,y=NAME,power=out) or leave "
                f"ports=None to detect it. ({reason})"
            )
    u = np.concatenate([np.asarray(e.u) for e in exps])
    dev = np.abs(u - u.mean(axis=0)).max(axis=0)
    flat = [i for i in range(m) if dev[i] <= 1e-12 * max(float(np.abs(u[:, i]).max()), 1e-300)]
    if flat:
        return (
            f"input(s) {flat} are constant in the data: not enough excitation to identify "
            "their ports; harvest with a broadband input on them (e.g. --input NAME=prbs:…) or "
            f"declare them as constant sources. ({reason})"
        )
    return (
        "the data are not those of a passive system at any order they support (no positive "
        "definite storage Q); check the port orientation (ports=, CLI --port …,power=out), "
        f"the pairing of inputs and outputs (power pairs), or choose another order. ({reason})"
    )
