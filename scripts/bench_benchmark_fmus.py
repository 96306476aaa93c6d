#!/usr/bin/env python
"""Speed of the benchmark FMUs (fmu_surrogate.benchmarks): model time and importer time.

For every benchmark FMU (built into the FMU cache) this measures

* **model time** of a co-simulation run of 1000 communication steps (default inputs, step = the
  default experiment's step size): a small C driver compiled here ``dlopen``s the FMU's binary
  and times ``fmi2Reset`` + setup/initialisation + 1000 × ``fmi2DoStep`` (best of several
  repetitions) — the cost inside the FMU, without any Python;
* **fmpy loop time** of the same run through ``fmpy.fmi2.FMU2Slave`` (one instance, reset between
  runs: ``doStep`` + ``getReal`` of the outputs per step), i.e. what a harvester using a
  hand-written fmpy loop pays;
* **simulate_fmu** runs per second (fresh instance each run, as ``fmpy.simulate_fmu`` does).

Usage::

    OMP_NUM_THREADS=1 python scripts/bench_benchmark_fmus.py [--quick] [--json PATH]
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

DRIVER = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "fmi2Functions.h"

static void logger(fmi2ComponentEnvironment e, fmi2String n, fmi2Status s, fmi2String c,
                   fmi2String m, ...) { (void)e; (void)s; (void)c; fprintf(stderr, "%s: %s\n", n, m); }

static double now(void) {
    struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

#define LOAD(name) fmi2##name##TYPE *name = (fmi2##name##TYPE *)dlsym(lib, "fmi2" #name); \
    if (!name) { fprintf(stderr, "missing fmi2" #name "\n"); return 2; }

int main(int argc, char **argv) {
    /* argv: lib guid h nsteps reps */
    void *lib = dlopen(argv[1], RTLD_NOW);
    double h = atof(argv[3]), best = 1e300;
    int n = atoi(argv[4]), reps = atoi(argv[5]), r, k;
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    fmi2Component c;
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    {
    LOAD(Instantiate) LOAD(FreeInstance) LOAD(SetupExperiment) LOAD(EnterInitializationMode)
    LOAD(ExitInitializationMode) LOAD(DoStep) LOAD(Reset)
    c = Instantiate("bench", fmi2CoSimulation, argv[2], "", &cb, fmi2False, fmi2False);
    if (!c) return 3;
    for (r = 0; r < reps; r++) {
        double t0 = now(), t = 0.0;
        Reset(c);
        SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0);
        EnterInitializationMode(c);
        if (ExitInitializationMode(c) != fmi2OK) return 4;
        for (k = 0; k < n; k++) {
            if (DoStep(c, t, h, fmi2True) != fmi2OK) return 5;
            t += h;
        }
        t0 = now() - t0;
        if (t0 < best) best = t0;
    }
    FreeInstance(c);
    }
    printf("%.9g\n", best);
    return 0;
}
"""


def model_time(fmu: Path, step: float, n_steps: int, reps: int, workdir: Path) -> float:
    """Best wall time (s) of reset + init + ``n_steps`` doSteps inside the FMU (C driver)."""
    from fmpy import extract, platform, read_model_description

    from fmu_surrogate.fmu.model.compile import fmi_include_dir

    exe = workdir / "driver"
    if not exe.exists():
        src = workdir / "driver.c"
        src.write_text(DRIVER)
        cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
        subprocess.run([cc, "-O2", "-std=gnu99", f"-I{fmi_include_dir()}", str(src), "-o", str(exe),
                        "-ldl"], check=True)
    md = read_model_description(str(fmu))
    d = extract(str(fmu), unzipdir=str(workdir / fmu.stem))
    lib = Path(d) / "binaries" / platform / (md.coSimulation.modelIdentifier + ".so")
    out = subprocess.run([str(exe), str(lib), md.guid, repr(step), str(n_steps), str(reps)],
                         capture_output=True, text=True, check=True)
    return float(out.stdout)


def fmpy_loop_time(fmu: Path, step: float, n_steps: int, reps: int) -> float:
    """Best wall time (s) of one run through FMU2Slave (reset reused instance)."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    md = read_model_description(str(fmu))
    outputs = [v.valueReference for v in md.modelVariables if v.causality == "output"]
    d = extract(str(fmu))
    s = FMU2Slave(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier)
    s.instantiate()
    best = float("inf")
    try:
        for _ in range(reps):
            t0 = time.perf_counter()
            s.reset()
            s.setupExperiment(startTime=0.0)
            s.enterInitializationMode()
            s.exitInitializationMode()
            t = 0.0
            for _ in range(n_steps):
                s.doStep(t, step)
                t += step
                s.getReal(outputs)
            best = min(best, time.perf_counter() - t0)
    finally:
        s.freeInstance()
        shutil.rmtree(d, ignore_errors=True)
    return best


def simulate_rate(fmu: Path, step: float, n_steps: int, reps: int) -> float:
    """Runs per second of ``fmpy.simulate_fmu`` (fresh instance per run)."""
    from fmpy import read_model_description, simulate_fmu

    md = read_model_description(str(fmu))
    t0 = time.perf_counter()
    for _ in range(reps):
        simulate_fmu(str(fmu), stop_time=n_steps * step, output_interval=step,
                     model_description=md)
    return reps / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    p.add_argument("--json", type=Path, help="write the figures to this JSON file")
    p.add_argument("--steps", type=int, default=1000, help="communication steps per run")
    args = p.parse_args(argv)

    from fmpy import read_model_description

    from fmu_surrogate.benchmarks.build import build_benchmarks, default_cache_dir

    fmus = build_benchmarks(default_cache_dir())
    reps = 3 if args.quick else 20
    results = {}
    print(f"{'FMU':12s} {'step':>10s} {'model µs/run':>13s} {'ns/step':>8s} "
          f"{'fmpy loop ms/run':>17s} {'simulate_fmu runs/s':>20s}")
    with tempfile.TemporaryDirectory(prefix="bench-fmus-") as tmp:
        for name, fmu in fmus.items():
            step = float(read_model_description(str(fmu)).defaultExperiment.stepSize)
            mt = model_time(fmu, step, args.steps, reps * 5, Path(tmp))
            lt = fmpy_loop_time(fmu, step, args.steps, reps)
            sr = simulate_rate(fmu, step, args.steps, max(2, reps // 2))
            results[name] = {"step": step, "n_steps": args.steps, "model_seconds_per_run": mt,
                             "fmpy_loop_seconds_per_run": lt, "simulate_fmu_runs_per_second": sr}
            print(f"{name:12s} {step:10.4g} {mt * 1e6:13.1f} {mt / args.steps * 1e9:8.0f} "
                  f"{lt * 1e3:17.2f} {sr:20.1f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
