"""``fmu-surrogate identify DATA -o S.json`` with no other flag on the vendor-style components:
inputs and outputs from the dataset, power pairs from the units, orientation, order, x0 and
offsets from the data; the surrogate reproduces a held-out run within 1 %."""

from __future__ import annotations

import numpy as np
import pytest

import fmu_surrogate as fs
from fmu_surrogate.cli import main
from fmu_surrogate.ph import PortedSystem, load, simulate


def noise(seed: int, std: float, f_high: float, duration: float) -> fs.signals.Signal:
    return fs.signals.BandLimitedNoise(f_high=f_high, std=std, duration=duration, seed=seed)


# component -> (stop, step, signal sets: the first trains, the second is held out)
CASES = {
    "damper": (1.0, 0.01, [{"v": noise(s, 1.0, 5.0, 1.0)} for s in (1, 2)]),
    "free_mass": (5.0, 0.01, [{"F": noise(s, 1.0, 2.0, 5.0)} for s in (1, 2)]),
    # body mode 1.2 Hz, wheel hop 12 Hz: a 2 ms step keeps the midpoint rule of ph.simulate
    # (the validation's integrator) at 0.2 % on the wheel velocity; at 5 ms it alone costs 1.3 %
    "quarter_car": (2.0, 0.002, [{"F": noise(s, 500.0, 5.0, 2.0)} for s in (1, 2)]),
    # field and direction stay at their start values (1, forward): the motor is linear there
    "dc_motor": (1.0, 0.002, [{"V": noise(s, 5.0, 20.0, 1.0), "w": noise(s + 10, 10.0, 5.0, 1.0)}
                              for s in (1, 2)]),
    # the spring's elongation x0 + s within about -0.04 to 0.06 m (x_ref = 0.05: its cubic
    # term up to 1.4 times the linear one); in the adaptor convention s and v independent;
    # two training runs (the linear fit's order selection holds one of them out)
    "progressive_spring_displacement": (4.0, 0.01, [{"s": noise(s, 0.02, 2.0, 4.0)}
                                                    for s in (1, 2, 3)]),
    "progressive_spring_damper": (4.0, 0.01, [{"s": noise(s, 0.02, 2.0, 4.0),
                                               "v": noise(s + 10, 0.8, 5.0, 4.0)}
                                              for s in (1, 2, 3)]),
}


@pytest.fixture(scope="module")
def identified(tmp_path_factory):
    """Harvest each component (two runs) and identify it with the CLI's defaults only."""
    out = {}
    root = tmp_path_factory.mktemp("vendor")
    for name, (stop, step, signals) in CASES.items():
        data, sur = root / f"{name}.nc", root / f"{name}.json"
        fs.harvest(fs.benchmark_fmu(name), data, stop_time=stop, step=step, signals=signals,
                   workers=1, progress=False)
        out[name] = (data, sur)
    return out


def run(identified, name, capsys):
    data, sur = identified[name]
    assert main(["identify", str(data), "-o", str(sur)]) == 0
    return load(sur), capsys.readouterr().out


def heldout_error(system, data, run: int = 1) -> float:
    """Worst relative output error max|ŷ − y| / max|y| on the held-out run (run 1), the
    surrogate simulated by ph.simulate from its operating point with the FMU's zero-order
    hold."""
    names = list(system.input_names) + list(system.output_names)
    (t, X), = fs.run_arrays(data, names, runs=[run])
    k = len(system.input_names)
    y = X[:, k:]
    y_hat = simulate(system, t, X[:, :k], hold="zoh").y
    return float((np.abs(y_hat - y).max(axis=0) / np.abs(y).max(axis=0)).max())


def pairs_of(system: PortedSystem) -> list[tuple[str, str, float]]:
    """(input, output, orientation sign) of each power pair of the wiring."""
    p = system.ports
    out = []
    for c in range(p.Tu.shape[0]):
        ys = np.flatnonzero(p.Ty[:, c])
        us = np.flatnonzero(p.Tu[c])
        if ys.size == 1 and us.size == 1:
            out.append((p.input_names[us[0]], p.output_names[ys[0]], float(p.Tu[c, us[0]])))
    return out


def test_damper_is_a_static_map(identified, capsys):
    s, text = run(identified, "damper", capsys)
    assert s.n_states == 0 and s.input_names == ("v",) and s.output_names == ("F",)
    assert "power pair v -> F, power in" in text and "kept: linear" in text
    # F = c v exactly: measured 0 (round-off)
    assert heldout_error(s, identified["damper"][0]) <= 1e-8


def test_free_mass_delivers_power(identified, capsys):
    s, text = run(identified, "free_mass", capsys)
    assert isinstance(s, PortedSystem) and pairs_of(s) == [("F", "v", -1.0)]
    assert "power pair F -> v, power out" in text
    # m v' = −F is the model class itself: measured 6e-11
    assert heldout_error(s, identified["free_mass"][0]) <= 1e-6


def test_quarter_car_pairs_the_force_with_the_body_velocity(identified, capsys):
    s, text = run(identified, "quarter_car", capsys)
    assert isinstance(s, PortedSystem) and pairs_of(s) == [("F", "vs", 1.0)]
    assert s.output_names == ("zs", "vs", "zu", "vu", "a_s", "F_tyre")
    assert "passivity score" in text and "measured outputs (no power pair): zs, zu, vu" in text
    assert "order 4 chosen from the data" in text and "offsets" in text
    # measured 0.19 % (the wheel velocity; ph.simulate's midpoint rule at 2 ms, the fit's own
    # exact discretisation is at 1e-9): within the 1 % the drop-in promises
    assert heldout_error(s, identified["quarter_car"][0]) <= 0.01


def test_dc_motor_pairs_voltage_current_and_speed_torque(identified, capsys):
    s, text = run(identified, "dc_motor", capsys)
    assert isinstance(s, PortedSystem)
    assert s.input_names == ("V", "w", "field", "direction")
    assert s.output_names == ("i", "tau")  # braking (Boolean) is not fitted
    assert sorted(pairs_of(s)) == [("V", "i", 1.0), ("w", "tau", 1.0)]
    # held at their start values in every run: no port of the model (a column of B the data
    # cannot fit), inputs of the surrogate held at those values
    assert "modulating inputs" not in text
    assert "not excited (one value in every run): field = 1, direction = 1" in text
    assert text.count("field = 1") == 1  # said once
    assert "not fitted (discrete outputs): braking" in text
    # one electrical state, linear at constant field and direction: measured 1.0e-4
    assert heldout_error(s, identified["dc_motor"][0]) <= 1e-3


def test_a_damper_whose_force_lags_one_step_is_identified_and_exported_as_such(tmp_path,
                                                                               capsys):
    """A harvest of the power damper with each force moved one sample later (``F_k`` the law
    of ``v_{k−1}``, ``F_0 = 0`` at rest): the defaults find the delay, say so, fit it, and the
    export is a co-simulation FMU that shows the inputs of the step before."""
    import xarray as xr

    raw, data = tmp_path / "raw.nc", tmp_path / "lagged.nc"
    fs.harvest(fs.benchmark_fmu("power_damper"), raw, stop_time=5.0, step=0.01,
               signals=[{"v": noise(s, 0.8, 5.0, 5.0)} for s in (1, 2, 3)], workers=1,
               progress=False)
    with xr.open_dataset(raw) as ds:
        ds = ds.load()
    F = ds["F"].values
    ds["F"].values = np.concatenate([np.zeros((F.shape[0], 1)), F[:, :-1]], axis=1)
    ds.to_netcdf(data, engine="h5netcdf")
    sur = tmp_path / "s.json"
    assert main(["identify", str(data), "-o", str(sur)]) == 0
    text = capsys.readouterr().out
    assert "kept: nonlinear" in text and "step before" in text
    assert "start values 0" in text  # v's declared start: the FMU at rest before t = 0
    system = load(sur)
    assert system.delayed_feedthrough and system.inputs_before.tolist() == [0.0]
    # the held-out run (run 2): measured 3e-6 of the force's peak; a direct feedthrough
    # misses by the velocity's change over a step (about 10 %)
    assert heldout_error(system, data, 2) <= 1e-3
    assert main(["export", str(sur), "--fmu", str(tmp_path / "s.fmu")]) == 0
    assert "co-simulation, outputs see the inputs of the step before" in capsys.readouterr().out



def _linear_error(text: str) -> float:
    """The linear model's held-out error the report states (a fraction)."""
    import re

    return float(re.search(r"linear pH model: +held-out error ([-+0-9.e]+) %", text)[1]) / 100


def test_a_spring_driven_by_its_displacement_gets_a_static_law(identified, capsys):
    """No power pair (m · N is energy), no state: F = Du s + cy + a static law of s."""
    s, text = run(identified, "progressive_spring_displacement", capsys)
    assert s.n_states == 0 and s.input_names == ("s",) and s.output_names == ("F",)
    assert "measured outputs (no power pair): F" in text
    assert "static law of the inputs s in the outputs F: 2 terms (2 cubic)" in text
    assert "kept: nonlinear" in text and s.ports.law.kinds == ("cubic", "cubic")
    # F = k (x0 + s)(1 + ((x0 + s)/x_ref)²) is a cubic of s: two cubics and the affine wiring
    # hold it exactly; measured 7e-10 of the force's peak against the linear model's 27 %
    # (round-off and the start's ridge; 1e-6 is far from both and far inside the 2 %)
    assert heldout_error(s, identified["progressive_spring_displacement"][0], 2) <= 1e-6
    assert _linear_error(text) >= 0.2


def test_a_spring_damper_in_the_adaptor_convention_gets_a_static_law_of_its_position(
        identified, capsys):
    """s and v in, f out: f pairs with v (power), s is modulating; the damper's power law is
    the core's nonlinear feedthrough, the spring's law of s the static law."""
    s, text = run(identified, "progressive_spring_damper", capsys)
    assert s.n_states == 0 and pairs_of(s) == [("v", "f", 1.0)]
    assert "modulating inputs (no power pair): s" in text
    assert "static law of the inputs s in the outputs f" in text and "kept: nonlinear" in text
    np.testing.assert_array_equal(s.ports.law.dependencies, [[True, False]])  # of s only
    # measured 2.6e-6 of the force's peak (the damper's power law is fitted by L-BFGS-B, 227
    # iterations) against the linear model's 25 %; 1e-3 leaves the optimiser's path room on
    # any BLAS and is 20 times inside the 2 % a nonlinear drop-in promises
    assert heldout_error(s, identified["progressive_spring_damper"][0], 2) <= 1e-3
    assert _linear_error(text) >= 0.1


def test_method_nonlinear_that_keeps_no_nonlinear_model_says_both_errors(identified, capsys,
                                                                           monkeypatch):
    """``--method nonlinear`` asks for a tolerance no linear model reaches; when the nonlinear
    model is no better, the error names both models' errors, not that internal tolerance."""
    from fmu_surrogate.identify import selection

    def no_better(ds, **kwargs):
        return selection.ModelChoice("linear", None, 0.5, 0.625, kwargs["tolerance"],
                                     "the linear error exceeds the tolerance 2.23e-306 %",
                                     checked_on="held-out")

    monkeypatch.setattr(selection, "select_dataset", no_better)
    data, sur = identified["damper"]
    assert main(["identify", str(data), "-o", str(sur), "--method", "nonlinear"]) != 0
    err = capsys.readouterr().err
    assert "misses the held-out runs by 62.5 %, no better than the linear model's 50 %" in err
    assert "e-306" not in err
