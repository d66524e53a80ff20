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

A warning alone leaves a narrow interval beside it, and the rule cannot
always be met (lognormal SCV 100: v = 1.04e8, so 1e10 draws per
observation).  So where a source is drawn too rarely, the intervals are
also *widened* by what the unseen part of the tail can add
(:func:`tail_widening`, :func:`widen_figures`): the run's figures rest on
the second moment it actually drew, and that realised mean of S^2 falls
short of E[S^2] by an amount a known-moment bound limits
(:func:`second_moment_floor`), so the upper ends of the response times
and queue lengths are raised to the run's mean with its waiting part
scaled by the bound (:func:`widening_factor`).  Measured on the M/G/1
queue, lognormal SCV 100 at rho = 0.5, default runs, exact R = 51.5
(Pollaczek-Khinchine): seeds 1-30 covered it 14 times before the
widening, seeds 1-40 40 times after (the upper ends 1.2 to 2.4 times the
exact value).  The means are still the run's own (likely low) and the
warning stays.  Light-tailed runs, and runs long enough for the rule,
keep their intervals unchanged, to the bit.
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


def _short_sources(net, flat, obs, span: float):
    """The heavy-tailed sources (:func:`heavy_sources`) drawn fewer than
    :func:`required_draws` times per observation, as (where, dist, v, key,
    idx, m, draws): m the fewest draws in one observation, draws the draws
    of the whole run (all observations)."""
    out = []
    for where, d, v, (key, idx) in heavy_sources(net, flat):
        if key == "X_st":
            rates = [float(o["X_st"][idx]) for o in obs]
        else:
            rates = [float(net.classes[idx].arrival_rate)] * len(obs)
        rates = [r for r in rates if np.isfinite(r)]
        if not rates:
            continue
        m = min(rates) * span
        if m <= 0:
            continue
        if m < required_draws(v):
            out.append((where, d, v, key, idx, m, sum(rates) * span))
    return out


def check_tails(net, flat, obs, span: float):
    """Problems, as (kind, message), of observations (replications or
    batches) each spanning ``span`` units of time: a heavy-tailed
    distribution drawn fewer than :func:`required_draws` times per
    observation.  kind is ``"tail"`` (a run at most REACH times longer
    would cure it), ``"tail-far"`` (only a much longer run would) or
    ``"tail-inf"`` (no run would: a fourth moment is infinite)."""
    out = []
    for where, d, v, _key, _idx, m, _draws in _short_sources(net, flat, obs, span):
        if math.isinf(v):
            out.append(("tail-inf", (
                f"the interval of any figure touched by {where} cannot be trusted: its "
                f"distribution {_describe(d)} has an infinite fourth moment, so the waiting "
                "times there have no finite variance constant and no run length gives a "
                "confidence interval its stated coverage (the means are still consistent, "
                "but converge slowly and are typically low; where a bound on the unseen "
                "tail is known the intervals are widened by it, see the notes)")))
            continue
        need = required_draws(v)
        # "tail": a run up to REACH times longer would do (a default
        # horizon is extended); "tail-far": only a warning helps
        out.append(("tail" if need <= REACH * m else "tail-far", (
            f"the intervals may be too narrow and the means too low: {where} draws from "
            f"{_describe(d)}, a heavy tail (Var(S^2)/E[S^2]^2 = {v:.4g}), only about "
            f"{m:.3g} times per observation, fewer than the {need:.3g} an interval needs; "
            "pass a horizon about "
            f"{need / m:.3g}x longer (where a bound on the unseen tail is known the "
            "intervals are widened by it, see the notes)")))
    return out


# ---------------------------------------------------------------------------
# widening: what the unseen part of a tail can add
# ---------------------------------------------------------------------------

#: thresholds q (on the unit-mean scale) over which the floor of
#: :func:`second_moment_floor` is maximised: a fixed grid, chosen before
#: the run, so that the bound at the best q keeps its probability
Q_GRID = np.geomspace(1.0, 1e16, 1601)


def partial_moments(dist, q, orders=(2, 4)):
    """E[S^j 1{S <= q}] of a shape scaled to mean 1, for an array of
    thresholds ``q``, one array per order; None for a shape without a
    closed form here (then only the full moments are used).

    Lognormal (sigma^2 = ln(1 + c^2), mu = -sigma^2 / 2):
    E[S^j] Phi((ln q - mu - j sigma^2) / sigma), the partial moment of a
    lognormal (Johnson, Kotz & Balakrishnan, *Continuous Univariate
    Distributions* 1, 2nd ed. 1994, ch. 14, eq. 14.8a).  Pareto of shape
    alpha and scale x_m = (alpha - 1) / alpha: alpha x_m^alpha (q^(j -
    alpha) - x_m^(j - alpha)) / (j - alpha), or alpha x_m^alpha ln(q /
    x_m) for j = alpha, 0 below x_m (integrating the density alpha
    x_m^alpha s^-(alpha + 1); ibid. ch. 20).  Balanced two-phase
    hyperexponential: sum_i p_i j! r_i^-j P(j + 1, r_i q), r_i = 2 p_i and
    P the regularised lower incomplete gamma function (the partial moment
    of an exponential of rate r is j! / r^j times the Erlang-(j + 1) cdf).
    Empirical: the mean of s^j over the unit samples s <= q.
    """
    from scipy.special import gammainc, ndtr

    from ..model.distributions import Empirical, HyperExponential, Lognormal, Pareto

    q = np.asarray(q, dtype=float)
    out = []
    for j in orders:
        if isinstance(dist, Lognormal):
            s2 = math.log1p(float(dist.scv))
            s, mu = math.sqrt(s2), -0.5 * s2
            with np.errstate(divide="ignore"):
                lq = np.log(q)
            out.append(math.exp(j * mu + 0.5 * j * j * s2) * ndtr((lq - mu - j * s2) / s))
        elif isinstance(dist, Pareto):
            a = float(dist.alpha)
            xm = (a - 1.0) / a
            qq = np.maximum(q, xm)
            if j == a:
                out.append(a * xm ** a * np.log(qq / xm))
            else:
                out.append(a * xm ** a * (qq ** (j - a) - xm ** (j - a)) / (j - a))
        elif isinstance(dist, HyperExponential):
            c2 = float(dist.scv)
            p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
            acc = np.zeros_like(q)
            for p in (p1, 1.0 - p1):
                if p > 0:
                    r = 2.0 * p
                    acc = acc + p * math.factorial(j) * r ** -j * gammainc(j + 1, r * q)
            out.append(acc)
        elif isinstance(dist, Empirical):
            u = np.sort(dist.unit_samples)
            cum = np.concatenate(([0.0], np.cumsum(u ** j)))
            out.append(cum[np.searchsorted(u, q, side="right")] / u.size)
        else:
            return None
    return out


def second_moment_floor(dist, draws: float, eps: float) -> float:
    """A floor L, fixed before the run, under which the mean of S^2 over
    ``draws`` independent draws of the unit-mean shape falls with
    probability at most ``eps``.

    For independent non-negative X_i with finite E[X_i^2],
    P(E[sum X_i] - sum X_i >= t) <= exp(-t^2 / (2 sum E[X_i^2])) (Maurer,
    "A bound on the deviation probability for sums of non-negative random
    variables", J. Inequalities in Pure and Applied Math. 4(1), art. 15,
    2003): a sum of non-negative terms is light-tailed *below* its mean
    however heavy its upper tail.  (Proof: e^-x <= 1 - x + x^2 / 2 for
    x >= 0 gives E[e^(-lambda X)] <= exp(-lambda E[X] + lambda^2 E[X^2] /
    2), and Chernoff's bound at lambda = t / sum E[X_i^2] the result.)
    Applied to X_i = S_i^2 1{S_i <= q} (S_i^2 >= X_i, so a floor of theirs
    is one of S^2's):

        L(q) = E[S^2; S <= q] - sqrt(2 ln(1/eps) E[S^4; S <= q] / draws),

    which needs no finite E[S^4] (a Pareto of alpha <= 4 has one for every
    finite q).  L is the largest L(q) over the fixed grid Q_GRID (and q =
    infinity when E[S^4] is finite), at least 0; the partial moments come
    from :func:`partial_moments`.  For a shape without them only q =
    infinity is tried (0 if E[S^4] is infinite).
    """
    m2, m4 = moments(dist)
    if not (draws > 0 and math.isfinite(m2)):
        return 0.0
    c = math.sqrt(2.0 * math.log(1.0 / eps) / draws)
    best = m2 - c * math.sqrt(m4) if math.isfinite(m4) else -math.inf
    part = partial_moments(dist, Q_GRID)
    if part is not None:
        p2, p4 = part
        lq = p2 - c * np.sqrt(p4)
        i = int(np.argmax(lq))
        best = max(best, float(lq[i]))
    return max(best, 0.0)


def widening_factor(dist, draws: float, eps: float):
    """(f, F): the factor f = E[S^2] / L by which the realised mean of S^2
    over ``draws`` draws falls short of E[S^2] with probability at most
    ``eps`` (L from :func:`second_moment_floor`), and the factor F by which
    a mean waiting time can then exceed the run's.

    Why the waits scale with the drawn second moment: in an M/G/1 FCFS
    queue the time-average work is V = lambda E[S W] + lambda E[S^2] / 2
    (Brumelle, "On the relation between customer and time averages in
    queues", J. Appl. Prob. 8, 1971: H = lambda G) and Poisson arrivals
    see it, W = V (Wolff, "Poisson arrivals see time averages", Oper. Res.
    30, 1982), so W = lambda E[S^2] / (2 (1 - rho)) (Pollaczek-Khinchine)
    holds along a run with the *realised* mean of S^2 in place of E[S^2]:
    a run that drew a mean of S^2 of E[S^2] / f reports about W / f.
    Beyond M/G/1 the waits are linear in the squared coefficients of
    variation: W = rho / (1 - rho) (c_a^2 + c_s^2) / 2 S at a GI/G/1
    queue (Kingman, "The single server queue in heavy traffic", Proc.
    Cambridge Phil. Soc. 57, 1961), (1 + c_s^2) / 2 times the M/M/c wait at
    an M/G/c queue (Lee & Longton, "Queueing processes associated with
    airline passenger check-in", Oper. Res. Quart. 10, 1959), and each
    station's arrival SCV is linear in the upstream ones, a departure
    stream's c_d^2 = rho^2 c_s^2 + (1 - rho^2) c_a^2 (Whitt, "The queueing
    network analyzer", Bell Syst. Tech. J. 62(9), 1983).  Scaling 1 + c^2
    = E[S^2] by f takes c^2 to f E[S^2] - 1, i.e. by F = (f E[S^2] - 1) /
    (E[S^2] - 1) >= f, and for any c_a^2 >= 0,
    (c_a^2 + F c^2) / (c_a^2 + c^2) <= F: F bounds the growth of every wait
    the source touches.  ``(inf, inf)`` when L = 0 (the run is too short
    for any floor).
    """
    m2, _ = moments(dist)
    L = second_moment_floor(dist, draws, eps)
    if L <= 0:
        return math.inf, math.inf
    f = max(m2 / L, 1.0)
    return f, (f * m2 - 1.0) / (m2 - 1.0) if m2 > 1.0 else f


def _waits_scale(st) -> bool:
    """A station whose mean wait grows with the second moment of its
    service times: FCFS and priority queues (Pollaczek-Khinchine, Cobham).
    Processor sharing, LCFS-PR, delay and load-dependent (served as
    processor sharing) stations have means insensitive to the shape beyond
    its mean (BCMP types 2-4; Baskett, Chandy, Muntz & Palacios, J. ACM
    22(2), 1975), so an unseen tail there biases no mean."""
    return getattr(st, "kind", "") == "queue" and getattr(st, "discipline", "fcfs") in (
        "fcfs", "prio", "prio-pr")


def tail_widening(net, flat, obs, span: float, level: float):
    """The widening a run needs, as (F, notes): F >= 1 the largest factor
    of :func:`widening_factor` over the sources drawn too rarely (those
    :func:`check_tails` warns about) whose waits scale with their second
    moment (an FCFS or priority station's service, an open class's
    inter-arrival times), at eps = (1 - level) / 2, the share of the upper
    end of a two-sided interval; notes naming each source.  F = 1 and no
    notes when nothing is short (light tails, or runs long enough for the
    rule keep their intervals)."""
    eps = 0.5 * (1.0 - level)
    F, notes = 1.0, []
    for where, d, _v, key, idx, _m, draws in _short_sources(net, flat, obs, span):
        if key == "X_st" and not _waits_scale(net.stations[idx]):
            continue
        f, Fi = widening_factor(d, draws, eps)
        if not Fi > 1.0:
            continue
        F = max(F, Fi)
        notes.append(
            f"heavy tail at {where}: {_describe(d)} was drawn about {draws:.3g} times in the "
            f"whole run, too few for its tail, so the mean of S^2 the run saw can fall short "
            f"of E[S^2] by a factor up to {f:.3g} (at {1 - eps:g} confidence, a bound from "
            "the shape's known moments) and the waits it sets with it")
    return F, notes


def _widened(e, base: float, F: float):
    """``e`` with its upper end ``max(high, base + (mean - base) F)``: the
    run's mean with its part above ``base`` (the waiting) scaled by F, the
    Student-t upper end kept as a floor (the widened end covers the tail's
    shortfall of the point estimate, the t end the rest of its noise); the
    whole mean is scaled when base is not below it."""
    hi, mean = e.high, e.mean
    if not (F > 1.0 and math.isfinite(hi) and math.isfinite(mean) and mean > 0):
        return e
    b = base if 0.0 <= base < mean else 0.0
    new = b + (mean - b) * F
    if not new > hi:
        return e
    return type(e)(e.mean, e.low, new, e.level, e.n, e.t_interval or (e.low, e.high))


def _scaled(e, hi_ratio: float = 1.0, lo_ratio: float = 1.0):
    low, high = e.low, e.high
    if hi_ratio > 1.0 and math.isfinite(high) and high > 0:
        high = high * hi_ratio
    if lo_ratio < 1.0 and math.isfinite(low) and low > 0:
        low = low * lo_ratio
    if low == e.low and high == e.high:
        return e
    return type(e)(e.mean, low, high, e.level, e.n, e.t_interval or (e.low, e.high))


def widen_figures(net, flat, figs: dict, F: float):
    """The figures with intervals widened by the factor F of
    :func:`tail_widening` (F <= 1: unchanged), and a note saying what moved.

    A mean wait may be up to F times the run's: the run's waits follow the
    second moment it drew (:func:`widening_factor`), and with probability
    at least 1 - eps that fell short of E[S^2] by at most f, so the true
    mean wait is at most F times the run's mean wait.  The upper end of
    every response time becomes ``max(high, base + (mean - base) F)``,
    base the mean service time per visit (the smallest at a station
    serving several classes; the class's total demand for a class), the
    waiting part scaled (:func:`_widened`); a queue length's upper end
    moves with its response time (Little's law, Q = X R, the throughput
    being the run's).  Delay stations (no wait) keep theirs.
    In a closed class a longer cycle means fewer cycles: by the response
    time law X = N / (R + Z) (Lazowska et al., *Quantitative System
    Performance*, 1984, ch. 3) the lower end of its throughput falls by
    (R_high + Z) / (R_high' + Z), and so do its per-station figures and
    queue length, and the lower ends of the throughput, utilisation and
    queue length of every station it visits, by the smallest ratio of the
    closed classes there (jobs held longer at one station are missing at
    the others).  Open classes keep their throughputs (lambda).  The
    means stay the run's own.
    """
    if not F > 1.0:
        return figs, None
    S = np.asarray(flat.S, dtype=float)
    V = np.asarray(flat.visits, dtype=float)
    sn, cn = net.station_names, net.class_names
    R, Q = figs["response_time"], figs["queue_length"]
    r_st, q_st, r_pair, q_pair, r_cl, q_cl = {}, {}, {}, {}, {}, {}
    for k, s in enumerate(sn):
        delay = net.stations[k].kind == "delay"
        vis = S[:, k][(V[:, k] > 0)]
        base = float(vis.min()) if vis.size else 0.0
        e = R._station[s]
        r_st[s] = e if delay else _widened(e, base, F)
        q_st[s] = _scaled(Q._station[s], _ratio(r_st[s], e))
        for i, c in enumerate(cn):
            e = R._pair[(s, c)]
            r_pair[(s, c)] = e if delay else _widened(e, float(S[i, k]), F)
            q_pair[(s, c)] = _scaled(Q._pair[(s, c)], _ratio(r_pair[(s, c)], e))
    from ..model.network import Closed

    lo_cl = {}  # closed class -> the factor of its lower ends (1: none)
    for i, c in enumerate(cn):
        e = R._class[c]
        D = float(V[i] @ S[i])
        r_cl[c] = _widened(e, D, F)
        q_cl[c] = _scaled(Q._class[c], _ratio(r_cl[c], e))
        cls = net.classes[i]
        if isinstance(cls, Closed) and r_cl[c] is not e:
            Z = float(cls.think_time)
            hi = r_cl[c].high
            lo_cl[c] = (e.high + Z) / (hi + Z) if math.isfinite(hi) else 0.0
    # a station's lower ends fall with the closed classes that visit it
    lo_st = {s: min([lo_cl.get(c, 1.0) for i, c in enumerate(cn) if V[i, k] > 0], default=1.0)
             for k, s in enumerate(sn)}

    def lower(f, st_new=None, cl_new=None, pair_new=None):
        st_new = f._station if st_new is None else st_new
        cl_new = f._class if cl_new is None else cl_new
        pair_new = f._pair if pair_new is None else pair_new
        return type(f)(f.metric, {s: _scaled(e, 1.0, lo_st[s]) for s, e in st_new.items()},
                       {c: _scaled(e, 1.0, lo_cl.get(c, 1.0)) for c, e in cl_new.items()},
                       {p: _scaled(e, 1.0, lo_cl.get(p[1], 1.0)) for p, e in pair_new.items()})

    out = dict(figs)
    out["response_time"] = type(R)(R.metric, r_st, r_cl, r_pair)
    out["queue_length"] = lower(Q, q_st, q_cl, q_pair)
    out["throughput"] = lower(figs["throughput"])
    out["utilization"] = lower(figs["utilization"])
    lo = min(lo_cl.values(), default=1.0)
    note = (f"intervals widened for the unseen tail: the upper ends of the response times "
            f"and queue lengths reach at least the run's means with their waiting parts "
            f"scaled by {F:.4g}"
            + (f", and in the closed classes (and the stations they visit) the lower ends of "
               f"throughputs, utilizations and queue lengths by a factor down to {lo:.3g} "
               "(response time law)" if lo < 1.0 else "")
            + "; the means are the run's own and likely low; percentiles, pools and losses "
            "are not widened")
    return out, note


def _ratio(new, old) -> float:
    if not (math.isfinite(old.high) and old.high > 0):
        return 1.0
    return new.high / old.high


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
