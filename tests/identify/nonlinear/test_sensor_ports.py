"""A measured output that reads the effort, ``K_m z(x)``: the spring force of the mass on a
progressive spring (``mass_experiment``, tests/conftest.py), next to its velocity (the power
output).  The fitted core has a sensor port for it (its input held at zero, no power
exchanged).  The fit is the drop-in surrogate of tests/identify/conftest.py."""

from __future__ import annotations

import numpy as np
import numpy.testing as npt
import pytest

import fmu_surrogate as fs
from tests.identify.conftest import CHOICE_DT, PORTS


def _run(mass_experiment, seed, T=20.0):
    """Time, force, velocity, spring force (1-D), sampled as the fit's runs."""
    t, u, y = mass_experiment(seed, T=T, dt=CHOICE_DT, spring_force=True)
    return t, u[:, 0], y[:, 0], y[:, 1]


@pytest.fixture(scope="module")
def fitted(spring_force_choice):
    """The nonlinear model ``select_dataset`` keeps with the defaults (order 2, found by the
    order search: tests/identify/test_order_search.py), the power pair named."""
    assert spring_force_choice.method == "nonlinear"
    return spring_force_choice.estimator


def test_the_spring_force_is_read_from_the_effort(fitted, mass_experiment):
    sur = fitted.to_surrogate()
    # one power port (F, v) and one sensor port behind it: input held at zero, the spring
    # force its output
    assert sur.system.n_inputs == 2
    assert np.array_equal(sur.ports.Tu[1], [0.0]) and sur.ports.cu[1] == 0.0
    assert sur.ports.Ty[1, 1] == 1.0 and sur.ports.Ty[0, 1] == 0.0
    assert sur.system.input_names[1] == "Fs_sensor"  # an exported FMU's parameter, at 0
    # both outputs on a run neither fit has seen (the fit's input hold and internal step):
    # measured 0.068 % (v), 0.063 % (Fs) relative RMS; the held-out run 0.093 % against the
    # linear model's 46 % (its measured output reads the state only); 2 % leaves room for the
    # optimiser's path
    t, u, v, fsp = _run(mass_experiment, 7)
    y = fitted.predict(t, u[:, None])
    err = [np.linalg.norm(y[:, i] - r) / np.linalg.norm(r) for i, r in enumerate((v, fsp))]
    assert max(err) <= 0.02
    assert fitted.result_.validation_error <= 0.02
    assert fitted.result_.linear_validation_error >= 0.25


def test_the_sensor_port_exchanges_no_power(fitted, mass_experiment):
    sur = fitted.to_surrogate()
    t, u, _, _ = _run(mass_experiment, 5, T=10.0)
    tr = fs.simulate(sur, t, u[:, None])
    # its input is zero at every step: nothing supplied through it, the balance is the
    # force port's (round-off, measured 1.2e-15 of the energy scale)
    assert np.all(tr.core.u[:, 1] == 0.0)
    assert abs(tr.energy_residual) <= 1e-10 * tr.core.energy_scale


def _displacement(fsp, k1=1.0, k3=2.0):
    """The spring's deflection from its force ``k1 q + k3 q³`` (Cardano: the one real root)."""
    h, d = fsp / (2.0 * k3), np.sqrt((fsp / (2.0 * k3)) ** 2 + (k1 / (3.0 * k3)) ** 3)
    return np.cbrt(h + d) + np.cbrt(h - d)


def test_an_acceleration_beside_a_displacement_reads_the_rate_and_the_state(mass_experiment):
    # the mass's velocity (the power output), displacement (the state) and acceleration (the
    # spring's force, an effort, with the damper's and the input): neither map alone holds
    # both measured outputs, so the effort's fit reads the state too
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

    recs = []
    for i, seed in enumerate((1, 2, 3)):
        t, u, y = mass_experiment(seed, dt=0.04, spring_force=True)
        v, fsp = y[:, 0], y[:, 1]
        q = _displacement(fsp)
        assert np.allclose(q + 2.0 * q**3, fsp, rtol=1e-12, atol=1e-12)
        a = u[:, 0] - 0.5 * np.sign(v) * np.abs(v) ** (4 / 3) - fsp
        recs.append(RunRecord(index=i, values={"F": u[:, 0], "v": v, "q": q, "a": a}))
    ds = records_to_dataset(recs, t, None, ["F", "v", "q", "a"])
    outs = ["v", "q", "a"]
    lin = fs.LinearPHIdentifier(2, ports=PORTS).fit_dataset(ds, inputs=["F"], outputs=outs,
                                                           runs=[0, 1])
    nl = fs.NonlinearPHIdentifier(2, linear=lin, ports=PORTS).fit_dataset(
        ds, inputs=["F"], outputs=outs)
    # held out: measured 0.099 % (the linear model 51 %).  The acceleration holds the
    # power-law damper's force, a dissipation no map of z(x) holds: without reading the
    # state's rate 3.1 %, and 3.4 % with the inputs of the step before, which the timing test
    # takes where the slow force's past predicts it (ratio 1.02) unless it sees that it cannot
    # tell; 0.5 % leaves room for the optimiser's path on other machines
    assert nl.result_.validation_error <= 0.005
    assert nl.result_.linear_validation_error >= 0.4
    assert nl.delay_evidence_.delayed and not nl.delay_evidence_.clear
    assert not nl.delayed_feedthrough_
    sur = nl.to_surrogate()
    names = list(sur.output_names)
    assert np.any(sur.ports.Cdx[names.index("a")] != 0)  # the acceleration reads ẋ
    assert np.any(sur.ports.Cx[names.index("q")] != 0)  # the displacement the state
    # the force feeds through to the acceleration (1/m = 1), to the others not
    npt.assert_allclose(sur.feedthrough[:, 0], [0.0, 0.0, 1.0], atol=0.02)
    # the report says what each measured output reads
    from fmu_surrogate.identify.fit_report import reading_line

    assert "a an effort and the state and the state's rate" in reading_line(sur)
