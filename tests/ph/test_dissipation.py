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
