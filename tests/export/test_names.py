import numpy as np

from fmu_surrogate.export.names import exported_names, sanitize
from fmu_surrogate.ph import LinearPH


def test_identifiers_pass_and_the_rest_is_sanitised():
    assert sanitize(["F1", "v_2"]) == ["F1", "v_2"]
    assert sanitize(["a b", "mass[1].v", "2nd", "", "der(x)"]) == [
        "a_b", "mass_1_v", "p2nd", "port", "der_x_"]
    # keywords of C and Modelica get a trailing underscore; the names the exporter adds are
    # taken, so a port called H is numbered
    assert sanitize(["double", "model", "H", "energy_residual", "time"]) == [
        "double_", "model_", "H_2", "energy_residual_2", "time_2"]


def test_collisions_are_numbered():
    assert sanitize(["a b", "a-b", "a_b"]) == ["a_b", "a_b_2", "a_b_3"]
    assert sanitize(["x"], taken=["x"]) == ["x_2"]


def test_exported_names_map_every_port_and_state():
    s = LinearPH(np.zeros((2, 2)), np.zeros((2, 2)), np.eye(2), np.eye(2),
                 input_names=["F in", "u"], output_names=["u out", "y"], state_names=["u", "q"])
    names = exported_names(s)
    assert names["inputs"] == {"F in": "F_in", "u": "u"}
    assert names["outputs"] == {"u out": "u_out", "y": "y"}
    assert names["states"] == {"u": "u_2", "q": "q"}  # a state may not reuse a port's name
