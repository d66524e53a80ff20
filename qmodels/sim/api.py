"""``simulate``: the Python side of the simulator.

The Python layer flattens the model (:mod:`qmodels.sim.flatten`), drives the
compiled, resumable event loop (:mod:`qmodels.sim.run` over
:mod:`qmodels.sim.engine`) in independent replications or one batch-means
run, cuts its cumulative statistics into observations
(:mod:`qmodels.sim.windows`), self-checks them (:mod:`qmodels.sim.checks`)
and summarises them (:mod:`qmodels.sim.stats`) in a
:class:`~qmodels.sim.result.SimResult`.
"""

from __future__ import annotations

import math
import time
import warnings
import weakref

import numpy as np

from .._progress import bar as progress_bar
from ..errors import ConvergenceWarning, InvalidValueError, RoutingWarning, SimulationWarning
from ..model.caching import CacheStation
from ..model.lowered import random_routing_warning
from ..model.network import Network, Open
from ..results import Figures
from . import engine as E
from .checks import (
    _check_args,
    _Checks,
    _default_horizon,
    _diagnose,
    _horizon_too_short,
)
from .flatten import flatten
from .guards import check_sim_size
from .parallel import check_workers, run_in_order
from .result import SimResult, Warned
from .run import _raise_status, _Run
from .stats import Estimate, estimate, estimates
from .tails import tail_widening, widen_figures
from .windows import (
    PERCENTILES,
    _batches,
    _cell_series,
    _edges,
    _relative_ok,
    _replication_figures,
    _truncation,
    need_two_cells,
)

__all__ = ["simulate", "Estimate"]

#: cells of simulated time per replication (MSER-5 works on them) and per
#: batch-means run
CELLS_REP = 200
CELLS_BATCH = 1000
#: times a default horizon is made 4x longer when the run is too short
EXTENSIONS = 2
#: replications whose averaged cell series choose the MSER-5 warm-up
PILOT = 20
#: networks whose flattened arrays are kept (by identity) for the next call
FLAT_CACHE_SIZE = 8
_FLAT_CACHE: dict = {}


def _flat_of(network: Network):
    """:func:`~qmodels.sim.flatten.flatten` of ``network``, kept for the
    next call on the same object: the arrays depend on the network alone
    (not on the seed, horizon or method), a Network is immutable, and
    neither the event loop nor the analysis writes them.  Kept by identity
    with a weak reference (an entry goes when its network does), at most
    FLAT_CACHE_SIZE networks."""
    key = id(network)
    hit = _FLAT_CACHE.get(key)
    if hit is not None and hit[0]() is network:
        return hit[1]
    flat = flatten(network)
    while len(_FLAT_CACHE) >= FLAT_CACHE_SIZE:
        _FLAT_CACHE.pop(next(iter(_FLAT_CACHE)))
    try:
        ref = weakref.ref(network, lambda _r, k=key: _FLAT_CACHE.pop(k, None))
    except TypeError:   # not weakly referenceable: not kept
        return flat
    _FLAT_CACHE[key] = (ref, flat)
    return flat


# ---------------------------------------------------------------------------
# the public function
# ---------------------------------------------------------------------------

def simulate(network: Network, *, seed, horizon: float | None = None, replications: int = 10,
             warmup="mser5", precision: float | None = None, level: float = 0.95,
             method: str = "replications", max_events: float | None = None,
             progress: bool | None = None, workers: int | None = None,
             client=None) -> SimResult:
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
    workers : int, optional
        Run the replications on this many processes of this machine
        (``os.cpu_count()`` for every core); default 1, this process.
        The result is the same to the bit whatever the number (each
        replication draws only from its own child of the seed); see
        :mod:`qmodels.sim.parallel`.  Batch means is one run: it ignores
        ``workers`` and says so in a note.
    client : distributed.Client, optional
        Run the replications as tasks on this dask cluster instead (the
        same numbers again).

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
        intervals); a heavy-tailed service or inter-arrival time drawn too
        rarely per observation (:mod:`qmodels.sim.tails`).  Where such a
        tail sets the waits (an FCFS or priority station, an open class's
        arrivals) the intervals are also widened by a bound on what the
        unseen part of the tail can add: the upper ends of response times
        and queue lengths (and, in closed classes, the lower ends of
        throughputs, utilizations and queue lengths), said in ``notes``;
        such an Estimate shows as ``mean [low, high]`` and keeps its
        Student-t interval in ``t_interval``.

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
    check_sim_size(network, replications if method == "replications" else 1)
    nproc = check_workers(workers, client)
    flat = _flat_of(network)
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

    routed = random_routing_warning(network, "the simulator")
    if routed is not None:  # said before the run, so that a long run is not wasted
        warnings.warn(routed, RoutingWarning, stacklevel=2)
    obs, pct, events, warm_mean, notes, horizon, widen = _run_checked(
        network, flat, ss, horizon, replications, warm, use_mser, precision, level, cap_events,
        progress, method, default_horizon, capped, (nproc, client))
    if routed is not None:
        notes = tuple(notes) + (Warned(routed),)
    if method == "batch_means" and (nproc > 1 or client is not None):
        notes = tuple(notes) + ("batch means is one long run: it ran in this process "
                                "(workers= and client= spread replications only)",)
    if cold_start:
        notes = tuple(notes) + (
            "wall time includes the event loop's first-call set-up (numba's cache load, or "
            "running as Python while its machine code compiles in the background; the numbers "
            "are the same either way); a later call in this process shows the steady "
            "events/s",)
    res = _assemble(network, obs, pct, level, seed, horizon, warm_mean, events,
                    time.perf_counter() - started, method, notes, flat, widen)
    return res



# ---------------------------------------------------------------------------
# the run drivers
# ---------------------------------------------------------------------------

def _run_checked(network, flat, ss, horizon, replications, warm, use_mser, precision, level,
                 cap_events, progress, method, default_horizon, capped, where=(1, None)):
    """Run, self-check (:func:`_diagnose`), make a default horizon 4x
    longer while the run is too short (EXTENSIONS times at most), and warn
    about what is left.  Returns the run's observations, notes, the
    horizon the run reached (past the one asked for when batch means
    extended it to reach a precision) and the widening its intervals need
    for heavy tails drawn too rarely (:func:`~qmodels.sim.tails.tail_widening`:
    a factor, 1 for none, and notes)."""
    extended = []
    for attempt in range(EXTENSIONS + 1):
        chk = _Checks()
        if method == "replications":
            obs, pct, events, warm_mean, notes = _replications(
                network, flat, ss, horizon, replications, warm, use_mser, precision, level,
                cap_events, progress, chk, where)
            used = horizon
        else:
            # batch means may run past the horizon to reach a precision
            obs, pct, events, warm_mean, notes, used = _batch_means(
                network, flat, ss, horizon, warm, use_mser, precision, level, cap_events,
                progress, chk)
        problems = _diagnose(network, flat, obs, chk, horizon, warm_mean, method)
        # a default horizon too short for the transient or for the cycles of
        # each job: run again, 4x longer (the same seed, so the same streams)
        if not (default_horizon and capped is None and attempt < EXTENSIONS and any(
                kind in ("warmup", "cycles", "tail") for kind, _ in problems)):
            break
        extended.append(f"default horizon {horizon:.6g} made 4x longer: "
                        + next(m for k, m in problems if k in ("warmup", "cycles", "tail")))
        horizon *= 4.0
    if capped:
        problems.insert(0, ("horizon", capped))
    elif not default_horizon:
        short = _horizon_too_short(network, flat, horizon)
        if short is not None:
            problems.insert(0, ("horizon", short))
    for _, msg in problems:
        warnings.warn(msg, SimulationWarning, stacklevel=3)
    notes = tuple(notes) + tuple(extended) + tuple(Warned(msg) for _, msg in problems)
    span = (horizon - warm_mean) / (len(obs) if method == "batch_means" else 1)
    widen = tail_widening(network, flat, obs, span, level)
    return obs, pct, events, warm_mean, notes, used, widen


def _run_one(network, flat, child, horizon, warm, use_mser, cap_events, ncell=CELLS_REP):
    rng = np.random.Generator(np.random.PCG64(child))
    edges, seg, nseg = _edges(horizon, warm, ncell)
    run = _Run(flat, rng, edges, seg, nseg)
    status = _advance_all(run, network, edges, cap_events, "replication")
    return run, status, seg


def _run_remote(network, flat, child, horizon, warm, use_mser, cap_events):
    """:func:`_run_one` in a worker process or on a dask worker: the run
    comes back without its buffer of uniforms (2 MB nothing after the run
    reads)."""
    run, status, seg = _run_one(network, flat, child, horizon, warm, use_mser, cap_events)
    run.U = run._ubuf = None
    return run, status, seg


def _advance_all(run, network, edges, cap_events, where, start_cell=0):
    """Run to the last cell edge in one :meth:`_Run.advance` (the loop
    snapshots every cell edge it passes; it is resumable, so running in
    one piece or in chunks never changes a number, and ``advance`` itself
    returns to Python every CHUNK_EVENTS events for Ctrl-C)."""
    if start_cell >= len(edges):
        return E.OK
    st = run.advance(edges[-1], cap_events)
    if st == E.MAX_EVENTS:
        return st
    _raise_status(st, run, network, where)
    return E.OK


def _replications(network, flat, ss, horizon, n0, warm, use_mser, precision, level,
                  cap_events, progress, chk, where=(1, None)):
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
        w, p, t, quarters = _replication_figures(run, seg, a)
        obs.append(w)
        pct.append(p)
        trunc.append(t)
        chk.events.append(run.events)
        chk.trend.append(quarters)

    try:
        while True:
            children = ss.spawn(target - len(obs) - len(pilot))
            nproc, client = where
            fn = _run_one if (nproc <= 1 and client is None) else _run_remote
            for run, status, seg in run_in_order(
                    fn, [(network, flat, child, horizon, warm, use_mser, cap_events)
                         for child in children], nproc, client):
                events += run.events
                if status == E.MAX_EVENTS:
                    notes.append(f"max_events stopped a replication at t = {run.SX[0]:.6g}")
                if a is None:
                    pilot.append((run, seg))
                    if len(pilot) == min(n0, PILOT):
                        n = min(r.cells_done for r, _ in pilot)
                        if n < 2:
                            need_two_cells(n)
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
                notes.append(Warned(f"precision {precision} not reached after {len(obs)} "
                                    "replications"))
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
            obs, pct, t_trunc = _batches(run, seg, warm, use_mser)
            if precision is None or st == E.MAX_EVENTS or _relative_ok(obs, level, precision):
                break
            if extensions >= 6:
                warnings.warn(
                    f"precision {precision} not reached after extending the run 64x (the cap)",
                    ConvergenceWarning, stacklevel=3)
                notes.append(Warned(f"precision {precision} not reached after extending the "
                                    "run 64x"))
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
    used = float(edges[-1])
    if extensions:
        notes.append(f"the run was extended {2 ** extensions}x, to t = {used:.6g}, to reach "
                     f"precision {precision}")
    return obs, pct, run.events, t_trunc, tuple(notes), used



# ---------------------------------------------------------------------------
# assembling the result
# ---------------------------------------------------------------------------

def _degenerate_note(figs) -> list:
    """A note naming the station figures whose interval has zero width
    although their mean is not 0: every observation was the same (a
    station busy, or holding the same jobs, through every replication),
    which says the run saw no variation, not that the value is exact."""
    flat = [f"{m} at {s!r} = {e.mean:g}" for m, f in (("U", figs["utilization"]),
                                                     ("Q", figs["queue_length"]))
            for s, e in f._station.items() if e.degenerate and e.mean != 0]
    if not flat:
        return []
    shown = ", ".join(flat[:4]) + (f" and {len(flat) - 4} more" if len(flat) > 4 else "")
    return [f"zero-width intervals ({shown}): the figure was the same in every observation "
            "(e.g. a station busy throughout each replication), so the interval shows no "
            "variation, not an exact value; the true value can differ slightly (a "
            "longer run or an analytic solver tells)"]


def _assemble(net, obs, pct, level, seed, horizon, warm_mean, events, wall, method, notes,
              flat=None, widen=(1.0, ())):
    """The SimResult: Student-t intervals over the observations
    (:func:`~qmodels.sim.stats.estimate`), widened where a heavy tail was
    drawn too rarely (``widen``, from :func:`~qmodels.sim.tails.tail_widening`;
    :func:`~qmodels.sim.tails.widen_figures`), with the notes."""
    sn, cn = net.station_names, net.class_names
    # every figure of every observation in one (figures, observations)
    # array and one pass of :func:`~qmodels.sim.stats.estimates` (bit for
    # bit :func:`~qmodels.sim.stats.estimate` of each row)
    n_obs = len(obs)
    blocks = [np.array([o[k] for o in obs], dtype=float).reshape(n_obs, -1) for k in obs[0]]
    starts = dict(zip(obs[0], np.cumsum([0] + [b.shape[1] for b in blocks[:-1]]).tolist()))
    width = {key: np.shape(v)[-1] if np.ndim(v) == 2 else 0 for key, v in obs[0].items()}
    all_est = estimates(np.hstack(blocks).T, level)

    def est(key, i, k=None):
        # (i,) of a vector, (i, k) of a (classes, stations) matrix
        return all_est[starts[key] + (i if k is None else i * width[key] + k)]

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
    factor, why = widen
    if flat is not None and factor > 1.0:
        figs, note = widen_figures(net, flat, figs, factor)
        notes = tuple(notes) + tuple(why) + (note,)
    parr = np.array(pct)  # (n, C, 3)
    switched = [c for ch in net.chains if len(ch) > 1 for c in ch]
    if switched:
        # a histogram holds the cycles that end in a class, not the time
        # spent as it: no per-class percentile of a class-switching chain
        parr = parr.copy()
        parr[:, [net.class_index(c) for c in switched], :] = np.nan
        notes = tuple(notes) + (
            "class switching: a class's X and R are per cycle of its chain (X the chain's "
            "cycles or departures per second, R the time a chain job spends as that class, "
            f"Q_c / X); no response-time percentiles for {', '.join(map(repr, switched))}",)
    nq = len(PERCENTILES)
    pe = estimates(np.moveaxis(parr, 0, -1).reshape(len(cn) * nq, -1), level)
    percentiles = {
        c: {q: pe[i * nq + j] for j, q in enumerate(PERCENTILES)}
        for i, c in enumerate(cn)
    }
    pools = {p.name: {"U": est("pool_U", i), "Q": est("pool_Q", i)}
             for i, p in enumerate(net.pools)}
    lost = {c.name: est("lost", i) for i, c in enumerate(net.classes) if isinstance(c, Open)}
    # the caches in station order, as flatten numbers them
    caches = [s.name for s in net.stations if isinstance(s, CacheStation)]
    hit_ratio = {name: est("hit", q) for q, name in enumerate(caches)}
    closed_note = []
    if never:
        shown = ", ".join(f"{c!r} at {s!r}" for s, c in never[:4]) + (
            f" and {len(never) - 4} more" if len(never) > 4 else "")
        closed_note.append(
            f"R of a class at a station it never visits is NaN ({shown}): the simulator cannot "
            "observe it; the analytic solvers report the arrival-theorem value "
            "S (1 + Q_k(N - e_c)) there")
    closed_note += _degenerate_note(figs)
    notes = tuple(notes) + tuple(closed_note)
    return SimResult(
        network=net, seed=seed if not isinstance(seed, np.integer) else int(seed), level=level,
        n=len(obs), horizon=horizon, warmup=warm_mean, events=int(events), wall_time=wall,
        output_analysis=method, figures=figs, percentiles=percentiles, pools=pools, lost=lost,
        hit_ratio=hit_ratio,
        notes=tuple(str(n) for n in notes if not isinstance(n, Warned)),
        warnings=tuple(str(n) for n in notes if isinstance(n, Warned)),
    )

