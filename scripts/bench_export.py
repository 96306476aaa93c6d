"""Speed of an exported surrogate FMU against the FMU it replaces, and the error between them.

The reference is the benchmark FMU of the mass-spring-damper chain (``fs.benchmark_fmu
("msd_chain")``: 50 cells, n = 100 states, co-simulation with adaptive Dormand–Prince at rtol
1e-8).  The surrogate is a linear pH model of order n = 20, obtained from the chain's matrices by
a structure-preserving reduction — tangential rational Krylov interpolation of the transfer
function at 10 frequencies across the excitation band (0.03–0.4 Hz, alternating the input
direction), projected Petrov–Galerkin with ``W = Q V (Vᵀ Q V)⁻¹`` so that ``J_r = Wᵀ J W`` is
skew, ``R_r = Wᵀ R W`` ⪰ 0 and ``Q_r = Vᵀ Q V`` ≻ 0 by construction (Polyuga & van der Schaft,
Automatica 46, 2010) — not a fit and not balanced truncation — and exported with
:func:`fmu_surrogate.export.export_fmu` (exact zero-order-hold steps).

Both FMUs run the same inputs (a chirp on F1, a PRBS on F2, different amplitudes per run) over
the same horizon and communication step, through

* ``fmpy.simulate_fmu`` (one call per run, in this process, on the archive extracted once), and
* our harvest campaign (:func:`fmu_surrogate.harvest`, one worker process, dataset in memory),
* a plain FMI loop over fmpy's ``FMU2Slave`` (no per-run set-up beyond instantiation: what the
  models themselves cost per step, plus the ctypes calls),

and the table reports runs per second of each (wall clock), the speed-up in wall-clock and in CPU
seconds (this process plus its finished children, i.e. the campaign's worker: steadier than the
wall clock on a shared machine), and the relative max error of the surrogate's outputs ``v1``,
``v2`` against the reference.  Target: speed-up ≥ 10.

Usage::

    python scripts/bench_export.py [--runs 8] [--stop-time 40] [--step 0.05] [--quick]
                                   [--json PATH]
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
sys.path.insert(0, str(ROOT))  # this checkout's fmu_surrogate

ORDER = 20
BAND_HZ = (0.03, 0.4)


def reduced_chain(order: int = ORDER):
    """The n = 100 chain reduced to ``order`` states, pH structure by construction."""
    from fmu_surrogate.benchmarks.msd_chain import msd_chain
    from fmu_surrogate.ph import LinearPH

    full = msd_chain(50)
    A, B, _ = full.state_space()
    n = A.shape[0]
    cols = []
    for k, f in enumerate(np.linspace(*BAND_HZ, order // 2)):
        X = np.linalg.solve(2j * np.pi * f * np.eye(n) - A, B[:, k % B.shape[1]])
        cols += [X.real, X.imag]
    V = np.linalg.qr(np.column_stack(cols))[0]
    Qr = V.T @ full.Q @ V
    W = full.Q @ V @ np.linalg.inv(Qr)
    return LinearPH(W.T @ full.J @ W, W.T @ full.R @ W, Qr, W.T @ full.B,
                    input_names=["F1", "F2"], output_names=["v1", "v2"])


def signal_sets(runs: int, stop: float) -> list[dict]:
    from fmu_surrogate.fmu import signals as sig

    return [{"F1": sig.Chirp(f0=0.05, f1=0.5, t1=stop, amplitude=1.0 + 0.1 * k),
             "F2": sig.PRBS(bit_period=2.0, levels=(-0.5, 0.5), seed=k)} for k in range(runs)]


def _fmpy_runs(fmu: Path, sets: list[dict], stop: float, step: float) -> tuple[float, list]:
    """``simulate_fmu`` per run on the extracted archive (extracted once, outside the timing)."""
    from fmpy import extract, simulate_fmu

    t = np.arange(0.0, stop + step / 2, step)
    outs = []
    fmu = Path(extract(str(fmu)))
    t0 = time.perf_counter()
    for s in sets:
        u = np.zeros(t.size, dtype=[("time", float), ("F1", float), ("F2", float)])
        u["time"], u["F1"], u["F2"] = t, s["F1"](t), s["F2"](t)
        r = simulate_fmu(str(fmu), stop_time=stop, output_interval=step, input=u,
                         output=["v1", "v2"])
        outs.append(np.column_stack([r["v1"], r["v2"]]))
    return time.perf_counter() - t0, outs


def _loop_runs(fmu: Path, sets: list[dict], stop: float, step: float) -> tuple[float, list]:
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
    return time.perf_counter() - t0, outs


def _harvest_runs(fmu: Path, sets: list[dict], stop: float, step: float) -> tuple[float, list]:
    import fmu_surrogate as fs

    t0 = time.perf_counter()
    ds = fs.harvest(fmu, None, signals=sets, stop_time=stop, step=step, record=["v1", "v2"],
                    workers=1, progress=False)
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


def _timed(fn, fmu: Path, sets: list[dict], stop: float, step: float) -> tuple[float, float, list]:
    c0 = _cpu()
    wall, outs = fn(fmu, sets, stop, step)
    return wall, _cpu() - c0, outs


def _rel_error(sur: list, ref: list) -> list[float]:
    s, r = np.concatenate(sur), np.concatenate(ref)
    return [float(v) for v in np.abs(s - r).max(axis=0) / np.abs(r).max(axis=0)]


def run(runs: int, stop: float, step: float) -> dict:
    """Measure everything; return the JSON-ready result."""
    import fmu_surrogate as fs
    from fmu_surrogate.export import export_fmu

    ref_fmu = fs.benchmark_fmu("msd_chain")
    surrogate = reduced_chain()
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        sur_fmu = export_fmu(surrogate, Path(tmp) / "msd_chain_n20.fmu", model_name="msd_n20")
        sets = signal_sets(runs, stop)
        rows = []
        errors = {}
        for how, fn in (("fmpy.simulate_fmu", _fmpy_runs), ("fs.harvest (1 worker)",
                                                             _harvest_runs),
                        ("FMI loop (FMU2Slave)", _loop_runs)):
            for f in (ref_fmu, sur_fmu):  # warm-up: imports, file cache, first-call set-up
                fn(f, sets[:1], min(stop, 1.0), step)
            t_ref, c_ref, y_ref = _timed(fn, ref_fmu, sets, stop, step)
            t_sur, c_sur, y_sur = _timed(fn, sur_fmu, sets, stop, step)
            errors[how] = _rel_error(y_sur, y_ref)
            rows.append({"via": how, "runs": runs, "reference_runs_per_s": runs / t_ref,
                         "surrogate_runs_per_s": runs / t_sur, "speedup": t_ref / t_sur,
                         "reference_seconds": t_ref, "surrogate_seconds": t_sur,
                         "reference_cpu_seconds": c_ref, "surrogate_cpu_seconds": c_sur,
                         "cpu_speedup": c_ref / c_sur if c_sur > 0 else None,
                         "rel_max_error_v1": errors[how][0],
                         "rel_max_error_v2": errors[how][1]})
    return {"reference": "msd_chain benchmark FMU, 50 cells, n = 100 (Dormand-Prince, rtol 1e-8)",
            "surrogate": f"linear pH, n = {ORDER}, tangential rational Krylov reduction at "
                         f"{ORDER // 2} frequencies in {BAND_HZ} Hz, exported FMU (exact ZOH)",
            "stop_time": stop, "step": step, "steps_per_run": round(stop / step),
            "table": rows, "target_speedup": 10.0,
            "load_average": list(os.getloadavg())}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=8)
    p.add_argument("--stop-time", type=float, default=40.0)
    p.add_argument("--step", type=float, default=0.05)
    p.add_argument("--quick", action="store_true", help="2 runs of 5 s (the smoke test)")
    p.add_argument("--json", help="write the result to this file")
    a = p.parse_args(argv)
    runs, stop = (2, 5.0) if a.quick else (a.runs, a.stop_time)
    res = run(runs, stop, a.step)
    print(f"{res['reference']}\n  vs {res['surrogate']}\n"
          f"{runs} runs x {res['steps_per_run']} steps of {a.step} s")
    print(f"{'via':<24}{'reference runs/s':>18}{'surrogate runs/s':>18}{'speed-up':>10}"
          f"{'CPU speed-up':>14}{'err v1':>9}{'err v2':>9}")
    for r in res["table"]:
        print(f"{r['via']:<24}{r['reference_runs_per_s']:>18.2f}{r['surrogate_runs_per_s']:>18.2f}"
              f"{r['speedup']:>10.1f}{r['cpu_speedup'] or float('nan'):>14.1f}"
              f"{r['rel_max_error_v1']:>9.2%}"
              f"{r['rel_max_error_v2']:>9.2%}")
    print(f"load average {res['load_average'][0]:.1f} (wall-clock figures depend on free cores)")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
