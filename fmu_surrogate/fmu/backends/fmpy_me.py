"""The model-exchange loop of the fmpy backend: ``fmpy.simulate_fmu`` with CVode on the reused
instance, its result (or the part recorded before a failure) copied onto the time grid.  Inputs
are interpolated linearly between the samples (fmpy's ``Input``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.errors import InvalidInputError

if TYPE_CHECKING:  # pragma: no cover
    from fmu_surrogate.fmu.backends.fmpy_opened import OpenedFmpy


def run_me(b: OpenedFmpy, start_values, inputs, time, record, lay, out, progress, res) -> None:
    """One model-exchange run of backend ``b`` with ``fmpy.simulate_fmu`` (CVode) on its reused
    instance; the rows go into ``out`` and their count into ``progress[0]``, also when the
    solver fails part-way."""
    from fmpy import simulate_fmu

    n = time.shape[0]
    dt = np.diff(time)
    if n > 2 and not np.allclose(dt, dt[0], rtol=1e-9, atol=0):
        raise InvalidInputError("model exchange needs a uniform time grid (start, stop, step)")
    sig = None
    if inputs:
        # an array input (FMI 3) is one field of its shape: fmpy sets it whole
        sig = np.zeros(n, dtype=[("time", np.float64)]
                       + [(k, np.float64, np.shape(v)[1:]) for k, v in inputs.items()])
        sig["time"] = time
        for k, v in inputs.items():
            sig[k] = v
    holder: dict[str, Any] = {}

    def step_finished(t, recorder):
        holder["rec"] = recorder
        return True

    def copy_partial() -> None:
        rec = holder.get("rec")
        if rec is None or not rec.rows:
            return
        arr = np.array(rec.rows, dtype=np.dtype(rec.cols))
        _fill_from_structured(arr, time, record, lay, out, progress)

    def unraisable(u) -> None:
        # an FMI error inside CVode's right-hand-side callback cannot propagate through C;
        # keep it as a log message of the run instead of a stray warning
        exc = u.exc_value
        status = getattr(exc, "status", 3)
        b._log(int(status) if isinstance(status, int) else 3, "solver callback",
                  f"{type(exc).__name__}: {exc}")

    old_hook = sys.unraisablehook
    sys.unraisablehook = unraisable
    try:
        result = simulate_fmu(
            b._unzipdir, validate=False, start_time=float(time[0]),
            stop_time=float(time[-1]), output_interval=float(dt[0]) if n > 1 else 1.0,
            relative_tolerance=b.tolerance, record_events=False,
            start_values=dict(start_values), input=sig, output=list(record),
            model_description=b._md, fmu_instance=b._fmu,
            step_finished=step_finished, fmi_type="ModelExchange",
        )
    except BaseException:
        copy_partial()
        raise
    finally:
        sys.unraisablehook = old_hook
    _fill_from_structured(result, time, record, lay, out, progress)
    if progress[0] < n:
        res.stopped_early = True


def _fill_from_structured(arr, time, record, lay, out, progress) -> None:
    n = time.shape[0]
    tt = np.asarray(arr["time"], dtype=float)
    # one row per grid point: match by time (fmpy may add the last sample twice)
    idx = np.searchsorted(time, tt - 1e-9 * max(1.0, abs(time[-1])))
    keep = (idx < n) & np.isclose(time[np.minimum(idx, n - 1)], tt, rtol=1e-9, atol=1e-12)
    rows = []
    for row, (j, ok) in enumerate(zip(idx.tolist(), keep.tolist())):
        if ok and j == len(rows):
            rows.append(row)
    k = len(rows)
    if k:  # one copy per variable, not per row and variable (a quarter of an ME run's time)
        for name in record:
            c0, _shape = lay["cols"][name]
            val = np.asarray(arr[name][rows], dtype=float).reshape(k, -1)
            out[:k, c0:c0 + val.shape[1]] = val
    progress[0] = k
