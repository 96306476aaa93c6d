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


def _linear_with_late_outputs(tmp_path, late):
    """The vendor FMU harvested (two noise runs of 4 s) and identified by the linear method
    with ``--late-outputs late``: ``(fmu, surrogate file)``."""
    fmu = vendor(tmp_path)
    data, sur = tmp_path / "data.nc", tmp_path / "vendor.json"
    noise = "F=noise:f_high=5,duration=4,std=3,seed={}"
    assert main(["harvest", str(fmu), "-o", str(data), "--stop", "4", "--step", "0.01",
                 "--input", noise.format(1), "--input", noise.format(2), "-q"]) == 0
    assert main(["identify", str(data), "-o", str(sur), "-q", "--method", "linear",
                 "--outputs", "v,x", "--late-outputs", late]) == 0
    return fmu, sur


def test_late_outputs_refused_by_the_user_are_fitted_at_their_point(tmp_path):
    _, sur = _linear_with_late_outputs(tmp_path, "no")
    assert "late_outputs" not in json.loads(sur.read_text())


def test_late_outputs_set_by_the_user_on_the_linear_method_are_kept_by_the_surrogate(tmp_path):
    from fmu_surrogate.ph import load

    fmu, sur = _linear_with_late_outputs(tmp_path, "yes")
    s = load(sur)
    assert s.late_outputs and not s.delayed_feedthrough and s.output_names == ("v", "x")
    # exact data of a linear system, one point late: the same bound as the default's fit
    assert main(["validate", str(sur), str(fmu), "--input",
                 "F=chirp:f0=0.2,f1=3,t1=4,amplitude=2", "--stop", "4", "--step", "0.01",
                 "--rtol", "1e-5"]) == 0


def test_a_linear_fmu_with_its_feedthrough_computed_in_do_step_gets_a_delayed_feedthrough(
        tmp_path, capsys):
    """Outputs ``y_k = C x_k + D u_{k−1}`` (feedthrough computed in ``doStep`` only) of a power
    pair: late outputs fit them at the harvest's step only, and the first point, which late
    code repeats, is not repeated; the linear fit with a delayed feedthrough of its own is
    kept, right at every step."""
    import fmu_surrogate as fs
    from fmu_surrogate.ph import simulate

    core = LinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, C]), np.diag([K, 1.0 / M]),
                    [[0.0], [1.0]], S=[[0.3]])  # a damper of 0.3 N s/m straight through
    ports = PortMap(("F",), ("v", "x"), ("N",), ("m/s", "m"), Tu=[[1.0]], cu=[0.0],
                    Ty=[[1.0], [0.0]], Cx=[[0.0, 0.0], [1.0, 0.0]], Du=np.zeros((2, 1)),
                    cy=[0.0, 0.0])
    fmu = export_fmu(PortedSystem(core, ports, delayed_feedthrough=True), tmp_path / "d.fmu")
    data, sur = tmp_path / "data.nc", tmp_path / "d.json"
    noise = "F=noise:f_high=5,duration=4,std=3,seed={}"
    assert main(["harvest", str(fmu), "-o", str(data), "--stop", "4", "--step", "0.01",
                 "--input", noise.format(1), "--input", noise.format(2), "-q"]) == 0
    assert main(["identify", str(data), "-o", str(sur), "-q", "--outputs", "v,x"]) == 0
    assert "fitted so" in capsys.readouterr().out
    from fmu_surrogate.cli.inputs import parse_input_option
    from fmu_surrogate.ph import load

    s = load(sur)
    assert s.delayed_feedthrough and not s.late_outputs
    name, sig = parse_input_option("F=chirp:f0=0.2,f1=3,t1=4,amplitude=2")
    for h in (0.01, 0.0025):  # at the harvest's step and at another
        ds = fs.harvest(fmu, None, signals=[{name: sig}], stop_time=4.0, step=h,
                        progress=False, workers=1)
        (t, X), = fs.run_arrays(ds, ["F", "v", "x"])
        y = simulate(s, t, X[:, :1], hold="zoh").y
        # exact data of a linear system: the fit's accuracy (measured 1e-9 relative)
        assert np.abs(y - X[:, 1:]).max() / np.abs(X[:, 1:]).max() < 1e-6


def test_a_wheel_like_vendor_fmu_is_reproduced_with_the_defaults(tmp_path, capsys):
    """The traits of a third-party wheel FMU (libcosim's quarter-truck test data): outputs
    computed in ``doStep`` only (zeros before the first step, the feedthrough of the step
    before), a preloaded start away from rest, outputs in units 10⁵ apart; harvest, identify
    and validate with the command line's defaults."""
    core = LinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, C]), np.diag([K, 1.0 / M]),
                    [[0.0], [1.0]], S=[[0.3]])
    ports = PortMap(("F",), ("v", "x"), ("N",), ("m/s", "m"), Tu=[[1.0]], cu=[0.0],
                    Ty=[[1.0], [0.0]], Cx=[[0.0, 0.0], [1e-5, 0.0]], Du=np.zeros((2, 1)),
                    cy=[0.0, 1e-6])
    vendor_like = PortedSystem(core, ports, [4.0, 0.0], delayed_feedthrough=True,
                               inputs_before=[0.0], first_outputs=[0.0, 0.0])
    fmu = export_fmu(vendor_like, tmp_path / "wheel.fmu")
    data, sur = tmp_path / "data.nc", tmp_path / "wheel.json"
    noise = "F=noise:f_high=5,duration=4,std=3,seed={}"
    assert main(["harvest", str(fmu), "-o", str(data), "--stop", "4", "--step", "0.01", "-q"]
                + [a for s in (1, 2, 3) for a in ("--input", noise.format(s))]) == 0
    assert main(["identify", str(data), "-o", str(sur), "-q", "--outputs", "v,x"]) == 0
    text = capsys.readouterr().out
    assert "fixed values" in text
    assert json.loads(sur.read_text())["first_outputs"] == [0.0, 0.0]
    # exact data (the FMU steps exactly): the delay is a third state here (measured 4.9e-7
    # relative held-out; a late model is exact at the harvest's step)
    assert main(["validate", str(sur), str(fmu), "--input",
                 "F=chirp:f0=0.2,f1=3,t1=4,amplitude=2", "--stop", "4", "--step", "0.01",
                 "--rtol", "1e-5"]) == 0
