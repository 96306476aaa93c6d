"""scripts/bench_simulate.py --quick: the table's energy residuals tell the schemes apart."""

import json


def test_quick_table(tmp_path, load_script):
    mod = load_script("bench_simulate")
    out = tmp_path / "b.json"
    assert mod.main(["--quick", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    ours = [r for r in rows if r["solver"].startswith("ph.simulate")]
    theirs = [r for r in rows if r["solver"].startswith("solve_ivp")]
    assert len(ours) == 4 and len(theirs) == 8
    assert [r["problem"] for r in ours][-1] == "GP RC surrogate"
    # structure preservation: round-off only for ours (measured ≤ 1e-13) ...
    assert all(r["energy_residual_relative"] <= 1e-12 for r in ours)
    # ... while an rtol-1e-8 general-purpose solver leaves a visible residual (measured ≥ 1e-9)
    assert all(r["energy_residual_relative"] >= 1e-11 for r in theirs)
