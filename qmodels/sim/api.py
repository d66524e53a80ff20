"""``simulate``: the Python side of the simulator.

The Python layer flattens the model (:mod:`qmodels.sim.flatten`), drives the
compiled, resumable event loop (:mod:`qmodels.sim.engine`) and summarises
its cumulative statistics (:mod:`qmodels.sim.stats`).
"""

from __future__ import annotations

import math
import numbers
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._jit import Resumable
from .._progress import bar as progress_bar
from ..errors import (
    ConvergenceWarning,
    InvalidValueError,
    SimulationWarning,
    UnstableError,
    UnsupportedModelError,
)
from ..model.network import Closed, Network, Open
from ..results import Figures
from . import engine as E
from .flatten import HIST_BINS, Flat, acc_layout, flatten, limiting_capacity
from .result import SimResult
from .stats import Estimate, check_level, estimate, histogram_percentile, mser5

__all__ = ["simulate"]

#: cells of simulated time per replication (MSER-5 works on them) and per
#: batch-means run; a histogram segment spans CELLS_PER_SEG cells
CELLS_REP = 200
CELLS_BATCH = 1000
CELLS_PER_SEG = 10
BATCHES = 20
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
#: events per call of the compiled loop: Ctrl-C is seen between calls
CHUNK_EVENTS = 2_000_000
#: events per call while the loop runs as Python (its machine code is being
#: compiled in the background): about a quarter of a second, so the switch to
#: the machine code, Ctrl-C and the progress bar stay prompt
TWIN_CHUNK_EVENTS = 20_000
#: the event loop: its machine code when at hand, else its Python twin while a
#: child process compiles it (:class:`qmodels._jit.Resumable`)
ENGINE = Resumable(E.run)
#: fewer events than this in a replication (or batch-means run): a warning
MIN_EVENTS = 100
#: fewer cycles per closed job than this in the observation window: a warning
MIN_CYCLES = 5
#: confidence level of the self-checks (a law broken, a growing number present)
CHECK_LEVEL = 0.999
#: times a default horizon is made 4x longer when the run is too short
EXTENSIONS = 2
#: more open jobs present than this: the run is declared unstable
OPEN_LIMIT = 2_000_000
PERCENTILES = (50, 95, 99)


# ---------------------------------------------------------------------------
# one run of the event loop, with all its state
# ---------------------------------------------------------------------------

class _Run:
    """State arrays of one replication (or of the single long run)."""

    def __init__(self, flat: Flat, rng, edges: np.ndarray, seg: np.ndarray, nseg: int):
        self.f = flat
        self.rng = rng
        C, K, P = flat.C, flat.K, flat.P
        has_open = bool(np.any(flat.CLI[:, 0] == 1))
        J = flat.n_closed + (256 if has_open else 0)
        self.JI = np.full((max(J, 1), E.NJI), -1, dtype=np.int64)
        self.JI[:, E.J_HELD] = 0
        self.JI[:, E.J_CYEND] = 0
        self.JI[:, E.J_STATE] = E.S_FREE
        self.JI[: flat.n_closed, E.J_CLS] = flat.closed_class_of_job
        self.JF = np.zeros((max(J, 1), E.NJF))
        self.SI = np.zeros(E.NSI, dtype=np.int64)
        self.SI[E.I_NCLOSED] = flat.n_closed
        self.SI[E.I_FREE] = -1
        self._link_free(flat.n_closed, J)
        E_ = C + K + max(J, 1)
        self.HE = np.zeros(E_, dtype=np.int64)
        self.HT = np.zeros(E_)
        self.POS = np.full(E_, -1, dtype=np.int64)
        self.SS = np.zeros((K, E.NSS), dtype=np.int64)
        self.SS[:, E.K_WQH:] = -1
        self.SS[:, E.K_NACT] = 0
        self.NC = np.zeros((C, K), dtype=np.int64)
        self.BS = np.zeros((C, K), dtype=np.int64)
        self.SFL = np.zeros((K, 3))
        self.PS = np.zeros((max(P, 0), 4), dtype=np.int64)
        if P:
            self.PS[:, E.P_FREE] = flat.PLI[:, 0]
            self.PS[:, E.P_QH] = -1
            self.PS[:, E.P_QT] = -1
        self.PFL = np.zeros(P)
        self.SX = np.zeros(1)
        lay = acc_layout(C, K, P)
        self.lay = lay
        self.ACC = np.zeros(lay["size"])
        self.EDGES = np.ascontiguousarray(edges, dtype=float)
        self.SNAP = np.zeros((len(edges), lay["size"]))
        self.SEG = np.ascontiguousarray(seg, dtype=np.int64)
        self.HIST = np.zeros((nseg + 1, C, HIST_BINS), dtype=np.int64)
        self.UB = np.zeros(self.JI.shape[0] + K + 1, dtype=np.int64)
        erl = [int(a) for a, kind in zip(flat.STF[:, 0], flat.STI[:, 4]) if kind == E.D_ERLANG]
        erl += [int(a) for a, kind in zip(flat.CLF[:, 2], flat.CLI[:, 2]) if kind == E.D_ERLANG]
        self.kmax = max([2] + erl)
        self.U = np.zeros(0)

    def _link_free(self, a, b):
        """Put job slots a..b-1 at the head of the free list."""
        if b <= a:
            return
        self.JI[a:b - 1, E.J_NXT] = np.arange(a + 1, b)
        self.JI[b - 1, E.J_NXT] = self.SI[E.I_FREE]
        self.SI[E.I_FREE] = a

    def _grow(self):
        f = self.f
        J = self.JI.shape[0]
        J2 = 2 * J
        JI = np.full((J2, E.NJI), -1, dtype=np.int64)
        JI[:, E.J_HELD] = 0
        JI[:, E.J_CYEND] = 0
        JI[:, E.J_STATE] = E.S_FREE
        JI[:J] = self.JI
        JF = np.zeros((J2, E.NJF))
        JF[:J] = self.JF
        self.JI, self.JF = JI, JF
        self._link_free(J, J2)
        n0 = f.C + f.K + J
        n1 = f.C + f.K + J2
        HE = np.zeros(n1, dtype=np.int64)
        HT = np.zeros(n1)
        POS = np.full(n1, -1, dtype=np.int64)
        HE[:n0], HT[:n0], POS[:n0] = self.HE, self.HT, self.POS
        self.HE, self.HT, self.POS = HE, HT, POS
        self.UB = np.zeros(J2 + f.K + 1, dtype=np.int64)

    def extend(self, edges, seg, nseg):
        """Longer run: more cells (same width) and histogram segments."""
        n0 = self.SNAP.shape[0]
        old_nseg = self.HIST.shape[0] - 1
        SNAP = np.zeros((len(edges), self.SNAP.shape[1]))
        SNAP[:n0] = self.SNAP
        HIST = np.zeros((nseg + 1,) + self.HIST.shape[1:], dtype=np.int64)
        HIST[:old_nseg] = self.HIST[:old_nseg]
        # cycles that ended exactly at the old horizon belong to the next cell
        HIST[seg[n0]] += self.HIST[old_nseg]
        self.SNAP, self.HIST = SNAP, HIST
        self.EDGES = np.ascontiguousarray(edges, dtype=float)
        self.SEG = np.ascontiguousarray(seg, dtype=np.int64)

    def _umin(self) -> int:
        # uniforms one event may need at most: every job may move once in an
        # unblocking cascade, each move drawing a route, two service times
        # (Erlang: k uniforms each) and a think or inter-arrival time
        return (self.JI.shape[0] + self.f.C + 8) * (2 * self.kmax + 6)

    def _refill(self):
        umin = self._umin()
        rest = self.U[self.SI[E.I_UPOS]:]
        fresh = self.rng.random(max(1 << 18, 2 * umin))
        self.U = np.concatenate([rest, fresh])
        self.SI[E.I_UPOS] = 0

    def advance(self, t_stop: float, max_events: float) -> int:
        """Run to ``t_stop`` (or ``max_events``) in calls of at most
        CHUNK_EVENTS events, so that a KeyboardInterrupt (raised by Python
        between calls) stops a long run within a fraction of a second; the
        loop is resumable, so the chunking changes no number."""
        f = self.f
        while True:
            M = (f.STI, f.STF, f.RM, f.EMP, f.S, f.CLI, f.CLF, f.RN, f.RD, f.RC, f.PLI,
                 f.ACQ, f.REL)
            J = (self.JI, self.JF, self.HE, self.HT, self.POS, self.SS, self.NC, self.BS,
                 self.SFL, self.PS, self.PFL, self.SI, self.SX, self.UB)
            T = (self.ACC, self.SNAP, self.EDGES, self.HIST, self.SEG)
            args = (M, J, T, self.U, self._umin(), float(t_stop), 0.0, OPEN_LIMIT)
            loop, machine = ENGINE.pick(args)
            chunk = CHUNK_EVENTS if machine else TWIN_CHUNK_EVENTS
            chunk_end = min(float(max_events), self.ACC[self.lay["events"]] + chunk)
            st = loop(*args[:6], chunk_end, OPEN_LIMIT)
            if st == E.MAX_EVENTS and chunk_end < max_events:
                continue
            if st == E.NEED_ROOM:
                self._grow()
                continue
            if st == E.NEED_RANDOM:
                self._refill()
                continue
            return st

    @property
    def events(self) -> int:
        return int(self.ACC[self.lay["events"]])

    @property
    def cells_done(self) -> int:
        return int(self.SI[E.I_CELL])


# ---------------------------------------------------------------------------
# summaries of one observation window
# ---------------------------------------------------------------------------

def _window(run: _Run, a: int, b: int):
    """Figures over cells a..b-1 (cell i ends at EDGES[i]): a dict of arrays."""
    f, lay = run.f, run.lay
    C, K, P = f.C, f.K, f.P
    CK = C * K
    top = run.SNAP[b - 1]
    bot = run.SNAP[a - 1] if a > 0 else np.zeros_like(top)
    t0 = run.EDGES[a - 1] if a > 0 else 0.0
    T = run.EDGES[b - 1] - t0
    d = top - bot
    with np.errstate(invalid="ignore", divide="ignore"):
        area_n = d[lay["area_n"]: lay["area_n"] + CK].reshape(C, K)
        area_u = d[lay["area_u"]: lay["area_u"] + CK].reshape(C, K)
        comp = d[lay["comp"]: lay["comp"] + CK].reshape(C, K)
        soj = d[lay["soj"]: lay["soj"] + CK].reshape(C, K)
        cyc = d[lay["cyc"]: lay["cyc"] + C]
        cyct = d[lay["cyct"]: lay["cyct"] + C]
        out = {
            "X_pair": comp / T,
            "Q_pair": area_n / T,
            "U_pair": area_u / (T * f.ucap[None, :]),
            "R_pair": np.where(comp > 0, soj / np.where(comp > 0, comp, 1), np.nan),
            "X_st": comp.sum(0) / T,
            "Q_st": area_n.sum(0) / T,
            "U_st": area_u.sum(0) / (T * f.ucap),
            "R_st": np.where(comp.sum(0) > 0, soj.sum(0) / np.where(comp.sum(0) > 0,
                                                                   comp.sum(0), 1), np.nan),
            "X_cl": cyc / T,
            "R_cl": np.where(cyc > 0, cyct / np.where(cyc > 0, cyc, 1), np.nan),
            "Q_cl": area_n.sum(1) / T,
            "lost": d[lay["lost"]: lay["lost"] + C] / T,
            "pool_U": d[lay["pool_busy"]: lay["pool_busy"] + P] / (T * np.maximum(f.PLI[:, 0], 1))
            if P else np.zeros(0),
            "pool_Q": d[lay["pool_q"]: lay["pool_q"] + P] / T if P else np.zeros(0),
        }
    # a station never visited by a class has R = 0 (as in the analytic results)
    out["R_pair"] = np.where(f.visits > 0, out["R_pair"], 0.0)
    return out


def _percentiles(run: _Run, segs) -> np.ndarray:
    """(C, 3) response-time percentiles from the histogram segments ``segs``."""
    f = run.f
    h = run.HIST[list(segs)].sum(axis=0)
    out = np.full((f.C, len(PERCENTILES)), np.nan)
    for c in range(f.C):
        for i, q in enumerate(PERCENTILES):
            out[c, i] = histogram_percentile(h[c], f.hist_lo[c], f.hist_step, q / 100.0)
    return out


def _cell_series(run: _Run, n: int) -> np.ndarray:
    """(n, stations + 2 classes) averages per cell: the queue length of
    every station, the throughput of every class and its mean cycle time
    (NaN in a cell without a cycle; the first
    cycles of a closed network are biased short or long, so the transient
    of R counts in the choice of the warm-up)."""
    f, lay = run.f, run.lay
    C, K = f.C, f.K
    snap = run.SNAP[:n]
    prev = np.vstack([np.zeros((1, snap.shape[1])), snap[:-1]])
    width = np.diff(np.concatenate([[0.0], run.EDGES[:n]]))
    cells = (snap - prev) / width[:, None]
    q = cells[:, lay["area_n"]: lay["area_n"] + C * K].reshape(n, C, K).sum(1)
    x = cells[:, lay["cyc"]: lay["cyc"] + C]
    ncyc = (snap - prev)[:, lay["cyc"]: lay["cyc"] + C]
    tcyc = (snap - prev)[:, lay["cyct"]: lay["cyct"] + C]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(ncyc > 0, tcyc / np.where(ncyc > 0, ncyc, 1.0), np.nan)
    return np.hstack([q, x, r])


def _truncation(series: np.ndarray) -> int:
    """MSER-5 truncation (in cells): the largest over the columns (a
    column with a NaN, a cell without a cycle, is skipped)."""
    d = 0
    for col in series.T:
        if np.all(np.isfinite(col)) and np.ptp(col) > 0:
            d = max(d, mser5(col))
    return d


# ---------------------------------------------------------------------------
# self-checks: the simulator must never be confidently wrong
# ---------------------------------------------------------------------------

@dataclass
class _Checks:
    """What the self-checks need, collected during the runs."""

    events: list = field(default_factory=list)  # events of each replication (or the run)
    trend: list = field(default_factory=list)  # per replication: (last, first) quarter


def _trend_series(w) -> np.ndarray:
    """The figures whose drift betrays a transient: the number present
    (all stations), then X and R of every class."""
    return np.concatenate([[w["Q_st"].sum()], w["X_cl"], w["R_cl"]])


def _quarters(run: _Run, a: int | None):
    """(last, first) quarter of the observation window of one replication,
    each as :func:`_trend_series`."""
    n = run.cells_done
    a = min(a or 0, n - 1)
    L = (n - a) // 4
    if L < 1:
        return None
    return (_trend_series(_window(run, n - L, n)), _trend_series(_window(run, a, a + L)))


def _throughput_bound(net: Network, ci: int) -> float:
    """Asymptotic upper bound of the throughput of class ci (Lazowska et
    al. 1984, sec. 5.2): lambda for an open class; for a closed one
    min(N / (D + Z), min_k c_k / D_k), c_k the servers (the largest rate
    multiplier of a load-dependent station); delays bound nothing."""
    cls = net.classes[ci]
    if isinstance(cls, Open):
        return float(cls.arrival_rate)
    D = net.demands.astype(float)[ci]
    tot = float(D.sum()) + float(cls.think_time)
    x = cls.population / tot if tot > 0 else math.inf
    for k, s in enumerate(net.stations):
        if D[k] > 0 and s.kind != "delay":
            cap = float(s.max_rate_multiplier) if s.kind == "ld" else float(s.servers)
            x = min(x, cap / D[k])
    return x


def _diagnose(net: Network, flat: Flat, obs, chk: _Checks, horizon: float, warm_mean: float,
              method: str):
    """Problems found in a finished run, as (kind, message): a transient
    not removed, too few events, cycles or completions, a number present
    that grows, a law broken (throughput above its asymptotic bound,
    unequal throughputs per visit).  Laws are tested with intervals at
    CHECK_LEVEL, so a warning means the run, not chance, is at fault."""
    out = []
    hint = "pass a longer horizon="
    drift = _drift(net, obs, chk, method)
    if drift is not None:
        out.append(drift)
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


# ---------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------

def _check_args(network, seed, horizon, replications, warmup, precision, level, method,
                max_events):
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
                or max_events < 1:
            raise InvalidValueError(f"max_events must be a number >= 1, got {max_events!r}")
    return level


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
    D = net.demands.astype(float)
    rate = 0.0
    t_min = 0.0
    why = ""
    for ci, cls in enumerate(net.classes):
        visits = float(flat.visits[ci].sum())
        if isinstance(cls, Open):
            x = float(cls.arrival_rate)
        else:
            N = cls.population
            if N == 0:
                continue
            tot = float(D[ci].sum()) + float(cls.think_time)
            x = N / tot if tot > 0 else math.inf
            for k, s in enumerate(net.stations):
                if D[ci, k] > 0 and s.kind != "delay":
                    cap = float(s.max_rate_multiplier) if s.kind == "ld" else float(s.servers)
                    x = min(x, cap / D[ci, k])
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
    horizon = max(DEFAULT_EVENTS / rate, t_min)
    if horizon * rate > MAX_DEFAULT_EVENTS:
        need = horizon
        horizon = MAX_DEFAULT_EVENTS / rate
        return horizon, (
            f"the default horizon {horizon:.6g} (about {MAX_DEFAULT_EVENTS:.3g} events per "
            f"replication) is shorter than the {need:.6g} the model needs for {why}; the "
            "figures may be biased: pass a longer horizon= to be sure")
    return horizon, None


def _relaxation_time(net: Network, flat: Flat):
    """(tau, description): the longest relaxation time of an open station,
    ``tau = S / (c (1 - sqrt(rho))^2)`` (M/M/c: Whitt 1989, eq. 9; Morse
    1955), S the mean service time of the open visits, c the limiting
    rate, rho the open load at that rate.  (0, "") without open load.
    Stations with a finite capacity are left out (a bounded queue relaxes
    fast, and rho >= 1 there, or behind it, is shed as loss or blocking:
    the run's own growth check watches those)."""
    best, who = 0.0, ""
    for k, s in enumerate(net.stations):
        lam_s = sum(float(c.arrival_rate) * flat.visits[ci, k] * flat.S[ci, k]
                    for ci, c in enumerate(net.classes) if isinstance(c, Open))
        cap = limiting_capacity(s)
        if lam_s <= 0 or not math.isfinite(cap) or s.capacity is not None or lam_s >= cap:
            continue
        lam = sum(float(c.arrival_rate) * flat.visits[ci, k]
                  for ci, c in enumerate(net.classes) if isinstance(c, Open))
        rho = lam_s / cap
        tau = (lam_s / lam) / (cap * (1.0 - math.sqrt(rho)) ** 2)
        if tau > best:
            best, who = tau, f"station {s.name!r} (open load rho = {rho:.6g})"
    return best, who


def _edges(horizon: float, warm: float | None, ncell: int):
    """Cell edges and the segment of each cell (+1 for after the end).

    With a fixed warm-up time the first cell is [0, warm] and the others
    split the rest; otherwise the cells are equal."""
    if warm:
        rest = np.linspace(warm, horizon, ncell + 1)
        edges = rest  # cell 0 = [0, warm], cells 1.. = equal pieces
        seg = np.concatenate([[0], 1 + np.arange(ncell) // CELLS_PER_SEG])
        nseg = 1 + (ncell + CELLS_PER_SEG - 1) // CELLS_PER_SEG
    else:
        edges = horizon * np.arange(1, ncell + 1) / ncell
        seg = np.arange(ncell) // CELLS_PER_SEG
        nseg = (ncell + CELLS_PER_SEG - 1) // CELLS_PER_SEG
    seg = np.concatenate([seg, [nseg]])
    return edges, seg, nseg


def _seg_first_cell(seg: np.ndarray) -> dict[int, int]:
    first: dict[int, int] = {}
    for i, s in enumerate(seg[:-1]):
        first.setdefault(int(s), i)
    return first


def _raise_status(status, run: _Run, net: Network, where: str):
    if status == E.DEADLOCK:
        full = [net.stations[k].name for k in range(run.f.K)
                if run.SS[k, E.K_N] >= run.f.STI[k, 3]]
        raise UnsupportedModelError(
            f"deadlock at t = {run.SX[0]:.6g} ({where}): every job is blocked or waiting for a "
            f"token; full stations: {', '.join(map(repr, full)) or 'none'}"
        )
    if status == E.TOO_MANY:
        k = int(np.argmax(run.SS[:, E.K_N]))
        raise UnstableError(
            f"station {net.stations[k].name!r}: more than {OPEN_LIMIT} open jobs present at "
            f"t = {run.SX[0]:.6g} ({where}); the open load has no steady state",
            station=net.stations[k].name,
        )


# ---------------------------------------------------------------------------
# the public function
# ---------------------------------------------------------------------------

def simulate(network: Network, *, seed, horizon: float | None = None, replications: int = 10,
             warmup="mser5", precision: float | None = None, level: float = 0.95,
             method: str = "replications", max_events: float | None = None,
             progress: bool | None = None) -> SimResult:
    """Simulate ``network`` and estimate its figures with confidence intervals.

    Parameters
    ----------
    network : Network
        The same model the analytic solvers take.
    seed : int or numpy.random.SeedSequence
        Required.  Replication i draws from
        ``Generator(PCG64(SeedSequence(seed).spawn(...)[i]))``: the same seed
        gives the same numbers bit for bit.
    horizon : float, optional
        Simulated time per replication (of the single run for batch
        means), warm-up included.  Default: the longest of about 200,000
        events, 20 cycles of every closed job (a cycle lasts at least
        N D_max: a large population needs a long run) and 50 relaxation
        times of every open station, from the asymptotic bounds; capped
        at 2e7 events per replication (with a warning), and made 4x longer
        (twice at most) when the run shows a transient left in its data or
        too few cycles per job.
    replications : int
        Independent replications (>= 2), or for ``batch_means`` the
        horizon is ``replications x`` the default horizon when not given.
    warmup : "mser5", float or None
        ``"mser5"``: delete the initial transient chosen by MSER-5 on the
        cell series (White 1997); a number: delete that much simulated
        time; None or 0: keep everything.
    precision : float, optional
        Relative half-width wanted for every reported mean (class X and R;
        station X, U, Q, R with a non-zero mean).  Replications are added
        (up to 20x the initial number, at least 200 in all), or the single
        run is extended (up to 64x), until reached; a
        :class:`~qmodels.errors.ConvergenceWarning` if the cap is hit.
    level : float
        Confidence level of the intervals (default 0.95).
    method : "replications" or "batch_means"
        Independent replications (Student-t over replication means) or one
        long run cut into 20 batches after the warm-up (Law 2015, sec.
        9.5.3).
    max_events : float, optional
        Stop a run after this many events (its statistics then end at the
        last full cell).
    progress : bool, optional
        :mod:`tqdm.auto` progress bar; default: on in a terminal or a
        Jupyter kernel, shown only for runs longer than 2 s; never when the
        environment variable ``CI`` is set.

    Returns
    -------
    SimResult

    Raises
    ------
    InvalidValueError
        Bad arguments (horizon <= 0, replications < 2, level outside (0, 1),
        a negative warm-up, ...) or a distribution parameter out of range.
    PopulationError
        Nothing to simulate (zero populations and no open arrivals).
    UnsupportedModelError
        A model the simulator cannot honour (see :func:`qmodels.sim.flatten.flatten`),
        or a deadlock of blocked jobs during the run.
    UnstableError
        Open load with no steady state (a load-dependent station counts at
        its limiting rate, the last multiplier).
    KeyboardInterrupt
        Ctrl-C: the compiled loop runs in chunks of about 2e6 events and
        Python sees the interrupt between them (within a fraction of a
        second); nothing is returned.

    Warns
    -----
    SimulationWarning
        The figures may not describe the steady state (each message is also
        in ``notes``): a horizon shorter than the model needs (10
        relaxation times of an open station; the default horizon's cap); a
        figure that still drifts between the first and the last quarter of
        the observation window (warm-up deletion failed) or a number
        present that keeps growing (instability); fewer than 100 events or
        no completed cycle; fewer than 5 cycles per closed job; a class
        throughput above its asymptotic bound or a station throughput per
        visit away from the class throughput (laws checked with 99.9 %
        intervals).

    Notes
    -----
    Event-scheduling simulation with a binary-heap event list (Law 2015,
    ch. 1-2).  Stations: delay (infinite server); FCFS with c servers;
    processor sharing (``Queue(discipline="ps")``: each of n jobs is served
    at rate min(n, c)/n); load-dependent (processor sharing at total rate
    a(n)/S); finite ``capacity`` with blocking after service (a job whose
    next station is full keeps its server, FIFO among those blocked: at a
    processor-sharing station with c servers and b blocked jobs the active
    jobs share the other c - b servers, as in :mod:`qmodels.analytic.ctmc`; at a
    load-dependent station a blocked job's part a(n)/n goes unused); open arrivals
    that find the first station full are lost.  Token pools: a job takes
    one token before entering ``acquire`` (FIFO queue at the pool, holding
    nothing else), and gives it back when it *leaves* ``release`` (after any
    blocking there) or at the end of its route.  Think time Z: exponential,
    outside the stations, between cycles.

    Figures: class X = cycles (closed) or departures (open) per second;
    class R = time per cycle excluding think time (for open: per job,
    lost arrivals excluded); station X = completions per second; station
    R = time per visit (waiting, service and blocking); Q = time-average
    number present (waiting, in service and blocked; a job waiting for a
    token is at no station); U = busy fraction of one server (time-average
    servers held / c, blocked jobs holding theirs; delay: mean number
    present; processor sharing: E[min(n, c)] / c; load-dependent:
    1 - P(empty)).  Percentiles p50/p95/p99 of the class response time
    come from a log-scale histogram (4096 bins over 10 decades: relative
    resolution 0.6 %); their intervals treat each replication's (or
    batch's) percentile as one observation.

    References
    ----------
    Law, *Simulation Modeling and Analysis*, 5th ed. (2015): ch. 1-2 (event
    scheduling), ch. 8 (variates), ch. 9 (output analysis).
    White, "An effective truncation heuristic for bias reduction in
    simulation output", *Simulation* 69(6) (1997).

    Examples
    --------
    >>> import qmodels as qm
    >>> from qmodels.sim import simulate
    >>> net = qm.Network([qm.Queue("cpu", 0.5)],
    ...                  [qm.Open("jobs", arrival_rate=1.0, routing={
    ...                      "source": {"cpu": 1.0}, "cpu": {"sink": 1.0}})])
    >>> r = simulate(net, seed=1, horizon=2000.0, replications=5)
    >>> r.U["cpu"].contains(0.5)
    True
    """
    started = time.perf_counter()
    # no compiled signature yet: this call pays numba's compile or cache load
    cold_start = not getattr(E.run, "signatures", ())
    level = _check_args(network, seed, horizon, replications, warmup, precision, level,
                        method, max_events)
    flat = flatten(network)
    default_horizon = horizon is None
    capped = None
    if default_horizon:
        horizon, capped = _default_horizon(network, flat)
        if method == "batch_means":
            horizon *= replications if isinstance(replications, int) and replications > 0 else 10
    horizon = float(horizon)
    warm = None if (warmup is None or isinstance(warmup, str)) else float(warmup)
    if warm is not None and warm >= horizon:
        raise InvalidValueError(
            f"warmup {warm!r} must be shorter than the horizon {horizon!r}"
        )
    use_mser = isinstance(warmup, str)
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
    cap_events = math.inf if max_events is None else float(max_events)

    obs, pct, events, warm_mean, notes, horizon = _run_checked(
        network, flat, ss, horizon, replications, warm, use_mser, precision, level, cap_events,
        progress, method, default_horizon, capped)
    if cold_start:
        notes = tuple(notes) + (
            "wall time includes the event loop's first-call set-up (numba's cache load, or "
            "running as Python while its machine code compiles in the background; the numbers "
            "are the same either way); a later call in this process shows the steady "
            "events/s",)
    res = _assemble(network, obs, pct, level, seed, horizon, warm_mean, events,
                    time.perf_counter() - started, method, notes)
    return res


def _run_checked(network, flat, ss, horizon, replications, warm, use_mser, precision, level,
                 cap_events, progress, method, default_horizon, capped):
    """Run, self-check (:func:`_diagnose`), make a default horizon 4x
    longer while the run is too short (EXTENSIONS times at most), and warn
    about what is left.  Returns the run's observations, notes and the
    horizon used."""
    extended = []
    for attempt in range(EXTENSIONS + 1):
        chk = _Checks()
        if method == "replications":
            obs, pct, events, warm_mean, notes = _replications(
                network, flat, ss, horizon, replications, warm, use_mser, precision, level,
                cap_events, progress, chk)
        else:
            obs, pct, events, warm_mean, notes = _batch_means(
                network, flat, ss, horizon, warm, use_mser, precision, level, cap_events,
                progress, chk)
        problems = _diagnose(network, flat, obs, chk, horizon, warm_mean, method)
        # a default horizon too short for the transient or for the cycles of
        # each job: run again, 4x longer (the same seed, so the same streams)
        if not (default_horizon and capped is None and attempt < EXTENSIONS and any(
                kind in ("warmup", "cycles") for kind, _ in problems)):
            break
        extended.append(f"default horizon {horizon:.6g} made 4x longer: "
                        + next(m for k, m in problems if k in ("warmup", "cycles")))
        horizon *= 4.0
    if capped:
        problems.insert(0, ("horizon", capped))
    elif not default_horizon:
        tau, who = _relaxation_time(network, flat)
        if horizon < MIN_RELAXATIONS * tau:
            problems.insert(0, ("horizon", (
                f"the horizon {horizon:.6g} is shorter than {MIN_RELAXATIONS} relaxation times "
                f"({MIN_RELAXATIONS * tau:.6g}) of {who}: the queue there has no time to "
                "reach its steady state and the figures are likely biased low; pass a longer "
                "horizon= (or leave it out)")))
    for _, msg in problems:
        warnings.warn(msg, SimulationWarning, stacklevel=3)
    notes = tuple(notes) + tuple(extended) + tuple(msg for _, msg in problems)
    return obs, pct, events, warm_mean, notes, horizon


def _run_one(network, flat, child, horizon, warm, use_mser, cap_events, ncell=CELLS_REP):
    rng = np.random.Generator(np.random.PCG64(child))
    edges, seg, nseg = _edges(horizon, warm, ncell)
    run = _Run(flat, rng, edges, seg, nseg)
    status = _advance_all(run, network, edges, cap_events, "replication")
    return run, status, seg


def _advance_all(run, network, edges, cap_events, where, start_cell=0):
    """Run cell by cell in chunks of a histogram segment (the chunking
    never changes a number: the loop is resumable)."""
    n = len(edges)
    i = start_cell
    while i < n:
        j = min(i + CELLS_PER_SEG, n)
        st = run.advance(edges[j - 1], cap_events)
        if st == E.MAX_EVENTS:
            return st
        _raise_status(st, run, network, where)
        i = j
    return E.OK


def _observations_of(run, seg, a):
    """(window figures, percentiles, truncation time) of one replication
    whose first ``a`` cells are its warm-up."""
    n = run.cells_done
    if n < 2:
        raise InvalidValueError(
            "max_events stopped a replication before two cells of its horizon: raise "
            "max_events or shorten the horizon"
        )
    a = min(a, n - 1)
    w = _window(run, a, n)
    first = _seg_first_cell(seg)
    last_seg = int(seg[n - 1])
    segs = [s for s, c0 in first.items() if c0 >= a and s <= last_seg]
    if not segs:
        segs = [last_seg]
    p = _percentiles(run, segs)
    t_trunc = run.EDGES[a - 1] if a > 0 else 0.0
    return w, p, t_trunc


def _relative_ok(obs, level, precision):
    """True if every reported mean has half-width / |mean| <= precision."""
    for key in ("X_cl", "R_cl", "X_st", "U_st", "Q_st", "R_st"):
        arr = np.array([o[key] for o in obs])
        for col in arr.T:
            e = estimate(col, level)
            if e.n == 0 or e.mean == 0 or math.isnan(e.mean):
                continue
            if not e.relative_half_width <= precision:
                return False
    return True


#: replications whose averaged cell series choose the MSER-5 warm-up
PILOT = 20


def _replications(network, flat, ss, horizon, n0, warm, use_mser, precision, level,
                  cap_events, progress, chk):
    """Independent replications.  With MSER-5 the warm-up is chosen once,
    on the cell series averaged over the first ``min(n0, PILOT)``
    replications (Welch's procedure, Law 2015, sec. 9.5.1, with MSER-5 in
    place of the eye), and the same number of cells is deleted from every
    replication: a truncation point chosen per replication from its own
    data would bias its mean.  ``chk`` (a :class:`_Checks`) collects what
    the self-checks need."""
    obs, pct, events, trunc = [], [], 0, []
    cap = max(20 * n0, 200) if precision is not None else n0
    bar = progress_bar(progress, n0, "simulating", unit="run")
    target = n0
    notes = []
    a = 1 if warm else (None if use_mser else 0)
    pilot = []

    def take(run, seg):
        w, p, t = _observations_of(run, seg, a)
        obs.append(w)
        pct.append(p)
        trunc.append(t)
        chk.events.append(run.events)
        chk.trend.append(_quarters(run, a))

    try:
        while True:
            children = ss.spawn(target - len(obs) - len(pilot))
            for child in children:
                run, status, seg = _run_one(network, flat, child, horizon, warm, use_mser,
                                            cap_events)
                events += run.events
                if status == E.MAX_EVENTS:
                    notes.append(f"max_events stopped a replication at t = {run.SX[0]:.6g}")
                if a is None:
                    pilot.append((run, seg))
                    if len(pilot) == min(n0, PILOT):
                        n = min(r.cells_done for r, _ in pilot)
                        if n < 2:
                            _observations_of(pilot[0][0], pilot[0][1], 0)  # raises
                        mean = np.mean([_cell_series(r, n) for r, _ in pilot], axis=0)
                        a = _truncation(mean)
                        for r, sg in pilot:
                            take(r, sg)
                        pilot = []
                else:
                    take(run, seg)
                if bar is not None:
                    bar.update(1)
            if precision is None or _relative_ok(obs, level, precision):
                break
            if len(obs) >= cap:
                warnings.warn(
                    f"precision {precision} not reached after {len(obs)} replications (the cap)",
                    ConvergenceWarning, stacklevel=3)
                notes.append(f"precision {precision} not reached after {len(obs)} replications")
                break
            target = min(cap, max(len(obs) + 2, int(len(obs) * 1.5)))
            if bar is not None:
                bar.total = target
                bar.refresh()
    finally:
        if bar is not None:
            bar.close()
    return obs, pct, events, float(np.mean(trunc)), tuple(dict.fromkeys(notes))


def _batch_means(network, flat, ss, horizon, warm, use_mser, precision, level, cap_events,
                 progress, chk):
    child = ss.spawn(1)[0]
    rng = np.random.Generator(np.random.PCG64(child))
    ncell = CELLS_BATCH
    edges, seg, nseg = _edges(horizon, warm, ncell)
    run = _Run(flat, rng, edges, seg, nseg)
    notes = []
    bar = progress_bar(progress, len(edges), "simulating", unit="cell")
    done = 0
    extensions = 0
    try:
        while True:
            st = _advance_all(run, network, edges, cap_events, "batch-means run", done)
            if bar is not None:
                bar.update(len(edges) - done)
            done = len(edges)
            if st == E.MAX_EVENTS:
                notes.append(f"max_events stopped the run at t = {run.SX[0]:.6g}")
            obs, pct, t_trunc = _batches(run, seg, warm, use_mser, chk)
            if precision is None or st == E.MAX_EVENTS or _relative_ok(obs, level, precision):
                break
            if extensions >= 6:
                warnings.warn(
                    f"precision {precision} not reached after extending the run 64x (the cap)",
                    ConvergenceWarning, stacklevel=3)
                notes.append(f"precision {precision} not reached after extending the run 64x")
                break
            # double the run: same cell width, twice the cells
            extensions += 1
            w0 = warm or 0.0
            h_new = w0 + 2.0 * (float(edges[-1]) - w0)
            ncell = 2 * ncell
            new_edges, seg, nseg = _edges(h_new, warm, ncell)
            new_edges[: len(edges)] = edges
            edges = new_edges
            run.extend(edges, seg, nseg)
            if bar is not None:
                bar.total = len(edges)
                bar.refresh()
    finally:
        if bar is not None:
            bar.close()
    chk.events.append(run.events)
    return obs, pct, run.events, t_trunc, tuple(notes)


def _batches(run, seg, warm, use_mser, chk=None):
    """Cut the run after its warm-up into BATCHES batches of whole segments."""
    n = run.cells_done
    if warm:
        a = 1
    elif use_mser:
        a = min(_truncation(_cell_series(run, n)), n - 1)
    else:
        a = 0
    first = _seg_first_cell(seg)
    last_seg = int(seg[n - 1])
    # segments complete within the n cells and starting at or after cell a
    segs = sorted(s for s, c0 in first.items() if c0 >= a and s <= last_seg
                  and (s + 1 not in first or first[s + 1] <= n))
    if len(segs) < 2:
        raise InvalidValueError(
            "the batch-means run is too short after its warm-up to form batches: "
            "raise the horizon (or max_events)"
        )
    B = min(BATCHES, len(segs))
    per = len(segs) // B
    segs = segs[len(segs) - B * per:]
    obs, pct = [], []
    for b in range(B):
        group = segs[b * per:(b + 1) * per]
        c0 = first[group[0]]
        c1 = first[group[-1] + 1] if group[-1] + 1 in first else n
        obs.append(_window(run, c0, c1))
        pct.append(_percentiles(run, group))
    c_start = first[segs[0]]
    t_trunc = run.EDGES[c_start - 1] if c_start > 0 else 0.0
    return obs, pct, float(t_trunc)


# ---------------------------------------------------------------------------
# assembling the result
# ---------------------------------------------------------------------------

def _assemble(net, obs, pct, level, seed, horizon, warm_mean, events, wall, method, notes):
    sn, cn = net.station_names, net.class_names

    def est(key, *idx):
        return estimate([o[key][idx] for o in obs], level)

    figs = {}
    # R of a class at a station it never visits is not observed: NaN (the
    # analytic solvers report the arrival-theorem value there)
    V = np.asarray(net.visits, dtype=float)
    never = [(s, c) for i, c in enumerate(cn) for k, s in enumerate(sn) if V[i, k] == 0]
    for metric, m in (("throughput", "X"), ("response_time", "R"), ("queue_length", "Q"),
                      ("utilization", "U")):
        station = {s: est(f"{m}_st", k) for k, s in enumerate(sn)}
        pair = {(s, c): (estimate([math.nan], level) if m == "R" and (s, c) in never
                         else est(f"{m}_pair", i, k))
                for i, c in enumerate(cn) for k, s in enumerate(sn)}
        klass = {c: est(f"{m}_cl", i) for i, c in enumerate(cn)} if m != "U" else {}
        figs[metric] = Figures(metric, station, klass, pair)
    parr = np.array(pct)  # (n, C, 3)
    percentiles = {
        c: {q: estimate(parr[:, i, j], level) for j, q in enumerate(PERCENTILES)}
        for i, c in enumerate(cn)
    }
    pools = {p.name: {"U": est("pool_U", i), "Q": est("pool_Q", i)}
             for i, p in enumerate(net.pools)}
    lost = {c.name: est("lost", i) for i, c in enumerate(net.classes) if isinstance(c, Open)}
    closed_note = []
    if never:
        shown = ", ".join(f"{c!r} at {s!r}" for s, c in never[:4]) + (
            f" and {len(never) - 4} more" if len(never) > 4 else "")
        closed_note.append(
            f"R of a class at a station it never visits is NaN ({shown}): the simulator cannot "
            "observe it; the analytic solvers report the arrival-theorem value "
            "S (1 + Q_k(N - e_c)) there")
    if any(isinstance(c, Closed) and c.routing is None for c in net.classes) or any(
            isinstance(c, Open) and c.routing is None for c in net.classes):
        closed_note.append("classes given by visits or demands are routed at random with the "
                           "same visit ratios")
    return SimResult(
        network=net, seed=seed if not isinstance(seed, np.integer) else int(seed), level=level,
        n=len(obs), horizon=horizon, warmup=warm_mean, events=int(events), wall_time=wall,
        output_analysis=method, figures=figs, percentiles=percentiles, pools=pools, lost=lost,
        notes=tuple(notes) + tuple(closed_note),
    )


__all__ += ["Estimate"]
