"""The pendulum-joint FMU (turns over, states internal, its own CVODE) against the scipy
reference."""

from __future__ import annotations

import numpy as np
import pytest
from fmpy import read_model_description

from fmu_surrogate.benchmarks.vendor.rotating import pendulum_joint as pj
from tests.benchmarks._fmu import built, input_table, run

T, DT = 10.0, 1e-2


def test_cosimulation_turns_over_as_the_reference(benchmark_fmus):
    t = np.arange(1001) * DT
    tau = 6.0 * np.sin(2 * np.pi * 0.3 * t)
    r = run(built(benchmark_fmus, "pendulum_joint"), T, DT, ["w"], inputs=input_table(t, tau=tau),
            start_values={"cvode_rtol": 1e-10})
    x = pj.simulate(t, tau)
    # CVODE at rtol 1e-10 on a motion that turns over (errors grow along it): measured 3.8e-5
    # rad/s at most on rates up to 17.8 rad/s (at its default 1e-6: 0.25)
    np.testing.assert_allclose(r["w"], x[:, 1], rtol=0, atol=1e-3)
    assert x[:, 0].min() < -4 * np.pi  # it turned over twice


def test_energy_balance_of_the_reference():
    # tau w = dH/dt + d w²: along the reference with the torque held, from rest
    from scipy.integrate import simpson

    t = np.arange(501) * DT
    x = pj.simulate(t, np.full(501, 6.0))
    H = pj.hamiltonian(x)
    rhs = simpson(6.0 * x[:, 1] - pj.PARAMS["d"] * x[:, 1] ** 2, x=t)
    # Simpson on 500 intervals of a smooth integrand (the solve at 1e-12): observed 3.6e-8 of it
    # (the pendulum spins up to 51 rad/s)
    assert H[-1] - H[0] == pytest.approx(rhs, rel=1e-6)


def test_states_are_internal(benchmark_fmus):
    md = read_model_description(str(built(benchmark_fmus, "pendulum_joint")))
    assert md.modelExchange is None
    names = {v.name: v.unit for v in md.modelVariables}
    assert not {"phi", "omega", "der(phi)", "der(omega)"} & set(names)
    assert (names["tau"], names["w"], names["d"]) == ("N.m", "rad/s", "N.m.s/rad")
