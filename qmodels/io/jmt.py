"""Interchange with JMT (Java Modelling Tools): JMVA and JSIMg files.

JMT (Bertoli, Casale & Serazzi, "JMT: performance engineering tools for
system modeling", ACM SIGMETRICS Performance Evaluation Review 36(4), 2009)
reads two XML formats that this module writes:

* **JMVA** (``.jmva``), its exact/approximate MVA solver: classes, stations
  and a service time and visit ratio per (station, class), as defined by
  JMT's published schema ``JMTmodel.xsd``.  :func:`to_jmva` writes one,
  :func:`from_jmva` reads one back into a :class:`~qmodels.model.Network`
  (it solves to the same numbers: the tests check it).
* **JSIMg** (``.jsimg``), its discrete-event simulator: an ``archive`` with a
  ``sim`` model of nodes made of sections (queue, server, router), user
  classes, connections, measures and finite capacity regions, as defined
  by ``Archive.xsd`` and ``SIMmodeldefinition.xsd``.  :func:`to_jsimg`
  writes one.

Those schemas are part of JMT's source (``jmt/common/xml``).  They are not
shipped here: :func:`validate_jmva` and :func:`validate_jsimg` check a
document against a structural description of the elements, attributes,
attribute types and content models written here from the published
definitions, for every element this module emits or reads (elements JMT
writes that are only results -- ``solutions``, ``results``, ``whatIf``,
``jmodel`` -- are accepted without inspection).

What maps, and what is refused
------------------------------
Everything that cannot be expressed raises
:class:`~qmodels.errors.UnsupportedModelError` naming the station, class or
pool and the feature.  Nothing that changes a solution is dropped silently:
JMVA, like every product-form solver, uses only mean service times, and the
exported file's ``description`` lists the shapes (and never-binding
capacities) it leaves out; power, which no JMT solver uses, is not written.

==============================  =================  =========================
qmodels                         JMVA               JSIMg
==============================  =================  =========================
Closed / Open class             closedclass /      userClass closed (preload
                                openclass          at the reference) / open
think time Z                    delaystation       Delay node before the
                                ``Z.<class>``      reference station
visits / demands                visit, servicetime random routing with the
                                                   same visit ratios (as the
                                                   qmodels simulator)
routing                         visits (traffic    Router, empirical
                                equations)         probabilities
per-class service               servicetime        per-class ServiceStrategy
Delay                           delaystation       Delay section
Queue, 1 server, FCFS or PS     listation          Server (FCFS), PSServer
                                                   (egalitarian PS)
Queue, c servers                ldstation, single  Server maxJobs = c
                                closed class only
LoadDependent                   ldstation, single  refused
                                closed class only
capacity                        refused if it can  Queue size; BAS blocking
                                bind               (closed), drop (open
                                                   arrivals from the source)
distribution                    dropped (noted)    Exponential, Deterministic,
                                                   Erlang, HyperExp (balanced
                                                   means), Uniform, Lognormal;
                                                   Empirical refused
interarrival                    dropped (noted)    Source service strategy
TokenPool                       refused            finite capacity region
                                                   (blockingRegion) over the
                                                   pool's span, every class;
                                                   refused otherwise
power                           dropped            dropped
symbolic values                 refused            refused
==============================  =================  =========================

The load-dependent service times of an ``ldstation`` are written, as LINE's
JMT writer does (Casale et al., LINE solver, ``writeJMVA``), as the service
time with n = 1, 2, ..., N jobs present, ``S / a(n)``, separated by ``;``.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import numpy as np

from ..errors import ModelFileError, UnsupportedModelError
from ..model import distributions as dist
from ..model.network import SINK, SOURCE, Closed, Delay, LoadDependent, Network, Open, Queue

__all__ = [
    "to_jmva",
    "from_jmva",
    "save_jmva",
    "load_jmva",
    "to_jsimg",
    "save_jsimg",
    "validate_jmva",
    "validate_jsimg",
]

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
    for c, step in zip(children, _steps(children)):
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
    for st, step in zip(st_els, _steps(st_els)):
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
    for c, step in zip(sim.findall("connection"), _steps(sim.findall("connection"))):
        for end in ("source", "target"):
            if c.get(end) not in nodes:
                errors.append((f"archive/sim/{step}", f"{end} {c.get(end)!r} is not a node"))
    for uc, step in zip(sim.findall("userClass"), _steps(sim.findall("userClass"))):
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
# JMVA
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


def _unique(base: str, taken: set) -> str:
    name, i = base, 1
    while name in taken:
        i += 1
        name = f"{base}.{i}"
    taken.add(name)
    return name


def to_jmva(net: Network, *, description: str | None = None) -> str:
    """The JMVA XML of a product-form network (see the module docstring for
    what maps and what is refused).

    Raises
    ------
    UnsupportedModelError
        Symbolic values, token pools, a finite capacity that can bind,
        multi-server or load-dependent stations with more than one class or
        an open class (JMVA's load-dependent stations are single-class
        closed).
    """
    _numeric(net, "JMVA")
    if net.pools:
        raise UnsupportedModelError(
            f"token pool {net.pools[0].name!r}: JMVA (product form) has no held resources; "
            "use to_jsimg (finite capacity regions)")
    total = sum(c.population for c in net.closed_classes)
    notes = []
    for s in net.stations:
        if s.capacity is not None:
            if net.open_classes or s.capacity < total:
                raise UnsupportedModelError(
                    f"station {s.name!r}: capacity {s.capacity} can bind, and JMVA has no finite "
                    "capacity; use to_jsimg")
            notes.append(f"capacity of {s.name!r} dropped (never binds)")
        if s.distribution is not None and not isinstance(s.distribution, dist.Exponential):
            notes.append(f"service-time shape of {s.name!r} ({s.distribution.name}) dropped: "
                         "JMVA uses means")
        multi = isinstance(s, LoadDependent) or (isinstance(s, Queue) and s.servers > 1)
        if multi and (len(net.classes) != 1 or not net.is_closed):
            what = "load-dependent" if isinstance(s, LoadDependent) else f"{s.servers}-server"
            raise UnsupportedModelError(
                f"station {s.name!r}: a {what} station is a JMVA ldstation, which JMVA solves "
                "for a single closed class only")
    for c in net.open_classes:
        if c.interarrival is not None and not isinstance(c.interarrival, dist.Exponential):
            notes.append(f"inter-arrival shape of {c.name!r} dropped: JMVA uses the rate")

    root = ET.Element("model", {f"{{{_XSI}}}noNamespaceSchemaLocation": "JMTmodel.xsd"})
    text = description if description is not None else (
        f"{net.name or 'qmodels network'} (exported by qmodels)"
        + ("; " + "; ".join(notes) if notes else ""))
    ET.SubElement(root, "description").text = text
    params = ET.SubElement(root, "parameters")
    classes = ET.SubElement(params, "classes", number=str(len(net.classes)))
    for c in net.classes:
        if isinstance(c, Closed):
            ET.SubElement(classes, "closedclass", name=c.name, population=_num(c.population))
        else:
            ET.SubElement(classes, "openclass", name=c.name, rate=_num(c.arrival_rate))
    taken = set(net.station_names) | set(net.class_names)
    think = [(i, c) for i, c in enumerate(net.classes)
             if isinstance(c, Closed) and float(c.think_time) > 0]
    stations = ET.SubElement(params, "stations", number=str(len(net.stations) + len(think)))
    V = np.asarray(net.visits, dtype=float)
    S = np.asarray(net.service_times, dtype=float)

    def per_class(st_el, times, visits):
        sts = ET.SubElement(st_el, "servicetimes")
        for c, t in zip(net.classes, times):
            if isinstance(t, str):
                ET.SubElement(sts, "servicetimes", customerclass=c.name).text = t
            else:
                ET.SubElement(sts, "servicetime", customerclass=c.name).text = _num(t)
        vis = ET.SubElement(st_el, "visits")
        for c, v in zip(net.classes, visits):
            ET.SubElement(vis, "visit", customerclass=c.name).text = _num(v)

    for k, s in enumerate(net.stations):
        if isinstance(s, Delay):
            el = ET.SubElement(stations, "delaystation", name=s.name)
            per_class(el, S[:, k], V[:, k])
        elif isinstance(s, Queue) and s.servers == 1:
            el = ET.SubElement(stations, "listation", name=s.name, servers="1")
            per_class(el, S[:, k], V[:, k])
        else:
            el = ET.SubElement(stations, "ldstation", name=s.name, servers="1")
            N = max(int(total), 1)
            ld = ";".join(_num(S[0, k] / float(s.rate_multiplier(n))) for n in range(1, N + 1))
            per_class(el, [ld], V[:, k])
    for i, c in think:
        el = ET.SubElement(stations, "delaystation", name=_unique(f"Z.{c.name}", taken))
        per_class(el, [float(c.think_time) if j == i else 0.0 for j in range(len(net.classes))],
                  [1.0 if j == i else 0.0 for j in range(len(net.classes))])
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + ET.tostring(
        root, encoding="unicode") + "\n"


def save_jmva(net: Network, path, **options) -> None:
    """Write :func:`to_jmva` of ``net`` to ``path`` (``.jmva``)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(to_jmva(net, **options))


def _float(text, path, errors):
    try:
        v = float(text)
    except (TypeError, ValueError):
        errors.append((path, f"expected a number, got {text!r}"))
        return None
    return v


def from_jmva(xml: str, *, source: str = "jmva") -> Network:
    """A :class:`~qmodels.model.Network` from JMVA XML text.

    Each class gets ``visits`` and, where its service time differs from the
    station's, its own ``service``.  ``delaystation`` becomes
    :class:`~qmodels.model.Delay`, ``listation`` a
    :class:`~qmodels.model.Queue` (``servers`` as given), ``ldstation`` a
    :class:`~qmodels.model.LoadDependent` with rate multipliers
    ``a(n) = S(1) / S(n)`` (single closed class).  A think-time station
    written by :func:`to_jmva` comes back as a delay station (same
    solution; the class's R then includes it).

    Raises
    ------
    ModelFileError
        Not well-formed, not valid against the JMVA structure, or values
        that are not numbers; every error with its XML path.
    UnsupportedModelError
        An ``ldstation`` with several classes or an open class.
    """
    root = _parse_xml(xml, source)
    errors = validate_jmva(root)
    if errors:
        raise ModelFileError(errors, source)
    params = root.find("parameters")
    cls_els = list(params.find("classes"))
    names = [c.get("name") for c in cls_els]
    st_els = list(params.find("stations"))
    V: dict[str, dict[str, float]] = {n: {} for n in names}
    S: dict[str, dict[str, float]] = {n: {} for n in names}
    stations = []
    from ..errors import ModelError
    from ..model.network import Queue as _Queue

    pending = []
    for el, step in zip(st_els, _steps(st_els)):
        path = f"model/parameters/stations/{step}"
        sname = el.get("name")
        for j, v in enumerate(el.find("visits"), 1):
            x = _float(v.text, f"{path}/visits/visit[{j}]", errors)
            if x is not None and x > 0:
                V[v.get("customerclass")][sname] = x
        ld = None
        for j, t in enumerate(el.find("servicetimes"), 1):
            cn = t.get("customerclass")
            if el.tag == "ldstation":
                vals = [_float(x, f"{path}/servicetimes/servicetimes[{j}]", errors)
                        for x in (t.text or "").split(";") if x.strip()]
                if sname in V[cn]:
                    if ld is not None:
                        raise UnsupportedModelError(
                            f"station {sname!r}: a load-dependent station visited by several "
                            "classes cannot be imported (one rate shape per station)")
                    ld = (cn, vals)
            else:
                x = _float(t.text, f"{path}/servicetimes/servicetime[{j}]", errors)
                if x is not None:
                    S[cn][sname] = x
        pending.append((el, sname, ld, path))
    if errors:
        raise ModelFileError(errors, source)
    for el, sname, ld, path in pending:
        try:
            if el.tag == "ldstation":
                if ld is None:  # no class visits it: any class's times give its shape
                    first = el.find("servicetimes")[0]
                    ld = (first.get("customerclass"),
                          [_float(x, path, errors) for x in (first.text or "").split(";")
                           if x.strip()])
                if not ld[1] or any(v is None or v <= 0 for v in ld[1]):
                    raise UnsupportedModelError(
                        f"station {sname!r}: ldstation without positive service times for the "
                        "class that visits it")
                cn, vals = ld
                if any(c.tag == "openclass" for c in cls_els):
                    raise UnsupportedModelError(f"station {sname!r}: an ldstation with an open "
                                                "class cannot be imported")
                S[cn][sname] = vals[0]
                stations.append(LoadDependent(
                    sname, vals[0], rate_multipliers=tuple(vals[0] / v for v in vals)))
                continue
            own = [S[c][sname] for c in names if sname in V[c]]
            base = own[0] if own else next(iter(S[c][sname] for c in names), 0.0)
            if el.tag == "delaystation":
                stations.append(Delay(sname, base))
            else:
                stations.append(_Queue(sname, base, servers=int(el.get("servers", "1"))))
        except ModelError as e:
            errors.append((path, str(e)))
    classes = []
    for c, step in zip(cls_els, _steps(cls_els)):
        cn = c.get("name")
        path = f"model/parameters/classes/{step}"
        st_service = {s.name: s.service for s in stations}
        own = {k: t for k, t in S[cn].items() if k in V[cn] and t != st_service.get(k)}
        kw = {"visits": V[cn]}
        if own:
            kw["service"] = own
        try:
            if c.tag == "closedclass":
                pop = float(c.get("population"))
                classes.append(Closed(cn, int(pop) if pop.is_integer() else pop, **kw))
            else:
                classes.append(Open(cn, float(c.get("rate")), **kw))
        except ModelError as e:
            errors.append((path, str(e)))
    if errors:
        raise ModelFileError(errors, source)
    desc = root.find("description")
    name = ""
    if desc is not None and desc.text and " (exported by qmodels)" in desc.text:
        name = desc.text.split(" (exported by qmodels)")[0]
        name = "" if name == "qmodels network" else name
    try:
        return Network(stations, classes, name=name)
    except ModelError as e:
        raise ModelFileError([("model/parameters", str(e))], source) from None


def load_jmva(path) -> Network:
    """Read a ``.jmva`` file (size-limited, UTF-8) with :func:`from_jmva`."""
    from .modelfile import _read

    text, source = _read(path)
    return from_jmva(text, source=source)


# ---------------------------------------------------------------------------
# JSIMg
# ---------------------------------------------------------------------------

_D = "java.lang.Double"
_NS = "jmt.engine.NetStrategies"


def _sub(parent, name, class_path, value=None, array=False):
    attrs = {"classPath": class_path, "name": name}
    if array:
        attrs["array"] = "true"
    el = ET.SubElement(parent, "subParameter", attrs)
    if value is not None:
        ET.SubElement(el, "value").text = value
    return el


def _param(parent, name, class_path, value=None, array=False):
    attrs = {"classPath": class_path, "name": name}
    if array:
        attrs["array"] = "true"
    el = ET.SubElement(parent, "parameter", attrs)
    if value is not None:
        ET.SubElement(el, "value").text = value
    return el


def _distribution_el(parent, shape, mean: float, who: str):
    """A ServiceTimeStrategy with a JMT distribution of the given mean and
    the shape of a qmodels distribution (JMT's ``jmt.engine.random``)."""
    strat = _sub(parent, "ServiceTimeStrategy", f"{_NS}.ServiceStrategies.ServiceTimeStrategy")
    shape = shape if shape is not None else dist.Exponential()
    m = float(mean)
    if m <= 0 or isinstance(shape, dist.Deterministic):
        _sub(strat, "Deterministic", "jmt.engine.random.DeterministicDistr")
        par = _sub(strat, "distrPar", "jmt.engine.random.DeterministicDistrPar")
        _sub(par, "t", _D, _num(max(m, 0.0)))
        return
    if isinstance(shape, dist.Exponential):
        _sub(strat, "Exponential", "jmt.engine.random.Exponential")
        par = _sub(strat, "distrPar", "jmt.engine.random.ExponentialPar")
        _sub(par, "lambda", _D, _num(1.0 / m))
    elif isinstance(shape, dist.Erlang):
        _sub(strat, "Erlang", "jmt.engine.random.Erlang")
        par = _sub(strat, "distrPar", "jmt.engine.random.ErlangPar")
        _sub(par, "alpha", _D, _num(shape.k / m))
        _sub(par, "r", "java.lang.Long", str(int(shape.k)))
    elif isinstance(shape, dist.HyperExponential):
        # balanced means (Whitt 1982), as qmodels.distributions.HyperExponential
        c2 = shape.scv
        p = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
        _sub(strat, "Hyperexponential", "jmt.engine.random.HyperExp")
        par = _sub(strat, "distrPar", "jmt.engine.random.HyperExpPar")
        _sub(par, "p", _D, _num(p))
        _sub(par, "lambda1", _D, _num(2.0 * p / m))
        _sub(par, "lambda2", _D, _num(2.0 * (1.0 - p) / m))
    elif isinstance(shape, dist.Uniform) and shape.spread == 0:
        _sub(strat, "Deterministic", "jmt.engine.random.DeterministicDistr")
        par = _sub(strat, "distrPar", "jmt.engine.random.DeterministicDistrPar")
        _sub(par, "t", _D, _num(m))
    elif isinstance(shape, dist.Uniform):
        _sub(strat, "Uniform", "jmt.engine.random.Uniform")
        par = _sub(strat, "distrPar", "jmt.engine.random.UniformPar")
        _sub(par, "min", _D, _num(m * (1.0 - shape.spread)))
        _sub(par, "max", _D, _num(m * (1.0 + shape.spread)))
    elif isinstance(shape, dist.Lognormal):
        s2 = math.log1p(shape.scv)
        _sub(strat, "Lognormal", "jmt.engine.random.Lognormal")
        par = _sub(strat, "distrPar", "jmt.engine.random.LognormalPar")
        _sub(par, "mu", _D, _num(math.log(m) - s2 / 2.0))
        _sub(par, "sigma", _D, _num(math.sqrt(s2)))
    else:
        raise UnsupportedModelError(
            f"{who}: an {shape.name} distribution has no JSIMg equivalent here (JMT replays "
            "empirical data from trace files); use a parametric shape")


def _routing_rows(net: Network, i: int, c, think: str | None, ref: str | None):
    """{node: {node: p}} of class i, with "source"/"sink" and the think
    node; classes given by visits or demands are routed at random with
    their visit ratios (as qmodels.sim: see qmodels/sim/flatten.py)."""
    rows: dict[str, dict[str, float]] = {}
    if c.routing is not None:
        for src, row in c.routing.items():
            out = {}
            for dst, p in row.items():
                p = float(p)
                if p <= 0:
                    continue
                tgt = think if (think is not None and dst == ref) else dst
                out[tgt] = out.get(tgt, 0.0) + p
            rows[src] = out
        if think is not None:
            rows[think] = {ref: 1.0}
        return rows
    V = np.asarray(net.visits[i], dtype=float)
    visited = [(net.station_names[k], float(V[k])) for k in range(len(V)) if V[k] > 0]
    if not visited:
        raise UnsupportedModelError(f"class {c.name!r} visits no station")
    T = sum(v for _, v in visited)
    if isinstance(c, Closed):
        w = list(visited) + ([(think, 1.0)] if think is not None else [])
        tw = sum(v for _, v in w)
        row = {n: v / tw for n, v in w}
        for n, _ in w:
            rows[n] = dict(row)
        return rows
    if T >= 1:
        rows[SOURCE] = {n: v / T for n, v in visited}
        for n, _ in visited:
            rows[n] = {**{m: (1 - 1 / T) * v / T for m, v in visited}, SINK: 1 / T}
    else:
        rows[SOURCE] = {**{n: v for n, v in visited}, SINK: 1 - T}
        for n, _ in visited:
            rows[n] = {SINK: 1.0}
    return {src: {dst: p for dst, p in row.items() if p > 0} for src, row in rows.items()}


def _pool_span(rows_by_class: dict, pool) -> list:
    span = [pool.acquire]
    seen = {pool.acquire}
    frontier = [pool.acquire]
    while frontier:
        s = frontier.pop()
        if s == pool.release:
            continue
        for rows in rows_by_class.values():
            for d in rows.get(s, {}):
                if d not in seen and d not in (SINK,):
                    seen.add(d)
                    span.append(d)
                    frontier.append(d)
    if pool.release not in seen:
        raise UnsupportedModelError(
            f"token pool {pool.name!r}: station {pool.release!r} (release) cannot be reached "
            f"from {pool.acquire!r} (acquire)")
    for cname, rows in rows_by_class.items():
        for src, row in rows.items():
            for d in row:
                inside_src = src in seen and src != pool.release
                if d in seen and not inside_src and not (d == pool.acquire and src not in seen):
                    raise UnsupportedModelError(
                        f"token pool {pool.name!r}: class {cname!r} routes {src!r} -> {d!r} into "
                        "the pool's stations other than through its acquire station, or from "
                        "its release station back in; a JMT finite capacity region would hold "
                        "the token differently")
    return span


def to_jsimg(net: Network, *, seed: int | None = None, max_samples: int = 1_000_000,
             confidence: float = 0.99, precision: float = 0.03, timestamp: str = "") -> str:
    """The JSIMg (JMT simulator) XML of ``net`` (see the module docstring
    for what maps and what is refused).

    Parameters
    ----------
    seed : int, optional
        JMT's random seed (``sim seed``); omitted, JMT draws one.
    max_samples : int
        JMT's ``maxSamples``.
    confidence, precision : float
        Of every measure: confidence level (``alpha = 1 - confidence``) and
        relative half-width JMT stops at.
    timestamp : str
        The archive's ``timestamp`` attribute (default empty: the output is
        a function of the model only).

    Raises
    ------
    UnsupportedModelError
        Symbolic values, load-dependent stations, empirical distributions,
        a finite capacity fed by an open class from another station, token
        pools JMT regions cannot express.
    """
    _numeric(net, "JSIMg")
    for s in net.stations:
        if isinstance(s, LoadDependent):
            raise UnsupportedModelError(
                f"station {s.name!r}: load-dependent service is not exported to JSIMg (a "
                "c-server queue is Queue(servers=c))")
    classes = list(net.classes)
    cnames = [c.name for c in classes]
    taken = set(net.station_names) | set(cnames) | {SOURCE, SINK}
    think = {}
    refs = {}
    for i, c in enumerate(classes):
        if isinstance(c, Closed):
            ref = c.reference
            V = np.asarray(net.visits[i], dtype=float)
            if ref is None or V[net.station_names.index(ref)] <= 0:
                ref = next((net.station_names[k] for k in range(len(V)) if V[k] > 0), None)
            refs[c.name] = ref
            if float(c.think_time) > 0:
                think[c.name] = _unique(f"think.{c.name}", taken)
    rows = {c.name: _routing_rows(net, i, c, think.get(c.name), refs.get(c.name))
            for i, c in enumerate(classes)}
    for s in net.stations:
        if s.capacity is None:
            continue
        for c in net.open_classes:
            feeders = [src for src, row in rows[c.name].items() if s.name in row and src != SOURCE]
            if feeders:
                raise UnsupportedModelError(
                    f"station {s.name!r}: open class {c.name!r} reaches its finite capacity from "
                    f"station {feeders[0]!r}; qmodels blocks such a job, JMT would drop it")
    spans = {}
    for p in net.pools:
        if p.classes is not None and set(p.classes) != set(cnames):
            raise UnsupportedModelError(
                f"token pool {p.name!r}: used by classes {list(p.classes)} only, but a JMT finite "
                "capacity region counts every class")
        if any(c.routing is None for c in classes):
            raise UnsupportedModelError(
                f"token pool {p.name!r}: every class needs routing for the stations the pool "
                "spans to be known")
        spans[p.name] = _pool_span(rows, p)
    owner = {}
    for pname, span in spans.items():
        for s in span:
            if s in owner:
                raise UnsupportedModelError(
                    f"token pools {owner[s]!r} and {pname!r} overlap at station {s!r}: JMT "
                    "regions cannot overlap")
            owner[s] = pname

    archive = ET.Element("archive", {
        "name": (net.name or "qmodels") + ".jsimg", "timestamp": timestamp,
        f"{{{_XSI}}}noNamespaceSchemaLocation": "Archive.xsd"})
    sim_attrs = {"name": net.name or "qmodels", "disableStatisticStop": "false",
                 "maxSamples": str(int(max_samples)),
                 f"{{{_XSI}}}noNamespaceSchemaLocation": "SIMmodeldefinition.xsd"}
    if seed is not None:
        sim_attrs["seed"] = str(int(seed))
    sim = ET.SubElement(archive, "sim", sim_attrs)
    has_open = bool(net.open_classes)
    for c in classes:
        attrs = {"name": c.name, "priority": "0"}
        if isinstance(c, Closed):
            attrs.update(type="closed", customers=str(int(c.population)),
                         referenceSource=refs[c.name] or net.station_names[0])
        else:
            attrs.update(type="open", referenceSource=SOURCE)
        ET.SubElement(sim, "userClass", attrs)
    S = np.asarray(net.service_times, dtype=float)

    def router(node_el, node_name):
        sec = ET.SubElement(node_el, "section", className="Router")
        par = _param(sec, "RoutingStrategy", f"{_NS}.RoutingStrategy", array=True)
        for c in classes:
            ET.SubElement(par, "refClass").text = c.name
            row = rows[c.name].get(node_name)
            if not row:
                _sub(par, "Random", f"{_NS}.RoutingStrategies.RandomStrategy")
                continue
            emp = _sub(par, "Probabilities", f"{_NS}.RoutingStrategies.EmpiricalStrategy")
            arr = _sub(emp, "EmpiricalEntryArray", "jmt.engine.random.EmpiricalEntry", array=True)
            for dst, p in row.items():
                entry = _sub(arr, "EmpiricalEntry", "jmt.engine.random.EmpiricalEntry")
                _sub(entry, "stationName", "java.lang.String", dst)
                _sub(entry, "probability", _D, _num(p))

    def queue_section(node_el, capacity):
        sec = ET.SubElement(node_el, "section", className="Queue")
        _param(sec, "size", "java.lang.Integer", str(int(capacity)) if capacity else "-1")
        drops = _param(sec, "dropStrategies", "java.lang.String", array=True)
        for c in classes:
            ET.SubElement(drops, "refClass").text = c.name
            _sub(drops, "dropStrategy", "java.lang.String",
                 "BAS blocking" if isinstance(c, Closed) else "drop")
        _param(sec, "FCFSstrategy", f"{_NS}.QueueGetStrategies.FCFSstrategy")
        put = _param(sec, "QueuePutStrategy", f"{_NS}.QueuePutStrategy", array=True)
        for c in classes:
            ET.SubElement(put, "refClass").text = c.name
            _sub(put, "TailStrategy", f"{_NS}.QueuePutStrategies.TailStrategy")

    def service(par, means, shape, who):
        for c, m in zip(classes, means):
            ET.SubElement(par, "refClass").text = c.name
            _distribution_el(par, shape, m, f"{who}, class {c.name!r}")

    if has_open:
        src = ET.SubElement(sim, "node", name=SOURCE)
        sec = ET.SubElement(src, "section", className="RandomSource")
        par = _param(sec, "ServiceStrategy", f"{_NS}.ServiceStrategy", array=True)
        for c in classes:
            ET.SubElement(par, "refClass").text = c.name
            if isinstance(c, Open) and float(c.arrival_rate) > 0:
                _distribution_el(par, c.interarrival, 1.0 / float(c.arrival_rate),
                                 f"class {c.name!r}: interarrival")
            else:
                _sub(par, "ServiceStrategy", f"{_NS}.ServiceStrategy", "null")
        ET.SubElement(src, "section", className="ServiceTunnel")
        router(src, SOURCE)
    for k, s in enumerate(net.stations):
        node = ET.SubElement(sim, "node", name=s.name)
        queue_section(node, s.capacity)
        who = f"station {s.name!r}"
        ps = isinstance(s, Queue) and s.discipline == "ps"
        if isinstance(s, Delay):
            sec = ET.SubElement(node, "section", className="Delay")
        else:
            sec = ET.SubElement(node, "section", className="PSServer" if ps else "Server")
            _param(sec, "maxJobs", "java.lang.Integer", str(int(s.servers)))
            nv = _param(sec, "numberOfVisits", "java.lang.Integer", array=True)
            for c in classes:
                ET.SubElement(nv, "refClass").text = c.name
                _sub(nv, "numberOfVisits", "java.lang.Integer", "1")
        par = _param(sec, "ServiceStrategy", f"{_NS}.ServiceStrategy", array=True)
        service(par, S[:, k], s.distribution, who)
        if ps:
            # egalitarian processor sharing, equal weights (as JMT writes PS)
            strat = _param(sec, "PSStrategy", f"{_NS}.PSStrategy", array=True)
            weights = _param(sec, "serviceWeights", _D, array=True)
            for c in classes:
                ET.SubElement(strat, "refClass").text = c.name
                _sub(strat, "EPSStrategy", f"{_NS}.PSStrategies.EPSStrategy")
                ET.SubElement(weights, "refClass").text = c.name
                _sub(weights, "serviceWeight", _D, "1.0")
        router(node, s.name)
    for cname, tnode in think.items():
        node = ET.SubElement(sim, "node", name=tnode)
        queue_section(node, None)
        sec = ET.SubElement(node, "section", className="Delay")
        par = _param(sec, "ServiceStrategy", f"{_NS}.ServiceStrategy", array=True)
        service(par, [float(c.think_time) if c.name == cname else 0.0 for c in classes], None,
                f"think time of class {cname!r}")
        router(node, tnode)
    if has_open:
        sink = ET.SubElement(sim, "node", name=SINK)
        ET.SubElement(sink, "section", className="JobSink")

    alpha = _num(1.0 - confidence)
    prec = _num(precision)

    def measure(mtype, node, cname, node_type):
        ET.SubElement(sim, "measure", {
            "alpha": alpha, "name": f"{node}_{cname}_{mtype}" if node else f"{cname}_{mtype}",
            "nodeType": node_type, "precision": prec, "referenceNode": node,
            "referenceUserClass": cname, "type": mtype, "verbose": "false"})

    for c in classes:
        measure("System Throughput", "", c.name, "")
        measure("System Response Time", "", c.name, "")
    V = np.asarray(net.visits, dtype=float)
    for k, s in enumerate(net.stations):
        for i, c in enumerate(classes):
            if V[i, k] > 0:
                for mtype in ("Throughput", "Number of Customers", "Response Time",
                              "Utilization"):
                    measure(mtype, s.name, c.name, "station")
    edges = []
    for crow in rows.values():
        for src, row in crow.items():
            for dst in row:
                if (src, dst) not in edges:
                    edges.append((src, dst))
    for src, dst in edges:
        ET.SubElement(sim, "connection", source=src, target=dst)
    for p in net.pools:
        reg = ET.SubElement(sim, "blockingRegion", name=p.name, type="default")
        for s in spans[p.name]:
            ET.SubElement(reg, "regionNode", nodeName=s)
        ET.SubElement(reg, "globalConstraint", maxJobs=_num(p.tokens))
        for c in classes:
            ET.SubElement(reg, "dropRules", jobClass=c.name, dropThisClass="false")
    closed = [c for c in classes if isinstance(c, Closed) and int(c.population) > 0]
    if closed:
        pre = ET.SubElement(sim, "preload")
        at: dict[str, list] = {}
        for c in closed:
            at.setdefault(refs[c.name], []).append(c)
        for st_name, cs in at.items():
            sp_el = ET.SubElement(pre, "stationPopulations", stationName=st_name)
            for c in cs:
                ET.SubElement(sp_el, "classPopulation", refClass=c.name,
                              population=str(int(c.population)))
    ET.indent(archive)
    return ("<?xml version='1.0' encoding='UTF-8' standalone='no'?>\n"
            + ET.tostring(archive, encoding="unicode") + "\n")


def save_jsimg(net: Network, path, **options) -> None:
    """Write :func:`to_jsimg` of ``net`` to ``path`` (``.jsimg``)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(to_jsimg(net, **options))
