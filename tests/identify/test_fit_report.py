"""The report's diagnosis of a kept model that misses the tolerance."""

from __future__ import annotations

import numpy as np

from fmu_surrogate.identify.fit_report import RANGE_FACTOR, miss_line, range_ratio


def test_range_ratio_measures_the_held_out_deviation_against_the_training_one():
    a = np.array([[-2.0, 0.0], [2.0, 4.0]])
    b = np.array([[-1.0, 1.0], [1.0, 3.0]])  # training means 0 and 2, largest deviations 2, 2
    np.testing.assert_allclose(range_ratio([a, b], [np.array([[3.0, 3.0]])]), [1.5, 0.5],
                               rtol=1e-15)
    # a variable the training runs never varied: any held-out change is outside their range
    flat = [np.array([[0.0, 5.0]]), np.array([[1.0, 5.0]])]
    assert range_ratio(flat, [np.array([[0.5, 5.1]])])[1] > 1e10


def test_the_miss_line_tells_extrapolation_from_a_model_class_that_does_not_fit():
    ratio = {"F": 1.0, "v": 1.6, "a": 1.05}
    text = miss_line(1e-3, ratio, 1e-2)
    assert text.startswith("the kept model meets the training runs (0.1 %), not the held-out")
    assert "largest: v 1.6×)" in text and "a 1.05" not in text  # ≤ RANGE_FACTOR
    assert RANGE_FACTOR < 1.6 and "inputs as large and as varied" in text
    flat = miss_line(1e-3, {"F": 1e300}, 1e-2)
    assert "largest: F varied, constant in training)" in flat
    inside = miss_line(1e-3, {"F": 1.0}, 1e-2)
    assert "not the held-out one within their range" in inside
    worse = miss_line(0.5, {"F": 1.0}, 1e-2)
    assert worse.startswith("the kept model misses the training runs too (50 %)")
    assert "leaves" not in worse and "hysteresis" in worse
    assert "the fit stopped short of a model in them" in worse
    assert "excitation level" not in worse  # the levels not known
    one = miss_line(0.5, {"F": 1.0}, 1e-2, levels=1)
    assert "(at one excitation level now: runs of the same inputs at about a fifth" in one
    assert "excitation level" not in miss_line(0.5, {"F": 1.0}, 1e-2, levels=2)
