"""pytest plugin (entry point ``pytest11``): the ``surrogate_matches`` fixture.

Installed with the package, so in any test suite::

    def test_my_surrogate(surrogate_matches):
        surrogate_matches("valve.json", "vendor_valve.fmu", inputs={...}, rtol=1e-2)

The fixture runs :func:`fmu_surrogate.testing.assert_surrogate_matches`, saves the comparison plot
into the test's temporary folder (its path is in the failure message) and returns the report.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture
def surrogate_matches(tmp_path: Any) -> Callable[..., Any]:
    """A callable ``(surrogate, reference_fmu, inputs=None, **options) -> ValidationReport``."""
    from fmu_surrogate.testing.surrogates import assert_surrogate_matches

    calls = {"n": 0}

    def check(surrogate: Any, reference_fmu: Any, inputs: Any = None, **options: Any) -> Any:
        calls["n"] += 1
        plot = tmp_path / f"surrogate_vs_reference_{calls['n']}.png"
        try:
            return assert_surrogate_matches(surrogate, reference_fmu, inputs, plot=plot, **options)
        except AssertionError as err:
            raise AssertionError(f"{err}\n(plot: {plot})") from None

    return check
