"""Operational laws, the bottleneck law and the saturation population N*.

The laws hold for any system observed over a period in which arrivals equal
completions (Denning & Buzen, "The operational analysis of queueing network
models", Computing Surveys 10(3), 1978; Lazowska, Zahorjan, Graham & Sevcik,
*Quantitative System Performance* (QSP), Prentice-Hall 1984, ch. 3).  The
bounds built on them (asymptotic, balanced job, geometric, proportional,
multi-class and token-pool bounds) are in :mod:`.bounds` and
:mod:`.bounds_multiclass`.

Multi-server and load-dependent stations enter the bottleneck and N* through
their fastest and slowest service rates: a station whose rate with n jobs is
a(n)/S is never faster than a single server of demand D/a_max nor slower than
one of demand D/a_min (a c-server queue: D/c and D).  A job's own time per
visit is at least S/sigma, sigma = max_n a(n)/n (:func:`job_speed`: 1 for a
queue, more for a load-dependent station that serves one job faster than S).
Delay stations are folded into the think time (both are infinite servers).
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import is_symbolic
from ..errors import UnsupportedModelError
from ..model.network import Closed, Delay, LoadDependent, Network

__all__ = [
    "utilization_law",
    "littles_law",
    "forced_flow_law",
    "service_demand_law",
    "response_time_law",
    "interactive_response_time_law",
    "bottleneck",
    "saturation_population",
    "job_speed",
]


# ---------------------------------------------------------------------------
# operational laws
# ---------------------------------------------------------------------------

def utilization_law(throughput, service_time, servers=1):
    """U = X S / c.

    Utilisation law (Denning & Buzen 1978; QSP sec. 3.2.1, eq. 3.1), per
    server for a c-server station.
    """
    return throughput * service_time / servers


def littles_law(throughput, response_time):
    """N = X R, the mean number in any box (Little 1961; QSP sec. 3.2.2)."""
    return throughput * response_time


def forced_flow_law(throughput, visits):
    """X_k = V_k X (QSP sec. 3.2.3, eq. 3.3)."""
    return visits * throughput


def service_demand_law(utilization, throughput):
    """D_k = U_k / X (QSP sec. 3.2.3, eq. 3.4)."""
    return utilization / throughput


def response_time_law(visits, station_response_times):
    """R = sum_k V_k R_k, response time per job from per-visit response
    times (general response time law, QSP sec. 3.2.3)."""
    v = np.asarray(visits, dtype=object if _any_sym(visits) else float)
    r = np.asarray(station_response_times, dtype=v.dtype)
    return (v * r).sum()


def interactive_response_time_law(population, throughput, think_time=0.0):
    """R = N / X - Z (QSP sec. 3.3, eq. 3.5)."""
    return population / throughput - think_time


def _any_sym(x):
    try:
        return any(is_symbolic(v) for v in np.ravel(np.asarray(x, dtype=object)))
    except TypeError:
        return is_symbolic(x)


def _smax(*args):
    if any(is_symbolic(a) for a in args):
        import sympy as sp

        return sp.Max(*args)
    return max(args)


def _smin(*args):
    if any(is_symbolic(a) for a in args):
        import sympy as sp

        return sp.Min(*args)
    return min(args)


# ---------------------------------------------------------------------------
# what a station contributes to the bounds
# ---------------------------------------------------------------------------

def _class_of(net: Network, cls: str | None,
              what: str = "bounds and bottleneck analysis are per class",
              why: str = "; with several classes the bounds of one class use every "
                         "class's population and demands"):
    """The index of class ``cls``; with ``cls=None`` the only class, else an
    error that says ``what`` needs a class named (and ``why``)."""
    if cls is not None:
        return net.class_index(cls)
    if len(net.classes) != 1:
        raise UnsupportedModelError(
            f"{what}: name the class (cls=...; on the command line --option cls=NAME){why}"
        )
    return 0


def job_speed(s):
    """sigma = max_n a(n)/n, the fastest a single job can be served at ``s``
    relative to one server of its service time: 1 for a delay or a
    c-server queue (a job uses one server), max_i a_i / i for a
    load-dependent station whose multipliers are a_1, a_2, ...  A job's
    time per visit is at least S / sigma, so D / sigma is the no-contention
    demand used by the optimistic bounds."""
    if isinstance(s, LoadDependent):
        vals = [a / (i + 1) for i, a in enumerate(s.rate_multipliers)]
        return _smax(*vals) if len(vals) > 1 else vals[0]
    return 1


def _bound_demands(net: Network, ci: int):
    """(optimistic D/a_max, pessimistic D/a_min, no-contention D/sigma,
    delay total, names) of the queueing stations class ci visits, as
    tuples; read once per network and class (``net.lowered.memo``)."""
    return net.lowered.memo(("laws.bound_demands", ci), lambda: _build_bound_demands(net, ci))


def _bound_sums(net: Network, ci: int):
    """(sum of optimistic, of pessimistic, of no-contention demands, their
    largest optimistic and pessimistic ones, the bottleneck's names) of
    :func:`_bound_demands` for a numeric network, computed once per
    network and class (the sums in station order, as ``sum`` takes
    them)."""
    def build():
        opt, pes, nc, _, names = _bound_demands(net, ci)
        if not opt:
            return 0, 0, 0, None, None, ()
        top = max(opt)
        bn = () if top <= 0 else tuple(n for n, d in zip(names, opt) if d >= top * (1 - 1e-9))
        return sum(opt), sum(pes), sum(nc), top, max(pes), bn

    return net.lowered.memo(("laws.bound_sums", ci), build)


def _build_bound_demands(net: Network, ci: int):
    opt, pes, nc, names = [], [], [], []
    delay = 0
    for k, s in enumerate(net.stations):
        d = net.demands[ci, k]
        if isinstance(s, Delay):
            delay = delay + d
            continue
        if not is_symbolic(d) and d == 0:
            continue
        opt.append(d / s.max_rate_multiplier)
        pes.append(d / s.min_rate_multiplier)
        nc.append(d / job_speed(s))
        names.append(s.name)
    return tuple(opt), tuple(pes), tuple(nc), delay, tuple(names)


def bottleneck(net: Network, cls: str | None = None) -> tuple:
    """Station(s) with the largest demand per unit of service capacity,
    D_k / a_max,k (QSP sec. 5.2): the one that saturates first.  Ties (within
    a relative 1e-9) are all returned.  Delay stations never saturate."""
    ci = _class_of(net, cls)
    if not net.is_symbolic:
        return _bound_sums(net, ci)[5]
    opt, _, _, _, names = _bound_demands(net, ci)
    if not opt:
        return ()
    if any(is_symbolic(d) for d in opt):
        raise UnsupportedModelError(
            "bottleneck of a symbolic network depends on its parameters: "
            "use qmodels.bottleneck_regions (qmodels.symbolic.shifts)"
        )
    top = max(opt)
    if top <= 0:
        return ()
    return tuple(n for n, d in zip(names, opt) if d >= top * (1 - 1e-9))


def saturation_population(net: Network, cls: str | None = None):
    """N* = (D + Z) / D_max, where the two asymptotic throughput bounds cross
    (QSP sec. 5.2, eq. 5.3): beyond N* the bottleneck is saturated.  D is
    the no-contention demand (D_k / sigma_k, see :func:`job_speed`, plus the
    delay stations) and D_max = max_k D_k / a_max,k."""
    ci = _class_of(net, cls)
    c = net.classes[ci]
    if not isinstance(c, Closed):
        raise UnsupportedModelError(f"class {c.name!r} is open: N* is for closed classes")
    if "forkjoin" in net.lowered.kind:
        from .forkjoin import forkjoin_bounds  # D: a fork-join counts its longest branch

        return forkjoin_bounds(net, c.name).saturation_population
    opt, _, nc, delay, _ = _bound_demands(net, ci)
    if not opt:
        return math.inf
    if not net.is_symbolic:
        sums = _bound_sums(net, ci)
        return (sums[2] + delay + c.think_time) / sums[3]
    return (sum(nc) + delay + c.think_time) / _smax(*opt)
