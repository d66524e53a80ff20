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
from ._ctmc_spec import _DELAY, _FCFS, _FREE, _PS, _SINK, _Spec

# ---------------------------------------------------------------------------
# state generator
# ---------------------------------------------------------------------------

class _Chain:
    """Builds the reachable state space and its generator.

    A state is ``(places, queues, blocked, free, nopen)``:
    ``places[k]`` the content of station k (an ordered tuple of entries
    ``(type, dest)`` for an order-keeping FCFS station, else a sorted tuple
    of ``(type, dest, count)``), ``places[K]`` the think stage (counts);
    ``dest`` is -1 for a job in service or waiting, else the station it is
    blocked on.  ``queues[j]`` the FIFO of ``(type, dest)`` waiting for a
    token of pool j; ``blocked[d]`` the FIFO of ``(place, type)`` blocked on
    station d; ``free[j]`` free tokens; ``nopen`` open jobs present.
    """

    def __init__(self, spec: _Spec):
        self.s = spec

    # -- working copies ----------------------------------------------------
    def thaw(self, st):
        places, queues, blocked, free, nopen = st
        w = []
        for k, p in enumerate(places):
            if self.ordered[k]:
                w.append(list(p))
            else:
                w.append({(t, d): n for t, d, n in p})
        return [w, [list(q) for q in queues], [list(b) for b in blocked], list(free), nopen]

    def freeze(self, w):
        places = []
        for k, p in enumerate(w[0]):
            if self.ordered[k]:
                places.append(tuple(p))
            else:
                places.append(tuple(sorted((t, d, n) for (t, d), n in p.items() if n > 0)))
        return (tuple(places), tuple(tuple(q) for q in w[1]), tuple(tuple(b) for b in w[2]),
                tuple(w[3]), w[4])

    @staticmethod
    def copy(w):
        return [[p.copy() for p in w[0]], [q.copy() for q in w[1]], [b.copy() for b in w[2]],
                w[3].copy(), w[4]]

    # -- elementary moves --------------------------------------------------
    def count(self, w, k):
        p = w[0][k]
        return len(p) if self.ordered[k] else sum(p.values())

    def add(self, w, k, t, d=_FREE):
        p = w[0][k]
        if self.ordered[k]:
            p.append((t, d))
        else:
            p[(t, d)] = p.get((t, d), 0) + 1

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
            r, m = self.s.types[t]
            # the acquire station is unbounded (checked), so it enters at once
            self.add(w, d, self.s.type_of(r, m | (1 << j)))
        else:
            w[3][j] += 1

    def leave(self, w, place, t, d, pos=None):
        """Take job (t, d) out of ``place``; give back the tokens released
        there; return its class and mask after the release."""
        s = self.s
        self.remove(w, place, t, d, pos)
        r, m = s.types[t]
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
        src, t = b.pop(0)
        r, m = self.leave(w, src, t, place)
        self.add(w, place, s.type_of(r, m))
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

    def complete(self, w, place, t, pos, d):
        """The job (t, free) at ``place`` (position ``pos`` if ordered)
        completes and is routed to ``d``; ``w`` is modified."""
        s = self.s
        r, _ = s.types[t]
        if d == _SINK:
            _, m = self.leave(w, place, t, _FREE, pos)
            for j in range(s.P):  # tokens still held go back at the end of the route
                if m >> j & 1:
                    self.release(w, j)
            w[4] -= 1
            self.after_leave(w, place)
            return
        if d == s.THINK:
            r, m = self.leave(w, place, t, _FREE, pos)
            self.add(w, s.THINK, s.type_of(r, m))
            self.after_leave(w, place)
            return
        if d == place or s.acqmask[r][d] or self.has_room(w, d):
            # (an acquire station is unbounded; a self-loop frees its own place)
            r, m = self.leave(w, place, t, _FREE, pos)
            self.enter(w, r, m, d)
            self.after_leave(w, place)
            return
        # blocked after service: stays, holding its server
        p = w[0][place]
        if self.ordered[place]:
            p[pos] = (t, d)
        else:
            self.remove(w, place, t, _FREE)
            p[(t, d)] = p.get((t, d), 0) + 1
        w[2][d].append((place, t))

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
                out.append((k, t, pos, s.mu[s.types[t][0], k]))

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
                    out.append((k, t, None, m * s.mu[s.types[t][0], k]))
        elif kind == _FCFS:  # one job type, or never queueing
            active = min(n, s.c[k]) - b
            if active > 0:
                free = n - b
                for t, d, m in p:
                    if d == _FREE:
                        out.append((k, t, None, active * m / free * s.mu[s.types[t][0], k]))
        elif kind == _PS:
            c = s.c[k]
            free = n - b
            share = (min(1.0, (c - b) / free) if c > b else 0.0) if free > 0 else 0.0
            if share > 0:
                for t, d, m in p:
                    if d == _FREE:
                        out.append((k, t, None, m * share * s.mu[s.types[t][0], k]))
        else:  # load-dependent (never blocked there)
            mult = s.mult[k]
            a = mult[min(n, len(mult)) - 1]
            for t, _, m in p:
                out.append((k, t, None, a * m / n * s.mu[s.types[t][0], k]))

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
        for k in range(s.K):
            can_queue = s.c[k] < min(s.cap[k], most)
            self.ordered.append(s.kind[k] == _FCFS and can_queue and len(types_at[k]) > 1)
        self.ordered.append(False)  # think stage
        w = [[[] if o else {} for o in self.ordered], [[] for _ in range(s.P)],
             [[] for _ in range(s.K)], list(free), 0]
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
        arrivals = [(r, d, s.lam[r] * p) for r in range(s.C) if s.is_open[r]
                    for d, p in s.source[r]]
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
            comps = self.completions(st)
            self.rates.append(comps)
            for place, t, pos, rate in comps:
                r = s.types[t][0]
                dests = s.route[r][place]
                for d, p in dests:
                    w = self.copy(w0)
                    self.complete(w, place, t, pos, d)
                    j = target(w)
                    if j != i:
                        out[j] = out.get(j, 0.0) + rate * p
            lost = np.zeros(s.C)
            trunc = np.zeros(s.C)
            for r, d, rate in arrivals:
                if w0[4] >= s.open_limit:
                    trunc[r] += rate
                    continue
                if d == _SINK:
                    continue  # passes through without visiting a station
                if not s.acqmask[r][d] and not self.has_room(w0, d):
                    lost[r] += rate
                    continue
                w = self.copy(w0)
                w[4] += 1
                self.enter(w, r, 0, d)
                j = target(w)
                out[j] = out.get(j, 0.0) + rate
            self.lost.append(lost)
            self.trunc.append(trunc)
            for j, v in out.items():
                rows.append(i)
                cols.append(j)
                vals.append(v)
        self.states = states
        return states, np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), \
            np.asarray(vals, dtype=float)
