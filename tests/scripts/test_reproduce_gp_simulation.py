"""scripts/reproduce_gp_simulation.py --quick: harvest, fit, simulate and report run end to end."""

import json


def test_quick_run_reports_errors_and_energy(tmp_path, load_script):
    mod = load_script("reproduce_gp_simulation")
    js = tmp_path / "r.json"
    assert mod.main(["--quick", "--out", str(tmp_path), "--json", str(js), "--no-progress"]) == 0
    res = json.loads(js.read_text())
    assert (tmp_path / "gp_simulation_errors.png").stat().st_size > 10_000
    for system, n in (("rc", 3), ("pendulum", 5)):
        r = res[system]["hamiltonian+known"]
        for inp in ("paper", "held_out"):
            assert len(r[inp]["max_abs_error"]) == n
            # 1 s of simulation from a 10-step fit: coarse, but the known parts hold exactly
            # (RC x2 = u) and the scheme balances energy (measured ≤ 2e-9 relative)
            assert r[inp]["energy_residual_relative"] < 1e-7
        assert r["paper"]["max_abs_error"][1] == 0.0 or system == "pendulum"
