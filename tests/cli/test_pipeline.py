"""identify / plot on harvested benchmark data from the command line; export needs an FMU
exporter and is tested with it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fmu_surrogate as fs
from fmu_surrogate.cli import main


@pytest.fixture(scope="module")
def msd_data(tmp_path_factory):
    out = tmp_path_factory.mktemp("msd") / "msd.nc"
    fs.harvest(fs.benchmark_fmu("msd_chain"), out, stop_time=10.0, step=0.05, progress=False,
               signals=[{"F1": fs.signals.Chirp(f0=0.05, f1=0.5, t1=10.0),
                         "F2": fs.signals.PRBS(bit_period=1.0)},
                        {"F1": fs.signals.Constant(1.0), "F2": fs.signals.Constant(-0.5)}])
    return out


def test_identify_linear_writes_a_named_surrogate_with_provenance(msd_data, tmp_path, capsys):
    out = tmp_path / "msd.json"
    assert main(["identify", str(msd_data), "--method", "linear", "--inputs", "F1,F2",
                 "--outputs", "v1,v2", "--order", "4", "--max-iter", "3", "-q", "-o",
                 str(out)]) == 0
    text = capsys.readouterr().out
    assert "run 0 (training)" in text and "run 1 (held-out)" in text
    from fmu_surrogate.ph import LinearPH, load

    s = load(out)  # power-in pairs from rest: the pH core itself, with the FMU's names
    assert isinstance(s, LinearPH) and s.input_names == ("F1", "F2")
    assert s.output_names == ("v1", "v2")
    doc = json.loads(out.read_text())
    assert doc["provenance"]["source_fmu"]["name"] == "msd_chain"
    assert len(doc["provenance"]["dataset"]["sha256"]) == 64
    assert doc["provenance"]["method"] == "linear"
    assert doc["provenance"]["settings"]["max_iter"] == 3
    # the summary's held-out error is the model's prediction error on run 1 (recomputed here)
    from fmu_surrogate.ph import simulate

    (t, X), = fs.run_arrays(msd_data, ["F1", "F2", "v1", "v2"], runs=[1])
    assert np.all(np.isfinite(simulate(s, t, X[:, :2], np.zeros(4), hold="zoh").y))


def test_identify_gp_from_a_bundled_structure(tmp_path, capsys):
    t = np.linspace(0, 10, 1001)
    data = tmp_path / "rc.nc"
    fs.harvest(fs.benchmark_fmu("rc_network"), data, stop_time=10.0, step=0.01, progress=False,
               signals=[{"u": fs.signals.ArraySignal(t, 1 + np.sin(t))}])
    out = tmp_path / "rc.json"
    assert main(["identify", str(data), "--method", "gp", "--structure", "rc_network",
                 "--states", "x1,x2,x3", "--derivatives", "der(x1),,", "--inputs", "u",
                 "--samples", "32", "--max-iter", "30", "-q", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    r2 = float(text.split("other samples of the same runs: R² ")[1].split()[0])
    assert r2 > 0.999  # the targets E ẋ − B u are predicted on unseen samples (measured 0.99999)
    from fmu_surrogate.benchmarks import rc_network
    from fmu_surrogate.ph import PHDAE, load

    s = load(out)
    assert isinstance(s, PHDAE) and s.state_names == ("x1", "x2", "x3")
    (_tt, X), = fs.run_arrays(data, ["x1", "x2", "x3"])
    # effort on the harvested states (measured 1.4e-2 with 32 samples and only 30 Adam steps)
    assert np.abs(s.effort(X) - rc_network.effort(X)).max() < 4e-2


def test_identify_errors_are_one_line(msd_data, tmp_path, capsys):
    assert main(["identify", str(msd_data), "--method", "linear", "--inputs", "F1,NOPE",
                 "--outputs", "v1", "--order", "4", "-o", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert "NOPE" in err and len(err.strip().splitlines()) == 1
    assert main(["identify", str(msd_data), "--method", "gp", "--inputs", "F1",
                 "--states", "v1", "-o", str(tmp_path / "x.json")]) == 2
    assert "needs --structure" in capsys.readouterr().err
    assert main(["identify", str(msd_data), "--max-time", "0", "-o",
                 str(tmp_path / "x.json")]) == 2
    assert "--max-time must be a positive number of seconds" in capsys.readouterr().err


def test_plot_dataset_and_surrogate(msd_data, tmp_path):
    from fmu_surrogate.benchmarks.msd_chain import msd_chain
    from fmu_surrogate.ph import save

    assert main(["plot", str(msd_data), "-o", str(tmp_path / "d.png")]) == 0
    save(msd_chain(n_cells=5), tmp_path / "s.json")
    assert main(["plot", str(tmp_path / "s.json")]) == 0
    assert (tmp_path / "d.png").stat().st_size > 10_000
    assert (tmp_path / "s.png").stat().st_size > 10_000


def _port_dataset(path, runs):
    """A NetCDF dataset of (t, force, velocity) runs on one grid, as harvested."""
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset, save_dataset

    recs = [RunRecord(index=i, values={"F": u[:, 0], "v": y[:, 0]})
            for i, (_, u, y) in enumerate(runs)]
    save_dataset(records_to_dataset(recs, runs[0][0], None, ["F", "v"]), path)
    return path


def test_identify_auto_keeps_linear_on_linear_data(tmp_path, capsys, mass_experiment):
    """A linear mass-spring-damper: auto validates the linear fit on the held-out run and
    keeps it, and the report says so."""
    from fmu_surrogate.ph import LinearPH, load, simulate

    sys = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.3]), np.diag([2.0, 1.0]), [[0.0], [1.0]])
    runs = []
    for seed in (1, 2):
        t, u, _ = mass_experiment(seed, T=8.0)
        runs.append((t, u, simulate(sys, t, u).y))
    data = _port_dataset(tmp_path / "lin.nc", runs)
    out = tmp_path / "auto.json"
    assert main(["identify", str(data), "--method", "auto", "--inputs", "F", "--outputs", "v",
                 "--order", "2", "-q", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "kept: linear" in text and "no nonlinear model needed" in text
    s = load(out)
    assert isinstance(s, LinearPH) and s.input_names == ("F",)
    assert json.loads(out.read_text())["provenance"]["method"] == "auto"


def test_identify_auto_moves_on_to_nonlinear(tmp_path, capsys, mass_experiment):
    data = _port_dataset(tmp_path / "mass.nc", [mass_experiment(s) for s in (1, 2)])
    out = tmp_path / "mass.json"
    code = main(["identify", str(data), "--method", "auto", "--inputs", "F", "--outputs", "v",
                 "--order", "2", "--max-iter", "40", "-q", "-o", str(out)])
    text, err = capsys.readouterr()
    assert code == 0, err
    assert "kept: nonlinear" in text and "exceeds the tolerance" in text
    assert "refitted to all runs" in text
    from fmu_surrogate.ph import NonlinearPH, PortedSystem, load

    s = load(out)  # the dataset fit's drop-in: the nonlinear core with the FMU's names
    assert isinstance(s, PortedSystem) and isinstance(s.system, NonlinearPH)
    assert s.input_names == ("F",) and s.output_names == ("v",)


def test_identify_refits_the_kept_nonlinear_model_to_all_runs(tmp_path, capsys):
    """A power-law damper under a binary velocity at 0.5, 1.5 and 2.5 m/s: fitted to the first
    two it misses the third level; refitted to all three (the default) it has the law."""
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset, save_dataset
    from fmu_surrogate.ph import load, simulate
    from tests.identify.nonlinear.test_finish import T, law, prbs

    recs = [RunRecord(index=i, values={"v": u[:, 0], "F": y[:, 0]})
            for i, (_, u, y) in enumerate(prbs(a, k + 1) for k, a in enumerate((0.5, 1.5, 2.5)))]
    data = tmp_path / "damper.nc"
    save_dataset(records_to_dataset(recs, T, None, ["v", "F"]), data)
    v = 2.5 * np.sin(2 * np.pi * 0.3 * T)
    err = {}
    for refit in ("yes", "no"):
        out = tmp_path / f"{refit}.json"
        assert main(["identify", str(data), "--inputs", "v", "--outputs", "F", "--refit", refit,
                     "-q", "-o", str(out)]) == 0
        text = capsys.readouterr().out
        assert "kept: nonlinear" in text and ("refitted to all runs" in text) == (refit == "yes")
        y = simulate(load(out), T, v[:, None]).y[:, 0]
        err[refit] = np.abs(y - law(v)).max() / np.abs(law(v)).max()
    # measured 1.1e-5 and 3.2 % (tests/identify/nonlinear/test_finish.py)
    assert err["yes"] < 1e-4 and err["no"] > 0.02


def test_identify_linear_drop_in_with_port_pairs(tmp_path, capsys):
    # force in; position, velocity, acceleration out (only F·v is a power pair), order chosen
    # from the data: the written surrogate is the FMU's drop-in (names, units, measured outputs)
    from fmu_surrogate.fmu.dataset.write import save_dataset
    from fmu_surrogate.ph import PortedSystem, load
    from tests.identify.linear.test_dataset import F, dataset, mass_outputs

    data = tmp_path / "mass.nc"
    save_dataset(dataset(F, mass_outputs(F)), data)
    out = tmp_path / "mass.json"
    assert main(["identify", str(data), "--method", "linear", "--inputs", "F", "--outputs",
                 "x,v,a", "--port", "u=F,y=v", "-q", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "chosen from the data" in text and "<- chosen" in text
    rel = float(text.split("run 0 (training): relative max output error ")[1].split()[0])
    assert rel < 1e-6  # measured 4.9e-8 (exact data; OpenBLAS's Haswell and Zen kernels alike)
    s = load(out)
    assert isinstance(s, PortedSystem) and s.output_names == ("x", "v", "a")
    assert s.ports.output_units == ("m", "m/s", "m/s2")


def test_identify_warns_of_inputs_no_run_excites_apart(tmp_path, capsys):
    """One multisine on both inputs, scaled differently per run: the warning comes before the
    fit and says what to harvest instead."""
    from scipy.signal import lsim

    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset, save_dataset

    t = np.linspace(0.0, 20.0, 1001)
    s = np.sin(1.3 * t) + 0.5 * np.sin(3.1 * t)
    recs = []
    for k, ratio in enumerate((2.0, -1.0, 0.5)):
        u = np.column_stack([s, ratio * s])
        _, y, _ = lsim(([1.0], [1.0, 1.0]), u @ [1.0, 0.5], t)
        recs.append(RunRecord(index=k, values={"F1": u[:, 0], "F2": u[:, 1], "y": y}))
    data = tmp_path / "two.nc"
    save_dataset(records_to_dataset(recs, t, None, ["F1", "F2", "y"]), data)
    code = main(["identify", str(data), "--method", "linear", "--inputs", "F1,F2", "--outputs",
                 "y", "--order", "1", "-q", "-o", str(tmp_path / "two.json")])
    text, err = capsys.readouterr()
    assert code == 0, err
    first = text.splitlines()[0]
    assert first.startswith("warning: inputs F1 and F2 change as one signal scaled")
    assert "other ratios in other runs only" in first and "a signal of its own" in first


def test_identify_linear_leaves_a_power_the_fmu_shows_out_and_says_so(tmp_path, capsys):
    """The damped mass with its power P = F v in W as a further output: --method linear
    leaves P out of the fit and names the product, as the default method does."""
    from fmu_surrogate.fmu.dataset.write import save_dataset
    from fmu_surrogate.ph import load
    from tests.identify.linear.interface.test_port_power import _with_powers

    data = tmp_path / "mass_power.nc"
    save_dataset(_with_powers().drop_vars(["Pk", "E"]), data)
    out = tmp_path / "mass_power.json"
    assert main(["identify", str(data), "--method", "linear", "-q", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "not fitted (an input times another output" in text and "P = 1 · F · v" in text
    assert load(out).output_names == ("x", "v", "a")
    # the mass itself as without P (the default method: 5.5e-8 held out)
    held = float(text.split("(held-out): relative max output error ")[1].split()[0])
    assert held < 1e-4
