"""Architecture rules of DESIGN.md §7: layers depend downward only; harvesting never loads torch."""

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
}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


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
        "import sys, fmu_surrogate.fmu, fmu_surrogate.fmu.campaign, fmu_surrogate.fmu.runner, "
        "fmu_surrogate.fmu.harvest_cli, fmu_surrogate.benchmarks.build, fmu_surrogate.cli, "
        "fmu_surrogate.identify; "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
