"""Speed of an exported surrogate FMU against the FMU it replaces, and the error between them.

The reference is the benchmark FMU of the mass-spring-damper chain (``fs.benchmark_fmu
("msd_chain")``: 50 cells, n = 100 states; co-simulation with adaptive Dormand–Prince at rtol
1e-8, or model exchange integrated by the importer's CVode at rtol 1e-8).  The surrogate is what
the pipeline makes of it: a linear pH model of order n = 20 identified from one harvested
training run of that FMU (``LinearPHIdentifier(20)`` with its defaults — subspace start,
Levenberg–Marquardt on the pH manifold, the FMU's zero-order hold), exported with
:func:`fmu_surrogate.export.export_fmu` (exact zero-order-hold steps).

Both FMUs run the same inputs (a chirp on F1, a PRBS on F2, different amplitudes and seeds per
run, none of them the training run) over the same horizon and communication step, through

* ``fmpy.simulate_fmu`` (one call per run, in this process, on the archive extracted once), and
* our harvest campaign (:func:`fmu_surrogate.harvest`, one worker process, dataset in memory),
* a plain FMI loop over fmpy's ``FMU2Slave`` (no per-run set-up beyond instantiation: what the
  models themselves cost per step, plus the ctypes calls),

with the reference as co-simulation FMU and — through ``simulate_fmu`` and the campaign — as
model-exchange FMU, the way an FMU exported from a Modelica tool is often delivered; the
surrogate always runs as co-simulation FMU.  The table reports runs per second of each (wall
clock), the speed-up in wall-clock and in CPU seconds (this process plus its finished children,
i.e. the campaign's worker: steadier than the wall clock on a shared machine), and the relative
max error of the surrogate's outputs ``v1``, ``v2`` against the reference.  Target: speed-up ≥ 10.
Against the co-simulation reference it cannot be reached: that FMU costs about 3 µs of model
work per 0.05 s step, less than the importer's own per-step overhead that both FMUs pay.  Against
model exchange the error column also contains the input hold: fmpy interpolates a model-exchange
FMU's input between samples where a co-simulation FMU holds it (the chain's own CS and ME runs
differ by 0.8 % on these inputs).

Usage::

    python scripts/bench_export.py [--runs 8] [--stop-time 40] [--step 0.05] [--quick]
                                   [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's fmu_surrogate

ORDER = 20
BAND_HZ = (0.03, 0.4)


def identified_chain(ref_fmu: Path, order: int = ORDER, stop: float = 40.0,
                     step: float = 0.05, max_iter: int = 100):
    """The n = 100 chain's surrogate of ``order`` states, identified from one harvested run."""
    import fmu_surrogate as fs
    from fmu_surrogate.fmu import signals as sig

    train = [{"F1": sig.Chirp(f0=0.02, f1=0.5, t1=stop, amplitude=1.0),
              "F2": sig.PRBS(bit_period=1.0, levels=(-0.5, 0.5), seed=100)}]
    ds = fs.harvest(ref_fmu, None, signals=train, stop_time=stop, step=step,
                    record=["F1", "F2", "v1", "v2"], workers=1, progress=False)
    est = fs.LinearPHIdentifier(order, learn=("J", "R", "Q", "B"), max_iter=max_iter)
    est.fit_dataset(ds, inputs=["F1", "F2"], outputs=["v1", "v2"])
    return fs.ph.with_names(est.to_surrogate(), inputs=["F1", "F2"], outputs=["v1", "v2"]), est


def signal_sets(runs: int, stop: float) -> list[dict]:
    from fmu_surrogate.fmu import signals as sig

    return [{"F1": sig.Chirp(f0=0.05, f1=0.5, t1=stop, amplitude=1.0 + 0.1 * k),
             "F2": sig.PRBS(bit_period=2.0, levels=(-0.5, 0.5), seed=k)} for k in range(runs)]


def _fmpy_runs(fmu: Path, sets: list[dict], stop: float, step: float,
               interface: str = "cs") -> tuple[float, list]:
    """``simulate_fmu`` per run on the extracted archive (extracted once, outside the timing)."""
    from fmpy import extract, simulate_fmu

    t = np.arange(0.0, stop + step / 2, step)
    outs = []
    fmu = Path(extract(str(fmu)))
    try:
        t0 = time.perf_counter()
        for s in sets:
            u = np.zeros(t.size, dtype=[("time", float), ("F1", float), ("F2", float)])
            u["time"], u["F1"], u["F2"] = t, s["F1"](t), s["F2"](t)
            r = simulate_fmu(str(fmu), stop_time=stop, output_interval=step, input=u,
                             output=["v1", "v2"], **_FMPY_INTERFACE[interface])
            outs.append(np.column_stack([r["v1"], r["v2"]]))
        return time.perf_counter() - t0, outs
    finally:
        shutil.rmtree(fmu, ignore_errors=True)


_FMPY_INTERFACE = {"cs": {"fmi_type": "CoSimulation"},
                   "me": {"fmi_type": "ModelExchange", "relative_tolerance": 1e-8}}


def _loop_runs(fmu: Path, sets: list[dict], stop: float, step: float,
               interface: str = "cs") -> tuple[float, list]:
    """A plain FMI loop: fmpy's ``FMU2Slave``, model description read once, one instance per run
    (the model's own cost plus the ctypes calls, without ``simulate_fmu``'s per-run set-up)."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    md = read_model_description(str(fmu))
    d = extract(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    u_vr, y_vr = [vr["F1"], vr["F2"]], [vr["v1"], vr["v2"]]
    t = np.arange(0.0, stop + step / 2, step)
    outs = []
    t0 = time.perf_counter()
    for s in sets:
        F = np.column_stack([s["F1"](t), s["F2"](t)])
        fmu_ = FMU2Slave(guid=md.guid, unzipDirectory=d, instanceName="bench",
                         modelIdentifier=md.coSimulation.modelIdentifier)
        fmu_.instantiate()
        fmu_.setupExperiment(startTime=0.0)
        fmu_.enterInitializationMode()
        fmu_.setReal(u_vr, list(F[0]))
        fmu_.exitInitializationMode()
        y = [fmu_.getReal(y_vr)]
        for k in range(t.size - 1):
            fmu_.setReal(u_vr, list(F[k]))
            fmu_.doStep(t[k], t[k + 1] - t[k])
            y.append(fmu_.getReal(y_vr))
        fmu_.terminate()
        fmu_.freeInstance()
        outs.append(np.array(y))
    elapsed = time.perf_counter() - t0
    shutil.rmtree(d, ignore_errors=True)
    return elapsed, outs


def _harvest_runs(fmu: Path, sets: list[dict], stop: float, step: float,
                  interface: str = "cs") -> tuple[float, list]:
    import fmu_surrogate as fs

    t0 = time.perf_counter()
    ds = fs.harvest(fmu, None, signals=sets, stop_time=stop, step=step, record=["v1", "v2"],
                    workers=1, progress=False, interface=interface,
                    tolerance=1e-8 if interface == "me" else None)
    seconds = time.perf_counter() - t0
    failed = [str(s) for s in ds["status"].values if str(s) != "ok"]
    if failed:
        raise RuntimeError(f"harvest runs failed: {failed}")
    outs = [np.column_stack([ds["v1"].values[k], ds["v2"].values[k]]) for k in range(len(sets))]
    return seconds, outs


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the campaign's workers)."""
    t = os.times()  # children: clock-tick resolution; this process: process_time's
    return time.process_time() + t.children_user + t.children_system


def _timed(fn, fmu: Path, sets: list[dict], stop: float, step: float,
           interface: str = "cs") -> tuple[float, float, list]:
    c0 = _cpu()
    wall, outs = fn(fmu, sets, stop, step, interface)
    return wall, _cpu() - c0, outs


def _rel_error(sur: list, ref: list) -> list[float]:
    s, r = np.concatenate(sur), np.concatenate(ref)
    return [float(v) for v in np.abs(s - r).max(axis=0) / np.abs(r).max(axis=0)]


def run(runs: int, stop: float, step: float, order: int = ORDER, max_iter: int = 100) -> dict:
    """Measure everything; return the JSON-ready result."""
    import fmu_surrogate as fs
    from fmu_surrogate.export import export_fmu

    ref_fmu = fs.benchmark_fmu("msd_chain")
    t0 = time.perf_counter()
    surrogate, est = identified_chain(ref_fmu, order, step=step, max_iter=max_iter)
    fit_seconds = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        sur_fmu = export_fmu(surrogate, Path(tmp) / f"msd_chain_n{order}.fmu",
                             model_name=f"msd_n{order}")
        sets = signal_sets(runs, stop)
        rows = []
        for how, fn, interface in (
                ("fmpy.simulate_fmu", _fmpy_runs, "cs"),
                ("fs.harvest (1 worker)", _harvest_runs, "cs"),
                ("FMI loop (FMU2Slave)", _loop_runs, "cs"),
                ("fmpy.simulate_fmu", _fmpy_runs, "me"),
                ("fs.harvest (1 worker)", _harvest_runs, "me")):
            for f, itf in ((ref_fmu, interface), (sur_fmu, "cs")):  # warm-up: imports, caches
                fn(f, sets[:1], min(stop, 1.0), step, itf)
            t_ref, c_ref, y_ref = _timed(fn, ref_fmu, sets, stop, step, interface)
            t_sur, c_sur, y_sur = _timed(fn, sur_fmu, sets, stop, step, "cs")
            err = _rel_error(y_sur, y_ref)
            rows.append({"via": how, "reference_interface": interface, "runs": runs,
                         "reference_runs_per_s": runs / t_ref,
                         "surrogate_runs_per_s": runs / t_sur, "speedup": t_ref / t_sur,
                         "reference_seconds": t_ref, "surrogate_seconds": t_sur,
                         "reference_cpu_seconds": c_ref, "surrogate_cpu_seconds": c_sur,
                         "cpu_speedup": c_ref / c_sur if c_sur > 0 else None,
                         "rel_max_error_v1": err[0], "rel_max_error_v2": err[1]})
    return {"reference": "msd_chain benchmark FMU, 50 cells, n = 100 (co-simulation: "
                         "Dormand-Prince rtol 1e-8; model exchange: the importer's CVode rtol "
                         "1e-8)",
            "surrogate": f"linear pH, n = {order}, identified from one harvested run "
                         f"({est.result_.n_iter} iterations, {fit_seconds:.1f} s with the "
                         f"harvest), exported FMU (co-simulation, exact ZOH)",
            "stop_time": stop, "step": step, "steps_per_run": round(stop / step),
            "table": rows, "target_speedup": 10.0,
            "load_average": list(os.getloadavg())}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=8)
    p.add_argument("--stop-time", type=float, default=40.0)
    p.add_argument("--step", type=float, default=0.05)
    p.add_argument("--quick", action="store_true",
                   help="2 runs of 5 s, an n = 6 surrogate from 5 iterations (the smoke test)")
    p.add_argument("--json", help="write the result to this file")
    a = p.parse_args(argv)
    runs, stop = (2, 5.0) if a.quick else (a.runs, a.stop_time)
    res = run(runs, stop, a.step, *((6, 5) if a.quick else (ORDER, 100)))
    print(f"{res['reference']}\n  vs {res['surrogate']}\n"
          f"{runs} runs x {res['steps_per_run']} steps of {a.step} s")
    print(f"{'via':<24}{'ref.':>5}{'reference runs/s':>18}{'surrogate runs/s':>18}{'speed-up':>10}"
          f"{'CPU speed-up':>14}{'err v1':>9}{'err v2':>9}")
    for r in res["table"]:
        print(f"{r['via']:<24}{r['reference_interface']:>5}{r['reference_runs_per_s']:>18.2f}{r['surrogate_runs_per_s']:>18.2f}"
              f"{r['speedup']:>10.1f}{r['cpu_speedup'] or float('nan'):>14.1f}"
              f"{r['rel_max_error_v1']:>9.1e}{r['rel_max_error_v2']:>9.1e}")
    print(f"load average {res['load_average'][0]:.1f} (wall-clock figures depend on free cores)")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
