"""State-dependent dissipation: PSD at every state for every admissible parameter, exact
derivatives, and the power-law damper it stands for."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.ph import PowerDissipation, StructureError


def random_dissipation(rng, n=3, K=3, asymmetric=False):
    return PowerDissipation(rng.normal(size=(K, n)), rng.uniform(0, 2, K),
                            rng.uniform(-1.0, 2.5, K), rng.uniform(1e-3, 0.5, K),
                            rng.uniform(-1.0, 1.0, K) if asymmetric else None)


@pytest.mark.parametrize("asymmetric", [False, True])
def test_psd_at_random_states_and_parameters(asymmetric):
    rng = np.random.default_rng(0)
    for _ in range(20):
        d = random_dissipation(rng, asymmetric=asymmetric)
        z = 5 * rng.normal(size=(100, 3))
        R = d.matrix(z)
        # a sum of c_j m_j m_jᵀ with c_j ≥ 0: eigenvalues ≥ −round-off (eigvalsh ~1e-15 of ‖R‖)
        lam = np.linalg.eigvalsh(R)
        assert np.all(lam >= -1e-12 * np.abs(lam).max(axis=1, keepdims=True))
        assert np.all(d.coefficients(z) >= 0) and np.all(d.rate(z) >= 0)
        assert np.allclose(d.force(z), np.einsum("nij,nj->ni", R, z), rtol=1e-13, atol=1e-13)
        assert np.allclose(d.rate(z), np.einsum("ni,nij,nj->n", z, R, z), rtol=1e-12)


@pytest.mark.parametrize("asymmetric", [False, True])
def test_force_jacobian_matches_differences(asymmetric):
    rng = np.random.default_rng(1)
    d = random_dissipation(rng, asymmetric=asymmetric)
    z = rng.normal(size=(10, 3))
    e, I = 1e-6, np.eye(3)
    fd = np.stack([(d.force(z + e * I[k]) - d.force(z - e * I[k])) / (2 * e) for k in range(3)],
                  axis=2)
    Jf = d.force_jacobian(z)
    # central differences: relative error ~1e-9 here (the smallest δ is 1e-3, the curvature
    # scale of the law; measured 3e-8 at worst)
    assert np.abs(fd - Jf).max() <= 1e-6 * (1 + np.abs(Jf).max())


def test_power_law_damper_away_from_rest():
    """``β (v² + δ²)^(p/2) v`` is ``β sign(v)|v|^(1+p)`` for ``|v| ≫ δ``."""
    d = PowerDissipation([[1.0]], [0.7], [1 / 3], [1e-8])
    v = np.array([[-3.0], [0.5], [2.0]])
    ref = 0.7 * np.sign(v) * np.abs(v) ** (4 / 3)
    # relative deviation (p/2)(δ/v)² ≤ 1e-16
    assert np.allclose(d.force(v), ref, rtol=1e-14)


@pytest.mark.parametrize("kw, match", [
    ({"gains": [-1e-3]}, "gains must be >= 0"),
    ({"smoothing": [0.0]}, "smoothing values must be > 0"),
    ({"exponents": [np.inf]}, "finite"),
    ({"gains": [1.0, 2.0]}, "1 dissipation terms need 1 gains"),
    ({"asymmetry": [1.5]}, r"asymmetries must lie in \[-1, 1\]"),
    ({"asymmetry": [0.1, 0.2]}, "1 dissipation terms need 1 finite asymmetries"),
])
def test_inadmissible_parameters_are_refused(kw, match):
    args = {"directions": [[1.0, 0.0]], "gains": [1.0], "exponents": [0.5], "smoothing": [0.1]}
    args.update(kw)
    with pytest.raises(StructureError, match=match):
        PowerDissipation(**args)


@pytest.mark.parametrize("asymmetric", [False, True])
def test_dict_round_trip_is_exact(asymmetric):
    rng = np.random.default_rng(2)
    d = random_dissipation(rng, asymmetric=asymmetric)
    data = d.to_dict()
    # a symmetric law is written as version 1 (older readers load it), an asymmetric one as
    # version 2 (older readers refuse it rather than drop the asymmetries)
    assert data["version"] == (2 if asymmetric else 1) and ("asymmetry" in data) == asymmetric
    back = PowerDissipation.from_dict(data)
    z = rng.normal(size=(4, 3))
    assert np.array_equal(back.force(z), d.force(z))
    empty = PowerDissipation.empty(2)
    assert PowerDissipation.from_dict(empty.to_dict()).n_terms == 0


def test_asymmetric_law_differs_between_the_two_directions():
    """Rebound against compression: for ``|v| ≫ δ`` the force is ``β (1 ± a)|v|^(1+p)``, and
    ``a = ±1`` acts in one direction only."""
    d = PowerDissipation([[1.0], [1.0]], [2.0, 1.0], [1 / 3, 0.0], [1e-8, 1e-8], [0.5, -1.0])
    v = np.array([[-2.0], [3.0]])
    F = d.force(v)[:, 0]
    ref = 2.0 * (1 + 0.5 * np.sign(v[:, 0])) * np.sign(v[:, 0]) * np.abs(v[:, 0]) ** (4 / 3) \
        + 1.0 * (1 - np.sign(v[:, 0])) * v[:, 0]
    # relative deviations of order (δ/v)² ≤ 1e-16
    np.testing.assert_allclose(F, ref, rtol=1e-14)
    assert d.rate(v).min() > 0 and not d.is_symmetric


def gated_dissipation(rng, n=3):
    """Three terms, the last two with contact gates (one shifted), asymmetric laws."""
    g = np.vstack([np.zeros(n), rng.normal(size=(2, n)) * 2.0])
    return PowerDissipation(rng.normal(size=(3, n)), rng.uniform(0.5, 2, 3),
                            rng.uniform(-0.5, 1.0, 3), rng.uniform(1e-2, 0.5, 3),
                            rng.uniform(-0.8, 0.8, 3), (g, [0.0, 0.0, 0.3], [np.inf, 1.5, 0.4]))


def test_a_contacts_damper_is_modelicas_elastogap():
    """A mass's stop at ``q = 0.05`` with a contact spring 400 N/m and a damper 20 N·s/m: the
    damping force is ``clip(d v, −f_c, f_c)`` inside the contact, zero outside (the effort's
    first component the contact's force ``f_c``, the gate ``|f_c / 0.01 + 1| − 1``, κ = 0.01,
    an independent written-out formula)."""
    d = PowerDissipation([[0.0, 1.0]], [20.0], [0.0], [1e-3],
                         gates=([[100.0, 0.0]], [1.0], [0.01]))
    fc = np.array([0.0, 0.0, 2.0, 2.0, 2.0, 8.0])
    v = np.array([1.0, -0.5, 0.05, 0.5, -3.0, -0.2])
    z = np.column_stack([fc, v])
    ref = np.clip(20.0 * v, -fc, fc)
    # c = β (s² + δ²)^0 = β exactly; the limit the same f_c up to round-off of 100 f_c / 100
    np.testing.assert_allclose(d.force(z)[:, 1], ref, rtol=1e-14, atol=1e-15)
    assert d.force(z)[:, 0].tolist() == [0.0] * 6
    np.testing.assert_allclose(d.rate(z), ref * v, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(d.coefficients(z)[:, 0], [0, 0, 20, 4, 2 / 3, 20], rtol=1e-14)


def test_gated_terms_are_psd_and_differentiate():
    rng = np.random.default_rng(4)
    d = gated_dissipation(rng)
    z = 2 * rng.normal(size=(500, 3))
    s = z @ d.directions.T
    ungated = PowerDissipation(d.directions, d.gains, d.exponents, d.smoothing, d.asymmetry)
    unlimited = ungated.coefficients(z) * s
    limited = d.force(z) @ np.linalg.pinv(d.directions) - unlimited
    assert 50 < np.sum(np.abs(limited[:, 1:]) > 1e-9) < 950  # both branches of both gates
    R = d.matrix(z)
    lam = np.linalg.eigvalsh(R)
    # c_j ∈ [0, β-law] on m_j m_jᵀ: eigenvalues ≥ −round-off (eigvalsh ~1e-15 of ‖R‖)
    assert np.all(lam >= -1e-12 * np.abs(lam).max(axis=1, keepdims=True))
    assert np.all(d.coefficients(z) >= 0) and np.all(d.rate(z) >= 0)
    np.testing.assert_allclose(d.force(z), np.einsum("nij,nj->ni", R, z), rtol=1e-12,
                               atol=1e-12)
    # the Jacobian (non-symmetric where a limit holds) against central differences, at
    # points 1e-4 or more from a kink of the limits (|c s| = f, |r| = 1): error O(e²)
    e, I = 1e-7, np.eye(3)
    r = z @ d.gate_directions[1:].T + d.gate_shifts[1:]
    f = d.gate_gains[1:] * np.maximum(np.abs(r) - 1, 0)
    far = np.all((np.abs(np.abs(r) - 1) > 1e-4) & (np.abs(np.abs(unlimited[:, 1:]) - f) > 1e-4),
                 axis=1)
    fd = np.stack([(d.force(z + e * I[k]) - d.force(z - e * I[k])) / (2 * e) for k in range(3)],
                  axis=2)
    Jf = d.force_jacobian(z)
    assert np.abs(fd - Jf)[far].max() <= 1e-6 * (1 + np.abs(Jf).max())
    assert np.abs(Jf - np.swapaxes(Jf, 1, 2)).max() > 0.1  # the limit's m gᵀ


def test_gated_terms_round_trip_pad_and_join():
    rng = np.random.default_rng(5)
    d = gated_dissipation(rng, n=2)
    data = d.to_dict()
    assert data["version"] == 3 and data["gates"]["terms"] == [1, 2]  # older readers refuse
    back = PowerDissipation.from_dict(data)
    z = 2 * rng.normal(size=(50, 2))
    assert np.array_equal(back.force(z), d.force(z))
    # on a coupled effort: the part's components from offset 1 of 4, beside another part
    wide = PowerDissipation.joined([PowerDissipation.empty(4), d.padded(1, 4),
                                    random_dissipation(rng, n=4, K=1)], 4)
    Z = np.column_stack([rng.normal(size=50), z, rng.normal(size=50)])
    part = PowerDissipation.joined([d.padded(1, 4)], 4)
    np.testing.assert_array_equal(part.force(Z)[:, 1:3], d.force(z))
    assert wide.n_terms == 4 and wide.gated.tolist() == [False, True, True, False]
    with pytest.raises(StructureError, match="gate gains must be >= 0"):
        PowerDissipation([[1.0]], [1.0], [0.0], [0.1], gates=([[1.0]], [0.0], [-1.0]))
