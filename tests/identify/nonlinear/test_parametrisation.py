"""Every parameter vector is a pH system, and the fit's vector field is the ph model's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp

from fmu_surrogate.identify.nonlinear.parametrisation import Layout, to_system
from fmu_surrogate.identify.nonlinear.shooting import (
    VectorField,
    _Tangents,
    make_segments,
    rollout,
)
from fmu_surrogate.ph import simulate


def random_theta(rng, layout):
    """Random numbers, projected onto the optimiser's box (α, β ≥ 0, p in its bounds)."""
    theta = rng.normal(size=layout.size)
    lo = np.array([-np.inf if b[0] is None else b[0] for b in layout.bounds()])
    hi = np.array([np.inf if b[1] is None else b[1] for b in layout.bounds()])
    return np.clip(theta, lo, hi)


LAYOUTS = [Layout(3, 2, ("quartic", "logcosh"), 2, True, 0),
           Layout(2, 1, ("quartic",), 1, False, 4), Layout(2, 1, (), 0, False, 0),
           Layout(3, 1, ("logcosh", "periodic"), 1, False, 0)]


@pytest.mark.parametrize("layout", LAYOUTS, ids=["feedthrough", "plain", "linear", "periodic"])
def test_random_parameters_are_admissible_and_the_fit_steps_the_surrogate(layout):
    rng = np.random.default_rng(0)
    for _ in range(10):
        theta = random_theta(rng, layout)  # log δ included: δ = exp(·) > 0 for every value
        sys = to_system(layout, theta)  # raises StructureError if not pH
        x = rng.normal(size=(7, layout.n))
        u = rng.normal(size=(7, layout.m))
        field = _Tangents(VectorField(layout, torch.as_tensor(theta)), ())
        f = field(x, None, u @ field.Bin, None)[0]
        y = field.output(x, None, u)[0]
        # the fit's field against the surrogate's (fmu_surrogate.ph): round-off only
        assert np.allclose(f, sys.flow(x, u), rtol=1e-12, atol=1e-12)
        assert np.allclose(y, sys.output(x, u), rtol=1e-12, atol=1e-12)
        Rx = sys.dissipation_matrix(x)
        assert np.linalg.eigvalsh(Rx).min() >= -1e-12 * max(1.0, np.abs(Rx).max())
        # H ≥ 0 (a periodic ridge's share σ ∈ [0, 1] of the form: up to the round-off of ½|x|²)
        assert sys.hamiltonian(10 * x).min() >= -1e-12 * 50 * (x * x).sum(axis=1).max()


@pytest.mark.parametrize("hold", ["linear", "zoh"])
def test_rk4_rollout_agrees_with_scipy_and_the_structure_preserving_simulation(hold):
    layout = Layout(2, 1, ("quartic",), 1, False, 0)
    theta = np.zeros(layout.size)
    b = layout.unpack(theta)
    b["U"][:] = 1.0
    b["L"][:] = [[0.1, 0.0], [0.0, 0.2]]
    b["G"][:] = [[0.0], [1.0]]
    b["alpha"][:] = 0.5
    b["w"][:] = [[1.0, 0.0]]
    b["beta"][:] = 0.3
    b["mdir"][:] = [[0.0, 1.0]]
    b["p"][:] = 1.0 / 3.0
    b["ld"][:] = np.log(1e-3)
    t = np.linspace(0.0, 4.0, 401)
    u = np.sin(2.0 * t)[:, None]
    sys = to_system(layout, theta)
    seg = make_segments([(t, u, np.zeros_like(u), hold)], None)
    field = VectorField(layout, torch.as_tensor(theta))
    Y = rollout(field, torch.zeros((1, 2), dtype=torch.float64), seg)[0][0].numpy()
    avf = simulate(sys, t, u, hold=hold).y
    scale = np.abs(avf).max()
    # AVF is second order (h = 0.01): measured 4.5e-5 (linear) and 3.4e-5 (zoh) of max |y|
    # from scipy's solution, RK4 2e-7 and 2e-8
    assert np.abs(Y - avf).max() <= 1e-4 * scale
    if hold == "linear":
        def rhs(s, x):  # the model written out: J = [[0, 1], [−1, 0]], R₀ = diag(.01, .04)
            z1, z2 = x[0] + 0.5 * x[0] ** 3, x[1]
            damper = 0.3 * (z2 * z2 + 1e-6) ** (1 / 6) * z2
            return [z2 - 0.01 * z1, -z1 - 0.04 * z2 - damper + np.interp(s, t, u[:, 0])]

        sol = solve_ivp(rhs, (0, 4), [0, 0], t_eval=t, rtol=1e-12, atol=1e-13, method="DOP853")
        ref = sol.y[1][:, None]
        assert np.abs(Y - ref).max() <= 2e-6 * scale


def test_segments_cut_experiments_into_equal_pieces():
    t = np.arange(11.0)
    u = t[:, None]
    seg = make_segments([(t, u, u, "zoh"), (t[:8], u[:8], u[:8], "linear")], 3)
    # 10 steps → 3 whole segments (the last step left out), 7 steps → 2
    assert seg.starts == ((0, 0), (0, 3), (0, 6), (1, 0), (1, 3))
    assert seg.first.tolist() == [True, False, False, True, False]
    assert seg.next_index.tolist() == [1, 2, -1, 4, -1]
    assert np.array_equal(seg.u1[0, :, 0].numpy(), [0, 1, 2])  # zoh: u_k over the step
    assert np.array_equal(seg.u1[3, :, 0].numpy(), [1, 2, 3])  # linear: u_{k+1} at the end


def test_a_periodic_ridge_holds_its_share_of_the_form():
    """The α entry of a periodic ridge is its share σ ∈ [0, 1] of the quadratic form along w:
    the system's weight is σ / |w|², and a second periodic ridge is refused (two shares could
    exceed the form)."""
    layout = Layout(2, 1, ("periodic",), 0, False, 0)
    a = layout.slices()["alpha"][0].start
    assert layout.bounds()[a] == (0.0, 1.0)
    theta = np.zeros(layout.size)
    b = layout.unpack(theta)
    b["U"][:], b["G"][:] = 1.0, [[0.0], [1.0]]
    b["alpha"][:], b["w"][:] = 1.0, [[0.5, 0.0]]
    eff = to_system(layout, theta).effort_function
    assert eff.kinds == ("periodic",) and eff.weights[0] == 4.0  # σ / |w|² = 1 / 0.25
    # at σ = 1 the energy along w is 4 (1 − cos(x₁/2)) alone: a pendulum, bounded below
    x = np.array([[2 * np.pi, 0.0], [4 * np.pi, 0.0]])
    assert np.allclose(eff.hamiltonian(x), [8.0, 0.0], rtol=0, atol=1e-13)
    with pytest.raises(ValueError, match="periodic ridges; the fit takes one"):
        Layout(2, 1, ("periodic", "periodic"), 0, False, 0)
