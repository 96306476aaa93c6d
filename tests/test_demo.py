"""End-to-end: ``fmu-surrogate demo --quick`` runs the whole pipeline and writes its report."""

import json

from fmu_surrogate.cli import main


def test_demo_quick_end_to_end(tmp_path):
    out = tmp_path / "demo"
    assert main(["demo", str(out), "--quick"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    for name in ("rc_network", "pendulum", "msd_chain", "duffing", "cauer"):
        assert (out / f"{name}.nc").is_file() and (out / f"{name}_runs.png").is_file()
    # The Cauer plan contains non-monotone resistor laws (w3 < 0) for which the FMU's Newton
    # solve fails: at least one failure must be recorded, and the true-law neighbourhood works.
    assert "failed" in summary["harvest"]["cauer"]["summary"]
    assert " 0 ok" not in summary["harvest"]["cauer"]["summary"]
    # accuracy is reported on held-out runs: the RC effort from 64 samples of one run, on another
    # input (measured ≈ 1.4e-3 with the 60 Adam steps of --quick; paper's data level 1e-2)
    assert max(summary["identify"]["rc_network"]["effort_rmse_heldout"]) < 1e-2
    msd = summary["identify"]["msd_chain"]
    assert msd["structure_violation"]["J_skew"] == 0.0 and msd["min_eig_Q"] > 0
    # subspace start + Levenberg-Marquardt on the ZOH data, n = 10 of the 100-state chain:
    # measured 0.20 % on the held-out input; 5x margin
    assert msd["relative_max_error_heldout"] < 0.01
    assert "v1" in summary["validate"]["msd_chain"]["table"]
    # the exported FMU steps exactly (ZOH matrix exponential), the JSON path by implicit midpoint
    # at ωh ≈ 0.1: the same model, so their errors against the reference differ only by the
    # midpoint's discretisation error (measured 2.2e-3: 4.8e-3 midpoint vs 2.6e-3 exact)
    val = summary["validate"]
    assert abs(val["msd_chain_fmu"]["max_relative"] - val["msd_chain"]["max_relative"]) < 5e-3
    assert summary["export"]["fmu"] == "msd_chain_n10.fmu"
    assert (out / "msd_chain_n10.fmu").stat().st_size == summary["export"]["fmu_bytes"]
    assert "model msd_chain_n10" in (out / "msd_chain_n10.mo").read_text()
    # two surrogates joined by a skew coupling: the energy balance holds to round-off
    assert summary["couple"]["energy_residual_relative"] < 1e-10
    assert summary["couple"]["J_skew_violation"] == 0.0
    report = (out / "report.md").read_text()
    assert "held-out" in report and "![coupled energy](coupled_energy.png)" in report
    for png in ("msd_chain_heldout.png", "msd_chain_validation.png", "coupled_energy.png",
                "cauer_feasibility.png"):
        assert (out / png).stat().st_size > 10_000
    assert (out / "msd_chain_n10.json").is_file() and (out / "rc_network_gp.json").is_file()
