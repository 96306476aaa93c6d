"""A mass on a soft spring between end stops (a contact 10× stiffer beyond ±5 cm), force in,
velocity out, simulated with scipy: the gap ridge the fit adds where its smooth ridges miss
(identify/nonlinear/continuation.py) finds the stops."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.identify.nonlinear.estimator import NonlinearPHIdentifier
from tests.identify.nonlinear.conftest import stopped_mass_run

GAP, KC = 0.05, 400.0


def _run(seed: int, amplitude: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One run from rest under a multisine force, velocity out (:func:`stopped_mass_run`): the
    contact springs ``KC`` beyond ``±GAP``."""
    return stopped_mass_run(seed, amplitude,
                            lambda q, v: KC * (max(q - GAP, 0.0) - max(-q - GAP, 0.0)))


@pytest.fixture(scope="module")
def fitted():  # about 60 s: the fit with the smooth ridges, then with the gap ridge
    # levels 1, 8 and 4 N: the first stays inside the clearance, the others strike both stops
    runs = [_run(seed, amp) for seed, amp in ((1, 1.0), (2, 8.0), (3, 4.0), (4, 6.0))]
    return NonlinearPHIdentifier(2).fit(runs)  # the last run held out


@pytest.mark.slow
def test_the_stops_are_found_by_the_gap_ridge(fitted):
    est = fitted
    r = est.result_
    assert est.ridges == ("quartic", "logcosh")
    assert "with an end-stop (gap) ridge" in r.stopping_reason
    kinds = est.system_.effort_function.kinds
    weights = est.system_.effort_function.weights
    assert "gap" in kinds and weights[kinds.index("gap")] > 0
    # measured: linear 77 % held out; the smooth ridges' fit missed at a cost of 0.038 (31 %
    # held out), the fit with the gap ridge 0.82 % (its weight 0.99, the others' 3e-5 and
    # 3e-6); 2 % is the drop-in target, room for the optimiser's path on other BLAS
    assert r.linear_validation_error > 0.3
    assert r.validation_error < 0.02
    # a run neither fit has seen, at 5 N: simulated by the structure-preserving scheme
    t, u, y = _run(7, 5.0)
    err = np.abs(est.predict(t, u) - y).max() / np.ptp(y)
    assert err < 0.02  # measured 0.26 % of the swing
