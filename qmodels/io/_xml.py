"""JMT's XML formats: structural validation and shared writing helpers.

JMT (Bertoli, Casale & Serazzi, "JMT: performance engineering tools for
system modeling", ACM SIGMETRICS Performance Evaluation Review 36(4), 2009)
defines its files by the schemas ``JMTmodel.xsd`` (JMVA),
``Archive.xsd`` and ``SIMmodeldefinition.xsd`` (JSIMg), part of JMT's source
(``jmt/common/xml``).  They are not shipped here: :func:`validate_jmva` and
:func:`validate_jsimg` check a document against a structural description of
the elements, attributes, attribute types and content models written here
from the published definitions.  Also here: safe XML parsing and the number
and name helpers that :mod:`qmodels.io.jmva` and :mod:`qmodels.io.jsimg`
share.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

from ..errors import InvalidValueError, ModelFileError, UnsupportedModelError
from ..model.network import Network

__all__ = ["validate_jmva", "validate_jsimg"]

_XSI = "http://www.w3.org/2001/XMLSchema-instance"


# ---------------------------------------------------------------------------
# structural validation (from JMT's JMTmodel.xsd, SIMmodeldefinition.xsd,
# Archive.xsd)
# ---------------------------------------------------------------------------

_DOUBLE = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$"
                     r"|^\s*(Infinity|-Infinity|NaN|INF|-INF)\s*$")


def _is_type(value: str, typ: str) -> bool:
    if typ == "string":
        return True
    if typ == "jdouble":  # xs:double, or "Infinity"/"-Infinity" (Archive.xsd)
        return bool(_DOUBLE.match(value))
    if typ in ("int", "long", "integer"):
        return bool(re.fullmatch(r"\s*[-+]?\d+\s*", value))
    if typ == "positiveInteger":
        return bool(re.fullmatch(r"\s*\+?0*[1-9]\d*\s*", value))
    if typ == "boolean":
        return value.strip() in ("true", "false", "1", "0")
    raise ValueError(typ)


class _Spec:
    """One element: its attributes ``{name: (required, type)}``, a content
    model as a regular expression over its children's tag names (each
    followed by a space), and the type of its text (None: no text)."""

    def __init__(self, attrs=None, content="", text=None, opaque=False):
        self.attrs = attrs or {}
        self.content = re.compile(content) if content is not None else None
        self.text = text
        self.opaque = opaque


def _a(*required, **optional):
    out = {}
    for r in required:
        name, _, typ = r.partition(":")
        out[name] = (True, typ or "string")
    for name, typ in optional.items():
        out[name] = (False, typ)
    return out


_OPAQUE = _Spec(opaque=True)
_PER_CLASS_DOUBLE = _Spec(_a("customerclass"), "", text="jdouble")

_JMVA_SPECS = {
    # JMTmodel.xsd: <model> and its parameters
    "model": _Spec(_a(jaba="boolean"),
                   r"(description )?parameters (blockingRegion )*(whatIf )?(solutions )*"
                   r"(algParams )?"),
    "description": _Spec(text="string"),
    "parameters": _Spec(content=r"classes stations (ReferenceStation )?(algParams )?"),
    "classes": _Spec(_a("number:positiveInteger"), r"((closedclass|openclass) )+"),
    "closedclass": _Spec(_a("name", "population:jdouble")),
    "openclass": _Spec(_a("name", "rate:jdouble")),
    "stations": _Spec(_a("number:positiveInteger"),
                      r"((delaystation|listation|ldstation) )+"),
    "delaystation": _Spec(_a("name"), r"servicetimes visits "),
    "listation": _Spec(_a("name", servers="integer"), r"servicetimes visits "),
    "ldstation": _Spec(_a("name", servers="integer"), r"servicetimes visits "),
    "servicetimes": _Spec(content=r"(servicetime )+"),
    "servicetime": _PER_CLASS_DOUBLE,
    "ldservicetimes": _Spec(content=r"(servicetimes )+"),
    "ldservicetime": _Spec(_a("customerclass"), "", text="string"),
    "visits": _Spec(content=r"(visit )+"),
    "visit": _PER_CLASS_DOUBLE,
    "blockingRegion": _OPAQUE, "whatIf": _OPAQUE, "solutions": _OPAQUE,
    "ReferenceStation": _OPAQUE, "algParams": _OPAQUE,
}

_PARAM_CONTENT = r"((refClass )*subParameter )+|value "
_SIM_SPECS = {
    # Archive.xsd
    "archive": _Spec(_a("name", "timestamp"), r"sim (jmodel )?(results )?(solutions )?"),
    "jmodel": _OPAQUE, "results": _OPAQUE, "solutions": _OPAQUE,
    # SIMmodeldefinition.xsd
    "sim": _Spec(_a("name", debug="boolean", seed="long", maxTime="jdouble",
                    maxSimulated="jdouble", polling="jdouble", maxSamples="int",
                    maxEvents="int", logPath="string", logDelimiter="string",
                    logReplaceMode="int", logExecutionTimestamp="boolean",
                    disableStatisticStop="boolean", logDecimalSeparator="string"),
                 r"(userClass )+(node )+(measure )*(connection )+(blockingRegion )*(preload )?"),
    "userClass": _Spec(_a("name", "type", "priority", softDeadline="string",
                          referenceSource="string", customers="string",
                          cacheMissClass="string", cacheHitClass="string")),
    "node": _Spec(_a("name"), r"(classSoftDeadlines )?(quantumSize )?(quantumSwitchoverTime )?"
                              r"(delayOff )?(setUp )?(section ){0,3}"),
    "classSoftDeadlines": _OPAQUE, "quantumSize": _OPAQUE, "quantumSwitchoverTime": _OPAQUE,
    "delayOff": _OPAQUE, "setUp": _OPAQUE,
    "section": _Spec(_a("className"), r"(parameter )*"),
    "parameter": _Spec(_a("classPath", name="string", array="boolean"),
                       rf"({_PARAM_CONTENT})?"),
    "subParameter": _Spec(_a("name", "classPath", array="boolean"), rf"({_PARAM_CONTENT})?"),
    "refClass": _Spec(text="string"),
    "value": _Spec(text="string"),
    "measure": _Spec(_a("name", "alpha:jdouble", "precision:jdouble", "type", "referenceNode",
                        "referenceUserClass", verbose="boolean", nodeType="string",
                        serverType="string")),
    "connection": _Spec(_a("source", "target")),
    "blockingRegion": _Spec(_a("name", type="string"),
                            r"(regionNode )+globalConstraint (globalMemoryConstraint )?"
                            r"(classConstraint )*(classMemoryConstraint )*(dropRules )*"
                            r"(classWeight )*(classSize )*(classSoftDeadline )*"
                            r"(groupConstraint )*(groupMemoryConstraint )*(groupClassList )*"),
    "regionNode": _Spec(_a("nodeName"), "", text="string"),
    "globalConstraint": _Spec(_a("maxJobs:jdouble")),
    "globalMemoryConstraint": _Spec(_a("maxMemory:jdouble")),
    "classConstraint": _Spec(_a("jobClass", "maxJobsPerClass:jdouble")),
    "classMemoryConstraint": _Spec(_a("jobClass", "maxMemoryPerClass:jdouble")),
    "dropRules": _Spec(_a("jobClass", "dropThisClass:boolean")),
    "classWeight": _Spec(_a("jobClass", "weight:jdouble")),
    "classSize": _Spec(_a("jobClass", "size:jdouble")),
    "classSoftDeadline": _Spec(_a("jobClass", "softDeadline:jdouble")),
    "groupConstraint": _OPAQUE, "groupMemoryConstraint": _OPAQUE, "groupClassList": _OPAQUE,
    "preload": _Spec(content=r"(stationPopulations )+"),
    "stationPopulations": _Spec(_a("stationName"), r"(classPopulation )+"),
    "classPopulation": _Spec(_a("refClass", "population")),
}


def _spec_for(specs, tag, parent):
    # JMTmodel.xsd reuses the tag "servicetimes" inside an ldstation's
    # servicetimes for the per-class ';'-separated list
    if tag == "servicetimes" and parent == "ldstation":
        return specs["ldservicetimes"]
    if tag == "servicetimes" and parent == "servicetimes":
        return specs["ldservicetime"]
    return specs.get(tag)


def _steps(children) -> list[str]:
    """Path steps of sibling elements: ``tag`` when the tag is unique among
    them, else ``tag[n]`` (1-based, as XPath)."""
    totals: dict[str, int] = {}
    for c in children:
        totals[c.tag] = totals.get(c.tag, 0) + 1
    counts: dict[str, int] = {}
    out = []
    for c in children:
        counts[c.tag] = counts.get(c.tag, 0) + 1
        out.append(f"{c.tag}[{counts[c.tag]}]" if totals[c.tag] > 1 else c.tag)
    return out


def _check(el, specs, path, errors, parent=None):
    tag = el.tag
    spec = _spec_for(specs, tag, parent)
    if spec is None:
        errors.append((path, f"element <{tag}> is not allowed here"))
        return
    if spec.opaque:
        return
    for name, value in el.attrib.items():
        if name.startswith("{"):  # xsi:noNamespaceSchemaLocation and the like
            continue
        if name not in spec.attrs:
            errors.append((path, f"attribute {name!r} is not allowed on <{tag}>"))
        elif not _is_type(value, spec.attrs[name][1]):
            errors.append((path, f"attribute {name}={value!r} is not of type "
                                 f"{spec.attrs[name][1]}"))
    for name, (required, _) in spec.attrs.items():
        if required and name not in el.attrib:
            errors.append((path, f"<{tag}> needs attribute {name!r}"))
    children = list(el)
    seq = "".join(c.tag + " " for c in children)
    if spec.content is not None and not spec.content.fullmatch(seq):
        errors.append((path, f"<{tag}> children [{seq.strip()}] do not match its content "
                             f"model ({spec.content.pattern})"))
    text = (el.text or "").strip()
    if spec.text is None:
        if text:
            errors.append((path, f"<{tag}> has text {text[:20]!r} where none is allowed"))
    elif not _is_type(el.text or "", spec.text):
        errors.append((path, f"<{tag}> text {text!r} is not of type {spec.text}"))
    for c, step in zip(children, _steps(children), strict=False):
        _check(c, specs, f"{path}/{step}", errors, tag)


def _parse_xml(text: str, source: str):
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise ModelFileError([("(file)", "DOCTYPE/ENTITY declarations are not accepted")],
                             source)
    try:
        return ET.fromstring(text)
    except ET.ParseError as e:
        line, col = getattr(e, "position", (0, 0))
        raise ModelFileError([(f"line {line}, column {col + 1}", f"not well-formed XML: {e}")],
                             source) from None


def validate_jmva(xml: str | ET.Element) -> list[tuple[str, str]]:
    """Structural errors of a JMVA document against JMT's ``JMTmodel.xsd``
    (elements, attributes, their types and content models) plus the
    consistency JMT relies on: ``number`` attributes equal the counts, and
    every station lists each class exactly once.  Empty when valid."""
    root = xml if isinstance(xml, ET.Element) else _parse_xml(xml, "jmva")
    errors: list[tuple[str, str]] = []
    if root.tag != "model":
        return [(root.tag, "the root element of a JMVA file is <model>")]
    _check(root, _JMVA_SPECS, "model", errors)
    if errors:
        return errors
    params = root.find("parameters")
    classes = [c.get("name") for c in params.find("classes")]
    for what in ("classes", "stations"):
        el = params.find(what)
        if int(el.get("number")) != len(el):
            errors.append((f"model/parameters/{what}", f"number={el.get('number')} but "
                                                       f"{len(el)} are listed"))
    if len(set(classes)) != len(classes):
        errors.append(("model/parameters/classes", "duplicate class names"))
    st_els = list(params.find("stations"))
    for st, step in zip(st_els, _steps(st_els), strict=False):
        for part in ("servicetimes", "visits"):
            named = [e.get("customerclass") for e in st.find(part)]
            if sorted(named) != sorted(classes):
                errors.append((f"model/parameters/stations/{step}/{part}",
                               f"lists classes {named}, expected each of {classes} once"))
    return errors


def validate_jsimg(xml: str | ET.Element) -> list[tuple[str, str]]:
    """Structural errors of a JSIMg document against JMT's ``Archive.xsd``
    and ``SIMmodeldefinition.xsd``, plus the references JMT resolves by
    name (connections, routing targets, reference stations, region nodes,
    per-class parameters naming user classes).  Empty when valid."""
    root = xml if isinstance(xml, ET.Element) else _parse_xml(xml, "jsimg")
    if root.tag != "archive":
        return [(root.tag, "the root element of a JSIMg file is <archive>")]
    errors: list[tuple[str, str]] = []
    _check(root, _SIM_SPECS, "archive", errors)
    if errors:
        return errors
    sim = root.find("sim")
    nodes = [n.get("name") for n in sim.findall("node")]
    classes = [c.get("name") for c in sim.findall("userClass")]
    if len(set(nodes)) != len(nodes):
        errors.append(("archive/sim", "duplicate node names"))
    conns = sim.findall("connection")
    for c, step in zip(conns, _steps(conns), strict=False):
        for end in ("source", "target"):
            if c.get(end) not in nodes:
                errors.append((f"archive/sim/{step}", f"{end} {c.get(end)!r} is not a node"))
    ucs = sim.findall("userClass")
    for uc, step in zip(ucs, _steps(ucs), strict=False):
        ref = uc.get("referenceSource")
        if ref is not None and ref not in nodes:
            errors.append((f"archive/sim/{step}", f"referenceSource {ref!r} is not a node"))
    for r in sim.iter("refClass"):
        if r.text not in classes:
            errors.append(("archive/sim", f"refClass {r.text!r} is not a user class"))
    for sp in sim.iter("subParameter"):
        if sp.get("name") == "stationName":
            v = sp.find("value")
            if v is not None and v.text not in nodes:
                errors.append(("archive/sim", f"routing names {v.text!r}, which is not a node"))
    for rn in sim.iter("regionNode"):
        if rn.get("nodeName") not in nodes:
            errors.append(("archive/sim/blockingRegion", f"regionNode {rn.get('nodeName')!r} is "
                                                         "not a node"))
    return errors


# ---------------------------------------------------------------------------
# helpers of both writers
# ---------------------------------------------------------------------------

def _num(x) -> str:
    x = float(x)
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(x)


def _numeric(net: Network, fmt: str):
    if net.is_symbolic:
        raise UnsupportedModelError(
            f"{fmt} needs numbers: this network has sympy symbols; substitute values first "
            "(qmodels.substitute)")


#: What a JMT export may leave out when the caller says so (``drop=``).
DROPPABLE = ("power",)


def _dropped(net: Network, drop, fmt: str) -> list[str]:
    """The notes of what ``net`` loses in a ``fmt`` file, with ``drop`` the
    features the caller lets the export leave out (a name or names from
    :data:`DROPPABLE`).  JMT has no power: a station with ``power`` is
    refused by name unless ``"power" in drop``."""
    drop = (drop,) if isinstance(drop, str) else tuple(drop or ())
    for d in drop:
        if d not in DROPPABLE:
            raise InvalidValueError(
                f"drop: {d!r} is not a feature a JMT export can leave out "
                f"(it can drop: {', '.join(map(repr, DROPPABLE))})")
    powered = [s.name for s in net.stations if getattr(s, "power", None) is not None]
    if not powered:
        return []
    if "power" not in drop:
        raise UnsupportedModelError(
            f"station {powered[0]!r}: power has no {fmt} equivalent (JMT computes no energy); "
            "save as .yaml or .json to keep it, or pass drop=('power',) to leave it out "
            "(qmodels convert: --drop power)")
    return [f"power of {', '.join(map(repr, powered))} dropped (JMT has no power)"]


def _unique(base: str, taken: set) -> str:
    name, i = base, 1
    while name in taken:
        i += 1
        name = f"{base}.{i}"
    taken.add(name)
    return name
