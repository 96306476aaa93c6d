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
