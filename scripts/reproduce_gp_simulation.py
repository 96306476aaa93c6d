#!/usr/bin/env python
"""GP surrogates of the RC network (index 1) and the pendulum (index 3) simulated against their
benchmark FMUs (docs/design.md §3, "limit found in simulation" and its remedy).

For each system the FMU is harvested under the paper's input (RC: u = 1 + sin t on [0, 10π];
pendulum: u = β g̃ cos(2πt/τ), β = τ = 1, on [0, 30]) and under a held-out input (RC:
u = 0.8 (1 + sin 1.7t); pendulum: β = 0.6, τ = 1.5); the GP is fitted on a subset of the
paper-input samples, the surrogate simulated with ``fs.simulate`` (AVF, the FMU's grid, the
input held over each step as the co-simulation FMU holds it) from the FMU's initial state, and
every state compared with the FMU's.  Variants:

* ``hamiltonian+known`` — ``hamiltonian=True`` with the known efforts of
  ``rc_network.known_effort()`` / ``pendulum.known_effort()`` (constraint and constraint force);
* ``plain+known`` — the paper's GP on z with the same known efforts (pendulum: the constraint
  only, the GP learns z_q including the constraint force);
* ``hamiltonian`` / ``plain`` without known efforts (the algebraic rows learned as zero) — the
  finding the known efforts fix.

Training subsets: RC 128 samples by farthest-point sampling over (x1, ẋ1 − u = −z1); pendulum
32 samples equally spaced in time.  Reported per case: max |x − x_FMU| per state, the energy
residual of the scheme (absolute, and relative to the energy that moved), steps per second, or
the error message of a simulation that fails.  Figures: the state errors over time.

Usage: ``scripts/reproduce_gp_simulation.py [--out DIR] [--json PATH] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PEND = ["q1", "q2", "p1", "p2", "lambda", "der(q1)", "der(q2)", "der(p1)", "der(p2)", "u"]


def harvest_runs(system: str, workdir: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """FMU trajectories ``name -> (t, X)`` under the paper's and the held-out input."""
    import fmu_surrogate as fs
    from fmu_surrogate.benchmarks import pendulum, rc_network

    out = {}
    if system == "rc":
        t = np.linspace(0.0, 10 * np.pi, 3001)
        for name, a, om in (("paper", 1.0, 1.0), ("held_out", 0.8, 1.7)):
            ds = fs.harvest(fs.benchmark_fmu("rc_network"), workdir / f"rc_{name}.nc",
                            signals=[{"u": fs.signals.ArraySignal(
                                t, rc_network.input_signal(t, a, om))}],
                            stop_time=10 * np.pi, step=t[1], overwrite=True, progress=False)
            (tt, X), = fs.run_arrays(ds, ["x1", "x2", "x3", "der(x1)", "u"])
            out[name] = (tt, X)
    else:
        t = np.linspace(0.0, 30.0, 3001)
        for name, beta, tau in (("paper", 1.0, 1.0), ("held_out", 0.6, 1.5)):
            ds = fs.harvest(fs.benchmark_fmu("pendulum"), workdir / f"pend_{name}.nc",
                            signals=[{"u": fs.signals.ArraySignal(
                                t, pendulum.input_signal(t, beta, tau))}],
                            stop_time=30.0, step=0.01, overwrite=True, progress=False)
            (tt, X), = fs.run_arrays(ds, PEND)
            out[name] = (tt, X)
    return out


def split(system: str, X: np.ndarray):
    """``(x, xdot, u)`` of a harvested trajectory."""
    if system == "rc":
        return X[:, :3], np.column_stack([X[:, 3], 0 * X[:, 0], 0 * X[:, 0]]), X[:, 4:]
    return X[:, :5], np.column_stack([X[:, 5:9], 0 * X[:, 0]]), X[:, 9:]


def options(system: str, variant: str) -> dict:
    from fmu_surrogate.benchmarks import pendulum, rc_network

    ham = variant.startswith("hamiltonian")
    kw: dict = {"hamiltonian": ham}
    if variant.endswith("+known"):
        kw["known_effort"] = (rc_network.known_effort() if system == "rc"
                              else pendulum.known_effort(constraint_force=ham))
    elif system == "pendulum" and ham:
        kw["constraint_force"] = True
    return kw


def fit(system: str, X: np.ndarray, variant: str, n_train: int, n_iter: int):
    from fmu_surrogate.benchmarks import pendulum, rc_network
    from fmu_surrogate.identify import GPEffortIdentifier, farthest_point_subset

    x, xdot, u = split(system, X)
    if system == "rc":
        idx = farthest_point_subset(np.column_stack([X[:, 0], X[:, 3] - X[:, 4]]), n_train)
        mats = rc_network.matrices()
    else:
        idx = np.linspace(0, len(x) - 1, n_train).round().astype(int)
        mats = pendulum.matrices()
    gp = GPEffortIdentifier(**mats, max_iter=n_iter, **options(system, variant))
    return gp.fit(x[idx], xdot[idx], u[idx])


def simulate_case(surrogate, t: np.ndarray, X: np.ndarray, n_states: int) -> dict:
    import fmu_surrogate as fs

    t0 = time.perf_counter()
    try:
        tr = fs.simulate(surrogate, t, X[:, -1], X[0, :n_states], hold="zoh")
    except (fs.FmuSurrogateError, ValueError, FloatingPointError) as exc:  # a result here
        return {"error": f"{type(exc).__name__}: {exc}"}
    el = time.perf_counter() - t0
    err = np.abs(tr.x - X[:, :n_states])
    out = {"max_abs_error": err.max(axis=0).tolist(), "max_abs_error_all": float(err.max()),
           "steps_per_second": (len(t) - 1) / el, "error_curve": err.max(axis=1)}
    if surrogate.has_hamiltonian:
        moved = max(np.abs(tr.stored).max(), tr.dissipated[-1], np.abs(tr.supplied).max())
        out["energy_residual"] = tr.energy_residual
        out["energy_residual_relative"] = abs(tr.energy_residual) / moved
    return out


def plot(results: dict, runs: dict, path: Path) -> None:
    from fmu_surrogate.figures import finish, pyplot

    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.5), sharey=True)
    for i, system in enumerate(results):
        for j, inp in enumerate(("paper", "held_out")):
            ax = axes[i, j]
            t = runs[system][inp][0]
            for variant, res in results[system].items():
                r = res[inp]
                if "error_curve" in r:
                    ax.semilogy(t[: len(r["error_curve"])],
                                np.maximum(r["error_curve"], 1e-16), lw=0.8, label=variant)
            ax.axhline(1e-3, color="k", ls=":", lw=0.8)
            ax.set_title(f"{system}, {inp.replace('_', '-')} input", fontsize=9)
            ax.set_xlabel("time [s]")
            ax.legend(fontsize=7)
        axes[i, 0].set_ylabel("max |x − x_FMU| over states")
    finish(fig, path)


def run(args) -> dict:
    from tqdm.auto import tqdm

    quick = args.quick
    sizes = {"rc": 16 if quick else 128, "pendulum": 12 if quick else 32}
    n_iter = 10 if quick else 200
    stop = 101 if quick else None
    variants = (["hamiltonian+known"] if quick else
                ["hamiltonian+known", "plain+known", "hamiltonian", "plain"])
    results: dict = {}
    runs: dict = {}
    with tempfile.TemporaryDirectory() as d:
        for system in ("rc", "pendulum"):
            runs[system] = {k: (t[:stop], X[:stop]) for k, (t, X) in
                            harvest_runs(system, Path(d)).items()}
    bar = tqdm(total=2 * len(variants), desc="fit + simulate", disable=args.no_progress)
    for system in ("rc", "pendulum"):
        results[system] = {}
        n = 3 if system == "rc" else 5
        for variant in variants:
            t0 = time.perf_counter()
            gp = fit(system, runs[system]["paper"][1], variant, sizes[system], n_iter)
            res = {"fit_seconds": time.perf_counter() - t0, "n_train": sizes[system]}
            s = gp.to_surrogate()
            for inp, (t, X) in runs[system].items():
                Xs = np.column_stack([X[:, :n], X[:, -1]])
                res[inp] = simulate_case(s, t, Xs, n)
            results[system][variant] = res
            bar.update()
    bar.close()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plot(results, runs, out / "gp_simulation_errors.png")
    return results


def table(results: dict) -> str:
    lines = [(f"{'system':<9} {'variant':<18} {'input':<9} {'max |x − x_FMU| per state':<58} "
              f"{'energy res. (rel)':>18}")]
    for system, rs in results.items():
        for variant, res in rs.items():
            for inp in ("paper", "held_out"):
                r = res[inp]
                if "error" in r:
                    lines.append(f"{system:<9} {variant:<18} {inp:<9} {r['error'][:80]}")
                    continue
                errs = " ".join(f"{e:.1e}" for e in r["max_abs_error"])
                en = (f"{r['energy_residual']:.1e} ({r['energy_residual_relative']:.0e})"
                      if "energy_residual" in r else "—")
                lines.append(f"{system:<9} {variant:<18} {inp:<9} {errs:<58} {en:>18}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="gp-simulation", help="output folder for the figure")
    p.add_argument("--json", metavar="PATH", help="write all numbers as JSON")
    p.add_argument("--quick", action="store_true", help="small run for the tests")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    results = run(args)
    print(table(results))
    if args.json:
        clean = {s: {v: {k: ({kk: vv for kk, vv in r.items() if kk != "error_curve"}
                             if isinstance(r, dict) else r) for k, r in res.items()}
                     for v, res in rs.items()} for s, rs in results.items()}
        Path(args.json).write_text(json.dumps(clean, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
