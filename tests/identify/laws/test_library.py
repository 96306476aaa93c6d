"""Candidate libraries: names, values and errors."""

import numpy as np
import pytest

from fmu_surrogate.identify.laws.library import LibraryError, polynomial_library, unit_scales


def test_polynomial_names_and_values():
    lib = polynomial_library(["y", "u"], 3, trig=["y"])
    assert lib.names[:5] == ["y", "u", "y^2", "y*u", "u^2"]
    assert "y^3" in lib.names and "y^2*u" in lib.names and "sin(y)" in lib.names
    X = np.array([[2.0, 3.0], [-1.0, 0.5]])
    Phi = lib.transform(X)
    col = dict(zip(lib.names, Phi.T))
    np.testing.assert_array_equal(col["y^2*u"], [12.0, 0.5])
    np.testing.assert_array_equal(col["sin(y)"], np.sin(X[:, 0]))


def test_library_errors_and_scales():
    lib = polynomial_library(["y"], 2, bias=True)
    assert lib.names == ["1", "y", "y^2"]
    with pytest.raises(LibraryError, match="shape"):
        lib.transform(np.ones((3, 2)))
    with pytest.raises(LibraryError, match="NaN"):
        lib.transform(np.array([[np.nan]]))
    s = unit_scales(np.array([[3.0, 0.0], [4.0, 0.0]]))
    np.testing.assert_allclose(s, [np.sqrt(12.5), 1.0])
