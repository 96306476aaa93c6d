"""The variables a surrogate takes and gives: outputs with one value in every run are left out
of the fit and named in the report."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.fmu.dataset import constant_variables
from fmu_surrogate.identify.linear.errors import LinearIdentificationError
from fmu_surrogate.identify.linear.interface.variables import dataset_interface
from tests.identify.test_selection import _mass_dataset


def _with_constants():
    """The damped mass of tests/identify/test_selection.py (force in; position, velocity,
    acceleration out) with a fixed flange's position (0 m) and a held temperature (293.15 K)
    as further outputs."""
    ds, _, _ = _mass_dataset()
    for name, value, unit in (("z", 0.0, "m"), ("T", 293.15, "K")):
        ds[name] = 0.0 * ds["x"] + value
        ds[name].attrs.update(fmu_variable=name, causality="output", type="Real", units=unit)
    return ds


def test_constant_values_are_found_with_their_value_and_left_out():
    ds = _with_constants()
    assert constant_variables(ds, ["x", "v", "a", "z", "T"]) == {"z": 0.0, "T": 293.15}
    # recomputed each step, the temperature carries round-off (1e-13 K): still constant; a
    # change of 1e-9 of it is not
    ds["T"].values = ds["T"].values + 1e-13 * np.sin(np.arange(ds["T"].shape[-1]))
    assert list(constant_variables(ds, ["T"])) == ["T"]
    ds["T"].values = ds["T"].values + 293.15e-9 * np.sin(np.arange(ds["T"].shape[-1]))
    assert constant_variables(ds, ["T"]) == {}
    ds = _with_constants()
    iface = dataset_interface(ds)
    assert iface.outputs == ("x", "v", "a")
    line = ("  not fitted (one value in every run: no answer to the inputs; the surrogate "
            "leaves them out): z = 0, T = 293.15")
    assert iface.report_lines() == (line,)
    # an output the user names is fitted, and not reported as left out
    assert iface.report_lines(["z"])[0].endswith("out): T = 293.15")


def test_the_drop_in_surrogate_fits_the_part_as_without_them():
    from fmu_surrogate.identify.selection import select_dataset

    choice = select_dataset(_with_constants())
    assert "not fitted (one value in every run" in choice.report()
    assert list(choice.surrogate().output_names) == ["x", "v", "a"]
    # the mass as without them (tests/identify/test_selection.py; measured 5.55e-8); fitted
    # with z ≡ 0, weighted by its zero spread, the held-out error was 1e288 %
    assert choice.method == "linear" and choice.linear_error < 1e-4


def test_a_dataset_whose_outputs_are_all_constant_is_refused_naming_the_fix():
    ds = _with_constants().drop_vars(["x", "v", "a"])
    with pytest.raises(LinearIdentificationError, match="constant in every run.*--input"):
        dataset_interface(ds)
    assert np.isfinite(ds["T"].values).all()


def test_a_dataset_whose_inputs_are_all_held_is_refused_naming_the_fix():
    """The mass's force held at 2 N in every run while its position moves (released from
    elsewhere): the outputs show the FMU on its own, not its answer to the force."""
    ds, _, _ = _mass_dataset()
    ds["F"].values = 0.0 * ds["F"].values + 2.0
    with pytest.raises(LinearIdentificationError, match=r"no input .*varies.*F = 2.*--input"):
        dataset_interface(ds)
    # one run with the force excited is enough to fit
    ds, _, _ = _mass_dataset()
    ds["F"].values[1:] = 2.0
    assert dataset_interface(ds).held_inputs == ()


def test_inputs_not_excited_stay_inputs_and_are_named():
    """A second force left at 0 and an ambient temperature at its start value in every run:
    the drop-in surrogate keeps the FMU's inputs, and the report says they were not excited
    (the temperature acts on the mass's integrator as a force the fit cannot tell from the
    operating point)."""
    ds, _, _ = _mass_dataset()
    for name, value, unit in (("F2", 0.0, "N"), ("Tamb", 293.15, "K")):
        ds[name] = 0.0 * ds["F"] + value
        ds[name].attrs.update(fmu_variable=name, causality="input", type="Real", units=unit)
    iface = dataset_interface(ds)
    assert iface.inputs == ("F", "F2", "Tamb")
    assert iface.held_inputs == (("F2", 0.0), ("Tamb", 293.15))
    assert iface.report_lines()[-1].startswith(
        "  not excited (one value in every run): F2 = 0, Tamb = 293.15 — fitted as the "
        "operating point")


def test_a_held_input_is_fitted_as_an_operating_point():
    """The temperature held at 293.15 K: as a signal it drove the mass's integrator (2.2e4 %
    held out); as an operating point the mass is fitted as without it, and the surrogate,
    which keeps the input, reproduces the held-out run at that value."""
    from fmu_surrogate.identify.selection import select_dataset
    from fmu_surrogate.ph import simulate
    from tests.identify.linear.test_dataset import T

    ds, F2, y2 = _mass_dataset()
    ds["Tamb"] = 0.0 * ds["F"] + 293.15
    ds["Tamb"].attrs.update(fmu_variable="Tamb", causality="input", type="Real", units="K")
    choice = select_dataset(ds)
    # the mass alone: 5.55e-8 held out (tests/identify/test_selection.py); measured the same
    assert choice.method == "linear" and choice.linear_error < 1e-4
    sur = choice.surrogate()
    assert list(sur.input_names) == ["F", "Tamb"]
    np.testing.assert_array_equal(choice.estimator.input_offsets_, [0.0, 293.15])
    u = np.column_stack([F2, np.full(T.size, 293.15)])
    y_hat = simulate(sur, T, u, hold="zoh").y
    # against scipy's lsim of the mass (the data): within 1e-4 of each output's range, as the
    # tolerance above (measured 5.5e-8)
    assert np.abs(y_hat - y2).max(axis=0).max() <= 1e-4 * np.abs(y2).max()
    assert np.allclose(choice.estimator.predict(T, u), y_hat, rtol=0, atol=1e-6 * np.abs(y2).max())


def test_a_held_input_takes_no_port_of_the_model():
    """The same held temperature: a column of zeros (its deviations) had its own port and a
    column of B fitted from no data, and spoiled the subspace start; without a port, the model
    is the one fitted without the input, to the last digit, and the surrogate's wiring gives
    the input no effect."""
    from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier

    ds, _, _ = _mass_dataset()
    alone = LinearPHIdentifier().fit_dataset(ds, runs=[0])
    ds["Tamb"] = 0.0 * ds["F"] + 293.15
    ds["Tamb"].attrs.update(fmu_variable="Tamb", causality="input", type="Real", units="K")
    held = LinearPHIdentifier().fit_dataset(ds, runs=[0])
    assert held.system_.B.shape == alone.system_.B.shape  # no port for Tamb
    for name in ("J", "R", "Q", "B"):  # the same fit: the same arithmetic (measured 0)
        np.testing.assert_allclose(getattr(held.system_, name), getattr(alone.system_, name),
                                   rtol=0, atol=1e-12)
    ports = held.to_surrogate().ports
    assert not ports.Tu[:, 1].any() and not ports.Du[:, 1].any()
