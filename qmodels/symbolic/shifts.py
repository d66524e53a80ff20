"""Where the bottleneck sits, and the parameter values at which it moves.

The bottleneck of a single-class network is the station with the largest
demand per unit of service capacity, D_k / c_k (c_k servers; a
load-dependent station D_k / max_j a_k(j)): it saturates first and caps
the throughput at 1/max_k D_k/c_k (Lazowska et al. 1984, sec. 5.2).  When
demands depend on a parameter theta (buffer slots, transfer size, I/O
probability, clock), that maximum is a piecewise function of theta and the
bottleneck *moves* at the points where two stations' D_k/c_k cross.

:func:`bottleneck_regions`
    Exact (sympy) intervals of theta in which each station is the
    bottleneck, and the switch points between them.
:func:`demand_crossings`
    Exact values of theta at which two given stations' D_k/c_k are equal
    (other parameters may stay symbols).
:func:`response_time_asymptote`
    The same for the asymptotic response-time bound R >= max(D, N D_max - Z)
    (which term and which station bind, and where that changes).
:func:`bottleneck_sweep`
    The numeric counterpart: evaluate a network factory on a grid of theta
    and locate the switch points by root finding between grid points.

Results print as a table, plot with matplotlib (imported lazily) and give
LaTeX (``latex()``, ``_repr_latex_``, ``latex_lines()`` one equation per
line, each renderable by matplotlib mathtext).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from ..analytic.laws import _class_of
from ..errors import InvalidValueError, UnsupportedModelError
from ..model.network import Closed, Delay, LoadDependent, Network, Queue
from ..results import FrameReport
from .exact import _resolve, exact, free_symbols
from .regions import (
    BottleneckRegions,
    Envelope,
    Region,
    ResponseTimeAsymptote,
    SwitchPoint,
)

__all__ = [
    "Region",
    "SwitchPoint",
    "Envelope",
    "BottleneckRegions",
    "ResponseTimeAsymptote",
    "BottleneckSweep",
    "capacity_demands",
    "bottleneck_regions",
    "demand_crossings",
    "response_time_asymptote",
    "bottleneck_sweep",
]

#: Working precision (decimal digits) when ordering exact values.
_DIGITS = 50
#: Two functions count as tied at a sample point when they differ by less
#: than this, relative to the larger.
_TIE = sp.Float("1e-30", _DIGITS)


# ---------------------------------------------------------------------------
# the envelope algorithm
# ---------------------------------------------------------------------------

def _domain(domain) -> tuple:
    if not (isinstance(domain, Sequence) and len(domain) == 2):
        raise InvalidValueError(f"domain must be a pair (lower, upper), got {domain!r}")
    lo, hi = (sp.oo if d == math.inf else -sp.oo if d == -math.inf else exact(d)
              for d in domain)
    if not (lo.is_extended_real and hi.is_extended_real) or not bool(lo < hi):
        raise InvalidValueError(f"domain must be (lower, upper) with lower < upper, got {domain!r}")
    return lo, hi


def _roots(diff, t, lo, hi) -> list:
    """Exact real roots of diff(t) = 0 strictly inside (lo, hi)."""
    diff = sp.cancel(sp.together(diff))
    if diff == 0:
        return []
    num, _ = sp.fraction(diff)
    try:
        poly = sp.Poly(num, t)
    except sp.PolynomialError:
        poly = None
    if poly is not None and poly.free_symbols <= {t} and poly.domain.is_Exact:
        roots = [r for r in poly.real_roots(multiple=True)]
        out = []
        for r in set(roots):
            r = sp.nsimplify(r) if r.is_Rational else r
            if bool(lo < r) and bool(r < hi):
                out.append(r)
        return out
    sols = sp.solveset(diff, t, sp.Interval.open(lo, hi))
    if isinstance(sols, sp.FiniteSet):
        return list(sols)
    raise UnsupportedModelError(
        f"cannot find the crossings of {diff} = 0 for {t} in ({lo}, {hi}) exactly; "
        "use bottleneck_sweep for a numeric answer"
    )


def _nval(e, x):
    v = sp.N(e.subs(x), _DIGITS) if x is not None else sp.N(e, _DIGITS)
    if not v.is_real or not v.is_finite:
        raise UnsupportedModelError(f"{e} is not a finite real number at {x}")
    return v


def _envelope(funcs: dict, t, lo, hi):
    """Regions and switch points of max over funcs (label -> expr in t)."""
    labels = list(funcs)
    cand = []
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            cand += _roots(funcs[labels[i]] - funcs[labels[j]], t, lo, hi)
    # order and de-duplicate by high-precision value
    cand.sort(key=lambda r: sp.N(r, _DIGITS))
    pts: list[Any] = []  # sympy numbers
    for r in cand:
        if pts and abs(sp.N(r - pts[-1], _DIGITS)) <= _TIE * (1 + abs(sp.N(r, _DIGITS))):
            continue
        pts.append(r)
    bounds = [lo, *pts, hi]
    raw = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        if a.is_infinite and b.is_infinite:
            x = sp.Integer(0)
        elif a.is_infinite:
            x = b - 1 - abs(b)
        elif b.is_infinite:
            x = a + 1 + abs(a)
        else:
            x = (a + b) / 2
        vals = {lab: _nval(funcs[lab], {t: x}) for lab in labels}
        top = max(vals.values())
        win = tuple(lab for lab in labels if top - vals[lab] <= _TIE * (1 + abs(top)))
        raw.append([a, b, win])
    merged = [raw[0]]
    for a, b, win in raw[1:]:
        if win == merged[-1][2]:
            merged[-1][1] = b
        else:
            merged.append([a, b, win])
    regions = tuple(Region(a, b, win, funcs[win[0]]) for a, b, win in merged)
    switches = tuple(SwitchPoint(regions[i].upper, regions[i].labels, regions[i + 1].labels)
                     for i in range(len(regions) - 1))
    return regions, switches


# ---------------------------------------------------------------------------
# capacity-normalised demands
# ---------------------------------------------------------------------------

def _class_index(net: Network, cls):
    return _class_of(net, cls, "bottleneck analysis is single-class", "")


def _capacity(s):
    if isinstance(s, Queue):
        return exact(s.servers)
    if isinstance(s, LoadDependent):
        return sp.Max(*[exact(a) for a in s.rate_multipliers])
    raise UnsupportedModelError(f"station {s.name!r}: unknown kind {s.kind!r}")  # pragma: no cover


def capacity_demands(net: Network, cls: str | None = None) -> dict:
    """D_k / c_k for every non-delay station with a demand: station name ->
    exact sympy expression (c_k servers; for a load-dependent station the
    largest rate multiplier).  Lazowska et al. 1984, sec. 5.2 (a c-server
    centre saturates at c / D).

    >>> import qmodels as qm
    >>> capacity_demands(qm.Network([qm.Queue("cpu", 0.04, servers=4), qm.Queue("disk", 0.02)],
    ...                  [qm.Closed("tx", 5, visits={"cpu": 1, "disk": 1})]))
    {'cpu': 1/100, 'disk': 1/50}
    """
    if not isinstance(net, Network):
        raise InvalidValueError(f"expected a qmodels Network, got {type(net).__name__}")
    ci = _class_index(net, cls)
    out = {}
    for k, s in enumerate(net.stations):
        if isinstance(s, Delay):
            continue
        d = exact(net.visits[ci, k]) * exact(net.service_times[ci, k])
        if d == 0:
            continue
        out[s.name] = sp.cancel(d / _capacity(s))
    return out


def _prepare(net, theta, values, cls):
    if not isinstance(net, Network):
        raise InvalidValueError(f"expected a qmodels Network, got {type(net).__name__}")
    if not isinstance(theta, sp.Symbol):
        raise InvalidValueError(f"theta must be a sympy Symbol, got {theta!r}")
    syms = free_symbols(net)
    if theta not in syms:
        raise InvalidValueError(
            f"theta = {theta} does not occur in the network (parameters: "
            f"{', '.join(map(str, syms)) or 'none'})"
        )
    if values:
        from .exact import substitute

        vals = _resolve(values, syms)
        if theta in vals:
            raise InvalidValueError(f"values must not fix theta = {theta}")
        net = substitute(net, vals)
    rest = [s for s in free_symbols(net) if s != theta]
    if rest:
        raise UnsupportedModelError(
            f"give values for {', '.join(map(str, rest))}: the regions of {theta} can only "
            "be ordered when it is the one free parameter (demand_crossings accepts more)"
        )
    return net


def bottleneck_regions(
    net: Network,
    theta,
    *,
    domain=(0, math.inf),
    values: Mapping | None = None,
    cls: str | None = None,
) -> BottleneckRegions:
    """The intervals of ``theta`` in which each station is the bottleneck.

    Parameters
    ----------
    net : Network
        Demands, visits, service times or server counts may depend on the
        sympy symbol ``theta``.
    theta : sympy.Symbol
    domain : (lower, upper)
        Range of theta considered (default (0, inf)); ``math.inf`` allowed.
    values : mapping, optional
        Values for every other symbol of the network.
    cls : str, optional
        The class (required when there are several).

    Returns
    -------
    BottleneckRegions

    Raises
    ------
    InvalidValueError
        ``theta`` not a symbol of the network, a bad domain.
    UnsupportedModelError
        Other symbols left without values; crossings that sympy cannot
        solve exactly.

    Notes
    -----
    The bottleneck is argmax_k D_k(theta)/c_k(theta) over the queueing
    stations (Lazowska et al. 1984, sec. 5.2; Denning & Buzen 1978): it
    saturates first, X <= 1/max_k D_k/c_k.  The switch points are the
    real roots, inside the domain, of D_i/c_i - D_j/c_j = 0 for every pair
    at which the maximum changes hands; the winner on each interval between
    consecutive roots is found by evaluating every function at an interior
    point at 50 digits.  A server count enters through its continuous
    relaxation (c = 4.5 is allowed in the formula).

    References
    ----------
    E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative
    System Performance*, Prentice-Hall 1984, sec. 5.2 (bottleneck, asymptotic
    bounds).  P. J. Denning and J. P. Buzen, "The operational analysis of
    queueing network models", ACM Computing Surveys 10(3), 1978.

    Examples
    --------
    >>> import qmodels as qm
    >>> import sympy as sp
    >>> b = sp.Symbol("b", positive=True)   # bytes per request
    >>> net = qm.Network([qm.Queue("dma", 1e-6 + b / 4e8), qm.Queue("port", b / 1e8)],
    ...                  [qm.Closed("io", 4, visits={"dma": 1, "port": 1})])
    >>> bottleneck_regions(net, b).switch_points
    (SwitchPoint(400/3 ~ 133.333: dma -> port),)
    """
    net = _prepare(net, theta, values, cls)
    lo, hi = _domain(domain)
    funcs = capacity_demands(net, cls)
    if not funcs:
        raise UnsupportedModelError("no queueing station with a demand: nothing saturates")
    t = sp.Dummy("t", real=True)
    ft = {k: v.subs(theta, t) for k, v in funcs.items()}
    regions, switches = _envelope(ft, t, lo, hi)
    regions = tuple(Region(r.lower, r.upper, r.labels, r.value.subs(t, theta)) for r in regions)
    return BottleneckRegions(
        parameter=theta, functions=funcs, regions=regions, switch_points=switches,
        domain=(lo, hi), quantity=r"D_{\max}", title="bottleneck (max D_k/c_k)", network=net,
        curves=r"per-server demand $D_k / c_k$ [s]",
    )


def demand_crossings(net: Network, theta, a: str, b: str, *, cls: str | None = None) -> tuple:
    """Exact values of ``theta`` at which D_a/c_a = D_b/c_b (stations
    ``a`` and ``b``); other symbols may remain and then appear in the
    answer.  Solved with :func:`sympy.solve` over the reals.

    >>> import qmodels as qm
    >>> import sympy as sp
    >>> b, r1, r2 = sp.symbols("b r1 r2", positive=True)
    >>> net = qm.Network([qm.Queue("x", 1 + b / r1), qm.Queue("y", b / r2)],
    ...                  [qm.Closed("io", 2, visits={"x": 1, "y": 1})])
    >>> demand_crossings(net, b, "x", "y")
    (r1*r2/(r1 - r2),)
    """
    if not isinstance(net, Network):
        raise InvalidValueError(f"expected a qmodels Network, got {type(net).__name__}")
    funcs = capacity_demands(net, cls)
    for s in (a, b):
        if s not in funcs:
            net.station(s)  # raises UnknownNameError for a wrong name
            raise InvalidValueError(
                f"station {s!r} is a delay or has no demand: it has no D/c to cross"
            )
    if not isinstance(theta, sp.Symbol):
        raise InvalidValueError(f"theta must be a sympy Symbol, got {theta!r}")
    sols = sp.solve(sp.Eq(funcs[a], funcs[b]), theta, dict=False)
    return tuple(s for s in sols if s.is_real is not False)


def response_time_asymptote(
    net: Network,
    theta,
    *,
    domain=(0, math.inf),
    values: Mapping | None = None,
    cls: str | None = None,
) -> ResponseTimeAsymptote:
    """Which term of the asymptotic response-time bound binds, per interval
    of ``theta``:

        R(N) >= max(D, N D_k/c_k - Z for every queueing station k)

    (Lazowska et al. 1984, sec. 5.2, Table 5.3; D is the total demand,
    delays included, Z the think time).  Label ``"no contention"`` for
    R >= D, station names for N D_k/c_k - Z.  ``theta`` may be the
    population itself: the switch from ``"no contention"`` to the
    bottleneck is then at N* = (D + Z)/D_max.

    Raises as :func:`bottleneck_regions`; the class must be closed.

    References
    ----------
    Lazowska, Zahorjan, Graham & Sevcik, *Quantitative System Performance*,
    1984, sec. 5.2 and Table 5.3.

    Examples
    --------
    >>> import qmodels as qm
    >>> import sympy as sp
    >>> N = sp.Symbol("N", positive=True)
    >>> net = qm.Network([qm.Queue("cpu", 0.2), qm.Queue("disk", 0.3)],
    ...                  [qm.Closed("tx", N, think_time=1, visits={"cpu": 1, "disk": 1})])
    >>> response_time_asymptote(net, N).switch_points
    (SwitchPoint(5 ~ 5: no contention -> disk),)
    """
    net = _prepare(net, theta, values, cls)
    ci = _class_index(net, cls)
    c = net.classes[ci]
    if not isinstance(c, Closed):
        raise UnsupportedModelError(
            f"class {c.name!r} is open: the asymptote is for closed classes")
    lo, hi = _domain(domain)
    dk = capacity_demands(net, cls)
    if not dk:
        raise UnsupportedModelError("no queueing station with a demand: nothing saturates")
    N, Z = exact(c.population), exact(c.think_time)
    D = sum((exact(v) * exact(x) for v, x in zip(net.visits[ci], net.service_times[ci],
                                                  strict=True)), sp.Integer(0))
    funcs = {"no contention": sp.cancel(D)}
    funcs.update({k: sp.cancel(N * v - Z) for k, v in dk.items()})
    t = sp.Dummy("t", real=True)
    ft = {k: v.subs(theta, t) for k, v in funcs.items()}
    regions, switches = _envelope(ft, t, lo, hi)
    regions = tuple(Region(r.lower, r.upper, r.labels, r.value.subs(t, theta)) for r in regions)
    return ResponseTimeAsymptote(
        parameter=theta, functions=funcs, regions=regions, switch_points=switches,
        domain=(lo, hi), quantity=r"R^{-}", title="response-time asymptote",
    )


# ---------------------------------------------------------------------------
# numeric sweep
# ---------------------------------------------------------------------------

@dataclass(frozen=True, repr=False)
class BottleneckSweep(FrameReport):
    """Bottleneck at each grid value of a parameter, and the switch points.

    Attributes
    ----------
    values : ndarray (n,)
    stations : tuple of str
        Queueing stations (delays excluded).
    demands : ndarray (n, stations)
        D_k/c_k at each value (``by="demand"``) or U_k from exact MVA
        (``by="utilization"``).
    bottlenecks : tuple of tuple of str
        Winner(s) at each value.
    switch_points : tuple of SwitchPoint (float values)
    """

    values: np.ndarray
    stations: tuple
    demands: np.ndarray
    bottlenecks: tuple
    switch_points: tuple
    by: str = "demand"

    def to_frame(self):
        import pandas as pd

        df = pd.DataFrame(self.demands, index=pd.Index(self.values, name="theta"),
                          columns=list(self.stations))
        df["bottleneck"] = [", ".join(b) for b in self.bottlenecks]
        return df

    def __repr__(self):
        lines = [f"bottleneck sweep ({self.by}) over {len(self.values)} values "
                 f"[{self.values[0]:.6g}, {self.values[-1]:.6g}]"]
        for s in self.switch_points:
            lines.append(f"switch at {s.value:.10g}: {', '.join(s.before)} -> "
                         f"{', '.join(s.after)}")
        if not self.switch_points:
            lines.append(f"no switch: {', '.join(self.bottlenecks[0])} throughout")
        return "\n".join(lines)

    def plot(self, ax=None):
        """D_k/c_k (or U_k) against the parameter, switch points dashed."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        for k, s in enumerate(self.stations):
            ax.plot(self.values, self.demands[:, k], label=s)
        for s in self.switch_points:
            ax.axvline(s.value, ls="--", color="grey")
        ax.set_xlabel("theta")
        ax.set_ylabel("D/c" if self.by == "demand" else "utilization")
        ax.legend()
        return ax


def _figures(net, by, cls, names=None):
    if not isinstance(net, Network):
        raise InvalidValueError(
            f"net_factory must return a qmodels Network, got {type(net).__name__}"
        )
    if net.is_symbolic:
        raise InvalidValueError(
            "net_factory returned a network with symbols "
            f"({', '.join(map(str, free_symbols(net)))})"
        )
    ci = _class_index(net, cls)
    st = [s for s in net.stations if not isinstance(s, Delay)]
    if names is None:
        names = tuple(s.name for s in st)
    if by == "demand":
        out = []
        for s in st:
            k = net.station_index(s.name)
            cap = s.servers if isinstance(s, Queue) else max(s.rate_multipliers)
            out.append(float(net.demands[ci, k]) / float(cap))
    else:
        from ..analytic.mva import mva

        r = mva(net)
        out = [float(r.U[s.name]) for s in st]
    if tuple(s.name for s in st) != names:
        raise InvalidValueError("net_factory must return networks with the same stations")
    return names, np.array(out)


def _winners(names, vals, rtol=1e-9):
    top = vals.max()
    if top <= 0:
        return ()
    return tuple(n for n, v in zip(names, vals, strict=True) if v >= top * (1 - rtol))


def bottleneck_sweep(
    net_factory: Callable[[float], Network],
    values,
    *,
    cls: str | None = None,
    by: str = "demand",
    refine: bool = True,
    xtol: float = 1e-12,
) -> BottleneckSweep:
    """Find the bottleneck switch points numerically by sweeping a
    parameter.

    Parameters
    ----------
    net_factory : callable
        ``net_factory(theta) -> Network`` with numbers only.
    values : sequence of float
        Increasing grid of theta (at least 2 values).
    by : {"demand", "utilization"}
        Rank stations by D_k/c_k, or by U_k from exact MVA
        (:func:`qmodels.mva.mva`; an independent route: U_k = X D_k/c_k).
    refine : bool
        Locate each switch between two grid points by Brent's method on
        the difference of the two stations' figures (``xtol``); without it
        the switch is reported at the grid midpoint.  Refining calls
        ``net_factory`` between grid points: for an integer parameter (a
        server count) pass ``refine=False``.

    Returns
    -------
    BottleneckSweep

    Notes
    -----
    A switch narrower than the grid spacing (a station that wins only
    between two grid points) is not seen; refine the grid to find it.
    Brent's method: R. P. Brent, *Algorithms for Minimization without
    Derivatives*, 1973, ch. 4 (:func:`scipy.optimize.brentq`).

    Examples
    --------
    >>> import qmodels as qm
    >>> f = lambda b: qm.Network([qm.Queue("dma", 1e-6 + b / 4e8), qm.Queue("port", b / 1e8)],
    ...                          [qm.Closed("io", 4, visits={"dma": 1, "port": 1})])
    >>> s = bottleneck_sweep(f, [1, 50, 100, 200, 400])
    >>> round(s.switch_points[0].value, 6)
    133.333333
    """
    if by not in ("demand", "utilization"):
        raise InvalidValueError(f"by must be 'demand' or 'utilization', got {by!r}")
    if not callable(net_factory):
        raise InvalidValueError(f"net_factory must be callable, got {net_factory!r}")
    xs = np.asarray(values, dtype=float)
    if xs.ndim != 1 or len(xs) < 2:
        raise InvalidValueError(
            f"values must be a 1-d sequence of at least 2 numbers, got {values!r}")
    if not np.all(np.isfinite(xs)) or np.any(np.diff(xs) <= 0):
        raise InvalidValueError("values must be finite and strictly increasing")
    names = None
    rows = []
    for x in xs:
        names, v = _figures(net_factory(float(x)), by, cls, names)
        rows.append(v)
    assert names is not None  # len(xs) >= 2: set by the loop
    F = np.array(rows)
    wins = [_winners(names, F[i]) for i in range(len(xs))]

    def g(x, a, b):
        _, v = _figures(net_factory(float(x)), by, cls, names)
        return v[names.index(a)] - v[names.index(b)]

    # runs of equal winner sets
    runs: list[list[Any]] = []  # [first index, last index, winners]
    for i, w in enumerate(wins):
        if runs and runs[-1][2] == w:
            runs[-1][1] = i
        else:
            runs.append([i, i, w])
    # A one-point tie that only touches its neighbours' winner (at an end of
    # the grid, or with the same winner on both sides) is no switch.
    j = 0
    while j < len(runs) and len(runs) > 1:
        r = runs[j]
        prev = runs[j - 1] if j > 0 else None
        nxt = runs[j + 1] if j + 1 < len(runs) else None
        if r[0] == r[1] and len(r[2]) > 1:
            sides = [x for x in (prev, nxt) if x is not None]
            if all(set(x[2]) < set(r[2]) for x in sides) and (
                    len(sides) == 1 or sides[0][2] == sides[1][2]):
                keep = sides[0]
                keep[0], keep[1] = min(keep[0], r[0]), max(keep[1], r[1])
                runs.pop(j)
                if len(sides) == 2:  # join prev and next
                    assert prev is not None and nxt is not None
                    prev[1] = nxt[1]
                    runs.pop(j)
                j = max(j - 1, 0)
                continue
        j += 1
    switches = []
    j = 0
    while j < len(runs) - 1:
        A, B = runs[j], runs[j + 1]
        # a one-point tie run between two others: the switch is that point
        if (j + 2 < len(runs) and B[0] == B[1] and len(B[2]) > 1
                and set(A[2]) | set(runs[j + 2][2]) <= set(B[2])):
            switches.append(SwitchPoint(float(xs[B[0]]), A[2], runs[j + 2][2]))
            j += 2
            continue
        x0, x1 = xs[A[1]], xs[B[0]]
        a = next((n for n in A[2] if n not in B[2]), A[2][0])
        b = next((n for n in B[2] if n not in A[2]), B[2][0])
        value = 0.5 * (x0 + x1)
        if refine:
            from scipy.optimize import brentq

            g0, g1 = g(x0, a, b), g(x1, a, b)
            if g0 == 0:
                value = float(x0)
            elif g1 == 0:
                value = float(x1)
            elif g0 * g1 < 0:
                value = float(brentq(g, x0, x1, args=(a, b), xtol=xtol,
                                     rtol=4 * np.finfo(float).eps))
        switches.append(SwitchPoint(float(value), A[2], B[2]))
        j += 1
    return BottleneckSweep(values=xs, stations=tuple(names), demands=F,
                           bottlenecks=tuple(wins), switch_points=tuple(switches), by=by)
