"""A bond with feedthrough on both sides: a damper ``F = c v`` pushing a mass through a second
damper ``d`` in series (``v = v_m + F_B / d``).  The loop ``F = c v``, ``v = v_m − F / d`` is
algebraic: the monolithic algorithm solves it; libcosim's Jacobi exchange goes once around it in
two steps with the gain ``c / d`` (``sqrt(c / d)`` per step) and is run only when that gain is
below 1.

Hand solution: the series dampers act as one, ``c_eff = c d / (c + d)``, so
``v_m = v0 exp(−c_eff t / m)``, the rod's velocity ``v = v_m d / (c + d)`` and ``F = c v``.
"""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.couple.monolithic import jacobi_loop_gain
from fmu_surrogate.couple.running import cosimulate, observed_names, run
from fmu_surrogate.couple.surrogates import surrogate_component, surrogate_fmu
from fmu_surrogate.couple.system import Component, Connection, CouplingError, PowerBond, System
from fmu_surrogate.couple.validation import describe, validate
from fmu_surrogate.ph import LinearPH, PortedSystem, save
from fmu_surrogate.ph.port_map import PortMap

pytest.importorskip("libcosimpy")

M, D, V0 = 2.0, 4.0, 1.0


def _hand(t: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Rod velocity and force of the exact solution."""
    v_m = V0 * np.exp(-(c * D / (c + D)) * t / M)
    v = v_m * D / (c + D)
    return v, c * v


@pytest.fixture(scope="module")
def series_mass(tmp_path_factory):
    """The mass behind its damper as a drop-in surrogate: F is the force the rod takes from it
    (power out of its port), v the rod's velocity, with feedthrough 1/d."""
    core = LinearPH([[0.0]], [[0.0]], [[1 / M]], [[1.0]], S=[[1 / D]])
    ports = PortMap(("F",), ("v",), ("N",), ("m/s",), Tu=[[-1.0]], cu=[0.0], Ty=[[1.0]],
                    Cx=[[0.0]], Du=[[0.0]], cy=[0.0])
    path = tmp_path_factory.mktemp("loop") / "series_mass.json"
    save(PortedSystem(core, ports, x0=[M * V0]), path)
    return path


def _system(benchmark_fmus, series_mass, c: float, damper_ph: bool = True) -> System:
    ph = LinearPH(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 1)),
                  S=[[c]]) if damper_ph else None
    damper = Component("damper", benchmark_fmus["damper"], {"c": c}, ph=ph,
                       ports={"v": ("u", 0, 1), "F": ("y", 0, 1)} if damper_ph else {})
    bond = PowerBond("rod", Connection.parse("damper.F", "mass.F"),
                     Connection.parse("mass.v", "damper.v"), {"damper": 1, "mass": -1})
    return System({"damper": damper, "mass": surrogate_component("mass", series_mass)}, [], [bond])


def test_monolithic_solves_the_loop(benchmark_fmus, series_mass):
    c = 8.0  # a gain c / d = 2 that no Jacobi exchange survives
    ds = run(_system(benchmark_fmus, series_mass, c), 2.0, 0.01, "monolithic", progress=False)
    t = ds.time.values
    v, F = _hand(t, c)
    # implicit midpoint, second order: measured 3.6e-6 of v0 at h = 0.01 (c_eff / m = 1.33 /s)
    np.testing.assert_allclose(ds["damper.v"].values[0], v, rtol=0, atol=1e-5)
    np.testing.assert_allclose(ds["damper.F"].values[0], F, rtol=0, atol=1e-4)
    assert abs(ds.attrs["energy_residual"]) < 1e-12  # round-off of the midpoint rule
    assert ds["bond:rod:residual"].values[0, -1] == 0.0
    # the units come from the model descriptions (the surrogate's export declares its own)
    assert ds["damper.F"].attrs["units"] == "N" and ds["mass.v"].attrs["units"] == "m/s"
    assert ds.attrs["bond:rod:energy_unit"] == "J"
    np.testing.assert_allclose(ds["bond:rod:P_damper"].values[0], F * v, rtol=1e-4)


def test_libcosim_runs_the_loop_when_its_gain_is_below_one(benchmark_fmus, series_mass):
    c = 1.0
    # D K = [[0, c], [-1/d, 0]]: eigenvalues ±i sqrt(c / d)
    assert jacobi_loop_gain(_system(benchmark_fmus, series_mass, c)) == pytest.approx(
        np.sqrt(c / D), rel=1e-14)
    errs = []
    for h in (0.01, 0.005):
        ds = run(_system(benchmark_fmus, series_mass, c), 2.0, h, "fixed", progress=False)
        assert str(ds.status.values[0]) == "ok"
        assert ds.attrs["jacobi_loop_gain"] == pytest.approx(0.5, rel=1e-14)
        t = ds.time.values
        v, _ = _hand(t, c)
        err = np.abs(ds["damper.v"].values[0] - v)
        # libcosim's initialisation passes the loop once (v(0) = 0.75 for 0.8); that error
        # shrinks by the gain c / d = 0.25 every two steps: measured 0.05, 0.01, 0.005, ...
        assert err[0] == pytest.approx(0.05, rel=1e-9)
        assert err[10] < 3e-3  # by then only the lag of the exchange remains
        errs.append(err[t >= 0.5].max())
    # then the exchange lags a step: first order, measured 2.1e-3 and 1.07e-3 m/s (v0 = 1)
    assert errs[0] < 3e-3 and 1.9 < errs[0] / errs[1] < 2.1


def test_a_loop_gain_of_one_or_more_is_refused_and_would_diverge(benchmark_fmus, series_mass):
    c = 2 * D
    system = _system(benchmark_fmus, series_mass, c)
    with pytest.raises(CouplingError, match=r"cannot be stable: .* gain 1.414 >= 1.*monolithic"):
        run(system, 2.0, 0.01, "fixed", progress=False)
    # what the refusal spares: the same exchange run anyway grows like sqrt(2)^k (measured 1e15
    # after 100 steps)
    system.components["mass"].path = surrogate_fmu(series_mass)
    infos = {k: describe(comp.path) for k, comp in system.components.items()}
    names = observed_names(system, infos)
    rows = []
    cosimulate(system, infos, 1.0, 0.01, "fixed", None, names,
               lambda t, values, initial: rows.append(values) or False)
    assert np.abs(np.array(rows)).max() > 1e10


def test_a_loop_of_unknown_gain_is_refused_with_the_fixes(benchmark_fmus, series_mass):
    system = _system(benchmark_fmus, series_mass, 1.0, damper_ph=False)
    assert jacobi_loop_gain(system) is None
    with pytest.raises(CouplingError, match=r"algebraic loop .* \(Jacobi\).*monolithic"):
        run(system, 1.0, 0.01, "fixed", progress=False)
    # the monolithic algorithm accepts the loop in the model descriptions
    assert set(validate(system, accept_loops=True)) == {"damper", "mass"}
