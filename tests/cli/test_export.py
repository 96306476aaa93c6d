import sys

import numpy as np
import pytest

from fmu_surrogate.cli import main
from fmu_surrogate.ph import LinearPH, save


@pytest.fixture(scope="module")
def surrogate(tmp_path_factory):
    osc = LinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, 0.2]), np.diag([2.0, 1.0]),
                   [[0.0], [1.0]], input_names=["F"], output_names=["v"])
    return save(osc, tmp_path_factory.mktemp("cli") / "osc.json")


def test_export_writes_an_fmi3_fmu(surrogate, tmp_path, capsys):
    from fmpy import read_model_description, simulate_fmu

    out = tmp_path / "osc.fmu"
    assert main(["export", str(surrogate), "--fmu", str(out), "--fmi", "3"]) == 0
    assert "FMI 3.0" in capsys.readouterr().out
    md = read_model_description(str(out))
    assert md.fmiVersion == "3.0" and md.coSimulation.modelIdentifier == "surrogate"
    # free oscillation x'' = -2x - 0.2x' from x1(0) = 1 over one step: exact solution by expm
    from scipy.linalg import expm

    r = simulate_fmu(str(out), stop_time=0.5, output_interval=0.5, start_values={"x_start[1]": 1.0},
                     output=["v"])
    A = (np.array([[0.0, 1.0], [-1.0, 0.0]]) - np.diag([0.0, 0.2])) @ np.diag([2.0, 1.0])
    v = (np.diag([2.0, 1.0]) @ expm(A * 0.5) @ [1.0, 0.0])[1]
    assert r["v"][-1] == pytest.approx(v, rel=1e-13)  # exact step: measured 1e-16


def test_export_needs_an_output_and_reports_missing_modelica(surrogate, tmp_path, capsys,
                                                             monkeypatch):
    assert main(["export", str(surrogate)]) == 2
    assert "give --fmu OUT.fmu and/or --modelica OUT.mo" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "fmu_surrogate.export.modelica", None)  # not installed
    assert main(["export", str(surrogate), "--modelica", str(tmp_path / "m.mo")]) == 2
    assert "Modelica export is not available" in capsys.readouterr().err


def test_export_of_a_damaged_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["export", str(bad), "--fmu", str(tmp_path / "b.fmu")]) == 2
    assert "is not valid JSON" in capsys.readouterr().err


def test_export_writes_modelica_next_to_the_fmu(surrogate, tmp_path, capsys):
    mo = tmp_path / "Osc.mo"
    assert main(["export", str(surrogate), "--fmu", str(tmp_path / "o.fmu"), "--modelica",
                 str(mo)]) == 0
    assert "Modelica model" in capsys.readouterr().out
    text = mo.read_text()
    assert "RealInput F" in text and "RealOutput v" in text
