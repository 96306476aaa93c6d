#!/usr/bin/env python
"""Steps per second and energy residual of ``fmu_surrogate.ph.simulate`` next to scipy's solve_ivp.

Problems: random linear pH systems with n = 20 and n = 100 states (2 ports, a chirp input), and
a nonlinear lossless hardening spring (H = q²/2 + q⁴/4 + p²/2).  For each: our structure-
preserving scheme (implicit midpoint for the linear systems, AVF for the spring) with 10⁴ steps,
and ``solve_ivp`` with Radau and RK45 at rtol = 1e-8 on the same problem and horizon, with the
relative energy-balance residual ``|H(T) − H(0) + ∫zᵀRz − ∫yᵀu| / scale`` of each (for
solve_ivp the integrals by the trapezoidal rule on its own output grid).

Usage: ``scripts/bench_simulate.py [--steps 10000] [--json PATH] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def random_linear(n: int, m: int = 2, seed: int = 0):
    from fmu_surrogate.ph import LinearPH

    rng = np.random.default_rng(seed)
    A = 0.5 * rng.normal(size=(n, n))
    Y = rng.normal(size=(n, n)) / np.sqrt(n)
    Z = rng.normal(size=(n, n)) / np.sqrt(n)
    return LinearPH(A - A.T, 0.1 * Y @ Y.T, Z @ Z.T + np.eye(n), rng.normal(size=(n, m)))


def spring_system():
    from fmu_surrogate.benchmarks import hardening_spring

    return hardening_spring.system()


def residual_of(system, t, x, u):
    """Relative energy-balance residual of a trajectory given at nodes (trapezoidal rule)."""
    pb = system.power_balance(t, x, u)
    H = system.hamiltonian(x)
    scale = max(abs(pb.stored), abs(pb.dissipated), abs(pb.supplied), float(np.abs(H).max()))
    return abs(pb.residual) / (scale or 1.0)


def bench_problem(name, system, T, steps, u_fun, x0, repeat=3):
    from scipy.integrate import solve_ivp

    from fmu_surrogate.ph import simulate

    t = np.linspace(0.0, T, steps + 1)
    U = u_fun(t)
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        tr = simulate(system, t, U, x0)
        best = min(best, time.perf_counter() - t0)
    rows = [{"problem": name, "solver": f"ph.simulate ({tr.method})", "steps": steps,
             "seconds": best, "steps_per_second": steps / best,
             "energy_residual_relative": abs(tr.energy_residual) / tr.energy_scale}]
    A_fun = system.flow
    for method in ("Radau", "RK45"):
        def rhs(tt, x):
            return A_fun(x, u_fun(np.array([tt]))[0])
        t0 = time.perf_counter()
        sol = solve_ivp(rhs, (0.0, T), x0, method=method, rtol=1e-8, atol=1e-10)
        el = time.perf_counter() - t0
        x = sol.y.T
        rows.append({"problem": name, "solver": f"solve_ivp {method} rtol 1e-8",
                     "steps": int(sol.t.size - 1), "seconds": el,
                     "steps_per_second": (sol.t.size - 1) / el,
                     "energy_residual_relative": residual_of(system, sol.t, x, u_fun(sol.t))})
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--json", help="write the table here")
    p.add_argument("--quick", action="store_true", help="small sizes (for the tests)")
    args = p.parse_args(argv)
    steps = 200 if args.quick else args.steps
    sizes = (4, 8) if args.quick else (20, 100)

    def chirp(t):
        return np.column_stack([np.sin(2 * np.pi * (0.1 + 0.2 * t / 20) * t), np.cos(0.5 * t)])

    rows = []
    for n in sizes:
        s = random_linear(n, seed=n)
        rows += bench_problem(f"linear n = {n}", s, 20.0, steps, chirp, np.ones(n))
    rows += bench_problem("hardening spring", spring_system(), 20.0, steps,
                          lambda t: np.zeros((np.size(t), 0)), np.array([1.5, 0.0]))
    print(f"{'problem':<18} {'solver':<30} {'steps':>7} {'seconds':>9} {'steps/s':>10} "
          f"{'energy res.':>11}")
    for r in rows:
        print(f"{r['problem']:<18} {r['solver']:<30} {r['steps']:>7} {r['seconds']:>9.4f} "
              f"{r['steps_per_second']:>10.0f} {r['energy_residual_relative']:>11.1e}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
