"""An output's error relative to its swing (fmu.dataset.output_error)."""

import numpy as np
import pytest

from fmu_surrogate.fmu.dataset import STEADY_RTOL, output_scale, relative_errors

T = np.linspace(0.0, 10.0, 1001)


def test_an_output_from_zero_is_measured_against_its_magnitude():
    y = 3.0 * np.sin(T)
    # the same figure as max |ŷ − y| / max |y|: 0.03 / 3 (up to the sampled maximum of sin)
    assert relative_errors(y, y + 0.03) == pytest.approx(0.03 / np.max(np.abs(y)), rel=1e-14)


def test_a_pressure_around_a_large_value_is_measured_against_its_swing():
    p = 150.0 + 30.0 * np.sin(T)  # bar, starting at its operating point
    held = np.full_like(p, 150.0)  # a model that never moves
    # against the magnitude (180 bar) it would read 30/180 = 17 %; the swing is 30 bar: 100 %
    assert relative_errors(p, held) == pytest.approx(1.0, rel=1e-6)  # sampled max of sin
    half = 150.0 + 15.0 * np.sin(T)
    assert relative_errors(p, half) == pytest.approx(0.5, rel=1e-6)


def test_the_swing_is_never_larger_than_the_magnitude():
    y = np.cos(T)  # starts at +1, swings to −1: excursion 2, magnitude 1
    assert output_scale(y) == pytest.approx(1.0)
    y2 = np.column_stack([y, 293.15 + 2.0 * (1.0 - np.exp(-T))])
    np.testing.assert_allclose(output_scale(y2), [1.0, 2.0 * (1.0 - np.exp(-10.0))],
                               rtol=1e-12)


def test_a_steady_output_is_measured_against_its_magnitude():
    y = 293.15 + 1e-9 * np.sin(T)  # solver noise on a held temperature: below STEADY_RTOL
    assert np.max(np.abs(y - y[0])) < STEADY_RTOL * 293.15
    assert output_scale(y) == pytest.approx(np.max(np.abs(y)), rel=1e-15)
    assert relative_errors(y, y + 0.01) == pytest.approx(0.01 / np.max(np.abs(y)), rel=1e-12)


def test_zero_outputs_and_diverged_predictions():
    z = np.zeros((5, 2))
    np.testing.assert_array_equal(relative_errors(z, z), [0.0, 0.0])
    np.testing.assert_array_equal(relative_errors(z, z + [0.0, 1.0]), [0.0, np.inf])
    y = np.column_stack([np.sin(T), np.cos(T)])
    bad = y.copy()
    bad[500, 0] = np.nan
    bad[600, 1] = np.inf
    np.testing.assert_array_equal(relative_errors(y, bad), [np.inf, np.inf])
