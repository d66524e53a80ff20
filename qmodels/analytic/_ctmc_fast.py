"""The compiled build of the exact CTMC (:mod:`qmodels.analytic.ctmc`).

For the networks whose state is a vector of small integers -- no token pool,
no capacity that can ever be reached (so no blocking and no loss), any mix of
closed and open classes, delay, PS, load-dependent, FCFS, priority
(``prio``, ``prio-pr``) and LCFS-PR stations (an order-keeping station as a
row of job slots), service phases and phase-type arrival streams -- the
reachable state space and the generator are built by one numba kernel
(:func:`_bfs`) instead of the Python breadth-first search of
:class:`~._ctmc_chain._Chain`, and the expectations under pi by a second
(:func:`_expect`).  Networks with pools or reachable capacities stay with
the Python builder.

The kernel follows the Python builder step for step: the same start state
(:meth:`_Chain.setup`), the same breadth-first order (phase ends place by
place, job types in the order the Python builder numbers them, the move to
the next phase before the completion's destinations in routing order, then
open arrivals class by class, a phase-type stream's next phase before its
arrivals), the same rate expressions evaluated in the same floating-point
order, and the rates into one target summed in the same order.  So it
numbers the states identically and yields the same generator;
``tests/test_ctmc_compiled.py`` checks this against the Python builder on
random chains.  The semantics are those of the module docstring of
:mod:`qmodels.analytic.ctmc`.

A state is a row of ``int32``: for each place (station ``k``, then the think
stage ``K``) either one count per job type that can be there (a counted
place; a job type is a class and a service phase) or ``L_k`` slots holding
``type + 1`` in the order the jobs are served, 0 when empty (an
order-keeping station, ``L_k`` the most jobs it can hold; at an FCFS or
non-preemptive priority station the jobs in service are kept sorted, their
arrival order no longer mattering), then the inter-arrival phase of each
phase-type open stream, then the number of open jobs present.  An FCFS
station that only one job type reaches is counted even where its service
has phases (kind 4, :attr:`~._ctmc_chain._Chain.compact`): a count per
phase, the count of phase 0 holding the waiting jobs too (the three-tier
model of ``benchmarks/bench_ctmc.py --ph`` at N = 30: 10 columns instead
of 92).  Where every column is a count (no order-keeping station) a state
is found again by its rank (:func:`_rank`: the combinatorial number system
of each closed chain's composition and of the open jobs', a station counted
by phase one part of it with the spread of its jobs in service over its
later phases apart, mixed radix; one look-up in a table of ranks, no row
compared; not where many servers at such a station make the ranks far
outnumber the states), else through an open-addressing hash table of their
rows.  The helpers called once per move, and the loop over the states
(:func:`_sweep`), are compiled without numba's reference counting
(:func:`_hot`).

Before any state is stored, :func:`estimate` bounds the state count from
above where it can (the ways to place each class's jobs over the places and
phases it can reach) and the bytes the build and the solve will need;
:func:`check_memory` raises :class:`~qmodels.errors.ProblemTooLargeError`
with that estimate when it passes the memory budget.
"""

from __future__ import annotations

import math
import os

import numpy as np

from .. import _jit
from .._jit import jitable
from ..errors import ProblemTooLargeError
from ._ctmc_spec import _FREE, _Spec

#: the row hash (:func:`_row_hash`): two 31-bit lanes, each a polynomial in
#: the row's columns modulo 2**31 with an odd multiplier below 2**31 (so every
#: product stays below 2**62: numba's int64 arithmetic never overflows, which
#: would be undefined behaviour its compiler exploits, and Python's integers
#: give the same hash); 1000003 and murmur2's multiplier 0x5BD1E995
_HA = 1000003
_HB = 0x5BD1E995
_M31 = (1 << 31) - 1
#: a hash-table entry holds the state's index in its low 32 bits and the top
#: 31 bits of its hash above them (a probe compares the row only where they
#: agree: one memory access fewer per probe than a separate hash array)
_LOW32 = (1 << 32) - 1


# ---------------------------------------------------------------------------
# the kernels (plain Python below lazyjit's threshold, numba above)
# ---------------------------------------------------------------------------

#: the helpers the kernels call once per move or per state, compiled without
#: numba's reference counting (``_nrt=False``): none allocates, and each
#: call of a helper compiled with it increments and decrements (atomically)
#: the count of every array it is passed, which took two thirds of the
#: build's time (perf, 230,230 states: ``lock incq`` / ``lock decq`` in
#: NRT_incref / NRT_decref)
_HOT: list = []
_hot_done = False


def _hot(func):
    """Mark ``func`` (plain Python, numba-compatible, allocating nothing)
    as a helper of the kernels compiled without reference counting (see
    :data:`_HOT`); returns ``func`` itself.  Its source file stamps the
    kernels' cache as a :func:`~qmodels._jit.jitable` helper's does."""
    _HOT.append(func)
    _jit._HELPERS.add(func)
    return func


#: the :func:`_hot` helpers numba inlines into their callers (numba's own
#: inlining, before LLVM: LLVM never inlines across the separately compiled
#: functions numba links).  A call passes each array as seven machine words
#: on the stack; the calls of :func:`_rate` and :func:`_add_station`, once
#: per slot and per station of every state, took most of :func:`_expect`'s
#: time (perf: the pushes of their arguments), and inlining them (with
#: :func:`_expect_sweep`) made it 4 times faster (0.40 to 0.09 s at 583,401
#: states) and the build 1.83 to 1.51 s, for about 3 s more compiling each
#: kernel
_INLINED: set = set()


def _hot_inlined(func):
    """:func:`_hot`, and inlined by numba where a kernel calls it
    (:data:`_INLINED`)."""
    _INLINED.add(func)
    return _hot(func)


def _register_hot() -> None:
    """Register the :func:`_hot` helpers with numba (once, before a kernel
    that calls them is compiled)."""
    global _hot_done
    if _hot_done or not _jit.HAVE_NUMBA:
        return
    from numba.extending import overload, register_jitable

    for f in _HOT:
        if f in _INLINED:
            # numba inlines a function by its typing function's signature:
            # register_jitable's is (*args, **kwargs), which it cannot, so
            # one with f's own argument names is made here
            code = f.__code__
            names = ", ".join(code.co_varnames[:code.co_argcount])
            scope = {"f": f}
            exec(f"def typer({names}):\n    return f\n", scope)
            overload(f, jit_options={"_nrt": False}, inline="always")(scope["typer"])
        else:
            register_jitable(_nrt=False)(f)
    _hot_done = True


class _HotLazy(_jit._Lazy):
    """A lazily compiled kernel (:func:`~qmodels._jit.lazyjit`) that calls
    :func:`_hot` helpers: they are registered before it compiles."""

    def compiled(self):
        _register_hot()
        return super().compiled()


def _hot_lazy(threshold: int = 20_000):
    """:func:`~qmodels._jit.lazyjit` for a kernel calling :func:`_hot`
    helpers."""
    return lambda func: _HotLazy(func, threshold)


@_hot
def _row_hash(row, D):
    """Hash of a state row, below 2**62 (:data:`_HA`): two lanes
    a = a x A + x + 1 and b = b x B + x + 1 (mod 2**31) over the columns,
    each then xor-shift-multiply mixed so that its low bits depend on
    every column; b gives the table slot (low bits), a the entry's tag
    (:data:`_LOW32`).  The lanes run side by side and no step divides:
    the modulus 2**31 - 1 the hash had before took a fifth of the build's
    time (perf, the three-tier model at 174,001 states)."""
    a = 0
    b = 0
    for i in range(D):
        x = int(row[i]) + 1
        a = (a * _HA + x) & _M31
        b = (b * _HB + x) & _M31
    a ^= a >> 15
    a = (a * _HB) & _M31
    a ^= a >> 13
    b ^= b >> 16
    b = (b * _HA) & _M31
    b ^= b >> 15
    return (a << 31) | b


@_hot
def _add_out(tj, tv, nout, j, v):
    """Add rate ``v`` into target ``j`` of the current state (first-seen
    order, as the Python builder's dict); returns the new count."""
    for q in range(nout):
        if tj[q] == j:
            tv[q] += v
            return nout
    tj[nout] = j
    tv[nout] = 0.0 + v
    return nout + 1


@_hot_inlined
def _rate(row, place, slot, ordered, off, width, colt, kind, servers, mu, zthink, mult, nmult,
          tbase):
    """The job in ``slot`` of ``place`` that may end its service phase and
    the phase's rate: ``(type, rate)``; type -1 when the slot holds no job,
    -2 when no later slot of the place can complete (ordered station: past
    the servers or the last job).  Rates as in :meth:`_Chain.completions`
    (``mu[t, k]`` the rate of the phase of type t at station k; at a
    one-class FCFS station counted by phase, kind 4, the count of phase 0
    holds the waiting jobs too, min(n, c) - (n - m_0) of them in service,
    ``tbase[t] == t`` for a phase-0 type)."""
    K = kind.shape[0]
    o = off[place]
    if ordered[place]:
        if slot >= servers[place]:
            return -2, 0.0
        v = row[o + slot]
        if v == 0:
            return -2, 0.0
        t = v - 1
        return t, mu[t, place]
    m = row[o + slot]
    if m == 0:
        return -1, 0.0
    t = colt[place, slot]
    if place == K:
        return t, m / zthink[t]
    kd = kind[place]
    if kd == 0:  # delay
        return t, m * mu[t, place]
    ntot = 0
    for u in range(width[place]):
        ntot += row[o + u]
    if kd == 4:  # one-class FCFS counted by phase
        if tbase[t] != t:
            return t, m * mu[t, place]
        a = min(ntot, int(servers[place])) - (ntot - m)
        if a <= 0:
            return -1, 0.0
        return t, a * mu[t, place]
    if kd == 1:  # FCFS kept as counts (one job type, or never queueing)
        active = min(ntot, int(servers[place]))
        return t, active * m / ntot * mu[t, place]
    if kd == 2:  # PS
        share = min(1.0, servers[place] / ntot)
        return t, m * share * mu[t, place]
    a = mult[place, min(ntot, nmult[place]) - 1]  # load-dependent
    return t, a * m / ntot * mu[t, place]


@_hot
def _find(w, D, states, hashes, table):
    """Index of the state ``w`` (or -1), its hash and its table slot (where
    it is, or the empty slot where it goes).  A table entry is the index
    with the hash's top bits as a tag (:data:`_LOW32`): the row is read
    only where the tags agree."""
    mask = table.shape[0] - 1
    h = _row_hash(w, D)
    tag = h >> 32
    s = h & mask
    while True:
        e = table[s]
        if e < 0:
            return -1, h, s
        if (e >> 32) == tag:
            c = e & _LOW32
            same = True
            for x in range(D):
                if states[c, x] != w[x]:
                    same = False
                    break
            if same:
                return c, h, s
        s = (s + 1) & mask


@_hot
def _insert(w, h, s, states, hashes, table, n):
    """Store ``w`` as state ``n`` (hash ``h``, table slot ``s``); the room
    was made beforehand (:func:`_reserve`).  Returns the new count."""
    for x in range(w.shape[0]):
        states[n, x] = w[x]
    hashes[n] = h
    table[s] = n | ((h >> 32) << 32)
    return n + 1


@jitable
def _reserve(states, hashes, table, n, room, ranked):
    """Room for ``room`` more states: the arrays grown by doubling and the
    table by 4 (rehashed) until ``n + room`` rows fit and the table stays
    at most half full; returns the (maybe new) arrays.  Called once per
    state with ``room`` the most new states one state's moves can add, so
    the helpers of a state's moves never reallocate (and return no
    arrays: a returned array costs reference counting on every move).
    A ``ranked`` build's table maps ranks and has its size already."""
    need = n + room
    if need > states.shape[0]:
        m = states.shape[0]
        while m < need:
            m *= 2
        bigger = np.zeros((m, states.shape[1]), dtype=np.int32)
        bigger[:n] = states[:n]
        states = bigger
        hb = np.zeros(m, dtype=np.int64)
        hb[:n] = hashes[:n]
        hashes = hb
    if not ranked and 2 * need > table.shape[0]:
        m = table.shape[0]
        while 2 * need > m:
            m *= 4
        table = np.full(m, -1, dtype=np.int64)
        mask = m - 1
        for c in range(n):
            h = hashes[c]
            s = h & mask
            while table[s] >= 0:
                s = (s + 1) & mask
            table[s] = c | ((h >> 32) << 32)
    return states, hashes, table


@_hot
def _canon(w, place, ordered, off, width, sortc):
    """Sort the jobs in service (the first min(n, c) slots) of an
    order-keeping FCFS or non-preemptive priority place (``sortc[place]``
    = c > 1), the canonical order of :meth:`_Chain.freeze`."""
    if place < 0 or not ordered[place] or sortc[place] < 2:
        return
    o = off[place]
    h = 0
    while h < sortc[place] and h < width[place] and w[o + h] != 0:
        h += 1
    for x in range(1, h):
        v = w[o + x]
        y = x - 1
        while y >= 0 and w[o + y] > v:
            w[o + y + 1] = w[o + y]
            y -= 1
        w[o + y + 1] = v


@_hot
def _enter(w, d, t, ordered, off, width, tcol, disc, servers, tlevel, nopen_at):
    """Job of type t goes to place d (-1: leaves the network); at an
    order-keeping place where its queue order puts it (as
    :meth:`_Chain._insert`: at the end (FCFS), after the waiting jobs of
    its level or higher (prio), after every job of its level or higher
    (prio-pr), at the head (LCFS-PR))."""
    if d < 0:
        w[nopen_at] -= 1
    elif ordered[d]:
        o = off[d]
        n = 0
        while n < width[d] and w[o + n] != 0:
            n += 1
        ds = disc[d]
        if ds == 0:
            pos = n
        elif ds == 3:
            pos = 0
        else:
            lo = int(servers[d]) if ds == 1 else 0
            pos = n
            lv = tlevel[t]
            while pos > lo and tlevel[w[o + pos - 1] - 1] > lv:
                pos -= 1
        for x in range(n, pos, -1):
            w[o + x] = w[o + x - 1]
        w[o + pos] = t + 1
    else:
        w[off[d] + tcol[d, t]] += 1


@_hot
def _rank(w, rgrp, rbar, rstride, binom, acc, rgrp2, rbar2):
    """The rank of state ``w`` in the ranked layout (:meth:`_Layout._ranking`):
    per group of columns (a closed chain's counts, summing to its
    population; the open classes' counts, summing to at most the open-job
    bound; the counts in the phases past the first at a one-class FCFS
    station counted by phase, summing to at most its servers) the
    combinatorial number system of its composition, bars at the running
    sums s_i, sum_i C(s_i + i - 1, i) (Knuth, *TAOCP* vol. 4A, sec.
    7.2.1.3, eq. (3): a bijection of the compositions of N into m parts
    onto 0 .. C(N + m - 1, m - 1) - 1); an arrival-phase column is a digit
    of its own; the groups' ranks mixed-radix (``rstride``).  A column is
    in at most two groups (``rgrp2``, ``rbar2``: a phase column of such a
    station is also in its chain's group, where the station's columns
    together are one part)."""
    for g in range(acc.shape[0]):
        acc[g] = 0
    r = 0
    for x in range(rgrp.shape[0]):
        g = rgrp[x]
        if g < 0:
            continue
        b = rbar[x]
        if b < 0:  # a digit of its own
            r += w[x] * rstride[g]
            continue
        acc[g] += w[x]
        if b > 0:
            r += binom[acc[g] + b - 1, b] * rstride[g]
        g = rgrp2[x]
        if g >= 0:
            b = rbar2[x]
            acc[g] += w[x]
            r += binom[acc[g] + b - 1, b] * rstride[g]
    return r


@_hot
def _target(w, D, states, hashes, table, n, max_states, rk, binom):
    """Index of state ``w``, added if new (room reserved): ``(j, n)``; j =
    -1 when it is new and ``max_states`` are stored already.  Found by its
    rank (``table`` then maps ranks to indices: one random access, no row
    compared) where the layout is ranked, else through the hash table."""
    if rk[0].shape[0] > 0:
        r = _rank(w, rk[0], rk[1], rk[2], binom, rk[3], rk[4], rk[5])
        j = table[r]
        if j >= 0:
            return j, n
        if n >= max_states:
            return -1, n
        for x in range(D):
            states[n, x] = w[x]
        table[r] = n
        return n, n + 1
    j, h, s = _find(w, D, states, hashes, table)
    if j >= 0:
        return j, n
    if n >= max_states:
        return -1, n
    return n, _insert(w, h, s, states, hashes, table, n)


@_hot
def _leave(w, row, place, slot, t, ordered, off, width, tcol):
    """``w`` = ``row`` with the job of type t in ``slot`` of ``place`` gone
    (at an order-keeping station the jobs behind it move up)."""
    for x in range(row.shape[0]):
        w[x] = row[x]
    o = off[place]
    if ordered[place]:
        for x in range(o + slot, o + width[place] - 1):
            w[x] = w[x + 1]
        w[o + width[place] - 1] = 0
    else:
        w[o + tcol[place, t]] -= 1


@_hot
def _advance(w, row, place, slot, t, t1, ordered, off, tcol):
    """``w`` = ``row`` with the job of type t in ``slot`` of ``place`` on
    to its next phase (type t1)."""
    for x in range(row.shape[0]):
        w[x] = row[x]
    o = off[place]
    if ordered[place]:
        w[o + slot] = t1 + 1
    else:
        w[o + tcol[place, t]] -= 1
        w[o + tcol[place, t1]] += 1


@jitable
def _grow(rows, cols, vals, nnz, room):
    """The triplet arrays with room for ``room`` more entries after the
    first ``nnz`` (doubled until they fit): ``(rows, cols, vals)``."""
    if nnz + room <= rows.shape[0]:
        return rows, cols, vals
    m = rows.shape[0]
    while m < nnz + room:
        m *= 2
    r2 = np.zeros(m, dtype=np.int32)
    c2 = np.zeros(m, dtype=np.int32)
    v2 = np.zeros(m, dtype=np.float64)
    r2[:nnz] = rows[:nnz]
    c2[:nnz] = cols[:nnz]
    v2[:nnz] = vals[:nnz]
    return r2, c2, v2


@_hot
def _move(w, i, v, D, states, hashes, table, n, max_states, tj, tv, nout, rk, binom):
    """Rate ``v`` from state i into state ``w`` (added if new; rates into
    one target summed in first-seen order, a move back into i dropped; the
    room in the arrays and in ``tj``/``tv`` reserved by :func:`_bfs`):
    ``(status, n, nout)``, status 1 when a new state would pass
    ``max_states``."""
    j, n = _target(w, D, states, hashes, table, n, max_states, rk, binom)
    if j < 0:
        return 1, n, nout
    if j != i:
        nout = _add_out(tj, tv, nout, j, v)
    return 0, n, nout


@_hot
def _service_moves(i, w, D, states, hashes, table, n, max_states, tj, tv, nout, ordered, off,
                   width, colt, tcol, disc, sortc, kind, servers, mu, tq, tnext, tbase, tlevel,
                   zthink, mult, nmult, rptr, rdest, rprob, rtype, rk, binom):
    """The moves of state i when a service phase ends, place by place, slot
    by slot (as :meth:`_Chain._completion_moves`): on to the next phase
    with probability q, else done and routed (entry e to place
    ``rdest[e]`` as the phase-0 type ``rtype[e]``: of the job's own class,
    or of the class the routing switches it to)."""
    K = kind.shape[0]
    nopen_at = D - 1
    for place in range(K + 1):
        for slot in range(width[place]):
            t, rate = _rate(states[i], place, slot, ordered, off, width, colt, kind,
                            servers, mu, zthink, mult, nmult, tbase)
            if t == -2:
                break
            if t < 0:
                continue
            q = 0.0 if place == K else tq[t, place]
            if q > 0.0:  # on to the next phase
                _advance(w, states[i], place, slot, t, tnext[t], ordered, off, tcol)
                _canon(w, place, ordered, off, width, sortc)
                bad, n, nout = _move(
                    w, i, rate * q, D, states, hashes, table, n, max_states, tj, tv, nout, rk,
                    binom)
                if bad:
                    return 1, n, nout
            if q >= 1.0:
                continue
            done = rate * (1.0 - q)
            for e in range(rptr[t * (K + 1) + place], rptr[t * (K + 1) + place + 1]):
                _leave(w, states[i], place, slot, t, ordered, off, width, tcol)
                _canon(w, place, ordered, off, width, sortc)
                _enter(w, rdest[e], rtype[e], ordered, off, width, tcol, disc, servers,
                       tlevel, nopen_at)
                _canon(w, rdest[e], ordered, off, width, sortc)
                bad, n, nout = _move(
                    w, i, done * rprob[e], D, states, hashes, table, n, max_states, tj, tv,
                    nout, rk, binom)
                if bad:
                    return 1, n, nout
    return 0, n, nout


@_hot
def _arrival_moves(i, w, D, states, hashes, table, n, max_states, tj, tv, nout, ordered, off,
                   width, tcol, disc, sortc, servers, tlevel, gptr, gcol, glam, ghid, garr,
                   acls, adest, aprob, open_limit, rk, binom):
    """The moves of state i by open arrivals, class by class (as
    :meth:`_Chain._arrival_moves`): a phased stream (a Markovian arrival
    process) to another phase without an arrival (``ghid[g, ph, j]`` > 0,
    in ascending j), or an arrival that starts the next interval in phase
    j (``garr[g, ph, j]`` >= 0, a negative entry meaning none), turned
    away at the open-job bound or passing through to the sink."""
    nopen_at = D - 1
    mp = garr.shape[2]
    for g in range(gcol.shape[0]):
        col = gcol[g]
        if col < 0:  # a Poisson stream
            done = glam[g]
            for a in range(gptr[g], gptr[g + 1]):
                for x in range(D):
                    w[x] = states[i, x]
                if states[i, nopen_at] >= open_limit or adest[a] < 0:
                    continue  # turned away by the truncation, or passing through
                w[nopen_at] += 1
                _enter(w, adest[a], acls[a], ordered, off, width, tcol, disc, servers, tlevel,
                       nopen_at)
                _canon(w, adest[a], ordered, off, width, sortc)
                bad, n, nout = _move(
                    w, i, done * aprob[a], D, states, hashes, table, n, max_states, tj, tv,
                    nout, rk, binom)
                if bad:
                    return 1, n, nout
            continue
        ph = states[i, col]
        for j in range(mp):
            v = ghid[g, ph, j]
            if v > 0.0:
                for x in range(D):
                    w[x] = states[i, x]
                w[col] = j
                bad, n, nout = _move(
                    w, i, v, D, states, hashes, table, n, max_states, tj, tv, nout, rk, binom)
                if bad:
                    return 1, n, nout
        for j in range(mp):
            done = garr[g, ph, j]
            if done < 0.0:
                continue
            for a in range(gptr[g], gptr[g + 1]):
                for x in range(D):
                    w[x] = states[i, x]
                if states[i, nopen_at] >= open_limit or adest[a] < 0:
                    # turned away by the truncation, or passing through
                    if ph == j:
                        continue
                else:
                    w[nopen_at] += 1
                    _enter(w, adest[a], acls[a], ordered, off, width, tcol, disc, servers,
                           tlevel, nopen_at)
                    _canon(w, adest[a], ordered, off, width, sortc)
                w[col] = j
                bad, n, nout = _move(
                    w, i, done * aprob[a], D, states, hashes, table, n, max_states, tj, tv,
                    nout, rk, binom)
                if bad:
                    return 1, n, nout
    return 0, n, nout


@_hot
def _sweep(i, n, nnz, room, ranked, w, D, states, hashes, table, max_states, tj, tv, rows,
           cols, vals, ordered, off, width, colt, tcol, disc, sortc, kind, servers, mu, tq,
           tnext, tbase, tlevel, zthink, mult, nmult, rptr, rdest, rprob, rtype, gptr, gcol,
           glam, ghid, garr, acls, adest, aprob, open_limit, rk, binom):
    """The moves of states i, i + 1, ... in turn (:func:`_service_moves`,
    :func:`_arrival_moves`), their summed targets appended to the
    triplets, until every state met is done (status 0), a new state would
    pass ``max_states`` (status 1) or the arrays may lack the room of one
    more state's moves (status 2: :func:`_bfs` makes room and calls again).
    Returns ``(i, n, nnz, status)``.

    One call per batch of states, not per state: :func:`_bfs` is compiled
    with reference counting, and its calls of the move helpers with their
    three dozen arrays incremented and decremented each array's count
    (atomically) for every state: a fifth of the build's time (perf,
    three-tier model of 174,001 states)."""
    while i < n:
        if (n + room > states.shape[0] or nnz + room > rows.shape[0]
                or (not ranked and 2 * (n + room) > table.shape[0])):
            return i, n, nnz, 2
        bad, n, nout = _service_moves(
            i, w, D, states, hashes, table, n, max_states, tj, tv, 0, ordered, off, width,
            colt, tcol, disc, sortc, kind, servers, mu, tq, tnext, tbase, tlevel, zthink, mult,
            nmult, rptr, rdest, rprob, rtype, rk, binom)
        if bad:
            return i, n, nnz, 1
        bad, n, nout = _arrival_moves(
            i, w, D, states, hashes, table, n, max_states, tj, tv, nout, ordered, off, width,
            tcol, disc, sortc, servers, tlevel, gptr, gcol, glam, ghid, garr, acls, adest,
            aprob, open_limit, rk, binom)
        if bad:
            return i, n, nnz, 1
        for q in range(nout):
            rows[nnz] = i
            cols[nnz] = tj[q]
            vals[nnz] = tv[q]
            nnz += 1
        i += 1
    return i, n, nnz, 0


@_hot_lazy(threshold=20_000)
def _bfs(start, ordered, off, width, colt, tcol, disc, sortc, kind, servers, mu, tq, tnext,
         tbase, tlevel, zthink, mult, nmult, rptr, rdest, rprob, rtype, gptr, gcol, glam, ghid,
         garr, acls, adest, aprob, open_limit, max_states, rk, binom, rsize):
    """Breadth-first construction of the reachable states and the
    off-diagonal rates (see the module docstring; the arrays are those of
    :class:`_Layout`).

    Returns ``(states, n, rows, cols, vals, nnz, status)``: the first ``n``
    rows of ``states`` and the first ``nnz`` triplets are the chain;
    ``status`` 0, or 1 when more than ``max_states`` states were met.
    Where the layout is ranked (``rk``, ``binom``: :meth:`_Layout._ranking`)
    a state is found by its rank in a table of ``rsize`` entries, else by
    hashing its row."""
    D = start.shape[0]
    K = kind.shape[0]
    # the most moves (so new states and targets) one state can have: per
    # slot of each place, a phase's advance and every route of the most
    # routed job type there; per arrival stream, its advance and arrivals
    room = 1
    for place in range(K + 1):
        most = 0
        for t in range(tbase.shape[0]):
            most = max(most, rptr[t * (K + 1) + place + 1] - rptr[t * (K + 1) + place])
        room += width[place] * (1 + most)
    for g in range(gcol.shape[0]):
        most = 1 + gptr[g + 1] - gptr[g]
        for ph in range(garr.shape[1]):
            k = 0
            for j in range(garr.shape[2]):
                if ghid[g, ph, j] > 0.0:
                    k += 1
                if garr[g, ph, j] >= 0.0:
                    k += gptr[g + 1] - gptr[g]
            most = max(most, k)
        room += most
    ranked = rk[0].shape[0] > 0
    states = np.zeros((1024, D), dtype=np.int32)
    hashes = np.zeros(1024, dtype=np.int64)
    table = np.full(rsize if ranked else 4096, -1, dtype=np.int64)
    rows = np.zeros(8192, dtype=np.int32)
    cols = np.zeros(8192, dtype=np.int32)
    vals = np.zeros(8192, dtype=np.float64)
    nnz = 0
    states, hashes, table = _reserve(states, hashes, table, 0, room, ranked)
    j, n = _target(start, D, states, hashes, table, 0, 1, rk, binom)
    # targets of the current state, rates summed in first-seen order
    tj = np.zeros(room, dtype=np.int64)
    tv = np.zeros(room, dtype=np.float64)
    w = np.zeros(D, dtype=np.int32)
    i = 0
    while True:
        # room for the next states' moves; the sweep stops where it runs out
        states, hashes, table = _reserve(states, hashes, table, n, room, ranked)
        rows, cols, vals = _grow(rows, cols, vals, nnz, room)
        i, n, nnz, status = _sweep(
            i, n, nnz, room, ranked, w, D, states, hashes, table, max_states, tj, tv, rows,
            cols, vals, ordered, off, width, colt, tcol, disc, sortc, kind, servers, mu, tq,
            tnext, tbase, tlevel, zthink, mult, nmult, rptr, rdest, rprob, rtype, gptr, gcol,
            glam, ghid, garr, acls, adest, aprob, open_limit, rk, binom)
        if status != 2:
            return states, n, rows, cols, vals, nnz, status


@_jit.lazyjit(threshold=20_000)
def _transposed(n, rows, cols, vals, out):
    """Q^T in CSR, ``(indptr, indices, data)``, from a build's off-diagonal
    rates (the triplets of :func:`_bfs`: grouped by source state in
    ascending order, one entry per target, none into the source itself)
    and the rates out of each state (the diagonal is -out): a counting
    sort by target.  Returns ``(ok, indptr, indices, data)``, ok False
    where the triplets are not grouped so (an entry left unread).  Row j
    of Q^T receives its entries in ascending source order, the diagonal
    among them at source j, so the indices come out sorted and without
    duplicates (SciPy's canonical format) with no sort: 0.36 s at
    1,005,937 states, where concatenating the diagonal to the triplets and
    SciPy's conversion took 0.65 s."""
    nnz = rows.shape[0]
    indptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(nnz):
        indptr[cols[e] + 1] += 1
    for j in range(n):
        indptr[j + 1] += indptr[j] + 1
    pos = indptr[:n].copy()
    indices = np.empty(nnz + n, dtype=np.int32)
    data = np.empty(nnz + n, dtype=np.float64)
    e = 0
    for i in range(n):
        while e < nnz and rows[e] == i:
            c = cols[e]
            q = pos[c]
            indices[q] = i
            data[q] = vals[e]
            pos[c] = q + 1
            e += 1
        q = pos[i]
        indices[q] = i
        data[q] = -out[i]
        pos[i] = q + 1
    return e == nnz, indptr, indices, data


@_hot_inlined
def _add_station(row, k, p, ordered, off, width, colt, tclass, kind, servers, Q, held):
    """Add p x (jobs per class) to ``Q[:, k]`` and p x (servers held per
    class) to ``held[:, k]`` (as :func:`~qmodels.analytic.ctmc._add_places`
    and ``_held_servers`` do); returns the jobs at k."""
    o = off[k]
    tot = 0
    if ordered[k]:
        for slot in range(width[k]):
            v = row[o + slot]
            if v == 0:
                break
            Q[tclass[v - 1], k] += p * 1
            tot += 1
        for slot in range(min(tot, int(servers[k]))):
            held[tclass[row[o + slot] - 1], k] += p
        return tot
    for u in range(width[k]):
        m = row[o + u]
        if m > 0:
            Q[tclass[colt[k, u]], k] += p * m
            tot += m
    if tot == 0:
        return 0
    kd = kind[k]
    for u in range(width[k]):
        m = row[o + u]
        if m == 0:
            continue
        r = tclass[colt[k, u]]
        if kd == 0 or kd == 3:  # delay, load-dependent
            held[r, k] += p * m
        elif kd == 1 or kd == 4:  # FCFS kept as counts (one class at kind 4)
            held[r, k] += p * m * min(tot, int(servers[k])) / tot
        else:  # PS
            held[r, k] += p * m * min(1.0, servers[k] / tot)
    return tot


@_hot
def _expect_sweep(states, n, pi, ordered, off, width, colt, tclass, C, kind, servers, mu, tq,
                  zthink, mult, nmult, gptr, gcol, glam, ghid, garr, aclass, aprob, open_limit,
                  truncating, tbase, Q, X, held, p_empty, marg, seen, trunc, tr):
    """The state-by-state loop of :func:`_expect`, adding into its arrays;
    returns the truncation mass.  Compiled without reference counting (as
    :func:`_sweep` for the build), so that the helpers inlined here
    (:data:`_INLINED`) count none either."""
    K = kind.shape[0]
    D = states.shape[1]
    trunc_mass = 0.0
    for i in range(n):
        p = pi[i]
        row = states[i]
        for k in range(K):
            tot = _add_station(row, k, p, ordered, off, width, colt, tclass, kind, servers,
                               Q, held)
            marg[k, tot] += p
            seen[k, tot] = True
            if tot == 0:
                p_empty[k] += p
        for place in range(K):
            for slot in range(width[place]):
                t, rate = _rate(row, place, slot, ordered, off, width, colt, kind, servers, mu,
                                zthink, mult, nmult, tbase)
                if t == -2:
                    break
                if t >= 0:
                    X[tclass[t], place] += p * (rate * (1.0 - tq[t, place]))
        if row[D - 1] >= open_limit:
            for r in range(C):
                tr[r] = 0.0
            for g in range(gcol.shape[0]):
                col = gcol[g]
                if col >= 0:
                    ph = row[col]
                    done = 0.0
                    for j in range(garr.shape[2]):
                        if garr[g, ph, j] >= 0.0:
                            done += garr[g, ph, j]
                else:
                    done = glam[g]
                for a in range(gptr[g], gptr[g + 1]):
                    tr[aclass[a]] += done * aprob[a]
            for r in range(C):
                trunc[r] += p * tr[r]
            if truncating:
                trunc_mass += p
    return trunc_mass


@_hot_lazy(threshold=20_000)
def _expect(states, n, pi, ordered, off, width, colt, tclass, C, kind, servers, mu, tq, zthink,
            mult, nmult, gptr, gcol, glam, ghid, garr, aclass, aprob, open_limit, truncating,
            top, tbase):
    """Expectations under pi of the figures of :func:`ctmc`, state by state
    in the order of :func:`~qmodels.analytic.ctmc._expectations` (so the
    sums are the same): queue lengths, completion rates (the rate at which
    a job's last phase ends), servers held, P(empty), the marginals
    (``marg[k, n]``, with ``seen[k, n]`` where some state has n jobs at k),
    arrivals turned away, truncation mass."""
    K = kind.shape[0]
    Q = np.zeros((C, K))
    X = np.zeros((C, K))
    held = np.zeros((C, K))
    p_empty = np.zeros(K)
    marg = np.zeros((K, top + 1))
    seen = np.zeros((K, top + 1), dtype=np.bool_)
    trunc = np.zeros(C)
    tr = np.zeros(C)
    trunc_mass = _expect_sweep(states, n, pi, ordered, off, width, colt, tclass, C, kind,
                               servers, mu, tq, zthink, mult, nmult, gptr, gcol, glam, ghid,
                               garr, aclass, aprob, open_limit, truncating, tbase, Q, X, held,
                               p_empty, marg, seen, trunc, tr)
    return Q, X, held, p_empty, marg, seen, trunc, trunc_mass


# ---------------------------------------------------------------------------
# the layout of a network's states
# ---------------------------------------------------------------------------

class _Layout:
    """The arrays the kernels read (see the module docstring): per place
    ``ordered``, ``off`` (first column), ``width`` (slots of an ordered
    place, else the job types that can be there), ``colt[place, u]`` the
    type counted in column u of a counted place and ``tcol[place, t]`` its
    column (-1: none), ``disc`` (where a job joins an ordered place: 0 the
    end, 1 after the waiting jobs of its level or higher, 2 after every job
    of its level or higher, 3 the head) and ``sortc`` (c > 1 where the jobs
    in service are kept sorted, else 0); per station ``kind``, ``servers``
    (inf for a delay), the load-dependent multipliers ``mult`` (padded) and
    their count ``nmult``; per job type (class, phase) ``tclass``,
    ``tlevel`` (priority), ``mu[t, k]`` (the rate of its phase at k),
    ``tq[t, k]`` (the probability of a next phase), ``tnext[t]`` (the type
    of that phase), ``tbase[t]`` (its class's phase-0 type) and
    ``zthink[t]``; the routing as rows ``rptr[t * (K + 1) + place]`` into
    ``rdest`` (-1 the sink, K the think stage), ``rprob`` and ``rtype`` (the
    phase-0 type the job enters as: its own class's, or under class
    switching the class's it goes on as); the open
    arrivals by class (group g: entries ``gptr[g]`` to ``gptr[g + 1]``,
    ``gcol[g]`` the column of the inter-arrival phase, -1 for a Poisson
    stream of rate ``glam[g]``; a phased stream's moves as a Markovian
    arrival process, ``ghid[g]`` its hidden phase changes (D0 off the
    diagonal) and ``garr[g]`` its arrivals (D1, -1 where none)), per entry ``acls`` (type),
    ``aclass``, ``adest``, ``aprob``; ``start``, the first state."""

    def __init__(self, spec: _Spec, chain, start):
        K = spec.K
        # job types numbered as the Python builder numbers them (at setup:
        # every phase of every class that can be present)
        types = spec.types
        T = len(types)
        self.T = T
        self.tclass = np.array([r for r, _, _ in types], dtype=np.int64)
        self.tlevel = np.array([spec.level[r] for r, _, _ in types], dtype=np.int64)
        tidx = {(r, ph): t for t, (r, _, ph) in enumerate(types)}
        self.tnext = np.array([tidx.get((r, ph + 1), -1) for r, _, ph in types], dtype=np.int64)
        self.tbase = np.array([tidx[(r, 0)] for r, _, _ in types], dtype=np.int64)
        most = sum(spec.pop) + (spec.open_limit if spec.truncating else 0)
        self.ordered = np.array(chain.ordered, dtype=np.bool_)
        self._columns(spec, chain, types, most)
        # station kinds; 4: a one-class FCFS station with phases kept as
        # counts per phase (:attr:`_Chain.compact`)
        self.kind = np.array([4 if chain.compact[k] else spec.kind[k] for k in range(K)],
                             dtype=np.int64)
        self.disc = np.array(spec.order + [0], dtype=np.int64)
        self.sortc = np.array([int(spec.c[k]) if chain.sorted_head[k] else 0
                               for k in range(K + 1)], dtype=np.int64)
        self.servers = np.array([float(c) for c in spec.c], dtype=np.float64)
        ml = max([len(m) for m in spec.mult if m is not None] + [1])
        self.mult = np.ones((K, ml))
        self.nmult = np.ones(K, dtype=np.int64)
        for k, m in enumerate(spec.mult):
            if m is not None:
                self.mult[k, : len(m)] = m
                self.nmult[k] = len(m)
        self.mu = np.zeros((T, K))
        self.tq = np.zeros((T, K))
        for t, (r, _, ph) in enumerate(types):
            for k in range(K):
                if ph < len(spec.phr[r][k]):
                    self.mu[t, k] = spec.phr[r][k][ph]
                    self.tq[t, k] = spec.phq[r][k][ph]
        self.zthink = np.array([spec.Z[r] for r in self.tclass], dtype=np.float64)
        ptr, dest, prob, rtype = [0], [], [], []
        for r in self.tclass:
            for place in range(K + 1):
                for d, p, s in spec.route[r][place]:
                    dest.append(-1 if d < 0 else d)
                    prob.append(float(p))
                    rtype.append(tidx.get((s, 0), -1))
                ptr.append(len(dest))
        self.rptr = np.array(ptr, dtype=np.int64)
        self.rdest = np.array(dest, dtype=np.int64)
        self.rprob = np.array(prob, dtype=np.float64)
        self.rtype = np.array(rtype, dtype=np.int64)
        self._arrivals(spec, tidx)
        self.open_limit = int(spec.open_limit) if spec.truncating else 2**62
        self.start = self.encode(start)
        self.most = int(min(most, 2**31 - 1))
        self._ranking(spec)

    def _columns(self, spec, chain, types, most):
        """Widths, offsets and the type columns of the counted places: at
        station k the phases of the classes that visit it, at the think
        stage the classes that think."""
        K = spec.K
        T = len(types)
        width = []
        cols = []
        for k in range(K + 1):
            if chain.ordered[k]:
                width.append(int(min(spec.cap[k], most)))
                cols.append([])
                continue
            if k == K:
                here = [t for t, (r, _, ph) in enumerate(types) if ph == 0 and spec.Z[r] > 0]
            else:
                here = [t for t, (r, _, ph) in enumerate(types)
                        if spec.V[r, k] > 0 and ph < len(spec.phr[r][k])]
            width.append(len(here))
            cols.append(here)
        self.width = np.array(width, dtype=np.int64)
        self.colt = np.zeros((K + 1, max(max(len(c) for c in cols), 1)), dtype=np.int64)
        self.tcol = np.full((K + 1, max(T, 1)), -1, dtype=np.int64)
        for k, here in enumerate(cols):
            for u, t in enumerate(here):
                self.colt[k, u] = t
                self.tcol[k, t] = u
        self.off = np.concatenate(([0], np.cumsum(self.width)[:-1])).astype(np.int64)
        self.A = len(spec.arr_phased)
        self.off_arr = int(self.width.sum())
        self.D = self.off_arr + self.A + 1

    def _ranking(self, spec):
        """The ranked layout, where no station keeps the order of its jobs
        (every column a count): the columns in groups, one per closed
        routing chain (its jobs' counts: a composition of its population
        over the group's m parts, m - 1 bars, the last part none) and one
        for the open classes together (a composition of at most the
        open-job bound: a bar after every part, the slack the last part),
        each arrival phase a digit of its own; the open-job count (the last
        column) follows from the others.  A part is a column, except at a
        one-class FCFS station counted by phase (kind 4), whose columns
        together are one part (its jobs) and whose phases past the first
        make a group of their own: at most c jobs are in them (a
        composition of at most c, a bar after every column).  ``rgrp[x]``
        the group of column x (-1: none), ``rbar[x]`` its bar (1-based; 0
        none; -1 a digit), ``rgrp2``/``rbar2`` its second group (a kind-4
        phase column's) or -1, ``rstride`` the groups' mixed-radix
        weights, ``binom[a, i]`` = C(a, i), ``rsize`` the ranks' count (a
        Python int: the product of C(N + B, B) over the groups of B bars
        and N jobs, and of the phase counts).  Ranks then number a
        superset of the reachable states, the count :func:`estimate`
        bounds them by, but for the states it cannot reach (a kind-4
        station with fewer than c jobs and its c-job phase spreads); the
        layout is ranked only if the ranks are at most :data:`RANK_SLACK`
        times the states :func:`estimate` counts (the three-tier model of
        ``benchmarks/bench_ctmc.py --ph`` at N = 72: 1,080,400 ranks for
        1,005,937 states)."""
        self.rsize = 0
        if self.ordered.any() or (any(spec.is_open) and not spec.truncating):
            return
        D = self.D
        rgrp = np.full(D, -1, dtype=np.int64)
        rbar = np.zeros(D, dtype=np.int64)
        rgrp2 = np.full(D, -1, dtype=np.int64)
        rbar2 = np.zeros(D, dtype=np.int64)
        key_of: dict = {}
        totals: list[int] = []
        bars: list[int] = []
        digit: list[bool] = []
        opened: list[bool] = []
        parts_of: list[list[list[int]]] = []
        for k in range(len(self.width)):
            counted_by_phase = k < len(self.kind) and self.kind[k] == 4
            for u in range(int(self.width[k])):
                t = int(self.colt[k, u])
                h = spec.chain_of[int(self.tclass[t])]
                key = "open" if spec.is_open[spec.chains[h][0]] else h
                if key not in key_of:
                    key_of[key] = len(totals)
                    totals.append(int(spec.open_limit) if key == "open"
                                  else int(spec.chain_pop[h]))
                    opened.append(key == "open")
                    digit.append(False)
                    parts_of.append([])
                x = int(self.off[k]) + u
                if counted_by_phase and u > 0:
                    parts_of[key_of[key]][-1].append(x)  # the station's part
                else:
                    parts_of[key_of[key]].append([x])
        for g, parts in enumerate(parts_of):
            b = len(parts) if opened[g] else len(parts) - 1
            bars.append(b)
            for i, cols in enumerate(parts):
                for x in cols:
                    rgrp[x] = g
                rbar[cols[-1]] = i + 1 if i < b else 0
        for k in range(len(self.kind)):
            if self.kind[k] != 4 or self.width[k] < 2:
                continue
            g = len(totals)
            totals.append(int(spec.c[k]))
            bars.append(int(self.width[k]) - 1)
            digit.append(False)
            for u in range(1, int(self.width[k])):
                rgrp2[int(self.off[k]) + u] = g
                rbar2[int(self.off[k]) + u] = u
        for a, r in enumerate(spec.arr_phased):
            x = self.off_arr + a
            rgrp[x] = len(totals)
            rbar[x] = -1
            totals.append(len(spec.arr_map[r][0]))
            bars.append(0)
            digit.append(True)
        size = 1
        strides = []
        for g in range(len(totals)):
            strides.append(size)
            size *= totals[g] if digit[g] else math.comb(totals[g] + bars[g], bars[g])
        if (self.kind == 4).any() and size > RANK_SLACK * max(_count(spec, self, size)[0], 1024):
            return  # (many servers: up to C(c + P - 1, P - 1) phase spreads)
        top_b = max(bars + [1])
        top_a = max([totals[g] + bars[g] for g in range(len(totals)) if not digit[g]] + [1])
        binom = np.zeros((top_a + 1, top_b + 1), dtype=np.int64)
        for a_ in range(top_a + 1):
            for i in range(top_b + 1):
                binom[a_, i] = min(math.comb(a_, i), 2**62)
        self.rgrp, self.rbar, self.binom = rgrp, rbar, binom
        self.rgrp2, self.rbar2 = rgrp2, rbar2
        self.rstride = np.array([min(x, 2**62) for x in strides], dtype=np.int64)
        self.rsize = size

    def ranked(self, max_states: int) -> bool:
        """Whether the build finds states by rank: a ranked layout whose
        ranks number at most :data:`RANK_SLACK` x ``max_states`` (the
        table of ranks is then at most that many 8-byte entries)."""
        return 0 < self.rsize <= RANK_SLACK * max(int(max_states), 1024)

    def rank_args(self, max_states: int):
        """(rk, binom, rsize) for :func:`_bfs`: the ranking, or empty arrays
        (then states are hashed)."""
        if not self.ranked(max_states):
            e = np.zeros(0, dtype=np.int64)
            return (e, e, e, e, e, e), np.zeros((1, 1), dtype=np.int64), 0
        acc = np.zeros(len(self.rstride), dtype=np.int64)
        return ((self.rgrp, self.rbar, self.rstride, acc, self.rgrp2, self.rbar2), self.binom,
                int(self.rsize))

    def _arrivals(self, spec, tidx):
        """The open arrivals by class (see the class docstring)."""
        gptr, gcol, glam, moves = [0], [], [], []
        aclass, acls, adest, aprob = [], [], [], []
        for r in range(spec.C):
            if not spec.is_open[r]:
                continue
            mv = spec.arr_map[r]
            gcol.append(-1 if mv is None else self.off_arr + spec.arr_phased.index(r))
            glam.append(float(spec.lam[r]))
            moves.append(mv)
            for d, p in spec.source[r]:
                aclass.append(r)
                acls.append(tidx.get((r, 0), -1))
                adest.append(d)
                aprob.append(float(p))
            gptr.append(len(aclass))
        mp = max([len(mv[0]) for mv in moves if mv is not None] + [1])
        self.gptr = np.array(gptr, dtype=np.int64)
        self.gcol = np.array(gcol, dtype=np.int64)
        self.glam = np.array(glam, dtype=np.float64)
        # ghid[g, i, j] the rate of stream g's phase change i -> j without an
        # arrival (0: none); garr[g, i, j] that of an arrival in phase i after
        # which the next interval starts in phase j (-1: none; a Coxian's
        # arrival of rate 0 is kept as a move, as the Python builder makes it)
        self.ghid = np.zeros((len(gcol), mp, mp))
        self.garr = np.full((len(gcol), mp, mp), -1.0)
        for g, mv in enumerate(moves):
            if mv is None:
                continue
            for i, (hid, arr) in enumerate(zip(mv[0], mv[1], strict=True)):
                for j, v in hid:
                    self.ghid[g, i, j] = v
                for j, v in arr:
                    self.garr[g, i, j] = v
        self.aclass = np.array(aclass, dtype=np.int64)
        self.acls = np.array(acls, dtype=np.int64)
        self.adest = np.array(adest, dtype=np.int64)
        self.aprob = np.array(aprob, dtype=np.float64)

    def encode(self, st) -> np.ndarray:
        """The row of a state of the Python builder (``_Chain`` form)."""
        row = np.zeros(self.D, dtype=np.int32)
        for k, p in enumerate(st[0]):
            o = self.off[k]
            if self.ordered[k]:
                for x, (t, _) in enumerate(p):
                    row[o + x] = t + 1
            else:
                for t, _, m in p:
                    row[o + self.tcol[k, t]] = m
        for a, ph in enumerate(st[5]):
            row[self.off_arr + a] = ph
        row[-1] = st[4]
        return row

    def decode(self, row) -> tuple:
        """The ``_Chain`` form of a row (for messages and tests)."""
        places = []
        for k in range(len(self.width)):
            o, wd = self.off[k], self.width[k]
            if self.ordered[k]:
                places.append(tuple((int(v) - 1, _FREE) for v in row[o:o + wd] if v > 0))
            else:
                places.append(tuple((int(self.colt[k, u]), _FREE, int(row[o + u]))
                                    for u in range(wd) if row[o + u] > 0))
        K = len(self.kind)
        aph = tuple(int(x) for x in row[self.off_arr:self.off_arr + self.A])
        return (tuple(places), (), tuple(() for _ in range(K)), (), int(row[-1]), aph)

    def kernel_args(self):
        return (self.ordered, self.off, self.width, self.colt, self.tcol, self.disc, self.sortc,
                self.kind, self.servers, self.mu, self.tq, self.tnext, self.tbase, self.tlevel,
                self.zthink, self.mult, self.nmult)


def eligible(spec: _Spec) -> bool:
    """Whether the compiled build covers this network: no token pool and no
    capacity that can ever be reached (then no job is blocked or lost and a
    job's type is its class and service phase)."""
    return spec.P == 0 and not any(spec._binding())


def layout(spec: _Spec, chain) -> _Layout | None:
    """The layout of an eligible network (its start state placed by
    :meth:`_Chain.setup`), or None when the compiled build does not cover it
    (see :func:`eligible`; or an order-keeping station without a bound on
    its jobs)."""
    if not eligible(spec):
        return None
    start = chain.setup()
    most = sum(spec.pop) + (spec.open_limit if spec.truncating else 0)
    if any(o and min(spec.cap[k], most) == math.inf for k, o in enumerate(chain.ordered)):
        return None
    return _Layout(spec, chain, start)


# ---------------------------------------------------------------------------
# size before building, the build, the expectations
# ---------------------------------------------------------------------------

#: a layout is ranked (states found by rank, :meth:`_Layout._ranking`) when
#: its ranks number at most this many times ``max_states``
RANK_SLACK = 4

#: bytes per state of the build: the row (4 bytes a column, added by the
#: caller), its hash (8), the hash table (at most 8 slots of 8 bytes)
_BYTES_STATE = 8 + 64
#: bytes per nonzero rate: the triplets (4 + 4 + 8), the CSR matrix and its
#: transpose in the solve (2 x 12), the generator with its diagonal (12),
#: slack for the solver's copies (2 x 12)
_BYTES_NNZ = 16 + 24 + 12 + 24


def _local_counts(g_phases: int, servers: int, top: int) -> np.ndarray:
    """g(n), n = 0 .. top: the states of a one-class FCFS station counted
    by phase (kind 4) holding n jobs: the min(n, c) in service spread over
    its P phases, C(min(n, c) + P - 1, P - 1) ways (compositions)."""
    return np.array([float(math.comb(min(n, servers) + g_phases - 1, g_phases - 1))
                     for n in range(top + 1)])


def _placements_with_phases(cols: int, compact: list, top: int, cap: float) -> np.ndarray:
    """c(n), n = 0 .. top: the ways to place n jobs of a chain over
    ``cols`` columns of counts (each any number of jobs) and the
    one-class FCFS stations counted by phase in ``compact`` (pairs (P,
    c): :func:`_local_counts`), the coefficients of the product of their
    generating functions, 1/(1 - z)^cols x prod_k G_k(z) (Flajolet &
    Sedgewick, *Analytic Combinatorics*, 2009, sec. I.1: the sequence
    construction of compositions).  Floats, every coefficient capped at
    ``cap`` after each product (below the cap they are integers well
    under 2**53, so exact)."""
    poly = np.zeros(top + 1)
    poly[:] = [min(float(math.comb(n + cols - 1, cols - 1)), cap) if cols else float(n == 0)
               for n in range(top + 1)]
    for P, c in compact:
        poly = np.minimum(np.convolve(poly, _local_counts(P, c, top))[:top + 1], cap)
    return poly


def _count(spec: _Spec, lay: _Layout, max_states: int) -> tuple[int, int]:
    """(states, fan): the count of :func:`estimate` (capped at 10 x
    ``max_states``) and the most transitions a state can have."""
    cap = 10 * int(max_states)
    starts = set()
    for r in range(spec.C):
        if spec.is_open[r]:
            for d, _ in spec.source[r]:
                if d >= 0:
                    starts.add((d, r, 0))
        elif spec.pop[r] > 0:
            starts.add((spec.THINK if spec.Z[r] > 0 else spec.ref[r], r, 0))
    pos = spec.positions(starts)
    compact = lay.kind == 4
    total = 1
    fan = 0
    for h, chain in enumerate(spec.chains):
        m = 0
        phased = []   # (P, c) of each one-class FCFS station counted by phase
        for r in chain:
            places = {k for k, rr, _ in pos if rr == r}
            for k in places:
                P = len(spec.phr[r][k]) if k < spec.K else 1
                if k < spec.K and compact[k]:
                    phased.append((P, int(spec.c[k])))
                    fan += min(P, int(spec.c[k])) * (1 + len(spec.route[r][k]))
                    continue
                # a counted place holds a job in one of its service phases
                # there; at an order-keeping station only the jobs in service
                # (or preempted) have a phase, which splits the placements
                # further: one place
                m += P if k < spec.K and not lay.ordered[k] else 1
                fan += len(spec.route[r][k])
        if m == 0 and not phased:
            continue
        if spec.is_open[chain[0]] and not spec.truncating:
            total *= int(max_states)
        elif phased:
            top = int(lay.open_limit) if spec.is_open[chain[0]] else int(spec.chain_pop[h])
            poly = _placements_with_phases(m, phased, top, float(cap) + 1.0)
            got = float(poly.sum()) if spec.is_open[chain[0]] else float(poly[top])
            total *= int(min(got, float(cap) + 1.0))
        elif spec.is_open[chain[0]]:
            total *= math.comb(lay.open_limit + m, m)
        elif spec.chain_pop[h] > 0:
            total *= math.comb(spec.chain_pop[h] + m - 1, m - 1)
        if total > cap:
            total = cap  # capped (no need for the full number)
    for r in spec.arr_phased:
        total = min(total * len(spec.arr_map[r][0]), cap)
        fan += 1
    fan += len(lay.adest)
    return total, fan


def estimate(spec: _Spec, lay: _Layout, max_states: int) -> tuple[int, int, int, bool]:
    """(states, nonzeros, bytes, exact_bound) expected of the build, before
    any state is stored.

    States: the product over routing chains (a class, or the classes
    linked by class switching) of the ways to place the chain's jobs over
    the places its classes can reach, C(N_h + m_h - 1, m_h - 1) for a
    closed chain (compositions of N_h into m_h parts), C(L + m_h, m_h) for
    an open one (at most L = open_limit jobs), capped at ``max_states``; a
    place is a counted station in one of a class's service phases there,
    or an order-keeping station (whatever the phases: only the jobs in
    service have one) or the think stage, for each class of the chain.  A
    one-class FCFS station counted by phase (P phases, c servers) holding
    n jobs has C(min(n, c) + P - 1, P - 1) states of its own (its jobs in
    service spread over the phases), and a chain through one is counted
    by the product of the generating functions
    (:func:`_placements_with_phases`).  An upper bound (``exact_bound``
    True) when no station keeps the order of its jobs, else a lower bound
    for the closed classes (orders and the phases of the jobs in service
    split the placements further), so a refusal on it never refuses a
    closed chain that would fit.
    Nonzeros: states times the most transitions a state can have (every
    job type completing at every place it can be, to every next place,
    plus every arrival)."""
    total, fan = _count(spec, lay, max_states)
    states = min(total, int(max_states))
    nnz = states * max(fan, 1)
    nbytes = states * (_BYTES_STATE + 4 * lay.D) + nnz * _BYTES_NNZ
    if lay.ranked(max_states):
        nbytes += 8 * int(lay.rsize)      # the table of ranks
    return states, nnz, nbytes, not bool(lay.ordered.any())


def memory_budget() -> int:
    """Half the memory available now (Linux ``MemAvailable``; else half the
    physical memory), in bytes."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 // 2
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def check_memory(spec: _Spec, lay: _Layout, max_states: int, budget: int | None = None):
    """Raise :class:`~qmodels.errors.ProblemTooLargeError` with the estimate
    (:func:`estimate`) when the build and the solve would need more than
    ``budget`` bytes (default :func:`memory_budget`), before anything is
    allocated; returns the estimate."""
    est = estimate(spec, lay, max_states)
    budget = memory_budget() if budget is None else budget
    states, nnz, nbytes, _ = est
    if nbytes > budget:
        raise ProblemTooLargeError(
            f"the chain would have up to {states:,} states and {nnz:,} nonzero rates, "
            f"needing about {nbytes / 2**30:.1f} GiB to build and solve, more than the "
            f"{budget / 2**30:.1f} GiB budget (half the memory available); reduce the "
            "populations or open_limit")
    return est


def build(lay: _Layout, max_states: int, work: int | None = None, compiled: bool | None = None):
    """Run :func:`_bfs` on a layout: ``(states, n, rows, cols, vals, nnz,
    status)``.  ``compiled`` forces numba (True) or plain Python (False);
    by default lazyjit chooses by ``work`` (estimated states x columns)."""
    args = (lay.start,) + lay.kernel_args() + (lay.rptr, lay.rdest, lay.rprob, lay.rtype,
                                               lay.gptr, lay.gcol, lay.glam, lay.ghid,
                                               lay.garr, lay.acls, lay.adest, lay.aprob,
                                               lay.open_limit, int(max_states))
    args += lay.rank_args(max_states)
    if compiled is None:
        return _bfs.run(work if work is not None else 10**9, *args)
    return (_bfs.compiled() if compiled else _bfs.py_func)(*args)


def expectations(lay: _Layout, states, n, pi, C, truncating, compiled: bool | None = None):
    """Run :func:`_expect` (same choice of machine code as :func:`build`)."""
    args = (states, n, pi) + (lay.ordered, lay.off, lay.width, lay.colt, lay.tclass, C,
                              lay.kind, lay.servers, lay.mu, lay.tq, lay.zthink, lay.mult,
                              lay.nmult, lay.gptr, lay.gcol, lay.glam, lay.ghid, lay.garr,
                              lay.aclass, lay.aprob, lay.open_limit, bool(truncating),
                              lay.most, lay.tbase)
    if compiled is None:
        return _expect.run(n * lay.D, *args)
    return (_expect.compiled() if compiled else _expect.py_func)(*args)
