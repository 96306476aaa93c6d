"""The internal step of a fitted nonlinear surrogate: halved while the training error falls
(the scheme's error, not the fit's), kept at one step per sample otherwise."""

from __future__ import annotations

import numpy as np

import fmu_surrogate as fs
from fmu_surrogate.identify.nonlinear.internal_step import (
    MAX_HALVINGS,
    SCHEME_FLOOR,
    with_internal_step,
)
from fmu_surrogate.ph import ConvexEffort, NonlinearPH, PortedSystem
from fmu_surrogate.ph.port_map import PortMap


def _surrogate(omega):
    """A mass on a progressive spring, natural frequency ``omega`` (rad/s), force in."""
    eff = ConvexEffort(np.eye(2), ["quartic"], [0.5], np.array([[1.0, 0.0]]))
    core = NonlinearPH([[0.0, omega], [-omega, 0.0]], [[0.0, 0.0], [0.0, 0.2]], [[0.0], [1.0]],
                       eff)
    return PortedSystem(core, PortMap.identity(1, ["F"], ["v"], n_states=2), np.zeros(2))


def _data(sur, h):
    """Two runs of 2 s sampled at ``h`` from the model itself, integrated 32 times finer."""
    fine = sur.replace(system=sur.system.with_max_step(h / 32))
    out = []
    for seed in (1, 2):
        t = np.arange(0.0, 2.0 + h / 2, h)
        u = np.cumsum(np.random.default_rng(seed).normal(size=t.size))[:, None] * 0.05
        out.append((t, u, fs.simulate(fine, t, u).y, "zoh"))
    return out


def test_a_fast_model_gets_sub_steps_until_the_scheme_error_is_below_the_floor():
    sur = _surrogate(12.0)  # h ω = 0.12 at 10 ms
    train = _data(sur, 0.01)
    from fmu_surrogate.identify.nonlinear.pruning import relative_error

    one = relative_error(sur, train)
    got, err = with_internal_step(sur, train)
    k = round(0.01 / got.system.max_step)
    assert err == relative_error(got, train)  # the error it reports is the kept one's
    # measured: 1.08 % with one step per sample, 6.7e-4 with 4 sub-steps (chosen), 1.6e-4 with
    # 8: the AVF error falls 4 times per halving
    assert one > 1e-3 and k in (2, 4, 8, 16) and k <= 2 ** MAX_HALVINGS
    assert err <= SCHEME_FLOOR or k == 2 ** MAX_HALVINGS
    assert err < one / 10
    # the step before was not enough: one halving less misses the floor
    half = relative_error(sur.replace(system=sur.system.with_max_step(0.02 / k)), train)
    assert half > SCHEME_FLOOR


def test_a_slow_model_keeps_one_step_per_sample():
    sur = _surrogate(0.5)  # h ω = 0.005: the scheme's error is below the floor already
    train = _data(sur, 0.01)
    assert with_internal_step(sur, train)[0] is sur
