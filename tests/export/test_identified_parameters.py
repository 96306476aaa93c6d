"""A surrogate holds at the parameter values of the FMU it was identified from: the dataset
records them, identification keeps them in the surrogate's provenance, the exported FMU and
Modelica model declare them as fixed parameters that refuse another value, and a system that
sets them to those values runs unchanged with the surrogate."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fmpy import simulate_fmu

import fmu_surrogate as fs
from fmu_surrogate.cli.main import main
from fmu_surrogate.couple.surrogates import surrogate_component
from fmu_surrogate.couple.system import CouplingError
from fmu_surrogate.export import export_fmu
from fmu_surrogate.export.modelica import modelica_model
from fmu_surrogate.fmu.dataset import load_dataset, operating_parameters


@pytest.fixture(scope="module")
def mass(benchmark_fmus, tmp_path_factory):
    """free_mass harvested at v0 = 2 (two runs), identified by the command line."""
    d = tmp_path_factory.mktemp("mass")
    data, sur = d / "mass.nc", d / "mass.json"
    assert main(["harvest", str(benchmark_fmus["free_mass"]), "-o", str(data), "--param",
                 "v0=2", "--input", "F=noise:f_high=2,duration=5,std=1,seed=1", "--input",
                 "F=noise:f_high=2,duration=5,std=1,seed=2", "-q"]) == 0
    assert main(["identify", str(data), "--method", "linear", "--inputs", "F", "--outputs", "v",
                 "-q", "-o", str(sur)]) == 0
    return data, sur


def test_the_dataset_knows_the_parameters_every_run_used(mass):
    ds = load_dataset(mass[0])
    start = json.loads(ds.attrs["parameter_values"])
    assert start["m"] == 2.0 and start["v0"] == 0.0  # the FMU's start values
    shared, varied = operating_parameters(ds)
    assert shared["v0"] == 2.0 and shared["m"] == 2.0 and varied == []  # --param overrides


def test_the_surrogate_file_keeps_them(mass):
    doc = json.loads(mass[1].read_text())
    assert doc["provenance"]["parameters"]["v0"] == 2.0
    assert doc["provenance"]["parameters"]["m"] == 2.0
    assert doc["provenance"]["input_starts"] == {"F": 0.0}


def test_exported_inputs_start_where_the_fmus_did(benchmark_fmus, tmp_path):
    """dc_motor's field (1) and direction (1) start nonzero: an exported surrogate whose inputs
    nothing sets must hold those values, not 0."""
    data, sur = tmp_path / "dc.nc", tmp_path / "dc.json"
    assert main(["harvest", str(benchmark_fmus["dc_motor"]), "-o", str(data), "--stop", "0.2",
                 "--step", "0.001", "--input", "V=noise:f_high=20,duration=0.2,std=6,seed=1",
                 "--input", "w=noise:f_high=10,duration=0.2,std=20,seed=3", "-q"]) == 0
    assert main(["identify", str(data), "--method", "linear", "--inputs", "V,w,field,direction",
                 "--outputs", "i,tau", "--port", "u=V,y=i", "--port", "u=w,y=tau", "-q", "-o",
                 str(sur)]) == 0
    doc = json.loads(sur.read_text())
    assert doc["provenance"]["input_starts"] == {"V": 0.0, "w": 0.0, "field": 1.0,
                                                 "direction": 1.0}
    fmu = export_fmu(fs.ph.load(sur), tmp_path / "dc_s.fmu")
    starts = {v.name: v.start for v in fs.open_fmu(fmu).variables if v.causality == "input"}
    assert float(starts["field"]) == 1.0 and float(starts["direction"]) == 1.0
    # field and direction never changed in the data: the surrogate holds at those values only
    assert doc["provenance"]["held_inputs"] == {"field": 1.0, "direction": 1.0}
    ok = simulate_fmu(str(fmu), stop_time=0.01, output_interval=0.001,
                      start_values={"V": 12.0, "field": 1.0})
    assert ok["i"][-1] > 0
    with pytest.raises(Exception, match="ExitInitializationMode"):
        simulate_fmu(str(fmu), stop_time=0.01, output_interval=0.001,
                     start_values={"field": 0.5})
    with pytest.raises(CouplingError, match=r"input field = 0.5, but it was 1 in all the data"):
        surrogate_component("motor", sur, {"field": 0.5})
    text = modelica_model(fs.ph.load(sur), "Motor")
    assert "assert(abs(field - 1.0)" in text


def test_exported_fmu_accepts_them_and_refuses_others(mass, tmp_path):
    sur = fs.ph.load(mass[1])
    fmu = export_fmu(sur, tmp_path / "mass_s.fmu")
    ok = simulate_fmu(str(fmu), stop_time=0.1, output_interval=0.01,
                      start_values={"m": 2.0, "v0": 2.0})
    # the surrogate starts at its learned operating point v = v0 = 2 (fit to 1e-12 and better)
    assert abs(ok["v"][0] - 2.0) < 1e-9
    with pytest.raises(Exception, match="ExitInitializationMode"):
        simulate_fmu(str(fmu), stop_time=0.1, output_interval=0.01, start_values={"v0": 3.0})
    text = modelica_model(sur, "Mass")
    assert "parameter Real v0 = 2.0" in text and "assert(abs(v0 - 2.0)" in text


def test_a_system_may_set_them_to_the_identified_values_only(mass):
    c = surrogate_component("mass", mass[1], {"m": 2.0, "v0": 2.0})
    assert c.parameters == {"F": 0.0}  # checked and consumed; the input holds its start value
    with pytest.raises(CouplingError, match=r"identified at v0 = 2.*--param v0=3"):
        surrogate_component("mass", mass[1], {"v0": 3.0})


def test_the_exported_fmu_reproduces_the_surrogate_at_them(mass, tmp_path):
    sur = fs.ph.load(mass[1])
    fmu = export_fmu(sur, tmp_path / "mass_s.fmu")
    t = np.arange(0, 101) * 0.01
    F = np.sin(3 * t)
    sig = np.array(list(zip(t, F)), dtype=[("time", float), ("F", float)])
    got = simulate_fmu(str(fmu), stop_time=1.0, output_interval=0.01, step_size=0.01, input=sig,
                       start_values={"v0": 2.0})
    ref = fs.ph.simulate(sur, t, F[:, None]).y[:, 0]
    # the exported step is exact for the held input: round-off of a 100-step recursion
    np.testing.assert_allclose(got["v"], ref, rtol=0, atol=1e-12 * np.abs(ref).max())
