#!/usr/bin/env python
"""Speed of the nonlinear pH fit (``identify.NonlinearPHIdentifier``) and of the arithmetic it is
made of.

1. Microseconds per elementwise operation of PyTorch's forward-mode automatic differentiation on
   tensors the size of a Jacobian pass (a batch of 40 parameter copies, 50 segments, 4 states):
   between two dual numbers, a dual number and a plain tensor, a dual number and a Python
   number.  The fit's Jacobian is one forward-mode pass over the RK4 rollout, thousands of such
   operations in sequence; the last two take PyTorch's Python reference decompositions (2.13)
   and cost 15–60 times the first.  These costs are why the rollout steps in NumPy with its
   tangents carried by hand (``identify/nonlinear/shooting.py``).
2. Milliseconds per rollout of the fit (``identify.nonlinear.shooting.rollout``): a model of two
   states with a quartic and a logcosh ridge and a power-law loss, 8 segments of 50 steps; a
   cost evaluation (plain parameters) and a Jacobian pass (the parameters as dual numbers with
   27 tangents, as many as the fit of a hanging mass has columns).
3. Seconds per fit: the Duffing oscillator of docs/design.md §5 (``benchmarks.duffing``: force
   in, velocity out, white-noise force held over 20 ms steps), the nonlinear model of order 2
   fitted to one run and validated on another, with its iterations and held-out error.

Usage: ``scripts/bench_nonlinear_fit.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _per_call(f, repeat: int) -> float:
    """Microseconds per call of ``f`` (best of three rounds of ``repeat`` calls)."""
    f()
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(repeat):
            f()
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best * 1e6


def operation_costs(repeat: int = 500) -> list[dict]:
    """Rows ``{operation, us}`` of section 1."""
    import torch
    import torch.autograd.forward_ad as fwad

    torch.set_num_threads(1)
    shape = (40, 50, 4)
    g = torch.Generator().manual_seed(0)
    x, t = (torch.randn(shape, dtype=torch.float64, generator=g) for _ in range(2))
    plain = torch.rand((50, 1), dtype=torch.float64, generator=g)
    rows = []
    with fwad.dual_level():
        d = fwad.make_dual(x, t)
        lifted = fwad.make_dual(plain, torch.zeros_like(plain))
        for name, f in (("dual + dual", lambda: d + d), ("dual * dual", lambda: d * d),
                        ("dual * dual (zero tangent)", lambda: d * lifted),
                        ("dual * plain tensor", lambda: d * plain),
                        ("dual * Python number", lambda: 2.0 * d),
                        ("dual + Python number", lambda: d + 1.0)):
            rows.append({"operation": name, "us": _per_call(f, repeat)})
    return rows


def rollout_costs(repeat: int = 20) -> list[dict]:
    """Rows ``{pass, ms}`` of section 2."""
    import torch
    import torch.autograd.forward_ad as fwad

    from fmu_surrogate.identify.nonlinear.parametrisation import Layout
    from fmu_surrogate.identify.nonlinear.shooting import VectorField, make_segments, rollout

    torch.set_num_threads(1)
    layout = Layout(n=2, m=1, kinds=("quartic", "logcosh"), n_dissipation=1, feedthrough=False,
                    n_shoot=0)
    rng = np.random.default_rng(0)
    lo, hi = np.array([(-np.inf if a is None else a, np.inf if b is None else b)
                       for a, b in layout.bounds()]).T
    theta = torch.as_tensor(np.clip(0.3 * rng.standard_normal(layout.size), lo, hi))
    t = np.arange(401) * 0.01
    seg = make_segments([(t, np.sin(3 * t)[:, None], np.zeros((401, 1)), "zoh")], 50)
    x0 = torch.zeros((len(seg.first), 2), dtype=torch.float64)
    cols = 27
    with fwad.dual_level():
        dual = fwad.make_dual(theta.expand(cols, -1).contiguous(),
                              torch.eye(cols, layout.size, dtype=torch.float64))
        dx0 = fwad.make_dual(x0.expand(cols, -1, -1).contiguous(),
                             torch.zeros((cols,) + x0.shape, dtype=torch.float64))
        jac = _per_call(lambda: rollout(VectorField(layout, dual), dx0, seg), repeat) / 1e3
    cost = _per_call(lambda: rollout(VectorField(layout, theta), x0, seg), repeat) / 1e3
    return [{"pass": "cost evaluation", "ms": cost},
            {"pass": f"Jacobian pass ({cols} columns)", "ms": jac}]


def duffing_fit(stop: float) -> dict:
    """Section 2 for runs of ``stop`` seconds."""
    from fmu_surrogate.benchmarks import duffing
    from fmu_surrogate.identify import NonlinearPHIdentifier
    from fmu_surrogate.ph import simulate

    runs = []
    for seed in (1, 2):
        t, u = duffing.white_noise_force(stop=stop, seed=seed)
        tr = duffing.simulate(t, u)
        runs.append((t, u[:, None], tr.ydot[:, None]))
    t0 = time.perf_counter()
    est = NonlinearPHIdentifier(2, input_hold="zoh").fit(runs[:1])
    seconds = time.perf_counter() - t0
    t, u, v = runs[1]
    y = simulate(est.system_, t, u, est.x0_, hold="zoh").y
    return {"problem": f"Duffing, {stop:g} s at 50 Hz", "fit_s": seconds,
            "iterations": int(est.result_.n_iter),
            "heldout_error": float(np.linalg.norm(y - v) / np.linalg.norm(v))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, one short fit")
    ap.add_argument("--json", type=Path, help="write the tables as JSON")
    args = ap.parse_args(argv)
    import torch

    ops = operation_costs(50 if args.quick else 500)
    print(f"forward-mode AD, PyTorch {torch.__version__}, tensors (40, 50, 4), one thread")
    print(f"  {'operation':30s} {'us':>8s}")
    for r in ops:
        print(f"  {r['operation']:30s} {r['us']:8.1f}")
    passes = rollout_costs(5 if args.quick else 20)
    print("  rollout, 2 states, 8 segments of 50 steps       ms")
    for r in passes:
        print(f"  {r['pass']:40s} {r['ms']:8.2f}")
    fits = [duffing_fit(s) for s in ((2.0,) if args.quick else (5.0, 10.0))]
    print(f"  {'problem':26s} {'fit s':>7s} {'iterations':>10s} {'held-out':>9s}")
    for r in fits:
        print(f"  {r['problem']:26s} {r['fit_s']:7.1f} {r['iterations']:10d} "
              f"{r['heldout_error']:9.2e}")
    if args.json:
        args.json.write_text(json.dumps({"torch": torch.__version__, "operations": ops,
                                         "rollout": passes, "fits": fits}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
