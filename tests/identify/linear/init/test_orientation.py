"""Orientation of power pairs from records that do not start at rest."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.identify.linear.init.orientation import detect_orientation, offset_orientation
from fmu_surrogate.identify.linear.model.experiments import Experiment
from fmu_surrogate.identify.linear.ports import scored_orientation


def test_scores_say_how_far_the_energy_dips_below_zero():
    rising = np.array([[0.0], [1.0], [2.0]])
    s, score = scored_orientation([rising])
    assert s.tolist() == [1.0] and score == 0.0
    s, score = scored_orientation([-rising])
    assert s.tolist() == [-1.0] and score == 0.0
    # as far below zero as above under both signs: the best score is −1 (exact arithmetic)
    swinging = np.array([[0.0], [2.0], [-2.0]])
    assert scored_orientation([swinging])[1] == -1.0


@pytest.mark.parametrize("seed", [1, 2])
def test_a_nonlinear_part_one_sample_after_rest_takes_power_in(seed, mass_experiment):
    """The unit mass on a power-law damper and a cubic spring, driven from rest by a force,
    its velocity recorded from the second sample (the data a late-output fit sees): the data
    take energy throughout.  The linear model with an offset column (order 11) answered with a
    response to the force alone 6e4 times the velocity, which its offset cancels, and its
    energy said "out" for seed 1; that split is refused and the answer is "in"."""
    t, u, y = mass_experiment(seed)
    e = Experiment.from_arrays(t[:-1], u[:-1], y[1:], "zoh")
    assert abs(y[1, 0]) > 1e-3  # not at rest: the forced-response test runs
    found = offset_orientation([e])
    assert found is None or found.tolist() == [1.0]
    assert detect_orientation([e]).tolist() == [1.0]


def test_records_started_with_energy_take_the_orientation_that_needs_least_of_it():
    from fmu_surrogate.benchmarks.vendor import free_mass
    from fmu_surrogate.fmu.signals.excitation import BandLimitedNoise
    from fmu_surrogate.identify.linear.init.orientation import initial_energy_orientation

    t = np.arange(0.0, 10.0 + 1e-9, 0.01)
    exps = []
    for seed, std in ((1, 1.0), (2, 4.0), (3, 8.0)):
        F = BandLimitedNoise(f_low=0.2, f_high=3.0, duration=10.0, std=std, seed=seed)(t)
        # the mass between its end stops thrown at 1.5 m/s (scipy locating every contact):
        # force in, velocity out, power in
        x = free_mass.end_stop_simulate(t, F, {"v0": 1.5})
        exps.append(Experiment.from_arrays(t, F[:, None], x[:, 1:2], "zoh"))
    # it releases its 1.125 J and then absorbs what the noise supplies: the other orientation
    # would need that as initial energy (measured on the bench's data: 0.85 J against 57 J);
    # the linear model's forced response, which decided before, says "out" on these records
    assert initial_energy_orientation(exps).tolist() == [1.0]
    assert detect_orientation(exps).tolist() == [1.0]
    # a free mass thrown at 1.5 m/s whose force is the one it exerts (power out): v' = −F / m
    out = [Experiment.from_arrays(e.t, e.u, 1.5 - np.concatenate(
        [[0.0], np.cumsum(np.asarray(e.u)[:-1, 0] * np.diff(e.t))])[:, None] / 2.0, "zoh")
        for e in exps]
    assert detect_orientation(out).tolist() == [-1.0]
