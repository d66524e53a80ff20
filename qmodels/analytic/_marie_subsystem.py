"""A subsystem of several FCFS queues analysed in one joint chain, fed by
the flow-equivalent of the rest of the network (:mod:`qmodels.analytic.marie`,
"Subsystems of several stations").

The chain
---------
A subsystem S is a set of single-server FCFS queues whose service of class
r at station j is phase-type (alpha_rj, T_rj) of mean S_rj
(:func:`qmodels.analytic._marie_station.phase_type`).  Its state is, per
station of S, the *sequence* of the classes of the jobs there in order of
arrival (the head in service) and the phase of the head's service: the
FCFS state of a type-1 station of the BCMP theorem (Baskett, Chandy, Muntz
& Palacios, "Open, closed, and mixed networks of queues with different
classes of customers", J. ACM 22(2), 1975, sec. 3), with the service phase
of the job in service added.  Because the order is kept and the stations
are linked directly (a job leaving station i of S for station j of S
joins j's queue at once), a fast class queued behind a slow job at one
station arrives behind it at the next: the convoy, which no station
analysed alone can see.

The rest of the network (the complement, its stations replaced by their
product-form station functions) is a flow-equivalent server (Chandy,
Herzog & Woo, "Parametric analysis of queueing networks", IBM J. Res.
Dev. 19(1), 1975; Bolch, Greiner, de Meer & Trivedi, *Queueing Networks
and Markov Chains*, 2nd ed., Wiley 2006, sec. 8.4): with n jobs in S (n
per class) it returns class r to S at the rate

    Lambda_r(n) = G_{-S}(N - n - e_r) / G_{-S}(N - n)                   (3)

(its throughput, in cycles of the class), split over the stations j of S
in proportion to the class's flow into j from outside S per cycle,

    f_rj = V_rj - sum_{i in S} V_ri P_r(i, j),                          (4)

(the visit ratios V and routing probabilities P of class r; the traffic
equations V_rj = sum_i V_ri P_r(i, j) split into the part from S and the
part from the complement).  A class-r job completing at i in S goes to j
in S with probability P_r(i, j) and to the complement with the rest.  A
class with no place outside S (no think time, every station it visits in
S) stays in S: its jobs start there and Lambda_r plays no role.

This is the subsystem analysis of B. Baynat & Y. Dallery, "A unified view
of product-form approximation techniques for general closed queueing
networks", Performance Evaluation 18(3):205-224, 1993, with a subsystem
of several stations (their multi-station subsystems), and its several
classes as in Baynat & Dallery, "A product-form approximation method for
general closed queueing networks with several classes of customers",
Performance Evaluation 24(3):165-188, 1996.  The chain is solved exactly
(sparse LU, :func:`qmodels.analytic._marie_station._pinned_stationary`);
its marginal on the population lattice, pi_S(n), gives S's product-form
station function F_S(n) = pi_S(n) / G_{-S}(N - n), eq. (2) of
:mod:`qmodels.analytic.marie` with the subsystem in place of a station.
"""

from __future__ import annotations

import numpy as np

from ._marie_station import _pinned_stationary

__all__ = ["SubsystemChain", "SUBSYSTEM_STATES"]

#: the most states of one subsystem's chain (about 0.05 s per sparse LU;
#: the chain is solved once per sweep)
SUBSYSTEM_STATES = 6_000


class SubsystemChain:
    """The joint chain of the stations ``places`` (indices into the
    network) with FCFS order kept.

    ``phs[j][r]``: the PhaseType (mean 1) of class r at place j (None where
    the class does not visit it); ``S[r][j]``: the mean service (scaled
    time); ``P[r]``: a (m, m) array of the routing probabilities between
    the places of class r; ``f[r]``: (m,) the class's flow into each place
    from outside per cycle, eq. (4) (the shares of Lambda_r); ``inside``:
    the classes with no place outside (they start at their first place);
    ``N``: the populations; ``budget``: raise :class:`OverflowError` past
    this many states."""

    def __init__(self, phs, S, P, f, N, inside, budget: int = SUBSYSTEM_STATES):
        self.m = m = len(phs)
        self.C = C = len(N)
        self.N = tuple(int(x) for x in N)
        self.dims = tuple(x + 1 for x in self.N)
        # scaled PH per (place, class): alpha, T / S, t / S
        ph = [[None] * C for _ in range(m)]
        for j in range(m):
            for r in range(C):
                p = phs[j][r]
                if p is not None and S[r][j] > 0:
                    ph[j][r] = (p.alpha, p.T / S[r][j], p.t / S[r][j])
        self._ph = ph
        exitp = np.zeros((C, m))
        for r in range(C):
            exitp[r] = 1.0 - np.asarray(P[r]).sum(axis=1)
        seed_q = [[] for _ in range(m)]
        for r in inside:
            first = next(j for j in range(m) if ph[j][r] is not None)
            seed_q[first].extend([r] * self.N[r])
        seed = tuple((tuple(q), self._first_phase(j, q[0]) if q else -1)
                     for j, q in enumerate(seed_q))
        index = {seed: 0}
        states = [seed]
        fr, fc, fv = [], [], []             # fixed rates (service)
        ar, ac, av, acl = [], [], [], []    # arrivals: coefficient, class
        head = 0
        while head < len(states):
            s = states[head]
            src = head
            head += 1
            counts = [0] * C
            for q, _p in s:
                for r in q:
                    counts[r] += 1

            def target(t):
                k = index.get(t)
                if k is None:
                    if len(states) >= budget:
                        raise OverflowError(f"more than {budget} states")
                    k = index[t] = len(states)
                    states.append(t)
                return k

            # arrivals from the complement
            for r in range(C):
                if counts[r] >= self.N[r] or r in inside:
                    continue
                for j in range(m):
                    if f[r][j] <= 0 or ph[j][r] is None:
                        continue
                    for t, w in self._join(s, j, r):
                        ar.append(src)
                        ac.append(target(t))
                        av.append(f[r][j] * w)
                        acl.append(r)
            # service at each place
            for j in range(m):
                q, p = s[j]
                if not q:
                    continue
                r = q[0]
                _a, T, t = ph[j][r]
                for p2 in range(T.shape[0]):
                    if p2 != p and T[p, p2] > 0:
                        t2 = list(s)
                        t2[j] = (q, p2)
                        fr.append(src)
                        fc.append(target(tuple(t2)))
                        fv.append(T[p, p2])
                if t[p] <= 0:
                    continue
                for left, w0 in self._leave(s, j):
                    if exitp[r, j] > 1e-14:
                        fr.append(src)
                        fc.append(target(left))
                        fv.append(t[p] * w0 * exitp[r, j])
                    for i in range(m):
                        pij = P[r][j][i]
                        if pij <= 0:
                            continue
                        for t3, w1 in self._join(left, i, r):
                            fr.append(src)
                            fc.append(target(t3))
                            fv.append(t[p] * w0 * w1 * pij)
        self.size = n = len(states)
        self.fixed = (np.array(fr, dtype=np.int64), np.array(fc, dtype=np.int64),
                      np.array(fv, dtype=float))
        self.arr = (np.array(ar, dtype=np.int64), np.array(ac, dtype=np.int64),
                    np.array(av, dtype=float), np.array(acl, dtype=np.int64))
        cnt = np.zeros((n, C), dtype=np.int64)
        per = np.zeros((n, m, C))
        busy = np.zeros((n, m, C))
        for k, s in enumerate(states):
            for j, (q, _p) in enumerate(s):
                for r in q:
                    cnt[k, r] += 1
                    per[k, j, r] += 1.0
                if q:
                    busy[k, j, q[0]] = 1.0
        self.lattice_of = np.ravel_multi_index(cnt.T, self.dims)
        self.per = per
        self.busy = busy
        self.pi = None
        self.inside = tuple(inside)

    def _first_phase(self, j, r):
        a = self._ph[j][r][0]
        return int(np.flatnonzero(a > 0)[0])

    def _join(self, s, j, r):
        """The states after a class-r job joins place j, with their
        probabilities (the phase of a job that starts service at once)."""
        q, p = s[j]
        if q:
            t = list(s)
            t[j] = (q + (r,), p)
            return [(tuple(t), 1.0)]
        out = []
        a = self._ph[j][r][0]
        for p2 in np.flatnonzero(a > 0).tolist():
            t = list(s)
            t[j] = ((r,), p2)
            out.append((tuple(t), float(a[p2])))
        return out

    def _leave(self, s, j):
        """The states after the head of place j leaves, with their
        probabilities (the next job's first phase)."""
        q, _p = s[j]
        rest = q[1:]
        if not rest:
            t = list(s)
            t[j] = ((), -1)
            return [(tuple(t), 1.0)]
        out = []
        a = self._ph[j][rest[0]][0]
        for p2 in np.flatnonzero(a > 0).tolist():
            t = list(s)
            t[j] = (rest, p2)
            out.append((tuple(t), float(a[p2])))
        return out

    def solve(self, lam):
        """log pi_S(n) on the lattice, given Lambda_r(n) of eq. (3) as
        ``lam`` (C, *dims)."""
        fr, fc, fv = self.fixed
        ar, ac, av, acl = self.arr
        lam = np.asarray(lam, dtype=float).reshape(self.C, -1)
        vals = np.concatenate([fv, av * lam[acl, self.lattice_of[ar]]])
        keep = vals > 0
        pi = _pinned_stationary(np.concatenate([fr, ar])[keep], np.concatenate([fc, ac])[keep],
                                vals[keep], self.size)
        tot = pi.sum()
        if not (np.isfinite(tot) and tot > 0):
            raise np.linalg.LinAlgError("the subsystem's chain could not be solved")
        pi = pi / tot
        self.pi = pi
        P = np.bincount(self.lattice_of, weights=pi, minlength=int(np.prod(self.dims)))
        with np.errstate(divide="ignore"):
            return np.log(P).reshape(self.dims)

    def conditional_means(self, busy: bool = False):
        """E[jobs of class r at place j | n] on the lattice: (m, C, *dims)
        (zero where P(n) = 0), from the last :meth:`solve`; with ``busy``,
        P(a class-r job in service at place j | n)."""
        L = int(np.prod(self.dims))
        P = np.bincount(self.lattice_of, weights=self.pi, minlength=L)
        out = np.zeros((self.m, self.C, L))
        per = self.busy if busy else self.per
        for j in range(self.m):
            for r in range(self.C):
                w = np.bincount(self.lattice_of, weights=self.pi * per[:, j, r], minlength=L)
                with np.errstate(divide="ignore", invalid="ignore"):
                    out[j, r] = np.where(P > 0, w / np.where(P > 0, P, 1.0), 0.0)
        return out.reshape((self.m, self.C) + self.dims)
