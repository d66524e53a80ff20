"""Parameter paths: ``"disk.service"``, ``"tx.visits.disk"``, ``"buf.tokens"``.

A path names a model object (station, class or token pool), then an
attribute, then (for mappings) a key; :func:`apply` puts values into a
network along such paths, every change going through
:func:`dataclasses.replace` on the frozen model objects so that it is
validated exactly as the model itself.

A station built from a physical element (``qm.Disk(...).station()``, see
:mod:`qmodels.physical.elements`) keeps it as ``station.element``; a path
naming one of the element's parameters that the station itself does not have
(``"disk.rpm"``, ``"disk.miss_rate"``) changes the element and rebuilds the
station from it (same name, power, capacity, distribution, discipline; the
servers follow the element unless they were set apart from it).  The station
must still be what its element builds: one whose service time was changed
afterwards is refused by name rather than silently overwritten.

A cache station (:class:`qmodels.model.CacheStation`) exposes its cache as
``"cache.cache_capacity"``, ``"cache.policy"`` and ``"cache.popularity"``
(``"cache.capacity"`` is its queue's buffer, as for any station); when it
was built from a :class:`qmodels.Cache` these go to the element, so the
station and its element stay one.  Every class whose routing row at the
station was the old station's split (:meth:`CacheStation.split`, Che's hit
ratio) gets the new station's split, so a sweep over the cache's capacity
solves the network a fresh build at each capacity gives.  A class given by
visits carries the split in its visit ratios: when its visits to the hit
and the miss station are exactly the cache's visits times the old split
(``visits={"cache": v, **cache.split("mem", "disk", v)}``) they become the
new split's; any other visits there (the hit station also reached another
way, a class given by demands) cannot be told apart from the split and
are refused by name rather than left stale (give the class routing, or
build the network for each point with a function model).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._validate import is_symbolic
from ..errors import InvalidValueError, UnknownNameError
from ..model import Network
from ..model.caching import SPLIT_TOLERANCE, CacheStation
from ..model.lowered import lower_like, same_family
from ..model.stations import SINK

__all__ = ["apply"]


# ---------------------------------------------------------------------------
# parameter paths
# ---------------------------------------------------------------------------

def _set_in(obj, parts: Sequence[str], value, path: str):
    """``obj`` with the attribute/key chain ``parts`` set to ``value``
    (frozen dataclasses through :func:`dataclasses.replace`, mappings
    copied with the key set)."""
    head, rest = parts[0], parts[1:]
    if isinstance(obj, Mapping):
        if not rest:
            new = dict(obj)
            new[head] = value
            return new
        if head not in obj:
            raise UnknownNameError(f"parameter {path!r}: no key {head!r} in {dict(obj)!r}")
        new = dict(obj)
        new[head] = _set_in(obj[head], rest, value, path)
        return new
    if dataclasses.is_dataclass(obj):
        names = [f.name for f in dataclasses.fields(obj) if f.init]
        el = getattr(obj, "element", None) if head not in names else None
        if (isinstance(obj, CacheStation) and head in _CACHE_ELEMENT and not rest
                and dataclasses.is_dataclass(getattr(obj, "element", None))):
            # the cache element's own parameter: rebuild from it (one truth)
            return _rebuild(obj, obj.element, [_CACHE_ELEMENT[head]], value, path)
        if el is not None and dataclasses.is_dataclass(el) and head in _params(el):
            return _rebuild(obj, el, parts, value, path)
        if head not in names:
            raise UnknownNameError(
                f"parameter {path!r}: {type(obj).__name__} has no parameter {head!r} "
                f"(it has {', '.join(names)})"
            )
        if not rest:
            return dataclasses.replace(obj, **{head: value})
        cur = getattr(obj, head)
        if cur is None:
            # an unset mapping or nested object (a class's own service
            # times, a station's power) starts empty; the model validates it
            cur = {}
        return dataclasses.replace(obj, **{head: _set_in(cur, rest, value, path)})
    raise UnknownNameError(f"parameter {path!r}: cannot look up {head!r} in {obj!r}")


#: a cache station's parameters that are its element's (station -> element name)
_CACHE_ELEMENT = {"cache_capacity": "capacity", "policy": "policy", "popularity": "popularity"}


def _is_split(row, split) -> bool:
    """Whether the routing row ``row`` is the cache split ``split`` (the
    tolerance :func:`qmodels.model.caching.check_caches` allows)."""
    if not isinstance(row, Mapping) or not set(row) <= set(split):
        return False
    try:
        return all(abs(float(row.get(k, 0.0)) - w) <= SPLIT_TOLERANCE for k, w in split.items())
    except (TypeError, ValueError):
        return False


def _resplit(old_stations, stations, classes) -> None:
    """In place: each class whose routing row at a changed cache station is
    the old station's split (Che's hit ratio, [Che] in
    :mod:`qmodels.model.caching`) gets the new station's split."""
    for old, new in zip(old_stations, stations):
        if new is old or not isinstance(new, CacheStation) or not isinstance(old, CacheStation):
            continue
        before, after = old.split(), new.split()
        if before == after:
            continue
        for i, c in enumerate(classes):
            routing = getattr(c, "routing", None)
            if routing:
                if _is_split(routing.get(new.name), before):
                    classes[i] = dataclasses.replace(c, routing={**routing, new.name: after})
            else:
                classes[i] = _revisit(c, old, new, before, after)


def _revisit(c, old, new, before, after):
    """Class ``c`` (no routing) with its visit ratios at the hit and miss
    stations of the changed cache ``old`` -> ``new`` moved from the old
    split ``before`` to the new ``after`` (see the module docstring), or an
    :class:`InvalidValueError` naming it when its visits there are not the
    old split's."""
    vis = getattr(c, "visits", None) or {}
    dem = getattr(c, "demands", None) or {}
    if not vis.get(new.name) and not dem.get(new.name):
        return c  # it does not visit the cache
    who = (f"class {c.name!r} at cache station {new.name!r}: its visit ratios carry the "
           "cache's split (Che's hit ratio), which the change moves")
    if not vis or is_symbolic(vis.get(new.name)):
        raise InvalidValueError(f"{who}; a class given by demands (or symbolic visits) cannot "
                                "follow it: give the class routing (row station.split()) or "
                                "build the network for each point (a function model)")
    v = float(vis[new.name])
    keys = [k for k in before if k not in (SINK, new.name)]
    same = (old.hit, old.miss) == (new.hit, new.miss) and all(
        not is_symbolic(vis.get(k, 0.0))
        and abs(float(vis.get(k, 0.0)) - v * before[k]) <= 1e-9 * max(1.0, v) for k in keys)
    if not same:
        raise InvalidValueError(
            f"{who}; its visits to {', '.join(map(repr, keys))} are not the cache's {v!r} "
            "visits times the old split, so they cannot be moved to the new one: give the "
            "class routing (row station.split()) or build the network for each point (a "
            "function model)")
    return dataclasses.replace(c, visits={**vis, **{k: v * after[k] for k in keys}})


def _params(obj) -> list[str]:
    return [f.name for f in dataclasses.fields(obj) if f.init]


def _rebuild(station, el, parts, value, path):
    """``station`` rebuilt from its element ``el`` with the parameter chain
    ``parts`` set (see the module docstring)."""
    kw = {n: getattr(station, n) for n in _params(station)
          if n not in ("name", "service", "element")}
    if el.station(station.name, **kw) != station:
        raise InvalidValueError(
            f"parameter {path!r}: station {station.name!r} was built from a "
            f"{type(el).__name__} but changed since (service {station.service!r}, the element "
            f"gives {el.service_time!r}); vary {station.name + '.service'!r}, or rebuild the "
            "station from the element")
    new_el = _set_in(el, parts, value, path)
    if kw.get("servers") == el.servers:
        kw.pop("servers")  # the element's own (CPU cores) follow it
    return new_el.station(station.name, **kw)


def _split(path: str) -> list[str]:
    if not isinstance(path, str) or "." not in path:
        raise InvalidValueError(
            f"parameter path must look like 'station.attribute' (e.g. 'disk.service', "
            f"'tx.population', 'buf.tokens', 'tx.visits.disk'), got {path!r}"
        )
    parts = path.split(".")
    if any(not p for p in parts):
        raise InvalidValueError(f"parameter path {path!r} has an empty part")
    return parts


def apply(net: Network, changes: Mapping[str, Any]) -> Network:
    """The network ``net`` with each parameter path in ``changes`` set.

    Parameters
    ----------
    net : Network
    changes : mapping path -> value
        Paths as in the module docstring (``"disk.service"``,
        ``"tx.visits.disk"``, ``"buf.tokens"``).

    Returns
    -------
    Network
        A new, validated network (the model objects are frozen).

    Raises
    ------
    UnknownNameError
        A path naming no station, class or pool, or no attribute of it.
    ModelError
        A value the model rejects (the model's own message).

    Examples
    --------
    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("disk", 0.02)], [qm.Closed("tx", 3, visits={"disk": 1})])
    >>> apply(net, {"disk.service": 0.03, "tx.population": 5}).demands.tolist()
    [[0.03]]
    """
    if not changes:
        return net
    stations = list(net.stations)
    classes = list(net.classes)
    pools = list(net.pools)
    where = {s.name: (stations, i) for i, s in enumerate(stations)}
    where.update({c.name: (classes, i) for i, c in enumerate(classes)})
    where.update({p.name: (pools, i) for i, p in enumerate(pools)})
    for path, value in changes.items():
        parts = _split(path)
        if parts[0] not in where:
            raise UnknownNameError(
                f"parameter {path!r}: the network has no station, class or pool "
                f"{parts[0]!r} (it has {', '.join(where)})"
            )
        seq, i = where[parts[0]]
        seq[i] = _set_in(seq[i], parts[1:], _plain(value), path)
    _resplit(net.stations, stations, classes)
    out = Network(stations, classes, name=net.name, pools=pools)
    if same_family(net, changes):
        # only numbers changed (a sweep's point): the new network is lowered
        # from the base's lowered form and shares its structural tables
        object.__setattr__(out, "_lowered", lower_like(out, net.lowered))
    return out


def _plain(v):
    """numpy scalars as Python numbers (the model keeps ints exact)."""
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v
