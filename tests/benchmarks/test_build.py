"""The benchmark builder: registry, generated model descriptions, compilation, caching, CLI."""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import tomllib
from fmpy import read_model_description
from fmpy.validation import validate_fmu

from fmu_surrogate.benchmarks import build
from fmu_surrogate.benchmarks.build import (
    BENCHMARKS,
    C_DIR,
    benchmark_fmu,
    build_benchmark,
    build_benchmarks,
    default_cache_dir,
)
from fmu_surrogate.benchmarks.cvode import RUNTIME_SOURCE, uses_cvode
from fmu_surrogate.cli import main
from fmu_surrogate.export.fmi.model_description import FRAMEWORK_DIR, FRAMEWORK_SOURCE
from fmu_surrogate.fmu.model.compile import cached_hash, fmi_include_dir
from tests.benchmarks._fmu import built

SOLVER = {"cs_rtol", "cs_atol", "cs_max_steps"}
# The documented interface of every FMU: inputs, outputs, continuous states (ME order),
# parameters (without the solver settings above).
INTERFACE = {
    "rc_network": (["u"], ["x1", "x2", "x3"], ["x1"], ["G", "x1_0"]),
    "pendulum": (
        ["u"],
        ["q1", "q2", "p1", "p2", "lambda", "der(q1)", "der(q2)", "der(p1)", "der(p2)"],
        ["alpha", "alpha_dot"],
        ["m", "l", "g", "alpha0", "alpha_dot0"],
    ),
    "msd_chain": (
        ["F1", "F2"],
        ["v1", "v2"],
        [f"{s}[{j}]" for j in range(1, 51) for s in ("q", "p")],
        ["mass", "spring", "damper"],
    ),
    "cauer": (
        ["vin"],
        ["v_R4", "v_nl", "i_nl"],
        ["v1", "v2", "v3", "iL1", "iL2"],
        ["R1", "R2", "R4", "C1", "C2", "C3", "C4", "C5", "L1", "L2", "w1", "w2", "w3",
         "newton_tol", "newton_max_iter"],
    ),
    "duffing": (["u"], ["y", "ydot", "yddot"], ["y", "ydot"], ["m", "c", "a", "b", "y0", "ydot0"]),
    "free_mass": (["F"], ["v"], ["v"], ["m", "v0"]),
    "free_inertia": (["F"], ["v"], ["v"], ["m", "v0"]),
    "quarter_car": (["F"], ["zs", "vs", "zu", "vu", "a_s", "F_tyre"], ["zs", "vs", "zu", "vu"],
                    ["ms", "mu", "ks", "cs", "kt", "ls0", "lt0", "g", "zs0", "vs0", "zu0", "vu0"]),
    "damper": (["v"], ["F"], [], ["c"]),
    "dc_motor": (["V", "w", "field", "direction"], ["i", "tau", "braking"], ["i_a"],
                 ["R", "L", "k", "i0"]),
    "power_damper": (["v"], ["F"], [], ["c"]),
    "progressive_spring": (["v"], ["F"], [], ["k", "x_ref", "x0"]),
    "progressive_spring_me": (["v"], ["F"], ["x"], ["k", "x_ref", "x0"]),
    "progressive_spring_displacement": (["s"], ["F"], [], ["k", "x_ref", "x0"]),
    "progressive_spring_damper": (["s", "v"], ["f"], [], ["k", "x_ref", "x0", "c"]),
    "saturating_inductor": (["V"], ["i"], [], ["L0", "psi_sat", "R", "psi0"]),
    "saturating_motor": (["V", "w"], ["i", "tau"], [], ["R", "L0", "k", "psi_sat", "psi0"]),
    "hydraulic_accumulator": (["Q"], ["p"], ["p"], ["C", "p0"]),
    "hydraulic_orifice": (["p"], ["Q"], [], ["R"]),
    "gas_accumulator": (["Q"], ["p"], [], ["p_pre", "V0", "n", "p_init"]),
    "turbulent_orifice": (["p"], ["Q"], [], ["K", "p_crit"]),
    "coupled_mass_clock": (["x1", "v1"], ["fk", "x2", "v2"], [], ["m2", "c2", "d2", "cc", "dc"]),
    "pendulum_joint": (["tau"], ["w"], [], ["m", "l", "g", "d", "phi0", "w0"]),
    "sprung_mass_sensor": (["F"], ["v", "a"], [], ["m", "k", "x_ref", "c", "x0", "v0"]),
    "end_stop_mass": (["F"], ["v", "s"], [], ["m", "k", "c", "kc", "dc", "s_max", "s_min", "s0",
                                              "v0"]),
}
# the variants with their own CVODE solver, and the damper computing its outputs in doStep only:
# the interface of their originals
INTERFACE["power_damper_stepped"] = INTERFACE["power_damper"]
INTERFACE.update({f"{n}_cvode": INTERFACE[n]
                  for n in ("power_damper", "progressive_spring", "saturating_inductor")})
# the detailed models behind the same ports: their states internal, parameters of their physics
INTERFACE.update({
    "progressive_spring_detailed": (["v"], ["F"], [], ["k", "x_ref", "x0", "m_coil", "c_seg"]),
    "power_damper_detailed": (["v"], ["F"], [], ["A", "a_o", "Cd", "rho", "beta", "V1", "V2",
                                                 "p_pre", "dp_tr"]),
    "saturating_inductor_detailed": (["V"], ["i"], [], ["L0", "psi_sat", "R", "R_core", "psi0"]),
})
#: solver parameters of the FMUs that do not use the adaptive integrator's SOLVER: the
#: framework's fixed-step Runge-Kutta 4 (MODEL_RK4), or the model's own stepper (MODEL_DO_STEP:
#: none for a stateless model, the fixed step of coupled_mass_clock's Runge-Kutta 4)
OWN_SOLVER = {"quarter_car": {"n_substeps"}, "dc_motor": {"n_substeps"},
              "progressive_spring": {"n_substeps"}, "progressive_spring_me": {"n_substeps"},
              "saturating_inductor": {"n_substeps"}, "saturating_motor": {"n_substeps"},
              "damper": set(), "power_damper": set(),
              "progressive_spring_displacement": set(), "progressive_spring_damper": set(),
              "power_damper_stepped": set(),
              "hydraulic_accumulator": {"n_substeps"}, "hydraulic_orifice": set(),
              "gas_accumulator": {"n_substeps"}, "turbulent_orifice": set(),
              "sprung_mass_sensor": {"n_substeps"}, "end_stop_mass": {"max_step"},
              "coupled_mass_clock": {"solver_step"},
              **{n: {"cvode_rtol", "cvode_max_steps"} for n in INTERFACE
                 if n.endswith(("_cvode", "_detailed")) or n == "pendulum_joint"}}
#: co-simulation-only FMUs (no <ModelExchange>; their states stay internal)
CS_ONLY = {"power_damper", "power_damper_stepped", "progressive_spring", "saturating_inductor",
           "saturating_motor", "progressive_spring_displacement", "progressive_spring_damper",
           "coupled_mass_clock", "pendulum_joint", "gas_accumulator", "sprung_mass_sensor",
           "end_stop_mass",
           *(n for n in INTERFACE if n.endswith(("_cvode", "_detailed")))}


def test_registry():
    assert set(BENCHMARKS) == {"rc_network", "pendulum", "msd_chain", "cauer", "duffing",
                               "free_mass", "free_inertia", "quarter_car", "damper", "dc_motor",
                               "power_damper", "power_damper_stepped", "progressive_spring",
                               "progressive_spring_me", "progressive_spring_displacement",
                               "progressive_spring_damper", "saturating_inductor", "saturating_motor",
                               "hydraulic_accumulator", "hydraulic_orifice", "gas_accumulator",
                               "turbulent_orifice", "coupled_mass_clock", "sprung_mass_sensor",
                               "end_stop_mass",
                               "power_damper_cvode", "progressive_spring_cvode",
                               "saturating_inductor_cvode", "progressive_spring_detailed",
                               "power_damper_detailed", "saturating_inductor_detailed",
                               "pendulum_joint"}


@pytest.mark.parametrize("name", sorted(INTERFACE))
def test_model_description(benchmark_fmus, name):
    path = built(benchmark_fmus, name)
    assert validate_fmu(str(path)) == []  # schema, names, model structure, start values
    md = read_model_description(str(path))
    assert md.coSimulation.modelIdentifier == name
    if name in CS_ONLY:
        assert md.modelExchange is None
    else:
        assert md.modelExchange.modelIdentifier == name
    assert md.numberOfEventIndicators == 0
    by = lambda c: [v.name for v in md.modelVariables if v.causality == c]
    inputs, outputs, states, params = INTERFACE[name]
    assert by("input") == inputs
    assert by("output") == outputs
    assert [d.variable.derivative.name for d in md.derivatives] == states
    assert [d.variable.name for d in md.derivatives] == [f"der({s})" for s in states]
    solver = OWN_SOLVER.get(name, SOLVER)
    assert [p for p in by("parameter") if p not in solver] == params
    assert solver <= set(by("parameter"))
    vrs = [v.valueReference for v in md.modelVariables]
    assert len(set(vrs)) == len(vrs)  # unique across types
    assert float(md.defaultExperiment.stopTime) > 0 and float(md.defaultExperiment.stepSize) > 0


def test_default_experiments(benchmark_fmus):
    import math

    e = {}
    for n, p in benchmark_fmus.items():
        x = read_model_description(str(p)).defaultExperiment  # fmpy keeps the XML strings
        e[n] = (float(x.stopTime), float(x.stepSize))
    assert e["rc_network"] == pytest.approx((10 * math.pi, 10 * math.pi / 3000), rel=1e-15)
    assert e["pendulum"] == (30.0, 0.01)
    assert e["msd_chain"] == (1.0, 1e-3)  # the adjoint paper's T = 1, dt = 1e-3
    assert e["duffing"] == (10.0, 0.02)  # 10 s at 50 Hz


@pytest.mark.parametrize("name", sorted(INTERFACE))
def test_c_sources_compile_without_warnings(benchmark_fmus, name):
    cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
    path = built(benchmark_fmus, name)
    gen = path.parent / ".build" / path.stem
    spec = BENCHMARKS[name].spec()
    runtime = [str(RUNTIME_SOURCE)] if uses_cvode(spec) else []
    cmd = [cc, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-fsyntax-only",
           f"-I{fmi_include_dir()}", f"-I{FRAMEWORK_DIR}", f"-I{gen}", f"-I{C_DIR}",
           str(FRAMEWORK_SOURCE), str(C_DIR / spec.source), *runtime]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_cache_rebuilds_only_when_sources_change(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(C_DIR, src)
    out = tmp_path / "out"
    path = build_benchmark("duffing", out, source_dir=src)
    stat = path.stat()
    digest = cached_hash(path)
    # second build: cache hit, the archive is not rewritten
    assert build_benchmark("duffing", out, source_dir=src) == path
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == (stat.st_mtime_ns, stat.st_ino)
    # touching a source without changing it is not a change (content hash) ...
    os.utime(src / "duffing.c")
    build_benchmark("duffing", out, source_dir=src)
    assert path.stat().st_mtime_ns == stat.st_mtime_ns
    # ... editing it is
    with open(src / "duffing.c", "a") as f:
        f.write("\n/* edited */\n")
    build_benchmark("duffing", out, source_dir=src)
    assert cached_hash(path) != digest
    # force always recompiles
    before = path.stat().st_mtime_ns
    build_benchmark("duffing", out, source_dir=src, force=True)
    assert path.stat().st_mtime_ns != before


def test_cli_build(tmp_path, capsys):
    assert main(["benchmarks", "build", str(tmp_path), "--names", "rc_network"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.split() == ["rc_network", str(tmp_path / "rc_network.fmu")]
    assert validate_fmu(str(tmp_path / "rc_network.fmu")) == []


def test_errors_name_the_problem(tmp_path):
    with pytest.raises(ValueError, match="unknown benchmark"):
        build_benchmarks(tmp_path, names=["nope"])
    with pytest.raises(ValueError, match="n_cells"):
        build_benchmarks(tmp_path, names=["duffing"], n_cells=3)
    with pytest.raises(ValueError, match=r"n_cells must lie in \[2, "):
        build_benchmark("msd_chain", tmp_path, n_cells=1)
    assert main(["benchmarks", "build", str(tmp_path), "--names", "nope"]) == 2


def test_cache_dir_and_benchmark_fmu(benchmark_fmus, monkeypatch):
    cache = benchmark_fmus["cauer"].parent
    monkeypatch.setenv("FMU_SURROGATE_CACHE", str(cache))
    assert default_cache_dir() == cache
    assert benchmark_fmu("cauer") == benchmark_fmus["cauer"]  # cache hit
    monkeypatch.delenv("FMU_SURROGATE_CACHE")
    assert default_cache_dir() == Path.home() / ".cache" / "fmu-surrogate" / "fmus"


@pytest.mark.parametrize("package, c_dir", [("fmu_surrogate.benchmarks", C_DIR),
                                            ("fmu_surrogate.export", FRAMEWORK_DIR)])
def test_package_data_covers_the_c_sources(package, c_dir):
    pyproject = Path(build.__file__).parents[2] / "pyproject.toml"
    patterns = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["package-data"][package]
    files = [p.relative_to(c_dir.parent).as_posix() for p in c_dir.iterdir() if p.is_file()]
    assert files
    for f in files:
        assert any(fnmatch.fnmatch(f, pat) for pat in patterns), f


def test_the_framework_lives_with_export():
    # export stands on its own: the benchmarks compile with its framework, it has no copy here
    assert FRAMEWORK_SOURCE.parent.parent.name == "export"
    assert not list(C_DIR.glob("fmi2_framework.*"))


def test_cvode_variants_are_skipped_where_fmpy_has_no_sundials(tmp_path, monkeypatch):
    from fmu_surrogate.benchmarks import cvode

    monkeypatch.setattr(cvode, "sundials_unavailable_reason", lambda: "no SUNDIALS here")
    with pytest.warns(RuntimeWarning, match=r"not built: power_damper_cvode \(no SUNDIALS here\)"):
        paths = build_benchmarks(tmp_path, names=["power_damper", "power_damper_cvode"])
    assert list(paths) == ["power_damper"]
    # asked for by name alone: the reason, as an error
    with pytest.raises(cvode.SundialsUnavailableError, match="no SUNDIALS here"):
        build_benchmark("power_damper_cvode", tmp_path)


def test_cli_build_says_in_one_line_what_it_skipped(tmp_path, monkeypatch, capsys):
    from fmu_surrogate.benchmarks import cvode

    monkeypatch.setattr(cvode, "sundials_unavailable_reason", lambda: "no SUNDIALS here")
    assert main(["benchmarks", "build", str(tmp_path), "--names", "damper",
                 "saturating_inductor_cvode"]) == 0
    out, err = capsys.readouterr()
    assert out.split() == ["damper", str(tmp_path / "damper.fmu")]
    assert err == "warning: not built: saturating_inductor_cvode (no SUNDIALS here)\n"
