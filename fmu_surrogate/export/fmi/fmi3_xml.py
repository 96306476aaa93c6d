"""``modelDescription.xml`` for FMI 3.0 from the same :class:`ModelSpec` as the FMI 2.0 one.

The FMI 3.0 binary is the FMI 2.0 framework behind ``c/fmi3_adapter.c``, so the value references
are those of :meth:`ModelSpec.value_references`; the independent variable ``time`` follows all of
them (``VR_TIME3`` in the adapter).
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from fmu_surrogate.export.fmi.model_description import (
    ModelSpec,
    start_text,
    structure_attributes,
    xml_units_logs_experiment,
    xml_variable_attributes,
)

__all__ = ["model_description_xml3"]

_TYPES = {"Real": "Float64", "Integer": "Int32", "Boolean": "Boolean"}


def model_description_xml3(spec: ModelSpec, *, model_exchange: bool | None = None) -> str:
    """Text of an FMI 3.0 ``modelDescription.xml`` (co-simulation, optionally model exchange).

    Parameters
    ----------
    spec : ModelSpec
        The model's variables and capabilities.
    model_exchange : bool, optional
        Also declare ``<ModelExchange>`` (default :attr:`ModelSpec.model_exchange`; without it
        the states and their derivatives stay internal, as in FMI 2.0).

    Returns
    -------
    str
    """
    a = quoteattr
    if model_exchange is None:
        model_exchange = spec.model_exchange
    vr = spec.value_references()
    declared = spec.declared()
    vr_time = len(spec.variables)
    dd = ' providesDirectionalDerivatives="true"' if spec.directional_derivatives else ""
    state_ = ' canGetAndSetFMUState="true" canSerializeFMUState="true"'
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        "<fmiModelDescription",
        '  fmiVersion="3.0"',
        f"  modelName={a(spec.identifier)}",
        f"  instantiationToken={a(spec.guid)}",
        f"  description={a(spec.description)}",
        f"  generationTool={a(spec.generation_tool)}",
        '  variableNamingConvention="structured">',
    ]
    if model_exchange:
        out.append(f"  <ModelExchange modelIdentifier={a(spec.identifier)}"
                   f' needsCompletedIntegratorStep="false"{state_}{dd}/>')
    out.append(f"  <CoSimulation modelIdentifier={a(spec.identifier)}"
               f' canHandleVariableCommunicationStepSize="true"{state_}{dd}/>')
    out += xml_units_logs_experiment(spec, tolerance=False)
    out.append("  <ModelVariables>")
    out.append(f'    <Float64 name="time" valueReference="{vr_time}" causality="independent"'
               ' variability="continuous" description="simulation time"/>')
    for v in declared:
        attrs = xml_variable_attributes(v, vr)
        if v.unit:
            attrs += f" unit={a(v.unit)}"
        if v.start is not None and v.initial_ != "calculated":
            attrs += f' start="{start_text(v)}"'
        if v.derivative is not None:
            attrs += f' derivative="{vr[v.derivative]}"'
        out.append(f"    <{_TYPES[v.type]} {attrs}/>")
    out.append("  </ModelVariables>")
    out.append("  <ModelStructure>")
    states = spec.states() if spec.model_exchange else []
    key = "valueReference"
    out += [f"    <Output{structure_attributes(v, vr, key=key)}/>" for v in declared
            if v.causality == "output"]
    out += [f"    <ContinuousStateDerivative{structure_attributes(d, vr, key=key)}/>"
            for _, d in states]
    out += [f"    <InitialUnknown{structure_attributes(v, vr, initial=True, key=key)}/>"
            for v in spec.initial_unknowns()]
    out.append("  </ModelStructure>")
    out.append("</fmiModelDescription>")
    return "\n".join(out) + "\n"
