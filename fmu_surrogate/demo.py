"""The main job on the bundled benchmark FMUs: ``fmu-surrogate demo OUT``.

The whole pipeline, end to end:

1. **build** the benchmark FMUs (C sources compiled with the system compiler, cached);
2. **harvest** each under designed inputs and parameter sets — the Cauer filter's plan
   deliberately contains resistor laws whose Newton solve fails: those runs are recorded with
   their reason;
3. **identify** a reduced linear pH model (n = 10) of the 100-state mass-spring-damper chain and
   the RC network's pH-DAE effort by Gaussian processes, each on one run, and measure accuracy on
   a *held-out* run with another input (never on the run that was fitted);
4. **save** both surrogates as JSON files with provenance;
5. **export** the chain's surrogate as a standalone FMU (FMI 2.0, co-simulation and model
   exchange, generated C compiled here) and as a Modelica model;
6. **validate** the chain's surrogate — its JSON file simulated structure-preservingly, and the
   exported FMU — against the benchmark FMU it replaces, on the held-out input;
7. **couple** two copies of the chain surrogate through a power-conserving interconnection and
   report the energy balance of the coupled simulation;

and write ``OUT/report.md`` (the figures and numbers on one page), ``OUT/summary.json``, the
datasets (``*.nc``), surrogates (``*.json``, ``*.fmu``) and plots (``*.png``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["run_demo"]

MSD_ORDER = 10


def _campaigns(quick: bool) -> dict[str, dict[str, Any]]:
    """Campaign settings per benchmark: signals, parameter plan, experiment."""
    from fmu_surrogate.fmu import signals as sig
    from fmu_surrogate.fmu.campaigns import plans

    t_rc = np.linspace(0.0, 10 * np.pi, 3001)
    t_pd = np.linspace(0.0, 10.0 if quick else 30.0, 3001)
    n_lhs = 6 if quick else 24
    return {
        "rc_network": {
            # signal 0 trains, signal 1 (another amplitude and frequency) is held out; G = 2 with
            # signal 0 drains the capacitor: a recorded failure
            "signals": [{"u": sig.ArraySignal(t_rc, 1.0 + np.sin(t_rc))},
                        {"u": sig.ArraySignal(t_rc, 1.2 + 0.6 * np.sin(1.7 * t_rc))}],
            "parameters": plans.grid(G=[0.5, 1.0, 2.0]),
            "stop_time": 10 * np.pi, "step": 10 * np.pi / 3000,
        },
        "pendulum": {
            "signals": [{"u": sig.ArraySignal(t_pd, np.cos(2 * np.pi * t_pd))}],
            "parameters": plans.grid(alpha0=[np.pi / 8, np.pi / 4]) if not quick else None,
            "stop_time": float(t_pd[-1]), "step": 0.01,
        },
        "msd_chain": {
            # signal set 0 trains, set 1 (multisine + noise) is held out
            "signals": [
                {"F1": sig.Chirp(f0=0.05, f1=0.5, t1=40.0), "F2": sig.PRBS(bit_period=2.0, seed=1)},
                {"F1": sig.SchroederMultisine(frequencies=tuple(0.05 * k for k in range(1, 11)), rms=0.7),
                 "F2": sig.BandLimitedNoise(f_high=0.3, duration=40.0, std=0.5, seed=7)},
            ],
            "parameters": None,
            "stop_time": 40.0, "step": 0.05,
        },
        "duffing": {
            "signals": [{"u": sig.BandLimitedNoise(f_high=10.0, duration=10.0, std=50.0, seed=s)}
                        for s in range(2 if quick else 5)],
            "parameters": None,
            "stop_time": 10.0, "step": 0.02,
        },
        "cauer": {
            # w = (w1, w2, w3) around the true law (1, 0, 0.01); negative w3 makes the branch law
            # non-monotone, so Newton fails for large |v|: these runs are recorded as failures.
            "signals": [{"vin": sig.BandLimitedNoise(f_high=0.5, duration=60.0, std=4.0, seed=3)}],
            "parameters": plans.latin_hypercube({"w2": (-0.05, 0.05), "w3": (-0.02, 0.03)}, n_lhs,
                                                seed=0),
            "stop_time": 60.0, "step": 0.05,
        },
    }


_PLOTTED = {
    "rc_network": ["u", "x1", "x3"],
    "pendulum": ["q1", "q2", "lambda"],
    "msd_chain": ["F1", "F2", "v1", "v2"],
    "duffing": ["u", "y"],
    "cauer": ["vin", "v_nl", "i_nl"],
}


def _run_with(ds: Any, signals: dict[str, Any], **params: float) -> int:
    """Label of the run with the signal set ``signals`` and the given parameter values."""
    from fmu_surrogate.fmu.dataset.schema import param_var_name

    text = json.dumps({k: v.describe() for k, v in signals.items()}, sort_keys=True)
    sel = np.asarray([str(v) == text for v in ds["signal"].values])
    for k, v in params.items():
        sel &= np.isclose(np.asarray(ds[param_var_name(k)].values, dtype=float), v)
    return int(ds["run"].values[np.flatnonzero(sel)[0]])


def _identify_msd(ds: Any, sets: list, out: Path, quick: bool) -> tuple[Any, dict[str, Any]]:
    """Reduced linear pH model of the chain from run 0; accuracy on held-out run 1."""
    from fmu_surrogate.fmu.dataset import relative_errors, run_arrays
    from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
    from fmu_surrogate.plots import plot_comparison

    names = ["F1", "F2", "v1", "v2"]
    (t, X), = run_arrays(ds, names, runs=[_run_with(ds, sets[0])])
    (th, Xh), = run_arrays(ds, names, runs=[_run_with(ds, sets[1])])
    # the defaults: subspace start, Levenberg-Marquardt on the pH manifold; the dataset's input
    # hold (zero-order hold of a co-simulation harvest) in the exact discretisation
    est = LinearPHIdentifier(MSD_ORDER, learn=("J", "R", "Q", "B"), max_iter=20 if quick else 60)
    est.fit_dataset(ds, inputs=names[:2], outputs=names[2:], runs=[_run_with(ds, sets[0])])
    y_fit = est.predict(t, X[:, :2])
    y_held = est.predict(th, Xh[:, :2])
    rel_train = float(relative_errors(X[:, 2:], y_fit).max())
    rel_held = float(relative_errors(Xh[:, 2:], y_held).max())
    plot_comparison(th, Xh[:, 2:], y_held, ["v1", "v2"], units=["m/s", "m/s"],
                    labels=("FMU (n = 100)", f"pH surrogate (n = {MSD_ORDER})"),
                    title=f"Mass-spring-damper chain, held-out input: relative max error "
                          f"{rel_held:.2%}", path=out / "msd_chain_heldout.png")
    system = est.system_  # the pH core (the FMU's names are added when saving)
    return est, {
        "n_model": MSD_ORDER,
        "relative_max_error_training": rel_train,
        "relative_max_error_heldout": rel_held,
        "structure_violation": system.structure_violation(),
        "min_eig_Q": float(np.linalg.eigvalsh(system.Q).min()),
        "iterations": est.result_.n_iter,
        "seconds": est.result_.time,
    }


def _identify_rc(ds: Any, sets: list, quick: bool) -> tuple[Any, dict[str, Any]]:
    """GP effort of the RC network from the training run; effort RMSE on the held-out run."""
    from fmu_surrogate.benchmarks import rc_network
    from fmu_surrogate.fmu.dataset import run_arrays
    from fmu_surrogate.identify.gp.effort import GPEffortIdentifier

    names = ["x1", "x2", "x3", "der(x1)", "u"]
    (t, X), = run_arrays(ds, names, runs=[_run_with(ds, sets[0], G=1.0)])
    (_, Xh), = run_arrays(ds, names, runs=[_run_with(ds, sets[1], G=1.0)])
    train = np.sort(np.random.default_rng(0).choice(len(t), 64, replace=False))
    x, u = X[:, :3], X[:, 4:5]
    xdot = np.column_stack([X[:, 3], np.zeros(len(t)), np.zeros(len(t))])
    est = GPEffortIdentifier(**rc_network.matrices(1.0), max_iter=60 if quick else 200)
    est.fit(x[train], xdot[train], u[train])
    xh = Xh[:, :3]
    rmse = np.sqrt(np.mean((est.effort(xh) - rc_network.effort(xh)) ** 2, axis=0))
    return est, {"n_train": len(train), "effort_rmse_heldout": rmse.tolist(),
                 "seconds": est.result_.time}


def _export(surrogate: Path, out: Path, name: str) -> dict[str, Any]:
    """The surrogate file as a standalone FMU and as a Modelica model."""
    from fmu_surrogate.export import export_fmu, export_modelica

    fmu = export_fmu(surrogate, out / f"{name}.fmu", fmi_version=2)
    mo = export_modelica(surrogate, out / f"{name}.mo")
    return {"fmu": fmu.name, "fmu_bytes": fmu.stat().st_size, "modelica": mo.name}


def _couple_msd(system: Any, out: Path) -> dict[str, Any]:
    """Two chain surrogates joined at port 2 of the first and port 1 of the second."""
    from fmu_surrogate.ph import interconnect, simulate

    gain = 0.5
    C = np.array([[0.0, gain], [-gain, 0.0]])  # û + Ĉ ŷ = 0: a gyrator, power-conserving
    coupled = interconnect([system, system], C, [[1], [0]], names=["left", "right"])
    t = np.linspace(0.0, 40.0, 4001)
    u = np.column_stack([np.sin(0.6 * t) * (t < 20), 0.3 * np.cos(0.2 * t)])
    traj = simulate(coupled, t, u, np.zeros(coupled.J.shape[0]))
    traj.plot_energy(path=out / "coupled_energy.png")
    scale = float(np.max(np.abs(traj.H))) or 1.0
    return {
        "systems": 2, "coupling": C.tolist(), "states": int(coupled.J.shape[0]),
        "energy_residual": float(traj.energy_residual),
        "energy_residual_relative": float(abs(traj.energy_residual) / scale),
        "J_skew_violation": float(np.abs(coupled.J + coupled.J.T).max()),
    }


def _report(out: Path, summary: dict[str, Any]) -> None:
    h = summary["harvest"]
    ident = summary["identify"]
    val = summary["validate"]
    lines = [
        "# fmu-surrogate demo report", "",
        f"Pipeline run in {summary['seconds']:.0f} s on the bundled benchmark FMUs.", "",
        "## 1. Harvest", "",
        "| FMU | runs |", "|---|---|",
        *[f"| {name} | {v['summary']} |" for name, v in h.items()], "",
        *[f"![{name}]({name}_runs.png)" for name in h], "",
        "Cauer filter: which resistor laws simulate (failed runs carry the FMU's reason):", "",
        "![cauer feasibility](cauer_feasibility.png)", "",
        "## 2. Identify (accuracy on held-out runs)", "",
        (f"* Mass-spring-damper chain (n = 100) → linear pH model n = {MSD_ORDER}: relative max "
        f"output error **{ident['msd_chain']['relative_max_error_heldout']:.2%} on the held-out "
        f"input** ({ident['msd_chain']['relative_max_error_training']:.2%} on the training "
        f"run); J skew, R ⪰ 0, Q ≻ 0 exactly (min eig Q = {ident['msd_chain']['min_eig_Q']:.3g})."),
        f"* RC network → GP effort from {ident['rc_network']['n_train']} samples: RMSE of z on "
        "the held-out run " + ", ".join(f"{v:.1e}" for v in ident["rc_network"]["effort_rmse_heldout"])
        + ".", "",
        "![msd held-out](msd_chain_heldout.png)", "",
        "## 3. Export", "",
        (f"`{summary['export']['fmu']}`: a standalone FMU (FMI 2.0, co-simulation with the exact "
         "zero-order-hold step and model exchange; generated C, no Python at run time) and "
         f"`{summary['export']['modelica']}`, the same model in Modelica."), "",
        "## 4. Validate against the reference FMU", "",
        (f"`msd_chain_n{MSD_ORDER}.json`, simulated structure-preservingly (implicit midpoint, "
        "the FMU's zero-order-hold inputs), against `msd_chain.fmu` on the held-out input:"), "",
        "```", val["msd_chain"]["table"], "```", "",
        "![msd validation](msd_chain_validation.png)", "",
        f"The exported FMU `{summary['export']['fmu']}` against the same reference:", "",
        "```", val["msd_chain_fmu"]["table"], "```", "",
        "## 5. Couple", "",
        (f"Two chain surrogates joined by a skew-symmetric (power-conserving) coupling: "
        f"{summary['couple']['states']} states, coupled J skew to "
        f"{summary['couple']['J_skew_violation']:.1e}; energy-balance residual of the simulation "
        f"{summary['couple']['energy_residual']:.2e} "
        f"({summary['couple']['energy_residual_relative']:.1e} of the stored energy)."), "",
        "![coupled energy](coupled_energy.png)", "",
    ]
    (out / "report.md").write_text("\n".join(lines))


def run_demo(out: str | Path = "demo-out", quick: bool = False,
             workers: int | None = None) -> dict[str, Any]:
    """Run the whole pipeline on the benchmark FMUs; return the summary (also ``summary.json``).

    Parameters
    ----------
    out : path
        Output folder (created).  Re-running reuses finished campaigns.
    quick : bool
        Fewer and shorter runs and iterations (used by the tests).
    workers : int, optional
        Worker processes per campaign (default: all cores).

    Returns
    -------
    dict
        What ``summary.json`` holds: harvest summaries, identification accuracy on held-out
        runs, the exported files, validation tables (surrogate file and exported FMU), the
        coupled energy balance, seconds.
    """
    from fmu_surrogate.benchmarks.build import build_benchmarks
    from fmu_surrogate.fmu.campaigns.campaign import harvest, summarize
    from fmu_surrogate.ph import save, with_names
    from fmu_surrogate.plots import plot_dataset, plot_feasibility
    from fmu_surrogate.validation import validate

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    campaigns = _campaigns(quick)
    print(f"[1/7] building the benchmark FMUs into {out / 'fmus'}")
    fmus = build_benchmarks(out / "fmus", names=list(campaigns))

    print("[2/7] harvesting")
    summary: dict[str, Any] = {"harvest": {}, "identify": {}, "validate": {}}
    datasets = {}
    for name, settings in campaigns.items():
        ds = harvest(fmus[name], out / f"{name}.nc", workers=workers, timeout=120.0, **settings)
        datasets[name] = ds
        text = summarize(ds)
        print(f"  {name:11s} {text}")
        summary["harvest"][name] = {"file": f"{name}.nc", "summary": text}
        plot_dataset(ds, _PLOTTED[name], path=out / f"{name}_runs.png")
    plot_feasibility(datasets["cauer"], "w2", "w3", truth={"w2": 0.0, "w3": 0.01},
                     title="Cauer filter: which resistor laws simulate",
                     path=out / "cauer_feasibility.png")

    print("[3/7] identifying surrogates (accuracy on held-out runs)")
    msd_est, summary["identify"]["msd_chain"] = _identify_msd(datasets["msd_chain"],
                                                                campaigns["msd_chain"]["signals"],
                                                                out, quick)
    print(f"  msd_chain   n={MSD_ORDER} linear pH model: relative max error "
          f"{summary['identify']['msd_chain']['relative_max_error_heldout']:.2%} held out")
    rc_est, summary["identify"]["rc_network"] = _identify_rc(datasets["rc_network"],
                                                                 campaigns["rc_network"]["signals"],
                                                                 quick)
    print("  rc_network  GP effort RMSE on the held-out run: "
          + ", ".join(f"{v:.1e}" for v in summary["identify"]["rc_network"]["effort_rmse_heldout"]))

    print("[4/7] saving surrogates")
    msd = with_names(msd_est.system_, inputs=["F1", "F2"], outputs=["v1", "v2"])
    rc = with_names(rc_est.to_surrogate(), inputs=["u"], states=["x1", "x2", "x3"])
    for system, name, key, method in ((msd, f"msd_chain_n{MSD_ORDER}", "msd_chain", "linear"),
                                      (rc, "rc_network_gp", "rc_network", "gp")):
        ds = datasets[key]
        save(system, out / f"{name}.json", provenance={
            "source_fmu": {"name": str(ds.attrs.get("fmu_name", "")),
                           "guid": str(ds.attrs.get("fmu_guid", "")),
                           "sha256": str(ds.attrs.get("fmu_sha256", ""))},
            "dataset": {"file": f"{key}.nc"},
            "method": method,
        })

    print("[5/7] exporting the chain's surrogate as an FMU and a Modelica model")
    name = f"msd_chain_n{MSD_ORDER}"
    summary["export"] = _export(out / f"{name}.json", out, name)
    print(f"  {summary['export']['fmu']} ({summary['export']['fmu_bytes'] / 1024:.0f} KiB, "
          f"co-simulation + model exchange), {summary['export']['modelica']}")

    print("[6/7] validating the chain's surrogate against the benchmark FMU (held-out input)")
    held = campaigns["msd_chain"]["signals"][1]
    for key, surrogate in (("msd_chain", out / f"{name}.json"),
                           ("msd_chain_fmu", out / f"{name}.fmu")):
        rep = validate(surrogate, fmus["msd_chain"], inputs=held, stop_time=40.0, step=0.05,
                       rtol=0.05)
        what = "exported FMU" if key.endswith("fmu") else "pH surrogate"
        rep.plot(out / f"{key}_validation.png",
                 title=f"{what} (n = {MSD_ORDER}) vs benchmark FMU (n = 100)")
        summary["validate"][key] = {"table": rep.table(), "passed": rep.passed,
                                    "max_relative": max(e.relative for e in rep.errors)}
        print(f"  {surrogate.name:20s} max relative output error "
              f"{summary['validate'][key]['max_relative']:.2e} "
              f"({'within' if rep.passed else 'OUTSIDE'} 5 %)")

    print("[7/7] coupling two chain surrogates (power-conserving interconnection)")
    summary["couple"] = _couple_msd(msd, out)
    print(f"  energy-balance residual {summary['couple']['energy_residual']:.2e} "
          f"({summary['couple']['energy_residual_relative']:.1e} relative)")

    summary["seconds"] = time.perf_counter() - t0
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    _report(out, summary)
    print(f"done in {summary['seconds']:.1f} s; open {out / 'report.md'}")
    return summary
