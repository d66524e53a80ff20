"""Whitt's Queueing Network Analyzer (QNA) for open networks with general
service and arrival shapes (``method="qna"``): an APPROXIMATION, exact
where a station's queue has an exact solution (below).

W. Whitt, "The Queueing Network Analyzer", Bell System Technical Journal
62(9):2779-2815, 1983 (below: Whitt 1983).  Each flow is described by its
rate and its squared coefficient of variation (SCV); each station is then
solved as an independent GI/G/m queue given the two moments of its arrival
and service times.

Assumptions
-----------
* Open classes only (closed: ``method="mva-residual"``; mixed: refused).
  No token pools, no finite capacities, no load-dependent stations
  (:class:`~qmodels.errors.UnsupportedModelError` naming them).
* Routing: a class with ``routing`` (or a ``route``, a fixed path) uses
  its routing matrix; a class given by visits or demands is routed at
  random exactly as the simulator does (:mod:`qmodels.sim.flatten`,
  "Routing of a class given by visits"), so the analytic and the simulated
  model are the same system; outside product form the result then warns
  that it is not a path, and how to give one (``route=[...]``).
* External arrivals of a class form a renewal process of SCV
  ``interarrival.scv`` (default Poisson, SCV 1), split at random among the
  stations where the class enters.  A Markovian arrival process
  (:class:`~qmodels.model.map.MAP`, correlated intervals) enters as the
  renewal flow of variability its asymptotic index of dispersion
  (:func:`map_variability`), never as exact.
* Service times of every class at a station have the station's
  ``distribution`` shape (default exponential) with the class's mean.
* Classes are aggregated per station (Whitt 1983, the section on multiple classes): one arrival
  flow, one service mean and SCV from the class mix.

What is exact (``Result.exactness == "exact"`` when it holds at every
visited station; :func:`station_solutions` decides per station):

* a delay (R = S whatever arrives);
* an FCFS queue fed by Poisson flows only (external Poisson streams, or
  flows out of a part of the network in which every flow QNA describes has
  SCV 1: exponential stations of one mean for all classes, delays), which
  does not feed itself back: M/G/1 by Pollaczek-Khinchine, M/M/c by
  Erlang C; on a cycle of such stations, a Jackson network (M/M/c);
* a PS or LCFS-PR queue fed as product form allows (BCMP types 2 and 4:
  everything upstream of it Poisson-fed and product form);
* an FCFS queue with exponential service and c servers fed by one
  external renewal stream of one open class alone (randomly split among
  entry stations or not), with no other class, no feedback and no other
  station routing to it: a GI/M/c queue, solved exactly from the Laplace
  transform of the inter-arrival time (:func:`gi_m_c_wait`; the transforms
  in :mod:`qmodels.analytic.queues.transforms`).

Everything else is the two-moment approximation (KLB, Allen-Cunneen), and
so is every flow between stations: Whitt's departure SCV, also out of a
station solved exactly.  Over 60 random open networks
(``python -m validation.nonexp``, table in ``validation/nonexp_table.md``)
the class response time was within 29 % of the simulator's, 6.2 % on
average (ignoring the shapes: 95 %, 17 %); the documented tolerance is
35 %.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UnstableError, UnsupportedModelError
from ..model.distributions import is_exponential
from ..model.map import MAP
from ..model.network import SINK, SOURCE, Delay, LoadDependent, Network, Open, Queue
from ..results import APPROXIMATE, EXACT, METHOD_LABELS, Result
from . import requires
from ._common import _open_ld_station, _refuse_held_or_bounded, _require_numeric, _result
from .contract import answers
from .queues.transforms import Transform, thinned, unit_transform

__all__ = ["qna", "gi_m_c_wait", "station_solutions"]

_DELAY, _FCFS, _PS = 0, 1, 2


# ---------------------------------------------------------------------------
# the adapter: Network -> plain arrays (the one place that reads the model)
# ---------------------------------------------------------------------------

def _visit_routing(v: np.ndarray):
    """(p0, P) of a class given by visit ratios ``v``: the simulator's random
    routing (:func:`qmodels.sim.flatten._visit_routing_plain`).  With
    T = sum v >= 1 an arrival enters k with probability v_k / T and after each
    visit leaves with probability 1/T, else goes to j with probability
    (1 - 1/T) v_j / T; with T < 1 it makes one visit, to k with probability
    v_k, or none."""
    K = len(v)
    T = float(v.sum())
    P = np.zeros((K, K))
    if T >= 1.0:
        p0 = v / T
        P[:, :] = np.where(v[:, None] > 0, (1.0 - 1.0 / T) * v[None, :] / T, 0.0)
    else:
        p0 = v.copy()
    return p0, P


def _routing_arrays(cls: Open, index: dict, K: int):
    """(p0, P) from an open class's routing table."""
    p0, P = np.zeros(K), np.zeros((K, K))
    for src, row in cls.routing.items():
        for dst, p in row.items():
            if dst == SINK:
                continue
            if src == SOURCE:
                p0[index[dst]] += float(p)
            else:
                P[index[src], index[dst]] += float(p)
    return p0, P


def _inputs(net: Network):
    """Plain arrays for :func:`qna_kernel`, or a typed refusal naming what
    QNA cannot honour.  Returns (lam (C,), ca2 (C,), p0 (C, K),
    P (C, K, K), S (C, K), cs2 (K,), kind (K,), servers (K,))."""
    solver = "QNA (method='qna')"
    if net.is_symbolic:
        raise UnsupportedModelError(
            f"{solver} is numeric; this network has sympy symbols: substitute numbers, "
            "or use qmodels.symbolic")
    if not net.is_open:
        which = "mixed" if net.is_mixed else "closed"
        raise UnsupportedModelError(
            f"{solver} handles open classes only; this network is {which} (closed classes "
            f"{', '.join(repr(c.name) for c in net.closed_classes)}): use "
            f"{'method=' + repr('mva-residual') if not net.is_mixed else 'method=' + repr('sim')}")
    _require_numeric(net, solver)
    _refuse_held_or_bounded(net, solver)
    K, C = len(net.stations), len(net.classes)
    kind = np.zeros(K, np.int64)
    servers = np.ones(K)
    cs2 = np.ones((C, K))   # per class: a class's own shape at the station
    low = net.lowered
    for k, s in enumerate(net.stations):
        if isinstance(s, LoadDependent):
            raise UnsupportedModelError(
                f"station {s.name!r}: a load-dependent station is not a GI/G/m queue, which QNA "
                "needs: use Queue(servers=c), method='exact' (exponential service) or 'sim'")
        for c in range(C):
            d = low.shapes[c][k]
            cs2[c, k] = 1.0 if is_exponential(d) else float(d.scv)
        if isinstance(s, Delay):
            kind[k] = _DELAY
        elif isinstance(s, Queue) and low.discipline[k] in ("ps", "lcfs-pr"):
            # PS and LCFS-PR are insensitive to the service shape (BCMP types
            # 2 and 4): the product-form value, whatever the SCV
            kind[k] = _PS
            servers[k] = int(s.servers)
        elif isinstance(s, Queue) and low.acts_fcfs[k]:
            kind[k] = _FCFS             # FCFS, or a priority queue one level visits
            servers[k] = int(s.servers)
        else:
            raise UnsupportedModelError(
                f"station {s.name!r}: QNA models FCFS, PS and LCFS-PR queues and delays, not "
                f"{f'discipline {s.discipline!r}' if isinstance(s, Queue) else f'a {s.kind!r}'}"
                f" here: {requires.way_out(net)}")
    index = {s.name: k for k, s in enumerate(net.stations)}
    V = np.asarray(net.visits, dtype=float)
    S = np.asarray(net.service_times, dtype=float)
    lam = np.array([float(c.arrival_rate) for c in net.classes])
    ca2 = np.ones(C)
    p0 = np.zeros((C, K))
    P = np.zeros((C, K, K))
    for c, cls in enumerate(net.classes):
        d = cls.interarrival
        # a MAP stream (correlated intervals): its asymptotic index of
        # dispersion for counts, the asymptotic method's variability
        # parameter (:func:`map_variability`), not its interval SCV
        ca2[c] = (1.0 if is_exponential(d) else map_variability(d) if isinstance(d, MAP)
                  else float(d.scv))
        if cls.routing is not None:
            p0[c], P[c] = _routing_arrays(cls, index, K)
        else:
            p0[c], P[c] = _visit_routing(V[c])
    return lam, ca2, p0, P, S, cs2, kind, servers


def map_variability(m: MAP) -> float:
    """QNA's arrival variability parameter c_a^2 for a Markovian arrival
    process (correlated intervals): its asymptotic index of dispersion for
    counts I = lim Var N(t) / E N(t) (:attr:`MAP.idc`), the *asymptotic
    method* of approximating a point process by a renewal process (Whitt,
    "Approximating a point process by a renewal process, I: two basic
    methods", Oper. Res. 30(1), 1982), which QNA's variability parameter
    stands for (Whitt 1983, sec. 4: c_a^2 is a variability parameter of
    the flow, not a marginal SCV, and for a non-renewal flow the
    asymptotic method is right in heavy traffic); Fendick & Whitt,
    "Measurements and approximations to describe the offered traffic and
    predict the average workload in a single-server queue", Proc. IEEE
    77(1), 1989, argue for the index of dispersion over the interval SCV
    for correlated streams.  The interval SCV alone would treat the stream
    as renewal and miss its correlation; the IDC overstates the wait at
    light load, where the queue sees the stream over short times (the
    answer is labelled approximate and says so)."""
    return float(m.idc)


# ---------------------------------------------------------------------------
# the numeric kernel (plain arrays)
# ---------------------------------------------------------------------------

def erlang_c_prob(c: int, a: float) -> float:
    """Probability of waiting in M/M/c with offered load a = lambda tau < c
    (Erlang C; Kleinrock 1975, sec. 3.5), from Erlang B's recursion
    B(0) = 1, B(n) = a B(n-1) / (n + a B(n-1)) and C = c B / (c - a (1 - B))
    (the identity between Erlang's B and C formulas)."""
    b = 1.0
    for n in range(1, c + 1):
        b = a * b / (n + a * b)
    return c * b / (c - a * (1.0 - b))


def klb_wait(rho: float, tau: float, ca2: float, cs2: float) -> float:
    """GI/G/1 mean wait by Kraemer & Langenbach-Belz (1976), as used by QNA
    (Whitt 1983, the congestion at each node; Kraemer & Langenbach-Belz 1976):
    W = tau rho (ca2 + cs2) / (2 (1 - rho)) g, with
    g = exp(-2 (1 - rho) (1 - ca2)^2 / (3 rho (ca2 + cs2))) for ca2 < 1 and
    g = exp(-(1 - rho) (ca2 - 1) / (ca2 + 4 cs2)) for ca2 >= 1.  With
    ca2 = 1 it is Pollaczek-Khinchine exactly (Kleinrock 1975, eq. 5.85)."""
    if rho <= 0.0:
        return 0.0
    s = ca2 + cs2
    if s <= 0.0:
        return 0.0  # D/D/1 below saturation never waits
    if ca2 < 1.0:
        g = math.exp(-2.0 * (1.0 - rho) * (1.0 - ca2) ** 2 / (3.0 * rho * s))
    else:
        g = math.exp(-(1.0 - rho) * (ca2 - 1.0) / (ca2 + 4.0 * cs2))
    return tau * rho * s / (2.0 * (1.0 - rho)) * g


def allen_cunneen_wait(m: int, rho: float, tau: float, ca2: float, cs2: float) -> float:
    """GI/G/m mean wait by Allen & Cunneen (Allen 1990, ch. on
    G/G/c approximations; QNA's form for m > 1 scales the M/M/m wait the same
    way, Whitt 1983):
    W = (ca2 + cs2) / 2 * C(m, m rho) tau / (m (1 - rho)), the M/M/m wait
    scaled; with ca2 = cs2 = 1 it is Erlang C exactly."""
    if rho <= 0.0:
        return 0.0
    return 0.5 * (ca2 + cs2) * erlang_c_prob(m, m * rho) * tau / (m * (1.0 - rho))


def qna_kernel(lam, ca2_ext, p0, P, S, cs2_st, kind, servers, names):
    """QNA on arrays (``cs2_st`` the service SCV per station (K,), or per
    class and station (C, K) when a class has its own shape there).
    Returns (lamk (C, K) per-class arrival rate at each station, R (C, K)
    per-visit response time, rho (K,) load per server, ca2 (K,) arrival
    SCV, cs2 (K,) aggregate service SCV, W (K,) wait).

    Steps (Whitt 1983):

    1. Traffic rate equations per class: lamk_c = lam_c p0_c (I - P_c)^-1.
    2. Aggregation of the classes: lambda_j = sum_c lamk_cj; routing
       q_ij = sum_c lamk_ci P_cij / lambda_i; service mean
       tau_j = sum_c (lamk_cj / lambda_j) S_cj and SCV
       cs2_j = sum_c (lamk_cj / lambda_j) (S_cj / tau_j)^2 (cs2_cj + 1) - 1;
       external flow into j: rate lambda_0j = sum_c lam_c p0_cj, SCV the
       rate-weighted mean of the thinned class streams p ca2_c + 1 - p
       (splitting a renewal stream at random, Whitt 1983).
    3. Traffic variability equations: departures of i,
       cd2_i = 1 + (1 - rho_i^2)(ca2_i - 1) + rho_i^2 (cs2_i - 1)/sqrt(m_i)
       (m_i = inf for a delay: cd2 = ca2); the flow i -> j has SCV
       q_ij cd2_i + 1 - q_ij (splitting); arrivals to j are the superposition
       ca2_j = w_j sum_i p_ij c_ij^2 + 1 - w_j with p_ij = lambda_i q_ij /
       lambda_j (i = 0 external), w_j = 1 / (1 + 4 (1 - rho_j)^2 (v_j - 1)),
       v_j = 1 / sum_i p_ij^2 (Albin's hybrid weight).  Together:
       ca2_j = a_j + sum_i ca2_i b_ij, a linear system, solved directly.
       Immediate feedback (q_jj > 0, which the random routing of a class
       given by visits always has) is first eliminated as Whitt does
       : the q_jj-loop becomes one longer visit of mean
       tau_j / (1 - q_jj) and SCV q_jj + (1 - q_jj) cs2_j, the flows out
       of j are renormalised by 1 - q_jj.
    4. Congestion at each node: KLB for one server (:func:`klb_wait`),
       Allen-Cunneen for m > 1 (:func:`allen_cunneen_wait`), none at a
       delay.  PS: the product-form (insensitive) value
       S_cj / (1 - rho_j) for one server, the M/M/m-PS birth-death chain
       otherwise (BCMP type 2, insensitive to the service shape;
       Baskett, Chandy, Muntz & Palacios 1975).
    5. Per-class response time per visit: R_cj = S_cj + W_j, with W_j the
       wait per stay of the eliminated station times (1 - q_jj) (the stay
       spread over its mean number of visits; exact for M/M/m).
    """
    C, K = S.shape
    lamk = np.zeros((C, K))
    flow = np.zeros((K, K))  # aggregate rate i -> j
    for c in range(C):
        if lam[c] <= 0:
            continue
        lamk[c] = lam[c] * np.linalg.solve((np.eye(K) - P[c]).T, p0[c])
        flow += lamk[c][:, None] * P[c]
    lamk = np.maximum(lamk, 0.0)
    lj = lamk.sum(axis=0)
    act = lj > 0
    tau = np.zeros(K)
    cs2 = np.ones(K)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(act[None, :], lamk / np.where(act, lj, 1.0)[None, :], 0.0)
        tau[act] = (share * S).sum(axis=0)[act]
        cs2_ck = cs2_st if np.ndim(cs2_st) == 2 else np.asarray(cs2_st)[None, :]
        m2 = (share * S**2 * (cs2_ck + 1.0)).sum(axis=0)
        ok = act & (tau > 0)
        cs2[ok] = m2[ok] / tau[ok] ** 2 - 1.0
    cs2 = np.maximum(cs2, 0.0)
    servers = np.asarray(servers, dtype=float)
    rho = np.where(kind == _DELAY, 0.0, lj * tau / np.where(kind == _DELAY, 1.0, servers))
    for k in range(K):
        if kind[k] != _DELAY and rho[k] >= 1.0:
            raise UnstableError(
                f"station {names[k]!r} is unstable: rho = lambda tau / m = {lj[k]:.6g} * "
                f"{tau[k]:.6g} / {int(servers[k])} = {rho[k]:.6g} >= 1 (QNA needs every "
                "station below saturation)",
                station=names[k], rho=float(rho[k]))
    # immediate feedback eliminated (Whitt 1983): a stay of a
    # geometric number of visits is one visit of mean tau / (1 - q_jj) and
    # SCV q_jj + (1 - q_jj) cs2; flows leave at lambda_j (1 - q_jj)
    qjj = np.where(act, np.diag(flow) / np.where(act, lj, 1.0), 0.0)
    flow = flow - np.diag(np.diag(flow))
    ls = lj * (1.0 - qjj)
    taus = np.where(act, tau / (1.0 - qjj), 0.0)
    cs2s = qjj + (1.0 - qjj) * cs2
    # external flows into each station, and their SCV
    ext = (lam[:, None] * p0)
    l0 = ext.sum(axis=0)
    c02 = np.ones(K)
    for k in range(K):
        if l0[k] > 0:
            thinned = p0[:, k] * ca2_ext + 1.0 - p0[:, k]
            c02[k] = float((ext[:, k] * thinned).sum() / l0[k])
    delay = kind == _DELAY
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(ls[:, None] > 0, flow / np.where(ls > 0, ls, 1.0)[:, None], 0.0)
        x = 1.0 + np.where(delay, 0.0, (cs2s - 1.0) / np.sqrt(np.where(delay, 1.0, servers)))
    A = np.eye(K)
    a = np.ones(K)
    for j in range(K):
        if not act[j]:
            continue
        pin = flow[:, j] / ls[j]  # p_ij
        p0j = l0[j] / ls[j]
        v = 1.0 / (p0j**2 + float((pin**2).sum()))
        w = 1.0 / (1.0 + 4.0 * (1.0 - rho[j]) ** 2 * (v - 1.0))
        a[j] = 1.0 + w * ((p0j * c02[j] - 1.0)
                          + float((pin * ((1.0 - q[:, j]) + q[:, j] * rho**2 * x)).sum()))
        A[j, :] -= w * pin * q[:, j] * (1.0 - rho**2)
    ca2 = np.linalg.solve(A, a)
    ca2 = np.where(act, np.maximum(ca2, 0.0), 1.0)
    W = np.zeros(K)
    R = S.copy()
    for k in range(K):
        if kind[k] == _DELAY or not act[k]:
            continue
        mk = int(servers[k])
        if kind[k] == _FCFS:
            # the wait per stay, spread over its 1 / (1 - q_kk) visits
            Ws = (klb_wait(rho[k], taus[k], ca2[k], cs2s[k]) if mk == 1 else
                  allen_cunneen_wait(mk, rho[k], taus[k], ca2[k], cs2s[k]))
            W[k] = (1.0 - qjj[k]) * Ws
            R[:, k] = S[:, k] + W[k]
        else:
            if mk == 1:
                f = 1.0 / (1.0 - rho[k])
            else:
                load = lj[k] * tau[k]
                qk, _ = _open_ld_station(load, 1.0, tuple(range(1, mk + 1)), names[k])
                f = qk / load
            R[:, k] = S[:, k] * f
            W[k] = tau[k] * (f - 1.0)
    return lamk, R, rho, ca2, cs2, W


# ---------------------------------------------------------------------------
# the exact cases: GI/M/c, and which station is solved how
# ---------------------------------------------------------------------------

_EPS = 2.220446049250313e-16


def gi_m_c_wait(tr: Transform, rho: float, c: int) -> tuple[float, float, float]:
    """Exact mean wait of the GI/M/c queue, in units of the mean service
    time 1/mu: returns (W mu, P(wait), sigma).

    ``tr`` is the transform of the inter-arrival time scaled to mean 1
    (:func:`qmodels.analytic.queues.transforms.unit_transform`), ``rho`` =
    lambda / (c mu) < 1, ``c`` the servers.  Only rho, c and the shape
    matter, so any rates (1e-9 .. 1e9) give the same finite figures.

    * sigma is the root in (0, 1) of sigma = A*(c mu (1 - sigma)) (Kleinrock,
      *Queueing Systems* vol. 1, 1975, sec. 6.4 (m = 1) and 6.5; Gross,
      Shortle, Thompson & Harris, *Fundamentals of Queueing Theory*, 4th ed.,
      2008, sec. 6.3).  In the unit of the mean inter-arrival time
      A*(c mu (1 - sigma)) = A((1 - sigma) / rho), so with x = 1 - sigma the
      root is that of h(x) = (1 - A(x / rho)) - x, found by Brent's method
      (``scipy.optimize.brentq``) on a bracket [lo, 1]: h is concave with
      h(0) = 0, h'(0) = 1/rho - 1 > 0 and h(1) = -A(1/rho) <= 0, so it has
      exactly one root in (0, 1] and is positive left of it; lo is halved
      from 1/2 until h(lo) > 0.  Solving for x = 1 - sigma keeps heavy
      traffic (sigma -> 1) accurate.
    * c = 1: W = sigma / (mu (1 - sigma)), P(wait) = sigma (Kleinrock 1975,
      sec. 6.4).
    * c > 1 (Takacs; Kleinrock 1975, sec. 6.5; Gross et al. 2008, sec. 6.3):
      arrivals find k >= c jobs with probability J sigma^(k - c), so
      P(wait) = J / (1 - sigma) and W = J / (c mu (1 - sigma)^2), with
      1/J = 1/(1 - sigma) + sum_{j=1}^{c} binom(c, j) / (C_j (1 - g_j))
      * (c (1 - g_j) - j) / (c (1 - sigma) - j),
      g_j = A*(j mu), C_j = prod_{i<=j} g_i / (1 - g_i).  The last factor is
      a 0/0 where c (1 - sigma) is an integer (M/M/2 at rho = 1/2): since
      g_j - sigma = A*(j mu) - A*(c mu (1 - sigma)), it equals
      1 - c mu D(j mu, c mu (1 - sigma)) with D(a, b) the divided difference
      (A*(a) - A*(b)) / (b - a) (the transform's ``slope``, -A*'(a) at
      a = b); the terms are summed in logarithms (math.fsum, scaled by the
      largest) so that 1/C_j cannot overflow.  A g_j that underflows to 0
      means arrivals essentially never find a job still in service: J = 0.

    ``tests/test_qna_exact.py`` checks it against the Markov chain of the
    PH/M/c queue (Erlang and hyperexponential arrivals), the chain embedded
    at arrivals (deterministic, empirical, thinned arrivals) and Erlang C
    for c up to 200, to 1e-9 or better.  (The Takacs sum in 60-digit
    arithmetic agreed to 2e-13 for c up to 300 and rho from 0.05 to 0.99,
    deterministic, Erlang, H2 and uniform arrivals, when this was written.)

    >>> from qmodels.analytic.queues.transforms import unit_transform
    >>> w, pw, sigma = gi_m_c_wait(unit_transform(None), 0.5, 2)   # M/M/2
    >>> round(w, 12), round(pw, 12)      # Erlang C: C = 1/3, W mu = C / (c (1 - rho))
    (0.333333333333, 0.333333333333)
    """
    from scipy.optimize import brentq

    if not 0.0 <= rho < 1.0:
        raise UnstableError(f"GI/M/{c}: rho = {rho:.6g} must be below 1", rho=rho)
    if rho == 0.0:
        return 0.0, 0.0, 0.0

    def h(x):
        return tr.complement(x / rho) - x

    if h(1.0) >= 0.0:
        x = 1.0                        # A(1/rho) = 0 (underflow): sigma = 0
    else:
        lo = 0.5
        while not h(lo) > 0.0:
            lo *= 0.5
            if lo < 1e-300:
                raise UnsupportedModelError(
                    f"GI/M/{c} at rho = {rho!r}: the root of sigma = A*(c mu (1 - sigma)) "
                    "lies within 1e-300 of 1 and cannot be resolved in floating point")
        x = brentq(h, lo, 1.0, xtol=1e-300, rtol=4.0 * _EPS, maxiter=500)
    sigma = tr.lst(x / rho)
    if c == 1:
        return sigma / x, sigma, sigma
    u = 1.0 / (c * rho)               # mu in the unit of the mean inter-arrival time
    x0 = c * x                         # c (1 - sigma)
    logs, signs = [-math.log(x)], [1.0]
    acc = 0.0                          # log of 1 / (C_j (1 - g_j))
    for j in range(1, c + 1):
        g = tr.lst(j * u)
        if not g > 0.0:
            return 0.0, 0.0, sigma
        acc -= math.log(g)
        fac = 1.0 - tr.slope(j * u, x0 * u) / rho
        if fac != 0.0:
            lc = math.lgamma(c + 1) - math.lgamma(j + 1) - math.lgamma(c - j + 1)
            logs.append(lc + acc + math.log(abs(fac)))
            signs.append(math.copysign(1.0, fac))
        acc += math.log(tr.complement(j * u))
    top = max(logs)
    total = math.fsum(sg * math.exp(lg - top) for sg, lg in zip(signs, logs))
    if not total > 0.0:
        raise UnsupportedModelError(
            f"GI/M/{c} at rho = {rho!r}: Takacs's sum lost its precision; use method='sim'")
    pwait = min(1.0, math.exp(-top) / total / x)
    return pwait / (c * x), pwait, sigma


def _propagate(adj: np.ndarray, origin: np.ndarray, passes: np.ndarray) -> np.ndarray:
    """Stations reached by a property: ``origin[j]`` marks j, and a marked
    station i marks every j it sends jobs to (``adj[i, j]``); an unmarked
    station i still marks its successors if ``passes[i]`` (it makes the
    property itself).  A search from the seeds, O(K^2)."""
    mark = origin | adj[passes].any(axis=0)
    stack = list(np.flatnonzero(mark))
    while stack:
        i = stack.pop()
        new = adj[i] & ~mark
        mark |= new
        stack.extend(np.flatnonzero(new))
    return mark


def station_solutions(lamk, p0, P, S, kind, servers, exp_shape, poisson):
    """How QNA solves each station, and whether that is exact.

    Arguments as :func:`qna_kernel` takes them (``lamk`` its per-class
    rates), plus ``exp_shape`` (K,) whether the station's service shape is
    exponential and ``poisson`` (C,) whether the class's arrivals are.
    Returns a list of (how, exact, gim_class) per station: ``how`` a short
    phrase (``""`` where no class goes), ``gim_class`` the class index of a
    GI/M/c station (else -1).

    Two properties travel along the flows (from i to j when some class
    goes from i to j):

    * *Poisson* (in QNA's terms): every flow into j has SCV 1 in QNA and is
      Poisson in the model.  It fails at a station with a non-Poisson
      external stream, and downstream of a non-delay station whose
      aggregate service is not exponential of one mean (QNA gives its
      departures SCV != 1).  Where it holds, j is fed by external Poisson
      streams and by flows out of a Jackson network that never come back
      through a non-exponential station, which are Poisson (Kelly,
      *Reversibility and Stochastic Networks*, 1979, sec. 2.2 (outputs of
      an open Jackson network); Melamed, "Characterizations of Poisson
      traffic streams in Jackson queueing networks", Adv. Appl. Prob. 11,
      1979: a flow is Poisson when it is on no cycle); on a cycle of
      exponential stations the network is Jackson's.
    * *product form* (BCMP): fails at a non-Poisson external stream and
      downstream of an FCFS queue whose service is not exponential of one
      mean (Baskett, Chandy, Muntz & Palacios, JACM 22(2), 1975).

    Exact: a delay; a PS / LCFS-PR queue with product form upstream
    (insensitive, BCMP types 2 and 4); an FCFS queue with Poisson input:
    one server (M/G/1, Pollaczek-Khinchine; Kleinrock 1975, eq. 5.85) or
    exponential service of one mean (M/M/c, Erlang C); an FCFS queue with
    exponential service fed by one class's external renewal stream alone,
    no other inflow (GI/M/c, :func:`gi_m_c_wait`).  Everything else is
    the two-moment approximation.
    """
    C, K = S.shape
    act = lamk.sum(axis=0) > 0
    flow = np.zeros((K, K))
    for c in range(C):
        flow += lamk[c][:, None] * P[c]
    adj = flow > 0
    fed_inside = adj.any(axis=0)
    visiting = lamk > 0
    one_mean = np.ones(K, dtype=bool)
    for k in range(K):
        sk = S[visiting[:, k], k]
        if len(sk) > 1:
            one_mean[k] = float(sk.max() - sk.min()) <= 1e-12 * float(sk.max())
    exp_like = exp_shape & one_mean
    delay, fcfs = kind == _DELAY, kind == _FCFS
    ext_rough = ((lamk > 0) & (p0 > 0) & ~np.asarray(poisson)[:, None]).any(axis=0)
    not_poisson = _propagate(adj, ext_rough, ~delay & ~exp_like)
    not_pf = _propagate(adj, ext_rough, fcfs & ~exp_like)
    out = []
    for k in range(K):
        m = int(servers[k])
        if not act[k]:
            out.append(("", True, -1))
        elif delay[k]:
            out.append(("delay", True, -1))
        elif not fcfs[k]:
            out.append(("PS/LCFS-PR, product form (BCMP)", True, -1) if not not_pf[k]
                       else ("PS/LCFS-PR on a non-Poisson flow (its product-form value)",
                             False, -1))
        elif not not_poisson[k] and (m == 1 or exp_like[k]):
            out.append((f"M/M/{m}" if exp_like[k] else "M/G/1, Pollaczek-Khinchine", True, -1))
        else:
            classes = np.flatnonzero(visiting[:, k])
            if not fed_inside[k] and len(classes) == 1 and exp_shape[k]:
                out.append((f"GI/M/{m}, exact from the inter-arrival transform", True,
                            int(classes[0])))
            else:
                out.append(("GI/G/1, Kraemer & Langenbach-Belz" if m == 1 else
                            f"GI/G/{m}, Allen-Cunneen", False, -1))
    return out


def _solved_note(sol, names) -> tuple[list[str], list[str]]:
    """(exact, approximate): "'name' (how)" of every visited station."""
    ex = [f"{names[k]!r} ({how})" for k, (how, e, _) in enumerate(sol) if how and e]
    ap = [f"{names[k]!r} ({how})" for k, (how, e, _) in enumerate(sol) if how and not e]
    return ex, ap


def _shown(items, limit: int = 8) -> str:
    return ", ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit
                                        else "")


_DEPARTURES = ("flows between stations described by their rate and SCV; a station's "
               "departures by Whitt's approximation cd2 = 1 + (1 - rho^2)(ca2 - 1) + "
               "rho^2 (cs2 - 1) / sqrt(m) (Whitt 1983), also out of a station solved exactly")
_EXACT_ASSUMPTION = ("open classes; every visited station solved exactly: a GI/M/c queue fed "
                     "by one external renewal stream alone (Takacs), an FCFS queue fed by "
                     "Poisson flows (M/G/1 Pollaczek-Khinchine, M/M/c Erlang C, Jackson), PS "
                     "and LCFS-PR queues fed as product form allows (BCMP), delays")


@answers()
def qna(net: Network) -> Result:
    """Whitt's Queueing Network Analyzer for open networks with general
    service and arrival shapes (``method="qna"``; APPROXIMATE, or EXACT
    where every visited station's queue has an exact solution).

    Parameters
    ----------
    net : Network
        Open classes; FCFS queues (one or more servers, any service shape),
        PS queues, delays.  Each class's ``interarrival`` shape (default
        Poisson) and each station's ``distribution`` (default exponential)
        enter through their SCV.

    Returns
    -------
    Result
        method ``"qna"``; ``exactness`` ``"exact"`` when every visited
        station is solved exactly (:func:`station_solutions`), else
        ``"approximate"``; ``info`` holds the per-station arrival SCV
        (``"arrival_scv"``), aggregate service SCV (``"service_scv"``),
        mean wait (``"wait"``), how each station was solved
        (``"solved_as"``) and the stations solved exactly
        (``"exact_stations"``).  The note names the stations solved
        exactly and those solved by the two-moment approximation.

    Raises
    ------
    UnstableError
        A station with rho = lambda tau / m >= 1 (names it and rho).
    UnsupportedModelError
        Closed or mixed classes, token pools, finite capacities,
        load-dependent stations, symbolic input (naming them).

    Notes
    -----
    The algorithm is :func:`qna_kernel` (its docstring gives every
    equation).  A station fed by one class's external renewal stream alone,
    with exponential FCFS service, is then solved exactly as a GI/M/c
    queue (:func:`gi_m_c_wait`) in place of KLB / Allen-Cunneen; the
    flows out of it keep Whitt's departure SCV.  Exact for Jackson
    networks, for M/G/1 fed by Poisson flows, for PS and LCFS-PR fed as
    product form allows, for delays and for those GI/M/c queues
    (:func:`station_solutions`); otherwise an approximation whose error
    against the simulator is tabulated in ``validation/nonexp_table.md``.
    Immediate feedback is eliminated as in Whitt (1983); his other
    refinements (the max(c_s^2, 0.2) variant of the departure formula,
    third moments) are not used.

    References
    ----------
    W. Whitt, "The Queueing Network Analyzer", Bell System Tech. J.
    62(9):2779-2815, 1983.
    W. Kraemer, M. Langenbach-Belz, "Approximate formulae for the delay in
    the queueing system GI/G/1", Proc. 8th Int. Teletraffic Congress, 1976.
    A. O. Allen, Probability, Statistics, and Queueing Theory, 2nd ed., 1990.
    S. L. Albin, "Approximating a point process by a renewal process, II:
    superposition arrival processes to queues", Oper. Res. 32, 1984.
    G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, Queueing Networks and
    Markov Chains, 2nd ed., Wiley 2006, ch. 10 (QNA among the methods for
    non-product-form networks).
    L. Kleinrock, Queueing Systems vol. 1, Wiley 1975, sec. 6.4-6.5 (G/M/1,
    G/M/m).

    Examples
    --------
    Hyperexponential arrivals (SCV 8) at one exponential server, rho = 0.6:
    a GI/M/1 queue, solved exactly (KLB's two-moment value would be 3.81):

    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("q", 0.6)],
    ...                  [qm.Open("j", 1.0, interarrival=qm.HyperExponential(8),
    ...                           visits={"q": 1})])
    >>> r = qm.qna(net)
    >>> r.exactness, round(float(r.R["j"]), 3), r.info["solved_as"]
    ('exact', 3.956, ['GI/M/1, exact from the inter-arrival transform'])
    """
    lam, ca2_ext, p0, P, S, cs2_st, kind, servers = _inputs(net)
    names = [s.name for s in net.stations]
    lamk, R, rho, ca2, cs2, W = qna_kernel(lam, ca2_ext, p0, P, S, cs2_st, kind, servers, names)
    exp_shape = np.asarray(net.lowered.exponential, dtype=bool)   # every class's shape
    poisson = np.array([is_exponential(c.interarrival) for c in net.classes], dtype=bool)
    sol = station_solutions(lamk, p0, P, S, kind, servers, exp_shape, poisson)
    correlated = [c.name for c in net.classes if isinstance(c.interarrival, MAP)]
    for k, (_, _, c) in enumerate(sol):
        if c < 0:
            continue
        cls = net.classes[c]
        if isinstance(cls.interarrival, MAP):
            # a MAP is no renewal stream: no GI/M/c solution; the two-moment
            # value with its variability parameter stays
            m = int(servers[k])
            sol[k] = (f"GI/G/{m}, {'Kraemer & Langenbach-Belz' if m == 1 else 'Allen-Cunneen'}"
                      f" (class {cls.name!r} arrives as a MAP, not a renewal stream)", False, -1)
            continue
        who = f"class {cls.name!r} at station {names[k]!r}"
        try:
            tr = thinned(unit_transform(cls.interarrival, who), float(p0[c, k]))
            w, _, _ = gi_m_c_wait(tr, float(rho[k]), int(servers[k]))
        except UnsupportedModelError as e:
            # the transform or the root cannot be resolved in floating point:
            # the two-moment value stays, labelled approximate, and says why
            m = int(servers[k])
            sol[k] = (f"GI/G/{m}, {'Kraemer & Langenbach-Belz' if m == 1 else 'Allen-Cunneen'}"
                      f" (its exact GI/M/{m} solution failed: {e})", False, -1)
            continue
        W[k] = w * float(S[c, k])
        R[:, k] = S[:, k] + W[k]
    V = np.asarray(net.visits, dtype=float)
    Rres = V * R
    U = np.where(kind[None, :] == _DELAY, lamk * S, lamk * S / servers[None, :])
    exact_at, approx_at = _solved_note(sol, names)
    exact = not approx_at
    if exact:
        notes = ["EXACT: Whitt's Queueing Network Analyzer (QNA, 1983) where each visited "
                 f"station's queue has an exact solution: {_shown(exact_at)}"]
        assumptions = (_EXACT_ASSUMPTION,)
    else:
        notes = ["APPROXIMATION: Whitt's Queueing Network Analyzer (QNA, 1983): stations solved "
                 "as independent GI/G/m queues from two-moment flow descriptions (KLB for one "
                 "server, Allen-Cunneen for several) at "
                 f"{_shown(approx_at)}; solved exactly: {_shown(exact_at) or 'none'}; flows "
                 "between stations by Whitt's departure SCV approximation"]
        assumptions = tuple(METHOD_LABELS["qna"][1]) + (_DEPARTURES,)
    if correlated:
        notes.append(
            "correlated arrivals: class(es) " + ", ".join(map(repr, correlated)) + " arrive as "
            "a Markovian arrival process (MAP), entered as a renewal flow of variability c_a^2 "
            "= its asymptotic index of dispersion for counts (Whitt 1982's asymptotic method; "
            "Fendick & Whitt 1989), not its interval SCV; the approximation is best in heavy "
            "traffic and overstates waits at light load; method='ctmc' holds the MAP exactly "
            "where its chain fits")
    info = {"algorithm": "QNA (Whitt 1983)", "arrival_scv": ca2.tolist(),
            "service_scv": cs2.tolist(), "wait": W.tolist(), "rho": rho.tolist(),
            "solved_as": [how for how, _, _ in sol],
            "exact_stations": [names[k] for k, (how, e, _) in enumerate(sol) if how and e]}
    r = _result(net, "qna", lam, Rres, U, notes, info, visit_time=R)
    # the label, on the fresh result (no one else holds it yet; finish()
    # then checks the laws and attaches an error envelope if approximate)
    object.__setattr__(r, "exactness", EXACT if exact else APPROXIMATE)
    object.__setattr__(r, "assumptions", assumptions)
    return r
