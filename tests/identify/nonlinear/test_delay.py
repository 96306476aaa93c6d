"""What a delayed feedthrough sees before the first point (:func:`.delay.inputs_before`)."""

from __future__ import annotations

import numpy as np

from fmu_surrogate.identify.nonlinear.delay import inputs_before


class _Damper:
    """A static law ``F = 2 v |v|`` at the operating point ``x0`` (what ``inputs_before``
    evaluates of a surrogate)."""

    x0 = np.zeros(0)

    @staticmethod
    def outputs(x, u):
        return 2.0 * u * np.abs(u)


def _run(v0, F0):
    t = np.arange(0.0, 1.0, 0.1)
    v = v0 + np.sin(2 * np.pi * t)
    return t, v[:, None], np.concatenate([[F0], 2.0 * v[:-1] * np.abs(v[:-1])])[:, None], "zoh"


def test_the_candidate_that_matches_the_first_outputs_is_taken():
    starts = np.array([0.0])
    # at rest before the first step: F_0 = law(start value), the first velocity 0.5
    assert inputs_before(_Damper(), [_run(0.5, 0.0)], starts).tolist() == [0.0]
    # F_0 = law(first velocity)
    assert inputs_before(_Damper(), [_run(0.5, 0.5)], starts) is None
    assert inputs_before(_Damper(), [_run(0.5, 0.0)], None) is None  # start values unknown


def test_first_inputs_at_the_start_values_take_the_first_inputs():
    """A Schroeder multisine starts at zero, the start value: both candidates give the same
    first outputs, and the first inputs (what a harvest and an importer set before
    initialisation) are taken, not the start values by a difference of round-off."""
    runs = [_run(1e-16, 0.0), _run(-2e-16, 0.0)]
    assert inputs_before(_Damper(), runs, np.array([0.0])) is None


def _coil_runs(v0s, params):
    """Runs of the coil spring with mass (20 segments, scipy's BDF; velocity held over each
    10 ms step from the first value): the force as a co-simulation FMU shows it."""
    from scipy.integrate import solve_ivp

    from fmu_surrogate.benchmarks.vendor import progressive_spring_detailed as coil

    t = np.arange(0.0, 0.2 + 1e-9, 0.01)
    runs = []
    for v0 in v0s:
        v = v0 * np.cos(8.0 * t)
        x, states = coil.initial_state(params), []
        for k in range(t.size):
            states.append(x)
            if k + 1 < t.size:
                x = solve_ivp(lambda _, s, vk=v[k]: coil.rhs(s, vk, params), (t[k], t[k + 1]),
                              x, method="BDF", rtol=1e-10, atol=1e-12,
                              jac=lambda _, s, vk=v[k]: coil.jacobian(s, vk, params)).y[:, -1]
        # at t0 the inputs set at initialisation, later those the step held
        seen = np.concatenate([v[:1], v[:-1]])
        runs.append((t, v[:, None], coil.force(np.array(states), seen, params)[:, None], "zoh"))
    return runs


def test_a_coil_with_mass_shows_its_last_segments_damper_at_the_first_point():
    """A coil of 20 segments (a linear one: x_ref large) driven by its velocity: once its surge
    modes settle within the step it is the spring k with the series damping c_seg / N,
    delayed; at the first point the velocity set at initialisation meets the last segment's
    damper c_seg alone (the inner nodes at rest).  Fitted to the first points of five runs
    against the lumped surrogate, D0 is c_seg."""
    from fmu_surrogate.benchmarks.vendor import progressive_spring_detailed as coil
    from fmu_surrogate.identify.nonlinear.delay import with_first_feedthrough
    from fmu_surrogate.ph import LinearPH, PortedSystem, PortMap

    params = {**coil.PARAMS, "x_ref": 1e3}
    k, c = params["k"], params["c_seg"]
    lumped = LinearPH([[0.0]], [[0.0]], [[k]], [[1.0]], S=[[c / coil.N_SEGMENTS]])
    ports = PortMap.identity(1, ("v",), ("F",), n_states=1)
    sur = PortedSystem(lumped, ports, x0=[params["x0"]], delayed_feedthrough=True)
    runs = _coil_runs([0.05, -0.03, 0.08, -0.07, 0.02], params)
    fast = with_first_feedthrough(sur, runs, np.array([0.0]))
    assert fast.inputs_before.tolist() == [0.0]
    # the first points are c_seg v0 off the lumped model, exactly (the coil's own arithmetic)
    np.testing.assert_allclose(fast.first_feedthrough, [[c]], rtol=1e-9)
    from fmu_surrogate.ph import simulate

    for t, u, y, _ in runs:  # the whole run now as close as the coil's settling, first point too
        swing = np.abs(y - y[0]).max()
        err, plain = (np.abs(simulate(s, t, u).y - y).max() / swing for s in (fast, sur))
        # measured 6.1e-4 (the surge modes' rest after each velocity step) against 4.6 %
        assert err < 2e-3 and plain > 0.04
    # nothing to fit: unknown start values, too few runs, or first outputs the model's
    assert with_first_feedthrough(sur, runs, None) is sur
    assert with_first_feedthrough(sur, runs[:2], np.array([0.0])) is sur
    settled = [(t, u, np.concatenate([[y[0, 0] - (c - c / coil.N_SEGMENTS) * u[0, 0]],
                                      y[1:, 0]])[:, None], h) for t, u, y, h in runs]
    assert with_first_feedthrough(sur, settled, np.array([0.0])) is sur
