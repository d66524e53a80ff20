"""Held resources by hierarchical decomposition: flow-equivalent servers.

A :class:`~qmodels.model.TokenPool` of B tokens held from station
``acquire`` through station ``release`` (an interface buffer pool, a switch
input port) breaks product form: a job holds a token while it queues and is
served at every station of the sub-path.  The classical analytic treatment
replaces the sub-path by one load-dependent *flow-equivalent server* (FES):

1. Solve the sub-network spanned by the pool alone, as a closed network
   with n = 1..B jobs (exact MVA), and record its throughput X_sub(n)
   (passages through ``acquire`` per second).
2. Replace the sub-network in the outer network by a load-dependent station
   that, with n jobs present, completes at rate X_sub(min(n, B)): with more
   than B jobs, B are inside and the rest wait for a token.
3. Solve the outer network exactly (MVA with load-dependent stations).
4. Map back: the probability p(j) that j jobs are at the FES gives each
   inner station's queue length and utilisation as the mixture
   sum_j p(j) Q_k^sub(min(j, B)), and the mean number waiting for a token
   as sum_j p(j) max(j - B, 0).

Assumptions
-----------
* One closed class, numeric parameters.  The class is given by routing
  (the sub-path a pool spans is read from the routing graph) or by visits
  with every pool it uses given a ``path`` (the stations held, in order).
* Each pool is entered only through ``acquire`` and left only from
  ``release``.  Pools may share stations: pools whose spans nest (a switch
  port slot taken while a buffer slot is held over the port and beyond)
  are solved innermost first, each group an FES inside the next; pools
  that overlap without nesting (a buffer slot held over DMA and port, a
  port slot over port and link) form one group whose closed sub-network is
  solved exactly by the CTMC (:mod:`qmodels.analytic.ctmc`) for n = 1..cap jobs.
  ``inner="ctmc"`` uses the CTMC for every group; the default ``"auto"``
  for every small group of several pools (nested ones included), which
  halves the error of nested FES in the tests.
* Outside the groups, and inside them for nested FES, the network is
  product form (exponential FCFS, PS, delay, multi-server and
  load-dependent stations, no binding finite capacity).
* A job waiting for a token is in no station (as in :mod:`qmodels.analytic.ctmc` and
  the simulator): it counts in the class response time and in
  ``result.info["pools"][name]["waiting"]``, not in any station's Q.
* A pool's utilisation is tokens held / tokens = X_acq H / B (Little's
  law, H the mean holding time); it competes with the stations for
  :attr:`~qmodels.results.Result.bottleneck`.

Accuracy
--------
The FES is exact (Chandy, Herzog & Woo's "Norton theorem") when the whole
network is product form.  A pool that can bind (B < N) makes it not product
form: while jobs wait for tokens the sub-network runs at its full B and
what the outer network sees is no longer a rate that depends only on the
number present (already for B = 1 the token holder's time on the sub-path
is a sum of exponential phases, not one exponential).  The decomposition
is then an approximation; it is exact when B >= N (the pool never binds)
and when the pool spans one single-server queue (a held token is then just
the place in service).  On the SPAX-like buffer network of the tests
(think, CPU, then DMA and switch port under the pool, then PCI) the
throughput error against the exact CTMC is at most 2.5 % (N = 3..8, B = 1
or 2) and below 0.4 % for N = 16, B = 1..16; it is largest where the pool
binds part of the time, and the FES underestimated the throughput in every
case measured.  With a buffer pool and a one-slot port pool sharing the
port (N = 4..8, B = 1..4, ``tests/test_case_spax.py``) the error against
the CTMC is -0.9 % to -4.7 % for nested FES and -0.9 % to -3.6 % with the CTMC
inside the group.  On the SPAX case (``qmodels.cases.spax``, 160 jobs, p_io =
30 %) against the simulator: with the buffer slot nested over the port's
place, nested FES misses by X -1.8 %, packets waiting for a slot +6.7 %,
the CTMC inside by X +0.2 %, waiting -0.6 %; with the overlapping pools of
the case, X +0.1 % and waiting +0.5 % (simulator half-widths 0.2-0.5 % and
3 %).  Compare with ``method="ctmc"`` or ``method="sim"`` for
your own network.

References
----------
.. [CHW] K. M. Chandy, U. Herzog & L. Woo, "Parametric analysis of queuing
   networks", IBM J. Res. Dev. 19(1), 1975, pp. 36-42 (the flow-equivalent
   server; exact for product-form networks).
.. [QSP] E. D. Lazowska, J. Zahorjan, G. S. Graham & K. C. Sevcik,
   *Quantitative System Performance*, Prentice-Hall 1984, ch. 8
   (flow-equivalent service centres) and ch. 9 (memory constraints: the
   central subsystem replaced by a load-dependent FESC whose rate is
   X_sub(min(n, M)) for multiprogramming limit M).
.. [Bolch] G. Bolch, S. Greiner, H. de Meer & K. S. Trivedi, *Queueing
   Networks and Markov Chains*, 2nd ed., Wiley 2006, sec. 8.1 (marginals
   p_k(j | n) = f_k(j) G_-k(n - j) / G(n), eq. 8.13) and sec. 10.1
   (hierarchical decomposition, the FES method).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._format import fmt, format_table
from ..errors import InvalidValueError, UnsupportedModelError
from ..model.network import Closed, Network, TokenPool, pool_chains
from ..model.pools import _get_pool, class_pool_span
from ..results import Curve, FrameReport, Result, label_of
from .contract import answers

__all__ = ["decompose", "throughput_vs_tokens", "pool_span", "TokenCurve"]


# ---------------------------------------------------------------------------
# the sub-path a pool spans
# ---------------------------------------------------------------------------

def pool_span(net: Network, pool: TokenPool | str) -> tuple:
    """Stations a job visits while it holds a token of ``pool`` (a network
    of one closed class; :func:`class_pool_span` for one class of several).

    For a class given by visits, the pool's ``path``.  For routing: from
    ``acquire``, every station reachable in the class routing without
    going on from ``release``; ``release`` is included.  Raises
    :class:`UnsupportedModelError` when the routing lets a job into the span
    other than through ``acquire`` (it would be inside without a token) and
    when the class has no routing.
    """
    return class_pool_span(net, pool, _the_class(net))


def _the_class(net) -> Closed:
    if len(net.classes) != 1 or not isinstance(net.classes[0], Closed):
        raise UnsupportedModelError(
            "decomposition handles one closed class; got "
            + ", ".join(f"{c.name!r} ({c.kind})" for c in net.classes)
        )
    return net.classes[0]


# ---------------------------------------------------------------------------
# the decomposition
# ---------------------------------------------------------------------------

def _applies(pool, cls):
    return pool.classes is None or cls.name in pool.classes


def _lower(n1: int):
    """Index matrix n - j (n rows, j columns) and the mask j <= n."""
    n = np.arange(n1)
    d = n[:, None] - n[None, :]
    return np.maximum(d, 0), d >= 0


def _lconv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log of the convolution h(n) = sum_j e^a(j) e^b(n - j), n = 0..len - 1."""
    idx, mask = _lower(len(a))
    T = np.where(mask, a[None, :] + b[idx], -np.inf)
    m = np.max(T, axis=1)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.where(np.isfinite(m),
                        safe + np.log(np.sum(np.exp(T - safe[:, None]), axis=1)), -np.inf)


def _station_logf(st, D: float, N: int) -> np.ndarray:
    """log f(j), j = 0..N, of a product-form station of demand D ([Bolch]
    eq. 8.1-8.5): D^j / prod_{i<=j} a(i) with a(i) = i (delay),
    min(i, c) (c servers) or the load-dependent multipliers."""
    out = np.full(N + 1, -np.inf)
    out[0] = 0.0
    if D <= 0:
        return out
    j = np.arange(1, N + 1)
    if st.kind == "delay":
        a = j.astype(float)
    elif st.kind == "queue":
        a = np.minimum(j, float(st.servers))
    else:
        a = np.array([float(st.rate_multiplier(i)) for i in j])
    out[1:] = j * math.log(D) - np.cumsum(np.log(a))
    return out


@dataclass
class _Level:
    """Figures of one (sub-)network for populations n = 0..N.

    ``X[n]`` passages (or cycles) per second; ``Q``, ``U`` shaped (N + 1,
    stations of the whole network); ``waiting``, ``held``, ``full`` shaped
    (N + 1, pools of the whole network): jobs waiting for a token, tokens
    held, probability that every token is held.
    """

    X: np.ndarray
    Q: np.ndarray
    U: np.ndarray
    waiting: np.ndarray
    held: np.ndarray
    full: np.ndarray


@dataclass
class _Group:
    """A set of pools whose spans nest or overlap, solved as one unit."""

    pools: list          # indices into net.pools
    span: tuple          # union of the spans, network order
    entry: str           # the station where a job enters the group
    entry_pool: int      # the pool taken at ``entry``
    cap: int             # populations 1..cap define the FES
    children: list       # inner groups (laminar case)
    own: list            # stations of the span not inside a child group
    laminar: bool
    sub: _Level | None = None


def _mix(P: np.ndarray, arr: np.ndarray, cap: int) -> np.ndarray:
    """sum_j p(j | n) arr[min(j, cap)] for every n (rows of P)."""
    N = P.shape[0] - 1
    jj = np.minimum(np.arange(N + 1), cap)
    return P @ arr[jj]


class _Decomposer:
    def __init__(self, net: Network, inner: str):
        self.net = net
        self.inner = inner
        cls = _the_class(net)
        self.cls = cls
        self.N = int(cls.population)
        self.Z = float(cls.think_time)
        self.V = np.asarray(net.visits[0], dtype=float)
        self.S = np.asarray(net.service_times[0], dtype=float)
        self.D = self.V * self.S
        self.K = len(net.stations)
        self.pools = [j for j, p in enumerate(net.pools) if _applies(p, cls)
                      and self.V[net.station_index(p.acquire)] > 0]
        self.spans = {j: pool_span(net, net.pools[j]) for j in self.pools}
        self._check_think()
        self.groups = self._build_groups()

    # -- structure ------------------------------------------------------------
    def _check_think(self):
        net, cls = self.net, self.cls
        if self.Z <= 0 or cls.routing is None:
            return
        ref = cls.reference if cls.reference is not None else next(iter(cls.routing))
        for j in self.pools:
            p = net.pools[j]
            if ref in self.spans[j] and ref != p.acquire:
                raise UnsupportedModelError(
                    f"class {cls.name!r}: the think time is spent before reference station "
                    f"{ref!r}, which is inside token pool {p.name!r}'s sub-path; "
                    "decomposition needs the think time outside every pool"
                )

    def _build_groups(self) -> list:
        # connected components of pools whose spans share a station
        comp: list[set] = []
        for j in self.pools:
            hit = [c for c in comp if any(set(self.spans[j]) & set(self.spans[i]) for i in c)]
            new = {j}.union(*hit) if hit else {j}
            comp = [c for c in comp if c not in hit] + [new]
        return [self._group(sorted(c)) for c in comp]

    def _group(self, members: list) -> _Group:
        net = self.net
        span_set = set().union(*(self.spans[j] for j in members))
        span = tuple(s for s in net.station_names if s in span_set)
        # entry: an acquire station inside no other member's span
        entries = [j for j in members
                   if not any(net.pools[j].acquire in self.spans[i] for i in members if i != j)]
        if len(entries) != 1:
            # identical spans: the pool taken first is the one listed first
            same = [j for j in members if all(set(self.spans[j]) == set(self.spans[i])
                                              for i in members)]
            if not same:
                names = ", ".join(repr(net.pools[j].name) for j in members)
                raise UnsupportedModelError(
                    f"token pools {names} share stations but have no single entry station; "
                    "decomposition needs the pools' held paths to form one chain"
                )
            entries = [same[0]]
        ep = entries[0]
        entry = net.pools[ep].acquire
        self._check_single_entry(span_set, entry, members)
        # laminar: every two spans nested or disjoint
        laminar = all(set(self.spans[a]) <= set(self.spans[b]) or
                      set(self.spans[b]) <= set(self.spans[a]) or
                      not set(self.spans[a]) & set(self.spans[b])
                      for a in members for b in members)
        if laminar:
            # the entry pool spans the whole group: at most its tokens inside
            cap = min(self.N, int(net.pools[ep].tokens))
        else:
            # every job inside holds a token: sum(tokens) + 1 jobs saturate it
            cap = min(self.N, sum(int(net.pools[j].tokens) for j in members) + 1)
        children: list = []
        own = list(span)
        if laminar and len(members) > 1:
            rest = [j for j in members if j != ep]
            # inner groups: maximal spans among the rest
            inner = []
            for j in rest:
                if not any(j != i and set(self.spans[j]) < set(self.spans[i]) for i in rest):
                    inner.append(j)
            used = set()
            for j in inner:
                if j in used:
                    continue
                sub = [i for i in rest if set(self.spans[i]) <= set(self.spans[j])
                       and i not in used]
                used.update(sub)
                children.append(self._group(sub))
            inside = set().union(*(set(c.span) for c in children)) if children else set()
            own = [s for s in span if s not in inside]
        return _Group(members, span, entry, ep, cap, children, own, laminar)

    def _check_single_entry(self, span_set, entry, members):
        cls = self.cls
        if cls.routing is None:
            return
        for src, row in cls.routing.items():
            for dst, p in row.items():
                if float(p) > 0 and dst in span_set and dst != entry and src not in span_set:
                    names = ", ".join(repr(self.net.pools[j].name) for j in members)
                    raise UnsupportedModelError(
                        f"token pools {names}: routing {src!r} -> {dst!r} enters the held "
                        f"path other than through {entry!r}; decomposition needs a single "
                        "entry point"
                    )

    # -- solving --------------------------------------------------------------
    def _empty(self, n1):
        Pn = len(self.net.pools)
        return _Level(np.zeros(n1), np.zeros((n1, self.K)), np.zeros((n1, self.K)),
                      np.zeros((n1, Pn)), np.zeros((n1, Pn)), np.zeros((n1, Pn)))

    def _product_level(self, stations: list, groups: list, visits: np.ndarray, Z: float,
                       N: int) -> _Level:
        """Convolution solution of stations + FES of groups, n = 0..N ([Bolch]
        sec. 8.1; every term positive, computed in log space)."""
        net = self.net
        if Z <= 0 and not groups and all(
                visits[net.station_index(s)] * self.S[net.station_index(s)] <= 0
                for s in stations):
            raise InvalidValueError(
                f"class {self.cls.name!r}: all demands and the think time are zero, so the "
                "throughput is unbounded"
                + (f" (sub-network {stations})" if N != self.N or Z != self.Z else ""))
        items = []   # (kind, payload, log f)
        for s in stations:
            k = net.station_index(s)
            items.append(("st", k, _station_logf(net.stations[k], visits[k] * self.S[k], N)))
        for g in groups:
            self._solve_group(g)
            v = visits[net.station_index(g.entry)]
            Xs = g.sub.X
            lf = np.full(N + 1, -np.inf)
            lf[0] = 0.0
            j = np.arange(1, N + 1)
            rates = Xs[np.minimum(j, g.cap)]
            lf[1:] = np.cumsum(np.log(v / rates))
            items.append(("grp", g, lf))
        if Z > 0:
            zf = np.full(N + 1, -np.inf)
            zf[0] = 0.0
            j = np.arange(1, N + 1)
            zf[1:] = j * math.log(Z) - np.cumsum(np.log(j))
            items.append(("think", None, zf))
        m = len(items)
        unit = np.full(N + 1, -np.inf)
        unit[0] = 0.0
        pre = [unit]
        for it in items:
            pre.append(_lconv(pre[-1], it[2]))
        suf = [unit]
        for it in reversed(items):
            suf.append(_lconv(suf[-1], it[2]))
        suf = suf[::-1]          # suf[i] = convolution of items i..m-1
        lg = pre[m]
        out = self._empty(N + 1)
        with np.errstate(over="ignore"):
            out.X[1:] = np.exp(lg[:-1] - lg[1:])
        n = np.arange(N + 1)
        for i, (kind, payload, lf) in enumerate(items):
            if kind == "think":
                continue
            lgc = _lconv(pre[i], suf[i + 1])
            # P[n, j] = f(j) G_c(n - j) / G(n)   ([Bolch] eq. 8.13)
            idx, mask = _lower(N + 1)
            with np.errstate(invalid="ignore"):
                P = np.where(mask, np.exp(lf[None, :] + lgc[idx] - lg[:, None]), 0.0)
            if kind == "st":
                k = payload
                st = net.stations[k]
                out.Q[:, k] = P @ n
                if st.kind == "delay":
                    out.U[:, k] = out.X * visits[k] * self.S[k]
                elif st.kind == "queue":
                    out.U[:, k] = out.X * visits[k] * self.S[k] / float(st.servers)
                else:
                    out.U[:, k] = 1.0 - P[:, 0]
            else:
                g = payload
                sub = g.sub
                for k in range(self.K):
                    if net.station_names[k] in g.span:
                        out.Q[:, k] = _mix(P, sub.Q[:, k], g.cap)
                        out.U[:, k] = _mix(P, sub.U[:, k], g.cap)
                for j in g.pools:
                    out.waiting[:, j] = _mix(P, sub.waiting[:, j], g.cap)
                    out.held[:, j] = _mix(P, sub.held[:, j], g.cap)
                    out.full[:, j] = _mix(P, sub.full[:, j], g.cap)
                # beyond cap the extra jobs wait for the entry pool's token
                extra = P @ np.maximum(n - g.cap, 0)
                out.waiting[:, g.entry_pool] += extra
        return out

    def _solve_group(self, g: _Group):
        if g.sub is not None:
            return
        if self.inner == "ctmc" or not g.laminar or (
                self.inner == "auto" and len(g.pools) > 1 and g.cap <= AUTO_CTMC_CAP):
            g.sub = self._ctmc_group(g)
            return
        net = self.net
        v_e = self.V[net.station_index(g.entry)]
        visits = self.V / v_e
        B = int(net.pools[g.entry_pool].tokens)
        inner = self._product_level(g.own, g.children, visits, 0.0, g.cap)
        # the entry pool spans the group: n <= cap <= B jobs inside hold n tokens
        n = np.arange(g.cap + 1)
        inner.held[:, g.entry_pool] = n
        inner.full[:, g.entry_pool] = (n >= B).astype(float)
        g.sub = inner
        self._check_rates(g)

    def _ctmc_group(self, g: _Group) -> _Level:
        """The group's closed sub-network with n = 1..cap jobs, solved exactly
        by the CTMC (:func:`qmodels.ctmc.ctmc`): every token held as in the
        full network, the rest of the network short-circuited."""
        from .ctmc import ctmc

        net = self.net
        v_e = self.V[net.station_index(g.entry)]
        stations = [net.station(s) for s in g.span]
        routing = self._sub_routing(g)
        service = {s: float(self.S[net.station_index(s)]) for s in g.span}
        pools = []
        for j in g.pools:
            p = net.pools[j]
            pools.append(TokenPool(p.name, p.tokens, p.acquire, p.release))
        out = self._empty(g.cap + 1)
        for n in range(1, g.cap + 1):
            sub = Network(stations, [Closed(self.cls.name, n, routing=routing, service=service,
                                            reference=g.entry)], pools=pools)
            key = (tuple(stations), tuple((a, tuple(sorted(b.items())))
                                          for a, b in sorted(routing.items())),
                   tuple(sorted(service.items())), tuple(pools), n)
            hit = _SUB_CACHE.get(key)
            if hit is None:
                r = ctmc(sub)
                hit = (float(r.class_throughput[0]),
                       np.array(r.station_queue_length[0], dtype=float),
                       np.array(r.station_utilization[0], dtype=float),
                       {p.name: dict(r.info["pools"][p.name]) for p in pools})
                if len(_SUB_CACHE) > 4096:
                    _SUB_CACHE.clear()
                _SUB_CACHE[key] = hit
            out.X[n] = hit[0]
            for i, s in enumerate(g.span):
                k = net.station_index(s)
                out.Q[n, k] = hit[1][i]
                out.U[n, k] = hit[2][i]
            for j in g.pools:
                d = hit[3][net.pools[j].name]
                out.waiting[n, j] = d["waiting"]
                out.held[n, j] = d["held"]
                out.full[n, j] = float(d.get("p_all_held", float("nan")))
        del v_e
        g.sub = out
        self._check_rates(g)
        return out

    def _sub_routing(self, g: _Group) -> dict:
        """The group's chain as a closed routing, leaving the span = back to
        the entry (one passage per cycle)."""
        net, cls = self.net, self.cls
        span = set(g.span)
        if cls.routing is None:
            chains = [ch for ch in pool_chains(net, 0) if set(ch) & span]
            (ch,) = chains
            rt = {a: {b: 1.0} for a, b in zip(ch[:-1], ch[1:])}
            rt[ch[-1]] = {ch[0]: 1.0}
            return {ch[0]: rt[ch[0]], **{k: v for k, v in rt.items() if k != ch[0]}}
        rt: dict = {}
        for src in [g.entry] + [s for s in g.span if s != g.entry]:
            row: dict = {}
            for dst, p in cls.routing.get(src, {}).items():
                p = float(p)
                if p <= 0:
                    continue
                d = dst if dst in span and dst != g.entry else g.entry
                row[d] = row.get(d, 0.0) + p
            rt[src] = row
        return rt

    def _check_rates(self, g):
        X = g.sub.X
        if not np.all(X[1:] > 0) or not np.all(np.isfinite(X)):
            names = ", ".join(repr(self.net.pools[j].name) for j in g.pools)
            raise InvalidValueError(
                f"token pool(s) {names}: the sub-network {list(g.span)} has throughput "
                f"{X[1:].tolist()}; it needs a positive, finite demand"
            )

    def solve(self) -> _Level:
        grouped = set().union(*(set(g.span) for g in self.groups)) if self.groups else set()
        outer = [s for s in self.net.station_names if s not in grouped]
        return self._product_level(outer, self.groups, self.V, self.Z, self.N)


#: CTMC solutions of groups' sub-networks (pure functions of their key), shared
#: across calls so that sweeps which leave a group unchanged solve it once
_SUB_CACHE: dict = {}


#: with ``inner="auto"``, a group of several pools is solved by the CTMC when
#: at most this many jobs fit in it (else nested FES)
AUTO_CTMC_CAP = 64


def _decompose(net: Network, *, curve: bool = False, inner: str = "auto"):
    if inner not in ("auto", "fes", "ctmc"):
        raise InvalidValueError(
            f"decompose: inner must be 'auto', 'fes' or 'ctmc', got {inner!r}")
    if net.is_symbolic:
        raise UnsupportedModelError(
            "decomposition is numeric; this network has sympy symbols"
        )
    dec = _Decomposer(net, inner)
    cls, N, Z = dec.cls, dec.N, dec.Z
    lv = dec.solve()
    V, S = dec.V, dec.S
    X = float(lv.X[N])
    Q = lv.Q[N]
    U = lv.U[N]
    Xk = X * V
    with np.errstate(divide="ignore", invalid="ignore"):
        Rk = np.where(Xk > 0, Q / np.where(Xk > 0, Xk, 1.0), S)
    R = N / X - Z if X > 0 else float(np.sum(V * S))
    pool_info = {}
    for g in _walk(dec.groups):
        for j in g.pools:
            p = net.pools[j]
            held = float(lv.held[N, j])
            x_acq = X * V[net.station_index(p.acquire)]
            pool_info[p.name] = {
                "waiting": float(lv.waiting[N, j]),
                "held": held,
                "tokens": int(p.tokens),
                "utilization": held / int(p.tokens),
                "holding_time": held / x_acq if x_acq > 0 else 0.0,
                "span": list(dec.spans[j]),
                "group": list(g.span),
                "fes_throughput": ([float(x) for x in g.sub.X[1:]]
                                   if j == g.entry_pool and g.sub is not None else []),
                "p_all_held": float(lv.full[N, j]),
            }
            if curve:
                pool_info[p.name]["waiting_curve"] = lv.waiting[:, j].tolist()
    cur = None
    if curve:
        pops = np.arange(N + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            Rc = np.where(lv.X > 0, pops / np.where(lv.X > 0, lv.X, 1.0) - Z,
                          float(np.sum(V * S)))
        cur = Curve(population=pops, throughput=lv.X, response_time=Rc, queue_length=lv.Q,
                    utilization=lv.U, station_names=net.station_names, class_name=cls.name,
                    method="decomposition")
    notes = [
        "flow-equivalent server per group of token pools (hierarchical decomposition, "
        "Lazowska et al. 1984 ch. 9; Chandy, Herzog & Woo 1975), nested pools innermost "
        f"first (inner={inner!r}: nested FES or the exact CTMC inside a group; the CTMC "
        "for pools that overlap without nesting): "
        "approximate where a pool can bind (tokens < population), exact where none can",
        "jobs waiting for a token are in no station: see info['pools'][name]['waiting']",
    ]
    return Result(
        method="decomposition",
        network=net,
        class_throughput=[X],
        class_response_time=[R],
        station_throughput=[Xk],
        station_queue_length=[Q],
        station_response_time=[Rk],
        station_utilization=[U],
        notes=tuple(notes),
        curve=cur,
        info={"pools": pool_info, "population": N, "inner": inner},
    )


def _walk(groups):
    for g in groups:
        yield g
        yield from _walk(g.children)


@answers()
def decompose(net: Network, *, curve: bool = False, inner: str = "auto") -> Result:
    """Solve a closed single-class network with token pools by replacing
    each group of pools with a flow-equivalent server (``method =
    "decomposition"``).

    Parameters
    ----------
    net : Network
        One closed class given by ``routing``, or by ``visits`` with every
        pool it uses given a ``path`` (:class:`~qmodels.model.TokenPool`).
        Pools may nest (a switch-port slot taken while a buffer slot is
        held) or overlap along one chain of stations.
    curve : bool
        Also give figures for populations 0..N (``result.curve``).
    inner : {"auto", "fes", "ctmc"}
        How a group of pools is solved at populations 1..cap (cap = the
        entry pool's tokens for nested pools, all tokens plus one for
        overlapping ones).  ``"fes"``: nested pools innermost first, each an
        FES inside the next (product form inside; pools that overlap
        without nesting fall back to the CTMC).  ``"ctmc"``: the group's
        closed sub-network solved exactly by :func:`qmodels.ctmc.ctmc`, so
        the only approximation left is the outermost FES (one small chain
        per population).  ``"auto"`` (default): the CTMC for a group of
        several pools with cap <= :data:`AUTO_CTMC_CAP`, else as ``"fes"``
        (a single pool's sub-network is product form: both are exact).

    Returns
    -------
    Result
        Station figures for every original station; ``info["pools"]``
        gives per pool the mean number ``waiting`` for a token, the mean
        number ``held``, ``utilization`` = held / tokens = X_acq H / tokens
        (Little's law, H the mean holding time, also given as
        ``holding_time``), the ``span``, the FES rates X_sub(1..cap) of a
        group's entry pool and ``p_all_held``.  A pool's utilisation
        competes with the stations' for :attr:`Result.bottleneck`.

    Raises
    ------
    UnsupportedModelError
        Several classes, an open class, symbolic parameters, a pool used by
        a class given by visits without a ``path``, a second entry into a
        pool's sub-path, pools sharing stations without one entry, a think
        time spent inside a pool, an FCFS queue with non-exponential service.

    Notes
    -----
    Populations n = 0..N by convolution ([Bolch] sec. 8.1): a station
    contributes f(j) = D^j / prod a(i), a group f(j) = prod_{i<=j} V_entry /
    X_sub(min(i, cap)), where X_sub(n) is the group's throughput (passages
    per second) with n jobs inside.  Inner figures are mixed over the FES
    marginal p(j | N) = f(j) G_c(N - j) / G(N) ([Bolch] eq. 8.13; [QSP]
    ch. 9).  Exact when no pool binds ([CHW]); otherwise an approximation
    (see the module docstring for measured errors).

    Examples
    --------
    >>> from qmodels.model import Network, Queue, Delay, Closed, TokenPool
    >>> net = Network(
    ...     [Delay("cpu", 0.05), Queue("dma", 0.01), Queue("port", 0.012)],
    ...     [Closed("io", 8, routing={"cpu": {"dma": 1}, "dma": {"port": 1},
    ...                              "port": {"cpu": 1}})],
    ...     pools=[TokenPool("buf", 2, "dma", "port")])
    >>> r = decompose(net)
    >>> r.method, round(r.info["pools"]["buf"]["held"], 3) <= 2
    ('decomposition', True)
    """
    from ._common import _check_service_shapes

    for s in net.stations:
        if s.kind == "forkjoin":
            raise UnsupportedModelError(
                f"fork-join {s.name!r}: the decomposition assumes product form inside and "
                "around its pools; use method='forkjoin' or method='sim'")
    # the flow-equivalent servers and the CTMC inside a group are those of
    # exponential FCFS queues: another shape would be answered as exponential
    _check_service_shapes(net, "the decomposition")
    return _decompose(net, curve=curve, inner=inner)



# ---------------------------------------------------------------------------
# throughput versus tokens
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TokenCurve(FrameReport):
    """Figures of a network as one pool's token count B varies.

    Arrays: ``tokens`` (m,), ``throughput`` X(B) (class, cycles/s),
    ``response_time`` R(B), ``waiting`` (mean jobs waiting for a token),
    ``utilization`` and ``queue_length`` shaped (m, stations);
    ``bottleneck`` the most utilised queueing station at each B;
    ``unconstrained`` the throughput with this pool removed (its limit as
    B grows).
    """

    pool: str
    tokens: np.ndarray
    throughput: np.ndarray
    response_time: np.ndarray
    waiting: np.ndarray
    utilization: np.ndarray
    queue_length: np.ndarray
    bottleneck: tuple
    station_names: tuple
    unconstrained: float

    X = property(lambda self: self.throughput)
    U = property(lambda self: self.utilization)
    Q = property(lambda self: self.queue_length)

    #: every point is a decomposition answer (:func:`decompose`): the notes
    #: and warnings of the points, and the worst error envelope among them
    notes: tuple = ()
    warnings: tuple = ()
    error: Any = None
    method = "decomposition"
    exactness = "approximate"
    assumptions = label_of("decomposition")[1]

    def to_frame(self):
        """A DataFrame indexed by B with X, R, waiting, bottleneck and per
        station U and Q columns (``U[dma]``, ``Q[dma]``)."""
        import pandas as pd

        data = {"X": self.throughput, "R": self.response_time, "waiting": self.waiting,
                "bottleneck": list(self.bottleneck)}
        for k, s in enumerate(self.station_names):
            data[f"U[{s}]"] = self.utilization[:, k]
        for k, s in enumerate(self.station_names):
            data[f"Q[{s}]"] = self.queue_length[:, k]
        return pd.DataFrame(data, index=pd.Index(self.tokens, name="B"))

    def __repr__(self):
        rows = [[str(int(b)), x, w, bn] for b, x, w, bn in
                zip(self.tokens, self.throughput, self.waiting, self.bottleneck,
                    strict=True)]
        tab = format_table(["B", "X [1/s]", "waiting", "bottleneck"], rows)
        return (f"TokenCurve(pool {self.pool!r}; without the pool X = "
                f"{fmt(self.unconstrained)})\n{tab}")


def throughput_vs_tokens(net: Network, pool: TokenPool | str,
                         tokens: Iterable[int] = range(1, 17)) -> TokenCurve:
    """Throughput as the token count B of ``pool`` varies (by decomposition).

    For each B the pool is given B tokens and :func:`decompose` solves the
    network.  X(B) rises while the pool is the constraint and flattens once
    the next element on its path (or outside it) saturates: then more
    buffers only move the queue (the SPAX XNIF finding, :mod:`qmodels.cases.spax`).
    ``unconstrained`` is X without this pool, the ceiling X(B) tends to.
    """
    p = _get_pool(net, pool)
    bs = []
    for b in tokens:
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
            raise InvalidValueError(
                f"throughput_vs_tokens: tokens must be integers >= 1, got {b!r}"
            )
        bs.append(int(b))
    if not bs:
        raise InvalidValueError("throughput_vs_tokens: tokens is empty")
    K = len(net.stations)
    X, R, W = np.zeros(len(bs)), np.zeros(len(bs)), np.zeros(len(bs))
    U, Q = np.zeros((len(bs), K)), np.zeros((len(bs), K))
    bott = []
    notes: dict = {}
    warned: dict = {}
    worst = None
    for i, b in enumerate(bs):
        newp = dataclasses.replace(p, tokens=b)
        pools = tuple(newp if q is p else q for q in net.pools)
        r = decompose(dataclasses.replace(net, pools=pools))
        X[i] = r.class_throughput[0]
        R[i] = r.class_response_time[0]
        W[i] = r.info["pools"][p.name]["waiting"] if p.name in r.info["pools"] else 0.0
        U[i] = r.station_utilization.sum(axis=0)
        Q[i] = r.station_queue_length.sum(axis=0)
        bott.append(", ".join(r.bottleneck))
        notes.update(dict.fromkeys(r.notes))
        warned.update(dict.fromkeys(r.warnings))
        worst = _worse(worst, r.error)
    free = dataclasses.replace(net, pools=tuple(q for q in net.pools if q is not p))
    unc = float(decompose(free).class_throughput[0])
    return TokenCurve(pool=p.name, tokens=np.array(bs), throughput=X, response_time=R,
                      waiting=W, utilization=U, queue_length=Q, bottleneck=tuple(bott),
                      station_names=net.station_names, unconstrained=unc,
                      notes=tuple(notes), warnings=tuple(warned), error=worst)


def _worse(a, b):
    """The larger of two error envelopes (by their largest X or R error; an
    unmeasured one, ``validated`` False, counts as the larger)."""
    def size(e):
        if not e:
            return -1.0
        if not e.get("validated", False):
            return float("inf")
        return max(e["X"]["max"], e["R"]["max"])
    return a if size(a) >= size(b) else b
