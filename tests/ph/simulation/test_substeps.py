"""Sub-steps of a NonlinearPH with a longest step: the same trajectory as the scheme on the
refined grid, given at the original nodes; the files and couplings keep the step."""

from __future__ import annotations

import numpy as np
import pytest

import fmu_surrogate as fs
from fmu_surrogate.ph import ConvexEffort, LinearPH, NonlinearPH, PowerDissipation
from fmu_surrogate.ph.interconnect import interconnect
from fmu_surrogate.ph.structure import StructureError


def _spring(max_step=None):
    """A mass on a progressive spring with a power-law damper: ω ≈ 8 rad/s."""
    eff = ConvexEffort(np.eye(2), ["quartic"], [0.5], np.array([[1.0, 0.0]]))
    diss = PowerDissipation([[0.0, 1.0]], [0.4], [0.5], [1e-3])
    return NonlinearPH([[0.0, 8.0], [-8.0, 0.0]], [[0.0, 0.0], [0.0, 0.1]], [[0.0], [1.0]],
                       eff, diss, input_names=["F"], output_names=["v"], max_step=max_step)


@pytest.mark.parametrize("hold", ["zoh", "linear"])
def test_sub_steps_are_the_scheme_on_the_refined_grid(hold):
    # a grid with uneven steps: 0.1 s steps cut in 4, 0.05 s in 2, 0.02 s kept
    t = np.concatenate([np.arange(0.0, 1.0, 0.1), np.arange(1.0, 1.5, 0.05), [1.5, 1.52]])
    u = np.sin(3.0 * t)[:, None]
    sub = fs.simulate(_spring(0.025), t, u, [0.3, 0.0], hold=hold)
    k = np.maximum(1, np.ceil(np.round(np.diff(t) / 0.025, 9))).astype(int)
    nodes = np.concatenate([[0], np.cumsum(k)])
    tf = np.concatenate([np.linspace(a, b, kk + 1)[:-1] for a, b, kk in zip(t, t[1:], k)] +
                        [t[-1:]])
    uf = np.interp(tf, t, u[:, 0]) if hold == "linear" else u[np.searchsorted(t, tf, "right")
                                                                - 1, 0]
    ref = fs.simulate(_spring(), tf, uf[:, None], [0.3, 0.0], hold=hold)
    # the same AVF steps on grids built by two formulas (round-off of the nodes' times)
    for a, b in ((sub.x, ref.x[nodes]), (sub.y, ref.y[nodes]), (sub.H, ref.H[nodes]),
                 (sub.dissipated, ref.dissipated[nodes]), (sub.supplied, ref.supplied[nodes])):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)
    assert np.array_equal(sub.t, t) and np.array_equal(sub.u, u)
    assert sub.newton_iterations.sum() == ref.newton_iterations.sum()
    # the balance of the sub-steps closes at the nodes (round-off of the Newton tolerance)
    assert abs(sub.energy_residual) <= 1e-10 * sub.energy_scale
    # one step per 0.1 s lags the refined solution; the sub-steps do not
    coarse = fs.simulate(_spring(), t, u, [0.3, 0.0], hold=hold)
    assert np.abs(coarse.y - sub.y).max() > 100 * np.abs(sub.y - ref.y[nodes]).max()


def test_the_step_is_kept_by_files_copies_and_couplings(tmp_path):
    s = _spring(0.01)
    back = fs.load(fs.save(s, tmp_path / "s.json"))
    assert back.max_step == 0.01
    import json

    assert json.loads((tmp_path / "s.json").read_text())["version"] == 6
    assert s.with_max_step(None).max_step is None and s.max_step == 0.01
    # without a step the file stays in the oldest version that holds it
    assert json.loads(fs.save(_spring(), tmp_path / "t.json").read_text())["version"] == 2
    # a coupled system steps at the finest of its parts
    mass = LinearPH([[0.0]], [[0.0]], [[1.0]], [[1.0]], input_names=["F"], output_names=["v"])
    C = np.array([[0.0, 1.0], [-1.0, 0.0]])
    both = interconnect([_spring(0.02), _spring(0.005)], C, [[0], [0]])
    assert both.max_step == 0.005
    assert interconnect([_spring(0.02), mass], C, [[0], [0]]).max_step == 0.02
    with pytest.raises(StructureError, match="max_step"):
        _spring(-1.0)
