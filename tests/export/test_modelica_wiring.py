"""The outside of an exported Modelica model: a drop-in surrogate's static law of its inputs
(``PortMap.law``) as the parameters law_W, law_b, law_C, the arguments law_s and a term per
kind (``^3``, ``tanh``, ``max``) in the outputs' equation; every equation holds for values of the
ph objects, on both sides of the law's kink.  Outputs that read the state's rate
(``PortMap.Cdx``, a mass's acceleration) as the parameter Cdx and the term ``Cdx*der(x)``."""

from dataclasses import replace

import numpy as np
import pytest

from fmu_surrogate.export.modelica import modelica_model
from fmu_surrogate.ph import PortedSystem
from tests.export import _modelica_check as mc
from tests.export.fmi.test_fmu_export_rate import linear as rate_linear
from tests.export.fmi.test_fmu_export_rate import nonlinear as rate_nonlinear
from tests.export.fmi.test_fmu_export_static_law import linear, nonlinear
from tests.export.test_modelica import _check_ported_equations

TERMS = "law_C*{law_s[1]^3, tanh(law_s[2]), max(law_s[3], 0.0)}"


@pytest.mark.parametrize("make", [linear, nonlinear], ids=["linear", "nonlinear"])
def test_static_law_equations_hold(make):
    sur = make()
    law = sur.ports.law
    text = modelica_model(sur, "Spring")
    assert "  law_s = law_W*{v, s} + law_b;" in text
    assert f"  {{F, pos}} = Ty*y_ph + Cx*x + Du*{{v, s}} + cy + {TERMS};" in text
    # past the stop at s = 0.2 and before it: the residuals (law_s from the ph law) are zero
    # to the checker's round-off (_check_ported_equations: RTOL; measured 0 on the law's two
    # equations, the same products as numpy's)
    for ue in ([0.7, 0.45], [-0.4, -0.3]):
        cls = _check_ported_equations(sur, text, inputs=ue,
                                      extra=lambda u: {"law_s": law.W @ u + law.b})
    ev = mc.Evaluator(cls)
    for key, ref in (("law_W", law.W), ("law_b", law.b), ("law_C", law.C)):
        assert np.array_equal(ev.params[key], ref), key  # exact literals
    # a delayed feedthrough is a co-simulation trait: the continuous-time model is the same
    delayed = make(delayed=True)
    assert delayed.delayed_feedthrough and modelica_model(delayed, "Spring") == text


def test_the_law_names_stay_clear_of_port_names():
    sur = linear()
    ports = replace(sur.ports, input_names=("law_s", "tanh"))
    text = modelica_model(PortedSystem(sur.system, ports, sur.x0), "Spring")
    assert "  law_s = law_W*{law_s_2, tanh_2} + law_b;" in text
    # without a law those names are the ports' own
    bare = replace(ports, law=None)
    text = modelica_model(PortedSystem(sur.system, bare, sur.x0), "Spring")
    assert "RealInput law_s(" in text and "law_C" not in text


@pytest.mark.parametrize("make", [rate_linear, rate_nonlinear], ids=["linear", "nonlinear"])
def test_outputs_that_read_the_rate_equations_hold(make):
    """The acceleration a = der(p)/m of a mass: Cdx a parameter (exact literals), Cdx*der(x) in
    the outputs' equation, every equation zero for der(x) the flow and the outputs of the ph
    objects (_check_ported_equations: RTOL; measured 0, the same products); a zero Cdx writes
    the model of a PortMap without one."""
    sur = make()
    text = modelica_model(sur, "Mass")
    assert "  {v, a} = Ty*y_ph + Cx*x + Cdx*der(x) + Du*{F} + cy;" in text
    assert "  der(x) = (J - R)*z" in text  # E = I: der(x) is the state equation's own
    cls = _check_ported_equations(sur, text)
    assert np.array_equal(mc.Evaluator(cls).params["Cdx"], sur.ports.Cdx)
    p = replace(sur.ports, Cdx=np.zeros((2, 2)))
    zero = modelica_model(PortedSystem(sur.system, p, sur.x0), "Mass")
    bare = modelica_model(PortedSystem(sur.system, replace(p, Cdx=None), sur.x0), "Mass")
    assert zero == bare and "Cdx" not in zero
    assert "  {v, a} = Ty*y_ph + Cx*x + Du*{F} + cy;" in zero
    # a port named after the parameter keeps its name unless the model has that parameter
    named = replace(sur.ports, input_names=("Cdx",))
    assert "  u = Tu*{Cdx_2} + cu;" in modelica_model(PortedSystem(sur.system, named, sur.x0),
                                                        "Mass")
    bare_named = replace(named, Cdx=None)
    assert "  u = Tu*{Cdx} + cu;" in modelica_model(
        PortedSystem(sur.system, bare_named, sur.x0), "Mass")
