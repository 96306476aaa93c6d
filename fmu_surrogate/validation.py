"""Does a surrogate still match the FMU it replaces?  Run both under the same inputs and compare.

:func:`validate` harvests the reference FMU once (isolated worker, like every harvest), then runs
the surrogate on exactly the inputs the reference saw — a surrogate JSON file or ``ph`` object
through :func:`fmu_surrogate.ph.simulate`, an exported surrogate FMU through a second harvest —
and reports max, RMS and relative error per output.  It is what ``fmu-surrogate validate``,
:func:`fmu_surrogate.testing.assert_surrogate_matches` and the pytest fixture call.

Ports are matched by name: the surrogate's ``input_names``/``output_names`` must be variables of
the reference FMU (they are when the surrogate was identified from a dataset of that FMU), or a
``ports`` mapping says which variable each port is.  The surrogate's initial state is taken from
the reference run when its ``state_names`` are variables of the FMU, and is zero otherwise (a
linear surrogate of a system at rest).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["OutputError", "ValidationError", "ValidationReport", "validate"]


class ValidationError(FmuSurrogateError, ValueError):
    """The surrogate and the reference cannot be compared (names, runs that failed, shapes)."""


@dataclass(frozen=True)
class OutputError:
    """Error of one output of the surrogate against the reference.

    Parameters
    ----------
    name : str
        The output (FMU variable name).
    max_abs : float
        ``max |y_s − y_r|`` over the time grid.
    rms : float
        Root mean square of ``y_s − y_r``.
    scale : float
        ``max |y_r|``, the reference's size.
    allowed : float
        ``atol + rtol · scale``.
    """

    name: str
    max_abs: float
    rms: float
    scale: float
    allowed: float

    @property
    def relative(self) -> float:
        """``max_abs / scale`` (``inf`` for a zero reference with a nonzero error)."""
        if self.scale > 0:
            return self.max_abs / self.scale
        return 0.0 if self.max_abs == 0 else float("inf")

    @property
    def passed(self) -> bool:
        """Whether ``max_abs ≤ allowed``."""
        return bool(self.max_abs <= self.allowed)


@dataclass(frozen=True)
class ValidationReport:
    """Both trajectories and the error per output.

    Parameters
    ----------
    t : ndarray, shape (N,)
        Time grid [s].
    reference, surrogate : ndarray, shape (N, k)
        Outputs of the reference FMU and of the surrogate.
    outputs : tuple of str
        Output names (FMU variables), length k.
    units : tuple of str or None
        Units per output, from the reference FMU.
    errors : tuple of OutputError
        One per output.
    rtol, atol : float
        The tolerances the errors were judged by.
    """

    t: np.ndarray = field(repr=False)
    reference: np.ndarray = field(repr=False)
    surrogate: np.ndarray = field(repr=False)
    outputs: tuple[str, ...]
    units: tuple[str | None, ...]
    errors: tuple[OutputError, ...]
    rtol: float
    atol: float

    @property
    def passed(self) -> bool:
        """Whether every output is within ``atol + rtol · max|reference|``."""
        return all(e.passed for e in self.errors)

    def table(self) -> str:
        """The errors as a text table, one row per output.

        Returns
        -------
        str
        """
        rows = [f"{'output':<16} {'max |err|':>11} {'RMS':>11} {'relative':>10} {'allowed':>11}"]
        for e in self.errors:
            mark = "ok" if e.passed else "FAIL"
            rows.append(f"{e.name:<16} {e.max_abs:11.3e} {e.rms:11.3e} {e.relative:10.3e} "
                        f"{e.allowed:11.3e}  {mark}")
        return "\n".join(rows)

    def plot(self, path: str | Path | None = None, *, title: str | None = None) -> Any:
        """Reference and surrogate per output with an error panel (:func:`plots.plot_comparison`).

        Parameters
        ----------
        path : path, optional
            Save the figure there (PNG) and close it.
        title : str, optional
            Figure title.

        Returns
        -------
        matplotlib.figure.Figure
        """
        from fmu_surrogate.plots import plot_comparison

        return plot_comparison(self.t, self.reference, self.surrogate, self.outputs,
                               units=self.units, labels=("reference FMU", "surrogate"),
                               title=title, path=path)


def _load_surrogate(surrogate: Any) -> tuple[str, Any]:
    """``("fmu", path)`` or ``("ph", system)``."""
    if isinstance(surrogate, (str, os.PathLike)):
        path = Path(surrogate)
        if not path.exists():
            raise ValidationError(f"surrogate {str(path)!r} does not exist; pass a surrogate JSON "
                                  "file, an exported .fmu or a ph system object.")
        if path.suffix.lower() == ".fmu":
            return "fmu", path
        from fmu_surrogate.ph import load

        return "ph", load(path)
    if hasattr(surrogate, "J") and hasattr(surrogate, "B"):
        return "ph", surrogate
    raise ValidationError(
        f"cannot validate a {type(surrogate).__name__}; pass a surrogate JSON file, an exported "
        ".fmu or a fmu_surrogate.ph system (LinearPH, PHDAE)."
    )


def _port_names(system: Any, kind: str, count: int) -> list[str]:
    names = getattr(system, f"{kind}_names", None)
    prefix = {"input": "u", "output": "y", "state": "x"}[kind]
    return list(names) if names is not None else [f"{prefix}{i + 1}" for i in range(count)]


def _surrogate_ports(kind: str, sur: Any) -> tuple[list[str], list[str], list[str]]:
    if kind == "fmu":
        from fmu_surrogate.fmu.model.loading import open_fmu

        info = open_fmu(sur)
        ins = [v.name for v in info.variables if v.causality == "input"]
        outs = [v.name for v in info.variables
                if v.causality == "output" and v.name not in ("H", "energy_residual")]
        return ins, outs, []
    n, m = np.shape(sur.B)
    return (_port_names(sur, "input", m), _port_names(sur, "output", m),
            _port_names(sur, "state", n))


def validate(
    surrogate: Any,
    reference_fmu: str | os.PathLike,
    *,
    inputs: Mapping[str, Any] | None = None,
    parameters: Mapping[str, float] | None = None,
    stop_time: float | None = None,
    step: float | None = None,
    rtol: float = 1e-3,
    atol: float = 0.0,
    ports: Mapping[str, str] | None = None,
    outputs: Sequence[str] | None = None,
    timeout: float | None = 120.0,
) -> ValidationReport:
    """Run a surrogate and its reference FMU under the same inputs; compare their outputs.

    Parameters
    ----------
    surrogate : path or ph system
        A surrogate JSON file (``fmu_surrogate.ph.save``), an exported surrogate ``.fmu``, or a
        :class:`~fmu_surrogate.ph.LinearPH` / :class:`~fmu_surrogate.ph.PHDAE` object.
    reference_fmu : path
        The FMU the surrogate replaces.
    inputs : mapping, optional
        Input signals by FMU variable name (:mod:`fmu_surrogate.signals` objects, arrays as
        ``ArraySignal``); inputs not named stay at their start values.
    parameters : mapping, optional
        Parameter values of the reference FMU for this comparison.
    stop_time, step : float, optional
        Experiment (default: the reference FMU's default experiment).
    rtol, atol : float
        An output passes when ``max |y_s − y_r| ≤ atol + rtol · max |y_r|``.
    ports : mapping, optional
        Surrogate port name -> reference FMU variable, where the names differ.
    outputs : sequence of str, optional
        Compare only these outputs (reference variable names); default all of the surrogate's.
    timeout : float, optional
        Wall-clock limit of each FMU run [s].

    Returns
    -------
    ValidationReport
        ``report.passed``, ``report.table()``, ``report.plot(path)``.

    Raises
    ------
    ValidationError
        A port that is not a variable of the reference FMU, or a run that failed (with the
        FMU's reason).
    """
    from fmu_surrogate.fmu.campaigns.campaign import harvest
    from fmu_surrogate.fmu.dataset import data_var_name, run_arrays
    from fmu_surrogate.fmu.model.loading import open_fmu

    if not (rtol >= 0 and atol >= 0):
        raise ValidationError(f"rtol and atol must be >= 0, got rtol={rtol!r}, atol={atol!r}.")
    kind, sur = _load_surrogate(surrogate)
    info = open_fmu(reference_fmu)
    known = {v.name for v in info.variables}
    ports = dict(ports or {})
    s_in, s_out, s_states = _surrogate_ports(kind, sur)
    r_in = [ports.get(p, p) for p in s_in]
    r_out = [ports.get(p, p) for p in s_out]
    for port, var in zip(s_in + s_out, r_in + r_out):
        if var not in known:
            raise ValidationError(
                f"surrogate port {port!r} is not a variable of {info.name}"
                f"{f' (mapped to {var!r})' if var != port else ''}; name the ports when "
                "identifying (--inputs/--outputs) or pass ports={'" + port + "': 'FMU variable'}."
            )
    chosen = list(range(len(r_out)))
    if outputs is not None:
        missing = [o for o in outputs if o not in r_out]
        if missing:
            raise ValidationError(f"outputs {missing} are not outputs of the surrogate "
                                  f"(its outputs: {r_out}).")
        chosen = [r_out.index(o) for o in outputs]
    states_known = bool(s_states) and all(s in known for s in s_states)
    record = list(dict.fromkeys(r_in + r_out + (s_states if states_known else [])))
    signals = [dict(inputs)] if inputs else None
    params = [dict(parameters)] if parameters else None
    with tempfile.TemporaryDirectory(prefix="fmu-surrogate-validate-") as tmp:
        ref = harvest(reference_fmu, Path(tmp) / "reference.nc", signals=signals,
                      parameters=params, stop_time=stop_time, step=step, record=record,
                      workers=1, timeout=timeout, progress=False)
        _check_ok(ref, f"reference FMU {info.name}")
        (t, R), = run_arrays(ref, record)
        col = {name: j for j, name in enumerate(record)}
        u = R[:, [col[v] for v in r_in]]
        y_ref = R[:, [col[v] for v in r_out]]
        if kind == "fmu":
            sur_ds = harvest(sur, Path(tmp) / "surrogate.nc",
                             signals=[{p: _array_signal(t, u[:, j]) for j, p in enumerate(s_in)}],
                             stop_time=float(t[-1]), start_time=float(t[0]),
                             step=float(t[1] - t[0]), record=s_out, workers=1,
                             timeout=timeout, progress=False)
            _check_ok(sur_ds, "surrogate FMU")
            (_, y_sur), = run_arrays(sur_ds, s_out)
        else:
            from fmu_surrogate.ph import simulate

            n = np.shape(sur.J)[0]
            x0 = R[0, [col[s] for s in s_states]] if states_known else np.zeros(n)
            # the reference saw its inputs as its importer held them: do the same
            hold = "zoh" if str(ref.attrs.get("input_interpolation", "")).startswith("zero") \
                else "linear"
            y_sur = simulate(sur, t, u, x0, hold=hold).y
        units = tuple(ref[data_var_name(ref, v)].attrs.get("units") for v in r_out)
    if y_sur.shape != y_ref.shape:
        raise ValidationError(f"the surrogate returned {y_sur.shape[0]} samples, the reference "
                              f"{y_ref.shape[0]}: did the surrogate FMU stop early?")
    errs = []
    for j in chosen:
        e = y_sur[:, j] - y_ref[:, j]
        scale = float(np.max(np.abs(y_ref[:, j])))
        errs.append(OutputError(r_out[j], float(np.max(np.abs(e))), float(np.sqrt(np.mean(e**2))),
                                scale, atol + rtol * scale))
    return ValidationReport(t, y_ref[:, chosen], y_sur[:, chosen], tuple(r_out[j] for j in chosen),
                            tuple(units[j] for j in chosen), tuple(errs), rtol, atol)


def _array_signal(t: np.ndarray, v: np.ndarray) -> Any:
    from fmu_surrogate.fmu.signals.standard import ArraySignal

    return ArraySignal(t, v)


def _check_ok(ds: Any, what: str) -> None:
    status = str(ds["status"].values[0])
    if status != "ok":
        raise ValidationError(
            f"the {what} run failed ({ds['failure_kind'].values[0]}): "
            f"{str(ds['message'].values[0]).splitlines()[0] if ds['message'].values[0] else ''}"
        )
