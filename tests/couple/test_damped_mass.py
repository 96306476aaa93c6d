"""The benchmark system damped_mass.toml (free_mass braked by the linear damper, a bond through
a component with direct feedthrough) on libcosim, against its exact Jacobi recurrence and the
analytic solution."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.couple.running import run
from fmu_surrogate.couple.validation import validate

pytest.importorskip("libcosimpy")

M, C, V0 = 2.0, 4.0, 2.0  # the system file's parameters


@pytest.fixture
def system(benchmark_system):
    return benchmark_system("damped_mass")


def test_the_damper_declares_its_feedthrough(system):
    infos = validate(system)
    assert infos["brake"].feedthrough == {"F": ("v",)}
    assert infos["mass"].feedthrough == {"v": ()}


def test_fixed_step_is_the_jacobi_scheme_and_converges(system):
    errs = []
    for h in (1e-2, 5e-3):
        ds = run(system, 2.0, h, "fixed", progress=False)
        assert str(ds.status.values[0]) == "ok"
        t = ds.time.values
        v, F = ds["mass.v"].values[0], ds["brake.F"].values[0]
        # Jacobi with held inputs, both sides exact over a step (the mass's derivative is
        # constant on it, the damper static): the recurrence holds to round-off (observed
        # below 1e-15 m/s and 1e-14 N)
        vv, FF = np.empty(len(t)), np.empty(len(t))
        vv[0], FF[0] = V0, C * V0
        for k in range(len(t) - 1):
            vv[k + 1] = vv[k] - FF[k] * h / M
            FF[k + 1] = C * vv[k]
        np.testing.assert_allclose(v, vv, rtol=0, atol=1e-13)
        np.testing.assert_allclose(F, FF, rtol=0, atol=1e-12)
        errs.append(np.max(np.abs(v - V0 * np.exp(-C * t / M))))
    # first order in h (the force lags by up to two steps)
    assert 1.9 < errs[0] / errs[1] < 2.1
