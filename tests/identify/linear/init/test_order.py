"""The order from data (identify/linear/init/order.py): Hankel singular values bound the
candidates, the held-out error chooses."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
from fmu_surrogate.identify.linear.init.order import select_order
from fmu_surrogate.identify.linear.model.adjoint import Experiment
from tests.identify.linear.optim.test_lm_fits import experiment, random_ph


@pytest.mark.parametrize(("seed", "n", "m"), [(3, 4, 2), (5, 3, 1), (7, 6, 2)])
def test_exact_data_give_the_true_order(seed, n, m):
    p = random_ph(seed, n, m)
    exps = [Experiment.from_arrays(*experiment(p, s)) for s in range(2)]
    sel, sm = select_order(exps)
    assert sel.order == n
    assert sm.A.shape == (n, n)
    # below the true order the held-out error is far above the floor, at it below
    errs = {c.order: c.heldout_error for c in sel.candidates}
    assert errs[n] <= 1e-6 and errs[n - 1] > 1e-4
    assert "held-out" in sel.criterion and "<- chosen" in sel.table()


def test_noisy_data_give_a_sensible_order():
    # 1 % output noise on a 4-state system whose fourth Hankel singular value is 3e-4 of the
    # first: that state is at the noise level; the estimator's refined pH candidates choose 3
    # or 4 depending on the noise realisation (measured: 4 here; 3 with other draws, held-out
    # errors 1.05, 0.92, 0.0156, 0.0156, 0.0156 for orders 1–5), never an order that fits noise
    p = random_ph(3, 4, 2)
    rng = np.random.default_rng(1)
    data = []
    for s in range(2):
        t, u, y = experiment(p, s)
        data.append((t, u, y + 0.01 * y.std() * rng.standard_normal(y.shape)))
    est = LinearPHIdentifier().fit(data)
    sel = est.result_.order_selection
    assert 3 <= sel.order <= 4
    errs = {c.order: c.heldout_error for c in sel.candidates}
    assert errs[sel.order] <= 0.02  # the noise level (1 % of the output's spread)
    assert errs[2] > 10 * errs[sel.order]
    assert max(errs) > sel.order  # larger orders were tried and not chosen


def test_estimator_chooses_the_order_and_reports_the_table():
    p = random_ph(5, 3, 1)
    data = [experiment(p, s) for s in range(2)]
    est = LinearPHIdentifier().fit(data)
    assert est.system_.n_states == 3
    assert est.result_.order_selection.order == 3
    t, u, y = data[0]
    assert est.errors(t, u, y).relative_max <= 1e-6  # measured ~1e-10
    assert est.result_.order_selection.candidates[0].order == 1
