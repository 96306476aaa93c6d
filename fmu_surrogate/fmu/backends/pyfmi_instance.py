"""The PyFMI backend, used only when asked for and ``pyfmi`` is importable (it has no pip wheel;
conda-forge has it).  Runs use ``model.simulate`` with ``ncp`` communication points on the grid;
the instance is reset between runs."""

from __future__ import annotations

import contextlib
import os
from typing import Any

import numpy as np

from fmu_surrogate.fmu.backends.api import RunOutput, _column_layout, _opened_info

__all__ = ["PyFMIBackend"]


class PyFMIBackend:
    """PyFMI-based backend (only when ``pyfmi`` is importable; it has no usable wheel here).

    Runs use ``model.simulate`` with ``ncp`` communication points on the same grid; the instance is
    reset between runs.  FMU log messages come from ``model.get_log()``.
    """

    name = "pyfmi"

    def __init__(self, interface: str = "auto", tolerance: float | None = None, **_: Any) -> None:
        import pyfmi  # noqa: F401 - raises ImportError when absent

        self.interface = interface
        self.tolerance = tolerance
        self._model = None

    def open(self, fmu_path: str | os.PathLike, info: Any = None) -> None:
        import pyfmi

        self.info = info = _opened_info(fmu_path, info)
        kind = "CS" if (self.interface == "cs" or (self.interface == "auto" and info.supports_cs)) \
            else "ME"
        self.kind = kind.lower()
        self._model = pyfmi.load_fmu(str(fmu_path), kind=kind, log_level=4)
        self._used = False

    def run(self, start_values, inputs, time, record, *, out=None, progress=None) -> RunOutput:
        time = np.asarray(time, dtype=float)
        record = list(record)
        vars_ = [self.info.variable(n) for n in record]
        cols, ncol = _column_layout(vars_)
        n = time.shape[0]
        if out is None:
            out = np.empty((n, ncol))
        if progress is None:
            progress = np.zeros(1, dtype=np.int64)
        progress[0] = 0
        res = RunOutput(record, cols, out, 0)
        m = self._model
        try:
            if self._used:
                m.reset()
            self._used = True
            for k, v in start_values.items():
                m.set(k, v)
            opts = m.simulate_options()
            opts["ncp"] = n - 1
            opts["result_handling"] = "memory"
            if self.tolerance is not None and self.kind == "me":
                opts["CVode_options"]["rtol"] = self.tolerance
            inp = None
            if inputs:
                names = list(inputs)
                table = np.column_stack([time] + [np.asarray(inputs[k]) for k in names])
                inp = (names, table)
            r = m.simulate(start_time=float(time[0]), final_time=float(time[-1]), input=inp,
                           options=opts)
            tt = np.asarray(r["time"])
            k = min(n, tt.shape[0])
            for name in record:
                c0, _ = cols[name]
                out[:k, c0] = np.interp(time[:k], tt, np.asarray(r[name], dtype=float))
            progress[0] = k
            res.stopped_early = k < n or tt[-1] < time[-1] - 1e-9 * max(1.0, abs(time[-1]))
        except Exception as exc:  # noqa: BLE001
            res.error = exc
        with contextlib.suppress(Exception):
            res.messages = [(3 if "error" in str(line).lower() else 0, "", str(line))
                            for line in m.get_log()[-50:]]
        res.n_done = int(progress[0])
        return res

    def close(self) -> None:
        if self._model is not None:
            with contextlib.suppress(Exception):
                self._model.free_instance()
            self._model = None
