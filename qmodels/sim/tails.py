"""When a simulated confidence interval cannot be trusted: heavy tails.

A confidence interval from replication or batch means is only as good as
the observations behind it: each must be a mean over enough of the model's
randomness that it is close to normal and that the spread of the
observations shows the true variance.  With a heavy-tailed service or
inter-arrival time the rare long times dominate the figures (an M/G/1
queue's mean wait is lambda E[S^2] / (2 (1 - rho)), Pollaczek-Khinchine);
a run that has not seen enough of them reports a mean that is too low
*and* an interval that is too narrow, and no amount of replications cures
it (lognormal service of SCV 100 at rho = 0.5: the exact R = 51.5 lay
outside 27 of 50 default 95 % intervals, the estimates averaging 39.3).

The measure used here is the relative variance of the squared time,

    v = Var(S^2) / E[S^2]^2 = E[S^4] / E[S^2]^2 - 1,

a property of the distribution's shape alone (5 for the exponential,
(1 + c^2)^4 - 1 for a lognormal of SCV c^2, infinite for a Pareto of shape
alpha <= 4).  v / m is the squared relative error with which m draws
estimate E[S^2], the moment that sets the waiting times at an FCFS queue;
it is also, up to lower-order terms, the excess kurtosis of the time
itself, which sets how many draws a mean of times (a processor-sharing or
delay station's figures, a busy period) needs before it is close to
normal.  The mean waiting time of a GI/G/1 queue has a finite asymptotic
variance (so a confidence interval means anything) only when E[S^4] is
finite (Daley, "The serial correlation coefficients of waiting times in a
stationary single server queue", J. Austral. Math. Soc. 8 (1968); Whitt,
"Planning queueing simulations", Management Science 35(11), 1989).

Rule: every observation (replication, or batch of a batch-means run) must
draw at least TAIL_DRAWS x v times from each distribution heavier-tailed
than the exponential (v > 5) at a station or an open class's arrivals.
TAIL_DRAWS = 100 (a relative error of 10 % for E[S^2] within one
observation) is calibrated: lognormal SCV 10 at rho = 0.8 (v = 14,640)
missed the exact R in 8 of 40 default runs (1e5 services per replication,
m / v = 7); 15x longer runs (m / v = 100) missed 1 of 30, the nominal rate.
A default horizon is lengthened to meet the rule when that fits under the
simulator's event cap; otherwise, or with a given horizon, the run warns
(:class:`~qmodels.errors.SimulationWarning`, also in the result's notes)
naming the station, the distribution, v and the draws it had and needs.
Widening the interval instead would need the variance the run has not
seen: warning is the only honest answer.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.distributions import (
    unit_moments,
)
from ..model.network import Open

#: draws per observation, in units of v, that make an interval trustworthy
TAIL_DRAWS = 100.0
#: a shortfall a default horizon's extensions (4x, twice) can make up
REACH = 16.0
#: MSER-5 may delete up to half a replication as its warm-up
WARMUP_SHARE = 0.5
#: v of the exponential: a tail no heavier than this is never flagged
V_EXPONENTIAL = 5.0


def moments(dist, orders=(2, 4)):
    """Raw moments E[S^j] of a service-time shape scaled to mean 1
    (:func:`qmodels.model.distributions.unit_moments`)."""
    return unit_moments(dist, orders)


def tail_variance(dist) -> float | None:
    """v = Var(S^2) / E[S^2]^2 of the shape (``inf`` when E[S^4] is
    infinite), or None for a shape whose moments are unknown here."""
    mom = moments(dist)
    if mom is None:
        return None
    m2, m4 = mom
    if math.isinf(m4):
        return math.inf
    return max(m4 / (m2 * m2) - 1.0, 0.0)


def _describe(dist) -> str:
    return repr(dist) if dist is not None else "Exponential()"


def heavy_sources(net, flat):
    """The distributions heavier-tailed than the exponential, as a list of
    (where, dist, v, rate) with ``rate(obs) -> draws per unit time`` read
    from one observation's figures."""
    out = []
    shapes = net.lowered.shapes      # per class where a class gives its own
    for k, st in enumerate(net.stations):
        # the heaviest shape any class has there
        d = max(((tail_variance(row[k]) or 0.0, i) for i, row in enumerate(shapes)),
                default=(0.0, -1))
        d = shapes[d[1]][k] if d[1] >= 0 else getattr(st, "distribution", None)
        v = tail_variance(d)
        if v is not None and v > V_EXPONENTIAL:
            out.append((f"station {st.name!r}", d, v, ("X_st", k)))
    for ci, cls in enumerate(net.classes):
        if isinstance(cls, Open):
            d = getattr(cls, "interarrival", None)
            v = tail_variance(d)
            if v is not None and v > V_EXPONENTIAL and cls.arrival_rate > 0:
                out.append((f"the arrivals of class {cls.name!r}", d, v, ("arr", ci)))
    return out


def required_draws(v: float) -> float:
    """Draws per observation that the rule asks for (``inf`` if none suffice)."""
    return TAIL_DRAWS * v


def check_tails(net, flat, obs, span: float):
    """Problems, as (kind, message), of observations (replications or
    batches) each spanning ``span`` units of time: a heavy-tailed
    distribution drawn fewer than :func:`required_draws` times per
    observation.  kind is ``"tail"`` (a run at most REACH times longer
    would cure it), ``"tail-far"`` (only a much longer run would) or
    ``"tail-inf"`` (no run would: a fourth moment is infinite)."""
    out = []
    for where, d, v, (key, idx) in heavy_sources(net, flat):
        if key == "X_st":
            rates = [float(o["X_st"][idx]) for o in obs]
        else:
            rates = [float(net.classes[idx].arrival_rate)]
        rates = [r for r in rates if np.isfinite(r)]
        if not rates:
            continue
        m = min(rates) * span
        if m <= 0:
            continue
        if math.isinf(v):
            out.append(("tail-inf", (
                f"the interval of any figure touched by {where} cannot be trusted: its "
                f"distribution {_describe(d)} has an infinite fourth moment, so the waiting "
                "times there have no finite variance constant and no run length gives a "
                "confidence interval its stated coverage (the means are still consistent, "
                "but converge slowly and are typically low)")))
            continue
        need = required_draws(v)
        if m < need:
            # "tail": a run up to REACH times longer would do (a default
            # horizon is extended); "tail-far": only a warning helps
            out.append(("tail" if need <= REACH * m else "tail-far", (
                f"the intervals may be too narrow and the means too low: {where} draws from "
                f"{_describe(d)}, a heavy tail (Var(S^2)/E[S^2]^2 = {v:.4g}), only about "
                f"{m:.3g} times per observation, fewer than the {need:.3g} an interval needs; "
                "pass a horizon about "
                f"{need / m:.3g}x longer (or accept wider uncertainty than shown)")))
    return out


def default_horizon_need(net, flat, x_bound):
    """(time, why) a default horizon needs so that each observation draws
    :func:`required_draws` times from every heavy-tailed distribution
    (``x_bound(ci)`` the asymptotic throughput bound of class ci), or
    (0, "") if none; infinite needs are skipped (no run helps them)."""
    best, why = 0.0, ""
    V = np.asarray(flat.visits, dtype=float)
    for where, d, v, (key, idx) in heavy_sources(net, flat):
        need = required_draws(v)
        if not math.isfinite(need):
            continue
        if key == "X_st":
            rate = sum(x_bound(ci) * V[ci, idx] for ci in range(len(net.classes)))
        else:
            rate = float(net.classes[idx].arrival_rate)
        if not (0 < rate < math.inf):
            continue
        t = need / rate / (1.0 - WARMUP_SHARE)
        if t > best:
            best, why = t, f"{need:.3g} draws of the heavy-tailed {_describe(d)} at {where}"
    return best, why


def check_batches(net, obs, level: float):
    """Problems, as (kind, message), of batch means that are not
    independent: the lag-1 autocorrelation of the batch means of a class's
    X or R above its one-sided ``level`` critical value under independence,
    about z / sqrt(B) (B batches; Law 2015, sec. 9.5.3, which asks for
    uncorrelated batches; the normal approximation of the lag-1
    correlation of B independent values, mean -1/B, variance about 1/B:
    Box & Jenkins 1976, sec. 2.1.6).  Correlated batches make the interval
    too narrow."""
    from scipy.special import ndtri

    B = len(obs)
    if B < 8:
        return []
    crit = float(ndtri(level)) / math.sqrt(B) - 1.0 / B
    out = []
    for key, what in (("X_cl", "X"), ("R_cl", "R")):
        Y = np.array([o[key] for o in obs], dtype=float)
        for ci, name in enumerate(net.class_names):
            y = Y[:, ci]
            if not np.all(np.isfinite(y)):
                continue
            d = y - y.mean()
            den = float(d @ d)
            if den <= 0:
                continue
            r1 = float(d[:-1] @ d[1:]) / den
            if r1 > crit:
                out.append(("batches", (
                    f"the {B} batch means of {what}[{name}] are correlated (lag-1 "
                    f"autocorrelation {r1:.3g}, above the {crit:.3g} independent batches stay "
                    f"under at {level:g}): the batches are too short and the intervals too "
                    "narrow; pass a longer horizon=")))
    return out
