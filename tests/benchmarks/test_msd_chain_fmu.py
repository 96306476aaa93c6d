"""The mass-spring-damper chain FMU (benchmark 4a) against the LinearPH of msd_chain.py."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from fmu_surrogate.benchmarks.build import build_benchmark
from fmu_surrogate.benchmarks.msd_chain import msd_chain
from tests.benchmarks._fmu import ModelExchangeInstance, run


def linearisation(fmu, start_values=None):
    """``(A, B, C)`` read off the FMU: the model is linear, so columns of the derivative map at
    unit states / unit inputs are exact."""
    with ModelExchangeInstance(fmu, start_values) as m:
        n = m.nx
        A = np.empty((n, n))
        C = np.empty((2, n))
        for k in range(n):
            A[:, k] = m.derivatives(np.eye(n)[k])
            C[:, k] = m.get("v1", "v2")
        B = np.empty((n, 2))
        for j, name in enumerate(("F1", "F2")):
            m.set(F1=0.0, F2=0.0)
            m.set(**{name: 1.0})
            B[:, j] = m.derivatives(np.zeros(n))
    return A, B, C


def test_state_space_and_check_value(benchmark_fmus):
    A, B, C = linearisation(benchmark_fmus["msd_chain"])
    A0, B0, C0 = msd_chain().state_space()
    # same arithmetic up to summation order: round-off only
    np.testing.assert_allclose(A, A0, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(B, B0)
    np.testing.assert_allclose(C, C0, rtol=0, atol=1e-15)
    s = 0.1j
    H = C @ np.linalg.solve(s * np.eye(len(A)) - A, B)
    # docs/design.md §4 check value, printed to 6 significant digits
    assert abs(H[0, 0] - (0.125712 + 0.0732172j)) < 1e-6


def test_parameters_and_size(tmp_path):
    fmu = build_benchmark("msd_chain", tmp_path, n_cells=5)
    assert fmu.name == "msd_chain_n_cells5.fmu"
    A, B, C = linearisation(fmu, {"mass": 2.0, "spring": 3.0, "damper": 0.5})
    A0, B0, C0 = msd_chain(5, mass=2.0, spring=3.0, damper=0.5).state_space()
    np.testing.assert_allclose(A, A0, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(B, B0)
    np.testing.assert_allclose(C, C0, rtol=0, atol=1e-15)


def step_response(t, A, B, C, u):
    """Exact response to the constant input u from x(0) = 0 (matrix exponential of the
    augmented system [[A, B u], [0, 0]])."""
    n = len(A)
    M = np.zeros((n + 1, n + 1))
    M[:n, :n] = A
    M[:n, n] = B @ u
    Y = np.empty((len(t), 2))
    for k, tk in enumerate(t):
        Y[k] = C @ scipy.linalg.expm(M * tk)[:n, n]
    return Y


def test_step_response_cs_and_me(benchmark_fmus):
    A, B, C = msd_chain().state_space()
    T, dt = 20.0, 0.5
    t = np.arange(41) * dt
    Y = step_response(t, A, B, C, np.array([1.0, -0.5]))
    sv = {"F1": 1.0, "F2": -0.5}
    cs = run(benchmark_fmus["msd_chain"], T, dt, ["v1", "v2"], start_values=sv)
    # DP5 at rtol 1e-10 on a 100-state linear system, velocities O(0.2): observed 4e-10
    np.testing.assert_allclose(cs["v1"], Y[:, 0], rtol=0, atol=2e-9)
    np.testing.assert_allclose(cs["v2"], Y[:, 1], rtol=0, atol=2e-9)
    me = run(benchmark_fmus["msd_chain"], T, dt, ["v1", "v2"], fmi_type="ModelExchange",
             start_values=sv)
    # CVode at rtol = atol = 1e-10 (local control, 100 states): observed global error 1e-8
    np.testing.assert_allclose(me["v1"], Y[:, 0], rtol=0, atol=5e-8)
    np.testing.assert_allclose(me["v2"], Y[:, 1], rtol=0, atol=5e-8)
