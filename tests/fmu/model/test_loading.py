"""open_fmu / FMUInfo: FMI 2.0 and 3.0 parsing, binaries, and every way an archive can be broken.

The FMUs here are built in the test: a tiny FMI 2.0 model compiled with ``build_fmu`` (the real
build path; the C code is a stub because inspection never loads the binary), and broken copies made
by editing the zip.  The FMI 3.0 case is an archive holding only ``modelDescription.xml``.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import zipfile
from pathlib import Path

import fmpy
import pytest

from fmu_surrogate.fmu.errors import (
    FMUError,
    ModelDescriptionError,
    NoBinaryError,
    NotAnFMUError,
    UnknownVariableError,
)
from fmu_surrogate.fmu.model.loading import FMUInfo, open_fmu

FMI2_XML = """<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="tiny" guid="{8c4e810f-3df3-4a00-8276-176fa3c9f000}"
  description="first-order lag" generationTool="fmu-surrogate tests" numberOfEventIndicators="0">
  <ModelExchange modelIdentifier="tiny"/>
  <CoSimulation modelIdentifier="tiny" canHandleVariableCommunicationStepSize="true"/>
  <UnitDefinitions><Unit name="N/m"/></UnitDefinitions>
  <DefaultExperiment startTime="0" stopTime="10" stepSize="0.01" tolerance="1e-6"/>
  <ModelVariables>
    <ScalarVariable name="x" valueReference="0" causality="output" variability="continuous"
        initial="exact" description="state"><Real start="1"/></ScalarVariable>
    <ScalarVariable name="der(x)" valueReference="1" causality="local" variability="continuous">
        <Real derivative="1"/></ScalarVariable>
    <ScalarVariable name="u" valueReference="2" causality="input" variability="continuous">
        <Real start="0"/></ScalarVariable>
    <ScalarVariable name="k" valueReference="3" causality="parameter" variability="tunable"
        description="stiffness"><Real start="2.5" unit="N/m"/></ScalarVariable>
    <ScalarVariable name="a.b[1]" valueReference="4" causality="parameter" variability="fixed">
        <Real start="0.5"/></ScalarVariable>
    <ScalarVariable name="n" valueReference="5" causality="calculatedParameter"
        variability="fixed" initial="calculated"><Integer/></ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs><Unknown index="1"/></Outputs>
    <Derivatives><Unknown index="2"/></Derivatives>
    <InitialUnknowns><Unknown index="2"/><Unknown index="6"/></InitialUnknowns>
  </ModelStructure>
</fmiModelDescription>
"""

FMI3_XML = """<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="tiny3" instantiationToken="{tok-3}"
  generationTool="hand-written">
  <ModelExchange modelIdentifier="tiny3"/>
  <CoSimulation modelIdentifier="tiny3cs"/>
  <DefaultExperiment stopTime="2"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="x" valueReference="1" causality="output" variability="continuous"
        initial="exact" start="1 2 3" unit="m"><Dimension start="3"/></Float64>
    <Float64 name="der(x)" valueReference="2" causality="local" variability="continuous"
        derivative="1"><Dimension start="3"/></Float64>
    <Float64 name="u" valueReference="3" causality="input" start="0"/>
    <Float64 name="gain" valueReference="4" causality="parameter" variability="fixed" start="4"/>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="1"/>
    <ContinuousStateDerivative valueReference="2"/>
    <InitialUnknown valueReference="2"/>
  </ModelStructure>
</fmiModelDescription>
"""

STUB_C = "int tiny_stub(void) { return 0; }\n"


def _rezip(src: Path, dst: Path, edit) -> Path:
    """Copy the archive ``src`` to ``dst``; ``edit(name, data)`` returns (name, data) or None."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            out = edit(info.filename, zin.read(info.filename))
            if out is not None:
                zout.writestr(out[0], out[1])
    return dst


@pytest.fixture(scope="module")
def tiny_fmu(tmp_path_factory) -> Path:
    from fmu_surrogate.fmu.model.compile import FMUBuildError, build_fmu

    d = tmp_path_factory.mktemp("tiny")
    src = d / "tiny.c"
    src.write_text(STUB_C)
    try:
        return build_fmu([src], FMI2_XML, d / "tiny.fmu", "tiny")
    except FMUBuildError as exc:  # pragma: no cover - CI has a compiler
        pytest.skip(f"no C compiler: {exc}")


@pytest.fixture(scope="module")
def fmi3_fmu(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("fmi3") / "tiny3.fmu"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("modelDescription.xml", FMI3_XML)
    return p


# ------------------------------------------------------------------ FMI 2.0
def test_fmi2_info(tiny_fmu):
    info = open_fmu(tiny_fmu)
    assert isinstance(info, FMUInfo)
    assert info.name == "tiny" and info.fmi_version == "2.0"
    assert info.guid == "{8c4e810f-3df3-4a00-8276-176fa3c9f000}"
    assert info.generation_tool == "fmu-surrogate tests"
    assert info.model_identifier_cs == "tiny" and info.model_identifier_me == "tiny"
    assert info.platforms == (fmpy.platform,) and info.has_binary
    info.require_binary()  # no exception
    assert info.sha256 == hashlib.sha256(tiny_fmu.read_bytes()).hexdigest()
    assert info.inputs == ("u",) and info.outputs == ("x",)
    assert info.parameters == ("k", "a.b[1]")  # calculatedParameter n is not settable
    assert info.tunable_parameters == ("k",)
    assert info.states == ("x",) and info.derivatives == {"x": "der(x)"}
    de = info.default_experiment
    assert (de.start_time, de.stop_time, de.step_size, de.tolerance) == (0.0, 10.0, 0.01, 1e-6)
    k = info.variable("k")
    assert (k.value_reference, k.unit, k.start_value, k.variability) == (3, "N/m", 2.5, "tunable")
    assert k.description == "stiffness" and k.shape == () and k.is_real
    assert info.variable("n").type == "Integer" and info.variable("n").start_value is None


def test_unknown_names_suggest_close_matches(tiny_fmu):
    info = open_fmu(tiny_fmu)
    with pytest.raises(UnknownVariableError, match=r"unknown variable 'kk' in tiny; did you mean "
                                                   r"'k'\?.*fmu-surrogate info") as exc:
        info.variable("kk")
    assert isinstance(exc.value, KeyError) and exc.value.suggestions == ["k"]
    assert str(exc.value).startswith("unknown variable")  # not KeyError's quoted repr
    assert info.check_names(["u"], "input") == ["u"]
    assert info.check_names(["der(x)", "a.b[1]"]) == ["der(x)", "a.b[1]"]
    with pytest.raises(UnknownVariableError, match="unknown input 'x'.*the inputs are: u; 'x' "
                                                   "exists but its causality is 'output'"):
        info.check_names(["x"], "input")
    with pytest.raises(UnknownVariableError, match=r"unknown parameter 'a.b\[2\]'.*'a.b\[1\]'"):
        info.check_names(["k", "a.b[2]"], "parameter")


def test_describe_lists_everything(tiny_fmu):
    text = open_fmu(tiny_fmu).describe()
    assert text.splitlines()[0].startswith("tiny  (")
    for needle in ["FMI 2.0, co-simulation + model exchange", "generated by: fmu-surrogate tests",
                   "default experiment: start=0, stop=10, step=0.01, tolerance=1e-06",
                   "inputs (1):", "outputs (1):", "parameters (2):", "calculated parameters (1):",
                   "locals (1):", "start=2.5 [N/m] Real, tunable  stiffness",
                   "states (1):", "d/dt -> der(x)", f"platforms: {fmpy.platform}"]:
        assert needle in text, needle
    assert "NO binary" not in text


@pytest.mark.parametrize("declared, expected", [
    ("", None),                                  # nothing declared: may depend on every input
    (' dependencies=""', ()),                    # declared: on nothing (a state-only output)
    (' dependencies="1 3" dependenciesKind="dependent dependent"', ("x", "u")),
], ids=["undeclared", "none", "state-and-input"])
def test_fmi2_output_dependencies(tiny_fmu, tmp_path, declared, expected):
    p = _rezip(tiny_fmu, tmp_path / "deps.fmu",
               lambda n, d: (n, d.decode().replace('<Outputs><Unknown index="1"/>',
                                                   f'<Outputs><Unknown index="1"{declared}/>')
                             .encode()) if n == "modelDescription.xml" else (n, d))
    info = open_fmu(p)
    assert info.variable("x").dependencies == expected
    assert info.variable("u").dependencies is None  # an input declares none


def test_fmi3_output_dependencies(fmi3_fmu, tmp_path):
    p = _rezip(fmi3_fmu, tmp_path / "deps3.fmu",
               lambda n, d: (n, d.replace(b'<Output valueReference="1"/>',
                                          b'<Output valueReference="1" dependencies="3"/>')))
    assert open_fmu(p).variable("x").dependencies == ("u",)
    assert open_fmu(fmi3_fmu).variable("x").dependencies is None


# ------------------------------------------------------------------ FMI 3.0
def test_fmi3_model_description_only(fmi3_fmu):
    info = open_fmu(fmi3_fmu)
    assert info.fmi_version == "3.0" and info.name == "tiny3"
    assert info.guid == "{tok-3}"  # instantiationToken
    assert info.model_identifier_cs == "tiny3cs" and info.model_identifier_me == "tiny3"
    assert info.inputs == ("u",) and info.outputs == ("x",) and info.parameters == ("gain",)
    x = info.variable("x")
    assert x.shape == (3,) and x.unit == "m" and x.start == "1 2 3" and x.start_value == 1.0
    assert info.states == ("x",) and info.derivatives == {"x": "der(x)"}
    assert info.variable("time").causality == "independent"
    assert info.default_experiment.stop_time == 2.0 and info.default_experiment.step_size is None
    assert info.platforms == () and not info.has_binary
    with pytest.raises(NoBinaryError, match=rf"no binary for this platform \({fmpy.platform_tuple}"
                                            r"\); it ships binaries for: none"):
        info.require_binary()
    text = info.describe()
    assert "shape=3" in text and "NO binary for this platform" in text and "independent" in text


# ------------------------------------------------------------------ broken archives
def test_binary_for_another_platform_only(tiny_fmu, tmp_path):
    other = "win64" if fmpy.platform != "win64" else "linux64"
    p = _rezip(tiny_fmu, tmp_path / "nobin.fmu",
               lambda n, d: (n.replace(f"binaries/{fmpy.platform}/", f"binaries/{other}/"), d))
    info = open_fmu(p)  # the model description is still readable
    assert info.platforms == (other,) and not info.has_binary and info.inputs == ("u",)
    with pytest.raises(NoBinaryError) as exc:
        info.require_binary()
    msg = str(exc.value)
    assert f"no binary for this platform ({fmpy.platform})" in msg
    assert f"ships binaries for: {other}" in msg and "Export the FMU" in msg
    assert exc.value.platforms == (other,)


def test_missing_path_and_directory(tmp_path):
    with pytest.raises(NotAnFMUError, match="no such file; check the path"):
        open_fmu(tmp_path / "nope.fmu")
    with pytest.raises(NotAnFMUError, match="is a directory"):
        open_fmu(tmp_path)


def test_not_a_zip(tmp_path):
    p = tmp_path / "model.fmu"
    p.write_text("this is not an archive")
    with pytest.raises(NotAnFMUError, match="not a readable zip archive.*re-export or "
                                            "re-download"):
        open_fmu(p)


def test_truncated_archive(tiny_fmu, tmp_path):
    data = tiny_fmu.read_bytes()
    p = tmp_path / "truncated.fmu"
    p.write_bytes(data[: len(data) // 2])  # central directory lost, like an interrupted download
    with pytest.raises(NotAnFMUError):
        open_fmu(p)


def test_corrupt_member(tmp_path):
    p = tmp_path / "crc.fmu"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as z:
        z.writestr("modelDescription.xml", FMI2_XML)
        z.writestr("binaries/linux64/tiny.so", b"\x00" * 256)
    raw = bytearray(p.read_bytes())
    i = raw.index(b"\x00" * 256)
    raw[i + 10] = 0xFF  # payload changed, CRC in the headers not
    p.write_bytes(bytes(raw))
    # `info` reads only the model description: a damaged binary does not stop it ...
    assert open_fmu(p).name
    # ... and the streamed CRC check (the one the extraction does too) names the member
    from fmu_surrogate.fmu.model.archive import verify_members

    with zipfile.ZipFile(p) as z, pytest.raises(NotAnFMUError, match="corrupt.*tiny.so.*CRC"):
        verify_members(z, p)


def test_corrupt_model_description_is_refused(tmp_path):
    p = tmp_path / "crc.fmu"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as z:
        z.writestr("modelDescription.xml", FMI2_XML)
    raw = bytearray(p.read_bytes())
    i = raw.index(b"fmiModelDescription")
    raw[i + 3] ^= 0x01  # XML text changed, CRC in the headers not
    p.write_bytes(bytes(raw))
    with pytest.raises(NotAnFMUError, match="corrupt.*modelDescription.xml.*CRC"):
        open_fmu(p)


def test_zip_without_model_description(tmp_path):
    p = tmp_path / "empty.fmu"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("readme.txt", "hello")
    with pytest.raises(ModelDescriptionError, match="without modelDescription.xml"):
        open_fmu(p)


@pytest.mark.parametrize("edit, why", [
    (lambda x: x[: len(x) // 2], "cannot parse modelDescription.xml"),  # cut mid-element
    (lambda x: x.replace(' valueReference="3"', ""), "inconsistent"),  # int(None) in fmpy
    (lambda x: x.replace('derivative="1"', 'derivative="99"'), "index 99"),  # dangling reference
    (lambda x: x.replace('fmiVersion="2.0"', 'fmiVersion="1.0"'), "only FMI 2.0 and 3.0|FMI 1"),
], ids=["truncated-xml", "missing-value-reference", "bad-derivative", "fmi1"])
def test_broken_model_description(tiny_fmu, tmp_path, edit, why):
    p = _rezip(tiny_fmu, tmp_path / "broken.fmu",
               lambda n, d: (n, edit(d.decode()).encode()) if n == "modelDescription.xml"
               else (n, d))
    with pytest.raises(ModelDescriptionError, match=why) as exc:
        open_fmu(p)
    assert "re-export the FMU" in str(exc.value) or "export it as FMI 2.0" in str(exc.value)
    assert isinstance(exc.value, FMUError)


# ------------------------------------------------------------------ CLI
def test_cli_info(tiny_fmu, tmp_path, capsys, monkeypatch):
    try:  # the parser also builds the harvest options, written concurrently by someone else
        import fmu_surrogate.cli.commands.harvest  # noqa: F401
    except ImportError:
        import types

        stub = types.ModuleType("fmu_surrogate.cli.commands.harvest")
        stub.add_harvest_arguments = lambda parser: None
        monkeypatch.setitem(sys.modules, "fmu_surrogate.cli.commands.harvest", stub)
    from fmu_surrogate.cli import main

    assert main(["info", str(tiny_fmu)]) == 0
    assert "states (1):" in capsys.readouterr().out
    bad = tmp_path / "bad.fmu"
    bad.write_text("nope")
    for path in (tmp_path / "missing.fmu", bad):
        assert main(["info", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("fmu-surrogate: error: ") and err.count("\n") == 1


# ------------------------------------------------------------------ shared benchmark FMUs
#: benchmark FMUs with model exchange that are static maps (order 0): no state to declare
STATIC = ("damper", "hydraulic_orifice", "turbulent_orifice")


def test_benchmark_fmus_open(request):
    try:
        fmus = request.getfixturevalue("benchmark_fmus")
    except pytest.FixtureLookupError:
        pytest.skip("benchmark_fmus fixture not available yet")
    for name, path in fmus.items():
        info = open_fmu(path)
        assert info.has_binary and info.fmi_version == "2.0", name
        assert info.supports_cs, name
        # model exchange declares the states; co-simulation-only vendor-style FMUs keep them
        # internal, and a static map (the damper) has none
        assert bool(info.states) == (info.supports_me and name not in STATIC), name
        info.check_names(list(info.states) + list(info.derivatives.values()))
        text = info.describe()
        assert all(f"d/dt -> {info.derivatives[s]}" in text for s in info.states), name
        hash(info)  # frozen: usable as a dict key / cache key


def test_copy_is_equal_but_path_differs(tiny_fmu, tmp_path):
    p = tmp_path / "copy.fmu"
    shutil.copy(tiny_fmu, p)
    a, b = open_fmu(tiny_fmu), open_fmu(p)
    assert a.sha256 == b.sha256 and a.path != b.path and a.variables == b.variables
