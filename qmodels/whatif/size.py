"""Capacity questions answered directly: :func:`size`.

A planner asks "how many users can this system take with R <= 2 s?", "how
many servers does the disk tier need for 500 tx/s at R <= 50 ms?", "how much
faster must the bottleneck be?".  :func:`size` answers each by an exact
search over a curve that is proved monotone, and returns a :class:`Sizing`:
the answer, the target that binds, the figures at the answer and one step
beyond, and the bottleneck at the answer.

Four questions (``vary=``):

=================  ===========================================  ===========================
``"population"``   the largest population N of a closed class   exact MVA curve n = 0..N
``"arrival_rate"`` the largest arrival rate of an open class    bisection
``"servers"``      the fewest servers at one queueing station   integer search (doubling,
                                                                 then bisection)
``"speed"``        the smallest speed-up factor of one station  bisection
=================  ===========================================  ===========================

Targets are strings ``METRIC[NAME] OP VALUE``:

* ``R<=2``, ``R[tx]<=2``: a class's mean response time (seconds, think time
  excluded, as ``Result.R``); without a name, the network's only class (or,
  for ``"arrival_rate"``, the class whose rate varies);
* ``X>=500``, ``X[tx]<=800``: a class's throughput;
* ``U[disk]<=0.7``: a station's utilisation per server (``Result.U``);
* ``R_p95[tx]<=0.05``: a percentile of a class's end-to-end response time
  (95th here; ``R_p99.9`` works), found where an exact distribution exists
  by :func:`qmodels.response_time_distribution` (method ``"passage"``: an
  open class along an overtake-free path of FCFS ./M/1 queues, or at one
  M/M/c queue, in an open product-form network; method ``"ctmc-passage"``:
  a closed class in a closed network of exponential FCFS or PS queues and
  delays, the passage time of a tagged job in the network's chain: the
  population and server searches try every value in turn, as such a
  percentile need not be monotone in them (its mean is; by this method a
  cycle of 4 jobs through Queue(0.5) and Queue(0.3, servers=c) has p95
  3.9434 with c = 2 and 3.9468 with c = 3), the speed search assumes it
  falls with the speed-up), exact and kept with no margin; with
  ``method="sim"`` by the simulator's estimate (p50, p95 or p99), a
  ceiling met by the high end of its confidence interval raised by the
  histogram's resolution (0.56 %), for any model the simulator runs.
  Anything else (random routing of an open class, a
  multi-server or delay station inside an open path, processor sharing
  in an open network, general service or arrivals, priorities, a chain past its state budget)
  is refused by name with method ``"auto"`` or an analytic
  method (:class:`~qmodels.errors.UnsupportedModelError`), pointing to
  ``method="sim"``.  The Sizing's notes say, per percentile, which it was
  and the margin kept.

Monotonicity (what makes "the largest" and "the fewest" well defined)
-------------------------------------------------------------------
* Closed, single class, product form, every station a delay, a c-server
  queue or load-dependent with non-decreasing rate multipliers: the
  throughput X(N) is non-decreasing in N (Suri, "A concept of monotonicity
  and its characterization for closed queueing networks", Operations
  Research 33(3), 1985, for stations whose rates do not fall with their
  queue), hence so is every utilisation U_k(N) = X(N) D_k / c_k
  (utilisation law).  With delay and single-server stations only, the MVA
  recursion R_k(n) = D_k (1 + Q_k(n-1)) (Reiser & Lavenberg 1980; Lazowska
  et al., *Quantitative System Performance*, 1984, Algorithm 6.1) and
  Q_k(n) >= Q_k(n-1) give R(N) non-decreasing too.  For multi-server and
  load-dependent stations the search checks R(n) on the exact curve it
  computes, and refuses when it is not monotone.  Beyond the computed curve,
  the asymptotic bound R(N) >= N / X_max - Z (QSP §5.2: X(N) <= X_max and
  the response time law) shows every R ceiling stays broken.  Falling
  rate multipliers are refused.
* Open, product form (Jackson/BCMP), only open classes: each station's
  response time D_k / (1 - U_k) (single server) or with Erlang's C function
  (c servers) grows with the load, and U_k = sum_c lambda_c D_ck with it
  (Lazowska et al. 1984, §6.2; Kleinrock, *Queueing Systems* I, 1975,
  §3.5), so R and U are non-decreasing in an arrival rate.
* Servers and speed at one station: in an open network the station's R and
  U fall as servers or speed grow (Erlang C falls in c at fixed load;
  Kleinrock §3.5) and nothing else changes; in a closed network, raising a
  station's service rates raises the throughput (Shanthikumar & Yao, "The
  effect of increasing service rates in a closed queueing network", J. Appl.
  Prob. 23, 1986; Suri 1985), so R = N/X - Z falls and X rises.  Targets
  that may move the other way (another station's U, or the sized station's
  own U, in a closed network) are refused rather than searched.

Where product form holds, everything is solved by :func:`qmodels.solve`
with ``method="exact"`` and the answer is exact.  Any other model is sized
through the method ``method=`` names (``"auto"``: the one
:func:`qmodels.solve` chooses for each candidate; ``"sim"``: the
simulator): the same searches on that method's answers, which are assumed
(not proved) monotone in the varied value, and each target met with a
margin for the method's error: its measured error envelope for an
approximate answer (:mod:`qmodels.analytic.envelopes`), its confidence
interval for a simulated one, none for an exact one (QNA at a GI/M/c
station, the CTMC).  The Sizing says the method, the exactness of its
answer and the margin kept (``Sizing.margin``).
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._format import fmt, note_lines
from ..errors import (
    InfeasibleTargetError,
    InvalidValueError,
    ProblemTooLargeError,
    UnstableError,
    UnsupportedModelError,
)
from ..model import Closed, Delay, LoadDependent, Network, Open, Queue
from ..results import label_dict, label_of

__all__ = ["size", "Sizing", "Target", "parse_target", "mmc_response_quantile",
           "register_cli"]

VARY = ("population", "arrival_rate", "servers", "speed")
#: the largest population, server count, speed-up the searches consider
MAX_POPULATION = 1 << 20
MAX_SERVERS = 100_000
MAX_SPEED = 1e9


# ---------------------------------------------------------------------------
# targets
# ---------------------------------------------------------------------------

_TARGET = re.compile(
    r"^\s*(?P<metric>R|X|U)(?:_p(?P<pct>\d+(?:\.\d+)?))?\s*(?:\[\s*(?P<name>[^\]]+?)\s*\])?"
    r"\s*(?P<op><=|>=|<|>)\s*(?P<value>[-+0-9.eE]+)\s*$")


@dataclass(frozen=True)
class Target:
    """One target: ``metric`` ("R", "X", "U"), the class or station ``name``
    (None: the default), ``op`` ("<=" or ">="), ``value`` and, for a
    response-time percentile, ``percentile`` (e.g. 95.0)."""

    metric: str
    name: str | None
    op: str
    value: float
    percentile: float | None = None

    @property
    def ceiling(self) -> bool:
        return self.op == "<="

    def label(self, name: str | None = None) -> str:
        m = self.metric + (f"_p{self.percentile:g}" if self.percentile is not None else "")
        n = name or self.name
        return f"{m}[{n}]" if n else m

    def __str__(self):
        return f"{self.label()}{self.op}{self.value:g}"


def parse_target(text) -> Target:
    """``"R<=2"``, ``"U[disk]<=0.7"``, ``"X[tx]>=500"``, ``"R_p95<=0.05"`` as
    a :class:`Target` (a Target passes through).

    >>> parse_target("R_p95[web] <= 0.05")
    Target(metric='R', name='web', op='<=', value=0.05, percentile=95.0)
    """
    if isinstance(text, Target):
        return text
    m = _TARGET.match(str(text))
    if not m:
        raise InvalidValueError(
            f"target {text!r}: expected METRIC[NAME] OP VALUE with METRIC R, X, U or R_pNN "
            "and OP <= or >=, e.g. 'R<=2', 'U[disk]<=0.7', 'X[tx]>=500', 'R_p95<=0.05'")
    try:
        value = float(m["value"])
    except ValueError:
        raise InvalidValueError(f"target {text!r}: {m['value']!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise InvalidValueError(f"target {text!r}: the value must be finite and >= 0")
    if m["op"] in ("<", ">"):
        raise InvalidValueError(
            f"target {text!r}: a strict {m['op']!r} is not a target qm.size can meet (its "
            f"searches find where a figure reaches its bound): write "
            f"{m['op'] + '='!r}, e.g. '{text.replace(m['op'], m['op'] + '=', 1)}'")
    op = m["op"]
    pct = float(m["pct"]) if m["pct"] else None
    if pct is not None:
        if m["metric"] != "R":
            raise InvalidValueError(f"target {text!r}: percentiles exist for R only")
        if not 0 < pct < 100:
            raise InvalidValueError(f"target {text!r}: percentile {pct:g} not in (0, 100)")
        if op != "<=":
            raise InvalidValueError(f"target {text!r}: a percentile target is a ceiling (<=)")
    return Target(m["metric"], m["name"], op, value, pct)


# ---------------------------------------------------------------------------
# the one adapter to the model (see HELPERS.md: the lowering will replace it)
# ---------------------------------------------------------------------------

def _max_rates(net: Network) -> np.ndarray:
    """Per station, the most completions per unit demand it can give:
    its top rate multiplier (servers; inf for a delay)."""
    from ..model.forkjoin import ForkJoin

    out = []
    for s in net.stations:
        if isinstance(s, (Delay, ForkJoin)):
            # a fork-join node serves nothing itself: its branch stations do
            out.append(math.inf)
        else:
            out.append(float(s.max_rate_multiplier))
    return np.array(out)


def _check_rates_not_falling(net: Network) -> None:
    for s in net.stations:
        if isinstance(s, LoadDependent):
            a = [float(x) for x in s.rate_multipliers]
            if any(b < a_ for a_, b in zip(a, a[1:])):
                raise UnsupportedModelError(
                    f"station {s.name!r}: rate multipliers {a} fall with the queue; the "
                    "throughput need not be monotone in the population (Suri 1985), so "
                    "size() cannot search it")


def _speed_up(net: Network, station: str, factor: float) -> Network:
    """``net`` with every service time (and demand) at ``station`` divided
    by ``factor``."""
    stations = [dataclasses.replace(s, service=s.service / factor) if s.name == station else s
                for s in net.stations]
    classes = []
    for c in net.classes:
        kw = {}
        for attr in ("demands", "service"):
            m = getattr(c, attr)
            if m and station in m:
                kw[attr] = {**m, station: m[station] / factor}
        classes.append(dataclasses.replace(c, **kw) if kw else c)
    return Network(stations, classes, name=net.name, pools=net.pools)


def _set(net: Network, kind: str, name: str, value) -> Network:
    if kind == "station":
        stations = [dataclasses.replace(s, servers=value) if s.name == name else s
                    for s in net.stations]
        return Network(stations, list(net.classes), name=net.name, pools=net.pools)
    classes = [dataclasses.replace(c, **{kind: value}) if c.name == name else c
               for c in net.classes]
    return Network(list(net.stations), classes, name=net.name, pools=net.pools)


# ---------------------------------------------------------------------------
# percentiles with a closed form
# ---------------------------------------------------------------------------

def mmc_response_quantile(arrival_rate: float, service_time: float, servers: int,
                          p: float) -> float:
    """The p-quantile (0 < p < 1) of the response time of a stable M/M/c FCFS
    queue.

    The response time is T = W + S with S ~ Exp(mu), and the wait W is 0 with
    probability 1 - C and Exp(c mu - lambda) with probability C, C Erlang's
    C function (Kleinrock, *Queueing Systems* I, 1975, eq. 3.40; Gross &
    Harris, *Fundamentals of Queueing Theory*, 3rd ed., §2.3.1).  So, with
    g = c mu - lambda, P(T > t) = (1 - C) e^{-mu t} + C P(E_g + E_mu > t) and
    P(E_g + E_mu > t) = (g e^{-mu t} - mu e^{-g t}) / (g - mu) (the
    hypoexponential tail; mu t e^{-mu t} + e^{-mu t} when g = mu).  The tail
    is continuous and strictly decreasing, and the quantile is its root,
    found by bisection to machine precision.  For c = 1 it is the M/M/1
    closed form -ln(1 - p) / (mu - lambda).
    """
    from ..analytic.queues import erlang_c

    lam, s, c = float(arrival_rate), float(service_time), int(servers)
    mu = 1.0 / s
    if lam >= c * mu:
        raise InvalidValueError(
            f"M/M/{c}: arrival rate {lam:g} >= capacity {c * mu:g}: no steady state")
    if c == 1:
        return -math.log1p(-p) / (mu - lam)
    C = float(erlang_c(c, lam * s)) if lam > 0 else 0.0
    g = c * mu - lam

    def tail(t):
        if abs(g - mu) <= 1e-12 * mu:
            two = math.exp(-mu * t) * (1.0 + mu * t)
        else:
            two = (g * math.exp(-mu * t) - mu * math.exp(-g * t)) / (g - mu)
        return (1.0 - C) * math.exp(-mu * t) + C * two

    lo, hi = 0.0, -math.log1p(-p) / min(mu, g)
    while tail(hi) > 1.0 - p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if tail(mid) > 1.0 - p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return 0.5 * (lo + hi)



# ---------------------------------------------------------------------------
# how each candidate is solved, and the margin kept for the method's error
# ---------------------------------------------------------------------------

def _guard_key(t, key) -> str:
    """The figure key of ``key`` with the margin kept (``R[tx]+margin`` for
    a ceiling, ``X[tx]-margin`` for a floor)."""
    return f"{key}{'+' if t.ceiling else '-'}margin"


class _How:
    """How every candidate of a search is solved: by ``method`` (a name of
    :func:`qmodels.methods`, ``"auto"``, or ``"sim"`` with ``seed``), and
    what the answer then is (the methods used, their exactness, warnings)
    and the margin kept for their error.

    The margin.  An exact figure is compared with the target as it is.  An
    approximate one carries the error envelope measured for its method on
    networks like the candidate (:mod:`qmodels.analytic.envelopes`): a
    largest relative error e of R (of X for X and for U = X D / c, the
    utilisation law) over the catalog, |a - t| <= e t for the approximation
    a of the true value t.  So t <= a / (1 - e) and t >= a / (1 + e): a
    ceiling is met when a / (1 - e) is within it, a floor when a / (1 + e)
    is, and the answer holds for the true model wherever the envelope does.
    A candidate outside every measured envelope has no known error: it is
    compared as it is, with a warning.  A simulated figure is compared by
    the end of its confidence interval (the high end for a ceiling, the low
    end for a floor): the margin is the interval's half-width.
    """

    def __init__(self, method: str, seed=None, general: bool = False):
        self.method, self.seed, self.general = method, seed, general
        self.used: dict = {}        # method name -> exactness, in order of first use
        self.margins: dict = {}     # id(result) -> {figure key: relative margin kept}
        self.pct: dict = {}         # id(result) -> {percentile key: how it was found}

    def solve(self, net: Network):
        from ..dispatch import solve

        if self.method == "sim":
            r = solve(net, method="sim", seed=self.seed, progress=False)
        else:
            r = solve(net, method=self.method)
        if getattr(r, "exactness", "exact") == "bound":
            raise UnsupportedModelError(
                f"method {r.method!r} gives bounds, not figures; size with a method that "
                "estimates them (auto, an exact or approximate method, or sim)")
        self.used.setdefault(r.method, r.exactness)
        return r

    def guarded(self, t, key, r, value):
        """``value`` (the figure ``key`` of answer ``r``) with the margin
        kept for ``r``'s error, or None for an exact answer."""
        if r.exactness == "exact":
            return None
        name = key[key.index("[") + 1:-1]
        kept = self.margins.setdefault(id(r), {})
        if r.exactness == "simulated":
            est = {"X": r.X, "R": r.R, "U": r.U}[t.metric][name]
            if value:
                kept[key] = float(est.half_width) / abs(value)
            return float(est.high if t.ceiling else est.low)
        err = r.error or {}
        if not err.get("validated"):
            return float(value)   # no measured error: no margin (label() warns)
        e = float(err["R" if t.metric == "R" else "X"]["max"])
        kept[key] = e
        if t.ceiling:
            return float(value) / (1.0 - e) if e < 1.0 else math.inf
        return float(value) / (1.0 + e)

    def percentile(self, t, key, net: Network, r):
        """(value, value with the margin kept or None) of the percentile
        target ``t`` (figure ``key``) on the candidate ``net`` whose means
        are ``r``.

        A simulated candidate gives the simulator's estimate of the
        percentile (p50, p95 or p99 of the class's response time, from its
        log-scale histogram) and its confidence interval: a ceiling is met
        by the interval's high end, raised by the histogram's relative
        resolution exp(step) - 1 (:func:`qmodels.sim.stats.histogram_percentile`).
        Any other candidate needs the exact end-to-end distribution of
        :func:`qmodels.analytic.passage.response_time_distribution` (an open
        class along an overtake-free path of ./M/1 nodes, or one M/M/c
        queue; a closed class in a closed network of exponential FCFS or PS
        queues and delays, by the passage time of a tagged job:
        :mod:`qmodels.analytic.passage_ctmc`); where it has none, the refusal names the feature that
        prevents it and points to ``method="sim"``.

        Monotone: along such a path the response time is a sum of
        independent sojourn times, each stochastically decreasing in the
        station's service rate and server count and increasing in the
        arrival rate (Exp(mu - lambda) at a ./M/1 node; at an M/M/c node
        Erlang's C(c, a) falls in c and rises in lambda: Kleinrock 1975,
        sec. 3.5); the usual stochastic order is closed under sums of
        independent variables (Shaked & Shanthikumar, *Stochastic Orders*,
        2007, Theorem 1.A.3), so every percentile moves the same way.
        """
        cls = key[key.index("[") + 1:-1]
        q = float(t.percentile)
        seen = self.pct.setdefault(id(r), {})
        if getattr(r, "exactness", None) == "simulated":
            from ..sim.flatten import HIST_BINS, HIST_DECADES

            est = {float(k): v for k, v in (getattr(r, "percentiles", {}) or {}).get(
                cls, {}).items()}.get(q)
            if est is None:
                raise UnsupportedModelError(
                    f"target {t}: the simulator estimates the p50, p95 and p99 of a class's "
                    f"response time, not p{q:g}; write the target on one of them")
            if not math.isfinite(float(est.mean)):
                raise UnsupportedModelError(
                    f"target {t}: the simulator gives no response-time percentile for class "
                    f"{cls!r} (a class of a class-switching chain: its histogram holds the "
                    "chain's cycles, not the time spent as the class)")
            res = math.expm1(math.log(10.0) * HIST_DECADES / HIST_BINS)
            value = float(est.mean)
            guarded = float(est.high) * (1.0 + res)
            if value:
                self.margins.setdefault(id(r), {})[key] = guarded / value - 1.0
            seen[key] = (f"{key}: the simulator's p{q:g} estimate (simulated, "
                         f"{100 * r.level:g} % interval over {r.n} replications or batches); "
                         "a ceiling met by the interval's high end raised by the histogram's "
                         f"resolution ({100 * res:.2g} %)")
            return value, guarded
        from ..analytic.passage import response_time_distribution

        try:
            d = response_time_distribution(net, cls)
        except UnsupportedModelError as e:
            raise UnsupportedModelError(
                f"target {t}: no exact response-time distribution for this model: {e}.  "
                "The exact ones cover an open class along an overtake-free path of FCFS "
                "./M/1 queues (or one M/M/c queue) in an open product-form network (method "
                "'passage') and a closed network of exponential FCFS or PS queues and delays "
                "(method 'ctmc-passage'); size this model with method='sim' (the "
                "simulator's percentile, its confidence interval kept as the margin)") from None
        if d.method == "ctmc-passage":
            seen[key] = (f"{key}: by 'ctmc-passage', exact: the response-time distribution "
                         f"of closed class {cls!r} as the passage time of a tagged job in the "
                         f"network's chain ({d.states} states; Harrison & Knottenbelt 2002); "
                         "no margin needed; a speed search assumes the percentile falls as "
                         "the station speeds up (not proved here; populations and server "
                         "counts are tried one by one)")
            return d.percentile(q), None
        seen[key] = (f"{key}: by 'passage', exact: " + (
            f"the end-to-end response-time distribution of class {cls!r} along "
            f"{' -> '.join(d.path)}, a phase-type sum of independent sojourn times (Walrand & "
            "Varaiya 1980)" if len(d.path) > 1 else
            f"the response-time distribution of class {cls!r} at its one station "
            f"{d.path[0]!r} (Kleinrock 1975, eq. 3.40)") + "; no margin needed")
        return d.percentile(q), None

    def label(self, r, notes=()) -> dict:
        """The label of a Sizing whose answer is ``r``'s: method, exactness,
        assumptions, warnings, error and the margins, and notes saying them."""
        pct = tuple(self.pct.get(id(r), {}).values())
        if not self.general:
            return {"notes": tuple(notes) + pct}
        out_notes = list(notes) + list(pct)
        methods = list(self.used)
        out_notes.append(
            f"each candidate solved by {self.method!r}" + (
                f" (chose {', '.join(repr(m) for m in methods)})" if self.method == "auto" else "")
            + f"; the answer is {r.exactness} ({r.method})"
            + ("; monotone in the varied value assumed (proved for product form, not here)"
               if r.exactness != "exact" or r.method != "exact" else ""))
        margins = self.margins.get(id(r), {})
        warned = []
        if r.exactness == "approximate" and not (getattr(r, "error", None) or {}).get(
                "validated"):
            warned.append(f"{r.method}: approximate, and the answer lies outside every measured "
                          "error envelope of the method, so no margin could be kept for its "
                          "error (the answer is the approximation's own); check it with "
                          "method='sim'")
        if margins:
            how = ("the high end of the confidence interval (low end for a floor)"
                   if r.exactness == "simulated" else
                   "the method's measured error envelope: a ceiling met by a/(1-e), a floor "
                   "by a/(1+e)")
            out_notes.append("margin kept for the method's error, by " + how + ": " + ", ".join(
                f"{k} {100 * v:.3g} %" for k, v in margins.items()))
        elif r.exactness == "exact":
            out_notes.append("no margin needed: the answer is exact")
        return {"notes": tuple(out_notes), "method": r.method, "exactness": r.exactness,
                "assumptions": tuple(r.assumptions),
                "warnings": tuple(dict.fromkeys(tuple(r.warnings) + tuple(warned))),
                "error": getattr(r, "error", None), "margin": dict(margins)}


# ---------------------------------------------------------------------------
# evaluating targets
# ---------------------------------------------------------------------------

def _figures(net: Network, result) -> dict:
    """The figures a Sizing shows: X and R per class, U per station (a
    simulated result's point estimates)."""
    if getattr(result, "exactness", None) == "simulated":
        out = {}
        for c in net.class_names:
            out[f"X[{c}]"] = float(result.X[c].mean)
            out[f"R[{c}]"] = float(result.R[c].mean)
        for s in net.station_names:
            out[f"U[{s}]"] = float(result.U[s].mean)
        return out
    out = {}
    for i, c in enumerate(net.class_names):
        out[f"X[{c}]"] = float(result.class_throughput[i])
        out[f"R[{c}]"] = float(result.class_response_time[i])
    U = np.asarray(result.station_utilization, dtype=float).sum(axis=0)
    for k, s in enumerate(net.station_names):
        out[f"U[{s}]"] = float(U[k])
    return out


def _bottleneck(result) -> str:
    return ", ".join(result.bottleneck)


def _next_bottleneck(result) -> str:
    """The queueing station that would limit next: the highest utilisation
    per server after the bottleneck's (its saturation rate c_k / D_k is the
    next smallest; ties joined by commas); empty with no other queue."""
    net = result.network
    if getattr(result, "exactness", None) == "simulated":
        U = np.array([float(result.U[s].mean) for s in net.station_names])
    else:
        U = np.asarray(result.station_utilization, dtype=float).sum(axis=0)
    first = set(result.bottleneck)
    rest = [(U[k], s.name) for k, s in enumerate(net.stations)
            if not isinstance(s, Delay) and s.name not in first]
    if not rest:
        return ""
    top = max(u for u, _ in rest)
    return ", ".join(n for u, n in rest if u >= top * (1 - 1e-9))


class _Problem:
    """The targets resolved against one network: each target's figure key,
    and a function from a network to (figures, all met?, failed targets)."""

    def __init__(self, net: Network, targets, default_class: str | None,
                 how: "_How | None" = None):
        self.how = how or _How("exact")
        self.targets = [parse_target(t) for t in targets]
        if not self.targets:
            raise InvalidValueError("size needs at least one target, e.g. 'R<=2'")
        self.keys = []
        for t in self.targets:
            if t.metric == "U":
                if t.name is None:
                    raise InvalidValueError(f"target {t}: name the station, e.g. U[disk]<=0.7")
                if t.name not in net.station_names:
                    raise InvalidValueError(
                        f"target {t}: no station {t.name!r} (stations: "
                        f"{', '.join(net.station_names)})")
                self.keys.append(f"U[{t.name}]")
                continue
            name = t.name or default_class
            if name is None:
                if len(net.classes) != 1:
                    raise InvalidValueError(
                        f"target {t}: the network has classes {', '.join(net.class_names)}; "
                        f"name one, e.g. {t.metric}[{net.class_names[0]}]")
                name = net.class_names[0]
            if name not in net.class_names:
                raise InvalidValueError(
                    f"target {t}: no class {name!r} (classes: {', '.join(net.class_names)})")
            key = t.label(name)
            self.keys.append(key)
        self.resolved = list(zip(self.targets, self.keys))

    def evaluate(self, net: Network):
        r = self.how.solve(net)
        fig = _figures(net, r)
        for t, key in self.resolved:
            if t.percentile is None:
                guarded = self.how.guarded(t, key, r, fig[key])
                if guarded is not None:
                    fig[_guard_key(t, key)] = guarded
            else:
                fig[key], guarded = self.how.percentile(t, key, net, r)
                if guarded is not None:
                    fig[_guard_key(t, key)] = guarded
        return fig, r

    def failed(self, fig) -> list[str]:
        """The targets ``fig`` breaks; an approximate or simulated figure is
        compared with the margin kept for its error (:meth:`_How.guarded`)."""
        out = []
        for t, key in self.resolved:
            v = fig.get(_guard_key(t, key), fig[key])
            ok = v <= t.value if t.ceiling else v >= t.value
            if not ok:
                out.append(f"{key}{t.op}{t.value:g}")
        return out


# ---------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Sizing:
    """The answer of :func:`size`.

    Attributes
    ----------
    question : str
        The question in words.
    parameter : str
        What varied, as a parameter path (``"tx.population"``,
        ``"disk.servers"``, ``"disk.speed"``, ``"web.arrival_rate"``).
    answer : int or float
        The largest population or arrival rate, the fewest servers, or the
        smallest speed-up factor meeting every target.
    beyond : int or float
        One step past the answer (N + 1, c - 1, or the arrival rate / speed
        at the search's resolution ``tol`` beyond), where a target fails.
    binding : tuple of str
        The targets that fail at ``beyond`` (with their metric's name).
    at, at_beyond : dict
        The figures (``X[cls]``, ``R[cls]``, ``U[station]``, and any
        percentile) at ``answer`` and at ``beyond``.
    bottleneck : str
        The bottleneck station(s) at the answer (after a speed-up or added
        servers, possibly another station than before).
    next_bottleneck : str
        The queueing station that would limit next: the highest
        utilisation per server after the bottleneck's.
    network : Network
        The model at the answer, ready to solve.
    targets : tuple of str
    notes : tuple of str
    method, exactness, assumptions, warnings, error
        The label of the answer's figures: the method that solved the
        candidates and what it is (exact, approximate, simulated).
    margin : dict
        For an approximate or simulated answer, per target figure, the
        relative margin kept for the method's error (the measured envelope,
        or the confidence interval's half-width); each target was met with
        it.  The figures with the margin are in ``at`` as ``R[tx]+margin``
        (ceilings) and ``X[tx]-margin`` (floors).
    """

    question: str
    parameter: str
    answer: Any
    beyond: Any
    binding: tuple
    at: dict
    at_beyond: dict
    bottleneck: str
    network: Network = field(repr=False)
    next_bottleneck: str = ""
    targets: tuple = ()
    notes: tuple = ()
    #: the method of the answer's figures: "exact" (exact MVA, and the exact
    #: "passage" distribution for a percentile: the notes say so) for a
    #: product-form model, else the one
    #: ``method=`` chose (see :func:`size`)
    method: str = "exact"
    exactness: str = "exact"
    assumptions: tuple = label_of("exact")[1]
    warnings: tuple = ()
    error: Any = None
    #: figure -> the largest relative margin kept for the method's error
    #: (empty for an exact answer)
    margin: dict = field(default_factory=dict)

    def to_frame(self):
        """A two-row pandas DataFrame (``answer`` and ``beyond``): the
        parameter's value and every figure; ``attrs`` the label."""
        import pandas as pd

        rows = [{self.parameter: self.answer, **self.at},
                {self.parameter: self.beyond, **self.at_beyond}]
        frame = pd.DataFrame(rows, index=pd.Index(["answer", "beyond"], name="row"))
        frame.attrs.update(label_dict(self))
        return frame

    def __repr__(self):
        keys = list(dict.fromkeys(
            [k for k in (b.split("<=")[0].split(">=")[0] for b in self.binding)
             if k in self.at] + list(self.at)))
        width = max(len(k) for k in keys) if keys else 4
        def val(x):
            return str(x) if isinstance(x, int) else f"{x:.7g}"

        label = self.exactness + (f", {self.method}" if self.method != "exact" else "")
        lines = [f"Sizing [{label}]: {self.question}",
                 f"  answer     {self.parameter} = {val(self.answer)}",
                 f"  targets    {', '.join(self.targets)}",
                 (f"  binding    {', '.join(self.binding)} (fails at "
                  f"{self.parameter} = {val(self.beyond)})" if self.binding else
                  "  binding    none: the targets hold at the smallest value searched"),
                 f"  bottleneck {self.bottleneck}"
                 + (f" (next: {self.next_bottleneck})" if self.next_bottleneck else ""),
                 f"  {'':{width}s}  {'answer':>12s}  {'beyond':>12s}"]
        for k in keys:
            lines.append(f"  {k:{width}s}  {fmt(self.at[k]):>12s}  {fmt(self.at_beyond[k]):>12s}")
        lines += note_lines(self.notes, "  note: ")
        lines += note_lines(self.warnings, "  warning: ")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {**label_dict(self),
                "question": self.question, "parameter": self.parameter,
                "answer": self.answer, "beyond": self.beyond, "binding": list(self.binding),
                "bottleneck": self.bottleneck, "next_bottleneck": self.next_bottleneck,
                "targets": list(self.targets), "margin": dict(self.margin),
                "at": self.at, "at_beyond": self.at_beyond}


# ---------------------------------------------------------------------------
# the searches
# ---------------------------------------------------------------------------

def size(net: Network, *targets, vary: str = "population", cls: str | None = None,
         station: str | None = None, tol: float = 1e-6, method: str = "auto",
         seed: int | None = None) -> Sizing:
    """Answer a capacity question: the largest population or arrival rate,
    the fewest servers, or the smallest speed-up meeting ``targets``.

    Parameters
    ----------
    net : Network
        Any model a method can solve.  A product-form model is sized by
        exact MVA on proved-monotone curves (module docstring); any other
        (non-Poisson arrivals, general or class-dependent FCFS service,
        pools, priorities, fork-joins) by the method ``method`` chooses,
        the answer labelled with that method and its exactness.
    *targets : str or Target
        ``"R<=2"``, ``"U[disk]<=0.7"``, ``"X[tx]>=500"``, ``"R_p95<=0.05"``
        (see the module docstring).  All must hold.
    vary : {"population", "arrival_rate", "servers", "speed"}
    cls : str, optional
        The class whose population or arrival rate varies (default: the
        only closed / open class).
    station : str
        The station whose servers or speed varies (``"servers"``,
        ``"speed"``).
    tol : float
        Relative resolution of the continuous searches (arrival rate,
        speed): ``beyond`` is at most ``answer * (1 + tol)`` (at least 1e-3
        with ``method="sim"``: each candidate is a simulation).
    method : str
        ``"auto"`` (default): exact MVA where product form holds, else the
        first method :func:`qmodels.solve` would choose for each candidate
        (QNA, MVA with residual service, the CTMC, ...); or a method name
        (``"exact"`` refuses a model outside product form by name,
        ``"sim"`` simulates every candidate with ``seed``, the same seed
        for each: common random numbers).  An approximate answer is
        searched with the margin its method's measured error envelope
        asks for, a simulated one with its confidence interval (see
        ``Sizing.margin``); outside product form the monotonicity the
        searches rely on is assumed, not proved, and the notes say so.
    seed : int, optional
        The simulator's seed with ``method="sim"`` (default 1).

    Returns
    -------
    Sizing

    Raises
    ------
    InfeasibleTargetError
        No value meets the targets (named, with the figure that stops
        them), or a ceiling never binds so no largest value exists.
    UnsupportedModelError
        A question whose monotonicity is not established for this model
        (falling rate multipliers, a target that may move against the
        search, several classes for a population), or a percentile
        without an exact distribution (``method="sim"`` sizes it), or one
        the simulator does not estimate (not p50, p95 or p99).
    ProblemTooLargeError
        The answer lies beyond the search's limit (population 2^20,
        100,000 servers, speed-up 10^9).

    Examples
    --------
    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
    ...                  [qm.Closed("tx", 1, visits={"cpu": 1, "disk": 1})])
    >>> s = qm.size(net, "R<=0.5")
    >>> s.answer, s.binding
    (6, ('R[tx]<=0.5',))
    >>> round(s.at["R[tx]"], 4), round(s.at_beyond["R[tx]"], 4)
    (0.4914, 0.5681)
    """
    if vary not in VARY:
        import difflib

        close = difflib.get_close_matches(str(vary), VARY, n=1)
        raise InvalidValueError(
            f"vary={vary!r} is not a question size() answers; one of {', '.join(VARY)}"
            + (f" (did you mean {close[0]!r}?)" if close else ""))
    if not isinstance(net, Network):
        raise InvalidValueError(f"size needs a qmodels Network, got {type(net).__name__}")
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 < tol < 1:
        raise InvalidValueError(
            f"size: tol is the relative resolution of the search, a number in (0, 1) "
            f"(default 1e-6), got {tol!r}")
    if net.is_symbolic:
        raise UnsupportedModelError("size needs numbers; substitute the symbols first")
    how = _choose_how(net, method, seed)
    if how.method == "sim":
        tol = max(float(tol), 1e-3)
    if vary == "population":
        if how.general:
            return _population_general(net, targets, cls, how)
        return _population(net, targets, cls)
    if vary == "arrival_rate":
        return _arrival_rate(net, targets, cls, tol, how)
    return _station_search(net, targets, vary, station, tol, how)


def _choose_how(net: Network, method, seed) -> _How:
    """The exact product-form search (``_How("exact")``) where it holds and
    ``method`` allows it, else a general search by ``method``."""
    from ..dispatch import solver

    if method != "auto":
        solver(method)  # a name that is not a method is refused here, with a suggestion
    if seed is not None and method != "sim":
        raise InvalidValueError("seed= is for method='sim'")
    if method in ("auto", "exact") and _exact_refusal(net) is None:
        return _How("exact")
    if method == "exact":
        _check_exact_holds(net)
    return _How(method, seed=1 if seed is None else seed, general=True)


def _exact_refusal(net: Network) -> str | None:
    """Why the exact product-form search does not hold for ``net`` whatever
    the varied value (a non-Poisson arrival stream, a non-exponential FCFS
    queue, an FCFS queue whose mean service time differs by class, a kind
    or discipline without product form, token pools; a capacity is checked
    at each candidate), or None."""
    from ..analytic import requires

    return (requires.station_kinds(net) or requires.pools(net) or requires.arrival_shapes(net)
            or requires.service_shapes(net) or requires.fcfs_class_dependent(net))


def _check_exact_holds(net: Network) -> None:
    """``method="exact"``: refuse, naming the station or class, a model
    product form does not hold for (:func:`_exact_refusal`)."""
    why = _exact_refusal(net)
    if why is not None:
        raise UnsupportedModelError(
            f"{why}; method='exact' sizes with exact product-form solutions only, which would "
            "not be this model's.  Size it with method='auto' (the method qm.solve chooses, "
            "its error kept as a margin) or method='sim'")


def _only(net, kind, cls, what):
    names = [c.name for c in net.classes if isinstance(c, kind)]
    if cls is None:
        if len(names) != 1:
            raise InvalidValueError(
                f"{what}: name the class (cls=...); {kind.__name__.lower()} classes: "
                f"{', '.join(names) or 'none'}")
        return names[0]
    if cls not in names:
        raise InvalidValueError(
            f"{what}: no {kind.__name__.lower()} class {cls!r} "
            f"({kind.__name__.lower()} classes: {', '.join(names) or 'none'})")
    return cls


def _population(net: Network, targets, cls) -> Sizing:
    from ..analytic.mva import mva

    name = _only(net, Closed, cls, "the largest population")
    if len(net.classes) != 1:
        raise UnsupportedModelError(
            "the largest population is searched for a single closed class; this network has "
            f"classes {', '.join(net.class_names)}")
    _check_rates_not_falling(net)
    prob = _Problem(net, targets, name)
    if any(t.percentile is not None for t in prob.targets):
        # a percentile has no MVA curve: each candidate population's exact
        # distribution (method 'ctmc-passage'), searched as by any method
        return _population_general(net, targets, name, _How("exact", general=True), scan=True)
    ceilings = [(t, k) for t, k in prob.resolved if t.ceiling]
    floors = [(t, k) for t, k in prob.resolved if not t.ceiling]
    if not ceilings:
        raise InfeasibleTargetError(
            f"targets {', '.join(map(str, prob.targets))}: none is a ceiling (<=), so no "
            "largest population exists (X and U only grow with N)")
    D = np.asarray(net.demands[0], dtype=float)
    Z = float(net.classes[0].think_time)
    with np.errstate(divide="ignore"):
        xmax = float(np.min(np.where(D > 0, _max_rates(net) / np.where(D > 0, D, 1), np.inf)))
    # a population where every ceiling is already broken: R by the asymptotic
    # bound R(N) >= N/X_max - Z; X and U by doubling the curve
    n_hi = 64
    for t, _ in ceilings:
        if t.metric == "R" and math.isfinite(xmax):
            n_hi = max(n_hi, int(math.floor((t.value + Z) * xmax)) + 2)
    while True:
        if n_hi > MAX_POPULATION:
            raise ProblemTooLargeError(
                f"targets {', '.join(map(str, prob.targets))} still hold at N = "
                f"{MAX_POPULATION:,}: the answer is beyond the search's limit")
        curve = mva(_set(net, "population", name, n_hi), curve=True).curve
        ok = np.ones(n_hi + 1, dtype=bool)
        for t, key in ceilings:
            ok &= _curve_values(curve, net, key) <= t.value
        if not ok[-1]:
            break
        never = [str(t) for t, key in ceilings if _sup(net, key, xmax, D) <= t.value]
        if len(never) == len(ceilings):
            raise InfeasibleTargetError(
                f"targets {', '.join(never)} hold for every population (the figures tend to "
                f"{', '.join(f'{k} = {fmt(_sup(net, k, xmax, D))}' for _, k in ceilings)} as "
                "N grows), so there is no largest population")
        n_hi *= 2
    R = curve.response_time
    for t, _ in ceilings:
        if t.metric == "R" and np.any(np.diff(R[1:]) < -1e-9 * np.maximum(R[2:], 1e-300)):
            raise UnsupportedModelError(
                f"target {t}: R(n) is not monotone in n on this network's exact curve; "
                "no largest population is defined")
    # first population where a ceiling breaks; the answer is the one before
    first_bad = int(np.argmin(ok[1:])) + 1
    answer = first_bad - 1
    if answer < 1:
        bad = prob.failed(_curve_figures(curve, net, name, 1))
        raise InfeasibleTargetError(
            f"even one job breaks {', '.join(bad)}")
    at = _curve_figures(curve, net, name, answer)
    beyond = _curve_figures(curve, net, name, answer + 1)
    bad_floor = [f"{k}{t.op}{t.value:g}" for t, k in floors if at[k] < t.value]
    if bad_floor:
        raise InfeasibleTargetError(
            f"the largest population meeting the ceilings is N = {answer}, where "
            f"{', '.join(bad_floor)} fails ({', '.join(f'{k} = {fmt(at[k])}' for _, k in floors)})"
            "; X and U only grow with N, so no population meets every target")
    net_at = _set(net, "population", name, answer)
    r = mva(net_at)
    return Sizing(
        question=f"the largest population of class {name!r} meeting the targets",
        parameter=f"{name}.population", answer=answer, beyond=answer + 1,
        binding=tuple(prob.failed(beyond)), at=at, at_beyond=beyond,
        bottleneck=_bottleneck(r), next_bottleneck=_next_bottleneck(r), network=net_at,
        targets=tuple(str(t) for t in prob.targets),
        notes=("exact MVA curve n = 0.." + str(len(curve.population) - 1),))


def _population_general(net: Network, targets, cls, how: _How, scan: bool = False) -> Sizing:
    """The largest population by a method other than exact MVA: an integer
    search (doubling, then bisection) on the method's answers, each target
    met with the margin kept for the method's error (:class:`_How`).  The
    search assumes the figures monotone in N (proved for product form:
    module docstring; here assumed, and said).  Every R ceiling breaks by
    the asymptotic bound R(N) >= N / X_max - Z (QSP sec. 5.2), which holds
    for any network; a ceiling on X or U above its supremum never binds.

    ``scan``: every population from 1 up is tried in turn, and the answer
    is the last before the first that breaks a target (no monotonicity
    assumed: a closed class's percentile by ``ctmc-passage``)."""
    name = _only(net, Closed, cls, "the largest population")
    if len(net.classes) != 1:
        raise UnsupportedModelError(
            "the largest population is searched for a single closed class; this network has "
            f"classes {', '.join(net.class_names)}")
    prob = _Problem(net, targets, name, how)
    ceilings = [(t, k) for t, k in prob.resolved if t.ceiling]
    floors = [(t, k) for t, k in prob.resolved if not t.ceiling]
    if not ceilings:
        raise InfeasibleTargetError(
            f"targets {', '.join(map(str, prob.targets))}: none is a ceiling (<=), so no "
            "largest population exists (X and U only grow with N)")
    D = np.asarray(net.demands[0], dtype=float)
    with np.errstate(divide="ignore"):
        xmax = float(np.min(np.where(D > 0, _max_rates(net) / np.where(D > 0, D, 1), np.inf)))
    if all(t.metric != "R" and _sup(net, k, xmax, D) <= t.value for t, k in ceilings):
        raise InfeasibleTargetError(
            f"targets {', '.join(map(str, prob.targets))} hold at every population (their "
            "figures never exceed their limits as N grows): no largest population exists")
    cache: dict = {}

    def state(n):
        if n not in cache:
            n2 = _set(net, "population", name, n)
            fig, r = prob.evaluate(n2)
            cache[n] = (n2, fig, r)
        return cache[n]

    def ok(n):
        fig = state(n)[1]
        return not [1 for t, k in ceilings
                    if not fig.get(_guard_key(t, k), fig[k]) <= t.value]

    if not ok(1):
        raise InfeasibleTargetError(
            f"even one job breaks {', '.join(prob.failed(state(1)[1]))}")
    lo, hi = 1, 2
    while scan and ok(hi):
        if hi >= MAX_POPULATION:
            raise ProblemTooLargeError(
                f"targets {', '.join(map(str, prob.targets))} still hold at N = "
                f"{MAX_POPULATION:,}: the answer is beyond the search's limit")
        lo, hi = hi, hi + 1
    while not scan and ok(hi):
        if hi >= MAX_POPULATION:
            raise ProblemTooLargeError(
                f"targets {', '.join(map(str, prob.targets))} still hold at N = "
                f"{MAX_POPULATION:,}: the answer is beyond the search's limit")
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    net_at, at, r = state(lo)
    beyond = state(lo + 1)[1]
    bad_floor = [f"{k}{t.op}{t.value:g}" for t, k in floors
                 if at.get(_guard_key(t, k), at[k]) < t.value]
    if bad_floor:
        raise InfeasibleTargetError(
            f"the largest population meeting the ceilings is N = {lo}, where "
            f"{', '.join(bad_floor)} fails; X and U only grow with N, so no population meets "
            "every target")
    return Sizing(
        question=f"the largest population of class {name!r} meeting the targets",
        parameter=f"{name}.population", answer=lo, beyond=lo + 1,
        binding=tuple(prob.failed(beyond)), at=at, at_beyond=beyond,
        bottleneck=_bottleneck(r), next_bottleneck=_next_bottleneck(r), network=net_at,
        targets=tuple(str(t) for t in prob.targets),
        **how.label(r, ((f"every population from 1 tried in turn: N = {lo} is the last before "
                         "the first that breaks a target",) if scan else
                        (f"integer search over N (doubling, then bisection): "
                         f"{len(cache)} populations solved",))))


def _sup(net, key, xmax, D) -> float:
    """The supremum over N of a figure of a closed single-class network:
    X -> X_max, U_k -> X_max D_k / c_k (X_max D_k at a delay), R -> inf
    (sum of demands when every station is a delay: R is then constant)."""
    if key.startswith("X["):
        return xmax
    if key.startswith("U["):
        k = net.station_names.index(key[2:-1])
        c = _max_rates(net)[k]
        return xmax * D[k] / (c if math.isfinite(c) else 1.0)
    return math.inf if math.isfinite(xmax) else float(D.sum())


def _curve_values(curve, net, key) -> np.ndarray:
    if key.startswith("U["):
        return curve.utilization[:, net.station_names.index(key[2:-1])]
    if key.startswith("X["):
        return curve.throughput
    return curve.response_time


def _curve_figures(curve, net, name, n) -> dict:
    out = {f"X[{name}]": float(curve.throughput[n]), f"R[{name}]": float(curve.response_time[n])}
    for k, s in enumerate(net.station_names):
        out[f"U[{s}]"] = float(curve.utilization[n, k])
    return out


def _bisect(feasible, lo, hi, tol):
    """Largest x in [lo, hi) with feasible(x), given feasible(lo) and not
    feasible(hi) and a monotone predicate; to relative resolution tol."""
    for _ in range(200):
        if hi - lo <= tol * max(abs(hi), 1e-300):
            break
        mid = 0.5 * (lo + hi)
        if feasible(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi


def _arrival_rate(net: Network, targets, cls, tol, how: _How) -> Sizing:
    name = _only(net, Open, cls, "the largest arrival rate")
    if any(not isinstance(c, Open) for c in net.classes):
        raise UnsupportedModelError(
            "the largest arrival rate is searched for open networks; this one has closed "
            "classes (whose response times also grow, but are not proved monotone here)")
    prob = _Problem(net, targets, name, how)
    ci = net.class_names.index(name)
    for t, key in prob.resolved:
        if not t.ceiling and key != f"X[{name}]":
            raise UnsupportedModelError(
                f"target {t}: only ceilings (<=) and a floor on X[{name}] itself make sense "
                "when the arrival rate grows")
    # saturation: the rate at which some station's utilisation reaches 1
    D = np.asarray(net.demands, dtype=float)
    c = _max_rates(net)
    lam = np.array([float(k.arrival_rate) for k in net.classes])
    load = lam[:, None] * D            # busy servers each class brings (utilisation law)
    others = np.delete(load, ci, axis=0).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(D[ci] > 0, (c - others) / D[ci], np.inf)
    lam_sat = float(np.min(room))
    if not math.isfinite(lam_sat):
        raise InfeasibleTargetError(f"class {name!r} visits no station with finite capacity")
    if lam_sat <= 0:
        raise InfeasibleTargetError(f"the other classes already saturate class {name!r}'s path")

    cache: dict = {}

    def state(rate):
        if rate not in cache:
            n2 = _set(net, "arrival_rate", name, rate)
            try:
                fig, r = prob.evaluate(n2)
            except UnstableError:      # rounding at the edge of saturation
                fig, r = None, None
            cache[rate] = (n2, fig, r)
        return cache[rate]

    def feasible(rate):
        fig = state(rate)[1]
        return fig is not None and not [1 for t, k in prob.resolved if t.ceiling and
                                        not fig.get(_guard_key(t, k), fig[k]) <= t.value]

    # a simulation near either end would need an endless horizon: it
    # searches from 0.1 % to 98 % of saturation (said in the notes)
    sim = how.method == "sim"
    lo = lam_sat * (1e-3 if sim else 1e-9)
    if not feasible(lo):
        bad = prob.failed(state(lo)[1])
        raise InfeasibleTargetError(
            f"even a {'small' if sim else 'vanishing'} arrival rate ({fmt(lo)}) breaks "
            f"{', '.join(bad)}")
    hi = lam_sat * (0.98 if sim else 1 - 1e-12)
    if feasible(hi):
        raise InfeasibleTargetError(
            f"targets {', '.join(map(str, prob.targets))} hold up to "
            f"{'98 % of ' if sim else ''}saturation (arrival rate {fmt(lam_sat)}), where the "
            "network stops being stable")
    lo, hi = _bisect(feasible, lo, hi, tol)
    n_at, at, r = state(lo)
    bad_floor = [f"{k}{t.op}{t.value:g}" for t, k in prob.resolved
                 if not t.ceiling and at.get(_guard_key(t, k), at[k]) < t.value]
    if bad_floor:
        raise InfeasibleTargetError(
            f"the largest arrival rate meeting the ceilings is {fmt(lo)}, where "
            f"{', '.join(bad_floor)} fails")
    return Sizing(
        question=f"the largest arrival rate of class {name!r} meeting the targets",
        parameter=f"{name}.arrival_rate", answer=lo, beyond=hi,
        binding=tuple(prob.failed(state(hi)[1])) if state(hi)[1] is not None else (
            "stability (some station's utilisation >= 1)",),
        at=at, at_beyond=state(hi)[1] or {k: math.nan for k in at},
        bottleneck=_bottleneck(r), next_bottleneck=_next_bottleneck(r), network=n_at,
        targets=tuple(str(t) for t in prob.targets),
        **how.label(r, (f"bisection to relative resolution {tol:g}"
                        + (" between 0.1 % and 98 % of saturation" if sim else "")
                        + f"; saturation at {fmt(lam_sat)}",)))


def _station_search(net: Network, targets, vary, station, tol, how: _How) -> Sizing:
    if station is None or station not in net.station_names:
        raise InvalidValueError(
            f"vary={vary!r} needs station=... (one of {', '.join(net.station_names)})"
            + (f"; no station {station!r}" if station is not None else ""))
    st = net.stations[net.station_names.index(station)]
    closed = any(isinstance(c, Closed) for c in net.classes)
    if closed and any(isinstance(c, Open) for c in net.classes):
        raise UnsupportedModelError(
            f"vary={vary!r}: mixed networks are not searched (monotonicity not established)")
    if vary == "servers" and not isinstance(st, Queue):
        raise UnsupportedModelError(
            f"station {station!r} is a {st.kind} station; servers are sized at a queue")
    if closed:
        _check_rates_not_falling(net)
    prob = _Problem(net, targets, None, how)
    _check_improving(prob, station, vary, closed)

    def make(v):
        return _set(net, "station", station, int(v)) if vary == "servers" else \
            _speed_up(net, station, v)

    cache: dict = {}

    def state(v):
        if v not in cache:
            n2 = make(v)
            try:
                fig, r = prob.evaluate(n2)
            except Exception as e:  # noqa: BLE001 - an unstable point fails its targets
                if not isinstance(e, (UnstableError, InvalidValueError)) or closed:
                    raise
                cache[v] = (n2, None, None)
                return cache[v]
            cache[v] = (n2, fig, r)
        return cache[v]

    def feasible(v):
        fig = state(v)[1]
        return fig is not None and not prob.failed(fig)

    # a percentile of a closed class need not fall as a station gets more
    # servers (the tagged job's cycle time is not stochastically monotone:
    # its mean falls while its p95 may rise), so those are scanned one by one
    scan = closed and any(t.percentile is not None for t in prob.targets)
    if vary == "servers":
        limit = max(int(c.population) for c in net.classes) if closed else MAX_SERVERS
        answer = _fewest_servers(feasible, limit, scan, lambda: _no_answer(
            prob, state(limit)[1], station, f"{limit} servers", closed))
        beyond = answer - 1 if answer > 1 else None
        notes = (("every server count from 1 tried in turn (a closed class's percentile "
                  "need not fall with more servers)",) if scan else
                 ("integer search over the server count",))
        param = f"{station}.servers"
    else:
        if feasible(1.0):
            answer, beyond = 1.0, None
            notes = ("the targets hold at the current speed: no speed-up is needed",)
        else:
            hi = 2.0
            while not feasible(hi):
                if hi >= MAX_SPEED:
                    _no_answer(prob, state(hi)[1], station, f"a speed-up of {MAX_SPEED:g}",
                               closed)
                hi *= 2.0
            beyond, answer = _bisect(lambda v: not feasible(v), hi / 2 if hi > 2 else 1.0,
                                     hi, tol)
            notes = (f"bisection to relative resolution {tol:g}",)
        param = f"{station}.speed"
    n_at, at, r = state(answer)
    at_beyond = state(beyond)[1] if beyond is not None else None
    binding = tuple(prob.failed(at_beyond)) if at_beyond is not None else (
        ("stability (some station's utilisation >= 1)",) if beyond is not None else ())
    if at_beyond is None:
        at_beyond = {k: math.nan for k in at}
    word = "fewest servers" if vary == "servers" else "smallest speed-up"
    return Sizing(
        question=f"the {word} of station {station!r} meeting the targets",
        parameter=param, answer=answer, beyond=beyond if beyond is not None else math.nan,
        binding=binding, at=at, at_beyond=at_beyond,
        bottleneck=_bottleneck(r), next_bottleneck=_next_bottleneck(r), network=n_at,
        targets=tuple(str(t) for t in prob.targets), **how.label(r, notes))


def _fewest_servers(feasible, limit, scan, none) -> int:
    """The fewest servers (1..limit) that are ``feasible``: each in turn
    with ``scan``, else doubling then bisection (monotone); ``none()``
    raises when even ``limit`` fails."""
    if scan:
        answer = next((v for v in range(1, limit + 1) if feasible(v)), None)
        if answer is None:
            none()
        return answer
    if feasible(1):
        return 1
    hi = 2
    while not feasible(hi):
        if hi >= limit:
            none()
        hi = min(2 * hi, limit)
    lo = hi // 2 if hi > 2 else 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if feasible(mid) else (mid, hi)
    return hi


def _check_improving(prob, station, vary, closed) -> None:
    """Refuse a target that may move against the search as the station gets
    more servers or speed (see the module docstring)."""
    for t, key in prob.resolved:
        improving = (t.metric == "R" and t.ceiling) or (t.metric == "X" and not t.ceiling) or (
            not closed and t.metric == "U" and t.ceiling and key == f"U[{station}]")
        constant = not closed and (t.metric == "X" or (t.metric == "U" and key != f"U[{station}]"))
        if not (improving or constant):
            why = ("in a closed network X rises, and with it every other station's U"
                   if closed else "ceilings on R and U, floors on X are searched")
            raise UnsupportedModelError(
                f"target {t}: may not improve as {station!r} gets more "
                f"{'servers' if vary == 'servers' else 'speed'} ({why}); not searched")


def _no_answer(prob, fig, station, where, closed):
    bad = prob.failed(fig) if fig is not None else ["stability"]
    figs = ", ".join(f"{b.split('<=')[0].split('>=')[0]} = "
                     f"{fmt(fig[b.split('<=')[0].split('>=')[0]])}" for b in bad) \
        if fig is not None else ""
    raise InfeasibleTargetError(
        f"even with {where} at {station!r}, {', '.join(bad)} fails ({figs}): the station's "
        "own service time or another station limits it" + (
            " (in a closed network, more servers than jobs change nothing)" if closed else ""))


# ---------------------------------------------------------------------------
# command line: qmodels size MODEL --max-population --target 'R<=2'
# ---------------------------------------------------------------------------

def register_cli(sub) -> None:
    """Add ``qmodels size`` to an argparse subparsers object."""
    p = sub.add_parser(
        "size", help="answer a capacity question: most users, fewest servers, ...",
        description="The largest population or arrival rate, the fewest servers or the "
                    "smallest speed-up of a station that meets every --target: exact in "
                    "product form, else through --method with a margin for its error. "
                    "Examples: qmodels size model.yaml --max-population --target "
                    "'R<=2'; qmodels size model.yaml --min-servers disk --target 'R<=0.05'")
    p.add_argument("model", metavar="MODEL", help="model file (.yaml, .yml, .json)")
    q = p.add_mutually_exclusive_group(required=True)
    q.add_argument("--max-population", action="store_true",
                   help="the largest population of the closed class")
    q.add_argument("--max-arrival-rate", action="store_true",
                   help="the largest arrival rate of the open class (--class with several)")
    q.add_argument("--min-servers", metavar="STATION",
                   help="the fewest servers at STATION")
    q.add_argument("--min-speedup", metavar="STATION",
                   help="the smallest speed-up factor of STATION")
    p.add_argument("--target", action="append", required=True, metavar="TARGET",
                   help="R<=2, R[tx]<=2, X[tx]>=500, U[disk]<=0.7, R_p95<=0.05 "
                        "(repeatable: all must hold; quote it for the shell)")
    p.add_argument("--class", dest="cls", default=None, metavar="CLASS",
                   help="the class whose population or arrival rate varies")
    p.add_argument("--tol", type=float, default=1e-6,
                   help="relative resolution of arrival-rate and speed-up searches")
    p.add_argument("--method", default="auto",
                   help="auto (exact MVA in product form, else the method qm.solve chooses, "
                        "its measured error kept as a margin), a method name, or sim")
    p.add_argument("--seed", type=int, default=None, help="the simulator's seed (--method sim)")
    p.add_argument("--json", action="store_true", help="print the answer as JSON")
    p.set_defaults(func=_cmd_size)


def _cmd_size(args) -> int:
    import json

    from ..io import modelfile

    net = modelfile.load(args.model)
    if args.max_population:
        kw = {"vary": "population", "cls": args.cls}
    elif args.max_arrival_rate:
        kw = {"vary": "arrival_rate", "cls": args.cls}
    elif args.min_servers:
        kw = {"vary": "servers", "station": args.min_servers}
    else:
        kw = {"vary": "speed", "station": args.min_speedup}
    if args.cls is not None and kw["vary"] in ("servers", "speed"):
        raise InvalidValueError("--class applies to --max-population and --max-arrival-rate")
    result = size(net, *args.target, tol=args.tol, method=args.method, seed=args.seed, **kw)
    if args.json:
        def clean(x):
            return None if isinstance(x, float) and not math.isfinite(x) else x

        d = result.to_dict()
        d["beyond"] = clean(d["beyond"])
        for part in ("at", "at_beyond"):
            d[part] = {k: clean(v) for k, v in d[part].items()}
        print(json.dumps(d, indent=2))
    else:
        print(repr(result))
    return 0
