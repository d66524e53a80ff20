"""Operational laws; asymptotic, balanced job, geometric and proportional
bounds; the saturation population N* and the bottleneck.

The laws hold for any system observed over a period in which arrivals equal
completions (Denning & Buzen, "The operational analysis of queueing network
models", Computing Surveys 10(3), 1978; Lazowska, Zahorjan, Graham & Sevcik,
*Quantitative System Performance* (QSP), Prentice-Hall 1984, ch. 3).  The
asymptotic and balanced job bounds are QSP ch. 5 (Table 5.3); the geometric
bounds are Casale, Muntz & Serazzi (IEEE Trans. Computers 57(6), 2008), the
proportional bounds Hsieh & Lam (Performance Evaluation 7(1), 1987).  A
bound is a guarantee: :func:`bounds` prints only the bounds proven for the
model it is given (see :class:`Bounds` for each bound's scope) and refuses,
naming the station or pool, where none is.

Multi-server and load-dependent stations enter the bounds through their
fastest and slowest service rates: a station whose rate with n jobs is
a(n)/S is never faster than a single server of demand D/a_max nor slower than
one of demand D/a_min (a c-server queue: D/c and D), and throughput of a
single-class product-form network is monotone in its service rates, so bounds
computed on the optimistic (D/a_max) and pessimistic (D/a_min) networks
bracket it.  A job's own time per visit is at least S/sigma, sigma = max_n
a(n)/n (:func:`job_speed`: 1 for a queue, more for a load-dependent station
that serves one job faster than S), which the no-contention terms
X <= N/(D + Z) and R >= D use.  Delay stations are folded into the think time
(both are infinite servers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._format import fmt, format_table
from .._validate import is_symbolic
from ..errors import UnsupportedModelError
from ..model.network import Closed, Delay, LoadDependent, Network, Queue

__all__ = [
    "utilization_law",
    "littles_law",
    "forced_flow_law",
    "service_demand_law",
    "response_time_law",
    "interactive_response_time_law",
    "bottleneck",
    "saturation_population",
    "bounds",
    "multiclass_bounds",
    "pool_bounds",
    "geometric_bounds",
    "proportional_bounds",
    "job_speed",
    "Bounds",
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

def _class_of(net: Network, cls: str | None):
    if cls is not None:
        return net.class_index(cls)
    if len(net.classes) != 1:
        raise UnsupportedModelError(
            "bounds and bottleneck analysis are per class: name the class (cls=...); "
            "with several classes the bounds of one class use every class's "
            "population and demands"
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
    delay total, names) of the queueing stations class ci visits."""
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
    return opt, pes, nc, delay, names


def bottleneck(net: Network, cls: str | None = None) -> tuple:
    """Station(s) with the largest demand per unit of service capacity,
    D_k / a_max,k (QSP sec. 5.2): the one that saturates first.  Ties (within
    a relative 1e-9) are all returned.  Delay stations never saturate."""
    ci = _class_of(net, cls)
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
    opt, _, nc, delay, _ = _bound_demands(net, ci)
    if not opt:
        return math.inf
    return (sum(nc) + delay + c.think_time) / _smax(*opt)


# ---------------------------------------------------------------------------
# single-class closed bounds: ABA, BJB, GB, PB
# ---------------------------------------------------------------------------

def _closed_bounds(Dq_opt, Dq_pes, Dq_nc, delay, Z, n):
    """ABA and BJB for population n (scalar, array or symbol).

    QSP Table 5.3 (closed, terminal workload with think time Z; with Z = 0 it
    reduces to the batch case)::

        ABA   N/(N D + Z) <= X <= min(1/Dmax, N/(D + Z))
              max(D, N Dmax - Z) <= R <= N D
        BJB   N/(D + Z + (N-1) Dmax / (1 + Z/(N D))) <= X
              X <= min(1/Dmax, N/(D + Z + (N-1) Davg / (1 + Z/D)))
              max(N Dmax - Z, D + (N-1) Davg/(1 + Z/D)) <= R
              R <= D + (N-1) Dmax / (1 + Z/(N D))

    The optimistic network (demands D/a_max) gives the upper X and lower R
    bounds, the pessimistic one (D/a_min) the others; the no-contention
    terms (X <= N/(D + Z), R >= D) use D/sigma (a job's own service time);
    delay stations are part of the think time in BJB.
    """
    sym = any(is_symbolic(x) for x in [*Dq_opt, *Dq_pes, *Dq_nc, delay, Z, n])
    mx, mn = (_smax, _smin)
    Zeff = Z + delay
    Do, Dp, Dnc = sum(Dq_opt), sum(Dq_pes), sum(Dq_nc) + delay
    Dmax_o, Dmax_p = mx(*Dq_opt), mx(*Dq_pes)
    Davg_o = Do / len(Dq_opt)
    if not sym:
        n = np.asarray(n, dtype=float)
    aba_X_hi = _elt_min(1 / Dmax_o, n / (Dnc + Z), sym)
    aba_X_lo = n / (n * (Dp + delay) + Z) if sym else np.where(
        n > 0, n / np.maximum(n * (Dp + delay) + Z, 1e-300), 0.0)
    aba_R_lo = _elt_max(Dnc, n * Dmax_o - Z, sym)
    aba_R_hi = n * (Dp + delay) if sym else np.maximum(n, 1) * (Dp + delay)
    if sym:
        bjb_X_lo = n / (Dp + Zeff + (n - 1) * Dmax_p / (1 + Zeff / (n * Dp)))
        bjb_X_hi = mn(1 / Dmax_o, n / (Do + Zeff + (n - 1) * Davg_o / (1 + Zeff / Do)))
        bjb_R_lo = mx(n * Dmax_o - Z, Do + delay + (n - 1) * Davg_o / (1 + Zeff / Do))
        bjb_R_hi = Dp + delay + (n - 1) * Dmax_p / (1 + Zeff / (n * Dp))
    else:
        nn = np.maximum(n, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            bjb_X_lo = np.where(n > 0, nn / (Dp + Zeff + (nn - 1) * Dmax_p
                                             / (1 + Zeff / (nn * Dp))), 0.0)
            bjb_X_hi = np.minimum(1 / Dmax_o, np.where(
                n > 0, nn / (Do + Zeff + (nn - 1) * Davg_o / (1 + Zeff / Do)), 0.0))
            bjb_R_lo = np.maximum(nn * Dmax_o - Z,
                                  Do + delay + (nn - 1) * Davg_o / (1 + Zeff / Do))
            bjb_R_hi = Dp + delay + (nn - 1) * Dmax_p / (1 + Zeff / (nn * Dp))
    return {
        "aba": (aba_X_lo, aba_X_hi, aba_R_lo, aba_R_hi),
        "bjb": (bjb_X_lo, bjb_X_hi, bjb_R_lo, bjb_R_hi),
    }


def _geo_q(y, n):
    """sum_{j=1..n} y^j = y/(1-y) - y^(n+1)/(1-y) (Casale et al. 2008, eqs. 8
    and 13), and n when y >= 1."""
    if y >= 1:
        return float(n)
    return (y - y ** (n + 1)) / (1 - y)


def geometric_bounds(L, N: int, Z: float = 0.0) -> tuple:
    """Geometric square-root bounds (GSB) on the throughput of a closed
    single-class network of load-independent single-server queues.

    Parameters
    ----------
    L : sequence of float
        Demands D_k of the queueing stations (delay stations go into Z).
    N : int >= 1
    Z : float
        Think time plus the demands of delay stations.

    Returns
    -------
    (X_lower, X_upper)

    Notes
    -----
    G. Casale, R. R. Muntz & G. Serazzi, "Geometric bounds: a non-iterative
    analysis technique for closed queueing networks", IEEE Trans. Computers
    57(6), 2008, pp. 780-794: with L_max the largest demand,

        R^-(N) = Z + L + L_max (N-1) - sum_{k: L_k < L_max} (L_max - L_k) Q_k^-(N-1)
        X^- = 2N / (R^- + sqrt(R^-^2 - 4 Z L_max (N-1)))

    where Q_k^-(n) = sum_{j=1..n} y_k^j, y_k = n L_k / (Z + L + L_max n)
    (eq. 8); the upper bound takes Q_k^+(n) with y_k = L_k min(1/L_max,
    n / (Z + L + s (n-1-Z X_aba^+(n-1)))), s = sum L_k^2 / L (eq. 13) and
    4 Z L_max N under the root.  With Z = 0 these are the geometric bounds
    X = N / R.  Reproduces the paper's Tables IV (Z = 0) and V (Z = 1).

    Examples
    --------
    Table IV of the paper, N = 10: 8.1521 <= X <= 8.2690.

    >>> lo, hi = geometric_bounds([0.1, 0.1, 0.09, 0.08], 10)
    >>> round(lo, 4), round(hi, 4)
    (8.1521, 8.269)
    """
    L = np.asarray([float(x) for x in L if float(x) > 0])
    if N <= 0:
        return 0.0, 0.0
    Lt, Lm = float(L.sum()), float(L.max())
    s = float((L ** 2).sum()) / Lt

    def q_lo(n, k):
        return _geo_q(n * L[k] / (Z + Lt + Lm * n), n) if n > 0 else 0.0

    def q_hi(n, k):
        if n <= 0:
            return 0.0
        x_aba = min(1 / Lm, (n - 1) / (Lt + Z)) if n > 1 else 0.0
        y = L[k] * min(1 / Lm, n / (Z + Lt + s * (n - 1 - Z * x_aba)))
        return _geo_q(y, n)

    r_lo = r_hi = Z + Lt + Lm * (N - 1)
    for k in range(len(L)):
        if L[k] < Lm:
            r_lo -= (Lm - L[k]) * q_lo(N - 1, k)
            r_hi -= (Lm - L[k]) * q_hi(N - 1, k)
    x_lo = 2 * N / (r_lo + math.sqrt(max(r_lo ** 2 - 4 * Z * Lm * (N - 1), 0.0)))
    x_hi = 2 * N / (r_hi + math.sqrt(max(r_hi ** 2 - 4 * Z * Lm * N, 0.0)))
    return float(x_lo), float(min(x_hi, 1 / Lm))


def proportional_bounds(D, N: int, Z: float = 0.0) -> tuple:
    """Proportional bounds (PB) on the throughput of a closed single-class
    network of load-independent single-server queues.

    Notes
    -----
    C.-T. Hsieh & S. S. Lam, "Two classes of performance bounds for closed
    queueing networks", Performance Evaluation 7(1), 1987, pp. 3-30 (after
    D. L. Eager & K. C. Sevcik, "Bound hierarchies for multiple-class
    queueing networks", JACM 33(1), 1986); the form of Octave queueing's
    ``qncspb`` (M. Marzolla)::

        X^- = N / (Z + D + (N-1) sum D_k^N / sum D_k^(N-1))
        X^+ = min(1/D_max, N / (Z + D + (N-1-Z/D_max) sum D_k^2 / D))

    The powers are taken of D_k / D_max (the ratio is the same) so that
    large N does not underflow.

    Examples
    --------
    >>> lo, hi = proportional_bounds([0.1, 0.1, 0.09, 0.08], 10)
    >>> round(lo, 4), round(hi, 4)
    (8.0219, 8.27)
    """
    D = np.asarray([float(x) for x in D if float(x) > 0])
    if N <= 0:
        return 0.0, 0.0
    Dt, Dm = float(D.sum()), float(D.max())
    r = D / Dm
    lo = N / (Z + Dt + (N - 1) * Dm * float((r ** N).sum()) / float((r ** (N - 1)).sum()))
    hi = N / (Z + Dt + (N - 1 - Z / Dm) * float((D ** 2).sum()) / Dt)
    return float(lo), float(min(hi, 1 / Dm))


def _gb_pb(opt, pes, delay, Z, N):
    """GB and PB on the pessimistic (lower) and optimistic (upper)
    networks, as (X_lo, X_hi, R_lo, R_hi) with R = N/X - Z (Little)."""
    out = {}
    for key, f in (("gb", geometric_bounds), ("pb", proportional_bounds)):
        lo = f(pes, N, Z + delay)[0]
        hi = f(opt, N, Z + delay)[1]
        out[key] = (lo, hi, N / hi - Z, N / lo - Z)
    return out


def _elt_min(a, b, sym):
    return _smin(a, b) if sym else np.minimum(a, b)


def _elt_max(a, b, sym):
    return _smax(a, b) if sym else np.maximum(a, b)


# ---------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------

_KEYS = ("aba", "bjb", "gb", "pb")
_LABEL = {"aba": "ABA", "bjb": "BJB", "gb": "GB", "pb": "PB"}


@dataclass(frozen=True)
class Bounds:
    """Bounds on the throughput X and response time R of one class.

    ``throughput_lower/upper`` and ``response_time_lower/upper`` are the
    tightest of the bounds that hold for the model; ``aba``, ``bjb``,
    ``gb`` and ``pb`` hold each set as ``(X_lower, X_upper, R_lower,
    R_upper)``, or ``None`` where that bound is not proven for the model
    (``notes`` says why).  For an open class X is the arrival rate and
    ``max_throughput`` the saturation rate 1/D_max.

    Scope of each bound
    -------------------
    aba
        Asymptotic bounds.  Single class (QSP Table 5.3): any closed network
        whose stations serve whenever jobs are present (operational: the
        utilisation law, R >= a job's own service time, and R <= N D since
        some station is busy whenever a job is in the system).  With token
        pools, the pool is a station of ``tokens`` servers whose demand is the
        least time a job holds a token per cycle, and waiting for a token is
        covered by the pessimistic bound (see :func:`bounds`).  Multi-class
        (class c among others): product form, from the arrival theorem.
    bjb
        Balanced job bounds (Zahorjan, Sevcik, Eager & Galler 1982; QSP
        Table 5.3): single-class product-form networks (not with token
        pools, not with several classes).
    gb
        Geometric square-root bounds (Casale, Muntz & Serazzi 2008): as bjb.
    pb
        Proportional bounds (Hsieh & Lam 1987): as bjb.

    Multi-server and load-dependent stations enter bjb, gb and pb through
    the optimistic network (demand D/a_max, for the upper X bound) and the
    pessimistic one (D/a_min, for the lower): the throughput of a
    single-class product-form network does not decrease when any station's
    rate function increases (Shanthikumar & Yao, "Monotonicity properties
    in cyclic queueing networks with finite buffers", 1989; Suri, "A
    concept of monotonicity and its characterization for closed queueing
    networks", Oper. Res. 33(3), 1985).
    """

    network: Network
    class_name: str
    population: Any
    throughput_lower: Any
    throughput_upper: Any
    response_time_lower: Any
    response_time_upper: Any
    aba: tuple
    bjb: tuple | None
    max_throughput: Any
    saturation_population: Any
    bottleneck: tuple
    method: str = "bounds"
    gb: tuple | None = None
    pb: tuple | None = None
    notes: tuple = ()

    X = property(lambda self: (self.throughput_lower, self.throughput_upper))
    R = property(lambda self: (self.response_time_lower, self.response_time_upper))

    @property
    def n_star(self):
        """Alias of ``saturation_population`` (N*)."""
        return self.saturation_population

    def _sets(self):
        return [(k, getattr(self, k)) for k in _KEYS if getattr(self, k) is not None]

    def to_dict(self) -> dict:
        def f(v):
            if v is None:
                return None
            if isinstance(v, (float, int, np.floating, np.integer)):
                v = float(v)
                return None if math.isinf(v) else v
            return str(v)

        net = self.network
        ci = net.class_index(self.class_name)
        return {
            "method": "bounds",
            "classes": {
                self.class_name: {
                    "X": {"lower": f(self.throughput_lower), "upper": f(self.throughput_upper)},
                    "R": {"lower": f(self.response_time_lower),
                          "upper": f(self.response_time_upper)},
                    "N*": f(self.saturation_population),
                    "X_max": f(self.max_throughput),
                    "bounds": {k: (None if b is None else
                                   {"X": [f(b[0]), f(b[1])], "R": [f(b[2]), f(b[3])]})
                               for k, b in ((k, getattr(self, k)) for k in _KEYS)},
                }
            },
            "stations": {
                s.name: {"D": f(net.demands[ci, k]),
                         "U": {"upper": f(_u_upper(s, net.demands[ci, k],
                                                   self.throughput_upper))}}
                for k, s in enumerate(net.stations)
            },
            "bottleneck": list(self.bottleneck),
            "notes": list(self.notes),
        }

    def table(self) -> str:
        lo_hi = [
            ["X [1/s]", self.throughput_lower, self.throughput_upper],
            ["R [s]", self.response_time_lower, self.response_time_upper],
        ]
        rows = []
        for k, b in self._sets():
            rows += [[f"{_LABEL[k]} X", b[0], b[1]], [f"{_LABEL[k]} R", b[2], b[3]]]
        head = (f"bounds for class {self.class_name!r}"
                + (f" of {self.network.name!r}" if self.network.name else ""))
        what = (f"N = {self.population}" if isinstance(self.network.klass(self.class_name),
                                                        Closed)
                else f"lambda = {fmt(self.population)}")
        lines = [head, what, "", format_table(["", "lower", "upper"], lo_hi), "",
                 format_table(["", "lower", "upper"], rows), ""]
        lines.append(f"max throughput 1/Dmax = {fmt(self.max_throughput)}")
        if self.saturation_population is not None:
            lines.append(f"saturation population N* = {fmt(self.saturation_population)}")
        if self.bottleneck:
            tie = " (tie)" if len(self.bottleneck) > 1 else ""
            lines.append(f"bottleneck{tie}: {', '.join(self.bottleneck)}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self):
        return self.table()

    def _repr_html_(self):
        return "<pre>" + self.table() + "</pre>"

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(
            {"lower": [self.throughput_lower, self.response_time_lower],
             "upper": [self.throughput_upper, self.response_time_upper]},
            index=pd.Index(["X", "R"], name="metric"),
        )

    def sweep(self, populations):
        """Every bound of this class for each population in ``populations``
        (closed class; other classes keep theirs): a DataFrame with columns
        X_aba_lo, X_aba_hi, R_aba_lo, R_aba_hi, then the same for bjb, gb and
        pb where they hold, indexed by N, ready to plot under an exact
        TPS curve."""
        import pandas as pd

        c = self.network.klass(self.class_name)
        if not isinstance(c, Closed):
            raise UnsupportedModelError(
                f"class {self.class_name!r} is open: sweep is over closed populations")
        pops = list(populations)
        cols: dict = {}
        for n in pops:
            b = bounds(self.network.with_population(int(n), self.class_name), self.class_name)
            for k in _KEYS:
                v = getattr(b, k)
                if v is None:
                    continue
                for name, x in zip(("X_%s_lo", "X_%s_hi", "R_%s_lo", "R_%s_hi"), v):
                    cols.setdefault(name % k, []).append(float(x))
        cols = {k: v for k, v in cols.items() if len(v) == len(pops)}
        return pd.DataFrame(cols, index=pd.Index(pops, name="N"))


def _u_upper(s, d, x_hi):
    if isinstance(s, Delay):
        return x_hi * d
    return _smin(1, x_hi * d / s.max_rate_multiplier) if is_symbolic(x_hi * d) else min(
        1.0, float(x_hi * d / s.max_rate_multiplier))


# ---------------------------------------------------------------------------
# what the bounds accept
# ---------------------------------------------------------------------------

def _check_capacities(net: Network):
    closed_total = sum(c.population for c in net.closed_classes)
    for s in net.stations:
        if s.capacity is None:
            continue
        if net.open_classes or is_symbolic(closed_total) or s.capacity < closed_total:
            raise UnsupportedModelError(
                f"station {s.name!r}: finite capacity {s.capacity} can bind (blocking); "
                "no bound is proven for blocking networks: use method='ctmc' or 'sim'"
            )


def _all_delay(net, c, delay):
    """Class ci visits only delay stations: X = N/(Z + D), R = D exactly."""
    if isinstance(c, Closed):
        N = c.population
        tot = delay + c.think_time
        if not is_symbolic(tot) and tot == 0:
            if not is_symbolic(N) and N == 0:
                x = 0.0
            else:
                raise UnsupportedModelError(
                    f"class {c.name!r} visits no station with a positive demand and has no "
                    "think time: its throughput is unbounded"
                )
        else:
            x = N / tot
        note = ("class visits only delay stations: X = N/(Z + D) and R = D exactly "
                "(an infinite server never queues)")
        b = (x, x, delay, delay)
        return Bounds(net, c.name, N, x, x, delay, delay, b,
                      b if len(net.classes) == 1 and not net.pools else None,
                      math.inf, math.inf, (), notes=(note,))
    lam = c.arrival_rate
    b = (lam, lam, delay, delay)
    return Bounds(net, c.name, lam, lam, lam, delay, delay, b, b, math.inf, None, (),
                  notes=("class visits only delay stations: R = D exactly",))


# ---------------------------------------------------------------------------
# bounds
# ---------------------------------------------------------------------------

def bounds(net: Network, cls: str | None = None) -> Bounds:
    """Bounds on the throughput and response time of one class.

    Single closed class, product form: asymptotic (ABA) and balanced job
    (BJB) bounds (QSP Table 5.3), geometric (GB, Casale et al. 2008) and
    proportional (PB, Hsieh & Lam 1987) bounds, N*, 1/D_max and the
    bottleneck.  Multi-class: the multi-class asymptotic bounds of class
    ``cls`` given every class's population, demands and arrival rates (see
    :func:`multiclass_bounds`).  Token pools: the asymptotic bounds with
    each pool as a station (see :func:`pool_bounds`).  A class that visits
    only delay stations has X = N / (Z + D) exactly.

    Open class (alone): X = lambda must stay below 1/Dmax (else
    :class:`~qmodels.errors.UnstableError`), and

        ABA  R >= D
        BJB  D / (1 - lambda Davg) <= R <= D / (1 - lambda Dmax)

    (QSP Table 5.3, open models; the upper bound is infinite when the
    pessimistic network saturates).

    Examples
    --------
    One token held over two 1-second stations serialises them: whatever
    the population, X <= 1 token / 2 s, and the pessimistic bound meets it.

    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
    ...                  [qm.Closed("t", 20, routing={"a": {"b": 1}, "b": {"a": 1}})],
    ...                  pools=[qm.TokenPool("tok", 1, "a", "b")])
    >>> bounds(net).X
    (0.5, 0.5)

    Raises
    ------
    UnsupportedModelError
        A finite capacity that can bind, a token pool whose span is unknown
        or that several classes use, a symbolic multi-class network: no bound
        is proven there, and the message names the station or pool.
    """
    from ..errors import UnstableError

    ci = _class_of(net, cls)
    c = net.classes[ci]
    _check_capacities(net)
    opt, pes, nc, delay, names = _bound_demands(net, ci)
    sym = net.is_symbolic
    if net.pools:
        return pool_bounds(net, c.name)
    if not opt:
        return _all_delay(net, c, delay)
    if len(net.classes) > 1:
        return multiclass_bounds(net, c.name)
    if isinstance(c, Closed):
        N = c.population
        b = _closed_bounds(opt, pes, nc, delay, c.think_time, N)

        def pick(v):
            return v if sym else float(v)

        aba = tuple(pick(v) for v in b["aba"])
        bjb = tuple(pick(v) for v in b["bjb"])
        gb = pb = None
        notes: tuple = ()
        sets = [aba, bjb]
        if sym:
            notes = ("GB and PB are computed for numeric networks only",)
        elif N >= 1:
            extra = _gb_pb(opt, pes, delay, c.think_time, N)
            gb, pb = extra["gb"], extra["pb"]
            sets += [gb, pb]
        if sym:
            xl, xh = _smax(aba[0], bjb[0]), _smin(aba[1], bjb[1])
            rl, rh = _smax(aba[2], bjb[2]), _smin(aba[3], bjb[3])
        else:
            xl, xh = max(s[0] for s in sets), min(s[1] for s in sets)
            rl, rh = max(s[2] for s in sets), min(s[3] for s in sets)
            if N == 0:
                xl = xh = 0.0
        nstar = saturation_population(net, c.name)
        bn = () if sym else bottleneck(net, c.name)
        return Bounds(net, c.name, N, xl, xh, rl, rh, aba, bjb, 1 / _smax(*opt), nstar, bn,
                      gb=gb, pb=pb, notes=notes)

    lam = c.arrival_rate
    D_nc = sum(nc) + delay
    Dmax_o = _smax(*opt)
    Xmax = 1 / Dmax_o
    if not sym and lam * Dmax_o >= 1:
        k = names[int(np.argmax(opt))]
        raise UnstableError(
            f"class {c.name!r}: arrival rate {lam:g} >= saturation rate 1/Dmax = {Xmax:.6g} "
            f"(station {k!r})", station=k, rho=lam * Dmax_o)
    Do, Dp = sum(opt), sum(pes)
    Davg = Do / len(opt)
    Dmax_p = _smax(*pes)
    # optimistic network (D/a_max) plus the delays: a valid lower bound (the
    # Seidmann-like "+ D (1 - 1/c)" would not be one: it overestimates M/M/c)
    bjb_lo = Do / (1 - lam * Davg) + delay
    if sym:
        bjb_hi = Dp / (1 - lam * Dmax_p) + delay
    else:
        bjb_hi = Dp / (1 - lam * Dmax_p) + delay if lam * Dmax_p < 1 else math.inf
    aba = (lam, lam, D_nc, math.inf)
    bjb = (lam, lam, bjb_lo, bjb_hi)
    rl = _smax(D_nc, bjb_lo)
    bn = () if sym else bottleneck(net, c.name)
    return Bounds(net, c.name, lam, lam, lam, rl, bjb_hi, aba, bjb, Xmax, None, bn)


# ---------------------------------------------------------------------------
# several classes
# ---------------------------------------------------------------------------

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
