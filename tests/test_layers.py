"""Architecture rules of docs/design.md §7: layers depend downward only; harvesting never loads torch."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "fmu_surrogate"

# layer -> packages it must not import
FORBIDDEN = {
    "fmu": ("fmu_surrogate.ph", "fmu_surrogate.identify", "fmu_surrogate.export"),
    "ph": ("fmu_surrogate.fmu", "fmu_surrogate.identify", "fmu_surrogate.export", "torch"),
    "identify": ("fmu_surrogate.export",),
    # export stands on its own: benchmarks build on its FMU framework, never the reverse
    "export": ("fmu_surrogate.benchmarks", "fmu_surrogate.couple", "fmu_surrogate.cli"),
    "couple": ("fmu_surrogate.identify", "torch"),
}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_nothing_imports_couple():
    bad = [f"{p.relative_to(PKG)} imports {n}" for p in sorted(PKG.rglob("*.py"))
           if "couple" not in p.relative_to(PKG).parts and p.relative_to(PKG).parts[0] != "cli"
           for n in _imports(p) if n == "fmu_surrogate.couple" or n.startswith("fmu_surrogate.couple.")]
    assert not bad, "couple is the top layer:\n" + "\n".join(bad)


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_point_downward(layer):
    bad = []
    for path in sorted((PKG / layer).rglob("*.py")):
        for name in _imports(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[layer]):
                bad.append(f"{path.relative_to(PKG)} imports {name}")
    assert not bad, "layer rule broken:\n" + "\n".join(bad)


def test_harvesting_path_does_not_import_torch():
    code = (
        "import sys, fmu_surrogate.fmu, fmu_surrogate.fmu.campaigns.campaign, fmu_surrogate.fmu.runner.pool, "
        "fmu_surrogate.cli.commands.harvest, fmu_surrogate.benchmarks.build, fmu_surrogate.cli.main, "
        "fmu_surrogate.identify; "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
