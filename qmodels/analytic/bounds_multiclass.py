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
    """Asymptotic bounds of a closed class in a network with token pools.

    Notes
    -----
    A :class:`~qmodels.model.TokenPool` of B tokens held over the stations
    of its span (from ``acquire`` to ``release``) is a station for the
    bounds.  Let H = sum_{k in span} D_k / sigma_k be the least time a job
    holds a token per cycle (its own service in the span).  Operational
    arguments (Denning & Buzen 1978), valid for any service distribution:

    * Little's law on the tokens: X H <= mean tokens held <= B, so
      X <= B / H;
    * the utilisation law and a job's own service: X <= 1 / D_max and
      X <= N / (D + Z) (QSP Table 5.3);
    * pessimistic: whenever a job is in the system outside the delay
      stations, some station is working: a job waiting for a token finds
      all B tokens held by jobs in the span, each at a queue (busy) or at a
      delay station of the span.  Counting span delays as stations, the
      probability that any job is there is at most X (D_p + D_span-delay),
      with D_p = sum D_k / a_min,k over the queues, and at most N jobs are
      there, so R <= N (D_p + D_span-delay) + D_other-delay.

    BJB, GB and PB need product form, which a pool that can bind breaks:
    they are not given.  The span is read from the routing
    (:func:`qmodels.decomposition.pool_span`): a class given by visits, a
    pool used by several classes, or spans that overlap (possible deadlock)
    are refused with :class:`~qmodels.errors.UnsupportedModelError` naming
    the pool.
    """
    from .decomposition import pool_span

    ci = _class_of(net, cls)
    c = net.classes[ci]
    if len(net.classes) > 1 or not isinstance(c, Closed):
        p = net.pools[0]
        raise UnsupportedModelError(
            f"token pool {p.name!r}: bounds with token pools are for one closed class; "
            "no bound is proven here: use method='ctmc' or 'sim'")
    if net.is_symbolic:
        raise UnsupportedModelError(
            f"token pool {net.pools[0].name!r}: bounds with token pools are numeric")
    spans = {}
    for p in net.pools:
        try:
            spans[p.name] = pool_span(net, p)
        except UnsupportedModelError as e:
            raise UnsupportedModelError(
                f"token pool {p.name!r}: its span is needed to bound the model ({e})") from None
    seen: dict = {}
    for p in net.pools:
        for st in spans[p.name]:
            if st in seen:
                raise UnsupportedModelError(
                    f"token pools {seen[st]!r} and {p.name!r} both span station {st!r}: "
                    "overlapping pools can deadlock; no bound is proven")
            seen[st] = p.name
    N = int(c.population)
    Z = float(c.think_time)
    opt, pes, nc, delay, _ = _bound_demands(net, ci)
    D = np.asarray(net.demands[ci], dtype=float)
    span_delay = sum(D[k] for k, s in enumerate(net.stations)
                     if isinstance(s, Delay) and s.name in seen)
    other_delay = float(delay) - span_delay
    D_nc = sum(nc) + float(delay)
    xmax = 1 / max(opt) if opt else math.inf
    xh = min(xmax, N / (D_nc + Z)) if (D_nc + Z) > 0 else xmax
    limits = []
    for p in net.pools:
        H = sum(D[net.station_index(st)] / float(job_speed(net.station(st)))
                for st in spans[p.name])
        if H > 0:
            limits.append(f"pool {p.name!r}: X <= {p.tokens}/{fmt(H)} = {fmt(p.tokens / H)}")
            xh = min(xh, p.tokens / H)
    r_hi = N * (sum(pes) + span_delay) + other_delay
    if N == 0:
        xl = xh = 0.0
        r_hi = sum(pes) + float(delay)
    else:
        xl = float(N / (r_hi + Z))
    rl = max(D_nc, N / xh - Z) if N > 0 else D_nc
    xl, xh, rl, r_hi = (float(v) for v in (xl, xh, rl, r_hi))
    aba = (xl, xh, rl, r_hi)
    pn = ", ".join(repr(p.name) for p in net.pools)
    notes = (*limits,
             f"token pool(s) {pn}: BJB, GB and PB need product form and are not given")
    return Bounds(net, c.name, N, xl, xh, rl, r_hi, aba, None, xmax,
                  saturation_population(net, c.name), bottleneck(net, c.name), notes=notes)
