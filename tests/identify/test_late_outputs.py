"""Outputs that are those of the point before (late outputs): found and fitted."""

from __future__ import annotations

import numpy as np
import pytest

from tests.identify.test_selection import _mass_dataset


def late(ds, outputs=("x", "v", "a")):
    """The dataset as output-then-update code shows it: each output one point late, the first
    two points equal."""
    out = ds.copy(deep=True)
    for name in outputs:
        y = out[name].values
        y[:, 1:] = y[:, :-1].copy()
    return out


def test_late_outputs_are_found_and_the_surrogate_samples_its_outputs_so():
    from fmu_surrogate.identify.selection import select_dataset
    from fmu_surrogate.ph import simulate
    from tests.identify.linear.test_dataset import T

    ds, F2, y2 = _mass_dataset()
    choice = select_dataset(late(ds))
    assert choice.late_outputs and choice.method == "linear"
    assert "late outputs" in choice.report()
    sur = choice.surrogate()
    assert sur.late_outputs
    # against scipy's lsim of the mass, one point late: as accurate as a fit at its own point
    # (7e-7 there, the position a lossless integrator state; measured here 4e-8)
    y_hat = simulate(sur, T, F2[:, None], hold="zoh").y
    y_late = np.concatenate([y2[:1], y2[:-1]])
    err = float((np.abs(y_hat - y_late).max(axis=0) / np.abs(y_late).max(axis=0)).max())
    assert err < 1e-4
    # fitted at their own point, the same outputs are missed by percents (measured 3.8 %)
    kept = select_dataset(late(ds), late_outputs=False, nonlinear={"max_iter": 1})
    assert not kept.late_outputs and kept.linear_error > 0.01


def test_outputs_at_their_own_point_are_not_taken_late():
    from fmu_surrogate.identify.selection import select_dataset

    ds, _, _ = _mass_dataset()
    choice = select_dataset(ds)
    assert not choice.late_outputs and not choice.surrogate().late_outputs
    assert "late outputs" not in choice.report()


def test_late_outputs_as_set_are_fitted_one_sample_earlier():
    from fmu_surrogate.identify.selection import select_dataset

    ds, _, _ = _mass_dataset()
    choice = select_dataset(late(ds), late_outputs=True)
    assert choice.late_outputs and "as set" in choice.report()
    assert choice.linear_error == pytest.approx(select_dataset(late(ds)).linear_error,
                                                rel=1e-6)


def test_late_outputs_of_a_nonlinear_component_are_found_by_the_nonlinear_fit(benchmark_fmus):
    import fmu_surrogate as fs
    from fmu_surrogate.cli.inputs import parse_input_option
    from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
    from fmu_surrogate.identify.selection import select_dataset

    # the saturating coil under the signals of scripts/bench_dropin.py (band-limited noise),
    # three runs of 5 s, the last held out
    sigs = [dict([parse_input_option(f"V=noise:f_low=0.5,f_high=3,duration=5,std=1.7,"
                                     f"seed={k}")]) for k in (1, 2, 3)]
    ds = fs.harvest(benchmark_fmus["saturating_inductor"], None, signals=sigs, stop_time=5.0,
                    step=0.01, progress=False, workers=1)
    # its current as output-then-update code shows it: the saturation's linear misfit hides
    # the delay from the linear test (measured 8.6 % one sample earlier, 13.7 % at its point:
    # not half); the nonlinear model misses the late current at its point (6.8 %) and fits it
    # one sample earlier
    # (60 iterations: the fit one sample earlier converges in about 25, the other cannot; the
    # coil's one state given: the search of higher orders at the outputs' own point, which
    # miss too, is not what this test checks, and took 190 of its 200 s)
    choice = select_dataset(late(ds, ["i"]), linear=LinearPHIdentifier(1),
                            nonlinear={"max_iter": 60})
    assert choice.method == "nonlinear" and choice.late_outputs
    assert choice.surrogate().late_outputs
    assert "the nonlinear model misses them by" in choice.report()
    # the accuracy of the coil's fit (measured 4.2e-4; the same data at their own point 4.6e-4)
    assert choice.nonlinear_error < 0.01


def test_a_late_model_that_cannot_be_fitted_leaves_the_outputs_at_their_point():
    # the test one sample earlier is a second linear fit of the outputs; where it fails (no
    # passive start at the order of the first) the outputs stay at their point and the report
    # says why, instead of the whole identification failing
    from types import SimpleNamespace

    from fmu_surrogate.identify.late_outputs import fit_late_outputs
    from fmu_surrogate.identify.linear.errors import LinearIdentificationError

    ds = late(_mass_dataset()[0])
    first = SimpleNamespace(system_=SimpleNamespace(n_states=8))

    def linear_fit(data, order=None):
        if data is ds:
            return first, 0.5  # missed by far: the test runs
        raise LinearIdentificationError("no positive definite storage matrix Q")

    got = fit_late_outputs(ds, ["F"], ["x", "v", "a"], [0, 1], linear_fit, 0.01, None)
    assert not got.late and got.estimator is first and got.error == 0.5
    assert "no positive definite storage" in got.describe()
