"""Tests of the C -> FMU compiler (caching, layout, error reporting)."""

import zipfile

import fmpy
import pytest

from fmu_surrogate.fmu.model.compile import FMUBuildError, build_fmu, cached_hash

MD = """<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="tiny" guid="{00000000-0000-0000-0000-000000000001}">
  <CoSimulation modelIdentifier="tiny"/>
  <ModelVariables>
    <ScalarVariable name="y" valueReference="0" causality="output"><Real/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Outputs><Unknown index="1"/></Outputs></ModelStructure>
</fmiModelDescription>
"""


def test_build_layout_cache_and_rebuild(tmp_path):
    src = tmp_path / "tiny.c"
    src.write_text('#include "fmi2Functions.h"\nint tiny_answer(void) { return 42; }\n')
    out = tmp_path / "out" / "tiny.fmu"
    build_fmu([src], MD, out, "tiny")
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
    assert f"binaries/{fmpy.platform}/tiny.so" in names
    assert {"modelDescription.xml", "sources/tiny.c"} <= names
    assert fmpy.read_model_description(str(out)).coSimulation.modelIdentifier == "tiny"

    first = out.stat().st_mtime_ns
    h1 = cached_hash(out)
    build_fmu([src], MD, out, "tiny")  # unchanged inputs: cached, archive untouched
    assert out.stat().st_mtime_ns == first

    src.write_text(src.read_text() + "int tiny_other(void) { return 1; }\n")
    build_fmu([src], MD, out, "tiny")  # changed source: rebuilt with a new hash
    assert cached_hash(out) != h1


def test_compiler_error_is_reported_with_its_output(tmp_path):
    src = tmp_path / "bad.c"
    src.write_text("int broken( { return; }\n")
    with pytest.raises(FMUBuildError, match="compiling bad failed"):
        build_fmu([src], MD.replace("tiny", "bad"), tmp_path / "bad.fmu", "bad")
    assert not (tmp_path / "bad.fmu").exists()


def test_missing_source_is_named(tmp_path):
    with pytest.raises(FMUBuildError, match="does not exist"):
        build_fmu([tmp_path / "nope.c"], MD, tmp_path / "x.fmu", "tiny")


def test_missing_compiler_in_cc_is_named(tmp_path, monkeypatch):
    src = tmp_path / "tiny.c"
    src.write_text("int x;\n")
    monkeypatch.setenv("CC", "no-such-compiler-xyz")
    with pytest.raises(FMUBuildError, match="CC is set to 'no-such-compiler-xyz'"):
        build_fmu([src], MD, tmp_path / "t.fmu", "tiny")
