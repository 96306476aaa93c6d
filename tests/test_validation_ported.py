"""validate for drop-in surrogates (PortedSystem objects, their JSON files and exported FMUs)
against the vendor benchmark FMUs: external names, units, signs, constant sources, measured
outputs and the operating point x0.

The surrogates are the components' exact physics written as PortedSystems, so every error left
is the integration scheme's: the FMUs integrate with RK4 substeps (or CVode), ``ph.simulate``
with the implicit midpoint rule under the same zero-order hold, an exported surrogate FMU with
the exact step.
"""

from __future__ import annotations

import numpy as np
import pytest

import fmu_surrogate as fs
from fmu_surrogate.benchmarks.vendor import dc_motor, quarter_car
from fmu_surrogate.benchmarks.vendor.free_mass import free_mass_ph
from fmu_surrogate.cli import main
from fmu_surrogate.export import export_fmu
from fmu_surrogate.ph import LinearPH, PortedSystem, PortMap, save
from fmu_surrogate.validation import ValidationError, validate

QC_OUT = ("zs", "vs", "zu", "vu", "a_s", "F_tyre")
QC_EXP = {"inputs": {"F": fs.signals.Chirp(f0=1.5, f1=1.5, amplitude=500.0, phi=-90.0)},
          "stop_time": 2.0, "step": 1e-3}


def quarter_car_ported(extra_output: bool = False) -> PortedSystem:
    """The quarter car in pH form: x = (suspension length, body momentum, tyre length, wheel
    momentum), Q = diag(ks, 1/ms, kt, 1/mu); the free lengths and gravity are two constant
    sources (on the body, on the wheel); the body force F is the one external input; positions,
    the wheel velocity, the body acceleration (feedthrough from F) and the tyre load are
    measured outputs, the body velocity the conjugate output of F; released at the springs'
    free lengths (x0), not at rest."""
    p = quarter_car.PARAMS
    ms, mu, ks, cs, kt, ls0, lt0, g = (p[k] for k in ("ms", "mu", "ks", "cs", "kt", "ls0", "lt0",
                                                      "g"))
    J = np.array([[0, 1, 0, -1], [-1, 0, 0, 0], [0, 0, 0, 1], [1, 0, -1, 0.0]])
    R = cs * np.array([[0, 0, 0, 0], [0, 1, 0, -1], [0, 0, 0, 0], [0, -1, 0, 1.0]])
    core = LinearPH(J, R, np.diag([ks, 1 / ms, kt, 1 / mu]),
                    [[0, 0, 0], [1, 1, 0], [0, 0, 0], [0, 0, 1.0]],
                    input_names=["F", "body_source", "wheel_source"])
    cb, cw = ks * ls0 - ms * g, kt * lt0 - ks * ls0 - mu * g
    Ty = np.zeros((6, 3))
    Ty[1, 0] = 1.0
    Cx = np.array([[1, 0, 1, 0], [0, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1 / mu],
                   [-ks / ms, -cs / ms**2, 0, cs / (mu * ms)], [0, 0, -kt, 0]])
    Du = np.zeros((6, 1))
    Du[4, 0] = 1 / ms
    cy = np.array([0, 0, 0, 0, cb / ms, kt * lt0])
    outs, units = QC_OUT, ("m", "m/s", "m", "m/s", "m/s2", "N")
    if extra_output:  # the suspension length: no variable of the FMU
        outs, units = outs + ("l_susp",), units + ("m",)
        Ty, Cx = np.vstack([Ty, np.zeros(3)]), np.vstack([Cx, [1, 0, 0, 0]])
        Du, cy = np.vstack([Du, [0.0]]), np.append(cy, 0.0)
    ports = PortMap(("F",), outs, ("N",), units, Tu=[[1.0], [0.0], [0.0]], cu=[0.0, cb, cw],
                    Ty=Ty, Cx=Cx, Du=Du, cy=cy)
    return PortedSystem(core, ports, x0=[ls0, 0.0, lt0, 0.0])


def free_mass_ported(name: str = "v", unit: str = "m/s", gain: float = 1.0) -> PortedSystem:
    """The free mass: its port delivers power (u_ph = −F); the velocity out times ``gain``."""
    ports = PortMap(("F",), (name,), ("N",), (unit,), Tu=[[-1.0]], cu=[0.0], Ty=[[gain]],
                    Cx=[[0.0]], Du=[[0.0]], cy=[0.0])
    return PortedSystem(free_mass_ph(), ports)


def damper_ported() -> PortedSystem:
    """The damper F = c v: order 0, all feedthrough (S = c)."""
    core = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 1)),
                    S=[[4.0]])
    ports = PortMap(("v",), ("F",), ("m/s",), ("N",), Tu=[[1.0]], cu=[0.0], Ty=[[1.0]],
                    Cx=np.zeros((1, 0)), Du=[[0.0]], cy=[0.0])
    return PortedSystem(core, ports)


def dc_motor_ported() -> PortedSystem:
    """The motor at rated field and forward direction: x = L i_a, ports (V, w) with
    B = [1, −k]; ``field`` and the Integer ``direction`` are inputs that move nothing here, the
    Boolean ``braking`` a measured output that stays 0."""
    p = dc_motor.PARAMS
    core = LinearPH([[0.0]], [[p["R"]]], [[1 / p["L"]]], [[1.0, -p["k"], 0.0, 0.0]])
    Ty = np.zeros((3, 4))
    Ty[0, 0] = Ty[1, 1] = 1.0
    ports = PortMap(("V", "w", "field", "direction"), ("i", "tau", "braking"),
                    ("V", "rad/s", "1", None), ("A", "N.m", None), Tu=np.eye(4), cu=np.zeros(4),
                    Ty=Ty, Cx=np.zeros((3, 1)), Du=np.zeros((3, 4)), cy=np.zeros(3))
    return PortedSystem(core, ports)


@pytest.fixture(scope="module")
def fmus():
    return {k: fs.benchmark_fmu(k) for k in ("quarter_car", "free_mass", "damper", "dc_motor")}


def _relative(rep):
    return {e.name: e.relative for e in rep.errors}


def test_quarter_car_from_its_operating_point_with_units(fmus, tmp_path):
    sur = quarter_car_ported()
    rep = validate(save(sur, tmp_path / "qc.json"), fmus["quarter_car"], rtol=1e-2, **QC_EXP)
    assert rep.passed and rep.outputs == QC_OUT
    assert rep.units == ("m", "m/s", "m", "m/s", "m/s2", "N")
    # midpoint vs the FMU's RK4, both under the zero-order hold at h = 1e-3: the midpoint's
    # error (ω h)²/12 at the wheel hop (ω ≈ 75 rad/s) is 4.7e-4; measured 5.1e-4 on vu (the
    # wheel hop's own output), 1e-5 or less on the body's; 4x margin
    assert max(_relative(rep).values()) < 2e-3
    assert _relative(rep)["zs"] < 1e-5  # measured 1.3e-6
    table = rep.table().splitlines()
    assert table[0].split()[:2] == ["output", "unit"]
    assert table[5].split()[:2] == ["a_s", "m/s2"] and table[5].endswith("ok")
    # the same object, not through a file: the same numbers
    assert _relative(validate(sur, fmus["quarter_car"], rtol=1e-2, **QC_EXP)) == _relative(rep)
    # from rest instead of x0, the body falls by 3 cm to its equilibrium: that is what the
    # operating point carries (100 % error on the positions)
    at_rest = PortedSystem(sur.system, sur.ports, x0=np.zeros(4))
    assert max(_relative(validate(at_rest, fmus["quarter_car"], **QC_EXP)).values()) > 0.9


@pytest.mark.parametrize("version", [2, 3])
def test_exported_quarter_car_starts_from_its_x_start(fmus, tmp_path, version):
    fmu = export_fmu(quarter_car_ported(), tmp_path / f"qc{version}.fmu", fmi_version=version)
    rep = validate(fmu, fmus["quarter_car"], rtol=1e-6, **QC_EXP)
    # the exported exact step vs RK4 with 10 substeps of 1e-4 s (its error ~ (λh)⁵/120 per
    # step): measured 2.3e-10 relative (vu), 2.6e-12 (zs)
    assert rep.passed and rep.outputs == QC_OUT
    assert max(_relative(rep).values()) < 2e-9


def test_outputs_the_reference_lacks_are_listed_not_compared(fmus):
    rep = validate(quarter_car_ported(extra_output=True), fmus["quarter_car"], **QC_EXP)
    assert rep.outputs == QC_OUT and rep.unmatched == ("l_susp",)
    assert rep.table().splitlines()[-1].endswith(": l_susp")
    rep = validate(quarter_car_ported(), fmus["quarter_car"], outputs=["a_s", "zs"], **QC_EXP)
    assert rep.outputs == ("a_s", "zs") and rep.units == ("m/s2", "m")
    with pytest.raises(ValidationError, match="outputs \\['l_susp'\\] are not outputs"):
        validate(quarter_car_ported(extra_output=True), fmus["quarter_car"], outputs=["l_susp"],
                 **QC_EXP)


FM_EXP = {"inputs": {"F": fs.signals.Chirp(f0=0.5, f1=0.5, phi=-90.0)}, "stop_time": 4.0,
          "step": 0.01}


def test_power_out_port_of_the_free_mass(fmus):
    rep = validate(free_mass_ported(), fmus["free_mass"], rtol=1e-9, **FM_EXP)
    # a held force on a mass: both the midpoint rule and CVode integrate it exactly;
    # measured 1.0e-15 relative
    assert rep.passed and rep.errors[0].relative < 1e-12 and rep.units == ("m/s",)
    # with the sign of the port wrong the velocity is mirrored: 200 %
    wrong = PortedSystem(free_mass_ph(), PortMap.identity(1, ["F"], ["v"]))
    assert validate(wrong, fmus["free_mass"], **FM_EXP).errors[0].relative == pytest.approx(2.0)


def test_an_output_about_a_large_value_is_judged_by_its_swing(fmus):
    # released at 100 m/s, the mass swings by about 0.3 m/s under the force; a surrogate twice
    # as heavy swings half as far: half its swing wrong, 0.16 % of the velocity
    exp = {**FM_EXP, "parameters": {"v0": 100.0}}
    ports = PortMap(("F",), ("v",), ("N",), ("m/s",), Tu=[[-1.0]], cu=[0.0], Ty=[[1.0]],
                    Cx=[[0.0]], Du=[[0.0]], cy=[0.0])
    heavy = PortedSystem(free_mass_ph(4.0), ports, x0=[400.0])
    rep = validate(heavy, fmus["free_mass"], rtol=1e-2, **exp)
    err = rep.errors[0]
    v = rep.reference[:, 0]
    assert err.scale == pytest.approx(np.max(np.abs(v - 100.0)), rel=1e-12)
    assert 0.1 < err.scale < 0.5 and err.max_abs < 1e-2 * np.max(v)
    # the held force moves both masses exactly (midpoint rule, CVode): 0.5 to round-off
    assert err.relative == pytest.approx(0.5, rel=1e-6) and not rep.passed
    assert validate(PortedSystem(free_mass_ph(), ports, x0=[200.0]), fmus["free_mass"],
                    rtol=1e-9, **exp).passed


def test_outputs_in_other_units_are_converted_and_other_quantities_refused(fmus):
    # the velocity in km/h (3.6 per m/s): compared in the reference's m/s
    rep = validate(free_mass_ported(unit="km/h", gain=3.6), fmus["free_mass"], rtol=1e-9,
                   **FM_EXP)
    assert rep.passed and rep.units == ("m/s",)  # measured 1.0e-15 relative, as above
    with pytest.raises(ValidationError, match="'N' in the surrogate but in 'm/s'"):
        validate(free_mass_ported(unit="N"), fmus["free_mass"], **FM_EXP)


def test_exported_names_are_matched_by_the_surrogate_names(fmus, tmp_path):
    # "body.v" is exported as the identifier body_v; validate reads the original name back
    fmu = export_fmu(free_mass_ported(name="body.v"), tmp_path / "fm.fmu")
    rep = validate(fmu, fmus["free_mass"], ports={"body.v": "v"}, rtol=1e-9, **FM_EXP)
    # the exact step on a held force: measured 1.0e-15 relative
    assert rep.passed and rep.outputs == ("v",) and rep.errors[0].relative < 1e-12


@pytest.mark.parametrize("exported", [False, True])
def test_damper_feedthrough_of_order_zero(fmus, tmp_path, exported):
    sur = damper_ported()
    sur = export_fmu(sur, tmp_path / "d.fmu") if exported else sur
    rep = validate(sur, fmus["damper"], rtol=0.0, atol=1e-14,
                   inputs={"v": fs.signals.Chirp(f0=0.5, f1=3.0, t1=4.0)}, stop_time=4.0,
                   step=0.01)
    # F = c v at the same instant in both: the input recorded with the output it produced
    # (a step late would be off by c Δv, up to 0.75 N here); measured 0 for both
    assert rep.passed and rep.outputs == ("F",) and rep.units == ("N",)


def test_dc_motor_integer_input_and_boolean_output(fmus, tmp_path):
    exp = {"stop_time": 1.0, "step": 1e-3}
    V = {"V": fs.signals.Chirp(f0=1.0, f1=5.0, t1=1.0, amplitude=10.0),
         "w": fs.signals.Constant(4.0)}
    rep = validate(save(dc_motor_ported(), tmp_path / "m.json"), fmus["dc_motor"], inputs=V,
                   rtol=1e-3, **exp)
    # midpoint vs RK4 at h = 1e-3 on the time constant L/R = 0.05 s: (h R/L)²/12 = 3.3e-5;
    # measured 1.7e-5 (i, tau); the Boolean braking output is false (0) in both
    assert rep.passed and rep.outputs == ("i", "tau", "braking")
    assert rep.units == ("A", "N.m", None) and max(_relative(rep).values()) < 1e-4
    assert rep.errors[2].max_abs == 0.0
    # the contactor opens at t = 0.5 (direction 0, an Integer): the reference brakes, this
    # surrogate does not know the direction: braking differs by exactly 1 (true vs 0)
    V["direction"] = fs.signals.Step(t0=0.5, before=1.0, after=0.0)
    rep = validate(dc_motor_ported(), fmus["dc_motor"], inputs=V, rtol=1e-3, **exp)
    assert not rep.passed and rep.errors[2].max_abs == 1.0


def test_cli_validates_a_drop_in_surrogate_and_plots_per_output(fmus, tmp_path, capsys):
    path = save(quarter_car_ported(), tmp_path / "qc.json")
    png = tmp_path / "qc.png"
    argv = ["validate", str(path), str(fmus["quarter_car"]), "--input",
            "F=chirp:f0=1.5,f1=1.5,amplitude=500,phi=-90", "--stop", "2", "--step", "0.001",
            "--rtol", "1e-2", "--plot", str(png)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "a_s" in out and "m/s2" in out and "matches quarter_car.fmu" in out
    assert png.stat().st_size > 10_000


def test_plot_has_one_labelled_axis_per_output_and_its_error(fmus):
    import matplotlib.pyplot as plt

    rep = validate(quarter_car_ported(), fmus["quarter_car"], outputs=["zs", "a_s"], **QC_EXP)
    fig = rep.plot()
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels == ["zs [m]", "error [m]", "a_s [m/s2]", "error [m/s2]"]
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["reference FMU",
                                                                            "surrogate"]
    plt.close(fig)


def test_identified_free_mass_and_its_fmu_validate_on_a_held_out_input(fmus, tmp_path):
    from fmu_surrogate.fmu.campaigns.campaign import harvest
    from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier

    ds = harvest(fmus["free_mass"], tmp_path / "fm.nc",
                 signals=[{"F": fs.signals.Chirp(f0=0.1, f1=2.0, t1=10.0)}], stop_time=10.0,
                 step=0.01, record=["F", "v"], workers=1, progress=False)
    sur = LinearPHIdentifier().fit_dataset(ds, inputs=["F"], outputs=["v"]).to_surrogate()
    assert isinstance(sur, PortedSystem) and sur.ports.Tu.tolist() == [[-1.0]]  # power out
    path = save(sur, tmp_path / "fm.json")
    exp = {"inputs": {"F": fs.signals.Chirp(f0=0.3, f1=0.3, phi=-90.0)}, "stop_time": 10.0,
           "step": 0.01}
    # the data are exactly those of an order-1 pH system under the zero-order hold, so the fit
    # reaches round-off: measured 6.9e-13 (file) and 7.3e-13 (exported FMU) relative; the
    # bound is the 1 % held-out bar divided by 10
    for candidate in (path, export_fmu(path, tmp_path / "fm.fmu")):
        rep = validate(candidate, fmus["free_mass"], rtol=1e-3, **exp)
        assert rep.passed and rep.outputs == ("v",)
