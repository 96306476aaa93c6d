"""PolynomialEffort and PartlyKnownEffort: values, Jacobians, surrogate files, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fmu_surrogate.ph import (
    PHDAE,
    KernelEffort,
    PartlyKnownEffort,
    PolynomialEffort,
    SurrogateFileError,
    load,
    save,
)

PEND = {0: [(-2.0, {0: 1, 4: 1})], 1: [(-2.0, {1: 1, 4: 1})],
        4: [(1.0, {}), (-1.0, {0: 2}), (-1.0, {1: 2})]}


def fd_jacobian(f, x, h=1e-6):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.shape[1])], -1)


def test_polynomial_values_and_jacobian_match_the_written_formulas():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 5))
    pe = PolynomialEffort.from_terms(5, {**PEND, 2: "identity", 3: [(0.5, {3: 3, 2: 1})]})
    q1, q2, p1, p2, lam = x.T
    want = np.column_stack([-2 * q1 * lam, -2 * q2 * lam, p1, 0.5 * p2**3 * p1,
                            1 - q1**2 - q2**2])
    assert np.allclose(pe(x), want, rtol=0, atol=1e-15)
    assert np.allclose(pe.jacobian(x), fd_jacobian(pe, x), rtol=0, atol=1e-8)  # FD: ~1e-10
    # x ** 0 = 1 and no 0 · x⁻¹ at x = 0
    z0 = np.zeros(5)
    assert pe(z0).tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert np.all(np.isfinite(pe.jacobian(z0)))
    assert pe.known_components.tolist() == [0, 1, 2, 3, 4]


def kernel(rng, n=5, N=6):
    d = [0, 1, 2, 3]
    W = rng.normal(size=(N, n))
    W[:, d] = 0.0
    return KernelEffort(rng.normal(size=(N, n)), W, rng.uniform(0.5, 2, n), differential=d,
                        h_weights=rng.normal(size=(2, N, 4)),
                        h_lengthscale=rng.uniform(0.5, 2, (2, 4)), h_linear=rng.normal(size=4))


def test_partly_known_sums_the_parts_and_keeps_the_learned_hamiltonian():
    rng = np.random.default_rng(1)
    ke = kernel(rng)
    pk = PartlyKnownEffort(ke, PolynomialEffort.from_terms(5, PEND))
    x = rng.normal(size=(4, 5))
    assert np.array_equal(pk(x), ke(x) + pk.known(x))
    assert np.allclose(pk.jacobian(x), fd_jacobian(pk, x), rtol=0, atol=1e-7)  # FD: ~1e-9
    assert pk.has_hamiltonian and np.array_equal(pk.hamiltonian(x), ke.hamiltonian(x))
    # a learned part without an analytic Jacobian is differentiated numerically
    plain = PartlyKnownEffort(lambda a: np.sin(np.atleast_2d(a)),
                              PolynomialEffort.from_terms(5, PEND))
    assert np.allclose(plain.jacobian(x), fd_jacobian(plain, x), rtol=0, atol=1e-7)
    assert not plain.has_hamiltonian
    with pytest.raises(AttributeError, match="no Hamiltonian"):
        plain.hamiltonian(x)


def test_surrogate_files_round_trip_bitwise(tmp_path):
    rng = np.random.default_rng(2)
    from fmu_surrogate.benchmarks import pendulum

    ke = kernel(rng)
    known = PolynomialEffort.from_terms(5, PEND)
    pk = PartlyKnownEffort(ke, known)
    sysm = PHDAE(**pendulum.matrices(), effort=pk, hamiltonian=pk.hamiltonian)
    back = load(save(sysm, tmp_path / "s.json"))
    x = rng.normal(size=(9, 5))
    assert back.effort(x).tobytes() == sysm.effort(x).tobytes()
    assert back.hamiltonian(x).tobytes() == sysm.hamiltonian(x).tobytes()
    k2 = back.effort_function.known
    assert k2.coefficients.tobytes() == known.coefficients.tobytes()
    assert np.array_equal(k2.exponents, known.exponents)
    assert json.loads(json.dumps(known.to_dict())) == known.to_dict()
    # a known part alone is a storable effort too
    alone = load(save(PHDAE(**pendulum.matrices(), effort=known), tmp_path / "k.json"))
    assert alone.effort(x).tobytes() == known(x).tobytes()
    # a damaged known part is refused with the field named
    doc = json.loads((tmp_path / "s.json").read_text())
    doc["system"]["effort"]["data"]["known"]["exponents"][0][0] = -1
    from fmu_surrogate.ph.files import _digest

    doc["checksums"]["system"] = _digest(doc["system"])
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(SurrogateFileError, match="system.effort.data.*non-negative integers"):
        load(tmp_path / "bad.json")


def test_bad_polynomials_are_refused():
    with pytest.raises(ValueError, match="non-negative integers"):
        PolynomialEffort(2, [0], [1.0], [[1.5, 0]])
    with pytest.raises(ValueError, match="components must be integers in"):
        PolynomialEffort(2, [2], [1.0], [[1, 0]])
    with pytest.raises(ValueError, match="needs 1 coefficients"):
        PolynomialEffort(2, [0], [1.0, 2.0], [[1, 0]])
    with pytest.raises(ValueError, match="NaN or Inf"):
        PolynomialEffort(2, [0], [np.nan], [[1, 0]])
    with pytest.raises(ValueError, match="not a known form"):
        PolynomialEffort.from_terms(2, {0: "linear"})
    with pytest.raises(ValueError, match="x must have shape"):
        PolynomialEffort.from_terms(2, {0: "identity"})(np.zeros(3))
    with pytest.raises(TypeError, match="known must be a PolynomialEffort"):
        PartlyKnownEffort(lambda a: a, {0: "identity"})
    with pytest.raises(ValueError, match="version 2 is not supported"):
        d = PolynomialEffort.from_terms(2, {0: "identity"}).to_dict()
        PolynomialEffort.from_dict({**d, "version": 2})
