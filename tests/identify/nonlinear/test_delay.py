"""What a delayed feedthrough sees before the first point (:func:`.delay.inputs_before`)."""

from __future__ import annotations

import numpy as np

from fmu_surrogate.identify.nonlinear.delay import inputs_before


class _Damper:
    """A static law ``F = 2 v |v|`` at the start ``initial_state`` (what ``inputs_before``
    evaluates of a surrogate)."""

    @staticmethod
    def initial_state(u):
        return np.zeros(0)

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
