"""From a :class:`~qmodels.model.Network` to the flat arrays of the event loop.

This is where the simulator decides what it can honour; everything it
cannot is refused here with a typed error naming the station, class or
pool (never a wrong number later).

Routing of a class given by visits or demands
---------------------------------------------
Such a class has visit ratios V_k but no order of visits.  The simulator
routes it at random, which gives exactly the same visit ratios (the
product-form means depend on the routing only through them: Baskett,
Chandy, Muntz & Palacios 1975, eq. (3)-(4); Lazowska et al. 1984, sec. 8.2):
with ``T = sum_k V_k``,

* ``T >= 1``: a cycle starts at station k with probability ``V_k / T``;
  after each visit it ends with probability ``1 / T``, else goes to
  station k with probability ``(1 - 1/T) V_k / T``.  The number of visits
  per cycle is geometric with mean T, so the mean number of visits to k is
  ``T * V_k / T = V_k``.
* ``T < 1``: a cycle makes one visit with probability T (to k with
  probability ``V_k / T``) and none otherwise.

This is not a path: a user who lists the stations of a tandem as visits
gets a geometric number of visits per cycle in random order, and outside
product form different means.  :func:`qmodels.simulate` therefore warns
(:class:`~qmodels.errors.RoutingWarning`, and in the result's warnings)
for every class given by visits over several stations, naming the way to
give the path: ``route=[...]`` (a class given by ``route`` has the routing
table of that path, followed below like any routing).

A class given by visits that uses token pools with a ``path``
(:class:`~qmodels.model.TokenPool`) follows each chain of held stations
(:func:`~qmodels.model.pool_chains`: nested or overlapping paths merged) as
one unit: the random routing above picks the chain's first station with its
visit ratio, the job then visits the chain's stations in order, and after
the last one the routing goes on as after any visit.  Every chain station
has the first one's visit ratio, so the visit ratios are unchanged.

Closed classes with routing end a cycle each time a job is routed to the
reference station (``Closed(reference=...)``, default the first station of
the routing); the think time Z is spent between cycles, outside the
stations.  Open classes with routing enter at the ``"source"`` row and end
at ``"sink"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidValueError, PopulationError, UnstableError, UnsupportedModelError
from ..model.caching import CacheStation
from ..model.chains import chain_rates
from ..model.distributions import (
    Deterministic,
    Distribution,
    Empirical,
    Erlang,
    Exponential,
    HyperExponential,
    Lognormal,
    Pareto,
    Uniform,
)
from ..model.forkjoin import ForkJoin, branch_mask, forkjoins
from ..model.map import MAP
from ..model.network import (
    SINK,
    SOURCE,
    Closed,
    Delay,
    LoadDependent,
    Network,
    Open,
    Queue,
    pool_chains,
)
from . import engine as E

__all__ = ["Flat", "flatten", "acc_layout", "limiting_capacity"]

#: histogram of cycle times: bins per class, and the span (decades) they cover
HIST_BINS = 4096
HIST_DECADES = 10.0


@dataclass
class Flat:
    """The network as arrays (see :mod:`qmodels.sim.engine`)."""

    STI: np.ndarray
    STF: np.ndarray
    RM: np.ndarray
    EMP: np.ndarray
    S: np.ndarray
    CLI: np.ndarray
    CLF: np.ndarray
    RN: np.ndarray
    RD: np.ndarray
    RC: np.ndarray
    PLI: np.ndarray
    ACQ: np.ndarray
    REL: np.ndarray
    n_closed: int
    closed_class_of_job: np.ndarray
    K: int
    C: int
    P: int
    ucap: np.ndarray
    visits: np.ndarray
    hist_lo: np.ndarray  # log of the lower edge of bin 1, per class
    hist_step: float  # log width of a bin
    max_tasks: int = 0  # tasks of the largest fork (0: no fork-join)
    branch: np.ndarray | None = None  # stations on fork-join branches (None: no fork-join)
    #: class indices of each class-switching chain (its jobs' cycles are the
    #: chain's: qmodels.sim.windows reports X and R per class per chain cycle)
    switch_chains: tuple = ()
    #: the caches (:func:`_encode_caches`; layout in qmodels.sim.engine, ``Q``):
    #: their model rows, cumulative popularities, the cache of each station,
    #: each class's hit / miss destination there, and the size of their state
    QI: np.ndarray = field(default_factory=lambda: np.zeros((0, E.NQI), dtype=np.int64))
    QF: np.ndarray = field(default_factory=lambda: np.zeros(1))
    QK: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    QD: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 2), dtype=np.int64))
    QW_size: int = 1


def acc_layout(C: int, K: int, P: int, NQ: int = 0) -> dict:
    """Offsets of the cumulative-statistics vector ``ACC``; its last
    ``2 NQ`` cells are the lookups and hits of each of the ``NQ`` caches
    (``cache``: counted in the event loop after the warm-up fill, so the
    cell snapshots give them per observation window)."""
    CK = C * K
    return {
        "area_n": 0,
        "area_u": CK,
        "comp": 2 * CK,
        "soj": 3 * CK,
        "cyc": 4 * CK,
        "cyct": 4 * CK + C,
        "lost": 4 * CK + 2 * C,
        "pool_busy": 4 * CK + 3 * C,
        "pool_q": 4 * CK + 3 * C + P,
        "events": 4 * CK + 3 * C + 2 * P,
        "cache": 4 * CK + 3 * C + 2 * P + 1,
        "size": 4 * CK + 3 * C + 2 * P + 1 + 2 * NQ,
    }


def _encode_distribution(dist, who: str, emp: list):
    """(kind, a, b, offset, length) of a distribution shape; the empirical
    samples are appended to ``emp`` normalised to mean 1."""
    if dist is None or isinstance(dist, Exponential):
        return E.D_EXP, 0.0, 0.0, 0, 0
    if not isinstance(dist, Distribution):
        raise InvalidValueError(f"{who}: not a distribution: {dist!r}")
    if isinstance(dist, Deterministic):
        return E.D_DET, 0.0, 0.0, 0, 0
    if isinstance(dist, Erlang):
        k = dist.k
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidValueError(f"{who}: Erlang k must be an integer >= 1, got {k!r}")
        return E.D_ERLANG, float(k), 0.0, 0, 0
    if isinstance(dist, HyperExponential) and dist.probs is not None:
        # the given branches (at mean 1), drawn exactly: (cumulative
        # probability, branch mean) pairs in emp
        ps, rs = dist.branches()
        off, cum = len(emp), 0.0
        for i, (p, r) in enumerate(zip(ps, rs)):
            cum += p
            emp.extend((1.0 if i == len(ps) - 1 else cum, 1.0 / r))
        return E.D_HYPER, 0.0, 0.0, off, len(ps)
    if isinstance(dist, HyperExponential):
        c2 = dist.scv_value
        if isinstance(c2, bool) or not isinstance(c2, (int, float)) or not math.isfinite(c2) \
                or c2 < 1:
            raise InvalidValueError(f"{who}: HyperExponential scv must be >= 1, got {c2!r}")
        # balanced means (Whitt 1982; Law 2015, sec. 6.2.5)
        p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
        if p1 >= 1.0:
            raise InvalidValueError(f"{who}: HyperExponential scv {c2!r} is too large to draw")
        return E.D_HYPER, p1, 0.0, 0, 0
    if isinstance(dist, Lognormal):
        c2 = dist.scv_value
        if isinstance(c2, bool) or not isinstance(c2, (int, float)) or not math.isfinite(c2) \
                or c2 <= 0:
            raise InvalidValueError(f"{who}: Lognormal scv must be > 0, got {c2!r}")
        return E.D_LOGN, math.sqrt(math.log1p(c2)), 0.0, 0, 0
    if isinstance(dist, Uniform):
        s = dist.spread
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not (0 <= s <= 1):
            raise InvalidValueError(f"{who}: Uniform spread must be in [0, 1], got {s!r}")
        return E.D_UNIF, float(s), 0.0, 0, 0
    if isinstance(dist, Pareto):
        al = dist.alpha
        if isinstance(al, bool) or not isinstance(al, (int, float)) or not math.isfinite(al) \
                or al <= 2:
            raise InvalidValueError(f"{who}: Pareto alpha must be > 2, got {al!r}")
        return E.D_PARETO, float(al), (float(al) - 1.0) / float(al), 0, 0
    if isinstance(dist, Empirical):
        arr = np.asarray(dist.samples, dtype=float)
        if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0) or arr.max() <= 0:
            raise InvalidValueError(
                f"{who}: Empirical samples must be finite, non-negative, with a positive mean"
            )
        off = len(emp)
        emp.extend(dist.unit_samples.tolist())
        return E.D_EMP, 0.0, 0.0, off, int(arr.size)
    raise UnsupportedModelError(f"{who}: the simulator cannot draw from {type(dist).__name__}")


def _encode_map(m: MAP, lam: float, who: str, emp: list):
    """(kind, a, b, offset, length) of an open class's Markovian arrival
    process (:data:`~qmodels.sim.engine.D_MAP`; the layout in EMP is
    described there): per phase i, its total rate out -D0[i, i] / lambda
    (time in units of the mean interval 1 / lambda, which the engine
    multiplies by the class's mean) and the cumulative probabilities of its
    2n outcomes, D0[i, j] / -D0[i, i] (j != i, no arrival) then D1[i, j] /
    -D0[i, i] (an arrival, the next interval from phase j) (Neuts 1979,
    Lucantoni 1991).  The stream starts in phase 0.  The class's rate must
    be the MAP's (the model checks it)."""
    rate = float(m.rate)
    if not (lam > 0 and abs(lam - rate) <= 1e-9 * rate):
        raise UnsupportedModelError(
            f"{who}: its arrival rate {lam!r} is not its MAP's rate {rate!r} (a class switched "
            "into the MAP class's chain?); the simulator draws the MAP at its own rate only")
    D0, D1 = m.d0, m.d1
    n = m.phases
    off = len(emp)
    for i in range(n):
        out = -float(D0[i, i])
        emp.append(out / rate)
        probs = [0.0 if j == i else float(D0[i, j]) / out for j in range(n)]
        probs += [float(D1[i, j]) / out for j in range(n)]
        emp.extend(_cumulative(probs))
    return E.D_MAP, 0.0, 0.0, off, n


def _cumulative(probs) -> list:
    """Cumulative probabilities for drawing by ``u >= cum[x]: x += 1``: an
    outcome of probability 0 is never drawn (its value equals the one
    before, so the search moves on), and from the last outcome of positive
    probability on every value is 1 (rounding never picks an impossible
    last outcome)."""
    p = np.asarray(probs, dtype=float)
    cum = np.cumsum(p)
    last = int(np.flatnonzero(p > 0)[-1])
    cum[last:] = 1.0
    return [float(x) for x in cum]


def _visit_routing(v: np.ndarray, K: int, chains=()):
    """Rows (list of (dest, p)) of the random routing with visit ratios v.

    ``chains`` (tuples of station indices, from :func:`qmodels.model.pool_chains`)
    are traversed as one unit: the random routing picks a chain's first
    station with its visit ratio, the chain is followed in order, and the
    row after its last station is the row any visit ends with.  The visit
    ratios are unchanged (every chain station has the first one's ratio).
    """
    v = np.array(v, dtype=float)
    for ch in chains:
        v[list(ch[1:])] = 0.0
    rows = _visit_routing_plain(v, K)
    for ch in chains:
        after = rows.pop(ch[0])
        for a, b in zip(ch[:-1], ch[1:]):
            rows[a] = [(b, 1.0)]
        rows[ch[-1]] = after
    return rows


def _visit_routing_plain(v: np.ndarray, K: int):
    T = float(v.sum())
    ks = [k for k in range(K) if v[k] > 0]
    rows = {}
    if T >= 1.0:
        rows[K] = [(k, v[k] / T) for k in ks]
        for k in ks:
            rows[k] = [(K, 1.0 / T)] + [(j, (1.0 - 1.0 / T) * v[j] / T) for j in ks]
    else:
        rows[K] = [(K, 1.0 - T)] + [(k, float(v[k])) for k in ks]
        for k in ks:
            rows[k] = [(K, 1.0)]
    return rows


def _explicit_routing(cls, index: dict, K: int, switch=None):
    """Rows of a class given by routing; destination K = end of cycle.

    ``switch`` (a class in a class-switching chain): (class index by name,
    the chain's first class, its reference station).  An entry that sends
    the job on as class s is coded d + (K + 1) (s + 1) (see
    :mod:`qmodels.sim.engine`); a closed chain's cycle ends when a job is
    routed to the reference station as the chain's first class, and a job
    of another class of the chain starts (when its population puts it
    there) at the first station of its own routing."""
    rows: dict[int, list] = {}
    if switch is not None:
        cidx, first, ref = switch
        own = cidx[cls.name]
        for src, row in cls.routing.items():
            r = K if src == SOURCE else index[src]
            out = []
            for key, p in row.items():
                st, to = key if isinstance(key, tuple) else (key, cls.name)
                if st == SINK or (ref is not None and (st, to) == (ref, first)):
                    d = K
                else:
                    d = index[st]
                if cidx[to] != own:
                    d += (K + 1) * (cidx[to] + 1)
                out.append((d, float(p)))
            rows[r] = out
        if not isinstance(cls, Open):
            start = ref if cls.name == first else next(iter(cls.routing))
            rows[K] = [(index[start], 1.0)]
        return rows
    if isinstance(cls, Open):
        assert cls.routing is not None  # callers pass only classes given by routing
        for src, row in cls.routing.items():
            r = K if src == SOURCE else index[src]
            rows[r] = [(K if dst == SINK else index[dst], float(p)) for dst, p in row.items()]
        return rows
    ref = cls.reference if cls.reference is not None else next(iter(cls.routing))
    kref = index[ref]
    for src, row in cls.routing.items():
        rows[index[src]] = [(K if dst == ref else index[dst], float(p)) for dst, p in row.items()]
    rows[K] = [(kref, 1.0)]
    return rows


def _switching(net: Network) -> dict:
    """Class name -> (class index by name, the chain's first class, its
    reference station or None) for the classes in class-switching chains;
    refuses what the simulator does not do with class switching."""
    if not net.has_class_switching:
        return {}
    if net.pools:
        raise UnsupportedModelError(
            f"token pool {net.pools[0].name!r} in a network with class switching: the "
            "simulator does not model pools together with class switching")
    if forkjoins(net.stations):
        raise UnsupportedModelError(
            f"fork-join {forkjoins(net.stations)[0].name!r} in a network with class "
            "switching: the simulator does not model them together")
    cidx = {n: i for i, n in enumerate(net.class_names)}
    out = {}
    for chain in net.chains:
        if len(chain) < 2:
            continue
        first = net.klass(chain[0])
        ref = None if isinstance(first, Open) else first.reference
        for n in chain:
            out[n] = (cidx, first.name, ref)
    return out


def flatten(net: Network) -> Flat:
    """Check that the simulator can honour ``net`` and build its arrays.

    Raises
    ------
    UnsupportedModelError
        Symbolic parameters; a class with a token pool (without a path) or
        a finite-capacity station but no explicit routing; a finite capacity at a pool's
        acquire station; more than 62 pools.
    PopulationError
        Nothing to simulate: every closed population is zero and there is
        no open class with a positive arrival rate.
    InvalidValueError
        A distribution parameter out of range; a token pool with fewer than
        one token; a closed class with jobs whose cycle takes no time (it
        visits no station, or every service time it meets is zero, and it
        has no think time: the throughput would be unbounded).
    UnstableError
        An open workload that loads a station without finite room to
        rho >= 1 on its own (a load-dependent station counts at its
        limiting rate, the last multiplier).
    """
    if net.is_symbolic:
        raise UnsupportedModelError(
            "the simulator is numeric; this network has sympy symbols: substitute numbers first"
        )
    K, C = len(net.stations), len(net.classes)
    V = np.asarray(net.visits, dtype=float)
    Sm = np.array(net.service_times, dtype=float)
    pops = [int(getattr(c, "population", 0)) for c in net.classes]
    rates = [float(c.arrival_rate) if isinstance(c, Open) else 0.0 for c in net.classes]
    _check_workload(net, pops, rates, V, Sm)
    _check_forkjoins(net)
    PLI, ACQ, REL = _encode_pools(net)
    emp: list[float] = []
    STI, STF, RM = _encode_stations(net, V, emp)
    CLI, CLF, rows_all = _encode_classes(net, V, Sm, pops, rates, emp)
    RN, RD, RC = _routing_arrays(rows_all, C, K)
    _check_open_stability(net, chain_rates(net), V, Sm)

    n_closed = sum(pops)
    cls_of_job = np.repeat(np.arange(C), pops).astype(np.int64)
    ucap_all = STF[:, 2].copy()
    QI, QF, QK, QD, QW_size = _encode_caches(net, V)
    flat = Flat(STI, STF, RM, np.asarray(emp if emp else [1.0], dtype=float), Sm, CLI, CLF,
                RN, RD, RC, PLI, ACQ, REL, n_closed, cls_of_job, K, C, int(PLI.shape[0]),
                ucap_all, V, CLF[:, 4].copy(), math.log(10.0) * HIST_DECADES / HIST_BINS,
                max([f.n_tasks for f in forkjoins(net.stations)], default=0),
                np.array(branch_mask(net), dtype=bool) if forkjoins(net.stations) else None,
                tuple(tuple(net.class_index(n) for n in ch) for ch in net.chains
                      if len(ch) > 1), QI, QF, QK, QD, QW_size)
    return flat


def _encode_caches(net: Network, V):
    """(QI, QF, QK, QD, QW size) of the cache stations (layout in
    :mod:`qmodels.sim.engine`, ``Q``).  Refused by name: a class that
    visits a cache station without explicit routing (its hit and miss paths
    would be drawn at random, not by the cache), one in a class-switching
    chain, a cache station on a fork-join branch."""
    K, C = len(net.stations), len(net.classes)
    QK = np.full(K, -1, dtype=np.int64)
    QD = np.full((C, K, 2), K, dtype=np.int64)
    caches = [(k, s) for k, s in enumerate(net.stations) if isinstance(s, CacheStation)]
    if not caches:
        return (np.zeros((0, E.NQI), dtype=np.int64), np.zeros(1), QK, QD, 1)
    index = {n: k for k, n in enumerate(net.station_names)}
    branch = branch_mask(net) if forkjoins(net.stations) else [False] * K
    QI = np.zeros((len(caches), E.NQI), dtype=np.int64)
    cdfs, w = [], 0
    off_f = 0
    for q, (k, s) in enumerate(caches):
        who = f"cache station {s.name!r}"
        if branch[k]:
            raise UnsupportedModelError(
                f"{who} is on a fork-join branch: the simulator routes a branch's tasks along "
                "the branch, not by a cache; put the cache before the fork-join")
        for ci, cls in enumerate(net.classes):
            if not V[ci, k] > 0:
                continue
            if cls.routing is None:
                raise UnsupportedModelError(
                    f"class {cls.name!r} visits {who} but has no explicit routing; give it "
                    f"routing= with the row {s.name!r}: station.split(), so that each job goes "
                    f"to {s.hit!r} or {s.miss!r} by the cache's answer")
            if len(net.chain_of(cls.name)) > 1:
                raise UnsupportedModelError(
                    f"class {cls.name!r} visits {who} and switches class: the simulator does "
                    "not model caches together with class switching")
            for col, dst in enumerate((s.hit, s.miss)):
                if isinstance(cls, Open):
                    QD[ci, k, col] = K if dst == SINK else index[dst]
                else:
                    ref = cls.reference if cls.reference is not None else next(iter(cls.routing))
                    if dst == SINK:
                        raise UnsupportedModelError(
                            f"class {cls.name!r} is closed: {who} cannot send it to 'sink'")
                    QD[ci, k, col] = K if dst == ref else index[dst]
        p = np.asarray(s.popularity, dtype=float)
        n = int(p.size)
        cap = min(int(s.cache_capacity), n)
        pol = {"lru": E.Q_LRU, "fifo": E.Q_FIFO, "random": E.Q_RANDOM}[s.policy]
        cdf = np.cumsum(p)
        cdf /= cdf[-1]
        where = w
        w += n
        prev = nxt = 0
        if pol == E.Q_LRU:
            prev, nxt = w, w + n
            w += 2 * n
        slots = w
        w += max(cap, 1)
        QI[q] = (pol, n, cap, where, prev, nxt, slots, off_f)
        cdfs.append(cdf)
        off_f += n
        QK[k] = q
    return QI, np.concatenate(cdfs), QK, QD, w


def _check_workload(net: Network, pops, rates, V, Sm) -> None:
    """Something to simulate, and no closed cycle that takes zero time."""
    if sum(pops) == 0 and not any(r > 0 for r in rates):
        desc = ", ".join(
            f"{c.name!r} (population {c.population})" if isinstance(c, Closed)
            else f"{c.name!r} (arrival rate {c.arrival_rate})" for c in net.classes
        )
        raise PopulationError(
            f"nothing to simulate: every closed population is zero and no open class has a "
            f"positive arrival rate ({desc})"
        )
    for ci, cls in enumerate(net.classes):
        if not isinstance(cls, Closed) or pops[ci] == 0 or float(cls.think_time) > 0:
            continue
        if V[ci].sum() <= 0:
            raise InvalidValueError(
                f"class {cls.name!r}: visits no station and has no think time: its jobs would "
                "cycle in zero time"
            )
        if float(np.sum(V[ci] * Sm[ci])) <= 0:
            # the error qm.mva raises for the same class
            raise InvalidValueError(
                f"class {cls.name!r}: all demands and the think time are zero, so the "
                "throughput is unbounded (the simulator would never advance its clock)"
            )


def _encode_pools(net: Network):
    """(PLI, ACQ, REL): tokens, acquire and release station of each pool;
    bit masks of the pools class c takes on entering / gives back on
    leaving station k."""
    K, C = len(net.stations), len(net.classes)
    index = {n: k for k, n in enumerate(net.station_names)}
    P = len(net.pools)
    if P > 62:
        raise UnsupportedModelError(f"the simulator handles at most 62 token pools, got {P}")
    PLI = np.zeros((P, 3), dtype=np.int64)
    ACQ = np.zeros((C, K), dtype=np.int64)
    REL = np.zeros((C, K), dtype=np.int64)
    for p, pool in enumerate(net.pools):
        tokens = pool.tokens
        if isinstance(tokens, bool) or not isinstance(tokens, (int, np.integer)) or tokens < 1:
            raise InvalidValueError(
                f"token pool {pool.name!r}: tokens must be an integer >= 1, got {tokens!r}"
            )
        ka, kr = index[pool.acquire], index[pool.release]
        if getattr(net.stations[ka], "discipline", None) in _PRIO_KINDS:
            raise UnsupportedModelError(
                f"token pool {pool.name!r}: its acquire station {pool.acquire!r} has "
                f"discipline {net.stations[ka].discipline!r}; the simulator takes tokens only "
                "at FCFS, PS, load-dependent and delay stations")
        if net.stations[ka].capacity is not None:
            raise UnsupportedModelError(
                f"token pool {pool.name!r}: its acquire station {pool.acquire!r} has a finite "
                f"capacity ({net.stations[ka].capacity}); the simulator needs unlimited room "
                "where tokens are taken (put the capacity on another station)"
            )
        PLI[p] = (tokens, ka, kr)
        users = pool.classes if pool.classes is not None else net.class_names
        for cn in users:
            ci = net.class_index(cn)
            cls = net.classes[ci]
            if cls.routing is None and pool.path is None and pool.acquire != pool.release:
                raise UnsupportedModelError(
                    f"class {cls.name!r} uses token pool {pool.name!r} but has no explicit "
                    "routing; give it routing=, or give the pool a path=, so that the pool "
                    "is held along a known route"
                )
            ACQ[ci, ka] |= 1 << p
            REL[ci, kr] |= 1 << p
    return PLI, ACQ, REL


#: disciplines served in priority order -> station kind of the event loop
_PRIO_KINDS = {"prio": E.K_PRIO, "prio-pr": E.K_PRIO_PR, "lcfs-pr": E.K_LCFS_PR}


def _encode_stations(net: Network, V: np.ndarray, emp: list):
    """(STI, STF, RM) of the stations (layout in :mod:`qmodels.sim.engine`)."""
    K = len(net.stations)
    # a class's own shapes come from the lowered form (built only then: the
    # checks of each shape's parameters below come first otherwise)
    low = net.lowered if any(c.distribution for c in net.classes) else None
    STI = np.zeros((K, 8), dtype=np.int64)
    STF = np.zeros((K, 3), dtype=float)
    rm_rows = []
    for k, s in enumerate(net.stations):
        who = f"station {s.name!r}"
        cap = E.INF_CAP if s.capacity is None else int(s.capacity)
        if isinstance(s, Delay):
            kind, ukind, c, ucap, rm = 0, 0, E.INF_CAP, 1.0, [1.0]
        elif isinstance(s, Queue):
            c = int(s.servers)
            if s.discipline == "fcfs":
                kind, ukind, ucap, rm = 1, 0, float(c), [1.0]
            elif s.discipline in _PRIO_KINDS:
                kind, ukind, ucap, rm = _PRIO_KINDS[s.discipline], 0, float(c), [1.0]
            else:
                kind, ukind, ucap, rm = 2, 1, float(c), [float(i) for i in range(1, c + 1)]
        elif isinstance(s, LoadDependent):
            kind, ukind, c, ucap = 2, 2, 1, 1.0
            rm = [float(a) for a in s.rate_multipliers]
        elif isinstance(s, ForkJoin):
            # no service; its rate row holds the first station of each task
            kind, ukind, c, ucap = E.KIND_FORKJOIN, 0, E.INF_CAP, 1.0
            index = {n: i for i, n in enumerate(net.station_names)}
            rm = [float(index[br[0]]) for br, t in zip(s.branches, s.tasks) for _ in range(t)]
        else:
            raise UnsupportedModelError(f"{who}: unknown station kind {s.kind!r}")
        if low is not None and low.class_shaped[k]:
            # a shape per class: kind D_CLASS, its (kind, a, b, offset,
            # length) per class in emp from offset ``off``; a holds the
            # largest Erlang k (the uniforms a variate may take)
            rows = [_encode_distribution(low.shapes[c][k], f"{who}: distribution of class "
                                         f"{net.class_names[c]!r}", emp)
                    for c in range(len(net.classes))]
            off = len(emp)
            for r in rows:
                emp.extend(float(x) for x in r)
            dk, a, b, ln = E.D_CLASS, max([2.0] + [r[1] for r in rows
                                                    if r[0] == E.D_ERLANG]), 0.0, 0
        else:
            shape = s.distribution if low is None else low.one_shape(k, "the simulator")
            dk, a, b, off, ln = _encode_distribution(shape, f"{who}: distribution", emp)
        STI[k] = (kind, ukind, c, cap, dk, off, ln, len(rm))
        STF[k] = (a, b, ucap)
        rm_rows.append(rm)
        if s.capacity is not None:
            for ci, cls in enumerate(net.classes):
                if V[ci, k] > 0 and cls.routing is None:
                    raise UnsupportedModelError(
                        f"class {cls.name!r} visits station {s.name!r}, which has a finite "
                        f"capacity ({s.capacity}), but has no explicit routing; give it "
                        "routing= so that blocking follows a known route"
                    )
    L = max(len(r) for r in rm_rows)
    RM = np.zeros((K, L))
    for k, r in enumerate(rm_rows):
        RM[k, : len(r)] = r
        RM[k, len(r):] = r[-1]
    return STI, STF, RM


def _encode_classes(net: Network, V, Sm, pops, rates, emp: list):
    """(CLI, CLF, routing rows of each class)."""
    K, C = len(net.stations), len(net.classes)
    index = {n: k for k, n in enumerate(net.station_names)}
    CLI = np.zeros((C, 6), dtype=np.int64)
    CLF = np.zeros((C, 6), dtype=float)
    rows_all = []
    fj_rows = _forkjoin_rows(net, index)
    switching = _switching(net)
    for ci, cls in enumerate(net.classes):
        who = f"class {cls.name!r}"
        # jobs never visit branch stations: tasks do, by the rows added below
        vj = np.where(branch_mask(net), 0.0, V[ci]) if fj_rows else V[ci]
        if cls.routing is not None:
            rows = _explicit_routing(cls, index, K, switching.get(cls.name))
        elif vj.sum() <= 0:
            rows = {K: [(K, 1.0)]}
        else:
            chains = [tuple(index[x] for x in ch) for ch in pool_chains(net, ci)]
            if fj_rows:
                # a chain on a fork-join branch is followed by the branch's own rows
                chains = [ch for ch in chains if vj[ch[0]] > 0]
            rows = _visit_routing(vj, K, chains)
        rows.update(fj_rows)
        rows_all.append(rows)
        if isinstance(cls, Open):
            lam = rates[ci]
            if isinstance(cls.interarrival, MAP):
                dk, a, b, off, ln = _encode_map(cls.interarrival, lam, who, emp)
            else:
                dk, a, b, off, ln = _encode_distribution(cls.interarrival,
                                                         f"{who}: interarrival", emp)
            CLI[ci, :5] = (1, 0, dk, off, ln)
            CLF[ci, 1] = 1.0 / lam if lam > 0 else np.inf
            CLF[ci, 2] = a
            CLF[ci, 3] = b
        else:
            CLI[ci, :5] = (0, pops[ci], 0, 0, 0)
            CLF[ci, 0] = float(cls.think_time)
        CLI[ci, E.CL_PRIO] = int(cls.priority)
        # histogram of cycle times: 10 decades from 1e-4 x the demand per cycle
        scale = float(np.sum(V[ci] * Sm[ci]))
        if not scale > 0:
            scale = 1.0
        step = math.log(10.0) * HIST_DECADES / HIST_BINS
        CLF[ci, 4] = math.log(scale * 1e-4)
        CLF[ci, 5] = 1.0 / step
    return CLI, CLF, rows_all


def _check_forkjoins(net: Network) -> None:
    """What the simulator does not do with fork-joins: finite capacities
    (a task or a joined job blocked after service) are refused by name."""
    fjs = forkjoins(net.stations)
    if not fjs:
        return
    for s in net.stations:
        if s.capacity is not None:
            raise UnsupportedModelError(
                f"station {s.name!r}: finite capacity {s.capacity} in a network with fork-join "
                f"{fjs[0].name!r}; the simulator does not model blocking together with "
                "fork-joins")
    # a task enters the first station of its branch by the event loop's
    # _enter, which knows delay, FCFS and sharing stations only
    for f in fjs:
        for br in f.branches:
            first = net.station(br[0])
            if isinstance(first, Queue) and first.discipline in _PRIO_KINDS:
                raise UnsupportedModelError(
                    f"station {first.name!r}: a {first.discipline!r} queue first on a branch of "
                    f"fork-join {f.name!r} is not simulated (its tasks would be served as "
                    "processor sharing): put another station before it on the branch")


def _forkjoin_rows(net: Network, index: dict) -> dict:
    """Routing rows of the branch stations (the same for every class): a
    task goes on to the next station of its branch, from the last one to the
    fork-join, where it joins."""
    rows: dict[int, list] = {}
    for f in forkjoins(net.stations):
        for br in f.branches:
            path = [index[x] for x in br] + [index[f.name]]
            for a, b in zip(path[:-1], path[1:]):
                rows[a] = [(b, 1.0)]
    return rows


def _routing_arrays(rows_all, C: int, K: int):
    """(RN, RD, RC): per class and row, the number of destinations, the
    destinations and their cumulative probabilities."""
    M = max(len(r) for rows in rows_all for r in rows.values())
    RN = np.zeros((C, K + 1), dtype=np.int64)
    RD = np.zeros((C, K + 1, M), dtype=np.int64)
    RC = np.zeros((C, K + 1, M))
    for ci, rows in enumerate(rows_all):
        for r, row in rows.items():
            row = [(d, p) for d, p in row if p > 0]
            RN[ci, r] = len(row)
            cum = 0.0
            for i, (d, p) in enumerate(row):
                cum += p
                RD[ci, r, i] = d
                RC[ci, r, i] = cum
            RC[ci, r, len(row) - 1] = 1.0
    return RN, RD, RC


def limiting_capacity(s) -> float:
    """Service capacity of station ``s`` with many jobs present, in
    servers: c for a queue, the last rate multiplier for a load-dependent
    station (beyond the list the last value holds, so a(n) -> a_last),
    infinity for a delay."""
    if isinstance(s, Delay):
        return math.inf
    if isinstance(s, LoadDependent):
        return float(s.rate_multipliers[-1])
    return float(s.servers)


def _check_open_stability(net: Network, rates, V, Sm) -> None:
    """Open load rho = sum_c lambda_c V_ck S_ck / a_k(inf) < 1 at every
    station, lambda_c the rate class c's visits are per (its chain's under
    class switching) (Lazowska et al. 1984, sec. 8.4; for a load-dependent station
    a_k(inf) is the limiting rate, the last multiplier: with (2, 0.5) and
    lambda S = 1 the queue grows without bound although a_max = 2).
    Checked only where no finite room can shed load."""
    if any(s.capacity is not None for s in net.stations):
        return
    C = len(net.classes)
    for k, s in enumerate(net.stations):
        if isinstance(s, Delay):
            continue
        load = sum(rates[ci] * V[ci, k] * Sm[ci, k] for ci in range(C))
        rho = load / limiting_capacity(s)
        if rho >= 1.0:
            extra = (f" (limiting rate multiplier {limiting_capacity(s):g})"
                     if isinstance(s, LoadDependent) else "")
            raise UnstableError(
                f"station {s.name!r}: the open classes alone load it to rho = {rho:.6g} "
                f">= 1{extra}; it has no steady state to simulate", station=s.name, rho=rho
            )
