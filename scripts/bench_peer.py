#!/usr/bin/env python
"""Peer column: the nonlinear pH surrogate against an unstructured NARX black box, same data.

For each nonlinear vendor benchmark FMU (``power_damper``: v → F, static power law;
``progressive_spring``: v → F, hardening spring; ``saturating_inductor``: V → i) three 10 s runs
at 100 Hz under random-phase multisine inputs are harvested (the experiment of the nonlinear
identification tests); the first two train, the last is held out.  Two models are fitted:

* the pH surrogate, :func:`fmu_surrogate.identify.select_dataset` as ``identify`` runs it (the
  linear model first, the nonlinear one where the linear one misses);
* a NARX black box: scikit-learn's ``MLPRegressor`` on lagged inputs and outputs
  (``y_k = f(u_k … u_{k−L}, y_{k−1} … y_{k−L})``), trained one step ahead on the training runs,
  simulated free-running (its own past outputs fed back) on the held-out run.

Three columns per model (and the FMU itself as reference where it applies):

1. **held-out error**: max |ŷ − y| over the swing of y (the worst output) of the free run on the
   held-out run;
2. **passivity violations**: from rest (the FMU with zero initial elongation/flux, the surrogate
   from its rest state ``x = 0``, the NARX from zero histories), driven by random multisines of
   the training band with amplitudes up to 1.5× the training one; the supplied energy
   ``E(t) = ∫₀ᵗ y u dt`` (power into the component, the FMU's sign) of a passive model from rest
   never drops below zero.  Counted: runs and time points with ``E < −tol`` where
   ``tol = 1e-3 · max |E|`` (the quadrature error of an energy summed from 100 Hz samples; the
   surrogate's is its scheme's exact discrete energy), and the worst ``min E / max |E|``;
3. **closed-loop energy drift**: the model terminated by a passive storage (a mass
   ``m v' = −F`` for the damper and the spring, a capacitor ``C V' = −i`` for the inductor),
   started with the storage's energy ``E₀`` and the model at rest.  Whatever a passive model
   does, the storage's energy can never exceed ``E₀`` (what it gave away went into the
   model, which can only store or dissipate it): reported are ``max_t E(t)/E₀`` and
   ``E(T)/E₀`` (growth above 1 is a violation).  All three models run in the same explicit
   co-simulation loop (semi-implicit Euler on the storage, the model's output after each
   10 ms step, the NARX's from the input at that step): the loop itself adds a little energy,
   as the FMU's column shows.  The surrogate is also coupled power-conservingly
   (:func:`fmu_surrogate.ph.feedback`) and simulated monolithically by
   :func:`fmu_surrogate.ph.simulate` (AVF), where ``feedback`` accepts it (not with a
   nonlinear feedthrough: the damper's); that column shows the model alone.

Usage::

    python scripts/bench_peer.py [--json PATH] [--quick] [--lags L] [--hidden N [N ...]]

``--quick``: the spring only, two random runs, a smaller network.  The black box's figures
depend strongly on its lags and sizes (and its random start): on the damper, lags 4 with
(32, 32) miss the held-out run by 98 %, lags 2 with (64, 64) by 5 %; the options try others.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's fmu_surrogate

#: component -> input, output, training amplitude, multisine band (Hz), parameters at rest,
#: the passive termination (mass or capacitance) and its initial flow/effort
CASES: dict[str, dict] = {
    "power_damper": {"io": ("v", "F"), "amp": 1.0, "band": (0.2, 5.0), "rest": {},
                     "storage": 1.0, "start": 1.0},
    "progressive_spring": {"io": ("v", "F"), "amp": 0.15, "band": (0.5, 2.0),
                           "rest": {"x0": 0.0}, "storage": 1.0, "start": 0.3},
    "saturating_inductor": {"io": ("V", "i"), "amp": 5.0, "band": (0.5, 3.0),
                            "rest": {"psi0": 0.0}, "storage": 0.1, "start": 4.0},
}
#: record length (s) and communication step (s)
T, DT = 10.0, 0.01
#: NARX lags and hidden layer sizes (default, --quick)
LAGS = 4
HIDDEN = {False: (32, 32), True: (16, 16)}


def multisine(seed: int, amplitude: float, band: tuple[float, float]) -> tuple:
    """``(t, u)``: a random-phase multisine with every harmonic of 1/T in ``band``, peak
    ``amplitude``."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, T + DT / 2, DT)
    f = np.arange(max(1, round(band[0] * T)), round(band[1] * T) + 1) / T
    u = np.cos(2 * np.pi * f[:, None] * t[None] + rng.uniform(0, 2 * np.pi, f.size)[:, None])
    u = u.sum(axis=0)
    return t, amplitude * u / np.abs(u).max()


# ---------------------------------------------------------------------------- the NARX model
class Narx:
    """``y_k = f(u_k … u_{k−L}, y_{k−1} … y_{k−L})`` by an MLP on standardised signals."""

    def __init__(self, lags: int, hidden: tuple[int, ...], seed: int = 0) -> None:
        self.lags, self.hidden, self.seed = lags, hidden, seed

    def _rows(self, u: np.ndarray, y: np.ndarray) -> np.ndarray:
        L = self.lags
        cols = [u[L - j:len(u) - j] for j in range(L + 1)]
        cols += [y[L - j:len(y) - j] for j in range(1, L + 1)]
        return np.stack(cols, axis=1)

    def fit(self, runs: list[tuple[np.ndarray, np.ndarray]]) -> Narx:
        """One-step-ahead fit on ``[(u, y), ...]``."""
        from sklearn.neural_network import MLPRegressor

        u_all = np.concatenate([u for u, _ in runs])
        y_all = np.concatenate([y for _, y in runs])
        self.su_, self.sy_ = float(np.std(u_all)), float(np.std(y_all))
        self.my_ = float(np.mean(y_all))
        X = np.concatenate([self._rows(u / self.su_, (y - self.my_) / self.sy_)
                            for u, y in runs])
        Y = np.concatenate([(y[self.lags:] - self.my_) / self.sy_ for _, y in runs])
        self.net_ = MLPRegressor(hidden_layer_sizes=self.hidden, activation="tanh",
                                 max_iter=2000, tol=1e-7, random_state=self.seed,
                                 learning_rate_init=1e-3).fit(X, Y)
        W, b = self.net_.coefs_, self.net_.intercepts_
        self._layers = list(zip(W, b))
        return self

    def step(self, uh: np.ndarray, yh: np.ndarray) -> float:
        """The next output from the input history ``u_k … u_{k−L}`` and ``y_{k−1} … y_{k−L}``
        (newest first, physical units)."""
        a = np.concatenate([uh / self.su_, (yh - self.my_) / self.sy_])
        for i, (W, b) in enumerate(self._layers):
            a = a @ W + b
            if i < len(self._layers) - 1:
                a = np.tanh(a)
        return float(a[0]) * self.sy_ + self.my_

    def free_run(self, u: np.ndarray, y_start: np.ndarray) -> np.ndarray:
        """Outputs under ``u`` with the first ``L`` outputs given (zeros: from rest)."""
        L, y = self.lags, np.zeros(len(u))
        y[:L] = y_start
        for k in range(L, len(u)):
            y[k] = self.step(u[k - L:k + 1][::-1], y[k - L:k][::-1])
        return y


# ------------------------------------------------------------------------ the FMU as a loop
class FmuLoop:
    """An FMI 2 co-simulation FMU stepped by hand: one input, one output."""

    def __init__(self, path: Path, inp: str, out: str) -> None:
        from fmpy import extract, read_model_description

        self.md = read_model_description(str(path))
        self.dir = extract(str(path))
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.inp, self.out = self.vr[inp], self.vr[out]

    def run(self, params: dict, u_of: object, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` steps; the input of step k is ``u_of(k, y_k)`` (``y_k``: output at ``t_k``)."""
        from fmpy.fmi2 import FMU2Slave

        fmu = FMU2Slave(guid=self.md.guid, unzipDirectory=self.dir,
                        modelIdentifier=self.md.coSimulation.modelIdentifier,
                        instanceName="peer")
        fmu.instantiate()
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        for k, v in params.items():
            fmu.setReal([self.vr[k]], [float(v)])
        u, y = np.zeros(n + 1), np.zeros(n + 1)
        u[0] = u_of(0, np.nan)
        fmu.setReal([self.inp], [u[0]])
        fmu.exitInitializationMode()
        y[0] = fmu.getReal([self.out])[0]
        u[0] = u_of(0, y[0])
        for k in range(n):
            fmu.setReal([self.inp], [u[k]])
            fmu.doStep(currentCommunicationPoint=k * DT, communicationStepSize=DT)
            y[k + 1] = fmu.getReal([self.out])[0]
            u[k + 1] = u_of(k + 1, y[k + 1])
        fmu.terminate()
        fmu.freeInstance()
        return u, y

    def close(self) -> None:
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)


def explicit_loop(model_step: object, case: dict) -> np.ndarray:
    """Storage energy of the explicit coupling ``s' = −y/c`` (semi-implicit Euler), ``u = s``;
    ``model_step(k, u_k) -> y_k``."""
    c, n = case["storage"], round(T / DT)
    s = np.empty(n + 1)
    s[0] = case["start"]
    for k in range(n):
        s[k + 1] = s[k] - DT * model_step(k, s[k]) / c
    return 0.5 * c * s**2


# ---------------------------------------------------------------------------------- measures
def supplied(u: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``E(t_k) = ∫₀^{t_k} y u dt`` with ``u`` held over each step (what the FMU receives) and
    ``y`` by the trapezoidal rule."""
    return np.concatenate([[0.0], np.cumsum(0.5 * DT * u[:-1] * (y[1:] + y[:-1]))])


#: relative tolerance of a negative supplied energy: the quadrature error of an energy summed
#: from outputs sampled at 100 Hz (the FMU itself, passive by its law, reaches −3.4e-4 of the
#: run's largest |E| on the spring); the surrogate's scheme energy is exact to round-off
TOL_REL = 1e-3


def violations(E: np.ndarray) -> int:
    """Time points where the supplied energy from rest is below ``−TOL_REL · max |E|``."""
    tol = TOL_REL * max(float(np.abs(E).max()), 1e-300)
    return int(np.sum(E < -tol))


def rel_error(y_hat: np.ndarray, y: np.ndarray) -> float:
    """The worst output's ``max |ŷ − y|`` over its swing (what ``identify`` reports)."""
    from fmu_surrogate.fmu.dataset import relative_errors

    return float(np.max(relative_errors(y, y_hat)))


def component(name: str, case: dict, fmu_path: Path, quick: bool, lags: int,
              hidden: tuple[int, ...]) -> dict:
    """Fit both models on one component and measure the three columns."""
    import fmu_surrogate as fs
    from fmu_surrogate.identify import LinearPHIdentifier, select_dataset

    inp, out = case["io"]
    sigs = [{inp: fs.signals.ArraySignal(*multisine(s, case["amp"], case["band"]),
                                         interpolation="zoh")} for s in (1, 2, 3)]
    ds = fs.harvest(fmu_path, None, signals=sigs, stop_time=T, step=DT, progress=False,
                    workers=1)
    runs = [(ds[inp].values[r], ds[out].values[r]) for r in range(3)]
    row: dict = {"component": name, "input": inp, "output": out}

    t0 = time.perf_counter()
    # no offsets: the components have no preload (a force of zero at rest), and the passivity
    # and closed-loop columns below drive the core through its one port
    choice = select_dataset(ds, linear=LinearPHIdentifier(offsets=False))
    row["ph_fit_s"] = time.perf_counter() - t0
    row["ph_method"] = choice.method
    sur = choice.estimator.to_surrogate()
    t = ds["time"].values
    u_h, y_h = runs[2]
    row["ph_heldout"] = rel_error(fs.ph.simulate(sur, t, u_h[:, None]).y[:, 0], y_h)

    t0 = time.perf_counter()
    narx = Narx(lags, hidden).fit(runs[:2])
    row["narx_fit_s"] = time.perf_counter() - t0
    row["narx_heldout"] = rel_error(narx.free_run(u_h, y_h[:lags]), y_h)

    # passivity from rest under random inputs up to 1.5x the training amplitude
    core = sur.system
    Tu, Ty = float(sur.ports.Tu[0, 0]), float(sur.ports.Ty[0, 0])  # pH port -> FMU signs
    loop = FmuLoop(fmu_path, inp, out)
    seeds = range(100, 102 if quick else 105)
    counts = {"fmu": [0, 0], "ph": [0, 0], "narx": [0, 0]}
    worst = {"fmu": 0.0, "ph": 0.0, "narx": 0.0}
    for seed in seeds:
        amp = case["amp"] * np.random.default_rng(seed).uniform(0.5, 1.5)
        tr, ur = multisine(seed, amp, case["band"])
        _, y_f = loop.run(case["rest"], lambda k, _y, ur=ur: ur[k], len(tr) - 1)
        tr_ph = fs.ph.simulate(core, tr, (Tu * ur)[:, None], np.zeros(core.n_states), hold="zoh")
        y_n = narx.free_run(ur, np.zeros(lags))
        # the surrogate: its scheme's own supplied energy Σ h ȳ ū (Tu = Ty = ±1: the same
        # product in the FMU's variables), = stored + dissipated to the Newton tolerance
        for key, E in (("fmu", supplied(ur, y_f)), ("ph", tr_ph.supplied),
                       ("narx", supplied(ur, y_n))):
            v = violations(E)
            worst[key] = min(worst[key], float(E.min() / max(np.abs(E).max(), 1e-300)))
            counts[key][0] += v > 0
            counts[key][1] += v
    row["passivity_runs"] = len(seeds)
    for key, (r, p) in counts.items():
        row[f"{key}_violating_runs"], row[f"{key}_violating_points"] = r, p
        row[f"{key}_min_energy_rel"] = worst[key]

    # closed loop with a passive storage
    n, c = round(T / DT), case["storage"]
    s = np.empty(n + 1)
    s[0] = case["start"]

    def drive(k: int, y: float) -> float:  # the loop integrates the storage as it steps
        if k > 0:  # y = y_k: the FMU's answer to the inputs up to t_{k-1}
            s[k] = s[k - 1] - DT * y / c
        return s[k]

    loop.run(case["rest"], drive, n)
    loop.close()
    E_f = 0.5 * c * s**2
    hist_u, hist_y = np.zeros(lags + 1), np.zeros(lags)

    def narx_step(k: int, uk: float) -> float:
        hist_u[1:] = hist_u[:-1]
        hist_u[0] = uk
        yk = narx.step(hist_u, hist_y)
        hist_y[1:] = hist_y[:-1]
        hist_y[0] = yk
        return yk

    E_n = explicit_loop(narx_step, case)
    state = {"x": np.zeros(core.n_states)}

    def ph_step(k: int, uk: float) -> float:  # one held step, like the FMU's doStep
        tr = fs.ph.simulate(core, [k * DT, (k + 1) * DT], np.full((2, 1), Tu * uk),
                            state["x"], hold="zoh")
        state["x"] = tr.x[-1]
        return Ty * float(tr.y[-1, 0])

    E_p = explicit_loop(ph_step, case)
    E_m = _ph_closed_loop(core, Tu, case)
    E0 = 0.5 * c * case["start"] ** 2
    row["ph_monolithic"] = E_m is not None
    if E_m is not None:
        row["ph_monolithic_energy_max"] = float(np.max(E_m) / E0)
        row["ph_monolithic_energy_end"] = float(E_m[-1] / E0)
    for key, E in (("fmu", E_f), ("ph", E_p), ("narx", E_n)):
        row[f"{key}_energy_max"] = float(np.nanmax(E) / E0)
        row[f"{key}_energy_end"] = float(E[-1] / E0)
    return row


def _ph_closed_loop(core: object, Tu: float, case: dict) -> np.ndarray | None:
    """Storage energy of the surrogate's core joined to the storage by a gyrator, simulated
    monolithically (``None`` where :func:`fmu_surrogate.ph.feedback` refuses the surrogate: a
    nonlinear feedthrough).

    The storage is ``p' = u_b``, ``y_b = p/c`` (``H = p²/2c``); the component sees
    ``u_a = Tu·s`` and returns ``Ty·y_a``, so ``u_a = −k y_b`` and ``u_b = k y_a`` with
    ``k = −Tu`` (``Tu = Ty = ±1``: a power-conserving coupling either way).
    """
    import fmu_surrogate as fs

    c = case["storage"]
    store = fs.ph.LinearPH(J=[[0.0]], R=[[0.0]], Q=[[1.0 / c]], B=[[1.0]])
    try:
        loop = fs.ph.feedback(core, store, gain=-Tu * 1.0)
    except fs.ph.StructureError:
        return None
    t = np.arange(0.0, T + DT / 2, DT)
    x0 = np.concatenate([np.zeros(core.n_states), [c * case["start"]]])
    tr = fs.ph.simulate(loop, t, None, x0)
    p = tr.x[:, -1]
    return 0.5 * p**2 / c


# ------------------------------------------------------------------------------------ output
def _line(r: dict) -> str:
    return (f"{r['component']:<20} {r['ph_heldout']:9.3%} {r['narx_heldout']:9.3%}   "
            f"{r['fmu_violating_runs']}/{r['passivity_runs']} {r['fmu_violating_points']:>5}  "
            f"{r['ph_violating_runs']}/{r['passivity_runs']} {r['ph_violating_points']:>5}  "
            f"{r['narx_violating_runs']}/{r['passivity_runs']} {r['narx_violating_points']:>5}   "
            f"{r['fmu_energy_max']:.4f}/{r['fmu_energy_end']:.4f}  "
            f"{r['ph_energy_max']:.4f}/{r['ph_energy_end']:.4f}  "
            f"{r['narx_energy_max']:.4f}/{r['narx_energy_end']:.4f}  " + (
                f"{r['ph_monolithic_energy_max']:.4f}/{r['ph_monolithic_energy_end']:.4f}"
                if r["ph_monolithic"] else f"{'n/a':>13}"))


def main(argv: list[str] | None = None) -> int:
    """Run the comparison and print the table."""
    import sklearn

    from fmu_surrogate.benchmarks.build import build_benchmarks

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--quick", action="store_true", help="the spring only, fewer runs")
    ap.add_argument("--lags", type=int, default=LAGS, help=f"NARX lags (default {LAGS})")
    ap.add_argument("--hidden", type=int, nargs="+",
                    help=f"NARX hidden layer sizes (default {HIDDEN[False]}, --quick "
                         f"{HIDDEN[True]})")
    args = ap.parse_args(argv)
    lags, hidden = args.lags, tuple(args.hidden or HIDDEN[args.quick])
    names = ["progressive_spring"] if args.quick else list(CASES)
    info = {"narx": f"scikit-learn {sklearn.__version__} MLPRegressor, tanh, hidden "
                    f"{hidden}, lags {lags} (u_k..u_k-{lags}, y_k-1..y_k-{lags}), "
                    "one-step-ahead fit, free-run simulation",
            "ph": "fmu_surrogate.identify.select_dataset (the CLI's defaults)",
            "data": f"3 runs of {T} s at {1 / DT:.0f} Hz, multisines; runs 0-1 train, 2 held out"}
    print(f"NARX: {info['narx']}\npH:   {info['ph']}\ndata: {info['data']}")
    print(f"{'component':<20} {'held-out error':>19}   {'passivity violations (runs, points)':<37}"
          f"  {'closed loop: storage energy max/end over start':}")
    print(f"{'':<20} {'pH':>9} {'NARX':>9}   {'FMU':>9}  {'pH':>9}  {'NARX':>9}   "
          f"{'FMU':>13}  {'pH':>13}  {'NARX':>13}  {'pH monolith.':>13}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-peer-") as tmp:
        fmus = Path(tmp)
        build_benchmarks(fmus, names)  # only the FMUs compared
        for name in names:
            row = component(name, CASES[name], fmus / f"{name}.fmu", args.quick, lags,
                            hidden)
            rows.append(row)
            print(_line(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"models": info, "lags": lags,
                                               "hidden": list(hidden),
                                               "sklearn": sklearn.__version__,
                                               "table": rows}, indent=2, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
