"""The drop-in model (identify/linear/model/ported.py): structure by construction, output
sensitivities checked by Taylor tests, dense Levenberg–Marquardt (optim/dense_lm.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import lsim

from fmu_surrogate.identify.linear.model.gradient_check import taylor_test
from fmu_surrogate.identify.linear.model.ported import Layout, PortedModel, blocks, state_space
from fmu_surrogate.identify.linear.optim.dense_lm import levenberg_marquardt

LAYOUTS = [Layout(3, 2, 1, 1, True, True), Layout(0, 2, 2, 0, True, False),
           Layout(2, 1, 1, 2, False, True), Layout(2, 3, 2, 1, True, True),
           Layout(2, 2, 1, 1, True, True, delayed=True),
           Layout(3, 2, 1, 1, True, False, equilibrium=True),
           Layout(2, 2, 1, 1, True, False, delayed=True, equilibrium=True)]


def records(lay: Layout, seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 2.0, 201)
    v = np.column_stack([np.sin((2 + i) * t + i) for i in range(lay.m)])
    y = rng.standard_normal((t.size, lay.n_outputs))
    return [(t, v, y, "zoh"), (t, 0.5 * v, y, "linear")]


@pytest.mark.parametrize("lay", LAYOUTS)
def test_jacobian_passes_the_taylor_test(lay):
    # ½‖ρ‖² with gradient 𝒥ᵀρ from the forward sensitivities: remainder slope 2 (measured
    # 1.996–2.000); a wrong sensitivity of any block leaves slope 1
    rng = np.random.default_rng(1)
    pm = PortedModel(lay, records(lay, 0))
    theta = rng.standard_normal(lay.size)
    r, J = pm.jacobian(theta)
    np.testing.assert_array_equal(r, pm.residual(theta))
    res = taylor_test(lambda d: 0.5 * float(np.sum(pm.residual(d["th"]) ** 2)), {"th": theta},
                      {"th": rng.standard_normal(lay.size)}, {"th": J.T @ r})
    assert res.slope == pytest.approx(2.0, abs=0.05)


@pytest.mark.parametrize("lay", LAYOUTS)
def test_structure_by_construction(lay):
    b = blocks(lay, np.random.default_rng(2).standard_normal(lay.size))
    assert np.array_equal(b["J"], -b["J"].T) and np.array_equal(b["N"], -b["N"].T)
    assert np.array_equal(b["W"], b["W"].T)
    assert np.linalg.eigvalsh(b["W"]).min() >= -1e-12 * np.abs(b["W"]).max()


def test_simulation_matches_scipy():
    # a random parameter vector simulated against scipy's zero-order-hold lsim of (A, B, C, D)
    lay = Layout(3, 2, 1, 1, True, True)
    theta = np.random.default_rng(3).standard_normal(lay.size)
    (t, v, _y, _h), _ = records(lay, 0)
    A, B, C, D = state_space(lay, blocks(lay, theta))
    _, y_ref, _ = lsim((A, B, C, D), v, t, X0=blocks(lay, theta)["x0"], interp=False)
    (_, Y), = PortedModel(lay, [(t, v, np.zeros_like(y_ref), "zoh")]).simulate(theta)
    assert np.abs(Y - y_ref).max() <= 1e-9 * np.abs(y_ref).max()  # measured ~1e-14


def test_a_record_at_the_equilibrium_of_its_first_inputs_starts_there():
    # scipy's lsim from x0 = −A⁻¹ B v₀; held at v₀ the outputs stay at their first values
    lay = Layout(3, 2, 1, 1, True, False, equilibrium=True)
    theta = np.random.default_rng(4).standard_normal(lay.size)
    (t, v, _y, _h), _ = records(lay, 0)
    A, B, C, D = state_space(lay, blocks(lay, theta))
    x0 = -np.linalg.solve(A, B @ v[0])
    _, y_ref, _ = lsim((A, B, C, D), v, t, X0=x0, interp=False)
    (_, Y), = PortedModel(lay, [(t, v, np.zeros_like(y_ref), "zoh")]).simulate(theta)
    assert np.abs(Y - y_ref).max() <= 1e-9 * np.abs(y_ref).max()  # measured ~1e-14
    held = np.tile(v[:1], (t.size, 1))
    (_, Yh), = PortedModel(lay, [(t, held, np.zeros_like(y_ref), "zoh")]).simulate(theta)
    # the exact step of a state at rest: round-off of the outputs' size
    assert np.abs(Yh - Yh[0]).max() <= 1e-12 * np.abs(Yh).max()


def test_a_delayed_feedthrough_sees_the_inputs_of_the_step_before():
    # the delayed model's outputs: C x_k + D v_{k-1} (the first point D v_0), its states those
    # of the direct model
    lay = Layout(3, 2, 1, 1, True, True, delayed=True)
    theta = np.random.default_rng(3).standard_normal(lay.size)
    (t, v, _y, _h), _ = records(lay, 0)
    rec = [(t, v, np.zeros((t.size, 2)), "zoh")]
    (X, Y), = PortedModel(lay, rec).simulate(theta)
    (X0, _), = PortedModel(Layout(3, 2, 1, 1, True, True), rec).simulate(theta)
    _A, _B, C, D = state_space(lay, blocks(lay, theta))
    np.testing.assert_array_equal(X, X0)
    seen = np.concatenate([v[:1], v[:-1]])
    np.testing.assert_allclose(Y, X @ C.T + seen @ D.T, rtol=0, atol=1e-13 * np.abs(Y).max())


def test_levenberg_marquardt_recovers_exact_data():
    lay = Layout(3, 2, 1, 1, True, True)
    rng = np.random.default_rng(4)
    truth = rng.standard_normal(lay.size)
    recs = records(lay, 0)
    sims = PortedModel(lay, recs).simulate(truth)
    pm = PortedModel(lay, [(t, v, Y, h) for (t, v, _y, h), (_X, Y) in zip(recs, sims)])
    out = levenberg_marquardt(pm.residual, pm.jacobian, truth + 0.05 * rng.standard_normal(
        lay.size), max_iter=100)
    assert out.cost_history[-1] <= 1e-20 * out.cost_history[0]  # measured 1e-17 from 0.3
