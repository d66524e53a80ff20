"""Product-form networks with class switching, solved by the chain reduction.

In a product-form (BCMP) network whose classes switch, what is exact is the
*chain*: the classes linked by switching (:mod:`qmodels.model.chains`).
Baskett, Chandy, Muntz & Palacios ("Open, closed and mixed networks of
queues with different classes of customers", JACM 22(2), 1975, sec. 3-4)
give the stationary distribution in terms of the chain populations and the
visit ratios e_{c,k} of each (class, station) pair within its chain; the
standard reduction (Bolch, Greiner, de Meer & Trivedi, *Queueing Networks
and Markov Chains*, 2nd ed., Wiley 2006, sec. 7.3.6; Lavenberg, *Computer
Performance Modeling Handbook*, 1983, ch. 3) solves one class per chain:

* chain h's demand at station k is D_{h,k} = sum_{c in h} e_{c,k} S_{c,k},
  its visits V_{h,k} = sum_{c in h} e_{c,k}, its population the sum of its
  classes' populations (closed) or its arrival rate the sum of theirs
  (open);
* at an FCFS queue BCMP needs one exponential service time for every class
  there, so within a chain the classes visiting it must have the same mean
  (else :class:`~qmodels.errors.UnsupportedModelError` names the station);
  PS, LCFS-PR and delay stations take any.

Per class, the figures follow from product form: given n_{h,k} jobs of
chain h at station k, each is of class c independently with probability
D_{c,k} / D_{h,k} (the station's product-form factor is multinomial in the
classes of a chain; BCMP 1975, Theorem 1, types 1-4), so

    X_{c,k} = X_h e_{c,k},   Q_{c,k} = Q_{h,k} D_{c,k} / D_{h,k},
    U_{c,k} = U_{h,k} D_{c,k} / D_{h,k},   R_{c,k} = Q_{c,k} / X_{c,k},

and the class figures are per chain cycle (closed) or per arrival to the
chain (open): X_c = X_h, R_c = sum_k e_{c,k} R_{c,k} (the time a chain job
spends as class c).  The per-class laws then hold as always; conservation
holds per chain: sum over the chain's classes and stations of Q = N_h, and
X_h sum_{c in h} R_c = N_h (:func:`qmodels.analytic.contract.law_violations`).
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedModelError
from ..model.network import Closed, Network, Open
from ..results import Result

__all__ = ["reduce", "expand", "refusal", "ASSUMPTION"]

ASSUMPTION = ("class switching: one class per routing chain with summed demands, per-class "
              "figures by each class's share of the chain's demand (BCMP 1975; Bolch et al. "
              "2006, sec. 7.3.6)")


def refusal(method: str) -> UnsupportedModelError:
    """The refusal of a method that does not handle class switching."""
    return UnsupportedModelError(
        f"method {method!r} does not handle class switching (the network's classes change "
        "class on their way); use method='exact' (product form, by the chain reduction), "
        "method='ctmc' (a small network, any discipline) or method='sim'")


def fcfs_within_chains(net: Network) -> list[str]:
    """The FCFS queues that the classes of one chain visit with different
    mean service times (what ``fcfs_as_ps=True`` makes processor sharing
    before the reduction)."""
    out = []
    for k, _, _ in _fcfs_differences(net):
        name = net.station_names[k]
        if name not in out:
            out.append(name)
    return out


def _fcfs_differences(net: Network):
    """(station index, chain, class indices) where the classes of a chain
    visit an FCFS queue with different mean service times."""
    low = net.lowered
    V = np.asarray(net.visits, float)
    S = np.asarray(net.service_times, float)
    for chain in net.chains:
        if len(chain) < 2:
            continue
        rows = [net.class_index(n) for n in chain]
        for k in np.flatnonzero(low.acts_fcfs):
            used = [c for c in rows if V[c, k] > 0 and S[c, k] > 0]
            vals = {float(S[c, k]) for c in used}
            if len(vals) > 1 and max(vals) - min(vals) > 1e-12 * max(1.0, max(vals)):
                yield int(k), chain, used


def _check_fcfs(net: Network) -> None:
    """Within a chain, one mean service time at every FCFS queue (BCMP type 1)."""
    S = np.asarray(net.service_times, float)
    for k, _, used in _fcfs_differences(net):
        names = ", ".join(f"{net.class_names[c]!r} {S[c, k]:g}" for c in used)
        raise UnsupportedModelError(
            f"station {net.station_names[k]!r}: FCFS with different mean service times for "
            f"the classes of one switching chain ({names}) breaks product form; "
            "fcfs_as_ps=True solves it as processor sharing (an approximation), or make it "
            "discipline='ps', or use method='sim'")


def reduce(net: Network) -> Network:
    """The network with one class per chain (module docstring), named after
    the chain's first class."""
    if net.pools:
        raise UnsupportedModelError(
            f"token pool {net.pools[0].name!r} with class switching: the chain reduction is "
            "for product-form networks without pools; use method='sim'")
    _check_fcfs(net)
    V = np.asarray(net.visits, float)
    D = np.asarray(net.demands, float)
    names = net.station_names
    classes = []
    for chain in net.chains:
        rows = [net.class_index(n) for n in chain]
        first = net.classes[rows[0]]
        if len(chain) == 1:
            classes.append(first)
            continue
        v, d = V[rows].sum(axis=0), D[rows].sum(axis=0)
        visits = {names[k]: float(v[k]) for k in range(len(names)) if v[k] > 0}
        service = {names[k]: float(d[k] / v[k]) for k in range(len(names)) if v[k] > 0}
        if isinstance(first, Closed):
            pop = sum(int(net.classes[c].population) for c in rows)
            classes.append(Closed(first.name, population=pop, visits=visits, service=service,
                                  priority=first.priority))
        else:
            arriving = [net.classes[c] for c in rows if float(net.classes[c].arrival_rate) > 0]
            shaped = [c for c in arriving if c.interarrival is not None]
            if shaped and len(arriving) > 1:
                raise UnsupportedModelError(
                    f"class {shaped[0].name!r}: non-Poisson arrivals merged with other "
                    "arrivals of its switching chain; the chain reduction needs Poisson "
                    "arrivals (use method='sim')")
            lam = sum(float(c.arrival_rate) for c in arriving)
            classes.append(Open(first.name, lam, visits=visits, service=service,
                                priority=first.priority,
                                interarrival=shaped[0].interarrival if shaped else None))
    return Network(net.stations, classes, name=net.name, pools=net.pools)


def expand(r: Result, net: Network) -> Result:
    """The answer ``r`` for the reduced network, per class of ``net``
    (module docstring)."""
    V = np.asarray(net.visits, float)
    S = np.asarray(net.service_times, float)
    Dc = np.asarray(net.demands, float)
    C, K = V.shape
    X, Q, R, U = (np.zeros((C, K)) for _ in range(4))
    Xc, Rc = np.zeros(C), np.zeros(C)
    hX, hQ, hR, hU = (np.asarray(a, float) for a in (
        r.station_throughput, r.station_queue_length, r.station_response_time,
        r.station_utilization))
    hXc = np.asarray(r.class_throughput, float)
    rnet = r.network
    hD = np.asarray(rnet.demands, float)
    hS = np.asarray(rnet.service_times, float)
    for h, chain in enumerate(net.chains):
        for name in chain:
            c = net.class_index(name)
            with np.errstate(invalid="ignore", divide="ignore"):
                share = np.where(hD[h] > 0, Dc[c] / hD[h], 0.0)
                ratio = np.where((hS[h] > 0) & (V[c] > 0), S[c] / hS[h], 0.0)
            X[c] = hXc[h] * V[c]
            Q[c] = hQ[h] * share
            U[c] = hU[h] * share
            R[c] = np.where(V[c] > 0, hR[h] * ratio, 0.0)
            Xc[c] = hXc[h]
            Rc[c] = float(np.dot(V[c], R[c]))
    info = dict(r.info)
    info["chains"] = {ch[0]: list(ch) for ch in net.chains}
    return Result(
        method=r.method, network=net, class_throughput=Xc, class_response_time=Rc,
        station_throughput=X, station_queue_length=Q, station_response_time=R,
        station_utilization=U, notes=tuple(r.notes) + (
            "class switching: figures per class are per chain cycle (closed) or per arrival "
            "to the chain (open); chains " + "; ".join(
                "+".join(ch) for ch in net.chains if len(ch) > 1),),
        info=info, exactness=r.exactness,
        assumptions=tuple(r.assumptions) + (ASSUMPTION,), warnings=r.warnings, error=r.error)
