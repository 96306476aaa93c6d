"""Integral (interval) form of a second-order law against the scipy reference of the Duffing
oscillator (m ÿ + c ẏ + (a + b y²) y = u, force held over each sample)."""

import numpy as np
import pytest

from fmu_surrogate.benchmarks import duffing
from fmu_surrogate.identify.derivatives import finite_differences
from fmu_surrogate.identify.laws.gp_rvm import GPRVM
from fmu_surrogate.identify.laws.interval import interval_form
from fmu_surrogate.identify.laws.library import CandidateLibrary, LibraryError

COLUMNS = ["u", "ydot", "y"]
LIBRARY = CandidateLibrary(COLUMNS, [("u", lambda e: e["u"]), ("ydot", lambda e: e["ydot"]),
                                     ("y", lambda e: e["y"]), ("y^3", lambda e: e["y"] ** 3)])

#: Duffing-type cases other than the paper's (c = 2.151, a = 10, b = 1e5 at 50 Hz).
CASES = [
    pytest.param({"c": 5.0, "a": 20.0, "b": 5e4}, 0.02, 0, id="c5-a20-b5e4-50Hz"),
    pytest.param({"c": 1.5, "a": 40.0, "b": 2e5}, 0.01, 1, id="c1.5-a40-b2e5-100Hz"),
    pytest.param({"c": 3.0, "a": 15.0, "b": 8e4}, 0.01, 2, id="c3-a15-b8e4-100Hz"),
    pytest.param({"c": 1.2, "a": 8.0, "b": 1.5e5}, 0.005, 3, id="c1.2-a8-b1.5e5-200Hz"),
]


def _reference(params, dt, seed, stop=10.0):
    t, u = duffing.white_noise_force(stop=stop, dt=dt, seed=seed)
    return duffing.simulate(t, u, params)


def _physical(coef):
    m = 1.0 / coef[0]
    return np.array([m, -coef[1] * m, -coef[2] * m, -coef[3] * m])


def _relative_errors(coef, params):
    return np.abs(_physical(coef) / [1.0, params["c"], params["a"], params["b"]] - 1.0)


@pytest.mark.parametrize(("params", "dt", "seed"), CASES)
def test_interval_form_removes_the_damping_bias_of_estimated_accelerations(params, dt, seed):
    tr = _reference(params, dt, seed)
    X = np.c_[tr.u, tr.ydot, tr.y]
    Phi, target = interval_form(tr.t, X, COLUMNS, position="y", velocity="ydot",
                                transform=LIBRARY.transform)
    gp_x, _ = interval_form(tr.t, tr.y[:, None], ["y"], position="y", velocity="y")
    est = GPRVM().fit(Phi, target, gp_x[:, 0])
    err = _relative_errors(est.coef_, params)
    # Integral form: the target is exact, the stiffness integrals err by O((ωh)⁴) (Hermite
    # interpolant, 3-point Gauss rule); measured max over these cases m 1.4e-7, c 2.1e-7,
    # a 1.1e-6, b 1.9e-6 (relative).  Bounds: 1 % on c, 0.1 % on m and the stiffness terms;
    # the margin (> 500x) covers BLAS thread counts and the EM stopping rule (tol 1e-6).
    assert est.active_.all()
    assert err[1] <= 1e-2
    assert np.all(err[[0, 2, 3]] <= 1e-3)
    # the same data with ÿ from central differences of the exact ẏ: the force jumps at every
    # sample and the difference quotient mixes u_{k-1} with u_k; measured c off by 100-183 %
    # (with the exact ÿ samples: 5e-11, so the derivative estimate is the whole bias)
    fd = GPRVM().fit(np.c_[tr.u, tr.ydot, tr.y, tr.y**3], finite_differences(tr.t, tr.ydot),
                     tr.y)
    assert _relative_errors(fd.coef_, params)[1] > 0.2


def test_interval_means_are_exact_for_held_inputs_and_the_velocity():
    tr = _reference({"c": 2.0, "a": 12.0, "b": 6e4}, 0.02, 5, stop=2.0)
    X = np.c_[tr.u, tr.ydot, tr.y]
    M, target = interval_form(tr.t, X, COLUMNS, position="y", velocity="ydot")
    h = np.diff(tr.t)
    # held input: its left sample; velocity: the derivative of the Hermite interpolant averages
    # to the secant exactly (rounding only)
    np.testing.assert_allclose(M[:, 0], tr.u[:-1], rtol=1e-14)
    np.testing.assert_allclose(M[:, 1], np.diff(tr.y) / h, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(target, np.diff(tr.ydot) / h, rtol=1e-14)
    # interval mean of y against a fine quadrature of the DOP853 solution on each interval
    # (the force is constant there): the Hermite error is O(h⁴ y''''), measured 2e-7 relative
    # to max|y|; bound 1e-5
    k = np.arange(0, len(h), 7)
    fine = []
    for i in k:
        s = np.linspace(tr.t[i], tr.t[i + 1], 41)
        sub = duffing.simulate(s, np.full(s.size, tr.u[i]), {"c": 2.0, "a": 12.0, "b": 6e4},
                               x0=(tr.y[i], tr.ydot[i]))
        fine.append(np.trapezoid(sub.y, s) / h[i] if hasattr(np, "trapezoid")
                    else np.trapz(sub.y, s) / h[i])
    assert np.max(np.abs(M[k, 2] - fine)) <= 1e-5 * np.max(np.abs(tr.y))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"position": "q"}, "'q' is not among the columns"),
    ({"n_nodes": 0}, "n_nodes must be >= 1"),
])
def test_bad_input_is_refused(kwargs, match):
    t = np.linspace(0, 1, 5)
    args = {"position": "y", "velocity": "ydot", **kwargs}
    with pytest.raises(LibraryError, match=match):
        interval_form(t, np.zeros((5, 3)), COLUMNS, **args)
    with pytest.raises(LibraryError, match="strictly increasing"):
        interval_form(t[::-1], np.zeros((5, 3)), COLUMNS, position="y", velocity="ydot")
