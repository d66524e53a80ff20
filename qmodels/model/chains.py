"""Class switching: routing entries that change a job's class, and the
routing chains they form.

A class given by ``routing`` may send a job on to a station *as another
class*: a row entry ``{"disk": {"miss": 0.3}}`` (or the key
``("disk", "miss")``) of class ``hit``'s row ``"cache"`` reads "a ``hit``
job leaving ``cache`` goes to ``disk`` as a ``miss`` job with probability
0.3".  An entry naming the row's own class is ordinary routing.

Classes linked by switching (in either direction) form a *chain*; a class
that never switches is a chain of its own.  In a chain the routing is one
Markov chain on (station, class) pairs, P[(i, r), (j, s)] (Baskett, Chandy,
Muntz & Palacios, "Open, closed and mixed networks of queues with
different classes of customers", JACM 22(2), 1975, sec. 2; Bolch,
Greiner, de Meer & Trivedi, *Queueing Networks and Markov Chains*, 2nd ed.,
Wiley 2006, sec. 7.3.6; the same P(r, i, s, j) as ``qncmvisits`` of the
Octave queueing package).  Its visit ratios solve the chain's traffic
equations

* closed chain: e = e P, with e = 1 at the reference pair (the first class
  of the chain, at its reference station);
* open chain: e = e0 + e P, where e0[(j, s)] = sum_r lambda_r p_r(source,
  (j, s)) / Lambda, Lambda = sum_r lambda_r the chain's arrival rate.

So ``Network.visits[c, k]`` of a class c in a switching chain is the mean
number of visits a job of the chain pays to station k *as class c* per
chain cycle (closed) or per arrival to the chain (open).  A closed chain's
population is the sum of the populations of its classes (where its jobs
start; in steady state only the total matters, as in JMT and LINE); an open
chain's arrival rate the sum of its classes' arrival rates.  A class in a
switching chain has no think time of its own: a think stage is a
:class:`~qmodels.model.stations.Delay` station in its routing.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validate import is_symbolic
from ..errors import InvalidValueError, RoutingError, UnknownNameError, UnreachableStationError
from .stations import SINK, SOURCE

__all__ = ["normalize_row", "switch_targets", "find_chains", "chain_visits", "chain_starts",
           "chain_rates"]


def chain_rates(net) -> list[float]:
    """Per class, the arrival rate its visit ratios are per: an open class's
    own rate, or in a switching chain the chain's rate Lambda (the sum over
    its classes); 0 for a closed class.  The open load of station k is
    sum_c chain_rates[c] D[c, k]."""
    from .network import Open

    own = {c.name: float(c.arrival_rate) if isinstance(c, Open) else 0.0 for c in net.classes}
    out = []
    for c in net.classes:
        chain = net.chain_of(c.name) if len(net.classes) > 1 else (c.name,)
        out.append(sum(own[n] for n in chain) if isinstance(c, Open) else 0.0)
    return out


def normalize_row(owner: str, src, row: Mapping, check) -> dict:
    """One routing row with class-switching entries in canonical form:
    ``station -> p`` for the row's own class, ``(station, class) -> p``
    for another class.  Accepts ``station: p``, ``station: {class: p}``
    and ``(station, class): p``.  ``check(p, what)`` validates a
    probability."""
    who = f"class {owner!r}"
    out: dict = {}

    def put(st, cls, p):
        if not isinstance(st, str) or not isinstance(cls, str):
            raise InvalidValueError(
                f"{who}: routing row {src!r}: destination ({st!r}, {cls!r}) must be a "
                "station name and a class name")
        key = st if cls == owner else (st, cls)
        if key in out:
            raise InvalidValueError(
                f"{who}: routing row {src!r} names {st!r} as class {cls!r} twice")
        out[key] = check(p, f"{who}: routing probability {src!r} -> {st!r} as class {cls!r}")

    for dst, p in row.items():
        if isinstance(dst, tuple):
            if len(dst) != 2:
                raise InvalidValueError(
                    f"{who}: routing row {src!r}: destination {dst!r} is not a "
                    "(station, class) pair")
            put(dst[0], dst[1], p)
        elif isinstance(p, Mapping):
            if dst in (SOURCE, SINK):
                raise RoutingError(f"{who}: routing {src!r} -> {dst!r} cannot change class")
            for cls, q in p.items():
                put(dst, cls, q)
        else:
            put(dst, owner, p)
    return out


def dest(owner: str, key) -> tuple:
    """(station, class) of a canonical row key."""
    return key if isinstance(key, tuple) else (key, owner)


def switch_targets(cls) -> list[str]:
    """The other classes ``cls``'s routing sends jobs on as (first mention
    order)."""
    out: list[str] = []
    for row in (cls.routing or {}).values():
        for key in row:
            if isinstance(key, tuple) and key[1] not in out:
                out.append(key[1])
    return out


def find_chains(classes) -> tuple:
    """The routing chains: tuples of class names, each in network order,
    ordered by their first class; a class that never switches is a chain
    of its own."""
    names = [c.name for c in classes]
    parent = {n: n for n in names}

    def root(n):
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for c in classes:
        for t in switch_targets(c):
            if t in parent:
                a, b = root(c.name), root(t)
                if a != b:
                    parent[max(a, b, key=names.index)] = min(a, b, key=names.index)
    groups: dict = {}
    for n in names:
        groups.setdefault(root(n), []).append(n)
    return tuple(tuple(g) for g in groups.values())


def check_chain(chain, by_name: dict, known: set) -> None:
    """The model-level rules of a switching chain (typed errors naming the
    class): classes known and given by routing, one kind (open or closed),
    no think time, numeric probabilities, every switch destination a row of
    the destination class."""
    from .network import Open

    classes = [by_name[n] for n in chain]
    for c in classes:
        who = f"class {c.name!r}"
        if c.routing is None:
            raise RoutingError(
                f"{who} is in a class-switching chain with {', '.join(map(repr, chain))} but "
                "has no routing: a class jobs switch to (or from) needs routing=")
        if float(getattr(c, "think_time", 0.0) or 0.0) != 0.0:
            raise InvalidValueError(
                f"{who}: think time {c.think_time!r} in a class-switching chain; put the think "
                "stage in its routing as a qm.Delay station")
        for src, row in c.routing.items():
            for key, p in row.items():
                if is_symbolic(p):
                    raise InvalidValueError(
                        f"{who}: routing probability {src!r} -> {key!r} is symbolic; class "
                        "switching needs numbers")
                st, cls = dest(c.name, key)
                if src == SOURCE and isinstance(key, tuple):
                    raise RoutingError(
                        f"{who}: the {SOURCE!r} row cannot switch class (arrivals of class "
                        f"{cls!r} at {st!r}): give class {cls!r} its own arrival rate and "
                        f"{SOURCE!r} row")
                if cls not in by_name:
                    raise UnknownNameError(
                        f"{who}: routing row {src!r} switches to unknown class {cls!r}")
                if st not in known and st != SINK:
                    raise UnknownNameError(
                        f"{who}: routing row {src!r} names unknown station {st!r}")
                if isinstance(key, tuple):
                    other = by_name[cls]
                    if other.routing is None or st not in other.routing:
                        raise RoutingError(
                            f"{who}: routing row {src!r} sends jobs to {st!r} as class "
                            f"{cls!r}, which has no routing row {st!r} (where do they go?)")
    kinds = {isinstance(c, Open) for c in classes}
    if len(kinds) > 1:
        opens = [c.name for c in classes if isinstance(c, Open)]
        closed = [c.name for c in classes if not isinstance(c, Open)]
        raise RoutingError(
            f"class switching links open class(es) {', '.join(map(repr, opens))} with closed "
            f"class(es) {', '.join(map(repr, closed))}: a chain is all open or all closed")


def _nodes(chain, by_name) -> list[tuple]:
    nodes = []
    for n in chain:
        for src in by_name[n].routing:
            if src != SOURCE and (src, n) not in nodes:
                nodes.append((src, n))
    return nodes


def chain_starts(chain, by_name) -> dict:
    """Open chain: (station, class) -> the share e0 of the chain's arrivals
    that enter there (weights lambda_r; equal weights when every rate is 0)."""
    rates = {n: float(by_name[n].arrival_rate) for n in chain}
    total = sum(rates.values())
    e0: dict = {}
    for n in chain:
        row = by_name[n].routing.get(SOURCE)
        if row is None:
            continue
        w = rates[n] / total if total > 0 else 1.0
        for key, p in row.items():
            node = dest(n, key)
            e0[node] = e0.get(node, 0.0) + w * float(p)
    s = sum(e0.values())
    return {k: v / s for k, v in e0.items()} if s > 0 else e0


def _check_reach(g, nodes, start, is_open, chain) -> None:
    """Every (station, class) pair reachable from the start, and able to
    get back to it (closed) or to leave (open)."""
    import networkx as nx

    reach = nx.descendants(g, start) | {start}
    lost = [nd for nd in nodes if nd not in reach]
    if lost:
        raise UnreachableStationError(
            "class switching: " + ", ".join(f"station {s!r} as class {c!r}" for s, c in lost)
            + f" cannot be reached from {start if is_open else start[0]!r}"
            + ("" if is_open else f" as class {start[1]!r}"))
    target = SINK if is_open else start
    if is_open and SINK not in g:
        raise RoutingError(f"open class-switching chain {', '.join(map(repr, chain))} never "
                           f"sends jobs to {SINK!r}")
    back = nx.ancestors(g, target) | {target}
    trapped = [nd for nd in nodes if nd not in back]
    if trapped:
        where = "leave the network" if is_open else (
            f"return to station {start[0]!r} as class {start[1]!r}")
        raise RoutingError(
            "class switching: jobs at " + ", ".join(f"station {s!r} as class {c!r}"
                                                   for s, c in trapped)
            + f" can never {where}")


def chain_visits(chain, by_name: dict) -> dict:
    """Visit ratios of every class of a switching chain, class -> {station:
    e}, from the chain's traffic equations (module docstring), after
    checking that every (station, class) pair can be reached from the
    start and can get back (closed) or leave (open)."""
    import networkx as nx

    from .network import Open

    first = by_name[chain[0]]
    is_open = isinstance(first, Open)
    nodes = _nodes(chain, by_name)
    idx = {nd: i for i, nd in enumerate(nodes)}
    m = len(nodes)
    P = np.zeros((m, m))
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    for n in chain:
        for src, row in by_name[n].routing.items():
            for key, p in row.items():
                if key == SINK:
                    if float(p) > 0 and src != SOURCE:
                        g.add_edge((src, n), SINK)
                    continue
                to = dest(n, key)
                if src == SOURCE:
                    continue
                P[idx[(src, n)], idx[to]] += float(p)
                if float(p) > 0:
                    g.add_edge((src, n), to)
    if is_open:
        e0 = chain_starts(chain, by_name)
        if not e0:
            raise RoutingError(
                f"open class-switching chain {', '.join(map(repr, chain))}: no class has a "
                f"{SOURCE!r} row (where jobs enter)")
        starts = [nd for nd, w in e0.items() if w > 0] or list(e0)
        g.add_node(SOURCE)
        for nd in starts:
            g.add_edge(SOURCE, nd)
        start = SOURCE
    else:
        ref = first.reference
        start = (ref, first.name)
        if start not in idx:
            raise RoutingError(f"class {first.name!r}: reference station {ref!r} is not in "
                               "its routing")
    _check_reach(g, nodes, start, is_open, chain)
    A = (np.eye(m) - P).T
    try:
        if is_open:
            b = np.zeros(m)
            for nd, w in e0.items():
                b[idx[nd]] += w
            e = np.linalg.solve(A, b)
        else:
            r = idx[start]
            keep = [i for i in range(m) if i != r]
            e = np.zeros(m)
            e[r] = 1.0
            if keep:
                e[keep] = np.linalg.solve(A[np.ix_(keep, keep)], -A[keep, r])
    except np.linalg.LinAlgError:
        raise RoutingError(f"class-switching chain {', '.join(map(repr, chain))}: its "
                           "traffic equations are singular") from None
    if not np.all(np.isfinite(e)) or np.any(e < -1e-9):
        raise RoutingError(f"class-switching chain {', '.join(map(repr, chain))}: traffic "
                           f"equations have no valid solution ({e})")
    out: dict = {n: {} for n in chain}
    for (st, n), i in idx.items():
        out[n][st] = max(float(e[i]), 0.0)
    return out
