"""The convex effort: z = ∇H, ∂z/∂x its Hessian, H bounded below for every admissible parameter."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.ph import ConvexEffort, StructureError


def random_effort(rng, n=3, kinds=("quartic", "logcosh", "quartic")):
    L = rng.normal(size=(n, n))
    return ConvexEffort(L @ L.T + 0.1 * np.eye(n), kinds, rng.uniform(0, 3, len(kinds)),
                        2.0 * rng.normal(size=(len(kinds), n)))


def _assert_gradient_and_hessian(eff, x):
    """``z`` the gradient of ``H`` and ``∂z/∂x`` its symmetric Hessian, by central differences
    with step 1e-6: truncation ~e²·|H‴| ≈ 1e-10, round-off ~1e-16/e·|H| ≈ 1e-9 for |H| up to
    ~1e3 (measured max 2e-8 relative)."""
    e, I = 1e-6, np.eye(x.shape[1])
    dH = np.stack([(eff.hamiltonian(x + e * d) - eff.hamiltonian(x - e * d)) / (2 * e)
                   for d in I], axis=1)
    dz = np.stack([(eff(x + e * d) - eff(x - e * d)) / (2 * e) for d in I], axis=2)
    z, Jac = eff(x), eff.jacobian(x)
    assert np.abs(dH - z).max() <= 1e-6 * (1 + np.abs(z).max())
    assert np.abs(dz - Jac).max() <= 1e-6 * (1 + np.abs(Jac).max())
    # symmetric up to the summation order of the products (a few ulps)
    assert np.abs(Jac - np.swapaxes(Jac, 1, 2)).max() <= 1e-14 * np.abs(Jac).max()


def test_effort_is_the_gradient_and_jacobian_the_hessian():
    rng = np.random.default_rng(0)
    _assert_gradient_and_hessian(random_effort(rng), rng.normal(size=(20, 3)))


def test_energy_bounded_below_for_random_parameters():
    rng = np.random.default_rng(1)
    for _ in range(20):
        eff = random_effort(rng)
        x = 10 * rng.normal(size=(200, 3))
        H = eff.hamiltonian(x)
        # H ≥ ½ λ_min(Q)|x|² exactly: each ridge term is ≥ 0
        lam = np.linalg.eigvalsh(eff.Q).min()
        assert np.all(H >= 0.5 * lam * (x * x).sum(axis=1) * (1 - 1e-12))
        assert eff.hamiltonian(np.zeros((1, 3)))[0] == 0.0
        assert np.all(np.linalg.eigvalsh(eff.jacobian(x)) > 0)  # convex


def test_logcosh_is_stable_for_large_arguments():
    eff = ConvexEffort([[1.0]], ["logcosh"], [1.0], [[1.0]])
    x = np.array([[1e3], [-1e3]])
    # log cosh s = |s| − log 2 + log1p(e^{−2|s|}): no overflow
    assert np.allclose(eff.hamiltonian(x), 0.5e6 + 1e3 - np.log(2.0), rtol=1e-15)
    assert np.allclose(eff(x)[:, 0], [1e3 + 1.0, -1e3 - 1.0], rtol=1e-15)


@pytest.mark.parametrize("kw, match", [
    ({"weights": [-0.1]}, "weights must be >= 0"),
    ({"kinds": ["cubic"]}, "unknown ridge kinds"),
    ({"directions": [[1.0, np.nan]]}, "finite"),
    ({"directions": [[1.0, 0.0, 0.0]]}, "directions of shape"),
])
def test_inadmissible_parameters_are_refused(kw, match):
    args = {"Q": np.eye(2), "kinds": ["quartic"], "weights": [1.0], "directions": [[1.0, 0.0]]}
    args.update(kw)
    with pytest.raises(StructureError, match=match):
        ConvexEffort(**args)
    with pytest.raises(StructureError, match="positive definite"):
        ConvexEffort(np.diag([1.0, 0.0]))


def test_dict_round_trip_is_exact():
    rng = np.random.default_rng(2)
    eff = random_effort(rng)
    back = ConvexEffort.from_dict(eff.to_dict())
    x = rng.normal(size=(5, 3))
    assert np.array_equal(back(x), eff(x)) and back.kinds == eff.kinds
    assert np.array_equal(back.hamiltonian(x), eff.hamiltonian(x))


def test_a_periodic_ridge_gives_a_pendulums_energy_exactly():
    """``Q = I``, ``x = (√k θ, p)``, ``w = (1/√k, 0)``, ``α = k``: ``H = p²/2 + k (1 − cos θ)``
    over several turns, ``z = (√k sin θ, p)`` and ``∂z/∂x = diag(cos θ, 1)``."""
    k = 9.81
    eff = ConvexEffort(np.eye(2), ["periodic"], [k], [[1.0 / np.sqrt(k), 0.0]])
    th = np.linspace(-20.0, 20.0, 41)
    p = np.linspace(-3.0, 3.0, 41)
    x = np.column_stack([np.sqrt(k) * th, p])
    # ½ s² − (1 − cos s) with ½ s² up to 200 k: round-off of that size, ~1e-13 of it
    assert np.allclose(eff.hamiltonian(x), 0.5 * p**2 + k * (1 - np.cos(th)), rtol=0, atol=1e-11)
    assert np.allclose(eff(x), np.column_stack([np.sqrt(k) * np.sin(th), p]), rtol=0, atol=1e-12)
    J = eff.jacobian(x)
    assert np.allclose(J[:, 0, 0], np.cos(th), rtol=0, atol=1e-14)
    assert np.all(J[:, 1, 1] == 1.0) and np.all(J[:, 0, 1] == 0.0)


def _periodic_effort(rng, share, n=3):
    """Q ≻ 0 with a periodic ridge taking ``share`` of the form along its direction
    (``α wᵀQ⁻¹w = share``), and a quartic and a logcosh ridge."""
    L = rng.normal(size=(n, n))
    Q = L @ L.T + 0.1 * np.eye(n)
    w = 2.0 * rng.normal(size=(3, n))
    a = np.concatenate([[share / (w[0] @ np.linalg.solve(Q, w[0]))], rng.uniform(0, 3, 2)])
    return ConvexEffort(Q, ["periodic", "quartic", "logcosh"], a, w)


def test_periodic_effort_is_the_gradient_and_bounded_below():
    rng = np.random.default_rng(3)
    eff = _periodic_effort(rng, 1.0)
    _assert_gradient_and_hessian(eff, rng.normal(size=(20, 3)))
    for _ in range(20):
        eff = _periodic_effort(rng, rng.uniform(0.0, 1.0))
        x = 10 * rng.normal(size=(200, 3))
        # H ≥ 0 up to the round-off of ½ xᵀQx (the periodic term cancels part of it)
        scale = 0.5 * ((x @ eff.Q) * x).sum(axis=1)
        assert np.all(eff.hamiltonian(x) >= -1e-12 * scale)


def test_a_periodic_ridge_beyond_the_quadratic_form_is_refused():
    rng = np.random.default_rng(4)
    _periodic_effort(rng, 1.0 - 1e-15)  # at the edge (a pendulum): admissible
    with pytest.raises(StructureError, match="not bounded below"):
        _periodic_effort(rng, 1.01)


def test_a_preloaded_ridge_is_the_spring_law_about_its_load():
    """A spring k₁ q + k₃ q³ at rest under the load g at q_e (k₁ q_e + k₃ q_e³ = −g): its force
    about q_e, f(q_e + δ) − f(q_e), is the quartic ridge shifted by q_e with Q = k₁; the energy
    is the spring's energy less its value and slope at q_e, ≥ 0 and zero with its slope at 0."""
    k1, k3, qe = 1.0, 2.0, -0.8351223484813666
    eff = ConvexEffort([[k1]], ["quartic"], [k3], [[1.0]], [qe])
    d = np.linspace(-1.5, 1.5, 31)[:, None]
    force = k1 * (qe + d) + k3 * (qe + d) ** 3 - (k1 * qe + k3 * qe ** 3)
    # exact polynomial identities evaluated in floating point: a few ulps of forces up to ~20
    assert np.abs(eff(d) - force).max() < 1e-13
    U = 0.5 * k1 * (qe + d) ** 2 + 0.25 * k3 * (qe + d) ** 4
    Ue, fe = 0.5 * k1 * qe ** 2 + 0.25 * k3 * qe ** 4, k1 * qe + k3 * qe ** 3
    assert np.abs(eff.hamiltonian(d) - (U - Ue - fe * d)[:, 0]).max() < 1e-13
    assert eff.hamiltonian(np.zeros((1, 1)))[0] == 0.0 and eff(np.zeros((1, 1)))[0, 0] == 0.0
    assert np.abs(eff.jacobian(d)[:, 0, 0] - (k1 + 3 * k3 * (qe + d[:, 0]) ** 2)).max() < 1e-13


def test_preloaded_ridges_keep_gradient_hessian_and_bound():
    rng = np.random.default_rng(3)
    L = rng.normal(size=(3, 3))
    eff = ConvexEffort(L @ L.T + 0.1 * np.eye(3), ["quartic", "logcosh"], [1.5, 2.0],
                       rng.normal(size=(2, 3)), [0.7, -1.3])
    x = rng.normal(size=(20, 3))
    _assert_gradient_and_hessian(eff, x)
    # Bregman divergences of convex ridges: H ≥ ½ λ_min(Q)|x|² (round-off of sums ~1e-12)
    big = 5.0 * rng.normal(size=(200, 3))
    lam = float(np.linalg.eigvalsh(eff.Q).min())
    assert np.all(eff.hamiltonian(big) >= 0.5 * lam * (big ** 2).sum(axis=1) - 1e-9)
    back = ConvexEffort.from_dict(eff.to_dict())
    assert np.array_equal(back.shifts, eff.shifts) and np.array_equal(back(x), eff(x))
    assert "shifts" not in ConvexEffort(np.eye(1), ["quartic"], [1.0], [[1.0]]).to_dict()


def test_a_periodic_ridge_takes_no_shift():
    with pytest.raises(StructureError, match="periodic ridge takes no shift"):
        ConvexEffort(np.eye(2), ["periodic"], [0.5], [[1.0, 0.0]], [0.3])
    with pytest.raises(StructureError, match="1 ridge terms need 1 shifts"):
        ConvexEffort(np.eye(2), ["quartic"], [0.5], [[1.0, 0.0]], [0.3, 0.1])
