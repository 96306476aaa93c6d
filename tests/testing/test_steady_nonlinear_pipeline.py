"""A NONLINEAR vendor-like FMU initialised in steady state through the whole pipeline as a user
runs it: the mass of :func:`~fmu_surrogate.testing.fmus.build_steady_mass` on a hardening spring
(``k3 = 100`` N/m³ and a preload of 10 N set at harvest, ``q̈ = F + 10 − 2v − 40q − 100q³``),
harvested under multisine forces that start at 3, −5, 8, 0 and −6 N (and 1 N, the run identify
holds out), ``identify`` with the command line's defaults, the surrogate simulated, exported and
coupled in libcosim on a new force that starts at −4 N.

The FMU starts each run at rest where its spring holds the first force (Newton's method in C),
so the data hold no state to start from: the linear fit detects the steady start, the nonlinear
fit starts each run at its model's equilibrium, and the surrogate (and its FMU) start at the
equilibrium of the input they are given.  The scipy twin of this data set is
``tests/identify/nonlinear/test_estimator.py`` (0.08 % held out).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import time

import numpy as np
import pytest

import fmu_surrogate as fs
from fmu_surrogate.cli import main
from fmu_surrogate.testing.fmus import build_force_source, build_steady_mass
from tests.testing._steady import (
    DT,
    HARDENING,
    SOURCE,
    T,
    cosimulate,
    cubic_exact,
    cubic_rest,
    grid,
    multisine,
    source_force,
)

pytestmark = pytest.mark.slow  # one identify run: 99 s measured on a busy 2-core machine

#: (first force (N), multisine peak amplitude (N), seed) of each harvested run; identify holds
#: out the last one
RUNS = ((3.0, 5.0, 1), (-5.0, 8.0, 2), (8.0, 10.0, 3), (0.0, 10.0, 4), (-6.0, 6.0, 5),
        (1.0, 9.0, 6))
#: the force source of the new input: the sines of the linear pipeline's, from F(0) = -4 N
NEW = {**SOURCE, "offset": -4.0}
TOLERANCE = 0.02  # what the pipeline must reach on this FMU: 2 % (relative)


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """The FMUs built, harvested (6 runs of 10 s at 10 ms), identified and exported with the
    command line's defaults: ``dict`` of paths, the identify report and its wall time."""
    d = tmp_path_factory.mktemp("steady-nonlinear")
    fmu, source = build_steady_mass(d), build_force_source(d)
    sigs = [{"F": fs.signals.ArraySignal(grid(), multisine(seed, off, amp), interpolation="zoh")}
            for off, amp, seed in RUNS]
    fs.harvest(fmu, d / "data.nc", signals=sigs, parameters=HARDENING, stop_time=T, step=DT,
               progress=False, workers=1)
    text = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(text):
        assert main(["identify", str(d / "data.nc"), "-o", str(d / "s.json")]) == 0
        seconds = time.perf_counter() - start
        assert main(["export", str(d / "s.json"), "--fmu", str(d / "s.fmu")]) == 0
    return {"dir": d, "fmu": fmu, "source": source, "surrogate": d / "s.json",
            "exported": d / "s.fmu", "report": text.getvalue(), "seconds": seconds}


def _harvest(fmu, F):
    """``(t, [v, a, q])`` of the hardening ``fmu`` under the force ``F`` on :func:`grid`."""
    ds = fs.harvest(fmu, None, signals=[{"F": fs.signals.ArraySignal(grid(), F,
                                                                      interpolation="zoh")}],
                    parameters=HARDENING, stop_time=T, step=DT, progress=False, workers=1)
    (t, X), = fs.run_arrays(ds, ["F", "v", "a", "q"])
    np.testing.assert_array_equal(X[:, 0], F)
    return t, X[:, 1:]


def _rel(Y, ref):
    """Each output's max error relative to its max magnitude."""
    return np.abs(Y - ref).max(axis=0) / np.abs(ref).max(axis=0)


def test_identify_defaults_keep_the_nonlinear_model_started_at_its_equilibria(pipeline):
    doc = json.loads(pipeline["surrogate"].read_text())
    report = pipeline["report"]
    assert doc["initial"] == "equilibrium"
    assert "each run starts at the equilibrium of its first inputs" in report
    # the nonlinear model is kept: the spring's cubic force (up to 100 · 0.52³ = 14 N against
    # k q = 21 N at the largest rest) is beyond any linear model (its held-out error measured
    # 40.7 %, the tolerance 1 %)
    assert doc["kind"] == "NonlinearPH"
    assert re.search(r"kept: nonlinear", report), report
    linear = float(re.search(r"linear pH model:\s+held-out error (\S+) %", report)[1])
    held_out = float(re.search(r"nonlinear pH model: held-out error (\S+) %", report)[1])
    assert linear > 1.0
    # the run from rest under 1 N, unseen by the fit: measured 0.0739 % (order 2 of the tried
    # 1-3; the scipy twin of these data 0.08 %): the FMU's data are exact to 1e-10
    # (test_steady_mass), so this is the model class's fit of the cubic spring
    assert held_out <= 100 * TOLERANCE, report


def test_the_surrogate_simulates_a_new_force_from_rest_as_the_fmu(pipeline):
    from fmu_surrogate.ph import load, simulate

    s = load(pipeline["surrogate"])
    F = source_force(grid(), NEW)
    assert F[0] == -4.0
    t, Y_fmu = _harvest(pipeline["fmu"], F)
    # the FMU at rest under -4 N where its spring holds it, then its scipy response up to its
    # RK4 error (test_steady_mass; measured 1.6e-10)
    assert Y_fmu[0, 0] == 0.0 and Y_fmu[0, 2] == pytest.approx(cubic_rest(-4.0), rel=1e-15)
    assert _rel(Y_fmu, cubic_exact(t, F)).max() < 1e-9
    Y = simulate(s, t, F[:, None], hold="zoh").y
    # from the equilibrium of F(0) = -4 N, a start it was not fitted on, the fit's error as on
    # the held-out run: within the pipeline's 2 % of each output's range (measured 0.072 %,
    # 0.070 %, 0.033 % for v, a, q: the held-out error's size; 2 % leaves room for the
    # optimiser's path on other machines)
    assert _rel(Y, Y_fmu).max() < TOLERANCE, _rel(Y, Y_fmu)
    # at rest at the start: v and a (nil in the FMU) and q within 1e-3 of their ranges (the
    # fitted equilibrium's error, as the scipy twin's bound; measured 2.2e-6, 2.1e-7, 1.9e-8)
    assert np.all(np.abs(Y[0] - Y_fmu[0]) < 1e-3 * np.abs(Y_fmu).max(axis=0)), Y[0] - Y_fmu[0]


def test_the_exported_surrogate_starts_at_its_equilibrium_and_runs_as_simulate(pipeline):
    from fmpy import simulate_fmu

    from fmu_surrogate.ph import load, simulate

    s = load(pipeline["surrogate"])
    F = source_force(grid(), NEW)
    sig = np.zeros(F.size, dtype=[("time", float), ("F", float)])
    sig["time"], sig["F"] = grid(), F
    states = [f"x{i + 1}" for i in range(s.n_states)]
    r = simulate_fmu(str(pipeline["exported"]), fmi_type="CoSimulation", stop_time=T,
                     output_interval=DT, input=sig, output=["v", "a", "q", *states])
    np.testing.assert_allclose(r["time"], grid(), rtol=0, atol=1e-12)
    X = np.column_stack([r[n] for n in states])
    x_eq = s.initial_state(F[:1])
    # the start: the equilibrium of F(0) (fmpy sets it before initialisation), Newton with the
    # analytic Jacobian in C against ph's central differences, both converged far below 1e-12
    # of the state (tests/export/fmi/test_fmu_export_equilibrium.py; measured 1.4e-16)
    assert np.abs(X[0] - x_eq).max() <= 1e-12 * np.abs(x_eq).max()
    tr = simulate(s, grid(), F[:, None], hold="zoh")
    # then the same AVF steps: the FMU cuts each communication step into ceil(h / max_step)
    # substeps as ph.simulate does on the communication grid, Newton to 1e-12 in both, in
    # another summation order (tests/export/fmi/test_fmu_export_port_law.py; measured 4.9e-16)
    assert np.abs(X - tr.x).max() <= 1e-12 * np.abs(tr.x).max()
    # the outputs as fmpy reads them, after each step and before the next input: the states
    # with the input held over the step (the acceleration's feedthrough of F; measured 6.5e-16)
    held = np.concatenate([F[:1], F[:-1]])[:, None]
    Y_ref = np.array([s.outputs(x, u) for x, u in zip(tr.x, held, strict=True)])
    Y = np.column_stack([r["v"], r["a"], r["q"]])
    assert _rel(Y, Y_ref).max() <= 1e-12


def _cosim(pipeline, target):
    params = HARDENING if target == pipeline["fmu"].name else None
    return cosimulate(pipeline["dir"], target, pipeline["source"].name, NEW, params)


def test_libcosim_starts_both_fmus_at_rest_under_the_source_and_they_agree(pipeline):
    F_fmu, Y_fmu = _cosim(pipeline, pipeline["fmu"].name)
    F_sur, Y_sur = _cosim(pipeline, pipeline["exported"].name)
    # the source's output reaches the input (round-off of the sines at nanosecond times)
    np.testing.assert_allclose(F_fmu, source_force(grid(), NEW), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(F_sur, F_fmu)
    # the hardening FMU at rest where its spring holds F(0) = -4 N (libcosim set the connected
    # input in initialisation mode; under its start value F = 0 it would rest at q = 0.222 m)
    assert Y_fmu[0, 0] == 0.0 and Y_fmu[0, 2] == pytest.approx(cubic_rest(-4.0), rel=1e-15)
    # the surrogate's FMU at rest there too and then as the FMU: the fit's error, read the same
    # way by both (before the next input), within the pipeline's 2 % (measured 0.072 % of max
    # |v|; at the start 2.2e-6 of max |v|)
    assert np.all(np.abs(Y_sur[0] - Y_fmu[0]) < 1e-3 * np.abs(Y_fmu).max(axis=0))
    assert _rel(Y_sur, Y_fmu).max() < TOLERANCE, _rel(Y_sur, Y_fmu)
