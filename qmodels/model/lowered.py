"""The lowered form of a network: a :class:`~qmodels.model.Network` compiled
once into the arrays and kinds every solver reads.

A ``Network`` is built for people: stations are objects of several types,
classes carry routing tables or visit ratios, a pool names its stations.
The solvers want numbers in arrays, and each used to re-derive them (three
functions turned a station into its rate shape, each with its own shortcut
rules; every call checked again what could not have changed).  Here it is
done once per network and kept beside it (the network is immutable, so the
lowered form never goes stale): ``net.lowered``.

What it holds
-------------
Per station ``k`` (in ``station_names`` order):

* ``kind[k]``: ``"delay"`` (infinite servers), ``"queue"`` (c servers),
  ``"ld"`` (load-dependent rate multipliers);
* ``discipline[k]``: ``"delay"`` for a delay station, else the queue's
  discipline (``"fcfs"``, ``"ps"``; a load-dependent station is ``"ps"``:
  its total rate is shared, BCMP type 2);
* ``servers[k]``: c (``inf`` for a delay, 1 for a load-dependent station);
* ``multipliers[k]``: the service-rate multipliers a(1), a(2), ... of a
  load-dependent station as floats (the last value holds for every larger
  number present); ``None`` for a delay and for a queue, whose a(n) =
  min(n, c) is never listed in full (c may be large);
* ``capacity[k]``: finite room or ``None``;
* ``scv[k]``: the squared coefficient of variation of the service shape
  (1 for the default exponential; NaN where it differs by class) and
  ``exponential[k]`` (every class that visits it has an exponential
  shape);
* ``class_shaped[k]``: the classes that visit it have different service
  shapes (a class's ``distribution={station: shape}``); ``shapes[c][k]``
  the shape of class c at station k (None: exponential), and
  :meth:`Lowered.one_shape` the station's single shape, refused by name
  for a method that cannot take one per class;
* ``used[k]``: some class has a positive demand there.

Per class ``c``: ``is_open``, ``priority`` (0 highest), ``population`` (0
for open classes),
``think_time``, ``arrival_rate``, ``routed`` (the class has an order of
visits: ``routing`` or a ``route``, which becomes its routing table) and
``route`` (the fixed path of a class given by ``route``, else ``None``).
The classes given by visit ratios over several stations, which the
simulator and the methods that route jobs route at random, are
``random_routed`` (:func:`random_routing_warning` says so).  Class x station: ``visits`` V,
``service_times`` S and ``demands`` D = V S (the network's own read-only
arrays; object arrays when the model has sympy symbols, ``symbolic``).

Station shapes
--------------
Product-form solvers need, for a population of at most ``n`` jobs, the
*reduced* shape of a station: a station that can never queue is exactly a
delay, a constant rate is a single server.  :meth:`Lowered.shape` is the one
place that says when; the solvers differ only in which exact reductions
their numerics take (documented at each flag), so the same numbers come
out as before the lowering, bit for bit.

What a method requires (product form, one class, ...) is checked on this
form by the method itself; the refusal names the station or class.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .._validate import is_symbolic
from ..errors import UnsupportedModelError
from .network import Closed, Delay, LoadDependent, Network, Open, Queue
from .stations import PRIORITY_DISCIPLINES

__all__ = ["Lowered", "lower", "lower_like", "same_family", "NUMERIC_FIELDS", "DELAY", "FIXED",
           "LD", "random_routing_warning"]

#: reduced station shapes (the integer codes the compiled kernels take)
DELAY, FIXED, LD = 0, 1, 2
_CODE_NAME = {DELAY: "delay", FIXED: "fixed", LD: "ld"}


def _floats(values) -> tuple:
    return tuple(float(x) for x in values)


@dataclass(frozen=True, eq=False)
class Lowered:
    """A network as arrays (see the module docstring).  Build with
    :func:`lower` or read ``net.lowered``; never construct directly."""

    network: Network = field(repr=False)
    station_names: tuple
    class_names: tuple
    kind: tuple
    discipline: tuple
    servers: np.ndarray
    multipliers: tuple
    capacity: tuple
    scv: np.ndarray
    exponential: np.ndarray
    is_open: np.ndarray
    priority: np.ndarray
    population: np.ndarray
    think_time: np.ndarray
    arrival_rate: np.ndarray
    routed: np.ndarray
    route: tuple
    visits: Any
    service_times: Any
    demands: Any
    symbolic: bool
    shapes: tuple = ()
    class_shaped: Any = None
    _shapes: dict = field(default_factory=dict, repr=False)
    _memo: dict = field(default_factory=dict, repr=False)
    #: tables of the structure alone, shared by the networks of one
    #: family (:meth:`family`, :func:`lower_like`)
    _family: dict = field(default_factory=dict, repr=False)

    @cached_property
    def used(self) -> np.ndarray:
        """Per station: some class has a positive demand there (numeric
        networks only)."""
        out = (np.asarray(self.demands, dtype=float) > 0).any(axis=0)
        out.flags.writeable = False
        return out

    @cached_property
    def visited(self) -> np.ndarray:
        """Per station: some class visits it (a non-zero visit ratio; with
        symbols, one not identically zero)."""
        V = self.visits
        if V.dtype != object:  # numbers: one vectorised comparison
            out = (V != 0).any(axis=0)
        else:
            out = np.array([any(V[i][k] != 0 for i in range(V.shape[0]))
                            for k in range(V.shape[1])], dtype=bool)
        out.flags.writeable = False
        return out

    @cached_property
    def off_branch(self) -> tuple:
        """Per station: whether a job (not a fork-join's task) visits it, i.e.
        it lies on no fork-join branch (a branch's stations are visited by
        tasks in the branch's own order, never at random)."""
        from .forkjoin import branch_mask

        return tuple(not b for b in branch_mask(self.network))

    @cached_property
    def random_routed(self) -> tuple:
        """Indices of the classes with no order of visits (given by
        ``visits`` or ``demands``) that visit more than one station outside
        fork-join branches: the simulator, QNA and the CTMC route them at
        random with their visit ratios (the order of a single station cannot
        matter, and a branch's tasks follow the branch)."""
        V, own = self.visits, self.off_branch
        return tuple(i for i in range(V.shape[0]) if not self.routed[i]
                     and sum(1 for k in range(V.shape[1]) if V[i][k] != 0 and own[k]) > 1)

    def levels(self, k: int) -> tuple:
        """The priority levels (0 highest) of the classes that visit
        station ``k``, sorted."""
        V = self.visits
        return tuple(sorted({int(self.priority[i]) for i in range(V.shape[0])
                             if V[i][k] != 0}))

    @cached_property
    def acts_fcfs(self) -> np.ndarray:
        """Per station: a queue that serves in order of arrival, FCFS or a
        priority queue (``prio``, ``prio-pr``) visited by classes of one
        level only (the order within a level is FCFS)."""
        out = np.array([
            kind == "queue" and (d == "fcfs" or (d in PRIORITY_DISCIPLINES
                                                 and len(self.levels(k)) <= 1))
            for k, (kind, d) in enumerate(zip(self.kind, self.discipline))], dtype=bool)
        out.flags.writeable = False
        return out

    # -- service-time shapes ------------------------------------------------
    def one_shape(self, k: int, method: str):
        """The service shape of station ``k`` (None: exponential) for a
        method that reads one shape per station; raises
        :class:`UnsupportedModelError` naming the station, its classes'
        shapes and the method when they differ by class."""
        if self.class_shaped is not None and self.class_shaped[k]:
            V = self.visits
            said = ", ".join(
                f"{self.class_names[i]!r}: "
                f"{'exponential' if d is None else type(d).__name__}"
                for i, d in enumerate(s[k] for s in self.shapes) if _nonzero(V[i][k]))
            raise UnsupportedModelError(
                f"station {self.station_names[k]!r}: its service shape differs by class "
                f"({said}); {method} takes one shape per station; use method='ctmc' (small "
                "models) or 'sim', or 'qna' for an open network")
        return self.network.stations[k].distribution if not self.shapes else next(
            (s[k] for i, s in enumerate(self.shapes) if _nonzero(self.visits[i][k])),
            self.network.stations[k].distribution)

    def shape_words(self, k: int) -> str:
        """Station ``k``'s service shape in words for a message: "Erlang
        service (scv 0.5)", or the shape of each class that visits it when
        they differ."""
        V = self.visits
        if self.class_shaped is not None and self.class_shaped[k]:
            said = ", ".join(
                f"{self.class_names[i]!r} {'Exponential' if d is None else type(d).__name__}"
                f" (scv {1.0 if d is None else float(d.scv):g})"
                for i, d in enumerate(s[k] for s in self.shapes) if _nonzero(V[i][k]))
            return f"service shapes by class: {said}"
        d = self.one_shape(k, "")
        return (f"{'Exponential' if d is None else type(d).__name__} service "
                f"(scv {1.0 if d is None else float(d.scv):g})")

    # -- reduced shapes ----------------------------------------------------
    def shape(self, k: int, n: int, *, reduce: bool = True, unused_delay: bool = False,
              constant: str = "ones", identity_delay: bool = False,
              truncate: bool = False) -> tuple:
        """(code, multipliers) of station ``k`` when at most ``n`` jobs can
        be present: :data:`DELAY` (no queueing), :data:`FIXED` (one server
        of constant rate ``multipliers[0]``) or :data:`LD` (rate
        multipliers a(1..L), the last holding beyond L).

        Exact reductions, always taken: a delay station is a delay; a
        single-server queue is fixed with a = 1; a c-server queue with
        c >= n can never queue (at most n - 1 others are present when a job
        arrives): a delay; otherwise it is load-dependent with a(j) =
        min(j, c).  The options select further exact reductions, which
        change the floating-point route (so each solver keeps the one its
        figures were computed and pinned with):

        reduce
            ``False`` takes no reduction at all: every queueing station is
            load-dependent (a c-server queue with a(j) = min(j, c) for
            j <= n), for cross-checks of the general route.
        unused_delay
            A station no class loads is a delay (nobody queues there).
        constant
            A load-dependent station whose multipliers are all equal is a
            fixed-rate server: ``"ones"`` only when they are all 1 (the
            rate is then D itself), ``"any"`` for any common value a (the
            solver divides D by a); ``"never"`` keeps it load-dependent.
        identity_delay
            A load-dependent station with a(j) = j for every j <= n is a
            delay.
        truncate
            Only the first n multipliers of a load-dependent station can
            ever be used: drop the rest before the tests above.

        Raises :class:`~qmodels.errors.UnsupportedModelError` naming the
        station for a kind without a product-form shape.
        """
        # "unused_delay" matters only for a station nobody loads: the key
        # says whether that is the case here, so that the table is one of
        # the structure alone, shared by a network's family
        unused = bool(unused_delay and reduce and self.kind[k] != "delay" and not self.used[k])
        key = (k, n, reduce, unused, constant, identity_delay, truncate)
        hit = self._shapes.get(key)
        if hit is not None:
            return hit
        if reduce:
            out = self._reduce(k, n, unused, constant, identity_delay, truncate)
        else:
            out = self._unreduced(k, n)
        self._shapes[key] = out
        return out

    def _reduce(self, k, n, unused_delay, constant, identity_delay, truncate):
        kind = self.kind[k]
        if kind == "delay" or (unused_delay and not self.used[k]):
            return DELAY, None
        if kind == "queue":
            c = int(self.servers[k])
            if c == 1:
                return FIXED, (1.0,)
            if c >= n:
                return DELAY, None
            return LD, _floats(range(1, c + 1))
        if kind == "ld":
            a = self.multipliers[k]
            if truncate:
                a = a[: max(1, n)]
            if constant == "any" and all(x == a[0] for x in a):
                return FIXED, (a[0],)
            if constant == "ones" and all(x == 1.0 for x in a):
                return FIXED, (1.0,)
            if identity_delay and len(a) >= n and all(a[i] == i + 1 for i in range(n)):
                return DELAY, None
            return LD, a
        raise UnsupportedModelError(
            f"station {self.station_names[k]!r}: kind {kind!r} has no product-form shape")

    def _unreduced(self, k, n):
        kind = self.kind[k]
        if kind == "delay":
            return DELAY, None
        if kind == "queue":
            return LD, _floats(range(1, min(int(self.servers[k]), max(n, 1)) + 1))
        if kind == "ld":
            return LD, self.multipliers[k]
        raise UnsupportedModelError(
            f"station {self.station_names[k]!r}: kind {kind!r} has no product-form shape")

    def memo(self, key, build):
        """``build()``, computed once per lowered network and key: the
        tables a solver derives from the model (never its results), so a
        repeated solve of one network pays for them once."""
        try:
            return self._memo[key]
        except KeyError:
            out = self._memo[key] = build()
            return out

    def family(self, key, build):
        """``build()``, computed once per *family* of networks: a network
        and the networks made from it by changing numbers that leave its
        structure as it is (:data:`NUMERIC_FIELDS`, the points of a sweep;
        :func:`lower_like`).  Only for tables that read none of those
        numbers: the names, the kinds, disciplines and servers of the
        stations, the class types, visit ratios, priorities, routing,
        capacities, pools and fork-joins.  A network lowered on its own is
        a family of one, so this is :meth:`memo` there."""
        try:
            return self._family[key]
        except KeyError:
            out = self._family[key] = build()
            return out

    def shape_name(self, code: int) -> str:
        """``"delay"``, ``"fixed"`` or ``"ld"`` for a shape code."""
        return _CODE_NAME[code]

    # -- small derived tables ----------------------------------------------
    def divisors(self) -> np.ndarray:
        """Per station, the divisor of X D in the utilisation: servers for a
        queue, the constant rate a of a constant-rate load-dependent
        station, else 1."""
        out = np.ones(len(self.kind))
        for k, kind in enumerate(self.kind):
            if kind == "queue":
                out[k] = self.servers[k]
            elif kind == "ld":
                a = self.multipliers[k]
                if all(x == a[0] for x in a):
                    out[k] = a[0]
        return out

    def rate_multiplier(self, k: int, n: int):
        """a_k(n): the service-rate multiplier of station ``k`` with ``n``
        jobs present (n for a delay)."""
        kind = self.kind[k]
        if kind == "delay":
            return n
        if n <= 0:
            return 0
        if kind == "queue":
            return min(n, self.servers[k])
        a = self.multipliers[k]
        return a[min(n, len(a)) - 1]


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr


def _station_row(s) -> tuple:
    """(kind, discipline, servers, multipliers) of one station."""
    if isinstance(s, Delay):
        return "delay", "delay", math.inf, None
    if isinstance(s, Queue):
        # min(n, c) is not listed (c may be 10^4 or more): shape() and the
        # solvers build the multipliers they need, as far as they need them
        return "queue", s.discipline, s.servers, None
    if isinstance(s, LoadDependent):
        rm = s.rate_multipliers
        mult = None if any(is_symbolic(a) for a in rm) else _floats(rm)
        return "ld", "ps", 1, mult
    return s.kind, getattr(s, "discipline", None), getattr(s, "servers", 1), None


def lower(net: Network) -> Lowered:
    """The lowered form of ``net`` (built here; ``net.lowered`` caches it)."""
    from .distributions import is_exponential

    rows = [_station_row(s) for s in net.stations]
    servers = np.array([r[2] if not is_symbolic(r[2]) else np.nan for r in rows], dtype=float)
    classes = net.classes
    shapes, class_shaped = _shape_table(net)
    V = net.visits
    scv, expo = [], []
    for k, s in enumerate(net.stations):
        seen = [shapes[i][k] for i in range(len(classes)) if _nonzero(V[i][k])] \
            or [s.distribution]
        expo.append(all(is_exponential(d) for d in seen))
        scv.append(math.nan if class_shaped[k] else
                   1.0 if seen[0] is None else float(seen[0].scv))
    scv = np.array(scv, dtype=float)
    expo = np.array(expo, dtype=bool)
    closed = [isinstance(c, Closed) for c in classes]
    sym = net.is_symbolic

    def per_class(attr, default):
        vals = [getattr(c, attr, default) for c in classes]
        return np.array(vals, dtype=object if sym else float)

    pops = [0 if not cl or is_symbolic(c.population) else int(c.population)
            for c, cl in zip(classes, closed)]
    # a population past int64 (which the solvers refuse by size) stays exact
    population = np.array(pops, dtype=np.int64 if max(pops, default=0) < 2**63 else object)
    for arr in (servers, scv, expo, population):
        arr.flags.writeable = False
    return Lowered(
        network=net,
        station_names=net.station_names,
        class_names=net.class_names,
        kind=tuple(r[0] for r in rows),
        discipline=tuple(r[1] for r in rows),
        servers=servers,
        multipliers=tuple(r[3] for r in rows),
        capacity=tuple(s.capacity for s in net.stations),
        scv=scv,
        exponential=expo,
        is_open=np.array([not c for c in closed], dtype=bool),
        priority=_frozen(np.array([int(getattr(c, "priority", 0)) for c in classes],
                                  dtype=np.int64)),
        population=population,
        think_time=per_class("think_time", 0.0),
        arrival_rate=per_class("arrival_rate", 0.0),
        routed=_frozen(np.array([c.routing is not None for c in classes], dtype=bool)),
        route=tuple(c.route for c in classes),
        visits=net.visits,
        service_times=net.service_times,
        demands=net.demands,
        symbolic=sym,
        shapes=shapes,
        class_shaped=_frozen(np.array(class_shaped, dtype=bool)),
    )


#: the fields a sweep may change while a network keeps its structure (its
#: family, :meth:`Lowered.family`): a station's service time, a closed
#: class's population and think time, an open class's arrival rate, each a
#: number (the kind of model object they belong to is checked too)
NUMERIC_FIELDS = {(Queue, "service"), (Delay, "service"), (LoadDependent, "service"),
                  (Closed, "population"), (Closed, "think_time"), (Open, "arrival_rate")}


def same_family(base: Network, changes) -> bool:
    """Whether setting the parameter ``changes`` (path -> value, as
    :func:`qmodels.whatif.paths.apply` takes them) on the numeric network
    ``base`` changes only numbers of :data:`NUMERIC_FIELDS`, each from one
    real number to another: the changed network is then of ``base``'s
    family and may be lowered with :func:`lower_like`."""
    import numbers

    if base.is_symbolic:
        return False
    objs = {s.name: s for s in base.stations}
    objs.update({c.name: c for c in base.classes})
    for path, value in changes.items():
        parts = path.split(".") if isinstance(path, str) else ()
        if len(parts) != 2 or parts[0] not in objs:
            return False
        obj = objs[parts[0]]
        if not any(type(obj) is t and parts[1] == f for t, f in NUMERIC_FIELDS):
            return False
        old = getattr(obj, parts[1], None)
        for v in (old, value):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.number)):
                return False
    return True


def lower_like(net: Network, like: Lowered) -> Lowered:
    """The lowered form of ``net``, a network of ``like``'s family (made
    from ``like.network`` by :func:`same_family` changes): its structure
    (station kinds, disciplines, servers, rate multipliers, capacities,
    service shapes, class types, priorities, routing, visit ratios) is
    ``like``'s, the numbers (service times, demands, populations, think
    times, arrival rates) are ``net``'s, and it shares ``like``'s family
    tables (:meth:`Lowered.family`).  Its own memo starts empty: every
    table that reads a number is built again."""
    classes = net.classes
    closed = ~like.is_open

    def per_class(attr, default):
        return np.array([getattr(c, attr, default) for c in classes], dtype=float)

    pops = [int(c.population) if cl else 0 for c, cl in zip(classes, closed)]
    population = np.array(pops, dtype=np.int64 if max(pops, default=0) < 2**63 else object)
    population.flags.writeable = False
    return Lowered(
        network=net, station_names=like.station_names, class_names=like.class_names,
        kind=like.kind, discipline=like.discipline, servers=like.servers,
        multipliers=like.multipliers, capacity=like.capacity, scv=like.scv,
        exponential=like.exponential, is_open=like.is_open, priority=like.priority,
        population=population, think_time=per_class("think_time", 0.0),
        arrival_rate=per_class("arrival_rate", 0.0), routed=like.routed, route=like.route,
        visits=net.visits, service_times=net.service_times, demands=net.demands,
        symbolic=False, shapes=like.shapes, class_shaped=like.class_shaped,
        _shapes=like._shapes, _family=like._family)


def _nonzero(v) -> bool:
    return is_symbolic(v) or v != 0


def _shape_table(net: Network) -> tuple:
    """``shapes[c][k]``: the service shape of class c at station k (the
    class's own ``distribution`` there, else the station's; None for the
    exponential default), and per station whether the classes that visit
    it have different shapes (an exponential of any spelling is one
    shape)."""
    from .distributions import is_exponential

    V = net.visits
    shapes, differs = [], []
    for c in net.classes:
        own = c.distribution or {}
        shapes.append(tuple(own.get(s.name, s.distribution) for s in net.stations))
    for k in range(len(net.stations)):
        seen = {None if is_exponential(shapes[i][k]) else shapes[i][k]
                for i in range(len(net.classes)) if _nonzero(V[i][k])}
        differs.append(len(seen) > 1)
    return tuple(shapes), differs


def random_routing_warning(net: Network, by: str) -> str | None:
    """The warning for a network some of whose classes ``by`` (e.g. "the
    simulator", "qna") routes at random (:attr:`Lowered.random_routed`), or
    ``None`` when every class has an order of visits or visits one station.

    A class given by visit ratios has no order of visits; routing it at
    random with those ratios (after each visit, the next station drawn in
    proportion to them) keeps every mean of a product-form network
    (Baskett, Chandy, Muntz & Palacios, JACM 22(2), 1975: the stationary
    distribution depends on the routing only through the visit ratios), but
    not the number of visits per pass, which becomes random, nor anything
    outside product form (non-exponential times, bursty arrivals,
    priorities, finite room), where a random route and a tandem are two
    different systems.  The message names the classes and the one-line way
    to give the path."""
    low = net.lowered
    idx = low.random_routed
    if not idx:
        return None
    V, own = low.visits, low.off_branch
    parts, example = [], None
    for i in idx:
        at = [low.station_names[k] for k in range(V.shape[1]) if V[i][k] != 0 and own[k]]
        parts.append(f"{low.class_names[i]!r} (over {', '.join(map(repr, at))})")
        if example is None:
            example = (low.class_names[i], at)
    name, at = example
    kind = "Open" if low.is_open[idx[0]] else "Closed"
    return (f"class(es) {'; '.join(parts)} given by visits with no order: {by} routes them at "
            "random with those visit ratios, not once through each station in path order (the "
            "means agree only in product form); to follow a fixed path give it, e.g. "
            f"{kind}({name!r}, ..., route={at!r}) with the stations in path order, or routing=")
