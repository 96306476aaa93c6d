"""Assertions for users' own test suites: a surrogate still matches the FMU it replaces.

>>> from fmu_surrogate.testing import assert_surrogate_matches      # doctest: +SKIP
>>> assert_surrogate_matches("msd.json", "msd_chain.fmu",
...                          inputs={"F1": fs.signals.Chirp(0.05, 0.5, 40.0)},
...                          stop_time=40.0, step=0.05, rtol=1e-2)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fmu_surrogate.validation import ValidationReport, validate

__all__ = ["assert_surrogate_matches"]


def assert_surrogate_matches(
    surrogate: Any,
    reference_fmu: str | os.PathLike,
    inputs: Mapping[str, Any] | None = None,
    *,
    rtol: float = 1e-3,
    atol: float = 0.0,
    plot: str | os.PathLike | None = None,
    **options: Any,
) -> ValidationReport:
    """Fail with the error table unless the surrogate matches the reference FMU.

    Parameters
    ----------
    surrogate : path or ph system
        Surrogate JSON file, exported surrogate ``.fmu`` or ``ph`` object.
    reference_fmu : path
        The FMU it replaces.
    inputs : mapping, optional
        Input signals by FMU variable name.
    rtol, atol : float
        Each output must satisfy ``max |y_s − y_r| ≤ atol + rtol · s_r``, ``s_r`` its swing
        (:func:`fmu_surrogate.validation.validate`).
    plot : path, optional
        Where to save the comparison plot (always written when given).
    **options
        Further arguments of :func:`fmu_surrogate.validation.validate` (``parameters``,
        ``stop_time``, ``step``, ``ports``, ``outputs``, ``timeout``).

    Returns
    -------
    ValidationReport
        When the surrogate matches.

    Raises
    ------
    AssertionError
        With the per-output error table, when an output is outside the tolerance.
    """
    report = validate(surrogate, reference_fmu, inputs=inputs, rtol=rtol, atol=atol, **options)
    if plot is not None:
        report.plot(Path(plot))
    if not report.passed:
        raise AssertionError(
            f"surrogate does not match {Path(reference_fmu).name} within rtol={rtol:g}, "
            f"atol={atol:g}:\n{report.table()}"
        )
    return report
