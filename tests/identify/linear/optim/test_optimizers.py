"""Optimiser objects of the linear pH identifier (fmu_surrogate.identify.linear.optim.lm,
first_order, base): an object and its shorthand string make the same fit; settings are stored
unchanged, so scikit-learn's clone keeps the object."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
from fmu_surrogate.identify.linear.model.discretisation import simulate
from fmu_surrogate.identify.linear.optim.first_order import CG, TrustRegions
from fmu_surrogate.identify.linear.optim.lm import LM


def small_exact_problem():
    """A 2-state, 1-port pH system and its noise-free output to a two-tone input."""
    p = {"J": np.array([[0.0, 1.0], [-1.0, 0.0]]), "R": np.diag([0.3, 0.1]),
         "Q": np.diag([1.0, 2.0]), "B": np.array([[1.0], [0.5]]), "x0": np.zeros(2)}
    t = np.linspace(0.0, 4.0, 401)
    u = (np.sin(2.0 * t) + 0.5 * np.sin(7.0 * t))[:, None]
    return t, u, simulate(p, t, u)[1]


@pytest.mark.parametrize(("obj", "short", "settings"), [
    (LM(max_iter=15, tol=1e-10), "lm", {}),
    (CG(max_iter=4, tol=1e-10, initial_step=100.0, restart_every=3), "cg",
     {"initial_step": 100.0, "restart_every": 3}),
])
def test_object_and_string_give_the_same_fit(obj, short, settings):
    # The same optimiser with the same settings, built from the string or given as an object:
    # the same arithmetic, so the fits agree to round-off (measured: bitwise equal).
    t, u, y = small_exact_problem()
    common = {"learn": ("J", "R", "B"), "Q": np.diag([1.0, 2.0]), "init": "paper"}
    a = LinearPHIdentifier(2, optimizer=obj, **common).fit(t, u, y)
    b = LinearPHIdentifier(2, optimizer=short, max_iter=obj.max_iter, tol=obj.tol,
                           **settings, **common).fit(t, u, y)
    assert a.result_.optimizer == b.result_.optimizer == short
    assert a.result_.n_iter == b.result_.n_iter > 0
    np.testing.assert_allclose(a.result_.cost_history, b.result_.cost_history, rtol=1e-12)
    for name in ("J", "R", "B"):
        np.testing.assert_allclose(getattr(a.system_, name), getattr(b.system_, name),
                                   rtol=1e-12, atol=1e-14)


def test_lm_object_fits_the_exact_problem():
    # noise-free data of a model in the class: the output error falls to round-off level
    # (measured 2e-15 relative after 2 iterations from the subspace start; 1e-9 leaves room
    # for other BLAS summation orders).
    t, u, y = small_exact_problem()
    est = LinearPHIdentifier(2, learn=("J", "R", "B"), Q=np.diag([1.0, 2.0]),
                             optimizer=LM(max_iter=50)).fit(t, u, y)
    y_fit = est.predict(t, u)
    assert np.abs(y_fit - y).max() <= 1e-9 * np.abs(y).max()


def test_clone_keeps_the_optimizer_object():
    est = LinearPHIdentifier(2, optimizer=LM(max_iter=7, dense=False))
    twin = clone(est)
    assert twin.optimizer == est.optimizer and twin.get_params()["optimizer"] == LM(
        max_iter=7, dense=False)


def test_invalid_optimizer_settings_are_named():
    t, u, y = small_exact_problem()
    with pytest.raises(ValueError, match="max_iter must be an integer >= 0"):
        LinearPHIdentifier(2, optimizer=LM(max_iter=-1)).fit(t, u, y)
    with pytest.raises(ValueError, match="line_search must be one of"):
        LinearPHIdentifier(2, optimizer=TrustRegions(line_search="wolfe")).fit(t, u, y)
    with pytest.raises(TypeError, match="optimizer must be one of"):
        LinearPHIdentifier(2, optimizer=3).fit(t, u, y)
