"""Dropping the terms a nonlinear fit does not need: on error functions whose dependence on each
term is known, and on a fit that leaves negligible terms."""

from __future__ import annotations

import numpy as np

from fmu_surrogate.identify.nonlinear.parametrisation import Layout, to_system
from fmu_surrogate.identify.nonlinear.pruning import ERROR_GROWTH, prune_terms

LAYOUT = Layout(2, 1, ("quartic", "logcosh"), 2, True, 0, n_port_dissipation=2)


def _theta(rng):
    return rng.uniform(0.1, 0.5, LAYOUT.size)


def _gain(theta, name, i):
    return theta[LAYOUT.slices()[name][0].start + i]


def test_terms_the_error_does_not_need_are_dropped_the_others_kept():
    theta = _theta(np.random.default_rng(0))
    # the error needs the first ridge and the second feedthrough term; the second dissipation
    # term adds 1 % of the error when gone (within the 2 % allowed), the others nothing
    def error(th):
        e = 1.0 + 10.0 * abs(_gain(th, "alpha", 0) - _gain(theta, "alpha", 0))
        e += 10.0 * abs(_gain(th, "pbeta", 1) - _gain(theta, "pbeta", 1))
        return e + (0.01 if _gain(th, "beta", 1) == 0.0 else 0.0)

    pruned, dropped = prune_terms(LAYOUT, theta, error)
    assert sorted(dropped) == [("alpha", 1), ("beta", 0), ("beta", 1), ("pbeta", 0)]
    assert _gain(pruned, "alpha", 0) == _gain(theta, "alpha", 0)
    assert _gain(pruned, "pbeta", 1) == _gain(theta, "pbeta", 1)
    assert error(pruned) <= ERROR_GROWTH * error(theta)
    # nothing else moved
    others = np.ones(LAYOUT.size, bool)
    for name, i in dropped:
        others[LAYOUT.slices()[name][0].start + i] = False
    assert np.array_equal(pruned[others], theta[others])


def test_removals_that_are_harmless_alone_but_not_together_stop_at_the_bound():
    theta = _theta(np.random.default_rng(1))
    # each dissipation term costs 1.5 % alone, both 3 %: only one goes
    def error(th):
        return 1.0 + 0.015 * sum(_gain(th, "beta", i) == 0.0 for i in range(2))

    _, dropped = prune_terms(LAYOUT, theta, error)
    assert [d for d in dropped if d[0] == "beta"] in ([("beta", 0)], [("beta", 1)])


def test_dropped_terms_are_left_out_of_the_system():
    theta = _theta(np.random.default_rng(2))
    pruned, dropped = prune_terms(LAYOUT, theta, lambda th: 1.0)  # nothing needed
    assert len(dropped) == 6
    sys_ = to_system(LAYOUT, pruned)
    assert sys_.effort_function.kinds == () and sys_.effort_function.weights.size == 0
    assert sys_.dissipation.n_terms == 0 and sys_.port_dissipation.n_terms == 0
