"""KernelEffort: closed forms vs explicit sums and finite differences, serialisation, validation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fmu_surrogate.ph import PHDAE
from fmu_surrogate.ph.efforts.kernel import KernelEffort


def _rng(seed=0):
    return np.random.default_rng(seed)


def plain(seed=0, N=7, n=3):
    r = _rng(seed)
    return KernelEffort(
        r.normal(size=(N, n)), r.normal(size=(N, n)), r.uniform(0.5, 2.0, n), r.normal(size=n)
    )


def with_h(seed=1, N=6, n=5, constraint=False):
    """n = 5 states, differential = (0, 2, 3), two kernel components, optional Φ(x_d) x_a."""
    r = _rng(seed)
    d = np.array([0, 2, 3])
    kw = {
        "differential": d,
        "h_weights": r.normal(size=(2, N, 3)),
        "h_lengthscale": r.uniform(0.5, 2.0, (2, 3)),
        "effort_map": r.normal(size=(3, 3)),
        "h_linear": r.normal(size=3),
        "h_offset": 0.7,
    }
    if constraint:
        kw.update(
            c_weights=r.normal(size=(N, 3)),
            c_lengthscale=r.uniform(0.5, 2.0, 3),
            c_anchor=r.normal(size=(N, 2)),
            c_shift=r.normal(size=2),
        )
    W = r.normal(size=(N, n))
    W[:, d] = 0.0
    c = r.normal(size=n)
    c[d] = 0.0
    return KernelEffort(r.normal(size=(N, n)), W, r.uniform(0.5, 2.0, n), c, **kw)


def fd_jacobian(f, x, h=1e-6):
    """Central differences: truncation O(h²) ≈ 1e-12, cancellation ≈ eps/h ≈ 1e-10 (relative)."""
    cols = []
    for k in range(x.shape[1]):
        e = np.zeros(x.shape[1])
        e[k] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


def test_call_equals_explicit_sum():
    ke = plain()
    x = _rng(5).normal(size=(4, 3))
    ref = np.zeros((4, 3))
    for m in range(4):
        ref[m] = ke.offset
        for i in range(ke.n_centres):
            ref[m] += (
                np.exp(-0.5 * np.sum(((x[m] - ke.X[i]) / ke.lengthscale) ** 2)) * ke.weights[i]
            )
    assert np.allclose(ke(x), ref, rtol=0, atol=1e-13)
    assert ke(x[0]).shape == (3,) and np.allclose(ke(x[0]), ref[0], atol=1e-13)


def test_hamiltonian_explicit_sum_and_gradient():
    ke = with_h()
    x = _rng(6).normal(size=(5, 5))
    d = ke.differential
    ref = np.full(5, ke.h_offset) + x[:, d] @ ke.h_linear
    for m in range(5):
        for k in range(2):
            ls = ke.h_lengthscale[k]
            for i in range(ke.n_centres):
                dx = x[m, d] - ke.X[i, d]
                ref[m] += np.exp(-0.5 * np.sum((dx / ls) ** 2)) * np.dot(
                    dx / ls**2, ke.h_weights[k, i]
                )
    assert np.allclose(ke.hamiltonian(x), ref, rtol=0, atol=1e-12)
    # gradient of H: analytic vs finite differences in the differential coordinates
    g_fd = fd_jacobian(lambda y: ke.hamiltonian(y), x)[:, d]
    assert np.abs(ke.hamiltonian_gradient(x) - g_fd).max() < 1e-8


def test_compatibility_by_construction():
    """z_d = M ∇H̄ exactly (same closed form), i.e. E_ddᵀ z_d = ∇H̄ with M = E_dd^{-T}."""
    ke = with_h()
    x = _rng(7).normal(size=(9, 5))
    z = ke(x)
    Minv = np.linalg.inv(ke.effort_map)
    res = z[:, ke.differential] @ Minv.T - ke.hamiltonian_gradient(x)
    assert np.abs(res).max() < 1e-12 * max(1.0, np.abs(z).max())


@pytest.mark.parametrize("make", [plain, with_h, lambda: with_h(constraint=True)])
def test_jacobian_matches_finite_differences(make):
    ke = make()
    x = _rng(8).normal(size=(6, ke.n_states))
    J = ke.jacobian(x)
    assert J.shape == (6, ke.n_states, ke.n_states)
    assert np.abs(J - fd_jacobian(ke, x)).max() < 1e-7
    assert ke.jacobian(x[0]).shape == (ke.n_states, ke.n_states)


def test_hessian_is_symmetric():
    """With M = I and no constraint term ∂z_d/∂x_d is the Hessian of H̄: symmetric to round-off."""
    ke = with_h()
    ke.effort_map = np.eye(3)
    J = ke.jacobian(_rng(9).normal(size=(4, 5)))[:, ke.differential][:, :, ke.differential]
    assert np.abs(J - np.swapaxes(J, 1, 2)).max() < 1e-12 * np.abs(J).max()


def test_constraint_force_term():
    ke = with_h(constraint=True)
    x = _rng(10).normal(size=(3, 5))
    a = np.array([1, 4])
    ref = np.zeros((3, 3))
    for m in range(3):
        for i in range(ke.n_centres):
            k = np.exp(
                -0.5
                * np.sum(
                    ((x[m, ke.differential] - ke.X[i, ke.differential]) / ke.c_lengthscale) ** 2
                )
            )
            ref[m] += k * np.dot(x[m, a] + ke.c_shift, ke.c_anchor[i]) * ke.c_weights[i]
    assert np.allclose(ke.constraint_force(x), ref, atol=1e-12)
    z = ke(x)
    assert np.allclose(
        z[:, ke.differential], (ke.hamiltonian_gradient(x) + ref) @ ke.effort_map.T, atol=1e-12
    )


@pytest.mark.parametrize("make", [plain, with_h, lambda: with_h(constraint=True)])
def test_json_round_trip_is_exact(make):
    ke = make()
    d = json.loads(json.dumps(ke.to_dict()))
    assert d["format"] == "fmu_surrogate.kernel_effort" and d["version"] == 1
    ke2 = KernelEffort.from_dict(d)
    x = _rng(11).normal(size=(5, ke.n_states))
    assert np.array_equal(ke(x), ke2(x))  # JSON floats round-trip exactly (repr)
    if ke.has_hamiltonian:
        assert np.array_equal(ke.hamiltonian(x), ke2.hamiltonian(x))


def test_from_dict_refuses_foreign_or_newer_input():
    d = plain().to_dict()
    with pytest.raises(ValueError, match="version"):
        KernelEffort.from_dict({**d, "version": 99})
    with pytest.raises(ValueError, match="format"):
        KernelEffort.from_dict({**d, "format": "something else"})
    with pytest.raises(ValueError, match="kernel"):
        KernelEffort.from_dict({**d, "kernel": "matern"})


def test_validation_messages():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="weights must have shape"):
        KernelEffort(X, np.zeros((4, 3)), 1.0)
    with pytest.raises(ValueError, match="positive"):
        KernelEffort(X, np.zeros((4, 2)), [1.0, -1.0])
    with pytest.raises(ValueError, match="NaN"):
        KernelEffort(X, np.full((4, 2), np.nan), 1.0)
    with pytest.raises(ValueError, match="differential"):
        KernelEffort(X, np.zeros((4, 2)), 1.0, h_weights=np.zeros((4, 1)), h_lengthscale=1.0)
    with pytest.raises(ValueError, match="must be zero"):
        KernelEffort(
            X, np.ones((4, 2)), 1.0, differential=[0], h_weights=np.zeros((4, 1)), h_lengthscale=1.0
        )
    with pytest.raises(ValueError, match="shape"):
        plain()(np.zeros((2, 4)))
    with pytest.raises(AttributeError, match="hamiltonian=True"):
        plain().hamiltonian(np.zeros(3))


def test_usable_as_phdae_effort():
    ke = with_h()
    E = np.zeros((5, 5))
    E[np.ix_(ke.differential, ke.differential)] = np.linalg.inv(ke.effort_map).T  # M = E_dd^{-T}
    J = np.zeros((5, 5))
    J[0, 1], J[1, 0] = 1.0, -1.0
    sysm = PHDAE(E, J, np.eye(5), np.ones((5, 1)), effort=ke, hamiltonian=ke.hamiltonian)
    x = _rng(12).normal(size=(4, 5))
    assert np.allclose(sysm.effort(x), ke(x))
    # Eᵀz = ∇H (zero in the algebraic components) — the compatibility condition
    gradH = np.zeros((4, 5))
    gradH[:, ke.differential] = ke.hamiltonian_gradient(x)
    assert np.abs(sysm.effort(x) @ E - gradH).max() < 1e-12 * np.abs(gradH).max()
