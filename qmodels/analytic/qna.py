"""Whitt's Queueing Network Analyzer (QNA) for open networks with general
service and arrival shapes (``method="qna"``): an APPROXIMATION.

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
* Routing: a class with ``routing`` uses its routing matrix; a class given
  by visits or demands is routed at random exactly as the simulator does
  (:mod:`qmodels.sim.flatten`, "Routing of a class given by visits"), so the
  analytic and the simulated model are the same system.
* External arrivals of a class form a renewal process of SCV
  ``interarrival.scv`` (default Poisson, SCV 1), split at random among the
  stations where the class enters.
* Service times of every class at a station have the station's
  ``distribution`` shape (default exponential) with the class's mean.
* Classes are aggregated per station (Whitt 1983, the section on multiple classes): one arrival
  flow, one service mean and SCV from the class mix.

What is exact: an open Jackson / BCMP network of FCFS queues with
class-independent exponential service, delays and Poisson arrivals (every
arrival SCV is then 1 and every formula below reduces to M/M/1, M/M/c or
M/M/inf); the first station reached by a Poisson stream alone (M/G/1:
Pollaczek-Khinchine).  Everything else is approximate: over 60 random
open networks (``python -m validation.nonexp``, table in
``validation/nonexp_table.md``) the class response time was within 29 % of
the simulator's, 6.2 % on average (ignoring the shapes: 95 %, 17 %); the
documented tolerance is 35 %.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UnstableError, UnsupportedModelError
from ..model.distributions import is_exponential
from ..model.network import SINK, SOURCE, Delay, LoadDependent, Network, Open, Queue
from ..results import Result
from . import requires
from ._common import _open_ld_station, _refuse_held_or_bounded, _require_numeric, _result
from .contract import answers

__all__ = ["qna"]

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
    cs2 = np.ones(K)
    for k, s in enumerate(net.stations):
        if isinstance(s, LoadDependent):
            raise UnsupportedModelError(
                f"station {s.name!r}: a load-dependent station is not a GI/G/m queue, which QNA "
                "needs: use Queue(servers=c), method='exact' (exponential service) or 'sim'")
        d = s.distribution
        cs2[k] = 1.0 if is_exponential(d) else float(d.scv)
        low = net.lowered
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
        ca2[c] = 1.0 if is_exponential(d) else float(d.scv)
        if cls.routing is not None:
            p0[c], P[c] = _routing_arrays(cls, index, K)
        else:
            p0[c], P[c] = _visit_routing(V[c])
    return lam, ca2, p0, P, S, cs2, kind, servers


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
    """QNA on arrays.  Returns (lamk (C, K) per-class arrival rate at each
    station, R (C, K) per-visit response time, rho (K,) load per server,
    ca2 (K,) arrival SCV, cs2 (K,) aggregate service SCV, W (K,) wait).

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
        m2 = (share * S**2 * (cs2_st[None, :] + 1.0)).sum(axis=0)
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


@answers()
def qna(net: Network) -> Result:
    """Whitt's Queueing Network Analyzer for open networks with general
    service and arrival shapes (``method="qna"``; APPROXIMATE).

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
        method ``"qna"``; ``info`` holds the per-station arrival SCV
        (``"arrival_scv"``), aggregate service SCV (``"service_scv"``) and
        mean wait (``"wait"``).  ``notes`` says it is an approximation.

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
    equation).  Exact for Jackson networks (exponential FCFS service equal
    for all classes at a station, Poisson arrivals) and for an M/G/1 station
    fed by a Poisson stream alone; otherwise an approximation whose error
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
    """
    lam, ca2_ext, p0, P, S, cs2_st, kind, servers = _inputs(net)
    names = [s.name for s in net.stations]
    lamk, R, rho, ca2, cs2, W = qna_kernel(lam, ca2_ext, p0, P, S, cs2_st, kind, servers, names)
    V = np.asarray(net.visits, dtype=float)
    Rres = V * R
    U = np.where(kind[None, :] == _DELAY, lamk * S, lamk * S / servers[None, :])
    notes = ["APPROXIMATION: Whitt's Queueing Network Analyzer (QNA, 1983): stations solved "
             "as independent GI/G/m queues from two-moment flow descriptions (KLB for one "
             "server, Allen-Cunneen for several); exact only for Jackson networks and M/G/1 "
             "fed by a Poisson stream alone"]
    info = {"algorithm": "QNA (Whitt 1983)", "arrival_scv": ca2.tolist(),
            "service_scv": cs2.tolist(), "wait": W.tolist(), "rho": rho.tolist()}
    return _result(net, "qna", lam, Rres, U, notes, info, visit_time=R)
