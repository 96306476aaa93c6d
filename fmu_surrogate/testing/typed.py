"""Test FMUs whose interfaces look like vendor FMUs' beyond Real scalars.

* :func:`build_typed` compiles ``c/typed.c``: FMI 2.0, co-simulation and model exchange, no
  states; a Real feedthrough ``y = gain u`` (``gain`` of a declared type with ``min="0"``,
  ``max="100"``) beside Integer (``m = 2 n + offset``, ``n`` declared in ``[-5, 5]``), Enumeration
  (``e_next = e mod 3 + 1``), Boolean (``not_b = !b``) and String (``s_out = s``,
  ``s_length = strlen(s)``) inputs and outputs.
* :func:`build_arrays3` compiles ``c/arrays3.c``: FMI 3.0, co-simulation and model exchange; the
  linear state-space model ``x' = A x + B u``, ``y = C x + D u`` with array variables (``u``,
  ``y``, ``x``, ``der(x)``, ``x0`` of shape 3; ``A``, ``B``, ``C``, ``D`` of shape 3x3, their size
  the structural parameter ``n_x``; defaults
  ``A = -I``, ``B = C = I``, ``D = 0``, ``u`` starts at ``[1, 2, 3]``), beside an Int32
  (``m = 2 n + 1``), a Boolean (``not_b = !b``) and a String (``s_out = s``) feedthrough.

Both are compiled with the system C compiler (:func:`fmu_surrogate.fmu.model.compile.build_fmu`,
cached on a content hash).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["build_arrays3", "build_typed"]

HERE = Path(__file__).parent / "c"


def _scalar(name: str, vr: int, causality: str, variability: str, element: str,
            initial: str = "") -> str:
    init = f' initial="{initial}"' if initial else ""
    return (f'    <ScalarVariable name="{name}" valueReference="{vr}" causality="{causality}" '
            f'variability="{variability}"{init}>{element}</ScalarVariable>')


_TYPED_VARIABLES = "\n".join([  # 1-based positions in the comments: <ModelStructure> uses them
    _scalar("u", 0, "input", "continuous", '<Real start="0"/>'),                       # 1
    _scalar("y", 1, "output", "continuous", "<Real/>", "calculated"),                  # 2
    _scalar("gain", 2, "parameter", "tunable", '<Real declaredType="Gain" start="1"/>',
            "exact"),                                                                  # 3
    _scalar("s_length", 3, "output", "discrete", "<Real/>", "calculated"),             # 4
    _scalar("n", 0, "input", "discrete", '<Integer start="0" min="-5" max="5"/>'),     # 5
    _scalar("m", 1, "output", "discrete", "<Integer/>", "calculated"),                 # 6
    _scalar("offset", 2, "parameter", "fixed", '<Integer start="1"/>', "exact"),       # 7
    _scalar("e", 3, "input", "discrete", '<Enumeration declaredType="Level" start="1"/>'),
    _scalar("e_next", 4, "output", "discrete", '<Enumeration declaredType="Level"/>',
            "calculated"),                                                             # 9
    _scalar("b", 0, "input", "discrete", '<Boolean start="false"/>'),                  # 10
    _scalar("not_b", 1, "output", "discrete", "<Boolean/>", "calculated"),             # 11
    _scalar("s", 0, "input", "discrete", '<String start="hello"/>'),                   # 12
    _scalar("s_out", 1, "output", "discrete", "<String/>", "calculated"),              # 13
])
_TYPED_OUTPUTS = "".join(f'<Unknown index="{i}"/>' for i in (2, 4, 6, 9, 11, 13))

TYPED_XML = f"""<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="typed"
    guid="{{7d0c3b53-5d1e-4c8e-9b1a-typed0000002}}"
    description="Real, Integer, Enumeration, Boolean and String feedthroughs"
    generationTool="fmu-surrogate test fixture" numberOfEventIndicators="0">
  <CoSimulation modelIdentifier="typed" canHandleVariableCommunicationStepSize="true"/>
  <ModelExchange modelIdentifier="typed"/>
  <TypeDefinitions>
    <SimpleType name="Gain"><Real min="0" max="100"/></SimpleType>
    <SimpleType name="Level"><Enumeration><Item name="low" value="1"/><Item name="mid" value="2"/>
      <Item name="high" value="3"/></Enumeration></SimpleType>
  </TypeDefinitions>
  <DefaultExperiment startTime="0" stopTime="1" stepSize="0.01"/>
  <ModelVariables>
{_TYPED_VARIABLES}
  </ModelVariables>
  <ModelStructure>
    <Outputs>{_TYPED_OUTPUTS}</Outputs>
    <InitialUnknowns>{_TYPED_OUTPUTS}</InitialUnknowns>
  </ModelStructure>
</fmiModelDescription>
"""


def _array(name: str, vr: int, causality: str, variability: str, dims: int, start: str = "",
           extra: str = "") -> str:
    start_attr = f' start="{start}"' if start else ""
    dim = '<Dimension valueReference="16"/>' * dims  # the structural parameter n_x
    return (f'    <Float64 name="{name}" valueReference="{vr}" causality="{causality}" '
            f'variability="{variability}"{start_attr}{extra}>{dim}</Float64>')


_EYE = "1 0 0 0 1 0 0 0 1"
_ARRAYS = "\n".join([
    _array("u", 1, "input", "continuous", 1, "1 2 3"),
    _array("y", 2, "output", "continuous", 1),
    _array("A", 3, "parameter", "fixed", 2, "-1 0 0 0 -1 0 0 0 -1"),
    _array("B", 4, "parameter", "fixed", 2, _EYE),
    _array("C", 5, "parameter", "fixed", 2, _EYE),
    _array("D", 6, "parameter", "fixed", 2, "0 0 0 0 0 0 0 0 0"),
    _array("x0", 7, "parameter", "fixed", 1, "0 0 0"),
    _array("x", 8, "local", "continuous", 1),
    _array("der(x)", 9, "local", "continuous", 1, extra=' derivative="8"'),
])

ARRAYS3_XML = f"""<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="arrays3"
    instantiationToken="{{7d0c3b53-5d1e-4c8e-9b1a-arrays000003}}"
    description="x' = A x + B u, y = C x + D u with array variables"
    generationTool="fmu-surrogate test fixture">
  <ModelExchange modelIdentifier="arrays3"/>
  <CoSimulation modelIdentifier="arrays3" canHandleVariableCommunicationStepSize="true"/>
  <DefaultExperiment startTime="0" stopTime="1" stepSize="0.01"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <UInt64 name="n_x" valueReference="16" causality="structuralParameter" variability="fixed"
        start="3" description="size of the arrays (the C code has 3)"/>
{_ARRAYS}
    <Int32 name="n" valueReference="10" causality="input" variability="discrete" start="0"/>
    <Int32 name="m" valueReference="11" causality="output" variability="discrete"/>
    <Boolean name="b" valueReference="12" causality="input" variability="discrete"
        start="false"/>
    <Boolean name="not_b" valueReference="13" causality="output" variability="discrete"/>
    <String name="s" valueReference="14" causality="input" variability="discrete">
      <Start value="hello"/></String>
    <String name="s_out" valueReference="15" causality="output" variability="discrete"/>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="2"/>
    <Output valueReference="11"/>
    <Output valueReference="13"/>
    <Output valueReference="15"/>
    <ContinuousStateDerivative valueReference="9"/>
    <InitialUnknown valueReference="2"/>
    <InitialUnknown valueReference="9"/>
  </ModelStructure>
</fmiModelDescription>
"""


def build_typed(out_dir: str | Path) -> Path:
    """Compile ``c/typed.c`` into ``out_dir/typed.fmu`` (cached by ``build_fmu``).

    Parameters
    ----------
    out_dir : path
        Output folder.

    Returns
    -------
    Path
        The ``.fmu`` file.
    """
    from fmu_surrogate.fmu.model.compile import build_fmu

    return build_fmu([HERE / "typed.c"], TYPED_XML, Path(out_dir) / "typed.fmu", "typed")


def build_arrays3(out_dir: str | Path) -> Path:
    """Compile ``c/arrays3.c`` into ``out_dir/arrays3.fmu`` (cached by ``build_fmu``).

    Parameters
    ----------
    out_dir : path
        Output folder.

    Returns
    -------
    Path
        The ``.fmu`` file.
    """
    from fmu_surrogate.fmu.model.compile import build_fmu

    return build_fmu([HERE / "arrays3.c"], ARRAYS3_XML, Path(out_dir) / "arrays3.fmu",
                     "arrays3", fmi_version="3.0")
