"""Exact product-form solutions of open and mixed networks: Jackson
networks (one open class) and BCMP open and mixed multi-class networks.

Assumptions (BCMP product form): every station is independent given the
open arrival rates; a station is stable only if its load rho < 1 (a
multi-server or load-dependent station: the arrival rate is below its
limiting service rate); :class:`~qmodels.errors.UnstableError` names the
first station that is not.
"""

from __future__ import annotations

import numpy as np

from ..errors import ProblemTooLargeError, UnstableError, UnsupportedModelError
from ..model.network import Network, Open, Queue
from ..results import Result
from ._common import _check_capacities, _open_ld_station, _ps_notes, _require_numeric, _result
from .contract import answers

#: Most servers an open multi-server queue is solved with: the solution sums
#: one term per server (10^6 servers took 1.6 s, 10^8 took 127 s).
MAX_SERVERS = 10**6


def _rates(s) -> tuple:
    """Rate multipliers of an open multi-server or load-dependent station:
    min(n, c) for c servers (listed up to c), refused past MAX_SERVERS."""
    if not isinstance(s, Queue):
        return s.rate_multipliers
    if s.servers > MAX_SERVERS:
        raise ProblemTooLargeError(
            f"station {s.name!r}: {s.servers} servers; the open solution sums a term per "
            f"server (limit {MAX_SERVERS}, about 2 s): with that many servers the queue is "
            "all but a delay (qm.Delay), or use method='sim'")
    return tuple(range(1, s.servers + 1))

@answers()
def open_single(net: Network) -> Result:
    """Exact solution of an open single-class product-form (Jackson) network.

    Each station behaves as an independent queue fed at rate
    lambda_k = lambda V_k (Jackson 1963; Lazowska et al. 1984, sec. 6.2;
    Bolch et al. 2006, sec. 7.1): for a single server U_k = lambda D_k,
    R_k = D_k / (1 - U_k); multi-server and load-dependent stations are
    solved as birth-death chains (M/M/c for c servers); delays have
    R_k = D_k.  Raises :class:`UnstableError` naming the first station with
    rho >= 1.
    """
    _require_numeric(net, "open network solver")
    if len(net.classes) != 1 or not isinstance(net.classes[0], Open):
        raise UnsupportedModelError("open_single needs exactly one open class")
    _check_capacities(net, None, "the open product-form solver")
    cls = net.classes[0]
    lam = float(cls.arrival_rate)
    K = len(net.stations)
    V = np.asarray(net.visits[0], dtype=float)
    S = np.asarray(net.service_times[0], dtype=float)
    D = V * S
    Q = np.zeros(K)
    U = np.zeros(K)
    low = net.lowered
    for k, kind in enumerate(low.kind):
        lam_k = lam * V[k]
        if kind == "delay":
            Q[k] = lam * D[k]
            U[k] = lam * D[k]
        elif kind == "queue" and low.servers[k] == 1:
            rho = lam * D[k]
            if rho >= 1:
                name = low.station_names[k]
                raise UnstableError(
                    f"station {name!r} is unstable: rho = lambda * D = {rho:.6g} >= 1",
                    station=name,
                    rho=rho,
                )
            Q[k] = rho / (1 - rho)
            U[k] = rho
        else:
            mult = _rates(net.stations[k])
            Q[k], p0 = _open_ld_station(lam_k, S[k], mult, low.station_names[k])
            U[k] = lam * D[k] / low.servers[k] if kind == "queue" else 1.0 - p0
    Xk = lam * V
    with np.errstate(divide="ignore", invalid="ignore"):
        Rk = np.where(Xk > 0, Q / np.where(Xk > 0, Xk, 1.0), S)
    R = float(np.sum(Q) / lam) if lam > 0 else float(np.sum(D))
    return Result(
        method="exact",
        network=net,
        class_throughput=[lam],
        class_response_time=[R],
        station_throughput=[Xk],
        station_queue_length=[Q],
        station_response_time=[Rk],
        station_utilization=[U],
        info={"algorithm": "Jackson product form"},
    )


def _open_parts(net: Network, D, lam, ld_ok: bool, closed_D=None, shared=frozenset()):
    """Open-class load per station and the residence factor r_k = Q_k/rho_k.

    Returns (rho (K,), factor (K,), p0 (K,) or None, inflate (K,)).  For a
    single-server queue the factor is 1/(1 - rho) (Lazowska et al. 1984,
    sec. 7.3: R_ck = D_ck / (1 - U_k)); for a delay 1; for a multi-server or
    load-dependent station the total number present is the birth-death
    chain of load rho (Bolch et al. 2006, eq. 6.6), split among classes in
    proportion to their load (BCMP PS).
    """
    K = D.shape[1]
    rho = lam @ D
    factor = np.ones(K)
    p0 = np.ones(K)
    low = net.lowered
    for k, kind in enumerate(low.kind):
        if kind == "delay":
            continue
        name = low.station_names[k]
        mult = low.multipliers[k] if kind == "ld" else (1.0,)
        a = mult[0]
        if (kind == "queue" and low.servers[k] == 1) or (
                kind == "ld" and all(x == a for x in mult)):
            u = rho[k] / a
            if u >= 1:
                raise UnstableError(
                    f"station {name!r} is unstable: open load rho = sum_c lambda_c D_ck"
                    f"{'' if a == 1 else ' / a'} = {u:.6g} >= 1",
                    station=name,
                    rho=float(u),
                )
            factor[k] = 1.0 / (a * (1.0 - u))
            p0[k] = 1.0 - u
            continue
        if name in shared:
            continue  # solved with the closed classes (multiclass._mixed_exact)
        if closed_D is not None and np.any(closed_D[:, k] > 0) and rho[k] > 0:
            raise UnsupportedModelError(
                f"station {name!r}: a multi-server/load-dependent station loaded by both "
                f"open (rho = {rho[k]:.6g}) and closed classes is not supported by the "
                "mixed MVA solver: use method='sim'"
            )
        mult = _rates(net.stations[k])
        if rho[k] > 0:
            q, p0k = _open_ld_station(float(rho[k]), 1.0, mult, name)
            factor[k] = q / rho[k]
            p0[k] = p0k
        else:
            factor[k] = 1.0 / mult[0]
    return rho, factor, p0


def _open_exact(net: Network) -> Result:
    _check_capacities(net, None, "the open product-form solver")
    D = np.asarray(net.demands, dtype=float)
    lam = np.array([float(c.arrival_rate) for c in net.classes])
    notes = _ps_notes(net)
    rho, factor, p0 = _open_parts(net, D, lam, True)
    Rres = D * factor[None, :]
    U = lam[:, None] * D
    low = net.lowered
    for k, kind in enumerate(low.kind):
        if kind == "queue":
            U[:, k] /= low.servers[k]
        elif kind == "ld":
            U[:, k] = (1 - p0[k]) * U[:, k] / rho[k] if rho[k] > 0 else 0.0
    info = {"algorithm": "BCMP open product form"}
    S = np.asarray(net.service_times, dtype=float)
    return _result(net, "exact", lam, Rres, U, notes, info,
                   visit_time=S * factor[None, :])


