"""Constraint discovery on the Cauer benchmark FMU (docs/design.md §6): another true law.

The experiment is shortened to 20 s (step 0.1 s) to fit the test budget; the reproduction
script uses the paper's 100 s.
"""

from __future__ import annotations

import numpy as np

import fmu_surrogate as fs
from fmu_surrogate.benchmarks import cauer

STOP, STEP = 20.0, 0.1
LAW = (1.0, 0.005, 0.02)


def test_algorithm3_nelder_mead_recovers_another_law(benchmark_fmus):
    fmu = benchmark_fmus["cauer"]
    t = np.arange(round(STOP / STEP) + 1) * STEP
    signals = {"vin": fs.signals.ArraySignal(t, cauer.input_signal(t))}
    ds = fs.harvest(fmu, None, signals=[signals], parameters=[dict(zip(("w1", "w2", "w3"), LAW))],
                    stop_time=STOP, step=STEP, record=["v_R4"], progress=False)
    (_, y), = fs.run_arrays(ds, ["v_R4"])
    cd = fs.ConstraintDiscovery(fmu, ["w1", "w2", "w3"], ["v_R4"], inputs=signals,
                                stop_time=STOP, step=STEP, algorithm=3, optimizer="Nelder-Mead",
                                max_runs=200, normalize=0, workers=2)
    r = cd.fit(y, [0.1, 0.1, 0.1], progress=False)  # the paper's initial point
    assert r.w[0] == 1.0
    # the bound is 5 %; measured w3/w1 = 0.019996 (-0.02 %) and w2/w1 = 0.004987
    assert abs(r.w[2] / LAW[2] - 1) <= 0.05
    assert abs(r.w[1] - LAW[1]) <= 0.1 * LAW[1]
    assert r.error < 1e-4  # measured 2.3e-5 V average output error
    assert r.n_evaluations == r.n_runs == 200
    # the Newton failures of infeasible laws are data, with the FMU's reason
    failed = fs.failed_runs(r.evaluations)
    assert r.n_failed == len(failed) >= 1
    assert all("nonlinear resistor" in m for m in failed["message"])
