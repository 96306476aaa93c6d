"""A linear surrogate fitted as late outputs, rewritten with a delayed feedthrough: the same
samples at the step it was fitted at, the delayed-feedthrough FMU's behaviour at other steps;
cores it cannot rewrite are left as they are."""

import numpy as np

from fmu_surrogate.identify.delayed_form import as_delayed_feedthrough
from fmu_surrogate.ph import LinearPH, PortedSystem, PortMap, simulate

H = 0.01


def _core():
    # a damped oscillator with a constant source port (an offset): ports (F, 1)
    return LinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, 0.4]), np.diag([30.0, 0.5]),
                    [[0.0, 0.2], [1.0, -0.3]])


def _ports(Cx, Du, cy):
    return PortMap(("F",), ("f", "x"), (None,), (None, None), Tu=[[1.0], [0.0]], cu=[0.0, 1.0],
                   Ty=np.zeros((2, 2)), Cx=Cx, Du=Du, cy=cy)


def test_the_rewritten_surrogate_has_the_same_samples_and_the_fmus_other_steps():
    # the truth: outputs C x_k + D u_{k-1} + c, zeros before the first step (a doStep-only FMU)
    truth = PortedSystem(_core(), _ports([[3.0, -1.0], [0.0, 2.0]], [[5.0], [0.0]],
                                         [100.0, 0.1]), [0.5, -0.2], delayed_feedthrough=True,
                         first_outputs=[0.0, 0.0])
    # its late form at H: C' = C Φ, D' = C Γ Tu + D, c' = C Γ cu + c (what the fit finds)
    A, B, _ = truth.system.state_space()
    from scipy.linalg import expm

    M = np.zeros((4, 4))
    M[:2, :2], M[:2, 2:] = A, B
    E = expm(M * H)
    C = np.array(truth.ports.Cx)
    late = PortedSystem(truth.system, _ports(C @ E[:2, :2], C @ E[:2, 2:3] + [[5.0], [0.0]],
                                             C @ E[:2, 3] + [100.0, 0.1]),
                        truth.x0, late_outputs=True, first_outputs=[0.0, 0.0])
    back = as_delayed_feedthrough(late, H)
    assert back.delayed_feedthrough and not back.late_outputs
    u = np.random.default_rng(3).normal(size=(201, 1))
    for h in (H, H / 4):  # at the fitted step, and at another one
        t = np.arange(u.shape[0]) * h
        y_truth = simulate(truth, t, u, hold="zoh").y
        y_back = simulate(back, t, u, hold="zoh").y
        assert np.array_equal(y_back[0], [0.0, 0.0])
        # round-off of Φ⁻¹ (measured 3e-15 relative)
        assert np.abs(y_back - y_truth).max() / np.abs(y_truth).max() < 1e-12
    t = np.arange(u.shape[0]) * H
    y_late, y_truth = simulate(late, t, u, hold="zoh").y, simulate(truth, t, u, hold="zoh").y
    assert np.abs(y_late - y_truth).max() / np.abs(y_truth).max() < 1e-12
    t = np.arange(u.shape[0]) * H / 4  # the late form holds at its own step only
    assert np.abs(simulate(late, t, u, hold="zoh").y
                  - simulate(truth, t, u, hold="zoh").y).max() > 1e-3 * np.abs(y_truth).max()


def test_outputs_that_read_a_port_are_not_rewritten():
    p = _ports([[0.0, 0.0], [0.0, 1.0]], np.zeros((2, 1)), [0.0, 0.0])
    from dataclasses import replace

    late = PortedSystem(_core(), replace(p, Ty=[[1.0, 0.0], [0.0, 0.0]]), late_outputs=True)
    assert as_delayed_feedthrough(late, H) is None
    assert as_delayed_feedthrough(PortedSystem(_core(), p), H) is None  # not late
