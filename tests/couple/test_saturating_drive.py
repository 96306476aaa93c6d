"""The benchmark system saturating_drive.toml (saturating_motor driving free_inertia, both
ports giving power out, the effort inverted) on libcosim against a scipy solution."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fmu_surrogate.benchmarks.vendor import saturating_motor
from fmu_surrogate.couple.running import run
from fmu_surrogate.couple.validation import check_bond

pytest.importorskip("libcosimpy")

J = 0.02  # the system file's inertia


@pytest.fixture
def system(benchmark_system):
    return benchmark_system("saturating_drive")


def _reference(t: np.ndarray, V) -> np.ndarray:
    """``(ψ, w)`` of the coupled equations with the voltage held over each step, as the
    co-simulation holds the driven input (DOP853 per step)."""
    p = saturating_motor.PARAMS
    x = np.zeros((t.size, 2))
    for k in range(t.size - 1):
        vk = float(V(t[k]))

        def rhs(_t, y, vk=vk):
            i = saturating_motor.current(y[0])
            return [vk - p["R"] * i - p["k"] * y[1], p["k"] * i / J]

        x[k + 1] = solve_ivp(rhs, (t[k], t[k + 1]), x[k], method="DOP853", rtol=1e-11,
                             atol=1e-13).y[:, -1]
    return x


def test_fixed_step_follows_the_coupled_equations(system):
    (bond,) = system.bonds
    check_bond(bond)  # both sides give power out: the inverted effort makes it skew
    errs = []
    for h in (1e-3, 5e-4):
        ds = run(system, 2.0, h, "fixed", progress=False)
        assert str(ds.status.values[0]) == "ok"
        np.testing.assert_array_equal(ds["load.F"].values, -ds["motor.tau"].values)
        ref = _reference(ds.time.values, system.inputs["motor.V"])
        assert np.abs(ref[:, 0]).max() > 0.06  # the flux saturates (ψ_sat = 0.1 Wb: +36 % i)
        w = ds["load.v"].values[0]
        errs.append(np.sqrt(np.mean((w - ref[:, 1]) ** 2) / np.mean(ref[:, 1] ** 2)))
        # each side sees its own port: the power the motor gives is the power the load takes
        p_m, p_l = ds["bond:shaft:P_motor"].values[0], ds["bond:shaft:P_load"].values[0]
        np.testing.assert_array_equal(p_m[0], -p_l[0])
    # Jacobi exchange: first order, measured 0.38 % and 0.19 % of the speed's RMS
    assert errs[1] < 2.5e-3 and 1.7 < errs[0] / errs[1] < 2.3
