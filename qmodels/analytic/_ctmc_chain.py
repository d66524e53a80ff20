"""State generation for the exact CTMC (:mod:`qmodels.analytic.ctmc`):
:class:`_Chain` builds the reachable state space of a compiled network
(:class:`~._ctmc_spec._Spec`) breadth first, with the transition rates of
service completions, think completions, open arrivals, blocking after
service and token hand-overs (semantics in the docstring of
:mod:`qmodels.analytic.ctmc`).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from ..errors import ProblemTooLargeError, UnsupportedModelError
from ._ctmc_spec import (
    _DELAY,
    _FCFS,
    _FREE,
    _ORD_FCFS,
    _ORD_LCFS,
    _ORD_PRIO,
    _PS,
    _SINK,
    _Spec,
)

#: Keep a one-class FCFS station with service phases as counts per phase
#: (the jobs present, and among them those in service by phase) instead of
#: an ordered row of its jobs: the same chain lumped, as the order of
#: identical jobs carries no information (False builds the wide form: tests
#: compare the two).
COMPACT_FCFS = True

# ---------------------------------------------------------------------------
# state generator
# ---------------------------------------------------------------------------

class _Chain:
    """Builds the reachable state space and its generator.

    A state is ``(places, queues, blocked, free, nopen, aph)``:
    ``places[k]`` the content of station k (an ordered tuple of entries
    ``(type, dest)`` for an order-keeping station, else a sorted tuple of
    ``(type, dest, count)``), ``places[K]`` the think stage (counts);
    ``dest`` is -1 for a job in service or waiting, else the station it is
    blocked on.  ``queues[j]`` the FIFO of ``(type, dest)`` waiting for a
    token of pool j; ``blocked[d]`` the FIFO of ``(place, type, class)``
    blocked on station d (``class`` the one the job enters d as: its own,
    or another where the routing switches its class); ``free[j]`` free
    tokens; ``nopen`` open jobs present;
    ``aph`` the phase of the current inter-arrival time of each open class
    whose inter-arrival time is phase-type (``spec.arr_phased``).

    A job type is (class, held pools, phase): the phase of the job's
    service at the station it is at (:mod:`.phase_type`, a Coxian, always
    entered at phase 0), 0 for a job that has not started or is blocked; a
    job preempted at a ``prio-pr`` or ``lcfs-pr`` station keeps its phase
    (preemptive resume).  An order-keeping station lists its jobs in the
    order they are served: the first min(n, c) are in service (listed in a
    canonical, sorted order at an FCFS or non-preemptive priority station,
    where their arrival order no longer matters), the others wait, in
    arrival order (FCFS), by level then arrival (priority; a
    preemptive-resume station keeps the whole list in that order, so a
    job of a higher level pushes the last job in service back to the line),
    or latest first (LCFS-PR).

    An FCFS station that only one job type (class and held pools) can
    reach is kept as counts even when its service has phases (``compact``,
    :data:`COMPACT_FCFS`): the count of a later phase holds jobs in
    service, that of phase 0 the jobs waiting and those in service in
    their first phase, min(n, c) - (n - m_0) of them (n the jobs present,
    m_0 the count of phase 0; blocked jobs hold a server too).  The order
    of identical waiting jobs carries no information, so this is the wide
    form's chain with the same states (its sorted head and its count of
    waiting jobs) in a narrower row.
    """

    def __init__(self, spec: _Spec):
        self.s = spec

    # -- working copies ----------------------------------------------------
    def thaw(self, st):
        places, queues, blocked, free, nopen, aph = st
        w = []
        for k, p in enumerate(places):
            if self.ordered[k]:
                w.append(list(p))
            else:
                w.append({(t, d): n for t, d, n in p})
        return [w, [list(q) for q in queues], [list(b) for b in blocked], list(free), nopen,
                list(aph)]

    def freeze(self, w):
        places = []
        for k, p in enumerate(w[0]):
            if self.ordered[k]:
                if self.sorted_head[k]:
                    h = min(len(p), self.s.c[k])
                    if h > 1:
                        p = sorted(p[:h]) + p[h:]
                places.append(tuple(p))
            else:
                places.append(tuple(sorted((t, d, n) for (t, d), n in p.items() if n > 0)))
        return (tuple(places), tuple(tuple(q) for q in w[1]), tuple(tuple(b) for b in w[2]),
                tuple(w[3]), w[4], tuple(w[5]))

    @staticmethod
    def copy(w):
        return [[p.copy() for p in w[0]], [q.copy() for q in w[1]], [b.copy() for b in w[2]],
                w[3].copy(), w[4], w[5].copy()]

    # -- elementary moves --------------------------------------------------
    def count(self, w, k):
        p = w[0][k]
        return len(p) if self.ordered[k] else sum(p.values())

    def add(self, w, k, t, d=_FREE):
        p = w[0][k]
        if self.ordered[k]:
            self._insert(p, k, t, d)
        else:
            p[(t, d)] = p.get((t, d), 0) + 1

    def _insert(self, p, k, t, d):
        """Job (t, d) joins the list of order-keeping station k where its
        queue order puts it (see the class docstring)."""
        s = self.s
        o = s.order[k]
        if o == _ORD_FCFS:
            p.append((t, d))
            return
        if o == _ORD_LCFS:
            p.insert(0, (t, d))
            return
        types, level = s.types, s.level
        lv = level[types[t][0]]
        lo = s.c[k] if o == _ORD_PRIO else 0
        pos = len(p)
        while pos > lo and level[types[p[pos - 1][0]][0]] > lv:
            pos -= 1
        p.insert(pos, (t, d))

    def advance(self, w, place, t, pos):
        """The job (t, free) at ``place`` (position ``pos`` if ordered)
        goes on to its next service phase."""
        r, m, ph = self.s.types[t]
        t1 = self.s.type_of(r, m, ph + 1)
        p = w[0][place]
        if self.ordered[place]:
            p[pos] = (t1, _FREE)
        else:
            self.remove(w, place, t, _FREE)
            p[(t1, _FREE)] = p.get((t1, _FREE), 0) + 1

    def remove(self, w, k, t, d, pos=None):
        p = w[0][k]
        if self.ordered[k]:
            if pos is None:
                pos = p.index((t, d))
            del p[pos]
        else:
            n = p[(t, d)] - 1
            if n:
                p[(t, d)] = n
            else:
                del p[(t, d)]

    def release(self, w, j):
        """A token of pool j is given back: to the head of the line, else free."""
        q = w[1][j]
        if q:
            t, d = q.pop(0)
            r, m, _ = self.s.types[t]
            # the acquire station is unbounded (checked), so it enters at once
            self.add(w, d, self.s.type_of(r, m | (1 << j)))
        else:
            w[3][j] += 1

    def leave(self, w, place, t, d, pos=None):
        """Take job (t, d) out of ``place``; give back the tokens released
        there; return its class and mask after the release."""
        s = self.s
        self.remove(w, place, t, d, pos)
        r, m, _ = s.types[t]
        if place < s.K:
            rel = m & s.relmask[r][place]
            if rel:
                m &= ~rel
                for j in range(s.P):
                    if rel >> j & 1:
                        self.release(w, j)
        return r, m

    def after_leave(self, w, place):
        """A place freed at ``place``: let the first job blocked on it in."""
        s = self.s
        if place >= s.K or s.cap[place] == math.inf:
            return
        b = w[2][place]
        if not b or self.count(w, place) >= s.cap[place]:
            return
        src, t, cls = b.pop(0)
        _, m = self.leave(w, src, t, place)
        self.add(w, place, s.type_of(cls, m))
        self.after_leave(w, src)

    def enter(self, w, r, m, d):
        """A job of class r with mask m (already out of its place) goes to
        station d: through a token line if it needs a token there.  The
        caller has checked the room at d."""
        s = self.s
        need = s.acqmask[r][d] & ~m
        if need:
            j = s.acq[d]
            if w[3][j] > 0:
                w[3][j] -= 1
                self.add(w, d, s.type_of(r, m | need))
            else:
                w[1][j].append((s.type_of(r, m), d))
        else:
            self.add(w, d, s.type_of(r, m))

    def has_room(self, w, d):
        return self.count(w, d) < self.s.cap[d]

    def complete(self, w, place, t, pos, d, cls):
        """The job (t, free) at ``place`` (position ``pos`` if ordered)
        completes and is routed to ``d`` as class ``cls`` (its own, or
        another where the routing switches its class); ``w`` is modified."""
        s = self.s
        r, m, _ = s.types[t]
        if d == _SINK:
            _, m = self.leave(w, place, t, _FREE, pos)
            for j in range(s.P):  # tokens still held go back at the end of the route
                if m >> j & 1:
                    self.release(w, j)
            w[4] -= 1
            self.after_leave(w, place)
            return
        if d == s.THINK:
            _, m = self.leave(w, place, t, _FREE, pos)
            self.add(w, s.THINK, s.type_of(cls, m))
            self.after_leave(w, place)
            return
        if d == place or s.acqmask[cls][d] or self.has_room(w, d):
            # (an acquire station is unbounded; a self-loop frees its own place)
            _, m = self.leave(w, place, t, _FREE, pos)
            self.enter(w, cls, m, d)
            self.after_leave(w, place)
            return
        # blocked after service: stays, holding its server (phase 0: done)
        t0 = s.type_of(r, m, 0)
        p = w[0][place]
        if self.ordered[place]:
            p[pos] = (t0, d)
        else:
            self.remove(w, place, t, _FREE)
            p[(t0, d)] = p.get((t0, d), 0) + 1
        w[2][d].append((place, t0, cls))

    # -- rates -------------------------------------------------------------
    def completions(self, st):
        """List of (place, type, pos, rate) for every job that can complete
        service in state ``st``."""
        s = self.s
        out = []
        places = st[0]
        for k in range(s.K + 1):
            p = places[k]
            if not p:
                continue
            if k == s.THINK:
                self._think_completions(p, out)
            elif self.ordered[k]:
                self._ordered_completions(k, p, out)
            else:
                self._counted_completions(k, p, out)
        return out

    def _think_completions(self, p, out):
        """Think stage: each of the n thinking jobs ends at rate 1/Z."""
        s = self.s
        for t, d, n in p:
            if d == _FREE:
                out.append((s.THINK, t, None, n / s.Z[s.types[t][0]]))

    def _ordered_completions(self, k, p, out):
        """Order-keeping FCFS station: the first c jobs are in service."""
        s = self.s
        for pos in range(min(len(p), s.c[k])):
            t, d = p[pos]
            if d == _FREE:
                out.append((k, t, pos, self.rate(t, k)))

    def _counted_completions(self, k, p, out):
        """A station kept as counts per (type, dest): delay, FCFS with one
        job type or never queueing, PS (blocked jobs keep one server each)
        and load-dependent (never blocked there)."""
        s = self.s
        kind = s.kind[k]
        n = sum(x[2] for x in p)
        b = sum(x[2] for x in p if x[1] != _FREE)
        if kind == _DELAY:
            for t, d, m in p:
                if d == _FREE:
                    out.append((k, t, None, m * self.rate(t, k)))
        elif kind == _FCFS and self.compact[k]:
            self._compact_completions(k, p, n, out)
        elif kind == _FCFS:  # one job type, or never queueing
            active = min(n, s.c[k]) - b
            if active > 0:
                free = n - b
                for t, d, m in p:
                    if d == _FREE:
                        out.append((k, t, None, active * m / free * self.rate(t, k)))
        elif kind == _PS:
            c = s.c[k]
            free = n - b
            share = (min(1.0, (c - b) / free) if c > b else 0.0) if free > 0 else 0.0
            if share > 0:
                for t, d, m in p:
                    if d == _FREE:
                        out.append((k, t, None, m * share * self.rate(t, k)))
        else:  # load-dependent (never blocked there)
            mult = s.mult[k]
            a = mult[min(n, len(mult)) - 1]
            for t, _, m in p:
                out.append((k, t, None, a * m / n * self.rate(t, k)))

    def _compact_completions(self, k, p, n, out):
        """A one-class FCFS station with service phases kept as counts per
        phase (:meth:`setup`): the count of phase 0 holds the jobs waiting
        and those in service in their first phase, every other count jobs
        in service.  The servers hold min(n, c) jobs; those not blocked nor
        in a later phase are in phase 0: min(n, c) - (n - m_0) of them."""
        types = self.s.types
        c = self.s.c[k]
        for t, d, m in p:
            if d != _FREE:
                continue
            if types[t][2] > 0:
                out.append((k, t, None, m * self.rate(t, k)))
                continue
            active = min(n, c) - (n - m)
            if active > 0:
                out.append((k, t, None, active * self.rate(t, k)))

    def rate(self, t, k):
        """The rate of the current service phase of a job of type t at
        station k (1/S for exponential service)."""
        r, _, ph = self.s.types[t]
        return self.s.phr[r][k][ph]

    def cont(self, t, place):
        """The probability that the job of type t at ``place`` goes on to
        another phase when its current one ends (0 at the think stage)."""
        if place >= self.s.K:
            return 0.0
        r, _, ph = self.s.types[t]
        return self.s.phq[r][place][ph]

    # -- initial state -----------------------------------------------------
    def initial(self):
        """Place every closed job: in the think stage, else at the class's
        reference station (or a token line before it), else at the first
        station of its route with room."""
        s = self.s
        jobs = []  # (place, r, mask) or ("q", r, dest)
        room = list(s.cap)
        free = list(s.tokens)
        for r in range(s.C):
            if s.is_open[r]:
                continue
            order = [s.ref[r]] + [k for k in range(s.K) if s.V[r, k] > 0 and k != s.ref[r]]
            for _ in range(s.pop[r]):
                if s.Z[r] > 0:
                    jobs.append((s.THINK, r, 0))
                    continue
                for d in order:
                    need = s.acqmask[r][d]
                    if need:
                        j = s.acq[d]
                        if free[j] > 0:
                            free[j] -= 1
                            jobs.append((d, r, need))
                        else:
                            jobs.append(("q", r, d))
                        break
                    if room[d] > 0:
                        room[d] -= 1
                        jobs.append((d, r, 0))
                        break
                else:
                    raise UnsupportedModelError(
                        f"class {s.net.class_names[r]!r}: population {s.pop[r]} does not fit "
                        "in the room of the stations it visits"
                    )
        return jobs, free

    def setup(self):
        s = self.s
        jobs, free = self.initial()
        starts = set()
        for place, r, m in jobs:
            if place == "q":
                starts.add((m, r, s.acqmask[r][m]))
            elif place == s.THINK:
                starts.add((s.THINK, r, 0))
            else:
                starts.add((place, r, m))
        for r in range(s.C):
            if s.is_open[r]:
                for d, _ in s.source[r]:
                    if d >= 0:
                        starts.add((d, r, s.acqmask[r][d]))
        pos = s.positions(starts)
        types_at = [set() for _ in range(s.K)]
        for k, r, m in pos:
            if k < s.K:
                types_at[k].add((r, m))
        # maximum jobs that can be present anywhere
        most = sum(s.pop) if not any(s.is_open) else math.inf
        self.ordered = []
        self.compact = []
        for k in range(s.K):
            can_queue = s.c[k] < min(s.cap[k], most)
            keep = s.kind[k] == _FCFS and can_queue and (
                s.order[k] != _ORD_FCFS or len(types_at[k]) > 1 or s.phased[k])
            # one job type (class and held pools) at an FCFS station with
            # phases: the order of identical jobs says nothing, the phases
            # say which are in service; counted (lumpable, same answers)
            compact = (keep and COMPACT_FCFS and s.order[k] == _ORD_FCFS
                       and len(types_at[k]) == 1)
            self.ordered.append(keep and not compact)
            self.compact.append(compact)
        self.ordered.append(False)  # think stage
        self.compact.append(False)
        self.sorted_head = [o and k < s.K and s.order[k] in (_ORD_FCFS, _ORD_PRIO)
                            and s.c[k] > 1 for k, o in enumerate(self.ordered)]
        # every phase type of a class that can be present, numbered first
        for r in range(s.C):
            if s.live(r):
                for ph in range(s.nphase[r]):
                    s.type_of(r, 0, ph)
        w = [[[] if o else {} for o in self.ordered], [[] for _ in range(s.P)],
             [[] for _ in range(s.K)], list(free), 0, [0] * len(s.arr_phased)]
        for place, r, m in jobs:
            if place == "q":
                w[1][s.acq[m]].append((s.type_of(r, 0), m))
            else:
                self.add(w, place, s.type_of(r, m))
        return self.freeze(w)

    # -- breadth-first construction -----------------------------------------
    def build(self, max_states):
        s = self.s
        start = self.setup()
        index = {start: 0}
        states = [start]
        rows, cols, vals = [], [], []
        todo = deque([start])
        self.rates = []  # per state: completions list (for throughputs)
        self.lost = []   # per state: per class rate of arrivals lost to full stations
        self.trunc = []  # per state: per class rate of arrivals turned away by truncation

        def target(w):
            key = self.freeze(w)
            j = index.get(key)
            if j is None:
                j = len(states)
                if j >= max_states:
                    raise ProblemTooLargeError(
                        f"the state space has more than max_states = {max_states} states "
                        f"(reached {j + 1} and still growing); reduce the populations, "
                        "capacities or open_limit, or raise max_states"
                    )
                index[key] = j
                states.append(key)
                todo.append(key)
            return j

        i = 0
        while todo:
            st = todo.popleft()
            i = index[st]
            w0 = self.thaw(st)
            out: dict[int, float] = {}

            def move(w, v, i=i, out=out):
                j = target(w)
                if j != i:
                    out[j] = out.get(j, 0.0) + v

            comps = self.completions(st)
            self.rates.append(comps)
            for place, t, pos, rate in comps:
                self._completion_moves(w0, place, t, pos, rate, move)
            lost = np.zeros(s.C)
            trunc = np.zeros(s.C)
            self._arrival_moves(w0, move, lost, trunc)
            self.lost.append(lost)
            self.trunc.append(trunc)
            for j, v in out.items():
                rows.append(i)
                cols.append(j)
                vals.append(v)
        self.states = states
        return states, np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), \
            np.asarray(vals, dtype=float)

    def _completion_moves(self, w0, place, t, pos, rate, move):
        """The end of the current service phase of job (t, free) at
        ``place``, at ``rate``: on to the next phase with probability q,
        else done and routed (``move(w, rate)`` for each next state)."""
        s = self.s
        q = self.cont(t, place)
        if q > 0:
            w = self.copy(w0)
            self.advance(w, place, t, pos)
            move(w, rate * q)
        if q < 1:
            done = rate * (1.0 - q)
            for d, p, cls in s.route[s.types[t][0]][place]:
                w = self.copy(w0)
                self.complete(w, place, t, pos, d, cls)
                move(w, done * p)

    def _arrival_moves(self, w0, move, lost, trunc):
        """Open arrivals, class by class: a Poisson stream of rate lambda
        split over its first stations; a phased stream, a Markovian arrival
        process (``spec.arr_map``: a Coxian renewal stream, or a
        :class:`~qmodels.model.map.MAP`; its phase in the state) changes
        phase without an arrival (D0's off-diagonal rates, in ascending
        phase), or ends its inter-arrival time, the next one starting in
        phase j at rate D1[i, j] (split over the first stations the same
        way; Neuts 1979, Lucantoni 1991).  Adds to ``lost`` and ``trunc``
        the rates of arrivals lost at a full station or turned away by the
        truncation."""
        s = self.s
        for r in range(s.C):
            if not s.is_open[r]:
                continue
            moves = s.arr_map[r]
            if moves is None:
                for d, p in s.source[r]:
                    w = self._arrive(w0, r, d, s.lam[r] * p, None, None, lost, trunc)
                    if w is not None:
                        move(w, s.lam[r] * p)
                continue
            a = s.arr_phased.index(r)
            ph = w0[5][a]
            hidden, arrive = moves
            for j, rate in hidden[ph]:
                w = self.copy(w0)
                w[5][a] = j
                move(w, rate)
            for j, done in arrive[ph]:
                for d, p in s.source[r]:
                    w = self._arrive(w0, r, d, done * p, a, j, lost, trunc)
                    if w is not None:
                        move(w, done * p)

    def _arrive(self, w0, r, d, rate, a, nxt, lost, trunc):
        """The next state when a class-r job arrives for station d (None
        when nothing changes): turned away at the open-job bound, passing
        through (d the sink), lost at a full station, else entering; a
        phased stream (index ``a``) goes on to phase ``nxt`` in any case."""
        s = self.s
        if w0[4] >= s.open_limit:
            trunc[r] += rate
        elif d == _SINK:
            pass  # passes through without visiting a station
        elif not s.acqmask[r][d] and not self.has_room(w0, d):
            lost[r] += rate
        else:
            w = self.copy(w0)
            w[4] += 1
            self.enter(w, r, 0, d)
            if a is not None:
                w[5][a] = nxt
            return w
        if a is None or w0[5][a] == nxt:
            return None
        w = self.copy(w0)
        w[5][a] = nxt
        return w
