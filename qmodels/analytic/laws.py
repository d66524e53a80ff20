"""Operational laws, asymptotic and balanced job bounds, the saturation
population N* and the bottleneck.

The laws hold for any system observed over a period in which arrivals equal
completions (Denning & Buzen, "The operational analysis of queueing network
models", Computing Surveys 10(3), 1978; Lazowska, Zahorjan, Graham & Sevcik,
*Quantitative System Performance* (QSP), Prentice-Hall 1984, ch. 3).  The
bounds are QSP ch. 5 (Table 5.3): they need only the demands.  Every function
accepts numbers, numpy arrays or sympy expressions.

Multi-server and load-dependent stations enter the bounds through their
fastest and slowest service rates: a station whose rate with n jobs is
a(n)/S is never faster than a single server of demand D/a_max nor slower than
one of demand D/a_min (a c-server queue: D/c and D), and throughput of a
product-form network is monotone in its service rates, so bounds computed on
the optimistic (D/a_max) and pessimistic (D/a_min) networks bracket it.  Delay
stations are folded into the think time (both are infinite servers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._format import fmt, format_table
from .._validate import is_symbolic
from ..errors import UnsupportedModelError
from ..model.network import Closed, Delay, Network

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
# demands seen by the bounds
# ---------------------------------------------------------------------------

def _class_of(net: Network, cls: str | None):
    if cls is not None:
        return net.class_index(cls)
    if len(net.classes) != 1:
        raise UnsupportedModelError(
            "bounds and bottleneck analysis are single-class: name the class (cls=...)"
        )
    return 0


def _bound_demands(net: Network, ci: int):
    """(queue demands optimistic, pessimistic, delay total, names) for class ci."""
    opt, pes, names = [], [], []
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
        names.append(s.name)
    return opt, pes, delay, names


def bottleneck(net: Network, cls: str | None = None) -> tuple:
    """Station(s) with the largest demand per unit of service capacity,
    D_k / a_max,k (QSP sec. 5.2): the one that saturates first.  Ties (within
    a relative 1e-9) are all returned.  Delay stations never saturate."""
    ci = _class_of(net, cls)
    opt, _, _, names = _bound_demands(net, ci)
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
    (QSP sec. 5.2, eq. 5.3): beyond N* the bottleneck is saturated."""
    ci = _class_of(net, cls)
    c = net.classes[ci]
    if not isinstance(c, Closed):
        raise UnsupportedModelError(f"class {c.name!r} is open: N* is for closed classes")
    opt, _, delay, _ = _bound_demands(net, ci)
    if not opt:
        return math.inf
    D = sum(net.demands[ci, k] for k, s in enumerate(net.stations) if not isinstance(s, Delay))
    Dmax = _smax(*opt)
    return (D + delay + c.think_time) / Dmax


# ---------------------------------------------------------------------------
# bounds
# ---------------------------------------------------------------------------

def _closed_bounds(Dq_opt, Dq_pes, D_true, Zeff, Z, n):
    """ABA and BJB for population n (scalar, array or symbol).

    QSP Table 5.3 (closed, terminal workload with think time Z; with Z = 0 it
    reduces to the batch case):

        ABA   N/(N D + Z) <= X <= min(1/Dmax, N/(D + Z))
              max(D, N Dmax - Z) <= R <= N D
        BJB   N/(D + Z + (N-1) Dmax / (1 + Z/(N D))) <= X
              X <= min(1/Dmax, N/(D + Z + (N-1) Davg / (1 + Z/D)))
              max(N Dmax - Z, D + (N-1) Davg/(1 + Z/D)) <= R
              R <= D + (N-1) Dmax / (1 + Z/(N D))

    Here the optimistic network (demands D/a_max) gives the upper X and
    lower R bounds, the pessimistic one (D/a_min) the others; delay stations
    are part of Zeff.
    """
    sym = any(is_symbolic(x) for x in [*Dq_opt, *Dq_pes, D_true, Zeff, n])
    mx, mn = (_smax, _smin)
    Do, Dp = sum(Dq_opt), sum(Dq_pes)
    Dmax_o, Dmax_p = mx(*Dq_opt), mx(*Dq_pes)
    Davg_o = Do / len(Dq_opt)
    delay_part = Zeff - Z  # delay stations inside the network
    if not sym:
        n = np.asarray(n, dtype=float)
    # ABA (on the true demands for the no-contention terms)
    aba_X_hi = _elt_min(1 / Dmax_o, n / (D_true + Z), sym)
    aba_X_lo = n / (n * (Dp + delay_part) + Z) if sym else np.where(
        n > 0, n / np.maximum(n * (Dp + delay_part) + Z, 1e-300), 0.0)
    aba_R_lo = _elt_max(D_true, n * Dmax_o - Z, sym)
    aba_R_hi = n * (Dp + delay_part) if sym else np.maximum(n, 1) * (Dp + delay_part)
    # BJB on the queueing part, delays folded into Zeff
    if sym:
        bjb_X_lo = n / (Dp + Zeff + (n - 1) * Dmax_p / (1 + Zeff / (n * Dp)))
        bjb_X_hi = mn(1 / Dmax_o, n / (Do + Zeff + (n - 1) * Davg_o / (1 + Zeff / Do)))
        bjb_R_lo = mx(n * Dmax_o - Z, Do + delay_part + (n - 1) * Davg_o / (1 + Zeff / Do))
        bjb_R_hi = Dp + delay_part + (n - 1) * Dmax_p / (1 + Zeff / (n * Dp))
    else:
        nn = np.maximum(n, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            bjb_X_lo = np.where(n > 0, nn / (Dp + Zeff + (nn - 1) * Dmax_p
                                             / (1 + Zeff / (nn * Dp))), 0.0)
            bjb_X_hi = np.minimum(1 / Dmax_o, np.where(
                n > 0, nn / (Do + Zeff + (nn - 1) * Davg_o / (1 + Zeff / Do)), 0.0))
            bjb_R_lo = np.maximum(nn * Dmax_o - Z,
                                  Do + delay_part + (nn - 1) * Davg_o / (1 + Zeff / Do))
            bjb_R_hi = Dp + delay_part + (nn - 1) * Dmax_p / (1 + Zeff / (nn * Dp))
    return {
        "aba": (aba_X_lo, aba_X_hi, aba_R_lo, aba_R_hi),
        "bjb": (bjb_X_lo, bjb_X_hi, bjb_R_lo, bjb_R_hi),
    }


def _elt_min(a, b, sym):
    return _smin(a, b) if sym else np.minimum(a, b)


def _elt_max(a, b, sym):
    return _smax(a, b) if sym else np.maximum(a, b)


@dataclass(frozen=True)
class Bounds:
    """Asymptotic (ABA) and balanced job (BJB) bounds of one class.

    ``throughput_lower/upper`` and ``response_time_lower/upper`` are the
    tightest of the two; ``aba`` and ``bjb`` hold each set as
    ``(X_lower, X_upper, R_lower, R_upper)``.  For an open class X is the
    arrival rate and ``max_throughput`` the saturation rate 1/D_max.
    """

    network: Network
    class_name: str
    population: Any
    throughput_lower: Any
    throughput_upper: Any
    response_time_lower: Any
    response_time_upper: Any
    aba: tuple
    bjb: tuple
    max_throughput: Any
    saturation_population: Any
    bottleneck: tuple
    method: str = "bounds"

    X = property(lambda self: (self.throughput_lower, self.throughput_upper))
    R = property(lambda self: (self.response_time_lower, self.response_time_upper))

    @property
    def n_star(self):
        """Alias of ``saturation_population`` (N*)."""
        return self.saturation_population

    def to_dict(self) -> dict:
        def f(v):
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
                }
            },
            "stations": {
                s.name: {"D": f(net.demands[ci, k]),
                         "U": {"upper": f(_u_upper(s, net.demands[ci, k],
                                                   self.throughput_upper))}}
                for k, s in enumerate(net.stations)
            },
            "bottleneck": list(self.bottleneck),
        }

    def table(self) -> str:
        lo_hi = [
            ["X [1/s]", self.throughput_lower, self.throughput_upper],
            ["R [s]", self.response_time_lower, self.response_time_upper],
        ]
        rows = [["ABA X", self.aba[0], self.aba[1]], ["ABA R", self.aba[2], self.aba[3]],
                ["BJB X", self.bjb[0], self.bjb[1]], ["BJB R", self.bjb[2], self.bjb[3]]]
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
        """ABA and BJB for every population in ``populations`` (closed
        class): a DataFrame with columns X_aba_lo, X_aba_hi, X_bjb_lo, ...
        indexed by N, ready to plot under an exact TPS curve."""
        import pandas as pd

        n = np.asarray(populations, dtype=float)
        b = _closed_parts(self.network, self.network.class_index(self.class_name), n)
        cols = {}
        for key in ("aba", "bjb"):
            xl, xh, rl, rh = b[key]
            cols[f"X_{key}_lo"] = np.broadcast_to(xl, n.shape)
            cols[f"X_{key}_hi"] = np.broadcast_to(xh, n.shape)
            cols[f"R_{key}_lo"] = np.broadcast_to(rl, n.shape)
            cols[f"R_{key}_hi"] = np.broadcast_to(rh, n.shape)
        return pd.DataFrame(cols, index=pd.Index(populations, name="N"))


def _u_upper(s, d, x_hi):
    if isinstance(s, Delay):
        return x_hi * d
    return _smin(1, x_hi * d / s.max_rate_multiplier) if is_symbolic(x_hi * d) else min(
        1.0, float(x_hi * d / s.max_rate_multiplier))


def _closed_parts(net, ci, n):
    c = net.classes[ci]
    opt, pes, delay, _ = _bound_demands(net, ci)
    if not opt:
        raise UnsupportedModelError(
            f"class {c.name!r} visits no queueing station: there is nothing to bound"
        )
    D_true = sum(net.demands[ci, k] for k in range(len(net.stations)))
    return _closed_bounds(opt, pes, D_true, delay + c.think_time, c.think_time, n)


def bounds(net: Network, cls: str | None = None) -> Bounds:
    """Asymptotic and balanced job bounds for one class.

    Closed class: bounds on X(N) and R(N) (QSP Table 5.3), N*, 1/Dmax and
    the bottleneck.  Open class: X = lambda must stay below 1/Dmax (else
    :class:`~qmodels.errors.UnstableError`), and

        ABA  R >= D
        BJB  D / (1 - lambda Davg) <= R <= D / (1 - lambda Dmax)

    (QSP Table 5.3, open models; the upper bound is infinite when the
    pessimistic network saturates).
    """
    from ..errors import UnstableError

    ci = _class_of(net, cls)
    c = net.classes[ci]
    opt, pes, delay, names = _bound_demands(net, ci)
    sym = net.is_symbolic
    if isinstance(c, Closed):
        N = c.population
        if not opt:
            raise UnsupportedModelError(
                f"class {c.name!r} visits no queueing station: there is nothing to bound"
            )
        b = _closed_parts(net, ci, N)

        def pick(v):
            return v if sym else float(v)

        aba = tuple(pick(v) for v in b["aba"])
        bjb = tuple(pick(v) for v in b["bjb"])
        if sym:
            xl, xh = _smax(aba[0], bjb[0]), _smin(aba[1], bjb[1])
            rl, rh = _smax(aba[2], bjb[2]), _smin(aba[3], bjb[3])
        else:
            xl, xh = max(aba[0], bjb[0]), min(aba[1], bjb[1])
            rl, rh = max(aba[2], bjb[2]), min(aba[3], bjb[3])
            if N == 0:
                xl = xh = 0.0
        nstar = saturation_population(net, c.name)
        bn = () if sym else bottleneck(net, c.name)
        return Bounds(net, c.name, N, xl, xh, rl, rh, aba, bjb, 1 / _smax(*opt), nstar, bn)

    lam = c.arrival_rate
    D_true = sum(net.demands[ci, k] for k in range(len(net.stations)))
    if not opt:
        return Bounds(net, c.name, lam, lam, lam, D_true, D_true,
                      (lam, lam, D_true, D_true), (lam, lam, D_true, D_true), math.inf, None, ())
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
    aba = (lam, lam, D_true, math.inf)
    bjb = (lam, lam, bjb_lo, bjb_hi)
    rl = _smax(D_true, bjb_lo)
    bn = () if sym else bottleneck(net, c.name)
    return Bounds(net, c.name, lam, lam, lam, rl, bjb_hi, aba, bjb, Xmax, None, bn)
