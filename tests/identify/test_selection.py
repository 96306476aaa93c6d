"""Linear or nonlinear: the held-out error decides, and the report says why."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.identify.selection import ModelSelectionError, select_model


def test_linear_data_keep_the_linear_model(mass_experiment):
    """A linear mass-spring-damper: the linear fit is exact, nothing nonlinear is tried."""
    from fmu_surrogate.ph import LinearPH, simulate

    sys = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.3]), np.diag([2.0, 1.0]), [[0.0], [1.0]])
    data = []
    for s in (1, 2):
        t, u, _ = mass_experiment(s, T=8.0)
        data.append((t, u, simulate(sys, t, u).y))
    choice = select_model(data[:1], data[1:], order=2)
    # measured 2.1e-4: the data come from the midpoint rule (h = 0.02), the fit is the exact
    # discretisation of a continuous-time model, their difference is O(h²)
    assert choice.method == "linear" and choice.linear_error < 1e-3
    assert np.isnan(choice.nonlinear_error) and "no nonlinear model needed" in choice.report()


def test_nonlinear_data_move_on_to_the_nonlinear_model(mass_experiment):
    data = [mass_experiment(s) for s in (1, 2)]
    choice = select_model(data[:1], data[1:], order=2,
                          nonlinear={"ridges": ("quartic",), "segment_length": 25,
                                     "max_iter": 60})
    # measured: linear 48.2 % held-out, nonlinear 4.5 % after 60 iterations (one training run)
    assert choice.method == "nonlinear"
    assert choice.nonlinear_error < 0.2 * choice.linear_error
    assert "exceeds the tolerance" in choice.reason
    # the nonlinear model started from the very linear fit that was validated
    assert choice.estimator.result_.linear_validation_error == choice.linear_error


def test_a_nonlinear_fit_that_cannot_start_keeps_the_linear_model(mass_experiment):
    """A short record gives a linear start with a mode far faster than the sampling: the
    nonlinear fit refuses it with the fix named, and the linear model is kept."""
    data = [mass_experiment(s, T=10.0) for s in (1, 2)]
    choice = select_model(data[:1], data[1:], order=2)
    assert choice.method == "linear" and "lower order" in choice.reason
    with pytest.raises(ModelSelectionError, match="tolerance"):
        select_model(data[:1], order=2, tolerance=0.0)


def _mass_dataset():
    """Two runs of a damped mass (force in; position, velocity, acceleration out, from rest,
    zero-order hold): the dataset of tests/identify/linear/test_dataset.py, one run per input."""
    from fmu_surrogate.fmu.dataset.build import assemble_dataset
    from tests.identify.linear.test_dataset import T, mass_outputs

    Fs = [np.sin(1.3 * T) + 0.5 * np.sin(3.1 * T + 0.4), np.cos(0.7 * T) - 0.3 * np.sin(2.3 * T)]
    ys = [mass_outputs(F) for F in Fs]
    names = ["F", "x", "v", "a"]
    cols = [(n, "", np.stack([F if j == 0 else y[:, j - 1] for F, y in zip(Fs, ys)]))
            for j, n in enumerate(names)]
    ds = assemble_dataset(T, None, names, cols, runs=np.array([0, 1]), failure_kind=["", ""],
                          message=["", ""], n_samples=np.array([T.size] * 2),
                          wall_time=np.zeros(2), params={}, signal_table=["{}"],
                          signal_index=np.zeros(2, dtype=np.int64),
                          attrs={"input_interpolation": "zero-order hold over each step"})
    for n, c, u in (("F", "input", "N"), ("x", "output", "m"), ("v", "output", "m/s"),
                    ("a", "output", "m/s2")):
        ds[n].attrs.update(causality=c, units=u, type="Real")
    return ds, Fs[1], ys[1]


def test_select_dataset_defaults_give_the_drop_in_linear_model():
    from fmu_surrogate.identify.heldout import split_runs
    from fmu_surrogate.identify.selection import select_dataset
    from fmu_surrogate.ph import PortedSystem, simulate
    from tests.identify.linear.test_dataset import T

    ds, F2, y2 = _mass_dataset()
    assert split_runs(ds) == ([0], [1])  # all runs but the last train
    choice = select_dataset(ds)
    assert choice.method == "linear" and choice.estimator is choice.linear
    text = choice.report()
    assert "power pair F -> v, power in" in text and "only pairing the units allow" in text
    assert "measured outputs (no power pair): x, a" in text and "order 2 chosen" in text
    sur = choice.estimator.to_surrogate()
    assert isinstance(sur, PortedSystem) and sur.output_names == ("x", "v", "a")
    # the reported error is the held-out run's, recomputed here against scipy's lsim: measured
    # 7e-7 (the position, a lossless integrator state; see test_dataset.py)
    y_hat = simulate(sur, T, F2[:, None], hold="zoh").y
    err = float((np.abs(y_hat - y2).max(axis=0) / np.abs(y2).max(axis=0)).max())
    assert choice.linear_error == pytest.approx(err, rel=1e-9) and err < 1e-4


def test_select_dataset_above_the_tolerance_tries_the_nonlinear_fit():
    from fmu_surrogate.identify.selection import select_dataset

    ds, _, _ = _mass_dataset()
    choice = select_dataset(ds, tolerance=1e-12, nonlinear={"max_iter": 1})
    # kept linear or nonlinear: the report says that the linear error exceeded the tolerance
    # and why the kept model was kept (nonlinear error, or why no nonlinear fit was possible)
    assert "exceeds the tolerance" in choice.reason and choice.linear.system_.n_states == 2
    assert "linear pH model:    held-out error" in choice.report()


def test_the_report_of_a_single_run_says_its_errors_are_training_errors():
    from fmu_surrogate.identify.selection import select_dataset

    ds, _, _ = _mass_dataset()
    one = ds.isel(run=[0])
    choice = select_dataset(one)
    assert choice.checked_on == "training"
    assert "linear pH model:    training error" in choice.report()
    assert "held-out error" not in choice.report().split("<- chosen")[1]  # the order table's
    # errors are held out (the last part of the record), the models' are not


def test_a_damper_with_a_preload_force_is_found_with_its_offset(benchmark_fmus):
    """The power damper's force plus a constant 50 N (a gas-charged damper's preload): the
    linear start is a static map with the offset as a constant source (not slow modes started
    away from rest), and the nonlinear model reproduces the held-out run."""
    import fmu_surrogate as fs
    from fmu_surrogate.identify.selection import select_dataset
    from tests.identify.nonlinear.conftest import DT, T, multisine

    sigs = [{"v": fs.signals.ArraySignal(*multisine(s, 1.0, (0.2, 5.0)), interpolation="zoh")}
            for s in (1, 2, 3)]
    ds = fs.harvest(benchmark_fmus["power_damper"], None, signals=sigs, stop_time=T, step=DT,
                    progress=False, workers=1)
    ds["F"].values = ds["F"].values + 50.0
    choice = select_dataset(ds, nonlinear={"max_iter": 100})
    lin = choice.linear
    assert lin.system_.n_states == 0 and "offsets" in lin.result_.fitted
    assert choice.method == "nonlinear"
    # measured 6e-5 (held-out, worst output); before the order was chosen with the constant
    # input, slow modes took the offset (order 5) and both fits ended at 7 %
    assert choice.nonlinear_error <= 1e-3


def test_the_report_names_the_outputs_a_kept_model_misses():
    from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
    from fmu_surrogate.identify.selection import select_dataset

    ds, _, _ = _mass_dataset()
    # an output of round-off only (an energy balance residual the FMU shows): no model of the
    # inputs explains it, and its relative error is about 100 %
    noise = np.random.default_rng(0).normal(size=ds["x"].shape) * 1e-15
    ds["r"] = (ds["x"].dims, noise, {**ds["x"].attrs, "fmu_variable": "r", "units": "J"})
    # the mass's order given: the search over the orders the round-off output raises (8 to 10,
    # each fit diverging) is not what this test checks, and took 90 of its 97 s
    choice = select_dataset(ds, linear=LinearPHIdentifier(2), nonlinear={"max_iter": 1},
                            late_outputs=False)
    line = next(x for x in choice.report().splitlines() if "error of each output" in x)
    assert line.split(": ")[1].startswith("r ")  # the worst first
    assert "--outputs" in line and all(f"{n} " in line for n in ("x", "v", "a"))
    # r is round-off on the training run as well: the report says the model class misses it
    assert "the kept model misses the training runs too" in choice.report()


def _displacement_spring(t, S, lag=0):
    """``select_dataset`` of a spring driven by its displacement, ``F = k x (1 + (x/x_ref)²)``,
    ``x = x₀ + s``, for the runs ``S`` (runs, samples) of ``s``; with ``lag = 1`` the force of
    the displacement of the sample before (the first: of the first)."""
    from fmu_surrogate.fmu.dataset.build import assemble_dataset
    from fmu_surrogate.identify.selection import select_dataset

    x = 0.004 + S
    if lag:
        x = np.concatenate([x[:, :1], x[:, :-1]], axis=1)
    F = 2e4 * x * (1.0 + (x / 0.02) ** 2)
    ds = assemble_dataset(t, None, ["s", "F"], [("s", "", S), ("F", "", F)],
                          runs=np.arange(3), failure_kind=[""] * 3, message=[""] * 3,
                          n_samples=np.array([t.size] * 3), wall_time=np.zeros(3), params={},
                          signal_table=["{}"], signal_index=np.zeros(3, dtype=np.int64),
                          attrs={"input_interpolation": "zero-order hold over each step"})
    ds["s"].attrs.update(causality="input", units="m", type="Real")
    ds["F"].attrs.update(causality="output", units="N", type="Real")
    return select_dataset(ds)


def test_an_unclear_timing_test_is_settled_by_the_fits():
    """The spring of :func:`_displacement_spring`, the force stiffening up to 13× over the
    record, ``s`` noise up to 2 Hz sampled every 2 ms: the past inputs nearly predict the
    present one, the timing test's ratio is 2.75 (outputs that do not see the current inputs:
    1.0 to 1.3) and calls the outputs delayed, which misses them by 1.5 %.  The model at their
    own point is then fitted too and kept: the law is a cubic of the class, found to
    round-off."""
    from fmu_surrogate.fmu.signals.excitation import BandLimitedNoise

    t = np.arange(0.0, 4.001, 0.002)
    S = np.stack([BandLimitedNoise(f_high=2.0, duration=4.0, std=0.01, seed=s)(t)
                  for s in (1, 2, 3)])
    choice = _displacement_spring(t, S)
    text = choice.report()
    assert "the timing test was not clear" in text and "step before" in text
    assert choice.method == "nonlinear" and not choice.estimator.delayed_feedthrough_
    # measured 1.7e-9 (held out; 1.5e-2 with the delayed form): 1e-6 leaves the optimiser's
    # path room on any BLAS
    assert choice.nonlinear_error < 1e-6


_MULTISINES = ((0.3, 0.7, 1.1, 1.9), (0.2, 0.5, 1.3, 1.7), (0.4, 0.9, 1.2, 1.8))


def _multisine_runs(t):
    from fmu_surrogate.fmu.signals.excitation import SchroederMultisine

    return np.stack([SchroederMultisine(frequencies=f, rms=0.006)(t) for f in _MULTISINES])


def test_a_timing_test_the_inputs_past_blurs_takes_the_outputs_own_point():
    """The same spring under multisines of four lines (0.3 to 1.9 Hz) sampled every 10 ms: the
    past inputs predict the present one so well that the timing test's ratio is that of
    outputs that do not see the current inputs (below 1.5), and the test says it cannot tell
    (the inputs' innovation below the predictor's error): the model at the outputs' own point
    is fitted, and kept.  Before, the delayed model was fitted first and missed (6.0e-2); the
    same spring's FMU under such multisines once ended 11 % off a held-out chirp."""
    t = np.arange(0.0, 10.001, 0.01)
    choice = _displacement_spring(t, _multisine_runs(t))
    ev = choice.estimator.delay_evidence_
    assert ev.delayed and not ev.clear and max(ev.ratios) < 1.5  # measured 1.32
    assert "too little to tell" in choice.report()
    assert choice.method == "nonlinear" and not choice.estimator.delayed_feedthrough_
    # measured 1.2e-9 (held out)
    assert choice.nonlinear_error < 1e-6


def test_outputs_of_the_step_before_the_timing_test_cannot_see_are_settled_by_the_fits():
    """The spring's force computed from the displacement of the step before (an FMU that
    evaluates its outputs in doStep), under the same multisines: the timing test cannot tell
    and the outputs are fitted at their own point first, which misses them (6.4 %); the fit
    one sample earlier (late outputs) finds the law."""
    t = np.arange(0.0, 10.001, 0.01)
    choice = _displacement_spring(t, _multisine_runs(t), lag=1)
    assert "outputs are those of the point before (late outputs)" in choice.report()
    assert choice.method == "nonlinear"
    # measured 1.4e-9 (held out)
    assert choice.nonlinear_error < 1e-6


def test_a_part_released_under_a_load_gets_a_constant_source():
    """The hanging mass released from ``q = 0`` (it falls under its weight): its power output
    starts at rest, so the linear start fits no offset; the nonlinear model from it misses, and
    the start with a constant source finds the weight."""
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset
    from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
    from fmu_surrogate.identify.selection import select_dataset
    from tests.identify.nonlinear.test_estimator import hanging_mass

    runs = [hanging_mass(s, a, T=12.0, dt=0.05, released=True)
            for s, a in ((1, 1.0), (3, 4.0), (4, 3.0))]
    ds = records_to_dataset([RunRecord(index=i, values={"F": u[:, 0], "v": y[:, 0]})
                             for i, (_, u, y) in enumerate(runs)], runs[0][0], None, ["F", "v"])
    choice = select_dataset(ds, inputs=["F"], outputs=["v"], linear=LinearPHIdentifier(order=2))
    assert choice.method == "nonlinear" and "moves without input from rest" in choice.details
    # measured 0.088 % held out (runs of 12 s; 0.072 % from 20 s, in 86 s instead of 72 s);
    # without the source the CLI kept 3.6 % on this mass sampled at 20 ms (four runs)
    assert choice.nonlinear_error < 0.01


def test_a_spent_time_budget_keeps_the_best_model_so_far_and_says_so(mass_experiment):
    """The two-state mass with a cubic spring of :func:`spring_force_choice` (a search of
    about 90 s with the defaults) with a budget of one second: the first nonlinear fit stops
    where it is, no other order is fitted, no alternative is tried, and the report says so."""
    from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
    from fmu_surrogate.identify.selection import select_dataset
    from tests.identify.conftest import CHOICE_DT, PORTS, _dataset

    choice = select_dataset(_dataset(mass_experiment, CHOICE_DT), inputs=["F"],
                            outputs=["v", "Fs"], linear=LinearPHIdentifier(ports=PORTS),
                            max_time=1.0)
    text = choice.report()
    assert "the time budget (max_time, CLI --max-time) was spent: order 2 and the search's " \
        "further orders not fitted" in text
    assert "fitted with a constant source too" not in text and "timing test" not in text
    # the order-1 fit stopped at its start, before its first step (the linear fits take
    # longer than the budget): measured 123 % held out, both errors reported
    assert np.isfinite(choice.nonlinear_error) and np.isfinite(choice.linear_error)
