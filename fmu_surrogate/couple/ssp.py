"""SSP 1.0 system descriptions: ``.ssp`` archives with ``SystemStructure.ssd`` and the FMUs.

Written files validate against the SSP 1.0 schemas (fmpy's ``read_ssd`` checks them) and load in
libcosim.  Components are ``ssd:Component`` elements of type ``application/x-fmu-sharedlibrary``
whose FMUs live in ``resources/``; parameters are inline ``ssv:ParameterSet`` bindings;
connections are ``ssd:Connection`` elements, with an ``ssc:LinearTransformation`` where they
scale or shift their value.  Read, a parameter binding may also name an ``.ssv`` file and a
prefix; a value mapping other than linear, or a parameter mapping, is refused by name rather
than dropped.  SSP 1.0 has no notion of power bonds, so they are kept in an
``ssd:Annotations`` block of type ``org.fmu-surrogate.power-bonds`` that other tools ignore (the
bonds' connections are ordinary connections as well).

A surrogate component (:func:`~fmu_surrogate.couple.surrogates.surrogate_component`) is written
as its exported FMU (:func:`~fmu_surrogate.couple.surrogates.surrogate_fmu`), its start with it:
the parameter bindings hold the ``x_start[i]`` of an initial state the system gives it
(:func:`~fmu_surrogate.couple.surrogates.exported_start_values`, as a libcosim run sets them),
so the archive starts it where the system does; a start the exported FMU cannot take (an
initial rule other than its file's) is refused before anything is written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

from fmu_surrogate.couple.system import Component, Connection, CouplingError, PowerBond, System

__all__ = ["ANNOTATION_TYPE", "read_ssp", "system_structure", "write_ssp"]

NS = {
    "ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
    "ssc": "http://ssp-standard.org/SSP1/SystemStructureCommon",
    "ssv": "http://ssp-standard.org/SSP1/SystemStructureParameterValues",
}
ANNOTATION_TYPE = "org.fmu-surrogate.power-bonds"
_BOND_NS = "urn:fmu-surrogate:power-bonds"
for _k, _v in NS.items():
    ET.register_namespace(_k, _v)
ET.register_namespace("fs", _BOND_NS)


def _q(prefix: str, tag: str) -> str:
    return f"{{{NS.get(prefix, prefix)}}}{tag}"


def write_ssp(system: System, path: str | os.PathLike, name: str = "system",
              stop_time: float | None = None) -> Path:
    """Write ``system`` as an SSP 1.0 archive (FMUs copied into ``resources/``).

    Parameters
    ----------
    system : System
    path : path
        Output ``.ssp`` file.
    name : str
        System name.
    stop_time : float, optional
        Written as ``ssd:DefaultExperiment``.

    Returns
    -------
    Path

    Raises
    ------
    CouplingError
        The system has driven inputs or extra recorded variables, which SSP 1.0 cannot hold; a
        component has no FMU (a pH model only); a surrogate component starts by another rule
        than its file's, which its exported FMU cannot (module docs).
    """
    if system.inputs or system.record:
        raise CouplingError("SSP 1.0 has no form for driven inputs (" + ", ".join(system.inputs)
                            + ") or recorded variables; write the system with write_toml, or "
                            "give them as --input/--record on the command line.")
    fmus, bound = _fmus_and_bindings(system)
    path = Path(path)
    xml = _structure(system, fmus, bound, {c: f"resources/{c}.fmu" for c in fmus}, name,
                     stop_time)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("SystemStructure.ssd", xml)
        for cname, fmu in fmus.items():
            zf.write(fmu, f"resources/{cname}.fmu", compress_type=zipfile.ZIP_STORED)
    os.replace(tmp, path)
    return path


def system_structure(system: System, sources: dict[str, str], name: str = "system",
                     stop_time: float | None = None) -> bytes:
    """``SystemStructure.ssd`` of ``system`` (module docs): its components, each with the
    ``source`` URI given, their connectors and parameter bindings, the connections with their
    linear transformations, the power bonds as an annotation.

    Parameters
    ----------
    system : System
    sources : dict of str to str
        Component name -> the URI of its FMU (relative to the ``.ssd``, or absolute).
    name : str
        System name.
    stop_time : float, optional
        Written as ``ssd:DefaultExperiment``.

    Returns
    -------
    bytes
        The XML document (UTF-8).
    """
    return _structure(system, *_fmus_and_bindings(system), sources, name, stop_time)


def _structure(system: System, fmus: dict[str, Path], bound: dict[str, dict[str, float]],
               sources: dict[str, str], name: str, stop_time: float | None) -> bytes:
    """:func:`system_structure` from the components' FMUs and bindings (made once by the
    caller, :func:`_fmus_and_bindings`)."""
    from fmu_surrogate.couple.validation import describe

    root = ET.Element(_q("ssd", "SystemStructureDescription"), version="1.0", name=name)
    sysel = ET.SubElement(root, _q("ssd", "System"), name=name)
    elements = ET.SubElement(sysel, _q("ssd", "Elements"))
    used: dict[str, set[str]] = {c: set() for c in system.components}
    for c in system.all_connections():
        used[c.source[0]].add(c.source[1])
        used[c.target[0]].add(c.target[1])
    for cname in system.components:
        info = describe(fmus[cname])
        if missing := sorted(set(bound[cname]) - set(info.variables)):
            fix = ("export the surrogate again" if system.components[cname].surrogate is not None
                   else "set only variables its model description declares")
            raise CouplingError(f"component {cname!r}: its FMU {fmus[cname]} has no variables "
                                f"{missing} to bind; {fix}.")
        el = ET.SubElement(elements, _q("ssd", "Component"), name=cname,
                           type="application/x-fmu-sharedlibrary",
                           source=sources[cname])
        cons = ET.SubElement(el, _q("ssd", "Connectors"))
        for var in sorted(used[cname]):
            v = info.variables[var]
            ce = ET.SubElement(cons, _q("ssd", "Connector"), name=var, kind=v.causality)
            ET.SubElement(ce, _q("ssc", {"Real": "Real", "Integer": "Integer",
                                         "Boolean": "Boolean"}.get(v.type, "Real")))
        if bound[cname]:
            pbs = ET.SubElement(el, _q("ssd", "ParameterBindings"))
            pb = ET.SubElement(pbs, _q("ssd", "ParameterBinding"))
            pv = ET.SubElement(pb, _q("ssd", "ParameterValues"))
            ps = ET.SubElement(pv, _q("ssv", "ParameterSet"), version="1.0", name=f"{cname}_parameters")
            params = ET.SubElement(ps, _q("ssv", "Parameters"))
            for p, val in bound[cname].items():
                pe = ET.SubElement(params, _q("ssv", "Parameter"), name=p)
                t = info.variables[p].type
                tag = {"Integer": "Integer", "Boolean": "Boolean"}.get(t, "Real")
                sval = str(int(val)) if tag == "Integer" else (
                    str(bool(val)).lower() if tag == "Boolean" else repr(float(val)))
                ET.SubElement(pe, _q("ssv", tag), value=sval)
    conns = ET.SubElement(sysel, _q("ssd", "Connections"))
    for c in system.all_connections():
        ce = ET.SubElement(conns, _q("ssd", "Connection"), startElement=c.source[0],
                           startConnector=c.source[1], endElement=c.target[0],
                           endConnector=c.target[1])
        if c.transformed:
            ET.SubElement(ce, _q("ssc", "LinearTransformation"), factor=repr(c.factor),
                          offset=repr(c.offset))
    if system.bonds:
        ann = ET.SubElement(sysel, _q("ssd", "Annotations"))
        a = ET.SubElement(ann, _q("ssc", "Annotation"), type=ANNOTATION_TYPE)
        for b in system.bonds:
            be = ET.SubElement(a, f"{{{_BOND_NS}}}PowerBond", name=b.name,
                               effort=f"{'.'.join(b.effort.source)} -> {'.'.join(b.effort.target)}",
                               flow=f"{'.'.join(b.flow.source)} -> {'.'.join(b.flow.target)}")
            for comp_name, sign in b.power_into.items():
                ET.SubElement(be, f"{{{_BOND_NS}}}PowerInto", component=comp_name, sign=str(int(sign)))
    if stop_time is not None:
        ET.SubElement(root, _q("ssd", "DefaultExperiment"), startTime="0.0", stopTime=repr(float(stop_time)))
    return ET.tostring(root, encoding="UTF-8", xml_declaration=True)


def _fmus_and_bindings(system: System) -> tuple[dict[str, Path], dict[str, dict[str, float]]]:
    """Each component's FMU and the values its parameter bindings hold: its parameters, and for
    a surrogate component its exported FMU and the start values of the state the system gives
    it (module docs)."""
    from fmu_surrogate.couple.surrogates import exported_start_values, surrogate_fmu

    fmus, bound = {}, {}
    for cname, comp in system.components.items():
        if comp.surrogate is not None:
            fmus[cname] = Path(comp.path or surrogate_fmu(comp.surrogate))
            bound[cname] = {**comp.parameters, **exported_start_values(comp)}
        elif comp.path is None:
            raise CouplingError(f"component {cname!r} is a pH model without an FMU, which an SSP "
                                "archive cannot hold; give it as an FMU, or save its model "
                                "(fmu_surrogate.ph.save) and give it as a surrogate file "
                                "(surrogate_component).")
        else:
            fmus[cname], bound[cname] = Path(comp.path), dict(comp.parameters)
    return fmus, bound


def _float(el: ET.Element) -> float:
    for tag in ("Real", "Integer"):
        v = el.find(f"ssv:{tag}", NS)
        if v is not None:
            return float(v.get("value"))
    v = el.find("ssv:Boolean", NS)
    if v is not None:
        return 1.0 if v.get("value") in ("true", "1") else 0.0
    raise CouplingError(f"parameter {el.get('name')!r}: only Real, Integer and Boolean values are read.")


def _process_folder() -> str:
    """A folder for the FMUs of an SSP archive, removed when this process exits.

    The returned :class:`System` refers to the files, so they must live as long as the process
    may run it; named ``<pid>-ssp-…`` under the package's temporary parent, a folder of a process
    killed with SIGKILL goes at the next harvest or pool start
    (:func:`~fmu_surrogate.fmu.runner.tempdirs.remove_stale`).
    """
    import atexit

    from fmu_surrogate.fmu.runner.tempdirs import parents

    parent = parents()[0]
    parent.mkdir(parents=True, exist_ok=True)
    folder = tempfile.mkdtemp(prefix=f"{os.getpid()}-ssp-", dir=parent)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def read_ssp(path: str | os.PathLike, extract_dir: str | os.PathLike | None = None) -> System:
    """Read an SSP 1.0 archive (or an unpacked ``SystemStructure.ssd``) into a :class:`System`.

    Parameters
    ----------
    path : path
        ``.ssp`` archive or ``.ssd`` file (FMU sources relative to it).
    extract_dir : path, optional
        Where the archive's FMUs are unpacked (default: a temporary folder removed when the
        process exits).

    Raises
    ------
    CouplingError
        Not an SSP file, nested systems, or a component that is not an FMU.
    """
    path = Path(path)
    if path.suffix.lower() == ".ssd":
        base, xml = path.parent, path.read_bytes()
    else:
        try:
            with zipfile.ZipFile(path) as zf:
                xml = zf.read("SystemStructure.ssd")
                base = Path(extract_dir or _process_folder())
                for n in zf.namelist():
                    if n.startswith("resources/") and not n.endswith("/"):
                        out = (base / n).resolve()
                        if base.resolve() not in out.parents:
                            raise CouplingError(f"{path}: member {n!r} leaves the archive folder.")
                        out.parent.mkdir(parents=True, exist_ok=True)
                        with zf.open(n) as src, open(out, "wb") as dst:
                            shutil.copyfileobj(src, dst)
        except (zipfile.BadZipFile, KeyError, OSError) as exc:
            raise CouplingError(f"{path} is not an SSP archive with SystemStructure.ssd: {exc}") from exc
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise CouplingError(f"{path}: SystemStructure.ssd is not well-formed XML: {exc}") from exc
    sysel = root.find("ssd:System", NS)
    if sysel is None:
        raise CouplingError(f"{path}: no ssd:System element.")
    comps = {}
    for el in sysel.findall("ssd:Elements/*", NS):
        name = el.get("name")
        if el.tag != _q("ssd", "Component"):
            raise CouplingError(f"{path}: element {name!r} is a nested {el.tag.split('}')[-1]}; "
                                "only flat systems of FMU components are supported.")
        typ = el.get("type", "application/x-fmu-sharedlibrary")
        if typ != "application/x-fmu-sharedlibrary":
            raise CouplingError(f"{path}: component {name!r} has type {typ!r}, not an FMU.")
        params = {}
        for pb in el.findall("ssd:ParameterBindings/ssd:ParameterBinding", NS):
            params.update(_binding(pb, base, path, name))
        comps[name] = Component(name, base / el.get("source"), params)
    conns = [_connection(c, path) for c in sysel.findall("ssd:Connections/ssd:Connection", NS)]
    by_ends = {(c.source, c.target): c for c in conns}
    bonds = []
    for a in sysel.findall("ssd:Annotations/ssc:Annotation", NS):
        if a.get("type") != ANNOTATION_TYPE:
            continue
        for be in a.findall(f"{{{_BOND_NS}}}PowerBond"):
            eff, flo = (Connection.parse(*[s.strip() for s in be.get(k).split("->")])
                        for k in ("effort", "flow"))
            # the bond's connections as the ssd:Connections give them (with their factors)
            eff, flo = (by_ends.get((c.source, c.target), c) for c in (eff, flo))
            signs = {p.get("component"): int(p.get("sign")) for p in be.findall(f"{{{_BOND_NS}}}PowerInto")}
            bonds.append(PowerBond(be.get("name"), eff, flo, signs))
    bonded = {c for b in bonds for c in (b.effort, b.flow)}
    return System(comps, [c for c in conns if c not in bonded], bonds)


def _binding(pb: ET.Element, base: Path, path: Path, component: str) -> dict[str, float]:
    """The values of one ``ssd:ParameterBinding``: inline, or from the ``.ssv`` file its
    ``source`` names (relative to the ``.ssd``); names that start with its ``prefix`` bind
    without it, others not at all (SSP 1.0); a parameter mapping is refused."""
    if pb.find("ssd:ParameterMapping", NS) is not None:
        raise CouplingError(f"{path}: the parameters of component {component!r} are renamed by "
                            "an ssd:ParameterMapping, which fmu-surrogate does not apply; name "
                            "them as the FMU does in the parameter set.")
    source = pb.get("source")
    if source:
        file = base / source.removeprefix("file:")
        try:
            pset = ET.parse(file).getroot()
        except (OSError, ET.ParseError) as exc:
            raise CouplingError(f"{path}: the parameter values of component {component!r} "
                                f"({source}) cannot be read: {exc}") from exc
    else:
        pset = pb.find("ssd:ParameterValues/ssv:ParameterSet", NS)
        if pset is None:
            return {}
    prefix = pb.get("prefix", "")
    return {p.get("name")[len(prefix):]: _float(p)
            for p in pset.findall("ssv:Parameters/ssv:Parameter", NS)
            if p.get("name", "").startswith(prefix)}


#: Children of an ``ssd:Connection`` that do not change the value it carries.
_INERT = {_q("ssd", "ConnectionGeometry"), _q("ssd", "Annotations"), _q("ssc", "Annotations")}


def _connection(el: ET.Element, path: Path) -> Connection:
    """An ``ssd:Connection`` with its ``ssc:LinearTransformation``; refuse other mappings."""
    factor, offset = 1.0, 0.0
    for child in el:
        if child.tag == _q("ssc", "LinearTransformation"):
            try:
                factor = float(child.get("factor", "1.0"))
                offset = float(child.get("offset", "0.0"))
            except ValueError as exc:
                raise CouplingError(f"{path}: a linear transformation of the connection to "
                                    f"{el.get('endElement')}.{el.get('endConnector')} is not a "
                                    f"number: {exc}") from exc
        elif child.tag not in _INERT:
            raise CouplingError(
                f"{path}: the connection {el.get('startElement')}.{el.get('startConnector')} -> "
                f"{el.get('endElement')}.{el.get('endConnector')} maps its value by "
                f"{child.tag.split('}')[-1]}, which fmu-surrogate does not apply (only "
                f"ssc:LinearTransformation); replace it by a linear transformation or remove it.")
    return Connection((el.get("startElement"), el.get("startConnector")),
                      (el.get("endElement"), el.get("endConnector")), factor, offset)
