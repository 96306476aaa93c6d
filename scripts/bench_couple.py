#!/usr/bin/env python
"""Co-simulation on libcosim against the monolithic pH solution: steps, time, energy residual.

The system is the chain + spring example of :mod:`fmu_surrogate.couple.example` (msd_chain with
two masses, a spring with initial elongation q0 = 0.5, H(0) = 0.5 J, one power bond), simulated to
t = 10 s.  For each algorithm ("fixed", "ecco") and step size (ECCO: initial step) it reports the
communication steps, wall seconds, the bond's energy residual ∫(P_out − P_in) dt (absolute and
relative to H(0)) and the maximum error of v1 and F against the exact (matrix exponential)
solution of the interconnected pH system; the monolithic implicit-midpoint run gives the energy
balance residual.  Then it fits the residual rate of the fixed step and counts the fixed steps
needed to reach ECCO's residual (interpolated on the measured rate, then run to confirm).

    python scripts/bench_couple.py [--json PATH] [--stop-time 10]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fmu_surrogate.couple.example import example_system
from fmu_surrogate.couple.monolithic import assemble, exact
from fmu_surrogate.couple.running import run

STEPS = (0.1, 0.05, 0.025)


def measure(system, algorithm: str, step: float, stop: float, ecco=None) -> dict:
    """One run: steps, seconds, residual (J and relative to H(0)), max error vs exact."""
    t0 = time.perf_counter()
    ds = run(system, stop, step, algorithm, progress=False, ecco=ecco)
    sec = time.perf_counter() - t0
    asm = assemble(system)
    H0 = 0.5 * asm.x0 @ asm.system.Q @ asm.x0
    ref = exact(asm, ds.time.values)
    err = max(float(np.max(np.abs(ds[k].values[0] - ref[k]))) for k in ("chain.v1", "spring.F"))
    res = float(ds["bond:mass1:residual"].values[0, -1])
    row = {"algorithm": algorithm, "step": step, "steps": int(ds.attrs["n_steps"]),
           "seconds": sec, "energy_residual": res, "energy_residual_rel": res / H0,
           "max_error": err, "status": str(ds.status.values[0])}
    if algorithm == "monolithic":
        row["energy_balance_rel"] = float(ds.attrs["energy_residual"])
    return row


def main(argv=None) -> int:
    """Run the study, print the table, optionally write JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--stop-time", type=float, default=10.0)
    args = ap.parse_args(argv)
    stop = args.stop_time
    system = example_system()
    rows = [measure(system, a, h, stop) for a in ("fixed", "ecco") for h in STEPS]
    mono = measure(system, "monolithic", 0.01, stop)
    fixed = [r for r in rows if r["algorithm"] == "fixed"]
    h = np.array([r["step"] for r in fixed])
    res = np.abs([r["energy_residual"] for r in fixed])
    rate, logc = np.polyfit(np.log(h), np.log(res), 1)
    err_rate = float(np.polyfit(np.log(h), np.log([r["max_error"] for r in fixed]), 1)[0])
    comparisons = []
    for r in rows:
        if r["algorithm"] != "ecco":
            continue
        target = abs(r["energy_residual"])
        h_need = float(np.exp((np.log(target) - logc) / rate))
        confirm = measure(system, "fixed", stop / int(np.ceil(stop / h_need)), stop)
        comparisons.append({"ecco_initial_step": r["step"], "ecco_steps": r["steps"],
                            "ecco_residual": r["energy_residual"],
                            "fixed_step_needed": h_need, "fixed_steps_needed": confirm["steps"],
                            "fixed_residual_at_that_step": confirm["energy_residual"]})
    print(f"{'algorithm':<11}{'step':>7}{'steps':>7}{'seconds':>9}{'residual J':>13}"
          f"{'rel H0':>10}{'max err':>10}")
    for r in rows + [mono]:
        print(f"{r['algorithm']:<11}{r['step']:>7g}{r['steps']:>7d}{r['seconds']:>9.3f}"
              f"{r['energy_residual']:>13.4e}{r['energy_residual_rel']:>10.2e}{r['max_error']:>10.2e}")
    print(f"monolithic energy balance (relative to H(0)): {mono['energy_balance_rel']:.2e}")
    print(f"fixed step: residual ~ h^{rate:.2f}, max error ~ h^{err_rate:.2f}")
    for c in comparisons:
        print(f"ECCO (initial step {c['ecco_initial_step']:g}): {c['ecco_steps']} steps for residual "
              f"{c['ecco_residual']:.3e}; fixed needs {c['fixed_steps_needed']} steps "
              f"(residual {c['fixed_residual_at_that_step']:.3e})")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "stop_time": stop, "table": rows, "monolithic": mono,
            "fixed_residual_rate": float(rate), "fixed_error_rate": err_rate,
            "ecco_vs_fixed": comparisons}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
