"""Array elements by name, whole arrays from elements, the values integer and Boolean variables
take (on the test FMUs of ``fmu_surrogate.testing.typed``)."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.fmu.errors import ExperimentError, UnknownVariableError
from fmu_surrogate.fmu.model.elements import (
    check_values,
    element_name,
    excitation_level,
    find_element,
    gather_elements,
    split_array,
)
from fmu_surrogate.fmu.model.loading import open_fmu


@pytest.fixture(scope="module")
def arrays(arrays3_fmu):
    return open_fmu(arrays3_fmu)


@pytest.fixture(scope="module")
def typed(typed_fmu):
    return open_fmu(typed_fmu)


def test_variable_types_and_start_values(arrays, typed):
    assert [v.is_numeric for v in map(typed.variable, ("u", "n", "e", "b", "s"))] == [
        True, True, True, True, False]
    assert arrays.variable("u").size == 3 and arrays.variable("A").size == 9
    assert arrays.variable("u").start_values == (1.0, 2.0, 3.0)
    assert typed.variable("b").start_values == (0.0,)
    assert typed.variable("s").start_values is None  # "hello"


def test_element_names_are_the_dataset_columns(arrays):
    assert element_name("A", (0, 2)) == "A[1,3]"
    assert find_element(arrays, "u") == (arrays.variable("u"), None)
    assert find_element(arrays, "u[2]", "input") == (arrays.variable("u"), 1)
    assert find_element(arrays, "A[2,3]", "parameter") == (arrays.variable("A"), 5)  # row-major


@pytest.mark.parametrize("name, what, hint", [
    ("u[4]", "input", "'u' has shape 3: its elements are u[1] to u[3] (1-based)"),
    ("u[0]", "input", "its elements are u[1] to u[3]"),
    ("A[1]", "parameter", "'A' has shape 3x3: its elements are A[1,1] to A[3,3]"),
    ("n[1]", "input", "'n' is a scalar; give its name without an index"),
])
def test_bad_element_names(arrays, name, what, hint):
    with pytest.raises(UnknownVariableError, match=f"unknown {what}") as err:
        find_element(arrays, name, what)
    assert hint in str(err.value)


def test_an_element_of_a_variable_of_another_causality(arrays):
    with pytest.raises(UnknownVariableError, match="causality is 'parameter'"):
        find_element(arrays, "A[1,1]", "input")


def test_whole_arrays_from_elements(arrays):
    t = np.linspace(0.0, 1.0, 5)
    got = gather_elements(arrays, {"n": t, "u[2]": 10 * t, "u[3]": -t})
    assert list(got) == ["n", "u"]
    np.testing.assert_array_equal(got["u"], np.column_stack([np.ones(5), 10 * t, -t]))
    par = gather_elements(arrays, {"A[1,1]": -5.0, "x0[3]": 2.0})
    np.testing.assert_array_equal(par["A"], [-5, 0, 0, 0, -1, 0, 0, 0, -1])  # others: start
    np.testing.assert_array_equal(par["x0"], [0, 0, 2])
    plain = {"n": 1.0}
    assert gather_elements(arrays, plain) == plain


def test_split_a_whole_array(arrays):
    d = split_array(arrays.variable("A"), np.arange(9.0).reshape(3, 3))
    assert list(d) == [f"A[{i},{j}]" for i in (1, 2, 3) for j in (1, 2, 3)]
    assert d["A[2,3]"] == 5.0
    with pytest.raises(ExperimentError, match=r"shape 3x3: give its 9 values, row-major"):
        split_array(arrays.variable("A"), [1.0, 2.0])


def test_values_of_integer_and_boolean_variables(typed, arrays):
    check_values(typed.variable("n"), [-2.0, 5.0], "input 'n'", fmi3=False)
    check_values(typed.variable("b"), [0.0, 1.0], "input 'b'", fmi3=False)
    check_values(typed.variable("u"), [0.5], "input 'u'", fmi3=False)  # Real: anything
    with pytest.raises(ExperimentError, match=r"input 'n' has type Integer: .* got 0\.5"):
        check_values(typed.variable("n"), [0.0, 0.5], "input 'n'", fmi3=False)
    with pytest.raises(ExperimentError, match=r"from -2147483648 to 2147483647, got 3e\+09"):
        check_values(arrays.variable("n"), [3e9], "input 'n'", fmi3=True)
    with pytest.raises(ExperimentError, match=r"is a Boolean: its values must be 0 or 1, got -1"):
        check_values(typed.variable("b"), [-1.0, 1.0], "input 'b'", fmi3=False)


def test_declared_ranges_and_a_signal_level_inside_them(typed):
    from fmu_surrogate.fmu.model.info import Variable

    n, gain = typed.variable("n"), typed.variable("gain")
    assert (n.minimum, n.maximum) == (-5.0, 5.0)  # its own attributes
    assert (gain.minimum, gain.maximum) == (0.0, 100.0)  # from its declaredType
    assert typed.variable("u").minimum is None and typed.variable("u").maximum is None
    assert excitation_level(typed.variable("u")) == (0.0, 1.0)  # no range, starts at 0
    assert excitation_level(gain) == (50.0, 12.5)  # the middle, 4 standard deviations to bounds

    def real(start, lo=None, hi=None):
        return Variable("p", 0, "input", "continuous", "Real", start, minimum=lo, maximum=hi)

    assert excitation_level(real("2", lo=0.0)) == (2.0, 0.5)  # from its start, 4 std above min
    assert excitation_level(real("-1", lo=0.0)) == (1.0, 0.25)  # a start outside: above the bound
    assert excitation_level(real(None, hi=-300.0)) == (-600.0, 75.0)
    # no range: about its start (a tenth of it, to round-off)
    assert excitation_level(real("293.15")) == pytest.approx((293.15, 29.315), rel=1e-15)
    with pytest.raises(ExperimentError, match=r"input 'p' is declared >= 0 .*got -0\.1"):
        check_values(real("2", lo=0.0), [1.0, -0.1, 3.0], "input 'p'", fmi3=False)
    with pytest.raises(ExperimentError, match=r"input 'p' is declared <= -300 .*got 7"):
        check_values(real(None, hi=-300.0), [-400.0, 7.0], "input 'p'", fmi3=False)
    check_values(real("2", lo=0.0), [0.0, 5.0], "input 'p'", fmi3=False)
