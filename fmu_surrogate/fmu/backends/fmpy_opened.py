"""What the co-simulation (:mod:`~fmu_surrogate.fmu.backends.fmpy_cs`) and model-exchange
(:mod:`~fmu_surrogate.fmu.backends.fmpy_me`) loops need of an opened fmpy instance: the
:class:`~fmu_surrogate.fmu.backends.fmpy_instance.FmpyBackend` satisfies it.  The loops depend
on this description, not on the backend, so the backend can import them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np


class OpenedFmpy(Protocol):
    """An extracted, instantiated FMU with the C functions the run loops call directly."""

    fmi3: bool
    tolerance: float | None
    native_loop: bool
    _fmu: Any
    _md: Any
    _unzipdir: str | None
    _getReal: Callable[..., int]
    _setReal: Callable[..., int]
    _doStep: Callable[..., int]
    _getBoolStatus: Callable[..., int]
    _getF64: Callable[..., int]
    _setF64: Callable[..., int]
    _doStep3: Callable[..., int]

    def _log(self, status: int, category: str, message: str) -> None: ...

    def _apply_start_values(self, start_values: Mapping[str, Any]) -> None: ...

    def _initialize(self, start_values: Any, inputs: Any, t0: float, t_end: float) -> None: ...

    def _grid(self, time: np.ndarray) -> tuple[list[float], list[float]]: ...
