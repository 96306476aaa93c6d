"""The passivity score of an input-output channel: how far the data's transfer from an input to
an output is from positive real (the criterion that tells power pairs apart,
:mod:`fmu_surrogate.identify.linear.interface.pairing`).

Each diagonal entry of the transfer matrix of a passive multi-port is positive real
(``Re G_ii(jω) ≥ 0`` at every frequency, ``≤ 0`` for a port oriented "out"); the transfer between
an effort and a flow taken at different places is not.  The channel ``u → y`` of the
unstructured model of the data (order from the data, feedthrough, initial state and a constant
input column for offsets: :func:`~fmu_surrogate.identify.linear.init.order.select_order`) gets
the score ``max_s min_ω s Re G(jω) / max_{ω' ≥ ω} |G(jω')|`` over both orientations ``s = ±1``
on a logarithmic grid from the record length to the Nyquist frequency, with the residue of a
pole at the origin required to have the sign ``s``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fmu_surrogate.identify.linear.errors import LinearIdentificationError

Array = NDArray[np.float64]

__all__ = ["passivity_scores"]

#: Frequencies of the passivity score.
N_FREQUENCIES = 400
#: Poles below this fraction of the lowest frequency of the data count as at the origin.
INTEGRATOR_RTOL = 1e-3
#: The passivity score looks at frequencies where a channel's gain is within this factor of its
#: largest (the unstructured model is not trusted further down).
GAIN_RANGE = 1e-3


def passivity_scores(records: Sequence[Any], inputs: Sequence[str], outputs: Sequence[str],
                     pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], float]:
    """The passivity score of each candidate pair (module docstring), NaN when the data cannot
    give one (a constant input, non-uniform sampling, too short records).

    Parameters
    ----------
    records : sequence of (t, u, y, hold)
        Records with the columns of ``inputs`` and ``outputs``.
    inputs, outputs : sequence of str
        Column names.
    pairs : iterable of (input, output)

    Returns
    -------
    dict
        ``(u, y)`` → score in [−1, 1].
    """
    from fmu_surrogate.identify.linear.init.order import Record, select_order

    pairs = list(pairs)
    nan = {p: float("nan") for p in pairs}
    u_all = np.concatenate([np.asarray(r[1]) for r in records])
    varying = [j for j in range(u_all.shape[1])
               if np.ptp(u_all[:, j]) > 1e-12 * max(float(np.abs(u_all[:, j]).max()), 1e-300)]
    cols = [list(outputs).index(y) for y in dict.fromkeys(y for _, y in pairs)]
    recs = [Record(t, np.column_stack([np.asarray(u)[:, varying], np.ones(len(t))]),
                   np.asarray(y)[:, cols], h) for t, u, y, h in records]
    try:
        _sel, sm = select_order(recs, feedthrough=True)
    except (LinearIdentificationError, ValueError, np.linalg.LinAlgError):
        return nan
    if sm is None:  # a static map: least squares
        D = np.linalg.lstsq(np.concatenate([r.u for r in recs]),
                            np.concatenate([r.y for r in recs]), rcond=None)[0].T
        A, B, C = np.zeros((0, 0)), np.zeros((0, D.shape[1])), np.zeros((D.shape[0], 0))
        h, T = 1.0, 1.0
    else:
        A, B, C, D = sm.A, sm.B, sm.C, sm.D
        h = float(sm.h)
        T = max(float(r.t[-1] - r.t[0]) for r in recs)
    w = np.geomspace(2 * np.pi / T, np.pi / h, N_FREQUENCIES)
    n = A.shape[0]
    residue = _integrator_residues(A, B, C, w[0])
    # frequency response of every kept channel: C (jωI − A)⁻¹ B + D
    G = np.array([C @ np.linalg.solve(1j * wk * np.eye(n) - A, B) if n else
                  np.zeros((C.shape[0], B.shape[1]), complex) for wk in w]) + D[None]
    out = {}
    for u, y in pairs:
        i = list(inputs).index(u)
        if i not in varying:
            out[(u, y)] = float("nan")
            continue
        g = G[:, cols.index(list(outputs).index(y)), varying.index(i)]
        mag = np.abs(g)
        # Re G relative to the gain at and above each frequency (an integrator's gain at low
        # frequencies would hide the phase lag of a transfer mobility above its resonance)
        local = np.maximum.accumulate(mag[::-1])[::-1]
        keep = mag >= GAIN_RANGE * mag.max()
        if not keep.any() or mag.max() == 0:
            out[(u, y)] = float("nan")
            continue
        r = g.real[keep] / local[keep]
        res = residue[cols.index(list(outputs).index(y)), varying.index(i)] / mag.max() * w[0]
        out[(u, y)] = float(max(min(r.min(), res, 0.0) if res < 0 else r.min(),
                                min(-r.max(), -res, 0.0) if res > 0 else -r.max()))
    return out


def _integrator_residues(A: Array, B: Array, C: Array, w_min: float) -> Array:
    """Residues ``lim_{s→0} s G(s)`` of the model's poles at the origin (free masses, charges:
    poles far below the lowest frequency ``w_min`` of the data), one per channel.

    A positive-real channel has a positive residue there; the phase alone does not show it (a
    free two-mass chain's transfer mobility has ``Re G ≤ 0`` at every frequency, its negative
    is not passive because of the rigid-body mode's residue).
    """
    if A.shape[0] == 0:
        return np.zeros((C.shape[0], B.shape[1]))
    lam, V = np.linalg.eig(A)
    zero = np.abs(lam) <= INTEGRATOR_RTOL * w_min
    if not zero.any():
        return np.zeros((C.shape[0], B.shape[1]))
    W = np.linalg.inv(V)
    return np.real((C @ V[:, zero]) @ (W[zero] @ B))
