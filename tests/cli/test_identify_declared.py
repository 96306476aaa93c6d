"""``fmu-surrogate identify --method gp`` on declared states: states, derivatives, inputs and the
collocated outputs from the dataset, the structure proposed from the data."""

from __future__ import annotations

import numpy as np
import pytest

import fmu_surrogate as fs
from fmu_surrogate.benchmarks.vendor import progressive_spring as ps
from fmu_surrogate.cli import main


@pytest.fixture(scope="module")
def spring_data(tmp_path_factory):
    t = np.linspace(0.0, 2.0, 201)
    out = tmp_path_factory.mktemp("spring") / "spring.nc"
    fs.harvest(fs.benchmark_fmu("progressive_spring_me"), out, stop_time=2.0, step=0.01,
               progress=False,
               signals=[{"v": fs.signals.ArraySignal(t, 0.3 * np.cos(4.0 * t))},
                        {"v": fs.signals.ArraySignal(t, 0.18 * np.cos(6 * t)
                                                     + 0.12 * np.cos(3 * t))}])
    return out


def test_gp_on_declared_states_needs_no_structure(spring_data, tmp_path, capsys):
    out = tmp_path / "spring.json"
    assert main(["identify", str(spring_data), "--method", "gp", "--samples", "48",
                 "--max-iter", "150", "-q", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "declared states ['x'], inputs ['v'], outputs y = Bᵀz ['F']" in text
    assert "J = R = 0; z is learned from the outputs" in text  # the proposal's report
    held = float(text.split("held-out runs [1]: outputs y = Bᵀz, relative max error ")[1].split()[0])
    assert held < 1e-4  # measured 9.1e-6 (48 random samples of run 0, 150 Adam steps)
    from fmu_surrogate.ph import PHDAE, load

    s = load(out)
    assert isinstance(s, PHDAE) and s.state_names == ("x",) and s.input_names == ("v",)
    np.testing.assert_array_equal(s.J, [[0.0]])
    np.testing.assert_array_equal(s.R, [[0.0]])
    xs = np.linspace(-0.06, 0.08, 101)
    err = np.abs(s.effort(xs[:, None])[:, 0] - ps.force(xs)).max() / ps.force(0.08)
    assert err < 1e-4  # measured 7.2e-6 on the training range


def test_gp_on_declared_states_refusals(spring_data, tmp_path, capsys):
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset, save_dataset

    t = np.linspace(0.0, 1.0, 11)
    bare = tmp_path / "bare.nc"  # no FMU behind it: no declared states
    save_dataset(records_to_dataset([RunRecord(index=0, values={"v": t, "F": t})], t, None,
                                    ["v", "F"]), bare)
    assert main(["identify", str(bare), "--method", "gp", "-o", str(tmp_path / "s.json")]) == 2
    assert "declares no states" in capsys.readouterr().err
    assert main(["identify", str(spring_data), "--method", "gp", "--states", "x", "-q",
                 "-o", str(tmp_path / "s.json")]) == 2
    assert "needs --structure" in capsys.readouterr().err
