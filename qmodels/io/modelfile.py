"""Model files: YAML or JSON in, a validated :class:`~qmodels.model.Network` out.

The schema (times in seconds, rates per second, power in watts)::

    name: two-tier example                 # optional
    stations:                              # required, non-empty list
      - name: cpu                          # required, unique
        kind: queue                        # delay | queue | ld (load-dependent)
        service: 0.010                     # mean service time per visit
        servers: 4                         # queue only, default 1
        discipline: fcfs                   # queue only: fcfs | ps
        capacity: 8                        # optional finite room
        rate_multipliers: [1, 1.8, 2.4]    # makes a queue load-dependent
        power: {busy: 6.8, idle: 4.0}      # optional (read, write too)
        distribution: {type: erlang, k: 2} # optional service shape
    classes:                               # required, non-empty list
      - name: tx
        type: closed                       # closed | open
        population: 40                     # closed: non-negative integer
        think_time: 0                      # closed, optional
        arrival_rate: 2.5                  # open
        visits: {cpu: 1, disk: 0.27}       # exactly one of visits,
        routing: {cpu: {disk: 1}, ...}     #   routing (open: source/sink),
        demands: {cpu: 0.01}               #   demands
        service: {disk: 0.030}             # optional per-class service times
        reference: cpu                     # closed routing, optional
    pools:                                 # optional held resources
      - {name: xnif, tokens: 4, acquire: dma, release: port}

Every error is reported with its path in the file (``classes[0].population``)
and all errors are reported at once (:class:`~qmodels.errors.ModelFileError`).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from ..errors import ModelError, ModelFileError
from ..model import distributions as dist
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

__all__ = ["load", "loads", "from_dict", "to_dict", "SCHEMA_KEYS"]

SCHEMA_KEYS = {
    "network": {"name", "stations", "classes", "pools", "description"},
    "station": {"name", "kind", "service", "servers", "discipline", "capacity",
                "rate_multipliers", "power", "distribution"},
    "class": {"name", "type", "population", "think_time", "arrival_rate", "visits",
              "routing", "demands", "service", "reference", "interarrival"},
    "pool": {"name", "tokens", "acquire", "release", "classes"},
    "power": {"busy", "idle", "read", "write"},
}

_DISTS = {
    "exponential": (dist.Exponential, ()),
    "deterministic": (dist.Deterministic, ()),
    "erlang": (dist.Erlang, ("k",)),
    "hyperexponential": (dist.HyperExponential, ("scv",)),
    "lognormal": (dist.Lognormal, ("scv",)),
    "uniform": (dist.Uniform, ("spread",)),
    "empirical": (dist.Empirical, ("samples",)),
}


class _Errors:
    def __init__(self):
        self.items: list[tuple[str, str]] = []

    def add(self, path: str, msg: str):
        self.items.append((path, msg))


def _number(v, path, errs, *, integer=False):
    """A number from the file; YAML 1.1 reads ``1e-3`` as a string, so
    numeric strings are accepted."""
    if isinstance(v, bool) or v is None:
        errs.add(path, f"expected a number, got {v!r}")
        return None
    if isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            errs.add(path, f"expected a number, got {v!r}")
            return None
    if not isinstance(v, (int, float)):
        errs.add(path, f"expected a number, got {type(v).__name__}")
        return None
    if integer and isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _mapping_of_numbers(m, path, errs):
    if not isinstance(m, dict):
        errs.add(path, f"expected a mapping of station -> number, got {type(m).__name__}")
        return None
    out = {}
    for k, v in m.items():
        n = _number(v, f"{path}.{k}", errs)
        if n is not None:
            out[str(k)] = n
    return out


def _unknown_keys(d, allowed, path, errs):
    for k in d:
        if k not in allowed:
            errs.add(f"{path}.{k}", f"unknown key {k!r} (allowed: {', '.join(sorted(allowed))})")


def _distribution(d, path, errs):
    if d is None:
        return None
    if isinstance(d, str):
        d = {"type": d}
    if not isinstance(d, dict) or "type" not in d:
        errs.add(path, "expected a distribution such as {type: erlang, k: 2}")
        return None
    kind = str(d["type"]).lower()
    if kind not in _DISTS:
        errs.add(f"{path}.type", f"unknown distribution {kind!r} (one of {', '.join(_DISTS)})")
        return None
    cls, params = _DISTS[kind]
    _unknown_keys(d, {"type", *params}, path, errs)
    kwargs = {}
    for p in params:
        if p not in d:
            errs.add(f"{path}.{p}", f"missing parameter {p!r} of {kind}")
            return None
        if p == "samples":
            kwargs[p] = d[p]
        else:
            v = _number(d[p], f"{path}.{p}", errs, integer=(p == "k"))
            if v is None:
                return None
            kwargs["scv_value" if p == "scv" else p] = v
    try:
        return cls(**kwargs)
    except ModelError as e:
        errs.add(path, str(e))
        return None


def _station(s, i, errs):
    path = f"stations[{i}]"
    if not isinstance(s, dict):
        errs.add(path, f"expected a mapping, got {type(s).__name__}")
        return None
    _unknown_keys(s, SCHEMA_KEYS["station"], path, errs)
    if "name" not in s:
        errs.add(f"{path}.name", "missing station name")
        return None
    kind = s.get("kind", "queue")
    if kind not in ("delay", "queue", "ld", "load_dependent"):
        errs.add(f"{path}.kind", f"unknown kind {kind!r} (delay, queue or ld)")
        return None
    n_err = len(errs.items)
    service = _number(s.get("service", 0.0), f"{path}.service", errs)
    kw: dict[str, Any] = {}
    if "capacity" in s:
        kw["capacity"] = _number(s["capacity"], f"{path}.capacity", errs, integer=True)
    if "power" in s:
        p = s["power"]
        if not isinstance(p, dict):
            errs.add(f"{path}.power", "expected {busy: W, idle: W}")
        else:
            _unknown_keys(p, SCHEMA_KEYS["power"], f"{path}.power", errs)
            pv = {k: _number(v, f"{path}.power.{k}", errs) for k, v in p.items()
                  if k in SCHEMA_KEYS["power"]}
            if "busy" not in pv:
                errs.add(f"{path}.power.busy", "missing busy power")
            elif None not in pv.values():
                try:
                    kw["power"] = Power(**pv)
                except ModelError as e:
                    errs.add(f"{path}.power", str(e))
    if "distribution" in s:
        kw["distribution"] = _distribution(s["distribution"], f"{path}.distribution", errs)
    if len(errs.items) > n_err:
        return None
    try:
        if kind == "delay":
            for bad in ("servers", "rate_multipliers", "discipline"):
                if bad in s:
                    errs.add(f"{path}.{bad}", f"a delay station has no {bad}")
                    return None
            return Delay(s["name"], service, **kw)
        if kind in ("ld", "load_dependent") or "rate_multipliers" in s:
            rm = s.get("rate_multipliers")
            if not isinstance(rm, list):
                errs.add(f"{path}.rate_multipliers", "expected a list of rate multipliers")
                return None
            vals = [_number(v, f"{path}.rate_multipliers[{j}]", errs) for j, v in enumerate(rm)]
            if None in vals:
                return None
            return LoadDependent(s["name"], service, rate_multipliers=tuple(vals), **kw)
        servers = _number(s.get("servers", 1), f"{path}.servers", errs, integer=True)
        if servers is None:
            return None
        return Queue(s["name"], service, servers=servers,
                     discipline=s.get("discipline", "fcfs"), **kw)
    except ModelError as e:
        errs.add(path, str(e))
        return None


def _class(c, i, station_names, errs):
    path = f"classes[{i}]"
    if not isinstance(c, dict):
        errs.add(path, f"expected a mapping, got {type(c).__name__}")
        return None
    _unknown_keys(c, SCHEMA_KEYS["class"], path, errs)
    if "name" not in c:
        errs.add(f"{path}.name", "missing class name")
        return None
    ctype = c.get("type", "closed")
    if ctype not in ("closed", "open"):
        errs.add(f"{path}.type", f"unknown class type {ctype!r} (closed or open)")
        return None
    n_err = len(errs.items)
    kw: dict[str, Any] = {}
    for key in ("visits", "demands", "service"):
        if key in c:
            m = _mapping_of_numbers(c[key], f"{path}.{key}", errs)
            if m is not None:
                for st in m:
                    if st not in station_names:
                        errs.add(f"{path}.{key}.{st}", f"unknown station {st!r}")
                kw[key] = m
    if "routing" in c:
        r = c["routing"]
        if not isinstance(r, dict):
            errs.add(f"{path}.routing", "expected a mapping station -> {station: probability}")
        else:
            rows = {}
            for src, row in r.items():
                src = str(src)
                if src not in station_names and src != SOURCE:
                    errs.add(f"{path}.routing.{src}", f"unknown station {src!r}")
                m = _mapping_of_numbers(row, f"{path}.routing.{src}", errs)
                if m is not None:
                    for dst in m:
                        if dst not in station_names and dst != SINK:
                            errs.add(f"{path}.routing.{src}.{dst}", f"unknown station {dst!r}")
                    rows[src] = m
            kw["routing"] = rows
    if ctype == "closed":
        if "arrival_rate" in c:
            errs.add(f"{path}.arrival_rate", "a closed class has a population, not an arrival rate")
        if "population" not in c:
            errs.add(f"{path}.population", "missing population of closed class")
        if "think_time" in c:
            kw["think_time"] = _number(c["think_time"], f"{path}.think_time", errs)
        if "reference" in c:
            kw["reference"] = str(c["reference"])
    else:
        for bad in ("population", "think_time", "reference"):
            if bad in c:
                errs.add(f"{path}.{bad}", f"an open class has no {bad}")
        if "arrival_rate" not in c:
            errs.add(f"{path}.arrival_rate", "missing arrival rate of open class")
        else:
            kw["arrival_rate"] = _number(c["arrival_rate"], f"{path}.arrival_rate", errs)
        if "interarrival" in c:
            kw["interarrival"] = _distribution(c["interarrival"], f"{path}.interarrival", errs)
    if len(errs.items) > n_err:
        return None
    try:
        if ctype == "closed":
            pop = c["population"]
            if isinstance(pop, str):
                try:
                    pop = float(pop)
                except ValueError:
                    pass
            return Closed(c["name"], pop, **kw)
        return Open(c["name"], **kw)
    except ModelError as e:
        msg = str(e)
        field_ = "population" if "population" in msg else None
        errs.add(f"{path}.{field_}" if field_ else path, msg)
        return None


def from_dict(data: dict, *, source: str = "model") -> Network:
    """Build a Network from a parsed model file (see module docstring)."""
    errs = _Errors()
    if not isinstance(data, dict):
        raise ModelFileError([("", f"expected a mapping at the top level, got "
                                   f"{type(data).__name__}")], source)
    _unknown_keys(data, SCHEMA_KEYS["network"], "", errs)
    stations_raw = data.get("stations")
    classes_raw = data.get("classes")
    if not isinstance(stations_raw, list) or not stations_raw:
        errs.add("stations", "expected a non-empty list of stations")
        stations_raw = []
    if not isinstance(classes_raw, list) or not classes_raw:
        errs.add("classes", "expected a non-empty list of classes")
        classes_raw = []
    stations = []
    seen: dict[str, str] = {}
    for i, s in enumerate(stations_raw):
        st = _station(s, i, errs)
        if st is None:
            continue
        if st.name in seen:
            errs.add(f"stations[{i}].name", f"duplicate station name {st.name!r}")
            continue
        seen[st.name] = f"stations[{i}]"
        stations.append(st)
    names = {s.get("name") for s in stations_raw if isinstance(s, dict)}
    classes = []
    for i, c in enumerate(classes_raw):
        cl = _class(c, i, names, errs)
        if cl is None:
            continue
        if cl.name in seen:
            errs.add(f"classes[{i}].name", f"name {cl.name!r} is already used at {seen[cl.name]}")
            continue
        seen[cl.name] = f"classes[{i}]"
        classes.append(cl)
    pools = []
    pools_raw = data.get("pools", [])
    if not isinstance(pools_raw, list):
        errs.add("pools", "expected a list of token pools")
        pools_raw = []
    for i, p in enumerate(pools_raw):
        path = f"pools[{i}]"
        if not isinstance(p, dict):
            errs.add(path, "expected a mapping")
            continue
        _unknown_keys(p, SCHEMA_KEYS["pool"], path, errs)
        missing = [k for k in ("name", "tokens", "acquire", "release") if k not in p]
        if missing:
            errs.add(path, f"missing {', '.join(missing)}")
            continue
        for key in ("acquire", "release"):
            if p[key] not in names:
                errs.add(f"{path}.{key}", f"unknown station {p[key]!r}")
        try:
            pools.append(TokenPool(p["name"], p["tokens"], p["acquire"], p["release"],
                                   tuple(p["classes"]) if "classes" in p else None))
        except ModelError as e:
            errs.add(path, str(e))
    if errs.items:
        raise ModelFileError(errs.items, source)
    try:
        return Network(stations, classes, name=str(data.get("name", "")), pools=pools)
    except ModelError as e:
        msg = str(e)
        path = ""
        m = re.search(r"class '([^']+)'", msg)
        if m:
            for i, c in enumerate(classes_raw):
                if isinstance(c, dict) and c.get("name") == m.group(1):
                    path = f"classes[{i}]" + (".routing" if "rout" in msg or "reach" in msg
                                              else "")
        raise ModelFileError([(path or "(network)", msg)], source) from None


def loads(text: str, *, source: str = "model") -> Network:
    """Parse YAML (a superset of JSON) text into a Network."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "?"
        problem = getattr(e, "problem", None) or str(e)
        raise ModelFileError([(where, f"not valid YAML/JSON: {problem}")], source) from None
    return from_dict(data, source=source)


def load(path) -> Network:
    """Read a ``.yaml``/``.yml``/``.json`` model file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ModelFileError([("", f"cannot read file: {e.strerror}")], str(path)) from None
    if p.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ModelFileError(
                [(f"line {e.lineno}, column {e.colno}", f"not valid JSON: {e.msg}")], str(path)
            ) from None
        return from_dict(data, source=str(path))
    return loads(text, source=str(path))


def _plain(v):
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        return v
    return v if isinstance(v, (int, float, str)) else str(v)


def to_dict(net: Network) -> dict:
    """The model-file form of ``net`` (numeric models), inverse of
    :func:`from_dict`."""
    stations = []
    for s in net.stations:
        d: dict[str, Any] = {"name": s.name, "service": _plain(s.service)}
        if isinstance(s, Delay):
            d["kind"] = "delay"
        elif isinstance(s, LoadDependent):
            d["kind"] = "ld"
            d["rate_multipliers"] = [_plain(a) for a in s.rate_multipliers]
        else:
            d["kind"] = "queue"
            if s.servers != 1:
                d["servers"] = s.servers
            if s.discipline != "fcfs":
                d["discipline"] = s.discipline
        if s.capacity is not None:
            d["capacity"] = s.capacity
        if s.power is not None:
            d["power"] = {k: _plain(getattr(s.power, k)) for k in ("busy", "idle", "read", "write")
                          if getattr(s.power, k) is not None}
        stations.append(d)
    classes = []
    for c in net.classes:
        d = {"name": c.name, "type": c.kind}
        if isinstance(c, Closed):
            d["population"] = c.population
            if c.think_time:
                d["think_time"] = _plain(c.think_time)
            if c.reference:
                d["reference"] = c.reference
        else:
            d["arrival_rate"] = _plain(c.arrival_rate)
        for key in ("visits", "demands", "service"):
            m = getattr(c, key)
            if m is not None:
                d[key] = {k: _plain(v) for k, v in m.items()}
        if c.routing is not None:
            d["routing"] = {s: {t: _plain(p) for t, p in row.items()}
                            for s, row in c.routing.items()}
        classes.append(d)
    out = {"name": net.name, "stations": stations, "classes": classes}
    if net.pools:
        out["pools"] = [{"name": p.name, "tokens": p.tokens, "acquire": p.acquire,
                         "release": p.release, **({"classes": list(p.classes)}
                                                  if p.classes else {})} for p in net.pools]
    return out
