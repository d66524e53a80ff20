"""The compiled event loop of the simulator (numba, flat arrays).

Everything here works on plain numpy arrays built by
:mod:`qmodels.sim.flatten`; nothing here knows about ``Network`` objects.
The loop is *resumable*: all of its state lives in arrays owned by the
caller, so :func:`run` can be called again with a later ``t_stop`` (the
Python layer does so to show progress, to grow the job table of an open
network and to extend a batch-means run).  Splitting a run into calls does
not change a single number.

Model arrays (read only)
------------------------
``STI[k]`` (int): kind (0 delay, 1 FCFS with c servers, 2 sharing: PS or
load-dependent), utilisation kind (0 servers held, 1 min(n, c), 2 n > 0),
servers, capacity, distribution kind, offset and length of its empirical
samples, length of its rate table.  ``STF[k]`` (float): distribution
parameters a, b and the utilisation divisor.  A hyperexponential with
given branches has offset and length of its (cumulative probability,
branch mean at mean 1) pairs in ``EMP``; a station whose service shape
differs by class has kind ``D_CLASS`` and, from its offset in ``EMP``, five
numbers per class (kind, a, b, offset, length: :func:`draw_at`).  ``RM[k, :]``: total service
rate multiplier f(n) of a sharing station with n jobs (PS with c servers:
min(n, c)).  ``S[c, k]``: mean service time.  ``CLI[c]``: open flag,
population, inter-arrival kind, empirical offset and length.  ``CLF[c]``:
think time Z, mean inter-arrival time, a, b, log of the first histogram
edge, bins per unit of log.  Routing: ``RN[c, r]`` destinations of row r
(r = K is the start of a cycle, destination K its end), ``RD`` the
destinations, ``RC`` their cumulative probabilities; a destination
d + (K + 1) (s + 1) sends the job on to d as class s (class switching,
:mod:`qmodels.model.chains`; from a station's row only).  Pools: ``PLI[p]``
tokens, acquire and release station; ``ACQ[c, k]`` / ``REL[c, k]`` bit
masks of the pools class c takes on entering / gives back on leaving k.

Caches (:class:`~qmodels.model.CacheStation`): the tuple ``Q`` holds each
cache's item-level state (an LRU doubly linked list over item ids, a FIFO
ring of slots, RANDOM's slots, with an item -> slot index) and the hit /
miss destination of each class; a job leaving a cache station is routed by
the outcome of one lookup (:func:`cache_lookup`), any other by its row.

Priority stations (kinds 3 non-preemptive priority, 4 preemptive-resume
priority, 5 LCFS preemptive resume; :func:`prio_arrive`) read the class's
priority level in ``CLI[c, CL_PRIO]`` (0 the highest).

:func:`run` takes the arrays in three tuples, ``M`` (the model arrays
above, read only), ``J`` (the state: job table, event heap, stations,
pools, scalars) and ``T`` (the statistics: ``ACC``, its snapshots at cell
edges, the cycle-time histograms), and hands each kind of event (open
arrival, end of think time, service completion, blocking, departure,
arrival at a station, end of route) to its own handler, inlined by numba
(``inline="always"``): a handler takes the tuples, which an ordinary call
would pass as some 200 scalar arguments.  The small helpers a handler
calls (heap, FIFO lists, statistics, variates) take their arrays one by
one: numba types and lowers each of them once, as an ordinary compiled
function (inlining them in numba's IR as well, at every call site and
nested, made ``run`` four times bigger for numba to type and lower: 18.5 s
of compile against 7.8 s).  The hot ones are marked ``forceinline=True``:
LLVM, not numba, inlines them into ``run`` (its ``alwaysinline``), which
costs no typing and little compile time, and saves the call with its
arguments spilled to the stack (an array is some seven machine words):
1.3-1.5x the events per second (``benchmarks/README.md``).  The rare paths
(sharing stations, pools, the general ``draw``) stay ordinary calls.  A
fork and a join are inlined as well (:func:`fj_fork`, :func:`fj_join`), a
task's entry into a delay or exponential FCFS station written out: as
ordinary calls (a fork passed some 28 arrays, then made one call to
:func:`_enter` per task) they took 2.3x the CPU time per fork-join customer
(``benchmarks/bench_sim.py``, case ``sim-fj3``).

Randomness: one ``numpy.random.Generator`` per replication fills a block
of uniforms ``rng`` (``Generator.random``); the loop reads it in order
(``SI[I_UPOS]``) and returns ``NEED_RANDOM`` before an event when fewer than
``umin`` remain, so the caller appends a fresh block and resumes.  The
numbers a run uses are the Generator's stream in order, whatever the block
sizes: a run is reproducible bit for bit from its ``SeedSequence``, and the
compiled loop never touches a global random state.  Exponential variates
come by inversion, normal ones by Box-Muller (Law 2015, sec. 8.3).
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import njit

# job table columns (JI, int64); J_PAR, J_PEND: fork-join (see the end of the module)
# J_NEWC: 1 + the class a job goes on as after a class switch (0: none), set
# when it is routed and taken on when it leaves its station (:func:`_move`)
J_CLS, J_LOC, J_NXT, J_PRV, J_HELD, J_STATE, J_DEST, J_CYEND, J_PAR, J_PEND, J_NEWC = range(11)
NJI = 11
# job table columns (JF, float64)
F_TARR, F_TCYC, F_VFIN = range(3)
NJF = 3
# job states
S_FREE, S_WAIT, S_SERV, S_BLOCKED, S_THINK, S_POOL, S_FORK = range(7)
# station state columns (SS, int64)
K_N, K_BUSY, K_WQH, K_WQT, K_BLH, K_BLT, K_ACTH, K_NACT = range(8)
NSS = 8
# then, per class c, the head and tail of the jobs of class c waiting at a
# prio / prio-pr station: SS[k, K_PQ + 2 c], SS[k, K_PQ + 2 c + 1] (SS has
# NSS + 2 C columns)
K_PQ = NSS
# pool state columns (PS, int64)
P_FREE, P_QH, P_QT, P_QLEN = range(4)
# scalar state (SI, int64)
I_HSIZE, I_FREE, I_CELL, I_INIT, I_OPEN, I_NCLOSED, I_UPOS, I_FTASKS, I_NTASKS = range(9)
NSI = 9
# status codes returned by run() (BAD_LAYOUT: an array of the wrong width,
# a programming error: :func:`_layout_ok`)
OK, NEED_ROOM, DEADLOCK, MAX_EVENTS, TOO_MANY, NEED_RANDOM, BAD_LAYOUT = range(7)
# the widths of the model and state arrays with fixed rows (STI, STF, CLI,
# CLF, SFL; the histograms' bins: qmodels.sim.flatten.HIST_BINS)
NSTI, NSTF, NCLI, NCLF, NSFL, NHIST = 8, 3, 6, 6, 3, 4096
# distribution kinds
D_EXP, D_DET, D_ERLANG, D_HYPER, D_LOGN, D_UNIF, D_EMP, D_PARETO, D_CLASS = range(9)
# an open class's Markovian arrival process (MAP): each of its phase
# changes is an event of the class's heap entry; its current phase is
# SI[NSI + c] (the state array has one such column per class).  EMP from
# CLI[c, 3], n = CLI[c, 4] phases: per phase i a row of 1 + 2n numbers, the
# total rate out of i (time in units of the class's mean interval), then
# the cumulative probabilities of the 2n outcomes (to phase j without an
# arrival, j = 0..n-1, then with one); the stream starts in phase 0
D_MAP = 9

INF_CAP = 1 << 62
#: ``i & NN`` is ``i`` for every index i >= 0: an index masked so tells
#: LLVM that it is not negative, and numba's wrap-around of negative
#: indices (a shift, an ``and`` with the length and an add, the length
#: kept live) folds away.  Only for values that cannot be negative.
NN = (1 << 63) - 1
# station kinds served in priority order (STI[k, 0]) and the class column
# of the priority level (CLI[c, CL_PRIO])
K_PRIO, K_PRIO_PR, K_LCFS_PR = 3, 4, 5
CL_PRIO = 5
#: station kind of a fork-join element (STI[k, 0]; 0 delay, 1 FCFS, 2 sharing)
KIND_FORKJOIN = 6


# ---------------------------------------------------------------------------
# random variates (Law 2015, ch. 8)
# ---------------------------------------------------------------------------

@njit(_nrt=False, forceinline=True)
def _uni(U, SI):
    """The next uniform [0, 1) of the pre-drawn block."""
    i = SI[I_UPOS] & NN
    SI[I_UPOS] = i + 1
    return U[i]


@njit(_nrt=False, forceinline=True)
def _exp1(U, SI):
    """Standard exponential by inversion (Law 2015, sec. 8.3.2)."""
    return -math.log(1.0 - _uni(U, SI))


@njit(_nrt=False)
def _norm(U, SI):
    """Standard normal by the Box-Muller transform (Law 2015, sec. 8.3.6)."""
    u1 = 1.0 - _uni(U, SI)
    u2 = _uni(U, SI)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@njit(_nrt=False)
def draw(kind, a, b, off, ln, emp, mean, rng, SI):
    """One variate of the given shape with the given mean."""
    if mean <= 0.0:
        return 0.0
    if kind == D_EXP:
        return mean * _exp1(rng, SI)
    if kind == D_DET:
        return mean
    if kind == D_ERLANG:
        k = int(a)
        s = 0.0
        for _ in range(k):
            s += _exp1(rng, SI)
        return mean * s / k
    if kind == D_HYPER:
        if ln > 0:
            # given branches: emp[off + 2i] the cumulative probability of
            # branches 0..i, emp[off + 2i + 1] branch i's mean at mean 1
            u = _uni(rng, SI)
            i = 0
            while i < ln - 1 and u >= emp[off + 2 * i]:
                i += 1
            return mean * emp[off + 2 * i + 1] * _exp1(rng, SI)
        # balanced means: branch i (probability p_i) has mean m / (2 p_i)
        if _uni(rng, SI) < a:
            return mean / (2.0 * a) * _exp1(rng, SI)
        return mean / (2.0 * (1.0 - a)) * _exp1(rng, SI)
    if kind == D_LOGN:
        # a = sigma; mu = ln m - sigma^2 / 2
        return math.exp(math.log(mean) - 0.5 * a * a + a * _norm(rng, SI))
    if kind == D_UNIF:
        return mean * (1.0 - a + 2.0 * a * _uni(rng, SI))
    if kind == D_PARETO:
        # a = shape alpha, b = scale x_m / mean = (alpha - 1) / alpha; by
        # inversion of F(x) = 1 - (x_m / x)^alpha (Law 2015, sec. 8.2.1)
        return mean * b * (1.0 - _uni(rng, SI)) ** (-1.0 / a)
    # empirical: samples normalised to mean 1, resampled uniformly
    i = int(_uni(rng, SI) * ln)
    if i >= ln:
        i = ln - 1
    return mean * emp[off + i]


@njit(_nrt=False)
def map_next(c, CLI, CLF, EMP, rng, SI):
    """The time to the next phase change of open class c's MAP stream from
    its current phase (exponential of the phase's total rate out, in the
    class's time scale; Neuts 1979, Lucantoni 1991)."""
    n = CLI[c, 4]
    ph = SI[NSI + c]
    rate = EMP[CLI[c, 3] + ph * (1 + 2 * n)]
    return CLF[c, 1] / rate * _exp1(rng, SI)


@njit(_nrt=False)
def map_start(c, CLI, CLF, EMP, rng, SI):
    """Start open class c's MAP stream in its phase 0 at time 0 (as the
    exact CTMC and its transient do; the steady-state figures delete the
    warm-up) and return the time to its first phase change."""
    SI[NSI + c] = 0
    return map_next(c, CLI, CLF, EMP, rng, SI)


@njit(_nrt=False)
def map_step(c, CLI, EMP, rng, SI):
    """One phase change of open class c's MAP: the outcome drawn from the
    current phase's row (a hidden change to phase j, or an arrival after
    which the next interval starts in phase j); sets the new phase and
    returns 1 for an arrival, 0 for a hidden change."""
    n = CLI[c, 4]
    ph = SI[NSI + c]
    o = CLI[c, 3] + ph * (1 + 2 * n) + 1
    u = _uni(rng, SI)
    x = 0
    while x < 2 * n - 1 and u >= EMP[o + x]:
        x += 1
    if x < n:
        SI[NSI + c] = x
        return 0
    SI[NSI + c] = x - n
    return 1


@njit(_nrt=False)
def draw_at(c, k, STI, STF, EMP, S, rng, SI):
    """One service time of class ``c`` at station ``k``: the station's
    shape, or, where the shape differs by class (kind ``D_CLASS``), class
    c's own, read from ``EMP[STI[k, 5] + 5 c:]`` as (kind, a, b, offset,
    length)."""
    if STI[k, 4] == D_CLASS:
        o = STI[k, 5] + 5 * c
        return draw(int(EMP[o]), EMP[o + 1], EMP[o + 2], int(EMP[o + 3]), int(EMP[o + 4]),
                    EMP, S[c, k], rng, SI)
    return draw(STI[k, 4], STF[k, 0], STF[k, 1], STI[k, 5], STI[k, 6], EMP, S[c, k], rng, SI)


# ---------------------------------------------------------------------------
# indexed binary heap: one pending event per entity
# entity e < C: next open arrival of class e; C <= e < C+K: next completion
# at sharing station e-C; e >= C+K: job e-C-K (completion or end of think)
# ---------------------------------------------------------------------------

@njit(_nrt=False, forceinline=True)
def _sift_up(i, HE, HT, POS):
    i &= NN
    e = HE[i] & NN
    t = HT[i]
    while i > 0:
        p = (i - 1) >> 1
        if HT[p] <= t:
            break
        h = HE[p] & NN
        HE[i] = h
        HT[i] = HT[p]
        POS[h] = i
        i = p
    HE[i] = e
    HT[i] = t
    POS[e] = i


@njit(_nrt=False, forceinline=True)
def _sift_down(i, n, HE, HT, POS):
    i &= NN
    e = HE[i] & NN
    t = HT[i]
    while True:
        l = 2 * i + 1
        if l >= n:
            break
        r = l + 1
        m = l
        if r < n and HT[r] < HT[l]:
            m = r
        if HT[m] >= t:
            break
        h = HE[m] & NN
        HE[i] = h
        HT[i] = HT[m]
        POS[h] = i
        i = m
    HE[i] = e
    HT[i] = t
    POS[e] = i


@njit(_nrt=False, forceinline=True)
def heap_set(e, t, HE, HT, POS, SI):
    e &= NN
    i = POS[e]
    if i < 0:
        n = SI[I_HSIZE] & NN
        HE[n] = e
        HT[n] = t
        POS[e] = n
        SI[I_HSIZE] = n + 1
        _sift_up(n, HE, HT, POS)
    else:
        old = HT[i]
        HT[i] = t
        if t < old:
            _sift_up(i, HE, HT, POS)
        else:
            _sift_down(i, SI[I_HSIZE], HE, HT, POS)


@njit(_nrt=False, forceinline=True)
def heap_remove(e, HE, HT, POS, SI):
    e &= NN
    i = POS[e]
    if i < 0:
        return
    POS[e] = -1
    n = (SI[I_HSIZE] - 1) & NN
    SI[I_HSIZE] = n
    if i == n:
        return
    h = HE[n] & NN
    HE[i] = h
    HT[i] = HT[n]
    POS[h] = i
    if i > 0 and HT[i] < HT[(i - 1) >> 1]:
        _sift_up(i, HE, HT, POS)
    else:
        _sift_down(i, n, HE, HT, POS)


# ---------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------

@njit(_nrt=False, forceinline=True)
def flush_station(k, now, STI, RM, SS, NC, BS, SFL, ACC, C, K):
    """Add the areas of station k from its last change up to ``now``."""
    k &= NN
    dt = now - SFL[k, 0]
    if dt > 0.0:
        ntot = SS[k, K_N]
        if ntot > 0:
            uk = STI[k, 1]
            if uk == 0:
                if C == 1:
                    # the loop below with its one class written out (the
                    # same two sums, no loop to set up and leave per call)
                    ACC[k] += dt * NC[0, k]
                    ACC[(K + k) & NN] += dt * BS[0, k]
                else:
                    for c in range(C):
                        ACC[(c * K + k) & NN] += dt * NC[c, k]
                        ACC[(C * K + c * K + k) & NN] += dt * BS[c, k]
            else:
                if uk == 1:
                    f = ntot if ntot < STI[k, 2] else STI[k, 2]
                else:
                    f = 1
                for c in range(C):
                    if NC[c, k] > 0:
                        ACC[(c * K + k) & NN] += dt * NC[c, k]
                        ACC[(C * K + c * K + k) & NN] += dt * f * NC[c, k] / ntot
        SFL[k, 0] = now


@njit(_nrt=False)
def flush_pool(p, now, PLI, PS, PFL, ACC, base):
    dt = now - PFL[p]
    if dt > 0.0:
        P = PLI.shape[0]
        ACC[base + p] += dt * (PLI[p, 0] - PS[p, P_FREE])
        ACC[base + P + p] += dt * PS[p, P_QLEN]
        PFL[p] = now


@njit(_nrt=False, forceinline=True)
def record_cycle(c, dt, ACC, off_cyc, C, HIST, seg, CLF):
    c &= NN
    seg &= NN
    ACC[(off_cyc + c) & NN] += 1.0
    ACC[(off_cyc + C + c) & NN] += dt
    nb = HIST.shape[2]
    if dt > 0.0:
        b = int((math.log(dt) - CLF[c, 4]) * CLF[c, 5])
        if b < 0:
            b = 0
        elif b >= nb:
            b = nb - 1
    else:
        b = 0
    HIST[seg, c, b] += 1


# ---------------------------------------------------------------------------
# routing
# ---------------------------------------------------------------------------

@njit(_nrt=False, forceinline=True)
def next_dest(c, r, RN, RD, RC, rng, SI):
    c &= NN
    r &= NN
    n = RN[c, r]
    if n == 1:
        return RD[c, r, 0]
    u = _uni(rng, SI)
    for i in range(n - 1):
        if u < RC[c, r, i]:
            return RD[c, r, i]
    return RD[c, r, n - 1]


# ---------------------------------------------------------------------------
# caches (qmodels.model.caching.CacheStation): the item-level state, in arrays
# ---------------------------------------------------------------------------
# Q (caches): QI, QS, QW, QF, QK, QD, QH
# ``QI[q]`` (int, read only): policy, catalog size n, capacity C (at most n:
# a cache as large as its catalog never evicts), offsets in ``QW`` of its
# item -> slot index, LRU links (previous, next) and slots, offset of its
# cumulative popularity in ``QF``.  ``QS[q]`` (int, state): items cached,
# LRU list head (most recent) and tail (least recent), FIFO's next victim
# slot.  ``QW`` (int, state): where[i] (-1: item i not cached), LRU prev[i]
# and next[i] (a doubly linked list over item ids), the C slots (FIFO: a
# ring, the next victim its oldest; RANDOM: the victim uniform over them).
# ``QK[k]`` the cache at station k (-1: none); ``QD[c, k, 0]`` /
# ``QD[c, k, 1]`` where class c goes after a hit / a miss at k (coded as
# ``RD``); ``QH[q]`` lookups and hits, cumulative.
Q_LRU, Q_FIFO, Q_RANDOM = 0, 1, 2
QI_POL, QI_N, QI_CAP, QI_WHERE, QI_PREV, QI_NXT, QI_SLOTS, QI_CDF = range(8)
NQI = 8
QS_COUNT, QS_HEAD, QS_TAIL, QS_NEXT = range(4)
NQS = 4


@njit(_nrt=False)
def cache_lookup(q, QI, QS, QW, QF, QH, rng, SI):
    """One request at cache q under the independent reference model: an
    item drawn from its popularity (inversion of the cumulative
    probabilities by binary search: the smallest i with F_i > u, Law 2015,
    sec. 8.2.3), looked up, and the contents updated; returns 1 on a hit.

    LRU: a hit moves the item to the head of the list, a miss inserts it
    there and evicts the tail when full; FIFO: a miss replaces the oldest
    slot (a ring); RANDOM: a miss replaces a slot drawn uniformly.  The
    same policies, in the same arrays, as the standalone item simulation
    :meth:`qmodels.physical.cache.Cache.simulate`."""
    n = QI[q, QI_N]
    cap = QI[q, QI_CAP]
    o = QI[q, QI_CDF]
    u = _uni(rng, SI)
    lo = 0
    hi = n - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if QF[o + mid] > u:
            hi = mid
        else:
            lo = mid + 1
    i = lo
    w = QI[q, QI_WHERE]
    pol = QI[q, QI_POL]
    QH[q, 0] += 1
    if QW[w + i] >= 0:
        QH[q, 1] += 1
        if pol == Q_LRU and QS[q, QS_HEAD] != i:
            pv = QI[q, QI_PREV]
            nx = QI[q, QI_NXT]
            p = QW[pv + i]
            x = QW[nx + i]
            QW[nx + p] = x
            if x >= 0:
                QW[pv + x] = p
            else:
                QS[q, QS_TAIL] = p
            h = QS[q, QS_HEAD]
            QW[pv + i] = -1
            QW[nx + i] = h
            QW[pv + h] = i
            QS[q, QS_HEAD] = i
        return 1
    if cap == 0:
        return 0
    if pol == Q_LRU:
        pv = QI[q, QI_PREV]
        nx = QI[q, QI_NXT]
        if QS[q, QS_COUNT] == cap:  # evict the least recently used
            t = QS[q, QS_TAIL]
            QW[w + t] = -1
            p = QW[pv + t]
            QS[q, QS_TAIL] = p
            if p >= 0:
                QW[nx + p] = -1
            else:
                QS[q, QS_HEAD] = -1
            QS[q, QS_COUNT] -= 1
        h = QS[q, QS_HEAD]
        QW[w + i] = 0
        QW[pv + i] = -1
        QW[nx + i] = h
        if h >= 0:
            QW[pv + h] = i
        else:
            QS[q, QS_TAIL] = i
        QS[q, QS_HEAD] = i
        QS[q, QS_COUNT] += 1
        return 0
    sl = QI[q, QI_SLOTS]
    if QS[q, QS_COUNT] < cap:
        s = QS[q, QS_COUNT]
        QS[q, QS_COUNT] += 1
    else:
        if pol == Q_FIFO:
            s = QS[q, QS_NEXT]
            QS[q, QS_NEXT] = (s + 1) % cap
        else:
            s = int(_uni(rng, SI) * cap)
            if s >= cap:
                s = cap - 1
        QW[w + QW[sl + s]] = -1
    QW[sl + s] = i
    QW[w + i] = s
    return 0


@njit(_nrt=False)
def cache_fill(q, count, QI, QS, QW, QF, QH, rng, SI):
    """Serve ``count`` requests at cache q outside the network (its state
    warmed before the run starts: :class:`qmodels.sim.run._Run`); its
    counts are then reset."""
    for _ in range(count):
        cache_lookup(q, QI, QS, QW, QF, QH, rng, SI)
    QH[q, 0] = 0
    QH[q, 1] = 0


# ---------------------------------------------------------------------------
# sharing stations (PS, load-dependent): virtual time per station
# ---------------------------------------------------------------------------

@njit(_nrt=False)
def _share_rate(k, SS, STI, RM):
    """Service rate (work per second) of each active job of sharing station k.

    Processor sharing with c servers, n present of which b are blocked: a
    blocked job keeps a whole server (blocking after service), the n - b
    active jobs share the other c - b, each at min(1, (c - b) / (n - b))
    (the rule of :mod:`qmodels.analytic.ctmc`).  Load-dependent: each of the n jobs
    present gets a(n) / n, a blocked job's part going unused.
    """
    n = SS[k, K_N]
    na = SS[k, K_NACT]
    if STI[k, 1] == 1:
        free = STI[k, 2] - (n - na)
        if free <= 0:
            return 0.0
        r = free / na
        return 1.0 if r > 1.0 else r
    L = STI[k, 7]
    i = n if n < L else L
    return RM[k, i - 1] / n


@njit(_nrt=False)
def share_advance(k, now, STI, RM, SS, SFL):
    """Advance the virtual time of sharing station k to ``now`` (call it
    before any change of the number present)."""
    if SS[k, K_NACT] > 0:
        SFL[k, 1] += (now - SFL[k, 2]) * _share_rate(k, SS, STI, RM)
    SFL[k, 2] = now


@njit(_nrt=False)
def share_resched(k, now, STI, RM, SS, SFL, JI, JF, HE, HT, POS, SI, C):
    na = SS[k, K_NACT]
    e = C + k
    if na == 0:
        heap_remove(e, HE, HT, POS, SI)
        return
    j = SS[k, K_ACTH]
    vmin = JF[j, F_VFIN]
    j = JI[j, J_NXT]
    while j >= 0:
        if JF[j, F_VFIN] < vmin:
            vmin = JF[j, F_VFIN]
        j = JI[j, J_NXT]
    rate = _share_rate(k, SS, STI, RM)
    if rate <= 0.0:
        # every server held by a blocked job: no completion until one leaves
        heap_remove(e, HE, HT, POS, SI)
        return
    rem = vmin - SFL[k, 1]
    if rem < 0.0:
        rem = 0.0
    heap_set(e, now + rem / rate, HE, HT, POS, SI)


@njit(_nrt=False)
def share_unlink(j, k, SS, JI):
    p = JI[j, J_PRV]
    n = JI[j, J_NXT]
    if p >= 0:
        JI[p, J_NXT] = n
    else:
        SS[k, K_ACTH] = n
    if n >= 0:
        JI[n, J_PRV] = p
    JI[j, J_NXT] = -1
    JI[j, J_PRV] = -1
    SS[k, K_NACT] -= 1


@njit(_nrt=False)
def share_pick(k, SS, JI, JF):
    """The active job with the smallest finishing virtual time."""
    j = SS[k, K_ACTH]
    best = j
    vmin = JF[j, F_VFIN]
    j = JI[j, J_NXT]
    while j >= 0:
        if JF[j, F_VFIN] < vmin:
            vmin = JF[j, F_VFIN]
            best = j
        j = JI[j, J_NXT]
    return best


# ---------------------------------------------------------------------------
# FIFO lists threaded through J_NXT
# ---------------------------------------------------------------------------

@njit(_nrt=False, forceinline=True)
def fifo_push(j, A, r, ch, ct, JI):
    JI[j, J_NXT] = -1
    t = A[r, ct]
    if t < 0:
        A[r, ch] = j
    else:
        JI[t, J_NXT] = j
    A[r, ct] = j


@njit(_nrt=False, forceinline=True)
def fifo_pop(A, r, ch, ct, JI):
    j = A[r, ch] & NN
    n = JI[j, J_NXT]
    A[r, ch] = n
    if n < 0:
        A[r, ct] = -1
    JI[j, J_NXT] = -1
    return j


# the loop: three groups of arrays and one handler per kind of event
# ---------------------------------------------------------------------------
# M (model, read only): STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL
# J (state):            JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB
# T (statistics):       ACC, SNAP, EDGES, HIST, SEG
# Q (caches):           QI, QS, QW, QF, QK, QD, QH (model and state, see cache_lookup)
# The handlers are inlined into ``run`` (numba ``inline="always"``: they take
# the tuples); the helpers they call and the rare paths (token pools, sharing
# stations) are ordinary compiled calls; the small hot helpers are inlined by
# LLVM (``forceinline=True``).

@njit(_nrt=False)
def _offsets(C, K, P):
    """Offsets in ``ACC`` (see :func:`qmodels.sim.flatten.acc_layout`):
    completions, sojourn times, cycles, lost arrivals, pools, events."""
    CK = C * K
    o_pool = 4 * CK + 3 * C
    return 2 * CK, 3 * CK, 4 * CK, 4 * CK + 2 * C, o_pool, o_pool + 2 * P


@njit(_nrt=False)
def _start(now, M, J, rng):
    """First call: schedule the first open arrivals; closed jobs 0..NCLOSED-1
    start a cycle at ``now`` (think first if Z > 0)."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    K = STI.shape[0]
    C = CLI.shape[0]
    SI[I_INIT] = 1
    for c in range(C):
        if CLI[c, 0] == 1 and CLF[c, 1] < np.inf:
            if CLI[c, 2] == D_MAP:
                heap_set(c, now + map_start(c, CLI, CLF, EMP, rng, SI), HE, HT, POS, SI)
                continue
            heap_set(c, now + draw(CLI[c, 2], CLF[c, 2], CLF[c, 3], CLI[c, 3], CLI[c, 4],
                                   EMP, CLF[c, 1], rng, SI), HE, HT, POS, SI)
    for j in range(SI[I_NCLOSED]):
        c = JI[j, J_CLS]
        JF[j, F_TCYC] = now
        JI[j, J_LOC] = K  # the think stage
        JI[j, J_STATE] = S_THINK
        if CLF[c, 0] > 0.0:
            heap_set(C + K + j, now + CLF[c, 0] * _exp1(rng, SI), HE, HT, POS, SI)
        else:
            # fake an end of think at time 0 (handled like any other)
            heap_set(C + K + j, now, HE, HT, POS, SI)


@njit(_nrt=False, forceinline=True)
def _must_stop(events, max_events, rng, umin, HE, C, JI, SI, open_limit):
    """Why the loop must return before the next event (OK: it need not):
    the event budget spent, too few uniforms left, no free job row for an
    arrival or a fork, too many open jobs."""
    if events >= max_events:
        return MAX_EVENTS
    if rng.shape[0] - SI[I_UPOS] < umin:
        return NEED_RANDOM
    if HE[0] < C and SI[I_FREE] < 0:
        return NEED_ROOM
    if SI[I_FTASKS] > 0 and fj_short(SI[I_FTASKS] + 1, JI, SI):
        return NEED_ROOM
    if SI[I_OPEN] > open_limit:
        return TOO_MANY
    return OK


@njit(inline="always", _nrt=False)
def _layout_ok(M, J, T):
    """Whether the arrays have the widths their layout gives them: the
    fixed ones (job table, station and class rows, histogram bins) and
    those set by the numbers of classes C and stations K.  Always true;
    checked once at the top of :func:`run`, it lets LLVM take each width as
    the constant it is, or as the one value K or K + 1 instead of a width
    per array (a row's offset is then a multiply by a constant or by a
    value already at hand, not by a width reloaded from the stack)."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    ACC, SNAP, EDGES, HIST, SEG = T
    K = STI.shape[0]
    C = CLI.shape[0]
    fixed = (JI.shape[1] == NJI and JF.shape[1] == NJF and STI.shape[1] == NSTI
             and STF.shape[1] == NSTF and CLI.shape[1] == NCLI and CLF.shape[1] == NCLF
             and SFL.shape[1] == NSFL and HIST.shape[2] == NHIST)
    by_ck = (SS.shape[1] == NSS + 2 * C and NC.shape[1] == K and BS.shape[1] == K
             and S.shape[1] == K and RN.shape[1] == K + 1 and RD.shape[1] == K + 1
             and RC.shape[1] == K + 1 and RC.shape[2] == RD.shape[2])
    return fixed and by_ck


@njit(_nrt=False, forceinline=True)
def _edge_at(cell, EDGES):
    """The time of cell edge ``cell`` (infinity past the last one)."""
    return EDGES[cell] if cell < EDGES.shape[0] else np.inf


@njit(inline="always", _nrt=False)
def _pass_edges(now, tnext, t_stop, M, J, T):
    """Copy the statistics to ``SNAP`` at every cell edge passed before the
    next event (at ``tnext``); returns the new clock."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    ACC, SNAP, EDGES, HIST, SEG = T
    K = STI.shape[0]
    C = CLI.shape[0]
    P = PLI.shape[0]
    o_pool = 4 * C * K + 3 * C
    ncell = EDGES.shape[0]
    cell = SI[I_CELL] & NN
    while cell < ncell and EDGES[cell] <= tnext and EDGES[cell] <= t_stop:
        te = EDGES[cell]
        for k in range(K):
            flush_station(k, te, STI, RM, SS, NC, BS, SFL, ACC, C, K)
        for p in range(P):
            flush_pool(p, te, PLI, PS, PFL, ACC, o_pool)
        for i in range(ACC.shape[0]):
            SNAP[cell, i] = ACC[i]
        cell += 1
        SI[I_CELL] = cell
        now = te
    return now


@njit(inline="always", _nrt=False)
def _open_arrival(c, now, seg, M, J, T, rng):
    """Arrival of open class c: schedule the next one and route this one.
    Returns (job, destination); job -1 if nothing enters a station."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    ACC, SNAP, EDGES, HIST, SEG = T
    K = STI.shape[0]
    C = CLI.shape[0]
    o_comp, o_soj, o_cyc, o_lost, o_pool, o_ev = _offsets(C, K, PLI.shape[0])
    if CLI[c, 2] == D_EXP:
        x = CLF[c, 1] * _exp1(rng, SI)
    elif CLI[c, 2] == D_MAP:
        # a phase change of the class's MAP: an arrival or a hidden change
        got = map_step(c, CLI, EMP, rng, SI)
        heap_set(c, now + map_next(c, CLI, CLF, EMP, rng, SI), HE, HT, POS, SI)
        if got == 0:
            return -1, -1
        x = -1.0
    else:
        x = draw(CLI[c, 2], CLF[c, 2], CLF[c, 3], CLI[c, 3], CLI[c, 4], EMP, CLF[c, 1],
                 rng, SI)
    if x >= 0.0:
        heap_set(c, now + x, HE, HT, POS, SI)
    d = next_dest(c, K, RN, RD, RC, rng, SI)
    if d == K:
        record_cycle(c, 0.0, ACC, o_cyc, C, HIST, seg, CLF)
        return -1, d
    d &= NN  # a station (a class switches only on a station's row)
    if SS[d, K_N] >= STI[d, 3]:
        ACC[o_lost + c] += 1.0
        ACC[o_ev] += 1.0
        return -1, d
    j = SI[I_FREE] & NN  # not -1: the loop asked for room first
    SI[I_FREE] = JI[j, J_NXT]
    JI[j, J_CLS] = c
    JI[j, J_LOC] = -1
    JI[j, J_NXT] = -1
    JI[j, J_PRV] = -1
    JI[j, J_HELD] = 0
    JI[j, J_CYEND] = 0
    JF[j, F_TCYC] = now
    SI[I_OPEN] += 1
    return j, d


@njit(inline="always", _nrt=False)
def _end_think(j, e, now, seg, M, J, T, rng):
    """End of think time of closed job j (heap entity e): a new cycle starts.
    Returns the first station, or -1 if the job thinks again at once."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    ACC, SNAP, EDGES, HIST, SEG = T
    K = STI.shape[0]
    C = CLI.shape[0]
    o_cyc = 4 * C * K
    c = JI[j, J_CLS] & NN
    JF[j, F_TCYC] = now
    d = next_dest(c, K, RN, RD, RC, rng, SI)
    if d == K:
        record_cycle(c, 0.0, ACC, o_cyc, C, HIST, seg, CLF)
        if CLF[c, 0] > 0.0:
            heap_set(e, now + CLF[c, 0] * _exp1(rng, SI), HE, HT, POS, SI)
            return -1
        while d == K:
            d = next_dest(c, K, RN, RD, RC, rng, SI)
            if d == K:
                record_cycle(c, 0.0, ACC, o_cyc, C, HIST, seg, CLF)
    return d


@njit(_nrt=False, forceinline=True)
def _route_on(j, src, now, seg, K, C, JI, JF, CLI, CLF, RN, RD, RC, ACC, HIST, rng, SI):
    """Job j leaves station src (a service completion, or a fork-join's
    join completing): its next destination, K at the end of its route,
    where its cycle is recorded and a closed class with Z = 0 starts the
    next cycle at once.  One routine for both exits."""
    d = next_dest(JI[j, J_CLS], src, RN, RD, RC, rng, SI)
    return _route_dest(j, d, now, seg, K, C, JI, JF, CLI, CLF, RN, RD, RC, ACC, HIST, rng, SI)


@njit(_nrt=False, forceinline=True)
def _route_dest(j, d, now, seg, K, C, JI, JF, CLI, CLF, RN, RD, RC, ACC, HIST, rng, SI):
    """Job j, leaving its station, is routed to ``d`` (coded as ``RD``): a
    class switch is noted, and at the end of its route (K) its cycle is
    recorded and a closed class with Z = 0 starts the next one at once.
    Shared by :func:`_route_on` (``d`` drawn from the routing row) and a
    cache station (``d`` its hit or miss destination, :func:`_end_lookup`)."""
    o_cyc = 4 * C * K
    c = JI[j, J_CLS] & NN
    if d > K:
        # a class switch: the job goes on as class c (taken on in _move, once
        # it has left src as its old class)
        c = d // (K + 1) - 1
        d = d % (K + 1)
        JI[j, J_NEWC] = c + 1
    c &= NN
    if d == K:
        record_cycle(c, now - JF[j, F_TCYC], ACC, o_cyc, C, HIST, seg, CLF)
        JI[j, J_CYEND] = 1
        if CLI[c, 0] == 0 and CLF[c, 0] <= 0.0:
            JF[j, F_TCYC] = now
            d = next_dest(c, K, RN, RD, RC, rng, SI)
            while d == K:
                record_cycle(c, 0.0, ACC, o_cyc, C, HIST, seg, CLF)
                d = next_dest(c, K, RN, RD, RC, rng, SI)
    return d


@njit(inline="always", _nrt=False)
def _end_service(j, src, now, seg, M, J, T, rng):
    """Service completion of job j at station src: its next destination
    (K = the end of its route; a closed job with Z = 0 starts its next
    cycle at once)."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    ACC, SNAP, EDGES, HIST, SEG = T
    K = STI.shape[0]
    C = CLI.shape[0]
    return _route_on(j, src, now, seg, K, C, JI, JF, CLI, CLF, RN, RD, RC, ACC, HIST, rng, SI)


@njit(inline="always", _nrt=False)
def _end_visit(j, src, now, seg, M, J, T, Q, rng):
    """Service completion of job j at station src: routed by the class's
    row (:func:`_end_service`), or by the cache's answer at a cache station
    (:func:`_end_lookup`); one array read tells them apart."""
    if Q[0].shape[0] == 0:
        # no cache in the network (QK all -1): no array read
        return _end_service(j, src, now, seg, M, J, T, rng)
    q = Q[4][src]
    if q < 0:
        return _end_service(j, src, now, seg, M, J, T, rng)
    return _end_lookup(j, src, q, now, seg, M, J, T, Q, rng)


@njit(inline="always", _nrt=False)
def _end_lookup(j, src, q, now, seg, M, J, T, Q, rng):
    """Service completion of job j at cache station src (cache q): the
    cache looks up an item (:func:`cache_lookup`) and the job goes on to
    its class's hit or miss destination, routed on as by
    :func:`_end_service`."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    ACC, SNAP, EDGES, HIST, SEG = T
    QI, QS, QW, QF, QK, QD, QH = Q
    K = STI.shape[0]
    C = CLI.shape[0]
    hit = cache_lookup(q, QI, QS, QW, QF, QH, rng, SI)
    # the lookups and hits of cache q, the last 2 NQ cells of ACC
    # (qmodels.sim.flatten.acc_layout, "cache"): no random number drawn
    o = ACC.shape[0] - 2 * (QI.shape[0] - q)
    ACC[o] += 1.0
    ACC[o + 1] += hit
    d = QD[JI[j, J_CLS], src, 1 - hit]
    return _route_dest(j, d, now, seg, K, C, JI, JF, CLI, CLF, RN, RD, RC, ACC, HIST, rng, SI)


@njit(inline="always", _nrt=False)
def _block_if_full(j, src, d, own, now, M, J):
    """Blocking after service: if station d has no room, j stays at src,
    queued FIFO among the jobs blocked on d.  True if j was blocked."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    K = STI.shape[0]
    C = CLI.shape[0]
    d &= NN  # a station
    occ = SS[d, K_N]
    if d == src:
        occ -= 1
    if occ < STI[d, 3]:
        return False
    if src < K and STI[src, 0] == 2:
        # a blocked job stops sharing the processor
        share_advance(src, now, STI, RM, SS, SFL)
        share_unlink(j, src, SS, JI)
        share_resched(src, now, STI, RM, SS, SFL, JI, JF, HE, HT, POS, SI, C)
    elif src < K and (STI[src, 0] == K_PRIO_PR or STI[src, 0] == K_LCFS_PR):
        # a blocked job keeps its server but cannot be preempted
        share_unlink(j, src, SS, JI)
    JI[j, J_STATE] = S_BLOCKED
    JI[j, J_DEST] = d
    fifo_push(j, SS, d, K_BLH, K_BLT, JI)
    if own >= 0:
        heap_remove(own, HE, HT, POS, SI)
    return True


@njit(inline="always", _nrt=False)
def _depart(j, k, now, ub_n, M, J, T, rng):
    """Job j leaves station k: statistics, the next job in service, tokens
    given back; a station with jobs blocked on it goes on the ``UB`` list.
    Returns the new length of that list."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    ACC, SNAP, EDGES, HIST, SEG = T
    K = STI.shape[0]
    C = CLI.shape[0]
    o_comp, o_soj, o_cyc, o_lost, o_pool, o_ev = _offsets(C, K, PLI.shape[0])
    k &= NN
    cc = JI[j, J_CLS] & NN
    flush_station(k, now, STI, RM, SS, NC, BS, SFL, ACC, C, K)
    kind = STI[k, 0]
    if kind == 2:
        share_advance(k, now, STI, RM, SS, SFL)
    NC[cc, k] -= 1
    SS[k, K_N] -= 1
    ACC[(o_comp + cc * K + k) & NN] += 1.0
    ACC[(o_soj + cc * K + k) & NN] += now - JF[j, F_TARR]
    ACC[o_ev] += 1.0
    if kind == 0:
        BS[cc, k] -= 1
    elif kind == 1:
        BS[cc, k] -= 1
        if SS[k, K_WQH] >= 0:
            h = fifo_pop(SS, k, K_WQH, K_WQT, JI)
            ch = JI[h, J_CLS] & NN
            BS[ch, k] += 1
            JI[h, J_STATE] = S_SERV
            if STI[k, 4] == D_EXP:
                x = S[ch, k] * _exp1(rng, SI)
            else:
                x = draw_at(ch, k, STI, STF, EMP, S, rng, SI)
            heap_set(C + K + h, now + x, HE, HT, POS, SI)
        else:
            SS[k, K_BUSY] -= 1
    elif kind == 2:
        if JI[j, J_STATE] == S_SERV:
            share_unlink(j, k, SS, JI)
        share_resched(k, now, STI, RM, SS, SFL, JI, JF, HE, HT, POS, SI, C)
    elif K_PRIO <= kind <= K_LCFS_PR:
        prio_depart(j, k, now, STI, STF, EMP, S, CLI, JI, JF, SS, BS, HE, HT, POS, SI, rng,
                    C, K)
    # tokens given back on leaving k (all of them at the end of a cycle);
    # without pools a job holds none (no read of J_HELD)
    held = JI[j, J_HELD] if PLI.shape[0] > 0 else 0
    if held != 0:
        mask = REL[cc, k]
        if JI[j, J_CYEND] == 1:
            mask = held
        mask &= held
        if mask != 0:
            _give_back(j, mask, now, M, J, T, rng)
    if STI[k, 3] < INF_CAP and SS[k, K_BLH] >= 0:
        UB[ub_n] = k
        ub_n += 1
    return ub_n


@njit(inline="always", _nrt=False)
def _leave_route(j, now, M, J, T, rng):
    """Job j reaches the end of its route: it gives back every token it
    still holds, then leaves the network (open) or thinks (closed)."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    K = STI.shape[0]
    C = CLI.shape[0]
    cc = JI[j, J_CLS] & NN
    held = JI[j, J_HELD] if PLI.shape[0] > 0 else 0
    if held != 0:
        _give_back(j, held, now, M, J, T, rng)
    if CLI[cc, 0] == 1:
        # leaves the network: back to the free list
        JI[j, J_STATE] = S_FREE
        JI[j, J_LOC] = -1
        JI[j, J_NXT] = SI[I_FREE]
        SI[I_FREE] = j
        SI[I_OPEN] -= 1
    else:
        JI[j, J_LOC] = K
        JI[j, J_STATE] = S_THINK
        heap_set(C + K + j, now + CLF[cc, 0] * _exp1(rng, SI), HE, HT, POS, SI)


@njit(inline="always", _nrt=False)
def _arrive(j, s, now, M, J, T, rng):
    """Job j arrives at station s (room secured): it takes the tokens it
    needs (or queues at a pool), then starts service or waits."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    ACC, SNAP, EDGES, HIST, SEG = T
    K = STI.shape[0]
    C = CLI.shape[0]
    o_ev = 4 * C * K + 3 * C + 2 * PLI.shape[0]
    s &= NN
    cc = JI[j, J_CLS] & NN
    if PLI.shape[0] > 0 and (ACQ[cc, s] & ~JI[j, J_HELD]) != 0 and not _take_tokens(
            j, s, now, ACQ, PLI, JI, PS, PFL, ACC, o_ev - 2 * PLI.shape[0], K):
        return
    kind = STI[s, 0]
    if kind == 2:
        _enter(j, s, now, STI, STF, EMP, S, RM, JI, JF, SS, NC, BS, SFL, ACC, HE, HT, POS, SI,
               rng, C, K, o_ev)
        return
    if K_PRIO <= kind <= K_LCFS_PR:
        flush_station(s, now, STI, RM, SS, NC, BS, SFL, ACC, C, K)
        NC[cc, s] += 1
        SS[s, K_N] += 1
        JF[j, F_TARR] = now
        JI[j, J_LOC] = s
        ACC[o_ev] += 1.0
        prio_arrive(j, s, now, STI, STF, EMP, S, CLI, JI, JF, SS, BS, HE, HT, POS, SI, rng,
                    C, K)
        return
    # _enter for delay and FCFS stations, written out: the common path of
    # every event stays in ``run`` instead of the rare path's _enter
    flush_station(s, now, STI, RM, SS, NC, BS, SFL, ACC, C, K)
    NC[cc, s] += 1
    SS[s, K_N] += 1
    JF[j, F_TARR] = now
    JI[j, J_LOC] = s
    ACC[o_ev] += 1.0
    if kind == 0 or SS[s, K_BUSY] < STI[s, 2]:
        if kind == 1:
            SS[s, K_BUSY] += 1
        BS[cc, s] += 1
        JI[j, J_STATE] = S_SERV
        if STI[s, 4] == D_EXP:
            x = S[cc, s] * _exp1(rng, SI)
        else:
            x = draw_at(cc, s, STI, STF, EMP, S, rng, SI)
        heap_set(C + K + j, now + x, HE, HT, POS, SI)
    else:
        JI[j, J_STATE] = S_WAIT
        fifo_push(j, SS, s, K_WQH, K_WQT, JI)


@njit(inline="always", _nrt=False)
def _move(j, src, d, now, M, J, T, rng):
    """j leaves src (a station, the think stage or outside) and enters d (a
    station or K, the end of its route).  The moves run as a small work list
    so that unblocking cascades (a departure frees room for a blocked job,
    whose departure frees room for another, ...) need no recursion."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    ACC, SNAP, EDGES, HIST, SEG = T
    K = STI.shape[0]
    C = CLI.shape[0]
    o_ev = 4 * C * K + 3 * C + 2 * PLI.shape[0]
    ub_n = 0
    while True:
        j &= NN  # a job row: the one given, a parent, a job unblocked
        d &= NN  # a station or K
        if src >= 0 and src < K:
            ub_n = _depart(j, src, now, ub_n, M, J, T, rng)
        if JI[j, J_NEWC] > 0:
            JI[j, J_CLS] = JI[j, J_NEWC] - 1
            JI[j, J_NEWC] = 0
        JI[j, J_CYEND] = 0
        if d == K:
            _leave_route(j, now, M, J, T, rng)
        elif STI[d, 0] == KIND_FORKJOIN:
            # a fork (a job) or a join (a task); a completed join sends the
            # parent on from the fork-join (routed as after any visit, by
            # _route_on), as the next move of this list
            if JI[j, J_PAR] < 0:
                fj_fork(j, d, now, STI, STF, EMP, S, RM, JI, JF, SS, NC, BS, SFL, ACC, HE, HT,
                        POS, SI, rng, C, K, o_ev)
            else:
                p = fj_join(j, JI, SI)
                if p >= 0:
                    d2 = _route_on(p, d, now, SEG[SI[I_CELL] & NN], K, C, JI, JF, CLI, CLF, RN, RD,
                                   RC, ACC, HIST, rng, SI)
                    j = p
                    src = d
                    d = d2
                    continue
        else:
            _arrive(j, d, now, M, J, T, rng)
        # ---- next blocked job that can move now
        found = False
        while ub_n > 0:
            s = UB[ub_n - 1]
            if SS[s, K_BLH] >= 0 and SS[s, K_N] < STI[s, 3]:
                b = fifo_pop(SS, s, K_BLH, K_BLT, JI)
                j = b
                src = JI[b, J_LOC]
                d = s
                found = True
                break
            ub_n -= 1
        if not found:
            return


@njit(_nrt=False)
def run(M, J, T, rng, umin, t_stop, max_events, open_limit, Q):
    """Advance the simulation until the next event is later than ``t_stop``.

    ``M``, ``J`` and ``T`` are the tuples of model, state and statistics
    arrays (see above), ``Q`` the caches' (their model and state, see
    :func:`cache_lookup`; a network without caches has ``QK`` all -1 and
    pays one array read per service completion); ``rng`` the block of uniforms, of which at least
    ``umin`` must remain before each event.  Returns a status code (OK,
    NEED_ROOM, DEADLOCK, MAX_EVENTS, TOO_MANY, NEED_RANDOM).  ``ACC`` holds
    cumulative sums (layout in :mod:`qmodels.sim.flatten`); at every cell
    edge ``EDGES[i]`` a copy goes to ``SNAP[i]``.
    """
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    ACC, SNAP, EDGES, HIST, SEG = T
    K = STI.shape[0]
    C = CLI.shape[0]
    o_ev = 4 * C * K + 3 * C + 2 * PLI.shape[0]
    CKE = C + K  # first job entity
    now = SX[0]
    if not _layout_ok(M, J, T):
        return BAD_LAYOUT

    if SI[I_INIT] == 0:
        if rng.shape[0] - SI[I_UPOS] < umin:
            return NEED_RANDOM
        _start(now, M, J, rng)

    # the next cell edge and the histogram segment of the current cell,
    # read again only when an edge is passed (_pass_edges changes SI[I_CELL];
    # nothing else does during a call)
    cell = SI[I_CELL] & NN
    tedge = _edge_at(cell, EDGES)
    seg = SEG[cell] & NN
    while True:
        hs = SI[I_HSIZE]
        tnext = HT[0] if hs > 0 else np.inf
        if tedge <= tnext and tedge <= t_stop:
            now = _pass_edges(now, tnext, t_stop, M, J, T)
            cell = SI[I_CELL] & NN
            tedge = _edge_at(cell, EDGES)
            seg = SEG[cell] & NN
        if tnext > t_stop:
            if hs == 0 and (SI[I_NCLOSED] > 0 or SI[I_OPEN] > 0):
                SX[0] = now
                return DEADLOCK
            SX[0] = now if now >= t_stop else t_stop
            return OK
        status = _must_stop(ACC[o_ev], max_events, rng, umin, HE, C, JI, SI, open_limit)
        if status != OK:
            SX[0] = now
            return status
        e = HE[0] & NN
        now = tnext

        # ---- what happens: j moves from src (station, K = think, -1 = outside) to d
        own = -1
        if e < C:
            j, d = _open_arrival(e, now, seg, M, J, T, rng)
            if j < 0:
                continue
            src = -1
        else:
            if e < CKE:
                k = e - C
                share_advance(k, now, STI, RM, SS, SFL)
                j = share_pick(k, SS, JI, JF)
            else:
                # the job's own entry stays at the top of the heap: if the job
                # is scheduled again below, heap_set moves it down in place
                # (one sift instead of two); else it is removed after the move
                j = (e - CKE) & NN
                own = e
            j &= NN  # a job row (share_pick's or the entity's)
            src = JI[j, J_LOC]
            if src == K:
                d = _end_think(j, e, now, seg, M, J, T, rng)
                if d < 0:
                    continue
            else:
                d = _end_visit(j, src, now, seg, M, J, T, Q, rng)
            if d != K and _block_if_full(j, src, d, own, now, M, J):
                continue
        # j a job row, d a station or K (every branch above left the
        # loop on a negative one)
        j &= NN
        d &= NN
        _move(j, src, d, now, M, J, T, rng)
        if own >= 0:
            st = JI[j, J_STATE]
            lc = JI[j, J_LOC]
            if not (st == S_THINK or (st == S_SERV and lc < K and STI[lc & NN, 0] != 2)):
                heap_remove(own, HE, HT, POS, SI)


# ---------------------------------------------------------------------------
# the rare paths: token pools, entering a sharing station
# ---------------------------------------------------------------------------

@njit(inline="always", _nrt=False)
def _give_back(j, mask, now, M, J, T, rng):
    """Job j gives back the tokens of the pools in ``mask``; each freed token
    goes to the jobs waiting at its pool, FIFO (a job that now has all it
    needs enters its station)."""
    STI, STF, RM, EMP, S, CLI, CLF, RN, RD, RC, PLI, ACQ, REL = M
    JI, JF, HE, HT, POS, SS, NC, BS, SFL, PS, PFL, SI, SX, UB = J
    ACC, SNAP, EDGES, HIST, SEG = T
    _give_back_arrays(j, mask, now, STI, STF, EMP, S, RM, PLI, ACQ, JI, JF, SS, NC, BS, SFL,
                      PS, PFL, ACC, HE, HT, POS, SI, rng, CLI.shape[0])


@njit(_nrt=False)
def _give_back_arrays(j, mask, now, STI, STF, EMP, S, RM, PLI, ACQ, JI, JF, SS, NC, BS, SFL,
                      PS, PFL, ACC, HE, HT, POS, SI, rng, C):
    """:func:`_give_back` with its arrays one by one (a rare path, compiled
    once)."""
    K = STI.shape[0]
    P = PLI.shape[0]
    o_pool = 4 * C * K + 3 * C
    for p in range(P):
        if (mask >> p) & 1:
            flush_pool(p, now, PLI, PS, PFL, ACC, o_pool)
            JI[j, J_HELD] &= ~(1 << p)
            PS[p, P_FREE] += 1
            while PS[p, P_FREE] > 0 and PS[p, P_QH] >= 0:
                h = fifo_pop(PS, p, P_QH, P_QT, JI)
                PS[p, P_QLEN] -= 1
                PS[p, P_FREE] -= 1
                JI[h, J_HELD] |= (1 << p)
                dh = JI[h, J_DEST]
                if _take_tokens(h, dh, now, ACQ, PLI, JI, PS, PFL, ACC, o_pool, K):
                    _enter(h, dh, now, STI, STF, EMP, S, RM, JI, JF, SS, NC, BS, SFL, ACC,
                           HE, HT, POS, SI, rng, C, K, o_pool + 2 * P)


@njit(_nrt=False)
def _take_tokens(j, d, now, ACQ, PLI, JI, PS, PFL, ACC, o_pool, K):
    """Take the tokens job j needs to enter d, pool by pool; False (and j
    queued at the first pool without a free token) if one is missing."""
    c = JI[j, J_CLS]
    need = ACQ[c, d] & ~JI[j, J_HELD]
    if need == 0:
        return True
    P = PLI.shape[0]
    for p in range(P):
        if (need >> p) & 1:
            flush_pool(p, now, PLI, PS, PFL, ACC, o_pool)
            if PS[p, P_FREE] > 0:
                PS[p, P_FREE] -= 1
                JI[j, J_HELD] |= (1 << p)
            else:
                JI[j, J_LOC] = K + 1  # waiting at a pool
                JI[j, J_STATE] = S_POOL
                JI[j, J_DEST] = d
                fifo_push(j, PS, p, P_QH, P_QT, JI)
                PS[p, P_QLEN] += 1
                return False
    return True


@njit(_nrt=False)
def _enter(j, s, now, STI, STF, EMP, S, RM, JI, JF, SS, NC, BS, SFL, ACC, HE, HT, POS, SI, rng,
           C, K, o_ev):
    """Job j arrives at station s (room and tokens already secured).  (The
    rare path: sharing stations and jobs granted a token; its arrays are
    passed one by one, which keeps numba's compile time down.)"""
    c = JI[j, J_CLS]
    flush_station(s, now, STI, RM, SS, NC, BS, SFL, ACC, C, K)
    kind = STI[s, 0]
    if kind == 2:
        share_advance(s, now, STI, RM, SS, SFL)
    NC[c, s] += 1
    SS[s, K_N] += 1
    JF[j, F_TARR] = now
    JI[j, J_LOC] = s
    ACC[o_ev] += 1.0
    e = C + K + j
    if kind == 0:
        BS[c, s] += 1
        JI[j, J_STATE] = S_SERV
        heap_set(e, now + draw_at(c, s, STI, STF, EMP, S, rng, SI), HE, HT, POS, SI)
    elif kind == 1:
        if SS[s, K_BUSY] < STI[s, 2]:
            SS[s, K_BUSY] += 1
            BS[c, s] += 1
            JI[j, J_STATE] = S_SERV
            heap_set(e, now + draw_at(c, s, STI, STF, EMP, S, rng, SI), HE, HT, POS, SI)
        else:
            JI[j, J_STATE] = S_WAIT
            fifo_push(j, SS, s, K_WQH, K_WQT, JI)
    else:
        JI[j, J_STATE] = S_SERV
        h = SS[s, K_ACTH]
        JI[j, J_PRV] = -1
        JI[j, J_NXT] = h
        if h >= 0:
            JI[h, J_PRV] = j
        SS[s, K_ACTH] = j
        SS[s, K_NACT] += 1
        JF[j, F_VFIN] = SFL[s, 1] + draw_at(c, s, STI, STF, EMP, S, rng, SI)
        share_resched(s, now, STI, RM, SS, SFL, JI, JF, HE, HT, POS, SI, C)


# ---------------------------------------------------------------------------
# priority stations: non-preemptive priority, preemptive-resume priority,
# LCFS preemptive resume (kinds K_PRIO, K_PRIO_PR, K_LCFS_PR)
# ---------------------------------------------------------------------------
# A job at such a station is waiting (S_WAIT) or served (S_SERV, its own
# completion in the heap).  The waiting jobs are kept in lists threaded
# through J_NXT / J_PRV, each sorted in the order they are served: at a prio
# or prio-pr station one list per class (SS[k, K_PQ + 2 c] its head, + 1 its
# tail), by arrival time, then row (FCFS within a class; the next job served
# is the first of the head of the lists with the smallest level); at an
# LCFS-PR station one list (K_WQH / K_WQT), latest arrival first, then row.
# The row breaks ties between jobs that arrived at the same instant as the
# scan of the job table by row did before (so the numbers did not change).
# At a preemptive station the jobs in service are a list too (K_ACTH, as at
# a sharing station; at most c of them): the victim of a preemption is found
# there.  A job blocked after service keeps its server but leaves that list
# (it cannot be preempted).  No cost grows with the job table: an arrival
# walks back over the jobs that arrived at the same instant, a preempted job
# goes back near the head, a departure looks at one head per class.
# JF[j, F_VFIN] holds the remaining work of a preempted job (-1: none yet):
# preemptive *resume*, the job later continues where it stopped; its service
# time is drawn once, when it first starts.

@njit(_nrt=False, forceinline=True)
def prio_before(a, b, kind, CLI, JI, JF):
    """True if job a is served before job b at a station of this kind:
    LCFS-PR, the later arrival; priority, the smaller level (0 highest),
    then the earlier arrival (FCFS within a level)."""
    if kind == K_LCFS_PR:
        return JF[a, F_TARR] > JF[b, F_TARR]
    pa = CLI[JI[a, J_CLS] & NN, CL_PRIO]
    pb = CLI[JI[b, J_CLS] & NN, CL_PRIO]
    if pa != pb:
        return pa < pb
    return JF[a, F_TARR] < JF[b, F_TARR]


@njit(_nrt=False, forceinline=True)
def _prio_wait(j, s, kind, from_tail, JI, JF, SS):
    """Job j waits at priority station s: into its sorted list (see above),
    walking from the tail (a new arrival at a prio / prio-pr station) or
    from the head (LCFS-PR, a preempted job): the same place either way,
    the walk short from the side given.  The order within one list: the
    earlier arrival (LCFS: the later), then the smaller row."""
    JI[j, J_STATE] = S_WAIT
    lcfs = kind == K_LCFS_PR
    if lcfs:
        ch, ct = K_WQH, K_WQT
    else:
        ch = K_PQ + 2 * (JI[j, J_CLS] & NN)
        ct = ch + 1
    tj = JF[j, F_TARR]
    if from_tail:
        # p: the last job before j
        p = SS[s, ct]
        while p >= 0:
            tp = JF[p, F_TARR]
            if tp == tj:
                if p < j:
                    break
            elif (tp > tj) == lcfs:
                break
            p = JI[p, J_PRV]
        n = SS[s, ch] if p < 0 else JI[p, J_NXT]
    else:
        # n: the first job after j
        n = SS[s, ch]
        while n >= 0:
            tn = JF[n, F_TARR]
            if tn == tj:
                if n > j:
                    break
            elif (tn < tj) == lcfs:
                break
            n = JI[n, J_NXT]
        p = SS[s, ct] if n < 0 else JI[n, J_PRV]
    JI[j, J_PRV] = p
    JI[j, J_NXT] = n
    if p >= 0:
        JI[p, J_NXT] = j
    else:
        SS[s, ch] = j
    if n >= 0:
        JI[n, J_PRV] = j
    else:
        SS[s, ct] = j


@njit(_nrt=False, forceinline=True)
def _prio_start(h, s, now, STI, STF, EMP, S, JI, JF, SS, BS, HE, HT, POS, SI, rng, C, K):
    """Job h starts service at priority station s, or resumes its
    remaining work if it was preempted."""
    c = JI[h, J_CLS] & NN
    BS[c, s] += 1
    JI[h, J_STATE] = S_SERV
    if STI[s, 0] != K_PRIO:
        # the jobs in service at a preemptive station: a list, as at a sharing one
        a = SS[s, K_ACTH]
        JI[h, J_PRV] = -1
        JI[h, J_NXT] = a
        if a >= 0:
            JI[a, J_PRV] = h
        SS[s, K_ACTH] = h
        SS[s, K_NACT] += 1
    x = JF[h, F_VFIN]
    if x < 0.0:
        if STI[s, 4] == D_EXP:
            # exponential service without the call to draw_at (the same
            # variate: no uniform drawn at mean 0, as draw)
            m = S[c, s]
            x = m * _exp1(rng, SI) if m > 0.0 else 0.0
        else:
            x = draw_at(c, s, STI, STF, EMP, S, rng, SI)
    JF[h, F_VFIN] = -1.0
    heap_set(C + K + h, now + x, HE, HT, POS, SI)


@njit(_nrt=False, forceinline=True)
def prio_arrive(j, s, now, STI, STF, EMP, S, CLI, JI, JF, SS, BS, HE, HT, POS, SI, rng, C, K):
    """Job j, just counted at priority station s, starts if a server is
    free; at a preemptive station it takes the server of the job in service
    that would be served last, if j comes before it (that job keeps its
    remaining work and waits); else j waits."""
    kind = STI[s, 0]
    JF[j, F_VFIN] = -1.0
    if SS[s, K_BUSY] < STI[s, 2]:
        SS[s, K_BUSY] += 1
        _prio_start(j, s, now, STI, STF, EMP, S, JI, JF, SS, BS, HE, HT, POS, SI, rng, C, K)
        return
    if kind != K_PRIO:
        # the job in service served last; of equals, the smallest row
        v = -1
        i = SS[s, K_ACTH]
        while i >= 0:
            if v < 0 or prio_before(v, i, kind, CLI, JI, JF) or (
                    i < v and not prio_before(i, v, kind, CLI, JI, JF)):
                v = i
            i = JI[i, J_NXT]
        if v >= 0 and prio_before(j, v, kind, CLI, JI, JF):
            e = C + K + v
            rem = HT[POS[e]] - now
            JF[v, F_VFIN] = rem if rem > 0.0 else 0.0
            heap_remove(e, HE, HT, POS, SI)
            BS[JI[v, J_CLS], s] -= 1
            share_unlink(v, s, SS, JI)
            _prio_wait(v, s, kind, False, JI, JF, SS)
            _prio_start(j, s, now, STI, STF, EMP, S, JI, JF, SS, BS, HE, HT, POS, SI, rng, C, K)
            return
    _prio_wait(j, s, kind, kind != K_LCFS_PR, JI, JF, SS)


@njit(_nrt=False, forceinline=True)
def prio_depart(j, s, now, STI, STF, EMP, S, CLI, JI, JF, SS, BS, HE, HT, POS, SI, rng, C, K):
    """Job j (served, or blocked holding its server) leaves priority
    station s: the waiting job served first (a preempted one resumes) takes
    the server."""
    BS[JI[j, J_CLS] & NN, s] -= 1
    kind = STI[s, 0]
    if kind != K_PRIO and JI[j, J_STATE] == S_SERV:
        share_unlink(j, s, SS, JI)
    if kind == K_LCFS_PR:
        ch = K_WQH
        h = SS[s, ch]
    else:
        # the first of the heads of the class lists (each the first of its
        # class): the smallest level, then the earliest arrival, then the
        # smallest row (the order of :func:`prio_before`, ties to the row,
        # with the level read from the list's class: a waiting job is in
        # the list of its own class)
        h = -1
        ch = -1
        hl = 0
        ht = 0.0
        for c in range(C):
            i = SS[s, K_PQ + 2 * c]
            if i >= 0:
                lv = CLI[c, CL_PRIO]
                ti = JF[i, F_TARR]
                if h < 0 or lv < hl or (lv == hl and (ti < ht or (ti == ht and i < h))):
                    h = i
                    ch = K_PQ + 2 * c
                    hl = lv
                    ht = ti
    if h >= 0:
        # pop h, the head of its list (tail in column ch + 1, K_WQT = K_WQH + 1)
        ch &= NN
        n = JI[h, J_NXT]
        SS[s, ch] = n
        if n >= 0:
            JI[n, J_PRV] = -1
        else:
            SS[s, ch + 1] = -1
        JI[h, J_NXT] = -1
        JI[h, J_PRV] = -1
        _prio_start(h, s, now, STI, STF, EMP, S, JI, JF, SS, BS, HE, HT, POS, SI, rng, C, K)
    else:
        SS[s, K_BUSY] -= 1


# ---------------------------------------------------------------------------
# fork-join (qmodels.model.forkjoin): a job reaching a fork-join station f
# (STI[f, 0] == KIND_FORKJOIN) forks STI[f, 7] tasks, task i entering station
# RM[f, i] (the first station of its branch); a task follows its branch by
# the routing rows of the branch stations (the last one routes to f) and
# joins at f.  A task is a job-table row with J_PAR = its parent (-1 for a
# job); the parent waits at f (state S_FORK) with J_PEND tasks to go, and
# leaves f, routed from f as after any visit, when the last one joins
# (:func:`fj_fork`, :func:`fj_join`, called from :func:`_move`).
# SI[I_FTASKS] is the largest fork (0: no fork-join, nothing here is used).
# ---------------------------------------------------------------------------

@njit(_nrt=False, forceinline=True)
def fj_short(n, JI, SI):
    """Whether the free list holds fewer than ``n`` job rows (a fork needs a
    row per task; the loop asks for room before an event that may fork).
    No walk: every row not on the free list holds a closed job (rows 0 to
    ``SI[I_NCLOSED]`` - 1), an open job (``SI[I_OPEN]``) or a task
    (``SI[I_NTASKS]``, counted by :func:`fj_fork` / :func:`fj_join`)."""
    return JI.shape[0] - SI[I_NCLOSED] - SI[I_OPEN] - SI[I_NTASKS] < n


@njit(_nrt=False, forceinline=True)
def fj_fork(j, f, now, STI, STF, EMP, S, RM, JI, JF, SS, NC, BS, SFL, ACC, HE, HT, POS, SI,
            rng, C, K, o_ev):
    """Job j reaches fork-join f: it waits at f and its tasks enter the
    first stations of their branches, in branch order.  A task entering a
    delay or FCFS station with exponential service takes the path of
    :func:`_arrive`, written out here (no call, no array passed per task);
    any other first station goes through :func:`_enter`.  Both draw the
    same uniforms in the same order (an exponential of mean 0 draws none,
    as :func:`draw`)."""
    c = JI[j, J_CLS]
    flush_station(f, now, STI, RM, SS, NC, BS, SFL, ACC, C, K)
    NC[c, f] += 1
    SS[f, K_N] += 1
    JF[j, F_TARR] = now
    JI[j, J_LOC] = f
    JI[j, J_STATE] = S_FORK
    ACC[o_ev] += 1.0
    n = STI[f, 7]
    JI[j, J_PEND] = n
    SI[I_NTASKS] += n
    for i in range(n):
        t = SI[I_FREE] & NN  # rows enough: the loop asked (fj_short)
        SI[I_FREE] = JI[t, J_NXT]
        JI[t, J_CLS] = c
        JI[t, J_PAR] = j
        JI[t, J_HELD] = 0
        JI[t, J_CYEND] = 0
        JI[t, J_NXT] = -1
        JI[t, J_PRV] = -1
        JI[t, J_LOC] = -1
        JF[t, F_TCYC] = now
        s = int(RM[f, i]) & NN
        kind = STI[s, 0]
        if kind <= 1 and STI[s, 4] == D_EXP:
            flush_station(s, now, STI, RM, SS, NC, BS, SFL, ACC, C, K)
            NC[c, s] += 1
            SS[s, K_N] += 1
            JF[t, F_TARR] = now
            JI[t, J_LOC] = s
            ACC[o_ev] += 1.0
            if kind == 0 or SS[s, K_BUSY] < STI[s, 2]:
                if kind == 1:
                    SS[s, K_BUSY] += 1
                BS[c, s] += 1
                JI[t, J_STATE] = S_SERV
                m = S[c, s]
                x = m * _exp1(rng, SI) if m > 0.0 else 0.0
                heap_set(C + K + t, now + x, HE, HT, POS, SI)
            else:
                JI[t, J_STATE] = S_WAIT
                fifo_push(t, SS, s, K_WQH, K_WQT, JI)
        else:
            _enter(t, s, now, STI, STF, EMP, S, RM, JI, JF, SS, NC, BS, SFL, ACC,
                   HE, HT, POS, SI, rng, C, K, o_ev)


@njit(_nrt=False, forceinline=True)
def fj_join(j, JI, SI):
    """Task j (its branch done) joins at its fork-join: its row goes back
    to the free list; returns its parent if it was the parent's last task
    (the parent then leaves the fork-join, routed on as after any visit),
    else -1."""
    par = JI[j, J_PAR] & NN  # a task's parent
    JI[j, J_PAR] = -1
    JI[j, J_STATE] = S_FREE
    JI[j, J_LOC] = -1
    JI[j, J_NXT] = SI[I_FREE]
    SI[I_FREE] = j
    SI[I_NTASKS] -= 1
    JI[par, J_PEND] -= 1
    if JI[par, J_PEND] > 0:
        return -1
    return par
