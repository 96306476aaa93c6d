import numpy as np
import pytest

from fmu_surrogate.couple.running import run
from fmu_surrogate.couple.sweep import sweep
from fmu_surrogate.couple.system import Component, Connection, CouplingError
from fmu_surrogate.testing.fmus import build_faulty


def test_sweep_stacks_runs_with_their_parameters(system_factory):
    s = system_factory()
    ds = sweep(s, [{"spring.q0": 0.5}, {"spring.q0": 0.25}], 1.0, 0.1, progress=False)
    assert ds["spring.F"].dims == ("run", "time") and ds.sizes["run"] == 2
    np.testing.assert_array_equal(ds["param:spring.q0"].values, [0.5, 0.25])
    # linear system, zero input: halving q0 halves every signal; only the FMUs' adaptive
    # integrators (rtol 1e-8, atol 1e-10) break the exact scaling: measured 3e-11 relative
    np.testing.assert_allclose(ds["chain.v1"].values[1], 0.5 * ds["chain.v1"].values[0],
                               rtol=1e-9, atol=1e-12)
    single = run(system_factory(), 1.0, 0.1, progress=False)
    np.testing.assert_array_equal(ds["chain.v1"].values[0], single["chain.v1"].values[0])


def test_sweep_records_a_failing_run_and_goes_on(system_factory, tmp_path):
    s = system_factory()
    s.components["bad"] = Component("bad", build_faulty(tmp_path), {"t_fault": 0.5})
    s.connections += [Connection.parse("bad.x", "chain.F2"), Connection.parse("chain.v2", "bad.u")]
    ds = sweep(s, [{"bad.mode": 4}, {"bad.mode": 0}], 1.0, 0.1, progress=False)
    assert list(ds.status.values) == ["failed", "ok"]
    assert np.isnan(ds["chain.v1"].values[0, -1]) and np.isfinite(ds["chain.v1"].values[1]).all()
    with pytest.raises(CouplingError, match="'nope.k' is not 'component.parameter'"):
        sweep(s, [{"nope.k": 1.0}], 1.0, 0.1, progress=False)
