"""TermEffort: values, Jacobian and Hamiltonian against independent references, file round trip."""

import numpy as np
import pytest
from scipy.integrate import quad

from fmu_surrogate.ph import PHDAE, TermEffort, load, save, simulate

GAUSS = {"kind": "gaussian", "name": "delta", "centers": [-0.5, 0.1, 0.7],
         "weights": [1.5, -2.0, 0.7], "length_scale": 0.4}
TERMS = [[{"kind": "power", "exponent": 0, "coef": 0.3}, {"kind": "power", "exponent": 3,
                                                             "coef": -2.0},
          {"kind": "sin", "coef": 1.2}, {"kind": "cos", "coef": 0.5}, GAUSS],
         [{"kind": "power", "exponent": 1, "coef": 0.25}]]


def _k(s):
    g = sum(w * np.exp(-0.5 * (s - c) ** 2 / 0.4**2) for c, w in zip(GAUSS["centers"],
                                                                     GAUSS["weights"]))
    return 0.3 - 2.0 * s**3 + 1.2 * np.sin(s) + 0.5 * np.cos(s) + g


def test_values_jacobian_and_hamiltonian_against_quadrature():
    eff = TermEffort(TERMS)
    x = np.array([[0.3, -1.0], [-0.8, 2.0], [1.1, 0.5]])
    z = eff(x)
    np.testing.assert_allclose(z[:, 0], _k(x[:, 0]), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(z[:, 1], 0.25 * x[:, 1], rtol=1e-15)
    # H = ∫0^q k + 0.125 p² by adaptive quadrature (its error ~1e-14)
    H = [quad(_k, 0.0, q, epsabs=1e-13, epsrel=1e-13)[0] + 0.125 * p**2 for q, p in x]
    np.testing.assert_allclose(eff.hamiltonian(x), H, rtol=1e-12, atol=1e-13)
    # Jacobian against central differences (h = 1e-6: truncation ~1e-11, rounding ~1e-10)
    h = 1e-6
    fd = (eff(x + [h, 0]) - eff(x - [h, 0]))[:, 0] / (2 * h)
    J = eff.jacobian(x)
    np.testing.assert_allclose(J[:, 0, 0], fd, rtol=1e-8, atol=1e-8)
    assert np.all(J[:, 0, 1] == 0) and np.all(J[:, 1, 1] == 0.25)


def test_file_round_trip_is_exact_and_energy_balances(tmp_path):
    eff = TermEffort(TERMS)
    sys_ = PHDAE(np.eye(2), [[0, 1], [-1, 0]], np.diag([0.0, 0.4]), [[0.0], [1.0]],
                 effort=eff, hamiltonian=eff.hamiltonian)
    back = load(save(sys_, tmp_path / "terms.json"))
    x = np.random.default_rng(0).normal(size=(30, 2))
    assert np.array_equal(back.effort(x), sys_.effort(x))
    assert np.array_equal(back.hamiltonian(x), sys_.hamiltonian(x))
    t = np.linspace(0, 5, 501)
    tr = simulate(back, t, np.sin(3 * t), [0.2, 0.0])
    # AVF (4-point Gauss-Legendre on z, h = 0.01): measured residual 3e-16 against an energy
    # scale of 0.08; the bound allows the quadrature error of the non-polynomial terms
    assert abs(tr.energy_residual) < 1e-12 * tr.energy_scale


def test_bad_terms_are_named():
    with pytest.raises(ValueError, match="state 0, term 0: term kind 'tanh'"):
        TermEffort([[{"kind": "tanh", "coef": 1.0}]])
    with pytest.raises(ValueError, match="exponent"):
        TermEffort([[{"kind": "power", "exponent": -1, "coef": 1.0}]])
    with pytest.raises(ValueError, match="length_scale"):
        TermEffort([[{**GAUSS, "length_scale": 0.0}]])
    with pytest.raises(ValueError, match="not a version-1"):
        TermEffort.from_dict({"terms": []})
