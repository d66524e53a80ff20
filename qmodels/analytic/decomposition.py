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
* One closed class, numeric parameters, routing given (the sub-path a pool
  spans is read from the routing graph).
* Each pool is entered only through ``acquire`` and left only from
  ``release``; pools do not overlap (no station in two pools' spans).
* The sub-network and the outer network are product form (exponential
  FCFS, PS, delay, multi-server and load-dependent stations, no binding
  finite capacity).
* A job waiting for a token is in no station (as in :mod:`qmodels.analytic.ctmc` and
  the simulator): it counts in the class response time and in
  ``result.info["pools"][name]["waiting"]``, not in any station's Q.

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
case measured.  Compare with ``method="ctmc"`` or ``method="sim"`` for your
own network.

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

import numpy as np

from .._format import fmt, format_table
from ..errors import InvalidValueError, UnsupportedModelError
from ..model.network import Closed, LoadDependent, Network, TokenPool
from ..results import Curve, Result
from .mva import mva_single

__all__ = ["decompose", "throughput_vs_tokens", "pool_span", "TokenCurve"]


# ---------------------------------------------------------------------------
# the sub-path a pool spans
# ---------------------------------------------------------------------------

def pool_span(net: Network, pool: TokenPool | str) -> tuple:
    """Stations a job visits while it holds a token of ``pool``.

    From ``acquire``, every station reachable in the class routing without
    going on from ``release``; ``release`` is included.  Raises
    :class:`UnsupportedModelError` when the routing lets a job into the span
    other than through ``acquire`` (it would be inside without a token) and
    when the class has no routing.
    """
    pool = _get_pool(net, pool)
    cls = _the_class(net)
    if cls.routing is None:
        raise UnsupportedModelError(
            f"token pool {pool.name!r}: class {cls.name!r} gives visits or demands, not "
            "routing, so the stations the pool spans are unknown; give routing"
        )
    succ: dict[str, list[str]] = {}
    for src, row in cls.routing.items():
        succ[src] = [dst for dst, p in row.items() if float(p) > 0]
    span = [pool.acquire]
    seen = {pool.acquire}
    frontier = [pool.acquire]
    while frontier:
        s = frontier.pop()
        if s == pool.release:
            continue
        for d in succ.get(s, ()):
            if d not in seen:
                seen.add(d)
                span.append(d)
                frontier.append(d)
    if pool.release not in seen:
        raise UnsupportedModelError(
            f"token pool {pool.name!r}: station {pool.release!r} (release) cannot be reached "
            f"from {pool.acquire!r} (acquire) in class {cls.name!r}'s routing"
        )
    for src, dests in succ.items():
        for d in dests:
            if d in seen and d != pool.acquire and (src not in seen or src == pool.release):
                raise UnsupportedModelError(
                    f"token pool {pool.name!r}: routing {src!r} -> {d!r} enters the pool's "
                    f"sub-path other than through {pool.acquire!r} (acquire); decomposition "
                    "needs a single entry point"
                )
    order = [s for s in net.station_names if s in seen]
    return tuple(order)


def _get_pool(net: Network, pool: TokenPool | str) -> TokenPool:
    if isinstance(pool, TokenPool):
        if pool not in net.pools:
            raise UnsupportedModelError(f"token pool {pool.name!r} is not one of the network's")
        return pool
    for p in net.pools:
        if p.name == pool:
            return p
    from ..errors import UnknownNameError

    raise UnknownNameError(f"unknown token pool {pool!r}")


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

def _log_g_complement(net_c: Network | None, Z: float, N: int) -> np.ndarray:
    """log G(m), m = 0..N, of the outer network without one FES.

    From the complement network's throughput, G(m) = G(m-1) / X(m)
    ([Bolch] eq. 8.30 read backwards), G(0) = 1.  With no stations left it
    is the think time alone: G(m) = Z^m / m!.
    """
    out = np.full(N + 1, -np.inf)
    out[0] = 0.0
    if net_c is None:
        if Z > 0:
            m = np.arange(N + 1)
            out = m * math.log(Z) - np.array([math.lgamma(i + 1) for i in m])
        return out
    r = mva_single(net_c.with_population(N), curve=True)
    X = np.asarray(r.curve.throughput, dtype=float)
    with np.errstate(divide="ignore"):
        out[1:] = -np.cumsum(np.log(X[1:]))
    return out


def _fes_marginals(log_f: np.ndarray, log_gc: np.ndarray, N: int) -> np.ndarray:
    """p(j | n) for n = 0..N, j = 0..n: rows n, columns j (zero-padded).

    p(j | n) = f(j) G_c(n - j) / sum_i f(i) G_c(n - i)   ([Bolch] eq. 8.13).
    """
    P = np.zeros((N + 1, N + 1))
    for n in range(N + 1):
        lp = log_f[: n + 1] + log_gc[n::-1]
        top = np.max(lp)
        w = np.exp(lp - top)
        P[n, : n + 1] = w / w.sum()
    return P


@dataclass
class _Sub:
    pool: TokenPool
    span: tuple
    B: int
    X: np.ndarray       # X_sub(n), n = 0..Bm
    Q: np.ndarray       # (Bm + 1, len(span))
    U: np.ndarray
    v_acq: float


def _solve_sub(net, pool, span, N) -> _Sub:
    cls = net.classes[0]
    k_acq = net.station_index(pool.acquire)
    V = np.asarray(net.visits[0], dtype=float)
    v_acq = float(V[k_acq])
    B = int(pool.tokens)
    Bm = max(1, min(B, N))
    stations = [net.station(s) for s in span]
    visits = {s: V[net.station_index(s)] / v_acq for s in span}
    service = None
    if cls.service is not None:
        service = {s: t for s, t in cls.service.items() if s in visits}
    sub = Network(
        stations,
        [Closed(cls.name, Bm, visits=visits, service=service or None)],
        name=f"{pool.name} sub-network",
    )
    r = mva_single(sub, curve=True)
    X = np.asarray(r.curve.throughput, dtype=float)
    if not np.all(X[1:] > 0) or not np.all(np.isfinite(X)):
        raise InvalidValueError(
            f"token pool {pool.name!r}: the sub-network {list(span)} has throughput "
            f"{X[1:].tolist()}; it needs a positive, finite demand"
        )
    return _Sub(pool, span, B, X, np.asarray(r.curve.queue_length, dtype=float),
                np.asarray(r.curve.utilization, dtype=float), v_acq)


def _applies(pool, cls):
    return pool.classes is None or cls.name in pool.classes


def _decompose(net: Network, *, curve: bool = False):
    if net.is_symbolic:
        raise UnsupportedModelError(
            "decomposition is numeric; this network has sympy symbols"
        )
    cls = _the_class(net)
    N = int(cls.population)
    Z = float(cls.think_time)
    pools = [p for p in net.pools if _applies(p, cls)]
    spans = {}
    owner: dict[str, str] = {}
    for p in pools:
        span = pool_span(net, p)
        for s in span:
            if s in owner:
                raise UnsupportedModelError(
                    f"token pools {owner[s]!r} and {p.name!r} overlap at station {s!r}; "
                    "decomposition needs non-overlapping pools (use method='ctmc' or 'sim')"
                )
            owner[s] = p.name
        if Z > 0 and cls.reference is not None and cls.reference in span \
                and cls.reference != p.acquire:
            raise UnsupportedModelError(
                f"class {cls.name!r}: the think time is spent before reference station "
                f"{cls.reference!r}, which is inside token pool {p.name!r}'s sub-path; "
                "decomposition needs the think time outside every pool"
            )
        spans[p.name] = span
    if Z > 0 and cls.reference is None:
        first = next(iter(cls.routing)) if cls.routing is not None else None
        for p in pools:
            if first in spans[p.name] and first != p.acquire:
                raise UnsupportedModelError(
                    f"class {cls.name!r}: the think time is spent before reference station "
                    f"{first!r}, which is inside token pool {p.name!r}'s sub-path; "
                    "decomposition needs the think time outside every pool"
                )
    # a pool with tokens >= N never binds, but solving it is still exact
    subs = {p.name: _solve_sub(net, p, spans[p.name], N) for p in pools}

    # -- the outer network ---------------------------------------------------
    V = np.asarray(net.visits[0], dtype=float)
    S = np.asarray(net.service_times[0], dtype=float)
    outer_st, outer_vis, outer_svc = [], {}, {}
    for k, s in enumerate(net.stations):
        if s.name in owner:
            p = owner[s.name]
            sb = subs[p]
            if s.name == sb.pool.acquire:
                X1 = sb.X[1]
                mult = tuple(float(x / X1) for x in sb.X[1:])
                outer_st.append(LoadDependent(p, 1.0 / X1, rate_multipliers=mult))
                outer_vis[p] = sb.v_acq
        else:
            outer_st.append(s)
            outer_vis[s.name] = V[k]
            outer_svc[s.name] = S[k]
    outer_cls = Closed(cls.name, N, visits=outer_vis, service=outer_svc, think_time=Z)
    outer = Network(outer_st, [outer_cls], name=net.name)
    ro = mva_single(outer, curve=True)
    Xn = np.asarray(ro.curve.throughput, dtype=float)      # cycles/s, n = 0..N
    Qo = np.asarray(ro.curve.queue_length, dtype=float)    # (N+1, outer stations)
    Uo = np.asarray(ro.curve.utilization, dtype=float)
    oidx = {s.name: i for i, s in enumerate(outer_st)}

    # -- map back --------------------------------------------------------------
    K = len(net.stations)
    Qn = np.zeros((N + 1, K))
    Un = np.zeros((N + 1, K))
    pool_info = {}
    for k, s in enumerate(net.stations):
        if s.name not in owner:
            Qn[:, k] = Qo[:, oidx[s.name]]
            Un[:, k] = Uo[:, oidx[s.name]]
    for name, sb in subs.items():
        rest = [st for st in outer_st if st.name != name]
        if rest:
            comp = Network(rest, [dataclasses.replace(
                outer_cls,
                visits={st.name: outer_vis[st.name] for st in rest},
                service={k_: v for k_, v in outer_svc.items() if k_ in {st.name for st in rest}},
            )])
        else:
            comp = None
        log_gc = _log_g_complement(comp, Z, N)
        Bm = len(sb.X) - 1
        j = np.arange(N + 1)
        jj = np.minimum(j, Bm)
        rates = sb.X[np.maximum(jj, 1)]
        log_f = np.concatenate([[0.0], np.cumsum(np.log(sb.v_acq / rates[1:]))])
        P = _fes_marginals(log_f, log_gc, N)                # (N+1, N+1)
        for i, st in enumerate(sb.span):
            k = net.station_index(st)
            Qn[:, k] = P @ sb.Q[jj, i]
            Un[:, k] = P @ sb.U[jj, i]
        waiting = P @ np.maximum(j - sb.B, 0)
        held = P @ np.minimum(j, sb.B)
        pool_info[name] = {
            "waiting": float(waiting[N]),
            "held": float(held[N]),
            "tokens": sb.B,
            "span": list(sb.span),
            "fes_throughput": [float(x) for x in sb.X[1:]],
            "p_all_held": float(P[N, sb.B:].sum()) if sb.B <= N else 0.0,
        }
        if curve:
            pool_info[name]["waiting_curve"] = waiting.tolist()

    X = Xn[N]
    Q = Qn[N]
    U = Un[N]
    Xk = X * V
    with np.errstate(divide="ignore", invalid="ignore"):
        Rk = np.where(Xk > 0, Q / np.where(Xk > 0, Xk, 1.0), S)
    R = N / X - Z if X > 0 else float(np.sum(V * S))
    cur = None
    if curve:
        pops = np.arange(N + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            Rc = np.where(Xn > 0, pops / np.where(Xn > 0, Xn, 1.0) - Z, float(np.sum(V * S)))
        cur = Curve(population=pops, throughput=Xn, response_time=Rc, queue_length=Qn,
                    utilization=Un, station_names=net.station_names, class_name=cls.name)
    notes = [
        "flow-equivalent server per token pool (hierarchical decomposition, Lazowska et al. "
        "1984 ch. 9; Chandy, Herzog & Woo 1975): approximate where a pool can bind "
        "(tokens < population), exact where none can",
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
        info={"pools": pool_info, "population": N},
    )


def decompose(net: Network, *, curve: bool = False) -> Result:
    """Solve a closed single-class network with token pools by replacing
    each pool's sub-path with a flow-equivalent server (``method =
    "decomposition"``).

    Parameters
    ----------
    net : Network
        One closed class given by ``routing``; zero or more non-overlapping
        :class:`~qmodels.model.TokenPool` s, each entered only at its
        ``acquire`` station.
    curve : bool
        Also give figures for populations 0..N (``result.curve``).

    Returns
    -------
    Result
        Station figures for every original station; ``info["pools"]``
        gives per pool the mean number ``waiting`` for a token, the mean
        number ``held``, the ``span``, the FES rates X_sub(1..B) and
        ``p_all_held``, the probability that every token is taken.

    Raises
    ------
    UnsupportedModelError
        Several classes, an open class, symbolic parameters, no routing,
        a second entry into a pool's sub-path, overlapping pools, a think
        time spent inside a pool.

    Notes
    -----
    See the module docstring: X_sub(n) for n = 1..B by exact MVA of the
    sub-network; FES rate X_sub(min(n, B)); outer network by exact MVA;
    inner figures by mixing over the FES marginal p(j | N) = f(j)
    G_c(N - j) / G(N) with f(j) = prod_{i<=j} V_acq / X_sub(min(i, B))
    ([Bolch] eq. 8.13; [QSP] ch. 9).  Approximate when a pool can bind
    (tokens < population); exact when no pool binds ([CHW]).

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
    return _decompose(net, curve=curve)


# ---------------------------------------------------------------------------
# throughput versus tokens
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TokenCurve:
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
    free = dataclasses.replace(net, pools=tuple(q for q in net.pools if q is not p))
    unc = float(decompose(free).class_throughput[0])
    return TokenCurve(pool=p.name, tokens=np.array(bs), throughput=X, response_time=R,
                      waiting=W, utilization=U, queue_length=Q, bottleneck=tuple(bott),
                      station_names=net.station_names, unconstrained=unc)
