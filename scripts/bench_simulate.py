#!/usr/bin/env python
"""Steps per second and energy residual of ``fmu_surrogate.ph.simulate`` next to scipy's solve_ivp.

Problems: random linear pH systems with n = 20 and n = 100 states (2 ports, a chirp input), a
nonlinear lossless hardening spring (H = q²/2 + q⁴/4 + p²/2), and the GP surrogate of the RC
network (index-1 pH-DAE, docs/design.md §3): identified from the benchmark FMU's harvest under
u = 1 + sin t (Hamiltonian variant, known algebraic efforts z2 = x2, z3 = x3, 128 samples) and
simulated under the same input on [0, 10π].  For each: our structure-preserving scheme
(implicit midpoint for the linear systems, AVF otherwise) with 10⁴ steps, and ``solve_ivp``
with Radau and RK45 at rtol = 1e-8 on the same problem and horizon (for the DAE: on its
differential state, the algebraic states solved from the algebraic rows by Newton's method in
every right-hand side, and Radau given its analytic Jacobian; a solver that needs more than
10⁵ right-hand sides is stopped and the row says where), with the relative energy-balance residual
``|H(T) − H(0) + ∫zᵀRz − ∫yᵀu| / scale`` of each (for solve_ivp the integrals by the
trapezoidal rule on its own output grid).

Usage: ``scripts/bench_simulate.py [--steps 10000] [--json PATH] [--quick] [--no-gp]``.
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


def rc_gp_surrogate(quick: bool):
    """The GP surrogate of the RC network from a harvest of its benchmark FMU (module doc)."""
    import tempfile

    import fmu_surrogate as fs
    from fmu_surrogate.benchmarks import rc_network
    from fmu_surrogate.identify import farthest_point_subset

    t = np.linspace(0.0, 10 * np.pi, 3001)
    with tempfile.TemporaryDirectory() as d:
        ds = fs.harvest(fs.benchmark_fmu("rc_network"), Path(d) / "rc.nc", progress=False,
                        signals=[{"u": fs.signals.ArraySignal(t, 1.0 + np.sin(t))}],
                        stop_time=10 * np.pi, step=t[1])
        (_, X), = fs.run_arrays(ds, ["x1", "x2", "x3", "der(x1)", "u"])
    xdot = np.column_stack([X[:, 3], 0 * t, 0 * t])
    idx = farthest_point_subset(np.column_stack([X[:, 0], X[:, 3] - X[:, 4]]),
                                24 if quick else 128)
    gp = fs.GPEffortIdentifier(**rc_network.matrices(), hamiltonian=True,
                               known_effort=rc_network.known_effort(),
                               max_iter=10 if quick else 200)
    gp.fit(X[idx, :3], xdot[idx], X[idx, 4:])
    return gp.to_surrogate(), X[0, :3]


class EvaluationBudget(RuntimeError):
    """solve_ivp used up the right-hand-side evaluations the bench allows."""


class Index1ODE:
    """An index-1 pH-DAE as an ODE in its differential states: the algebraic states are solved
    from the algebraic rows by Newton's method (warm-started) in every evaluation; at most
    ``max_calls`` evaluations (then :class:`EvaluationBudget`)."""

    def __init__(self, system, u_fun, max_calls=100_000):
        E = system.E
        self.s, self.u_fun = system, u_fun
        self.T = system.J - system.R
        self.ra = np.flatnonzero(~np.any(E != 0, axis=1))
        self.ca = np.flatnonzero(~np.any(E != 0, axis=0))
        self.rd = np.setdiff1d(np.arange(E.shape[0]), self.ra)
        self.cd = np.setdiff1d(np.arange(E.shape[0]), self.ca)
        self.Edd = E[np.ix_(self.rd, self.cd)]
        self.xa = None
        self.calls = 0
        self.max_calls = max_calls

    def full_state(self, xd, u):
        x = np.zeros(self.s.n_states)
        x[self.cd] = xd
        x[self.ca] = 0.0 if self.xa is None else self.xa
        for _ in range(10):
            r = (self.T @ self.s.effort(x) + self.s.B @ u)[self.ra]
            Ja = (self.T @ self.s.effort_jacobian(x))[np.ix_(self.ra, self.ca)]
            dx = np.linalg.solve(Ja, -r)
            x[self.ca] += dx
            if np.abs(dx).max() <= 1e-12 * (1.0 + np.abs(x).max()):
                break
        self.calls += 1
        self.xa = x[self.ca].copy()
        return x

    def __call__(self, t, xd):
        if self.calls >= self.max_calls:
            raise EvaluationBudget(f"stopped after {self.calls} evaluations at t = {t:.4g}")
        u = self.u_fun(np.array([t]))[0]
        x = self.full_state(xd, u)
        F = self.T @ self.s.effort(x) + self.s.B @ u
        return np.linalg.solve(self.Edd, F[self.rd])

    def jac(self, t, xd):
        """Analytic Jacobian of the reduced right-hand side (implicit function theorem)."""
        u = self.u_fun(np.array([t]))[0]
        TJ = self.T @ self.s.effort_jacobian(self.full_state(xd, u))
        dxa = -np.linalg.solve(TJ[np.ix_(self.ra, self.ca)], TJ[np.ix_(self.ra, self.cd)])
        return np.linalg.solve(self.Edd, TJ[np.ix_(self.rd, self.cd)]
                               + TJ[np.ix_(self.rd, self.ca)] @ dxa)


def bench_dae_problem(name, system, T, steps, u_fun, x0):
    """ph.simulate against solve_ivp on the differential states of an index-1 pH-DAE."""
    from scipy.integrate import solve_ivp

    from fmu_surrogate.ph import simulate

    t = np.linspace(0.0, T, steps + 1)
    t0 = time.perf_counter()
    tr = simulate(system, t, u_fun(t), x0)
    el = time.perf_counter() - t0
    rows = [{"problem": name, "solver": f"ph.simulate ({tr.method})", "steps": steps,
             "seconds": el, "steps_per_second": steps / el,
             "energy_residual_relative": abs(tr.energy_residual) / tr.energy_scale}]
    for method in ("Radau", "RK45"):
        ode = Index1ODE(system, u_fun)
        t0 = time.perf_counter()
        jac = {"jac": ode.jac} if method == "Radau" else {}  # analytic, like ph.simulate
        try:
            sol = solve_ivp(ode, (0.0, T), x0[ode.cd], method=method, rtol=1e-8, atol=1e-10,
                            **jac)
        except EvaluationBudget as exc:  # Radau crawls through the RC network's dips
            el = time.perf_counter() - t0
            rows.append({"problem": name, "solver": f"solve_ivp {method} rtol 1e-8",
                         "steps": 0, "seconds": el, "steps_per_second": 0.0,
                         "energy_residual_relative": float("nan"), "note": str(exc)})
            continue
        el = time.perf_counter() - t0
        U = u_fun(sol.t)
        x = np.array([ode.full_state(xd, uk) for xd, uk in zip(sol.y.T, U)])
        rows.append({"problem": name, "solver": f"solve_ivp {method} rtol 1e-8",
                     "steps": int(sol.t.size - 1), "seconds": el,
                     "steps_per_second": (sol.t.size - 1) / el,
                     "energy_residual_relative": residual_of(system, sol.t, x, U)})
    return rows


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
    p.add_argument("--no-gp", action="store_true",
                   help="skip the GP RC surrogate (needs a C compiler for its FMU)")
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
    if not args.no_gp:
        gp_rc, x0 = rc_gp_surrogate(args.quick)
        rows += bench_dae_problem("GP RC surrogate", gp_rc, 1.0 if args.quick else 10 * np.pi,
                                  steps,
                                  lambda t: (1.0 + np.sin(t)).reshape(-1, 1), x0)
    print(f"{'problem':<18} {'solver':<30} {'steps':>7} {'seconds':>9} {'steps/s':>10} "
          f"{'energy res.':>11}")
    for r in rows:
        print(f"{r['problem']:<18} {r['solver']:<30} {r['steps']:>7} {r['seconds']:>9.4f} "
              f"{r['steps_per_second']:>10.0f} {r['energy_residual_relative']:>11.1e} "
              f"{r.get('note', '')}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
