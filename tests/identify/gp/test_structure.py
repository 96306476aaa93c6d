"""Collocated outputs in the GP effort fit (fmu_surrogate/identify/gp/structure.py,
``with_outputs``): the transform ``[J − R; Bᵀ]`` and what the estimator reports with it."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.identify.gp.effort import GPEffortIdentifier
from fmu_surrogate.identify.gp.structure import effort_problem, with_outputs


def _problem(hamiltonian=False):
    J = np.array([[0.0, 1.0], [-1.0, 0.0]])
    return effort_problem(None, J, np.diag([0.0, 0.5]), np.array([[0.0], [1.0]]),
                          task_rank=None, differential=None, known_effort=None, learned=None,
                          hamiltonian=hamiltonian)


def test_outputs_extend_targets_and_transform():
    p = _problem()
    Y = np.arange(6.0).reshape(3, 2)
    Ya, pa = with_outputs(p, Y, [7.0, 8.0, 9.0])
    np.testing.assert_array_equal(Ya, [[0, 1, 7], [2, 3, 8], [4, 5, 9]])
    np.testing.assert_array_equal(pa.T, np.vstack([p.J - p.R, p.B.T]))
    with pytest.raises(InvalidInputError, match="one collocated output per input"):
        with_outputs(p, Y, np.zeros((3, 2)))
    with pytest.raises(InvalidInputError, match="NaN"):
        with_outputs(p, Y, [1.0, np.nan, 2.0])
    with pytest.raises(InvalidInputError, match="plain GP only"):
        with_outputs(p, Y, [7.0, 8.0, 9.0], hamiltonian=True)


def test_fit_with_outputs_reports_the_structure_targets():
    # a linear oscillator z = Q x: the outputs y = Bᵀz = 2 x2 observed besides ẋ − B u
    rng = np.random.default_rng(0)
    x, u = rng.uniform(-1, 1, (40, 2)), rng.normal(size=40)
    Q = np.diag([3.0, 2.0])
    T = np.array([[0.0, 1.0], [-1.0, -0.5]])
    xd = x @ Q @ T.T + np.outer(u, [0.0, 1.0])
    gp = GPEffortIdentifier(J=[[0, 1], [-1, 0]], R=np.diag([0, 0.5]), B=[[0], [1]],
                            max_iter=80).fit(x, xd, u, 2 * x[:, 1])
    assert gp.y_train_.shape == (40, 3)
    f, cov = gp.predict_targets(x[:5], return_cov=True)  # J − R z, not the outputs
    assert f.shape == (5, 2) and cov.shape == (5, 2, 2)
    np.testing.assert_allclose(f, gp.effort(x[:5]) @ T.T, rtol=0, atol=1e-12)
    assert gp.score(x, xd, u) > 1 - 1e-6  # measured 1 − 6.6e-8 on the training samples
    assert gp.predict_targets(x[:5], return_cov="full")[1].shape == (10, 10)
