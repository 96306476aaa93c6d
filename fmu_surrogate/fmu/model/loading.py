"""Open and inspect an FMU: :func:`open_fmu` returns an immutable :class:`FMUInfo`.

Works for FMI 2.0 and 3.0, co-simulation and model exchange, through
``fmpy.read_model_description``.  fmpy's heterogeneous exceptions are mapped to
:mod:`fmu_surrogate.fmu.errors`:

=====================================================  ==========================
fmpy / stdlib raises                                   we raise
=====================================================  ==========================
missing file, directory, ``zipfile.BadZipFile``,       :class:`NotAnFMUError`
``zlib.error``, ``EOFError`` (truncated member)
no ``modelDescription.xml``, ``KeyError``, lxml        :class:`ModelDescriptionError`
errors, schema ``ValidationError``, unsupported FMI
no ``binaries/<platform>`` folder                      :class:`NoBinaryError`, lazily
                                                       (:meth:`FMUInfo.require_binary`)
=====================================================  ==========================

Example
-------
>>> info = open_fmu("rc_network.fmu")            # doctest: +SKIP
>>> info.inputs, info.states                     # doctest: +SKIP
>>> print(info.describe())                       # doctest: +SKIP

The classes of what an FMU declares are in :mod:`~fmu_surrogate.fmu.model.info`.
"""

from __future__ import annotations

import hashlib
import math
import os
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fmu_surrogate.fmu.errors import ModelDescriptionError, NotAnFMUError
from fmu_surrogate.fmu.model.archive import check_archive, verify_members
from fmu_surrogate.fmu.model.info import DefaultExperiment, FMUInfo, Variable, current_platform

__all__ = ["DefaultExperiment", "FMUInfo", "Variable", "current_platform", "open_fmu"]


# ---------------------------------------------------------------------- open_fmu
def file_sha256(path: str | os.PathLike) -> str:
    """sha256 of a file's bytes (hex), read in 1 MiB chunks.

    Parameters
    ----------
    path : path
        The file.

    Returns
    -------
    str
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _float_or_none(x) -> float | None:
    if x is None or x == "":
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _declared_float(v: Any, attribute: str) -> float | None:
    """A numeric attribute of a variable (``min``, ``max``), else of its ``declaredType``."""
    own = _float_or_none(getattr(v, attribute, None))
    if own is not None or v.declaredType is None:
        return own
    return _float_or_none(getattr(v.declaredType, attribute, None))


def _platforms(names: Iterable[str]) -> tuple[str, ...]:
    out = set()
    for n in names:
        parts = n.split("/")
        if len(parts) >= 3 and parts[0] == "binaries" and parts[1] and parts[2]:
            out.add(parts[1])
    return tuple(sorted(out))


def open_fmu(path: str | os.PathLike) -> FMUInfo:
    """Read an FMU's model description and archive listing.

    Parameters
    ----------
    path : path-like
        The ``.fmu`` file (FMI 2.0 or 3.0, co-simulation and/or model exchange).

    Returns
    -------
    FMUInfo

    Raises
    ------
    NotAnFMUError
        The path does not exist, is a directory, or is not a (readable) zip archive.
    ModelDescriptionError
        ``modelDescription.xml`` is missing or broken, or the FMI version is unsupported.

    Notes
    -----
    A missing binary for this platform is *not* an error here (``has_binary`` is ``False``);
    call :meth:`FMUInfo.require_binary` before simulating.
    """
    path = Path(path)
    if not path.exists():
        raise NotAnFMUError(f"{path}: no such file; check the path of the .fmu file.")
    if path.is_dir():
        raise NotAnFMUError(
            f"{path} is a directory, not an FMU; pass the .fmu archive itself "
            f"(zip it back if you extracted it)."
        )
    fix_archive = ("re-export or re-download the FMU; an FMU is a zip archive with a "
                   "modelDescription.xml at its root")
    try:
        with zipfile.ZipFile(path) as z:
            check_archive(z, path)  # method, size, member count: central directory only
            names = z.namelist()
            if "modelDescription.xml" not in names:
                raise ModelDescriptionError(
                    f"{path} is a zip archive without modelDescription.xml at its root, so it is "
                    f"not an FMU; {fix_archive}."
                )
            # the XML is read here; the binaries are checked (streamed CRC) where they are
            # extracted, by the backend in each worker
            verify_members(z, path, ["modelDescription.xml"])
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise NotAnFMUError(
            f"{path} is not a valid FMU (not a readable zip archive: {exc}); {fix_archive}."
        ) from exc
    except OSError as exc:
        raise NotAnFMUError(f"{path}: cannot read the file ({exc}); check its permissions.") \
            from exc

    declared = _declared_fmi_version(path)
    if not declared.startswith(("2.", "3.")):
        raise ModelDescriptionError(
            f"{path} is an FMI {declared or '(no fmiVersion)'} FMU; only FMI 2.0 and 3.0 are "
            f"supported: export it as FMI 2.0 or 3.0."
        )
    md = _read_model_description(path)
    fmi_version = str(md.fmiVersion)
    platforms = _platforms(names)
    here = current_platform(fmi_version)
    has_binary = any(n.startswith(f"binaries/{here}/") and not n.endswith("/") for n in names)

    direct = {u.variable.name: tuple(d.name for d in u.dependencies)
                for u in md.outputs if u.dependencies is not None}
    variables = []
    for v in md.modelVariables:
        variables.append(
            Variable(
                name=v.name,
                value_reference=int(v.valueReference),
                causality=v.causality or "local",
                variability=v.variability or "continuous",
                type=v.type,
                start=None if v.start is None else str(v.start),
                unit=v.unit if v.unit is not None else
                (getattr(v.declaredType, "unit", None) if v.declaredType is not None else None),
                description=v.description,
                shape=tuple(int(s) for s in (v.shape or ())),
                initial=v.initial,
                minimum=_declared_float(v, "min"),
                maximum=_declared_float(v, "max"),
                dependencies=direct.get(v.name),
            )
        )
    states, derivs = [], {}
    for unknown in md.derivatives:
        dvar = unknown.variable
        svar = getattr(dvar, "derivative", None)
        if svar is None or isinstance(svar, (str, int)):
            continue
        states.append(svar.name)
        derivs[svar.name] = dvar.name

    de = md.defaultExperiment
    default = DefaultExperiment(
        start_time=_float_or_none(getattr(de, "startTime", None)) if de else None,
        stop_time=_float_or_none(getattr(de, "stopTime", None)) if de else None,
        step_size=_float_or_none(getattr(de, "stepSize", None)) if de else None,
        tolerance=_float_or_none(getattr(de, "tolerance", None)) if de else None,
    )
    cs, me = md.coSimulation, md.modelExchange
    return FMUInfo(
        path=path.resolve(),
        sha256=file_sha256(path),
        name=md.modelName or path.stem,
        guid=str(md.guid if md.guid is not None else (md.instantiationToken or "")),
        fmi_version=fmi_version,
        generation_tool=md.generationTool or "",
        model_identifier_cs=cs.modelIdentifier if cs is not None else None,
        model_identifier_me=me.modelIdentifier if me is not None else None,
        platforms=platforms,
        has_binary=has_binary,
        variables=tuple(variables),
        states=tuple(states),
        derivatives=derivs,
        default_experiment=default,
        description=md.description or "",
    )


def _declared_fmi_version(path: Path) -> str:
    """The ``fmiVersion`` attribute of the root element (read before fmpy parses the rest)."""
    import xml.etree.ElementTree as ET

    try:
        with zipfile.ZipFile(path) as z, z.open("modelDescription.xml") as f:
            for _event, elem in ET.iterparse(f, events=("start",)):
                return str(elem.get("fmiVersion") or "")
    except ET.ParseError as exc:
        raise ModelDescriptionError(
            f"{path}: cannot parse modelDescription.xml ({exc}); the FMU's modelDescription.xml "
            f"is broken; re-export the FMU from its tool, or fix the XML by hand (unzip, edit "
            f"modelDescription.xml, zip again)."
        ) from exc
    return ""


def _read_model_description(path: Path):
    """``fmpy.read_model_description`` with its exceptions mapped to ours."""
    from fmpy import read_model_description

    fix = ("the FMU's modelDescription.xml is broken; re-export the FMU from its tool, or fix the "
           "XML by hand (unzip, edit modelDescription.xml, zip again)")
    try:
        from lxml import etree

        lxml_errors: tuple[type[BaseException], ...] = (etree.LxmlError,)
    except ImportError:  # pragma: no cover - lxml is a dependency of fmpy
        lxml_errors = ()
    try:
        return read_model_description(str(path), validate=False)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise NotAnFMUError(f"{path} is not a valid FMU archive ({exc}); re-export or "
                            f"re-download it.") from exc
    except lxml_errors as exc:
        raise ModelDescriptionError(f"{path}: cannot parse modelDescription.xml ({exc}); {fix}.") \
            from exc
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as exc:
        raise ModelDescriptionError(
            f"{path}: modelDescription.xml is inconsistent ({type(exc).__name__}: {exc}); {fix}."
        ) from exc
    except Exception as exc:  # fmpy raises plain Exception (unsupported version, bad types...)
        raise ModelDescriptionError(f"{path}: {exc}; {fix}.") from exc
