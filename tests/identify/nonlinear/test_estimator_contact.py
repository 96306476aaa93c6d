"""A mass on a soft spring between damped end stops (Modelica's ElastoGap beyond ±5 cm: a contact
spring 10× stiffer and a contact damper 10× the mass's own, limited by the contact spring's
force), force in, velocity out, simulated with scipy: the fit with a gap ridge alone misses it
by a fifth, the one with a damper in the contact (identify/nonlinear/continuation.py) meets it."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.identify.nonlinear.estimator import NonlinearPHIdentifier
from tests.identify.nonlinear.conftest import stopped_mass_run

GAP, KC, DC = 0.05, 400.0, 20.0


def _stops(q: float, v: float) -> float:
    """The force of the stops on the mass, ElastoGap's law written out: ``f_c + f_d`` with
    ``f_d = d v`` limited to ``|f_d| ≤ f_c`` in contact, zero between the stops."""
    pen = abs(q) - GAP
    if pen <= 0:
        return 0.0
    fc = KC * pen
    return float(np.sign(q) * fc + np.clip(DC * v, -fc, fc))


def _run(seed: int, amplitude: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One run from rest under a multisine force, velocity out (:func:`stopped_mass_run`)."""
    return stopped_mass_run(seed, amplitude, _stops)


@pytest.mark.slow
def test_a_damped_contact_is_fitted_with_a_damper_in_the_contact():
    # about 130 s: the fits with the smooth ridges, the gap ridge, then with a damper in the
    # contact; levels 1, 8 and 4 N (the first inside the clearance), 6 N held out
    runs = [_run(seed, amp) for seed, amp in ((1, 1.0), (2, 8.0), (3, 4.0), (4, 6.0))]
    est = NonlinearPHIdentifier(2).fit(runs)
    r = est.result_
    assert "with a damper in the contact" in r.stopping_reason
    d = est.system_.dissipation
    assert d.gated.sum() == 1 and d.gains[d.gated][0] > 0
    # measured: linear 42 % held out; the gap ridge alone 28 % (its training runs simulated:
    # 21.5 %), with the damper in the contact 0.14 %; 2 % is the drop-in target, room for the
    # optimiser's path on other BLAS
    assert r.linear_validation_error > 0.3
    assert r.validation_error < 0.02
    # a run neither fit has seen, at 5 N: simulated by the structure-preserving scheme
    t, u, y = _run(7, 5.0)
    err = np.abs(est.predict(t, u) - y).max() / np.ptp(y)
    assert err < 0.02  # measured 0.11 % of the swing
    # passive whatever the input: the dissipation of the fitted model is never negative
    rng = np.random.default_rng(0)
    z = est.system_.effort(rng.normal(size=(2000, 2)) * 0.3)
    assert np.all(d.rate(z) >= 0)
