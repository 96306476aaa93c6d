"""The dispatcher imports only the command that runs (the start-up of a harvest is its imports)."""

from __future__ import annotations

import subprocess
import sys

from fmu_surrogate.cli.main import COMMANDS, build_parser


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "; import sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_a_harvest_imports_no_other_command_and_no_identification():
    mods = _modules_after("from fmu_surrogate.cli.main import build_parser; "
                          "build_parser('harvest').parse_args(['harvest', 'm.fmu', '-o', 'x.nc'])")
    assert "fmu_surrogate.cli.commands.harvest" in mods
    others = {f"fmu_surrogate.cli.commands.{c}" for c in COMMANDS if c != "harvest"}
    heavy = {"torch", "fmu_surrogate.identify", "fmu_surrogate.couple", "fmu_surrogate.export",
             "matplotlib", "xarray"}
    assert not (mods & (others | heavy)), sorted(mods & (others | heavy))


def test_help_lists_every_command_without_importing_them():
    mods = _modules_after("from fmu_surrogate.cli.main import build_parser; build_parser('')")
    assert not any(m.startswith("fmu_surrogate.cli.commands.") for m in mods)
    text = build_parser("").format_help()
    assert all(name in text for name in COMMANDS)
