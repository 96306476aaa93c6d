"""A mass on a soft spring between damped end stops (Modelica's ElastoGap beyond ±5 cm: a contact
spring 10× stiffer and a contact damper 10× the mass's own, limited by the contact spring's
force), force in, velocity out, simulated with scipy: the fit with a gap ridge alone misses it
by a fifth, the one with a damper in the contact (identify/nonlinear/continuation.py) meets it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fmu_surrogate.identify.nonlinear.estimator import NonlinearPHIdentifier

M, K, C, GAP, KC, DC = 1.0, 40.0, 2.0, 0.05, 400.0, 20.0
DT, T = 0.01, 10.0


def _stops(q: float, v: float) -> float:
    """The force of the stops on the mass, ElastoGap's law written out: ``f_c + f_d`` with
    ``f_d = d v`` limited to ``|f_d| ≤ f_c`` in contact, zero between the stops."""
    pen = abs(q) - GAP
    if pen <= 0:
        return 0.0
    fc = KC * pen
    return float(np.sign(q) * fc + np.clip(DC * v, -fc, fc))


def _run(seed: int, amplitude: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One run from rest under a multisine force (8 lines in 0.2–3 Hz), the force taken as
    linear between its samples (the fit's input hold), velocity out."""
    rng = np.random.default_rng(seed)
    f, ph, a = rng.uniform(0.2, 3.0, 8), rng.uniform(0, 2 * np.pi, 8), rng.uniform(0.5, 1, 8)
    t = np.arange(0.0, T + DT / 2, DT)
    F = amplitude * (np.sin(2 * np.pi * np.multiply.outer(t, f) + ph) @ a) / a.sum()

    def rhs(s: float, x: np.ndarray) -> list[float]:
        q, v = x
        return [v, (np.interp(s, t, F) - C * v - K * q - _stops(q, v)) / M]

    sol = solve_ivp(rhs, (0.0, T), [0.0, 0.0], t_eval=t, method="DOP853", rtol=1e-11,
                    atol=1e-13, max_step=DT / 4)
    return t, F[:, None], sol.y[1][:, None]


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
