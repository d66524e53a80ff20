"""The flat description of a network that the exact CTMC
(:mod:`qmodels.analytic.ctmc`) is built from: :class:`_Spec` compiles the
stations (kind, servers, capacity, rate multipliers), classes, token pools,
per-class routing (explicit, or random in proportion to the visit ratios;
an explicit entry may send the job on as another class: class switching,
:mod:`qmodels.model.chains`) and the open truncation, refusing with a typed
error what the chain cannot model; :func:`_check_size` counts the state
space before any state is built and refuses one larger than ``max_states``.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidValueError, ProblemTooLargeError, UnsupportedModelError
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
from ..model.stations import PRIORITY_DISCIPLINES
from .phase_type import DEFAULT_MAX_PHASES, Coxian, coxian_of, fit_moments

#: Default bound on the number of open jobs in the network (truncation).
DEFAULT_OPEN_LIMIT = 40

_SINK = -1
_FREE = -1  # "dest" of an entry that is not blocked

# station kinds (a priority or LCFS-PR queue is an _FCFS kind whose ``order``
# says where a job joins the line, see _Spec._stations)
_DELAY, _FCFS, _PS, _LD = 0, 1, 2, 3
# where a job joins an order-keeping station: at the end (FCFS), after the
# waiting jobs of its level or higher (non-preemptive priority), after every
# job of its level or higher, servers included (preemptive-resume priority),
# at the head (LCFS-PR)
_ORD_FCFS, _ORD_PRIO, _ORD_PRIOPR, _ORD_LCFS = 0, 1, 2, 3
_ORDER_OF = {"fcfs": _ORD_FCFS, "prio": _ORD_PRIO, "prio-pr": _ORD_PRIOPR,
             "lcfs-pr": _ORD_LCFS}


# ---------------------------------------------------------------------------
# arrival streams as Markovian arrival processes
# ---------------------------------------------------------------------------

def _map_moves(D0, D1) -> tuple:
    """``(hidden, arrive)``: the moves of a phased arrival stream, a
    Markovian arrival process (Neuts 1979; Lucantoni 1991): ``hidden[i]``
    the pairs (j, rate) of D0's off-diagonal entries of row i (the phase
    changes without an arrival), ``arrive[i]`` the pairs (j, rate) of D1's
    row i (an arrival, the next interval starting in phase j), each in
    ascending j, zero rates left out."""
    n = len(D0)
    hidden = tuple(tuple((j, float(D0[i][j])) for j in range(n) if j != i and D0[i][j] > 0)
                   for i in range(n))
    arrive = tuple(tuple((j, float(D1[i][j])) for j in range(n) if D1[i][j] > 0)
                   for i in range(n))
    return hidden, arrive


def _coxian_moves(cox) -> tuple:
    """:func:`_map_moves` of a Coxian renewal stream (phase i of rate mu_i
    goes on to phase i + 1 with probability q_i, else ends the interval,
    the next starting at phase 0): the rates mu_i q_i and mu_i (1 - q_i),
    the expressions the builders used before streams were MAPs (so the
    generator is the same to the bit)."""
    n = int(cox.phases)
    hidden, arrive = [], []
    for i in range(n):
        mu, q = cox.rates[i], cox.cont[i]
        hidden.append(((i + 1, mu * q),) if q > 0 else ())
        # (kept at rate 0 where q = 1: the builders always made that move,
        # and the states it reaches first are numbered by it)
        arrive.append(((0, mu * (1.0 - q)),))
    return tuple(hidden), tuple(arrive)


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

    Class switching (:mod:`qmodels.model.chains`): a routing entry is a
    triple (next place, p, class the job goes on as), the class being the
    row's own except where the model's routing switches it.  A job's class
    is part of its type, so the chain's state holds, at every station, the
    jobs of each class; a closed chain's population (the sum of its
    classes' populations) is split among its classes in any way the
    routing reaches (``chains``: the class indices of each routing chain;
    ``chain_pop`` its population).
    """

    def __init__(self, net: Network, open_limit, max_phases: int = DEFAULT_MAX_PHASES):
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
        self._chains()
        binding = self._binding()
        self._routing(binding)
        self._check_ld_blocking(binding)
        self._check_preemptive_blocking(binding)
        self._truncation(open_limit)
        self._phases(max_phases)
        # -- job types: (class, mask of held pools, phase) --------------------
        self.types: list[tuple[int, int, int]] = []
        self.tindex: dict[tuple[int, int, int], int] = {}

    def _stations(self):
        """Kind, servers, capacity, rate multipliers and queue order of
        every station.  A priority queue (``prio``, ``prio-pr``) that
        classes of one level visit serves them FCFS (the order within a
        level) and is one."""
        self.kind = []
        self.order = []
        self.c = []
        self.cap = []
        self.mult: list[tuple[float, ...] | None] = []
        acts_fcfs = self.net.lowered.acts_fcfs
        for k, s in enumerate(self.net.stations):
            order = _ORD_FCFS
            if isinstance(s, Delay):
                self.kind.append(_DELAY)
                self.c.append(math.inf)
                self.mult.append(None)
            elif isinstance(s, Queue):
                d = s.discipline
                if d in PRIORITY_DISCIPLINES and acts_fcfs[k]:
                    d = "fcfs"
                if d == "lcfs-pr" and int(s.servers) != 1:  # pragma: no cover - model refuses
                    raise UnsupportedModelError(
                        f"station {s.name!r}: LCFS-PR with {s.servers} servers")
                self.kind.append(_PS if d == "ps" else _FCFS)
                order = _ORDER_OF.get(d, _ORD_FCFS)
                self.c.append(int(s.servers))
                self.mult.append(None)
            elif isinstance(s, LoadDependent):
                self.kind.append(_LD)
                self.c.append(1)
                self.mult.append(tuple(float(a) for a in s.rate_multipliers))
            else:  # pragma: no cover - the model admits only these kinds
                raise UnsupportedModelError(f"station {s.name!r}: unknown kind {s.kind!r}")
            self.order.append(order)
            self.cap.append(math.inf if s.capacity is None else int(s.capacity))
        self.level = [int(c.priority) for c in self.net.classes]

    def _classes(self):
        """Populations, think times, arrival rates and the mean service
        rates mu[r, k] = 1/S[r, k] at visited stations (positive service
        times only)."""
        net, V, S = self.net, self.V, self.S
        self.is_open = [isinstance(c, Open) for c in net.classes]
        self.pop = [int(c.population) if isinstance(c, Closed) else 0 for c in net.classes]
        self.Z = [float(c.think_time) if isinstance(c, Closed) else 0.0 for c in net.classes]
        self.lam = [float(c.arrival_rate) if isinstance(c, Open) else 0.0 for c in net.classes]
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

    def _chains(self):
        """The routing chains as class indices, each closed chain's
        population, and the refusal of what the chain does not model with
        class switching (token pools: a job's held tokens would cross
        classes; the simulator refuses them together too)."""
        net = self.net
        self.chains = [tuple(net.class_index(n) for n in ch) for ch in net.chains]
        self.chain_of = [0] * self.C
        for h, ch in enumerate(self.chains):
            for r in ch:
                self.chain_of[r] = h
        self.chain_pop = [sum(self.pop[r] for r in ch) for ch in self.chains]
        self.switching = any(len(ch) > 1 for ch in self.chains)
        if self.switching and net.pools:
            raise UnsupportedModelError(
                f"token pool {net.pools[0].name!r} in a network with class switching: ctmc "
                "does not model pools together with class switching; use method='sim' "
                "without the pool, or no switching")

    def live(self, r: int) -> bool:
        """Whether jobs of class r can ever be present: its closed chain
        has jobs, or some class of its open chain has arrivals to a
        station."""
        ch = self.chains[self.chain_of[r]]
        if self.is_open[r]:
            return any(d >= 0 for x in ch for d, _ in self.source[x])
        return self.chain_pop[self.chain_of[r]] > 0

    def _phases(self, max_phases):
        """The Coxian form (:mod:`.phase_type`) of every class's service at
        every station it visits (``phr[r][k]`` the phase rates,
        ``phq[r][k]`` the probabilities of going on to the next phase) and
        of every open class's inter-arrival time (``arr_cox[r]``, None for
        a Poisson stream or a MAP), and every phased stream's moves as a
        Markovian arrival process (``arr_map[r]``, :func:`_map_moves`: a
        Coxian renewal stream is the MAP D0 = T, D1 = t e_1, Neuts 1981,
        ch. 2; a :class:`~qmodels.model.map.MAP` its own D0, D1).  Where
        the network is product form (BCMP) the shapes at PS, delay and
        load-dependent stations do not change its figures (insensitivity;
        Baskett, Chandy, Muntz & Palacios 1975), so their service is taken
        exponential.  ``fits`` lists the shapes fitted (the answer is then
        approximate), ``shapes`` those modelled exactly with more than one
        phase (a MAP stream included)."""
        from .requires import product_form

        net = self.net
        total = None if any(self.is_open) else sum(self.pop)
        insensitive = product_form(net, total) is None
        self.insensitive_shapes = []
        self.fits: list[str] = []
        self.shapes: list[str] = []
        self.capped = False
        self.max_phases = int(max_phases)
        self.phr = [[(self.mu[r, k],) for k in range(self.K)] for r in range(self.C)]
        self.phq = [[(0.0,) for _ in range(self.K)] for _ in range(self.C)]
        shapes = net.lowered.shapes       # per class: its own shape, else the station's
        for k, s in enumerate(net.stations):
            visiting = [r for r in range(self.C) if self.V[r, k] > 0]
            if all(shapes[r][k] is None for r in visiting):
                continue
            if insensitive:
                if any(shapes[r][k] is not None and float(shapes[r][k].scv) != 1.0
                       for r in visiting):
                    self.insensitive_shapes.append(s.name)
                continue
            self._station_phases(k, s, [shapes[r][k] for r in range(self.C)], visiting,
                                 max_phases)
        self.arr_cox: list[Coxian | None] = [None] * self.C
        self.arr_map: list[tuple | None] = [None] * self.C
        for r, c in enumerate(net.classes):
            d = getattr(c, "interarrival", None)
            if not self.is_open[r] or d is None or not self.lam[r] > 0:
                continue
            if isinstance(d, MAP):
                # a Markovian arrival process: its phase is the stream's
                # state, and an arrival moves it along D1's row (not back
                # to a fresh start); its rate is the class's (Open checks)
                if d.phases > 1:
                    self.arr_map[r] = _map_moves(d.d0, d.d1)
                    self.shapes.append(f"class {c.name!r}: inter-arrival times (a MAP of "
                                       f"{d.phases} phases)")
                continue
            cox = coxian_of(d, 1.0 / self.lam[r], max_phases, who=f"class {c.name!r}")
            self._note(cox, f"class {c.name!r}: inter-arrival times", d)
            if cox.phases > 1:
                self.arr_cox[r] = cox
                self.arr_map[r] = _coxian_moves(cox)
        self.nphase = [max(len(self.phr[r][k]) for k in range(self.K)) if self.K else 1
                       for r in range(self.C)]
        self.phased = [any(len(self.phr[r][k]) > 1 for r in range(self.C))
                       for k in range(self.K)]
        self.arr_phased = [r for r in range(self.C) if self.arr_map[r] is not None]

    def _station_phases(self, k, s, ds, visiting, max_phases):
        """The Coxian forms of station ``k``'s service for the classes
        that visit it (``ds[r]`` class r's shape there, the class's own
        mean)."""
        seen = set()
        own = any(ds[r] != ds[visiting[0]] for r in visiting)   # a shape per class
        for r in visiting:
            d = ds[r]
            who = f"station {s.name!r}" + (f", class {self.net.classes[r].name!r}"
                                           if own else "")
            cox = coxian_of(d, float(self.S[r, k]), max_phases, who=who)
            if cox.phases > 1 or not cox.exact:
                self.phr[r][k] = tuple(float(x) for x in cox.rates)
                self.phq[r][k] = tuple(float(x) for x in cox.cont)
            key = (cox.fit or type(d).__name__, r if own else None)
            if key not in seen and d is not None:
                seen.add(key)
                self._note(cox, f"{who}: service", d)

    def _note(self, cox, what, dist):
        self.capped = self.capped or cox.capped
        if not cox.exact:
            self.fits.append(f"{what} {cox.fit}; {fit_moments(dist, cox)}")
        elif cox.phases > 1:
            self.shapes.append(what)

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
        """Per class: ``route[r][place]`` the list of (next place, p, class
        the job goes on as),
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
                    rows[a] = [(b, 1.0, r)]
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
        # one station visited (at most once per arrival if open): the random
        # routing is the only route there is, and the order cannot matter
        one_route = len(visited) == 1 and (isinstance(c, Closed) or V[r, visited[0]] <= 1)
        meets_cap = [] if one_route else [names[k] for k in visited if binding[k]]
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
        just before the reference station.  A key ``(station, class)``
        sends the job on as that class (class switching; the source row
        never switches, :func:`qmodels.model.chains.check_chain`)."""
        K = self.K
        net = self.net
        names = net.station_names
        rows: list[list[tuple[int, float, int]]] = [[] for _ in range(K + 1)]  # row K: think
        src = []
        first = None
        for a, row in c.routing.items():
            if a != SOURCE and first is None:
                first = a
            for b, p in row.items():
                p = float(p)
                if p <= 0:
                    continue
                st, to = b if isinstance(b, tuple) else (b, c.name)
                d = _SINK if st == SINK else names.index(st)
                if a == SOURCE:
                    src.append((d, p))
                else:
                    rows[names.index(a)].append((d, p, net.class_index(to)))
        ref = names.index(c.reference) if (
            isinstance(c, Closed) and c.reference is not None) else names.index(first)
        if self.Z[r] > 0:
            # the think stage sits just before the reference station (a
            # class with a think time never switches: check_chain)
            for k in range(K):
                rows[k] = [(self.THINK if d == ref else d, p, s) for d, p, s in rows[k]]
            rows[self.THINK] = [(ref, 1.0, r)]
        return rows, src, ref

    def _random_route_closed(self, r, c, visited):
        """Random routing of a closed class in proportion to its visit
        ratios, as the simulator routes it (:mod:`qmodels.sim.flatten`,
        "Routing of a class given by visits"): with T = sum_k V_k >= 1 a
        cycle starts at k with probability V_k / T and after each visit ends
        (to the think stage) with probability 1/T, else goes to k with
        probability (1 - 1/T) V_k / T; with T < 1 a cycle makes one visit
        (to k with probability V_k) or none (thinks again).  Without think
        time a cycle's end is the next one's start: next k with probability
        V_k / T from anywhere."""
        V = self.V
        names = self.net.station_names
        rows: list[list[tuple[int, float]]] = [[] for _ in range(self.K + 1)]
        T = float(sum(V[r, j] for j in visited))
        if self.Z[r] > 0 and visited:
            if T >= 1:
                rows[self.THINK] = [(j, V[r, j] / T, r) for j in visited]
                row = [(self.THINK, 1.0 / T)] + [(j, (1.0 - 1.0 / T) * V[r, j] / T)
                                                 for j in visited]
            else:
                rows[self.THINK] = [(j, V[r, j], r) for j in visited] + [
                    (self.THINK, 1.0 - T, r)]
                row = [(self.THINK, 1.0)]
            for k in visited:
                rows[k] = [(d, p, r) for d, p in row if p > 0]
        elif self.Z[r] > 0:
            rows[self.THINK] = [(self.THINK, 1.0, r)]
        else:
            row = [(j, V[r, j] / T, r) for j in visited]
            for k in visited:
                rows[k] = row
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
        rows: list[list[tuple[int, float, int]]] = [[] for _ in range(self.K + 1)]
        T = float(sum(V[r, k] for k in visited))
        if T >= 1:
            src = [(j, V[r, j] / T) for j in visited]
            for k in visited:
                rows[k] = [(j, (1 - 1 / T) * V[r, j] / T, r) for j in visited]
                rows[k].append((_SINK, 1 / T, r))
        else:
            src = [(j, V[r, j]) for j in visited] + [(_SINK, 1 - T)]
            for k in visited:
                rows[k] = [(_SINK, 1.0, r)]
        ref = visited[0] if visited else 0
        return rows, src, ref

    def _check_ld_blocking(self, binding):
        """A load-dependent station must never hold a blocked job."""
        names = self.net.station_names
        for r in range(self.C):
            for k in range(self.K):
                if self.kind[k] != _LD or not self.V[r, k] > 0:
                    continue
                for d, _, _ in self.route[r][k]:
                    if 0 <= d < self.K and binding[d]:
                        raise UnsupportedModelError(
                            f"station {names[k]!r} is load-dependent and jobs of class "
                            f"{self.net.class_names[r]!r} can be blocked there (next station "
                            f"{names[d]!r} has capacity {self.cap[d]}); ctmc does not "
                            "define blocking at a load-dependent station"
                        )

    def _check_preemptive_blocking(self, binding):
        """A job in service at a preemptive station (``prio-pr``,
        ``lcfs-pr``) must never be blocked after its service there (the
        simulator keeps a blocked job's server out of reach of a
        preemption, an order the chain does not keep)."""
        names = self.net.station_names
        for r in range(self.C):
            for k in range(self.K):
                if self.order[k] not in (_ORD_PRIOPR, _ORD_LCFS) or not self.V[r, k] > 0:
                    continue
                for d, _, _ in self.route[r][k]:
                    if 0 <= d < self.K and binding[d] and d != k:
                        raise UnsupportedModelError(
                            f"station {names[k]!r} is preemptive "
                            f"({self.net.stations[k].discipline!r}) and jobs of class "
                            f"{self.net.class_names[r]!r} can be blocked there (next station "
                            f"{names[d]!r} has capacity {self.cap[d]}); ctmc does not model "
                            "blocking at a preemptive station; use method='sim'")

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

    def type_of(self, r: int, mask: int, phase: int = 0) -> int:
        """Index of the job type (class r, held pools ``mask``, service
        phase ``phase`` at the station it is at), made on first use."""
        key = (r, mask, phase)
        t = self.tindex.get(key)
        if t is None:
            t = len(self.types)
            self.types.append(key)
            self.tindex[key] = t
        return t

    def positions(self, starts):
        """Every (station, class, mask) a job can reach from ``starts``
        (a forward closure on the class routing, class switches followed,
        masks updated on acquire and release)."""
        seen = set(starts)
        stack = list(starts)
        while stack:
            k, r, m = stack.pop()
            m2 = m & ~self.relmask[r][k]
            for d, _, s in self.route[r][k]:
                if d < 0:
                    continue
                nxt = (d, s, m2 | self.acqmask[s][d])
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen


# ---------------------------------------------------------------------------
# the size of the state space, before building it
# ---------------------------------------------------------------------------

def _terminal_component(route, start) -> int:
    """Size of the largest terminal strongly connected set of (place, class)
    pairs (no edge leaving it) reachable from ``start`` in the routing graph
    (``route[r][place]`` lists (next place, p, next class); negative places
    are the sink).  Without class switching the pairs of one class are its
    places."""
    succ = {}
    stack, seen = [start], {start}
    while stack:
        u = stack.pop()
        succ[u] = [(d, s) for d, _, s in route[u[1]][u[0]] if d >= 0]
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

    Counts the ways to place each closed chain's N_h jobs over the m_h
    (place, class) pairs (stations and think stage; one class per chain
    without class switching) of the largest terminal strongly connected set
    of its routing reachable from where its jobs start:
    prod_h C(N_h + m_h - 1, m_h - 1) (compositions of N_h into m_h parts).
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
    for h, ch in enumerate(spec.chains):
        N = spec.chain_pop[h]
        if spec.is_open[ch[0]] or N == 0:
            continue
        if any(any(spec.acqmask[r]) for r in ch):
            return None
        r = next(x for x in ch if spec.pop[x] > 0)
        start = (spec.THINK if spec.Z[r] > 0 else spec.ref[r], r)
        m = _terminal_component(spec.route, start)
        bound *= math.comb(N + m - 1, m - 1)
    return bound * _open_lower_bound(spec)


def _open_lower_bound(spec: _Spec) -> int:
    """The open part of :func:`_placement_lower_bound`: with the open jobs
    truncated at L, no capacity anywhere and no open class using a pool,
    every way to place up to L open jobs (of any class, counted as one
    kind) over the m stations open jobs can reach from the source is
    reachable -- arrivals come one at a time and each walks to its place,
    the farthest places filled first, without waiting for anybody -- so
    C(L + m, m) distinct states exist (classes, orders, phases and the
    closed jobs only split them further).  1 where that does not hold."""
    if not spec.truncating or any(c != math.inf for c in spec.cap):
        return 1
    seen: set = set()
    for r in range(spec.C):
        if not spec.is_open[r]:
            continue
        if any(spec.acqmask[r]):
            return 1
        todo = [(d, r) for d, _ in spec.source[r] if d >= 0]
        while todo:
            u = todo.pop()
            if u in seen or u[0] >= spec.K:
                continue
            seen.add(u)
            todo += [(d, s) for d, _, s in spec.route[u[1]][u[0]] if d >= 0]
    m = len({u for u, _ in seen})
    return math.comb(int(spec.open_limit) + m, m) if m else 1


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
        names = spec.net.class_names
        pops = ", ".join("+".join(names[r] for r in ch) + f"={n}" for ch, n in
                         zip(spec.chains, spec.chain_pop, strict=True)
                         if not spec.is_open[ch[0]])
        raise ProblemTooLargeError(
            f"the state space has at least {_big(bound)} states (the ways to place the closed "
            f"jobs {pops or 'none'} over the places they cycle through"
            + (f" and up to {spec.open_limit} open jobs over the stations they reach"
               if _open_lower_bound(spec) > 1 else "")
            + ", counted before building), "
            f"more than max_states = {max_states} states; reduce the populations, "
            "capacities or open_limit, or raise max_states"
        )
