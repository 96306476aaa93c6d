"""The saturating-motor FMU (nonlinear flux, gyrator to the shaft, state internal, RK4) against
the scipy reference."""

from __future__ import annotations

import numpy as np
import pytest
from fmpy import read_model_description
from scipy.integrate import simpson

from fmu_surrogate.benchmarks.params import BenchmarkError
from fmu_surrogate.benchmarks.vendor import saturating_motor as sm
from tests.benchmarks._fmu import input_table, run

DT = 1e-3


def _inputs(t):
    """(V, w): a square wave with an offset on the armature, a sine on the shaft."""
    V = 3.0 * np.sign(np.sin(2 * np.pi * 4.0 * t)) + 1.0
    w = 20.0 * np.sin(2 * np.pi * 1.3 * t)
    return np.column_stack([V, w])


def test_cosimulation_matches_reference(benchmark_fmus):
    t = np.arange(1001) * DT
    u = _inputs(t)
    r = run(benchmark_fmus["saturating_motor"], 1.0, DT, ["i", "tau"],
            inputs=input_table(t, V=u[:, 0], w=u[:, 1]))
    psi = sm.simulate(t, u)
    i, tau = sm.outputs(psi)
    # RK4, 10 substeps of 1e-4 s; the stiffest rate R di/dpsi = (R / L0) (1 + 3 (psi/psi_sat)^2)
    # peaks at 108 /s on this run (psi up to 1.2 psi_sat, h x rate = 0.011): observed 8.4e-11 A
    # on currents up to 6.0 A (the reference's DOP853 at rtol 1e-12: 6e-12 A); 12x margin
    np.testing.assert_allclose(r["i"], i, rtol=0, atol=1e-9)
    np.testing.assert_allclose(r["tau"], 0.1 * i, rtol=0, atol=1e-10)  # tau = k i, k = 0.1
    np.testing.assert_array_equal(tau, 0.1 * i)
    # the magnetic circuit saturates: at the peak flux the current is well above psi / L0
    k = np.argmax(np.abs(psi))
    assert abs(i[k]) > 1.5 * abs(psi[k]) / sm.PARAMS["L0"]


def test_energy_balance(benchmark_fmus):
    # dH/dt = V i - tau w - R i^2 (tau w leaves at the shaft): integrate along the reference
    # with both inputs held, from the same flux
    t = np.arange(501) * DT
    u = np.tile([2.5, -15.0], (len(t), 1))
    psi = sm.simulate(t, u)
    i, tau = sm.outputs(psi)
    lhs = sm.hamiltonian(psi[-1]) - sm.hamiltonian(psi[0])
    rhs = simpson(2.5 * i - tau * -15.0 - 1.0 * i**2, x=t)
    # Simpson on 500 intervals of 1 ms across the 17 ms saturated time constant: observed
    # 1.5e-7 of the 0.15 J stored (a wrong sign of tau w would be off by 2.7 J); 7x margin
    assert lhs == pytest.approx(rhs, rel=1e-6)
    r = run(benchmark_fmus["saturating_motor"], 0.5, DT, ["i", "tau"],
            start_values={"V": 2.5, "w": -15.0})
    # as above: observed 1.8e-11 A on 4 A
    np.testing.assert_allclose(r["i"], i, rtol=0, atol=1e-9)
    np.testing.assert_allclose(r["tau"], tau, rtol=0, atol=1e-10)


def test_flux_is_internal_and_units_give_the_ports(benchmark_fmus):
    md = read_model_description(str(benchmark_fmus["saturating_motor"]))
    assert md.modelExchange is None
    v = {x.name: x for x in md.modelVariables}
    assert "psi" not in v and "der(psi)" not in v
    assert {n: v[n].unit for n in ("V", "i", "w", "tau", "k", "psi_sat")} == {
        "V": "V", "i": "A", "w": "rad/s", "tau": "N.m", "k": "N.m/A", "psi_sat": "Wb"}
    # no direct feedthrough: both outputs follow from the internal flux
    assert {o.variable.name: o.dependencies for o in md.outputs} == {"i": [], "tau": []}


def test_reference_refuses_bad_inputs_and_parameters():
    with pytest.raises(BenchmarkError, match=r"rows \(V, w\)"):
        sm.rhs([0.0], [1.0, 0.0, 2.0])
    with pytest.raises(BenchmarkError, match="psi_sat = 0.0 must be > 0"):
        sm.current([0.1], {"psi_sat": 0.0})
