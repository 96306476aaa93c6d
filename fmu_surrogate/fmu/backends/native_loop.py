"""The compiled co-simulation stepping loop (``c/cs_loop.c``): one C call per run.

The Python loop of :mod:`fmu_surrogate.fmu.backends.fmpy_cs` makes three ctypes calls per
communication step; for small FMUs those calls, not the model, bound the harvest.  The C loop
makes the same FMU calls in the same order with the same arguments (so the data are
bit-identical) through the function addresses fmpy resolved from the FMU's library, on fmpy's
instance (its logger callback, memory functions and component environment stay fmpy's).

It is compiled on first use with the system C compiler into a per-user cache
(``$FMU_SURROGATE_NATIVE_CACHE``, else ``$XDG_CACHE_HOME/fmu-surrogate/native``, else
``~/.cache/fmu-surrogate/native``), named after a hash of its source, compiler and platform, and
loaded with ctypes.  Without a compiler the Python loop runs and :func:`native_library` says so in
one line (once per process).  ``FMU_SURROGATE_NATIVE_LOOP=0`` selects the Python loop.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import sys
from ctypes import POINTER, c_int, c_int64, c_void_p
from pathlib import Path

import numpy as np

from fmu_surrogate.fmu.model.compile import FMUBuildError, build_shared_library, compiler_path

__all__ = ["LOOP_DONE", "LOOP_GET", "LOOP_SET", "LOOP_STEP", "LOOP_STOPPED", "NativeRun",
           "native_library"]

SOURCE = Path(__file__).resolve().parent / "c" / "cs_loop.c"
#: return codes of the C loop
LOOP_DONE, LOOP_SET, LOOP_GET, LOOP_STEP, LOOP_STOPPED = range(5)


def cache_dir() -> Path:
    """Folder of the compiled loop (see the module docstring)."""
    env = os.environ.get("FMU_SURROGATE_NATIVE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "fmu-surrogate" / "native"


def _library_path() -> Path:
    h = hashlib.sha256(SOURCE.read_bytes())
    h.update(compiler_path().encode())
    h.update(f"{sys.platform}-{platform.machine()}".encode())
    return cache_dir() / f"cs_loop-{h.hexdigest()[:16]}.so"


def native_library(quiet: bool = False) -> ctypes.CDLL | None:
    """The loaded C loop, compiled first if needed; ``None`` where it cannot be built or
    ``FMU_SURROGATE_NATIVE_LOOP=0`` asks for the Python loop.

    Parameters
    ----------
    quiet : bool
        Do not print the line that says why the Python loop runs instead.
    """
    if os.environ.get("FMU_SURROGATE_NATIVE_LOOP", "1") == "0":
        return None
    return _load(quiet)


@functools.cache
def _load(quiet: bool) -> ctypes.CDLL | None:
    try:
        lib = ctypes.CDLL(str(build_shared_library([SOURCE], _library_path())))
    except (FMUBuildError, OSError) as exc:
        if not quiet:
            reason = str(exc).splitlines()[0]
            print(f"fmu-surrogate: the compiled stepping loop is unavailable ({reason}); "
                  "harvesting uses the slower Python loop.", file=sys.stderr)
        return None
    i64, p_i64 = c_int64, POINTER(c_int64)
    lib.fmi2_cs_loop.restype = c_int
    lib.fmi2_cs_loop.argtypes = [c_void_p] * 5 + [i64, c_void_p, c_void_p, c_void_p, i64,
                                                  c_void_p, i64, c_void_p, i64, c_void_p, i64,
                                                  c_void_p, POINTER(c_int), p_i64]
    lib.fmi3_cs_loop.restype = c_int
    lib.fmi3_cs_loop.argtypes = [c_void_p] * 4 + [i64, c_void_p, c_void_p, c_void_p, i64,
                                                  c_void_p, i64, c_void_p, i64, i64, c_void_p,
                                                  i64, c_void_p, POINTER(c_int), p_i64]
    return lib


def _address(fn) -> int:
    """The C address of a ctypes function object."""
    return ctypes.cast(fn, c_void_p).value


class NativeRun:
    """One call of the C loop: the status of the FMU call that ended it and its row.

    Parameters
    ----------
    lib : ctypes.CDLL
        From :func:`native_library`.
    """

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        self.status = c_int(0)
        self.row = c_int64(0)

    def fmi2(self, comp, set_real, get_real, do_step, get_bool_status, time: np.ndarray,
             in_vr: int, nin: int, in_base: int, in_stride: int, vr: int, nvr: int,
             out_base: int, out_stride: int, progress: np.ndarray) -> int:
        """Run the FMI 2 loop; returns one of the ``LOOP_*`` codes.

        ``set_real`` … ``get_bool_status`` are fmpy's ctypes functions of the FMU, ``time`` the
        communication points (float64, C order), ``in_vr``/``vr`` the addresses of the value
        reference arrays, ``in_base``/``out_base`` the addresses of the input and output rows
        (``in_stride``/``out_stride`` bytes apart) and ``progress`` an int64 array whose first
        element counts the rows written."""
        h = np.diff(time)
        return self.lib.fmi2_cs_loop(
            comp, _address(set_real), _address(get_real), _address(do_step),
            _address(get_bool_status), time.shape[0], time.ctypes.data, h.ctypes.data,
            in_vr, nin, in_base, in_stride, vr, nvr,
            out_base, out_stride, progress.ctypes.data, ctypes.byref(self.status),
            ctypes.byref(self.row))

    def fmi3(self, inst, set_float64, get_float64, do_step, time: np.ndarray, in_vr: int,
             nin: int, in_base: int, in_stride: int, vr: int, nvr: int, nvalues: int,
             out_base: int, out_stride: int, progress: np.ndarray) -> int:
        """Run the FMI 3 loop (arguments as :meth:`fmi2`; ``nvalues`` counts the scalar values
        of the ``nvr`` recorded variables, arrays included)."""
        h = np.diff(time)
        return self.lib.fmi3_cs_loop(
            inst, _address(set_float64), _address(get_float64), _address(do_step),
            time.shape[0], time.ctypes.data, h.ctypes.data, in_vr, nin,
            in_base, in_stride, vr, nvr, nvalues, out_base, out_stride,
            progress.ctypes.data, ctypes.byref(self.status), ctypes.byref(self.row))
