"""Model files, reading side: plain data -> :class:`~qmodels.model.Network`.

:func:`from_dict` checks a parsed model file (the structure against the JSON
Schema of :mod:`qmodels.io.schema`, the values by building each station,
class and pool alone) and reports every error at once, each at its path in
the file, as one :class:`~qmodels.errors.ModelFileError`.  Also here: the
error collector, Unicode cleaning of names and the reading of numbers,
expressions (:mod:`qmodels.io.expressions`) and distributions.
"""

from __future__ import annotations

import functools
import keyword
import math
import unicodedata
from typing import Any

from ..errors import ModelError, ModelFileError, ProblemTooLargeError, RoutingError
from ..model import distributions as dist
from ..model.caching import CacheStation
from ..model.forkjoin import ForkJoin
from ..model.map import MAP
from ..model.network import (
    SINK,
    SOURCE,
    Closed,
    Delay,
    LoadDependent,
    Network,
    Open,
    Power,
    Queue,
    TokenPool,
)
from .expressions import parse_expression

__all__ = ["from_dict", "MAX_DEPTH"]

#: Deepest nesting of lists and mappings accepted.
MAX_DEPTH = 64

_DISTS = {
    "exponential": (dist.Exponential, ()),
    "deterministic": (dist.Deterministic, ()),
    "erlang": (dist.Erlang, ("k",)),
    "hyperexponential": (dist.HyperExponential, ("scv", "probs", "rates")),
    "lognormal": (dist.Lognormal, ("scv",)),
    "uniform": (dist.Uniform, ("spread",)),
    "empirical": (dist.Empirical, ("samples",)),
    "pareto": (dist.Pareto, ("alpha",)),
    # a Markovian arrival process (an open class's interarrival only)
    "map": (MAP, ("D0", "D1")),
}
_DIST_ATTR = {"k": "k", "scv": "scv_value", "spread": "spread", "samples": "samples",
              "alpha": "alpha", "probs": "probs", "rates": "rates", "D0": "D0", "D1": "D1"}
#: parameters that are lists of plain numbers, and the optional ones (a
#: hyperexponential is given by its scv, or by its probs and rates)
_LIST_PARAMS = ("samples", "probs", "rates", "D0", "D1")
#: parameters that are matrices (lists of rows of plain numbers)
_MATRIX_PARAMS = ("D0", "D1")
_OPTIONAL = {"hyperexponential": ("scv", "probs", "rates")}


def _path_key(path: str):
    """Sort key: document order of paths (``stations[2]`` before
    ``stations[10]``, a file-level error first)."""
    import re

    return [(0, int(t[1:-1])) if t.startswith("[") and t[1:-1].isdigit() else (1, t)
            for t in re.findall(r"\[[^\]]*\]|[^.\[]+", path)]


class _Errors:
    def __init__(self):
        self.items: list[tuple[str, str]] = []

    def sorted(self):
        order = {"stations": 0, "classes": 1, "pools": 2}
        return sorted(self.items, key=lambda e: (
            order.get(e[0].split("[")[0].split(".")[0], -1), _path_key(e[0])))

    def add(self, path: str, msg: str):
        item = (path or "(top level)", msg)
        if item not in self.items:
            self.items.append(item)

    def __len__(self):
        return len(self.items)


def _join(path: str, key) -> str:
    """``path`` extended by a list index or a mapping key (see
    :func:`qmodels.io.schema.format_path`)."""
    from .schema import format_path

    return path + format_path([key], nested=bool(path))


# ---------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------

class _Ctx:
    def __init__(self, symbols: dict):
        self.symbols = symbols


def _value(v, path, errs, ctx, *, integer=False):
    """A number or sympy expression from the file, or None (error added)."""
    if isinstance(v, bool) or v is None:
        errs.add(path, f"expected a number, got {v!r}")
        return None
    if isinstance(v, str):
        s = v.strip()
        try:
            f = float(s)
        except ValueError:
            pass
        else:
            why = _lossy_number(s, f)
            if why:
                errs.add(path, why)
                return None
            if integer and f.is_integer() and not any(c in s.lower() for c in ".e"):
                return int(s)
            return int(f) if integer and math.isfinite(f) and f.is_integer() else f
        try:
            return parse_expression(s, ctx.symbols)
        except ValueError as e:
            hint = "" if ctx.symbols else " (names in expressions must be declared under symbols)"
            errs.add(path, f"expected a number, got {v!r}: {e}{hint}")
            return None
    if isinstance(v, (int, float)):
        if integer and isinstance(v, float) and v.is_integer():
            return int(v)
        return v
    errs.add(path, f"expected a number, got {type(v).__name__}")
    return None


def _lossy_number(text: str, f: float) -> str:
    """Why the number ``text`` (read by ``float`` as ``f``) must be refused,
    or "": a non-zero number below the smallest float reads as 0 (``1e-400``),
    and Python-only syntax (``1_000``) is not a model file's."""
    if "_" in text:
        return f"{text!r} is not a decimal number (no underscores in numbers)"
    mantissa = text.lower().split("e")[0]
    if f == 0 and any(c in "123456789" for c in mantissa):
        return (f"{text!r} underflows to 0: it is below the smallest float (about 5e-324); "
                "write 0 if zero is meant, or change the unit")
    return ""


def _values(m, path, errs, ctx):
    out = {}
    ok = True
    for k, v in m.items():
        n = _value(v, _join(path, k), errs, ctx)
        if n is None:
            ok = False
        else:
            out[k] = n
    return out if ok else None


def _distribution(d, path, errs, ctx):
    if d is None:
        return None
    if isinstance(d, str):
        d = {"type": d}
    kind = d["type"]
    cls, params = _DISTS[kind]
    for key in d:
        if key != "type" and key not in params:
            errs.add(_join(path, key), f"a {kind} distribution has no parameter {key!r}"
                     + (f" (it takes {', '.join(params)})" if params else ""))
            return None
    kwargs = {}
    for p in params:
        if p not in d and p in _OPTIONAL.get(kind, ()):
            continue
        if p in _LIST_PARAMS:
            kwargs[p] = d[p]
            continue
        v = _value(d[p], _join(path, p), errs, ctx, integer=(p == "k"))
        if v is None:
            return None
        kwargs[_DIST_ATTR[p]] = v
    try:
        return cls(**kwargs)
    except ModelError as e:
        errs.add(path, str(e))
        return None


# ---------------------------------------------------------------------------
# cleaning: Unicode names, control characters
# ---------------------------------------------------------------------------

def _check_text(s: str, path: str, errs, *, free_text=False) -> str:
    s = unicodedata.normalize("NFC", s)
    for ch in s:
        cat = unicodedata.category(ch)
        if free_text and ch in "\n\t\r":
            continue
        if cat in ("Cc", "Cf", "Cs", "Co", "Cn") or ch in "\u2028\u2029":
            kind = {"Cc": "control", "Cf": "invisible format", "Cs": "surrogate",
                    "Co": "private-use", "Cn": "unassigned"}.get(cat, "separator")
            errs.add(path, f"{kind} character U+{ord(ch):04X} in {s!r}: names must be "
                           "visible text")
            break
    return s


def _clean(obj, path: str, errs, depth=0):
    """NFC-normalise every string and mapping key, refuse invisible or
    control characters, and report keys that become equal."""
    if depth > MAX_DEPTH:
        errs.add(path, f"nested deeper than {MAX_DEPTH} levels")
        return None
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            key = _check_text(k if isinstance(k, str) else str(k), _join(path, str(k)), errs)
            if key in out:
                errs.add(_join(path, key), f"duplicate key {key!r} (after Unicode "
                                           "normalisation)")
                continue
            out[key] = _clean(v, _join(path, key), errs, depth + 1)
        return out
    if isinstance(obj, (list, tuple)):
        return [_clean(v, f"{path}[{i}]", errs, depth + 1) for i, v in enumerate(obj)]
    if isinstance(obj, str):
        return _check_text(obj, path, errs, free_text=path == "description")
    return obj


# ---------------------------------------------------------------------------
# from a dict to a Network
# ---------------------------------------------------------------------------

def _symbols(spec, errs):
    out = {}
    if not spec:    # no symbols: a plain numeric model never imports sympy
        return out
    import sympy as sp

    for name, assumptions in spec.items():
        if keyword.iskeyword(name):
            errs.add(f"symbols.{name}", f"{name!r} is a Python keyword and cannot appear in an "
                                        f"expression: use {name + '_'!r}")
            continue
        try:
            out[name] = sp.Symbol(name, **assumptions)
        except (ValueError, TypeError, AttributeError) as e:
            errs.add(f"symbols.{name}", f"invalid assumptions {assumptions!r}: {e}")
    return out


def _probe(errs, path, make) -> bool:
    """Build one part of a model alone (``make()``) so that a constructor's
    error is reported at the path of the value it is about."""
    try:
        make()
    except ModelError as e:
        errs.add(path, str(e))
        return False
    return True


def _station_key_errors(s, kind, path, errs):
    """Keys that a station of this kind does not take, or lacks."""
    if kind == "queue" and "rate_multipliers" in s:
        errs.add(f"{path}.rate_multipliers",
                 "a queue has servers, not rate_multipliers: use kind: ld for a load-dependent "
                 "station (a c-server queue is rate_multipliers [1, 2, ..., c])")
    if kind == "ld":
        for bad in ("servers", "discipline"):
            if bad in s:
                errs.add(f"{path}.{bad}", f"a load-dependent station has no {bad} (its "
                                          "rate_multipliers give the service rate)")
        if "rate_multipliers" not in s:
            errs.add(f"{path}.rate_multipliers", "missing rate_multipliers of a load-dependent "
                                                 "station")
    if kind == "delay":
        for bad in ("servers", "rate_multipliers", "discipline"):
            if bad in s:
                errs.add(f"{path}.{bad}", f"a delay station has no {bad}")


def _power(spec, path, errs, ctx):
    """A :class:`Power` from a station's ``power`` mapping, or None (errors
    added at the path of each bad value)."""
    pv = {k: _value(v, f"{path}.{k}", errs, ctx) for k, v in spec.items()}
    if None in pv.values():
        return None
    if not all(_probe(errs, f"{path}.{k}", lambda k=k, v=v: Power(**{"busy": 0, k: v}))
               for k, v in pv.items()):
        return None
    try:
        return Power(**pv)
    except ModelError as e:
        errs.add(path, str(e))
        return None


def _station_options(s, path, errs, ctx):
    """The keyword arguments common to every station kind (capacity,
    power, distribution), or None if the distribution is refused."""
    kw: dict[str, Any] = {}
    if "capacity" in s:
        kw["capacity"] = _value(s["capacity"], f"{path}.capacity", errs, ctx, integer=True)
    if "power" in s:
        power = _power(s["power"], f"{path}.power", errs, ctx)
        if power is not None:
            kw["power"] = power
    if "distribution" in s:
        kw["distribution"] = _distribution(s["distribution"], f"{path}.distribution", errs, ctx)
        if kw["distribution"] is None:
            return None
    return kw


def _load_dependent(s, name, service, kw, path, errs, ctx, ok):
    vals = [_value(v, f"{path}.rate_multipliers[{j}]", errs, ctx)
            for j, v in enumerate(s["rate_multipliers"])]
    if any(v is None for v in vals) or not ok:
        return None
    for j in range(len(vals)):
        # the multipliers up to j, so that the error names index j
        if not _probe(errs, f"{path}.rate_multipliers[{j}]",
                      lambda j=j: LoadDependent(name, 0.0, rate_multipliers=tuple(vals[:j + 1]))):
            return None
    return LoadDependent(name, service, rate_multipliers=tuple(vals), **kw)


def _queue(s, name, service, kw, path, errs, ctx, ok):
    servers = _value(s.get("servers", 1), f"{path}.servers", errs, ctx, integer=True)
    if servers is None or not _probe(errs, f"{path}.servers",
                                     lambda: Queue(name, 0.0, servers=servers)) or not ok:
        return None
    discipline = s.get("discipline", "fcfs")
    if not _probe(errs, f"{path}.discipline",
                  lambda: Queue(name, 0.0, servers=servers, discipline=discipline)):
        return None
    return Queue(name, service, servers=servers, discipline=discipline, **kw)


#: the keys of a cache station's own (kind: cache)
_CACHE_KEYS = ("cache_capacity", "policy", "hit", "miss", "popularity")


def _cache(s, name, service, kw, path, errs, ctx, ok):
    """A :class:`CacheStation` from its entry (``kind: cache``: a queue's
    keys and ``cache_capacity``, ``popularity``, ``policy``, ``hit``,
    ``miss``), or None (errors added at their paths)."""
    n0 = len(errs)
    if "rate_multipliers" in s:
        errs.add(f"{path}.rate_multipliers", "a cache station has servers, not rate_multipliers")
    for key in ("cache_capacity", "popularity", "hit", "miss"):
        if key not in s:
            errs.add(f"{path}.{key}", f"missing {key} of a cache station")
    if len(errs) > n0:
        return None
    servers = _value(s.get("servers", 1), f"{path}.servers", errs, ctx, integer=True)
    cap = _value(s["cache_capacity"], f"{path}.cache_capacity", errs, ctx, integer=True)
    if servers is None or cap is None or not ok:
        return None
    try:
        return CacheStation(name, service, servers=servers,
                            discipline=s.get("discipline", "fcfs"), cache_capacity=cap,
                            popularity=s["popularity"], policy=s.get("policy", "lru"),
                            hit=s["hit"], miss=s["miss"], **kw)
    except (ModelError, ProblemTooLargeError) as e:
        errs.add(path, str(e))
        return None


def _forkjoin(s, path, names, errs):
    """A :class:`ForkJoin` from its entry (``kind: forkjoin``, ``branches``,
    optional ``tasks``), or None (errors added at their paths)."""
    n0 = len(errs)
    for bad in ("service", "servers", "discipline", "capacity", "rate_multipliers", "power",
                "distribution"):
        if bad in s:
            errs.add(f"{path}.{bad}", f"a fork-join has no {bad} (it does no service; its "
                                      "branches' stations do)")
    if "branches" not in s:
        errs.add(f"{path}.branches", "missing branches of a fork-join")
        return None
    for b, br in enumerate(s["branches"]):
        for j, st in enumerate(br):
            if st not in names:
                errs.add(f"{path}.branches[{b}][{j}]", f"unknown station {st!r}")
    if len(errs) > n0:
        return None
    try:
        return ForkJoin(s["name"], s["branches"], tasks=s.get("tasks"))
    except ModelError as e:
        errs.add(path, str(e))
        return None


def _station(s, path, errs, ctx, names=frozenset()):
    explicit = s.get("kind")
    if explicit == "forkjoin":
        return _forkjoin(s, path, names, errs)
    for key in ("branches", "tasks"):
        if key in s:
            errs.add(f"{path}.{key}", f"only a fork-join (kind: forkjoin) has {key}")
    kind = explicit or ("ld" if "rate_multipliers" in s else "queue")
    kind = "ld" if kind == "load_dependent" else kind
    n0 = len(errs)
    _station_key_errors(s, kind, path, errs)
    if kind != "cache":
        for key in _CACHE_KEYS:
            if key in s:
                errs.add(f"{path}.{key}", f"only a cache station (kind: cache) has {key}")
    service = _value(s["service"], f"{path}.service", errs, ctx) if "service" in s else 0.0
    kw = _station_options(s, path, errs, ctx)
    if kw is None:
        return None
    name = s["name"]
    if len(errs) > n0 or not _probe(errs, f"{path}.name", lambda: Delay(name, 0.0)):
        return None
    ok = _probe(errs, f"{path}.service", lambda: Delay(name, service))
    if kw.get("capacity") is not None:
        ok &= _probe(errs, f"{path}.capacity", lambda: Delay(name, 0.0, capacity=kw["capacity"]))
    try:
        if kind == "delay":
            return Delay(name, service, **kw) if ok else None
        if kind == "ld":
            return _load_dependent(s, name, service, kw, path, errs, ctx, ok)
        if kind == "cache":
            return _cache(s, name, service, kw, path, errs, ctx, ok)
        return _queue(s, name, service, kw, path, errs, ctx, ok)
    except ModelError as e:
        errs.add(path, str(e))
        return None


def _class_maps(c, path, station_names, errs, ctx, kw):
    """A class's visits, demands, service and routing into ``kw``, each
    station name checked."""
    for key in ("visits", "demands", "service"):
        if key in c:
            for st in c[key]:
                if st not in station_names:
                    errs.add(_join(f"{path}.{key}", st), f"unknown station {st!r}")
            kw[key] = _values(c[key], f"{path}.{key}", errs, ctx)
    if "distribution" in c:
        shapes = {}
        for st, d in c["distribution"].items():
            dpath = _join(f"{path}.distribution", st)
            if st not in station_names:
                errs.add(dpath, f"unknown station {st!r}")
            shape = _distribution(d, dpath, errs, ctx)
            if shape is not None:
                shapes[st] = shape
        kw["distribution"] = shapes
    if "route" in c:
        route = c["route"]
        if not isinstance(route, list) or not route:
            errs.add(f"{path}.route", "a route is a non-empty list of station names in path "
                                      "order")
        else:
            for i, st in enumerate(route):
                if st not in station_names:
                    errs.add(f"{path}.route[{i}]", f"unknown station {st!r}")
            kw["route"] = list(route)
    if "routing" in c:
        rows = {}
        for src, row in c["routing"].items():
            rpath = _join(f"{path}.routing", src)
            if src not in station_names and src != SOURCE:
                errs.add(rpath, f"unknown station {src!r}")
            for dst in row:
                if dst not in station_names and dst != SINK:
                    errs.add(_join(rpath, dst), f"unknown station {dst!r}")
            rows[src] = _row_values(row, rpath, errs, ctx)
        kw["routing"] = rows


def _row_values(row, path, errs, ctx):
    """A routing row: ``station: p``, or ``station: {class: p}`` for a
    class switch (:mod:`qmodels.model.chains`)."""
    out, ok = {}, True
    for k, v in row.items():
        n = (_values(v, _join(path, k), errs, ctx) if isinstance(v, dict)
             else _value(v, _join(path, k), errs, ctx))
        if n is None:
            ok = False
        else:
            out[k] = n
    return out if ok else None


def _closed_fields(c, path, station_names, errs, ctx, kw):
    for bad in ("arrival_rate", "interarrival"):
        if bad in c:
            errs.add(f"{path}.{bad}", f"a closed class has a population, not an {bad}")
    if "population" not in c:
        errs.add(f"{path}.population", "missing population of closed class")
    else:
        kw["population"] = _value(c["population"], f"{path}.population", errs, ctx,
                                  integer=True)
    if "think_time" in c:
        kw["think_time"] = _value(c["think_time"], f"{path}.think_time", errs, ctx)
    if "reference" in c:
        if c["reference"] not in station_names:
            errs.add(f"{path}.reference", f"unknown station {c['reference']!r}")
        kw["reference"] = c["reference"]


def _open_fields(c, path, errs, ctx, kw):
    for bad in ("population", "think_time", "reference"):
        if bad in c:
            errs.add(f"{path}.{bad}", f"an open class has no {bad}")
    if "arrival_rate" not in c:
        errs.add(f"{path}.arrival_rate", "missing arrival rate of open class")
    else:
        kw["arrival_rate"] = _value(c["arrival_rate"], f"{path}.arrival_rate", errs, ctx)
    if "interarrival" in c:
        kw["interarrival"] = _distribution(c["interarrival"], f"{path}.interarrival",
                                           errs, ctx)


def _class_probes(name, ctype, kw, path, errs) -> bool:
    """Build the class from one value at a time, so that a constructor's
    error lands at the path of the value it is about; True if none fails."""
    make = Closed if ctype == "closed" else Open
    ok = True
    if ctype == "closed":
        if "population" in kw:
            ok &= _probe(errs, f"{path}.population",
                         lambda: Closed(name, kw["population"], visits={}))
        if "think_time" in kw:
            ok &= _probe(errs, f"{path}.think_time",
                         lambda: Closed(name, 0, think_time=kw["think_time"], visits={}))
    elif "arrival_rate" in kw:
        ok &= _probe(errs, f"{path}.arrival_rate", lambda: Open(name, kw["arrival_rate"],
                                                                 visits={}))
    if "priority" in kw:
        ok &= _probe(errs, f"{path}.priority",
                     lambda: make(name, priority=kw["priority"], visits={}))
    for key in ("visits", "demands", "service"):
        for st, v in (kw.get(key) or {}).items():
            spec = {key: {st: v}} if key != "service" else {"visits": {}, "service": {st: v}}
            ok &= _probe(errs, _join(f"{path}.{key}", st),
                         lambda spec=spec: make(name, **spec))
    for src, row in (kw.get("routing") or {}).items():
        for dst, p in row.items():
            ok &= _probe(errs, _join(_join(f"{path}.routing", src), dst),
                         lambda src=src, dst=dst, p=p: make(name, routing={src: {dst: p}}))
    return ok


def _class(c, path, station_names, errs, ctx):
    ctype = c.get("type", "closed")
    n0 = len(errs)
    kw: dict[str, Any] = {}
    _class_maps(c, path, station_names, errs, ctx, kw)
    if "priority" in c:
        kw["priority"] = _value(c["priority"], f"{path}.priority", errs, ctx, integer=True)
    if ctype == "closed":
        _closed_fields(c, path, station_names, errs, ctx, kw)
    else:
        _open_fields(c, path, errs, ctx, kw)
    if len(errs) > n0:
        return None
    name = c["name"]
    make = Closed if ctype == "closed" else Open
    probe = {"population": 0} if ctype == "closed" else {"arrival_rate": 1.0}
    if not _probe(errs, f"{path}.name", lambda: make(name, visits={}, **probe)):
        return None
    if not _class_probes(name, ctype, kw, path, errs):
        return None
    try:
        return make(name, **kw)
    except ModelError as e:
        errs.add(path, str(e))
        return None


def _mentions(c: dict, station: str) -> bool:
    if station in c.get("visits", {}) or station in c.get("demands", {}):
        return True
    for src, row in c.get("routing", {}).items():
        if src == station or station in row:
            return True
    return station in (c.get("route") or ())


def _own_time(c: dict, station: str) -> bool:
    return station in c.get("demands", {}) or station in c.get("service", {})


def _lacks_service(s, path, good_classes, errs) -> bool:
    """True (error added) if a station with no ``service`` of its own is
    visited by a class that gives none either, or by no class that does."""
    users = [c for c in good_classes if _mentions(c, s["name"])]
    lacking = [c["name"] for c in users if not _own_time(c, s["name"])]
    own = [c for c in good_classes if _own_time(c, s["name"])]
    if lacking or not own:
        why = (f"class {lacking[0]!r} visits it and gives no service time of its own"
               if lacking else "no class gives a service time for it")
        errs.add(f"{path}.service", f"missing service time of station {s['name']!r} "
                                    f"({why})")
        return True
    return False


def _stations(stations_raw, good_classes, broken, errs, ctx, seen, names=frozenset()):
    stations = []
    for i, s in enumerate(stations_raw):
        path = f"stations[{i}]"
        if broken(path):
            continue
        if "service" not in s and s.get("kind") != "forkjoin" and _lacks_service(
                s, path, good_classes, errs):
            continue
        st = _station(s, path, errs, ctx, names)
        if st is None:
            continue
        if st.name in seen:
            errs.add(f"{path}.name", f"duplicate station name {st.name!r} (also {seen[st.name]})")
            continue
        seen[st.name] = path
        stations.append(st)
    return stations


def _named(raw, prefix, build, broken, errs, seen):
    """The parts of list ``prefix`` built by ``build(item, path)`` (None
    when it added errors), each name unused so far (``seen``: name ->
    path); returns (parts, their paths)."""
    parts, paths = [], []
    for i, item in enumerate(raw):
        path = f"{prefix}[{i}]"
        if broken(path):
            continue
        part = build(item, path)
        if part is None:
            continue
        if part.name in seen:
            errs.add(f"{path}.name", f"name {part.name!r} is already used at {seen[part.name]}")
            continue
        seen[part.name] = path
        parts.append(part)
        paths.append(path)
    return parts, paths


def _classes(classes_raw, names, broken, errs, ctx, seen):
    return _named(classes_raw, "classes", lambda c, path: _class(c, path, names, errs, ctx),
                  broken, errs, seen)


def _pool(p, path, names, class_names, broken, errs, ctx):
    """One :class:`TokenPool`, or None (errors added)."""
    for key in ("acquire", "release"):
        if p[key] not in names:
            errs.add(f"{path}.{key}", f"unknown station {p[key]!r}")
    for j, cn in enumerate(p.get("classes", ())):
        if cn not in class_names:
            errs.add(f"{path}.classes[{j}]", f"unknown class {cn!r}")
    for j, st in enumerate(p.get("path", ())):
        if st not in names:
            errs.add(f"{path}.path[{j}]", f"unknown station {st!r}")
    tokens = _value(p["tokens"], f"{path}.tokens", errs, ctx, integer=True)
    if tokens is None or broken(path) or any(e[0].startswith(path) for e in errs.items):
        return None
    try:
        return TokenPool(p["name"], tokens, p["acquire"], p["release"],
                         tuple(p["classes"]) if "classes" in p else None,
                         path=tuple(p["path"]) if "path" in p else None)
    except ModelError as e:
        errs.add(path, str(e))
        return None


def _pools(pools_raw, names, class_names, broken, errs, ctx, seen):
    return _named(pools_raw, "pools",
                  lambda p, path: _pool(p, path, names, class_names, broken, errs, ctx),
                  broken, errs, seen)


def _blame(stations, classes, class_paths, pools, pool_paths, name, errs):
    """Find which class or pool the network refuses: build it one part at
    a time, adding the errors at their paths."""
    from ..model.chains import find_chains

    switching = {n for ch in find_chains(classes) if len(ch) > 1 for n in ch}
    for cl, path in zip(classes, class_paths, strict=True):
        if cl.name in switching or any(isinstance(k, tuple) for row in (cl.routing or {}).values()
                                       for k in row):
            continue        # a class-switching class is checked with its chain, below
        try:
            Network(stations, [cl])
        except ModelError as e:
            where = ".routing" if cl.routing is not None and isinstance(e, RoutingError) else ""
            errs.add(path + where, str(e))
    if not errs.items:
        for pool, path in zip(pools, pool_paths, strict=True):
            try:
                Network(stations, classes, pools=[pool])
            except ModelError as e:
                errs.add(path, str(e))
    if not errs.items:
        try:
            Network(stations, classes, name=name, pools=pools)
        except ModelError as e:
            errs.add("(network)", str(e))


def _list(data, key) -> list:
    return data.get(key) if isinstance(data.get(key), list) else []


def _broken(bad, prefix) -> bool:
    return any(p == prefix or p.startswith(prefix + ".") or p.startswith(prefix + "[")
               for p in bad)


def _symbol_spec(data, broken):
    """The ``symbols`` entries that are well-formed enough to build."""
    spec = data.get("symbols")
    if not isinstance(spec, dict):
        return None
    return {k: v for k, v in spec.items() if not broken(_join("symbols", k))
            and isinstance(v, dict) and all(isinstance(b, bool) for b in v.values())
            and k.isidentifier()}


def from_dict(data: Any, *, source: str = "model") -> Network:
    """A :class:`~qmodels.model.Network` from a parsed model file.

    Structure is checked against the JSON Schema (:mod:`qmodels.io.schema`),
    values by the model's constructors; every error found is reported at
    once, with its path, in one :class:`~qmodels.errors.ModelFileError`.
    """
    from .schema import validate

    errs = _Errors()
    data = _clean(data, "", errs)
    for p, m in validate(data):
        errs.add(p, m)
    if not isinstance(data, dict):
        raise ModelFileError(errs.sorted(), source)
    broken = functools.partial(_broken, [p for p, _ in errs.items])

    ctx = _Ctx(_symbols(_symbol_spec(data, broken), errs))
    stations_raw, classes_raw = _list(data, "stations"), _list(data, "classes")
    names = {s["name"] for s in stations_raw
             if isinstance(s, dict) and isinstance(s.get("name"), str)}
    good_classes = [c for i, c in enumerate(classes_raw)
                    if isinstance(c, dict) and not broken(f"classes[{i}]")]
    seen: dict = {}
    stations = _stations(stations_raw, good_classes, broken, errs, ctx, seen, names)
    classes, class_paths = _classes(classes_raw, names, broken, errs, ctx, seen)
    class_names = {c.get("name") for c in classes_raw
                   if isinstance(c, dict) and isinstance(c.get("name"), str)}
    pools, pool_paths = _pools(_list(data, "pools"), names, class_names, broken, errs, ctx,
                               seen)

    if errs.items:
        raise ModelFileError(errs.sorted(), source)
    name = data.get("name", "")
    try:
        return Network(stations, classes, name=name, pools=pools)
    except ModelError:
        pass
    _blame(stations, classes, class_paths, pools, pool_paths, name, errs)
    raise ModelFileError(errs.sorted(), source)
