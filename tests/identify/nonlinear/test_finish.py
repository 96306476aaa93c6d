"""The refit of a checked nonlinear model to all experiments (:mod:`.finish`)."""

from __future__ import annotations

import dataclasses

import numpy as np

from fmu_surrogate.identify.nonlinear import finish
from fmu_surrogate.identify.nonlinear.estimator import NonlinearPHIdentifier
from fmu_surrogate.identify.selection import select_model
from fmu_surrogate.ph import simulate

T = np.arange(0.0, 10.0, 0.01)


def law(v):
    return 2.0 * np.sign(v) * np.abs(v) ** (4 / 3)  # a power-law damper, N of m/s


def prbs(level, seed):
    """A damper driven by a random binary velocity ``±level``: its law seen at two points."""
    w = np.convolve(np.random.default_rng(seed).normal(size=T.size), np.ones(30) / 30, "same")
    v = level * np.sign(w)
    return T, v[:, None], law(v)[:, None]


def _sweep_error(est):
    """Relative max error of the fitted law along a sine through ±2.5 m/s."""
    v = 2.5 * np.sin(2 * np.pi * 0.3 * T)
    y = simulate(est.system_, T, v[:, None], est.x0_).y[:, 0]
    return np.abs(y - law(v)).max() / np.abs(law(v)).max()


def _choice(refine, held=(2.5,)):
    return select_model([prbs(0.5, 1), prbs(1.5, 2)], [prbs(a, 3) for a in held], order=0,
                        linear={"feedthrough": True}, nonlinear={"feedthrough": True},
                        refine=refine)


def test_the_kept_model_learns_from_the_held_out_run_too():
    """Two binary levels (0.5, 1.5 m/s) do not fix a law of two terms (a linear and a power
    law): the fit misses the held-out level 2.5 m/s by 3.2 %.  Refitted to all three runs from
    there it has the law: measured 1.1e-5 along a sine through ±2.5 m/s, against 3.2 % before;
    the held-out error reported is the checked model's."""
    before, after = _choice(False), _choice(True)
    assert before.method == after.method == "nonlinear"
    assert after.nonlinear_error == before.nonlinear_error > 0.02  # measured 3.16 %
    assert _sweep_error(before.estimator) > 0.02  # measured 3.16 %
    # 1e-4: ten times the measured 1.1e-5, 300 times below the checked model's error
    assert _sweep_error(after.estimator) < 1e-4
    refit = after.estimator.result_.refined
    assert refit.kept and refit.refitted < 1e-4 and refit.checked > 0.02  # 9.5e-6 and 2.8 %
    assert "refitted to all runs" in after.report() and "refitted" not in before.report()
    assert before.estimator.result_.refined is None


def test_a_refit_that_is_no_better_leaves_the_checked_model(monkeypatch):
    est = _choice(False).estimator
    system, result = est.system_, est.result_

    def worse(*args, warm, **kwargs):  # a refit that ends far from the data
        return dataclasses.replace(warm, theta=warm.theta * 0.5)

    monkeypatch.setattr(finish, "optimise", worse)
    est.refine()
    assert est.system_ is system
    refit = est.result_.refined
    assert not refit.kept and refit.refitted > refit.checked > 0  # the worse refit's error
    assert "lowers no error" in refit.describe()
    assert est.result_.validation_error == result.validation_error


def test_a_refit_that_fails_leaves_the_checked_model(monkeypatch):
    from fmu_surrogate.identify.nonlinear.parametrisation import NonlinearFitError
    from fmu_surrogate.identify.refit import refit_nonlinear

    kept = _choice(False)
    system = kept.estimator.system_

    def fails(*args, **kwargs):
        raise NonlinearFitError("a run RK4 cannot step")

    monkeypatch.setattr(finish, "optimise", fails)
    line = refit_nonlinear(kept).details
    assert kept.estimator.system_ is system
    assert np.isnan(kept.estimator.result_.refined.refitted)
    assert "the refit failed" in line and "the checked model stays" in line


def _noise(seed, gain):
    w = np.convolve(np.random.default_rng(seed).normal(size=T.size), np.ones(30) / 30, "same")
    v = 1.5 * w / np.abs(w).max()
    return T, v[:, None], gain * law(v)[:, None]


def test_a_refit_that_trades_the_training_runs_for_the_held_out_one_is_not_kept():
    """The held-out run of another damper (1.3 times the force, a parameter the harvest
    varied) in the range the training runs cover: a refit lowers the error over all runs
    (measured 16.6 % -> 10.7 %) by missing the training runs (9.0e-6 -> 9.65 %); the
    checked model stays."""
    kept = select_model([_noise(1, 1.0), _noise(2, 1.0)], [_noise(3, 1.3)], order=0,
                        linear={"feedthrough": True}, nonlinear={"feedthrough": True})
    refit = kept.estimator.result_.refined
    assert kept.method == "nonlinear" and not refit.kept
    assert refit.refitted < refit.checked
    assert refit.training[1] > 1e-2 and refit.training[0] < 1e-4
    assert "would trade the training runs" in kept.report()
    run = _noise(1, 1.0)  # the checked model still has the training law
    y = simulate(kept.estimator.system_, T, run[1], kept.estimator.x0_).y
    # measured 8e-6 (relative RMS)
    assert np.sqrt(np.mean((y - run[2]) ** 2) / np.mean(run[2] ** 2)) < 1e-4


def test_a_held_out_run_met_as_the_training_ones_is_not_refitted_to():
    """Three runs of one damper at one level: the checked model meets the held-out run as the
    training ones, there is nothing to learn from it, and no refit is run (it costs a fit)."""
    kept = select_model([_noise(1, 1.0), _noise(2, 1.0)], [_noise(3, 1.0)], order=0,
                        linear={"feedthrough": True}, nonlinear={"feedthrough": True})
    refit = kept.estimator.result_.refined
    assert not refit.kept and np.isnan(refit.refitted)
    # measured 8.1e-6 held out against 9.0e-6 on training: the same law's error on samples of
    # one distribution, 0.9 of it, well inside the 1.5 of the rule
    assert refit.held_out <= finish.HELD_OUT_MET * refit.training[0]
    assert "not refitted to all runs" in kept.report()


def test_nothing_held_out_nothing_refitted():
    est = _choice(True, held=()).estimator
    assert isinstance(est, NonlinearPHIdentifier) and est.result_.n_validation == 0
    system = est.system_
    assert est.refine().system_ is system and est.result_.refined is None
