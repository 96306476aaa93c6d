"""scripts/bench_harvest.py --cli on a few runs: every figure of the table is there and sane
(the speeds themselves depend on the machine and are not asserted)."""

import json
import math

import pytest


@pytest.mark.slow  # about 10 harvest commands in new processes
def test_cli_table_on_a_few_runs(tmp_path, load_script):
    mod = load_script("bench_harvest")
    out = tmp_path / "b.json"
    res = mod.main(["--cli", "--model", "rc_network", "--cli-runs", "2,6", "--me-runs", "1,3",
                    "--repeat", "1", "--json", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(res))
    r = res["models"]["rc_network"]
    assert r["runs"] == [2, 6] and r["complevel"] == 1 and r["native_ms_per_run"] > 0
    for w in ("1", "2"):
        m = json.loads(json.dumps(r["workers"]))[w]
        assert m["wall_big_s"] > 0 and m["wall_small_s"] > 0 and m["startup_s"] > 0
        assert math.isfinite(m["marginal_ms_per_run"])
    me = r["me_1_worker"]
    assert me["runs"] == [1, 3] and math.isfinite(me["marginal_ms_per_run"])
    assert len(r["load_average"]) == 2
