"""Workload classes (``Closed``, ``Open``), held resources (``TokenPool``)
and the :class:`Network` that joins them to the stations of
:mod:`qmodels.model.stations`.

A model is plain, immutable data, validated once on construction.  Times are
in seconds, rates per second, power in watts.  Any number may instead be a
sympy expression; validation then raises only when a condition is *provably*
false (a symbol declared ``positive=True`` passes a non-negativity check).

Notation (Lazowska et al., *Quantitative System Performance*, 1984, ch. 3):
``S`` service time per visit, ``V`` visit ratio, ``D = V S`` service demand,
``Z`` think time, ``N`` population, ``lambda`` arrival rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._validate import (
    MAX_INT64,
    FrozenMap,
    Number,
    check_count,
    check_name,
    check_real,
    freeze,
    is_symbolic,
)
from ..errors import (
    DuplicateNameError,
    InvalidValueError,
    PopulationError,
    RoutingError,
    UnknownNameError,
    UnreachableStationError,
)
from .caching import CacheStation, check_caches, fill_cache_rows
from .chains import chain_visits, check_chain, find_chains, normalize_row
from .forkjoin import ForkJoin, check_forkjoins, forkjoin_visits
from .map import MAP
from .pools import TokenPool, pool_chains
from .stations import (
    SINK,
    SOURCE,
    Delay,
    LoadDependent,
    Power,
    Queue,
    Station,
    _check_distribution,
)

__all__ = [
    "Power",
    "Station",
    "Delay",
    "Queue",
    "LoadDependent",
    "CacheStation",
    "Closed",
    "Open",
    "Network",
    "ForkJoin",
    "TokenPool",
    "pool_chains",
    "FrozenMap",
    "ROUTING_TOLERANCE",
    "SOURCE",
    "SINK",
]

#: Absolute tolerance on a routing row sum: ``|sum_j p_ij - 1| <= 1e-9``.
ROUTING_TOLERANCE = 1e-9


# ---------------------------------------------------------------------------
# classes
# ---------------------------------------------------------------------------

def _route_table(route: tuple, is_open: bool) -> dict:
    """The routing table of a fixed path: each station sends every job to
    the next; an open class enters at the first and leaves after the last,
    a closed one goes back to the first (a cycle ends there)."""
    rows: dict = {SOURCE: {route[0]: 1.0}} if is_open else {}
    for a, b in zip(route, route[1:]):
        rows[a] = {b: 1.0}
    rows[route[-1]] = {SINK: 1.0} if is_open else {route[0]: 1.0}
    return rows


def _route_to_routing(cls, who: str) -> None:
    """Check ``cls.route`` (station names in path order) and set the
    class's ``routing`` to the table of that path (:func:`_route_table`),
    which every solver and the simulator follow.  A ``routing`` given as
    well must be that same table (``dataclasses.replace`` passes both)."""
    route = cls.route
    if isinstance(route, (str, bytes, Mapping)) or not isinstance(route, Iterable):
        raise InvalidValueError(
            f"{who}: route must be a list of station names in path order, e.g. "
            f"route=['web', 'app', 'db']; got {route!r}")
    route = tuple(route)
    if not route:
        raise RoutingError(f"{who}: route is empty (name the stations in path order)")
    for st in route:
        if not isinstance(st, str) or not st:
            raise InvalidValueError(f"{who}: route entry {st!r} is not a station name")
        if st in (SOURCE, SINK):
            raise RoutingError(
                f"{who}: route names {st!r}; list stations only (an open class enters at "
                "the first and leaves after the last)")
    again = sorted({st for st in route if route.count(st) > 1})
    if again:
        raise RoutingError(
            f"{who}: route visits {', '.join(map(repr, again))} more than once; a route "
            "gives each station one next station, so a station may appear once (for a "
            "path that returns to a station give routing= with probabilities, or visits=)")
    table = _route_table(route, isinstance(cls, Open))
    if cls.routing is not None:
        same = {k: dict(v) for k, v in cls.routing.items()} == table
        if not same:
            raise InvalidValueError(
                f"{who}: give exactly one of visits, route, routing or demands "
                "(got ['route', 'routing'])")
    object.__setattr__(cls, "route", route)
    object.__setattr__(cls, "routing", table)
    if isinstance(cls, Closed) and cls.reference is None:
        object.__setattr__(cls, "reference", route[0])


@dataclass(frozen=True)
class _Class:
    name: str
    visits: Mapping | None = field(default=None, kw_only=True)
    routing: Mapping | None = field(default=None, kw_only=True)
    demands: Mapping | None = field(default=None, kw_only=True)
    service: Mapping | None = field(default=None, kw_only=True)
    priority: int = field(default=0, kw_only=True)
    route: Sequence[str] | None = field(default=None, kw_only=True)
    distribution: Mapping | None = field(default=None, kw_only=True)

    kind: ClassVar[str] = "class"

    def __post_init__(self):
        check_name(self.name, "class")
        who = f"class {self.name!r}"
        if self.route is not None:
            _route_to_routing(self, who)
        if is_symbolic(self.priority):
            raise InvalidValueError(
                f"{who}: priority must be a non-negative integer, got {self.priority!r}")
        object.__setattr__(self, "priority",
                           check_count(self.priority, f"{who}: priority", minimum=0,
                                       maximum=MAX_INT64))
        given = [k for k in ("visits", "routing", "demands") if getattr(self, k) is not None]
        if self.route is not None:
            given = ["route"] + [k for k in given if k != "routing"]
        if len(given) != 1:
            raise InvalidValueError(
                f"{who}: give exactly one of visits, route, routing or demands "
                f"(got {given or 'none'})"
            )
        if self.demands is not None and self.service is not None:
            raise InvalidValueError(f"{who}: give either demands or service times, not both")
        for attr in ("visits", "demands", "service"):
            m = getattr(self, attr)
            if m is None:
                continue
            m = freeze(m, f"{who}: {attr}")
            noun = {"visits": "visit ratio", "demands": "demand", "service": "service time"}[attr]
            checked = FrozenMap(
                (k, check_real(v, f"{who}: {noun} at station {k!r}")) for k, v in m.items()
            )
            object.__setattr__(self, attr, checked)
        if self.distribution is not None:
            m = freeze(self.distribution, f"{who}: distribution")
            for st, d in m.items():
                _check_distribution(d, f"{who}: distribution at station {st!r}")
                if d is None:
                    raise InvalidValueError(
                        f"{who}: distribution at station {st!r} is None; give a "
                        "qmodels.distributions shape (Exponential() for the default)")
            object.__setattr__(self, "distribution", m)
        if self.routing is not None:
            r = freeze(self.routing, f"{who}: routing")
            rows = {}
            for src, row in r.items():
                row = freeze(row, f"{who}: routing row {src!r}")
                # an entry may switch class: {station: {class: p}} or
                # {(station, class): p} (qmodels.model.chains)
                rows[src] = FrozenMap(normalize_row(self.name, src, row, check_real))
            object.__setattr__(self, "routing", FrozenMap(rows))


@dataclass(frozen=True)
class Closed(_Class):
    """A closed class: ``population`` jobs circulate for ever.

    Parameters
    ----------
    name : str
    population : int
        Non-negative integer (never rounded: 10.3 is an error).
    visits : mapping station -> visit ratio per cycle, or
    routing : mapping station -> {station: probability}; visit ratios come
        from the traffic equations v = v P with v[reference] = 1, or
    demands : mapping station -> demand D (visit ratio 1, service time D), or
    route : list of station names in path order: each job visits them one
        after the other, once each per cycle, and starts again at the first
        (the reference).  The same as the routing table that sends each
        station's jobs to the next with probability 1, which it becomes
        (``routing``); unlike ``visits``, whose order is unknown (the
        simulator and the methods that route jobs then route them at random,
        with a warning), it says the order.
    service : mapping station -> mean service time for this class
        (overrides the station's own service time).
    distribution : mapping station -> Distribution, optional
        The shape of this class's service time at those stations
        (overrides the station's own ``distribution``, as ``service``
        overrides its mean): ``{"disk": qm.Deterministic()}``.  A shape that
        differs by class at an FCFS station is not product form (BCMP type
        1 needs one exponential shape); the CTMC and the simulator model
        it, and each approximation uses the class's shape or refuses by
        name.
    think_time : float
        Z, a delay outside the stations (an infinite-server terminal stage).
    priority : int
        Non-negative integer, 0 the highest (default 0): the order in which
        a station with a priority discipline (``Queue(discipline="prio")``
        or ``"prio-pr"``) serves classes.  Other disciplines ignore it.
    reference : str, optional
        The station whose visit ratio is 1 when routing is given (default:
        the first station of the routing, resolved here so that the model
        never depends on the order of a mapping once built: a model file
        written with sorted keys keeps its reference station).
    """

    population: int = 0
    think_time: Number = field(default=0.0, kw_only=True)
    reference: str | None = field(default=None, kw_only=True)

    kind: ClassVar[str] = "closed"

    def __post_init__(self):
        super().__post_init__()
        who = f"class {self.name!r}"
        object.__setattr__(
            self,
            "population",
            check_count(self.population, f"{who}: population", minimum=0,
                         error=PopulationError),
        )
        object.__setattr__(self, "think_time", check_real(self.think_time, f"{who}: think time"))
        if self.reference is None and self.routing is not None and len(self.routing):
            object.__setattr__(self, "reference", next(iter(self.routing)))


@dataclass(frozen=True)
class Open(_Class):
    """An open class: jobs arrive at ``arrival_rate`` per second and leave.

    With ``routing``, the row ``"source"`` gives where arrivals enter and a
    station's row may send jobs to ``"sink"``.  ``interarrival`` is the shape
    of the inter-arrival time (default exponential: Poisson arrivals).
    ``route=["q1", "q2", "q3"]`` says a fixed path: jobs enter at ``q1``, go
    through each station once in that order and leave after ``q3`` (the
    routing table ``source -> q1 -> q2 -> q3 -> sink``, which it becomes).
    ``priority`` is a non-negative integer, 0 the highest (default 0), used
    by stations with a priority discipline (see :class:`Closed`).

    ``interarrival`` may also be a Markovian arrival process
    (:class:`~qmodels.model.map.MAP`, a correlated stream): it fixes its
    own rate pi D1 1, which the class takes when ``arrival_rate`` is not
    given (or 0); a given rate that differs from it (relative tolerance
    1e-9) is refused by name.
    """

    arrival_rate: Number = 0.0
    interarrival: Any = field(default=None, kw_only=True)

    kind: ClassVar[str] = "open"

    def __post_init__(self):
        super().__post_init__()
        who = f"class {self.name!r}"
        if isinstance(self.interarrival, MAP):
            lam = self.interarrival.rate
            given = self.arrival_rate
            if is_symbolic(given):
                raise InvalidValueError(
                    f"{who}: a MAP stream fixes the arrival rate ({lam:.12g}); a symbolic "
                    f"arrival rate {given} cannot follow it")
            given = check_real(given, f"{who}: arrival rate")
            if given == 0:
                given = lam
            elif abs(float(given) - lam) > 1e-9 * lam:
                raise InvalidValueError(
                    f"{who}: arrival rate {float(given):.12g} disagrees with its MAP stream's "
                    f"rate pi D1 1 = {lam:.12g}; leave the rate out (the MAP fixes it) or "
                    "scale D0 and D1 by the ratio")
            object.__setattr__(self, "arrival_rate", float(given))
            return
        _check_distribution(self.interarrival, f"{who}: interarrival")
        object.__setattr__(
            self,
            "arrival_rate",
            check_real(self.arrival_rate, f"{who}: arrival rate"),
        )


# ---------------------------------------------------------------------------
# network
# ---------------------------------------------------------------------------

def _check_routing_rows(cls: _Class, known: set, switching: bool = False) -> list[str]:
    """Validate the routing table of ``cls``; return the stations it names,
    in order of first mention.  Each row must sum to 1 within
    :data:`ROUTING_TOLERANCE` (symbolic rows are not summed), over
    (station, class) destinations when it switches class; in a switching
    chain (``switching``) an open class may enter only by switching."""
    who = f"class {cls.name!r}"
    routing = cls.routing
    is_open = isinstance(cls, Open)
    nodes: list[str] = []

    def note(name):
        if name not in (SOURCE, SINK) and name not in nodes:
            nodes.append(name)

    for src, row in routing.items():
        if src == SINK or (src == SOURCE and not is_open):
            raise RoutingError(f"{who}: routing row {src!r} is not allowed")
        if src != SOURCE and src not in known:
            raise UnknownNameError(f"{who}: routing names unknown station {src!r}")
        note(src)
        total = 0.0
        for dst, p in row.items():
            if isinstance(dst, tuple):      # (station, class): a class switch
                if dst[0] in (SOURCE, SINK) or dst[0] not in known:
                    raise UnknownNameError(
                        f"{who}: routing {src!r} -> {dst[0]!r} as class {dst[1]!r}: "
                        f"unknown station {dst[0]!r}")
                total = total + p
                continue
            if dst == SOURCE or (dst == SINK and not is_open):
                raise RoutingError(f"{who}: routing {src!r} -> {dst!r} is not allowed")
            if dst != SINK and dst not in known:
                raise UnknownNameError(f"{who}: routing names unknown station {dst!r}")
            note(dst)
            total = total + p
        if not is_symbolic(total) and abs(float(total) - 1.0) > ROUTING_TOLERANCE:
            raise RoutingError(
                f"{who}: routing row {src!r} sums to {float(total):.12g}, not 1 "
                f"(tolerance {ROUTING_TOLERANCE:g})"
            )
    for node in nodes:
        if node not in routing:
            raise RoutingError(f"{who}: station {node!r} has no routing row (where do jobs go?)")
    if is_open and SOURCE not in routing and not switching:
        raise RoutingError(f"{who}: open routing needs a {SOURCE!r} row (where jobs enter)")
    return nodes


def _check_connected(cls: _Class, nodes: list[str]) -> str:
    """Every station must be reachable from the start (``source`` for an
    open class, the reference station for a closed one) and able to get back
    (to ``sink``, or to the reference).  Returns the start."""
    import networkx as nx

    who = f"class {cls.name!r}"
    routing = cls.routing
    is_open = isinstance(cls, Open)
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    for src, row in routing.items():
        for dst, p in row.items():
            if is_symbolic(p) or float(p) != 0.0:
                g.add_edge(src, dst)
    if is_open:
        start = SOURCE
    else:
        ref = getattr(cls, "reference", None)
        start = ref if ref is not None else nodes[0]
        if start not in routing:
            raise RoutingError(f"{who}: reference station {start!r} is not in the routing")
    reach = nx.descendants(g, start) | {start}
    unreachable = [n for n in nodes if n not in reach]
    if unreachable:
        raise UnreachableStationError(
            f"{who}: station(s) {', '.join(map(repr, unreachable))} cannot be reached "
            f"from {start!r}"
        )
    target = SINK if is_open else start
    if is_open and SINK not in g:
        raise RoutingError(f"{who}: open routing never sends jobs to {SINK!r}")
    back = nx.ancestors(g, target) | {target}
    trapped = [n for n in nodes if n not in back]
    if trapped:
        dest = "leave the network" if is_open else f"return to {start!r}"
        raise RoutingError(
            f"{who}: jobs at station(s) {', '.join(map(repr, trapped))} can never {dest}"
        )
    return start


def _routing_matrices(routing, idx: dict, zeros, add):
    """(P, p0): station-to-station and source-to-station probabilities."""
    m = len(idx)
    P, p0 = zeros(m, m), zeros(1, m)
    for src, row in routing.items():
        for dst, p in row.items():
            if dst == SINK:
                continue
            if src == SOURCE:
                add(p0, 0, idx[dst], p)
            else:
                add(P, idx[src], idx[dst], p)
    return P, p0


def _symbolic_visits(cls: _Class, nodes: list[str], start: str) -> dict:
    """Exact visit ratios (sympy) from the traffic equations."""
    import sympy as sp

    def add(M, i, j, p):
        M[i, j] += p

    idx = {n: i for i, n in enumerate(nodes)}
    m = len(nodes)
    P, p0 = _routing_matrices(cls.routing, idx, sp.zeros, add)
    if isinstance(cls, Open):
        v = p0 * (sp.eye(m) - P).inv()
    else:
        r = idx[start]
        # v (I - P) = 0 with v[r] = 1: drop equation r, fix v[r].
        A = (sp.eye(m) - P).T
        keep = [i for i in range(m) if i != r]
        sol = A[keep, keep].LUsolve(-A[keep, r])
        v = sp.zeros(1, m)
        v[0, r] = 1
        for j, i in enumerate(keep):
            v[0, i] = sol[j]
    return {n: sp.simplify(v[0, idx[n]]) for n in nodes}


def _numeric_visits(cls: _Class, nodes: list[str], start: str) -> dict:
    """Visit ratios (floats) from the traffic equations."""
    who = f"class {cls.name!r}"

    def add(M, i, j, p):
        M[i, j] += float(p)

    idx = {n: i for i, n in enumerate(nodes)}
    m = len(nodes)
    P, p0 = _routing_matrices(cls.routing, idx, lambda a, b: np.zeros((a, b)), add)
    A = (np.eye(m) - P).T
    try:
        if isinstance(cls, Open):
            v = np.linalg.solve(A, p0[0])
        else:
            r = idx[start]
            keep = [i for i in range(m) if i != r]
            v = np.zeros(m)
            v[r] = 1.0
            if keep:
                v[keep] = np.linalg.solve(A[np.ix_(keep, keep)], -A[keep, r])
    except np.linalg.LinAlgError:
        raise RoutingError(f"{who}: traffic equations are singular") from None
    if not np.all(np.isfinite(v)) or np.any(v < -1e-9):
        raise RoutingError(f"{who}: traffic equations have no valid solution (visits {v})")
    return {n: max(float(v[idx[n]]), 0.0) for n in nodes}


def _solve_traffic(cls: _Class, station_names: list[str]):
    """Visit ratios of one class from its routing (traffic equations).

    Closed: v = v P, v[ref] = 1 (Lazowska et al. 1984, sec. 3.2).
    Open:   v = p0 + v P, i.e. v = p0 (I - P)^-1 (Jackson 1963).
    """
    assert cls.routing is not None
    nodes = _check_routing_rows(cls, set(station_names))
    start = _check_connected(cls, nodes)
    symbolic = any(is_symbolic(p) for row in cls.routing.values() for p in row.values())
    solve = _symbolic_visits if symbolic else _numeric_visits
    return solve(cls, nodes, start)


def _check_parts(stations: tuple, classes: tuple, pools: tuple) -> None:
    """Types, non-emptiness and one namespace for stations, classes and pools
    (so ``r.X[name]`` is never ambiguous); pools name known stations/classes."""
    if not stations:
        raise InvalidValueError("a network needs at least one station")
    if not classes:
        raise InvalidValueError("a network needs at least one class")
    seen: dict[str, str] = {}
    for s in stations:
        if not isinstance(s, Station) or type(s) is Station:
            raise InvalidValueError(
                f"not a station (Delay, Queue, LoadDependent, ForkJoin): {s!r}")
        if s.name in seen:
            raise DuplicateNameError(f"duplicate station name {s.name!r}")
        seen[s.name] = "station"
    for c in classes:
        if not isinstance(c, (Closed, Open)):
            raise InvalidValueError(f"not a class (Closed, Open): {c!r}")
        if c.name in seen:
            raise DuplicateNameError(f"class name {c.name!r} is already used by a {seen[c.name]}")
        seen[c.name] = "class"
    station_names = {s.name for s in stations}
    class_names = {c.name for c in classes}
    for p in pools:
        if not isinstance(p, TokenPool):
            raise InvalidValueError(f"not a TokenPool: {p!r}")
        if p.name in seen:
            raise DuplicateNameError(f"pool name {p.name!r} is already used by a {seen[p.name]}")
        seen[p.name] = "pool"
        for st in (p.acquire, p.release) + tuple(p.path or ()):
            if st not in station_names:
                raise UnknownNameError(f"token pool {p.name!r}: unknown station {st!r}")
        for cn in p.classes or ():
            if cn not in class_names:
                raise UnknownNameError(f"token pool {p.name!r}: unknown class {cn!r}")
    check_forkjoins(stations, classes, pools)


def _class_tables(stations: tuple, classes: tuple) -> tuple[list, list]:
    """Visit ratios and service times, class x station, from each class's
    routing, demands or visits and its per-class service times."""
    names = [s.name for s in stations]
    index = {n: k for k, n in enumerate(names)}
    vis: list[list[Any]] = [[0.0] * len(stations) for _ in classes]
    svc: list[list[Any]] = [[s.service for s in stations] for _ in classes]

    def at(who, what, st):
        if st not in index:
            raise UnknownNameError(f"{who}: {what} name unknown station {st!r}")
        return index[st]

    switched = _switching_visits(classes, set(names))
    for ci, c in enumerate(classes):
        who = f"class {c.name!r}"
        if c.name in switched:
            v = switched[c.name]
        elif c.routing is not None:
            v = _solve_traffic(c, names)
        elif c.demands is not None:
            v = {}
            for st, d in c.demands.items():
                svc[ci][at(who, "demands", st)] = d
                v[st] = 1.0
        else:
            v = dict(c.visits)
        for st, val in v.items():
            vis[ci][at(who, "visits", st)] = val
        for st, val in (c.service or {}).items():
            svc[ci][at(who, "service times", st)] = val
        for st in (c.distribution or {}):
            at(who, "distribution", st)
        if isinstance(c, Closed) and c.reference is not None:
            at(who, "reference", c.reference)
    forkjoin_visits(stations, vis)  # tasks visit their branch once per fork
    return vis, svc


def _switching_visits(classes: tuple, known: set) -> dict:
    """Visit ratios (class -> {station: e}) of the classes in class-switching
    chains, from each chain's traffic equations
    (:func:`qmodels.model.chains.chain_visits`)."""
    by_name = {c.name: c for c in classes}
    out: dict = {}
    for chain in find_chains(classes):
        if len(chain) == 1 and not any(isinstance(k, tuple) for row in
                                       (by_name[chain[0]].routing or {}).values() for k in row):
            continue
        check_chain(chain, by_name, known)
        for n in chain:
            _check_routing_rows(by_name[n], known, switching=True)
        out.update(chain_visits(chain, by_name))
    return out


def _any_symbolic_input(stations, classes, vis, svc) -> bool:
    """Whether any input is a sympy expression with free symbols."""
    return (
        any(is_symbolic(x) for row in vis + svc for x in row)
        or any(is_symbolic(getattr(c, a, 0.0)) for c in classes
               for a in ("population", "think_time", "arrival_rate"))
        or any(is_symbolic(getattr(s, "servers", 1)) for s in stations)
        or any(is_symbolic(a) for s in stations for a in getattr(s, "rate_multipliers", ()))
    )


@dataclass(frozen=True)
class Network:
    """A queueing network: stations and the classes of work that visit them.

    Parameters
    ----------
    stations : sequence of Station
    classes : sequence of Closed / Open
    name : str, optional
    pools : sequence of TokenPool, optional
        Held resources (buffers, ports) spanning several stations.

    Derived, read-only attributes (arrays shaped (classes, stations), in the
    order of ``class_names`` x ``station_names``): ``visits`` V,
    ``service_times`` S, ``demands`` D = V S.  With sympy values they are
    object arrays.

    Examples
    --------
    >>> import qmodels as qm
    >>> net = qm.Network(
    ...     stations=[qm.Queue("cpu", 0.010), qm.Queue("disk", 0.025)],
    ...     classes=[qm.Closed("tx", population=5, think_time=1.0,
    ...                        visits={"cpu": 1, "disk": 0.5})])
    >>> net.demands.tolist()
    [[0.01, 0.0125]]
    """

    stations: Sequence[Any]
    classes: Sequence[Any]
    name: str = ""
    pools: Sequence[Any] = ()

    visits: np.ndarray = field(init=False, repr=False, compare=False, hash=False)
    service_times: np.ndarray = field(init=False, repr=False, compare=False, hash=False)
    demands: np.ndarray = field(init=False, repr=False, compare=False, hash=False)
    is_symbolic: bool = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        for what, v, hint in (("stations", self.stations, "[qm.Queue(...), ...]"),
                              ("classes", self.classes, "[qm.Closed(...), ...]"),
                              ("pools", self.pools, "[qm.TokenPool(...), ...]")):
            if isinstance(v, (str, bytes, Mapping)) or not isinstance(v, Iterable):
                # one Closed(...) alone used to fail as "'Closed' object is not iterable"
                raise InvalidValueError(
                    f"Network {what} must be a list, e.g. {hint}; got {type(v).__name__}")
        stations, classes, pools = tuple(self.stations), tuple(self.classes), tuple(self.pools)
        classes = fill_cache_rows(stations, classes)
        object.__setattr__(self, "stations", stations)
        object.__setattr__(self, "classes", classes)
        object.__setattr__(self, "pools", pools)
        _check_parts(stations, classes, pools)
        check_caches(stations, classes)
        vis, svc = _class_tables(stations, classes)
        symbolic = _any_symbolic_input(stations, classes, vis, svc)
        dtype = object if symbolic else float
        C, K = len(classes), len(stations)
        V = np.array(vis, dtype=dtype).reshape(C, K)
        S = np.array(svc, dtype=dtype).reshape(C, K)
        D = V * S
        for arr in (V, S, D):
            arr.flags.writeable = False
        object.__setattr__(self, "visits", V)
        object.__setattr__(self, "service_times", S)
        object.__setattr__(self, "demands", D)
        object.__setattr__(self, "is_symbolic", symbolic)

    # -- the lowered form ---------------------------------------------------
    @property
    def lowered(self):
        """The network compiled once into the arrays every solver reads
        (:class:`~qmodels.model.lowered.Lowered`), built on first use and
        kept beside the (immutable) network."""
        low = self.__dict__.get("_lowered")
        if low is None:
            from .lowered import lower

            low = lower(self)
            object.__setattr__(self, "_lowered", low)
        return low

    def __getstate__(self):
        # the lowered form is a cache: rebuilt on first use after unpickling
        state = dict(self.__dict__)
        state.pop("_lowered", None)
        return state

    # -- names and lookups -------------------------------------------------
    @property
    def station_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.stations)

    @property
    def class_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.classes)

    def station(self, name: str) -> Station:
        for s in self.stations:
            if s.name == name:
                return s
        raise UnknownNameError(f"unknown station {name!r}")

    def klass(self, name: str):
        """The class called ``name``."""
        for c in self.classes:
            if c.name == name:
                return c
        raise UnknownNameError(f"unknown class {name!r}")

    def station_index(self, name: str) -> int:
        return self.station_names.index(self.station(name).name)

    def class_index(self, name: str) -> int:
        return self.class_names.index(self.klass(name).name)

    # -- class switching ---------------------------------------------------
    @property
    def chains(self) -> tuple:
        """The routing chains: tuples of class names linked by class
        switching (:mod:`qmodels.model.chains`); a class that never
        switches is a chain of its own."""
        ch = self.__dict__.get("_chains")
        if ch is None:
            ch = find_chains(self.classes)
            object.__setattr__(self, "_chains", ch)
        return ch

    @property
    def has_class_switching(self) -> bool:
        """Some class's routing sends jobs on as another class."""
        return any(len(ch) > 1 for ch in self.chains)

    def chain_of(self, cls: str) -> tuple:
        """The chain (tuple of class names) class ``cls`` belongs to."""
        name = self.klass(cls).name
        return next(ch for ch in self.chains if name in ch)

    # -- workload shape ----------------------------------------------------
    @property
    def closed_classes(self) -> tuple:
        return tuple(c for c in self.classes if isinstance(c, Closed))

    @property
    def open_classes(self) -> tuple:
        return tuple(c for c in self.classes if isinstance(c, Open))

    @property
    def is_closed(self) -> bool:
        return all(isinstance(c, Closed) for c in self.classes)

    @property
    def is_open(self) -> bool:
        return all(isinstance(c, Open) for c in self.classes)

    @property
    def is_mixed(self) -> bool:
        return not (self.is_closed or self.is_open)

    @property
    def populations(self) -> tuple:
        """Population per class (0 for open classes)."""
        return tuple(getattr(c, "population", 0) for c in self.classes)

    @property
    def think_times(self) -> tuple:
        return tuple(getattr(c, "think_time", 0.0) for c in self.classes)

    @property
    def arrival_rates(self) -> tuple:
        return tuple(getattr(c, "arrival_rate", 0.0) for c in self.classes)

    @property
    def servers(self) -> tuple:
        """Servers per station (``inf`` for delay stations)."""
        return tuple(s.servers for s in self.stations)

    def with_population(self, population, cls: str | None = None) -> "Network":
        """A copy with the population of class ``cls`` (default: the only
        closed class) set to ``population``."""
        import dataclasses

        closed = self.closed_classes
        if cls is None:
            if len(closed) != 1:
                raise InvalidValueError("name the class whose population to set")
            cls = closed[0].name
        target = self.klass(cls)
        if not isinstance(target, Closed):
            raise InvalidValueError(f"class {cls!r} is open: it has no population")
        new = tuple(
            dataclasses.replace(c, population=population) if c.name == cls else c
            for c in self.classes
        )
        return Network(self.stations, new, name=self.name, pools=self.pools)

    def to_dict(self) -> dict:
        """The model-file form of this network: plain data (str, int, float,
        lists, dicts) that :meth:`from_dict` turns back into an equal
        network, whatever the order of its keys.  See
        :func:`qmodels.io.modelfile.to_dict`."""
        from ..io.modelfile import to_dict

        return to_dict(self)

    @classmethod
    def from_dict(cls, data) -> "Network":
        """A network from its model-file form (a parsed YAML/JSON model file);
        raises :class:`~qmodels.errors.ModelFileError` listing every error
        with its path.  See :func:`qmodels.io.modelfile.from_dict`."""
        from ..io.modelfile import from_dict

        return from_dict(data)

    def graph(self):
        """The routing as a ``networkx.DiGraph``.

        Nodes are station names (with attribute ``station``), plus
        ``"source"``/``"sink"`` where open routing uses them.  Edge attribute
        ``p`` maps class name -> routing probability.  Classes given by
        visits or demands add no edges (their order of visits is unknown).
        """
        import networkx as nx

        g = nx.DiGraph(name=self.name)
        for s in self.stations:
            g.add_node(s.name, station=s)
        for c in self.classes:
            if c.routing is None:
                continue
            for src, row in c.routing.items():
                for dst, p in row.items():
                    if isinstance(dst, tuple):      # a class switch: edge to the station
                        dst = dst[0]
                    if not g.has_edge(src, dst):
                        g.add_edge(src, dst, p={})
                    g.edges[src, dst]["p"][c.name] = p
        return g

    def _repr_html_(self) -> str:
        """The notebook display: stations, classes, demands and pools
        (:func:`qmodels.model.display.network_html`)."""
        from .display import network_html

        return network_html(self)

    def __repr__(self):
        st = ", ".join(f"{s.name}:{s.kind}" for s in self.stations)
        cl = ", ".join(
            f"{c.name}(N={c.population})" if isinstance(c, Closed)
            else f"{c.name}(lambda={c.arrival_rate})"
            for c in self.classes
        )
        title = f" {self.name!r}" if self.name else ""
        return f"Network{title}(stations=[{st}], classes=[{cl}])"
