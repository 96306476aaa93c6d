#!/usr/bin/env python
"""Reproduce the studies of Zaspel & Günther, "Data-driven identification of port-Hamiltonian DAE
systems by Gaussian processes" (docs/design.md §3).

Benchmarks: the RC network (3a, index 1) and the pendulum (3b, index 3).

Data sources
    ``euler`` — the paper's explicit-Euler recipes (:func:`fmu_surrogate.benchmarks.rc_network.euler_data`,
    :func:`fmu_surrogate.benchmarks.pendulum.euler_data`).  Derivatives as in the paper: RC by a GP
    per state fitted to the full trajectory and differentiated (§4.4), pendulum by finite
    differences (§4.5).
    ``fmu`` — harvested from the benchmark FMUs (FMI 2.0 co-simulation, same inputs, same output
    grid) with :func:`fmu_surrogate.fmu.campaigns.campaign.harvest`; derivatives are the ``der(·)``
    variables the FMUs export (the usual harvesting case).  Skipped with a note when the FMU layer
    is not available.

Studies (per source, system and variant — ``plain`` is the paper's GP on z, ``hamiltonian`` the
Hamiltonian-consistent variant of ``GPEffortIdentifier(hamiltonian=True)``; for the pendulum, whose
``z_q`` contains the constraint force ``−2qλ``, with ``constraint_force=True`` where available, see
:func:`variant_options`; its N is capped by ``--max-N-hamiltonian`` because it factorises the
``(N n)²`` covariance densely)
    * learning curves: a fixed random test set (``--n-test`` samples), nested random training sets
      N = 2, 4, …, 512 from the remaining samples, ``--reps`` repetitions averaged; RMSE per
      component of the transformed targets f = (J − R) z and of the effort z against the exact
      ``T z(x)`` and ``z(x)`` at the test states; log-log plots;
    * effort plots at N = 32: true and learned z along the whole trajectory, training points marked,
      point-wise error;
    * extrapolation: N = 32 training samples from the first 2/3 of the time span — the paper's
      t ∈ [0, 20] of [0, 30] for the pendulum; for the RC network (t ∈ [0, 10π]) the same
      fraction, t ∈ [0, 20π/3 ≈ 20.9] — evaluated on the whole trajectory (RMSE inside and outside
      the training window);
    * derivative study (RC, Euler data, paper §4.6): exact derivatives vs GP derivatives on the
      full trajectory vs GP derivatives fitted on each training set only.

Outputs: PNG figures in ``--out`` and all numbers in ``--json``.  ``--quick`` runs a small version
(N = 4, 16, 64; one repetition; 40 Adam steps) for the tests.

Usage::

    python scripts/reproduce_gp_ph_dae.py --out gp-repro [--json gp-repro/results.json] [--quick]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: The paper's reported levels (docs/design.md §3 and the paper's §4.4–4.5, read off its figures).
PAPER = {
    "rc": {
        "f": "component 1 stagnates near 1e-2 (Euler data error) from N = 16; "
        "components 2 and 3 reach about 1e-5 at N = 128",
        "z": "components 1 and 2 follow f1 (~1e-2), component 3 follows f2",
        "levels": {"f1_from_N16": 1e-2, "f2_f3_at_N128": 1e-5},
    },
    "pendulum": {
        "f": "all five components at the discretisation level (~1e-2) by N = 64 "
        "(component 5 lower)",
        "z": "all five components at ~1e-2 by N = 64",
        "levels": {"all_at_N64": 1e-2},
    },
}

SYSTEMS = ("rc", "pendulum")
VARIANTS = ("plain", "hamiltonian")


# --------------------------------------------------------------------------- data
@dataclass
class Case:
    """One data set of one benchmark: trajectory, structure, truth and derivative data."""

    system: str
    source: str
    t: np.ndarray  # (K,)
    x: np.ndarray  # (K, n)
    u: np.ndarray  # (K, m)
    xdot: np.ndarray  # (K, n) derivative data used for the targets
    xdot_exact: np.ndarray  # (K, n) derivatives consistent with the exact effort at x
    matrices: dict
    effort: Callable[[np.ndarray], np.ndarray]
    derivative_method: str

    @property
    def T(self) -> np.ndarray:
        return self.matrices["J"] - self.matrices["R"]

    @property
    def differential(self) -> np.ndarray:
        E = self.matrices["E"]
        return (np.abs(E).sum(0) + np.abs(E).sum(1)) > 0

    def z_true(self, idx=slice(None)) -> np.ndarray:
        return self.effort(self.x[idx])

    def f_true(self, idx=slice(None)) -> np.ndarray:
        return self.z_true(idx) @ self.T.T

    def targets(self, xdot: np.ndarray, idx=slice(None)) -> np.ndarray:
        M = self.matrices
        return xdot @ M["E"].T - self.u[idx] @ M["B"].T


def _module(system: str):
    from fmu_surrogate.benchmarks import pendulum, rc_network

    return {"rc": rc_network, "pendulum": pendulum}[system]


def derivative_data(case_t, x, diff, method, train_index=None, t_eval=None) -> np.ndarray:
    """ẋ with the differential columns estimated by ``method`` and zeros elsewhere."""
    from fmu_surrogate.identify.derivatives import estimate_derivatives

    rows = len(case_t) if train_index is None else len(train_index)
    out = np.zeros((rows, x.shape[1]))
    out[:, diff] = estimate_derivatives(case_t, x[:, diff], method, train_index=train_index,
                                        t_eval=t_eval)
    return out


def euler_case(system: str) -> Case:
    """The paper's explicit-Euler data with the paper's derivative estimate."""
    mod = _module(system)
    tr = mod.euler_data()
    M = mod.matrices()
    diff = (np.abs(M["E"]).sum(0) + np.abs(M["E"]).sum(1)) > 0
    method = "gp" if system == "rc" else "fd"
    xdot = derivative_data(tr.t, tr.x, diff, method)
    return Case(system, "euler", tr.t, tr.x, tr.u, xdot, tr.xdot, M, mod.effort,
                f"{method} on the full trajectory")


FMU_NAMES = {
    "rc": (["x1", "x2", "x3"], ["der(x1)", None, None]),
    "pendulum": (["q1", "q2", "p1", "p2", "lambda"],
                 ["der(q1)", "der(q2)", "der(p1)", "der(p2)", None]),
}


def fmu_case(system: str, workdir: Path) -> Case:
    """Data harvested from the benchmark FMU with the paper's input and output grid."""
    from fmu_surrogate.benchmarks.build import benchmark_fmu
    from fmu_surrogate.fmu.campaigns.campaign import harvest
    from fmu_surrogate.fmu.dataset import run_arrays
    from fmu_surrogate.fmu.signals.standard import ArraySignal

    mod = _module(system)
    M = mod.matrices()
    if system == "rc":
        t_end, step = 10 * math.pi, 10 * math.pi / 3000
    else:
        t_end, step = 30.0, 0.01
    # the input sampled 10× finer than the output grid, linearly interpolated (error ≲ 1e-5)
    ts = np.linspace(0.0, t_end, round(t_end / step) * 10 + 1)
    sig = ArraySignal(ts, mod.input_signal(ts))
    ds = harvest(benchmark_fmu(_fmu_name(system)), workdir / f"{system}.nc", signals={"u": sig},
                 stop_time=t_end, step=step, progress=False, overwrite=True)
    states, ders = FMU_NAMES[system]
    names = states + [d for d in ders if d] + ["u"]
    runs = run_arrays(ds, names)
    if len(runs) != 1:
        raise RuntimeError(f"harvesting {system} gave {len(runs)} successful runs, expected 1.")
    t, A = runs[0]
    n = len(states)
    x = A[:, :n]
    xdot = np.zeros_like(x)
    k = n
    for j, d in enumerate(ders):
        if d:
            xdot[:, j] = A[:, k]
            k += 1
    u = A[:, -1:]
    return Case(system, "fmu", t, x, u, xdot, xdot, M, mod.effort, "der() exported by the FMU")


def _fmu_name(system: str) -> str:
    return {"rc": "rc_network", "pendulum": "pendulum"}[system]


# --------------------------------------------------------------------------- fitting
class VariantUnavailable(RuntimeError):
    """The requested identifier variant is not implemented in this installation."""


def variant_options(system: str, variant: str) -> dict:
    """Keyword options of ``GPEffortIdentifier`` for a variant on a system.

    The pendulum's true ``z_q = ∇U − 2qλ`` depends on the algebraic ``λ`` and is no gradient of any
    ``H(q, p)``; where the identifier offers ``constraint_force=True`` (``z_d = ∇H + Φ(x_d) x_a``,
    the structure of constraint forces) the Hamiltonian variant uses it there, otherwise the plain
    ``H(x_d)`` model runs and its pendulum numbers show the model-class error.
    """
    import inspect

    from fmu_surrogate.identify.gp.effort import GPEffortIdentifier

    if variant != "hamiltonian":
        return {}
    opts: dict = {"hamiltonian": True}
    if system == "pendulum" and "constraint_force" in inspect.signature(GPEffortIdentifier).parameters:
        opts["constraint_force"] = True
    return opts


def fit(case: Case, idx: np.ndarray, xdot: np.ndarray, variant: str, n_iter: int, seed: int):
    """``GPEffortIdentifier`` on the samples ``idx`` with derivative rows ``xdot`` (len(idx), n)."""
    from fmu_surrogate.identify.gp.effort import GPEffortIdentifier

    M = case.matrices
    est = GPEffortIdentifier(**M, max_iter=n_iter, seed=seed,
                             **variant_options(case.system, variant))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return est.fit(case.x[idx], xdot, case.u[idx])
    except (ImportError, NotImplementedError) as exc:
        raise VariantUnavailable(f"variant {variant!r}: {exc}") from exc


def rmse(est, case: Case, idx) -> tuple[np.ndarray, np.ndarray]:
    """RMSE per component of f = T z and of z at the samples ``idx``."""
    x = case.x[idx]
    ef = est.predict_targets(x) - case.f_true(idx)
    ez = est.effort(x) - case.z_true(idx)
    return np.sqrt(np.mean(ef**2, 0)), np.sqrt(np.mean(ez**2, 0))


# --------------------------------------------------------------------------- studies
@dataclass
class Split:
    test: np.ndarray
    orders: list  # one permutation of the training pool per repetition


def make_split(K: int, n_test: int, reps: int, seed: int) -> Split:
    rng = np.random.default_rng(seed)
    perm = rng.permutation(K)
    test, pool = np.sort(perm[:n_test]), perm[n_test:]
    return Split(test, [rng.permutation(pool) for _ in range(reps)])


def learning_curve(case: Case, split: Split, Ns, variant: str, n_iter: int, deriv: str,
                   bar) -> dict:
    """RMSE per component of f and z over nested training sets, ``len(split.orders)`` repetitions.

    ``deriv``: ``"data"`` (the case's derivative data), ``"exact"``, or ``"gp_train"`` (a GP fitted
    on each training set only, differentiated at the training points).
    """
    n = case.x.shape[1]
    R = len(split.orders)
    rf = np.full((R, len(Ns), n), np.nan)
    rz = np.full((R, len(Ns), n), np.nan)
    secs = np.zeros((R, len(Ns)))
    for r, order in enumerate(split.orders):
        for k, N in enumerate(Ns):
            idx = order[:N]
            if deriv == "data":
                xd = case.xdot[idx]
            elif deriv == "exact":
                xd = case.xdot_exact[idx]
            else:
                xd = derivative_data(case.t, case.x, case.differential, "gp", train_index=idx)
            t0 = time.perf_counter()
            est = fit(case, idx, xd, variant, n_iter, seed=r)
            rf[r, k], rz[r, k] = rmse(est, case, split.test)
            secs[r, k] = time.perf_counter() - t0
            bar.update(1)
    return {
        "N": list(map(int, Ns)),
        "rmse_f_mean": rf.mean(0).tolist(),
        "rmse_z_mean": rz.mean(0).tolist(),
        "rmse_f": rf.tolist(),
        "rmse_z": rz.tolist(),
        "fit_seconds_mean": secs.mean(0).tolist(),
    }


def effort_run(case: Case, idx: np.ndarray, variant: str, n_iter: int,
               window: np.ndarray | None = None) -> tuple[dict, np.ndarray, np.ndarray]:
    """Fit on ``idx`` and evaluate z, f on the whole trajectory; RMSE in/out of ``window``."""
    est = fit(case, idx, case.xdot[idx], variant, n_iter, seed=0)
    z = est.effort(case.x)
    f = est.predict_targets(case.x)
    ez = z - case.z_true()
    ef = f - case.f_true()
    out = {
        "N": len(idx),
        "rmse_z_all": np.sqrt(np.mean(ez**2, 0)).tolist(),
        "rmse_f_all": np.sqrt(np.mean(ef**2, 0)).tolist(),
    }
    if window is not None:
        for name, sel in (("inside", window), ("outside", ~window)):
            out[f"rmse_z_{name}"] = np.sqrt(np.mean(ez[sel] ** 2, 0)).tolist()
            out[f"rmse_f_{name}"] = np.sqrt(np.mean(ef[sel] ** 2, 0)).tolist()
    return out, z, f


# --------------------------------------------------------------------------- figures
def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


LABELS = {
    "rc": ["1", "2", "3"],
    "pendulum": ["q1", "q2", "p1", "p2", "λ"],
}


def _n_ticks(ax, N) -> None:
    ax.set_xticks(list(N), [str(int(n)) for n in N])
    ax.minorticks_off()


def plot_learning_curves(res: dict, title: str, path: Path, paper: dict | None = None) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    N = np.asarray(res["N"])
    for ax, key, name in ((axes[0], "rmse_f_mean", "f = (J−R) z"), (axes[1], "rmse_z_mean", "z")):
        E = np.asarray(res[key])
        for j in range(E.shape[1]):
            ax.loglog(N, np.maximum(E[:, j], 1e-16), "o-", ms=3, label=f"component {j + 1}")
        ax.set_xlabel("training samples N")
        _n_ticks(ax, N)
        ax.set_title(name)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("RMSE on the test set (mean over repetitions)")
    if paper:
        for lvl in set(paper.values()):
            for ax in axes:
                ax.axhline(lvl, color="k", ls=":", lw=0.8)
    axes[1].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_effort(case: Case, z: np.ndarray, idx: np.ndarray, title: str, path: Path,
                t_split: float | None = None) -> None:
    plt = _plt()
    n = z.shape[1]
    zt = case.z_true()
    fig, axes = plt.subplots(2, n, figsize=(3.2 * n, 5.5), sharex=True)
    for j in range(n):
        ax = axes[0, j]
        ax.plot(case.t, zt[:, j], "k-", lw=1.5, label="true")
        ax.plot(case.t, z[:, j], "C1--", lw=1.2, label="learned")
        ax.plot(case.t[idx], z[idx, j], "kx", ms=4, label="training")
        ax.set_title(f"z{LABELS[case.system][j]}" if case.system == "pendulum" else f"z{j + 1}")
        err = np.abs(z[:, j] - zt[:, j])
        axes[1, j].semilogy(case.t, np.maximum(err, 1e-16), "C3-", lw=0.8)
        axes[1, j].set_xlabel("t")
        if t_split is not None:
            for a in (ax, axes[1, j]):
                a.axvline(t_split, color="gray", ls=":")
    axes[0, 0].legend(fontsize=7)
    axes[1, 0].set_ylabel("|error|")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_derivative_study(study: dict, path: Path) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    styles = {"plain": "-", "hamiltonian": "--"}
    for variant, modes in study.items():
        for m, (mode, res) in enumerate(modes.items()):
            N = np.asarray(res["N"])
            for ax, key in ((axes[0], "rmse_f_mean"), (axes[1], "rmse_z_mean")):
                E = np.asarray(res[key])[:, 0]
                ax.loglog(N, np.maximum(E, 1e-16), styles[variant], marker="o", ms=3,
                          color=f"C{m}", label=f"{mode} ({variant})")
    axes[0].set_title("component 1 of f = (J−R) z")
    axes[1].set_title("component 1 of z")
    for ax in axes:
        ax.set_xlabel("training samples N")
        _n_ticks(ax, N)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("RMSE")
    axes[1].legend(fontsize=7)
    fig.suptitle("RC network: influence of the derivative data (Euler data)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --------------------------------------------------------------------------- driver
def _geometric_Ns(lo: int, hi: int) -> list[int]:
    return [2**k for k in range(int(math.log2(lo)), int(math.log2(hi)) + 1)]


def run(args) -> dict:
    from tqdm import tqdm

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    Ns = args.N or ([4, 16, 64] if args.quick else _geometric_Ns(2, 512))
    reps = args.reps or (1 if args.quick else 5)
    n_iter = args.n_iter or (40 if args.quick else 200)
    n_test = args.n_test
    n_plot = min(32, max(Ns))
    t_start = time.perf_counter()
    results: dict = {
        "settings": {
            "quick": bool(args.quick), "N": Ns, "reps": reps, "n_iter": n_iter, "lr": 0.1,
            "n_test": n_test, "seed": args.seed, "variants": list(args.variants),
            "systems": list(args.systems), "sources": list(args.sources),
            "effort_plot_N": n_plot, "extrapolation_fraction": 2 / 3,
            "max_N_hamiltonian": args.max_N_hamiltonian,
            "threads": args.threads, "python": sys.version.split()[0],
            "platform": platform.platform(),
        },
        "paper": PAPER,
        "notes": [],
        "sources": {},
    }
    # ---- data
    cases: dict[tuple[str, str], Case] = {}
    for source in args.sources:
        for system in args.systems:
            try:
                if source == "euler":
                    cases[(source, system)] = euler_case(system)
                else:
                    cases[(source, system)] = fmu_case(system, out)
            except ImportError as exc:
                results["notes"].append(f"source {source!r} unavailable ({exc}); skipped")
                break
    def Ns_for(variant: str) -> list[int]:
        # the Hamiltonian variant factorises the (N n)² covariance densely: cap its N
        return [N for N in Ns if variant != "hamiltonian" or N <= args.max_N_hamiltonian]

    # ---- work count for one progress bar
    deriv_study = "euler" in args.sources and "rc" in args.systems and not args.no_derivative_study
    total = 0
    for _ in cases:
        total += sum(len(Ns_for(v)) * reps + 2 for v in args.variants)
    if deriv_study:
        total += sum(2 * len(Ns_for(v)) * reps for v in args.variants)
    bar = tqdm(total=total, desc="fits", disable=args.no_progress)
    unavailable: set[str] = set()

    def guarded(variant, fn, *fargs):
        if variant in unavailable:
            return None
        try:
            return fn(*fargs)
        except VariantUnavailable as exc:
            unavailable.add(variant)
            results["notes"].append(f"{exc} — skipped everywhere")
            return None

    for (source, system), case in cases.items():
        split = make_split(len(case.t), n_test, reps, args.seed)
        data_err = case.targets(case.xdot) - case.f_true()
        entry = {
            "n_samples": len(case.t),
            "derivatives": case.derivative_method,
            "data_error_rms_f": np.sqrt(np.mean(data_err**2, 0)).tolist(),
            "learning_curves": {},
            "effort_N32": {},
            "extrapolation": {},
        }
        results["sources"].setdefault(source, {})[system] = entry
        for variant in args.variants:
            tag = f"{source}_{system}_{variant}"
            lc = guarded(variant, learning_curve, case, split, Ns_for(variant), variant, n_iter,
                         "data", bar)
            if lc is None:
                continue
            lc["options"] = variant_options(system, variant)
            entry["learning_curves"][variant] = lc
            plot_learning_curves(
                lc, f"{system} ({source} data, {case.derivative_method}; {variant} GP)",
                out / f"learning_curve_{tag}.png", PAPER[system]["levels"] if source == "euler" else None,
            )
            # effort at N = 32 (first training set of repetition 0)
            idx = split.orders[0][:n_plot]
            res, z, _ = effort_run(case, idx, variant, n_iter)
            entry["effort_N32"][variant] = res
            plot_effort(case, z, idx, f"{system} ({source}, {variant}): effort with N = {n_plot}",
                        out / f"effort_N{n_plot}_{tag}.png")
            bar.update(1)
            # extrapolation: train in the first 2/3 of the time span
            t_split = case.t[0] + (case.t[-1] - case.t[0]) * 2 / 3
            window = case.t <= t_split
            rng = np.random.default_rng(args.seed + 1)
            pool = np.setdiff1d(np.flatnonzero(window), split.test)
            idx = rng.choice(pool, n_plot, replace=False)
            res, z, _ = effort_run(case, idx, variant, n_iter, window)
            res["t_split"] = float(t_split)
            entry["extrapolation"][variant] = res
            plot_effort(case, z, idx,
                        f"{system} ({source}, {variant}): N = {n_plot} from t ≤ {t_split:.1f}",
                        out / f"extrapolation_{tag}.png", t_split)
            bar.update(1)
    # ---- derivative study (RC, Euler data)
    if deriv_study and ("euler", "rc") in cases:
        case = cases[("euler", "rc")]
        split = make_split(len(case.t), n_test, reps, args.seed)
        study: dict = {}
        for variant in args.variants:
            lc_data = results["sources"]["euler"]["rc"]["learning_curves"].get(variant)
            if lc_data is None:
                continue
            modes = {}
            Nv = Ns_for(variant)
            ex = guarded(variant, learning_curve, case, split, Nv, variant, n_iter, "exact", bar)
            if ex is None:
                continue
            modes["exact"] = ex
            modes["gp_full"] = lc_data
            modes["gp_train"] = learning_curve(case, split, Nv, variant, n_iter, "gp_train", bar)
            study[variant] = modes
        results["derivative_study"] = {"rc": study}
        if study:
            plot_derivative_study(study, out / "derivative_study_rc.png")
    bar.close()
    results["wall_seconds"] = time.perf_counter() - t_start
    return results


def summary(results: dict) -> str:
    """Learning-curve numbers next to the paper's levels, as text."""
    lines = []
    for source, systems in results["sources"].items():
        for system, entry in systems.items():
            derr = ", ".join(f"{v:.1e}" for v in entry["data_error_rms_f"])
            lines.append(f"[{source}] {system}: derivatives {entry['derivatives']}; "
                         f"data error (RMS of targets − T z per component) {derr}")
            lines.append(f"    paper: {PAPER[system]['f']}")
            for variant, lc in entry["learning_curves"].items():
                for key in ("rmse_f_mean", "rmse_z_mean"):
                    lines.append(f"    {variant:11s} {key[5]}: " + "  ".join(
                        f"N={N}:" + ",".join(f"{v:.1e}" for v in row)
                        for N, row in zip(lc["N"], lc[key])))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="gp-ph-dae-repro", help="output folder for PNG figures")
    p.add_argument("--json", metavar="PATH", help="write all numbers as JSON")
    p.add_argument("--quick", action="store_true", help="small run for the tests (< 60 s)")
    p.add_argument("--N", type=int, nargs="*", help="training-set sizes (default 2, 4, …, 512)")
    p.add_argument("--reps", type=int, help="repetitions (default 5)")
    p.add_argument("--n-iter", type=int, help="Adam steps (default 200)")
    p.add_argument("--n-test", type=int, default=500, help="test samples (default 500)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--systems", nargs="*", default=list(SYSTEMS), choices=SYSTEMS)
    p.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=VARIANTS)
    p.add_argument("--sources", nargs="*", default=["euler", "fmu"], choices=["euler", "fmu"])
    p.add_argument("--no-derivative-study", action="store_true")
    p.add_argument("--max-N-hamiltonian", type=int, default=256,
                   help="largest N for the Hamiltonian variant (dense O((N n)^3) solves; default 256)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.quick and args.sources == ["euler", "fmu"]:
        args.sources = ["euler"]  # the FMU build and harvest do not fit the quick budget

    import torch

    torch.set_num_threads(args.threads)
    results = run(args)
    print(summary(results))
    for note in results["notes"]:
        print("note:", note)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
