"""What an FMU declares, as immutable objects: its variables (:class:`Variable`), its default
experiment (:class:`DefaultExperiment`) and the whole model (:class:`FMUInfo`, made by
:func:`fmu_surrogate.fmu.model.loading.open_fmu`), with name checks and a printable summary."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.fmu.errors import NoBinaryError, UnknownVariableError

__all__ = ["INTEGER_RANGES", "NUMERIC_TYPES", "DefaultExperiment", "FMUInfo", "Variable",
           "current_platform"]

#: ``(min, max)`` of the integer types of FMI 2 and 3 (``Enumeration``: that of ``fmi3Int64``;
#: FMI 2 sets it as an ``fmi2Integer``, the range of ``Integer``)
INTEGER_RANGES: dict[str, tuple[int, int]] = {
    "Integer": (-2**31, 2**31 - 1), "Int8": (-2**7, 2**7 - 1), "UInt8": (0, 2**8 - 1),
    "Int16": (-2**15, 2**15 - 1), "UInt16": (0, 2**16 - 1), "Int32": (-2**31, 2**31 - 1),
    "UInt32": (0, 2**32 - 1), "Int64": (-2**63, 2**63 - 1), "UInt64": (0, 2**64 - 1),
    "Enumeration": (-2**63, 2**63 - 1),
}
#: FMI types whose values a dataset records as numbers (float64 columns)
NUMERIC_TYPES = frozenset(("Real", "Float32", "Float64", "Boolean", *INTEGER_RANGES))


@dataclass(frozen=True)
class Variable:
    """One model variable as declared in ``modelDescription.xml``.

    Attributes
    ----------
    name : str
    value_reference : int
    causality : str
        ``"input"``, ``"output"``, ``"parameter"``, ``"calculatedParameter"``, ``"local"``,
        ``"independent"``, ``"structuralParameter"``.
    variability : str
        ``"constant"``, ``"fixed"``, ``"tunable"``, ``"discrete"``, ``"continuous"``.
    type : str
        FMI type name (``"Real"``, ``"Integer"``, ``"Boolean"``, ``"String"``, ``"Enumeration"``
        in FMI 2; ``"Float64"``, ``"Int32"``, ... in FMI 3).
    start : str or None
        Start value as written in the XML (a string; use :attr:`start_value` for a number).
    unit : str or None
    description : str or None
    shape : tuple of int
        ``()`` for scalars; the array shape for FMI 3 array variables.
    initial : str or None
    minimum, maximum : float or None
        The declared ``min`` and ``max`` (the variable's own, else its ``declaredType``'s):
        the region the FMU is designed to operate in; ``None`` where none is declared.
    dependencies : tuple of str or None
        For an output: the variables it depends on directly, as its ``<ModelStructure>``
        declares them (``()``: on none of them, a state-only output); ``None`` where nothing
        is declared (then it may depend on every input).
    """

    name: str
    value_reference: int
    causality: str
    variability: str
    type: str
    start: str | None = None
    unit: str | None = None
    description: str | None = None
    shape: tuple[int, ...] = ()
    initial: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    dependencies: tuple[str, ...] | None = None

    @property
    def is_real(self) -> bool:
        """True for ``Real`` (FMI 2) and ``Float32``/``Float64`` (FMI 3)."""
        return self.type in ("Real", "Float32", "Float64")

    @property
    def is_numeric(self) -> bool:
        """True for the types a dataset records as numbers: Real/Float, the integer types,
        Boolean and Enumeration (not String, Binary or Clock)."""
        return self.type in NUMERIC_TYPES

    @property
    def size(self) -> int:
        """Number of scalar values: 1 for scalars, the product of the shape for arrays."""
        n = 1
        for s in self.shape:
            n *= int(s)
        return n

    @property
    def start_values(self) -> tuple[float, ...] | None:
        """All start values as floats (``size`` of them for an array, row-major), or ``None``
        when there is no numeric start value."""
        if self.start is None:
            return None
        out = []
        for tok in self.start.split():
            if tok in ("true", "false"):
                out.append(1.0 if tok == "true" else 0.0)
                continue
            try:
                out.append(float(tok))
            except ValueError:
                return None
        return tuple(out) or None

    @property
    def start_value(self) -> float | None:
        """The start value as a float (first element for arrays), or ``None``."""
        if self.start is None:
            return None
        s = self.start.strip().split()
        if not s:
            return None
        tok = s[0]
        if tok in ("true", "false"):
            return 1.0 if tok == "true" else 0.0
        try:
            return float(tok)
        except ValueError:
            return None


@dataclass(frozen=True)
class DefaultExperiment:
    """The ``<DefaultExperiment>`` of the model; every field may be ``None``."""

    start_time: float | None = None
    stop_time: float | None = None
    step_size: float | None = None
    tolerance: float | None = None


def current_platform(fmi_version: str) -> str:
    """Name of this machine's binary folder: ``fmpy.platform`` (FMI 2) or ``platform_tuple`` (3)."""
    import fmpy

    return fmpy.platform if str(fmi_version).startswith("2") else fmpy.platform_tuple


@dataclass(frozen=True)
class FMUInfo:
    """Everything we know about an FMU without instantiating it (see :func:`open_fmu`).

    Attributes
    ----------
    path : Path
    sha256 : str
        Hex digest of the archive bytes.
    name : str
        ``modelName``.
    guid : str
        ``guid`` (FMI 2) or ``instantiationToken`` (FMI 3).
    fmi_version : str
        ``"2.0"`` or ``"3.0"``.
    generation_tool : str
    model_identifier_cs, model_identifier_me : str or None
        ``None`` when the FMU does not support co-simulation / model exchange.
    platforms : tuple of str
        Binary folders present under ``binaries/``.
    has_binary : bool
        Whether a binary for this machine's platform is present.
    variables : tuple of Variable
        In the order of the model description.
    states : tuple of str
        Names of the continuous states.
    derivatives : dict
        ``{state name: derivative name}``, in state order.
    default_experiment : DefaultExperiment
    description : str
    """

    path: Path
    sha256: str
    name: str
    guid: str
    fmi_version: str
    generation_tool: str
    model_identifier_cs: str | None
    model_identifier_me: str | None
    platforms: tuple[str, ...]
    has_binary: bool
    variables: tuple[Variable, ...]
    states: tuple[str, ...]
    derivatives: dict[str, str] = field(hash=False)
    default_experiment: DefaultExperiment = DefaultExperiment()
    description: str = ""

    # ------------------------------------------------------------------ queries
    @property
    def variable_names(self) -> tuple[str, ...]:
        """All variable names, in model-description order."""
        return tuple(v.name for v in self.variables)

    def _by_causality(self, *causalities: str) -> tuple[str, ...]:
        return tuple(v.name for v in self.variables if v.causality in causalities)

    @property
    def inputs(self) -> tuple[str, ...]:
        """Names of the input variables."""
        return self._by_causality("input")

    @property
    def outputs(self) -> tuple[str, ...]:
        """Names of the output variables."""
        return self._by_causality("output")

    @property
    def parameters(self) -> tuple[str, ...]:
        """Names of the (settable) parameters: causality ``parameter``.

        Includes fixed and tunable parameters; ``calculatedParameter`` s are not settable and
        are excluded.
        """
        return self._by_causality("parameter", "structuralParameter")

    @property
    def tunable_parameters(self) -> tuple[str, ...]:
        """Parameters with variability ``tunable`` (changeable during a simulation)."""
        return tuple(
            v.name for v in self.variables
            if v.causality == "parameter" and v.variability == "tunable"
        )

    @property
    def supports_cs(self) -> bool:
        """Whether the FMU supports co-simulation."""
        return self.model_identifier_cs is not None

    @property
    def supports_me(self) -> bool:
        """Whether the FMU supports model exchange."""
        return self.model_identifier_me is not None

    def variable(self, name: str) -> Variable:
        """The :class:`Variable` called ``name``.

        Raises
        ------
        UnknownVariableError
            With the closest existing names as suggestions.
        """
        v = self.variables_by_name.get(name)
        if v is None:
            raise UnknownVariableError(name, self.variable_names, model=self.name)
        return v

    @cached_property
    def variables_by_name(self) -> dict[str, Variable]:
        """``{name: Variable}`` (made once: look-ups of many names stay cheap)."""
        out: dict[str, Variable] = {}
        for v in self.variables:
            out.setdefault(v.name, v)
        return out

    def check_names(self, names: Iterable[str], what: str = "variable") -> list[str]:
        """Check that every name exists; return them as a list.

        Parameters
        ----------
        names : iterable of str
        what : {"variable", "input", "output", "parameter"}
            Restricts the allowed names to that causality (``"variable"``: any).

        Raises
        ------
        UnknownVariableError
            For the first name that does not exist (or has the wrong causality).
        """
        pools = {
            "variable": self.variable_names,
            "input": self.inputs,
            "output": self.outputs,
            "parameter": self.parameters,
        }
        if what not in pools:
            raise InvalidInputError(f"what must be one of {sorted(pools)}, got {what!r}")
        pool = pools[what]
        pool_set = set(pool)
        names = list(names)
        for n in names:
            if n not in pool_set:
                if what != "variable" and n in set(self.variable_names):
                    v = self.variable(n)
                    raise UnknownVariableError(
                        n, pool, what=what, model=self.name,
                        hint=f"{n!r} exists but its causality is {v.causality!r}",
                    )
                raise UnknownVariableError(n, pool, what=what, model=self.name)
        return names

    def require_binary(self) -> None:
        """Raise :class:`NoBinaryError` unless the FMU has a binary for this platform."""
        if self.has_binary:
            return
        here = current_platform(self.fmi_version)
        have = ", ".join(self.platforms) if self.platforms else "none (source-only or empty)"
        raise NoBinaryError(
            f"{self.path.name} has no binary for this platform ({here}); it ships binaries for: "
            f"{have}. Export the FMU for {here} from the tool that generated it "
            f"({self.generation_tool or 'unknown tool'}), or compile its sources if it has any "
            f"(fmpy: `python -m fmpy add_cswrapper` / `fmpy compile`); "
            f"`fmu-surrogate info` still works without a binary.",
            self.platforms,
        )

    # ------------------------------------------------------------------ text
    def describe(self) -> str:
        """Human-readable summary, printed by ``fmu-surrogate info MODEL.fmu``."""
        kinds = [k for k, ok in (("co-simulation", self.supports_cs),
                                 ("model exchange", self.supports_me)) if ok]
        here = current_platform(self.fmi_version)
        lines = [
            f"{self.name}  ({self.path})",
            f"  FMI {self.fmi_version}, {' + '.join(kinds) or 'no interface type'}",
            f"  generated by: {self.generation_tool or '-'}",
            f"  guid: {self.guid}",
            f"  sha256: {self.sha256}",
            f"  platforms: {', '.join(self.platforms) or '-'}"
            + ("" if self.has_binary else f"   (NO binary for this platform, {here})"),
        ]
        if self.description:
            lines.insert(1, f"  {self.description}")
        de = self.default_experiment
        fields_ = [("start", de.start_time), ("stop", de.stop_time), ("step", de.step_size),
                   ("tolerance", de.tolerance)]
        shown = ", ".join(f"{k}={v:g}" for k, v in fields_ if v is not None)
        lines.append(f"  default experiment: {shown or '-'}")

        groups = [
            ("inputs", ("input",)),
            ("outputs", ("output",)),
            ("parameters", ("parameter", "structuralParameter")),
            ("calculated parameters", ("calculatedParameter",)),
            ("locals", ("local",)),
            ("independent", ("independent",)),
        ]
        for title, caus in groups:
            vs = [v for v in self.variables if v.causality in caus]
            if not vs:
                continue
            lines.append(f"{title} ({len(vs)}):")
            width = min(max(len(v.name) for v in vs), 40)
            for v in vs:
                extra = []
                if v.start is not None:
                    extra.append(f"start={v.start}")
                if v.unit:
                    extra.append(f"[{v.unit}]")
                if v.shape:
                    extra.append("shape=" + "x".join(str(s) for s in v.shape))
                extra.append(f"{v.type}, {v.variability}")
                desc = f"  {v.description}" if v.description else ""
                lines.append(f"  {v.name:<{width}s}  {' '.join(extra)}{desc}")
        if self.states:
            lines.append(f"states ({len(self.states)}):")
            width = min(max(len(s) for s in self.states), 40)
            for s in self.states:
                lines.append(f"  {s:<{width}s}  d/dt -> {self.derivatives.get(s, '?')}")
        else:
            lines.append("states: none declared")
        return "\n".join(lines)
