"""Smoke test of scripts/bench_export_nonlinear.py: the table, and each surrogate's error."""

import json


def test_bench_export_nonlinear_writes_the_table(load_script, tmp_path, capsys):
    mod = load_script("bench_export_nonlinear")
    out = tmp_path / "b.json"
    assert mod.main(["--quick", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    rows = {r["component"]: r for r in d["table"]}
    assert list(rows) == ["progressive_spring", "saturating_inductor", "power_damper"]
    assert d["stop_time"] == 1.0 and d["repeat"] == 2
    for r in rows.values():  # speeds are measured, not asserted (timings belong to the script)
        for via in ("fmpy", "native"):
            assert r[f"{via}_reference_seconds"] > 0 and r[f"{via}_surrogate_seconds"] > 0
            assert r[f"{via}_speedup"] == (r[f"{via}_reference_seconds"]
                                           / r[f"{via}_surrogate_seconds"])
        assert r["surrogate_states"] == (0 if r["component"] == "power_damper" else 1)
    # the spring's surrogate is its own law (x' = v exact in both schemes): measured 4.2e-15
    assert rows["progressive_spring"]["rel_max_error"] < 1e-12
    # AVF at 1 ms against the vendor's RK4 with 10 sub-steps: measured 1.8e-6 (AVF's O(h²))
    assert rows["saturating_inductor"]["rel_max_error"] < 1e-5
    # the damper's static law as the nonlinear feedthrough, smoothed within δ = 1e-6 of rest
    # (the error is where the input crosses zero, of order δ^(4/3)): measured 2.3e-12
    assert rows["power_damper"]["rel_max_error"] < 1e-10
    assert "speed-up" in capsys.readouterr().out
