#!/usr/bin/env python
"""Reproduce the studies of Zhu et al. (robust equation discovery with a GP model discrepancy,
GP-RVM; docs/design.md §5) with :class:`fmu_surrogate.GPRVM`, :class:`fmu_surrogate.RVM` and
scikit-learn's ``ARDRegression`` (``fit_intercept=False``, defaults otherwise, on the raw columns
as a user would call it) as a peer column everywhere.

(a) ``polynomial`` — ``y = 5x³ + x² + 2 sin x + ε`` (x uniform on [−1, 1], 100 points, noise
    standard deviation 10 % of that of f), candidates ``[x³, x⁵]``, GP on x; 100 data sets
    (seed k): histograms of a and d, how often x⁵ is dropped, how often a is within its ±2σ,
    NMSE of the mean prediction against the true f.
(b) ``duffing`` — ``m ÿ + c ẏ + (a + b y²) y = u`` (m = 1, c = 2.151, a = 10, b = 1e5), 10 s at
    50 Hz under the Duffing benchmark's white-noise force (seed k, standard deviation 1), 1 %
    noise on y, ẏ, ÿ (seed 1000 + k); target ÿ, GP on y; three scenarios: ``[u, ẏ]``,
    ``[u, ẏ, y², y⁴]`` (wrong stiffness terms d, e), ``[u, ẏ, y, y³]`` (true form: a, b);
    10 data sets each.  The data come from the Duffing benchmark FMU (fmpy, co-simulation,
    the force held over each sample) and, to show they agree, from the accurate reference
    solver (:func:`fmu_surrogate.benchmarks.duffing.simulate`, DOP853 at rtol 1e-10).  Tables of
    m, c and (d, e) / (a, b) per data set next to the paper's tables 2-4.  Bias = mean over the
    data sets of the relative absolute error (the paper's definition: it reproduces its 0.03 %
    from its table 2).
(c) ``silverbox`` — the Silverbox benchmark (T. Wigren and J. Schoukens, "Three free data sets for
    development and benchmarking in nonlinear system identification", ECC 2013, pp. 2933-2938),
    file SNLS80mV.csv: 40 windows of 1000 samples of the Gaussian-noise section with growing
    amplitude (samples 100 … 40 099), ẏ and ÿ by central differences
    (:func:`fmu_surrogate.identify.derivatives.finite_differences`), candidates
    ``[u, y, ẏ, y², y³, y⁴, sin y, cos y]``, GP on y; how often each candidate is selected and the
    NMSE of the predicted ÿ on the multisine test section (samples 105 712 … 127 399, the official
    split).  The data are not part of the repository: ``--silverbox DIR`` or the environment
    variable ``FMU_SURROGATE_SILVERBOX``; without them this part is skipped with a message.
GP-RVM runs twice in every study: with the paper's rule (key ``gp``: ``min_gain = 0``, any
positive gain admits a term) and with the estimator's default ``min_gain = 0.5`` (key
``gp_min_gain``: a candidate enters only if it raises the log marginal likelihood by more than half
a nat).
(bench) iterations and seconds per fit of RVM, GP-RVM and ARDRegression on Duffing data
    (library ``[u, ẏ, y, y³]``, GP on y) with N = 500 and N = 5000 samples.

Usage::

    python scripts/reproduce_gp_rvm.py [--quick] [--json PATH] [--out DIR] [--silverbox DIR]
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
from sklearn.linear_model import ARDRegression

import fmu_surrogate as fs
from fmu_surrogate import figures as _mpl
from fmu_surrogate.benchmarks import duffing
from fmu_surrogate.identify.derivatives import finite_differences

#: The paper's tables 2-4 (data sets 1-10): RVM then GP-RVM, columns m, c(, d·1e-3, e·1e-6 /
#: a, b·1e-5).
PAPER_TABLES = {
    1: {"rvm": [[0.973, 2.051], [0.994, 2.096], [1.023, 2.166], [0.983, 2.192], [0.982, 2.121],
                [0.975, 2.078], [0.982, 2.059], [1.014, 2.134], [0.989, 2.090], [1.001, 2.334]],
        "gp": [[1.001, 2.154], [1.000, 2.146], [1.000, 2.156], [1.000, 2.135], [0.999, 2.149],
               [1.001, 2.157], [1.000, 2.153], [1.000, 2.150], [1.000, 2.149], [1.000, 2.147]]},
    2: {"rvm": [[1.006, 2.283, 1.185, 6.573], [0.998, 2.248, 3.556, 12.612],
                [0.998, 2.136, 0.495, 4.560], [1.003, 2.146, 2.107, 12.389],
                [1.003, 2.162, 0.000, 0.694], [1.002, 2.152, 2.764, 16.634],
                [1.009, 2.190, 1.014, 2.264], [0.999, 2.159, 1.986, 8.654],
                [0.992, 2.284, 0.000, 3.292], [0.991, 2.137, 0.299, 1.338]],
        "gp": [[1.000, 2.140, 0, 0], [1.000, 2.158, 0, 0], [1.000, 2.151, 0, 0],
               [1.000, 2.147, 0, 0], [1.000, 2.148, 0, 0], [1.000, 2.151, 0, 0],
               [1.000, 2.142, 0, 0], [1.000, 2.148, 0, 0], [0.999, 2.141, 0, 0],
               [1.000, 2.140, 0, 0]]},
    3: {"rvm": [[1.000, 2.142, 9.943, 0.849], [1.000, 2.141, 10.068, 0.771],
                [1.000, 2.161, 9.998, 1.120], [0.999, 2.141, 10.165, 0.906],
                [1.001, 2.159, 10.043, 0.981], [1.000, 2.149, 10.069, 0.698],
                [1.000, 2.155, 9.989, 1.047], [1.001, 2.155, 10.032, 1.045],
                [1.000, 2.153, 10.065, 0.841], [1.000, 2.149, 10.016, 1.000]],
        "gp": [[1.000, 2.139, 9.877, 0.851], [1.000, 2.138, 10.016, 0.772],
               [1.000, 2.159, 9.945, 1.121], [0.999, 2.139, 10.111, 0.907],
               [1.001, 2.157, 9.987, 0.982], [1.000, 2.146, 10.014, 0.699],
               [1.000, 2.153, 9.925, 1.048], [1.001, 2.152, 9.985, 1.046],
               [1.000, 2.150, 10.029, 0.841], [1.000, 2.146, 9.958, 1.001]]},
}
#: Numbers of the paper's text.
PAPER_TEXT = {
    "polynomial": {"x5_dropped_gp": "100 of 100", "nmse_typical": {"rvm": 3.4e-4, "gp": 8.8e-5},
                   "gp_iterations": 20},
    "duffing_bias_percent": {1: {"rvm": [1.60, 3.11], "gp": [0.03, 0.21]},
                             2: {"rvm": [0.49, 4.55]}},
    "duffing_gp_iterations": {1: 4, 2: 5, 3: 4.8},
    "silverbox": {"y3_selected_percent": 30, "nmse_typical": 7e-5,
                  "rvm_nmse_first_windows": [930, 52.7, 2.96, 0.05]},
}
#: ``min_gain`` of the extra GP-RVM column (a candidate enters only if it gains > 0.5 nats).
MIN_GAIN = 0.5
SCENARIOS = {1: ["u", "ydot"], 2: ["u", "ydot", "y^2", "y^4"], 3: ["u", "ydot", "y", "y^3"]}
EXTRA = {1: [], 2: ["d", "e"], 3: ["a", "b"]}
SILVERBOX_TERMS = ["u", "y", "ydot", "y^2", "y^3", "y^4", "sin(y)", "cos(y)"]
FS_SILVERBOX = 1e7 / 2**14          # sampling frequency of the Silverbox records [Hz]


def log(msg: str) -> None:
    print(msg, flush=True)


def _progress(it, desc, enabled):
    from tqdm import tqdm

    return tqdm(it, desc=desc, disable=not enabled, leave=False)


def _ard(P, y):
    t0 = time.perf_counter()
    est = ARDRegression(fit_intercept=False).fit(P, y)
    return est, time.perf_counter() - t0


def _timed(est, *args):
    t0 = time.perf_counter()
    est.fit(*args)
    return est, time.perf_counter() - t0


# ------------------------------------------------------------------------------ (a) polynomial
def poly_case(k: int):
    """Data set k of the polynomial study: ``(Phi = [x³, x⁵], y, x, f)``."""
    rng = np.random.default_rng(k)
    x = rng.uniform(-1, 1, 100)
    f = 5 * x**3 + x**2 + 2 * np.sin(x)
    y = f + 0.1 * f.std() * rng.normal(size=100)
    return np.c_[x**3, x**5], y, x, f


def study_polynomial(n_sets: int, progress: bool) -> dict:
    rows = {"rvm": [], "gp": [], "ard": [], "gp_min_gain": []}
    for k in _progress(range(n_sets), "polynomial", progress):
        P, y, x, f = poly_case(k)
        g = fs.GPRVM(names=["x^3", "x^5"], min_gain=0.0).fit(P, y, x)
        g5 = fs.GPRVM(min_gain=MIN_GAIN).fit(P, y, x)
        r = fs.RVM(names=["x^3", "x^5"]).fit(P, y)
        a, _ = _ard(P, y)
        for key, coef, sd, pred, it in (
                ("gp", g.coef_, np.sqrt(np.diag(g.coef_cov_)), g.predict(P, x), g.n_iter_),
                ("gp_min_gain", g5.coef_, np.sqrt(np.diag(g5.coef_cov_)), g5.predict(P, x),
                 g5.n_iter_),
                ("rvm", r.coef_, np.sqrt(np.diag(r.coef_cov_)), r.predict(P), r.n_iter_),
                ("ard", a.coef_, np.sqrt(np.diag(a.sigma_)) if a.sigma_.size == 4 else
                 np.full(2, np.nan), a.predict(P), a.n_iter_)):
            rows[key].append({"a": float(coef[0]), "d": float(coef[1]), "sd_a": float(sd[0]),
                              "nmse": float(np.mean((pred - f) ** 2) / np.var(f)),
                              "n_iter": int(it)})
    out = {"n_sets": n_sets, "per_set": rows, "summary": {}}
    for key, rs in rows.items():
        a = np.array([r["a"] for r in rs])
        d = np.array([r["d"] for r in rs])
        sd = np.array([r["sd_a"] for r in rs])
        out["summary"][key] = {
            "x5_dropped": int(np.sum(d == 0.0)), "a_within_2sd": int(np.sum(np.abs(a - 5) < 2 * sd)),
            "mean_a": float(a.mean()), "std_a": float(a.std()), "mean_d": float(d.mean()),
            "median_nmse": float(np.median([r["nmse"] for r in rs])),
            "mean_iterations": float(np.mean([r["n_iter"] for r in rs]))}
    return out


def plot_polynomial(res: dict, path: Path) -> None:
    plt = _mpl.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, key, true in ((axes[0], "a", 5.0), (axes[1], "d", 0.0)):
        vals = {m: np.array([r[key] for r in res["per_set"][m]]) for m in ("rvm", "gp", "ard")}
        lo = min(v.min() for v in vals.values())
        hi = max(v.max() for v in vals.values())
        bins = np.linspace(lo - 0.05, hi + 0.05, 30)
        for m, color in (("rvm", "tab:blue"), ("gp", "tab:green"), ("ard", "k")):
            ax.hist(vals[m], bins=bins, alpha=1.0 if m == "ard" else 0.6, color=color,
                    histtype="step" if m == "ard" else "bar",
                    label={"rvm": "RVM", "gp": "GP-RVM", "ard": "ARDRegression"}[m])
        ax.axvline(true, color="k", ls="--", lw=1)
        ax.set_xlabel(key)
        ax.set_ylabel("data sets")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Polynomial case, {res['n_sets']} data sets (paper Figs. 1-2)")
    _mpl.finish(fig, path)


# ------------------------------------------------------------------------------ (b) Duffing
def _design(s: int, tr) -> np.ndarray:
    cols = {"u": tr.u, "ydot": tr.ydot, "y": tr.y, "y^2": tr.y**2, "y^3": tr.y**3,
            "y^4": tr.y**4}
    return np.column_stack([cols[n] for n in SCENARIOS[s]])


def _physical(s: int, coef: np.ndarray) -> list[float]:
    """m, c and (d·1e-3, e·1e-6) or (a, b·1e-5) from θ = [1/m, −c/m, −p1/m, −p2/m]."""
    m = 1.0 / coef[0] if coef[0] != 0 else float("nan")
    out = [m, -coef[1] * m]
    if s == 2:
        out += [-coef[2] * m * 1e-3, -coef[3] * m * 1e-6]
    elif s == 3:
        out += [-coef[2] * m, -coef[3] * m * 1e-5]
    return [float(v) + 0.0 for v in out]       # + 0.0: no "-0.000" for pruned terms


def fmu_trajectories(n_sets: int, workdir: Path, progress: bool) -> tuple[list, list, dict]:
    """Clean Duffing trajectories of data sets 0..n-1 from the benchmark FMU and from the
    reference solver, and how far apart they are."""
    fmu = fs.benchmark_fmu("duffing")
    signals = []
    for k in range(n_sets):
        t, u = duffing.white_noise_force(seed=k)
        signals.append({"u": fs.signals.ArraySignal(t, u, interpolation="zoh")})
    ds = fs.harvest(fmu, workdir / "duffing.nc", signals=signals, stop_time=duffing.DEFAULT_STOP,
                    step=duffing.DEFAULT_DT, overwrite=True, progress=progress, workers=1)
    trajs, refs, dev = [], [], []
    for k, (t, X) in enumerate(fs.run_arrays(ds, ["u", "y", "ydot", "yddot"])):
        tr = duffing.DuffingTrajectory(t, X[:, 1], X[:, 2], X[:, 3], X[:, 0])
        ref = duffing.simulate(*duffing.white_noise_force(seed=k))
        dev.append([float(np.abs(getattr(tr, v) - getattr(ref, v)).max()
                          / np.abs(getattr(ref, v)).max()) for v in ("y", "ydot", "yddot")])
        trajs.append(tr)
        refs.append(ref)
    dev = np.array(dev)
    return trajs, refs, {"max_relative_deviation_fmu_vs_solver": dict(
        zip(("y", "ydot", "yddot"), dev.max(axis=0).tolist()))}


def study_duffing(n_sets: int, workdir: Path, progress: bool) -> dict:
    trajs, refs, agreement = fmu_trajectories(n_sets, workdir, progress)
    out: dict = {"n_sets": n_sets, "data": agreement, "scenarios": {}}
    solver_gap = 0.0
    for s in SCENARIOS:
        rows: dict[str, list] = {"rvm": [], "gp": [], "ard": [], "gp_min_gain": []}
        iters: dict[str, list] = {"rvm": [], "gp": [], "ard": [], "gp_min_gain": []}
        for k in _progress(range(n_sets), f"duffing {s}", progress):
            tr = duffing.with_noise(trajs[k], k)
            P = _design(s, tr)
            g = fs.GPRVM(min_gain=0.0).fit(P, tr.yddot, tr.y)
            r = fs.RVM().fit(P, tr.yddot)
            a, _ = _ard(P, tr.yddot)
            g5 = fs.GPRVM(min_gain=MIN_GAIN).fit(P, tr.yddot, tr.y)
            for key, est in (("gp", g), ("rvm", r), ("ard", a), ("gp_min_gain", g5)):
                rows[key].append(_physical(s, est.coef_))
                iters[key].append(int(est.n_iter_))
            if s == 1:                               # same data set from the reference solver
                ref = duffing.with_noise(refs[k], k)
                g2 = fs.GPRVM(min_gain=0.0).fit(_design(s, ref), ref.yddot, ref.y)
                gap = np.abs(np.array(_physical(s, g2.coef_)) / rows["gp"][-1] - 1)
                solver_gap = max(solver_gap, float(gap.max()))
        summ = {}
        for key, rs in rows.items():
            R = np.array(rs)
            summ[key] = {"bias_m_percent": float(100 * np.mean(np.abs(R[:, 0] - 1.0))),
                         "bias_c_percent": float(100 * np.mean(np.abs(R[:, 1] / 2.151 - 1.0))),
                         "mean_iterations": float(np.mean(iters[key]))}
            if s == 2:
                summ[key]["d_e_exactly_zero"] = int(np.sum(np.all(R[:, 2:] == 0.0, axis=1)))
            if s == 3:
                summ[key]["bias_a_percent"] = float(100 * np.mean(np.abs(R[:, 2] / 10 - 1)))
                summ[key]["bias_b_percent"] = float(100 * np.mean(np.abs(R[:, 3] - 1)))
        out["scenarios"][s] = {"columns": ["m", "c", *EXTRA[s]], "per_set": rows,
                               "summary": summ, "paper": PAPER_TABLES[s]}
    out["data"]["max_relative_difference_gp_fit_fmu_vs_solver_data_scenario1"] = solver_gap
    return out


def _fmt(v) -> str:
    return " ".join(f"{x:8.3f}" for x in v)


def print_duffing(res: dict) -> None:
    for s, sc in res["scenarios"].items():
        cols = sc["columns"]
        unit = {"d": "d/1e3", "e": "e/1e6", "b": "b/1e5"}
        head = " ".join(f"{unit.get(c, c):>8}" for c in cols)
        log(f"\nDuffing scenario {s} (paper table {s + 1}); ours | paper")
        log(f"{'set':>3} | {'RVM ' + head:>{9 * len(cols) + 4}} | {'GP-RVM ' + head} | "
            f"{'ARD ' + head} || paper RVM | paper GP-RVM")
        n = len(sc["per_set"]["gp"])
        for k in range(n):
            pr = sc["paper"]
            log(f"{k + 1:>3} | {_fmt(sc['per_set']['rvm'][k])} | {_fmt(sc['per_set']['gp'][k])} | "
                f"{_fmt(sc['per_set']['ard'][k])} || {_fmt(pr['rvm'][k])} | {_fmt(pr['gp'][k])}")
        for key, sm in sc["summary"].items():
            log(f"    {key:>3}: " + ", ".join(f"{a} {b:.3g}" for a, b in sm.items()))


# ------------------------------------------------------------------------------ (c) Silverbox
def _silverbox_terms(u, y, yd):
    return np.column_stack([u, y, yd, y**2, y**3, y**4, np.sin(y), np.cos(y)])


def _sections(path: Path):
    D = np.genfromtxt(path / "SNLS80mV.csv", delimiter=",", skip_header=1)[:, :2]
    t = np.arange(D.shape[0]) / FS_SILVERBOX
    out = {}
    for name, (a, b) in {"train": (100, 40100), "test": (105712, 127400)}.items():
        tt, yy = t[a:b], D[a:b, 1]
        yd = finite_differences(tt, yy)
        out[name] = (D[a:b, 0], yy, yd, finite_differences(tt, yd))
    return out


def study_silverbox(path: Path, n_windows: int, progress: bool) -> dict:
    sec = _sections(path)
    U, Y, YD, YDD = sec["train"]
    Ut, Yt, YDt, YDDt = sec["test"]
    Pt = _silverbox_terms(Ut, Yt, YDt)
    sel = {k: np.zeros(len(SILVERBOX_TERMS)) for k in ("rvm", "gp", "ard", "gp_min_gain")}
    nmse: dict[str, list] = {k: [] for k in sel}
    secs: dict[str, float] = dict.fromkeys(sel, 0.0)
    for w in _progress(range(n_windows), "silverbox", progress):
        s = slice(1000 * w, 1000 * (w + 1))
        P = _silverbox_terms(U[s], Y[s], YD[s])
        g, tg = _timed(fs.GPRVM(min_gain=0.0), P, YDD[s], Y[s])
        r, tr = _timed(fs.RVM(), P, YDD[s])
        a, ta = _ard(P, YDD[s])
        g5, t5 = _timed(fs.GPRVM(min_gain=MIN_GAIN), P, YDD[s], Y[s])
        for key, est, pred, dt in (("gp", g, g.predict(Pt, Yt), tg), ("rvm", r, r.predict(Pt), tr),
                                   ("ard", a, a.predict(Pt), ta),
                                   ("gp_min_gain", g5, g5.predict(Pt, Yt), t5)):
            sel[key] += est.coef_ != 0.0
            nmse[key].append(float(np.mean((YDDt - pred) ** 2) / np.var(YDDt)))
            secs[key] += dt
    return {"n_windows": n_windows, "terms": SILVERBOX_TERMS,
            "derivatives": "central differences (second order), then again for the second",
            "selected_percent": {k: (100 * v / n_windows).tolist() for k, v in sel.items()},
            "test_nmse_per_window": nmse,
            "test_nmse_median": {k: float(np.median(v)) for k, v in nmse.items()},
            "seconds_per_fit": {k: v / n_windows for k, v in secs.items()}}


def plot_silverbox(res: dict, path: Path) -> None:
    plt = _mpl.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    x = np.arange(len(res["terms"]))
    for i, (key, label) in enumerate((("rvm", "RVM"), ("gp", "GP-RVM"), ("ard", "ARDRegression"))):
        axes[0].bar(x + (i - 1) * 0.27, res["selected_percent"][key], width=0.27, label=label)
        axes[1].semilogy(np.arange(1, res["n_windows"] + 1), res["test_nmse_per_window"][key],
                         "o-", ms=3, label=label)
    axes[0].set_xticks(x, res["terms"], rotation=30)
    axes[0].set_ylabel("selected in % of windows")
    axes[0].set_ylim(0, 125)
    axes[0].legend(fontsize=8, ncol=3, loc="upper center")
    axes[1].set_xlabel("training window")
    axes[1].set_ylabel("test NMSE of ÿ")
    fig.suptitle("Silverbox (Wigren & Schoukens 2013), paper Figs. 8 and 10")
    _mpl.finish(fig, path)


# ------------------------------------------------------------------------------ bench
def bench(sizes: tuple[int, ...], progress: bool) -> dict:
    out = {}
    for N in _progress(sizes, "bench", progress):
        stop = N * duffing.DEFAULT_DT
        tr = duffing.noisy_data_set(0, stop=stop)
        P, y, x = _design(3, tr)[:N], tr.yddot[:N], tr.y[:N]
        g, tg = _timed(fs.GPRVM(min_gain=0.0), P, y, x)
        g1, tg1 = _timed(fs.GPRVM(min_gain=0.0), P[:, :2], y, x)
        r, trv = _timed(fs.RVM(), P, y)
        a, ta = _ard(P, y)
        out[N] = {"gp_rvm": {"n_iter": int(g.n_iter_), "seconds": tg},
                  "gp_rvm_scenario1": {"n_iter": int(g1.n_iter_), "seconds": tg1},
                  "rvm": {"n_iter": int(r.n_iter_), "seconds": trv},
                  "ard_regression": {"n_iter": int(a.n_iter_), "seconds": ta}}
    return out


# ------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few data sets (smoke test)")
    ap.add_argument("--json", type=Path, help="write all numbers to this JSON file")
    ap.add_argument("--out", type=Path, default=Path("gp_rvm_out"), help="figures go here")
    ap.add_argument("--silverbox", type=Path, default=os.environ.get("FMU_SURROGATE_SILVERBOX"),
                    help="folder with SNLS80mV.csv (default: $FMU_SURROGATE_SILVERBOX)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = ap.parse_args(argv)
    progress = not args.no_progress
    args.out.mkdir(parents=True, exist_ok=True)
    q = args.quick
    res: dict = {"quick": q, "paper": PAPER_TEXT}
    t0 = time.perf_counter()

    res["polynomial"] = study_polynomial(5 if q else 100, progress)
    plot_polynomial(res["polynomial"], args.out / "polynomial_a_d.png")
    log("(a) polynomial case: " + json.dumps(res["polynomial"]["summary"]))

    with tempfile.TemporaryDirectory() as tmp:
        res["duffing"] = study_duffing(2 if q else 10, Path(tmp), progress)
    log("(b) Duffing data, FMU vs solver: " + json.dumps(res["duffing"]["data"]))
    print_duffing(res["duffing"])

    sb = args.silverbox
    if sb is not None and (Path(sb) / "SNLS80mV.csv").is_file():
        res["silverbox"] = study_silverbox(Path(sb), 3 if q else 40, progress)
        plot_silverbox(res["silverbox"], args.out / "silverbox.png")
        log("\n(c) Silverbox: selected % " + " | ".join(
            f"{k}: " + ", ".join(f"{n} {p:.0f}" for n, p in zip(SILVERBOX_TERMS, v))
            for k, v in res["silverbox"]["selected_percent"].items()))
        log("    test NMSE median: " + json.dumps(res["silverbox"]["test_nmse_median"]))
    else:
        res["silverbox"] = None
        log("\n(c) Silverbox skipped: give --silverbox DIR (or FMU_SURROGATE_SILVERBOX) with "
            "SNLS80mV.csv of the Silverbox benchmark (nonlinearbenchmark.org).")

    res["bench"] = bench((500,) if q else (500, 5000), progress)
    log("\nbench (iterations, seconds per fit): " + json.dumps(res["bench"]))
    res["seconds"] = time.perf_counter() - t0
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=1, default=float))
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
