"""Closed networks with priority queues: each priority station as a
finite-source priority queue fed by the flow-equivalent server of the rest
(the closed-network part of ``method='priority'``).

The approximation
-----------------
For a priority station p (one server, ``prio`` or ``prio-pr``), the rest of
the network (every other station and the think times) is replaced by its
flow-equivalent server (Chandy, Herzog & Woo, "Parametric analysis of
queuing networks", IBM J. Res. Dev. 19(1), 1975 -- Norton's theorem;
multiclass: Kritzinger, van Wyk & Krzesinski, "A generalisation of
Norton's theorem for multiclass queueing networks", Performance
Evaluation 2(2), 1982): with m jobs per class outside p, class c leaves
the rest towards p at the rate X_c^rest(m) V_cp (1 - q_cp), where
X_c^rest(m) is the class-c throughput of the network with p short-circuited
(its demands set to zero) and population m, computed by the multiclass
MVA recursion (Reiser & Lavenberg, JACM 27(2), 1980) over m <= N, and q_cp
the probability that a job leaving p is routed straight back to p (the
self-loop of the random routing of visit ratios, see
:mod:`qmodels.sim.flatten`, or the routing table's own p -> p entry).  The
station with its finite sources is then solved exactly as a continuous-time
Markov chain (the finite-source priority queue, Jaiswal, "Priority
Queues", Academic Press 1968): state = jobs per class at p and, per
priority level, the class and service phase of the level's head job if its
service has begun (and the order of the waiting jobs of a level that
several classes share).

* ``prio-pr`` (preemptive resume): the head of the highest non-empty level
  is in service; an arrival of a higher level preempts it, and the
  preempted job keeps its phase and resumes first within its level (so at
  most one job per level is part-served).
* ``prio`` (head of line): the job in service finishes; then the head of
  the highest non-empty level starts.
* Within a level, jobs are served in order of arrival (FCFS): a level of
  several classes keeps its waiting jobs' order in the state.
* Service of mean S_cp and squared coefficient of variation scv_p is a
  two-moment phase-type fit (H. C. Tijms, A First Course in Stochastic
  Models, Wiley 2003, the fits of its appendix on phase-type
  distributions): scv < 1 a mixture of Erlang(k-1) and Erlang(k) with one
  rate mu = (k - p) / S, k = ceil(1/scv), p = (k scv - sqrt(k (1 + scv) -
  k^2 scv)) / (1 + scv) (at most 32 phases, fewer -- down to 8 -- where the
  chain would pass its budget, so a deterministic service is an Erlang of
  8 to 32 phases, scv 1/8 .. 1/32; where a shape is held at that cap the
  chain is solved again with half the phases there and the two answers
  extrapolated to the shape's scv, :func:`extrapolate_phases`); scv > 1 a two-phase
  hyperexponential with balanced means, p1 = (1 + sqrt((scv - 1) /
  (scv + 1))) / 2, mu_i = 2 p_i / S.  Only the first two moments of the
  shape are used (a lognormal and a hyperexponential of one scv are the
  same here).

From the chain's stationary distribution pi: L_cp (mean number at p) and
the completion rate thr_c of class c at p; the rest's figures are the
pi-averages of the MVA figures at m = N - n (n the jobs at p):
X_c = E_pi[X_c^rest(m)] = thr_c / V_cp (flow balance), Q_ck = E_pi[Q_ck^rest(m)],
R_cp = L_cp / thr_c.  Job conservation N_c = L_cp + sum_k Q_ck + X_c Z_c
holds by construction, the priority station's utilisation is that of a
real single-server queue (<= 1), and every class, a starved one too, gets
a finite response time.

Several priority stations (each serving two levels or more): one chain
holds them all (a state per station as above); class c leaves the rest for
station a at the rate X_c^rest(m) E_ca, with m the jobs outside every
priority station and E_ca = V_ca - sum_b V_cb d_cba the entries into a from
the rest per cycle, d_cab the probability of a direct move a -> b (the
routing's, as q_cp above); a job completing at a goes to b with
probability d_cab (the departure done first, then the arrival at b), else
to the rest.  A class that never leaves the priority stations (d rows
summing to one) starts with its jobs at its first one.  When that chain is
past ``JOINT_BUDGET`` states, each station in turn is solved in its own
chain, and inside the rest's MVA recursion another priority station j uses
the shadow-server form of the arrival theorem (the ``prio``/``prio-pr``
equations of :mod:`qmodels.analytic.priority` with Q(m - e_r)) multiplied by
a per-class factor g_cj, updated until the response time at j that the
other station's solution gives equals the one of j's own chain (the method
of surrogate delays of Jacobson & Lazowska, "Analyzing queueing networks
with simultaneous resource possession", CACM 25(2), 1982, used here for
priority stations); the figures are those of the busiest priority
station's own chain (largest sum_c X_c V_c S_c there).

Within the rest: a delay has R = S; a PS or exponential FCFS queue
R = S_r (1 + sum_s Q_s(m - e_r)); FCFS with a general shape the residual
form S_r + sum_s (Q_s - U_s) S_s + U_s S_s (1 + scv) / 2 (Reiser 1979).

Assumptions: all classes closed; single-server queues and delays; the
rest's stations answered by the MVA forms above (exact for delays, PS and
class-independent exponential FCFS); the flow-equivalent server assumes
the rest reaches its equilibrium given m between the priority stations'
events, with exponential times out of them.  Exact when the rest is one
PS queue or one delay and no class thinks (the chain is then the network's
own).  Refused (the caller falls back to the shadow server): more
population vectors than ``LATTICE_BUDGET`` or more chain states than
``STATE_BUDGET``.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from .phase_type import capped_fit

__all__ = ["fits", "solve_closed", "extrapolate_runs", "KMAX", "KMAX_DETERMINISTIC",
           "LATTICE_BUDGET", "STATE_BUDGET",
           "JOINT_BUDGET"]

#: the fewest phases an Erlang fit of a low-variance service may get, and
#: the most, where the chain's budget allows (a deterministic service is an
#: Erlang of KMAX .. KMAX_DETERMINISTIC phases)
KMAX = 8
KMAX_DETERMINISTIC = 32
#: population vectors of the rest's MVA recursion, at most
LATTICE_BUDGET = 40_000
#: states of one priority station's chain, at most
STATE_BUDGET = 150_000
#: states of the joint chain of several priority stations, at most (past
#: it, the stations are solved one by one with surrogate factors)
JOINT_BUDGET = 20_000


def ph_fit(scv: float, kmax: int = KMAX):
    """(alpha, P, exit) of a phase-type of mean 1 and squared coefficient of
    variation ``scv`` (module docstring: Tijms' two-moment fits): alpha the
    initial probabilities, P[i, j] the rates from phase i to j, exit[i] the
    rate of leaving service from phase i."""
    if abs(scv - 1.0) < 1e-12:
        return np.array([1.0]), np.zeros((1, 1)), np.array([1.0])
    if scv > 1.0:
        # balanced means: p1 / mu1 = p2 / mu2 = 1/2
        p = 0.5 * (1.0 + np.sqrt((scv - 1.0) / (scv + 1.0)))
        return np.array([p, 1.0 - p]), np.zeros((2, 2)), np.array([2.0 * p, 2.0 * (1.0 - p)])
    k = int(np.ceil(1.0 / scv - 1e-9)) if scv > 0 else kmax + 1
    if k > kmax:
        k, p = kmax, 0.0
    elif k > 1:
        # Erlang(k-1) with probability p, else Erlang(k), rate mu = k - p
        p = (k * scv - np.sqrt(k * (1.0 + scv) - k * k * scv)) / (1.0 + scv)
        p = min(max(p, 0.0), 1.0)
    else:
        p = 0.0
    mu = k - p
    alpha = np.zeros(k)
    alpha[0] = 1.0 - p
    if k > 1:
        alpha[1] += p
    P = np.zeros((k, k))
    for i in range(k - 1):
        P[i, i + 1] = mu
    ex = np.zeros(k)
    ex[k - 1] = mu
    return alpha, P, ex


def _phases(scv: float, N, n_levels: int, preemptive: bool, budget: int):
    """The phase-type fit of :func:`ph_fit` with the most Erlang phases, up
    to ``KMAX_DETERMINISTIC``, whose chain stays within ``budget`` states by
    the estimate of :func:`fits` (at least ``KMAX``)."""
    lattice = float(np.prod([int(n) + 1 for n in N], dtype=float))
    k = KMAX_DETERMINISTIC
    while k > KMAX:
        ph = ph_fit(scv, k)
        if lattice * (len(N) * len(ph[0]) + 1) ** (n_levels if preemptive else 1) <= budget:
            return ph
        k //= 2
    return ph_fit(scv, KMAX)


def fits(N, scv_p: float, n_levels: int, preemptive: bool) -> bool:
    """Whether a network of populations ``N`` and a priority station of this
    shape fits the budgets (an upper estimate of the chain's states)."""
    lattice = int(np.prod([int(n) + 1 for n in N], dtype=float))
    if lattice > LATTICE_BUDGET:
        return False
    phases = len(ph_fit(scv_p)[0])
    started = (len(N) * phases + 1) ** (n_levels if preemptive else 1)
    return lattice * started <= STATE_BUDGET * 4  # the reachable states are far fewer


class _Rules:
    """The service rules of one priority station (module docstring)."""

    def __init__(self, C, lv, preemptive, ph, S, loop, visited=None):
        self.C, self.preemptive, self.S, self.loop = C, preemptive, S, loop
        self.visited = np.ones(C, bool) if visited is None else np.asarray(visited)
        self.alpha, self.P, self.ex = ph
        self.nph = len(self.alpha)
        levels = sorted(set(lv))
        self.L = len(levels)
        self.lcls = [[c for c in range(C) if lv[c] == lvl] for lvl in levels]
        self.pos = [levels.index(lv[c]) for c in range(C)]
        self.multi = [len(cs) > 1 for cs in self.lcls]  # levels whose FCFS order is kept

    def start(self, n, started, order):
        """[(probability, started', order')]: the head of the highest
        non-empty level starts (HOL: only if no job is part-served)."""
        if not self.preemptive and any(s is not None for s in started):
            return [(1.0, started, order)]
        for i in range(self.L):
            if not any(n[c] for c in self.lcls[i]):
                continue
            if started[i] is not None:
                return [(1.0, started, order)]
            if self.multi[i]:
                c = order[i][0]
                o2 = list(order)
                o2[i] = order[i][1:]
                o2 = tuple(o2)
            else:
                c, o2 = self.lcls[i][0], order
            out = []
            for j in range(self.nph):
                if self.alpha[j] > 0:
                    s2 = list(started)
                    s2[i] = (c, j)
                    out.append((self.alpha[j], tuple(s2), o2))
            return out
        return [(1.0, started, order)]

    def queue(self, order, c):
        """The waiting order with a class-c job appended to its level."""
        i = self.pos[c]
        if not self.multi[i]:
            return order
        o2 = list(order)
        o2[i] = order[i] + (c,)
        return tuple(o2)

    def serving(self, n, started):
        """(level index, (class, phase)) of the job in service, or (None, None)."""
        if self.preemptive:
            for i in range(self.L):
                if any(n[c] for c in self.lcls[i]):
                    return i, started[i]
            return None, None
        for i, s in enumerate(started):
            if s is not None:
                return i, s
        return None, None

    def arrive(self, st, c):
        """[(probability, state')] once a class-c job has arrived in state st."""
        n, started, order = st
        n2 = list(n)
        n2[c] += 1
        n2 = tuple(n2)
        return [(pr, (n2, s2, o2)) for pr, s2, o2 in self.start(n2, started, self.queue(order, c))]

    def moves(self, st):
        """([(state', rate)] of the phase changes, [(class, state', rate)] of
        the completions: state' once the departure is done and the next job
        has started)."""
        n, started, order = st
        i, s = self.serving(n, started)
        if s is None:
            return [], []
        c, ph = s
        mu = 1.0 / self.S[c]
        phases = []
        for ph2 in range(self.nph):
            if self.P[ph, ph2] > 0:
                s2 = list(started)
                s2[i] = (c, ph2)
                phases.append(((n, tuple(s2), order), self.P[ph, ph2] * mu))
        if self.ex[ph] <= 0:
            return phases, []
        s2 = list(started)
        s2[i] = None
        n2 = list(n)
        n2[c] -= 1
        n2 = tuple(n2)
        return phases, [(c, (n2, s3, o3), self.ex[ph] * mu * pr)
                        for pr, s3, o3 in self.start(n2, tuple(s2), order)]

    def arrivals(self, st, Nc):
        """[(state', class, probability)] of the arrivals in state st."""
        n, started, order = st
        out = []
        for c in range(self.C):
            if n[c] < Nc[c]:
                n2 = list(n)
                n2[c] += 1
                n2 = tuple(n2)
                for pr, s2, o2 in self.start(n2, started, self.queue(order, c)):
                    out.append(((n2, s2, o2), c, pr))
        return out

    def services(self, st):
        """[(state', rate)] of the phase changes and completions in state st."""
        n, started, order = st
        i, s = self.serving(n, started)
        if s is None:
            return []
        c, ph = s
        mu = 1.0 / self.S[c]
        out = []
        for ph2 in range(self.nph):
            if self.P[ph, ph2] > 0:
                s2 = list(started)
                s2[i] = (c, ph2)
                out.append(((n, tuple(s2), order), self.P[ph, ph2] * mu))
        if self.ex[ph] <= 0:
            return out
        s2 = list(started)
        s2[i] = None
        s2 = tuple(s2)
        q = self.loop[c]
        n2 = list(n)
        n2[c] -= 1
        n2 = tuple(n2)
        rate = self.ex[ph] * mu
        for pr, s3, o3 in self.start(n2, s2, order):
            if q < 1.0:
                out.append(((n2, s3, o3), rate * pr * (1.0 - q)))
            if q > 0.0:
                # straight back: the departure is done first (the next job
                # starts), then the job arrives again
                for pr2, s4, o4 in self.start(n, s3, self.queue(o3, c)):
                    out.append(((n, s4, o4), rate * pr * pr2 * q))
        return out


class _Chain:
    """The finite-source priority queue's state space and transitions, built
    once per station; the arrival rates are filled in per solve."""

    def __init__(self, Nc, S, lv, preemptive, ph, loop):
        C = len(Nc)
        rules = _Rules(C, lv, preemptive, ph, S, loop)
        idx: dict = {}
        states: list = []
        arr = ([], [], [], [])        # from, to, class, probability
        svc = ([], [], [])            # from, to, rate

        def index(st):
            k = idx.get(st)
            if k is None:
                if len(states) >= STATE_BUDGET:
                    raise _TooBig
                k = idx[st] = len(states)
                states.append(st)
            return k

        index((tuple([0] * C), tuple([None] * rules.L), tuple([()] * rules.L)))
        h = 0
        while h < len(states):
            st = states[h]
            for to, c, pr in rules.arrivals(st, Nc):
                arr[0].append(h), arr[1].append(index(to)), arr[2].append(c), arr[3].append(pr)
            for to, rate in rules.services(st):
                svc[0].append(h), svc[1].append(index(to)), svc[2].append(rate)
            h += 1
        self.M = len(states)
        self.n = np.array([s[0] for s in states], dtype=np.int64).reshape(self.M, C)
        self.arr = tuple(np.asarray(a) for a in arr)
        self.svc = tuple(np.asarray(a) for a in svc)
        done = np.zeros((self.M, C))
        for k, st in enumerate(states):
            _, s = rules.serving(st[0], st[1])
            if s is not None:
                done[k, s[0]] = rules.ex[s[1]] / S[s[0]]
        self.done = done  # completion rate of each class in each state

    def solve(self, rate):
        """Stationary distribution when class c arrives at rate rate[k, c]
        in state k (all sources outside: the rate of the flow-equivalent
        server)."""
        fr, to, cl, pr = self.arr
        sfr, sto, srate = self.svc
        return _stationary(self.M, np.concatenate([fr, sfr]), np.concatenate([to, sto]),
                           np.concatenate([rate[fr, cl] * pr, srate]))


class _Joint:
    """The chain of all the priority stations together, built once: state =
    one state per station (as in :class:`_Rules`); the rest of the network
    enters through the arrival rates of :meth:`solve`."""

    def __init__(self, rules, N, direct, captive=(), budget=STATE_BUDGET):
        # direct[c, a, b]: probability that class c leaving station a goes
        # straight to station b; captive: (class, station) of the classes
        # that never leave the priority stations
        P = len(rules)
        C = len(N)
        idx: dict = {}
        states: list = []
        arr = ([], [], [], [])        # from, to, class, station
        svc = ([], [], [])            # from, to, rate
        empty = tuple((tuple([0] * C), tuple([None] * r.L), tuple([()] * r.L)) for r in rules)

        def index(st):
            k = idx.get(st)
            if k is None:
                if len(states) >= budget:
                    raise _TooBig
                k = idx[st] = len(states)
                states.append(st)
            return k

        self.rules, self.N, self.direct = rules, N, direct
        # a class that never leaves the priority stations (no think time,
        # nothing else to visit) starts with its jobs at its first one
        start = empty
        for c, a in captive:
            for _ in range(int(N[c])):
                start = self._put(start, a, c)[0][1]
        index(start)
        h = 0
        while h < len(states):
            ins, moves = self._moves(states[h])
            for t, c, a, pr in ins:
                arr[0].append(h), arr[1].append(index(t)), arr[2].append(c)
                arr[3].append((a, pr))
            for t, rate in moves:
                svc[0].append(h), svc[1].append(index(t)), svc[2].append(rate)
            h += 1
        self.M = len(states)
        # jobs per station, class: (M, P, C)
        self.n = np.array([[x[0] for x in st] for st in states], dtype=np.int64)
        self.arr_from = np.asarray(arr[0], dtype=np.int64)
        self.arr_to = np.asarray(arr[1], dtype=np.int64)
        self.arr_cls = np.asarray(arr[2], dtype=np.int64)
        self.arr_at = np.asarray([x[0] for x in arr[3]], dtype=np.int64)
        self.arr_pr = np.asarray([x[1] for x in arr[3]], dtype=float)
        self.svc = tuple(np.asarray(x) for x in svc)
        done = np.zeros((self.M, P, C))  # completion rate per station and class
        for k, st in enumerate(states):
            for a, r in enumerate(rules):
                _, s = r.serving(st[a][0], st[a][1])
                if s is not None:
                    done[k, a, s[0]] = r.ex[s[1]] / r.S[s[0]]
        self.done = done

    def _put(self, st, b, c):
        """[(probability, joint state')] once class c has arrived at b."""
        out = []
        for pr, sb in self.rules[b].arrive(st[b], c):
            t = list(st)
            t[b] = sb
            out.append((pr, tuple(t)))
        return out

    def _moves(self, st):
        """([(state', class, station, probability)] of the arrivals from the
        rest, [(state', rate)] of the phase changes and completions) of the
        joint state st."""
        rules, direct = self.rules, self.direct
        out = self.N - sum(np.asarray(x[0]) for x in st)
        ins, moves = [], []
        for a, rule in enumerate(rules):
            for c in range(len(self.N)):
                if out[c] > 0 and rule.visited[c]:
                    ins += [(t, c, a, pr) for pr, t in self._put(st, a, c)]
            phases, done = rule.moves(st[a])
            for sa, rate in phases:
                t = list(st)
                t[a] = sa
                moves.append((tuple(t), rate))
            for c, sa, rate in done:
                t = list(st)
                t[a] = sa
                t = tuple(t)
                back = 1.0 - direct[c, a].sum()
                if back > 1e-15:
                    moves.append((t, rate * back))
                for b in range(len(rules)):
                    if direct[c, a, b] > 0:
                        moves += [(u, rate * direct[c, a, b] * pr) for pr, u in self._put(t, b, c)]
        return ins, moves

    def solve(self, rate):
        """Stationary distribution; rate[k, c, a]: the rate at which class c
        leaves the rest for station a in state k."""
        r = rate[self.arr_from, self.arr_cls, self.arr_at] * self.arr_pr
        return _stationary(self.M, np.concatenate([self.arr_from, self.svc[0]]),
                           np.concatenate([self.arr_to, self.svc[1]]),
                           np.concatenate([r, self.svc[2]]))


#: chains of at most this many states are solved densely (LAPACK's LU of a
#: few hundred states takes well under a millisecond; scipy's sparse
#: machinery costs more than that in set-up alone)
DENSE_STATES = 400


def _stationary(M, rows, cols, vals):
    """pi Q = 0, sum pi = 1 for the generator with these off-diagonal rates
    (duplicate entries add up), by replacing the first balance equation
    with the normalisation: dense up to :data:`DENSE_STATES` states, sparse
    (SuperLU) above."""
    b = np.zeros(M)
    b[0] = 1.0
    if M <= DENSE_STATES:
        Q = np.bincount(np.asarray(rows, dtype=np.int64) * M + np.asarray(cols, dtype=np.int64),
                        weights=vals, minlength=M * M).reshape(M, M)
        Q[np.diag_indices(M)] -= Q.sum(axis=1)
        A = Q.T.copy()
        A[0, :] = 1.0
        pi = np.maximum(np.linalg.solve(A, b), 0.0)
        return pi / pi.sum()
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    Q = sp.csr_matrix((vals, (rows, cols)), shape=(M, M))
    Q = Q - sp.diags(np.asarray(Q.sum(axis=1)).ravel())
    A = Q.T.tolil()
    A[0, :] = 1.0
    pi = np.maximum(spla.spsolve(A.tocsc(), b), 0.0)
    return pi / pi.sum()


def _solve_joint(V, S, scv, code, level, N, Z, direct, pk, memo=None):
    """All the priority stations ``pk`` in one chain, the rest as its
    flow-equivalent server: (X, Q).  ``memo(key, build)`` keeps the chain
    (its states and transitions, a function of the model alone) for a
    repeated solve of the same network.  Where a low-variance shape is
    held at the phase cap, the chain is solved again with half its phases
    there and the two answers extrapolated to the shape's scv
    (:func:`extrapolate_phases`)."""
    C, K = V.shape
    m_res = S * (1.0 + scv[None, :]) / 2.0
    Xr, Qr, radix = _rest_mva(V, S, m_res, code, level, N, Z, pk, np.ones((C, K)))

    def chain(halve):
        build = lambda: _joint_chain(V, S, scv, code, level, N, direct, pk, halve)  # noqa: E731
        return build() if memo is None else memo(("prio_fes.joint", tuple(pk), halve), build)

    ch = chain(False)
    X, Q = _joint_answer(ch, N, Xr, Qr, radix, pk)
    capped = ch[4]
    if not capped:
        return X, Q, None
    ch2 = chain(True)
    X2, Q2 = _joint_answer(ch2, N, Xr, Qr, radix, pk)
    out = extrapolate_phases(X, Q, X2, Q2, capped, ch2[4], N, V * S, np.asarray(code) > 0)
    k1, k2 = round(1.0 / capped[0][1]), round(1.0 / ch2[4][0][1])
    if out is None:
        return X, Q, (f"the low-variance service shapes as Erlang-{k1} in the priority "
                      f"stations' chain (the extrapolation from Erlang-{k2} left the figures' "
                      "range)")
    return out[0], out[1], (
        f"the low-variance service shapes held at the phase cap extrapolated to their scv "
        f"from the priority stations' chains with Erlang-{k1} and Erlang-{k2} in their place "
        "(Richardson, linear in the scv as the Pollaczek-Khinchine mean is)")


def extrapolate_phases(X1, Q1, X2, Q2, fit1, fit2, N, D=None, queues=None):
    """Richardson's extrapolation (L. F. Richardson & J. A. Gaunt, "The
    deferred approach to the limit", Phil. Trans. R. Soc. A 226, 1927,
    299-361) of a closed network's figures in the scv of a low-variance
    service held at the phase cap: ``fit1`` and ``fit2`` the [(target scv,
    fitted scv)] of the capped shapes in the two solves (Erlang-k, scv
    1/k, then Erlang-k/2, scv 2/k), X and Q (class x station) taken linear
    in the fitted scv t and carried to the target t0 (the means over the
    capped shapes):

        F(t0) = F(t1) + (F(t1) - F(t2)) (t1 - t0) / (t2 - t1).

    Linear in the scv is what the Pollaczek-Khinchine mean of an M/G/1
    queue is (Kleinrock 1975, eq. 5.105): the extrapolation is exact there;
    in a network it is an approximation, whose error on the
    ``priority-closed`` catalog is in its envelope.  Job conservation
    N_c = sum_k Q_ck + X_c Z_c is linear, so it holds for the result.
    Returns (X, Q), or None where the step leaves the figures' range (a
    throughput or queue below zero, moved by more than half its value, or
    a single-server queue of ``queues`` loaded past U = sum_c X_c D_ck = 1:
    far from linear, the finer answer is kept)."""
    out = extrapolate_runs([(X1, Q1, fit1), (X2, Q2, fit2)], N, D, queues)
    return None if out is None else out[:2]


def extrapolate_runs(runs, N, D=None, queues=None):
    """:func:`extrapolate_phases` over two or more solves ``runs`` =
    [(X, Q, [(target scv, fitted scv)])], finest fit first (Erlang-k,
    -k/2, -k/4, ...): the figures through the points (t_i, F_i) taken as
    the polynomial of degree len(runs) - 1 in the fitted scv t (Lagrange's
    form, the value at t0 of sum_i F_i prod_{j != i} (t0 - t_j) / (t_i -
    t_j); Richardson & Gaunt 1927, the deferred approach carried to
    higher order).  With three solves at t1 = 1/k, 2/k, 4/k and t0 = 0 the
    weights are 8/3, -2 and 1/3.  A starved class's throughput is curved
    in t (it grows faster than linearly as the high level's service gets
    more variable and leaves it more gaps): on a closed network of a HOL
    queue, deterministic 0.5 s, 8 high jobs thinking 0.1 s and 4 low ones,
    with two exponential queues of 0.3 and 0.2 s, the whole chains at
    Erlang-8, -4 and -2 give the low class 0.01507, 0.01886 and 0.02753;
    carried linearly from the first two to a deterministic time, 0.01127,
    4.2 % below the simulator's 0.01177 +- 0.00037; quadratically, 0.01163,
    1.2 % below it.
    Where the highest order leaves the figures' range (as in
    :func:`extrapolate_phases`), the next lower order is tried, down to
    the linear step of the two finest.  Returns (X, Q, order used) or
    None."""
    from .phase_type import richardson  # (phase_type imports nothing of this module)

    N = np.asarray(N)
    live = N > 0
    t0 = float(np.mean([t for t, _ in runs[0][2]]))
    ts = [float(np.mean([f for _, f in fit])) for _, _, fit in runs]
    X1 = runs[0][0]

    def admissible(F):
        X, Q = F["X"], F["Q"]
        if np.any(X[live] <= 0.5 * X1[live]) or np.any(X[live] >= 1.5 * X1[live]) \
                or np.any(Q < -1e-12 * max(float(np.max(N)), 1.0)):
            return False
        return D is None or not np.any((X @ D)[queues] > 1.0)

    out = richardson([{"X": X, "Q": Q} for X, Q, _ in runs], t0, ts, admissible)
    if out is None:
        return None
    F, degree, _ = out
    return F["X"], np.maximum(F["Q"], 0.0), degree


def _joint_chain(V, S, scv, code, level, N, direct, pk, halve=False):
    """The joint chain of the priority stations ``pk`` (:class:`_Joint`),
    its entry rates per cycle ``E`` (C, P), its captive classes and the
    [(target scv, fitted scv)] of its shapes held at the phase cap; with
    ``halve``, those shapes get half the phases.  Raises :class:`_TooBig`
    past the budget."""
    C, K = V.shape
    budget = JOINT_BUDGET if len(pk) > 1 else STATE_BUDGET
    rules = []
    capped = []
    for k in pk:
        lv = {int(level[c]) for c in range(C) if V[c, k] > 0}
        ph = _phases(float(scv[k]), N, len(lv), code[k] == 4, budget)
        nph = len(ph[0])
        if capped_fit(float(scv[k]), nph):
            if halve:
                nph = max(nph // 2, 2)
                ph = ph_fit(float(scv[k]), nph)
            capped.append((float(scv[k]), 1.0 / nph))
        rules.append(_Rules(C, [int(x) for x in level], code[k] == 4, ph, S[:, k],
                            np.zeros(C), visited=V[:, k] > 0))
    d = direct[:, pk][:, :, pk]
    Vp = V[:, pk]
    # entries into each priority station from the rest, per cycle
    E = Vp - np.einsum("cb,cba->ca", Vp, d)
    E = np.where(E > 1e-12 * Vp.sum(axis=1, keepdims=True), E, 0.0)
    captive = [(c, int(np.argmax(Vp[c] > 0))) for c in range(C)
               if N[c] > 0 and Vp[c].any() and E[c].sum() <= 0]
    if len(pk) > 1:
        # a cheap upper estimate of the joint chain: the ways to spread each
        # class over the stations and the rest, times the service states
        from math import comb
        spread = np.prod([comb(int(n) + len(pk), len(pk)) for n in N], dtype=float)
        serve = np.prod([(C * r.nph + 1) ** (r.L if r.preemptive else 1) for r in rules],
                        dtype=float)
        if spread * min(serve, 64.0) > 4 * JOINT_BUDGET:
            raise _TooBig
    ch = _Joint(rules, N, d, captive, JOINT_BUDGET if len(pk) > 1 else STATE_BUDGET)
    return ch, E, Vp, captive, capped


def _joint_answer(chain, N, Xr, Qr, radix, pk):
    """(X, Q) from the joint chain and the rest's recursion."""
    ch, E, Vp, captive, _ = chain
    m_idx = (N[None, :].astype(np.int64) - ch.n.sum(axis=1)) @ radix
    rate = Xr[m_idx][:, :, None] * E[None, :, :]
    pi = ch.solve(rate)
    X = pi @ Xr[m_idx]
    Q = np.tensordot(pi, Qr[m_idx], axes=1)
    L = np.tensordot(pi, ch.n, axes=1)  # (P, C)
    thr = np.tensordot(pi, ch.done, axes=1)  # (P, C)
    for a, k in enumerate(pk):
        Q[:, k] = L[a]
    for c, a in captive:  # its throughput from its completions
        X[c] = thr[a, c] / Vp[c, a]
    return X, Q


class _TooBig(Exception):
    pass


@functools.lru_cache(maxsize=64)
def _lattice(N: tuple) -> tuple:
    """The population vectors m <= N but 0 in order of their total, each
    with its mixed-radix index (class 0 fastest)."""
    radix = [1]
    for n in N[:-1]:
        radix.append(radix[-1] * (n + 1))
    order = sorted(itertools.product(*[range(n + 1) for n in N]), key=sum)
    return tuple((m, sum(a * b for a, b in zip(m, radix))) for m in order if any(m))


def _rest_mva(V, S, m_res, code, level, N, Z, k0, g):
    """The rest's MVA recursion (module docstring) over m <= N, station(s) k0
    short-circuited: arrays X[m] (C,) and Q[m] (C, K) indexed by the mixed
    radix of m.

    The lattice is small (at most :data:`LATTICE_BUDGET` vectors) and each
    step a handful of products over the classes, so it runs on Python
    floats: array operations on a few numbers cost more than the numbers.
    Every sum is taken class by class in index order, as numpy sums a
    short row."""
    C, K = V.shape
    Vr = V.copy()
    Vr[:, k0] = 0.0
    D = Vr * S
    radix = [int(x) for x in np.cumprod([1] + [int(n) + 1 for n in N[:-1]])]
    size = int(np.prod([int(n) + 1 for n in N]))
    Vl, Sl, Dl, Ml, gl = Vr.tolist(), S.tolist(), D.tolist(), m_res.tolist(), g.tolist()
    Zl = [float(z) for z in Z]
    kinds = [int(x) for x in code]
    lev = [int(x) for x in level]
    same = [[s for s in range(C) if lev[s] == lev[r]] for r in range(C)]
    above = [[s for s in range(C) if lev[s] < lev[r]] for r in range(C)]
    visits = [[k for k in range(K) if Vl[r][k] > 0] for r in range(C)]
    classes = range(C)
    big = 1e6
    Xl: list = [None] * size
    Ql: list = [None] * size
    Xl[0] = [0.0] * C
    Ql[0] = [[0.0] * K for _ in classes]
    Kr = range(K)
    for m, at in _lattice(tuple(int(n) for n in N)):
        Rm = [[0.0] * K for _ in classes]
        Xat = [0.0] * C
        for r in classes:
            if m[r] == 0:
                continue
            prev = at - radix[r]
            A = Ql[prev]
            Xp = Xl[prev]
            Sr, Rr = Sl[r], Rm[r]
            for k in visits[r]:
                kind = kinds[k]
                if kind == 0:
                    Rr[k] = Sr[k]
                elif kind == 1:
                    acc = 0.0
                    for s in classes:
                        acc += A[s][k]
                    Rr[k] = Sr[k] * (1.0 + acc)
                else:
                    # B_s = X_s D_sk (busy), W_s = A_sk - B_s (waiting)
                    B = [Xp[s] * Dl[s][k] for s in classes]
                    bm = 0.0
                    for s in classes:
                        bm += B[s] * Ml[s][k]
                    if kind == 2:
                        ws = 0.0
                        for s in classes:
                            ws += (A[s][k] - B[s]) * Sl[s][k]
                        Rr[k] = Sr[k] + ws + bm
                        continue
                    ws = 0.0
                    for s in same[r]:
                        ws += (A[s][k] - B[s]) * Sl[s][k]
                    hb = 0.0
                    for s in above[r]:
                        hb += B[s]
                    stretch = max(1.0 - hb, 1e-9)
                    if kind == 4:
                        bl = 0.0
                        for s in same[r]:
                            bl += B[s] * Ml[s][k]
                        v = (Sr[k] + ws + bl) / stretch
                    else:
                        v = Sr[k] + (ws + bm) / stretch
                    Rr[k] = v * gl[r][k]
            tot = 0.0
            Vlr = Vl[r]
            for k in Kr:
                tot += Vlr[k] * Rr[k]
            tot = Zl[r] + tot
            # a class with nothing to do outside k0 comes back at once: a
            # rate far above every service rate at k0 stands for it
            Xat[r] = m[r] / tot if tot > 0 else m[r] * big / max(float(np.max(S[r, k0])), 1e-300)
        Xl[at] = Xat
        Ql[at] = [[x * v * q for v, q in zip(Vc, Rc)] for x, Vc, Rc in zip(Xat, Vl, Rm)]
    return np.array(Xl, dtype=float), np.array(Ql, dtype=float).reshape(size, C, K), \
        np.array(radix, dtype=np.int64)


def _one(V, S, scv, code, level, N, Z, loop, k0, g, chains):
    """The network's figures from priority station k0's chain: (X, Q)."""
    C, K = V.shape
    m_res = S * (1.0 + scv[None, :]) / 2.0
    Xr, Qr, radix = _rest_mva(V, S, m_res, code, level, N, Z, k0, g)
    who = [c for c in range(C) if V[c, k0] > 0 and N[c] > 0]
    ch = chains.get(k0)
    if ch is None:
        ch = chains[k0] = _Chain([int(N[c]) for c in who], [S[c, k0] for c in who],
                                 [int(level[c]) for c in who], code[k0] == 4, ph_fit(scv[k0]),
                                 [loop[c, k0] for c in who])
    n_at = np.zeros((ch.M, C), dtype=np.int64)
    n_at[:, who] = ch.n
    m_idx = (N[None, :].astype(np.int64) - n_at) @ radix
    rate = Xr[m_idx][:, who] * (V[who, k0] * (1.0 - loop[who, k0]))[None, :]
    pi = ch.solve(rate)
    X = pi @ Xr[m_idx]
    Q = np.tensordot(pi, Qr[m_idx], axes=1)
    thr = pi @ ch.done
    L = pi @ ch.n
    for j, c in enumerate(who):
        X[c] = thr[j] / V[c, k0]
        Q[c, k0] = L[j]
    return X, Q


def solve_closed(V, S, scv, code, level, N, Z, direct, tol=1e-8, max_iter=200, memo=None,
                 instead=None):
    """(X, R per visit, sweeps, converged, note) by the approximation of the module
    docstring, or None when a budget is exceeded.  ``code`` per station:
    0 delay, 1 PS-like, 2 FCFS, 3 prio, 4 prio-pr; ``direct[c, k, j]`` the
    probability that class c leaving k goes straight to j (no think time in
    between).  The priority stations serving two levels or more are solved
    in one chain; when that chain is past the budget, one by one with
    surrogate factors.  ``memo(key, build)`` (the network's
    :meth:`~qmodels.model.lowered.Lowered.memo`) keeps the joint chain's
    states and transitions for a repeated solve.  ``instead()``, when
    given, is tried before the surrogate factors: an answer of its own
    (not None) is returned as it is."""
    C, K = V.shape
    N = np.asarray(N, dtype=np.int64)
    pk = [k for k in range(K) if code[k] >= 3
          and len({int(level[c]) for c in range(C) if V[c, k] > 0 and N[c] > 0}) > 1]
    try:
        X, Q, note = _solve_joint(V, S, scv, code, level, N, Z, direct, pk, memo)
        sweeps, converged = 1, True
    except _TooBig:
        if len(pk) == 1:
            return None
        if instead is not None:
            other = instead()
            if other is not None:
                return other
        out = _surrogates(V, S, scv, code, level, N, Z, direct, pk, max(tol, 1e-6), max_iter)
        if out is None:
            return None
        X, Q, sweeps, converged = out
        note = None
    with np.errstate(divide="ignore", invalid="ignore"):
        Rk = np.where(V > 0, Q / np.where(V > 0, X[:, None] * V, 1.0), S)
    return X, Rk, sweeps, converged, note


def _surrogates(V, S, scv, code, level, N, Z, direct, pk, tol, max_iter):
    """Each priority station of ``pk`` in its own chain, the others inside
    the rest's recursion with surrogate factors g (module docstring):
    (X, Q, sweeps, converged) or None past a budget."""
    C, K = V.shape
    loop = np.einsum("ckk->ck", direct)
    g = np.ones((C, K))
    chains: dict = {}
    try:
        sols = {k: _one(V, S, scv, code, level, N, Z, loop, k, g, chains) for k in pk}
        sweeps, converged = 1, False
        last = sols[pk[0]][0]
        while not converged and sweeps < max_iter:
            for k in pk:
                for j in pk:
                    if j == k:
                        continue
                    # the response time at j from j's own chain over the one
                    # k's solution gives it (surrogate factor, damped)
                    Xj, Qj = sols[j]
                    Xk, Qk = sols[k]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        ratio = (Qj[:, j] / Xj) / (Qk[:, j] / Xk)
                    ok = np.isfinite(ratio) & (ratio > 0) & (V[:, j] > 0)
                    g[ok, j] *= ratio[ok] ** 0.7
            sols = {k: _one(V, S, scv, code, level, N, Z, loop, k, g, chains) for k in pk}
            sweeps += 1
            X = sols[pk[0]][0]
            converged = bool(np.max(np.abs(X - last) / np.maximum(X, 1e-300)) < tol)
            last = X
    except _TooBig:
        return None
    # the answer of the busiest priority station's own chain, where its exact
    # queueing matters most (the others enter it by their surrogate factors);
    # on the priority-closed catalog's four networks of this form it is the
    # closer one to the simulator each time (network 58: X 9.9 % from the
    # first station's chain, 1.2 % from the busier one's)
    D = V * S
    busy = [float(sols[k][0] @ D[:, k]) for k in pk]
    X, Q = sols[pk[int(np.argmax(busy))]]
    return X, Q, sweeps, converged
