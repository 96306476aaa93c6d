"""Export a pH surrogate as a standalone FMU (FMI 2.0 co-simulation + model exchange, or FMI 3.0).

The surrogate's matrices are written into a generated C header next to the model code in
``c/``; the FMI boilerplate is the package's shared FMU framework
(``c/fmi2_framework.c``, with an FMI 3.0 adapter ``c/fmi3_adapter.c``),
and :func:`fmu_surrogate.fmu.model.compile.build_fmu` compiles it with the system C compiler.  The
``modelDescription.xml`` (FMI 2.0 or 3.0) and the C header with the value references are
generated from one :class:`~fmu_surrogate.export.fmi.model_description.ModelSpec`, so they cannot
drift apart.  Nothing of Python is needed at run time.

Linear surrogates (:class:`~fmu_surrogate.ph.LinearPH` with an invertible ``E``) step exactly for
the input held over a communication step (zero-order hold, what co-simulation importers do): the
matrix exponential of ``[[A, E⁻¹(G − P)], [0, 0]] h`` by scaling and squaring with the
degree-13 Padé approximant, computed in C whenever the step size changes and cached otherwise; the energy terms
of a step come from Van Loan's block exponential (``c/dense.h``); the outputs carry the
feedthrough ``y = (G + P)ᵀQx + (S − N)u`` and the wiring of a ``PortedSystem``.

Nonlinear surrogates (a ``PHDAE`` with a ``LinearEffort``, ``KernelEffort``, ``TermEffort`` or
``CompositeEffort``, and a :class:`~fmu_surrogate.ph.NonlinearPH` with its ``ConvexEffort`` and
``PowerDissipation``) step with the scheme of
:func:`fmu_surrogate.ph.simulate` for the held input — average vector field with Newton's method
and the analytic Jacobian, index-1 algebraic states in the same Newton system, a NonlinearPH's
dissipation ``R_nl(z̄) z̄`` at the step's mean effort — in internal steps
of ``step`` (``c/surrogate_nonlinear.c``); the C code of ``z(x)``, ``∂z/∂x`` and ``H(x)`` comes
from :func:`fmu_surrogate.export.expressions.render.effort_c_source`, that of the dissipation's
force, Jacobian and rate from :func:`~fmu_surrogate.export.expressions.render.dissipation_c_source`;
the feedthrough and the wiring of a ``PortedSystem`` as for linear surrogates (``c/wiring.h``,
which also evaluates a static law of the inputs, ``PortMap.law``, wherever the outputs are).
The co-simulation FMU reproduces ``ph.simulate(..., hold="zoh")`` on its internal grid to
round-off (tests/export/fmi).

Outputs of a ``PortedSystem`` that read the state's rate (``PortMap.Cdx``: an acceleration beside
a momentum state) add ``Cdx ẋ``, the core's flow at the state and at the inputs the outputs see,
where ``c/wiring.h`` forms the outputs; their ``<ModelStructure>`` and directional derivatives
include it (the states through the flow, the inputs through ``Cdx (G − P) Tu``).

A ``PortedSystem`` with a delayed feedthrough (its FMU's outputs at a communication point see the
inputs held over the step before, :mod:`fmu_surrogate.ph.ports`) behaves in co-simulation as that
FMU: it keeps the inputs the last step held, computes the outputs from the state and them (an
input set between steps changes the outputs only after the next step), and starts from its
``inputs_before`` (the parameters ``<input>_before``) or, when it has none, from the inputs at
the end of initialisation; in model exchange it is the continuous-time model.  Such a surrogate
is exported for co-simulation only by default, so that its ``<ModelStructure>`` can say that its
outputs depend on no input (:mod:`fmu_surrogate.export.fmi.spec`).

A ``PortedSystem`` with late outputs (its FMU computes the outputs at the start of ``doStep``,
before it advances the states: those read at a communication point are those of the point
before, state and inputs, :mod:`fmu_surrogate.ph.ports`) behaves in co-simulation as that FMU:
each step first computes the outputs of the state and inputs it starts from and shows them until
the next step (an input set between steps changes nothing; after initialisation the outputs are
those of the start, so the first two points show the same values).  Only the port outputs are
late: ``H``, ``energy_residual`` and the energies are the core's at the current time, as for the
delayed feedthrough.  Model exchange has no steps and so no point before: such a surrogate is
exported for co-simulation only, whose ``<ModelStructure>`` says that its outputs depend on no
input; asking for model exchange is an error (export the surrogate without late outputs for the
continuous-time model).

A ``PortedSystem`` with ``initial="equilibrium"`` (it starts, like a vendor's model initialised
in steady state, at the equilibrium of the inputs it is given at its start,
:mod:`fmu_surrogate.ph.simulation.equilibrium`) does so in co-simulation and model exchange:
when the FMU leaves initialisation (``fmi2ExitInitializationMode``, or FMI 3's) it computes
the equilibrium of the inputs set by then (before or in initialisation mode) and of the
sources' parameters, a linear core by one solve of ``(J − R) Q x = −(G − P) u``,
a nonlinear one by Newton's method from ``x_start`` with the analytic Jacobian, and measures
``energy_residual`` from its ``H`` (``c/equilibrium.h``).  Where the inputs have no equilibrium
(the flow does not vanish where the solve or Newton ends: inputs that drive a mode without
losses) leaving initialisation fails with ``fmi2Error`` and says so in the log, where
``ph.simulate`` raises ``ConvergenceError``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from fmu_surrogate.export.expressions.effort import ExportError
from fmu_surrogate.export.fmi.c_data import is_exact_linear, surrogate_data
from fmu_surrogate.export.fmi.fmi3_xml import model_description_xml3
from fmu_surrogate.export.fmi.model_description import (
    FRAMEWORK_DIR,
    FRAMEWORK_HEADER,
    FRAMEWORK_SOURCE,
    GENERATED_HEADER,
)
from fmu_surrogate.export.fmi.spec import surrogate_spec
from fmu_surrogate.export.names import identifier
from fmu_surrogate.export.source import check_finite, load_surrogate
from fmu_surrogate.export.wiring import wiring

__all__ = ["export_fmu"]

#: prefix of the fmi2 functions inside an FMI 3.0 binary (only the fmi3 names are its interface)
FMI2_PREFIX = "sur2_"


def _version(fmi_version: Any) -> str:
    v = str(fmi_version).strip()
    if v in ("2", "2.0"):
        return "2.0"
    if v in ("3", "3.0"):
        return "3.0"
    raise ExportError(f"fmi_version must be 2 or 3, got {fmi_version!r}.")


def _identifier(system: Any, model_name: str | None) -> str:
    if model_name is None:
        src = (getattr(system, "provenance", None) or {}).get("source_fmu") or {}
        model_name = f"{src['name']}_surrogate" if src.get("name") else "surrogate"
    return identifier(Path(str(model_name)).stem)


def export_fmu(surrogate: Any, path: str | os.PathLike, *, fmi_version: int | str = 2,
               model_name: str | None = None, step: float | None = None,
               x0: Any = None, model_exchange: bool | None = None) -> Path:
    """Compile a pH surrogate into a standalone FMU.

    Parameters
    ----------
    surrogate : LinearPH, PHDAE, PortedSystem or path
        The surrogate, or its JSON file (:func:`fmu_surrogate.ph.save`).  A ``PortedSystem``
        exports with its external names, causalities, units, signs, constant sources (tunable
        parameters), measured outputs and static law of the inputs
        (:mod:`fmu_surrogate.export.wiring`).
    path : path
        The ``.fmu`` to write (parent folders are created).
    fmi_version : {2, 3}
        FMI 2.0 (co-simulation and model exchange in one archive) or FMI 3.0 (the same two
        interfaces through an adapter).
    model_name : str, optional
        ``modelIdentifier`` (sanitised to a C identifier); default ``<source FMU>_surrogate`` from
        the surrogate's provenance, else ``surrogate``.
    step : float, optional
        Internal step of the nonlinear scheme [s]: a communication step ``H`` is done in
        ``ceil(H / step)`` equal sub-steps (default: the surrogate's ``max_step`` when it has
        one, else one step per communication step — both as ``ph.simulate`` on the
        communication grid).  Linear surrogates step exactly for any communication step and
        ignore it.  When given, written as the default experiment's step size.
    x0 : array_like, shape (n,), optional
        Initial state: the start values of the parameters ``x_start[1]`` … ``x_start[n]``
        (``causality="parameter"``, ``variability="fixed"``: settable before initialisation;
        the FMU starts from them, or with ``initial="equilibrium"`` Newton starts there).
        Default: a ``PortedSystem``'s ``x0``, else zero.
    model_exchange : bool, optional
        Also provide model exchange (one binary, one model description).  Default: yes, except
        for a surrogate with a delayed feedthrough or late outputs (co-simulation only, its
        states internal: module docs); a surrogate with late outputs has no model exchange.

    Returns
    -------
    Path
        The FMU.  Port names that are not C/Modelica identifiers are sanitised; the mapping is in
        the model description's ``description`` (and :func:`fmu_surrogate.export.names.exported_names`).

    Raises
    ------
    ExportError
        NaN or infinite entries, a singular ``E``, an effort that cannot be exported, a bad
        ``fmi_version``, model exchange asked for a surrogate with late outputs, an ``x0`` of the wrong shape or not finite, or a model description
        that does not validate.
    SurrogateFileError
        ``surrogate`` is a file that cannot be read.
    FMUBuildError
        No C compiler, or compiling failed.

    Examples
    --------
    >>> import numpy as np
    >>> from fmu_surrogate.ph import LinearPH
    >>> osc = LinearPH([[0, 1], [-1, 0]], np.diag([0.0, 0.1]), np.eye(2), [[0.0], [1.0]])
    >>> export_fmu(osc, "osc.fmu")          # doctest: +SKIP
    PosixPath('osc.fmu')
    """
    from fmu_surrogate.fmu.model.compile import build_fmu

    sur, _ = load_surrogate(surrogate)
    version = _version(fmi_version)
    if step is not None and not (np.isfinite(step) and step > 0):
        raise ExportError(f"step must be a positive number of seconds, got {step!r}.")
    w = wiring(sur, x0)
    system = w.system
    check_finite(system)
    from fmu_surrogate.ph import LinearPH

    if isinstance(system, LinearPH) and not is_exact_linear(system):
        raise ExportError(
            "this LinearPH has a singular E (a linear DAE); ph.simulate steps it with the plain "
            "midpoint rule, which the FMU does not reproduce.  Export it as "
            "PHDAE(E, J, R, B, LinearEffort(Q, E), hamiltonian=...) instead: that runs the AVF "
            "scheme with consistent algebraic states, in ph.simulate and in the FMU alike.")
    identifier = _identifier(system, model_name)
    # the internal step: the one asked for, else the longest the surrogate's scheme allows
    data = surrogate_data(w, step=step if step is not None else getattr(system, "max_step", None))
    if w.late and model_exchange:
        raise ExportError(
            "this surrogate has late outputs (PortedSystem.late_outputs: the outputs read at a "
            "communication point are those of the point before), a co-simulation trait that "
            "model exchange, which has no steps, cannot show.  Export it for co-simulation only "
            "(model_exchange=None or False; command line --interfaces cs), or, for the "
            "continuous-time model, a copy without late outputs (s.replace(late_outputs=False, "
            "first_outputs=None)).")
    if w.first is not None and model_exchange:
        raise ExportError(
            "this surrogate shows fixed outputs before its first step (PortedSystem."
            "first_outputs, as the source FMU), a co-simulation trait that model exchange, "
            "which has no steps, cannot show.  Export it for co-simulation only "
            "(model_exchange=None or False; command line --interfaces cs).")
    me = (not (w.delayed or w.late or w.first is not None) if model_exchange is None
          else bool(model_exchange))
    spec = surrogate_spec(w, identifier, step=step, model_exchange=me)
    xml = spec.model_description_xml() if version == "2.0" else model_description_xml3(spec)
    out = Path(path)
    with tempfile.TemporaryDirectory(prefix="fmu-export-") as tmp:
        gen = Path(tmp)
        (gen / GENERATED_HEADER).write_text(spec.c_header(), encoding="utf-8")
        (gen / "surrogate_data.h").write_text(data, encoding="utf-8")
        sources = [FRAMEWORK_SOURCE, FRAMEWORK_DIR / spec.source]
        # -O3 (after build_fmu's -O2): the small fixed-size loops of a surrogate's step unrolled
        # and inlined; the same IEEE arithmetic (no -ffast-math, no contraction in ISO C).
        # Measured on the saturating motor's surrogate: 88-111 -> 71-83 ns per step
        cflags: list[str] = ["-O3"]
        if version == "3.0":
            sources.append(FRAMEWORK_DIR / "fmi3_adapter.c")
            cflags.append(f"-DFMI2_FUNCTION_PREFIX={FMI2_PREFIX}")
        headers = [FRAMEWORK_HEADER, FRAMEWORK_DIR / "dense.h", FRAMEWORK_DIR / "wiring.h",
                   gen / GENERATED_HEADER, gen / "surrogate_data.h"]
        if w.equilibrium:  # the start at an equilibrium (module docs)
            headers.append(FRAMEWORK_DIR / "equilibrium.h")
        before = out.stat().st_mtime_ns if out.is_file() else None
        build_fmu(sources, xml, out, identifier, headers=headers, cflags=cflags,
                  fmi_version=version)
    if before is None or out.stat().st_mtime_ns != before:  # freshly built: validate once
        from fmpy.validation import validate_fmu

        problems = validate_fmu(str(out))
        if problems:
            out.unlink(missing_ok=True)
            raise ExportError("the generated model description does not validate:\n  "
                              + "\n  ".join(problems))
    return out
