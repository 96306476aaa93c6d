"""Parameter plans: counts, order, stratification (LHS), balance (Sobol'), parsing."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.fmu.campaigns.plans import (
    explicit,
    grid,
    latin_hypercube,
    one_at_a_time,
    parse_param_option,
    plan_parameter_names,
    sobol,
)
from fmu_surrogate.fmu.errors import ExperimentError

BOUNDS = {"k": (1.0, 3.0), "c.d[1]": (-1.0, 1.0), "m": (10.0, 20.0)}


def _unit(plan, bounds):
    """Map a plan back to the unit cube, shape (n, d)."""
    lo = np.array([b[0] for b in bounds.values()])
    hi = np.array([b[1] for b in bounds.values()])
    x = np.array([[run[k] for k in bounds] for run in plan])
    return (x - lo) / (hi - lo)


def test_grid_count_and_order():
    plan = grid({"a.b": [1, 2]}, k=[10, 20, 30], m=[0.5])
    assert len(plan) == 2 * 3 * 1
    assert plan == [
        {"a.b": 1.0, "k": 10.0, "m": 0.5}, {"a.b": 1.0, "k": 20.0, "m": 0.5},
        {"a.b": 1.0, "k": 30.0, "m": 0.5}, {"a.b": 2.0, "k": 10.0, "m": 0.5},
        {"a.b": 2.0, "k": 20.0, "m": 0.5}, {"a.b": 2.0, "k": 30.0, "m": 0.5},
    ]
    assert grid() == [{}]
    assert all(isinstance(v, float) for run in plan for v in run.values())
    with pytest.raises(ExperimentError, match="'k' has no values"):
        grid(k=[])
    with pytest.raises(ExperimentError, match="'k' given twice"):
        grid({"k": [1]}, k=[2])
    with pytest.raises(ExperimentError, match="not finite"):
        grid(k=[1.0, float("nan")])


def test_one_at_a_time_and_explicit():
    assert one_at_a_time("k", [1, 2.5]) == [{"k": 1.0}, {"k": 2.5}]
    plan = explicit([{"k": 1}, {}, {"k": 2, "c": "3.5"}])
    assert plan == [{"k": 1.0}, {}, {"k": 2.0, "c": 3.5}]
    assert plan_parameter_names(plan) == ["k", "c"]
    with pytest.raises(ExperimentError, match="plan entry 1 is list"):
        explicit([{"k": 1}, [("k", 2)]])
    with pytest.raises(ExperimentError, match="'abc' is not a number"):
        explicit([{"k": "abc"}])
    with pytest.raises(ExperimentError, match="no values"):
        one_at_a_time("k", [])


@pytest.mark.parametrize("n", [1, 7, 50])
def test_latin_hypercube_has_one_point_per_stratum(n):
    plan = latin_hypercube(BOUNDS, n, seed=4)
    assert len(plan) == n and list(plan[0]) == list(BOUNDS)
    u = _unit(plan, BOUNDS)
    assert np.all((u >= 0) & (u < 1))
    for j in range(u.shape[1]):
        # each of the n equal strata of every dimension holds exactly one point
        np.testing.assert_array_equal(np.sort(np.floor(u[:, j] * n)), np.arange(n))
    assert latin_hypercube(BOUNDS, n, seed=4) == plan  # reproducible by seed
    if n > 1:
        assert latin_hypercube(BOUNDS, n, seed=5) != plan


def test_sobol_balance():
    n = 16
    plan = sobol(BOUNDS, n, seed=1)
    u = _unit(plan, BOUNDS)
    for j in range(3):
        np.testing.assert_array_equal(np.sort(np.floor(u[:, j] * n)), np.arange(n))
    # first two Sobol' coordinates form a (0, 4, 2)-net in base 2: every elementary box of area
    # 1/16 (1x16, 2x8, 4x4, 8x2, 16x1 cells) holds exactly one point; scrambling preserves this
    for a in range(5):
        nx, ny = 2**a, 2 ** (4 - a)
        cells = np.floor(u[:, 0] * nx) * ny + np.floor(u[:, 1] * ny)
        np.testing.assert_array_equal(np.sort(cells), np.arange(16))
    assert sobol(BOUNDS, n, seed=1) == plan
    assert sobol(BOUNDS, n, seed=2) != plan
    plain = sobol(BOUNDS, 4, scramble=False)
    np.testing.assert_allclose(_unit(plain, BOUNDS)[0], 0.0)  # unscrambled: starts at a corner


def test_bounds_validation():
    with pytest.raises(ExperimentError, match="low = 2.0 must be below high = 1.0"):
        latin_hypercube({"k": (2.0, 1.0)}, 4)
    with pytest.raises(ExperimentError, match="pair"):
        sobol({"k": 1.0}, 4)
    with pytest.raises(ExperimentError, match="positive integer"):
        latin_hypercube({"k": (0, 1)}, 0)
    with pytest.raises(ExperimentError, match="no parameter bounds"):
        sobol({}, 4)


def test_parse_param_option():
    assert parse_param_option("k=1,2,3") == ("k", [1.0, 2.0, 3.0])
    assert parse_param_option(" a.b[1] = 1e-3, -2 ") == ("a.b[1]", [1e-3, -2.0])
    name, vals = parse_param_option("w=0:1:5")
    assert name == "w"
    np.testing.assert_allclose(vals, [0, 0.25, 0.5, 0.75, 1.0])
    for bad, why in [("k", "missing '='"), ("=1,2", "empty parameter name"),
                     ("k=", "no values"), ("k=1,,2", "double comma"),
                     ("k=1,x", "'x' is not a number"), ("k=0:1", "START:STOP:N"),
                     ("k=0:1:x", "must be an integer"), ("k=nan", "not finite")]:
        with pytest.raises(ExperimentError, match=why) as exc:
            parse_param_option(bad)
        assert "--param k=1,2,3" in str(exc.value)  # every message shows the syntax


def test_parse_param_option_array_values():
    # one element of an array parameter: the name as the dataset names the column
    assert parse_param_option("A[1,2]=-1,-2") == ("A[1,2]", [-1.0, -2.0])
    # whole arrays: spaces between the values, commas between the alternatives
    assert parse_param_option("A=-1 0 0 -2, 1 2 3 4") == (
        "A", [(-1.0, 0.0, 0.0, -2.0), (1.0, 2.0, 3.0, 4.0)])
    with pytest.raises(ExperimentError, match=r"'x' is not a number; .*--param 'A=1 0 0 1'"):
        parse_param_option("A=1 x")
    assert grid({"A": [(1.0, 2.0), (3.0, 4.0)], "k": [5.0]}) == [
        {"A": (1.0, 2.0), "k": 5.0}, {"A": (3.0, 4.0), "k": 5.0}]
