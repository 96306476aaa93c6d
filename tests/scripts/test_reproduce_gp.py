"""The --quick run of scripts/reproduce_gp_ph_dae.py produces sensible numbers and figures."""

import json

import numpy as np
import pytest


@pytest.fixture(scope="module")
def quick(tmp_path_factory, load_script):
    mod = load_script("reproduce_gp_ph_dae")
    out = tmp_path_factory.mktemp("repro")
    js = out / "results.json"
    assert mod.main(["--quick", "--out", str(out), "--json", str(js), "--no-progress"]) == 0
    return out, json.loads(js.read_text())


def test_quick_rc_learning_curve(quick):
    _, res = quick
    lc = res["sources"]["euler"]["rc"]["learning_curves"]["plain"]
    assert lc["N"] == [4, 16, 64]
    f = np.asarray(lc["rmse_f_mean"])  # (len(N), 3)
    # Components 2 and 3 of f = T z (f2 ≡ 0, f3 = −u) see no Euler error: they must improve with N
    # (measured 2.3e-4 → 6.7e-5 and 2.5e-2 → 1.5e-3 with 40 Adam steps, one repetition).
    assert np.all(f[-1, 1:] < f[0, 1:])
    # 1e-2 is the paper's data-error level; with 64 samples the exact components are well below
    # it even after only 40 Adam steps (the paper reaches 1e-5 at N = 128 with 200 steps).
    assert np.all(f[-1, 1:] < 1e-2)
    # Component 1 carries the error of the GP derivative of the Euler data (its RMS is the
    # "data error", ≈ 3e-3): with 64 samples the fit must reach that level within a factor 3.
    data_err = res["sources"]["euler"]["rc"]["data_error_rms_f"][0]
    assert 1e-3 < data_err < 1e-2
    assert f[-1, 0] < 3 * data_err
    z = np.asarray(lc["rmse_z_mean"])
    assert np.all(z[-1] < 1e-2)  # effort follows f through the regular T (paper Fig. 3 right)


def test_quick_pendulum_learning_curve(quick):
    _, res = quick
    f = np.asarray(res["sources"]["euler"]["pendulum"]["learning_curves"]["plain"]["rmse_f_mean"])
    # paper: all components at the ~1e-2 discretisation level by N = 64 (measured ≤ 7e-3 here);
    # 3e-2 leaves room for the short optimisation of the quick run.
    assert np.all(f[-1] < 3e-2) and np.all(f[-1, :4] < f[0, :4])


def test_quick_studies_and_figures(quick):
    out, res = quick
    study = res["derivative_study"]["rc"]["plain"]
    assert set(study) == {"exact", "gp_full", "gp_train"}
    # exact derivatives carry no Euler error, so component 1 of f beats the GP-derivative data
    assert study["exact"]["rmse_f_mean"][-1][0] < study["gp_full"]["rmse_f_mean"][-1][0]
    ext = res["sources"]["euler"]["pendulum"]["extrapolation"]["plain"]
    assert ext["t_split"] == pytest.approx(20.0)
    # outside the training window the effort is extrapolated: at least one component is worse
    # there than inside, and the pendulum's momenta stay bounded by their own scale (|p| ≤ 3)
    assert np.max(ext["rmse_z_outside"]) > np.max(ext["rmse_z_inside"])
    assert np.max(ext["rmse_z_outside"]) < 3.0
    for name in ("learning_curve_euler_rc_plain.png", "effort_N32_euler_rc_plain.png",
                 "extrapolation_euler_pendulum_plain.png", "derivative_study_rc.png"):
        assert (out / name).stat().st_size > 10_000
