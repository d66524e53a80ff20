"""Property-based testing of queueing models: hypothesis strategies that
generate valid networks, and assertions of the laws every solution obeys.

Strategies (each a ``hypothesis`` strategy of :class:`~qmodels.model.Network`)::

    from hypothesis import given
    import qmodels as qm
    from qmodels.testing import closed_networks, assert_operational_laws

    @given(closed_networks(max_classes=2, multi_server=True))
    def test_my_solver_obeys_the_laws(net):
        assert_operational_laws(my_solver(net))

* :func:`networks` -- any mix of closed and open classes (``kind=``);
* :func:`closed_networks`, :func:`open_networks` (``stable=True``: every
  station's open load below saturation), :func:`mixed_networks`.

Options say what the networks may contain: how many classes and stations,
multi-server and load-dependent stations, service-time and inter-arrival
distributions, finite capacities, power, token pools, symbolic (sympy)
service times, Unicode names.  Each class is given by visits, routing or
demands (drawn), possibly with per-class service times; closed routing
classes name a reference station.  Every generated network is valid (its
constructor accepted it); whether a given solver can honour it (pools,
finite capacity, load-dependent open stations) is for the solver to say.

Assertions (on an analytic :class:`~qmodels.results.Result`):

* :func:`assert_operational_laws` -- Little's law per station and class, the
  utilisation law, the forced flow law, the response time law and
  conservation of jobs (closed) or of flow (open) (Denning & Buzen 1978;
  Lazowska et al., *Quantitative System Performance*, 1984, ch. 3);
* :func:`assert_within_bounds` -- throughput and response time inside
  asymptotic/balanced job bounds (QSP ch. 5).

Requires ``hypothesis`` (``pip install qmodels-toolkit[testing]``).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable

import numpy as np

try:
    from hypothesis import strategies as st
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "qmodels.testing needs hypothesis: pip install 'qmodels-toolkit[testing]' "
        "(or pip install hypothesis)"
    ) from e

from .model import distributions as dist
from .model.network import Closed, Delay, LoadDependent, Network, Open, Power, Queue, TokenPool
from .model.stations import DISCIPLINES

__all__ = [
    "networks",
    "closed_networks",
    "open_networks",
    "mixed_networks",
    "distributions",
    "assert_operational_laws",
    "assert_within_bounds",
]

_TIMES = st.floats(min_value=0.005, max_value=2.0, allow_nan=False, allow_infinity=False)
_PROBS = st.sampled_from([1.0, 0.75, 0.5, 0.25])


def distributions(*, empirical: bool = True) -> st.SearchStrategy:
    """Service or inter-arrival shapes: every class of
    :mod:`qmodels.distributions` with valid parameters."""
    options = [
        st.just(dist.Exponential()),
        st.just(dist.Deterministic()),
        st.integers(1, 8).map(dist.Erlang),
        st.floats(1.0, 20.0).map(dist.HyperExponential),
        st.floats(0.05, 8.0).map(dist.Lognormal),
        st.floats(0.0, 1.0).map(dist.Uniform),
    ]
    if empirical:
        options.append(st.lists(st.floats(0.01, 10.0), min_size=1, max_size=6)
                       .map(lambda xs: dist.Empirical(tuple(xs))))
    return st.one_of(*options)


def _names(draw, prefix: str, n: int, unicode_names: bool, taken: set) -> list[str]:
    if not unicode_names:
        names = [f"{prefix}{i}" for i in range(n)]
        taken.update(names)
        return names
    alphabet = st.characters(categories=("L", "N"))
    out = []
    while len(out) < n:
        raw = draw(st.text(alphabet, min_size=1, max_size=6))
        name = unicodedata.normalize("NFC", raw)
        if name in taken or name in ("source", "sink") or not name.strip():
            name = f"{prefix}{len(taken)}"
        if name in taken:
            continue
        taken.add(name)
        out.append(name)
    return out


def _station(draw, name, opts, symbol):
    kinds = ["queue", "delay"] + (["ld"] if opts["load_dependent"] else [])
    kind = draw(st.sampled_from(kinds))
    service = symbol if symbol is not None else draw(_TIMES)
    kw = {}
    if opts["distributions"] and draw(st.booleans()):
        kw["distribution"] = draw(distributions())
    if opts["power"] and draw(st.booleans()):
        idle = draw(st.floats(0.0, 50.0))
        kw["power"] = Power(busy=idle + draw(st.floats(0.0, 50.0)), idle=idle)
    if kind == "delay":
        return Delay(name, service, **kw)
    servers = draw(st.integers(1, 4)) if opts["multi_server"] else 1
    if opts["capacities"] and draw(st.booleans()):
        kw["capacity"] = servers + draw(st.integers(0, 4))
    if kind == "ld":
        steps = draw(st.lists(st.floats(0.0, 1.0), min_size=0, max_size=3))
        rm = [1.0]
        for s in steps:
            rm.append(rm[-1] + s)
        return LoadDependent(name, service, rate_multipliers=tuple(rm), **kw)
    discipline = draw(st.sampled_from(opts["disciplines"]))
    if discipline == "lcfs-pr":
        servers = 1                 # LCFS-PR is a single-server discipline (BCMP type 4)
        kw.pop("capacity", None)
    return Queue(name, service, servers=servers, discipline=discipline, **kw)


def _closed_routing(draw, nodes):
    rows = {}
    m = len(nodes)
    for i, n in enumerate(nodes):
        nxt = nodes[(i + 1) % m]
        p = draw(_PROBS)
        row = {nxt: p}
        if p < 1:
            other = draw(st.sampled_from(nodes))
            row[other] = row.get(other, 0.0) + (1.0 - p)
        rows[n] = row
    return rows


def _open_routing(draw, nodes):
    rows = {"source": {nodes[0]: 1.0}}
    m = len(nodes)
    for i, n in enumerate(nodes):
        if i < m - 1:
            p = draw(_PROBS)
            row = {nodes[i + 1]: p}
            if p < 1:
                row["sink"] = 1.0 - p
        else:
            q = draw(st.sampled_from([0.0, 0.25, 0.5]))
            row = {"sink": 1.0 - q}
            if q > 0:
                row[nodes[0]] = row.get(nodes[0], 0.0) + q
        rows[n] = row
    return rows


def _workload(draw, name, closed, station_names, opts):
    kw = {}
    m = draw(st.integers(1, len(station_names)))
    nodes = draw(st.permutations(station_names))[:m]
    fj = opts.get("forkjoin")
    # a fork-join serves nothing itself: no demand or service time there
    how = "routing" if opts.get("routing_only") else draw(st.sampled_from(
        ["visits", "routing"] if fj in nodes else ["visits", "routing", "demands"]))
    if how == "visits":
        kw["visits"] = {n: draw(st.sampled_from([0.25, 0.5, 1, 1.0, 2.0, 3])) for n in nodes}
    elif how == "demands":
        kw["demands"] = {n: draw(_TIMES) for n in nodes}
    else:
        kw["routing"] = _closed_routing(draw, nodes) if closed else _open_routing(draw, nodes)
        if closed:
            kw["reference"] = draw(st.sampled_from(nodes))
    if how != "demands" and draw(st.booleans()):
        served = [n for n in nodes if n != fj]
        own = draw(st.lists(st.sampled_from(served), max_size=len(served), unique=True)) \
            if served else []
        if own:
            kw["service"] = {n: draw(_TIMES) for n in own}
    if opts.get("priorities"):
        kw["priority"] = draw(st.integers(0, 2))
    if closed:
        kw["think_time"] = draw(st.one_of(st.just(0.0), _TIMES))
        return Closed(name, draw(st.integers(0, opts["max_population"])), **kw)
    if opts["distributions"] and draw(st.booleans()):
        kw["interarrival"] = draw(distributions())
    return Open(name, draw(st.floats(0.5, 2.0)), **kw)


def _switch(draw, a, b):
    """Classes ``a`` and ``b`` (both given by routing, both closed or both
    open) with a drawn share of one station row of each sent on as the
    other class, into a station the other class routes from."""
    import dataclasses

    def graft(x, y):
        rows = {k: dict(v) for k, v in x.routing.items()}
        src = draw(st.sampled_from([s for s in rows if s != "source"]))
        dst = draw(st.sampled_from([s for s in y.routing if s != "source"]))
        q = draw(st.sampled_from([0.1, 0.25, 0.5, 0.9]))    # (< 1: every pair stays reached)
        row = {k: p * (1.0 - q) for k, p in rows[src].items()}
        row[(dst, y.name)] = q
        rows[src] = row
        return rows

    ra, rb = graft(a, b), graft(b, a)
    extra = {"think_time": 0.0} if isinstance(a, Closed) else {}
    return (dataclasses.replace(a, routing=ra, **extra),
            dataclasses.replace(b, routing=rb, **extra))


def _capacity(s) -> float:
    if isinstance(s, Delay):
        return math.inf
    if isinstance(s, LoadDependent):
        return float(max(s.rate_multipliers))
    return float(s.servers)


def _stabilise(draw, net: Network, stable: bool) -> Network:
    """Scale the open classes' arrival rates so that the busiest station's
    open load is a drawn fraction (0.1 .. 0.9) of its capacity."""
    opened = [i for i, c in enumerate(net.classes) if isinstance(c, Open)]
    if not opened or not stable:
        return net
    if net.is_symbolic:
        # open loads with symbolic service times cannot be compared to 1:
        # the strategies keep open classes numeric (symbols only at stations
        # that open classes give their own times for would be fragile)
        D = np.array([[float(x.subs({s: 1 for s in getattr(x, "free_symbols", ())}))
                       if hasattr(x, "subs") else float(x) for x in row]
                      for row in net.demands])
    else:
        D = np.asarray(net.demands, dtype=float)
    from .model.chains import chain_rates

    lam = np.array(chain_rates(net), dtype=object if net.is_symbolic else float)
    load = max((float(lam @ D[:, k]) / _capacity(s)
                for k, s in enumerate(net.stations) if not isinstance(s, Delay)), default=0.0)
    if load <= 0:
        return net
    target = draw(st.floats(0.1, 0.9))
    f = target / load
    import dataclasses

    classes = tuple(dataclasses.replace(c, arrival_rate=c.arrival_rate * f)
                    if isinstance(c, Open) else c for c in net.classes)
    return Network(net.stations, classes, name=net.name, pools=net.pools)


def networks(*, kind: str = "any", min_classes: int = 1, max_classes: int = 2,
             max_stations: int = 4, max_population: int = 4, multi_server: bool = True,
             load_dependent: bool = True, distributions: bool = False,
             capacities: bool = False, power: bool = False, pools: bool = False,
             symbolic: bool = False, unicode_names: bool = False,
             disciplines: tuple = ("fcfs", "ps"), stable: bool = True,
             priorities: bool = False, forkjoins: bool = False,
             product_form: bool = False, class_switching: bool = False) -> st.SearchStrategy:
    """Valid :class:`~qmodels.model.Network` objects.

    Parameters
    ----------
    kind : {"any", "closed", "open", "mixed"}
        Which classes: all closed, all open, at least one of each, or any.
    min_classes, max_classes : int
        Number of classes (a mixed network has at least two).
    max_stations : int
        1 .. max_stations stations (queues, delays, load-dependent).
    max_population : int
        Closed populations are drawn from 0 .. max_population.
    multi_server : bool
        Queues may have 1-4 servers (else one).
    load_dependent : bool
        Stations may be :class:`~qmodels.model.LoadDependent` (non-decreasing
        rate multipliers starting at 1).
    distributions : bool
        Stations may carry a service-time shape and open classes an
        inter-arrival shape (any of :mod:`qmodels.distributions`).
    capacities : bool
        Queues may have a finite capacity (>= servers).
    power : bool
        Stations may carry :class:`~qmodels.model.Power`.
    pools : bool
        The network has one :class:`~qmodels.model.TokenPool` between two of
        its stations, used by every class or by a drawn subset.
    symbolic : bool
        Station 0's service time, and maybe others, is a positive sympy
        symbol (``S0``, ``S1``, ...); if every class overrides those, class
        0's first time becomes one (``T0`` or ``D0``): ``net.is_symbolic``
        holds.
    disciplines : tuple of str
        Queueing disciplines queues may have: ``"fcfs"``, ``"ps"``, and the
        priority vocabulary ``"prio"``, ``"prio-pr"``, ``"lcfs-pr"``.
    priorities : bool
        Classes get a priority level 0..2 (0 highest).
    forkjoins : bool
        With two stations or more, one :class:`~qmodels.model.ForkJoin`
        ``fj`` whose 1-3 branches are single stations of the network,
        reached only through it (classes visit ``fj``, never a branch).
    unicode_names : bool
        Station and class names are drawn from letters and digits of any
        script (NFC-normalised, distinct); else ``s0, s1, ...`` and
        ``c0, c1, ...``.
    stable : bool
        Scale the open classes' arrival rates so that every station's open
        load is below its capacity (at most 0.9 of it), as open and mixed
        solvers need.  With symbolic service times the check uses 1 for
        every symbol.
    product_form : bool
        Keep the networks inside product form where classes meet: an FCFS
        queue that several classes visit with different mean service times
        (which BCMP product form does not allow, so the exact solvers refuse
        it) becomes processor sharing.  The other features that break
        product form are off unless asked for (distributions, capacities,
        pools, priorities, fork-joins).
    class_switching : bool
        Every class is given by routing, and the first two classes, when
        both closed or both open, switch into each other: a drawn share of
        one routing row of each goes on as the other class
        (:mod:`qmodels.model.chains`); closed classes of the chain have no
        think time.  Not with pools or fork-joins.
    """
    if kind not in ("any", "closed", "open", "mixed"):
        raise ValueError(f"kind must be 'any', 'closed', 'open' or 'mixed', got {kind!r}")
    known = set(DISCIPLINES)
    if not disciplines or not set(disciplines) <= known:
        raise ValueError(f"disciplines must be a non-empty subset of {sorted(known)}, got "
                         f"{disciplines!r}")
    if class_switching and (pools or forkjoins):
        raise ValueError("class_switching does not combine with pools or fork-joins")
    if not 1 <= min_classes <= max_classes or max_stations < 1 or max_population < 0:
        raise ValueError("need 1 <= min_classes <= max_classes, max_stations >= 1 and "
                         "max_population >= 0")
    strategy = _networks(kind, min_classes, max_classes, max_stations, max_population,
                         multi_server, load_dependent, distributions, capacities, power, pools,
                         symbolic, unicode_names, tuple(disciplines), stable, priorities,
                         forkjoins, class_switching)
    return strategy.map(_shared_fcfs_as_ps) if product_form else strategy


def _shared_fcfs_as_ps(net: Network) -> Network:
    """``net`` with every FCFS queue that classes visit with different mean
    service times made processor sharing (the product-form station for
    class-dependent times, BCMP type 2)."""
    import dataclasses

    V, S = net.visits, net.service_times
    change = set()
    for k, s in enumerate(net.stations):
        if not (isinstance(s, Queue) and s.discipline == "fcfs"):
            continue
        times = [S[i][k] for i in range(len(net.classes)) if V[i][k] != 0]
        if any(t != times[0] for t in times[1:]):
            change.add(s.name)
    if not change:
        return net
    stations = tuple(dataclasses.replace(s, discipline="ps") if s.name in change else s
                     for s in net.stations)
    return Network(stations, net.classes, name=net.name, pools=net.pools)


@st.composite
def _networks(draw, kind, min_classes, max_classes, max_stations, max_population,
              multi_server, load_dependent, distributions, capacities, power, pools,
              symbolic, unicode_names, disciplines, stable, priorities=False,
              forkjoins=False, class_switching=False):
    opts = dict(multi_server=multi_server, load_dependent=load_dependent,
                distributions=distributions, capacities=capacities, power=power,
                max_population=max_population, disciplines=disciplines,
                priorities=priorities, routing_only=class_switching)
    taken: set = set()
    K = draw(st.integers(1, max_stations))
    station_names = _names(draw, "s", K, unicode_names, taken)
    symbols = [None] * K
    if symbolic:
        import sympy as sp

        for k in range(K):
            if k == 0 or draw(st.booleans()):
                symbols[k] = sp.Symbol(f"S{k}", positive=True)
    stations = [_station(draw, n, opts, symbols[k]) for k, n in enumerate(station_names)]
    reachable = list(station_names)
    if forkjoins and K >= 2:
        from .model.forkjoin import ForkJoin

        branches = draw(st.lists(st.sampled_from(station_names), min_size=1,
                                 max_size=min(3, K - 1), unique=True))
        fj = "fj" if "fj" not in taken else "fj_"
        taken.add(fj)
        stations.append(ForkJoin(fj, branches=[[b] for b in branches]))
        reachable = [n for n in station_names if n not in branches] + [fj]
        opts["forkjoin"] = fj

    lo = max(min_classes, 2 if kind == "mixed" else 1)
    C = draw(st.integers(lo, max(lo, max_classes)))
    if kind == "closed":
        closed = [True] * C
    elif kind == "open":
        closed = [False] * C
    else:
        closed = [draw(st.booleans()) for _ in range(C)]
        if kind == "mixed" and all(closed):
            closed[-1] = False
        if kind == "mixed" and not any(closed):
            closed[0] = True
    class_names = _names(draw, "c", C, unicode_names, taken)
    classes = [_workload(draw, n, cl, reachable, opts)
               for n, cl in zip(class_names, closed)]
    if class_switching and C >= 2 and closed[0] == closed[1]:
        classes[0], classes[1] = _switch(draw, classes[0], classes[1])
    pool_list = []
    if pools:
        holdable = [n for n in reachable if n != opts.get("forkjoin")] or None
        if holdable is None:
            pools = False
    if pools:
        station_names = holdable
        a = draw(st.sampled_from(station_names))
        b = draw(st.sampled_from(station_names))
        users = None
        if C > 1 and draw(st.booleans()):
            users = tuple(draw(st.lists(st.sampled_from(class_names), min_size=1, unique=True)))
        pname = "pool" if "pool" not in taken else "pool_"
        path = None
        if a != b and draw(st.booleans()):  # a held path: acquire, some others, release
            middle = draw(st.lists(st.sampled_from([n for n in station_names if n not in (a, b)]),
                                   unique=True, max_size=2)) if len(station_names) > 2 else []
            path = (a, *middle, b)
        pool_list.append(TokenPool(pname, draw(st.integers(1, 3)), a, b, users, path=path))
    net = Network(stations, classes, name=draw(st.sampled_from(["", "generated"])),
                  pools=pool_list)
    if symbolic and not net.is_symbolic:
        net = _make_symbolic(net)
    return _stabilise(draw, net, stable)


def _make_symbolic(net: Network) -> Network:
    """Every class gave its own times where the symbols were: make class 0's
    first time symbolic (``D0`` for a demand, ``T0`` for a service time)."""
    import dataclasses

    import sympy as sp

    c = net.classes[0]
    if c.demands is not None:
        k = next(iter(c.demands))
        new = dataclasses.replace(c, demands={**c.demands, k: sp.Symbol("D0", positive=True)})
    else:
        visited = list(c.visits) if c.visits is not None else [
            n for n in c.routing if n != "source"]
        new = dataclasses.replace(c, service={**(c.service or {}),
                                              visited[0]: sp.Symbol("T0", positive=True)})
    return Network(net.stations, (new,) + tuple(net.classes[1:]), name=net.name,
                   pools=net.pools)


def closed_networks(**options) -> st.SearchStrategy:
    """Networks whose classes are all closed (see :func:`networks`)."""
    return networks(kind="closed", **options)


def open_networks(stable: bool = True, **options) -> st.SearchStrategy:
    """Networks whose classes are all open; with ``stable=True`` every
    station's load is below its capacity (see :func:`networks`)."""
    return networks(kind="open", stable=stable, **options)


def mixed_networks(**options) -> st.SearchStrategy:
    """Networks with at least one closed and one open class (see
    :func:`networks`)."""
    return networks(kind="mixed", **options)


# ---------------------------------------------------------------------------
# assertions
# ---------------------------------------------------------------------------

class _Check:
    def __init__(self, rtol, atol):
        self.rtol, self.atol = rtol, atol
        self.failures: list[str] = []

    def close(self, law, where, actual, expected):
        a, e = float(actual), float(expected)
        if not (math.isfinite(a) and math.isfinite(e)):
            if a == e:
                return
        elif abs(a - e) <= self.atol + self.rtol * max(abs(a), abs(e)):
            return
        self.failures.append(f"{law} at {where}: {a:.10g} != {e:.10g}")

    def at_most(self, law, where, actual, limit):
        if float(actual) > float(limit) * (1 + self.rtol) + self.atol:
            self.failures.append(f"{law} at {where}: {float(actual):.10g} > {float(limit):.10g}")

    def at_least(self, law, where, actual, limit):
        if float(actual) < float(limit) * (1 - self.rtol) - self.atol:
            self.failures.append(f"{law} at {where}: {float(actual):.10g} < {float(limit):.10g}")

    def done(self, what):
        if self.failures:
            shown = "\n  ".join(self.failures[:20])
            more = f"\n  ... and {len(self.failures) - 20} more" if len(self.failures) > 20 else ""
            raise AssertionError(f"{what}: {len(self.failures)} violation(s)\n  {shown}{more}")


def assert_operational_laws(result, *, rtol: float = 1e-6, atol: float = 1e-9) -> None:
    """Check that ``result`` obeys the operational laws; raise
    ``AssertionError`` listing every violation (law, station, class, values).

    The laws are those every analytic answer is held to before a solver
    returns it (:func:`qmodels.analytic.contract.law_violations`; Denning &
    Buzen 1978; Lazowska et al. 1984, ch. 3 and 5): figures finite and
    non-negative; per class and station Little's law ``Q = X R`` (R per
    visit), the forced flow law ``X_k = V_k X``, the utilisation law
    ``U = X S / m`` at a queue of ``m`` servers (``U >= X S / m`` where a
    finite capacity can block a server), ``X S`` at a delay; ``sum_c U <= 1``
    at every queue and ``X S <= max a(n)`` at a load-dependent station; per
    class the response time law ``R = sum_k V_k R_k``, job conservation
    ``sum_k Q_k + X Z = N`` (closed; jobs waiting for a token, in
    ``info["pools"]``, counted too; with several classes and pools, summed
    over the classes) or ``X = lambda`` (open, ``X <= lambda`` where
    arrivals can be lost), the interactive response time law
    ``N = X (R + Z)``, and ``R`` at least the class's no-contention time.
    A fork-join's branch stations hold its tasks, whose time and number are
    inside the fork-join's own R and Q: the class sums leave them out.  Under
    class switching conservation holds per chain (the chain's N, or its
    arrival rate; :mod:`qmodels.analytic.switching`).

    Parameters
    ----------
    result : qmodels.results.Result
        A numeric analytic result (``mva``, ``schweitzer``, ``convolution``,
        ...); approximate methods satisfy these laws too, up to their
        convergence tolerance (loosen ``rtol``).
    rtol, atol : float
        Tolerances of each comparison.
    """
    from .analytic.contract import law_violations

    net = getattr(result, "network", None)
    if net is None or not hasattr(result, "station_queue_length"):
        raise TypeError(f"assert_operational_laws needs an analytic Result, got "
                        f"{type(result).__name__}")
    if net.is_symbolic:
        raise TypeError("assert_operational_laws checks numeric results; substitute values "
                        "for the symbols first (qmodels.substitute)")
    bad = law_violations(result, rtol=rtol, atol=atol)
    if bad:
        shown = "\n  ".join(bad[:20])
        more = f"\n  ... and {len(bad) - 20} more" if len(bad) > 20 else ""
        raise AssertionError(
            f"{getattr(result, 'method', 'result')} solution violates the operational laws: "
            f"{len(bad)} violation(s)\n  {shown}{more}")


def assert_within_bounds(result, bounds, *, rtol: float = 1e-9, atol: float = 1e-12) -> None:
    """Check that each class's throughput and response time in ``result``
    lie within ``bounds`` (a :class:`~qmodels.analytic.bounds.Bounds` or several):
    ``X_lower <= X <= X_upper`` and ``R_lower <= R <= R_upper``
    (asymptotic and balanced job bounds, Lazowska et al. 1984, ch. 5, Table
    5.3).  Raises ``AssertionError`` naming the class, the bound and the
    values."""
    if not isinstance(bounds, Iterable) or hasattr(bounds, "throughput_lower"):
        bounds = [bounds]
    chk = _Check(rtol, atol)
    net = result.network
    for b in bounds:
        i = net.class_index(b.class_name)
        x = float(np.asarray(result.class_throughput, float)[i])
        r = float(np.asarray(result.class_response_time, float)[i])
        where = f"class {b.class_name!r}"
        chk.at_least("throughput lower bound", where, x, b.throughput_lower)
        chk.at_most("throughput upper bound", where, x, b.throughput_upper)
        chk.at_least("response time lower bound", where, r, b.response_time_lower)
        chk.at_most("response time upper bound", where, r, b.response_time_upper)
    chk.done(f"{getattr(result, 'method', 'result')} solution is outside its bounds")
