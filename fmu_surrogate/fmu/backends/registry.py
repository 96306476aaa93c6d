"""Simulation backends: one FMU instance, many runs.

A backend extracts and instantiates an FMU once (:meth:`Backend.open`) and then executes runs on
that instance (:meth:`Backend.run`: reset, set start values, initialise, step, record).  Reusing
the instance matters: docs/design.md §8 measured ``simulate_fmu`` at about 84 runs/s against about
213 runs/s for a hand-written stepping loop on the same tiny FMU.

Backends do not classify failures and never raise for a failing *run*: :meth:`Backend.run`
returns a :class:`RunOutput` that carries the partial data, the FMU's own log messages (captured
through the logger callback) and the exception, if any.  The isolated runner
(:mod:`fmu_surrogate.fmu.runner.pool`) turns that into a failure kind.

* :class:`FmpyBackend` (default) — FMI 2.0 and 3.0.  Co-simulation runs use a hand-written stepping
  loop that calls the FMU's C functions directly (one ``fmi2GetReal`` of all recorded value
  references per communication point, written straight into a preallocated array); model
  exchange runs go through ``fmpy.simulate_fmu`` with CVode on the reused instance.
* :class:`PyFMIBackend` — used when ``pyfmi`` is importable.
* :func:`get_backend` — ``"auto"`` picks fmpy.
* :func:`register_backend` — backends of targets that are not FMU files
  (:mod:`~fmu_surrogate.fmu.campaigns.targets`), made by name in the worker processes.

The pieces: :mod:`~fmu_surrogate.fmu.backends.api` (the protocol and the run output),
:mod:`~fmu_surrogate.fmu.backends.fmpy_instance` with its co-simulation (:mod:`~fmu_surrogate.fmu.backends.fmpy_cs`)
and model-exchange (:mod:`~fmu_surrogate.fmu.backends.fmpy_me`) loops, and
:mod:`~fmu_surrogate.fmu.backends.pyfmi_instance`; this module chooses among them.

Input convention (co-simulation): the input value at communication point ``t[i]`` is set before the
values of row ``i`` are read and held constant over the step ``[t[i], t[i+1])`` (zero-order hold).
Model exchange interpolates the input samples linearly (fmpy's ``Input``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fmu_surrogate.errors import InvalidInputError, InvalidTypeError
from fmu_surrogate.fmu.backends.api import STATUS_NAMES, Backend, RunOutput
from fmu_surrogate.fmu.backends.fmpy_instance import FmpyBackend
from fmu_surrogate.fmu.backends.pyfmi_instance import PyFMIBackend

__all__ = [
    "STATUS_NAMES",
    "Backend",
    "FmpyBackend",
    "PyFMIBackend",
    "RunOutput",
    "available_backends",
    "get_backend",
    "register_backend",
]

_BUILTIN = ("auto", "fmpy", "pyfmi")
_REGISTRY: dict[str, Callable[..., Backend]] = {}


def register_backend(name: str, factory: Callable[..., Backend]) -> None:
    """Make ``get_backend(name, **options)`` return ``factory(**options)``.

    For targets that are not FMU files (:mod:`fmu_surrogate.fmu.campaigns.targets`): the module that
    calls this is imported by every worker process (``RunnerConfig.backend_module``), so the
    name resolves there too.  Registering a name again replaces the factory.

    Parameters
    ----------
    name : str
        Backend name (case-insensitive); not one of ``auto``, ``fmpy``, ``pyfmi``.
    factory : callable
        Returns a :class:`Backend` given the backend options as keyword arguments.

    Raises
    ------
    ValueError
        A built-in name.
    TypeError
        A factory that is not callable.
    """
    key = str(name).lower()
    if key in _BUILTIN:
        raise InvalidInputError(f"backend name {name!r} is built in; register under another name.")
    if not callable(factory):
        raise InvalidTypeError(f"the factory of backend {name!r} must be callable, got "
                         f"{type(factory).__name__}.")
    _REGISTRY[key] = factory


def available_backends() -> list[str]:
    """Names of the backends usable here (``"fmpy"`` always, ``"pyfmi"`` when importable, then
    the registered ones)."""
    names = ["fmpy"]
    try:
        import pyfmi  # noqa: F401

        names.append("pyfmi")
    except ImportError:
        pass
    return names + sorted(_REGISTRY)


def get_backend(name: str = "auto", **options: Any) -> Backend:
    """Create a backend by name.

    Parameters
    ----------
    name : str
        ``"auto"`` (fmpy; PyFMI is used only when asked for), ``"fmpy"``, ``"pyfmi"`` or a
        name registered with :func:`register_backend`.
    **options
        Passed to the backend constructor (``interface``, ``tolerance``, ...).

    Raises
    ------
    ValueError
        Unknown name, or ``"pyfmi"`` when PyFMI is not installed.
    """
    key = (name or "auto").lower()
    if key in ("auto", "fmpy"):
        return FmpyBackend(**options)
    if key == "pyfmi":
        try:
            return PyFMIBackend(**options)
        except ImportError:
            raise InvalidInputError(
                "backend 'pyfmi' needs PyFMI, which is not installed (it has no pip "
                "wheel here; install it with conda: `conda install -c conda-forge "
                "pyfmi`), or use --backend fmpy.") from None
    if key in _REGISTRY:
        return _REGISTRY[key](**options)
    raise InvalidInputError(f"unknown backend {name!r}; choose one of: auto, "
                            f"{', '.join(available_backends())}.")
