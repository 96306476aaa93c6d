"""Every command of README.md's "Command line" section runs, in order, with the outcome it claims
(exit status 0 and the files it names)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def commands() -> list[str]:
    section = README.read_text().split("## Command line", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL).group(1)
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_readme_lists_the_pipeline_commands():
    verbs = {shlex.split(c)[1] for c in commands()}
    assert {"benchmarks", "info", "harvest", "identify", "validate", "plot"} <= verbs


@pytest.mark.slow
def test_every_readme_command_runs(tmp_path, benchmark_fmus):
    # the session's builds, so that `benchmarks build fmus` checks their hashes instead of
    # compiling all of them again (14 s; building is tested in tests/benchmarks/test_build.py)
    (tmp_path / "fmus").mkdir()
    for path in benchmark_fmus.values():
        shutil.copy2(path, tmp_path / "fmus" / path.name)
    for line in commands():
        argv = shlex.split(line)
        assert argv[0] == "fmu-surrogate"
        r = subprocess.run([sys.executable, "-m", "fmu_surrogate.cli", *argv[1:]], cwd=tmp_path,
                           capture_output=True, text=True, timeout=600,
                           check=False)
        assert r.returncode == 0, f"{line}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        for out in re.findall(r"(?:-o|--plot) (\S+)", line):
            assert (tmp_path / out).exists(), f"{line}: {out} was not written"
