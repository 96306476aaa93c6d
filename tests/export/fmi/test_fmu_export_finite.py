"""An exported surrogate refuses to hand out what overflowed, naming the variable: the
framework's finiteness checks (export/c/fmi2_framework.c) over the variables the model writes
(CALC_VR of the generated header) and over the states after a step."""

import numpy as np
import pytest

from fmu_surrogate.export import export_fmu
from fmu_surrogate.ph import LinearPH
from tests.export._unzip import cs_slave


@pytest.fixture(scope="module")
def mass(tmp_path_factory):
    """A 1 kg mass, force in, velocity out, exported (its state the momentum)."""
    system = LinearPH(np.zeros((1, 1)), np.zeros((1, 1)), np.eye(1), np.ones((1, 1)),
                      input_names=["F"], output_names=["v"])
    return export_fmu(system, tmp_path_factory.mktemp("finite") / "mass.fmu")


def test_an_overflowing_calculated_variable_is_named(mass, capfd):
    from fmpy.fmi1 import FMICallException

    slave, vr = cs_slave(mass, "m")
    slave.enterInitializationMode()
    # a finite start (1e200 kg m/s) whose stored energy ½ p² overflows: H is calculated
    slave.setReal([vr["x_start[1]"]], [1e200])
    with pytest.raises(FMICallException):
        slave.exitInitializationMode()
        slave.getReal([vr["v"], vr["H"]])
    assert "variable 'H' is not finite (inf)" in capfd.readouterr().out


def test_an_overflowing_state_fails_the_step_with_its_name(mass, capfd):
    from fmpy.fmi1 import FMICallException

    slave, vr = cs_slave(mass, "m")
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    # a finite force whose supplied energy over the step, ∫ F v dt = F² h² / 2, overflows
    slave.setReal([vr["F"]], [1e308])
    with pytest.raises(FMICallException):
        slave.doStep(0.0, 0.5)
    assert "state 'energy_supplied' is not finite (inf)" in capfd.readouterr().out
