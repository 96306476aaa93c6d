"""Smoke test of scripts/bench_peer.py: the table, and the surrogate's passivity from rest."""

import json

import pytest


@pytest.mark.slow  # harvests and fits the spring's nonlinear surrogate (about 25 s)
def test_bench_peer_writes_the_table(load_script, tmp_path, capsys):
    mod = load_script("bench_peer")
    out = tmp_path / "p.json"
    assert mod.main(["--quick", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["sklearn"] and d["lags"] == mod.LAGS and d["hidden"] == list(mod.HIDDEN[True])
    (row,) = d["table"]
    assert row["component"] == "progressive_spring" and row["passivity_runs"] == 2
    # passive by construction: the scheme's supplied energy from rest never goes negative
    assert row["ph_violating_runs"] == 0 and row["ph_violating_points"] == 0
    assert row["ph_min_energy_rel"] >= -1e-12
    # coupled to a mass power-conservingly and simulated monolithically, the storage never gets
    # back more than it had (the AVF scheme's balance holds to the Newton tolerance, 1e-12)
    assert row["ph_monolithic"] and row["ph_monolithic_energy_max"] <= 1.0 + 1e-9
    # in the explicit co-simulation loop the coupling scheme itself may add a little, as it
    # does to the FMU (measured 1.0023 and 1.0025): the same order, not a structural gain
    assert row["ph_energy_max"] <= row["fmu_energy_max"] + 0.01
    # the surrogate fits the spring's law: measured 0.011 % (the identify tests ask 2 %)
    assert row["ph_heldout"] < 0.02
    # the black box's figures are measured, not asserted; they are there and finite
    for key in ("narx_heldout", "narx_energy_max", "narx_energy_end", "fmu_energy_max"):
        assert row[key] == row[key]
    assert "NARX" in capsys.readouterr().out
