"""The report's diagnosis of a kept model that misses the tolerance."""

from __future__ import annotations

import numpy as np

from fmu_surrogate.identify.fit_report import RANGE_FACTOR, miss_line, range_ratio, reading_line


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


def test_the_reading_line_names_what_each_measured_output_reads():
    from fmu_surrogate.ph import LinearPH, PortedSystem, PortMap

    # a mass (p, q) with its force port, a sensor port (driven by nothing) and three outputs:
    # the velocity (the power output), q (the state), a (the sensor's effort, the state and
    # its rate)
    core = LinearPH([[0.0, -1.0], [1.0, 0.0]], np.diag([0.1, 0.0]), np.diag([0.5, 2.0]),
                    [[1.0, 0.0], [0.0, 1.0]])
    ports = PortMap(("F",), ("v", "q", "a"), None, None, [[1.0], [0.0]], [0.0, 0.0],
                    [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]], [[0, 0], [0, 1.0], [0.3, 0]],
                    np.zeros((3, 1)), np.zeros(3), Cdx=[[0, 0], [0, 0], [0.5, 0]])
    line = reading_line(PortedSystem(core, ports))
    assert line.startswith("measured outputs read q the state; a an effort and the state and "
                           "the state's rate")
    assert "v " not in line.split("(")[0]  # the power output is not a measured one
    # outputs that read the state alone, as the linear model's do: nothing to say
    plain = PortMap(("F",), ("v", "q"), None, None, [[1.0], [0.0]], [0.0, 0.0],
                    [[1.0, 0.0], [0.0, 0.0]], [[0, 0], [0, 1.0]], np.zeros((2, 1)), np.zeros(2))
    assert reading_line(PortedSystem(core, plain)) == ""
