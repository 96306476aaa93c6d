"""The plot of a coupled run: one axis per quantity, labelled, the residuals on their own."""

from __future__ import annotations

import numpy as np
import xarray as xr

from fmu_surrogate.couple.results.plotting import axis_groups, plot_result, quantity


def test_axis_labels_name_the_quantity_and_the_unit():
    assert quantity("N") == "force [N]"
    assert quantity("m/s") == "velocity [m/s]"
    assert quantity("bar") == "pressure [bar]"
    assert quantity("l/min") == "volume flow [l/min]"
    assert quantity("N.m") == "torque, energy [N.m]"
    assert quantity("rad/s") == "rate, angular velocity [rad/s]"
    assert quantity("1") == "dimensionless [1]"
    assert quantity("") == "no unit"
    assert quantity("furlong") == "[furlong]"


def test_variables_are_grouped_by_unit_and_residuals_come_last(tmp_path):
    t = np.linspace(0.0, 1.0, 11)
    col = lambda unit: xr.Variable(("run", "time"), np.sin(t)[None], {"units": unit} if unit else {})
    ds = xr.Dataset({"a.F": col("N"), "a.v": col("m/s"), "b.F": col("N"), "b.k": col(""),
                     "bond:x:P_a": col("W"), "bond:x:residual": col("J"),
                     "bond:y:residual": col("J"), "status": ("run", ["ok"])},
                    coords={"time": t}, attrs={"driven_inputs": "b.F"})
    assert axis_groups(ds) == [("force [N]", ["a.F", "b.F"]), ("velocity [m/s]", ["a.v"]),
                               ("no unit", ["b.k"]),
                               ("bond residual [J]", ["bond:x:residual", "bond:y:residual"])]
    out = plot_result(ds, tmp_path / "p.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
