"""Campaign targets that are not FMU files: a registered backend runs them in isolated workers
with the store, resume and failure records of an FMU campaign."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.fmu.backends.registry import available_backends, get_backend, register_backend
from fmu_surrogate.fmu.campaigns.campaign import Campaign
from fmu_surrogate.fmu.campaigns.targets import target_info
from fmu_surrogate.fmu.errors import UnknownVariableError
from fmu_surrogate.fmu.model.info import Variable
from fmu_surrogate.testing.targets import DecayBackend, decay_target


def test_target_campaign_runs_in_workers_and_keeps_a_crashed_runs_rows(tmp_path):
    target = decay_target(tmp_path / "decay.json", k=1.0, x0=2.0)
    camp = Campaign(target, parameters=[{"k": 0.5}, {"k": 2.0, "crash": 1}, {"x0": 3.0}],
                    stop_time=1.0, step=0.1)
    ds = camp.run(tmp_path / "decay.nc", workers=2, timeout=20, progress=False)
    t = ds.time.values
    assert list(ds.failure_kind.values) == ["", "crash", ""]
    assert "SIGABRT" in str(ds.message.values[1])
    # x0 exp(-k t), in the worker per point, here vectorised: measured equal; one ulp allowed
    np.testing.assert_allclose(ds.x.values[0], 2.0 * np.exp(-0.5 * t), rtol=2.3e-16, atol=0)
    np.testing.assert_allclose(ds.x.values[2], 3.0 * np.exp(-1.0 * t), rtol=2.3e-16, atol=0)
    n = int(ds.n_samples.values[1])  # the rows up to t = 0.5 survive the abort
    assert n == 6
    np.testing.assert_allclose(ds.x.values[1, :n], 2.0 * np.exp(-2.0 * t[:n]), rtol=2.3e-16,
                               atol=0)
    assert ds.attrs["model"] == "x0 exp(-k t)" and ds.attrs["fmu_name"] == "decay"
    # the identity is the target's content hash: another default is another campaign
    other = Campaign(decay_target(tmp_path / "other.json", k=1.0, x0=2.5),
                     parameters=[{"k": 0.5}], stop_time=1.0, step=0.1)
    assert other.campaign_hash != camp.campaign_hash
    with pytest.raises(UnknownVariableError, match="kk"):
        Campaign(target, parameters=[{"kk": 1.0}], stop_time=1.0, step=0.1)


def test_register_backend_and_target_info_refuse_bad_input(tmp_path):
    assert "testing-decay" in available_backends()
    assert isinstance(get_backend("Testing-Decay"), DecayBackend)
    with pytest.raises(ValueError, match="built in"):
        register_backend("fmpy", DecayBackend)
    with pytest.raises(TypeError, match="callable"):
        register_backend("mine", 42)
    x = Variable("x", 0, "output", "continuous", "Real")
    with pytest.raises(ValueError, match=r"\['x'\] twice"):
        target_info("t", tmp_path / "t.json", "0" * 64, [x, x])
