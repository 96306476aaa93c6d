from pathlib import Path

import numpy as np
import xarray as xr

from fmu_surrogate.cli import main
from fmu_surrogate.couple.toml_form import write_toml


def test_couple_command_writes_dataset_and_bond_table(system_factory, tmp_path, capsys):
    sysf = write_toml(system_factory(), tmp_path / "sys.toml")
    out = tmp_path / "r.nc"
    rc = main(["couple", str(sysf), "-o", str(out), "--step", "0.1", "--stop-time", "2",
               "--plot", str(tmp_path / "r.png")])
    text = capsys.readouterr().out
    assert rc == 0
    assert "fixed: 20 steps" in text
    assert "mass1" in text and "chain" in text and "spring" in text
    ds = xr.open_dataset(out)
    assert "bond:mass1:residual" in ds
    assert (tmp_path / "r.png").stat().st_size > 0


def test_couple_command_reports_a_bad_system(tmp_path, capsys):
    p = tmp_path / "s.txt"
    p.write_text("")
    assert main(["couple", str(p), "-o", str(tmp_path / "r.nc")]) == 2
    assert "give a .ssp, .ssd or .toml" in capsys.readouterr().err


def test_couple_command_runs_an_ssp_with_ecco(system_factory, tmp_path, capsys):
    from fmu_surrogate.couple.ssp import write_ssp

    p = write_ssp(system_factory(), tmp_path / "sys.ssp")
    rc = main(["couple", str(p), "-o", str(tmp_path / "r.nc"), "--algorithm", "ecco",
               "--step", "0.05", "--stop-time", "2"])
    text = capsys.readouterr().out
    assert rc == 0 and text.startswith("ecco: ")
    residual_line = next(line for line in text.splitlines() if line.startswith("mass1"))
    assert len(residual_line.split()) == 6  # bond, side, energy, residual, share of ∫|P|dt, unit


def _braked_mass(benchmark_fmus, tmp_path):
    import shutil

    from fmu_surrogate.benchmarks.vendor import power_damper

    src = Path(power_damper.__file__).parents[1] / "systems" / "braked_mass.toml"
    shutil.copy(src, tmp_path)
    for name in ("free_mass", "power_damper"):
        (tmp_path / f"{name}.fmu").symlink_to(benchmark_fmus[name])
    text = src.read_text(encoding="utf-8")
    (tmp_path / "sys.toml").write_text(
        text + '\n[components.free]\nfmu = "free_mass.fmu"\nparameters = { m = 1.0, F = 5.0 }\n',
        encoding="utf-8")
    return tmp_path / "sys.toml"


def test_couple_drives_an_input_records_a_variable_and_plots_by_quantity(benchmark_fmus,
                                                                         tmp_path, capsys):
    sysf = _braked_mass(benchmark_fmus, tmp_path)
    out = tmp_path / "r.nc"
    # the signal replaces the start value F = 5 the file gives; the syntax is harvest's
    rc = main(["couple", str(sysf), "-o", str(out), "--step", "0.1", "--stop-time", "1",
               "--input", "free.F=step:t0=0.45,before=1,after=-1", "--record", "free.v,mass.m",
               "--plot", str(tmp_path / "r.png")])
    text = capsys.readouterr().out
    assert rc == 0, text
    ds = xr.open_dataset(out)
    np.testing.assert_array_equal(ds["free.F"].values[0], np.where(ds.time.values < 0.45, 1, -1))
    # v' = -F/m with F held on each step from v0 = 0: down to -0.5 at t = 0.5, then back up
    v = -np.concatenate([[0.0], np.cumsum(ds["free.F"].values[0][:-1] * 0.1)])
    np.testing.assert_allclose(ds["free.v"].values[0], v, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(ds["mass.m"].values[0], 2.0)
    assert ds["free.v"].attrs["units"] == "m/s" and ds.attrs["driven_inputs"] == "free.F"
    assert "J" in text.splitlines()[2]  # the bond table's unit column
    assert (tmp_path / "r.png").stat().st_size > 0


def test_couple_names_a_bad_input_and_the_fix(benchmark_fmus, tmp_path, capsys):
    sysf = _braked_mass(benchmark_fmus, tmp_path)
    args = ["couple", str(sysf), "-o", str(tmp_path / "r.nc")]
    assert main(args + ["--input", "mass.F=1"]) == 2
    assert "driven input mass.F is connected (brake.F -> mass.F)" in capsys.readouterr().err
    assert main(args + ["--input", "free.v=1"]) == 2
    assert "causality 'output'; only inputs follow a signal" in capsys.readouterr().err
    assert main(args + ["--input", "free.F=prbs:levels=-1"]) == 2
    assert "--input 'free.F=prbs:levels=-1': prbs parameter levels" in capsys.readouterr().err
    assert main(args + ["--record", "free.q"]) == 2
    assert "recorded variable free.q: component 'free' has no variable 'q'" in \
        capsys.readouterr().err


def test_couple_runs_on_either_engine_with_the_same_numbers(system_factory, tmp_path, capsys):
    sysf = write_toml(system_factory(), tmp_path / "sys.toml")
    runs = {}
    for engine in ("libcosim", "fmpy"):
        out = tmp_path / f"{engine}.nc"
        assert main(["couple", str(sysf), "-o", str(out), "--step", "0.1", "--stop-time", "2",
                     "--engine", engine]) == 0
        with xr.open_dataset(out) as ds:
            assert ds.attrs["engine"] == engine
            runs[engine] = ds.load()
    capsys.readouterr()
    for v in ("chain.v1", "spring.F", "bond:mass1:residual"):  # libcosim's scheme, bit for bit
        np.testing.assert_array_equal(runs["libcosim"][v].values, runs["fmpy"][v].values)
