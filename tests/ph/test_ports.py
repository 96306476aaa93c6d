"""The wiring of a drop-in surrogate: PortMap and PortedSystem."""

import numpy as np
import pytest

from fmu_surrogate.ph import LinearPH, PortedSystem, PortMap, StructureError


def core():
    """Mass–spring–damper (k = 2, m = 1, c = 0.1) with a force port and a resistive feedthrough."""
    return LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.1]), np.diag([2.0, 1.0]),
                    [[0.0, 0.0], [1.0, 1.0]], P=[[0.0, 0.0], [0.05, 0.0]],
                    S=[[0.5, 0.0], [0.0, 0.0]], N=[[0.0, 0.3], [-0.3, 0.0]])


def wiring(**kw):
    d = {"input_names": ("F",), "output_names": ("v", "q"), "input_units": ("N",),
         "output_units": ("m/s", "m"), "Tu": [[-1.0], [0.0]], "cu": [0.0, 0.5],
         "Ty": [[1.0, 0.0], [0.0, 0.0]], "Cx": [[0.0, 0.0], [1.0, 0.0]], "Du": [[0.0], [0.2]],
         "cy": [0.0, 0.01]}
    d.update(kw)
    return PortMap(**d)


def test_outputs_follow_the_affine_wiring():
    sur = PortedSystem(core(), wiring(), x0=[0.25, -0.5])
    assert sur.input_names == ("F",) and sur.output_names == ("v", "q")
    assert sur.input_units == ("N",) and sur.output_units == ("m/s", "m")
    x = np.array([[0.3, 0.4], [-0.1, 0.2]])
    u = np.array([[1.5], [-2.0]])
    u_ph = np.column_stack([-u[:, 0], np.full(2, 0.5)])
    np.testing.assert_array_equal(sur.inputs_to_ports(u), u_ph)
    s = core()
    y_ph = x @ s.Q @ (s.B + s.P) + u_ph @ s.D.T  # (G + P)ᵀ Q x + (S − N) u_ph
    expected = np.column_stack([y_ph[:, 0], x[:, 0] + 0.2 * u[:, 0] + 0.01])
    np.testing.assert_allclose(sur.outputs(x, u), expected, rtol=1e-15, atol=1e-16)
    np.testing.assert_allclose(sur.outputs(x[0], u[0]), expected[0], rtol=1e-15, atol=1e-16)
    np.testing.assert_array_equal(sur.x0, [0.25, -0.5])


def test_external_feedthrough_is_the_derivative_of_the_outputs_by_the_inputs():
    sur = PortedSystem(core(), wiring())
    x = np.array([0.3, 0.4])
    y0, y1 = sur.outputs(x, [0.0]), sur.outputs(x, [1.0])
    # affine in u: a unit step gives the column exactly (up to one rounding)
    np.testing.assert_allclose(sur.feedthrough[:, 0], y1 - y0, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(sur.feedthrough, [[-0.5], [0.2]], rtol=1e-15)


def test_identity_wiring_is_the_bare_system_and_widens_cx():
    s = core()
    pm = PortMap.identity(2, ["a", "b"], ["ya", "yb"])
    assert pm.Cx.shape == (2, 0)
    sur = PortedSystem(s, pm)
    assert sur.ports.Cx.shape == (2, 2) and not sur.ports.Cx.any()
    x, u = np.array([0.1, -0.2]), np.array([0.7, 0.3])
    np.testing.assert_array_equal(sur.outputs(x, u), s.output(x, u))
    np.testing.assert_array_equal(sur.x0, np.zeros(2))


def test_portmap_compares_by_value_and_is_read_only():
    a, b = wiring(), wiring()
    assert a == b and a is not b
    assert a != wiring(cy=[0.0, 0.02])
    with pytest.raises(ValueError):
        a.Tu[0, 0] = 3.0
    assert PortMap.from_dict(a.to_dict()) == a


@pytest.mark.parametrize("kw, match", [
    ({"cu": [0.0]}, r"PortMap.cu must have shape \(2,\)"),
    ({"Ty": [[1.0, 0.0]]}, r"PortMap.Ty must have shape \(2, 2\)"),
    ({"output_names": ("v", "v")}, "duplicates"),
    ({"input_units": ("N", "N")}, "must give 1 units"),
    ({"Du": [[np.nan], [0.0]]}, "NaN"),
])
def test_portmap_refuses_inconsistent_wiring(kw, match):
    with pytest.raises(StructureError, match=match):
        wiring(**kw)


def test_ported_system_refuses_wiring_that_does_not_fit_the_core():
    with pytest.raises(StructureError, match="one row per port"):
        PortedSystem(core(), PortMap.identity(3))
    with pytest.raises(StructureError, match="give Cx 2 columns"):
        PortedSystem(core(), wiring(Cx=[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]))
    with pytest.raises(StructureError, match="x0 must be 2 finite numbers"):
        PortedSystem(core(), wiring(), x0=[1.0, 2.0, 3.0])


def test_an_output_reading_the_state_rate_sees_the_flow_and_feeds_the_inputs_through():
    s = core()
    cdx = np.array([[0.0, 0.0], [0.5, -1.0]])
    sur = PortedSystem(s, wiring(Cdx=cdx))
    x, u = np.array([[0.3, 0.4], [-0.1, 0.2]]), np.array([[1.5], [-2.0]])
    u_ph = np.column_stack([-u[:, 0], np.full(2, 0.5)])
    rate = (x @ s.Q) @ (s.J - s.R).T + u_ph @ (s.B - s.P).T  # ẋ of the linear core (E = I)
    base = PortedSystem(s, wiring()).outputs(x, u)
    np.testing.assert_allclose(sur.outputs(x, u), base + rate @ cdx.T, rtol=1e-14, atol=1e-15)
    # the feedthrough holds Cdx (G − P) Tu beside Du: the outputs' slope in the inputs
    np.testing.assert_allclose(sur.feedthrough[:, 0],
                               sur.outputs(x[0], [1.0]) - sur.outputs(x[0], [0.0]),
                               rtol=1e-13, atol=1e-15)
    assert sur.ports.reads_rate and not wiring().reads_rate
    assert PortMap.from_dict(wiring(Cdx=cdx).to_dict()) == wiring(Cdx=cdx)
    assert "Cdx" not in wiring().to_dict()  # written when used: older readers read the rest
    with pytest.raises(StructureError, match=r"PortMap.Cdx must have shape \(2, 2\)"):
        wiring(Cdx=[[1.0, 0.0]])
    dae = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.1]), np.eye(2), [[0.0, 0.0], [1.0, 1.0]],
                   E=np.diag([1.0, 0.0]))
    with pytest.raises(StructureError, match="E ≠ I"):
        PortedSystem(dae, wiring(Cdx=cdx))


def test_a_delayed_feedthrough_shows_the_inputs_of_the_point_before():
    """The states are those of the undelayed surrogate; each output is the wiring's output of
    that state and the inputs one point earlier (at the first point ``inputs_before``)."""
    from fmu_surrogate.ph import simulate

    t = np.linspace(0.0, 2.0, 41)
    u = np.sin(3.0 * t) + 0.5
    now = PortedSystem(core(), wiring(), x0=[0.1, -0.2])
    for before in (None, [0.25]):
        late = PortedSystem(core(), wiring(), x0=[0.1, -0.2], delayed_feedthrough=True,
                            inputs_before=before)
        a, b = simulate(now, t, u), simulate(late, t, u)
        assert np.array_equal(a.x, b.x) and a.energy_residual == b.energy_residual
        seen = np.concatenate([[u[0] if before is None else before[0]], u[:-1]])
        ref = np.array([now.outputs(x, [s]) for x, s in zip(a.x, seen)])
        # the same arithmetic row by row and for all rows at once: equal to round-off
        assert np.allclose(b.y, ref, rtol=0.0, atol=1e-14)
        # the feedthrough is nonzero, so the two differ by it times the inputs' change
        assert np.allclose(b.y - a.y, (seen - u)[:, None] * now.feedthrough[:, 0], atol=1e-14)
        assert np.abs(b.y - a.y).max() > 0.05  # measured 0.075


def test_inputs_before_are_checked():
    with pytest.raises(StructureError, match="delayed_feedthrough=True"):
        PortedSystem(core(), wiring(), inputs_before=[0.0])
    with pytest.raises(StructureError, match="inputs_before must be 1 finite"):
        PortedSystem(core(), wiring(), delayed_feedthrough=True, inputs_before=[0.0, 1.0])
    with pytest.raises(StructureError, match="inputs_before must be 1 finite"):
        PortedSystem(core(), wiring(), delayed_feedthrough=True, inputs_before=[np.nan])


def test_late_outputs_are_those_of_the_point_before():
    from fmu_surrogate.ph import simulate

    base = PortedSystem(core(), wiring(), x0=[0.25, -0.5])
    late = PortedSystem(core(), wiring(), x0=[0.25, -0.5], late_outputs=True)
    t = np.linspace(0.0, 2.0, 21)
    u = np.sin(3 * t)[:, None]
    a, b = simulate(base, t, u), simulate(late, t, u)
    # the same core trajectory and energy balance; the outputs one point later, the first kept
    np.testing.assert_array_equal(b.x, a.x)
    np.testing.assert_array_equal(b.y[1:], a.y[:-1])
    np.testing.assert_array_equal(b.y[0], a.y[0])
    np.testing.assert_array_equal(b.H, a.H)
    with pytest.raises(StructureError, match="either delayed_feedthrough=True or late_outputs"):
        PortedSystem(core(), wiring(), delayed_feedthrough=True, late_outputs=True)


def test_a_fast_feedthrough_adds_the_inputs_change_from_those_held_at_every_point():
    from fmu_surrogate.ph import simulate

    kw = {"x0": [0.25, -0.5], "delayed_feedthrough": True, "inputs_before": [0.3]}
    base = PortedSystem(core(), wiring(), **kw)
    d_f = np.array([[0.6], [-2.0]])
    fast = PortedSystem(core(), wiring(), **kw, fast_feedthrough=d_f)
    t = np.linspace(0.0, 2.0, 21)
    u = 1.5 + np.sin(3 * t)[:, None]
    a, b = simulate(base, t, u), simulate(fast, t, u)
    # the core untouched; each point sees D_f (u_k - u_{k-1}), the first D_f (u_0 - u_before)
    du = np.diff(u[:, 0], prepend=0.3)
    np.testing.assert_array_equal(b.x, a.x)
    np.testing.assert_allclose(b.y - a.y, du[:, None] * d_f[:, 0], rtol=1e-13, atol=1e-15)
    # without inputs_before the first point sees the first inputs: nothing added there
    c = simulate(fast.replace(inputs_before=None), t, u)
    np.testing.assert_allclose(c.y[0], simulate(base.replace(inputs_before=None), t, u).y[0],
                               rtol=0, atol=0)
    # fixed first outputs replace the first point, the fast response stays at the others
    first = fast.replace(first_outputs=[7.0, 8.0])
    d = simulate(first, t, u)
    np.testing.assert_array_equal(d.y[0], [7.0, 8.0])
    np.testing.assert_array_equal(d.y[1:], b.y[1:])
    with pytest.raises(StructureError, match="pass u_ext"):
        fast.sampled_outputs(a.y)
    with pytest.raises(StructureError, match="pass delayed_feedthrough=True"):
        PortedSystem(core(), wiring(), fast_feedthrough=d_f)
    with pytest.raises(StructureError, match=r"shape \(2, 1\)"):
        fast.replace(fast_feedthrough=[[0.6, 0.0]])


def _same(a, b):
    """Two PortedSystems with equal fields, arrays bit for bit (None where unset)."""
    assert a.system is b.system and a.ports == b.ports
    assert (a.delayed_feedthrough, a.late_outputs, a.initial) == (
        b.delayed_feedthrough, b.late_outputs, b.initial)
    for name in ("x0", "inputs_before", "first_outputs", "fast_feedthrough"):
        va, vb = getattr(a, name), getattr(b, name)
        assert (va is None) == (vb is None), name
        if va is not None:
            np.testing.assert_array_equal(va.view(np.uint64), vb.view(np.uint64))


def test_replace_copies_every_field_bit_for_bit_and_applies_a_change():
    import inspect

    x0, first = [0.1 + 0.2, -1 / 3], [np.nextafter(0.5, 1.0), -0.0]
    late = PortedSystem(core(), wiring(), x0=x0, late_outputs=True, first_outputs=first)
    delayed = PortedSystem(core(), wiring(), x0=x0, delayed_feedthrough=True,
                           inputs_before=[np.pi], first_outputs=first)
    fast = delayed.replace(first_outputs=None, fast_feedthrough=[[0.1 + 0.2], [-1 / 3]])
    for sur in (late, delayed, fast, late.replace(initial="equilibrium")):
        copy = sur.replace()
        assert copy is not sur
        _same(copy, sur)
    # every constructor argument is a field the copy carries over
    assert set(inspect.signature(PortedSystem).parameters) == {
        "system", "ports", "x0", "delayed_feedthrough", "inputs_before", "late_outputs",
        "first_outputs", "fast_feedthrough", "initial"}
    # a change takes effect, the other fields stay
    moved = late.replace(x0=[2.0, 3.0])
    np.testing.assert_array_equal(moved.x0, [2.0, 3.0])
    _same(moved, late.replace(x0=moved.x0))
    assert moved.late_outputs and moved.first_outputs is not None
    np.testing.assert_array_equal(moved.first_outputs.view(np.uint64),
                                  np.array(first).view(np.uint64))
    bare = delayed.replace(first_outputs=None, delayed_feedthrough=False, inputs_before=None)
    assert bare.first_outputs is None and not bare.delayed_feedthrough
    np.testing.assert_array_equal(bare.x0, delayed.x0)
    # the changed fields are checked as by the constructor
    with pytest.raises(StructureError, match="either delayed_feedthrough=True or late_outputs"):
        late.replace(delayed_feedthrough=True)


def test_replace_refuses_an_unknown_field_naming_the_valid_ones():
    from fmu_surrogate.errors import InvalidTypeError

    sur = PortedSystem(core(), wiring())
    with pytest.raises(InvalidTypeError, match=r"\['late_output'\].*'late_outputs'"):
        sur.replace(late_output=True)
    with pytest.raises(TypeError, match="first_outputs"):
        sur.replace(first_output=[0.0, 0.0])
