"""Build the benchmark systems as native FMI 2.0 FMUs (co-simulation + model exchange).

The C sources live in ``fmu_surrogate/benchmarks/c`` (one file of equations per model, compiled
with the package's shared FMU framework
:data:`~fmu_surrogate.export.fmi.model_description.FRAMEWORK_SOURCE`); the model descriptions and the C header with the value references are
generated from the Python specs in :mod:`fmu_surrogate.benchmarks.specs`.  Compilation goes
through :func:`fmu_surrogate.fmu.model.compile.build_fmu`, so builds are cached on the content of all
inputs: an FMU is recompiled only when a source, the spec or the compiler changes.

Example
-------
>>> from fmu_surrogate.benchmarks.build import benchmark_fmu
>>> path = benchmark_fmu("cauer")        # doctest: +SKIP  (built once, then cached)
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fmu_surrogate.benchmarks import cvode, specs, specs_detailed
from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.export.fmi.model_description import (
    FRAMEWORK_HEADER,
    FRAMEWORK_SOURCE,
    GENERATED_HEADER,
    ModelSpec,
)
from fmu_surrogate.fmu.model.compile import FMUBuildError, build_fmu, cached_hash

#: Folder of the benchmarks' C model sources shipped with the package.
C_DIR = Path(__file__).parent / "c"


@dataclass(frozen=True)
class Benchmark:
    """A registered benchmark FMU.

    Attributes
    ----------
    name : str
        Registry key, also the ``modelIdentifier``.
    description : str
    spec : callable
        ``spec(**options) -> ModelSpec``.
    options : dict
        Build options accepted by ``spec`` with their defaults (e.g. ``{"n_cells": 50}``).
    """

    name: str
    description: str
    spec: Callable[..., ModelSpec]
    options: dict[str, object]

    def filename(self, **options: object) -> str:
        """File name of the FMU for these options (non-default options appear in the name)."""
        suffix = "".join(
            f"_{k}{options[k]}" for k in sorted(options) if options[k] != self.options.get(k)
        )
        return f"{self.name}{suffix}.fmu"


#: The benchmark FMUs by name.
BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark("rc_network", "RC network pH-DAE, index 1 (docs/design.md §3)", specs.rc_network_spec, {}),
        Benchmark("pendulum", "planar pendulum pH-DAE, index 3 (docs/design.md §3)", specs.pendulum_spec, {}),
        Benchmark("msd_chain", "mass-spring-damper chain (docs/design.md §4)", specs.msd_chain_spec,
                  {"n_cells": 50}),
        Benchmark("cauer", "Cauer low-pass filter with a nonlinear resistor (docs/design.md §6)",
                  specs.cauer_spec, {}),
        Benchmark("duffing", "Duffing oscillator (docs/design.md §5)", specs.duffing_spec, {}),
        Benchmark("free_mass", "free mass with a power-out port (reaction force in, velocity out)",
                  specs.free_mass_spec, {}),
        Benchmark("free_inertia", "free_mass in rotational units (reaction torque in, speed out)",
                  specs.free_inertia_spec, {}),
        Benchmark("quarter_car", "quarter-car suspension in gravity, fixed-step RK4",
                  specs.quarter_car_spec, {}),
        Benchmark("damper", "linear damper with direct feedthrough, no state", specs.damper_spec, {}),
        Benchmark("dc_motor", "DC motor: electrical + mechanical ports, field command, discrete "
                  "direction, fixed-step RK4", specs.dc_motor_spec, {}),
        Benchmark("power_damper", "power-law damper with direct feedthrough, co-simulation only",
                  specs.power_damper_spec, {}),
        Benchmark("power_damper_stepped", "power-law damper whose outputs are computed in "
                  "doStep only (they see the velocity of the step before)",
                  specs.power_damper_stepped_spec, {}),
        Benchmark("progressive_spring", "progressive spring, co-simulation only, state internal",
                  specs.progressive_spring_spec, {}),
        Benchmark("progressive_spring_me", "progressive spring with model exchange, state declared",
                  specs.progressive_spring_me_spec, {}),
        Benchmark("progressive_spring_displacement", "progressive spring with a displacement "
                  "input, force out, no state, co-simulation only",
                  specs_detailed.progressive_spring_displacement_spec, {}),
        Benchmark("progressive_spring_damper", "progressive spring and power-law damper in the "
                  "adaptor convention (displacement and velocity in, force out), no state",
                  specs_detailed.progressive_spring_damper_spec, {}),
        Benchmark("saturating_inductor", "coil with saturating flux, co-simulation only, state "
                  "internal", specs.saturating_inductor_spec, {}),
        Benchmark("saturating_motor", "DC motor with a saturating magnetic circuit: voltage and "
                  "speed in, current and delivered torque out, co-simulation only, state "
                  "internal", specs_detailed.saturating_motor_spec, {}),
        Benchmark("power_damper_cvode", "power_damper with its own CVODE solver (a dummy state)",
                  lambda: cvode.cvode_variant(specs.power_damper_spec()), {}),
        Benchmark("progressive_spring_cvode", "progressive_spring with its own CVODE solver",
                  lambda: cvode.cvode_variant(specs.progressive_spring_spec()), {}),
        Benchmark("saturating_inductor_cvode", "saturating_inductor with its own CVODE solver",
                  lambda: cvode.cvode_variant(specs.saturating_inductor_spec()), {}),
        Benchmark("progressive_spring_detailed", "progressive spring as a coil of 20 segments "
                  "with mass and damping, 39 internal states, own CVODE",
                  specs_detailed.progressive_spring_detailed_spec, {}),
        Benchmark("power_damper_detailed", "hydraulic damper (piston, compressible oil, "
                  "orifice), F close to c v |v|, internal pressures, own CVODE",
                  specs_detailed.power_damper_detailed_spec, {}),
        Benchmark("saturating_inductor_detailed", "saturating coil with a 20-section Cauer "
                  "ladder of eddy currents, internal fluxes, own CVODE",
                  specs_detailed.saturating_inductor_detailed_spec, {}),
        Benchmark("hydraulic_accumulator", "hydraulic accumulator in bar and l/min, power-out "
                  "port, fixed-step RK4", specs.hydraulic_accumulator_spec, {}),
        Benchmark("hydraulic_orifice", "linear hydraulic orifice in bar and l/min, direct "
                  "feedthrough, no state", specs.hydraulic_orifice_spec, {}),
        Benchmark("gas_accumulator", "gas-charged hydraulic accumulator in bar and l/min, "
                  "polytropic, power-out port, starts charged, fixed-step RK4, state internal",
                  specs_detailed.gas_accumulator_spec, {}),
        Benchmark("turbulent_orifice", "turbulent orifice in bar and l/min, laminar–turbulent "
                  "transition, direct feedthrough, no state",
                  specs_detailed.turbulent_orifice_spec, {}),
        Benchmark("pendulum_joint", "pendulum on a driven joint that turns over (torque in, "
                  "angular velocity out), states internal, own CVODE",
                  specs_detailed.pendulum_joint_spec, {}),
        Benchmark("coupled_mass_clock", "mass coupled to a driven end, fixed-step RK4 on a clock "
                  "of its own compared without a tolerance (20-sim's), co-simulation only",
                  specs_detailed.coupled_mass_clock_spec, {}),
        Benchmark("sprung_mass_sensor", "mass on a progressive spring with a power-law damper "
                  "to ground: force in, velocity and acceleration (feedthrough of the force) "
                  "out, co-simulation only, states internal, fixed-step RK4",
                  specs_detailed.sprung_mass_sensor_spec, {}),
        Benchmark("end_stop_mass", "mass on a spring and a damper with elastic end stops "
                  "(ElastoGap contacts): force in, velocity and position out, co-simulation "
                  "only, states internal, fixed-step RK4 in substeps of at most 0.5 ms, "
                  "contacts not located", specs_detailed.end_stop_mass_spec, {}),
    )
}


def default_cache_dir() -> Path:
    """``$FMU_SURROGATE_CACHE`` if set, else ``~/.cache/fmu-surrogate/fmus``."""
    env = os.environ.get("FMU_SURROGATE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "fmu-surrogate" / "fmus"


def write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless the file already holds it (keeps its time stamp)."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)  # atomic: concurrent builders never read half a file


def _check(names: Iterable[str] | None) -> list[str]:
    if names is None:
        return list(BENCHMARKS)
    if isinstance(names, str):
        names = [names]
    names = list(names)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise InvalidInputError(
            f"unknown benchmark(s) {unknown}; choose from {sorted(BENCHMARKS)}.")
    return names


def build_benchmark(
    name: str,
    out_dir: str | Path,
    force: bool = False,
    *,
    source_dir: str | Path | None = None,
    cflags: Sequence[str] = (),
    **options: object,
) -> Path:
    """Build one benchmark FMU into ``out_dir`` (cached) and return its path.

    Parameters
    ----------
    name : str
        Key of :data:`BENCHMARKS`.
    out_dir : path
        Output folder; generated files go to ``out_dir/.build/<fmu name>/``.
    force : bool
        Recompile even when the cached FMU is up to date.
    source_dir : path, optional
        Folder with the C model sources (default: the package's ``c/`` folder; the shared
        framework always comes from :mod:`fmu_surrogate.export`).
    cflags : sequence of str
        Extra compiler flags.
    **options
        Build options of this benchmark (see ``BENCHMARKS[name].options``), e.g. ``n_cells``.

    Raises
    ------
    ValueError
        Unknown name or option.
    FMUBuildError
        Compilation failed or the generated model description does not validate
        (:class:`~fmu_surrogate.benchmarks.cvode.SundialsUnavailableError`: a ``*_cvode``
        benchmark on a host for which fmpy ships no SUNDIALS).
    """
    (name,) = _check([name])
    bench = BENCHMARKS[name]
    unknown = set(options) - set(bench.options)
    if unknown:
        raise InvalidInputError(
            f"{name} has no build option(s) {sorted(unknown)}; it accepts {sorted(bench.options) or 'none'}."
        )
    spec = bench.spec(**options)
    src = Path(source_dir) if source_dir is not None else C_DIR
    out_dir = Path(out_dir)
    output = out_dir / bench.filename(**options)
    gen = out_dir / ".build" / output.stem
    xml = spec.model_description_xml()
    write_if_changed(gen / GENERATED_HEADER, spec.c_header())
    write_if_changed(gen / "modelDescription.xml", xml)
    sources, headers = [FRAMEWORK_SOURCE, src / spec.source], [FRAMEWORK_HEADER, gen / GENERATED_HEADER]
    libraries = None
    if cvode.uses_cvode(spec):  # its own solver: the runtime, linked with fmpy's SUNDIALS
        libraries = cvode.sundials_libraries()
        sources.append(src / cvode.RUNTIME_SOURCE.name)
        headers.append(src / cvode.RUNTIME_HEADER.name)
    before = cached_hash(output) if output.is_file() else None
    path = build_fmu(
        sources,
        xml,
        output,
        spec.identifier,
        headers=headers,
        cflags=list(cflags),
        force=force,
        libraries=libraries,
    )
    if force or cached_hash(path) != before:  # freshly built: validate once
        from fmpy.validation import validate_fmu

        problems = validate_fmu(str(path))
        if problems:
            path.unlink(missing_ok=True)
            raise FMUBuildError(
                f"the generated model description of {name} does not validate:\n  "
                + "\n  ".join(problems)
            )
    return path


def build_benchmarks(
    out_dir: str | Path,
    names: Iterable[str] | None = None,
    force: bool = False,
    *,
    source_dir: str | Path | None = None,
    cflags: Sequence[str] = (),
    **options: object,
) -> dict[str, Path]:
    """Build benchmark FMUs into ``out_dir`` (cached: rebuilt only when their inputs change).

    Parameters
    ----------
    out_dir : path
        Output folder for the ``.fmu`` files.
    names : iterable of str, optional
        Subset of :data:`BENCHMARKS` (default: all).
    force : bool
        Recompile even when up to date.
    source_dir : path, optional
        Folder with the C sources (default: the package's).
    cflags : sequence of str
        Extra compiler flags.
    **options
        Build options, each passed to the selected benchmarks that accept it (e.g.
        ``n_cells=100`` for ``msd_chain``).

    Returns
    -------
    dict
        ``name -> Path`` of each FMU.  The ``*_cvode`` benchmarks are left out, with one
        warning, on a host for which fmpy ships no SUNDIALS libraries.
    """
    selected = _check(names)
    reason = cvode.sundials_unavailable_reason()
    if reason is not None:
        skipped = [n for n in selected if cvode.uses_cvode(BENCHMARKS[n].spec())]
        if skipped:
            warnings.warn(f"not built: {', '.join(skipped)} ({reason})", RuntimeWarning,
                          stacklevel=2)
            selected = [n for n in selected if n not in skipped]
    unused = [k for k in options if not any(k in BENCHMARKS[n].options for n in selected)]
    if unused:
        raise InvalidInputError(
            f"build option(s) {unused} are not accepted by any of {selected}; "
            + "; ".join(f"{n}: {sorted(BENCHMARKS[n].options)}" for n in selected if BENCHMARKS[n].options)
        )
    return {
        n: build_benchmark(
            n, out_dir, force, source_dir=source_dir, cflags=cflags,
            **{k: v for k, v in options.items() if k in BENCHMARKS[n].options},
        )
        for n in selected
    }


def benchmark_fmu(name: str, cache_dir: str | Path | None = None, **options: object) -> Path:
    """Path of the benchmark FMU ``name``, built into the cache on first use.

    Parameters
    ----------
    name : str
        Key of :data:`BENCHMARKS`.
    cache_dir : path, optional
        Default: :func:`default_cache_dir`.
    **options
        Build options (e.g. ``n_cells`` for ``msd_chain``).
    """
    return build_benchmark(name, cache_dir if cache_dir is not None else default_cache_dir(), **options)
