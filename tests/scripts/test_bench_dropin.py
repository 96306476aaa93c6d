"""scripts/bench_dropin.py on the damped mass (a power-out free mass braked by a damper with
feedthrough) and on the sprung mass (a free mass on the progressive spring): the command line's
defaults only, the drop-in issue's targets asserted.  ``--quick`` trains the spring on three runs
instead of six (two train, identify holds the third out); the other experiments are the full
ones."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_dropin.py"


@pytest.mark.slow
def test_bench_dropin_meets_the_targets_on_the_damped_mass(tmp_path):
    out = tmp_path / "b.json"
    subprocess.run([sys.executable, str(SCRIPT), "--quick", "--json", str(out), "--work",
                    str(tmp_path), "--only", "free_mass", "damper", "damped_mass"], check=True,
                   capture_output=True, timeout=900)
    d = json.loads(out.read_text())
    comps = {r["component"]: r for r in d["components"]}
    assert set(comps) == {"free_mass", "damper"}
    for r in comps.values():
        # held-out validation ≤ 1 % (the target; measured below 1e-10: both are linear
        # and identified to round-off)
        assert "error" not in r and r["validation_error"] <= 0.01
        assert r["speedup"]["fmu_s"] > 0 and r["speedup"]["surrogate_s"] > 0
    (sysrow,) = d["systems"]
    assert sysrow["system"] == "damped_mass"
    # co-simulation with one and with all components replaced ≤ 2 % from the original
    # (measured 7e-14), the monolithic energy residual ≤ 1e-10 (measured 1.2e-15)
    for k in ("replaced:mass", "replaced:brake", "replaced:all"):
        assert sysrow[k] <= 0.02
    assert abs(sysrow["monolithic_energy_residual"]) <= 1e-10


@pytest.mark.slow
def test_bench_dropin_meets_the_targets_on_the_sprung_mass(tmp_path):
    out = tmp_path / "b.json"
    subprocess.run([sys.executable, str(SCRIPT), "--quick", "--json", str(out), "--work",
                    str(tmp_path), "--only", "free_mass", "free_mass_sprung", "progressive_spring",
                    "sprung_mass"], check=True, capture_output=True, timeout=900)
    d = json.loads(out.read_text())
    comps = {r["component"]: r for r in d["components"]}
    assert set(comps) == {"free_mass", "free_mass_sprung", "progressive_spring"}
    # held-out validation ≤ 1 % linear, ≤ 2 % nonlinear (measured 2e-12 and 1.9e-6 for the
    # spring trained on two runs; 4.3e-6 on three, 3.2e-6 on five, 11 % on one: the test fails)
    assert comps["free_mass_sprung"]["validation_error"] <= 0.01
    assert comps["progressive_spring"]["validation_error"] <= 0.02
    (sysrow,) = d["systems"]
    # the mass's surrogate is the one identified at the system's v0 = 0.1, not at 2
    assert sysrow["surrogates"] == {"mass": "free_mass_sprung", "spring": "progressive_spring"}
    # co-simulation with one and with all components replaced ≤ 3 % from the original
    # (nonlinear target; measured 3e-12 for the mass, 6.4e-6 for the spring and for both), the
    # monolithic energy residual ≤ 1e-10 (measured 4.3e-15)
    for k in ("replaced:mass", "replaced:spring", "replaced:all"):
        assert sysrow[k] <= 0.03
    assert abs(sysrow["monolithic_energy_residual"]) <= 1e-10


def test_quick_keeps_at_most_three_runs_per_input(load_script):
    mod = load_script("bench_dropin")
    spring = mod.COMPONENTS["progressive_spring"]
    assert mod.quick_case(spring)["train"] == spring["train"][:3]
    # products of two inputs' alternatives (2 x 2) and three runs stay as they are, and so do
    # the pendulum's four levels (its quick_runs)
    for name in ("dc_motor", "progressive_spring_damper", "power_damper", "damper",
                 "pendulum_joint"):
        assert mod.quick_case(mod.COMPONENTS[name]) == mod.COMPONENTS[name]
