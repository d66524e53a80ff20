"""Bounds of one class in a network with other classes or with token
pools: the multi-class asymptotic bounds (:func:`multiclass_bounds`) and
the asymptotic bounds with each pool as a station (:func:`pool_bounds`).
Both return a :class:`~.bounds.Bounds`; :func:`~.bounds.bounds` sends
such models here.
"""

from __future__ import annotations

import math

import numpy as np

from .._format import fmt
from ..errors import UnsupportedModelError
from ..model.network import Closed, Delay, Network, Queue
from ..model.pools import class_pool_span
from .bounds import Bounds
from .laws import (
    _bound_demands,
    _class_of,
    bottleneck,
    job_speed,
    saturation_population,
)

__all__ = ["multiclass_bounds", "pool_bounds"]


def multiclass_bounds(net: Network, cls: str) -> Bounds:
    """Asymptotic bounds of class ``cls`` in a product-form network with
    other classes (closed, open or both).

    Notes
    -----
    Let N_j be the closed populations, lambda_j the open arrival rates,
    U_k = sum_{open j} lambda_j D_jk the open load of station k, and
    n_k(c) = sum_{closed j visiting k} N_j - 1 the most other closed jobs a
    class-c arrival can find at k.  By the arrival theorem (Reiser &
    Lavenberg, "Mean-value analysis of closed multichain queuing networks",
    JACM 27(2), 1980) a class-c job finds at k the mean queue Q_k of the
    network with one class-c job less, so for a station whose rate with n
    jobs is a(n)/S_k, a(n) >= a_min::

        R_ck <= w_k (1 + Q_k),   w_k = D_ck / (a_min (1 - U_k))

    (U_k = 0 without open classes; with open load the station must be a
    single server: the mixed-network MVA, QSP sec. 7.4.3).  The Q_k are at
    most n_k(c) each and at most |N| - 1 together, so the worst case puts
    them at the largest w_k first (pessimistic)::

        R_c <= D_c,delay + sum_k w_k + max { sum_k w_k Q_k :
                                            0 <= Q_k <= n_k(c), sum Q_k <= |N| - 1 }

    and X_c >= N_c / (Z_c + R_c^+).  This is at least as tight as both
    published lower bounds that are valid: N_c / (Z_c + |N| D_c) (every
    queue full) and Kerola's balanced-system bound N_c / (D_c + (|N| - 1)
    D_max,c) (T. Kerola, "The composite bound method for computing
    throughput bounds in multiple class environments", Purdue CSD-TR-475,
    1984; Octave ``qncmbsb``).  Optimistically, a job's time per visit is
    at least S_k / sigma_k (:func:`job_speed`) and the utilisation law
    bounds every station's work, sum_j X_j D_jk <= a_max,k, so with the
    other classes' lower bounds::

        X_c <= min(N_c / (Z_c + D_c / sigma),
                   min_k (a_max,k - U_k - sum_{closed j != c} X_j^- D_jk) / D_ck)

    This is the per-class ABA of Octave queueing's ``qncmaba`` (M.
    Marzolla; Lazowska et al. 1984 ch. 5) with two corrections that make
    it a bound for every product-form network: its lower bound
    N_c / (sum_j N_j D_j + Z_c) is not one when another class's demand at a
    shared station is small (under processor sharing a class-c job is
    slowed by every other job present, whatever its demand; see the tests),
    so the job count above replaces it; and the utilisation of the other
    classes tightens the upper bound.  For an open class c the same
    reasoning gives D_c / sigma <= R_c <= R_c^+ (all |N| closed jobs may be
    found).  Kerola's upper bound is not given: it assumes no think time.
    """
    from ..errors import UnstableError

    if net.is_symbolic:
        raise UnsupportedModelError(
            "multi-class bounds are numeric; this network has sympy symbols")
    ci = net.class_index(cls)
    c = net.classes[ci]
    D = np.asarray(net.demands, dtype=float)
    C, K = D.shape
    closed = [j for j, k in enumerate(net.classes) if isinstance(k, Closed)]
    opened = [j for j, k in enumerate(net.classes) if not isinstance(k, Closed)]
    pops = {j: int(net.classes[j].population) for j in closed}
    lam = {j: float(net.classes[j].arrival_rate) for j in opened}
    queues = [k for k, s in enumerate(net.stations) if not isinstance(s, Delay)]
    U = np.zeros(K)
    for k in queues:
        s = net.stations[k]
        U[k] = sum(lam[j] * D[j, k] for j in opened)
        if U[k] >= float(s.max_rate_multiplier) and U[k] > 0:
            raise UnstableError(
                f"station {s.name!r}: open load {U[k]:.6g} >= its capacity "
                f"{float(s.max_rate_multiplier):g} (open classes saturate it)",
                station=s.name, rho=U[k] / float(s.max_rate_multiplier))

    total_closed = sum(pops.values())

    def r_upper(j):
        """Pessimistic response time of class j (delays included): each
        visited queue contributes w_k (1 + Q_k) with w_k = D_jk / (a_min
        (1 - U_k)); the Q_k (other closed jobs found there) are at most
        n_k(j) each and at most |N| - 1 together, and the worst split puts
        them at the largest w_k first."""
        tot = 0.0
        w, cap = [], []
        for k, s in enumerate(net.stations):
            d = D[j, k]
            if d == 0:
                continue
            if isinstance(s, Delay):
                tot += d
                continue
            visitors = sum(pops[i] for i in closed if D[i, k] > 0)
            others = visitors - (1 if j in closed else 0)
            amin = float(s.min_rate_multiplier)
            if U[k] > 0:
                if visitors > 0 and not (isinstance(s, Queue) and s.servers == 1):
                    raise UnsupportedModelError(
                        f"station {s.name!r}: open and closed classes share a multi-server or "
                        "load-dependent station; no multi-class bound is proven there")
                if U[k] >= amin:
                    return math.inf
            # open load alone at k: the station is never slower than one
            # server of rate a_min (an M/M/1 of load U/a_min bounds it)
            w.append(d / amin / (1 - U[k] / amin))
            cap.append(others)
        budget = total_closed - (1 if j in closed else 0)
        tot += sum(w)
        for wk, ck in sorted(zip(w, cap), reverse=True):
            q = min(ck, budget)
            tot += wk * q
            budget -= q
            if budget <= 0:
                break
        return tot

    x_lo = {}
    for j in closed:
        nj = pops[j]
        x_lo[j] = nj / (net.classes[j].think_time + r_upper(j)) if nj > 0 else 0.0
    opt, _, nc, delay, _ = _bound_demands(net, ci)
    D_nc = sum(nc) + delay
    r_hi = r_upper(ci)
    notes = ("multi-class: asymptotic bounds given every class's population and demands "
             "(arrival theorem); BJB, GB and PB are single-class only",)
    bn = bottleneck(net, c.name)
    if isinstance(c, Closed):
        N = pops[ci]
        if N == 0:
            aba = (0.0, 0.0, D_nc, r_hi)
            return Bounds(net, c.name, 0, 0.0, 0.0, D_nc, r_hi, aba, None,
                          1 / max(opt), None, bn, notes=notes)
        Z = float(c.think_time)
        xh = N / (Z + D_nc)
        for k in queues:
            if D[ci, k] > 0:
                s = net.stations[k]
                room = float(s.max_rate_multiplier) - U[k] - sum(
                    x_lo[j] * D[j, k] for j in closed if j != ci)
                xh = min(xh, max(room, 0.0) / D[ci, k])
        xl = x_lo[ci]
        rl = max(D_nc, N / xh - Z) if xh > 0 else math.inf
        xl, xh, rl, r_hi = (float(v) for v in (xl, xh, rl, r_hi))
        aba = (xl, xh, rl, r_hi)
        return Bounds(net, c.name, N, xl, xh, rl, r_hi, aba, None, 1 / max(opt), None, bn,
                      notes=notes)
    lc = lam[ci]
    aba = (lc, lc, D_nc, r_hi)
    return Bounds(net, c.name, lc, lc, lc, D_nc, r_hi, aba, None, 1 / max(opt), None, bn,
                  notes=notes)


# ---------------------------------------------------------------------------
# token pools
# ---------------------------------------------------------------------------

def pool_bounds(net: Network, cls: str | None = None) -> Bounds:
    """Asymptotic bounds of a closed class in a network of closed classes
    with token pools.

    Notes
    -----
    A :class:`~qmodels.model.TokenPool` of B tokens held over the stations
    of its span (from ``acquire`` to ``release``, read per class from its
    routing or from the pool's ``path``) is a station for the bounds.  Let
    H_jp = sum_{k in span_j(p)} D_jk / sigma_k be the least time a class-j
    job holds a token of p per cycle (its own service in the span).
    Operational arguments (Denning & Buzen 1978), valid for any service
    distribution:

    * Little's law on the tokens: sum_j X_j H_jp <= mean tokens held <= B;
    * the utilisation law, sum_j X_j D_jk <= a_max,k, and a job's own
      service, X_c <= N_c / (Z_c + D_c) (QSP Table 5.3);
    * pessimistic: call a job *active* when it is neither thinking nor at a
      delay station outside every span.  An active job is at a queue (which
      is then busy), at a delay inside a span, or waiting for a token; the
      holders of that token are in its span, each again at a queue, at a
      span delay, or waiting for another pool's token.  If no cycle of
      "holds p while waiting for q" is possible (checked on the spans:
      otherwise the pools can deadlock and the bounds refuse), every such
      chain ends at a busy queue or a span delay, so
      P(some job active) <= sum_k P(queue k busy) + sum_d P(span delay d
      occupied) <= sum_j X_j E_j with E_j = sum_k D_jk / a_min,k +
      sum_{span delays} D_jd.  A class-c job is active for R_c - D_c,out of
      its cycle (D_c,out its demand at the other delays), and at most N_c are
      active at a time, so N_c - X_c (Z_c + D_c,out) <= N_c sum_j X_j E_j:

          X_c >= N_c (1 - sum_{j != c} X_j^+ E_j) / (Z_c + D_c,out + N_c E_c)

      (for one class, R <= N E + D_out).  The other classes' upper bounds
      X_j^+ enter the lower bound and their lower bounds tighten the upper
      ones (utilisation and token laws): one pass each way.

    BJB, GB and PB need product form, which a pool that can bind breaks:
    they are not given.  Refused with :class:`~qmodels.errors.UnsupportedModelError`
    naming the pool: open classes, a class given by visits when the pool has
    no ``path`` (its span is unknown), routing that enters a span other than
    through ``acquire``, and pools that can wait on each other in a cycle.
    Finite capacities that can bind are refused before (blocking).
    """
    import networkx as nx

    ci = _class_of(net, cls)
    if not all(isinstance(k, Closed) for k in net.classes):
        p = net.pools[0]
        raise UnsupportedModelError(
            f"token pool {p.name!r}: bounds with token pools are for closed classes; "
            "no bound is proven with open classes here: use method='ctmc' or 'sim'")
    if net.is_symbolic:
        raise UnsupportedModelError(
            f"token pool {net.pools[0].name!r}: bounds with token pools are numeric")
    spans = _pool_spans(net)
    order = {p.name: i for i, p in enumerate(net.pools)}
    waits = nx.DiGraph()
    for p in net.pools:
        for q in net.pools:
            if p is q:
                continue
            for j, span in spans[p.name].items():
                same = q.acquire == p.acquire
                if j in spans[q.name] and q.acquire in span and (
                        not same or order[p.name] < order[q.name]):
                    waits.add_edge(p.name, q.name)
    if not nx.is_directed_acyclic_graph(waits):
        cycle = " -> ".join(u for u, _ in nx.find_cycle(waits))
        raise UnsupportedModelError(
            f"token pools {cycle}: a job can hold one while waiting for the next, round a "
            "cycle (the pools can deadlock); no bound is proven: use method='ctmc' or 'sim'")
    return _pool_bounds_of(net, ci, spans)


def _pool_spans(net: Network) -> dict:
    """{pool name: {class index: span}} over the classes that take a token
    (the pool's ``classes``, and visiting its ``acquire`` station)."""
    out: dict = {}
    for p in net.pools:
        k = net.station_index(p.acquire)
        out[p.name] = {}
        for j, c in enumerate(net.classes):
            if (p.classes is not None and c.name not in p.classes) or net.visits[j, k] <= 0:
                continue
            try:
                out[p.name][j] = class_pool_span(net, p, c)
            except UnsupportedModelError as e:
                raise UnsupportedModelError(
                    f"token pool {p.name!r}: its span is needed to bound the model ({e})"
                ) from None
    return out


def _pool_bounds_of(net: Network, ci: int, spans: dict) -> Bounds:
    """The bounds of :func:`pool_bounds` for class ``ci``."""
    C = len(net.classes)
    D = np.asarray(net.demands, dtype=float)
    N = np.array([float(k.population) for k in net.classes])
    Z = np.array([float(k.think_time) for k in net.classes])
    in_span = {st for per in spans.values() for span in per.values() for st in span}
    E, out, nc = np.zeros(C), np.zeros(C), np.zeros(C)
    for k, s in enumerate(net.stations):
        if isinstance(s, Delay):
            (E if s.name in in_span else out)[:] += D[:, k]
            nc += D[:, k]
        else:
            E += D[:, k] / float(s.min_rate_multiplier)
            nc += D[:, k] / float(job_speed(s))
    speed = np.array([float(job_speed(s)) for s in net.stations])
    H = {p.name: np.array([sum(D[j, net.station_index(st)] / speed[net.station_index(st)]
                               for st in spans[p.name].get(j, ())) for j in range(C)])
         for p in net.pools}
    queues = [k for k, s in enumerate(net.stations) if not isinstance(s, Delay)]
    amax = {k: float(net.stations[k].max_rate_multiplier) for k in queues}

    def upper(j, lo):
        """X_j^+ given the other classes' lower bounds ``lo``."""
        if N[j] == 0:
            return 0.0
        x = N[j] / (Z[j] + nc[j]) if Z[j] + nc[j] > 0 else math.inf
        for k in queues:
            if D[j, k] > 0:
                room = amax[k] - sum(lo[i] * D[i, k] for i in range(C) if i != j)
                x = min(x, max(room, 0.0) / D[j, k])
        for p in net.pools:
            if H[p.name][j] > 0:
                room = p.tokens - sum(lo[i] * H[p.name][i] for i in range(C) if i != j)
                x = min(x, max(room, 0.0) / H[p.name][j])
        return x

    zero = np.zeros(C)
    xu0 = np.array([upper(j, zero) for j in range(C)])
    lo = np.zeros(C)
    for j in range(C):
        den = Z[j] + out[j] + N[j] * E[j]
        if N[j] > 0 and den > 0:
            others = sum(xu0[i] * E[i] for i in range(C) if i != j)
            lo[j] = max(0.0, N[j] * (1.0 - others)) / den
    xh = min(xu0[ci], upper(ci, lo))
    xl = min(lo[ci], xh)
    c = net.classes[ci]
    n = int(c.population)
    if n == 0:
        # a job of an empty class: alone it is served at the slowest rates
        # at worst; beside other classes' jobs no bound on its wait is proven
        xl = xh = 0.0
        rl = float(nc[ci])
        r_hi = float(E[ci] + out[ci]) if N.sum() == 0 else math.inf
    else:
        rl = max(float(nc[ci]), n / xh - Z[ci]) if xh > 0 else math.inf
        r_hi = n / xl - Z[ci] if xl > 0 else math.inf
    limits = [f"pool {p.name!r}: X <= {p.tokens}/{fmt(H[p.name][ci])} = "
              f"{fmt(p.tokens / H[p.name][ci])}" for p in net.pools if H[p.name][ci] > 0]
    pn = ", ".join(repr(p.name) for p in net.pools)
    notes = (*limits,
             f"token pool(s) {pn}: BJB, GB and PB need product form and are not given")
    if C > 1:
        notes += ("several classes: every class's population, demands and token holding "
                  "enter the bounds (one pass of the others' bounds each way)",)
    opt = [D[ci, k] / amax[k] for k in queues if D[ci, k] > 0]
    xmax = 1 / max(opt) if opt else math.inf
    xl, xh, rl, r_hi = (float(v) for v in (xl, xh, rl, r_hi))
    aba = (xl, xh, rl, r_hi)
    nstar = saturation_population(net, c.name) if C == 1 else None
    return Bounds(net, c.name, n, xl, xh, rl, r_hi, aba, None, xmax, nstar,
                  _tightest(net, ci, D, amax, H), notes=notes)


def _tightest(net: Network, ci: int, D, amax: dict, H: dict) -> tuple:
    """The station(s) or pool(s) whose own limit on class ci's throughput
    is lowest: a_max,k / D_k for a station (QSP sec. 5.2), B / H for a pool
    (Little's law on its tokens).  A pool competes for the bottleneck like
    any station."""
    lim = {net.stations[k].name: amax[k] / D[ci, k] for k in amax if D[ci, k] > 0}
    lim.update({p.name: p.tokens / H[p.name][ci] for p in net.pools if H[p.name][ci] > 0})
    if not lim:
        return ()
    top = min(lim.values())
    return tuple(name for name, x in lim.items() if x <= top * (1 + 1e-9))
