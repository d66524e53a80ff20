"""The exact chain of a fork-join network: :func:`qmodels.ctmc`'s answer
for a network with fork-joins.

What it models (anything else is refused by name, :func:`refusal`): one
closed class, or one open class of Poisson arrivals (its jobs truncated,
below); exponential service everywhere; fork-joins whose branches
are sequences of single-server FCFS queues, one task per branch; outside
the fork-joins delays and queues of any discipline with c servers (one
class of exponential jobs: only the number present matters, so FCFS, PS,
LCFS-PR and a one-level priority queue all complete at min(n, c) / S);
no finite capacity, token pool or load-dependent station.

The state.  A branch of FCFS single-server queues in tandem never lets a
task overtake another (first in, first out at each queue), and every job
sends its tasks down all branches at the same instant; so the unfinished
tasks on branch b always belong to the q_b most recently forked jobs, and
a job has joined exactly when no branch still holds its task.  The number
of jobs forked and not joined is therefore max_b q_b, and the jobs that
join when a task finishes are the oldest ones: the state needs only the
number of tasks at each branch queue, the number of jobs at each outside
station and the number thinking (the join's order is the fork's:
Baccelli, Massey & Towsley, "Acyclic fork-join queuing networks", JACM
36(3), 1989, sec. 2, the evolution equations of FIFO fork-join networks).
This is why delays and processor-sharing queues on branches are refused:
there a task can overtake another and the join needs the identity of each
task.

The number of states (:func:`count_states`, before anything is built).
With m jobs forked and not joined at a fork-join, branch b holds t_b <= m
tasks, some branch exactly m (the oldest job's last task), spread over its
L_b queues in any way: C(t + L - 1, L - 1) ways for t tasks, so
sum_{t<=m} = C(m + L_b, L_b) with at most m, and the fork-join has
f(m) = prod_b C(m + L_b, L_b) - prod_b C(m - 1 + L_b, L_b) configurations
(f(0) = 1).  A state is a split of the N jobs over the visited nodes
(thinking included when Z > 0), so the count is the coefficient of x^N in
the product of the nodes' generating functions (1 per count at a station,
f(m) at a fork-join): every such state is reachable (the chain's routing
is irreducible and each configuration is reached by serving tasks in a
suitable order), which the tests check against the breadth-first build.

The build.  The reachable states are found breadth first from the start
state (every job thinking, or at the node thinking leads to).  A chain of
many states (its count times its columns past lazyjit's threshold, with
numba installed) is built by the numba kernel :func:`_fj_bfs`, compiled
once and cached on disk (``cache=True``, :mod:`qmodels._jit`; ``qmodels
warm-up`` compiles it ahead); a small one, or any without numba, by the
Python builder :meth:`_Chain.build`, the reference the kernel follows
step for step (the same states in the same order, the same rates in the
same order, each the same floating-point expression;
``tests/test_ctmc_forkjoin_compiled.py``), so the answer does not depend
on which built it.

An open class.  Jobs arrive at rate lambda (Poisson) and enter where the
routing's ``"source"`` row (or the visit ratios) send them; a job routed
to ``"sink"`` (or leaving after a visit with probability 1/sum(V)) is
gone.  The state has no thinking jobs, and the chain is truncated as
:func:`qmodels.ctmc` truncates its other open networks: an arrival that
finds ``cut`` jobs present (a fork-join's counted as its jobs forked and
not joined, the largest branch total) is turned away, and the
probability of that (PASTA: the fraction of arrivals turned away) is
``info["truncation_mass"]``.  The cut starts at
:data:`~qmodels.analytic.ctmc.DEFAULT_OPEN_LIMIT` and doubles until that
probability is at most :data:`~qmodels.analytic.ctmc.TRUNCATION_TOL`
(1e-9; the label is exact then, and approximate with a warning above it)
as long as the next chain, counted before it is built, fits the states
budget (:func:`_solve_open`).  A stable network (every queue's lambda V S
/ c < 1, else :class:`~qmodels.errors.UnstableError`) has a geometric
tail in the jobs present, so the mass falls with each doubling.  The
count at a cut: every split of n <= cut jobs over the visited nodes is a
state (the sum of the coefficients of x^0 .. x^cut of the product below).
Checked against the exact 2-way fork-join of M/M/1 queues (Flatto &
Hahn, SIAM J. Appl. Math. 44(5), 1984; R = (12 - rho) / 8 / (mu -
lambda), Nelson & Tantawi, IEEE Trans. Computers 37(6), 1988) in
``tests/test_ctmc_forkjoin_open.py``.

The routing is the simulator's (:mod:`qmodels.sim.flatten`): a class given
by ``visits`` with T = sum_k V_k >= 1 ends a cycle after each visit with
probability 1/T (then thinks for Z, exponential) and otherwise, or after
thinking, goes to station k with probability V_k / T; a class given by
``routing`` (or ``route``) follows its table, a cycle ending each time a
job is routed to its reference station.

The stationary distribution pi solves pi Q = 0, sum pi = 1, by the solver
of :func:`qmodels.ctmc` (``_stationary``: sparse LU with one state pinned,
or BiCGSTAB / ILU-preconditioned Krylov methods above 2,000 states,
:mod:`qmodels.analytic._ctmc_solve`; Stewart, *Introduction to the
Numerical Solution of Markov Chains*, 1994, sec. 2.3).  Figures are
expectations under pi: at a fork-join the jobs forked and not joined
E[max_b q_b], the fork rate (the completion rate of the first queue of
its first branch: each fork sends one task through it) and, by Little's
law, the fork-join time E[max_b q_b] / X_f (Little 1961); at a branch
queue the mean tasks, the task throughput P(q > 0) / S and U = X S; at an
outside queue E[n], E[min(n, c)] / S and U = E[min(n, c)] / c; at a
delay E[n], E[n] / S and U = E[n].  The class throughput is the rate of
visits to its first visited node over that node's visit ratio, and its
response time N / X - Z (the interactive response time law); an open
class's X is the rate of accepted arrivals, lambda (1 - mass at the cut)
(PASTA), and its response time E[jobs present] / X
(Little's law).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from .._jit import HAVE_NUMBA, jitable, lazyjit
from ..errors import ProblemTooLargeError, UnsupportedModelError
from ..model.distributions import is_exponential
from ..model.forkjoin import ForkJoin, branch_owner
from ..model.network import Closed, Delay, Network, Open, Queue
from ..results import Result, label_of
from ._ctmc_fast import _grow

__all__ = ["refusal", "count_states", "solve", "ASSUMPTION"]

#: what the answer assumes beyond the CTMC's own label
ASSUMPTION = ("fork-join chain of queue lengths: the tasks of a branch of single-server "
              "FCFS queues keep their fork order, so the jobs forked and not joined number "
              "max over branches of the tasks there (Baccelli, Massey & Towsley 1989)")


def refusal(net: Network) -> str | None:
    """None when the fork-join chain models ``net`` (module docstring),
    else one sentence naming the class or station it cannot, and why."""
    if net.is_symbolic:
        return "the network has sympy symbols (a numeric method needs numbers)"
    if len(net.classes) != 1:
        return (f"the fork-join chain models one class; the network has {len(net.classes)} "
                f"({', '.join(map(repr, net.class_names))})")
    c = net.classes[0]
    if isinstance(c, Open):
        if not is_exponential(c.interarrival):
            return (f"class {c.name!r}: inter-arrival times "
                    f"{type(c.interarrival).__name__}; the fork-join chain needs Poisson "
                    "arrivals")
        if not float(c.arrival_rate) > 0:
            return (f"class {c.name!r}: arrival rate {float(c.arrival_rate):g}; the fork-join "
                    "chain needs a positive one")
    elif not isinstance(c, Closed):
        return (f"class {c.name!r} is of kind {c.kind!r}: the fork-join chain models a "
                "closed or an open class")
    if net.pools:
        return (f"token pool {net.pools[0].name!r}: the fork-join chain models no held "
                "resources")
    own = branch_owner(net.stations)
    low = net.lowered
    S = np.asarray(net.service_times, dtype=float)[0]
    V = np.asarray(net.visits, dtype=float)[0]
    for k, s in enumerate(net.stations):
        if isinstance(s, ForkJoin):
            if any(int(t) != 1 for t in s.tasks):
                return (f"fork-join {s.name!r}: tasks {list(s.tasks)}; the fork-join chain "
                        "models one task per branch")
            continue
        if getattr(s, "capacity", None) is not None:
            return f"station {s.name!r}: finite capacity {s.capacity}; the fork-join chain has none"
        if s.name in own:
            if not (isinstance(s, Queue) and int(s.servers) == 1 and s.discipline == "fcfs"):
                what = (f"a {s.discipline!r} queue with {s.servers} server(s)"
                        if isinstance(s, Queue) else f"a {s.kind!r} station")
                fj, b = own[s.name]
                return (f"station {s.name!r} on branch {b} of fork-join {fj!r} is "
                        f"{what}: the fork-join chain needs single-server FCFS queues on "
                        "branches (elsewhere a task can overtake another and the join needs "
                        "each task's identity)")
        elif not isinstance(s, (Delay, Queue)):
            return (f"station {s.name!r} is a {s.kind!r} station: the fork-join chain models "
                    "delays and queues outside fork-joins")
        if V[k] > 0 or s.name in own:
            if not low.exponential[k]:
                return (f"station {s.name!r}: {low.shape_words(k)}; the fork-join chain "
                        "needs exponential service")
            if not S[k] > 0:
                return (f"station {s.name!r}: service time {S[k]:g}; the fork-join chain "
                        "needs positive service times")
    return None


# ---------------------------------------------------------------------------
# the chain
# ---------------------------------------------------------------------------

def _nodes(net):
    """Top-level nodes (outside stations and fork-joins, not branch
    stations): (kind, name, parameter), the parameter being the rate 1/S
    (a delay), (rate, servers) (a queue) or the branch rates (a
    fork-join)."""
    own = branch_owner(net.stations)
    S = np.asarray(net.service_times, dtype=float)[0]
    idx = {n: k for k, n in enumerate(net.station_names)}
    nodes = []
    for k, s in enumerate(net.stations):
        if s.name in own:
            continue
        if isinstance(s, ForkJoin):
            nodes.append(("fj", s.name, [[1.0 / S[idx[x]] for x in b] for b in s.branches]))
        elif isinstance(s, Delay):
            nodes.append(("delay", s.name, 1.0 / S[k] if S[k] > 0 else 0.0))
        else:
            nodes.append(("queue", s.name, (1.0 / S[k] if S[k] > 0 else 0.0, int(s.servers))))
    return nodes


def _routing(net, nodes):
    """(P over nodes + think, index of think, visit ratio of each node, Z).
    For an open class "think" is the outside: its row is where arrivals
    enter, a move to it a departure, and Z = 0 (nothing is folded)."""
    c = net.classes[0]
    names = [n[1] for n in nodes]
    idx = {n: i for i, n in enumerate(names)}
    M = len(nodes)
    think = M
    P = np.zeros((M + 1, M + 1))
    is_open = isinstance(c, Open)
    Z = 0.0 if is_open else float(c.think_time)
    V = np.array([float(net.visits[0][net.station_index(n)]) for n in names])
    if c.routing is None:
        T = float(V.sum())
        if T < 1.0:
            raise UnsupportedModelError(
                f"class {c.name!r}: visits summing to {T:g} < 1 per "
                f"{'arrival' if is_open else 'cycle'}; the fork-join chain routes at random "
                f"with a {'job leaving' if is_open else 'cycle ending'} after each visit with "
                "probability 1/sum(V)")
        p = V / T
        for i in range(M):
            P[i, think] = 1.0 / T
            P[i, :M] = (1.0 - 1.0 / T) * p
        P[think, :M] = p
    elif is_open:
        for src, row in c.routing.items():
            i = think if src == "source" else idx[src]
            for dst, pr in row.items():
                P[i, think if dst == "sink" else idx[dst]] += float(pr)
    else:
        ref = c.reference
        for src, row in c.routing.items():
            for dst, pr in row.items():
                j = think if dst == ref else idx[dst]
                P[idx[src], j] += float(pr)
        P[think, idx[ref]] = 1.0
    if Z <= 0 and not is_open:
        # thinking takes no time: a job routed to think goes on at once
        for i in range(M):
            P[i, :M] += P[i, think] * P[think, :M]
            P[i, think] = 0.0
    return P, think, V, Z


class _Chain:
    """The nodes, routing and state layout of one network: a state is
    [thinking, then per node its block]: an outside station's block is its
    job count, a fork-join's the task counts of its branch queues in order.

    An open class (Poisson arrivals at rate ``lam``): the thinking column
    stays 0, an arrival is the one move of "thinking" (rate ``lam``, routed
    by the row of P that says where arrivals enter) while the open jobs
    present (:meth:`total`) are fewer than ``cut``, and a job routed to
    "thinking" leaves."""

    def __init__(self, net, cut: int = 0):
        self.nodes = _nodes(net)
        self.P, self.think, self.V, self.Z = _routing(net, self.nodes)
        c = net.classes[0]
        self.open = isinstance(c, Open)
        self.lam = float(c.arrival_rate) if self.open else 0.0
        #: the most open jobs present (arrivals at the cut are turned away)
        self.cut = int(cut)
        self.M = len(self.nodes)
        self.offs, pos = [], 1
        for kind, _, par in self.nodes:
            self.offs.append(pos)
            pos += sum(len(b) for b in par) if kind == "fj" else 1
        self.L = pos
        # the (destination, probability) pairs of each row of P
        self.out = [[(j, float(self.P[i, j])) for j in range(self.M + 1) if self.P[i, j] > 0]
                    for i in range(self.M + 1)]

    def jobs(self, s, i):
        """Jobs at node i in state s (at a fork-join: the largest branch total)."""
        kind, _, par = self.nodes[i]
        o = self.offs[i]
        if kind != "fj":
            return s[o]
        m, p = 0, o
        for b in par:
            m = max(m, sum(s[p:p + len(b)]))
            p += len(b)
        return m

    def total(self, s):
        """Jobs present in state s (thinking excluded): at a fork-join the
        jobs forked and not joined."""
        return sum(self.jobs(s, i) for i in range(self.M))

    def enter(self, s, j):
        """The state after a job arrives at node j (or starts thinking; an
        open job routed there leaves)."""
        s = list(s)
        if j == self.think:
            if not self.open:
                s[0] += 1
            return s
        kind, _, par = self.nodes[j]
        p = self.offs[j]
        if kind != "fj":
            s[p] += 1
            return s
        for b in par:        # a task at the first queue of every branch
            s[p] += 1
            p += len(b)
        return s

    def route(self, s, i, rate, out):
        for j, pr in self.out[i]:
            out.append((tuple(self.enter(s, j)), rate * pr))

    def _branch_moves(self, s, i, out):
        _, _, par = self.nodes[i]
        before = self.jobs(s, i)
        p = self.offs[i]
        for b in par:
            for q, mu in enumerate(b):
                if s[p + q] == 0:
                    continue
                t = list(s)
                t[p + q] -= 1
                if q + 1 < len(b):
                    t[p + q + 1] += 1
                    out.append((tuple(t), mu))
                elif self.jobs(t, i) < before:     # the oldest job joins
                    self.route(t, i, mu, out)
                else:
                    out.append((tuple(t), mu))
            p += len(b)

    def moves(self, s):
        """(next state, rate) of every transition out of s."""
        out = []
        if self.open and self.total(s) < self.cut:    # an arrival
            self.route(s, self.think, self.lam, out)
        if s[0] > 0 and self.Z > 0:
            t = list(s)
            t[0] -= 1
            self.route(t, self.think, s[0] / self.Z, out)
        for i, (kind, _, par) in enumerate(self.nodes):
            o = self.offs[i]
            if kind == "fj":
                self._branch_moves(s, i, out)
            elif s[o] > 0:
                t = list(s)
                t[o] -= 1
                rate = s[o] * par if kind == "delay" else min(s[o], par[1]) * par[0]
                self.route(t, i, rate, out)
        return out

    def start(self, N):
        """The first state: every job thinking (Z > 0), else every job at
        the node a job leaving thinking most likely goes to."""
        start = [0] * self.L
        if self.open:
            return tuple(start)      # the empty network
        if self.Z > 0:
            start[0] = N
        else:
            j = int(np.argmax(self.P[self.think, :self.M]))
            for _ in range(N):
                start = self.enter(start, j)
        return tuple(start)

    def build(self, N, max_states):
        """(states in order, rows, cols, rates) by breadth-first search (the
        reference the compiled build, :func:`_fj_bfs`, follows step for
        step)."""
        start = self.start(N)
        index = {start: 0}
        order = [start]
        rows, cols, vals = [], [], []
        queue = deque([start])
        while queue:
            s = queue.popleft()
            a = index[s]
            for t, r in self.moves(s):
                b = index.get(t)
                if b is None:
                    if len(order) >= max_states:
                        raise ProblemTooLargeError(
                            f"the fork-join chain has more than max_states = {max_states} "
                            f"states (reached {max_states + 1} and still growing); reduce "
                            "the population or raise max_states")
                    b = index[t] = len(order)
                    order.append(t)
                    queue.append(t)
                rows.append(a)
                cols.append(b)
                vals.append(r)
        return order, rows, cols, vals

    def fj_jobs(self, S, i):
        """max over branches of the branch totals, per state (rows of S)."""
        _, _, par = self.nodes[i]
        o = self.offs[i]
        m = np.zeros(len(S))
        for b in par:
            m = np.maximum(m, S[:, o:o + len(b)].sum(axis=1))
            o += len(b)
        return m

    def arrays(self, N):
        """The flat arrays the compiled build reads (:func:`_fj_bfs`): per
        node ``kind`` (0 delay, 1 queue, 2 fork-join), ``off`` (its first
        column), ``rate`` (1/S of an outside station), ``servers``, its
        branches ``bptr[i]`` to ``bptr[i + 1]``; per branch its first
        column ``bcol`` and length ``blen``; per column ``cmu`` (the rate of
        a branch queue) and ``hmul`` (the hash multiplier); the routing as
        rows ``rptr[i]`` to ``rptr[i + 1]`` of ``rdest`` and ``rprob`` for
        each node and thinking (row M), in the order of :attr:`out`; the
        start state; ``Z``; an open class's arrival rate ``lam`` (0 for a
        closed one) and ``cut``; ``room``, the most moves out of one state."""
        M, L = self.M, self.L
        kind = np.zeros(M, dtype=np.int64)
        rate = np.zeros(M)
        servers = np.zeros(M, dtype=np.int64)
        bptr, bcol, blen = [0], [], []
        cmu = np.zeros(L)
        for i, (k, _, par) in enumerate(self.nodes):
            if k == "fj":
                kind[i] = 2
                p = self.offs[i]
                for b in par:
                    bcol.append(p)
                    blen.append(len(b))
                    cmu[p:p + len(b)] = b
                    p += len(b)
            elif k == "delay":
                rate[i] = par
            else:
                kind[i] = 1
                rate[i], servers[i] = par
            bptr.append(len(bcol))
        rptr, rdest, rprob = [0], [], []
        for i in range(M + 1):
            for j, pr in self.out[i]:
                rdest.append(j)
                rprob.append(pr)
            rptr.append(len(rdest))
        # row M + 1: a task's move within its branch, one target entering
        # nothing at rate x 1.0 (exact in floating point)
        rdest.append(M + 1)
        rprob.append(1.0)
        rptr.append(len(rdest))
        # the columns a job entering each destination adds one to: a
        # station's count, the first queue of every branch of a fork-join,
        # thinking (M), nothing (M + 1)
        eptr, ecol = [0], []
        for i, (k, _, par) in enumerate(self.nodes):
            if k == "fj":
                p = self.offs[i]
                for b in par:
                    ecol.append(p)
                    p += len(b)
            else:
                ecol.append(self.offs[i])
            eptr.append(len(ecol))
        if not self.open:   # an open job "thinking" has left
            ecol.append(0)
        eptr.append(len(ecol))
        eptr.append(len(ecol))
        # the most moves out of one state: the routes of thinking and of
        # each outside station, and per branch queue one move (to the next
        # queue or, a task finishing without a join, in place) or the routes
        # of a join
        room = len(self.out[M])
        for i, (k, _, par) in enumerate(self.nodes):
            nout = len(self.out[i])
            room += sum(len(b) - 1 + max(1, nout) for b in par) if k == "fj" else nout
        # hash multipliers: odd numbers below 2**31 from a fixed seed (a row's
        # hash sum(row * hmul) stays far inside int64 for any population a
        # chain within memory can have)
        rng = np.random.default_rng(20261128)
        hmul = (rng.integers(1, 2**30, size=L, dtype=np.int64) * 2 + 1).astype(np.int64)
        return (np.asarray(self.start(N), dtype=np.int32), kind, np.asarray(self.offs,
                dtype=np.int64), rate, servers, np.asarray(bptr, dtype=np.int64),
                np.asarray(bcol, dtype=np.int64), np.asarray(blen, dtype=np.int64), cmu,
                np.asarray(rptr, dtype=np.int64), np.asarray(rdest, dtype=np.int64),
                np.asarray(rprob, dtype=np.float64), np.asarray(eptr, dtype=np.int64),
                np.asarray(ecol, dtype=np.int64), float(self.Z), float(self.lam), int(self.cut),
                hmul, int(room))


# ---------------------------------------------------------------------------
# the compiled build
# ---------------------------------------------------------------------------

@jitable
def _fj_slot(h, mask):
    """The hash-table slot of a row hash (its high bits folded in)."""
    return (h ^ (h >> 29)) & mask


@jitable
def _fj_grow(states, hashes, table, rows, cols, vals, n, nnz, room):
    """Room for ``room`` more states and triplets: the arrays doubled and the
    table rehashed (kept at most half full) when they would not hold them;
    the (maybe new) arrays."""
    if n + room > states.shape[0]:
        m = 2 * states.shape[0]
        while m < n + room:
            m *= 2
        s2 = np.zeros((m, states.shape[1]), dtype=np.int32)
        s2[:n] = states[:n]
        states = s2
        h2 = np.zeros(m, dtype=np.int64)
        h2[:n] = hashes[:n]
        hashes = h2
    if 2 * (n + room) > table.shape[0]:
        m = table.shape[0]
        while 2 * (n + room) > m:
            m *= 2
        table = np.full(m, -1, dtype=np.int64)
        mask = m - 1
        for c in range(n):
            s = _fj_slot(hashes[c], mask)
            while table[s] >= 0:
                s = (s + 1) & mask
            table[s] = c
    rows, cols, vals = _grow(rows, cols, vals, nnz, room)
    return states, hashes, table, rows, cols, vals


@lazyjit(threshold=20_000)
def _fj_bfs(start, kind, off, rate, servers, bptr, bcol, blen, cmu, rptr, rdest, rprob,  # noqa: C901
            eptr, ecol, Z, lam, cut, hmul, room, expect, max_states):
    """The breadth-first build of :meth:`_Chain.build`, compiled: the same
    states in the same order and the same triplets (rows, columns, rates)
    in the same order, each rate the same floating-point expression (the
    arrays are those of :meth:`_Chain.arrays`; ``expect`` the number of
    states foreseen, :func:`count_states`, the first size of the arrays).

    A state is a row of ``int32`` (the layout of :class:`_Chain`), found
    again through an open-addressing hash table (linear probing, at most
    half full); its hash sum(row * hmul) changes by the multipliers of the
    columns a move changes, so a target's hash costs no pass over its row.
    The moves of a state are listed first as events (a column left, maybe
    a column entered, the rate, and the routing row that follows: a job
    done at a node, M thinking, or M + 1, the one move of a task within
    its branch), in the order :meth:`_Chain.moves` makes them; then each
    event is spread over its routing row and every target looked up
    (stored if new) in the one loop below.  One body, no call per state:
    split into two helpers called per state, the build took 1.7 times as
    long (their dozens of array arguments cost reference counting on every
    call), hence the one long function.

    Returns ``(states, n, rows, cols, vals, nnz, status)``: the first ``n``
    rows and ``nnz`` triplets are the chain, ``status`` 1 when more than
    ``max_states`` states were met."""
    D = start.shape[0]
    M = kind.shape[0]
    size = max(expect, 16) + room
    states = np.zeros((size, D), dtype=np.int32)
    hashes = np.zeros(size, dtype=np.int64)
    t = 16
    while t < 2 * size:
        t *= 2
    table = np.full(t, -1, dtype=np.int64)
    rows = np.zeros(4 * size, dtype=np.int32)
    cols = np.zeros(4 * size, dtype=np.int32)
    vals = np.zeros(4 * size, dtype=np.float64)
    # the hash change of a job entering each destination (row M + 1: none)
    ehash = np.zeros(M + 2, dtype=np.int64)
    for d in range(M + 2):
        for u in range(eptr[d], eptr[d + 1]):
            ehash[d] += hmul[ecol[u]]
    h0 = 0
    for x in range(D):
        states[0, x] = start[x]
        h0 += start[x] * hmul[x]
    hashes[0] = h0
    table[_fj_slot(h0, t - 1)] = 0
    n = 1
    nnz = 0
    w = np.zeros(D, dtype=np.int32)
    tot = np.zeros(max(bcol.shape[0], 1), dtype=np.int64)
    nev = 3 + M + D
    ev_rm = np.zeros(nev, dtype=np.int64)
    ev_add = np.zeros(nev, dtype=np.int64)
    ev_src = np.zeros(nev, dtype=np.int64)
    ev_rate = np.zeros(nev, dtype=np.float64)
    i = 0
    while i < n:
        if n > max_states:
            return states, n, rows, cols, vals, nnz, 1
        if n + room > states.shape[0] or 2 * (n + room) > table.shape[0] \
                or nnz + room > rows.shape[0]:
            states, hashes, table, rows, cols, vals = _fj_grow(
                states, hashes, table, rows, cols, vals, n, nnz, room)
        mask = table.shape[0] - 1
        h = hashes[i]
        for x in range(D):
            w[x] = states[i, x]
        # the events, in the order of _Chain.moves
        m = 0
        if lam > 0:
            # an open class: an arrival while fewer than cut jobs are
            # present (column 0 left and entered: no change but the routing)
            jobs = 0
            for node in range(M):
                if kind[node] == 2:
                    most = 0
                    for b in range(bptr[node], bptr[node + 1]):
                        q = 0
                        for x in range(bcol[b], bcol[b] + blen[b]):
                            q += w[x]
                        if q > most:
                            most = q
                    jobs += most
                else:
                    jobs += w[off[node]]
            if jobs < cut:
                ev_rm[m] = 0
                ev_add[m] = 0
                ev_src[m] = M
                ev_rate[m] = lam
                m += 1
        if w[0] > 0 and Z > 0:  # a job ends its think time
            ev_rm[m] = 0
            ev_add[m] = -1
            ev_src[m] = M
            ev_rate[m] = w[0] / Z
            m += 1
        for node in range(M):
            o = off[node]
            k = kind[node]
            if k == 2:
                # the branch totals: the jobs forked and not joined is the
                # largest, and a task ending the only largest branch joins
                # the oldest job
                most = 0
                ties = 0
                for b in range(bptr[node], bptr[node + 1]):
                    q = 0
                    for x in range(bcol[b], bcol[b] + blen[b]):
                        q += w[x]
                    tot[b] = q
                    if q > most:
                        most = q
                        ties = 1
                    elif q == most:
                        ties += 1
                for b in range(bptr[node], bptr[node + 1]):
                    last = bcol[b] + blen[b] - 1
                    for x in range(bcol[b], last + 1):
                        if w[x] == 0:
                            continue
                        ev_rm[m] = x
                        ev_rate[m] = cmu[x]
                        if x < last:  # on to the next queue of the branch
                            ev_add[m] = x + 1
                            ev_src[m] = M + 1
                        else:  # done: the oldest job joins, or the task waits
                            ev_add[m] = -1
                            ev_src[m] = node if tot[b] == most and ties == 1 else M + 1
                        m += 1
            elif w[o] > 0:
                ev_rm[m] = o
                ev_add[m] = -1
                ev_src[m] = node
                if k == 0:  # a delay: every job in service
                    ev_rate[m] = w[o] * rate[node]
                else:  # a queue of c servers
                    ev_rate[m] = min(w[o], servers[node]) * rate[node]
                m += 1
        # every event spread over its routing row, each target found or stored
        for v in range(m):
            rm = ev_rm[v]
            add = ev_add[v]
            w[rm] -= 1
            hb = h - hmul[rm]
            if add >= 0:
                w[add] += 1
                hb += hmul[add]
            for e in range(rptr[ev_src[v]], rptr[ev_src[v] + 1]):
                d = rdest[e]
                for u in range(eptr[d], eptr[d + 1]):
                    w[ecol[u]] += 1
                g = hb + ehash[d]
                s = _fj_slot(g, mask)
                j = -1
                while table[s] >= 0:
                    c = table[s]
                    if hashes[c] == g:
                        x = 0
                        while x < D and states[c, x] == w[x]:
                            x += 1
                        if x == D:
                            j = c
                            break
                    s = (s + 1) & mask
                if j < 0:  # a new state
                    j = n
                    for x in range(D):
                        states[n, x] = w[x]
                    hashes[n] = g
                    table[s] = n
                    n += 1
                rows[nnz] = i
                cols[nnz] = j
                vals[nnz] = ev_rate[v] * rprob[e]
                nnz += 1
                for u in range(eptr[d], eptr[d + 1]):
                    w[ecol[u]] -= 1
            w[rm] += 1
            if add >= 0:
                w[add] -= 1
        i += 1
    if n > max_states:
        return states, n, rows, cols, vals, nnz, 1
    return states, n, rows, cols, vals, nnz, 0

def build(ch: _Chain, N: int, max_states: int, expect: int, compiled: bool | None = None):
    """The chain of ``ch`` at population N: ``(states, rows, cols, vals,
    build)``, ``states`` an (n, L) integer array of the states in
    breadth-first order, the triplets the off-diagonal rates (repeated
    pairs summed by the solve) and ``build`` ``"compiled"`` or
    ``"python"``.  ``compiled`` forces the numba kernel (True,
    :func:`_fj_bfs`) or the Python builder (False, :meth:`_Chain.build`);
    by default the kernel serves chains of ``expect`` states (counted
    before, :func:`count_states`) times L columns past lazyjit's threshold
    when numba is installed (below it, or without numba, the Python
    builder is the quicker: no compile or cache load, and the kernel's
    plain-Python twin is slower than it).  Both give the same states in
    the same order and the same triplets."""
    if compiled is None:
        compiled = HAVE_NUMBA and expect * ch.L >= _fj_bfs.threshold
    if not compiled:
        order, rows, cols, vals = ch.build(N, max_states)
        return (np.array(order, dtype=np.int32).reshape(len(order), ch.L),
                np.asarray(rows, dtype=np.int32), np.asarray(cols, dtype=np.int32),
                np.asarray(vals, dtype=np.float64), "python")
    states, n, rows, cols, vals, nnz, status = _fj_bfs(*kernel_args(ch, N, max_states, expect))
    if status:
        raise ProblemTooLargeError(
            f"the fork-join chain has more than max_states = {max_states} states (reached "
            f"{n:,} and still growing); reduce the population or raise max_states")
    if 4 * nnz < 3 * len(rows):
        # the triplets grew by doubling: keep only what is used (the solve
        # holds them, at its own peak of memory)
        return states[:n], rows[:nnz].copy(), cols[:nnz].copy(), vals[:nnz].copy(), "compiled"
    return states[:n], rows[:nnz], cols[:nnz], vals[:nnz], "compiled"


def kernel_args(ch: _Chain, N: int, max_states: int, expect: int) -> tuple:
    """The arguments of :func:`_fj_bfs` for ``ch`` at population N."""
    return ch.arrays(N) + (int(max(expect, 1)), int(max_states))

def count_states(net: Network, cap: int | None = None, cut: int | None = None) -> int:
    """The number of states of the chain (module docstring), without
    building it; the network must pass :func:`refusal`.  With ``cap``, a
    count known to pass ``cap`` may be returned as a lower bound above it
    (each of the M visited nodes, thinking included, takes at least one
    configuration per job count, so there are at least C(N + M - 1, M - 1)
    states): the count then costs little whatever the population.

    An open class's chain at ``cut`` (required then) has every split of n
    <= cut jobs over the visited nodes: the sum of the coefficients of x^0
    .. x^cut of the same product (at least C(cut + M, M) states)."""
    nodes = _nodes(net)
    _, _, V, Z = _routing(net, nodes)
    is_open = isinstance(net.classes[0], Open)
    N = int(cut) if is_open else int(net.classes[0].population)
    visited = [nd for nd, v in zip(nodes, V) if v > 0]
    M = len(visited) + (1 if Z > 0 else 0)
    if cap is not None and M >= 2:
        lb = math.comb(N + M, M) if is_open else math.comb(N + M - 1, M - 1)
        if lb > cap:
            return lb
    parts = ([[1] * (N + 1)] if Z > 0 else [])
    for kind, _, par in visited:
        if kind != "fj":
            parts.append([1] * (N + 1))
            continue
        L = [len(b) for b in par]

        def below(m, L=L):
            return math.prod(math.comb(m + x, x) for x in L) if m >= 0 else 0

        parts.append([below(m) - below(m - 1) for m in range(N + 1)])
    if not parts:
        return 1
    if is_open:     # the splits of every n <= cut
        poly = [1] + [0] * N
        for f in parts:
            poly = [sum(poly[i] * f[n - i] for i in range(n + 1)) for n in range(N + 1)]
        return int(sum(poly))
    # the coefficient of x^N in the product: the last factor by one sum
    poly = [1] + [0] * N        # the coefficients of x^0 .. x^N
    for f in parts[:-1]:
        poly = [sum(poly[i] * f[n - i] for i in range(n + 1)) for n in range(N + 1)]
    last = parts[-1]
    return int(sum(poly[i] * last[N - i] for i in range(N + 1)))


# ---------------------------------------------------------------------------
# the answer
# ---------------------------------------------------------------------------

def solve(net: Network, max_states: int, compiled: bool | None = None,
          open_limit: int | None = None) -> Result:
    """The exact answer for a fork-join network (module docstring): a
    :class:`~qmodels.results.Result` labelled ``method="ctmc"``, exact (an
    open class's: with the truncation stated, :func:`_solve_open`).
    Refuses by name what the chain does not model
    (:class:`~qmodels.errors.UnsupportedModelError`) and a chain of more
    than ``max_states`` states before building it
    (:class:`~qmodels.errors.ProblemTooLargeError`).  ``compiled``
    chooses the build as :func:`build` does (None: by size)."""
    why = refusal(net)
    if why:
        raise UnsupportedModelError(
            f"ctmc: {why}; use method='forkjoin' (an approximation) or method='sim'")
    if isinstance(net.classes[0], Open):
        return _solve_open(net, int(max_states), compiled, open_limit)
    count = count_states(net, max_states)
    if count > max_states:
        raise ProblemTooLargeError(
            f"the fork-join chain has {count:,} states or more, more than max_states = "
            f"{max_states} (counted before building); reduce the population or raise max_states "
            "(method='forkjoin' approximates it)")
    ch = _Chain(net)
    cls = net.classes[0]
    N = int(cls.population)
    if N == 0:
        return _empty(net, solve(net.with_population(1, cls.name), max_states, compiled))
    return _figures(net, ch, N, max_states, count, compiled)


def _figures(net: Network, ch: _Chain, N: int, max_states: int, count: int,
             compiled: bool | None) -> Result:
    """Build the chain of ``ch`` (population N, or an open class's chain
    at ``ch.cut``), solve it and read the figures (module docstring)."""
    from .ctmc import _SOLVER_NAMES, _stationary

    cls = net.classes[0]
    states, rows, cols, vals, built = build(ch, N, max_states, count, compiled)
    n = len(states)
    used: list[str] = []

    def describe(i):
        return repr(tuple(int(x) for x in states[i]))

    pi, resid = _stationary(n, rows, cols, vals, describe, used)
    del rows, cols, vals
    S = states.astype(float)
    names = net.station_names
    kidx = {x: k for k, x in enumerate(names)}
    Sk = np.asarray(net.service_times, dtype=float)[0]
    K = len(names)
    Xk, Qk, Uk = np.zeros(K), np.zeros(K), np.zeros(K)
    marg = {}

    def dist(col):
        return np.bincount(col.astype(np.int64), weights=pi, minlength=1)

    for i, (kind, name, par) in enumerate(ch.nodes):
        k, o = kidx[name], ch.offs[i]
        if kind == "fj":
            m = ch.fj_jobs(S, i)
            Qk[k] = float(pi @ m)
            marg[name] = dist(m)
            fork = net.station(name)
            for b, rates in zip(fork.branches, par):
                for x, mu in zip(b, rates):
                    kb = kidx[x]
                    col = S[:, o]
                    Qk[kb] = float(pi @ col)
                    Xk[kb] = float(pi @ (col > 0)) * mu
                    Uk[kb] = Xk[kb] * Sk[kb]
                    marg[x] = dist(col)
                    o += 1
            # forks per unit time: each fork sends one task through the
            # first queue of the first branch
            Xk[k] = Xk[kidx[fork.branches[0][0]]]
        else:
            col = S[:, o]
            Qk[k] = float(pi @ col)
            marg[name] = dist(col)
            if kind == "delay":
                Xk[k] = Qk[k] * par
                Uk[k] = Qk[k]
            else:
                mu, c = par
                busy = float(pi @ np.minimum(col, c))
                Xk[k] = busy * mu
                Uk[k] = busy / c
    first = int(np.argmax(ch.V > 0))
    X = Xk[kidx[ch.nodes[first][1]]] / ch.V[first] if ch.V[first] > 0 else 0.0
    if ch.open:
        # jobs present (forked and not joined at a fork-join), Little's law
        tot = sum(ch.fj_jobs(S, i) if kind == "fj" else S[:, ch.offs[i]]
                  for i, (kind, _, _) in enumerate(ch.nodes))
        mass = float(pi @ (tot >= ch.cut))
        R = float(pi @ tot) / X if X > 0 else math.inf
    else:
        mass = 0.0
        R = N / X - float(cls.think_time) if X > 0 else math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        Rk = np.where(Xk > 0, Qk / np.where(Xk > 0, Xk, 1.0), Sk)
    Rk = np.where(np.asarray([isinstance(s, ForkJoin) for s in net.stations]) & (Xk == 0),
                  0.0, Rk)
    solver = used[0]
    how = _SOLVER_NAMES.get(solver, solver)
    fjs = [nd[1] for nd in ch.nodes if nd[0] == "fj"]
    notes = (f"CTMC of {n:,} states (fork-join chain of queue lengths, {built} build, "
             f"stationary vector by {how}; max |pi Q| = {resid:.2g})",
             "fork-join time (fork to join) per visit: "
             + ", ".join(f"{f!r} {Rk[kidx[f]]:.6g}" for f in fjs)
             + "; Q there is the jobs forked and not joined, U = 0")
    if ch.open:
        notes += (f"open jobs truncated at {ch.cut} present (a fork-join's jobs forked and not "
                  f"joined counted): probability at the bound {mass:.3g}, the fraction of "
                  "arrivals turned away (PASTA)",)
    info = {"states": n, "residual": resid, "truncation_mass": mass,
            "open_limit": ch.cut if ch.open else None,
            "loss": {cls.name: 0.0} if ch.open else {},
            "blocked": {x: 0.0 for x in names}, "pools": {},
            "marginals": marg, "linear_solver": solver, "build": f"{built}-forkjoin",
            "max_phases": None, "fits": (), "phase_capped": False,
            "fork_join_time": {f: float(Rk[kidx[f]]) for f in fjs}}
    assumed = tuple(label_of("ctmc")[1]) + (ASSUMPTION,)
    if cls.routing is None and int((np.asarray(net.visits)[0] != 0).sum()) > 1:
        assumed += ("classes given by visits routed at random in proportion to them (not in "
                    "path order)",)
    exactness, warned, error = "exact", (), None
    if ch.open:
        from .ctmc import TRUNCATION_TOL

        assumed += (f"open jobs truncated at {ch.cut} in the network, counting a fork-join's "
                    f"jobs forked and not joined (probability at the bound {mass:.3g}, the "
                    "fraction of arrivals turned away)",)
        if mass > TRUNCATION_TOL:
            # as qm.ctmc labels its other truncated chains
            exactness = "approximate"
            warned = (f"the open-job truncation at {ch.cut} holds probability {mass:.3g} > "
                      f"{TRUNCATION_TOL:g}: the figures are those of the truncated chain; "
                      "raise open_limit (or max_states) for an exact answer",)
            error = {"validated": False, "source": "truncation", "truncation_mass": mass,
                     "open_limit": ch.cut}
    return Result(
        method="ctmc",
        network=net,
        class_throughput=np.array([X]),
        class_response_time=np.array([R]),
        station_throughput=Xk[None, :],
        station_queue_length=Qk[None, :],
        station_response_time=Rk[None, :],
        station_utilization=Uk[None, :],
        notes=notes,
        info=info,
        exactness=exactness,
        assumptions=assumed,
        warnings=warned,
        error=error,
    )


def _check_stable(net: Network) -> None:
    """Refuse (:class:`~qmodels.errors.UnstableError`) an open class that
    loads a station to rho = lambda V S / c >= 1 (a branch queue: the
    fork-join's visit ratio, each fork sending one task through it): the
    chain has no steady state, and its truncation would answer with the
    figures of the truncation.  Below that every queue, and so the
    largest branch total, is stable (each branch a tandem of stable
    queues fed at lambda V)."""
    from ..errors import UnstableError

    lam = float(net.classes[0].arrival_rate)
    V = np.asarray(net.visits, dtype=float)[0]
    S = np.asarray(net.service_times, dtype=float)[0]
    own = branch_owner(net.stations)
    for k, s in enumerate(net.stations):
        if not isinstance(s, Queue):
            continue
        v = V[net.station_index(own[s.name][0])] if s.name in own else V[k]
        rho = lam * v * S[k] / int(s.servers)
        if rho >= 1.0:
            raise UnstableError(
                f"station {s.name!r} is unstable: its open load rho = lambda V S / c = "
                f"{rho:.6g} >= 1", station=s.name, rho=rho)


def _solve_open(net: Network, max_states: int, compiled: bool | None,
                open_limit: int | None) -> Result:
    """The chain of an open fork-join network truncated at ``open_limit``
    jobs present, a fork-join's jobs forked and not joined counted (its
    largest branch total): by default the cut starts at
    :data:`~qmodels.analytic.ctmc.DEFAULT_OPEN_LIMIT` and doubles until the
    probability at it (the fraction of arrivals turned away, PASTA) is at
    most :data:`~qmodels.analytic.ctmc.TRUNCATION_TOL`, as long as the next
    chain, counted exactly before it is built (:func:`count_states`), has
    at most :data:`~qmodels.analytic.ctmc.GROW_STATES` and ``max_states``
    states; else a note says where it stopped.  A
    :class:`~qmodels.errors.NumericalWarning` when the mass left passes
    1e-6, as :func:`qmodels.ctmc` warns for its other open networks."""
    import dataclasses
    import warnings

    from ..errors import NumericalWarning
    from .ctmc import DEFAULT_OPEN_LIMIT, GROW_STATES, TRUNCATION_TOL, shortfall

    _check_stable(net)
    cut = DEFAULT_OPEN_LIMIT if open_limit is None else int(open_limit)
    res, why = None, None
    while True:
        count = count_states(net, max_states, cut)
        if count > max_states:
            if res is None:
                raise ProblemTooLargeError(
                    f"the fork-join chain truncated at {cut} open jobs has {count:,} states or "
                    f"more, more than max_states = {max_states} (counted before building); "
                    "lower open_limit or raise max_states (method='forkjoin' approximates it)")
            why = f"a bound of {cut} would pass max_states = {max_states}"
            break
        res = _figures(net, _Chain(net, cut), 0, max_states, count, compiled)
        if open_limit is not None or res.info["truncation_mass"] <= TRUNCATION_TOL:
            break
        nxt = count_states(net, None, 2 * cut)
        if nxt > min(GROW_STATES, max_states):
            why = (f"a bound of {2 * cut} would need {nxt:,} states (the default grows to "
                   f"{GROW_STATES:,}; pass open_limit= for a larger chain)")
            break
        cut *= 2
    mass = float(res.info["truncation_mass"])
    if mass > 1e-6:
        warnings.warn(
            f"ctmc: open population truncated at {res.info['open_limit']} holds probability "
            f"{mass:.3g} (mean queues may be short by about "
            f"{100 * shortfall(res.info['open_limit'], mass):.2g} %: (K + 1) p, exact for one "
            "M/M/1/K queue); raise open_limit for an exact answer", NumericalWarning, stacklevel=4)
    if why is not None:
        res = dataclasses.replace(res, notes=tuple(res.notes) + (
            f"the open-job bound stopped growing at {res.info['open_limit']}: {why}",))
    return res


def _empty(net: Network, one: Result) -> Result:
    """The answer at population 0: no throughput, no job anywhere, and
    each response time what a lone job would see (the answer at N = 1, the
    arrival theorem's convention, as :func:`qmodels.ctmc` and exact MVA
    report at N = 0)."""
    import dataclasses

    zero = np.zeros((1, len(net.stations)))
    info = dict(one.info)
    info["fork_join_time"] = dict(one.info["fork_join_time"])
    info["states"] = 1
    info["marginals"] = {x: np.ones(1) for x in net.station_names}
    return dataclasses.replace(
        one, network=net, class_throughput=np.zeros(1), station_throughput=zero,
        station_queue_length=zero, station_utilization=zero, info=info,
        notes=("population 0: no job; response times are a lone job's (the chain at N = 1)",))
