"""Smoke test of scripts/bench_couple.py: the JSON holds the table the issue asks for."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_couple.py"


def test_bench_couple_writes_the_table(tmp_path):
    out = tmp_path / "b.json"
    subprocess.run([sys.executable, str(SCRIPT), "--json", str(out), "--stop-time", "2"],
                   check=True, capture_output=True)
    d = json.loads(out.read_text())
    table = d["table"]
    assert [(r["algorithm"], r["step"]) for r in table] == [
        (a, h) for a in ("fixed", "ecco") for h in (0.1, 0.05, 0.025)]
    fixed = [r for r in table if r["algorithm"] == "fixed"]
    assert [r["steps"] for r in fixed] == [20, 40, 80]
    assert all(r["status"] == "ok" and r["seconds"] > 0 for r in table)
    # first order in h (measured 1.09 on t ≤ 10 s)
    assert 0.8 < d["fixed_residual_rate"] < 1.3
    assert abs(d["monolithic"]["energy_balance_rel"]) < 1e-10  # the target
    assert len(d["ecco_vs_fixed"]) == 3
