"""An exported NonlinearPH with a contact damper (a gated dissipation term, ElastoGap's damping
limited by the contact force) steps as fmu_surrogate.ph.simulate does, to round-off."""

import numpy as np
import pytest

from fmu_surrogate.export import export_fmu
from fmu_surrogate.ph import ConvexEffort, NonlinearPH, PowerDissipation, simulate

HC, STEP, T_END = 0.05, 0.01, 3.0
G, KC = 0.4, 30.0  # the stops at q = ±G, the contact stiffness
KAPPA = KC * G / (1.0 + KC)  # the gate gain whose limit f is the contact force KC (|q| − G)₊


def end_stops(gated=True):
    """A mass on a unit spring between end stops at ``q = ±0.4`` (a gap ridge, ``k_c = 30``,
    ``z₁ = q + k_c (|q| − 0.4)₊ sign q``, ``z₂ = v``), a light p = 1/3 damper everywhere and the
    stops' damper ``c = 3 (1 + 0.3 σ)`` (rebound and compression differ) on the velocity, gated
    by ``r = z₁/0.4``: ``|r| > 1`` in contact, ``f = κ (|r| − 1)₊ = k_c (|q| − 0.4)₊`` — the
    damper's force never exceeds the contact spring's (``gated=False``: it acts everywhere)."""
    eff = ConvexEffort(np.eye(2), ["gap"], [KC * G * G], [[1 / G, 0.0]])
    gates = ([[0.0, 0.0], [1 / G, 0.0]], [0.0, 0.0], [np.inf, KAPPA]) if gated else None
    diss = PowerDissipation([[0.0, 1.0], [0.0, 1.0]], [0.3, 3.0], [1 / 3, 0.0], [1e-2, 1e-2],
                            [0.0, 0.3], gates)
    return NonlinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, 0.05]), [[0.0], [1.0]], eff,
                       diss, input_names=["F"], output_names=["v"])


def _forcing():
    """A force of amplitude 4 on the communication grid (drives the mass into both stops)."""
    t = np.arange(0.0, T_END + HC / 2, HC)
    U = 4.0 * np.sin(2.5 * t)[:, None]
    sig = np.zeros(t.size, dtype=[("time", float), ("F", float)])
    sig["time"], sig["F"] = t, U[:, 0]
    return t, U, sig


def _simulate(sysm, t, U):
    """ph.simulate on the internal grid with the input held over each communication step."""
    k = round(HC / STEP)
    tf = np.linspace(t[0], t[-1], (t.size - 1) * k + 1)
    Uf = np.concatenate([np.repeat(U[:-1], k, axis=0), U[-1:]])
    return simulate(sysm, tf, Uf, np.zeros(2), hold="zoh"), k


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max()


def test_the_contact_damper_engages_in_contact_only_and_is_limited_there():
    """The reference trajectory takes every branch of the gate: free flight between the stops
    (no damping force), contact with the limit holding (as the contact builds up) and contact
    without it (deeper in, the damper's own law)."""
    sysm = end_stops()
    t, U, _ = _forcing()
    tr, _ = _simulate(sysm, t, U)
    d = sysm.nonlinear_dissipation
    q, z = tr.x[:, 0], tr.z
    assert ((np.abs(q[:-1]) > G) != (np.abs(q[1:]) > G)).sum() >= 4  # into both stops, out again
    v = z[:, 1]
    c = 3.0 * (1.0 + 0.3 * v / np.sqrt(v * v + 1e-4))  # the stops' damper, unlimited (p = 0)
    f = KC * np.maximum(np.abs(q) - G, 0.0)  # the contact force, by hand
    contact = np.abs(q) > G
    held = contact & (np.abs(c * v) > f)
    assert (~contact).sum() > 50 and held.sum() > 10 and (contact & ~held).sum() > 10
    # its force: 0 between the stops, clipped to ±f in contact (the light damper's is the rest:
    # the force PowerDissipation computes, against the two laws written out here)
    light = 0.3 * (v * v + 1e-4) ** (1 / 6) * v
    ref = light + np.clip(c * v, -f, f)
    # z₁ reads the contact force through q + k_c (|q| − G)₊: f from z is the same to round-off
    # (measured 5.0e-16 relative; the clip is continuous, so a branch taken differently where
    # |c v| and f agree to round-off changes the force by round-off only)
    assert _rel(d.force(z)[:, 1], ref) < 1e-12
    assert np.all(d.force(z)[:, 0] == 0.0)


@pytest.mark.parametrize("version", [2, 3])
def test_a_mass_between_damped_end_stops_steps_as_ph_simulate(tmp_path, version):
    from fmpy import simulate_fmu

    sysm = end_stops()
    fmu = export_fmu(sysm, tmp_path / f"damped_stops{version}.fmu", step=STEP,
                     fmi_version=version, x0=np.zeros(2))
    t, U, sig = _forcing()
    r = simulate_fmu(str(fmu), stop_time=T_END, output_interval=HC, input=sig,
                     output=["x1", "x2", "v", "H", "energy_residual"])
    tr, k = _simulate(sysm, t, U)
    X = np.column_stack([r["x1"], r["x2"]])
    # the same AVF steps and semismooth Newton iterations (the clip's and the gate's kinks
    # taken as in numpy: fmin/fmax/fabs and ?: in C) in another summation order, pow's last bit
    # apart (numpy's SIMD pow vs libm's): measured 1.4e-15 (x, v) and 1.2e-15 (H); 1e-12
    # is the Newton tolerance of both
    assert _rel(X, tr.x[::k]) < 1e-12
    assert _rel(r["v"], tr.x[::k, 1]) < 1e-12
    assert _rel(r["H"], tr.H[::k]) < 1e-12
    # the energy residual is the gap's 4-node quadrature across a stop (not round-off, see
    # ConvexEffort's doc) and the FMU's is ph.simulate's to round-off of its sums (measured
    # 3.8e-16 of the energy scale apart)
    assert abs(tr.energy_residual) > 1e-8 * tr.energy_scale
    assert r["energy_residual"][-1] == pytest.approx(tr.energy_residual,
                                                     abs=1e-12 * tr.energy_scale)
    # the gate matters: the damper acting everywhere gives another motion (measured 0.92)
    free, _ = _simulate(end_stops(gated=False), t, U)
    assert _rel(free.x[::k], X) > 0.1
