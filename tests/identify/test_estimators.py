"""The one estimator contract, run over every estimator of :mod:`fmu_surrogate.identify`.

Each case gives an unfitted estimator with small settings, the arguments of a quick ``fit`` and
the ``ph`` type its surrogate must have.  scikit-learn's data-independent estimator checks run on
each (cloning, repr, get/set params, no work in ``__init__``, unfitted estimators raising
``NotFittedError``).  Its data checks (``check_fit2d_*``, ``check_regressors_*``,
``check_estimators_dtypes``, ...) do not apply: they call ``fit(X, y)`` with random 2-D ``X`` and
1-D ``y``, while our estimators fit dynamical data — ``fit(x, xdot, u)`` with the structure
``E, J, R, B`` fixed, or ``fit(t, u, y)`` for a state-space model — that random tables are not.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils import estimator_checks as sk

import fmu_surrogate as fs
from fmu_surrogate.benchmarks import rc_network
from fmu_surrogate.identify.base import FitResult, NotFittedError, PHEstimator


def _rc_data():
    x1 = np.linspace(0.5, 2.0, 12)
    u = 1.0 + np.sin(x1)
    x = np.column_stack([x1, u, u - np.sqrt(2 * x1)])
    xdot = np.column_stack([x[:, 2], 0 * x1, 0 * x1])
    return x, xdot, u


def _gp_case():
    est = fs.GPEffortIdentifier(**rc_network.matrices(), max_iter=3)
    return est, _rc_data(), fs.PHDAE


def _linear_case():
    t = np.linspace(0.0, 1.0, 201)
    u = np.column_stack([np.sin(3 * t), np.cos(2 * t)])
    y = np.column_stack([np.sin(2 * t), 0.5 * t])
    est = fs.LinearPHIdentifier(3, learn=("J", "R", "B"), max_iter=2)
    return est, ((t, u, y),), fs.LinearPH


def _nonlinear_case():
    # the force-velocity response of a damped mass on a spring, from rest (a pH system)
    t = np.linspace(0.0, 2.0, 101)
    u = np.sin(3 * t)[:, None]
    msd = fs.LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.5]), np.diag([4.0, 1.0]), [[0.0], [1.0]])
    y = fs.simulate(msd, t, u).y
    est = fs.NonlinearPHIdentifier(2, max_iter=2, segment_length=20)
    return est, ((t, u, y),), fs.NonlinearPH


def _law_data():
    """An acceleration law ÿ = u − 0.5 ẏ − 4 y − y³ sampled at random states (small noise)."""
    rng = np.random.default_rng(0)
    y, ydot, u = rng.uniform(-1, 1, (3, 200))
    Phi = np.column_stack([u, ydot, y, y ** 3])
    acc = u - 0.5 * ydot - 4 * y - y ** 3 + 1e-3 * rng.standard_normal(200)
    return Phi, acc, y


_LAW_NAMES = ["u", "ydot", "y", "y^3"]
_LAW_PORTS = {"force": "u", "velocity": "ydot", "position": "y"}


def _rvm_case():
    Phi, acc, _ = _law_data()
    return fs.RVM(names=_LAW_NAMES, max_iter=50), (Phi, acc), fs.PHDAE


def _gprvm_case():
    Phi, acc, y = _law_data()
    return fs.GPRVM(names=_LAW_NAMES, max_iter=5, n_inducing=10), (Phi, acc, y[:, None]), fs.PHDAE


CASES = {"GPEffortIdentifier": _gp_case, "LinearPHIdentifier": _linear_case, "RVM": _rvm_case,
         "GPRVM": _gprvm_case, "NonlinearPHIdentifier": _nonlinear_case}
#: keyword arguments of ``to_surrogate`` where the estimator needs them (a discovered law names
#: its force, velocity and position terms)
SURROGATE_KWARGS = {"RVM": _LAW_PORTS, "GPRVM": _LAW_PORTS}


@pytest.fixture(params=sorted(CASES))
def case(request):
    return CASES[request.param]()


def test_is_a_ph_estimator(case):
    est, _, _ = case
    assert isinstance(est, PHEstimator)


def test_clone_and_params_round_trip(case):
    est, _, _ = case
    params = est.get_params()
    twin = clone(est)
    assert type(twin) is type(est) and twin is not est
    assert twin.get_params().keys() == params.keys()
    for k, v in params.items():
        assert twin.get_params()[k] is v or np.array_equal(twin.get_params()[k], v), k
    assert est.set_params(**params) is est
    with pytest.raises(ValueError, match="Invalid parameter"):
        est.set_params(no_such_setting=1)


def _to_surrogate(est):
    return est.to_surrogate(**SURROGATE_KWARGS.get(type(est).__name__, {}))


def test_not_fitted_before_fit(case):
    est, _, _ = case
    with pytest.raises(NotFittedError, match="not fitted"):
        _to_surrogate(est)


def test_fit_returns_self_with_frozen_result_and_surrogate(case):
    est, args, kind = case
    assert est.fit(*args) is est
    assert isinstance(est.result_, FitResult)
    assert est.result_.n_iter >= 0 and est.result_.time > 0
    assert len(est.result_.stopping_reason) > 0
    with pytest.raises(FrozenInstanceError):
        est.result_.n_iter = 0
    assert isinstance(_to_surrogate(est), kind)
    # fitting learns nothing into the settings
    assert all(not k.endswith("_") for k in est.get_params())


SKLEARN_CHECKS = [
    sk.check_estimator_cloneable,
    sk.check_estimator_repr,
    sk.check_no_attributes_set_in_init,
    sk.check_get_params_invariance,
    sk.check_set_params,
    sk.check_do_not_raise_errors_in_init_or_set_params,
    sk.check_parameters_default_constructible,
    sk.check_mixin_order,
]


@pytest.mark.parametrize("check", SKLEARN_CHECKS, ids=lambda c: c.__name__)
def test_sklearn_estimator_checks(case, check):
    est, _, _ = case
    check(type(est).__name__, est)


def test_sklearn_unfitted_check(case):
    """``check_estimators_unfitted`` calls predict on random data and wants NotFittedError."""
    import inspect

    est, _, _ = case
    required = [p for p in inspect.signature(est.predict).parameters.values()
                if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
    if len(required) > 1:  # e.g. predict(t, u): a time grid and inputs, not one table X
        with pytest.raises(NotFittedError, match="not fitted"):
            est.predict(*[np.zeros((3, 2))] * len(required))
        return
    sk.check_estimators_unfitted(type(est).__name__, est)



@pytest.mark.parametrize("make", [lambda: fs.RVM(),
                                  lambda: fs.GPRVM(max_iter=5, n_inducing=10)],
                         ids=["RVM", "GPRVM"])
def test_regressors_pass_every_sklearn_check(make):
    """RVM and GP-RVM fit ``(Phi, y)`` tables, so all of scikit-learn's checks apply (41 of them:
    data types, NaN, sparse and complex input, empty data, n_features_in_, fit idempotence, ...)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = sk.check_estimator(make(), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    assert len(results) >= 40 and failed == []
