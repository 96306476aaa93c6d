"""Failure classification of runs: the kind and message of a finished run, the name of the
signal that ended a worker, and messages trimmed to their head and tail.

Failures detected inside the worker (:func:`classify`): FMI error status (``"error_status"``),
other exceptions (``"exception"``), NaN/inf (``"non_finite"``), values beyond a bound
(``"exploding"``, default ``|x| > 1e10``; diverged co-simulation FMUs return e.g. 1e104 without an
error), and an FMU that ended the run by itself (``"early_stop"``).  The kinds are those of
:data:`fmu_surrogate.fmu.dataset.FAILURE_KINDS`; the message carries the FMU's own log text.
"""

from __future__ import annotations

import signal as _signal
from typing import Any

import numpy as np

from fmu_surrogate.fmu.runner.runs import DEFAULT_EXPLODE_THRESHOLD

__all__ = ["classify"]

_MAX_MESSAGE = 4000


def _trim(text: str, limit: int = _MAX_MESSAGE) -> str:
    """At most ``limit`` characters: the head (what failed first) and the tail (what came last)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[: limit // 3]
    tail = text[-(limit - len(head)):]
    dropped = len(text) - len(head) - len(tail)
    return f"{head}\n[... {dropped} characters dropped ...]\n{tail}"


def classify(output: Any, time: np.ndarray, explode_threshold: float = DEFAULT_EXPLODE_THRESHOLD,
             extra_text: str = "") -> tuple[str, str]:
    """Failure kind and message of a finished :class:`~fmu_surrogate.fmu.backends.registry.RunOutput`.

    Precedence: an exception (``"error_status"`` for an FMI status or when the FMU logged an
    error, else ``"exception"``); then whichever of non-finite / exploding values occurs first in
    time; then ``"early_stop"``.  An ok run gets kind ``""`` and, as message, its warnings.

    Parameters
    ----------
    output : RunOutput
    time : ndarray, shape (T,)
    explode_threshold : float
    extra_text : str
        Other diagnostics (e.g. the solver's console output) appended to failure messages.

    Returns
    -------
    (kind, message)
    """
    n = output.n_done
    logged_error = any(s >= 3 for s, _, _ in output.messages)
    log_all = output.log_text()
    log_warn = output.log_text(min_status=1)

    def with_log(head: str, log: str) -> str:
        parts = [head]
        if log:
            parts.append("FMU log:\n" + log)
        if extra_text.strip():
            parts.append("output:\n" + extra_text.strip())
        return _trim("\n".join(parts))

    def at(t: float | None) -> str:
        return "" if t is None else f" at t={t:g}"

    exc = output.error
    if exc is not None:
        function = getattr(exc, "function", None)
        status = getattr(exc, "status", None)
        if function is not None and status is not None:
            from fmu_surrogate.fmu.backends.registry import STATUS_NAMES

            label = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else str(status)
            prefix = "fmi3" if function.startswith("fmi3") else "fmi2"
            head = f"{function} returned {prefix}{label}{at(output.error_time)}"
            return "error_status", with_log(head, log_all)
        head = f"{type(exc).__name__}: {exc}"
        return ("error_status" if logged_error else "exception"), with_log(head, log_all)

    if n:
        block = np.asarray(output.data[:n])
        # max |x| <= bound without a temporary array; NaN compares False: the full check
        if not block.size or (block.max() <= explode_threshold
                              and -block.min() <= explode_threshold):
            if output.stopped_early or n < len(time):
                return _early_stop(output, time, with_log, log_all)
            return "", _trim(log_warn)
        finite = np.isfinite(block)
        bad_rows = np.flatnonzero(~finite.all(axis=1))
        with np.errstate(invalid="ignore"):
            big = np.abs(np.where(finite, block, 0.0)) > explode_threshold
        big_rows = np.flatnonzero(big.any(axis=1))
        first_bad = int(bad_rows[0]) if bad_rows.size else None
        first_big = int(big_rows[0]) if big_rows.size else None
        names = _column_names(output)
        if first_bad is not None and (first_big is None or first_bad <= first_big):
            j = int(np.flatnonzero(~finite[first_bad])[0])
            v = block[first_bad, j]
            head = (f"{names[j]} is {v}{at(float(time[first_bad]))} (first non-finite value; the "
                    f"FMU did not report an error)")
            return "non_finite", with_log(head, log_all)
        if first_big is not None:
            j = int(np.flatnonzero(big[first_big])[0])
            v = block[first_big, j]
            head = (f"|{names[j]}| = {abs(v):.3g} exceeds the bound {explode_threshold:g}"
                    f"{at(float(time[first_big]))} (diverged without an error; raise "
                    f"explode_threshold if such values are legitimate)")
            return "exploding", with_log(head, log_all)
    if output.stopped_early or n < len(time):
        return _early_stop(output, time, with_log, log_all)
    return "", _trim(log_warn)


def _early_stop(output, time, with_log, log_all) -> tuple[str, str]:
    n = output.n_done
    t_end = float(time[n - 1]) if n else float(time[0])
    head = (f"the FMU ended the run at t={t_end:g}, before the stop time {float(time[-1]):g}, "
            f"without an error")
    return "early_stop", with_log(head, log_all)


def _column_names(output: Any) -> list[str]:
    names = []
    for name in output.names:
        _c0, shape = output.columns[name]
        if not shape:
            names.append(name)
        else:
            for idx in np.ndindex(*shape):
                names.append(f"{name}[{','.join(str(i + 1) for i in idx)}]")
    return names


def _signal_name(returncode: int | None) -> str:
    if returncode is None:
        return "unknown cause"
    if returncode < 0:
        try:
            sig = _signal.Signals(-returncode)
            desc = _signal.strsignal(sig) or ""
            return f"{sig.name} ({desc})" if desc else sig.name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"
