"""The README's Python API example runs as printed (keeps the README true)."""

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(tmp_path, monkeypatch, capsys):

    code = re.search(r"## Python API\n\n```python\n(.*?)```", README.read_text(), re.DOTALL).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - our own README
    # The RC campaign with G = 2 drains the capacitor: one recorded failure, the others fine.
    from fmu_surrogate.fmu.dataset import failed_runs, load_dataset

    assert list(failed_runs(load_dataset(tmp_path / "rc.nc"))["run"]) == [2]
    # GP effort from ~64 harvested samples: max error over the whole trajectory well below the
    # 1e-2 Euler-data level of the paper (FMU data carry exact derivatives; measured ~2e-6).
    err = np.abs(namespace["surrogate"].effort(namespace["x"]) - namespace["rc_network"].effort(namespace["x"]))
    assert err.max() < 1e-3
    assert namespace["est"].system_.structure_violation()["J_skew"] == 0.0
