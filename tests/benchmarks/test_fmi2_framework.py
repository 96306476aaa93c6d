"""FMI 2.0 behaviour of the shared C framework (fmi2_framework.c), exercised through fmpy."""

from __future__ import annotations

import numpy as np
import pytest
from fmpy.fmi1 import FMICallException

from tests.benchmarks._fmu import Slave


def steps(s: Slave, t0: float, n: int, h: float, names=("y", "ydot")) -> np.ndarray:
    out = []
    t = t0
    for _ in range(n):
        s.fmu.doStep(currentCommunicationPoint=t, communicationStepSize=h)
        t += h
        out.append(s.get(*names))
    return np.array(out)


def test_reset_reuse_and_fmu_state_round_trip(benchmark_fmus):
    with Slave(benchmark_fmus["duffing"]) as s:
        s.instantiate()
        sv = {"y0": 0.03, "u": 1.0}
        s.initialize(sv)
        first = steps(s, 0.0, 50, 0.02)
        # reset + same settings reproduce the run bit for bit
        s.fmu.reset()
        s.initialize(sv)
        np.testing.assert_array_equal(steps(s, 0.0, 50, 0.02), first)
        # save the state at t = 1, continue, restore, continue again: identical
        state = s.fmu.getFMUstate()
        later = steps(s, 1.0, 25, 0.02)
        s.fmu.setFMUstate(state)
        np.testing.assert_array_equal(steps(s, 1.0, 25, 0.02), later)
        # serialised state survives a round trip through bytes
        blob = s.fmu.serializeFMUstate(state)
        s.fmu.freeFMUstate(state)
        restored = s.fmu.deSerializeFMUstate(blob)
        s.fmu.setFMUstate(restored)
        s.fmu.freeFMUstate(restored)
        np.testing.assert_array_equal(steps(s, 1.0, 25, 0.02), later)
        assert s.fmu.getRealStatus(2) == pytest.approx(1.5)  # fmi2LastSuccessfulTime
        s.fmu.terminate()


def test_refused_calls_are_logged_and_keep_the_instance_usable(benchmark_fmus):
    with Slave(benchmark_fmus["rc_network"]) as s:
        s.instantiate()
        s.initialize()
        cases = [
            (lambda: s.set(x2=1.0), "'x2' is calculated"),  # output
            (lambda: s.set(x1_0=1.0), "'x1_0' can only be set before"),  # fixed after init
            (lambda: s.set(u=float("nan")), "not finite"),
            (lambda: s.fmu.getReal([999]), "value reference 999"),
            (lambda: s.fmu.doStep(currentCommunicationPoint=5.0, communicationStepSize=0.1),
             "differs from the FMU time"),
            (lambda: s.fmu.setDebugLogging(True, ["noSuchCategory"]), "unknown log category"),
        ]
        for call, text in cases:
            s.log.records.clear()
            with pytest.raises(FMICallException):
                call()
            (msg,) = s.log.errors()
            assert text in msg
        # tunable parameters and inputs may change between steps; the instance still works
        s.set(G=2.0, u=0.5)
        s.fmu.doStep(currentCommunicationPoint=0.0, communicationStepSize=0.1)
        x1, x3 = s.get("x1", "x3")
        assert x3 == pytest.approx(2.0 * (0.5 - np.sqrt(2 * x1)), abs=1e-14)


def test_debug_logging_reports_calls(benchmark_fmus):
    with Slave(benchmark_fmus["pendulum"]) as s:
        s.instantiate(logging_on=True)
        s.initialize()
        calls = [m for _, cat, m in s.log.records if cat == "logCalls"]
        assert "fmi2ExitInitializationMode" in calls
        s.fmu.setDebugLogging(False, [])
        s.log.records.clear()
        s.fmu.doStep(currentCommunicationPoint=0.0, communicationStepSize=0.01)
        assert s.log.records == []


def test_step_limit_reports_reason(benchmark_fmus):
    with Slave(benchmark_fmus["duffing"]) as s:
        s.instantiate()
        s.initialize({"y0": 0.05, "cs_max_steps": 2})
        with pytest.raises(FMICallException):
            s.fmu.doStep(currentCommunicationPoint=0.0, communicationStepSize=5.0)
        assert "more than cs_max_steps = 2 internal steps" in s.log.errors()[0]
        # LastSuccessfulTime tells how far the failed step got
        assert 0.0 < s.fmu.getRealStatus(2) < 5.0  # fmi2LastSuccessfulTime = 2


def test_guid_mismatch_is_refused_with_reason(benchmark_fmus):
    with Slave(benchmark_fmus["duffing"], guid="{00000000-0000-0000-0000-000000000000}") as s:
        with pytest.raises(Exception, match="Failed to instantiate"):
            s.instantiate()
        assert "GUID mismatch" in s.log.errors()[0]


def test_instance_is_reusable_after_a_model_failure(benchmark_fmus):
    # harvesting reuses one instance across parameter sets: a failed run must not poison it
    with Slave(benchmark_fmus["cauer"]) as s:
        s.instantiate()
        with pytest.raises(FMICallException):
            s.initialize({"w1": 0.0, "w3": 0.0})  # singular branch law
        assert "singular Jacobian" in s.log.errors()[0]
        with pytest.raises(FMICallException):  # the instance refuses to continue ...
            s.fmu.doStep(currentCommunicationPoint=0.0, communicationStepSize=0.1)
        s.fmu.reset()  # ... until it is reset
        s.initialize({"vin": 2.0})
        s.fmu.doStep(currentCommunicationPoint=0.0, communicationStepSize=0.1)
        i, v = s.get("i_nl", "v_nl")
        assert i == pytest.approx(0.01 * v**3, rel=1e-11)
