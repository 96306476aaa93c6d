"""The package namespace: the runner/campaign API is re-exported, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

from fmu_surrogate import fmu

API = ["harvest", "Campaign", "HarvestSession", "summarize", "experiment_grid", "default_record",
       "get_backend", "available_backends", "Backend", "FmpyBackend", "PyFMIBackend", "RunOutput",
       "WorkerPool", "RunnerConfig", "RunSpec", "RunResult", "run_isolated", "classify",
       "RunStore", "StoreMismatchError", "StoreLockedError"]


def test_api_is_re_exported():
    from fmu_surrogate.fmu.backends import registry as backends
    from fmu_surrogate.fmu.campaigns import campaign, store
    from fmu_surrogate.fmu.runner import pool as runner

    for name in API:
        obj = getattr(fmu, name)
        assert any(getattr(m, name, None) is obj for m in (backends, campaign, runner, store)), name
        assert name in dir(fmu)
    from fmu_surrogate.fmu import Campaign, WorkerPool  # noqa: F401 - the from-import works too


def test_import_is_light():
    code = ("import sys, fmu_surrogate.fmu as f; heavy = ['torch', 'xarray', 'scipy', 'fmpy', "
            "'h5py', 'pandas', 'distributed', 'tqdm', 'fmu_surrogate.fmu.runner.pool']; "
            "print([m for m in heavy if m in sys.modules]); f.WorkerPool; "
            "print('fmu_surrogate.fmu.runner.pool' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True"], out.stdout + out.stderr


def test_unknown_name_is_an_attribute_error():
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        fmu.nope  # noqa: B018
