"""The Python reference of the Cauer filter benchmark (fmu_surrogate.benchmarks.cauer)."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.benchmarks import cauer
from fmu_surrogate.ph import check_psd, check_skew, check_spd


def test_structure_matrices():
    m = cauer.matrices()
    check_skew(m["J"], "J", 1e-15)
    check_psd(m["R"], "R", 1e-15)
    check_spd(m["E"], "E", 1e-15)
    # the node-capacitance block is the textbook tridiagonal one
    e = cauer.ELEMENTS
    assert m["E"][0, 1] == -e["C2"] and m["E"][1, 2] == -e["C4"]
    assert m["E"][1, 1] == pytest.approx(e["C2"] + e["C3"] + e["C4"], rel=1e-15)
    # MSL values: L1 ∥ C2 resonates at 1.704992 rad/s, L2 ∥ C4 at 1.179945 rad/s
    assert 1 / np.sqrt(e["L1"] * e["C2"]) == pytest.approx(1.704992, rel=1e-14)
    assert 1 / np.sqrt(e["L2"] * e["C4"]) == pytest.approx(1.179945, rel=1e-14)


def test_dc_gain_without_branch_is_one_half():
    # resistive divider R2 / (R1 + R2); exact in floating point up to one rounding
    assert cauer.dc_gain() == pytest.approx(0.5, abs=1e-15)
    assert cauer.dc_gain({"R2": 3.0}) == pytest.approx(0.75, abs=1e-15)
    # the LinearPH view: port output v1/R1 at DC equals v1 = 0.5 (inductors short at DC)
    G0 = cauer.linear_system().transfer_function(0.0)
    assert G0[0, 0].real == pytest.approx(0.5, abs=1e-14)


@pytest.mark.parametrize("w", [(1.0, 0.0, 0.01), (1.0, 0.003, 0.02), (2.0, 0.0, 0.5)])
@pytest.mark.parametrize("v3", [-7.0, -0.3, 0.0, 1e-3, 2.5, 9.0])
def test_branch_solve_matches_cubic_roots(w, v3):
    w1, w2, w3 = w
    R4 = 1.0
    i, v = cauer.branch_solve(v3, w, R4)
    # independent: eliminate i = (v3 − v)/R4 → R4 w3 v³ + R4 w2 v² + w1 v − w1 v3 = 0; each of
    # these laws gives exactly one real root on the tested range
    roots = np.roots([R4 * w3, R4 * w2, w1, -w1 * v3])
    real = roots[np.abs(roots.imag) < 1e-9].real
    assert len(real) == 1
    # np.roots (companion eigenvalues) is accurate to ~1e-12 relative here
    assert v == pytest.approx(real[0], rel=1e-10, abs=1e-12)
    assert R4 * i + v == pytest.approx(v3, abs=1e-12)


def test_branch_solve_failures():
    with pytest.raises(cauer.BranchSolveError, match="singular"):
        cauer.branch_solve(1.0, (0.0, 0.0, 0.0))
    # i = v² with v3 = R4 i + v < −1/4 has no real solution
    with pytest.raises(cauer.BranchSolveError):
        cauer.branch_solve(-1.0, (1.0, 1.0, 0.0))


def test_input_signal_is_band_limited_noise_with_documented_rms():
    period = cauer.INPUT_LINES / cauer.INPUT_CUTOFF_HZ  # 320 s
    n = 2560
    t = np.arange(n) * period / n
    u = cauer.input_signal(t)
    # orthogonality of the lines over one period: RMS exact up to round-off
    assert np.sqrt(np.mean(u**2)) == pytest.approx(cauer.INPUT_RMS, rel=1e-12)
    spectrum = np.abs(np.fft.rfft(u)) / n
    f = np.fft.rfftfreq(n, period / n)
    inband = (f > 0) & (f <= cauer.INPUT_CUTOFF_HZ + 1e-12)
    assert np.count_nonzero(spectrum[inband] > 1e-3) == cauer.INPUT_LINES  # flat, all lines
    assert spectrum[~inband].max() < 1e-12  # nothing outside the band
    # reproducible, and a different seed gives a different realisation
    np.testing.assert_array_equal(u, cauer.input_signal(t))
    assert np.abs(u - cauer.input_signal(t, seed=1)).max() > 1.0


def test_reference_simulation_reaches_steady_state():
    # constant vin = 1 with the branch removed (w1 huge → i ≈ 0): v3 → 0.5; the slowest pole
    # decays like exp(−0.083 t), so at t = 400 the transient is below 1e-14
    tr = cauer.simulate(np.array([0.0, 400.0]), lambda s: 1.0, w=(1e12, 0.0, 0.01))
    assert tr.x[-1, 2] == pytest.approx(0.5, abs=1e-9)
    assert abs(tr.i[-1]) < 1e-12
