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


@pytest.mark.skipif(fmpy.system != "linux", reason="shipped libraries are linked by SONAME (ELF)")
def test_shipped_library_is_found_next_to_the_binary(tmp_path):
    import subprocess
    import sys

    from fmu_surrogate.fmu.model.compile import compiler_path

    helper_src = tmp_path / "helper.c"
    helper_src.write_text("double helper_value(void) { return 7.5; }\n")
    helper = tmp_path / "libhelper-build.so"
    subprocess.run([compiler_path(), "-shared", "-fPIC", "-Wl,-soname,libhelper.so.1",
                    str(helper_src), "-o", str(helper)], check=True)
    src = tmp_path / "tiny.c"
    src.write_text('#include "fmi2Functions.h"\ndouble helper_value(void);\n'
                   '__attribute__((visibility("default"))) double tiny_answer(void) '
                   "{ return helper_value(); }\n")
    out = tmp_path / "tiny.fmu"
    build_fmu([src], MD, out, "tiny", libraries={"libhelper.so.1": helper})
    with zipfile.ZipFile(out) as z:
        z.extractall(tmp_path / "unzip")
        assert f"binaries/{fmpy.platform}/libhelper.so.1" in z.namelist()
    helper.unlink()  # the FMU must not need the original
    lib = tmp_path / "unzip" / "binaries" / fmpy.platform / "tiny.so"
    code = ("import ctypes, sys; f = ctypes.CDLL(sys.argv[1]).tiny_answer; "
            "f.restype = ctypes.c_double; print(f())")
    out_text = subprocess.run([sys.executable, "-c", code, str(lib)], capture_output=True,
                              text=True, check=True, env={"PATH": "/usr/bin:/bin"}).stdout
    assert out_text.strip() == "7.5"
