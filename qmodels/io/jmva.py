"""JMVA files (JMT's mean-value-analysis solver): Network <-> XML.

:func:`to_jmva` writes a product-form :class:`~qmodels.model.Network` as the
JMVA XML of JMT's ``JMTmodel.xsd`` and :func:`from_jmva` reads one back (it
solves to the same numbers: the tests check it).  What maps and what is
refused is tabled in :mod:`qmodels.io.jmt`.

A closed class's think time Z is written as a ``delaystation`` named
``Z.<class>`` that only that class visits, once, with service time Z (JMVA
has no think time of its own); :func:`from_jmva` reads such a station back
as the class's ``think_time``, so the round trip is lossless (a station of
your own with that name, visited once by that class alone, is read as its
think time too: the same solution, with R excluding it).

The load-dependent service times of an ``ldstation`` are written, as LINE's
JMT writer does (Casale et al., LINE solver, ``writeJMVA``), as the service
time with n = 1, 2, ..., N jobs present, ``S / a(n)``, separated by ``;``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from ..errors import ModelError, ModelFileError, ProblemTooLargeError, UnsupportedModelError
from ..model import distributions as dist
from ..model.network import Closed, Delay, LoadDependent, Network, Open, Queue
from ._xml import _XSI, _dropped, _num, _numeric, _parse_xml, _steps, _unique, validate_jmva

__all__ = ["to_jmva", "from_jmva", "save_jmva", "load_jmva"]

#: Most service times one JMVA ldstation may list (one per population 1..N).
MAX_LD_ENTRIES = 1_000_000


def _check_ld_size(s, total) -> None:
    """Refuse an ldstation too long to write: it lists one service time
    for each population 1..N (about 24 bytes each)."""
    if total > MAX_LD_ENTRIES:
        raise ProblemTooLargeError(
            f"station {s.name!r}: a JMVA ldstation lists one service time for each "
            f"population 1..N; N = {total} would write about {total * 24 / 2**30:.3g} GiB "
            f"of XML (limit {MAX_LD_ENTRIES} values): export a smaller population, or use "
            "to_jsimg (JSIM keeps the server count)")


def _refuse_class_dependent_fcfs(net: Network) -> None:
    """An FCFS queue whose mean service time differs by class is not
    product form (BCMP type 1 needs one rate for all classes), and JMVA would
    solve it as the processor-sharing station: refused, naming it."""
    V, S = net.visits, net.service_times
    live = [i for i, c in enumerate(net.classes)
            if float(getattr(c, "population", 0) or getattr(c, "arrival_rate", 0) or 0) > 0]
    for k, s in enumerate(net.stations):
        if not (isinstance(s, Queue) and s.discipline == "fcfs"):
            continue
        times = {float(S[i][k]) for i in live if V[i][k] != 0 and float(S[i][k]) > 0}
        if len(times) > 1:
            raise UnsupportedModelError(
                f"station {s.name!r}: FCFS with class-dependent service times is not product "
                "form, and JMVA would solve it as processor sharing; give it "
                "discipline='ps' (if its server is shared) or use to_jsimg (simulation)")


def _refuse_disciplines(net: Network) -> None:
    """JMVA's stations are FCFS, PS or delay: a priority or LCFS-PR queue
    is refused by name."""
    for s in net.stations:
        if isinstance(s, Queue) and s.discipline in ("prio", "prio-pr", "lcfs-pr"):
            raise UnsupportedModelError(
                f"station {s.name!r}: discipline {s.discipline!r} has no JMVA station type "
                "(JMVA solves FCFS, PS and delay stations); use to_jsimg (simulation)")


def _refuse_forkjoin(net: Network) -> None:
    for s in net.stations:
        if s.kind == "forkjoin":
            raise UnsupportedModelError(
                f"fork-join {s.name!r}: JMVA (product form) has no fork-join; use to_jsimg "
                "(fork and join nodes)")


def _refuse_switching(net: Network) -> None:
    if net.has_class_switching:
        raise UnsupportedModelError(
            "JMVA has no class switching (chains "
            + "; ".join("+".join(ch) for ch in net.chains if len(ch) > 1)
            + "): its classes keep their populations; export to JSIMg, or solve it here")


def to_jmva(net: Network, *, description: str | None = None, drop=()) -> str:
    """The JMVA XML of a product-form network (see :mod:`qmodels.io.jmt` for
    what maps and what is refused).

    Parameters
    ----------
    description : str, optional
        The file's ``description`` (default: the network's name, and what
        the export leaves out).
    drop : str or tuple of str
        Features the export may leave out, which it otherwise refuses:
        ``"power"`` (JMT has no power).  What is dropped is listed in the
        default description.

    Raises
    ------
    UnsupportedModelError
        Symbolic values, power (unless ``drop`` has ``"power"``), token
        pools, a finite capacity that can bind,
        an FCFS queue with non-exponential service (not product form),
        multi-server or load-dependent stations with more than one class or
        an open class (JMVA's load-dependent stations are single-class
        closed).
    """
    _numeric(net, "JMVA")
    _refuse_switching(net)
    dropped = _dropped(net, drop, "JMVA")
    _refuse_forkjoin(net)
    if net.pools:
        raise UnsupportedModelError(
            f"token pool {net.pools[0].name!r}: JMVA (product form) has no held resources; "
            "use to_jsimg (finite capacity regions)")
    total = sum(c.population for c in net.closed_classes)
    notes = list(dropped)
    _refuse_disciplines(net)
    _refuse_class_dependent_fcfs(net)
    low = net.lowered
    for k, s in enumerate(net.stations):
        if s.capacity is not None:
            if net.open_classes or s.capacity < total:
                raise UnsupportedModelError(
                    f"station {s.name!r}: capacity {s.capacity} can bind, and JMVA has no finite "
                    "capacity; use to_jsimg")
            notes.append(f"capacity of {s.name!r} dropped (never binds)")
        if not low.exponential[k]:     # the shape of every class that visits it
            d = None if low.class_shaped[k] else low.one_shape(k, "JMVA")
            said = (low.shape_words(k) if d is None
                    else f"{d.name} service (scv {float(d.scv):g})")
            if isinstance(s, Queue) and s.discipline == "fcfs":
                raise UnsupportedModelError(
                    f"station {s.name!r}: FCFS with {said} is not product form, "
                    "and JMVA would solve it as exponential; use to_jsimg (simulation)")
            # PS and delay stations are insensitive to the shape (BCMP types 2-3)
            notes.append(f"service-time shape of {s.name!r} "
                         f"({d.name if d is not None else low.shape_words(k)}) dropped: "
                         "JMVA uses means (exact here: the station is insensitive to it)")
        multi = isinstance(s, LoadDependent) or (isinstance(s, Queue) and s.servers > 1)
        if multi and (len(net.classes) != 1 or not net.is_closed):
            what = "load-dependent" if isinstance(s, LoadDependent) else f"{s.servers}-server"
            raise UnsupportedModelError(
                f"station {s.name!r}: a {what} station is a JMVA ldstation, which JMVA solves "
                "for a single closed class only")
        _check_ld_size(s, total if multi else 0)
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
        for c, t in zip(net.classes, times, strict=False):
            if isinstance(t, str):
                ET.SubElement(sts, "servicetimes", customerclass=c.name).text = t
            else:
                ET.SubElement(sts, "servicetime", customerclass=c.name).text = _num(t)
        vis = ET.SubElement(st_el, "visits")
        for c, v in zip(net.classes, visits, strict=False):
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


def _read_stations(st_els, V, S, errors):
    """Visits and service times of every station into ``V`` and ``S``
    (class -> station -> value); (element, name, load-dependent times,
    path) of each station, to build once every number is known good."""
    pending = []
    for el, step in zip(st_els, _steps(st_els), strict=False):
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
    return pending


def _ld_station(el, sname, ld, path, cls_els, S, errors):
    """An ``ldstation`` as a :class:`LoadDependent` with rate multipliers
    ``a(n) = S(1) / S(n)``."""
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
    return LoadDependent(sname, vals[0], rate_multipliers=tuple(vals[0] / v for v in vals))


def _build_stations(pending, cls_els, names, V, S, errors):
    stations = []
    for el, sname, ld, path in pending:
        try:
            if el.tag == "ldstation":
                stations.append(_ld_station(el, sname, ld, path, cls_els, S, errors))
                continue
            own = [S[c][sname] for c in names if sname in V[c]]
            base = own[0] if own else next(iter(S[c][sname] for c in names), 0.0)
            if el.tag == "delaystation":
                stations.append(Delay(sname, base))
            else:
                # JMVA solves every station in product form: where the classes'
                # service times differ, that is the processor-sharing station
                # (BCMP type 2; FCFS with class-dependent times is not product form)
                shared = len({float(x) for x in own}) > 1
                stations.append(Queue(sname, base, servers=int(el.get("servers", "1")),
                                      discipline="ps" if shared else "fcfs"))
        except ModelError as e:
            errors.append((path, str(e)))
    return stations


def _think_stations(pending, cls_els, V, S) -> dict:
    """Take out the think-time stations :func:`to_jmva` writes: a
    ``delaystation`` named ``Z.<class>`` of a closed class that only that
    class visits, with visit 1 and a positive service time (the think time),
    while the class visits other stations too.  Returns class -> think time;
    ``pending``, ``V`` and ``S`` lose those stations."""
    closed = {c.get("name") for c in cls_els if c.tag == "closedclass"}
    think = {}
    for item in list(pending):
        el, sname = item[0], item[1]
        cn = sname[2:] if sname.startswith("Z.") else None
        if el.tag != "delaystation" or cn not in closed:
            continue
        others = [c for c in V if c != cn and sname in V[c]]
        z = S[cn].get(sname)
        if (others or V[cn].get(sname) != 1.0 or z is None or not z > 0
                or not any(k != sname for k in V[cn])):
            continue
        think[cn] = z
        pending.remove(item)
        for c in V:
            V[c].pop(sname, None)
            S[c].pop(sname, None)
    return think


def _build_classes(cls_els, stations, V, S, errors, think=None):
    classes = []
    for c, step in zip(cls_els, _steps(cls_els), strict=False):
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
                if think and cn in think:
                    kw["think_time"] = think[cn]
                classes.append(Closed(cn, int(pop) if pop.is_integer() else pop, **kw))
            else:
                classes.append(Open(cn, float(c.get("rate")), **kw))
        except ModelError as e:
            errors.append((path, str(e)))
    return classes


def _exported_name(root) -> str:
    """The network name :func:`to_jmva` put in the description, or ''."""
    desc = root.find("description")
    name = ""
    if desc is not None and desc.text and " (exported by qmodels)" in desc.text:
        name = desc.text.split(" (exported by qmodels)")[0]
        name = "" if name == "qmodels network" else name
    return name


def from_jmva(xml: str, *, source: str = "jmva") -> Network:
    """A :class:`~qmodels.model.Network` from JMVA XML text.

    Each class gets ``visits`` and, where its service time differs from the
    station's, its own ``service``.  ``delaystation`` becomes
    :class:`~qmodels.model.Delay`, ``listation`` a
    :class:`~qmodels.model.Queue` (``servers`` as given; FCFS, or processor
    sharing where the classes' service times differ there: JMVA solves every
    station in product form, and with class-dependent times that is the
    processor-sharing station, BCMP type 2), ``ldstation`` a
    :class:`~qmodels.model.LoadDependent` with rate multipliers
    ``a(n) = S(1) / S(n)`` (single closed class).  A ``delaystation`` named
    ``Z.<class>`` that only that closed class visits, with visit 1, is the
    think-time station :func:`to_jmva` writes: it comes back as that
    class's ``think_time`` (its service time), so a network with think
    times round-trips losslessly and the class's R excludes it again.

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
    pending = _read_stations(st_els, V, S, errors)
    if errors:
        raise ModelFileError(errors, source)
    think = _think_stations(pending, cls_els, V, S)
    stations = _build_stations(pending, cls_els, names, V, S, errors)
    classes = _build_classes(cls_els, stations, V, S, errors, think)
    if errors:
        raise ModelFileError(errors, source)
    try:
        return Network(stations, classes, name=_exported_name(root))
    except ModelError as e:
        raise ModelFileError([("model/parameters", str(e))], source) from None


def load_jmva(path) -> Network:
    """Read a ``.jmva`` file (size-limited, UTF-8) with :func:`from_jmva`."""
    from .modelfile import _read

    text, source = _read(path)
    return from_jmva(text, source=source)
