"""fmpy's C logging proxy keeps one global pointer to the last Python logger it wrapped: after a
session with its own logger is closed and freed, an FMU that logs through fmpy's defaults in the
same process must still reach a live logger (it crashed the process before)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from fmu_surrogate.export import export_fmu
from fmu_surrogate.ph import LinearPH

SCRIPT = textwrap.dedent("""
    import gc, sys
    from fmpy import simulate_fmu
    from fmu_surrogate.fmu.campaigns.session import HarvestSession
    session_fmu, failing_fmu = sys.argv[1], sys.argv[2]
    for _ in range(3):  # sessions with their own loggers, closed and freed
        with HarvestSession(session_fmu) as s:
            s.reset()
            s.step(0.1)
            s.finish()
        del s
        gc.collect()
    try:  # fails leaving initialisation: logs an error through fmpy's default callbacks
        simulate_fmu(failing_fmu, stop_time=0.1, start_values={"x_start[1]": float("nan")})
    except Exception as exc:
        print("raised", type(exc).__name__)
""")


def test_a_closed_session_leaves_fmpy_a_live_logger(benchmark_fmus, tmp_path):
    failing = export_fmu(LinearPH([[0.0]], [[0.5]], [[1.0]], [[1.0]]), tmp_path / "f.fmu")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(benchmark_fmus["free_mass"]),
                          str(failing)], capture_output=True, text=True, check=False, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "raised" in out.stdout
    # the error reached fmpy's printer (a live logger), naming the non-finite start
    assert "not finite" in out.stdout + out.stderr
