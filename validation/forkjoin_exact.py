"""An exact reference for closed fork-join networks: the continuous-time
Markov chain of the queue lengths.

``qm.ctmc`` does not model fork-joins; this module does, for the networks
the validation of the fork-join approximations needs: one closed class,
exponential service, stations outside fork-joins that are single-server
queues (any discipline: one class of exponential jobs, so only the number
present matters) or delays, and fork-joins whose branches are sequences of
single-server FCFS queues, one task per branch.

The state.  A branch of FCFS single-server queues in tandem never lets a
task overtake another (first in, first out at each queue), and every job
sends its tasks down all branches at the same instant; so the unfinished
tasks on branch b always belong to the q_b most recently forked jobs, and
a job has joined exactly when no branch still holds its task.  The number
of jobs forked and not joined is therefore max_b q_b, and the jobs that
join when a task finishes are the oldest ones: the state needs only the
number of tasks at each branch queue, the number of jobs at each outside
station and the number thinking (the join's order is the fork's: Baccelli,
Massey & Towsley, "Acyclic fork-join queuing networks", JACM 36(3), 1989,
sec. 2, the evolution equations of FIFO fork-join networks).  This is why
delays and processor-sharing queues on branches are refused: there a task
can overtake another and the join needs the identity of each task.

The routing is the simulator's (:mod:`qmodels.sim.flatten`): a class given
by ``visits`` with T = sum_k V_k >= 1 ends a cycle after each visit with
probability 1/T (then thinks for Z, exponential) and otherwise, or after
thinking, goes to station k with probability V_k / T; a class given by
``routing`` (or ``route``) follows its table, a cycle ending each time a
job is routed to its reference station.

The stationary distribution pi solves pi Q = 0, sum pi = 1, by the
solver of ``qm.ctmc`` (:func:`qmodels.analytic.ctmc._stationary`: BiCGSTAB
or a sparse LU with one state's probability pinned; Stewart, *Introduction
to the Numerical Solution of Markov Chains*, 1994, sec. 2.3).  The class
throughput is the rate of visits to the reference node divided by its
visit ratio; the fork-join time is, by
Little's law, the mean number of jobs forked and not joined over the rate
of forks.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

import qmodels as qm
from qmodels.errors import ProblemTooLargeError, UnsupportedModelError
from qmodels.model.distributions import is_exponential
from qmodels.model.forkjoin import ForkJoin, branch_owner

__all__ = ["solve", "MAX_STATES"]

#: the largest chain this reference builds (a Python breadth-first search)
MAX_STATES = 400_000


def _nodes(net):
    """Top-level nodes (outside stations and fork-joins, not branch
    stations) and the description of each."""
    own = branch_owner(net.stations)
    nodes = []
    for s in net.stations:
        if s.name in own:
            continue
        if isinstance(s, ForkJoin):
            if any(t != 1 for t in s.tasks):
                raise UnsupportedModelError(f"fork-join {s.name!r}: one task per branch only")
            br = []
            for b in s.branches:
                rates = []
                for x in b:
                    st = net.station(x)
                    if not (isinstance(st, qm.Queue) and st.servers == 1
                            and st.discipline == "fcfs" and is_exponential(st.distribution)):
                        raise UnsupportedModelError(
                            f"branch station {x!r}: the exact fork-join chain needs "
                            "single-server FCFS exponential queues on branches")
                    rates.append(1.0 / float(st.service))
                br.append(rates)
            nodes.append(("fj", s.name, br))
        elif isinstance(s, qm.Delay):
            nodes.append(("delay", s.name, 1.0 / float(s.service)))
        elif isinstance(s, qm.Queue) and s.servers == 1 and is_exponential(s.distribution):
            nodes.append(("queue", s.name, 1.0 / float(s.service)))
        else:
            raise UnsupportedModelError(f"station {s.name!r}: not modelled by the exact chain")
    return nodes


def _routing(net, nodes):
    """(P over nodes + think, index of think, visit ratio of each node)."""
    c = net.classes[0]
    names = [n[1] for n in nodes]
    idx = {n: i for i, n in enumerate(names)}
    M = len(nodes)
    think = M
    P = np.zeros((M + 1, M + 1))
    Z = float(c.think_time)
    V = np.array([float(net.visits[0][net.station_index(n)]) for n in names])
    if c.routing is None:
        T = float(V.sum())
        if T < 1.0:
            raise UnsupportedModelError("visits summing below 1 are not modelled")
        p = V / T
        for i in range(M):
            P[i, think] = 1.0 / T
            P[i, :M] = (1.0 - 1.0 / T) * p
        P[think, :M] = p
    else:
        ref = c.reference
        for src, row in c.routing.items():
            for dst, pr in row.items():
                j = think if dst == ref else idx[dst]
                P[idx[src], j] += float(pr)
        P[think, idx[ref]] = 1.0
    if Z <= 0:
        # thinking takes no time: a job routed to think goes on at once
        for i in range(M):
            P[i, :M] += P[i, think] * P[think, :M]
            P[i, think] = 0.0
    return P, think, V, Z


class _Chain:
    """The nodes, routing and state layout of one network: a state is
    [thinking, then per node its block]: an outside station's block is its
    job count, a fork-join's the task counts of its branch queues in order."""

    def __init__(self, net):
        self.nodes = _nodes(net)
        self.P, self.think, self.V, self.Z = _routing(net, self.nodes)
        self.M = len(self.nodes)
        self.offs, pos = [], 1
        for kind, _, par in self.nodes:
            self.offs.append(pos)
            pos += sum(len(b) for b in par) if kind == "fj" else 1
        self.L = pos

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

    def enter(self, s, j):
        """The state after a job arrives at node j (or starts thinking)."""
        s = list(s)
        if j == self.think:
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
        for j in range(self.M + 1):
            pr = self.P[i, j]
            if pr > 0:
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
                self.route(t, i, par if kind == "queue" else s[o] * par, out)
        return out

    def build(self, N, max_states):
        """(states in order, rows, cols, rates) by breadth-first search."""
        start = [0] * self.L
        if self.Z > 0:
            start[0] = N
        else:
            j = int(np.argmax(self.P[self.think, :self.M]))
            for _ in range(N):
                start = self.enter(start, j)
        start = tuple(start)
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
                    b = index[t] = len(order)
                    order.append(t)
                    queue.append(t)
                    if len(order) > max_states:
                        raise ProblemTooLargeError(
                            f"exact fork-join chain: more than {max_states} states")
                rows.append(a)
                cols.append(b)
                vals.append(r)
        return order, rows, cols, vals

    def figures(self, S, pi):
        """(mean jobs, throughput) per node from the states S and pi."""
        Q = np.zeros(self.M)
        X = np.zeros(self.M)
        for i, (kind, _, par) in enumerate(self.nodes):
            o = self.offs[i]
            if kind == "queue":
                Q[i] = float(pi @ S[:, o])
                X[i] = float(pi @ (S[:, o] > 0)) * par
            elif kind == "delay":
                Q[i] = float(pi @ S[:, o])
                X[i] = Q[i] * par
            else:
                nb = sum(len(b) for b in par)
                blk = S[:, o:o + nb]
                m = np.zeros(len(pi))
                p = 0
                for b in par:
                    m = np.maximum(m, blk[:, p:p + len(b)].sum(axis=1))
                    p += len(b)
                Q[i] = float(pi @ m)
                # forks per unit time: each fork sends one task through the
                # first queue of branch 0
                X[i] = float(pi @ (blk[:, 0] > 0)) * par[0][0]
        return Q, X


def solve(net, max_states: int = MAX_STATES) -> dict:
    """Exact mean values of a closed single-class fork-join network (module
    docstring): {"X": class throughput, "R": class response time (think
    time excluded), "R_station": {fork-join or outside station: mean time
    per visit}, "Q_station": {...}, "states": number of states}."""
    from qmodels.analytic.ctmc import _stationary

    if len(net.classes) != 1 or not isinstance(net.classes[0], qm.Closed):
        raise UnsupportedModelError("one closed class only")
    ch = _Chain(net)
    N = int(net.classes[0].population)
    order, rows, cols, vals = ch.build(N, max_states)
    n = len(order)
    pi = _stationary(n, rows, cols, vals, lambda i: repr(order[i]))[0]
    S = np.array(order, dtype=float)
    Q_node, X_node = ch.figures(S, pi)
    ref = int(np.argmax(ch.V > 0))
    X = X_node[ref] / ch.V[ref]
    R = (N - float(pi @ S[:, 0])) / X if X > 0 else math.inf
    names = [nd[1] for nd in ch.nodes]
    return {"X": X, "R": R, "states": n,
            "R_station": {names[i]: (Q_node[i] / X_node[i] if X_node[i] > 0 else 0.0)
                          for i in range(ch.M)},
            "Q_station": {names[i]: Q_node[i] for i in range(ch.M)}}
