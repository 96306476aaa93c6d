"""The ``*_cvode`` benchmark FMUs (their own SUNDIALS CVODE, :mod:`fmu_surrogate.benchmarks.cvode`):
self-contained, in agreement with their originals and references, failures recorded."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException

import fmu_surrogate as fs
import fmu_surrogate.benchmarks
from fmu_surrogate.benchmarks.cvode import sundials_libraries, sundials_unavailable_reason
from fmu_surrogate.benchmarks.vendor import power_damper as pd
from fmu_surrogate.benchmarks.vendor import progressive_spring as ps
from fmu_surrogate.benchmarks.vendor import saturating_inductor as si
from tests.benchmarks._fmu import Slave, built, input_table, run

pytestmark = pytest.mark.skipif(sundials_unavailable_reason() is not None,
                                reason=sundials_unavailable_reason() or "")

NAMES = ["power_damper_cvode", "progressive_spring_cvode", "saturating_inductor_cvode"]


def test_sonames_are_those_the_loader_sees():
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed")
    libs = sundials_libraries()
    assert len(libs) == 5 and all(n.startswith("libsundials_") for n in libs)
    for soname, path in libs.items():
        out = subprocess.run([readelf, "-d", str(path)], capture_output=True, text=True,
                             check=True).stdout
        assert f"Library soname: [{soname}]" in out


@pytest.mark.parametrize("name", NAMES)
def test_fmu_is_self_contained(benchmark_fmus, name, tmp_path):
    fmu = built(benchmark_fmus, name)
    with zipfile.ZipFile(fmu) as z:
        files = {f.rsplit("/", 1)[-1] for f in z.namelist() if f.startswith("binaries/")}
    assert files == {f"{name}.so", *sundials_libraries()}
    # a fresh process that has never seen fmpy's SUNDIALS loads the binary with the system
    # loader (as fmpy's ctypes, libcosim and a C driver do): every SUNDIALS library it maps
    # comes from the FMU's own folder
    unzip = extract(str(fmu), unzipdir=str(tmp_path / "unzip"))
    lib = next((tmp_path / "unzip" / "binaries").rglob(f"{name}.so"))
    code = ("import ctypes, sys; ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_LOCAL); "
            "print(open('/proc/self/maps').read())")
    maps = subprocess.run([sys.executable, "-c", code, str(lib)], capture_output=True, text=True,
                          check=True, env={"PATH": "/usr/bin:/bin"}).stdout
    mapped = {line.split()[-1] for line in maps.splitlines() if "libsundials_" in line}
    assert {p.rsplit("/", 1)[-1] for p in mapped} == set(sundials_libraries())
    assert all(p.startswith(str(lib.parent)) for p in mapped), (unzip, mapped)


def _model_variables(path):
    """(name, causality, variability, unit, start) of every variable but the solver settings."""
    solver = {"n_substeps", "cvode_rtol", "cvode_max_steps"}
    return [(v.name, v.causality, v.variability, v.unit, v.start)
            for v in read_model_description(str(path)).modelVariables if v.name not in solver]


def test_interface_is_the_originals(benchmark_fmus):
    for name in NAMES:
        b = built(benchmark_fmus, name)
        md = read_model_description(str(b))
        assert md.modelExchange is None and md.coSimulation.modelIdentifier == name
        original = built(benchmark_fmus, name.removesuffix("_cvode"))
        assert _model_variables(b) == _model_variables(original)


def test_power_damper_outputs_are_exact(benchmark_fmus):
    t = np.linspace(0.0, 1.0, 101)
    v = 2.0 * np.sin(9.0 * t)
    args = (1.0, 0.01, ["F", "v"])
    a = run(built(benchmark_fmus, "power_damper"), *args, inputs=input_table(t, v=v), rtol=None)
    b = run(built(benchmark_fmus, "power_damper_cvode"), *args, inputs=input_table(t, v=v),
            rtol=None)
    # the same C expression of the input; CVODE integrates only the dummy state (der = 0)
    np.testing.assert_array_equal(b["F"], a["F"])
    np.testing.assert_allclose(b["F"], pd.force(b["v"]), rtol=1e-15, atol=0)


def test_progressive_spring_matches_the_analytic_elongation(benchmark_fmus):
    t = np.linspace(0.0, 1.0, 101)
    v = 0.3 * np.cos(4.0 * t) - 0.05
    r = run(built(benchmark_fmus, "progressive_spring_cvode"), 1.0, 0.01, ["F"],
            inputs=input_table(t, v=v), rtol=None)
    F = ps.force(ps.elongation(t, v))
    # x' = v is constant on a communication step, so every BDF step reproduces the linear x and
    # Newton converges on it at once: only round-off remains (observed 5e-14 N of 43 N); the
    # rtol = 1e-6 bound on the local error would allow ~1e-6 relative
    np.testing.assert_allclose(r["F"], F, rtol=0, atol=1e-9 * np.abs(F).max())


def test_saturating_inductor_error_follows_the_tolerance(benchmark_fmus):
    fmu = built(benchmark_fmus, "saturating_inductor_cvode")
    t = np.arange(201) * 0.01
    V = 3.0 * np.sign(np.sin(2 * np.pi * 1.5 * t)) + 1.0
    i = si.current(si.simulate(t, V))  # DOP853 at rtol 1e-12 per held step
    err = {tol: np.abs(run(fmu, 2.0, 0.01, ["i"], inputs=input_table(t, V=V), rtol=tol)["i"]
                       - i).max() for tol in (None, 1e-10)}
    # default cvode_rtol = 1e-6: each internal step's local flux error is kept below about
    # 1e-6 (|psi| + 1) <= 1.5e-6 Wb; a few internal steps in each of 200 communication steps
    # add up to ~1e-4 Wb, and di/dpsi <= (1 + 3 (0.44 / 0.5)^2) / L0 = 33 A/Wb gives ~3e-3 A.
    # Observed 2.6e-4 A of 7.9 A.
    assert err[None] < 3e-3
    # the error is CVODE's, set by the tolerance (fmi2SetupExperiment's overrides cvode_rtol):
    # observed 8.8e-8 A at 1e-10
    assert err[1e-10] < 1e-6 and err[1e-10] < err[None] / 100


def test_harvest_runs_and_agrees_with_the_original(benchmark_fmus):
    t = np.arange(101) * 0.01
    sigs = [{"V": fs.signals.ArraySignal(t, a * np.sin(3.0 * t), interpolation="zoh")}
            for a in (1.0, 2.5)]
    common = {"signals": sigs, "stop_time": 1.0, "step": 0.01, "progress": False, "workers": 1}
    a = fs.harvest(built(benchmark_fmus, "saturating_inductor"), None, **common)
    b = fs.harvest(built(benchmark_fmus, "saturating_inductor_cvode"), None, **common)
    assert [str(s) for s in b["status"].values] == ["ok", "ok"]
    # RK4 (exact to ~1e-11 A) against CVODE at rtol 1e-6: the bound of the test above
    np.testing.assert_allclose(b["i"].values, a["i"].values, rtol=0, atol=3e-3)
    assert np.abs(a["i"].values).max() > 1.0


def test_failures_are_recorded(benchmark_fmus):
    fmu = built(benchmark_fmus, "saturating_inductor_cvode")
    ds = fs.harvest(fmu, None, parameters=[{"L0": -1.0}, {"cvode_max_steps": 1}, {}],
                    signals={"V": fs.signals.ArraySignal([0.0, 1.0], [2.0, 2.0])},
                    stop_time=1.0, step=0.1, progress=False, workers=1)
    status = [str(s) for s in ds["status"].values]
    message = [str(m) for m in ds["message"].values]
    assert status[2] == "ok" and status[:2] != ["ok", "ok"]
    assert "L0 = -1 must be > 0" in message[0]  # model_initialize
    # one CVODE step cannot cross a communication step of 0.1 s after CVodeReInit
    assert "CV_TOO_MUCH_WORK" in message[1] and "CVode returned flag -1" in message[1]


def test_failing_step_is_logged_and_the_instance_freed(benchmark_fmus):
    with Slave(built(benchmark_fmus, "progressive_spring_cvode")) as s:
        s.instantiate()
        s.initialize({"v": 1.0, "cvode_rtol": -1.0})
        with pytest.raises(FMICallException):
            s.fmu.doStep(currentCommunicationPoint=0.0, communicationStepSize=0.01)
        (msg,) = s.log.errors()
        assert "CVodeSVtolerances returned flag -22 (CV_ILL_INPUT)" in msg


def test_runs_on_libcosim_in_place_of_the_original(benchmark_fmus, tmp_path):
    pytest.importorskip("libcosimpy")
    from fmu_surrogate.couple.running import run
    from fmu_surrogate.couple.toml_form import read_toml

    text = (Path(fmu_surrogate.benchmarks.__file__).parent / "systems" / "braked_mass.toml").read_text()
    v = {}
    for brake in ("power_damper", "power_damper_cvode"):
        folder = tmp_path / brake
        folder.mkdir()
        (folder / "free_mass.fmu").symlink_to(built(benchmark_fmus, "free_mass"))
        (folder / "power_damper.fmu").symlink_to(built(benchmark_fmus, brake))
        (folder / "braked_mass.toml").write_text(text)
        ds = run(read_toml(folder / "braked_mass.toml"), 2.0, 0.01, "fixed", progress=False)
        assert str(ds.status.values[0]) == "ok"
        v[brake] = ds["mass.v"].values[0]
    # the damper's force is the same C expression of the held velocity in both FMUs
    np.testing.assert_array_equal(v["power_damper_cvode"], v["power_damper"])
    assert v["power_damper"][-1] < 0.5 * v["power_damper"][0]  # braked
