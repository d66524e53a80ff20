"""Model files: a :class:`~qmodels.model.Network` to YAML or JSON and back.

``save(net, "m.yaml")`` and ``load("m.yaml")`` round-trip every field of a
model: stations of every kind with their service-time distributions, power,
capacity and servers; classes given by visits, routing or demands, with
per-class service times, think times, reference stations, arrival rates and
inter-arrival distributions; token pools; and symbolic values, written as
expressions that are read back into the same sympy objects (their symbols
and assumptions are listed under ``symbols``).  ``load(save(net)) == net``,
whatever order a mapping's keys come back in (a closed class's reference
station is always written out).

The format (times in seconds, rates per second, power in watts)::

    name: two-tier example                 # optional
    symbols: {S_disk: {positive: true}}    # optional: names expressions may use
    stations:                              # required, non-empty list
      - name: cpu                          # required, unique
        kind: queue                        # delay | queue | ld (load-dependent)
        service: 0.010                     # mean service time per visit (required,
                                           #   unless every class gives its own)
        servers: 4                         # queue only, default 1
        discipline: fcfs                   # queue only: fcfs | ps
        capacity: 8                        # optional finite room
        rate_multipliers: [1, 1.8, 2.4]    # ld only: rate with n jobs = a[n-1]/service
        power: {busy: 6.8, idle: 4.0}      # optional (read, write too)
        distribution: {type: erlang, k: 2} # optional service shape
    classes:                               # required, non-empty list
      - name: tx
        type: closed                       # closed | open
        population: 40                     # closed: non-negative integer
        think_time: 0                      # closed, optional
        reference: cpu                     # closed, optional
        arrival_rate: 2.5                  # open
        interarrival: {type: hyperexponential, scv: 4}   # open, optional
        visits: {cpu: 1, disk: 0.27}       # exactly one of visits,
        routing: {cpu: {disk: 1}, ...}     #   routing (open: source/sink rows),
        demands: {cpu: 0.01}               #   demands
        service: {disk: S_disk}            # optional per-class service times
    pools:                                 # optional held resources
      - {name: xnif, tokens: 4, acquire: dma, release: port, classes: [tx]}

The JSON Schema of this format ships with the package
(``qmodels/io/model.schema.json``, printed by ``qmodels schema``); it checks
the structure, and the model's constructors check the values.  Every error
is reported with its path in the file (``classes[0].population``), all at
once, as one :class:`~qmodels.errors.ModelFileError`.

Reading is defensive: a file is read up to :data:`MAX_BYTES` (a larger one
is refused, not truncated), must be UTF-8 text, may nest at most
:data:`MAX_DEPTH` levels, may not repeat a key in a mapping, and may not put
control or invisible format characters in names; names are compared after
Unicode NFC normalisation (``"e\\u0301"`` and ``"\\u00e9"`` are one name).
Expressions are parsed by a small arithmetic grammar (numbers, declared
symbols, ``+ - * / **``, ``sqrt exp log Min Max``), never evaluated as code.
YAML is read with YAML 1.2 floats (``1e-3`` is a number, as in JSON) and
written so that it reads back the same.

``save`` and ``load`` choose the format by suffix: ``.yaml``/``.yml``,
``.json``, and JMT's ``.jmva`` (both ways) and ``.jsimg`` (write only), see
:mod:`qmodels.io.jmt`; ``"-"`` is standard input or output.  On the command
line, ``qmodels check MODEL...`` reports every error of each file and
``qmodels convert SOURCE TARGET`` converts between the formats (see
:func:`register_cli`).
"""

from __future__ import annotations

import ast
import functools
import io
import json
import keyword
import math
import numbers
import sys
import unicodedata
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..errors import ModelError, ModelFileError, RoutingError
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

__all__ = ["load", "loads", "save", "dumps", "from_dict", "to_dict", "parse",
           "parse_expression", "register_cli", "MAX_BYTES", "MAX_DEPTH"]

#: Largest model file read, in bytes (10 MiB); a larger file is refused.
MAX_BYTES = 10 * 1024 * 1024
#: Deepest nesting of lists and mappings accepted.
MAX_DEPTH = 64
#: Most values (after YAML alias expansion) in one file.
MAX_NODES = 1_000_000
#: Longest expression string.
MAX_EXPRESSION = 2000

_DISTS = {
    "exponential": (dist.Exponential, ()),
    "deterministic": (dist.Deterministic, ()),
    "erlang": (dist.Erlang, ("k",)),
    "hyperexponential": (dist.HyperExponential, ("scv",)),
    "lognormal": (dist.Lognormal, ("scv",)),
    "uniform": (dist.Uniform, ("spread",)),
    "empirical": (dist.Empirical, ("samples",)),
}
_DIST_ATTR = {"k": "k", "scv": "scv_value", "spread": "spread", "samples": "samples"}


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
# expressions: a small grammar, never eval
# ---------------------------------------------------------------------------

def _sympy_funcs():
    import sympy as sp

    return {"sqrt": sp.sqrt, "exp": sp.exp, "log": sp.log, "Min": sp.Min, "Max": sp.Max,
            "Abs": sp.Abs, "floor": sp.floor, "ceiling": sp.ceiling}


def parse_expression(text: str, symbols: dict):
    """A sympy expression from ``text``, using only the declared
    ``symbols`` (name -> Symbol); raises ``ValueError`` naming what is not
    allowed.  Numbers, names, ``+ - * / **``, unary minus and the functions
    ``sqrt exp log Min Max Abs floor ceiling`` are allowed; nothing is
    evaluated as Python code."""
    import sympy as sp

    if len(text) > MAX_EXPRESSION:
        raise ValueError(f"expression longer than {MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        raise ValueError("not a number or an expression") from None
    funcs = _sympy_funcs()
    consts = {"pi": sp.pi, "E": sp.E}

    def conv(node):
        if isinstance(node, ast.Expression):
            return conv(node.body)
        if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
            if isinstance(node.value, int):
                return sp.Integer(node.value)
            if isinstance(node.value, float):
                return sp.Float(node.value)
        if isinstance(node, ast.Name):
            if node.id in symbols:
                return symbols[node.id]
            if node.id in consts:
                return consts[node.id]
            raise ValueError(f"unknown name {node.id!r} (declare it under symbols)")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = conv(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = conv(node.left), conv(node.right)
            op = type(node.op)
            if op is ast.Add:
                return a + b
            if op is ast.Sub:
                return a - b
            if op is ast.Mult:
                return a * b
            if op is ast.Div:
                if b == 0:
                    raise ValueError("division by zero")
                return a / b
            if op is ast.Pow:
                if b.is_number and (not b.is_finite or abs(b) > 64):
                    raise ValueError("exponent larger than 64")
                return a ** b
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in funcs and not node.keywords):
            return funcs[node.func.id](*[conv(a) for a in node.args])
        what = (f"function {node.func.id!r}" if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name) else type(node).__name__)
        raise ValueError(f"{what} is not allowed in an expression")

    try:
        return conv(tree)
    except RecursionError:
        raise ValueError("expression nested too deeply") from None
    except (TypeError, ArithmeticError) as e:
        raise ValueError(f"cannot evaluate: {e}") from None


def _expr_printer():
    from sympy.printing.str import StrPrinter

    class _Printer(StrPrinter):
        def _print_Float(self, expr):
            # the shortest text that reads back as the same double
            return repr(float(expr))

    return _Printer()


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
        if p == "samples":
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
    import sympy as sp

    out = {}
    for name, assumptions in (spec or {}).items():
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


def _station(s, path, errs, ctx):
    explicit = s.get("kind")
    kind = explicit or ("ld" if "rate_multipliers" in s else "queue")
    kind = "ld" if kind == "load_dependent" else kind
    n0 = len(errs)
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
    service = _value(s["service"], f"{path}.service", errs, ctx) if "service" in s else 0.0
    kw: dict[str, Any] = {}
    if "capacity" in s:
        kw["capacity"] = _value(s["capacity"], f"{path}.capacity", errs, ctx, integer=True)
    if "power" in s:
        pv = {k: _value(v, f"{path}.power.{k}", errs, ctx) for k, v in s["power"].items()}
        if None not in pv.values():
            if all(_probe(errs, f"{path}.power.{k}", lambda k=k, v=v: Power(**{"busy": 0, k: v}))
                   for k, v in pv.items()):
                try:
                    kw["power"] = Power(**pv)
                except ModelError as e:
                    errs.add(f"{path}.power", str(e))
    if "distribution" in s:
        kw["distribution"] = _distribution(s["distribution"], f"{path}.distribution", errs, ctx)
        if kw["distribution"] is None:
            return None
    name = s["name"]
    if len(errs) > n0:
        return None
    ok = _probe(errs, f"{path}.service", lambda: Delay(name, service))
    if kw.get("capacity") is not None:
        ok &= _probe(errs, f"{path}.capacity", lambda: Delay(name, 0.0, capacity=kw["capacity"]))
    try:
        if kind == "delay":
            return Delay(name, service, **kw) if ok else None
        if kind == "ld":
            vals = [_value(v, f"{path}.rate_multipliers[{j}]", errs, ctx)
                    for j, v in enumerate(s["rate_multipliers"])]
            if any(v is None for v in vals) or not ok:
                return None
            for j, v in enumerate(vals):
                if not _probe(errs, f"{path}.rate_multipliers[{j}]",
                              lambda v=v: LoadDependent(name, 0.0, rate_multipliers=(v,))):
                    return None
            return LoadDependent(name, service, rate_multipliers=tuple(vals), **kw)
        servers = _value(s.get("servers", 1), f"{path}.servers", errs, ctx, integer=True)
        if servers is None or not _probe(errs, f"{path}.servers",
                                         lambda: Queue(name, 0.0, servers=servers)) or not ok:
            return None
        return Queue(name, service, servers=servers, discipline=s.get("discipline", "fcfs"), **kw)
    except ModelError as e:
        errs.add(path, str(e))
        return None


def _class(c, path, station_names, errs, ctx):
    ctype = c.get("type", "closed")
    n0 = len(errs)
    kw: dict[str, Any] = {}
    for key in ("visits", "demands", "service"):
        if key in c:
            for st in c[key]:
                if st not in station_names:
                    errs.add(_join(f"{path}.{key}", st), f"unknown station {st!r}")
            kw[key] = _values(c[key], f"{path}.{key}", errs, ctx)
    if "routing" in c:
        rows = {}
        for src, row in c["routing"].items():
            rpath = _join(f"{path}.routing", src)
            if src not in station_names and src != SOURCE:
                errs.add(rpath, f"unknown station {src!r}")
            for dst in row:
                if dst not in station_names and dst != SINK:
                    errs.add(_join(rpath, dst), f"unknown station {dst!r}")
            rows[src] = _values(row, rpath, errs, ctx)
        kw["routing"] = rows
    if ctype == "closed":
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
    else:
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
    if len(errs) > n0:
        return None
    name = c["name"]
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
    for key in ("visits", "demands", "service"):
        for st, v in (kw.get(key) or {}).items():
            spec = {key: {st: v}} if key != "service" else {"visits": {}, "service": {st: v}}
            ok &= _probe(errs, _join(f"{path}.{key}", st),
                         lambda spec=spec: make(name, **spec))
    for src, row in (kw.get("routing") or {}).items():
        for dst, p in row.items():
            ok &= _probe(errs, _join(_join(f"{path}.routing", src), dst),
                         lambda src=src, dst=dst, p=p: make(name, routing={src: {dst: p}}))
    if not ok:
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
    return False


def _own_time(c: dict, station: str) -> bool:
    return station in c.get("demands", {}) or station in c.get("service", {})


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
    bad = [p for p, _ in errs.items]

    def broken(prefix):
        return any(p == prefix or p.startswith(prefix + ".") or p.startswith(prefix + "[")
                   for p in bad)

    spec = data.get("symbols")
    spec = {k: v for k, v in spec.items() if not broken(_join("symbols", k))
            and isinstance(v, dict) and all(isinstance(b, bool) for b in v.values())
            and k.isidentifier()} if isinstance(spec, dict) else None
    ctx = _Ctx(_symbols(spec, errs))
    stations_raw = data.get("stations") if isinstance(data.get("stations"), list) else []
    classes_raw = data.get("classes") if isinstance(data.get("classes"), list) else []
    pools_raw = data.get("pools") if isinstance(data.get("pools"), list) else []
    names = {s["name"] for s in stations_raw
             if isinstance(s, dict) and isinstance(s.get("name"), str)}
    good_classes = [c for i, c in enumerate(classes_raw)
                    if isinstance(c, dict) and not broken(f"classes[{i}]")]

    stations, seen = [], {}
    for i, s in enumerate(stations_raw):
        path = f"stations[{i}]"
        if broken(path):
            continue
        if "service" not in s:
            users = [c for c in good_classes if _mentions(c, s["name"])]
            lacking = [c["name"] for c in users if not _own_time(c, s["name"])]
            own = [c for c in good_classes if _own_time(c, s["name"])]
            if lacking or not own:
                why = (f"class {lacking[0]!r} visits it and gives no service time of its own"
                       if lacking else "no class gives a service time for it")
                errs.add(f"{path}.service", f"missing service time of station {s['name']!r} "
                                            f"({why})")
                continue
        st = _station(s, path, errs, ctx)
        if st is None:
            continue
        if st.name in seen:
            errs.add(f"{path}.name", f"duplicate station name {st.name!r} (also {seen[st.name]})")
            continue
        seen[st.name] = path
        stations.append(st)

    classes, class_paths = [], []
    for i, c in enumerate(classes_raw):
        path = f"classes[{i}]"
        if broken(path):
            continue
        cl = _class(c, path, names, errs, ctx)
        if cl is None:
            continue
        if cl.name in seen:
            errs.add(f"{path}.name", f"name {cl.name!r} is already used at {seen[cl.name]}")
            continue
        seen[cl.name] = path
        classes.append(cl)
        class_paths.append(path)

    pools, pool_paths = [], []
    class_names = {c.get("name") for c in classes_raw
                   if isinstance(c, dict) and isinstance(c.get("name"), str)}
    for i, p in enumerate(pools_raw):
        path = f"pools[{i}]"
        if broken(path):
            continue
        for key in ("acquire", "release"):
            if p[key] not in names:
                errs.add(f"{path}.{key}", f"unknown station {p[key]!r}")
        for j, cn in enumerate(p.get("classes", ())):
            if cn not in class_names:
                errs.add(f"{path}.classes[{j}]", f"unknown class {cn!r}")
        tokens = _value(p["tokens"], f"{path}.tokens", errs, ctx, integer=True)
        if tokens is None or broken(path) or any(e[0].startswith(path) for e in errs.items):
            continue
        try:
            pool = TokenPool(p["name"], tokens, p["acquire"], p["release"],
                             tuple(p["classes"]) if "classes" in p else None)
        except ModelError as e:
            errs.add(path, str(e))
            continue
        if pool.name in seen:
            errs.add(f"{path}.name", f"name {pool.name!r} is already used at {seen[pool.name]}")
            continue
        seen[pool.name] = path
        pools.append(pool)
        pool_paths.append(path)

    if errs.items:
        raise ModelFileError(errs.sorted(), source)
    name = data.get("name", "")
    try:
        return Network(stations, classes, name=name, pools=pools)
    except ModelError:
        pass
    # find which class or pool the network refuses: build it one part at a time
    for cl, path in zip(classes, class_paths):
        try:
            Network(stations, [cl])
        except ModelError as e:
            where = ".routing" if cl.routing is not None and isinstance(e, RoutingError) else ""
            errs.add(path + where, str(e))
    if not errs.items:
        for pool, path in zip(pools, pool_paths):
            try:
                Network(stations, classes, pools=[pool])
            except ModelError as e:
                errs.add(path, str(e))
    if not errs.items:
        try:
            Network(stations, classes, name=name, pools=pools)
        except ModelError as e:
            errs.add("(network)", str(e))
    raise ModelFileError(errs.sorted(), source)


# ---------------------------------------------------------------------------
# from text to plain data: sizes, encodings, duplicate keys, depth
# ---------------------------------------------------------------------------

def _with_yaml12_floats(base):
    """A subclass of a PyYAML loader or dumper that also reads ``1e-3``
    (no dot: a string in YAML 1.1) as a number, as YAML 1.2 and JSON do; the
    dumper then quotes a string such as ``"0E0"`` so that it reads back as
    a string."""
    import re

    cls = type(f"_{base.__name__}12", (base,), {})
    cls.yaml_implicit_resolvers = {k: list(v) for k, v in base.yaml_implicit_resolvers.items()}
    cls.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
        list("-+0123456789"))
    return cls


@functools.lru_cache(maxsize=1)
def _yaml_loader():
    import yaml

    return _with_yaml12_floats(yaml.SafeLoader)


@functools.lru_cache(maxsize=1)
def _yaml_dumper():
    import yaml

    return _with_yaml12_floats(yaml.SafeDumper)


class _Budget:
    def __init__(self):
        self.nodes = 0


def _from_yaml_node(node, path, errs, loader, budget, depth):
    import yaml

    budget.nodes += 1
    if budget.nodes > MAX_NODES:
        raise _TooBig(f"more than {MAX_NODES} values (YAML aliases expanding?)")
    if depth > MAX_DEPTH:
        raise _TooDeep(path)
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_object(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return [_from_yaml_node(n, f"{path}[{i}]", errs, loader, budget, depth + 1)
                for i, n in enumerate(node.value)]
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        out = {}
        for knode, vnode in node.value:
            if not isinstance(knode, yaml.ScalarNode):
                errs.add(path, "a mapping key must be a plain value "
                               f"(line {knode.start_mark.line + 1})")
                continue
            key = loader.construct_object(knode, deep=True)
            key = key if isinstance(key, str) else str(key)
            kpath = _join(path, key)
            if key in out:
                errs.add(kpath, f"duplicate key {key!r} (line {knode.start_mark.line + 1})")
                continue
            out[key] = _from_yaml_node(vnode, kpath, errs, loader, budget, depth + 1)
        return out
    raise _TooBig(f"unexpected YAML node {type(node).__name__}")


class _TooDeep(Exception):
    pass


class _TooBig(Exception):
    pass


class _Pairs(list):
    """A JSON object as its list of (key, value) pairs, so duplicates show."""


def _from_json(obj, path, errs, depth):
    if depth > MAX_DEPTH:
        raise _TooDeep(path)
    if isinstance(obj, _Pairs):
        out = {}
        for k, v in obj:
            kpath = _join(path, k)
            if k in out:
                errs.add(kpath, f"duplicate key {k!r}")
                continue
            out[k] = _from_json(v, kpath, errs, depth + 1)
        return out
    if isinstance(obj, list):
        return [_from_json(v, f"{path}[{i}]", errs, depth + 1) for i, v in enumerate(obj)]
    return obj


def parse(text: str, *, fmt: str = "yaml", source: str = "model"):
    """Plain data (dicts, lists, str, numbers) from YAML or JSON text, with
    duplicate keys, excessive nesting and syntax errors reported as one
    :class:`ModelFileError` (never a traceback)."""
    import yaml

    errs = _Errors()
    try:
        if fmt == "json":
            try:
                raw = json.loads(text, object_pairs_hook=_Pairs)
            except json.JSONDecodeError as e:
                raise ModelFileError([(f"line {e.lineno}, column {e.colno}",
                                       f"not valid JSON: {e.msg}")], source) from None
            data = _from_json(raw, "", errs, 0)
        else:
            loader = None
            try:
                loader = _yaml_loader()(text)
                node = loader.get_single_node()
                data = (None if node is None
                        else _from_yaml_node(node, "", errs, loader, _Budget(), 0))
            except yaml.reader.ReaderError as e:
                ch = e.character if isinstance(e.character, int) else ord(e.character)
                raise ModelFileError([(f"offset {e.position}", f"not valid YAML/JSON: "
                                       f"character U+{ch:04X} is not allowed")], source) from None
            except yaml.YAMLError as e:
                mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
                where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(file)"
                problem = getattr(e, "problem", None) or str(e).splitlines()[0]
                raise ModelFileError([(where, f"not valid YAML/JSON: {problem}")],
                                     source) from None
            finally:
                if loader is not None:
                    loader.dispose()
    except (RecursionError, _TooDeep) as e:
        where = str(e) if isinstance(e, _TooDeep) and str(e) else "(file)"
        raise ModelFileError([(where, f"nested deeper than {MAX_DEPTH} levels")],
                             source) from None
    except _TooBig as e:
        raise ModelFileError([("(file)", str(e))], source) from None
    if errs.items:
        raise ModelFileError(errs.sorted(), source)
    return data


def loads(text: str, *, source: str = "model", format: str = "yaml") -> Network:
    """A Network from YAML (default; a superset of JSON) or JSON text."""
    if format not in ("yaml", "json"):
        raise ValueError(f"format must be 'yaml' or 'json', got {format!r}")
    return from_dict(parse(text, fmt=format, source=source), source=source)


def _read(path) -> tuple[str, str]:
    """(text, source name) of a file or of standard input (``"-"``), read
    up to MAX_BYTES + 1 bytes."""
    is_stdin = str(path) == "-"
    source = "<stdin>" if is_stdin else str(path)
    try:
        if is_stdin:
            stream = getattr(sys.stdin, "buffer", None)
            data = stream.read(MAX_BYTES + 1) if stream is not None else \
                sys.stdin.read(MAX_BYTES + 1).encode("utf-8", "surrogateescape")
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise ModelFileError([("(file)", f"cannot read file: {e.strerror or e}")],
                             source) from None
    if len(data) > MAX_BYTES:
        raise ModelFileError([("(file)", f"larger than the {MAX_BYTES // (1024 * 1024)} MiB "
                                         "limit of model files (reading stopped there)")],
                             source)
    nul = data.find(b"\0")
    if nul >= 0:
        raise ModelFileError([("(file)", f"binary data (a NUL byte at offset {nul}): not a "
                                         "YAML/JSON text file")], source)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ModelFileError([("(file)", f"not UTF-8 text: byte 0x{data[e.start]:02x} at offset "
                                         f"{e.start}")], source) from None
    return text, source


def load(path) -> Network:
    """Read a model file: ``.json`` as JSON, ``.jmva`` as JMT's JMVA XML
    (:func:`qmodels.io.jmt.load_jmva`), anything else (``.yaml``, ``.yml``) as
    YAML; ``"-"`` reads standard input (YAML, which accepts JSON too).

    Raises
    ------
    ModelFileError
        Every error of the file, each with its path, at once.
    """
    if str(path).lower().endswith(".jmva"):
        from .jmt import load_jmva

        return load_jmva(path)
    text, source = _read(path)
    fmt = "json" if str(path).lower().endswith(".json") else "yaml"
    return from_dict(parse(text, fmt=fmt, source=source), source=source)


# ---------------------------------------------------------------------------
# from a Network to plain data and text
# ---------------------------------------------------------------------------

def _is_sympy(v) -> bool:
    return hasattr(v, "free_symbols") and hasattr(v, "is_number")


def _out(v, symbols: dict):
    """A file value: int, float or expression string."""
    if isinstance(v, bool):
        raise TypeError(f"not a model value: {v!r}")
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, float):
        return v
    if isinstance(v, Fraction):
        return f"{v.numerator}/{v.denominator}" if v.denominator != 1 else v.numerator
    if _is_sympy(v):
        for s in v.free_symbols:
            if not s.name.isidentifier() or keyword.iskeyword(s.name):
                raise ValueError(f"symbol {s.name!r} cannot be written to a model file: its "
                                 "name must be letters, digits and _")
            symbols[s.name] = s
        if v.is_Integer:
            return int(v)
        if v.is_Float and getattr(v, "_prec", 53) == 53:
            return float(v)
        return _expr_printer().doprint(v)
    if isinstance(v, numbers.Real):
        return float(v)
    raise TypeError(f"not a model value: {v!r}")


def _dist_out(d, symbols):
    if d is None:
        return None
    out: dict[str, Any] = {"type": d.name}
    for p in _DISTS[d.name][1]:
        v = getattr(d, _DIST_ATTR[p])
        out[p] = list(v) if p == "samples" else _out(v, symbols)
    return out


def _assumptions(sym) -> dict:
    orig = getattr(sym, "_assumptions_orig", None)
    if orig is None:
        orig = {k: v for k, v in sym.assumptions0.items() if k != "commutative"}
    return {k: bool(v) for k, v in orig.items() if v is not None}


def to_dict(net: Network) -> dict:
    """The model-file form of ``net``: plain data that :func:`from_dict`
    turns back into an equal network (``from_dict(to_dict(net)) == net``),
    whatever the order of its keys.  Symbolic values become expression
    strings and their symbols are listed, with assumptions, under
    ``symbols``."""
    symbols: dict = {}

    def o(v):
        return _out(v, symbols)

    for what, items in (("station", net.stations), ("class", net.classes),
                        ("pool", net.pools)):
        for item in items:
            errs = _Errors()
            if _check_text(item.name, "", errs) != item.name or errs.items:
                why = errs.items[0][1] if errs.items else "it is not in Unicode NFC form"
                raise ValueError(f"{what} name {item.name!r} cannot be written to a model file "
                                 f"that reads back the same: {why}")

    stations = []
    for s in net.stations:
        d: dict[str, Any] = {"name": s.name}
        if isinstance(s, Delay):
            d["kind"] = "delay"
        elif isinstance(s, LoadDependent):
            d["kind"] = "ld"
        else:
            d["kind"] = "queue"
        d["service"] = o(s.service)
        if isinstance(s, LoadDependent):
            d["rate_multipliers"] = [o(a) for a in s.rate_multipliers]
        elif isinstance(s, Queue):
            d["servers"] = o(s.servers)
            d["discipline"] = s.discipline
        if s.capacity is not None:
            d["capacity"] = o(s.capacity)
        if s.power is not None:
            d["power"] = {k: o(getattr(s.power, k)) for k in ("busy", "idle", "read", "write")
                          if getattr(s.power, k) is not None}
        if s.distribution is not None:
            d["distribution"] = _dist_out(s.distribution, symbols)
        stations.append(d)
    classes = []
    for c in net.classes:
        d = {"name": c.name, "type": c.kind}
        if isinstance(c, Closed):
            d["population"] = o(c.population)
            d["think_time"] = o(c.think_time)
            if c.reference is not None:
                d["reference"] = c.reference
        else:
            d["arrival_rate"] = o(c.arrival_rate)
            if c.interarrival is not None:
                d["interarrival"] = _dist_out(c.interarrival, symbols)
        for key in ("visits", "demands", "service"):
            m = getattr(c, key)
            if m is not None:
                d[key] = {k: o(v) for k, v in m.items()}
        if c.routing is not None:
            d["routing"] = {s: {t: o(p) for t, p in row.items()}
                            for s, row in c.routing.items()}
        classes.append(d)
    out: dict[str, Any] = {"name": net.name}
    if symbols:
        out["symbols"] = {n: _assumptions(symbols[n]) for n in sorted(symbols)}
    out["stations"] = stations
    out["classes"] = classes
    if net.pools:
        out["pools"] = [{"name": p.name, "tokens": o(p.tokens), "acquire": p.acquire,
                         "release": p.release,
                         **({"classes": list(p.classes)} if p.classes is not None else {})}
                        for p in net.pools]
    return out


def dumps(net: Network, format: str = "yaml") -> str:
    """The model file of ``net`` as YAML (default) or JSON text."""
    data = to_dict(net)
    if format == "json":
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if format != "yaml":
        raise ValueError(f"format must be 'yaml' or 'json', got {format!r}")
    import yaml

    buf = io.StringIO()
    yaml.dump(data, buf, Dumper=_yaml_dumper(), sort_keys=False, allow_unicode=True,
              default_flow_style=None, width=100)
    return buf.getvalue()


_SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".jmva": "jmva",
             ".jsimg": "jsimg"}


def _format_of(path, default=None) -> str:
    if str(path) == "-":
        return default or "yaml"
    fmt = _SUFFIXES.get(Path(str(path)).suffix.lower())
    if fmt is None:
        raise ValueError(f"cannot tell the format of {str(path)!r} from its suffix: use "
                         f"{', '.join(_SUFFIXES)}")
    return fmt


def save(net: Network, path, *, format: str | None = None) -> None:
    """Write ``net`` to a file whose format its suffix names: ``.yaml`` /
    ``.yml`` or ``.json`` model files (``load(path) == net``), or JMT's
    ``.jmva`` / ``.jsimg`` (:mod:`qmodels.io.jmt`, which refuses what JMT cannot
    express).  ``"-"`` writes to standard output (YAML unless ``format``
    says otherwise)."""
    if not isinstance(net, Network):
        raise TypeError(f"save() needs a qmodels Network, got {type(net).__name__}")
    fmt = format or _format_of(path)
    if fmt in ("jmva", "jsimg"):
        from . import jmt

        text = jmt.to_jmva(net) if fmt == "jmva" else jmt.to_jsimg(net)
    else:
        text = dumps(net, fmt)
    if str(path) == "-":
        sys.stdout.write(text)
        return
    Path(path).write_text(text, encoding="utf-8")


# ---------------------------------------------------------------------------
# command line: qmodels check / qmodels convert
# ---------------------------------------------------------------------------

def _report(e) -> int:
    from ..errors import QModelsError

    if isinstance(e, ModelFileError):
        print(f"error: {e}", file=sys.stderr)
    elif isinstance(e, QModelsError):
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
    else:
        print(f"error: {e}", file=sys.stderr)
    return 2


def _cmd_check(args) -> int:
    status = 0
    for path in args.models:
        try:
            net = load(path)
        except ModelFileError as e:
            status = _report(e)
            continue
        kinds = "closed" if net.is_closed else "open" if net.is_open else "mixed"
        print(f"{path}: ok ({len(net.stations)} stations, {len(net.classes)} {kinds} "
              f"class{'es' if len(net.classes) != 1 else ''}"
              + (f", {len(net.pools)} pools" if net.pools else "") + ")")
    return status


def _cmd_convert(args) -> int:
    from ..errors import QModelsError

    try:
        net = load(args.source)
        save(net, args.target, format=args.to)
    except (QModelsError, ValueError, OSError) as e:
        return _report(e)
    return 0


def register_cli(sub) -> None:
    """Add ``qmodels check`` (validate model files) and ``qmodels convert``
    (between YAML, JSON, JMVA and JSIMg) to an argparse subparsers object."""
    c = sub.add_parser("check", help="validate model files, reporting every error",
                       description="Load each model file and report every error with its path "
                                   "(exit status 2 if any file has errors).")
    c.add_argument("models", nargs="+", metavar="MODEL", help="model file, or - for stdin")
    c.set_defaults(func=_cmd_check)
    v = sub.add_parser("convert", help="convert a model between YAML, JSON, JMVA and JSIMg",
                       description="Read SOURCE (.yaml, .yml, .json, .jmva, or - for stdin) "
                                   "and write TARGET in the format its suffix names (.yaml, "
                                   ".yml, .json, .jmva, .jsimg; - for stdout).")
    v.add_argument("source", metavar="SOURCE")
    v.add_argument("target", metavar="TARGET")
    v.add_argument("--to", choices=["yaml", "json", "jmva", "jsimg"],
                   help="output format (default: from TARGET's suffix; YAML for -)")
    v.set_defaults(func=_cmd_convert)
