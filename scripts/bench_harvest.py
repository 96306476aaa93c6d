"""Harvest throughput: runs/second of four ways to simulate the same tiny FMU.

(a) ``fmpy.simulate_fmu`` per run;
(b) a hand-written fmpy ``FMU2Slave`` stepping loop reusing one instance (reset per run);
(c) our campaign with 1 worker process (isolation, timeouts, on-disk store, NetCDF included);
(d) our campaign with 2 worker processes;
(n) a tiny C driver of this script's own (compiled here): ``dlopen`` of the FMU's binary, one
    instance, and per run reset, parameter, initialisation, then ``fmi2SetReal`` /
    ``fmi2GetReal`` / ``fmi2DoStep`` at every step: the speed of the FMU itself.

``--cli`` measures the command line as users run it (``fmu-surrogate harvest`` in a new process,
``--lhs N`` runs) for N1 and N2 runs, 1 and 2 workers: the marginal cost of one more run,
``(T(N2) - T(N1)) / (N2 - N1)``, with its CPU time (the command and its workers, from
``wait4``: robust to a loaded machine; two cores cannot run 2 workers faster than half of it),
and the start-up, from the command to the first run stored in
the run store (``OUT.parts/runs.bin`` grows), each against the native driver's time per run;
and the marginal cost of the model-exchange interface with 1 worker (``--me-runs``, fewer runs:
an ME run costs tens of co-simulation runs) against the same co-simulation driver.  ``--complevel``
is passed to the command.

Every run: 1000 communication steps, a different parameter value, an input signal (a chirp) set at
every step, and the same recorded variables.  Targets: c >= 0.7 b and d >= 1.7 c.

Usage::

    python scripts/bench_harvest.py [--runs 500] [--repeat 3] [--model faulty|rc_network]
                                    [--methods abcd] [--complevel 1] [--json PATH]

The default model is the test fixture ``tests/fmu/fixtures/faulty.c`` in mode 0 (dx/dt = -k x + u,
one state): the per-step work inside the FMU is almost nothing, so these figures measure the
harvesting overhead, the worst case for the ratios.

Measurement
-----------
The methods run interleaved (a b c d, a b c d, ...) ``--repeat`` times and each figure is the
median over the repetitions, so that a change of the machine's load hits all methods alike.
Wall-clock figures depend on how many cores are free: this machine is shared, so the script also
reports the load average around every measurement, the CPU seconds of each method (this process
plus its finished children, i.e. the campaign's workers), runs per CPU-second, and for the
campaigns the wall and CPU seconds of every phase (``Campaign.timings`` / ``cpu_timings``).

From those CPU seconds it derives what the wall time would be on two free cores (a model, printed
as such): (a) and (b) run in one process, so their wall time is their CPU time; a campaign's
serial parent phases (prepare, start, assemble, write, and building the Campaign) add up (for
``write``: the larger of the calling thread's CPU and half of the whole, since the compression
threads run while the calling thread writes the file's structure), and during the simulation
the workers and the parent share the cores::

    c_model = serial + max(W, P)          d_model = serial + max(W / 2, (W + P) / 2)

with ``W`` the workers' CPU seconds (start-up included) and ``P`` the parent's CPU seconds while
simulating (receiving, storing, progress).
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's fmu_surrogate and test fixtures
STOP, STEP = 1.0, 1e-3  # 1000 steps
SERIAL_PHASES = ("validate", "prepare", "start", "assemble", "write")
NAMES = {"a": "a_simulate_fmu", "b": "b_hand_loop", "c": "c_campaign_1_worker",
         "d": "d_campaign_2_workers", "n": "n_native_driver"}
NATIVE_DRIVER = r"""/* The FMU run by hand, as fast as C allows: dlopen the binary, one instance, per run reset,
   set the parameter, initialise, then set input / get outputs / doStep for every step. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "fmi2Functions.h"

static void logger(fmi2ComponentEnvironment e, fmi2String n, fmi2Status s, fmi2String c,
                   fmi2String m, ...) { (void)e; (void)n; (void)s; (void)c; (void)m; }

#define SYM(T, name) T name = (T)dlsym(lib, #name); if (!name) { fprintf(stderr, "no %s\n", #name); return 2; }

int main(int argc, char **argv) {
    /* lib guid resource_uri param_vr u_vr n_steps step inputs.bin values.bin n_runs rec_vr... */
    if (argc < 12) { fprintf(stderr, "usage\n"); return 2; }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    SYM(fmi2InstantiateTYPE *, fmi2Instantiate) SYM(fmi2SetupExperimentTYPE *, fmi2SetupExperiment)
    SYM(fmi2EnterInitializationModeTYPE *, fmi2EnterInitializationMode)
    SYM(fmi2ExitInitializationModeTYPE *, fmi2ExitInitializationMode)
    SYM(fmi2SetRealTYPE *, fmi2SetReal) SYM(fmi2GetRealTYPE *, fmi2GetReal)
    SYM(fmi2DoStepTYPE *, fmi2DoStep) SYM(fmi2ResetTYPE *, fmi2Reset)
    SYM(fmi2TerminateTYPE *, fmi2Terminate) SYM(fmi2FreeInstanceTYPE *, fmi2FreeInstance)
    fmi2ValueReference p_vr = (fmi2ValueReference)atoi(argv[4]);
    fmi2ValueReference u_vr = (fmi2ValueReference)atoi(argv[5]);
    long n = atol(argv[6]);
    double h = atof(argv[7]);
    long runs = atol(argv[10]);
    int nrec = argc - 11;
    fmi2ValueReference *rec = malloc(sizeof *rec * (size_t)nrec);
    for (int k = 0; k < nrec; ++k) rec[k] = (fmi2ValueReference)atoi(argv[11 + k]);
    double *u = malloc(sizeof *u * (size_t)n), *vals = malloc(sizeof *vals * (size_t)runs);
    double *out = malloc(sizeof *out * (size_t)(n * nrec));
    FILE *f = fopen(argv[8], "rb");
    if (!f || fread(u, sizeof *u, (size_t)n, f) != (size_t)n) return 2;
    fclose(f);
    f = fopen(argv[9], "rb");
    if (!f || fread(vals, sizeof *vals, (size_t)runs, f) != (size_t)runs) return 2;
    fclose(f);
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("bench", fmi2CoSimulation, argv[2], argv[3], &cb, fmi2False,
                                      fmi2False);
    if (!c) return 3;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double check = 0.0;
    for (long r = 0; r < runs; ++r) {
        if (r) fmi2Reset(c);
        fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0);
        fmi2SetReal(c, &p_vr, 1, &vals[r]);
        fmi2EnterInitializationMode(c);
        fmi2ExitInitializationMode(c);
        for (long i = 0; i < n; ++i) {
            fmi2SetReal(c, &u_vr, 1, &u[i]);
            fmi2GetReal(c, rec, (size_t)nrec, out + i * nrec);
            if (i < n - 1 && fmi2DoStep(c, (double)i * h, h, fmi2True) > fmi2Warning) return 4;
        }
        fmi2Terminate(c);
        check += out[(n - 1) * nrec];
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fmi2FreeInstance(c);
    printf("%.9f %.17g\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
           check);
    return 0;
}
"""


def _signal():
    from fmu_surrogate.fmu.signals.standard import Chirp

    return Chirp(f0=0.5, f1=5.0, t1=STOP, amplitude=0.5, offset=1.0)  # > 0 for rc_network


def get_fmu(model: str, workdir: Path) -> tuple[Path, str, str, list[str]]:
    """(fmu path, parameter to vary, input name, recorded variables)."""
    if model == "faulty":
        from fmu_surrogate.testing.fmus import build_faulty

        return build_faulty(workdir), "k", "u", ["u", "x", "der(x)"]
    from fmu_surrogate.benchmarks.build import benchmark_fmu
    from fmu_surrogate.fmu.campaigns.campaign import default_record
    from fmu_surrogate.fmu.model.loading import open_fmu

    path = benchmark_fmu(model)
    info = open_fmu(path)
    param = info.tunable_parameters[0] if info.tunable_parameters else info.parameters[0]
    return path, param, info.inputs[0], default_record(info)


def _cpu() -> tuple[float, float]:
    """CPU seconds of this process and of its finished children (the campaign's workers)."""
    import resource

    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime


class Bench:
    """The four methods on one FMU; each call returns a dict of measurements."""

    def __init__(self, path, param, u_name, record, values, signal, workdir, complevel,
                 start_method):
        self.path, self.param, self.u_name, self.record = path, param, u_name, record
        self.values, self.signal, self.workdir = values, signal, Path(workdir)
        self.complevel, self.start_method = complevel, start_method
        self.t = np.linspace(0.0, STOP, round(STOP / STEP) + 1)
        self.u = signal(self.t)  # the same input samples for every method

    def simulate_fmu(self) -> dict:
        from fmpy import simulate_fmu

        sig = np.zeros(self.t.size, dtype=[("time", float), (self.u_name, float)])
        sig["time"], sig[self.u_name] = self.t, self.u
        t0 = time.perf_counter()
        for v in self.values:
            simulate_fmu(str(self.path), start_values={self.param: v}, input=sig,
                         output=self.record, start_time=0.0, stop_time=STOP,
                         output_interval=STEP, validate=False)
        return {"wall": time.perf_counter() - t0}

    def hand_loop(self) -> dict:
        from fmpy import extract, read_model_description
        from fmpy.fmi2 import FMU2Slave

        md = read_model_description(str(self.path))
        vr = {v.name: v.valueReference for v in md.modelVariables}
        unzip = extract(str(self.path))
        t0 = time.perf_counter()
        fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzip,
                        modelIdentifier=md.coSimulation.modelIdentifier, instanceName="bench")
        fmu.instantiate()
        rec_vr = [vr[n] for n in self.record]
        p_vr, u_vr = [vr[self.param]], [vr[self.u_name]]
        n = self.t.size
        tl, h = self.t.tolist(), STEP
        ul = self.u.tolist()
        for k, v in enumerate(self.values):
            if k:
                fmu.reset()
            fmu.setupExperiment(startTime=0.0)
            fmu.setReal(p_vr, [v])
            fmu.enterInitializationMode()
            fmu.exitInitializationMode()
            out = np.empty((n, len(rec_vr)))
            for i in range(n):
                fmu.setReal(u_vr, [ul[i]])
                out[i] = fmu.getReal(rec_vr)
                if i < n - 1:
                    fmu.doStep(tl[i], h)
            fmu.terminate()
        fmu.freeInstance()
        wall = time.perf_counter() - t0
        shutil.rmtree(unzip, ignore_errors=True)
        return {"wall": wall}

    def native(self) -> dict:
        """Method (n): the C driver on the same FMU, inputs and parameter values."""
        from fmpy import extract, read_model_description

        exe = native_driver(self.workdir)
        md = read_model_description(str(self.path))
        vr = {v.name: v.valueReference for v in md.modelVariables}
        unzip = Path(extract(str(self.path)))
        lib = next((unzip / "binaries").rglob(md.coSimulation.modelIdentifier + ".*"))
        (self.workdir / "u.bin").write_bytes(np.ascontiguousarray(self.u, float).tobytes())
        (self.workdir / "values.bin").write_bytes(np.asarray(self.values, float).tobytes())
        cmd = [str(exe), str(lib), md.guid, unzip.joinpath("resources").as_uri(),
               str(vr[self.param]), str(vr[self.u_name]), str(self.t.size), repr(STEP),
               str(self.workdir / "u.bin"), str(self.workdir / "values.bin"),
               str(len(self.values))] + [str(vr[n]) for n in self.record]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
        shutil.rmtree(unzip, ignore_errors=True)
        return {"wall": float(out[0])}

    def campaign(self, workers: int, values=None) -> dict:
        from fmu_surrogate.fmu.campaigns.campaign import Campaign

        values = self.values if values is None else values
        out = self.workdir / f"bench-{workers}.nc"
        out.unlink(missing_ok=True)  # a finished campaign would just be loaded again
        t0 = time.perf_counter()
        c0 = time.process_time()
        camp = Campaign(self.path, signals={self.u_name: self.signal},
                        parameters=[{self.param: float(v)} for v in values], stop_time=STOP,
                        step=STEP, record=self.record)
        # options the installed version does not have are left out (the script measures any
        # version of the package, e.g. for before/after comparisons)
        known = inspect.signature(camp.run).parameters
        opts = {k: v for k, v in (("complevel", self.complevel),
                                  ("start_method", self.start_method)) if k in known}
        ds = camp.run(out, workers=workers, timeout=60, progress=False, overwrite=True, **opts)
        wall = time.perf_counter() - t0
        if not (ds["status"].values == "ok").all():
            raise RuntimeError("benchmark runs failed: " + str(ds["message"].values[0]))
        m = {"wall": wall, "file_mb": out.stat().st_size / 1e6}
        if hasattr(camp, "cpu_timings"):
            phases = dict(camp.timings)
            phases["validate"] = wall - camp.timings["total"]
            cpu = dict(camp.cpu_timings)
            cpu["validate"] = time.process_time() - c0 - camp.cpu_timings["total"]
            m.update(phases=phases, phases_cpu=cpu)
        return m


def native_driver(workdir: Path) -> Path:
    """Compile :data:`NATIVE_DRIVER` once into ``workdir`` with the FMI headers of fmpy."""
    from fmu_surrogate.fmu.model.compile import compiler_path, fmi_include_dir

    exe = workdir / "native_driver"
    if not exe.exists():
        src = workdir / "native_driver.c"
        src.write_text(NATIVE_DRIVER)
        subprocess.run([compiler_path(), "-O2", "-std=c99", "-D_POSIX_C_SOURCE=200809L",
                        f"-I{fmi_include_dir()}", str(src), "-o", str(exe), "-ldl"], check=True)
    return exe


def cli_campaign(path: Path, param: str, u_name: str, runs: int, workers: int,
                 workdir: Path, interface: str = "auto", complevel: int = 1) -> dict:
    """``fmu-surrogate harvest`` in a new process: wall seconds in all and to the first run."""
    out = workdir / f"cli-{workers}-{runs}.nc"
    out.unlink(missing_ok=True)
    store = Path(str(out) + ".parts") / "runs.bin"
    sig = f"{u_name}=chirp:f0=0.5,f1=5.0,t1={STOP},amplitude=0.5,offset=1.0"
    cmd = [sys.executable, "-m", "fmu_surrogate.cli", "harvest", str(path), "-o", str(out),
           "--lhs", str(runs), "--bounds", f"{param}=1:2", "--input", sig, "--stop", str(STOP),
           "--step", str(STEP), "--workers", str(workers), "--interface", interface,
           "--complevel", str(complevel)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    first = None
    size0 = None
    while True:
        # wait4: the exit status and the CPU time of the command and of the workers it reaped
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        if first is None and store.exists():
            size = store.stat().st_size
            size0 = size if size0 is None else size0  # the header is written before any run
            if size > size0:
                first = time.perf_counter() - t0
        time.sleep(0.002)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode()
    if proc.returncode != 0:
        raise RuntimeError(f"harvest failed ({proc.returncode}): {err[-500:]}")
    return {"wall": wall, "first_run": first if first is not None else float("nan"),
            "cpu": usage.ru_utime + usage.ru_stime}


def cli_runs(native: float) -> tuple[int, int]:
    """The run counts N1, N2 of the ``--cli`` campaigns of a model whose runs take ``native``
    seconds in the C driver: N1 simulates for about a second (at half the native speed), so
    that what a campaign does once while its workers run (imports, creating the output file)
    is hidden in both campaigns alike, and N2 = 4 N1 makes the difference of their wall times
    (several seconds) large against the noise of either."""
    n1 = max(300, 100 * math.ceil(1.0 / (2.0 * native) / 100))
    return n1, 4 * n1


def cli_study(model: str, n1: int | None, n2: int | None, repeat: int, workdir: Path,
              me_runs: tuple[int, int] | None = None, complevel: int = 1) -> dict:
    """Marginal cost per run and start-up of the CLI, 1 and 2 workers, against the C driver;
    with ``me_runs``, also the model-exchange interface with 1 worker (``me_runs`` runs: ME
    runs cost tens of times more, and the native driver is co-simulation).  ``n1``, ``n2``
    ``None``: :func:`cli_runs`."""
    path, param, u_name, record = get_fmu(model, workdir)
    n_native = 1000
    bench = Bench(path, param, u_name, record, 1.0 + np.arange(n_native) / n_native, _signal(),
                  workdir, 1, "auto")
    native = statistics.median(bench.native()["wall"] for _ in range(repeat)) / n_native
    if n1 is None or n2 is None:
        n1, n2 = cli_runs(native)
    res: dict = {"native_ms_per_run": 1e3 * native, "runs": [n1, n2], "workers": {},
                 "complevel": complevel, "load_average": [os.getloadavg()[0]]}

    def campaign(runs: int, workers: int, interface: str = "cs") -> dict:
        return cli_campaign(path, param, u_name, runs, workers, workdir, interface, complevel)

    campaign(2, 1)  # warm caches (compiled loop, page cache)
    # interleaved (1 worker small, big, 2 workers small, big, again ...): a change of the
    # machine's load hits both worker counts alike
    ms: dict = {(w, n): [] for w in (1, 2) for n in (n1, n2)}
    for _ in range(repeat):
        for w in (1, 2):
            for n in (n1, n2):
                ms[w, n].append(campaign(n, w))
    for w in (1, 2):
        small, big = ms[w, n1], ms[w, n2]
        t1 = statistics.median(m["wall"] for m in small)
        t2 = statistics.median(m["wall"] for m in big)
        marginal = (t2 - t1) / (n2 - n1)
        cpu = (statistics.median(m["cpu"] for m in big)
               - statistics.median(m["cpu"] for m in small)) / (n2 - n1)
        res["workers"][w] = {
            "marginal_ms_per_run": 1e3 * marginal,
            "marginal_cpu_ms_per_run": 1e3 * cpu,
            "speed_vs_native": native / marginal,
            "startup_s": statistics.median(m["first_run"] for m in small + big),
            "wall_small_s": t1, "wall_big_s": t2}
    res["two_over_one"] = (res["workers"][1]["marginal_ms_per_run"]
                           / res["workers"][2]["marginal_ms_per_run"])
    if me_runs:
        m1, m2 = me_runs
        t1 = statistics.median(campaign(m1, 1, "me")["wall"] for _ in range(repeat))
        t2 = statistics.median(campaign(m2, 1, "me")["wall"] for _ in range(repeat))
        marginal = (t2 - t1) / (m2 - m1)
        res["me_1_worker"] = {"runs": [m1, m2], "marginal_ms_per_run": 1e3 * marginal,
                              "speed_vs_native_cs": native / marginal}
    res["load_average"].append(os.getloadavg()[0])
    return res


def measure(fn) -> dict:
    load0 = os.getloadavg()[0]
    s0, c0 = _cpu()
    m = fn()
    s1, c1 = _cpu()
    m.update(cpu_self=s1 - s0, cpu_children=c1 - c0, cpu=(s1 - s0) + (c1 - c0),
             load=(load0 + os.getloadavg()[0]) / 2)
    return m


def _median(ms: list[dict], key: str) -> float:
    return statistics.median(m[key] for m in ms)


def _median_phases(ms: list[dict], key: str) -> dict:
    return {k: statistics.median(m[key][k] for m in ms) for k in ms[0][key]}


def model_wall(m: dict) -> float:
    """Wall seconds on two free cores predicted from the CPU seconds (see the module docs)."""
    if "phases_cpu" not in m:
        return m["cpu"] if not m["workers"] else float("nan")  # an older campaign
    pc = m["phases_cpu"]
    serial = sum(pc[k] for k in SERIAL_PHASES if k != "write")
    # writing: the compression threads run while the calling thread writes the file structure
    main = pc["write_main_thread"]
    serial += max(main, pc["write"] / 2)
    W, P = m["cpu_children"], pc["simulate"]
    if m["workers"] == 1:
        return serial + max(W, P)
    return serial + max(W / m["workers"], (W + P) / 2)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=500, help="runs per method (default 500)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="interleaved repetitions; medians are reported (default 3)")
    ap.add_argument("--model", default="faulty", help="faulty (default) or a benchmark name")
    ap.add_argument("--methods", default="abcdn", help="subset of abcdn to run (default all)")
    ap.add_argument("--cli", action="store_true",
                    help="measure the CLI's marginal cost per run and start-up instead "
                         "(models rc_network and msd_chain unless --model names others)")
    ap.add_argument("--cli-runs", default="auto",
                    help="N1,N2 runs of the --cli campaigns (default auto: about a second of "
                         "simulation and four times as many runs, see cli_runs)")
    ap.add_argument("--me-runs", default="20,120",
                    help="N1,N2 runs of the --cli model-exchange campaigns, 1 worker "
                         "(default 20,120; 0 skips them)")
    ap.add_argument("--complevel", type=int, default=1,
                    help="gzip level of the campaigns' NetCDF (default 1, the campaign default)")
    ap.add_argument("--start-method", default="auto", choices=("auto", "fork", "spawn"),
                    help="how the campaigns start their workers (default auto)")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.cli:
        return cli_main(args)
    methods = [k for k in "abcdn" if k in args.methods]
    load_start = os.getloadavg()
    import fmu_surrogate

    print(f"fmu_surrogate from {Path(fmu_surrogate.__file__).parent}")
    print(f"{args.runs} runs x {round(STOP / STEP)} steps, model {args.model}, {os.cpu_count()} "
          f"cores, load average {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}",
          flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-harvest-") as tmp:
        path, param, u_name, record = get_fmu(args.model, Path(tmp))
        values = 1.0 + np.arange(args.runs) / args.runs
        bench = Bench(path, param, u_name, record, values, _signal(), tmp, args.complevel,
                      args.start_method)
        # warm-up outside the timings: one-time imports (xarray, h5netcdf, scipy.signal)
        bench.campaign(1, values[:2])
        fns = {"a": bench.simulate_fmu, "b": bench.hand_loop,
               "c": lambda: bench.campaign(1), "d": lambda: bench.campaign(2),
               "n": bench.native}
        runs: dict[str, list[dict]] = {k: [] for k in methods}
        for rep in range(max(1, args.repeat)):
            for k in methods:
                m = measure(fns[k])
                m["workers"] = {"c": 1, "d": 2}.get(k, 0)
                runs[k].append(m)
                print(f"  repeat {rep + 1}: {NAMES[k]:22s} {args.runs / m['wall']:7.1f} runs/s "
                      f"({m['wall']:.2f} s wall, {m['cpu']:.2f} s CPU, load {m['load']:.1f})",
                      flush=True)

    result: dict = {"model": args.model, "runs": args.runs, "steps_per_run": round(STOP / STEP),
                    "repeat": args.repeat, "cpu_count": os.cpu_count(),
                    "complevel": args.complevel, "start_method": args.start_method,
                    "load_average_start": list(load_start), "methods": {}}
    print(f"\nmedians of {args.repeat} interleaved repetitions:")
    for k in methods:
        ms = runs[k]
        for m in ms:
            m["model_wall"] = model_wall(m)
        r = {"wall": _median(ms, "wall"), "cpu": _median(ms, "cpu"),
             "cpu_self": _median(ms, "cpu_self"), "cpu_children": _median(ms, "cpu_children"),
             "model_wall": _median(ms, "model_wall"), "load": _median(ms, "load"),
             "all_walls": [m["wall"] for m in ms]}
        r["runs_per_s"] = args.runs / r["wall"]
        r["runs_per_cpu_s"] = args.runs / r["cpu"]
        r["model_runs_per_s"] = args.runs / r["model_wall"]
        if "file_mb" in ms[0]:
            r["file_mb"] = ms[0]["file_mb"]
        if "phases" in ms[0]:
            r["phases"] = _median_phases(ms, "phases")
            r["phases_cpu"] = _median_phases(ms, "phases_cpu")
        result["methods"][NAMES[k]] = r
        print(f"{NAMES[k]:22s} {r['runs_per_s']:7.1f} runs/s wall ({r['wall']:.3f} s), "
              f"{r['runs_per_cpu_s']:7.1f} runs/CPU-s ({r['cpu']:.3f} s CPU: "
              f"{r['cpu_self']:.3f} this process + {r['cpu_children']:.3f} workers), "
              f"model on 2 free cores {r['model_runs_per_s']:7.1f} runs/s, load {r['load']:.1f}")
    for k in ("c", "d"):
        if k in methods and "phases" in result["methods"][NAMES[k]]:
            r = result["methods"][NAMES[k]]
            order = ("validate", "prepare", "start", "simulate", "assemble", "write")
            print(f"  {NAMES[k]} phases, wall / CPU of this process [s]: " + ", ".join(
                f"{p} {r['phases'][p]:.3f}/{r['phases_cpu'][p]:.3f}" for p in order)
                + f"; workers' CPU {r['cpu_children']:.3f}; file {r['file_mb']:.1f} MB")

    def ratio(x: str, y: str, key: str) -> float | None:
        if x not in methods or y not in methods:
            return None
        return result["methods"][NAMES[y]][key] / result["methods"][NAMES[x]][key]

    ratios = {}
    for label, (x, y, target) in {"c_over_b": ("c", "b", 0.7), "d_over_c": ("d", "c", 1.7),
                                  "b_over_a": ("b", "a", None),
                                  "c_over_n": ("c", "n", 0.3)}.items():
        w, mdl = ratio(x, y, "wall"), ratio(x, y, "model_wall")
        cpu = ratio(x, y, "cpu")
        if w is None:
            continue
        ratios[label] = {"wall": w, "model_2_free_cores": mdl, "cpu": cpu}
        tgt = f"  (target >= {target})" if target else ""
        print(f"{label.replace('_over_', '/'):5s} = {w:.2f} wall-clock, {mdl:.2f} CPU-time model "
              f"for 2 free cores, {cpu:.2f} runs per CPU-second{tgt}")
    result["ratios"] = ratios
    load_end = os.getloadavg()
    result["load_average_end"] = list(load_end)
    print(f"load average {load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end, on "
          f"{os.cpu_count()} cores" + (
              "; other processes competed for the cores, so the wall-clock ratios understate "
              "what free cores give" if max(load_start[0], load_end[0]) > 0.5 else ""))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return result


def cli_main(args) -> dict:
    """The ``--cli`` study: marginal cost per run and start-up on each model."""
    n1 = n2 = None
    if args.cli_runs != "auto":
        n1, n2 = (int(x) for x in args.cli_runs.split(","))
    me = tuple(int(x) for x in args.me_runs.split(",")) if args.me_runs != "0" else None
    models = ["rc_network", "msd_chain"] if args.model == "faulty" else args.model.split(",")
    result: dict = {"steps_per_run": round(STOP / STEP), "cpu_count": os.cpu_count(),
                    "load_average_start": list(os.getloadavg()), "models": {}}
    print(f"CLI campaigns of {args.cli_runs} runs x {round(STOP / STEP)} steps, "
          f"median of {args.repeat}, --complevel {args.complevel}; load average "
          f"{os.getloadavg()[0]:.2f}")
    print(f"{'model':12s} {'native':>10s} {'workers':>7s} {'marginal':>10s} {'speed':>9s} "
          f"{'start-up':>9s} {'CPU/run':>10s}")
    for model in models:
        with tempfile.TemporaryDirectory(prefix="bench-harvest-") as tmp:
            r = cli_study(model, n1, n2, max(1, args.repeat), Path(tmp), me, args.complevel)
        result["models"][model] = r
        for w, m in r["workers"].items():
            print(f"{model:12s} {r['native_ms_per_run']:7.3f} ms {w:7d} "
                  f"{m['marginal_ms_per_run']:7.3f} ms {m['speed_vs_native']:8.3f}x "
                  f"{m['startup_s']:7.2f} s {m['marginal_cpu_ms_per_run']:7.3f} ms")
        if "me_1_worker" in r:
            m = r["me_1_worker"]
            print(f"{model:12s} {'':10s} {'1 (ME)':>7s} {m['marginal_ms_per_run']:7.3f} ms "
                  f"{m['speed_vs_native_cs']:8.3f}x")
        print(f"{model:12s} campaigns of {r['runs'][0]} and {r['runs'][1]} runs")
        cpu2 = r["workers"][2]["marginal_cpu_ms_per_run"]
        print(f"{model:12s} 2 workers / 1 worker: {r['two_over_one']:.2f}x; 2 workers on 2 cores "
              f"need at least {cpu2 / 2:.3f} ms per run (half their CPU time per run)")
        print(f"{model:12s} "
              "(targets: speed >= 0.3x native, 2 workers >= 1.7x, start-up <= 1.5 s); load "
              f"average {r['load_average'][0]:.1f} before, {r['load_average'][1]:.1f} after")
    result["load_average_end"] = list(os.getloadavg())
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
