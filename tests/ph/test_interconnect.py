"""Power-conserving interconnection: the coupled matrices, refusals, and the helper cases."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.ph import (
    LinearPH,
    StructureError,
    feedback,
    interconnect,
    series,
    simulate,
    terminate,
)


def lin(seed, n=3, m=2):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    Y = rng.normal(size=(n, n))
    Z = rng.normal(size=(n, n))
    return LinearPH(A - A.T, Y @ Y.T, Z @ Z.T + np.eye(n), rng.normal(size=(n, m)))


def test_coupled_matrices_follow_the_formula():
    a, b = lin(0), lin(1)
    C = np.array([[0.0, 0.7], [-0.7, 0.0]])
    c = interconnect([a, b], C, [[0], [1]], names=["left", "right"])
    Bhat = np.zeros((6, 2))
    Bhat[:3, 0], Bhat[3:, 1] = a.B[:, 0], b.B[:, 1]
    J_ref = np.zeros((6, 6))
    J_ref[:3, :3], J_ref[3:, 3:] = a.J, b.J
    J_ref -= Bhat @ C @ Bhat.T
    np.testing.assert_allclose(c.J, J_ref, atol=1e-14)
    assert np.array_equal(c.J, -c.J.T)
    np.testing.assert_array_equal(c.B[:3, 0], a.B[:, 1])
    np.testing.assert_array_equal(c.B[3:, 1], b.B[:, 0])
    assert c.input_names == ("left.u2", "right.u1") and c.state_names[3] == "right.x1"
    # the closed loop equals substituting û = −Ĉ ŷ by hand in the stacked state equations
    x = np.random.default_rng(5).normal(size=6)
    ya, yb = a.B.T @ a.Q @ x[:3], b.B.T @ b.Q @ x[3:]
    uhat = -C @ np.array([ya[0], yb[1]])
    ua, ub = np.array([uhat[0], 0.0]), np.array([0.0, uhat[1]])
    rhs = np.concatenate([(a.J - a.R) @ a.Q @ x[:3] + a.B @ ua,
                          (b.J - b.R) @ b.Q @ x[3:] + b.B @ ub])
    np.testing.assert_allclose((c.J - c.R) @ c.Q @ x, rhs, atol=1e-12)


def test_non_skew_coupling_is_refused_with_its_size_and_the_fix():
    with pytest.raises(StructureError, match=r"not skew-symmetric: ‖Ĉ \+ Ĉᵀ‖_F = 2\.828e\+00.*"
                                             r"\(Ĉ − Ĉᵀ\)/2"):
        interconnect([lin(0), lin(1)], [[0, 1], [1, 0]], [[0], [0]])
    with pytest.raises(StructureError, match="must be 2×2"):
        interconnect([lin(0), lin(1)], [[0, 1, 0], [-1, 0, 0], [0, 0, 0]], [[0], [0]])
    with pytest.raises(StructureError, match="has inputs 0 … 1"):
        interconnect([lin(0), lin(1)], [[0, 1], [-1, 0]], [[0], [5]])


def test_helpers_feedback_series_terminate():
    a, b = lin(2, m=1), lin(3, m=1)
    fb = feedback(a, b, gain=2.0)
    assert fb.n_inputs == 0 and np.array_equal(fb.J, -fb.J.T)
    s = series(a, b)
    x = np.random.default_rng(1).normal(size=6)
    np.testing.assert_allclose(s.output(x), a.output(x[:3]) + b.output(x[3:]), atol=1e-14)
    r = terminate(a, 0, 3.0)
    assert r.n_inputs == 0
    np.testing.assert_allclose(r.R, a.R + 3.0 * np.outer(a.B[:, 0], a.B[:, 0]), atol=1e-14)
    assert np.array_equal(r.R, r.R.T)
    with pytest.raises(StructureError, match="resistance"):
        terminate(a, 0, -1.0)


def test_coupled_nonlinear_system_keeps_the_energy_balance():
    """A hardening spring (AVF-exact polynomial effort) coupled to a linear damper-mass."""

    from fmu_surrogate.benchmarks import hardening_spring

    sp = hardening_spring.system(port=True)
    c = interconnect([sp, lin(4, m=1)], [[0, 1.0], [-1.0, 0]], [[0], [0]])
    t = np.linspace(0, 20, 4001)
    tr = simulate(c, t, None, [1.0, 0.0, 0.1, 0.0, -0.1])
    # lossless coupling: stored + dissipated = 0 up to round-off (measured 1e-15 relative)
    assert abs(tr.energy_residual) <= 1e-12 * tr.energy_scale
    assert tr.dissipated[-1] > 0 and tr.H[-1] < tr.H[0]
