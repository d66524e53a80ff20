"""The simulator's honesty: argument checks, the default horizon, self-checks.

:func:`_check_args` refuses what :func:`~qmodels.sim.api.simulate` cannot
honour; :func:`_default_horizon` picks a run length from the asymptotic
bounds and the relaxation times of the open stations; :func:`_diagnose`
looks at a finished run for what would make its figures wrong (a transient
left in the data, a growing number present, too few events or cycles, an
operational law broken), so that the simulator is never confidently wrong.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidValueError
from ..model.caching import CacheStation
from ..model.chains import chain_rates
from ..model.network import Closed, Network, Open
from .flatten import Flat, limiting_capacity
from .stats import check_level, estimate
from .tails import check_batches, check_tails, default_horizon_need
from .windows import _trend_series

#: default events per replication when no horizon is given (at least)
DEFAULT_EVENTS = 200_000
#: a given horizon shorter than this many relaxation times: a warning
MIN_RELAXATIONS = 10
#: a default horizon lets every closed job complete this many cycles ...
CYCLES_PER_JOB = 20
#: ... and spans this many relaxation times of the busiest open station
RELAXATIONS = 50
#: but never asks for more events per replication than this (a warning says so)
MAX_DEFAULT_EVENTS = 20_000_000
#: fewer events than this in a replication (or batch-means run): a warning
MIN_EVENTS = 100
#: fewer cycles per closed job than this in the observation window: a warning
MIN_CYCLES = 5
#: confidence level of the self-checks (a law broken, a growing number present)
CHECK_LEVEL = 0.999
#: a mean service time within this many ulps of the clock: a warning
CLOCK_ULPS = 1e3


# ---------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------

def _check_args(network, seed, horizon, replications, warmup, precision, level, method,
                max_events):
    """Refuse an argument ``simulate`` cannot honour (InvalidValueError,
    naming it and its value); the checked confidence level."""
    if not isinstance(network, Network):
        raise InvalidValueError(f"simulate needs a qmodels Network, got {type(network).__name__}")
    if seed is None or isinstance(seed, bool) or not isinstance(
            seed, (numbers.Integral, np.random.SeedSequence)) or (
            isinstance(seed, numbers.Integral) and seed < 0):
        raise InvalidValueError(
            f"seed must be a non-negative integer or a numpy SeedSequence, got {seed!r}"
        )
    if horizon is not None:
        if isinstance(horizon, bool) or not isinstance(horizon, numbers.Real) \
                or not math.isfinite(horizon) or horizon <= 0:
            raise InvalidValueError(f"horizon must be a finite time > 0, got {horizon!r}")
    if method not in ("replications", "batch_means"):
        raise InvalidValueError(
            f"method must be 'replications' or 'batch_means', got {method!r}"
        )
    if method == "replications":
        if isinstance(replications, bool) or not isinstance(replications, numbers.Integral) \
                or replications < 2:
            raise InvalidValueError(
                f"replications must be an integer >= 2 for confidence intervals, "
                f"got {replications!r}"
            )
    if not (isinstance(warmup, str) and warmup == "mser5"):
        if warmup is not None and (isinstance(warmup, bool) or not isinstance(
                warmup, numbers.Real) or not math.isfinite(warmup) or warmup < 0):
            raise InvalidValueError(
                f"warmup must be 'mser5', a time >= 0 or None, got {warmup!r}"
            )
    if precision is not None:
        if isinstance(precision, bool) or not isinstance(precision, numbers.Real) \
                or not (0 < precision < 1):
            raise InvalidValueError(
                f"precision (relative half-width) must be in (0, 1), got {precision!r}"
            )
    level = check_level(level)
    if max_events is not None:
        if isinstance(max_events, bool) or not isinstance(max_events, numbers.Real) \
                or not max_events >= 1:
            raise InvalidValueError(f"max_events must be a number >= 1, got {max_events!r}")
    return level



# ---------------------------------------------------------------------------
# run length: the default horizon, and a given one too short
# ---------------------------------------------------------------------------

def _throughput_bound(net: Network, ci: int) -> float:
    """Asymptotic upper bound of the throughput of class ci (Lazowska et
    al. 1984, sec. 5.2): lambda for an open class; for a closed one
    min(N / (D + Z), min_k c_k / D_k), c_k the servers (the largest rate
    multiplier of a load-dependent station); delays bound nothing."""
    cls = net.classes[ci]
    if isinstance(cls, Open):
        return chain_rates(net)[ci]
    from ..model.forkjoin import critical_path_demand

    D = net.demands.astype(float)[ci]
    # a fork-join counts its longest branch (sum_k D_k without fork-joins)
    tot = critical_path_demand(net, ci) + float(cls.think_time)
    x = cls.population / tot if tot > 0 else math.inf
    for k, s in enumerate(net.stations):
        if D[k] > 0 and s.kind != "delay":
            cap = float(s.max_rate_multiplier) if s.kind == "ld" else float(s.servers)
            x = min(x, cap / D[k])
    return x


def _default_horizon(net: Network, flat: Flat):
    """(horizon, note): simulated time per replication when none is given.

    The longest of: about DEFAULT_EVENTS events, from the asymptotic
    throughput bound of each class, X_c <= min(N_c / (D_c + Z_c),
    c_k / D_ck) (Lazowska et al. 1984, sec. 5.2), or its arrival rate;
    CYCLES_PER_JOB cycles of every closed job, a cycle lasting at least
    N_c / X_c+ (the same bound: N D_max once the population saturates the
    bottleneck, so a large population needs a long run); and RELAXATIONS
    relaxation times of every open station, ``S / (c (1 - sqrt(rho))^2)``
    (the M/M/c relaxation time, Whitt 1989, "Planning queueing
    simulations", Management Science 35(11), eq. 9; Morse 1955), rho from
    the open load at the limiting rate.  Capped at MAX_DEFAULT_EVENTS
    events; the note says so when the cap bites (the run is then shorter
    than the model needs).
    """
    rate = 0.0
    t_min = 0.0
    why = ""
    for ci, cls in enumerate(net.classes):
        visits = float(flat.visits[ci].sum())
        if isinstance(cls, Open):
            x = chain_rates(net)[ci]
        else:
            N = cls.population
            if N == 0:
                continue
            x = _throughput_bound(net, ci)
            if 0 < x < math.inf and CYCLES_PER_JOB * N / x > t_min:
                t_min = CYCLES_PER_JOB * N / x
                why = f"{CYCLES_PER_JOB} cycles of each of the {N} jobs of class {cls.name!r}"
        rate += x * max(2.0 * visits, 1.0)
    if not math.isfinite(rate) or rate <= 0:
        return 1.0, None
    relax, who = _relaxation_time(net, flat)
    if RELAXATIONS * relax > t_min:
        t_min = RELAXATIONS * relax
        why = f"{RELAXATIONS} relaxation times of {who}"
    # heavy tails: enough draws of each per replication (qmodels.sim.tails)
    # (only when that fits under the event cap: a need far beyond it is left
    # to the run's own warning rather than paid for with a capped run)
    t_tail, why_tail = default_horizon_need(net, flat, lambda ci: _throughput_bound(net, ci))
    if t_tail > t_min and t_tail * rate <= MAX_DEFAULT_EVENTS:
        t_min, why = t_tail, why_tail
    horizon = max(DEFAULT_EVENTS / rate, t_min)
    if horizon * rate > MAX_DEFAULT_EVENTS:
        need = horizon
        horizon = MAX_DEFAULT_EVENTS / rate
        return horizon, (
            f"the default horizon {horizon:.6g} (about {MAX_DEFAULT_EVENTS:.3g} events per "
            f"replication) is shorter than the {need:.6g} the model needs for {why}; the "
            "figures may be biased: pass a longer horizon= to be sure")
    return horizon, None


def _horizon_too_short(net: Network, flat: Flat, horizon: float) -> str | None:
    """A warning if a given ``horizon`` is shorter than MIN_RELAXATIONS
    relaxation times of an open station (:func:`_relaxation_time`), else None."""
    tau, who = _relaxation_time(net, flat)
    if horizon < MIN_RELAXATIONS * tau:
        return (f"the horizon {horizon:.6g} is shorter than {MIN_RELAXATIONS} relaxation times "
                f"({MIN_RELAXATIONS * tau:.6g}) of {who}: the queue there has no time to "
                "reach its steady state and the figures are likely biased low; pass a longer "
                "horizon= (or leave it out)")
    return None


def _relaxation_time(net: Network, flat: Flat):
    """(tau, description): the longest relaxation time of an open station,
    ``tau = S / (c (1 - sqrt(rho))^2)`` (M/M/c: Whitt 1989, eq. 9; Morse
    1955), S the mean service time of the open visits, c the limiting
    rate, rho the open load at that rate.  (0, "") without open load.
    Stations with a finite capacity are left out (a bounded queue relaxes
    fast, and rho >= 1 there, or behind it, is shed as loss or blocking:
    the run's own growth check watches those)."""
    best, who = 0.0, ""
    rates = chain_rates(net)        # (a switching chain's visits are per its arrivals)
    for k, s in enumerate(net.stations):
        lam_s = sum(rates[ci] * flat.visits[ci, k] * flat.S[ci, k]
                    for ci, c in enumerate(net.classes) if isinstance(c, Open))
        cap = limiting_capacity(s)
        if lam_s <= 0 or not math.isfinite(cap) or s.capacity is not None or lam_s >= cap:
            continue
        lam = sum(rates[ci] * flat.visits[ci, k]
                  for ci, c in enumerate(net.classes) if isinstance(c, Open))
        rho = lam_s / cap
        tau = (lam_s / lam) / (cap * (1.0 - math.sqrt(rho)) ** 2)
        if tau > best:
            best, who = tau, f"station {s.name!r} (open load rho = {rho:.6g})"
    return best, who



# ---------------------------------------------------------------------------
# self-checks: the simulator must never be confidently wrong
# ---------------------------------------------------------------------------

@dataclass
class _Checks:
    """What the self-checks need, collected during the runs."""

    events: list = field(default_factory=list)  # events of each replication (or the run)
    trend: list = field(default_factory=list)  # per replication: (last, first) quarter


def _diagnose(net: Network, flat: Flat, obs, chk: _Checks, horizon: float, warm_mean: float,
              method: str):
    """Problems found in a finished run, as (kind, message): a transient
    not removed, too few events, cycles or completions, a heavy-tailed
    distribution drawn too rarely per observation or correlated batch means
    (:mod:`qmodels.sim.tails`), a number present that grows, a law broken
    (throughput above its asymptotic bound, unequal throughputs per visit).
    Laws are tested with intervals at CHECK_LEVEL, so a warning means the
    run, not chance, is at fault."""
    out = []
    hint = "pass a longer horizon="
    drift = _drift(net, obs, chk, method)
    if drift is not None:
        out.append(drift)
    # heavy tails drawn too rarely per observation; batch means that are
    # correlated (qmodels.sim.tails): intervals that cannot be trusted
    span = (horizon - warm_mean) / (len(obs) if method == "batch_means" else 1)
    out.extend(check_tails(net, flat, obs, span))
    out.extend(_clock_resolution(net, flat, horizon))
    if method == "batch_means":
        out.extend(check_batches(net, obs, CHECK_LEVEL))
    ev = min(chk.events) if chk.events else 0
    if ev < MIN_EVENTS:
        out.append(("short", f"a run saw only {ev} events (fewer than {MIN_EVENTS}): its figures "
                    "are not estimates; " + hint))
    T_obs = horizon - warm_mean
    for ci, cls in enumerate(net.classes):
        xs = np.array([o["X_cl"][ci] for o in obs])
        active = cls.population > 0 if isinstance(cls, Closed) else cls.arrival_rate > 0
        if not active:
            continue
        if not np.any(xs > 0):
            out.append(("short", f"class {cls.name!r} completed no cycle in the observation "
                        "window: its throughput 0 and response time are not estimates; " + hint))
            continue
        if isinstance(cls, Closed):
            per_job = float(xs.mean()) * T_obs / cls.population
            if per_job < MIN_CYCLES:
                out.append(("cycles", f"class {cls.name!r}: each of its {cls.population} jobs "
                            f"completes only {per_job:.3g} cycles in the observation window "
                            f"(fewer than {MIN_CYCLES}); " + hint))
        if _through_cache(net, ci):
            # its visit ratios past a cache are Che's split, the run's are
            # the item-level cache's: neither law below holds with the model's
            continue
        x_est = estimate(xs, CHECK_LEVEL)
        bound = _throughput_bound(net, ci)
        if x_est.n >= 3 and x_est.low > bound * (1.0 + 1e-9):
            out.append(("law", f"class {cls.name!r}: simulated throughput {x_est.mean:.6g} "
                        f"(lower {CHECK_LEVEL:g} bound {x_est.low:.6g}) exceeds its asymptotic "
                        f"bound {bound:.6g}: the run is not in steady state; " + hint))
        for k, st in enumerate(net.stations):
            v = flat.visits[ci, k]
            if v <= 0:
                continue
            # a window cuts the cycles of the jobs present at its ends: up to
            # about n_c (1 + 1/v) / T_obs of difference is no law broken
            n_c = cls.population if isinstance(cls, Closed) else max(
                float(o["Q_cl"][ci]) for o in obs) + 1.0
            tol = max(0.02 * float(xs.mean()), 2.0 * n_c * (1.0 + 1.0 / v) / T_obs)
            diff = estimate([o["X_pair"][ci, k] / v - o["X_cl"][ci] for o in obs], CHECK_LEVEL)
            if diff.n >= 3 and (diff.low > 0 or diff.high < 0) and abs(diff.mean) > tol:
                out.append(("law", f"class {cls.name!r}: throughput per visit at station "
                            f"{st.name!r} differs from the class throughput by {diff.mean:.6g} "
                            f"(visit ratio {v:g}): the run is not in steady state; " + hint))
    return out


def _through_cache(net: Network, ci: int) -> bool:
    """Whether class ci visits a cache station (its simulated visit ratios
    downstream follow the item-level cache, not the model's Che split)."""
    return any(isinstance(s, CacheStation) and net.visits[ci, k] > 0
               for k, s in enumerate(net.stations))


def _drift(net: Network, obs, chk: _Checks, method: str):
    """(kind, message) if a figure drifts during the observation window
    (at CHECK_LEVEL and by more than 2 % of its level), else None.

    Replications compare the last quarter of each window with its first
    (independent replications, a paired t interval; at least 3, as two
    replications of a discrete count can agree exactly); batch means test the
    slope of the batch means (Law 2015, sec. 9.5: a transient left in the
    data shows as a trend).  A number present that grows in a network with
    open classes is reported as instability ("growth"); any other drift as
    a warm-up that failed ("warmup")."""
    from scipy.special import stdtrit

    names = ["the number present"] + [f"X[{c}]" for c in net.class_names] + \
        [f"R[{c}]" for c in net.class_names]
    if method == "replications":
        pairs = [p for p in chk.trend if p is not None]
        if len(pairs) < 3:
            return None
        last = np.array([p[0] for p in pairs])
        first = np.array([p[1] for p in pairs])
        found = []
        for i, name in enumerate(names):
            e = estimate(last[:, i] - first[:, i], CHECK_LEVEL)
            col = np.abs(first[:, i])
            col = col[np.isfinite(col)]
            level = float(col.mean()) if col.size else 0.0
            if e.n >= 3 and (e.low > 0 or e.high < 0) and abs(e.mean) > 0.02 * level:
                found.append((i, e.mean, f"{name} changes by {e.mean:.6g} (+- {e.half_width:.3g}) "
                              "from the first to the last quarter of the observation window"))
    else:
        Y = np.array([_trend_series(o) for o in obs])
        B = Y.shape[0]
        if B < 4:
            return None
        xc = np.arange(B, dtype=float) - (B - 1) / 2.0
        tq = float(stdtrit(B - 2, 0.5 * (1.0 + CHECK_LEVEL)))
        found = []
        for i, name in enumerate(names):
            y = Y[:, i]
            if not np.all(np.isfinite(y)):
                continue
            b = float(xc @ (y - y.mean()) / (xc @ xc))
            resid = y - y.mean() - b * xc
            se = math.sqrt(float(resid @ resid) / (B - 2) / float(xc @ xc))
            if abs(b) * B > 0.02 * abs(y.mean()) and (se == 0 or abs(b) / se > tq):
                found.append((i, b, f"{name} drifts by {b * B:.6g} over the {B} batches"))
    if not found:
        return None
    open_net = any(isinstance(c, Open) for c in net.classes)
    i, change, what = found[0]
    hint = "pass a longer horizon="
    if open_net and i == 0 and change > 0:
        return ("growth", f"{what}: the number present keeps growing, an unstable model or one "
                "far from its steady state; " + hint)
    return ("warmup", f"warm-up deletion failed: {what}, so the initial transient lasts "
            "into the observation window; " + hint)



def _clock_resolution(net: Network, flat: Flat, horizon: float):
    """Problems, as (kind, message), of stations whose mean service time is
    too small for the simulation clock.

    The loop keeps one clock in double precision; at time t its resolution
    is ulp(t) = 2^(floor(log2 t) - 52) (IEEE 754).  A service of mean S
    starts and ends at clock values, so each service time and each interval
    of a station's busy time and queue area is rounded to ulp(t): a relative
    error of up to ulp(t) / (2 S) per service, and a systematic loss once S
    nears ulp(t) (S = 1e-9 next to S = 1e3, horizon 5e7, ulp 7.5e-9: U and
    Q of the fast station 62 % low; S = 1e-8: 1 % low).  A compensated sum
    cannot help: the times themselves are rounded.  A warning when S <
    CLOCK_ULPS ulp(horizon), i.e. a rounding of each service above
    1 / (2 CLOCK_ULPS) = 0.05 % (S = 1e-6 at that horizon, 134 ulps, still
    came out right: the rounding errors of many services mostly cancel, so
    the warning is on the safe side); the remedies are a shorter horizon or a
    model without the fast station (its figures are lambda S, negligible
    next to the others)."""
    out = []
    ulp = math.ulp(float(horizon))
    S = np.asarray(flat.S, dtype=float)
    V = np.asarray(flat.visits, dtype=float)
    for k, st in enumerate(net.stations):
        s = S[:, k][(V[:, k] > 0) & (S[:, k] > 0)]
        if s.size == 0:
            continue
        smin = float(s.min())
        if smin < CLOCK_ULPS * ulp:
            out.append(("clock", (
                f"station {st.name!r}: its mean service time {smin:.3g} is only "
                f"{smin / ulp:.3g} ulps of the simulation clock at t = {horizon:.6g} (ulp "
                f"{ulp:.3g}; the ratio of scales is {horizon / smin:.3g}): its service times, "
                f"busy time and queue area are rounded by up to {ulp / (2 * smin):.2%} each "
                "and its U, Q, R can be biased beyond their intervals; shorten the horizon "
                "(or leave the station out: its figures are lambda S)")))
    return out
