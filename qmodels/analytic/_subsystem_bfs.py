"""The breadth-first enumeration of a Marie subsystem's joint chain,
compiled (:class:`qmodels.analytic._marie_subsystem.SubsystemChain`).

The chain and its transitions are those of
:mod:`qmodels.analytic._marie_subsystem` (its module docstring): per
station of the subsystem, the classes of its first min(n, L) jobs in order
of arrival, the phase of the head's service and the numbers per class of
the jobs past the window (a window as long as the population keeps the
whole order); arrivals from the flow-equivalent of the rest of the network
(their rates left as coefficients to multiply by Lambda_r(n)), phase
changes and completions, a completing job routed to another station of the
subsystem or out of it.  A state is a row of small integers: per station
``[n, phase, slot_0 .. slot_{L-1}, tail_0 .. tail_{C-1}]`` (slots past n
hold -1, the tail is empty until the window is full; a processor-sharing
or infinite-server station of exponential service keeps only its numbers
per class, in the tail, its phase and slots -1), found again by an
open-addressing hash table over the rows (linear probing; Knuth, *The Art
of Computer Programming* 3, 2nd ed., 1998, sec. 6.4, algorithm L; the
table of the CTMC's compiled build, :mod:`qmodels.analytic._ctmc_fast`),
so the states need no Python objects: the plain-Python enumeration it replaces
took 25-40 us a state, most of it building and hashing tuples.
"""

from __future__ import annotations

import numpy as np

from .._jit import jitable
from ._ctmc_fast import _hot_lazy, _reserve, _target


@jitable
def _grow(a, n, per):
    """``a`` with its first ``n`` entries, room for twice as many and ``per``."""
    b = np.empty(2 * len(a) + per, a.dtype)
    b[:n] = a[:n]
    return b


@jitable
def _join(cand, src, o, r, L, p, kd) -> None:
    """``cand`` = ``src`` with a class-r job joining the station at offset
    ``o``: at an FCFS queue (``kd`` 0) behind the jobs there (in the window
    while it has room, else counted), or at an empty one in service in
    phase ``p``; at a processor-sharing or infinite-server station (``kd``
    1, 2) counted with its class."""
    cand[:] = src
    n = src[o]
    if kd != 0:
        cand[o + 2 + L + r] += 1
    elif n == 0:
        cand[o + 1] = p
        cand[o + 2] = r
    elif n < L:
        cand[o + 2 + n] = r
    else:
        cand[o + 2 + L + r] += 1
    cand[o] = n + 1


@jitable
def _put(cand, states, hashes, table, nst, budget, rk, bn, head, rows, cols, vals, n, v):
    """The transition from state ``head`` to ``cand`` (found, else added)
    at ``v``, written at ``n`` of ``rows``, ``cols``, ``vals``; (n + 1,
    states, overflow: ``cand`` would pass ``budget`` states)."""
    k, nst = _target(cand, len(cand), states, hashes, table, nst, budget, rk, bn)
    if k < 0:
        return n, nst, True
    rows[n] = head
    cols[n] = k
    vals[n] = v
    return n + 1, nst, False


@jitable
def _route(left, j, r, rate, m, B, L, kind, nstart, starts, alpha, P, exitp, cand, states,
           hashes, table, nst, budget, rk, bn, head, fr, fc, fv, nf):
    """The moves of a class-r job that completes at station ``j`` at
    ``rate`` (``left``: the state without it): out of the subsystem, then
    to each station of it (the start phases of an empty FCFS queue);
    (transitions written, states, overflow)."""
    for i in range(-1, m):
        if i < 0:
            if exitp[r, j] <= 1e-14:
                continue
            wr = rate * exitp[r, j]
            busy = True
        else:
            if P[r, j, i] <= 0:
                continue
            wr = rate * P[r, j, i]
            busy = left[i * B] > 0 or kind[i] != 0
        for b in range(1 if busy else nstart[i, r]):
            if i < 0:
                cand[:] = left
                w1 = 1.0
            else:
                p3 = -1 if busy else starts[i, r, b]
                _join(cand, left, i * B, r, L, p3, kind[i])
                w1 = 1.0 if busy else alpha[i, r, p3]
            nf, nst, over = _put(cand, states, hashes, table, nst, budget, rk, bn, head,
                                 fr, fc, fv, nf, wr * w1)
            if over:
                return nf, nst, True
    return nf, nst, False


# one loop over the chain's transitions, in the order of the enumeration it
# replaces (the states' order is part of its contract)
@_hot_lazy(threshold=2_000)
def subsystem_bfs(seed, m, C, L, N, inside, kind, nph, alpha, T, tex, nstart, starts, P,  # noqa: C901
                  f, exitp, budget):
    """(states, fixed rows, cols, rates, arrival rows, cols, coefficients,
    classes, overflow) of the chain from ``seed`` (a state row), breadth
    first, in the order of the plain enumeration it replaces: per state its
    arrivals (class by class, station by station), then per station its
    phase changes and completions.  ``L`` the window (the population for
    the whole order); ``N`` (C,) the populations, ``inside`` (C,) the
    classes that never leave; ``kind`` (m,) per station 0 FCFS, 1
    processor sharing, 2 infinite servers (both of exponential service,
    one phase: a count per class); per (station, class): ``nph`` the phases (0:
    the class does not come), ``alpha`` (m, C, p) the start
    probabilities, ``T`` (m, C, p, p) the phase rates, ``tex`` (m, C, p)
    the completion rates, ``nstart`` / ``starts`` the phases a service can
    start in; per class: ``P`` (C, m, m) routing within the subsystem,
    ``f`` (C, m) the shares of the arrivals, ``exitp`` (C, m) the
    probability of leaving the subsystem after a completion.  ``overflow``
    True (the rest meaningless) past ``budget`` states."""
    B = 2 + L + C
    W = m * B
    pmax = alpha.shape[2]
    states = np.zeros((1024, W), np.int32)
    hashes = np.zeros(1024, np.int64)
    table = np.full(4096, -1, np.int64)
    # per state at most: arrivals C m pmax; per station pmax phase changes
    # and a completion to (exit + m stations) times (C pmax) left states
    # times pmax start phases
    per = C * m * pmax + m * (pmax + C * pmax * (1 + m * pmax))
    fcap = 4096 + per
    fr = np.empty(fcap, np.int64)
    fc = np.empty(fcap, np.int64)
    fv = np.empty(fcap, np.float64)
    nf = 0
    acap = 4096 + per
    ar = np.empty(acap, np.int64)
    ac = np.empty(acap, np.int64)
    av = np.empty(acap, np.float64)
    acl = np.empty(acap, np.int64)
    na = 0
    cur = np.empty(W, np.int32)
    cand = np.empty(W, np.int32)
    left = np.empty(W, np.int32)
    # the CTMC build's hash table, unranked (:func:`._ctmc_fast._target`)
    e = np.zeros(0, np.int64)
    rk = (e, e, e, e, e, e)
    bn = np.zeros((1, 1), np.int64)
    cand[:] = seed
    _k, nst = _target(cand, W, states, hashes, table, 0, 1, rk, bn)
    counts = np.zeros(C, np.int64)
    head = 0
    while head < nst:
        # room for the most states one state's moves can add
        states, hashes, table = _reserve(states, hashes, table, nst, per, False)
        cur[:] = states[head]
        if nf + per > len(fr):
            fr, fc, fv = _grow(fr, nf, per), _grow(fc, nf, per), _grow(fv, nf, per)
        if na + per > len(ar):
            ar, ac = _grow(ar, na, per), _grow(ac, na, per)
            av, acl = _grow(av, na, per), _grow(acl, na, per)
        for r in range(C):
            counts[r] = 0
        for j in range(m):
            o = j * B
            k = min(int(cur[o]), L) if kind[j] == 0 else 0
            for q in range(k):
                counts[cur[o + 2 + q]] += 1
            for r in range(C):
                counts[r] += cur[o + 2 + L + r]
        # arrivals from the complement
        for r in range(C):
            if counts[r] >= N[r] or inside[r]:
                continue
            for j in range(m):
                if f[r, j] <= 0 or nph[j, r] == 0:
                    continue
                o = j * B
                busy = cur[o] > 0 or kind[j] != 0
                for a in range(1 if busy else nstart[j, r]):
                    p2 = -1 if busy else starts[j, r, a]
                    _join(cand, cur, o, r, L, p2, kind[j])
                    w = 1.0 if busy else alpha[j, r, p2]
                    acl[na] = r
                    na, nst, over = _put(cand, states, hashes, table, nst, budget, rk, bn,
                                         head, ar, ac, av, na, f[r, j] * w)
                    if over:
                        return states[:nst], fr[:nf], fc[:nf], fv[:nf], ar[:na], ac[:na], \
                                av[:na], acl[:na], True
        # phase changes and completions
        for j in range(m):
            o = j * B
            n = int(cur[o])
            if n == 0:
                continue
            if kind[j] != 0:
                # processor sharing (each class-r job at rate mu_r / n) or
                # infinite servers (at mu_r each): exponential service
                for r in range(C):
                    nr = cur[o + 2 + L + r]
                    if nr == 0:
                        continue
                    rate = tex[j, r, 0] * (nr / n if kind[j] == 1 else nr)
                    left[:] = cur
                    left[o] = n - 1
                    left[o + 2 + L + r] = nr - 1
                    nf, nst, over = _route(left, j, r, rate, m, B, L, kind, nstart, starts,
                                           alpha, P, exitp, cand, states, hashes, table, nst,
                                           budget, rk, bn, head, fr, fc, fv, nf)
                    if over:
                        return states[:nst], fr[:nf], fc[:nf], fv[:nf], ar[:na], ac[:na], \
                                av[:na], acl[:na], True
                continue
            r = int(cur[o + 2])
            p = int(cur[o + 1])
            for p2 in range(nph[j, r]):
                if p2 != p and T[j, r, p, p2] > 0:
                    cand[:] = cur
                    cand[o + 1] = p2
                    nf, nst, over = _put(cand, states, hashes, table, nst, budget, rk, bn,
                                         head, fr, fc, fv, nf, T[j, r, p, p2])
                    if over:
                        return states[:nst], fr[:nf], fc[:nf], fv[:nf], ar[:na], ac[:na], \
                                av[:na], acl[:na], True
            rate = tex[j, r, p]
            if rate <= 0:
                continue
            # the states after the head leaves (the next job's class and
            # first phase), then where the job goes
            tail = 0
            if n - 1 >= L:
                for s in range(C):
                    tail += cur[o + 2 + L + s]
            nnext = C if tail > 0 else 1
            for s in range(nnext):
                if tail > 0 and cur[o + 2 + L + s] == 0:
                    continue
                left[:] = cur
                left[o] = n - 1
                if n == 1:
                    left[o + 1] = -1
                    left[o + 2] = -1
                    w0s = 1.0
                    nst0 = 1
                else:
                    kk = min(n, L)
                    for q in range(kk - 1):
                        left[o + 2 + q] = cur[o + 3 + q]
                    if tail > 0:
                        left[o + 2 + L - 1] = s
                        left[o + 2 + L + s] -= 1
                        w0s = cur[o + 2 + L + s] / tail
                    else:
                        left[o + 2 + kk - 1] = -1
                        w0s = 1.0
                    nst0 = nstart[j, left[o + 2]]
                for a in range(nst0):
                    if n > 1:
                        h = left[o + 2]
                        p0 = starts[j, h, a]
                        left[o + 1] = p0
                        w0 = w0s * alpha[j, h, p0]
                    else:
                        w0 = w0s
                    nf, nst, over = _route(left, j, r, rate * w0, m, B, L, kind, nstart, starts,
                                           alpha, P, exitp, cand, states, hashes, table, nst,
                                           budget, rk, bn, head, fr, fc, fv, nf)
                    if over:
                        return states[:nst], fr[:nf], fc[:nf], fv[:nf], ar[:na], ac[:na], \
                                av[:na], acl[:na], True
        head += 1
    return states[:nst], fr[:nf], fc[:nf], fv[:nf], ar[:na], ac[:na], av[:na], acl[:na], False
