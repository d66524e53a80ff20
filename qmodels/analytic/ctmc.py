"""Exact continuous-time Markov chain (CTMC) solution of small networks.

The chain is built state by state from the network itself, so it honours
what the product-form solvers cannot: finite capacity with blocking, loss of
open arrivals, token pools held across several stations (simultaneous
resource possession), FCFS stations whose service time differs by class.  It
is the exact ground truth against which the approximations and the
simulator are judged.

Semantics (shared with the simulator, :mod:`qmodels.sim`)
---------------------------------------------------------
* **Service**: exponential only (``distribution`` ``None`` or
  :class:`~qmodels.distributions.Exponential`); mean ``S[class, station]``.
* **Delay**: every job served at once at rate ``1/S``.
* **FCFS, c servers**: the first ``c`` jobs in arrival order are in service.
  The queue order is part of the state whenever more than one job type can
  be present and jobs can queue, so class-dependent service is exact (it is
  not product form).
* **PS, c servers**: each of ``n`` jobs is served at ``min(1, c/n)/S``.
* **Load-dependent**: with ``n`` present the station completes at
  ``a(n)/S`` split in proportion to the jobs of each type (BCMP, multi-class
  load-dependent PS).
* **Think time** ``Z`` of a closed class: an infinite-server stage, once per
  cycle: with ``routing``, just before the job enters the class's reference
  station; with ``visits``, one more place of the random routing below,
  with visit ratio 1.  A job that finishes thinking and finds its next
  station full waits there (blocked), holding nothing but its tokens.
* **Finite capacity, blocking after service** (Perros, *Queueing Networks
  with Blocking*, 1994, sec. 1.2): a job that completes service and is routed
  to a full station stays where it is, holding its server, until a place
  frees; blocked jobs enter in the order they were blocked.  A blocked job
  at a PS station keeps one server's share; the others share the rest.  An
  open arrival whose first station is full is lost.
* **Token pools**: a job takes a token of pool ``P`` before it enters
  ``P.acquire`` (unless it already holds one), waiting FIFO without holding
  a server (it has left its previous station); it gives the token back when
  it *leaves* ``P.release`` (a job blocked after service at ``release``
  still holds it).  A freed token goes to the head of the waiting line.
  Jobs waiting for a token are in no station: they appear in
  ``info["pools"][P]["waiting"]`` and in the class response time, not in
  any station's Q.
* **Routing**: a class given by ``routing`` follows it.  A class given by
  ``visits`` or ``demands`` is routed at random in proportion to its visit
  ratios (from any station, next station ``j`` with probability
  ``v_j / sum(v)``; an open class then leaves with probability
  ``1/sum(v)``); any Markov routing with the same visit ratios gives the
  same answer in product form, but not with blocking or pools, so classes
  that meet a binding capacity must give ``routing``, and classes that use
  a pool must give ``routing`` or use pools with a ``path``: each chain of
  held stations (:func:`qmodels.model.pool_chains`) is then one place of
  the random routing, traversed in order (as in the simulator).
* **Open classes**: the state space is truncated at ``open_limit`` open jobs
  in the network (arrivals beyond it are turned away); the probability of
  being at the bound, which is the fraction of arrivals turned away
  (PASTA), is ``info["truncation_mass"]``.  When capacities alone bound the
  open population no truncation is made and the mass is 0.

Restrictions (each raises :class:`~qmodels.errors.UnsupportedModelError`):
non-exponential service or inter-arrival times, zero service time at a
visited station, symbolic parameters, a pool's ``acquire`` station with a
finite capacity, two pools acquired at one station, a load-dependent
station that a job can be blocked at, more states than ``max_states``, and
blocking deadlocks.

References
----------
Stewart, W. J., *Introduction to the Numerical Solution of Markov Chains*,
Princeton, 1994, ch. 2 (direct methods: replace one balance equation by the
normalisation condition).
Bolch, G., Greiner, S., de Meer, H., Trivedi, K. S., *Queueing Networks and
Markov Chains*, 2nd ed., Wiley 2006, ch. 2-3 (CTMC, global balance
pi Q = 0, sum pi = 1).
Perros, H. G., *Queueing Networks with Blocking*, Oxford, 1994 (blocking
after service).
"""

from __future__ import annotations

import math
import warnings
from collections import deque

import numpy as np

from ..errors import InvalidValueError, NumericalWarning, UnsupportedModelError
from ..model.distributions import Exponential
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
from ..results import Result

__all__ = ["ctmc", "marginal", "DEFAULT_OPEN_LIMIT"]

#: Default bound on the number of open jobs in the network (truncation).
DEFAULT_OPEN_LIMIT = 40

_SINK = -1
_FREE = -1  # "dest" of an entry that is not blocked

# station kinds
_DELAY, _FCFS, _PS, _LD = 0, 1, 2, 3


# ---------------------------------------------------------------------------
# the compiled network
# ---------------------------------------------------------------------------

class _Spec:
    """Flat description of the network used by the state generator.

    Built in stages, each a method that checks one concern and fills its
    attributes: stations (kind, servers, capacity, multipliers), classes
    (populations, think times, rates, service rates), token pools, routing
    (per class: rows of next places, source row, reference station), and
    the open truncation.
    """

    def __init__(self, net: Network, open_limit):
        if net.is_symbolic:
            raise UnsupportedModelError(
                "ctmc is numeric; this network has sympy symbols: substitute values first"
            )
        self.net = net
        K, C = len(net.stations), len(net.classes)
        self.K, self.C = K, C
        self.THINK = K  # index of the think stage among the places
        self.V = np.asarray(net.visits, dtype=float)
        self.S = np.asarray(net.service_times, dtype=float)
        self._stations()
        self._classes()
        self._pools()
        binding = self._binding()
        self._routing(binding)
        self._check_ld_blocking(binding)
        self._truncation(open_limit)
        # -- job types: (class, mask of held pools) -------------------------
        self.types: list[tuple[int, int]] = []
        self.tindex: dict[tuple[int, int], int] = {}

    def _stations(self):
        """Kind, servers, capacity and rate multipliers of every station;
        only exponential service is accepted."""
        self.kind = []
        self.c = []
        self.cap = []
        self.mult: list[tuple[float, ...] | None] = []
        for s in self.net.stations:
            d = s.distribution
            if d is not None and not isinstance(d, Exponential):
                raise UnsupportedModelError(
                    f"station {s.name!r}: ctmc needs exponential service, got "
                    f"{type(d).__name__} (scv {d.scv:g}); use method='sim'"
                )
            if isinstance(s, Delay):
                self.kind.append(_DELAY)
                self.c.append(math.inf)
                self.mult.append(None)
            elif isinstance(s, Queue):
                self.kind.append(_FCFS if s.discipline == "fcfs" else _PS)
                self.c.append(int(s.servers))
                self.mult.append(None)
            elif isinstance(s, LoadDependent):
                self.kind.append(_LD)
                self.c.append(1)
                self.mult.append(tuple(float(a) for a in s.rate_multipliers))
            else:  # pragma: no cover - the model admits only these kinds
                raise UnsupportedModelError(f"station {s.name!r}: unknown kind {s.kind!r}")
            self.cap.append(math.inf if s.capacity is None else int(s.capacity))

    def _classes(self):
        """Populations, think times, arrival rates (Poisson only) and the
        service rates mu[r, k] = 1/S[r, k] at visited stations (positive
        service times only)."""
        net, V, S = self.net, self.V, self.S
        self.is_open = [isinstance(c, Open) for c in net.classes]
        self.pop = [int(c.population) if isinstance(c, Closed) else 0 for c in net.classes]
        self.Z = [float(c.think_time) if isinstance(c, Closed) else 0.0 for c in net.classes]
        self.lam = [float(c.arrival_rate) if isinstance(c, Open) else 0.0 for c in net.classes]
        for c in net.classes:
            if isinstance(c, Open) and c.interarrival is not None and not isinstance(
                c.interarrival, Exponential
            ):
                raise UnsupportedModelError(
                    f"class {c.name!r}: ctmc needs Poisson arrivals, got "
                    f"{type(c.interarrival).__name__} inter-arrival times; use method='sim'"
                )
        self.mu = np.zeros((self.C, self.K))
        for r, c in enumerate(net.classes):
            for k, s in enumerate(net.stations):
                if V[r, k] > 0:
                    if not S[r, k] > 0:
                        raise UnsupportedModelError(
                            f"class {c.name!r} at station {s.name!r}: service time "
                            f"{float(S[r, k])!r} is zero; ctmc needs positive service times"
                        )
                    self.mu[r, k] = 1.0 / S[r, k]

    def _pools(self):
        """Token pools: the pool acquired at each station, which classes use
        which pool, and per class the bit masks acquired / released at each
        place (one pool per acquire station, acquire stations unbounded)."""
        net, K, C = self.net, self.K, self.C
        names = net.station_names
        self.pools = net.pools
        P = len(net.pools)
        self.P = P
        self.tokens = [int(p.tokens) for p in net.pools]
        self.acq = [-1] * K
        self.uses = np.zeros((C, max(P, 1)), dtype=bool)
        self.relmask = [[0] * (K + 1) for _ in range(C)]  # place K: the think stage
        self.acqmask = [[0] * (K + 1) for _ in range(C)]
        for j, p in enumerate(net.pools):
            a, rl = names.index(p.acquire), names.index(p.release)
            if self.acq[a] >= 0:
                raise UnsupportedModelError(
                    f"station {p.acquire!r} acquires two pools "
                    f"({net.pools[self.acq[a]].name!r} and {p.name!r}); ctmc supports one "
                    "pool per acquire station"
                )
            if self.cap[a] != math.inf:
                raise UnsupportedModelError(
                    f"token pool {p.name!r}: its acquire station {p.acquire!r} has a finite "
                    f"capacity {self.cap[a]}; ctmc needs the acquire station unbounded "
                    "(let the pool be the limit)"
                )
            self.acq[a] = j
            for r, c in enumerate(net.classes):
                if p.classes is None or c.name in p.classes:
                    self.uses[r, j] = True
                    self.acqmask[r][a] |= 1 << j
                    self.relmask[r][rl] |= 1 << j

    def _binding(self) -> list[bool]:
        """Per station: can its finite capacity ever be reached?"""
        total_closed = sum(self.pop)
        any_open = any(self.is_open)
        return [
            self.cap[k] != math.inf and (any_open or self.cap[k] < total_closed)
            for k in range(self.K)
        ]

    def _routing(self, binding):
        """Per class: ``route[r][place]`` the list of (next place, p),
        ``source[r]`` the list of (first station, p) of an open arrival,
        ``ref[r]`` the reference station."""
        self.route = []
        self.source = []
        self.ref = []
        for r, c in enumerate(self.net.classes):
            visited = [k for k in range(self.K) if self.V[r, k] > 0]
            chains = self._check_needs_routing(r, c, visited, binding)
            if chains:
                # a chain of held stations is one unit of the random routing:
                # only its first station is drawn, the rest follow in order
                inner_st = {k for ch in chains for k in ch[1:]}
                visited = [k for k in visited if k not in inner_st]
            if c.routing is not None:
                rows, src, ref = self._explicit_route(r, c)
            elif isinstance(c, Closed):
                rows, src, ref = self._random_route_closed(r, c, visited)
            else:
                rows, src, ref = self._random_route_open(r, visited)
            for ch in chains:
                after = rows[ch[0]]
                for a, b in zip(ch[:-1], ch[1:]):
                    rows[a] = [(b, 1.0)]
                rows[ch[-1]] = after
            if isinstance(c, Closed) and c.population > 0 and not visited and self.Z[r] <= 0:
                raise InvalidValueError(
                    f"class {c.name!r}: no station visited and no think time, so the "
                    "throughput is unbounded"
                )
            self.route.append(rows)
            self.source.append(src)
            self.ref.append(ref)

    def _check_needs_routing(self, r, c, visited, binding) -> tuple:
        """A class that meets a binding capacity, or a pool without a path,
        must give explicit routing: there the order of visits changes the
        answer.  Returns the chains of held stations (station indices) a
        class given by visits follows in order (pools with a ``path``, as
        in the simulator: :func:`qmodels.model.pool_chains`)."""
        net, V = self.net, self.V
        names = net.station_names
        held = [p for j, p in enumerate(net.pools)
                if self.uses[r, j] and V[r, names.index(p.acquire)] > 0]
        meets_cap = [names[k] for k in visited if binding[k]]
        chains: tuple = ()
        uses_pool = bool(held)
        if c.routing is None and uses_pool and not meets_cap:
            try:
                chains = tuple(tuple(names.index(x) for x in ch) for ch in pool_chains(net, r))
            except UnsupportedModelError:
                chains = ()
            covered = {k for ch in chains for k in ch}
            uses_pool = not all(names.index(p.acquire) in covered for p in held)
        if c.routing is None and (uses_pool or meets_cap):
            why = (f"finite capacity at {meets_cap[0]!r}" if meets_cap
                   else "a token pool")
            raise UnsupportedModelError(
                f"class {c.name!r}: meets {why}, so the order of visits matters; "
                "give it explicit routing (routing={station: {station: p}}), or "
                "give the pools a path"
            )
        return chains

    def _explicit_route(self, r, c):
        """Rows of a class given by ``routing``; a think stage (Z > 0) sits
        just before the reference station."""
        K = self.K
        names = self.net.station_names
        rows: list[list[tuple[int, float]]] = [[] for _ in range(K + 1)]  # row K: think
        src = []
        first = None
        for a, row in c.routing.items():
            if a != SOURCE and first is None:
                first = a
            for b, p in row.items():
                p = float(p)
                if p <= 0:
                    continue
                d = _SINK if b == SINK else names.index(b)
                if a == SOURCE:
                    src.append((d, p))
                else:
                    rows[names.index(a)].append((d, p))
        ref = names.index(c.reference) if (
            isinstance(c, Closed) and c.reference is not None) else names.index(first)
        if self.Z[r] > 0:
            # the think stage sits just before the reference station
            for k in range(K):
                rows[k] = [(self.THINK if d == ref else d, p) for d, p in rows[k]]
            rows[self.THINK] = [(ref, 1.0)]
        return rows, src, ref

    def _random_route_closed(self, r, c, visited):
        """Random routing of a closed class in proportion to its visit
        ratios; the think stage is one more place, visited once per cycle."""
        V = self.V
        names = self.net.station_names
        rows: list[list[tuple[int, float]]] = [[] for _ in range(self.K + 1)]
        w = [(j, V[r, j]) for j in visited]
        if self.Z[r] > 0:
            w.append((self.THINK, 1.0))
        tw = sum(x for _, x in w)
        row = [(j, x / tw) for j, x in w]
        for k in visited:
            rows[k] = row
        if self.Z[r] > 0:
            rows[self.THINK] = row
        if c.reference is not None and V[r, names.index(c.reference)] > 0:
            ref = names.index(c.reference)
        else:
            ref = visited[0] if visited else 0
        return rows, [], ref

    def _random_route_open(self, r, visited):
        """Random routing of an open class: next station j with probability
        v_j / sum(v), departure with probability 1 / sum(v) (sum(v) >= 1),
        else at most one visit."""
        V = self.V
        rows: list[list[tuple[int, float]]] = [[] for _ in range(self.K + 1)]
        T = float(sum(V[r, k] for k in visited))
        if T >= 1:
            src = [(j, V[r, j] / T) for j in visited]
            for k in visited:
                rows[k] = [(j, (1 - 1 / T) * V[r, j] / T) for j in visited]
                rows[k].append((_SINK, 1 / T))
        else:
            src = [(j, V[r, j]) for j in visited] + [(_SINK, 1 - T)]
            for k in visited:
                rows[k] = [(_SINK, 1.0)]
        ref = visited[0] if visited else 0
        return rows, src, ref

    def _check_ld_blocking(self, binding):
        """A load-dependent station must never hold a blocked job."""
        names = self.net.station_names
        for r in range(self.C):
            for k in range(self.K):
                if self.kind[k] != _LD or not self.V[r, k] > 0:
                    continue
                for d, _ in self.route[r][k]:
                    if 0 <= d < self.K and binding[d]:
                        raise UnsupportedModelError(
                            f"station {names[k]!r} is load-dependent and jobs of class "
                            f"{self.net.class_names[r]!r} can be blocked there (next station "
                            f"{names[d]!r} has capacity {self.cap[d]}); ctmc does not "
                            "define blocking at a load-dependent station"
                        )

    def _truncation(self, open_limit):
        """Bound on the open jobs present, unless capacities already bound
        them (then no truncation)."""
        self.open_limit = math.inf
        self.truncating = False
        if not any(self.is_open):
            return
        K, C, V = self.K, self.C, self.V
        open_vis = [k for k in range(K) if any(
            V[r, k] > 0 for r in range(C) if self.is_open[r])]
        open_pools = any(
            self.uses[r, j] for r in range(C) if self.is_open[r] for j in range(self.P))
        natural = math.inf if open_pools else sum(self.cap[k] for k in open_vis)
        limit = DEFAULT_OPEN_LIMIT if open_limit is None else open_limit
        if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
            raise InvalidValueError(f"open_limit must be an integer >= 1, got {limit!r}")
        if limit < natural:
            self.open_limit = int(limit)
            self.truncating = True

    def type_of(self, r: int, mask: int) -> int:
        """Index of the job type (class r, held pools ``mask``), made on
        first use."""
        key = (r, mask)
        t = self.tindex.get(key)
        if t is None:
            t = len(self.types)
            self.types.append(key)
            self.tindex[key] = t
        return t

    def positions(self, starts):
        """Every (station, class, mask) a job can reach from ``starts``
        (a forward closure on the class routing, masks updated on acquire
        and release)."""
        seen = set(starts)
        stack = list(starts)
        while stack:
            k, r, m = stack.pop()
            m2 = m & ~self.relmask[r][k]
            for d, _ in self.route[r][k]:
                if d < 0:
                    continue
                nxt = (d, r, m2 | self.acqmask[r][d])
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen


# ---------------------------------------------------------------------------
# the size of the state space, before building it
# ---------------------------------------------------------------------------

def _terminal_component(route_r, start) -> int:
    """Size of the largest terminal strongly connected set of places (no
    edge leaving it) reachable from ``start`` in one class's routing graph
    (``route_r[place]`` lists (next place, p); negative places are the sink)."""
    succ = {}
    stack, seen = [start], {start}
    while stack:
        u = stack.pop()
        succ[u] = [d for d, _ in route_r[u] if d >= 0]
        for d in succ[u]:
            if d not in seen:
                seen.add(d)
                stack.append(d)
    reach = {}  # place -> places reachable from it (itself included)
    for u in seen:
        got, todo = {u}, [u]
        while todo:
            for d in succ[todo.pop()]:
                if d not in got:
                    got.add(d)
                    todo.append(d)
        reach[u] = got
    # u is in a terminal component iff everything it reaches reaches it back
    terminal = [u for u in seen if all(u in reach[d] for d in reach[u])]
    return max((len(reach[u]) for u in terminal), default=1)


def _placement_lower_bound(spec: _Spec) -> int | None:
    """A lower bound on the number of reachable states, counted without
    building any, or None where no bound is proven.

    Counts the ways to place each closed class's N_r jobs over the m_r
    places (stations and think stage) of the largest terminal strongly
    connected set of its routing reachable from where its jobs start:
    prod_r C(N_r + m_r - 1, m_r - 1) (compositions of N_r into m_r parts).
    Every such placement is reachable when no closed job can be blocked
    (each capacity at least the closed population) or wait for a token (no
    closed class uses a pool): from the start, without open arrivals, every
    job can walk into that set and, service rates being positive, any job
    can move to any place of the set.  Distinct placements are distinct
    states (queue order, blocking and open jobs only split them further),
    so the count is a lower bound and a refusal on it never refuses a chain
    that would fit.  Returns None where that argument does not hold
    (a binding capacity or a pool on a closed class).
    """
    total = sum(spec.pop)
    if any(cap < total for cap in spec.cap):
        return None
    bound = 1
    for r in range(spec.C):
        if spec.is_open[r] or spec.pop[r] == 0:
            continue
        if any(spec.acqmask[r]):
            return None
        start = spec.THINK if spec.Z[r] > 0 else spec.ref[r]
        m = _terminal_component(spec.route[r], start)
        bound *= math.comb(spec.pop[r] + m - 1, m - 1)
    return bound


def _big(n: int) -> str:
    """An integer in full up to 15 digits, else to 3 digits (1.23e+26)."""
    if n < 10**15:
        return str(n)
    return f"{n:.3g}" if n < 10**300 else f"10^{len(str(n)) - 1}"


def _check_size(spec: _Spec, max_states: int) -> None:
    """Refuse, before building a single state, a chain proven to have more
    than ``max_states`` states (see :func:`_placement_lower_bound`)."""
    bound = _placement_lower_bound(spec)
    if bound is not None and bound > max_states:
        pops = ", ".join(f"{c.name}={n}" for c, n, o in
                         zip(spec.net.classes, spec.pop, spec.is_open, strict=True) if not o)
        raise UnsupportedModelError(
            f"the state space has at least {_big(bound)} states (the ways to place the closed "
            f"jobs {pops} over the places they cycle through, counted before building), "
            f"more than max_states = {max_states} states; reduce the populations, "
            "capacities or open_limit, or raise max_states"
        )


# ---------------------------------------------------------------------------
# state generator
# ---------------------------------------------------------------------------

class _Chain:
    """Builds the reachable state space and its generator.

    A state is ``(places, queues, blocked, free, nopen)``:
    ``places[k]`` the content of station k (an ordered tuple of entries
    ``(type, dest)`` for an order-keeping FCFS station, else a sorted tuple
    of ``(type, dest, count)``), ``places[K]`` the think stage (counts);
    ``dest`` is -1 for a job in service or waiting, else the station it is
    blocked on.  ``queues[j]`` the FIFO of ``(type, dest)`` waiting for a
    token of pool j; ``blocked[d]`` the FIFO of ``(place, type)`` blocked on
    station d; ``free[j]`` free tokens; ``nopen`` open jobs present.
    """

    def __init__(self, spec: _Spec):
        self.s = spec

    # -- working copies ----------------------------------------------------
    def thaw(self, st):
        places, queues, blocked, free, nopen = st
        w = []
        for k, p in enumerate(places):
            if self.ordered[k]:
                w.append(list(p))
            else:
                w.append({(t, d): n for t, d, n in p})
        return [w, [list(q) for q in queues], [list(b) for b in blocked], list(free), nopen]

    def freeze(self, w):
        places = []
        for k, p in enumerate(w[0]):
            if self.ordered[k]:
                places.append(tuple(p))
            else:
                places.append(tuple(sorted((t, d, n) for (t, d), n in p.items() if n > 0)))
        return (tuple(places), tuple(tuple(q) for q in w[1]), tuple(tuple(b) for b in w[2]),
                tuple(w[3]), w[4])

    @staticmethod
    def copy(w):
        return [[p.copy() for p in w[0]], [q.copy() for q in w[1]], [b.copy() for b in w[2]],
                w[3].copy(), w[4]]

    # -- elementary moves --------------------------------------------------
    def count(self, w, k):
        p = w[0][k]
        return len(p) if self.ordered[k] else sum(p.values())

    def add(self, w, k, t, d=_FREE):
        p = w[0][k]
        if self.ordered[k]:
            p.append((t, d))
        else:
            p[(t, d)] = p.get((t, d), 0) + 1

    def remove(self, w, k, t, d, pos=None):
        p = w[0][k]
        if self.ordered[k]:
            if pos is None:
                pos = p.index((t, d))
            del p[pos]
        else:
            n = p[(t, d)] - 1
            if n:
                p[(t, d)] = n
            else:
                del p[(t, d)]

    def release(self, w, j):
        """A token of pool j is given back: to the head of the line, else free."""
        q = w[1][j]
        if q:
            t, d = q.pop(0)
            r, m = self.s.types[t]
            # the acquire station is unbounded (checked), so it enters at once
            self.add(w, d, self.s.type_of(r, m | (1 << j)))
        else:
            w[3][j] += 1

    def leave(self, w, place, t, d, pos=None):
        """Take job (t, d) out of ``place``; give back the tokens released
        there; return its class and mask after the release."""
        s = self.s
        self.remove(w, place, t, d, pos)
        r, m = s.types[t]
        if place < s.K:
            rel = m & s.relmask[r][place]
            if rel:
                m &= ~rel
                for j in range(s.P):
                    if rel >> j & 1:
                        self.release(w, j)
        return r, m

    def after_leave(self, w, place):
        """A place freed at ``place``: let the first job blocked on it in."""
        s = self.s
        if place >= s.K or s.cap[place] == math.inf:
            return
        b = w[2][place]
        if not b or self.count(w, place) >= s.cap[place]:
            return
        src, t = b.pop(0)
        r, m = self.leave(w, src, t, place)
        self.add(w, place, s.type_of(r, m))
        self.after_leave(w, src)

    def enter(self, w, r, m, d):
        """A job of class r with mask m (already out of its place) goes to
        station d: through a token line if it needs a token there.  The
        caller has checked the room at d."""
        s = self.s
        need = s.acqmask[r][d] & ~m
        if need:
            j = s.acq[d]
            if w[3][j] > 0:
                w[3][j] -= 1
                self.add(w, d, s.type_of(r, m | need))
            else:
                w[1][j].append((s.type_of(r, m), d))
        else:
            self.add(w, d, s.type_of(r, m))

    def has_room(self, w, d):
        return self.count(w, d) < self.s.cap[d]

    def complete(self, w, place, t, pos, d):
        """The job (t, free) at ``place`` (position ``pos`` if ordered)
        completes and is routed to ``d``; ``w`` is modified."""
        s = self.s
        r, _ = s.types[t]
        if d == _SINK:
            _, m = self.leave(w, place, t, _FREE, pos)
            for j in range(s.P):  # tokens still held go back at the end of the route
                if m >> j & 1:
                    self.release(w, j)
            w[4] -= 1
            self.after_leave(w, place)
            return
        if d == s.THINK:
            r, m = self.leave(w, place, t, _FREE, pos)
            self.add(w, s.THINK, s.type_of(r, m))
            self.after_leave(w, place)
            return
        if d == place or s.acqmask[r][d] or self.has_room(w, d):
            # (an acquire station is unbounded; a self-loop frees its own place)
            r, m = self.leave(w, place, t, _FREE, pos)
            self.enter(w, r, m, d)
            self.after_leave(w, place)
            return
        # blocked after service: stays, holding its server
        p = w[0][place]
        if self.ordered[place]:
            p[pos] = (t, d)
        else:
            self.remove(w, place, t, _FREE)
            p[(t, d)] = p.get((t, d), 0) + 1
        w[2][d].append((place, t))

    # -- rates -------------------------------------------------------------
    def completions(self, st):
        """List of (place, type, pos, rate) for every job that can complete
        service in state ``st``."""
        s = self.s
        out = []
        places = st[0]
        for k in range(s.K + 1):
            p = places[k]
            if not p:
                continue
            if k == s.THINK:
                self._think_completions(p, out)
            elif self.ordered[k]:
                self._ordered_completions(k, p, out)
            else:
                self._counted_completions(k, p, out)
        return out

    def _think_completions(self, p, out):
        """Think stage: each of the n thinking jobs ends at rate 1/Z."""
        s = self.s
        for t, d, n in p:
            if d == _FREE:
                out.append((s.THINK, t, None, n / s.Z[s.types[t][0]]))

    def _ordered_completions(self, k, p, out):
        """Order-keeping FCFS station: the first c jobs are in service."""
        s = self.s
        for pos in range(min(len(p), s.c[k])):
            t, d = p[pos]
            if d == _FREE:
                out.append((k, t, pos, s.mu[s.types[t][0], k]))

    def _counted_completions(self, k, p, out):
        """A station kept as counts per (type, dest): delay, FCFS with one
        job type or never queueing, PS (blocked jobs keep one server each)
        and load-dependent (never blocked there)."""
        s = self.s
        kind = s.kind[k]
        n = sum(x[2] for x in p)
        b = sum(x[2] for x in p if x[1] != _FREE)
        if kind == _DELAY:
            for t, d, m in p:
                if d == _FREE:
                    out.append((k, t, None, m * s.mu[s.types[t][0], k]))
        elif kind == _FCFS:  # one job type, or never queueing
            active = min(n, s.c[k]) - b
            if active > 0:
                free = n - b
                for t, d, m in p:
                    if d == _FREE:
                        out.append((k, t, None, active * m / free * s.mu[s.types[t][0], k]))
        elif kind == _PS:
            c = s.c[k]
            free = n - b
            share = (min(1.0, (c - b) / free) if c > b else 0.0) if free > 0 else 0.0
            if share > 0:
                for t, d, m in p:
                    if d == _FREE:
                        out.append((k, t, None, m * share * s.mu[s.types[t][0], k]))
        else:  # load-dependent (never blocked there)
            mult = s.mult[k]
            a = mult[min(n, len(mult)) - 1]
            for t, _, m in p:
                out.append((k, t, None, a * m / n * s.mu[s.types[t][0], k]))

    # -- initial state -----------------------------------------------------
    def initial(self):
        """Place every closed job: in the think stage, else at the class's
        reference station (or a token line before it), else at the first
        station of its route with room."""
        s = self.s
        jobs = []  # (place, r, mask) or ("q", r, dest)
        room = list(s.cap)
        free = list(s.tokens)
        for r in range(s.C):
            if s.is_open[r]:
                continue
            order = [s.ref[r]] + [k for k in range(s.K) if s.V[r, k] > 0 and k != s.ref[r]]
            for _ in range(s.pop[r]):
                if s.Z[r] > 0:
                    jobs.append((s.THINK, r, 0))
                    continue
                for d in order:
                    need = s.acqmask[r][d]
                    if need:
                        j = s.acq[d]
                        if free[j] > 0:
                            free[j] -= 1
                            jobs.append((d, r, need))
                        else:
                            jobs.append(("q", r, d))
                        break
                    if room[d] > 0:
                        room[d] -= 1
                        jobs.append((d, r, 0))
                        break
                else:
                    raise UnsupportedModelError(
                        f"class {s.net.class_names[r]!r}: population {s.pop[r]} does not fit "
                        "in the room of the stations it visits"
                    )
        return jobs, free

    def setup(self):
        s = self.s
        jobs, free = self.initial()
        starts = set()
        for place, r, m in jobs:
            if place == "q":
                starts.add((m, r, s.acqmask[r][m]))
            elif place == s.THINK:
                starts.add((s.THINK, r, 0))
            else:
                starts.add((place, r, m))
        for r in range(s.C):
            if s.is_open[r]:
                for d, _ in s.source[r]:
                    if d >= 0:
                        starts.add((d, r, s.acqmask[r][d]))
        pos = s.positions(starts)
        types_at = [set() for _ in range(s.K)]
        for k, r, m in pos:
            if k < s.K:
                types_at[k].add((r, m))
        # maximum jobs that can be present anywhere
        most = sum(s.pop) if not any(s.is_open) else math.inf
        self.ordered = []
        for k in range(s.K):
            can_queue = s.c[k] < min(s.cap[k], most)
            self.ordered.append(s.kind[k] == _FCFS and can_queue and len(types_at[k]) > 1)
        self.ordered.append(False)  # think stage
        w = [[[] if o else {} for o in self.ordered], [[] for _ in range(s.P)],
             [[] for _ in range(s.K)], list(free), 0]
        for place, r, m in jobs:
            if place == "q":
                w[1][s.acq[m]].append((s.type_of(r, 0), m))
            else:
                self.add(w, place, s.type_of(r, m))
        return self.freeze(w)

    # -- breadth-first construction -----------------------------------------
    def build(self, max_states):
        s = self.s
        start = self.setup()
        index = {start: 0}
        states = [start]
        rows, cols, vals = [], [], []
        todo = deque([start])
        arrivals = [(r, d, s.lam[r] * p) for r in range(s.C) if s.is_open[r]
                    for d, p in s.source[r]]
        self.rates = []  # per state: completions list (for throughputs)
        self.lost = []   # per state: per class rate of arrivals lost to full stations
        self.trunc = []  # per state: per class rate of arrivals turned away by truncation

        def target(w):
            key = self.freeze(w)
            j = index.get(key)
            if j is None:
                j = len(states)
                if j >= max_states:
                    raise UnsupportedModelError(
                        f"the state space has more than max_states = {max_states} states "
                        f"(reached {j + 1} and still growing); reduce the populations, "
                        "capacities or open_limit, or raise max_states"
                    )
                index[key] = j
                states.append(key)
                todo.append(key)
            return j

        i = 0
        while todo:
            st = todo.popleft()
            i = index[st]
            w0 = self.thaw(st)
            out: dict[int, float] = {}
            comps = self.completions(st)
            self.rates.append(comps)
            for place, t, pos, rate in comps:
                r = s.types[t][0]
                dests = s.route[r][place]
                for d, p in dests:
                    w = self.copy(w0)
                    self.complete(w, place, t, pos, d)
                    j = target(w)
                    if j != i:
                        out[j] = out.get(j, 0.0) + rate * p
            lost = np.zeros(s.C)
            trunc = np.zeros(s.C)
            for r, d, rate in arrivals:
                if w0[4] >= s.open_limit:
                    trunc[r] += rate
                    continue
                if d == _SINK:
                    continue  # passes through without visiting a station
                if not s.acqmask[r][d] and not self.has_room(w0, d):
                    lost[r] += rate
                    continue
                w = self.copy(w0)
                w[4] += 1
                self.enter(w, r, 0, d)
                j = target(w)
                out[j] = out.get(j, 0.0) + rate
            self.lost.append(lost)
            self.trunc.append(trunc)
            for j, v in out.items():
                rows.append(i)
                cols.append(j)
                vals.append(v)
        self.states = states
        return states, np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), \
            np.asarray(vals, dtype=float)


# ---------------------------------------------------------------------------
# solving pi Q = 0
# ---------------------------------------------------------------------------

def _stationary(n, rows, cols, vals, names_of_state):
    """Stationary vector of the generator given by its off-diagonal rates.

    The recurrent class must be unique; transient states get probability 0.
    Direct method (Stewart 1994, sec. 2.3): replace one equation of
    Q^T pi = 0 by sum(pi) = 1 and solve the sparse system by LU (SuperLU).
    Returns pi and the residual max |pi Q|.
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components
    from scipy.sparse.linalg import spsolve

    A = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    out = np.asarray(A.sum(axis=1)).ravel()
    dead = np.flatnonzero(out == 0)
    if n > 1 and dead.size:
        raise UnsupportedModelError(
            "the chain has a state with no way out (a blocking deadlock): "
            f"{names_of_state(int(dead[0]))}; raise capacities or change the routing"
        )
    ncomp, labels = connected_components(A, directed=True, connection="strong")
    keep = np.arange(n)
    if ncomp > 1:
        # closed components: no rate leaving them
        leaving = np.zeros(ncomp, dtype=bool)
        coo = A.tocoo()
        cross = labels[coo.row] != labels[coo.col]
        leaving[labels[coo.row[cross]]] = True
        closed = np.flatnonzero(~leaving)
        if len(closed) != 1:
            raise UnsupportedModelError(
                f"the chain has {len(closed)} closed classes of states (for example "
                f"{names_of_state(int(np.flatnonzero(labels == closed[0])[0]))}); "
                "its long-run behaviour depends on the start: a blocking deadlock?"
            )
        keep = np.flatnonzero(labels == closed[0])
        if keep.size == 1 and n > 1:
            raise UnsupportedModelError(
                "the chain ends in a blocking deadlock: "
                f"{names_of_state(int(keep[0]))}; raise capacities or change the routing"
            )
    B = A[keep][:, keep].tocsr()
    m = B.shape[0]
    outB = np.asarray(B.sum(axis=1)).ravel()
    Q = (B - sp.diags(outB)).tocsc()
    if m == 1:
        pi_k = np.ones(1)
    else:
        M = Q.T.tolil()
        M[m - 1, :] = np.ones(m)
        rhs = np.zeros(m)
        rhs[m - 1] = 1.0
        pi_k = spsolve(M.tocsc(), rhs)
        if not np.all(np.isfinite(pi_k)):
            raise UnsupportedModelError("the balance equations are singular (reducible chain?)")
        pi_k = np.where(pi_k < 0, 0.0, pi_k)  # round-off only (checked by the residual)
        pi_k /= pi_k.sum()
    resid = float(np.max(np.abs(Q.T @ pi_k))) if m > 1 else 0.0
    scale = float(outB.max()) if m > 1 else 1.0
    if resid > 1e-8 * max(scale, 1.0):
        warnings.warn(
            f"ctmc: residual max|pi Q| = {resid:.3g} is large for rates up to {scale:.3g}",
            NumericalWarning,
            stacklevel=3,
        )
    pi = np.zeros(n)
    pi[keep] = pi_k
    return pi, resid


# ---------------------------------------------------------------------------
# public solver
# ---------------------------------------------------------------------------

def ctmc(net: Network, *, max_states: int = 200_000, open_limit: int | None = None) -> Result:
    """Exact solution of a small network as a continuous-time Markov chain.

    Parameters
    ----------
    net : Network
        Exponential service; delay, FCFS and PS (c servers), load-dependent
        stations; closed and open classes; finite capacities (blocking after
        service, loss of open arrivals); token pools.  See the module
        docstring for the exact semantics and restrictions.
    max_states : int
        Largest state space to build; a larger one raises
        :class:`~qmodels.errors.UnsupportedModelError` with the count.
        Where no closed job can be blocked or wait for a token, a lower
        bound on the count (the placements of the closed jobs) is checked
        first, so a far too large chain is refused at once, before any
        state is built.
    open_limit : int, optional
        Bound on the number of open jobs present (default
        :data:`DEFAULT_OPEN_LIMIT` = 40) when capacities do not already
        bound them; the probability of being at the bound is
        ``info["truncation_mass"]`` (a :class:`NumericalWarning` is issued
        when it exceeds 1e-6).

    Returns
    -------
    Result
        ``method="ctmc"``.  Station U per server is the fraction of time a
        server is *held* (serving or blocked after service; without
        blocking this is X S / c; delay: mean number present), station R
        per visit (Q/X, blocking at the station included, token waits
        excluded), class X in cycles (closed)
        or accepted jobs (open) per second, class R excluding think time
        (N/X - Z for closed classes, Little's law with token waits for open
        ones).  ``info`` holds ``states``, ``residual`` (max |pi Q|),
        ``truncation_mass``, ``loss`` (class -> fraction of arrivals lost
        at a full station), ``blocked`` (station -> mean number of jobs
        blocked there), ``pools`` (pool -> mean ``waiting`` jobs, mean
        ``held`` tokens, ``utilization`` = held/tokens) and ``marginals``
        (station -> P(n jobs present), n = 0, 1, ...).

    Notes
    -----
    The reachable states are enumerated breadth first from one valid
    placement of the closed jobs; the off-diagonal rates follow from the
    semantics in the module docstring.  The stationary vector solves
    pi Q = 0, sum(pi) = 1 with one balance equation replaced by the
    normalisation and a sparse LU factorisation (Stewart 1994, sec. 2.3;
    Bolch et al. 2006, sec. 3.1).  States outside the unique closed
    communicating class (transients of the initial placement) get
    probability 0.  Figures are expectations under pi: Q_rk = E[n_rk],
    X_rk = E[completion rate of r at k] (every completion eventually
    departs), U_k = E[servers held at k] / c_k (serving or blocked; equal to
    X_k S_k / c_k when nothing can block; delay: E[n_k]; load-dependent:
    1 - P(empty)), as the simulator measures it.

    References
    ----------
    Stewart, *Introduction to the Numerical Solution of Markov Chains*,
    1994, ch. 2.  Bolch et al., *Queueing Networks and Markov Chains*, 2nd
    ed. 2006, ch. 2-3.  Perros, *Queueing Networks with Blocking*, 1994.

    Examples
    --------
    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
    ...                  [qm.Closed("tx", 3, visits={"cpu": 1, "disk": 1})])
    >>> round(ctmc(net).X["tx"], 4)   # equals exact MVA
    11.1495
    """
    if isinstance(max_states, bool) or not isinstance(max_states, (int, np.integer)) \
            or max_states < 1:
        raise InvalidValueError(f"max_states must be an integer >= 1, got {max_states!r}")
    res = _solve(net, max_states, open_limit)
    return _unvisited(net, res, max_states, open_limit)


def _unvisited(net: Network, res: Result, max_states, open_limit) -> Result:
    """Station R per visit of a class at a queue it never visits: the
    arrival-theorem value, the mean time a class-c job would spend there
    on arrival, S_ck sum_{j>=1} j / a(j) P(n_k = j - 1), with the marginal of
    the network with one class-c job less (closed class with N_c >= 1;
    Reiser & Lavenberg 1980) or of the network itself (open class, PASTA;
    a closed class of population 0).  This is what exact MVA, convolution,
    Schweitzer and Linearizer report; in a network that is not product form
    (blocking, token pools) it is a convention, not an observation."""
    import dataclasses

    V = np.asarray(net.visits, dtype=float)
    S = np.asarray(net.service_times, dtype=float)
    R = np.array(res.station_response_time, dtype=float)
    changed = False
    for ci, c in enumerate(net.classes):
        ks = [k for k, st in enumerate(net.stations)
              if V[ci, k] == 0 and not isinstance(st, Delay) and S[ci, k] > 0]
        if not ks:
            continue
        base = res
        if isinstance(c, Closed) and int(c.population) >= 1:
            base = _solve(net.with_population(int(c.population) - 1, c.name), max_states,
                          open_limit)
        for k in ks:
            st = net.stations[k]
            p = np.asarray(base.info["marginals"][st.name], dtype=float)
            j = np.arange(1, len(p) + 1)
            a = np.array([float(st.rate_multiplier(int(x))) for x in j])
            R[ci, k] = S[ci, k] * float(np.sum(j / a * p))
            changed = True
    if not changed:
        return res
    R.flags.writeable = False
    return dataclasses.replace(res, station_response_time=R)


def _solve(net: Network, max_states, open_limit) -> Result:
    spec = _Spec(net, open_limit)
    _check_size(spec, int(max_states))
    chain = _Chain(spec)
    states, rows, cols, vals = chain.build(int(max_states))
    n = len(states)

    def describe(i):
        return _describe(spec, chain, states[i])

    pi, resid = _stationary(n, rows, cols, vals, describe)
    return _figures(net, spec, chain, states, pi, resid)


def _describe(spec, chain, st) -> str:
    names = spec.net.station_names
    cn = spec.net.class_names
    parts = []
    for k, p in enumerate(st[0][: spec.K]):
        ents = p if chain.ordered[k] else [(t, d) for t, d, n in p for _ in range(n)]
        if ents:
            txt = ",".join(cn[spec.types[t][0]] + (f"->{names[d]}" if d >= 0 else "")
                           for t, d in ents)
            parts.append(f"{names[k]}[{txt}]")
    return "{" + " ".join(parts) + "}"


def _held_servers(spec, chain, k, pk, n, p, out):
    """Add p x (servers held by each class at station k) to ``out``."""
    kind = spec.kind[k]
    types = spec.types
    if chain.ordered[k]:
        for t, _ in pk[: spec.c[k]]:
            out[types[t][0], k] += p
        return
    if kind in (_DELAY, _LD):
        for t, _, m in pk:
            out[types[t][0], k] += p * m
        return
    c = spec.c[k]
    if kind == _FCFS:  # one job type, or never queueing
        for t, _, m in pk:
            out[types[t][0], k] += p * m * min(n, c) / n
        return
    b = sum(m for _, d, m in pk if d != _FREE)  # PS
    free = n - b
    share = min(1.0, (c - b) / free) if free and c > b else 0.0
    for t, d, m in pk:
        out[types[t][0], k] += p * m * (1.0 if d != _FREE else share)


class _Sums:
    """Expectations under pi accumulated state by state (see
    :func:`_expectations`)."""

    def __init__(self, spec):
        K, C = spec.K, spec.C
        self.Q = np.zeros((C, K))
        self.X = np.zeros((C, K))
        self.blocked = np.zeros(K)
        self.held_srv = np.zeros((C, K))  # servers held (serving or blocked), per class
        self.p_empty = np.zeros(K)
        self.waiting = np.zeros(max(spec.P, 1))
        self.waiting_c = np.zeros(C)
        self.held = np.zeros(max(spec.P, 1))
        self.lost = np.zeros(C)
        self.trunc = np.zeros(C)
        self.trunc_mass = 0.0
        self.marg: list[dict[int, float]] = [dict() for _ in range(K)]


def _add_places(spec, chain, places, p, acc):
    """Add state probability ``p`` x (jobs, blocked jobs, servers held,
    marginal counts) of every station of the state's ``places``."""
    for k in range(spec.K):
        pk = places[k]
        ents = ((t, d, 1) for t, d in pk) if chain.ordered[k] else pk
        tot = 0
        for t, d, m in ents:
            acc.Q[spec.types[t][0], k] += p * m
            tot += m
            if d != _FREE:
                acc.blocked[k] += p * m
        if tot:
            _held_servers(spec, chain, k, pk, tot, p, acc.held_srv)
        acc.marg[k][tot] = acc.marg[k].get(tot, 0.0) + p
        if tot == 0:
            acc.p_empty[k] += p


def _expectations(spec, chain, states, pi) -> _Sums:
    """E[.] under pi of queue lengths, completion rates, blocked jobs,
    servers held, token waits and holdings, lost and turned-away arrivals
    and the marginal distributions, in one pass over the states."""
    acc = _Sums(spec)
    K = spec.K
    for i, st in enumerate(states):
        p = pi[i]
        _add_places(spec, chain, st[0], p, acc)
        for place, t, _, rate in chain.rates[i]:
            if place < K:
                acc.X[spec.types[t][0], place] += p * rate
        for j in range(spec.P):
            q = st[1][j]
            acc.waiting[j] += p * len(q)
            for t, _ in q:
                acc.waiting_c[spec.types[t][0]] += p
            acc.held[j] += p * (spec.tokens[j] - st[3][j])
        acc.lost += p * chain.lost[i]
        acc.trunc += p * chain.trunc[i]
        if spec.truncating and st[4] >= spec.open_limit:
            acc.trunc_mass += p
    return acc


def _station_utilization(spec, acc) -> np.ndarray:
    """U per server: servers held / c (delay and load-dependent: c = 1);
    a load-dependent station is busy with probability 1 - P(empty), split
    in proportion to the classes' queue lengths."""
    K, C = spec.K, spec.C
    servers = np.array([1.0 if spec.kind[k] in (_DELAY, _LD) else float(spec.c[k])
                        for k in range(K)])
    Ust = acc.held_srv / servers[None, :]
    for k in range(K):
        if spec.kind[k] == _LD:
            tot_q = acc.Q[:, k].sum()
            share = acc.Q[:, k] / tot_q if tot_q > 0 else np.zeros(C)
            Ust[:, k] = (1.0 - acc.p_empty[k]) * share
    return Ust


def _class_figures(net, spec, acc):
    """Class throughput (cycles, or accepted jobs, per second) and response
    time: N/X - Z for a closed class, Little's law with token waits for an
    open one; with no jobs or no throughput the no-contention value."""
    C = spec.C
    S = spec.S
    Xc = np.zeros(C)
    Rc = np.zeros(C)
    for r, c in enumerate(net.classes):
        v = spec.V[r].sum()
        Xc[r] = acc.X[r].sum() / v if v > 0 else 0.0
        if isinstance(c, Closed):
            if spec.pop[r] == 0:
                Rc[r] = float(np.sum(spec.V[r] * S[r]))
            elif Xc[r] > 0:
                Rc[r] = max(spec.pop[r] / Xc[r] - spec.Z[r], 0.0)
            else:
                Rc[r] = math.inf
        else:
            Rc[r] = (acc.Q[r].sum() + acc.waiting_c[r]) / Xc[r] if Xc[r] > 0 else float(
                np.sum(spec.V[r] * S[r]))
    return Xc, Rc


def _marginal_arrays(net, acc) -> dict:
    """Station -> read-only array P(n jobs present), n = 0..max."""
    marginals = {}
    for k, name in enumerate(net.station_names):
        top = max(acc.marg[k]) if acc.marg[k] else 0
        arr = np.zeros(top + 1)
        for j, v in acc.marg[k].items():
            arr[j] = v
        arr.flags.writeable = False
        marginals[name] = arr
    return marginals


def _info(net, spec, states, resid, acc) -> dict:
    """The ``info`` mapping of a ctmc result (see :func:`ctmc`)."""
    names = net.station_names
    return {
        "states": len(states),
        "residual": resid,
        "truncation_mass": acc.trunc_mass,
        "open_limit": spec.open_limit if spec.truncating else None,
        "loss": {c.name: (acc.lost[r] / spec.lam[r] if spec.lam[r] > 0 else 0.0)
                 for r, c in enumerate(net.classes) if spec.is_open[r]},
        "blocked": {names[k]: float(acc.blocked[k]) for k in range(spec.K)},
        "pools": {p.name: {"waiting": float(acc.waiting[j]), "held": float(acc.held[j]),
                           "utilization": float(acc.held[j] / spec.tokens[j])}
                  for j, p in enumerate(spec.pools)},
        "marginals": _marginal_arrays(net, acc),
    }


def _notes(net, spec, trunc_mass) -> list[str]:
    """Notes of a ctmc result; warns when the truncation holds more than
    1e-6 of the probability."""
    notes = []
    if spec.truncating:
        notes.append(
            f"open jobs truncated at {spec.open_limit} (probability at the bound "
            f"{trunc_mass:.3g})"
        )
        if trunc_mass > 1e-6:
            warnings.warn(
                f"ctmc: open population truncated at {spec.open_limit} holds probability "
                f"{trunc_mass:.3g}; raise open_limit for an exact answer",
                NumericalWarning,
                stacklevel=4,
            )
    if any(c.routing is None for c in net.classes) and len(net.stations) > 1:
        notes.append("classes given by visits are routed at random in proportion to them")
    return notes


def _figures(net, spec, chain, states, pi, resid) -> Result:
    """The Result of a solved chain: expectations under pi (see the Notes
    of :func:`ctmc`)."""
    acc = _expectations(spec, chain, states, pi)
    Ust = _station_utilization(spec, acc)
    X, Q = acc.X, acc.Q
    with np.errstate(divide="ignore", invalid="ignore"):
        Rst = np.where(X > 0, Q / np.where(X > 0, X, 1.0), spec.S)
    Xc, Rc = _class_figures(net, spec, acc)
    info = _info(net, spec, states, resid, acc)
    notes = _notes(net, spec, acc.trunc_mass)
    return Result(
        method="ctmc",
        network=net,
        class_throughput=Xc,
        class_response_time=Rc,
        station_throughput=X,
        station_queue_length=Q,
        station_response_time=Rst,
        station_utilization=Ust,
        notes=tuple(notes),
        info=info,
    )


def marginal(result: Result, station: str) -> np.ndarray:
    """P(n jobs present at ``station``), n = 0, 1, ..., from a
    :func:`ctmc` result (jobs blocked after service there included).

    Raises :class:`~qmodels.errors.UnsupportedModelError` for a result of
    another method and :class:`~qmodels.errors.UnknownNameError` for an
    unknown station.
    """
    if result.method != "ctmc" or "marginals" not in result.info:
        raise UnsupportedModelError(
            f"marginal distributions come from a ctmc result, got method {result.method!r}"
        )
    result.network.station(station)  # raises UnknownNameError
    return result.info["marginals"][station]


