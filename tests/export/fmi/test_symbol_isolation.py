"""An exported FMU exports its FMI functions only: a host that loaded another FMU's binary with
RTLD_GLOBAL (same internal function names, other data) must not change what it computes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

from fmu_surrogate.export import export_fmu
from fmu_surrogate.ph import LinearPH

SCRIPT = textwrap.dedent("""
    import ctypes, sys, zipfile, tempfile, pathlib
    from fmpy import simulate_fmu
    other, fmu = sys.argv[1], sys.argv[2]
    d = pathlib.Path(tempfile.mkdtemp())
    zipfile.ZipFile(other).extractall(d)
    lib = next((d / "binaries").rglob("*.so"))
    ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)  # its symbols now interpose
    r = simulate_fmu(fmu, stop_time=1.0, output_interval=0.1, step_size=0.1,
                     start_values={"x_start[1]": 1.0})
    print(repr(float(r["y1"][-1])))
""")


def test_another_fmu_loaded_globally_does_not_interpose(tmp_path):
    a = LinearPH([[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, 0.3]), np.diag([2.0, 1.0]),
                 [[0.0], [1.0]])
    b = LinearPH([[0.0]], [[0.5]], [[1.0]], [[1.0]])
    fa, fb = export_fmu(a, tmp_path / "a.fmu"), export_fmu(b, tmp_path / "b.fmu")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(fa), str(fb)], capture_output=True,
                         text=True, check=False, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    # b alone: x' = -0.5 x from x = 1, y = x: exp(-0.5) at t = 1 (exact step: round-off)
    assert abs(float(out.stdout.split()[-1]) - np.exp(-0.5)) < 1e-14
