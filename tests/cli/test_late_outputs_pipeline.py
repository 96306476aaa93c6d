"""A vendor-like FMU whose outputs are those of the point before (output-then-update code),
through harvest, identify and validate with the command line's defaults."""

from __future__ import annotations

import json

import numpy as np
from scipy.signal import lsim

from fmu_surrogate.cli import main
from fmu_surrogate.export import export_fmu
from fmu_surrogate.ph import LinearPH, PortedSystem, PortMap

M, K, C = 2.0, 8.0, 0.6  # mass, spring, damper of the vendor component


def vendor(tmp_path):
    """A sprung, damped mass with a force in (N), its velocity (m/s) and position (m) out,
    exported with late outputs: the FMU a code generator with the output-then-update order
    makes of it."""
    core = LinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, C]), np.diag([K, 1.0 / M]),
                    [[0.0], [1.0]])
    ports = PortMap(("F",), ("v", "x"), ("N",), ("m/s", "m"), Tu=[[1.0]], cu=[0.0],
                    Ty=[[1.0], [0.0]], Cx=[[0.0, 0.0], [1.0, 0.0]], Du=np.zeros((2, 1)),
                    cy=[0.0, 0.0])
    return export_fmu(PortedSystem(core, ports, late_outputs=True), tmp_path / "vendor.fmu")


def test_late_outputs_of_a_vendor_fmu_are_found_and_reproduced(tmp_path, capsys):
    fmu = vendor(tmp_path)
    data, sur = tmp_path / "data.nc", tmp_path / "vendor.json"
    noise = "F=noise:f_high=5,duration=4,std=3,seed={}"
    assert main(["harvest", str(fmu), "-o", str(data), "--stop", "4", "--step", "0.01",
                 "--input", noise.format(1), "--input", noise.format(2), "-q"]) == 0
    # the FMU also shows its energy H and energy balance residual: the ports are what to fit
    assert main(["identify", str(data), "-o", str(sur), "-q", "--outputs", "v,x"]) == 0
    text = capsys.readouterr().out
    assert "outputs are those of the point before (late outputs)" in text
    assert json.loads(sur.read_text())["late_outputs"] is True
    # validated on a new input against the vendor FMU (the surrogate simulated in Python)
    assert main(["validate", str(sur), str(fmu), "--input",
                 "F=chirp:f0=0.2,f1=3,t1=4,amplitude=2", "--stop", "4", "--step", "0.01",
                 "--rtol", "1e-5"]) == 0
    # and against scipy's solution of the mass, one point late: the FMU is what it claims
    from fmu_surrogate.fmu.dataset import load_dataset, run_arrays

    (t, X), = run_arrays(load_dataset(data), ["F", "v", "x"], runs=[0])
    A, B = [[0.0, 1.0], [-K / M, -C / M]], [[0.0], [1.0 / M]]
    _, y, _ = lsim((A, B, [[0.0, 1.0], [1.0, 0.0]], [[0.0], [0.0]]), X[:, 0], t, interp=False)
    late = np.concatenate([y[:1], y[:-1]])
    # exact discretisation on both sides: round-off of the step's matrix exponential
    np.testing.assert_allclose(X[:, 1:], late, rtol=0, atol=1e-9 * np.abs(late).max())


def test_late_outputs_refused_by_the_user_are_fitted_at_their_point(tmp_path):
    fmu = vendor(tmp_path)
    data, sur = tmp_path / "data.nc", tmp_path / "vendor.json"
    noise = "F=noise:f_high=5,duration=4,std=3,seed={}"
    assert main(["harvest", str(fmu), "-o", str(data), "--stop", "4", "--step", "0.01",
                 "--input", noise.format(1), "--input", noise.format(2), "-q"]) == 0
    assert main(["identify", str(data), "-o", str(sur), "-q", "--method", "linear",
                 "--outputs", "v,x", "--late-outputs", "no"]) == 0
    assert "late_outputs" not in json.loads(sur.read_text())
