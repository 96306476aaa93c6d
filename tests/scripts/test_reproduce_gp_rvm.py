"""The --quick run of scripts/reproduce_gp_rvm.py produces sensible numbers and figures."""

import json

import pytest


@pytest.fixture(scope="module")
def quick(tmp_path_factory, benchmark_fmus, load_script):
    mod = load_script("reproduce_gp_rvm")
    out = tmp_path_factory.mktemp("repro")
    js = out / "results.json"
    # a folder without the Silverbox files: part (c) is skipped with a message
    assert mod.main(["--quick", "--out", str(out), "--json", str(js), "--no-progress",
                     "--silverbox", str(out)]) == 0
    return out, json.loads(js.read_text())


def test_quick_polynomial_and_duffing(quick):
    out, res = quick
    assert (out / "polynomial_a_d.png").stat().st_size > 0
    poly = res["polynomial"]["summary"]
    # 5 data sets: GP-RVM drops x^5 in all (measured 5/5), RVM and ARD in none; RVM's a is
    # biased (measured mean 11.8) and GP-RVM's is not (5.41)
    assert poly["gp"]["x5_dropped"] == 5 and poly["rvm"]["x5_dropped"] == 0
    assert abs(poly["gp"]["mean_a"] - 5) < 1.0 < abs(poly["rvm"]["mean_a"] - 5)
    data = res["duffing"]["data"]
    # FMU (DP5, rtol 1e-10) against the DOP853 reference: measured 1.1e-8 of the range
    assert max(data["max_relative_deviation_fmu_vs_solver"].values()) < 1e-7
    # GP-RVM m, c from FMU data vs solver data: measured 3e-10 (quick), 7e-7 over all 30 fits
    assert data["max_relative_difference_gp_fit_fmu_vs_solver_data_scenario1"] < 1e-5
    s1 = res["duffing"]["scenarios"]["1"]["summary"]
    # two data sets: GP-RVM m, c bias measured 0.065 % / 0.27 %, RVM 1.3 % / 2.7 %
    assert s1["gp"]["bias_m_percent"] < 0.2 and s1["gp"]["bias_c_percent"] < 0.6
    assert s1["rvm"]["bias_m_percent"] > 0.5
    assert res["silverbox"] is None


def test_quick_bench(quick):
    _, res = quick
    b = res["bench"]["500"]          # --quick benches N = 500 only (the full run adds 5000)
    assert set(res["bench"]) == {"500"}
    assert set(b) == {"gp_rvm", "gp_rvm_scenario1", "rvm", "ard_regression"}
    assert all(v["n_iter"] >= 1 and v["seconds"] > 0 for v in b.values())
