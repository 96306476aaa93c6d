"""A campaign target that is not an FMU file, for the tests of :mod:`fmu_surrogate.fmu.campaigns.targets`.

The "decay" target is a JSON file ``{"k": …, "x0": …}``; its backend (registered as
``"testing-decay"`` when this module is imported) records ``x(t) = x0 exp(-k t)`` row by row.
A run with parameter ``crash = 1`` aborts its process after the rows up to ``t = 0.5``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fmu_surrogate.fmu.backends.api import RunOutput
from fmu_surrogate.fmu.backends.registry import register_backend
from fmu_surrogate.fmu.campaigns.targets import Target, target_info
from fmu_surrogate.fmu.model.info import Variable

__all__ = ["DecayBackend", "decay_target"]


def decay_target(path: str | os.PathLike, k: float = 1.0, x0: float = 1.0) -> Target:
    """Write the decay target's file at ``path`` and describe it.

    Parameters
    ----------
    path : path
        The JSON file to write.
    k, x0 : float
        Default rate and initial value.

    Returns
    -------
    Target
    """
    path = Path(path)
    path.write_text(json.dumps({"k": float(k), "x0": float(x0)}), encoding="utf-8")
    variables = [Variable("k", 0, "parameter", "fixed", "Real", str(k)),
                 Variable("x0", 1, "parameter", "fixed", "Real", str(x0)),
                 Variable("crash", 2, "parameter", "fixed", "Real", "0"),
                 Variable("x", 3, "output", "continuous", "Real")]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return Target(target_info("decay", path, digest, variables), "testing-decay", __name__,
                  attrs={"model": "x0 exp(-k t)"})


class DecayBackend:
    """Backend of the decay target."""

    name = "testing-decay"

    def open(self, fmu_path: str | os.PathLike, info: Any = None) -> None:
        """Read the defaults from the target's file.

        Parameters
        ----------
        fmu_path : path
        info : FMUInfo, optional
        """
        self.defaults = json.loads(Path(fmu_path).read_text(encoding="utf-8"))

    def run(self, start_values: Mapping[str, Any], inputs: Mapping[str, np.ndarray],
            time: np.ndarray, record: Sequence[str], *, out: np.ndarray | None = None,
            progress: np.ndarray | None = None) -> RunOutput:
        """Record ``x`` row by row (see the module docstring).

        Parameters
        ----------
        start_values : mapping
        inputs : mapping
        time : ndarray
        record : sequence of str
        out : ndarray, optional
        progress : ndarray, optional

        Returns
        -------
        RunOutput
        """
        p = {**self.defaults, **start_values}
        if out is None:
            out = np.empty((len(time), 1))
        for i, t in enumerate(time):
            if p.get("crash") and t > 0.5:
                os.abort()
            out[i, 0] = p["x0"] * np.exp(-p["k"] * t)
            if progress is not None:
                progress[0] = i + 1
        return RunOutput(record, {"x": (0, ())}, out, len(time))

    def close(self) -> None:
        """Nothing to free."""


register_backend("testing-decay", DecayBackend)
