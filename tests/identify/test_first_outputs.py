"""Outputs an FMU shows before its first step as fixed values (outputs computed in ``doStep``
only): found from the data, shown by the surrogate there, and left alone where the outputs at
``t₀`` are the model's."""

import functools

import numpy as np

from fmu_surrogate.identify.first_outputs import fixed_first_outputs
from fmu_surrogate.identify.selection import select_dataset
from fmu_surrogate.ph import simulate
from tests.identify.test_selection import _mass_dataset


def test_fixed_first_outputs_are_found_and_shown():
    ds, F, y = _mass_dataset()  # a damped mass from rest, two runs
    for name, value in (("x", 0.5), ("v", 0.0), ("a", -2.0)):  # what the FMU left there
        ds[name][:, 0] = value
    choice = select_dataset(ds, late_outputs=False)
    sur = choice.surrogate()
    assert np.array_equal(sur.first_outputs, [0.5, 0.0, -2.0])
    assert "fixed values" in choice.report()
    t = ds["time"].values
    y_hat = simulate(sur, t, F[:, None], hold="zoh").y
    assert np.array_equal(y_hat[0], [0.5, 0.0, -2.0])
    assert "fitted without them" in choice.report()
    # the rest the model's, fitted as if the first points were missing: the exact data of a
    # linear system, measured 5.5e-8 relative with OpenBLAS's Haswell and Zen kernels alike
    # (taken as data the fixed values gave 72, 7e3 %; an initial state is learned now, the
    # first points replaced once by the model's)
    assert np.abs(y_hat[1:] - y[1:]).max() / np.abs(y).max() < 1e-6


def test_outputs_that_are_the_models_at_t0_are_left_alone():
    ds, _, _ = _mass_dataset()
    choice = select_dataset(ds, late_outputs=False)
    assert choice.surrogate().first_outputs is None
    sur = choice.surrogate()
    # values that differ from run to run are the model's, whatever the surrogate shows
    ds["x"][1, 0] = 0.5
    assert fixed_first_outputs(sur, ds, ["F"], ["x", "v", "a"], [0, 1], 0.01) is None


def test_late_outputs_repeat_the_first_point():
    from fmu_surrogate.identify.first_outputs import first_point_repeated

    ds, _, _ = _mass_dataset()
    assert not first_point_repeated(ds, ["x", "v", "a"], [0, 1])
    for name in ("x", "v", "a"):  # output-then-update code: the start shown twice
        ds[name][:, 1] = ds[name][:, 0]
    assert first_point_repeated(ds, ["x", "v", "a"], [0, 1])


#: The coil spring with mass as a linear coil (x_ref large), unstretched at the start.
COIL = {"x_ref": 1e3, "x0": 0.0}


@functools.lru_cache(maxsize=1)
def _coil_runs():
    """Six runs of the coil spring with mass (20 segments, scipy's BDF; the velocity held over
    each 10 ms step from the first value, ``v0 cos(8 t + 3 v0)``): the force as a co-simulation
    FMU shows it (at ``t0`` it sees the velocity set at initialisation, later the step's)."""
    from scipy.integrate import solve_ivp

    from fmu_surrogate.benchmarks.vendor import progressive_spring_detailed as coil

    params = {**coil.PARAMS, **COIL}
    t = np.arange(0.0, 0.5 + 1e-9, 0.01)
    runs = []
    for v0 in (0.05, -0.03, 0.08, -0.07, 0.02, 0.06):
        v = v0 * np.cos(8.0 * t + 3.0 * v0)
        x, states = coil.initial_state(params), []
        for k in range(t.size):
            states.append(x)
            if k + 1 < t.size:
                x = solve_ivp(lambda _, s, vk=v[k]: coil.rhs(s, vk, params), (t[k], t[k + 1]),
                              x, method="BDF", rtol=1e-10, atol=1e-12,
                              jac=lambda _, s, vk=v[k]: coil.jacobian(s, vk, params)).y[:, -1]
        seen = np.concatenate([v[:1], v[:-1]])
        runs.append((t, v[:, None], coil.force(np.array(states), seen, params)[:, None], "zoh"))
    return runs


def test_a_coil_with_mass_shows_its_last_segments_damper_at_the_first_point():
    """A coil of 20 segments driven by its velocity: once its surge modes settle within the
    step it is the spring k with the series damping c_seg / N, delayed; at the first point the
    velocity set at initialisation meets the last segment's damper c_seg alone (the inner nodes
    at rest).  Fitted to the first points of five runs against that lumped surrogate, D0 is
    c_seg."""
    from fmu_surrogate.benchmarks.vendor import progressive_spring_detailed as coil
    from fmu_surrogate.identify.first_outputs import with_first_feedthrough
    from fmu_surrogate.ph import LinearPH, PortedSystem, PortMap

    k, c = coil.PARAMS["k"], coil.PARAMS["c_seg"]
    lumped = LinearPH([[0.0]], [[0.0]], [[k]], [[1.0]], S=[[c / coil.N_SEGMENTS]])
    ports = PortMap.identity(1, ("v",), ("F",), n_states=1)
    sur = PortedSystem(lumped, ports, delayed_feedthrough=True)
    runs = _coil_runs()[:5]
    fast = with_first_feedthrough(sur, runs, np.array([0.0]))
    assert fast.inputs_before.tolist() == [0.0]
    # the first points are c_seg v0 off the lumped model, exactly (the coil's own arithmetic)
    np.testing.assert_allclose(fast.first_feedthrough, [[c]], rtol=1e-9)
    for t, u, y, _ in runs:  # the whole run now as close as the coil's settling, first point too
        swing = np.abs(y - y[0]).max()
        err, plain = (np.abs(simulate(s, t, u).y - y).max() / swing for s in (fast, sur))
        # measured ≤ 6.5e-4 (the surge modes' rest after each velocity step) against ≥ 3.7 %
        assert err < 2e-3 and plain > 0.03
    # nothing to fit: unknown start values, too few runs, or first outputs the model's
    assert with_first_feedthrough(sur, runs, None) is sur
    assert with_first_feedthrough(sur, runs[:2], np.array([0.0])) is sur
    settled = [(t, u, np.concatenate([[y[0, 0] - (c - c / coil.N_SEGMENTS) * u[0, 0]],
                                      y[1:, 0]])[:, None], h) for t, u, y, h in runs]
    assert with_first_feedthrough(sur, settled, np.array([0.0])) is sur


def test_the_linear_fit_of_a_coil_with_mass_finds_its_first_feedthrough():
    """The coil's harvest as a dataset (the velocity's start value 0): the linear fit of order 1
    with a delayed feedthrough finds the last segment's damper at the first point too, and the
    held-out run's first point is as close as the rest."""
    import json

    from fmu_surrogate.benchmarks.vendor import progressive_spring_detailed as coil
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset
    from fmu_surrogate.identify import LinearPHIdentifier

    runs = _coil_runs()
    recs = [RunRecord(index=r, values={"v": u[:, 0], "F": y[:, 0]})
            for r, (_, u, y, _) in enumerate(runs)]
    ds = records_to_dataset(recs, runs[0][0], None, ["v", "F"], attrs={
        "input_interpolation": "zero-order hold over each step",
        "input_start_values": json.dumps({"v": 0.0})})
    for n, unit, c in (("v", "m/s", "input"), ("F", "N", "output")):
        ds[n].attrs.update(causality=c, units=unit, type="Real")
    est = LinearPHIdentifier(order=1, delayed_feedthrough=True).fit_dataset(ds, runs=range(5))
    sur = est.to_surrogate()
    assert sur.inputs_before.tolist() == [0.0]
    # c_seg less what the fitted model shows of it at the start (measured 0.5993 for 0.6)
    np.testing.assert_allclose(sur.first_feedthrough, [[coil.PARAMS["c_seg"]]], rtol=1e-2)
    t, u, y, _ = runs[5]
    err = np.abs(simulate(sur, t, u).y - y) / np.abs(y - y[0]).max()
    # held out: measured 2.3e-4 at the first point, 1.0e-3 over the run (without D0: 4.3 %
    # at the first point)
    assert err[0, 0] < 1e-3 and err.max() < 3e-3
