"""Harvest throughput: runs/second of four ways to simulate the same tiny FMU.

(a) ``fmpy.simulate_fmu`` per run;
(b) a hand-written fmpy ``FMU2Slave`` stepping loop reusing one instance (reset per run);
(c) our campaign with 1 worker process (isolation, timeouts, on-disk store, NetCDF included);
(d) our campaign with 2 worker processes.

Every run: 1000 communication steps, a different parameter value, an input signal (a chirp) set at
every step, and the same recorded variables.  Targets (issue 2): c >= 0.7 b and d >= 1.7 c.

Usage::

    python scripts/bench_harvest.py [--runs 500] [--repeat 1] [--model faulty|rc_network]
                                    [--json PATH]

The default model is the test fixture ``tests/fmu/fixtures/faulty.c`` in mode 0 (dx/dt = -k x + u,
one state): the per-step work inside the FMU is almost nothing, so these figures measure the
harvesting overhead, the worst case for the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's fmu_surrogate and test fixtures
STOP, STEP = 1.0, 1e-3  # 1000 steps


def _signal():
    from fmu_surrogate.fmu.signals import Chirp

    return Chirp(f0=0.5, f1=5.0, t1=STOP, amplitude=0.5, offset=1.0)  # > 0 for rc_network


SIGNAL = None
PHASES: dict[int, dict[str, float]] = {}


def get_fmu(model: str, workdir: Path) -> tuple[Path, str, str, list[str]]:
    """(fmu path, parameter to vary, input name, recorded variables)."""
    if model == "faulty":
        from tests.fmu.fixtures import build_faulty

        return build_faulty(workdir), "k", "u", ["u", "x", "der(x)"]
    from fmu_surrogate.benchmarks.build import benchmark_fmu
    from fmu_surrogate.fmu.campaign import default_record
    from fmu_surrogate.fmu.model import open_fmu

    path = benchmark_fmu(model)
    info = open_fmu(path)
    param = info.tunable_parameters[0] if info.tunable_parameters else info.parameters[0]
    return path, param, info.inputs[0], default_record(info)


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the campaign's workers)."""
    import resource

    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def bench_simulate_fmu(path, param, values, u_name, u, t, record) -> float:
    from fmpy import simulate_fmu

    sig = np.zeros(t.size, dtype=[("time", float), (u_name, float)])
    sig["time"], sig[u_name] = t, u
    t0 = time.perf_counter()
    for v in values:
        simulate_fmu(str(path), start_values={param: v}, input=sig, output=record,
                     start_time=0.0, stop_time=STOP, output_interval=STEP, validate=False)
    return time.perf_counter() - t0


def bench_hand_loop(path, param, values, u_name, u, t, record) -> float:
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    md = read_model_description(str(path))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    unzip = extract(str(path))
    t0 = time.perf_counter()
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzip,
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName="bench")
    fmu.instantiate()
    rec_vr = [vr[n] for n in record]
    p_vr, u_vr = [vr[param]], [vr[u_name]]
    n = t.size
    tl, h = t.tolist(), STEP
    ul = u.tolist()
    for k, v in enumerate(values):
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
    return time.perf_counter() - t0


def bench_campaign(path, param, values, u_name, u, t, record, workers, workdir) -> float:
    from fmu_surrogate.fmu.campaign import Campaign

    out = Path(workdir) / f"bench-{workers}.nc"
    out.unlink(missing_ok=True)  # a finished campaign would just be loaded again
    t0 = time.perf_counter()
    camp = Campaign(path, signals={u_name: SIGNAL},
                    parameters=[{param: float(v)} for v in values], stop_time=STOP, step=STEP,
                    record=record)
    ds = camp.run(out, workers=workers, timeout=60, progress=False, overwrite=True)
    elapsed = time.perf_counter() - t0
    PHASES[workers] = dict(camp.timings, validate=elapsed - camp.timings["total"])
    if not (ds["status"].values == "ok").all():
        raise RuntimeError("benchmark runs failed: " + str(ds["message"].values[0]))
    return elapsed


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=500, help="runs per method (default 500)")
    ap.add_argument("--repeat", type=int, default=1, help="repetitions; best time is reported")
    ap.add_argument("--model", default="faulty", help="faulty (default) or a benchmark name")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    with tempfile.TemporaryDirectory(prefix="bench-harvest-") as tmp:
        path, param, u_name, record = get_fmu(args.model, Path(tmp))
        global SIGNAL
        SIGNAL = _signal()
        t = np.linspace(0.0, STOP, round(STOP / STEP) + 1)
        u = SIGNAL(t)  # the same input samples for every method
        values = 1.0 + np.arange(args.runs) / args.runs
        common = (path, param, values, u_name, u, t, record)
        # warm-up outside the timings: one-time imports (xarray, h5netcdf, scipy.signal)
        bench_campaign(path, param, values[:2], u_name, u, t, record, 1, tmp)
        methods = {
            "a_simulate_fmu": lambda: bench_simulate_fmu(*common),
            "b_hand_loop": lambda: bench_hand_loop(*common),
            "c_campaign_1_worker": lambda: bench_campaign(*common, 1, tmp),
            "d_campaign_2_workers": lambda: bench_campaign(*common, 2, tmp),
        }
        seconds, cpu = {}, {}
        for name, fn in methods.items():
            best = None
            for _ in range(max(1, args.repeat)):
                c0 = _cpu()
                wall = fn()
                c1 = _cpu()
                if best is None or wall < best[0]:
                    best = (wall, c1 - c0)
            seconds[name], cpu[name] = best
            print(f"{name:22s} {args.runs / seconds[name]:8.1f} runs/s  "
                  f"({seconds[name]:.2f} s wall, {cpu[name]:.2f} s CPU incl. workers, "
                  f"for {args.runs} runs)", flush=True)
    rate = {k: args.runs / v for k, v in seconds.items()}
    cpu_rate = {k: args.runs / v for k, v in cpu.items()}
    ratios = {"c_over_b": rate["c_campaign_1_worker"] / rate["b_hand_loop"],
              "d_over_c": rate["d_campaign_2_workers"] / rate["c_campaign_1_worker"],
              "b_over_a": rate["b_hand_loop"] / rate["a_simulate_fmu"]}
    for w, ph in sorted(PHASES.items()):
        print(f"campaign, {w} worker(s): " + ", ".join(f"{k} {v:.2f} s" for k, v in ph.items()))
    print(f"c/b = {ratios['c_over_b']:.2f}  (target >= 0.7)")
    print(f"d/c = {ratios['d_over_c']:.2f}  (target >= 1.7)")
    print(f"b/a = {ratios['b_over_a']:.2f}")
    print(f"CPU efficiency c/b = {cpu_rate['c_campaign_1_worker'] / cpu_rate['b_hand_loop']:.2f} "
          f"(runs per CPU-second; independent of other load on the machine)")
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    if load is not None and load[0] > (os.cpu_count() or 1) * 0.5:
        print(f"note: load average {load[0]:.1f} on {os.cpu_count()} cores; other processes "
              f"compete for the CPUs, so d/c is bounded by the free cores.")
    result = {"model": args.model, "runs": args.runs, "steps_per_run": int(STOP / STEP),
              "cpu_count": os.cpu_count(), "runs_per_second": rate, "seconds": seconds,
              "cpu_seconds": cpu, "runs_per_cpu_second": cpu_rate,
              "campaign_phases_seconds": {str(k): v for k, v in PHASES.items()},
              "ratios": ratios,
              "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
