"""Benchmark FMUs with their own variable-step solver: SUNDIALS CVODE, as vendors' FMUs carry.

Real vendors' co-simulation FMUs (OpenModelica, Dymola, Simcenter, ...) integrate with a solver
of their own; OpenModelica's use CVODE, reinitialised at every communication point (the inputs
jump there), and give a model without states a dummy state so that the solver still runs.  The
``*_cvode`` benchmark variants reproduce that: same variables, units, parameters and start
values as their originals, and a co-simulation step (``c/cvode_runtime.c``) that integrates the
model's own equations with CVODE (BDF, Newton with a dense direct solver, relative tolerance
``cvode_rtol`` = 1e-6 unless ``fmi2SetupExperiment`` gives one, ``CVodeReInit`` and
``CVodeSetStopTime`` at every step).

The SUNDIALS libraries are those fmpy ships for the host (``fmpy/sundials/<platform>``); the
build copies them into the FMU's ``binaries/<platform>/`` under their SONAMEs and links the FMU
binary against them with the run path ``$ORIGIN``, so the FMU needs nothing outside its folder.
Linking (rather than ``dlopen`` at instantiation) lets the dynamic loader resolve them the same
way whoever loads the FMU (fmpy through ctypes, libcosim, a plain ``dlopen`` of a C driver):
every host loads the binary with the system loader, which reads the run path relative to the
binary itself, and a missing library fails the load with the loader's message naming it.  Where
fmpy ships no SUNDIALS for the host (only Linux x86-64 builds are used), these variants are not
built (:func:`sundials_libraries` raises :class:`SundialsUnavailableError`), nor the detailed
components of :mod:`fmu_surrogate.benchmarks.specs_detailed`, which integrate with the same runtime.
"""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

from fmu_surrogate.export.fmi.model_description import ModelSpec, Var
from fmu_surrogate.fmu.model.compile import FMUBuildError

__all__ = ["RUNTIME_HEADER", "RUNTIME_SOURCE", "SundialsUnavailableError", "cvode_variant",
           "sundials_libraries", "sundials_unavailable_reason", "uses_cvode"]

_C_DIR = Path(__file__).parent / "c"
#: C file of the co-simulation step with CVODE, compiled into every ``*_cvode`` FMU.
RUNTIME_SOURCE = _C_DIR / "cvode_runtime.c"
#: Our declarations of the SUNDIALS functions it calls.
RUNTIME_HEADER = _C_DIR / "sundials_api.h"
#: File names (without extension) of the SUNDIALS libraries the runtime links with.
_LIBRARIES = ("sundials_core", "sundials_nvecserial", "sundials_sunmatrixdense",
              "sundials_sunlinsoldense", "sundials_cvode")
#: Default relative tolerance of the ``*_cvode`` FMUs (OpenModelica's default experiment's).
RTOL = 1e-6
#: Default limit of internal steps per communication step (CVODE's own default).
MAX_STEPS = 500


class SundialsUnavailableError(FMUBuildError):
    """fmpy ships no SUNDIALS libraries for this platform: the ``*_cvode`` FMUs cannot be built."""


def _fmpy_sundials_dir() -> tuple[Path, str]:
    import fmpy

    return Path(fmpy.__file__).parent / "sundials" / fmpy.platform_tuple, fmpy.system


def sundials_unavailable_reason() -> str | None:
    """Why the ``*_cvode`` FMUs cannot be built on this host, or ``None`` if they can."""
    folder, system = _fmpy_sundials_dir()
    if system != "linux":
        return (f"the *_cvode and *_detailed benchmark FMUs are built on Linux only (fmpy's "
                f"SUNDIALS libraries are linked by SONAME with run path $ORIGIN); this host is "
                f"{system}: build them on Linux or use the originals")
    missing = [n for n in _LIBRARIES if not (folder / f"{n}.so").is_file()]
    if missing:
        return (f"fmpy ships no SUNDIALS libraries {missing} for this platform in {folder}, "
                "which the *_cvode and *_detailed benchmark FMUs link with: build them on Linux "
                "x86-64 or use the originals")
    return None


def sundials_libraries() -> dict[str, Path]:
    """fmpy's SUNDIALS libraries for the host: ``SONAME -> path``, in link order.

    Raises
    ------
    SundialsUnavailableError
        Not Linux, or fmpy ships no SUNDIALS for this platform.
    """
    reason = sundials_unavailable_reason()
    if reason:
        raise SundialsUnavailableError(reason)
    folder, _ = _fmpy_sundials_dir()
    paths = [folder / f"{n}.so" for n in _LIBRARIES]
    return {_soname(p): p for p in paths}


def _soname(path: Path) -> str:
    """``DT_SONAME`` of a 64-bit little-endian ELF shared library."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SundialsUnavailableError(f"{path} is not a 64-bit little-endian ELF library; "
                                       "the *_cvode benchmark FMUs need fmpy's Linux build")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    # Elf64_Shdr: name, type, flags, addr, offset, size, link, info, addralign, entsize
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    for sec in sections:
        if sec[1] != 6:  # SHT_DYNAMIC
            continue
        strings = sections[sec[6]][4]
        for off in range(sec[4], sec[4] + sec[5], 16):
            tag, val = struct.unpack_from("<qQ", data, off)
            if tag == 0:  # DT_NULL
                break
            if tag == 14:  # DT_SONAME
                start = strings + val
                return data[start:data.index(b"\0", start)].decode()
    raise SundialsUnavailableError(f"{path} has no SONAME; it cannot be linked by name")


def uses_cvode(spec: ModelSpec) -> bool:
    """Whether ``spec`` is a ``*_cvode`` variant (its FMU needs the runtime and SUNDIALS)."""
    return bool(spec.defines.get("MODEL_CVODE"))


def cvode_variant(spec: ModelSpec) -> ModelSpec:
    """The ``*_cvode`` variant of a co-simulation benchmark: same model, CVODE as its solver.

    The identifier gains ``_cvode``; the fixed-step integrator's ``n_substeps`` (if any) gives
    way to the CVODE settings ``cvode_rtol`` and ``cvode_max_steps``; the FMU is co-simulation
    only.  The model's C file must not define ``model_do_step`` when ``MODEL_CVODE`` is defined.
    """
    variables = tuple(v for v in spec.variables if v.name != "n_substeps") + (
        Var("cvode_rtol", "parameter", "fixed", RTOL,
            description="co-simulation: relative tolerance of CVODE (the tolerance of "
            "fmi2SetupExperiment overrides it when defined); absolute tolerance rtol * 1"),
        Var("cvode_max_steps", "parameter", "fixed", MAX_STEPS, type="Integer",
            description="co-simulation: maximum number of CVODE steps per communication step"),
    )
    defines = {k: v for k, v in spec.defines.items() if k not in ("MODEL_RK4", "MODEL_DO_STEP")}
    defines.update(MODEL_CVODE=1, MODEL_DO_STEP=1, MODEL_FREE_INSTANCE=1,
                   MODEL_EXTRA_WORKSPACE="struct CvodeRuntime *cvode;")
    return dataclasses.replace(
        spec, identifier=f"{spec.identifier}_cvode",
        description=f"{spec.description}; integrated by its own SUNDIALS CVODE (BDF), "
        "reinitialised at every communication point",
        variables=variables, defines=defines, model_exchange=False)
