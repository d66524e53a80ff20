"""Model files, writing side: :class:`~qmodels.model.Network` -> plain data.

:func:`to_dict` gives the model-file form of a network, which
:func:`qmodels.io.decode.from_dict` reads back into an equal one; symbolic
values become expression strings (:mod:`qmodels.io.expressions`) with
their symbols listed under ``symbols``.
"""

from __future__ import annotations

import keyword
import numbers
import sys
from typing import Any

from ..errors import InvalidValueError
from ..model.caching import CacheStation
from ..model.forkjoin import ForkJoin
from ..model.network import Closed, Delay, LoadDependent, Network, Queue
from .decode import _DIST_ATTR, _DISTS, _LIST_PARAMS, _MATRIX_PARAMS, _check_text, _Errors
from .expressions import _expr_printer

__all__ = ["to_dict"]


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
    fractions = sys.modules.get("fractions")   # no Fraction exists unless it was imported
    if fractions is not None and isinstance(v, fractions.Fraction):
        return f"{v.numerator}/{v.denominator}" if v.denominator != 1 else v.numerator
    if _is_sympy(v):
        for s in v.free_symbols:
            if not s.name.isidentifier() or keyword.iskeyword(s.name):
                raise InvalidValueError(f"symbol {s.name!r} cannot be written to a model file: its "
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
        if d.name == "hyperexponential" and (v is None or (p == "scv" and d.probs is not None)):
            continue        # given by its scv, or by its branches (the scv follows)
        out[p] = ([list(r) for r in v] if p in _MATRIX_PARAMS else list(v)
                  if p in _LIST_PARAMS else _out(v, symbols))
    return out


def _assumptions(sym) -> dict:
    orig = getattr(sym, "_assumptions_orig", None)
    if orig is None:
        orig = {k: v for k, v in sym.assumptions0.items() if k != "commutative"}
    return {k: bool(v) for k, v in orig.items() if v is not None}


def _check_names(net: Network) -> None:
    """Refuse a name that would not read back the same (not NFC, or with
    invisible or control characters)."""
    for what, items in (("station", net.stations), ("class", net.classes),
                        ("pool", net.pools)):
        for item in items:
            errs = _Errors()
            if _check_text(item.name, "", errs) != item.name or errs.items:
                why = errs.items[0][1] if errs.items else "it is not in Unicode NFC form"
                raise InvalidValueError(
                    f"{what} name {item.name!r} cannot be written to a model file "
                    f"that reads back the same: {why}")


def _station_out(s, symbols: dict) -> dict:
    def o(v):
        return _out(v, symbols)

    d: dict[str, Any] = {"name": s.name}
    if isinstance(s, ForkJoin):
        d["kind"] = "forkjoin"
        d["branches"] = [list(b) for b in s.branches]
        if any(t != 1 for t in s.tasks):
            d["tasks"] = [int(t) for t in s.tasks]
        return d
    if isinstance(s, Delay):
        d["kind"] = "delay"
    elif isinstance(s, LoadDependent):
        d["kind"] = "ld"
    elif isinstance(s, CacheStation):
        d["kind"] = "cache"
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
    if isinstance(s, CacheStation):
        # the cache; its popularity as the item probabilities (floats written
        # exactly, so the catalog reads back bit for bit).  The physical
        # element it may have been built from (a qmodels.Cache) is not
        # written: the station read back is equal, without it
        d.update(cache_capacity=int(s.cache_capacity), policy=s.policy, hit=s.hit, miss=s.miss,
                 popularity=[float(p) for p in s.popularity])
    return d


def _class_out(c, symbols: dict) -> dict:
    def o(v):
        return _out(v, symbols)

    d: dict[str, Any] = {"name": c.name, "type": c.kind}
    if isinstance(c, Closed):
        d["population"] = o(c.population)
        d["think_time"] = o(c.think_time)
        if c.reference is not None:
            d["reference"] = c.reference
    else:
        d["arrival_rate"] = o(c.arrival_rate)
        if c.interarrival is not None:
            d["interarrival"] = _dist_out(c.interarrival, symbols)
    if c.priority != 0:
        d["priority"] = c.priority
    for key in ("visits", "demands", "service"):
        m = getattr(c, key)
        if m is not None:
            d[key] = {k: o(v) for k, v in m.items()}
    if c.distribution:
        d["distribution"] = {st: _dist_out(x, symbols) for st, x in c.distribution.items()}
    if c.route is not None:
        d["route"] = list(c.route)
    elif c.routing is not None:
        d["routing"] = {s: _row_out(c.name, row, o) for s, row in c.routing.items()}
    return d


def _row_out(owner: str, row, o) -> dict:
    """A routing row in file form: ``station: p``, and ``station: {class:
    p}`` where a class switch sends jobs there (the row's own class then
    listed by name beside the others)."""
    out: dict = {}
    switched = {k[0] for k in row if isinstance(k, tuple)}
    for key, p in row.items():
        st, cls = key if isinstance(key, tuple) else (key, owner)
        if st in switched:
            out.setdefault(st, {})[cls] = o(p)
        else:
            out[st] = o(p)
    return out


def to_dict(net: Network) -> dict:
    """The model-file form of ``net``: plain data that :func:`~qmodels.io.decode.from_dict`
    turns back into an equal network (``from_dict(to_dict(net)) == net``),
    whatever the order of its keys.  Symbolic values become expression
    strings and their symbols are listed, with assumptions, under
    ``symbols``."""
    symbols: dict = {}
    _check_names(net)
    stations = [_station_out(s, symbols) for s in net.stations]
    classes = [_class_out(c, symbols) for c in net.classes]
    # the pools before ``symbols`` is written: a symbol used only in a
    # pool's token count must be declared too
    pools = [{"name": p.name, "tokens": _out(p.tokens, symbols),
              "acquire": p.acquire, "release": p.release,
              **({"classes": list(p.classes)} if p.classes is not None else {}),
              **({"path": list(p.path)} if p.path is not None else {})}
             for p in net.pools]
    out: dict[str, Any] = {"name": net.name}
    if symbols:
        out["symbols"] = {n: _assumptions(symbols[n]) for n in sorted(symbols)}
    out["stations"] = stations
    out["classes"] = classes
    if pools:
        out["pools"] = pools
    return out
