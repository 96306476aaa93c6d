"""Python specifications of the benchmark FMUs and the files generated from them.

One :class:`ModelSpec` per FMU is the single place where its variables are declared.  From it we
generate

* ``modelDescription.xml`` (FMI 2.0, with both ``<CoSimulation>`` and ``<ModelExchange>``), and
* ``model_vars.h``, the C header that the shared framework ``c/fmi2_framework.c`` and the model's C
  file compile against: sizes, value references (``VR_<symbol>``), start values, which variables
  may be set when, the continuous states and their derivatives, the GUID.

so the value references in the XML and in the binary cannot drift apart.

Value references are unique across all types: Reals are ``0 … n_real − 1``, Integers follow, then
Booleans (the C side indexes its Integer array with ``vr − INT_VR0``).
"""

from __future__ import annotations

import hashlib
import math
import re
import uuid
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from fmu_surrogate.errors import InvalidInputError

CAUSALITIES = ("parameter", "calculatedParameter", "input", "output", "local", "independent")
VARIABILITIES = ("constant", "fixed", "tunable", "discrete", "continuous")
TYPES = ("Real", "Integer", "Boolean")

#: Log categories every benchmark FMU declares (the framework's ``LOG_*`` bits, in this order).
LOG_CATEGORIES = (
    ("logStatusError", "errors: failed evaluations with their reason (always on)"),
    ("logStatusWarning", "warnings (always on)"),
    ("logCalls", "FMI function calls (debug logging)"),
)

# access codes understood by fmi2_framework.c
_NEVER, _BEFORE_INIT_DONE, _ALWAYS = 0, 1, 2


@dataclass(frozen=True)
class Var:
    """One scalar variable of a benchmark FMU.

    Parameters
    ----------
    name : str
        FMI name (structured naming convention, e.g. ``"x1"``, ``"der(x1)"``, ``"q[3]"``).
    causality, variability : str
        FMI 2.0 causality and variability.
    start : float, int or bool, optional
        Start value; required for parameters, inputs, constants and ``initial="exact"`` states.
    initial : {"exact", "approx", "calculated"}, optional
        Defaults to the FMI rule (``exact`` when a start value is given, else ``calculated``).
    description, unit : str
    type : {"Real", "Integer", "Boolean"}
    derivative : str, optional
        Name of the continuous state this variable is the time derivative of.
    """

    name: str
    causality: str = "local"
    variability: str = "continuous"
    start: float | int | bool | None = None
    initial: str | None = None
    description: str = ""
    unit: str | None = None
    type: str = "Real"
    derivative: str | None = None

    @property
    def symbol(self) -> str:
        """C identifier: ``der(x1)`` → ``der_x1``, ``q[3]`` → ``q_3``."""
        s = re.sub(r"[^A-Za-z0-9_]+", "_", self.name).strip("_")
        return s

    @property
    def initial_(self) -> str | None:
        """The effective ``initial`` attribute (``None`` where FMI forbids one)."""
        if self.causality in ("parameter", "input") or self.variability == "constant":
            return None  # exact is implied; the attribute is not written
        if self.initial is not None:
            return self.initial
        return "exact" if self.start is not None else "calculated"


@dataclass(frozen=True)
class Experiment:
    """``<DefaultExperiment>`` attributes."""

    start: float = 0.0
    stop: float = 1.0
    step: float | None = None
    tolerance: float | None = None


@dataclass(frozen=True)
class ModelSpec:
    """Everything needed to generate and compile one benchmark FMU.

    Parameters
    ----------
    identifier : str
        ``modelIdentifier`` (name of the shared library) and ``modelName``.
    description : str
        One-line description written into the model description.
    source : str
        File name of the model's C file in ``fmu_surrogate/benchmarks/c``.
    variables : tuple of Var
        In ``<ModelVariables>`` order.
    experiment : Experiment
    defines : dict
        Extra ``#define NAME value`` lines for the generated header (e.g. ``N_CELLS``).
    directional_derivatives : bool
        Whether the model provides ``fmi2GetDirectionalDerivative`` (the C side defines
        ``MODEL_DIRECTIONAL_DERIVATIVE``).
    generation_tool : str
        ``generationTool`` attribute.
    """

    identifier: str
    description: str
    source: str
    variables: tuple[Var, ...]
    experiment: Experiment = Experiment()
    defines: dict[str, int | float | str] = field(default_factory=dict)
    directional_derivatives: bool = False
    generation_tool: str = "fmu-surrogate (fmu_surrogate.benchmarks)"

    def __post_init__(self) -> None:
        names = [v.name for v in self.variables]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise InvalidInputError(f"{self.identifier}: duplicate variable names {sorted(dup)}.")
        symbols = [v.symbol for v in self.variables]
        if len(set(symbols)) != len(symbols):
            raise InvalidInputError(
                f"{self.identifier}: two variable names map to the same C symbol.")
        known = set(names)
        for v in self.variables:
            if v.causality not in CAUSALITIES:
                raise InvalidInputError(f"{v.name}: unknown causality {v.causality!r}.")
            if v.variability not in VARIABILITIES:
                raise InvalidInputError(f"{v.name}: unknown variability {v.variability!r}.")
            if v.type not in TYPES:
                raise InvalidInputError(
                    f"{v.name}: unsupported type {v.type!r} (use one of {TYPES}).")
            if v.derivative is not None and v.derivative not in known:
                raise InvalidInputError(
                    f"{v.name} is declared the derivative of unknown {v.derivative!r}.")
            needs_start = v.causality in ("parameter", "input") or v.variability == "constant"
            if needs_start and v.start is None:
                raise InvalidInputError(
                    f"{self.identifier}: {v.causality} {v.name!r} needs a start value.")

    # ------------------------------------------------------------------ derived tables
    def by_type(self, type_: str) -> list[Var]:
        """Variables of one base type, in declaration order."""
        return [v for v in self.variables if v.type == type_]

    def value_references(self) -> dict[str, int]:
        """``name -> valueReference`` (Reals first, then Integers, then Booleans)."""
        vr: dict[str, int] = {}
        k = 0
        for t in TYPES:
            for v in self.by_type(t):
                vr[v.name] = k
                k += 1
        return vr

    def states(self) -> list[tuple[Var, Var]]:
        """``(state, derivative)`` pairs, in the order of the derivative declarations."""
        byname = {v.name: v for v in self.variables}
        return [(byname[v.derivative], v) for v in self.variables if v.derivative is not None]

    def initial_unknowns(self) -> list[Var]:
        """The variables listed as initial unknowns (FMI 2.0 ``<InitialUnknowns>``, FMI 3.0
        ``<InitialUnknown>``), in declaration order."""
        states = self.states()
        state_names = {s.name for s, _ in states}
        der_names = {d.name for _, d in states}
        return [
            v
            for v in self.variables
            if (v.causality == "output" and v.initial_ in ("approx", "calculated"))
            or v.causality == "calculatedParameter"
            or (v.name in state_names and v.initial_ in ("approx", "calculated"))
            or v.name in der_names
        ]

    @property
    def guid(self) -> str:
        """Deterministic GUID derived from the specification."""
        h = hashlib.sha256(repr(self).encode()).hexdigest()
        return "{" + str(uuid.UUID(h[:32])) + "}"

    # ------------------------------------------------------------------ XML
    def model_description_xml(self) -> str:
        """Text of ``modelDescription.xml`` (FMI 2.0, co-simulation and model exchange)."""
        vr = self.value_references()
        index = {v.name: k + 1 for k, v in enumerate(self.variables)}
        states = self.states()
        a = quoteattr
        dd = ' providesDirectionalDerivative="true"' if self.directional_derivatives else ""
        out = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            "<fmiModelDescription",
            '  fmiVersion="2.0"',
            f"  modelName={a(self.identifier)}",
            f"  guid={a(self.guid)}",
            f"  description={a(self.description)}",
            f"  generationTool={a(self.generation_tool)}",
            '  variableNamingConvention="structured"',
            '  numberOfEventIndicators="0">',
            (
                f"  <ModelExchange modelIdentifier={a(self.identifier)}"
                ' completedIntegratorStepNotNeeded="true" canGetAndSetFMUstate="true"'
                f' canSerializeFMUstate="true" canNotUseMemoryManagementFunctions="false"{dd}>'
            ),
            "    <SourceFiles>",
            '      <File name="fmi2_framework.c"/>',
            f"      <File name={a(self.source)}/>",
            "    </SourceFiles>",
            "  </ModelExchange>",
            (
                f"  <CoSimulation modelIdentifier={a(self.identifier)}"
                ' canHandleVariableCommunicationStepSize="true" canInterpolateInputs="false"'
                ' maxOutputDerivativeOrder="0" canGetAndSetFMUstate="true"'
                f' canSerializeFMUstate="true" canNotUseMemoryManagementFunctions="false"{dd}>'
            ),
            "    <SourceFiles>",
            '      <File name="fmi2_framework.c"/>',
            f"      <File name={a(self.source)}/>",
            "    </SourceFiles>",
            "  </CoSimulation>",
        ]
        out += xml_units_logs_experiment(self)
        out.append("  <ModelVariables>")
        for v in self.variables:
            attrs = xml_variable_attributes(v, vr)
            type_attrs = ""
            if v.start is not None and v.initial_ != "calculated":
                type_attrs += f' start="{start_text(v)}"'
            if v.unit:
                type_attrs += f" unit={a(v.unit)}"
            if v.derivative is not None:
                type_attrs += f' derivative="{index[v.derivative]}"'
            out.append(f"    <ScalarVariable {attrs}>")
            out.append(f"      <{v.type}{type_attrs}/>")
            out.append("    </ScalarVariable>")
        out.append("  </ModelVariables>")
        out.append("  <ModelStructure>")
        outputs = [v for v in self.variables if v.causality == "output"]
        if outputs:
            out.append("    <Outputs>")
            out += [f'      <Unknown index="{index[v.name]}"/>' for v in outputs]
            out.append("    </Outputs>")
        if states:
            out.append("    <Derivatives>")
            out += [f'      <Unknown index="{index[d.name]}"/>' for _, d in states]
            out.append("    </Derivatives>")
        initial_unknowns = self.initial_unknowns()
        if initial_unknowns:
            out.append("    <InitialUnknowns>")
            out += [f'      <Unknown index="{index[v.name]}"/>' for v in initial_unknowns]
            out.append("    </InitialUnknowns>")
        out.append("  </ModelStructure>")
        out.append("</fmiModelDescription>")
        return "\n".join(out) + "\n"

    # ------------------------------------------------------------------ C header
    def c_header(self) -> str:
        """Text of ``model_vars.h`` for the framework and the model's C file."""
        vr = self.value_references()
        reals, ints, bools = (self.by_type(t) for t in TYPES)
        states = self.states()
        guard = "MODEL_VARS_H"
        lines = [
            f"/* Generated by fmu_surrogate.export.fmi.model_description for {self.identifier}.",
            "   Do not edit: change the Python spec and rebuild. */",
            f"#ifndef {guard}",
            f"#define {guard}",
            "",
            f'#define MODEL_IDENTIFIER_STRING "{self.identifier}"',
            f'#define MODEL_GUID "{self.guid}"',
            f"#define N_REALS {len(reals)}",
            f"#define N_INTEGERS {len(ints)}",
            f"#define N_BOOLEANS {len(bools)}",
            f"#define N_STATES {len(states)}",
            f"#define INT_VR0 {len(reals)}",
            f"#define BOOL_VR0 {len(reals) + len(ints)}",
        ]
        if self.directional_derivatives:
            lines.append("#define MODEL_DIRECTIONAL_DERIVATIVE 1")
        for k, v in self.defines.items():
            lines.append(f"#define {k} {v}")
        lines.append("")
        for v in self.variables:
            lines.append(f"#define VR_{v.symbol} {vr[v.name]}  /* {v.type} {v.name} */")
        lines += ["", "#ifdef FMI2_FRAMEWORK_IMPL"]

        def table(ctype: str, name: str, items: list[str]) -> None:
            body = ", ".join(items) if items else "0"
            lines.append(f"static const {ctype} {name}[] = {{{body}}};")

        table("double", "REAL_START", [_c_real(v.start) for v in reals])
        table("int", "INT_START", [str(int(v.start or 0)) for v in ints])
        table("int", "BOOL_START", [("1" if v.start else "0") for v in bools])
        for tname, vs in (("REAL", reals), ("INT", ints), ("BOOL", bools)):
            table("unsigned char", f"{tname}_ACCESS", [str(_access(v)) for v in vs])
            names = [_c_string(v.name) for v in vs] or ['""']
            lines.append(f"static const char *const {tname}_NAMES[] = {{{', '.join(names)}}};")
        table("unsigned int", "STATE_VR", [str(vr[s.name]) for s, _ in states])
        table("unsigned int", "DER_VR", [str(vr[d.name]) for _, d in states])
        lines += ["#endif /* FMI2_FRAMEWORK_IMPL */", "", f"#endif /* {guard} */", ""]
        return "\n".join(lines)


def xml_units_logs_experiment(spec: ModelSpec, *, tolerance: bool = True) -> list[str]:
    """``<UnitDefinitions>``, ``<LogCategories>`` and ``<DefaultExperiment>`` lines (FMI 2.0 and
    3.0 alike).

    Parameters
    ----------
    spec : ModelSpec
        The model.
    tolerance : bool
        Write the experiment's tolerance (when it has one).

    Returns
    -------
    list of str
    """
    a = quoteattr
    e = spec.experiment
    out = []
    units = sorted({v.unit for v in spec.variables if v.unit})
    if units:
        out.append("  <UnitDefinitions>")
        out += [f"    <Unit name={a(u)}/>" for u in units]
        out.append("  </UnitDefinitions>")
    out.append("  <LogCategories>")
    out += [f"    <Category name={a(n)} description={a(d)}/>" for n, d in LOG_CATEGORIES]
    out.append("  </LogCategories>")
    exp = f'  <DefaultExperiment startTime="{_num(e.start)}" stopTime="{_num(e.stop)}"'
    if e.step is not None:
        exp += f' stepSize="{_num(e.step)}"'
    if tolerance and e.tolerance is not None:
        exp += f' tolerance="{_num(e.tolerance)}"'
    out.append(exp + "/>")
    return out


def xml_variable_attributes(v: Var, vr: dict[str, int]) -> str:
    """``name``, ``valueReference``, ``description``, ``causality``, ``variability`` and
    ``initial`` attributes of a model variable (FMI 2.0 and 3.0 alike).

    Parameters
    ----------
    v : Var
        The variable.
    vr : dict of str to int
        Value references by name (:meth:`ModelSpec.value_references`).

    Returns
    -------
    str
    """
    a = quoteattr
    attrs = f"name={a(v.name)} valueReference=\"{vr[v.name]}\""
    if v.description:
        attrs += f" description={a(v.description)}"
    attrs += f' causality="{v.causality}" variability="{v.variability}"'
    if v.initial_ is not None:
        attrs += f' initial="{v.initial_}"'
    return attrs


def _access(v: Var) -> int:
    if v.causality == "input" or (v.causality == "parameter" and v.variability == "tunable"):
        return _ALWAYS
    if v.variability == "constant" or v.initial_ == "calculated" or v.causality in (
        "calculatedParameter",
        "independent",
    ):
        return _NEVER
    return _BEFORE_INIT_DONE


def _num(x: float) -> str:
    return repr(float(x))


def start_text(v: Var) -> str:
    """The ``start`` attribute value of ``v`` (``true``/``false``, an integer or a float)."""
    if v.type == "Boolean":
        return "true" if v.start else "false"
    if v.type == "Integer":
        return str(int(v.start))  # type: ignore[arg-type]
    return _num(v.start)  # type: ignore[arg-type]


def _c_real(x: float | bool | None) -> str:
    if x is None:
        return "0.0"
    x = float(x)
    if not math.isfinite(x):
        raise InvalidInputError(f"start value {x} is not finite.")
    return repr(x)


def _c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
