"""Bounds on the throughput and response time of one class: asymptotic
(ABA) and balanced job (BJB) bounds, geometric (GB) and proportional (PB)
bounds, and the :class:`Bounds` result; :func:`bounds` is the entry point
for every model (multi-class and token-pool models go on to
:mod:`.bounds_multiclass`).

The asymptotic and balanced job bounds are QSP ch. 5 (Lazowska, Zahorjan,
Graham & Sevcik, *Quantitative System Performance*, Prentice-Hall 1984,
Table 5.3); the geometric bounds are Casale, Muntz & Serazzi (IEEE Trans.
Computers 57(6), 2008), the proportional bounds Hsieh & Lam (Performance
Evaluation 7(1), 1987).  A bound is a guarantee: :func:`bounds` prints only
the bounds proven for the model it is given (see :class:`Bounds` for each
bound's scope) and refuses, naming the station or pool, where none is.

Multi-server and load-dependent stations enter the bounds through their
fastest and slowest service rates: a station whose rate with n jobs is
a(n)/S is never faster than a single server of demand D/a_max nor slower than
one of demand D/a_min (a c-server queue: D/c and D), and throughput of a
single-class product-form network is monotone in its service rates, so bounds
computed on the optimistic (D/a_max) and pessimistic (D/a_min) networks
bracket it.  A job's own time per visit is at least S/sigma, sigma = max_n
a(n)/n (:func:`~.laws.job_speed`: 1 for a queue, more for a load-dependent
station that serves one job faster than S), which the no-contention terms
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
from ..model.network import Closed, Delay, Network
from ..results import label_dict, label_lines
from . import requires
from ._common import mixed_priority_station, non_exponential_fcfs
from .laws import (
    _bound_demands,
    _bound_sums,
    _class_of,
    _smax,
    _smin,
    bottleneck,
    saturation_population,
)

__all__ = [
    "bounds",
    "geometric_bounds",
    "proportional_bounds",
    "Bounds",
]

# ---------------------------------------------------------------------------
# single-class closed bounds: ABA, BJB, GB, PB
# ---------------------------------------------------------------------------

def _closed_bounds(Dq_opt, Dq_pes, Dq_nc, delay, Z, n, sym=None):
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
    delay stations are part of the think time in BJB.  ``sym``: whether any
    argument is symbolic (``False`` from a caller that knows the network is
    numeric; ``None``: looked at here).
    """
    if sym is None:
        sym = any(is_symbolic(x) for x in [*Dq_opt, *Dq_pes, *Dq_nc, delay, Z, n])
    mx, mn = (_smax, _smin) if sym else (_max_args, _min_args)
    Zeff = Z + delay
    Do, Dp, Dnc = sum(Dq_opt), sum(Dq_pes), sum(Dq_nc) + delay
    Dmax_o, Dmax_p = mx(*Dq_opt), mx(*Dq_pes)
    Davg_o = Do / len(Dq_opt)
    if not sym and np.ndim(n) == 0:
        return _closed_bounds_scalar(float(Do), float(Dp), float(Dnc), float(Dmax_o),
                                     float(Dmax_p), float(Davg_o), float(delay), float(Z),
                                     float(n))
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


def _closed_bounds_scalar(Do, Dp, Dnc, Dmax_o, Dmax_p, Davg_o, delay, Z, n):
    """:func:`_closed_bounds` for one numeric population (QSP Table 5.3):
    the same formulas in the same order on Python floats (numpy on single numbers costs more
    than the arithmetic).  Every divisor is positive: the demands are, and
    a class with none is answered before the bounds."""
    Zeff = Z + delay
    aba_X_hi = min(1 / Dmax_o, n / (Dnc + Z))
    aba_X_lo = n / max(n * (Dp + delay) + Z, 1e-300) if n > 0 else 0.0
    aba_R_lo = max(Dnc, n * Dmax_o - Z)
    aba_R_hi = max(n, 1.0) * (Dp + delay)
    nn = max(n, 1.0)
    bjb_X_lo = nn / (Dp + Zeff + (nn - 1) * Dmax_p / (1 + Zeff / (nn * Dp))) if n > 0 else 0.0
    bjb_X_hi = min(1 / Dmax_o, nn / (Do + Zeff + (nn - 1) * Davg_o / (1 + Zeff / Do))
                   if n > 0 else 0.0)
    bjb_R_lo = max(nn * Dmax_o - Z, Do + delay + (nn - 1) * Davg_o / (1 + Zeff / Do))
    bjb_R_hi = Dp + delay + (nn - 1) * Dmax_p / (1 + Zeff / (nn * Dp))
    return {
        "aba": (aba_X_lo, aba_X_hi, aba_R_lo, aba_R_hi),
        "bjb": (bjb_X_lo, bjb_X_hi, bjb_R_lo, bjb_R_hi),
    }


def _max_args(*args):
    """max of numbers (the numeric twin of :func:`~.laws._smax`)."""
    return max(args)


def _min_args(*args):
    """min of numbers (the numeric twin of :func:`~.laws._smin`)."""
    return min(args)


def _geo_q(y, n):
    """sum_{j=1..n} y^j = y/(1-y) - y^(n+1)/(1-y) (Casale et al. 2008, eqs. 8
    and 13), and n when y >= 1."""
    if y >= 1:
        return float(n)
    return (y - y ** (n + 1)) / (1 - y)


def _positive(L) -> np.ndarray:
    """The positive entries of ``L`` as a float array."""
    if isinstance(L, np.ndarray) and L.dtype == np.float64 and L.ndim == 1:
        return L[L > 0]
    return np.asarray([float(x) for x in L if float(x) > 0])


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
    if N <= 0:
        return 0.0, 0.0
    return _geometric(_Demands(L), N, Z)


class _Demands:
    """What the geometric and proportional bounds read from a vector of
    demands (its positive entries), computed once: a network keeps those
    of its optimistic and pessimistic demands (``net.lowered.memo``)."""

    def __init__(self, L):
        L = _positive(L)
        self.L = L
        self.Lt, self.Lm = float(L.sum()), float(L.max())
        self.sumsq = float((L ** 2).sum())
        self.s = self.sumsq / self.Lt
        self.Lb = L[L < self.Lm]           # the stations below L_max
        self.dL = self.Lm - self.Lb
        self.r = L / self.Lm
        # y_k = L_k min(1/L_max, ...) < 1 below L_max, unless a demand is
        # within rounding of L_max (then :func:`_geo_q_all` checks each y)
        self.y_below_one = bool(len(self.Lb) == 0 or float(self.Lb.max()) * (1 / self.Lm) < 1)


def _demand_pair(opt, pes) -> tuple:
    """(:class:`_Demands` of the optimistic, of the pessimistic demands):
    one object for both when they are the same (no multi-server or
    load-dependent station)."""
    d = _Demands(opt)
    return (d, d) if tuple(opt) == tuple(pes) else (d, _Demands(pes))


def _geometric(d: _Demands, N, Z) -> tuple:
    """:func:`geometric_bounds` of the demands ``d`` (N >= 1): Casale, Muntz
    & Serazzi, IEEE Trans. Computers 57(6), 2008, eqs. 8 and 13."""
    Lt, Lm, s = d.Lt, d.Lm, d.s
    n = N - 1
    r_lo = r_hi = Z + Lt + Lm * (N - 1)
    if n > 0 and len(d.Lb):
        # every station below L_max at once (sum_k of eqs. 8 and 13)
        Lb = d.Lb
        x_aba = min(1 / Lm, (n - 1) / (Lt + Z)) if n > 1 else 0.0
        y_lo = n * Lb / (Z + Lt + Lm * n)
        y_hi = Lb * min(1 / Lm, n / (Z + Lt + s * (n - 1 - Z * x_aba)))
        # y_lo = n L_k / (Z + L + L_max n) < 1 always (L_k < L_max <= L)
        r_lo -= float(np.dot(d.dL, (y_lo - y_lo ** (n + 1)) / (1 - y_lo)))
        q_hi = ((y_hi - y_hi ** (n + 1)) / (1 - y_hi) if d.y_below_one
                else _geo_q_all(y_hi, n))
        r_hi -= float(np.dot(d.dL, q_hi))
    x_lo = 2 * N / (r_lo + math.sqrt(max(r_lo ** 2 - 4 * Z * Lm * (N - 1), 0.0)))
    x_hi = 2 * N / (r_hi + math.sqrt(max(r_hi ** 2 - 4 * Z * Lm * N, 0.0)))
    return float(x_lo), float(min(x_hi, 1 / Lm))


def _geo_q_all(y, n):
    """:func:`_geo_q` of each entry of the array ``y`` (the stations below
    L_max have y < 1, but for a demand within rounding of L_max)."""
    if y.max() < 1:
        return (y - y ** (n + 1)) / (1 - y)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        q = (y - y ** (n + 1)) / (1 - y)
    return np.where(y >= 1, float(n), q)


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
    if N <= 0:
        return 0.0, 0.0
    return _proportional(_Demands(D), N, Z)


def _proportional(d: _Demands, N, Z) -> tuple:
    """:func:`proportional_bounds` of the demands ``d`` (N >= 1): Hsieh &
    Lam, Performance Evaluation 7(1), 1987 (the form of Octave's
    ``qncspb``)."""
    Dt, Dm, r = d.Lt, d.Lm, d.r
    lo = N / (Z + Dt + (N - 1) * Dm * float(np.add.reduce(r ** N))
              / float(np.add.reduce(r ** (N - 1))))
    hi = N / (Z + Dt + (N - 1 - Z / Dm) * d.sumsq / Dt)
    return float(lo), float(min(hi, 1 / Dm))


def _gb_pb(opt, pes, delay, Z, N, r_min):
    """GB and PB on the pessimistic (lower) and optimistic (upper)
    networks, as (X_lo, X_hi, R_lo, R_hi) with R = N/X - Z (Little).  The
    R lower bound is at least ``r_min``, ABA's R >= max(D, N D_max - Z),
    proven for any closed network: with a think time long against the
    demands the bound's own N/X^+ - Z falls below the no-contention time,
    even below zero (PB at Z > (N - 1) D_max: R >= -0.031 s printed before),
    and the larger of two proven lower bounds is one.  ``opt`` and ``pes``
    are demand vectors or their :class:`_Demands`."""
    opt = opt if isinstance(opt, _Demands) else _Demands(opt)
    pes = pes if isinstance(pes, _Demands) else _Demands(pes)
    out = {}
    for key, f in (("gb", _geometric), ("pb", _proportional)):
        if pes is opt:   # single-server queues only: one network, both bounds at once
            lo, hi = f(opt, N, Z + delay)
        else:
            lo = f(pes, N, Z + delay)[0]
            hi = f(opt, N, Z + delay)[1]
        out[key] = (lo, hi, max(N / hi - Z, r_min), N / lo - Z)
    return out


def _elt_min(a, b, sym):
    return _smin(a, b) if sym else np.minimum(a, b)


def _elt_max(a, b, sym):
    return _smax(a, b) if sym else np.maximum(a, b)


# ---------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------

_KEYS = ("aba", "bjb", "gb", "pb")


def _exact_decimals(v):
    """``v`` (a sympy expression, a tuple of them, or a number) with every
    sympy Float replaced by the exact rational of its shortest decimal
    (``repr`` of the double: 2.0 -> 2, 0.1 -> 1/10).  Plain numbers and
    None pass unchanged."""
    if isinstance(v, tuple):
        return tuple(_exact_decimals(x) for x in v)
    if not hasattr(v, "atoms"):
        return v
    import sympy as sp

    floats = v.atoms(sp.Float)
    if not floats:
        return v
    return v.xreplace({f: sp.Rational(repr(float(f))) for f in floats})
_LABEL = {"aba": "ABA", "bjb": "BJB", "gb": "GB", "pb": "PB"}


def _scope(b) -> tuple:
    """What a set of bounds rests on, in words: the bounds it gives and
    the model property each needs (see :class:`Bounds`)."""
    given = [_LABEL[k] for k in _KEYS if getattr(b, k, None) is not None]
    net = b.network
    if net.pools:
        return ("asymptotic bounds with each token pool as a station of `tokens` servers: "
                "operational laws only",)
    if "forkjoin" in net.lowered.kind:
        return ("operational bounds of a fork-join: no faster than its slowest branch, no "
                "slower than the sum of its branches",)
    if len(net.classes) > 1:
        return ("multi-class asymptotic bounds: product form (the arrival theorem)",)
    out = ["asymptotic bounds (ABA): operational laws only, any service and arrival shape"]
    if any(k in given for k in ("BJB", "GB", "PB")):
        out.append(f"{', '.join(k for k in given if k != 'ABA')}: product form (BCMP)")
    return tuple(out)


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
    #: what the answer is (always ``"bound"``) and what it rests on
    exactness: str = "bound"
    assumptions: tuple = ()
    warnings: tuple = ()
    error: Any = None

    def __post_init__(self):
        if not self.assumptions:
            object.__setattr__(self, "assumptions", _scope(self))
        if not self.network.is_symbolic:
            return
        # a decimal written in a model file (service: 2.0) is the exact
        # decimal the user meant: formulas show Max(2, 10*SA), not Max(2.0, ...)
        for name in ("population", "throughput_lower", "throughput_upper",
                     "response_time_lower", "response_time_upper", "max_throughput",
                     "saturation_population", "aba", "bjb", "gb", "pb"):
            object.__setattr__(self, name, _exact_decimals(getattr(self, name)))

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
            **label_dict(self),
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
        }

    def table(self) -> str:
        lo_hi = [
            ["X [1/s]", self.throughput_lower, self.throughput_upper],
            ["R [s]", self.response_time_lower, self.response_time_upper],
        ]
        rows = []
        for k, b in self._sets():
            rows += [[f"{_LABEL[k]} X", b[0], b[1]], [f"{_LABEL[k]} R", b[2], b[3]]]
        head = (f"bounds [bound] for class {self.class_name!r}"
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
        lines += label_lines(self)
        return "\n".join(lines)

    def __repr__(self):
        return self.table()

    def _repr_html_(self):
        return "<pre>" + self.table() + "</pre>"

    def to_frame(self):
        import pandas as pd

        frame = pd.DataFrame(
            {"lower": [self.throughput_lower, self.response_time_lower],
             "upper": [self.throughput_upper, self.response_time_upper]},
            index=pd.Index(["X", "R"], name="metric"),
        )
        frame.attrs.update(label_dict(self))
        return frame

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

def _not_product_form(net: Network) -> str | None:
    """Why the balanced job, geometric, proportional and multi-class bounds
    are not proven for ``net`` (they rest on product form, through the
    arrival theorem or the M/M/1 response time): a non-exponential FCFS
    queue, a non-Poisson arrival stream, an FCFS queue whose mean service
    time differs by class; None when none of these holds."""
    return net.lowered.memo("bounds.not_product_form", lambda: _why_not_product_form(net))


def _why_not_product_form(net: Network) -> str | None:
    _, shape = non_exponential_fcfs(net)
    if shape is not None:
        return f"{shape} breaks product form"
    return requires.arrival_shapes(net) or requires.fcfs_class_dependent(net)


def _closed_class(net, c, ci, opt, pes, nc, delay, shape, sym) -> Bounds:
    """The bounds of closed class ``c`` (index ``ci``) of a single-class
    network: ABA and BJB, GB and PB where product form holds, N*, 1/D_max
    and the bottleneck (see :func:`bounds`)."""
    N = c.population
    if sym:
        b = _closed_bounds(opt, pes, nc, delay, c.think_time, N)
    else:
        Do, Dp, Dnc, Dmax_o, Dmax_p, _ = _bound_sums(net, ci)
        b = _closed_bounds_scalar(float(Do), float(Dp), float(Dnc + delay), float(Dmax_o),
                                  float(Dmax_p), float(Do / len(opt)), float(delay),
                                  float(c.think_time), float(N))

    def pick(v):
        return v if sym else float(v)

    aba = tuple(pick(v) for v in b["aba"])
    bjb = tuple(pick(v) for v in b["bjb"])
    gb = pb = None
    notes: tuple = ()
    sets = [aba, bjb]
    if shape is not None:
        # the BJB/GB/PB of the exponential model can cut off the true X
        # (deterministic service: X above the BJB upper bound)
        bjb = None
        sets = [aba]
        notes = (f"{shape}: BJB, GB and PB need product form and are not given; ABA "
                 "holds for any service and arrival shape",)
    elif sym:
        notes = ("GB and PB are computed for numeric networks only",)
    elif N >= 1:
        demands = net.lowered.memo(("bounds.demands", ci), lambda: _demand_pair(opt, pes))
        extra = _gb_pb(*demands, delay, c.think_time, N, float(aba[2]))
        gb, pb = extra["gb"], extra["pb"]
        sets += [gb, pb]
    if sym and bjb is not None:
        xl, xh = _smax(aba[0], bjb[0]), _smin(aba[1], bjb[1])
        rl, rh = _smax(aba[2], bjb[2]), _smin(aba[3], bjb[3])
    elif sym:
        xl, xh, rl, rh = aba
    else:
        xl, xh = max(s[0] for s in sets), min(s[1] for s in sets)
        rl, rh = max(s[2] for s in sets), min(s[3] for s in sets)
        if N == 0:
            xl = xh = 0.0
    nstar = saturation_population(net, c.name)
    bn = () if sym else bottleneck(net, c.name)
    return Bounds(net, c.name, N, xl, xh, rl, rh, aba, bjb,
                  1 / (_smax(*opt) if sym else _bound_sums(net, ci)[3]), nstar, bn,
                  gb=gb, pb=pb, notes=notes)


def bounds(net: Network, cls: str | None = None) -> Bounds:
    """Bounds on the throughput and response time of one class.

    Single closed class, product form: asymptotic (ABA) and balanced job
    (BJB) bounds (QSP Table 5.3), geometric (GB, Casale et al. 2008) and
    proportional (PB, Hsieh & Lam 1987) bounds, N*, 1/D_max and the
    bottleneck.  Multi-class: the multi-class asymptotic bounds of class
    ``cls`` given every class's population, demands and arrival rates (see
    :func:`~.bounds_multiclass.multiclass_bounds`).  Token pools (closed
    classes, one or several; nested pools): the asymptotic bounds with each
    pool as a station (see :func:`~.bounds_multiclass.pool_bounds`).  A class that visits only
    delay stations has X = N / (Z + D) exactly.

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
        A finite capacity that can bind, a token pool whose span is unknown,
        pools with open classes or that can wait on each other in a cycle, a
        symbolic multi-class network: no bound is proven there, and the
        message names the station or pool.
    """
    from ..errors import InvalidValueError, UnstableError
    from .bounds_multiclass import multiclass_bounds, pool_bounds

    if not isinstance(net, Network):
        raise InvalidValueError(f"bounds needs a qmodels Network, got {type(net).__name__}")
    if net.has_class_switching:
        from .switching import refusal

        raise refusal("bounds")
    ci = _class_of(net, cls)
    c = net.classes[ci]
    if "forkjoin" in net.lowered.kind:
        from .forkjoin import forkjoin_bounds  # operational bounds only

        return forkjoin_bounds(net, c.name)
    _check_capacities(net)
    opt, pes, nc, delay, names = _bound_demands(net, ci)
    sym = net.is_symbolic
    if net.pools:
        return pool_bounds(net, c.name)
    if not opt:
        return _all_delay(net, c, delay)
    # BJB, GB, PB and the multi-class bounds rest on product form (the
    # arrival theorem), which a non-exponential FCFS queue breaks; ABA is
    # operational and holds for any shape; the same for a non-Poisson
    # arrival stream and an FCFS queue whose mean service differs by class
    shape = _not_product_form(net)
    if len(net.classes) > 1:
        mixed = mixed_priority_station(net)
        if mixed is not None:
            raise UnsupportedModelError(
                f"station {mixed.name!r}: discipline {mixed.discipline!r} with classes of "
                "different priority levels breaks product form, on which the multi-class "
                "bounds rest: no multi-class bound is proven here; use method='priority' "
                "or 'sim'")
        if shape is not None:
            raise UnsupportedModelError(
                f"{shape}; the multi-class bounds rest on product form "
                "(arrival theorem): no multi-class bound is proven here; use method='sim'")
        return multiclass_bounds(net, c.name)
    if isinstance(c, Closed):
        return _closed_class(net, c, ci, opt, pes, nc, delay, shape, sym)

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
    if shape is not None:
        # the open BJB is the M/M/1 response time: an M/G/1 with SCV > 1
        # waits longer (Pollaczek-Khinchine), so only ABA is proven
        return Bounds(net, c.name, lam, lam, lam, D_nc, math.inf, aba, None, Xmax, None, bn,
                      notes=(f"{shape}: BJB needs product form and is not given; ABA holds "
                             "for any service and arrival shape",))
    return Bounds(net, c.name, lam, lam, lam, rl, bjb_hi, aba, bjb, Xmax, None, bn)
