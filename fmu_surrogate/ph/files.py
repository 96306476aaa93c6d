"""Surrogate files: one versioned JSON document per pH system, validated by a JSON Schema.

``save(system, path)`` writes, ``load(path)`` reads back an equal system — bit for bit: every
float64 is written with Python's shortest round-trip representation, which JSON carries exactly.
The document (schema ``fmu_surrogate/ph/schema/surrogate-2.json``)::

    {"format": "fmu-surrogate surrogate", "version": 2,
     "kind": "LinearPH" | "PHDAE" | "NonlinearPH" | <registered kind>,
     "system": {"n_states", "n_inputs", "E", "J", "R", "B", ["Q"], ["P", "S", "N"],
                ["effort": {"kind": "kernel" | <registered effort>, "data": {...}},
                 "hamiltonian": "effort" | null], ["dissipation": {...}],
                ["port_dissipation": {...}]},
     "names": {"inputs": [...], "outputs": [...], "states": [...]},
     "units": {...},                                          (optional)
     "ports": {PortMap.to_dict()}, "x0": [...],               (a PortedSystem only)
     "delayed_feedthrough": {"inputs_before": [...] | null},  (version 3 on)
     "late_outputs": true,                                    (version 4 on)
     "first_outputs": [...],                                  (version 5 on)
     "system": {..., "max_step": h},                          (version 6 on)
     "delayed_feedthrough": {..., "first_feedthrough": [[...]]},  (version 7 only)
     "delayed_feedthrough": {..., "fast_feedthrough": [[...]]},   (version 8 on)
     "ports": {..., "Cdx": [[...]]},                          (version 9 on)
     "initial": "equilibrium",                                (version 10 on)
     "provenance": {"source_fmu": {"name", "guid", "sha256"}, "dataset": {"file", "sha256"},
                    "method", "settings", "package_version", "created",
                    ["parameters": {name: value}],        (the source's, at identification)
                    ["input_starts": {name: value}],      (the source's inputs' start values)
                    ["held_inputs": {name: value}]},      (inputs that never changed in the data)
     "checksums": {"system": sha256, "names": sha256, ...}}

The feedthrough ``P, S, N`` is written when it is nonzero (absent = zero).  A
:class:`~fmu_surrogate.ph.PortedSystem` (a drop-in surrogate) is its core ``system`` plus its
wiring ``ports`` and operating point ``x0``; :func:`load` returns a ``PortedSystem`` for such a
file; one whose wiring has a static nonlinear law of its inputs (``ports.law``, a
:class:`~fmu_surrogate.ph.StaticLaw`) or whose outputs are those of the point before
(``late_outputs``) is written as version 4 (schema ``surrogate-4.json``), one whose outputs
before the first step are fixed values (``first_outputs``) as version 5, a NonlinearPH with a
longest step of its scheme (``max_step``) as version 6, one whose outputs also see the change
of the inputs from those held over the step before (``fast_feedthrough``) as version 8 (version
7 held the same response fitted at the first point only, ``first_feedthrough``: read as the
fast feedthrough, which it is), one whose outputs read the rate of its core's state
(``ports.Cdx``, written when nonzero) as version 9, one that starts at the equilibrium of its
first inputs (``initial``) as version 10, one
whose outputs see the inputs of the step before (``delayed_feedthrough``) otherwise as version 3
(``surrogate-3.json``), every other file as version 2: each file in the oldest version that holds
its content, so that older readers read what they can and refuse the rest as newer.  A :class:`~fmu_surrogate.ph.NonlinearPH` is written as a PHDAE with ``E = I`` whose
effort is a ``convex`` one, plus its state-dependent ``dissipation`` (``R`` is then the constant
part ``R₀``) and, when it has one, its nonlinear feedthrough ``port_dissipation``.  Version-1
files (no feedthrough, no ports, ``n_states ≥ 1``) are read as before.

What is refused, with the field named: a file that is not JSON (truncated, corrupted), another
format, a newer version, anything the schema rejects (missing or mistyped fields), matrices of
the wrong shape, NaN or infinite numbers, a section whose content no longer matches its checksum
(edited by hand after it was written), and matrices that break the pH structure (J skew, R ⪰ 0,
Q ≻ 0 — the :class:`StructureError` of the system).  Nothing is ever unpickled.

New surrogate kinds (e.g. the discovered-law efforts of equation discovery) register an effort
codec with :func:`register_effort`; the file format stays the same.  An effort's ``data`` carries
its own version, by the same rule: a ``convex`` effort is version 1 unless it holds a gap ridge
(version 2), so an older reader refuses such an effort as a newer version.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from fmu_surrogate.errors import FmuSurrogateError
from fmu_surrogate.ph.dissipation import PowerDissipation
from fmu_surrogate.ph.efforts.convex import ConvexEffort
from fmu_surrogate.ph.efforts.kernel import KernelEffort
from fmu_surrogate.ph.efforts.known import PartlyKnownEffort, PolynomialEffort
from fmu_surrogate.ph.efforts.term import TermEffort
from fmu_surrogate.ph.interconnect import CompositeEffort
from fmu_surrogate.ph.nonlinear import NonlinearPH
from fmu_surrogate.ph.port_map import PortMap
from fmu_surrogate.ph.ports import PortedSystem
from fmu_surrogate.ph.structure import StructureError
from fmu_surrogate.ph.system import PHDAE, LinearEffort, LinearPH

__all__ = ["FORMAT", "VERSION", "SurrogateFileError", "load", "register_effort", "save"]

FORMAT = "fmu-surrogate surrogate"
VERSION = 10

#: effort kind -> (class, to_dict, from_dict)
_EFFORTS: dict[str, tuple[type, Callable[[Any], dict], Callable[[dict], Any]]] = {}


class SurrogateFileError(FmuSurrogateError, ValueError):
    """A surrogate file that cannot be read as it is; the message names the field."""


def register_effort(kind: str, cls: type, to_dict: Callable[[Any], dict],
                    from_dict: Callable[[dict], Any]) -> None:
    """Make an effort class storable in surrogate files.

    Parameters
    ----------
    kind : str
        Name written as ``system.effort.kind``.
    cls : type
        The effort class (``isinstance`` decides which codec saves an effort).
    to_dict, from_dict : callable
        JSON-ready description of an effort and its inverse (exact for floats).
    """
    _EFFORTS[kind] = (cls, to_dict, from_dict)


def _effort_codec(effort: Any) -> tuple[str, dict]:
    for kind, (cls, to_dict, _) in _EFFORTS.items():
        if isinstance(effort, cls):
            return kind, to_dict(effort)
    raise SurrogateFileError(
        f"cannot save an effort of type {type(effort).__name__}: only efforts with a registered "
        f"codec ({', '.join(sorted(_EFFORTS))}) are storable; register one with "
        "fmu_surrogate.ph.files.register_effort.")


def _composite_to_dict(c: CompositeEffort) -> dict:
    parts = []
    for part, H in zip(c.parts, c.hamiltonians):
        kind, data = _effort_codec(part)
        parts.append({"kind": kind, "data": data, "hamiltonian": H is not None})
    return {"sizes": list(c.sizes), "parts": parts}


def _composite_from_dict(d: dict) -> CompositeEffort:
    parts, hams = [], []
    for p in d["parts"]:
        codec = _EFFORTS.get(p["kind"])
        if codec is None:
            raise SurrogateFileError(f"unknown effort kind {p['kind']!r} of a part")
        eff = codec[2](p["data"])
        parts.append(eff)
        hams.append(getattr(eff, "hamiltonian", None) if p.get("hamiltonian") else None)
    return CompositeEffort(parts, d["sizes"], hams)


register_effort("kernel", KernelEffort, KernelEffort.to_dict, KernelEffort.from_dict)
register_effort("linear", LinearEffort, LinearEffort.to_dict, LinearEffort.from_dict)
register_effort("composite", CompositeEffort, _composite_to_dict, _composite_from_dict)
register_effort("terms", TermEffort, TermEffort.to_dict, TermEffort.from_dict)
register_effort("convex", ConvexEffort, ConvexEffort.to_dict, ConvexEffort.from_dict)


def _partly_known_to_dict(e: PartlyKnownEffort) -> dict:
    kind, data = _effort_codec(e.learned)
    return {"learned": {"kind": kind, "data": data}, "known": e.known.to_dict()}


def _partly_known_from_dict(d: dict) -> PartlyKnownEffort:
    codec = _EFFORTS.get(d["learned"]["kind"])
    if codec is None:
        raise SurrogateFileError(
            f"unknown effort kind {d['learned']['kind']!r} of the learned part")
    return PartlyKnownEffort(codec[2](d["learned"]["data"]), PolynomialEffort.from_dict(d["known"]))


register_effort("polynomial", PolynomialEffort, PolynomialEffort.to_dict,
                PolynomialEffort.from_dict)
register_effort("partly_known", PartlyKnownEffort, _partly_known_to_dict,
                _partly_known_from_dict)


def _schema(version: int) -> dict:
    name = f"schema/surrogate-{version}.json"
    return json.loads(resources.files("fmu_surrogate.ph").joinpath(name).read_text())


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _digest(obj: Any) -> str:
    return hashlib.sha256(_canonical(obj)).hexdigest()


def _matrix(a: np.ndarray) -> list:
    return np.asarray(a, dtype=float).tolist()


def _effort_entry(system: PHDAE) -> dict[str, Any]:
    kind, data = _effort_codec(system.effort_function)
    return {"kind": kind, "data": data}


def _document(obj: PHDAE | PortedSystem, provenance: Mapping[str, Any] | None,
              units: Mapping[str, Any] | None) -> dict[str, Any]:
    import fmu_surrogate

    system = obj.system if isinstance(obj, PortedSystem) else obj
    if not isinstance(system, PHDAE):
        raise SurrogateFileError(f"can only save pH systems (LinearPH, PHDAE, PortedSystem), "
                                 f"got a {type(obj).__name__}.")
    body: dict[str, Any] = {
        "n_states": int(system.n_states), "n_inputs": int(system.n_inputs),
        "E": _matrix(system.E), "J": _matrix(system.J), "R": _matrix(system.R),
        "B": _matrix(system.B),
    }
    if system.has_feedthrough:
        body.update(P=_matrix(system.P), S=_matrix(system.S), N=_matrix(system.N))
    if isinstance(system, LinearPH):
        kind = "LinearPH"
        body["Q"] = _matrix(system.Q)
    else:
        kind = "NonlinearPH" if isinstance(system, NonlinearPH) else "PHDAE"
        body["effort"] = _effort_entry(system)
        body["hamiltonian"] = "effort" if system.has_hamiltonian else None
        if isinstance(system, NonlinearPH):
            body["dissipation"] = system.dissipation.to_dict()
            if system.port_dissipation.n_terms:
                body["port_dissipation"] = system.port_dissipation.to_dict()
            if system.max_step is not None:
                body["max_step"] = system.max_step
    names = {"inputs": list(system.input_names), "outputs": list(system.output_names),
             "states": list(system.state_names)}
    prov = {"package_version": fmu_surrogate.__version__,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    prov.update(dict(provenance or {}))
    delayed = isinstance(obj, PortedSystem) and obj.delayed_feedthrough
    late = isinstance(obj, PortedSystem) and obj.late_outputs
    law = isinstance(obj, PortedSystem) and obj.ports.law is not None
    # the oldest version that holds the content: version 2 readers read every other file
    first = obj.first_outputs if isinstance(obj, PortedSystem) else None
    d_f = obj.fast_feedthrough if isinstance(obj, PortedSystem) else None
    rate = isinstance(obj, PortedSystem) and obj.ports.reads_rate
    steady = isinstance(obj, PortedSystem) and obj.initial == "equilibrium"
    version = (10 if steady else 9 if rate else 8 if d_f is not None else 6 if "max_step" in body
               else 5 if first is not None else 4 if law or late else 3 if delayed else 2)
    doc: dict[str, Any] = {"format": FORMAT, "version": version, "kind": kind,
                           "system": body, "names": names}
    if units:
        doc["units"] = {k: list(v) for k, v in units.items()}
    if isinstance(obj, PortedSystem):
        doc["ports"] = obj.ports.to_dict()
        doc["x0"] = obj.x0.tolist()
        if delayed:
            before = obj.inputs_before
            doc["delayed_feedthrough"] = {
                "inputs_before": None if before is None else before.tolist()}
            if d_f is not None:
                doc["delayed_feedthrough"]["fast_feedthrough"] = d_f.tolist()
        if late:
            doc["late_outputs"] = True
        if first is not None:
            doc["first_outputs"] = first.tolist()
        if steady:
            doc["initial"] = "equilibrium"
    doc["provenance"] = prov
    doc["checksums"] = {k: _digest(doc[k]) for k in ("system", "names", "units", "ports", "x0",
                                                     "delayed_feedthrough", "late_outputs",
                                                     "first_outputs", "initial")
                         if k in doc}
    return doc


def save(system: PHDAE | PortedSystem, path: str | os.PathLike, *,
         provenance: Mapping[str, Any] | None = None,
         units: Mapping[str, Any] | None = None) -> Path:
    """Write a pH surrogate as a versioned JSON document (exact round trip with :func:`load`).

    Parameters
    ----------
    system : LinearPH, PHDAE or PortedSystem
        The surrogate (a PHDAE's effort must have a registered codec, e.g. ``KernelEffort``);
        a PortedSystem is saved with its port wiring and operating point.
    path : path
        The ``.json`` file (written atomically).
    provenance : mapping, optional
        ``source_fmu`` (name, guid, sha256), ``dataset`` (file, sha256), ``method``,
        ``settings``; the package version and creation time are added.
    units : mapping, optional
        Units by group, e.g. ``{"inputs": ["N", "N"], "outputs": ["m/s", "m/s"]}``.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    SurrogateFileError
        The system has an effort no codec knows, or non-finite entries.
    """
    try:
        doc = _document(system, provenance, units)
        text = json.dumps(doc, indent=1, allow_nan=False)
    except ValueError as exc:
        if isinstance(exc, SurrogateFileError):
            raise
        raise SurrogateFileError(f"cannot save this surrogate: it contains NaN or infinite "
                                 f"numbers ({exc}).") from None
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _path_text(error: Any) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "(document)"


def _reject_constant(value: str) -> float:
    raise SurrogateFileError(f"the file contains {value}, which is not a number JSON allows; "
                             f"the file is damaged or was edited by hand.")


def _array(doc: dict, key: str, shape: tuple[int, int], where: str) -> np.ndarray:
    a = np.asarray(doc[key], dtype=float)
    if a.size == 0 and 0 in shape:  # JSON writes an empty matrix as [] or [[], …]
        a = a.reshape(shape)
    if a.shape != shape:
        raise SurrogateFileError(f"field '{where}.{key}' has shape {a.shape}, expected {shape} "
                                 f"(from n_states/n_inputs).")
    if not np.all(np.isfinite(a)):
        raise SurrogateFileError(f"field '{where}.{key}' contains non-finite numbers.")
    return a


def load(path: str | os.PathLike) -> PHDAE | PortedSystem:
    """Read a surrogate written by :func:`save` (any version up to the current one).

    Parameters
    ----------
    path : path
        The ``.json`` file.

    Returns
    -------
    LinearPH, PHDAE or PortedSystem
        Equal to the saved system (bitwise arrays), with its port/state names (a PortedSystem
        with its wiring and operating point); ``.provenance`` holds the provenance record.

    Raises
    ------
    SurrogateFileError
        Not JSON, another format, a newer version, a schema violation, wrong shapes, non-finite
        numbers or a section that does not match its checksum — with the field named.
    StructureError
        The matrices break the pH structure.
    """
    import jsonschema

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SurrogateFileError(f"{path}: no such surrogate file.") from None
    except UnicodeDecodeError as exc:
        raise SurrogateFileError(f"{path} is not a text file ({exc}); it is damaged.") from None
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise SurrogateFileError(f"{path} is not valid JSON (line {exc.lineno}, column "
                                 f"{exc.colno}: {exc.msg}); the file is truncated or damaged: "
                                 f"save the surrogate again.") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise SurrogateFileError(f"{path}: field 'format' is {found!r}, not {FORMAT!r}: this is "
                                 f"not an fmu-surrogate surrogate file.")
    version = doc.get("version")
    if isinstance(version, int) and version > VERSION:
        import fmu_surrogate

        raise SurrogateFileError(
            f"{path}: field 'version' is {version}, newer than this fmu-surrogate "
            f"({fmu_surrogate.__version__}) reads (version {VERSION}); upgrade fmu-surrogate.")
    # each version by its own schema (an invalid version is reported by the current one)
    known = type(version) is int and 1 <= version <= VERSION
    validator = jsonschema.Draft202012Validator(_schema(version if known else VERSION))
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        raise SurrogateFileError(f"{path}: field '{_path_text(e)}' is invalid: {e.message}.")
    for section, digest in doc["checksums"].items():
        if section not in doc:
            raise SurrogateFileError(f"{path}: field 'checksums.{section}' names a section that "
                                     f"is missing: the file was edited.")
        if _digest(doc[section]) != digest:
            raise SurrogateFileError(
                f"{path}: field '{section}' does not match its checksum: it was changed after "
                f"the surrogate was saved (by hand or by damage); save it again from the "
                f"identified system.")
    system = _build(doc, path)
    system.provenance = dict(doc["provenance"])
    system.units = dict(doc.get("units", {}))
    if "ports" not in doc:
        return system
    try:
        ports = PortMap.from_dict(doc["ports"])
    except StructureError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise SurrogateFileError(f"{path}: field 'ports' is invalid: {exc}") from None
    delay = doc.get("delayed_feedthrough")
    ported = PortedSystem(system, ports, doc.get("x0"), delayed_feedthrough=delay is not None,
                          inputs_before=None if delay is None else delay["inputs_before"],
                          late_outputs=bool(doc.get("late_outputs", False)),
                          first_outputs=doc.get("first_outputs"),
                          fast_feedthrough=None if delay is None
                          else _fast_feedthrough(delay, len(ports.output_names),
                                                 len(ports.input_names)),
                          initial=doc.get("initial", "state"))
    ported.provenance, ported.units = system.provenance, system.units
    return ported


def _fast_feedthrough(delay: dict, k_out: int, k_in: int) -> np.ndarray | None:
    """The ``fast_feedthrough`` of a ``delayed_feedthrough`` section (version 7: its
    ``first_feedthrough``; JSON keeps no shape for an empty matrix), or ``None``."""
    d_f = delay.get("fast_feedthrough", delay.get("first_feedthrough"))
    return None if d_f is None else np.reshape(d_f, (k_out, k_in)) if np.size(d_f) == 0 else d_f


def _build(doc: dict, path: Path) -> PHDAE:
    s = doc["system"]
    n, m = s["n_states"], s["n_inputs"]
    E, J, R = (_array(s, k, (n, n), "system") for k in ("E", "J", "R"))
    B = _array(s, "B", (n, m), "system")
    names = doc["names"]
    kw: dict[str, Any] = {"input_names": names["inputs"], "output_names": names["outputs"],
                          "state_names": names["states"]}
    for key, shape in (("P", (n, m)), ("S", (m, m)), ("N", (m, m))):
        if key in s:
            kw[key] = _array(s, key, shape, "system")
    # a StructureError of the system (J not skew, R not PSD, Q not SPD, names) passes through
    if doc["kind"] == "LinearPH":
        if "Q" not in s:
            raise SurrogateFileError(f"{path}: field 'system.Q' is missing for a LinearPH.")
        Q = _array(s, "Q", (n, n), "system")
        return LinearPH(J, R, Q, B, E=E, **kw)
    if doc["kind"] in ("PHDAE", "NonlinearPH"):
        eff = s.get("effort")
        if eff is None:
            raise SurrogateFileError(f"{path}: field 'system.effort' is missing for a PHDAE.")
        codec = _EFFORTS.get(eff["kind"])
        if codec is None:
            raise SurrogateFileError(
                f"{path}: field 'system.effort.kind' is {eff['kind']!r}, which this "
                f"fmu-surrogate does not know (known: {', '.join(sorted(_EFFORTS))}).")
        try:
            effort = codec[2](eff["data"])
        except (KeyError, TypeError, ValueError) as exc:
            raise SurrogateFileError(f"{path}: field 'system.effort.data' is invalid: "
                                     f"{exc}") from None
        H = getattr(effort, "hamiltonian", None) if s.get("hamiltonian") == "effort" else None
        if s.get("hamiltonian") == "effort" and H is None:
            raise SurrogateFileError(f"{path}: field 'system.hamiltonian' says the effort "
                                     f"provides H, but a {eff['kind']!r} effort has none.")
        if doc["kind"] == "NonlinearPH":
            return _nonlinear(s, E, J, R, B, effort, kw, path)
        return PHDAE(E, J, R, B, effort=effort, hamiltonian=H, **kw)
    raise SurrogateFileError(f"{path}: field 'kind' is {doc['kind']!r}; known kinds: LinearPH, "
                             f"PHDAE, NonlinearPH.")


def _nonlinear(s: dict, E: np.ndarray, J: np.ndarray, R: np.ndarray, B: np.ndarray,
               effort: Any, kw: dict[str, Any], path: Path) -> NonlinearPH:
    if not np.array_equal(E, np.eye(E.shape[0])):
        raise SurrogateFileError(f"{path}: field 'system.E' must be the identity for a "
                                 f"NonlinearPH.")
    if "dissipation" not in s:
        raise SurrogateFileError(f"{path}: field 'system.dissipation' is missing for a "
                                 f"NonlinearPH.")
    parts = {}
    for key in ("dissipation", "port_dissipation"):
        if key not in s:
            continue
        try:
            parts[key] = PowerDissipation.from_dict(s[key])
        except StructureError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise SurrogateFileError(f"{path}: field 'system.{key}' is invalid: "
                                     f"{exc}") from None
    return NonlinearPH(J, R, B, effort, parts["dissipation"],
                       port_dissipation=parts.get("port_dissipation"),
                       max_step=s.get("max_step"), **kw)

