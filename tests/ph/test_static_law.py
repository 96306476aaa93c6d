"""A static nonlinear law of the external inputs in the outputs (StaticLaw)."""

import numpy as np
import pytest

from fmu_surrogate.ph import LinearPH, PortedSystem, PortMap, StaticLaw, StructureError, simulate


def law():
    """Three terms on two inputs into two outputs: one of each kind, one on a difference."""
    return StaticLaw(("cubic", "tanh", "hinge"), W=[[2.0, 0.0], [1.0, -1.0], [0.0, 4.0]],
                     b=[0.1, 0.0, -1.0], C=[[1.5, 0.0, 0.5], [0.0, -3.0, 0.0]])


def test_values_are_the_sum_of_the_terms():
    u = np.array([[0.3, -0.2], [-1.0, 0.5], [0.0, 0.75]])
    s1, s2, s3 = 2 * u[:, 0] + 0.1, u[:, 0] - u[:, 1], 4 * u[:, 1] - 1.0
    expected = np.column_stack([1.5 * s1 ** 3 + 0.5 * np.maximum(s3, 0), -3.0 * np.tanh(s2)])
    np.testing.assert_allclose(law().values(u), expected, rtol=1e-15, atol=1e-15)
    # only the third row's hinge is past its kink (4 · 0.75 − 1 = 2)
    assert law().values(u[2:])[0, 0] == pytest.approx(1.5 * 0.1 ** 3 + 1.0, rel=1e-15)


def test_dependencies_are_where_a_term_links_an_output_to_an_input():
    np.testing.assert_array_equal(law().dependencies, [[True, True], [True, True]])
    one = StaticLaw(("cubic",), W=[[0.0, 1.0]], b=[0.0], C=[[0.0], [2.0]])
    np.testing.assert_array_equal(one.dependencies, [[False, False], [False, True]])


@pytest.mark.parametrize("kw, match", [
    ({"kinds": ("quartic",)}, "unknown"),
    ({"W": [[1.0], [2.0]]}, "StaticLaw.W must have shape"),
    ({"C": [[1.0, 2.0]]}, "StaticLaw.C must have shape"),
    ({"b": [np.nan]}, "NaN or Inf"),
])
def test_bad_laws_are_refused(kw, match):
    d = {"kinds": ("cubic",), "W": [[1.0]], "b": [0.0], "C": [[1.0]]}
    d.update(kw)
    with pytest.raises(StructureError, match=match):
        StaticLaw(**d)


def test_dict_round_trip_is_exact_and_compares_by_value():
    a = law()
    assert StaticLaw.from_dict(a.to_dict()) == a
    assert StaticLaw.from_dict(a.to_dict()) != StaticLaw(a.kinds, a.W, a.b, 2 * a.C)


def spring_surrogate():
    """A displacement input s (m) and a velocity v (m/s); force F = Du·s + law(s) + c·v (N)."""
    core = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 1)),
                    S=[[0.4]])  # the damper c = 0.4 on the power port (v, F)
    k3 = StaticLaw(("cubic",), W=[[1.0, 0.0]], b=[0.0], C=[[50.0]])
    ports = PortMap(("s", "v"), ("F",), ("m", "m/s"), ("N",), Tu=[[0.0, 1.0]], cu=[0.0],
                    Ty=[[1.0]], Cx=np.zeros((1, 0)), Du=[[20.0, 0.0]], cy=[0.0], law=k3)
    return PortedSystem(core, ports)


def test_a_ported_system_adds_the_law_to_its_outputs_and_simulation():
    sur = spring_surrogate()
    t = np.linspace(0.0, 1.0, 11)
    s, v = 0.1 * np.sin(3 * t), 0.3 * np.cos(3 * t)
    traj = simulate(sur, t, np.column_stack([s, v]))
    # the force the law gives, exactly: the core is a resistor with no state
    np.testing.assert_allclose(traj.y[:, 0], 20 * s + 50 * s ** 3 + 0.4 * v, rtol=1e-14,
                               atol=1e-15)
    np.testing.assert_array_equal(sur.output_dependencies, [[True, True]])
    np.testing.assert_array_equal(sur.feedthrough, [[20.0, 0.4]])  # the linear part only


def test_a_delayed_feedthrough_applies_the_law_to_the_inputs_before():
    base = spring_surrogate()
    sur = PortedSystem(base.system, base.ports, delayed_feedthrough=True,
                       inputs_before=[0.2, 0.0])
    t = np.linspace(0.0, 1.0, 5)
    u = np.column_stack([np.linspace(0.0, 0.4, 5), np.zeros(5)])
    seen = np.concatenate([[0.2], u[:-1, 0]])
    np.testing.assert_allclose(simulate(sur, t, u).y[:, 0], 20 * seen + 50 * seen ** 3,
                               rtol=1e-14, atol=1e-15)


def test_a_wiring_refuses_a_law_of_other_sizes():
    base = spring_surrogate().ports
    wide = StaticLaw(("cubic",), W=[[1.0, 0.0, 0.0]], b=[0.0], C=[[1.0]])
    with pytest.raises(StructureError, match="law reads 3 inputs into 1 outputs"):
        PortMap(base.input_names, base.output_names, base.input_units, base.output_units,
                base.Tu, base.cu, base.Ty, base.Cx, base.Du, base.cy, law=wide)
