"""Speed of exported NonlinearPH surrogate FMUs against the nonlinear vendor FMUs they replace.

Three vendor-style benchmark FMUs (co-simulation only, states internal) and a
:class:`~fmu_surrogate.ph.NonlinearPH` of the same size for each, exported with
:func:`fmu_surrogate.export.export_fmu` (the AVF scheme of ``ph.simulate``, one step per
communication step):

* ``progressive_spring`` (v → F, RK4 with 4 substeps per 10 ms step): one state, energy
  ``k x²/2 + k x⁴/(4 x_ref²)`` — a ``ConvexEffort`` with one quartic ridge, lossless (exact);
* ``saturating_inductor`` (V → i, RK4 with 10 substeps per 1 ms step): one state, the same
  kind of energy in the flux, ``R₀ = R`` (exact up to the schemes' errors);
* ``power_damper`` (v → F, static ``F = c sign(v)|v|^(4/3)``): no state, the nonlinear
  feedthrough ``S_nl(v) = c (v² + δ²)^(1/6)`` alone (``δ = 10⁻⁶``: the law itself up to
  ``δ²/v²`` terms).

The surrogates are written from the components' laws, not identified: the benchmark measures
what the exported scheme costs per step, whatever the fit.  Each pair runs a 10 s co-simulation
with the vendor's communication step on the same random input (a sum of sines), timed

* through a plain FMI loop over fmpy's ``FMU2Slave`` (set input, ``doStep``, get output: the
  importer's ctypes calls included), and
* through a small C driver that loads the binary and makes the same calls natively (the model's
  own cost: what a compiled co-simulation master pays),

best of ``--repeat`` runs each, and the relative max error of the surrogate's output against
the vendor FMU's.  Target of the issue: speed-up ≥ 10.

Usage::

    python scripts/bench_export_nonlinear.py [--repeat 5] [--stop-time 10] [--quick]
                                             [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's fmu_surrogate

#: component: (input, output, communication step [s], input amplitude)
CASES = {
    "progressive_spring": ("v", "F", 1e-2, 0.05),
    "saturating_inductor": ("V", "i", 1e-3, 2.0),
    "power_damper": ("v", "F", 1e-2, 0.5),
}

DRIVER = r"""
/* Times a co-simulation of an FMI 2 FMU: one real input, one real output, fixed step. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "fmi2Functions.h"

static void logger(fmi2ComponentEnvironment e, fmi2String n, fmi2Status s, fmi2String c,
                   fmi2String m, ...) { (void)e; (void)c; if (s > fmi2Warning) fprintf(stderr,
                   "%s: %s\n", n, m); }

int main(int argc, char **argv)
{
    /* so guid id uri vr_in vr_out h nsteps inputs_file repeat */
    void *lib = dlopen(argv[1], RTLD_NOW);
    fmi2InstantiateTYPE *inst; fmi2SetupExperimentTYPE *setup;
    fmi2EnterInitializationModeTYPE *enter; fmi2ExitInitializationModeTYPE *leave;
    fmi2SetRealTYPE *set; fmi2GetRealTYPE *get; fmi2DoStepTYPE *step;
    fmi2FreeInstanceTYPE *freei;
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    fmi2ValueReference vin = (fmi2ValueReference)atoi(argv[4]);
    fmi2ValueReference vout = (fmi2ValueReference)atoi(argv[5]);
    double h = atof(argv[6]), best = 1e300, *u, *y;
    long n = atol(argv[7]), k;
    int r, repeat = atoi(argv[9]);
    FILE *f = fopen(argv[8], "rb");
    if (!lib || !f) { fprintf(stderr, "cannot open %s\n", lib ? argv[8] : dlerror()); return 1; }
    u = malloc(sizeof(double) * (size_t)(n + 1));
    y = malloc(sizeof(double) * (size_t)(n + 1));
    if (fread(u, sizeof(double), (size_t)(n + 1), f) != (size_t)(n + 1)) return 1;
    fclose(f);
    inst = (fmi2InstantiateTYPE *)dlsym(lib, "fmi2Instantiate");
    setup = (fmi2SetupExperimentTYPE *)dlsym(lib, "fmi2SetupExperiment");
    enter = (fmi2EnterInitializationModeTYPE *)dlsym(lib, "fmi2EnterInitializationMode");
    leave = (fmi2ExitInitializationModeTYPE *)dlsym(lib, "fmi2ExitInitializationMode");
    set = (fmi2SetRealTYPE *)dlsym(lib, "fmi2SetReal");
    get = (fmi2GetRealTYPE *)dlsym(lib, "fmi2GetReal");
    step = (fmi2DoStepTYPE *)dlsym(lib, "fmi2DoStep");
    freei = (fmi2FreeInstanceTYPE *)dlsym(lib, "fmi2FreeInstance");
    for (r = 0; r < repeat; r++) {
        struct timespec a, b;
        fmi2Component c;
        clock_gettime(CLOCK_MONOTONIC, &a);
        c = inst("bench", fmi2CoSimulation, argv[2], argv[3], &cb, fmi2False, fmi2False);
        if (!c) return 2;
        setup(c, fmi2False, 0.0, 0.0, fmi2False, 0.0);
        enter(c);
        set(c, &vin, 1, &u[0]);
        leave(c);
        get(c, &vout, 1, &y[0]);
        for (k = 0; k < n; k++) {
            set(c, &vin, 1, &u[k]);
            if (step(c, k * h, h, fmi2True) > fmi2Warning) return 3;
            get(c, &vout, 1, &y[k + 1]);
        }
        freei(c);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if ((b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec) < best)
            best = (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
    }
    printf("%.9e\n", best);
    for (k = 0; k <= n; k++) printf("%.17g\n", y[k]);
    return 0;
}
"""


def surrogate(name: str):
    """The NonlinearPH standing in for the vendor FMU ``name``, and its initial state."""
    from fmu_surrogate.benchmarks.vendor import power_damper, progressive_spring
    from fmu_surrogate.benchmarks.vendor import saturating_inductor as sat
    from fmu_surrogate.ph import ConvexEffort, NonlinearPH, PowerDissipation

    inp, out = CASES[name][:2]
    names = {"input_names": [inp], "output_names": [out]}
    if name == "progressive_spring":
        p = progressive_spring.PARAMS
        eff = ConvexEffort([[p["k"]]], ["quartic"], [p["k"] / p["x_ref"] ** 2], [[1.0]])
        return NonlinearPH([[0.0]], [[0.0]], [[1.0]], eff, **names), [p["x0"]]
    if name == "saturating_inductor":
        p = sat.PARAMS
        eff = ConvexEffort([[1.0 / p["L0"]]], ["quartic"], [1.0 / (p["L0"] * p["psi_sat"] ** 2)],
                           [[1.0]])
        return NonlinearPH([[0.0]], [[p["R"]]], [[1.0]], eff, **names), [p["psi0"]]
    # order 0: F = S_nl(v) v = c (v² + δ²)^(1/6) v, the static law
    law = PowerDissipation([[1.0]], [power_damper.PARAMS["c"]], [1.0 / 3.0], [1e-6])
    e = np.zeros((0, 0))
    return NonlinearPH(e, e, np.zeros((0, 1)), ConvexEffort(np.eye(0), [], [], e),
                       port_dissipation=law, **names), []


def _input(stop: float, h: float, amplitude: float, seed: int = 0) -> np.ndarray:
    t = np.arange(0.0, stop + h / 2, h)
    r = np.random.default_rng(seed)
    f, ph = r.uniform(0.2, 3.0, 4), r.uniform(0, 2 * np.pi, 4)
    return amplitude * np.sin(2 * np.pi * f[None] * t[:, None] + ph).sum(axis=1) / 2


def _fmpy_loop(fmu: Path, inp: str, out: str, u: np.ndarray, h: float,
               repeat: int) -> tuple[float, np.ndarray]:
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    md = read_model_description(str(fmu))
    d = extract(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    best, y = np.inf, np.empty(u.size)
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            s = FMU2Slave(guid=md.guid, unzipDirectory=d, instanceName="bench",
                          modelIdentifier=md.coSimulation.modelIdentifier)
            s.instantiate()
            s.setupExperiment(startTime=0.0)
            s.enterInitializationMode()
            s.setReal([vr[inp]], [u[0]])
            s.exitInitializationMode()
            y[0] = s.getReal([vr[out]])[0]
            for k in range(u.size - 1):
                s.setReal([vr[inp]], [u[k]])
                s.doStep(k * h, h)
                y[k + 1] = s.getReal([vr[out]])[0]
            s.terminate()
            s.freeInstance()
            best = min(best, time.perf_counter() - t0)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return best, y


def _driver(tmp: Path) -> Path:
    from fmu_surrogate.fmu.model.compile import fmi_include_dir

    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise RuntimeError("a C compiler (cc or gcc) is needed for the native driver")
    (tmp / "driver.c").write_text(DRIVER)
    exe = tmp / "driver"
    subprocess.run([cc, "-O2", "-std=c99", "-D_POSIX_C_SOURCE=199309L", f"-I{fmi_include_dir()}",
                    "-o", str(exe), str(tmp / "driver.c"), "-ldl"], check=True)
    return exe


def _native(exe: Path, fmu: Path, inp: str, out: str, u: np.ndarray, h: float, repeat: int,
            tmp: Path) -> tuple[float, np.ndarray]:
    from fmpy import extract, read_model_description

    md = read_model_description(str(fmu))
    d = Path(extract(str(fmu)))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    ident = md.coSimulation.modelIdentifier
    (tmp / "u.bin").write_bytes(np.ascontiguousarray(u, dtype=np.float64).tobytes())
    try:
        r = subprocess.run([str(exe), str(d / "binaries" / "linux64" / f"{ident}.so"), md.guid,
                            d.as_uri(), str(vr[inp]), str(vr[out]), repr(h), str(u.size - 1),
                            str(tmp / "u.bin"), str(repeat)],
                           capture_output=True, text=True, check=True)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    vals = np.array([float(v) for v in r.stdout.split()])
    return float(vals[0]), vals[1:]


def run(repeat: int, stop: float) -> dict:
    """Measure every pair; return the JSON-ready result."""
    import fmu_surrogate as fs
    from fmu_surrogate.export import export_fmu

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-nl-") as folder:
        tmp = Path(folder)
        exe = _driver(tmp)
        for name, (inp, out, h, amp) in CASES.items():
            ref = fs.benchmark_fmu(name)
            u = _input(stop, h, amp)
            system, x0 = surrogate(name)
            sur = export_fmu(system, tmp / f"{name}_nl.fmu", x0=x0, model_name=f"{name}_nl")
            row: dict = {"component": name, "step": h, "steps": u.size - 1,
                         "surrogate_states": system.n_states}
            for via, fn in (("fmpy FMU2Slave loop", _fmpy_loop), ("native C driver", _native)):
                args = (exe,) if fn is _native else ()
                extra = (tmp,) if fn is _native else ()
                t_ref, y_ref = fn(*args, ref, inp, out, u, h, repeat, *extra)
                t_sur, y_sur = fn(*args, sur, inp, out, u, h, repeat, *extra)
                key = "fmpy" if fn is _fmpy_loop else "native"
                row[f"{key}_reference_seconds"] = t_ref
                row[f"{key}_surrogate_seconds"] = t_sur
                row[f"{key}_speedup"] = t_ref / t_sur
                row["rel_max_error"] = float(np.abs(y_sur - y_ref).max() / np.abs(y_ref).max())
            rows.append(row)
    return {"stop_time": stop, "repeat": repeat, "table": rows, "target_speedup": 10.0,
            "load_average": list(os.getloadavg())}


def _print(res: dict) -> None:
    print(f"{res['stop_time']:g} s co-simulation, best of {res['repeat']}; speed-up = vendor "
          f"time / surrogate time (target {res['target_speedup']:g})")
    head = (f"{'component':22s} {'step':>7s} {'fmpy ref':>10s} {'fmpy sur':>10s} {'x':>6s} "
            f"{'C ref':>10s} {'C sur':>10s} {'x':>6s} {'rel err':>9s}")
    print(head)
    print("-" * len(head))
    for r in res["table"]:
        print(f"{r['component']:22s} {r['step']:7.0e} {r['fmpy_reference_seconds']:10.4f} "
              f"{r['fmpy_surrogate_seconds']:10.4f} {r['fmpy_speedup']:6.2f} "
              f"{r['native_reference_seconds']:10.5f} {r['native_surrogate_seconds']:10.5f} "
              f"{r['native_speedup']:6.2f} {r['rel_max_error']:9.2e}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--stop-time", type=float, default=10.0)
    p.add_argument("--quick", action="store_true", help="1 s, 2 repeats (smoke test)")
    p.add_argument("--json", help="write the result to this file")
    a = p.parse_args(argv)
    repeat, stop = (2, 1.0) if a.quick else (a.repeat, a.stop_time)
    res = run(repeat, stop)
    _print(res)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
