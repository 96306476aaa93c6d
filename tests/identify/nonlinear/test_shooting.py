"""The RK4 rollout over shooting segments (identify/nonlinear/shooting.py): its derivatives by one
pass of dual numbers against central differences, its steps against RK4 written out on its vector
field, its Jacobian and power-law forces against closed forms, and a dual pass that never takes
PyTorch's reference decompositions (the slow path)."""

from __future__ import annotations

import sys

import numpy as np
import torch
import torch.autograd.forward_ad as fwad

from fmu_surrogate.identify.nonlinear.parametrisation import Layout
from fmu_surrogate.identify.nonlinear.shooting import (
    VectorField,
    _Tangents,
    make_segments,
    rollout,
)


def _model():
    """A two-state model with a quartic, a logcosh (both preloaded) and a periodic ridge, a
    power-law loss, a feedthrough with its own power-law term (every kind of term the field
    evaluates), random parameters inside the optimiser's box, and two experiments cut into
    segments of 5 steps."""
    layout = Layout(n=2, m=1, kinds=("quartic", "logcosh", "periodic"), n_dissipation=1,
                    feedthrough=True, n_shoot=0, n_port_dissipation=1)
    rng = np.random.default_rng(3)
    theta = 0.4 * rng.standard_normal(layout.size)
    sl = layout.slices()
    for name, value in (("alpha", 0.3), ("beta", 0.5), ("pbeta", 0.2), ("p", 0.6), ("pp", -0.4),
                        ("ld", -1.0), ("pld", -0.5), ("asym", 0.3), ("pasym", -0.2)):
        theta[sl[name][0]] = value
    theta[sl["rc"][0]] = (0.7, -0.4, 0.0)  # preloaded quartic and logcosh (a periodic: none)
    t = np.linspace(0.0, 1.0, 11)
    exps = [(t, np.sin(3 * t + k)[:, None], np.zeros((11, 1)), hold)
            for k, hold in enumerate(("linear", "zoh"))]
    return layout, theta, make_segments(exps, 5)


def _outputs(layout, theta, seg, x0):
    """Outputs and states of the rollout (two substeps) from the start states ``x0``."""
    field = VectorField(layout, theta)
    lead = tuple(theta.shape[:-1])
    return rollout(field, x0.expand(lead + x0.shape), seg, substeps=2)


def _check_dual_pass(layout, theta, seg):
    """The rollout's outputs and states differentiated by one dual pass against central
    differences in every parameter."""
    x0 = torch.tensor([[0.5, -0.3]] * len(seg.first), dtype=torch.float64)
    P = theta.size
    with fwad.dual_level():
        th = fwad.make_dual(torch.as_tensor(theta).expand(P, -1).contiguous(),
                            torch.eye(P, dtype=torch.float64))
        y, x = _outputs(layout, th, seg, x0)
        dy, dx = fwad.unpack_dual(y).tangent.numpy(), fwad.unpack_dual(x).tangent.numpy()
    h = 1e-6
    for i in range(P):
        e = np.zeros(P)
        e[i] = h
        yp, xp = _outputs(layout, torch.as_tensor(theta + e), seg, x0)
        ym, xm = _outputs(layout, torch.as_tensor(theta - e), seg, x0)
        # central differences err by O(h²) ≈ 1e-12 plus round-off ≈ ε/h ≈ 1e-10 (values O(1))
        np.testing.assert_allclose(dy[i], (yp - ym).numpy() / (2 * h), atol=1e-8)
        np.testing.assert_allclose(dx[i], (xp - xm).numpy() / (2 * h), atol=1e-8)


def test_the_dual_pass_matches_central_differences():
    _check_dual_pass(*_model())


def test_the_jacobian_and_the_power_law_forces_are_their_closed_forms():
    layout, theta, _ = _model()
    field = _Tangents(VectorField(layout, torch.as_tensor(theta)), ())
    b = layout.unpack(theta)
    x = np.array([[0.7, -0.2], [-1.5, 0.4]])
    u = np.array([[0.3], [-2.0]])
    # the force of the loss term at z: β (s² + δ²)^(p/2) (1 + a s / √(s² + δ²)) s along m
    z = field.effort(x, None)[0]
    s = z @ b["mdir"][0]
    q = s ** 2 + np.exp(2 * b["ld"][0])
    force = b["beta"][0] * q ** (b["p"][0] / 2) * (1 + b["asym"][0] * s / np.sqrt(q)) * s
    f_without = field.T.T @ z.T + field.Bin.T @ u.T
    expected = f_without.T - np.outer(force, b["mdir"][0])
    # exp(p log q) against q**p: a few units of round-off in the last place
    np.testing.assert_allclose(field(x, None, u @ field.Bin, None)[0], expected, rtol=1e-13,
                               atol=1e-14)
    # the Jacobian ∂f/∂x against central differences: O(h²) ≈ 1e-12 plus ε/h ≈ 1e-10
    h, J = 1e-6, field.jacobian(x, u)
    for i in range(2):
        e = np.zeros(2)
        e[i] = h
        fd = (field(x + e, None, u @ field.Bin, None)[0]
              - field(x - e, None, u @ field.Bin, None)[0]) / (2 * h)
        np.testing.assert_allclose(J[:, :, i], fd, atol=1e-8)


def test_the_rollout_steps_rk4_on_its_vector_field():
    """The rollout (the effort at a node reused, the inputs through ``B_in`` taken once) against
    RK4 written out on its vector field, for both holds (two experiments: linear, zero-order)."""
    layout, theta, seg = _model()
    field = VectorField(layout, torch.as_tensor(theta))
    f = _Tangents(field, ())
    x = np.array([[0.5, -0.3]] * len(seg.first))
    y, xs = rollout(field, torch.as_tensor(x), seg)
    for k in range(seg.h.shape[1]):
        h = seg.h[:, k : k + 1].numpy()
        ua, ub = seg.u0[:, k].numpy(), seg.u1[:, k].numpy()
        um = 0.5 * (ua + ub)
        k1 = f(x, None, ua @ f.Bin, None)[0]
        k2 = f(x + 0.5 * h * k1, None, um @ f.Bin, None)[0]
        k3 = f(x + 0.5 * h * k2, None, um @ f.Bin, None)[0]
        k4 = f(x + h * k3, None, ub @ f.Bin, None)[0]
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        # the same arithmetic in another order: a few units of round-off (values O(1))
        np.testing.assert_allclose(xs[:, k + 1].numpy(), x, rtol=0, atol=1e-14)
        np.testing.assert_allclose(y[:, k + 1].numpy(),
                                   f.output(x, None, seg.unode[:, k + 1].numpy())[0],
                                   rtol=0, atol=1e-14)


def test_the_dual_pass_never_takes_the_reference_decompositions():
    """PyTorch evaluates a dual number times a plain tensor or a Python number through Python
    reference implementations (``torch/_refs``), 15–60 times slower than between two dual
    numbers: the vector field's constants are dual where the parameters are, and the rollout
    leaves torch for its steps."""
    layout, theta, seg = _model()
    x0 = torch.tensor([[0.5, -0.3]] * len(seg.first), dtype=torch.float64)
    P = theta.size
    calls = []

    def count(frame, event, arg):
        if event == "call" and "_refs" in frame.f_code.co_filename:
            calls.append(frame.f_code.co_name)

    with fwad.dual_level():
        th = fwad.make_dual(torch.as_tensor(theta).expand(P, -1).contiguous(),
                            torch.eye(P, dtype=torch.float64))
        x_start = x0.expand((P,) + x0.shape)
        sys.setprofile(count)
        try:
            rollout(VectorField(layout, th), x_start, seg, substeps=2)
        finally:
            sys.setprofile(None)
    assert calls == []


def test_a_diverging_trial_gives_non_finite_outputs_without_warnings():
    """A trial step of the optimiser may make the model blow up: the rollout then returns
    infinities or NaN (which the fit rejects) and warns nothing."""
    import warnings

    layout, theta, seg = _model()
    theta[layout.slices()["alpha"][0]] = 1e300
    x0 = torch.tensor([[50.0, -30.0]] * len(seg.first), dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y, _ = rollout(VectorField(layout, torch.as_tensor(theta)), x0, seg)
    assert not torch.isfinite(y).all()


def test_a_batch_of_different_parameter_vectors_rolls_out_each():
    """The values keep their batch axis where the members differ: each member's outputs are
    those of its own rollout (the same arithmetic, so equal to round-off)."""
    layout, theta, seg = _model()
    other = theta + 0.05 * np.random.default_rng(1).standard_normal(theta.size)
    x0 = torch.tensor([[0.5, -0.3]] * len(seg.first), dtype=torch.float64)
    both = _outputs(layout, torch.as_tensor(np.stack([theta, other])), seg, x0)
    for i, th in enumerate((theta, other)):
        alone = _outputs(layout, torch.as_tensor(th), seg, x0)
        for b, a in zip(both, alone):
            np.testing.assert_allclose(b[i].numpy(), a.numpy(), rtol=1e-14, atol=1e-14)


def _contact_model():
    """A two-state model with a contact (a gap ridge whose damper is limited by a gate), a
    power-law loss besides, random parameters, and two experiments in segments of 5 steps;
    the inputs drive the state beyond the gap, so the limit holds at some nodes, not at
    others."""
    layout = Layout(n=2, m=1, kinds=("quartic", "contact"), n_dissipation=1,
                    feedthrough=False, n_shoot=0)
    rng = np.random.default_rng(5)
    theta = 0.4 * rng.standard_normal(layout.size)
    sl = layout.slices()
    for name, value in (("alpha", 0.3), ("beta", (0.5, 3.0)), ("p", (0.6, 0.0)),
                        ("ld", -1.0), ("asym", (0.3, 0.0)), ("gkappa", 0.8), ("gshift", 0.1)):
        theta[sl[name][0]] = value
    theta[sl["w"][0]] = (0.2, 0.1, 2.5, 0.3)  # the gap: |2.5 x1 + 0.3 x2 + c| <= 1
    theta[sl["gdir"][0]] = (2.0, 0.4)
    theta[sl["rc"][0]] = (0.2, 0.0)
    t = np.linspace(0.0, 1.0, 11)
    exps = [(t, 3.0 * np.sin(5 * t + k)[:, None], np.zeros((11, 1)), hold)
            for k, hold in enumerate(("linear", "zoh"))]
    return layout, theta, make_segments(exps, 5)


def test_a_contacts_damper_is_the_power_dissipation_of_the_system_and_differentiates():
    from fmu_surrogate.identify.nonlinear.parametrisation import to_system
    from fmu_surrogate.ph import PowerDissipation

    layout, theta, seg = _contact_model()
    system = to_system(layout, theta)
    assert system.dissipation.gated.tolist() == [False, True]
    field = _Tangents(VectorField(layout, torch.as_tensor(theta)), ())
    rng = np.random.default_rng(0)
    x = rng.uniform(-1.2, 1.2, size=(400, 2))
    u = rng.standard_normal((400, 1))
    z = system.effort(x)
    d = system.dissipation
    s = z @ d.directions.T
    ungated = PowerDissipation(d.directions, d.gains, d.exponents, d.smoothing, d.asymmetry)
    limited = d.coefficients(z) * s != ungated.coefficients(z) * s
    assert 20 < limited[:, 1].sum() < 380 and not limited[:, 0].any()  # both branches visited
    expected = z @ (system.J - system.R).T - d.force(z) + u @ system.B.T
    # the same formulas in another order (exp(p log q) against q**p): round-off
    np.testing.assert_allclose(field(x, None, u @ field.Bin, None)[0], expected, rtol=1e-12,
                               atol=1e-12)
    # the tangents of the rollout against central differences (the limit holds at 9 of its 24
    # nodes, none at a kink)
    _check_dual_pass(layout, theta, seg)
