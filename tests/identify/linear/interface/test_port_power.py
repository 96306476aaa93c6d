"""Outputs that are a power the FMU shows (an input times another output): left out of the
fit, named in the report."""

from __future__ import annotations

import numpy as np

from fmu_surrogate.identify.linear.interface.port_power import power_outputs
from fmu_surrogate.identify.linear.interface.variables import dataset_interface
from tests.identify.test_selection import _mass_dataset


def _with_powers():
    """The damped mass of tests/identify/test_selection.py (force in, N; position, velocity,
    acceleration out, m, m/s, m/s2) with the power it takes in W and in kW, and its force
    times its position in J (a product, but no power) as further outputs."""
    ds, _, _ = _mass_dataset()
    for name, values, units in (("P", ds["F"] * ds["v"], "W"),
                                ("Pk", 1e-3 * ds["F"] * ds["v"], "kW"),
                                ("E", ds["F"] * ds["x"], "J")):
        ds[name] = values
        ds[name].attrs.update(fmu_variable=name, causality="output", type="Real", units=units)
    return ds


def test_outputs_that_are_a_product_are_found_with_their_factor():
    ds = _with_powers()
    units = {n: ds[n].attrs["units"] for n in ("F", "x", "v", "a", "P", "Pk", "E")}
    found = power_outputs(ds, ["F"], ["x", "v", "a", "P", "Pk", "E"], units)
    # the products are exact in the data (the same doubles multiplied): factors 1 and 1e-3 to
    # the four digits shown; x, v, a are no product of F and another output, and E is one
    # but not in a unit of power (a motor's torque is its field input times its current)
    assert found == [("P", "P = 1 · F · v"), ("Pk", "Pk = 0.001 · F · v")]
    iface = dataset_interface(ds)
    assert iface.outputs == ("x", "v", "a", "E")
    assert [n for n, _ in iface.products] == ["P", "Pk"]


def test_a_product_that_is_not_exact_is_fitted():
    ds = _with_powers()
    # 1e-6 of noise on P: not the FMU's own product of its values (PRODUCT_RTOL is 1e-9)
    rng = np.random.default_rng(0)
    P = ds["P"].values
    ds["P"].values = P + 1e-6 * np.std(P) * rng.standard_normal(P.shape)
    units = {n: ds[n].attrs["units"] for n in ("F", "x", "v", "a", "P")}
    assert power_outputs(ds, ["F"], ["x", "v", "a", "P"], units) == []


def test_the_drop_in_surrogate_leaves_the_power_out_and_says_so():
    from fmu_surrogate.identify.selection import select_dataset

    choice = select_dataset(_with_powers().drop_vars("E"))  # E would need a nonlinear fit
    assert "not fitted (an input times another output" in choice.report()
    assert "P = 1 · F · v" in choice.report()
    sur = choice.surrogate()
    assert list(sur.output_names) == ["x", "v", "a"]
    # the mass itself as without the power outputs (tests/identify/test_selection.py: a
    # linear model within 1e-4 of scipy's lsim); measured 5.5e-8 here
    assert choice.method == "linear" and choice.linear_error < 1e-4
