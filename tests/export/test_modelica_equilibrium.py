"""Modelica export of a surrogate that starts at the equilibrium of its first inputs
(``PortedSystem(..., initial="equilibrium")``): the states are not fixed, ``x_start`` is their
start (the guess of the initial equations), and the initial equations put the differential
states at rest, so that with the model's equations the flow vanishes at the start — checked on
the text's equations, evaluated at ph's equilibrium and away from it."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.export.modelica import modelica_model
from fmu_surrogate.ph import PortedSystem, PortMap
from tests.export import _modelica_check as mc
from tests.export.fmi.test_fmu_export_equilibrium import F0, X_START, at_rest, linear, nonlinear
from tests.export.test_modelica import linear_ph

SURROGATES = {"linear": linear, "nonlinear": nonlinear}


def _values(sur, x, ue):
    """Every unknown of the ported model at the state x and the external inputs ue."""
    system = sur.system
    u = sur.inputs_to_ports(ue)
    z = system.effort(x)
    y = system.output_from_effort(z, u)
    H = float(system.hamiltonian(x))
    return {"x": x, "z": z, "u": u, "y_ph": y, "P_supplied": float(y @ u),
            "P_dissipated": float(system.dissipation_rate(z, u)), "H": H, "H_start": H,
            "E_supplied": 0.0, "E_dissipated": 0.0, "energy_residual": 0.0,
            "F": ue[0], **dict(zip(sur.output_names, sur.outputs(x, ue)))}


@pytest.mark.parametrize("kind", ["linear", "nonlinear"])
def test_the_initial_equations_put_the_states_at_the_equilibrium(kind):
    sur = SURROGATES[kind]()
    text = modelica_model(sur, "AtRest")
    assert "  Real x[2](start = x_start, fixed = {false, false})" in text
    assert "initial equation\n  H_start = H;\n  der(x) = zeros(2);\nequation" in text
    cls = mc.model(text)
    assert np.array_equal(mc.Evaluator(cls).params["x_start"], X_START)  # Newton's guess
    # balanced at the start: the two fixed starts of the state traded for two initial equations
    init = mc.residuals(cls, {"H_start": 0.0, "H": 0.0}, {"x": np.zeros(2)}, initial=True)
    assert [(eq, v.size) for eq, v in init] == [("H_start = H", 1), ("der ( x ) = zeros ( 2 )", 2)]
    ue = np.array([F0])
    for x, at_eq in ((sur.initial_state(ue), True), (X_START, False)):
        vals = _values(sur, x, ue)
        flow = sur.system.flow(x, sur.inputs_to_ports(ue))
        # the model's equations hold with der(x) = the flow (measured 0: the checker evaluates
        # them in the model's order); at ph's equilibrium (the spring holding F0 and the
        # preload: q = 1.25 or q + 2q³ = 2.5) the flow, the initial equations' residual, is
        # round-off (measured 0 and 4.4e-16), elsewhere of order one
        for eq, v in mc.residuals(cls, vals, {"x": flow, "E_supplied": vals["P_supplied"],
                                              "E_dissipated": vals["P_dissipated"]}):
            assert np.abs(v).max() < 1e-14 * max(1.0, np.abs(flow).max()), eq
        (_, h), (_, rest) = mc.residuals(cls, vals, {"x": flow}, initial=True)
        if at_eq:
            assert np.abs(x - at_rest(kind, F0)).max() <= 1e-14
            assert np.abs(rest).max() < 1e-14 and h[0] == 0.0
        else:
            assert np.abs(rest).max() > 1.0


def test_a_dae_rests_its_differential_states_only():
    """E = diag(1, 2, 0, 0): der(x[1]) = der(x[2]) = 0; the algebraic rows hold anyway."""
    system = linear_ph(E=np.diag([1.0, 2.0, 0.0, 0.0]))
    sur = PortedSystem(system, PortMap.identity(2, system.input_names, system.output_names),
                       np.arange(4.0), initial="equilibrium")
    text = modelica_model(sur, "Dae")
    assert "fixed = {false, false, false, false}" in text
    assert "initial equation\n  H_start = H;\n  der(x[1]) = 0;\n  der(x[2]) = 0;\nequation" in text
    # with the rule "state": the differential states fixed at x_start, no rest
    plain = modelica_model(sur.replace(initial="state"), "Dae")
    assert "fixed = {true, true, false, false}" in plain and "der(x[1]) = 0" not in plain
    assert "initial equation\n  H_start = H;\nequation" in plain
