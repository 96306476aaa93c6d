"""State-dependent dissipation: PSD at every state for every admissible parameter, exact
derivatives, and the power-law damper it stands for."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.ph import PowerDissipation, StructureError


def random_dissipation(rng, n=3, K=3):
    return PowerDissipation(rng.normal(size=(K, n)), rng.uniform(0, 2, K),
                            rng.uniform(-0.9, 2.5, K), rng.uniform(1e-3, 0.5, K))


def test_psd_at_random_states_and_parameters():
    rng = np.random.default_rng(0)
    for _ in range(20):
        d = random_dissipation(rng)
        z = 5 * rng.normal(size=(100, 3))
        R = d.matrix(z)
        # a sum of c_j m_j m_jᵀ with c_j ≥ 0: eigenvalues ≥ −round-off (eigvalsh ~1e-15 of ‖R‖)
        lam = np.linalg.eigvalsh(R)
        assert np.all(lam >= -1e-12 * np.abs(lam).max(axis=1, keepdims=True))
        assert np.all(d.coefficients(z) >= 0) and np.all(d.rate(z) >= 0)
        assert np.allclose(d.force(z), np.einsum("nij,nj->ni", R, z), rtol=1e-13, atol=1e-13)
        assert np.allclose(d.rate(z), np.einsum("ni,nij,nj->n", z, R, z), rtol=1e-12)


def test_force_jacobian_matches_differences():
    rng = np.random.default_rng(1)
    d = random_dissipation(rng)
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
])
def test_inadmissible_parameters_are_refused(kw, match):
    args = {"directions": [[1.0, 0.0]], "gains": [1.0], "exponents": [0.5], "smoothing": [0.1]}
    args.update(kw)
    with pytest.raises(StructureError, match=match):
        PowerDissipation(**args)


def test_dict_round_trip_is_exact():
    rng = np.random.default_rng(2)
    d = random_dissipation(rng)
    back = PowerDissipation.from_dict(d.to_dict())
    z = rng.normal(size=(4, 3))
    assert np.array_equal(back.force(z), d.force(z))
    empty = PowerDissipation.empty(2)
    assert PowerDissipation.from_dict(empty.to_dict()).n_terms == 0
