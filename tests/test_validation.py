"""validate / assert_surrogate_matches / the CLI and the pytest fixture on the MSD chain FMU.

The reference is the 100-state benchmark FMU; the "good surrogate" is the exact chain model as a
LinearPH (the FMU integrates it with Dormand–Prince under zero-order-hold inputs; our midpoint
with the same hold is second order in h = 0.05, ω h ≈ 0.1: measured 2.3e-3 relative), the "bad" one the same
with its masses 20 % too light.
"""

from __future__ import annotations

import pytest

import fmu_surrogate as fs
from fmu_surrogate.benchmarks.msd_chain import msd_chain
from fmu_surrogate.cli import main
from fmu_surrogate.ph import save, with_names
from fmu_surrogate.testing import assert_surrogate_matches
from fmu_surrogate.validation import ValidationError, validate

INPUTS = {"F1": fs.signals.Chirp(f0=0.05, f1=0.5, t1=20.0), "F2": fs.signals.Constant(0.3)}
EXP = {"stop_time": 20.0, "step": 0.05}


def named(system):
    return with_names(system, inputs=["F1", "F2"], outputs=["v1", "v2"])


@pytest.fixture(scope="module")
def fmu():
    return fs.benchmark_fmu("msd_chain")


@pytest.fixture(scope="module")
def good():
    return named(msd_chain())


@pytest.fixture(scope="module")
def bad():
    return named(msd_chain(mass=3.2))


def test_good_surrogate_matches_and_bad_one_does_not(fmu, good, bad, tmp_path):
    rep = validate(good, fmu, inputs=INPUTS, rtol=1e-2, **EXP)
    assert rep.passed and rep.outputs == ("v1", "v2") and rep.units[0] in ("m/s", None)
    assert max(e.relative for e in rep.errors) < 5e-3  # measured 2.3e-3
    assert "v1" in rep.table() and "ok" in rep.table()
    rep.plot(tmp_path / "cmp.png")
    assert (tmp_path / "cmp.png").stat().st_size > 10_000
    rep_bad = validate(bad, fmu, inputs=INPUTS, rtol=1e-2, **EXP)
    assert not rep_bad.passed and max(e.relative for e in rep_bad.errors) > 0.05
    with pytest.raises(AssertionError, match="(?s)does not match msd_chain.fmu within rtol=0.01.*FAIL"):
        assert_surrogate_matches(bad, fmu, INPUTS, rtol=1e-2, **EXP)


def test_cli_exit_status_and_json_surrogates(fmu, good, bad, tmp_path, capsys):
    save(good, tmp_path / "good.json")
    save(bad, tmp_path / "bad.json")
    argv = [str(fmu), "--input", "F1=chirp:f0=0.05,f1=0.5,t1=20", "--input", "F2=0.3",
            "--stop", "20", "--step", "0.05", "--rtol", "1e-2"]
    assert main(["validate", str(tmp_path / "good.json")] + argv) == 0
    assert "matches msd_chain.fmu" in capsys.readouterr().out
    assert main(["validate", str(tmp_path / "bad.json")] + argv + ["--plot",
                 str(tmp_path / "bad.png")]) == 1
    out = capsys.readouterr().out
    assert "does NOT match" in out and (tmp_path / "bad.png").is_file()


def test_ports_that_are_not_fmu_variables_are_named(fmu):
    with pytest.raises(ValidationError, match="surrogate input 'u1' is not a variable"):
        validate(msd_chain(), fmu, **EXP)  # default names u1, u2, y1, y2
    rep = validate(msd_chain(), fmu, inputs=INPUTS, ports={"u1": "F1", "u2": "F2", "y1": "v1",
                                                           "y2": "v2"}, rtol=1e-2, **EXP)
    assert rep.passed


def test_pytest_plugin_fixture(pytester, fmu, good, tmp_path):
    save(good, tmp_path / "good.json")
    pytester.makepyfile(f"""
        import fmu_surrogate as fs

        def test_mine(surrogate_matches):
            rep = surrogate_matches({str(tmp_path / 'good.json')!r}, {str(fmu)!r},
                                    inputs={{"F1": fs.signals.Constant(1.0)}},
                                    stop_time=5.0, step=0.05, rtol=1e-2)
            assert rep.passed
    """)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_surrogate_of_array_elements_is_validated_element_by_element(arrays3_fmu, tmp_path,
                                                                        capsys):
    """An FMI 3 state-space FMU with array input ``u`` and output ``y`` (shape 3): harvested by
    element, identified without units (5 inputs, 3 Real outputs: no power pair), validated with
    an element input and a whole-array parameter against the FMU itself."""
    import numpy as np

    data, sur = tmp_path / "a.nc", tmp_path / "a.json"
    noise = "u[1]=noise:f_high=3,duration=4,std=1,seed={}"
    assert main(["harvest", str(arrays3_fmu), "-o", str(data), "--stop", "4", "-q",
                 "--input", noise.format(1), "--input", noise.format(2)]) == 0
    assert main(["identify", str(data), "-o", str(sur), "-q"]) == 0
    capsys.readouterr()
    # the default A = -I: x' = -x + u, y = x, exact in the harvest's zero-order hold
    report = validate(sur, arrays3_fmu, inputs={
        "u[1]": fs.signals.Chirp(f0=0.1, f1=2.0, t1=4.0, amplitude=1.0)},
        parameters={"A": (-1.0, 0, 0, 0, -1.0, 0, 0, 0, -1.0)}, stop_time=4.0)
    # measured 1.6e-14: the surrogate is linear and exact for the held inputs
    rel = np.array([e.relative for e in report.errors])
    assert report.passed and report.outputs == ("y[1]", "y[2]", "y[3]") and rel.max() < 1e-9
