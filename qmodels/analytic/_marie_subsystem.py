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
(to the CTMC's residual): by sparse LU up to :data:`LU_STATES` states (as
:func:`qmodels.analytic._marie_station._pinned_stationary`), past them by
the CTMC's aggregation-multigrid-preconditioned GMRES
(:func:`qmodels.analytic._ctmc_solve.amg_gmres`), whose cost grows about
linearly with the states where the LU's fill does not (below); its
marginal on the population lattice, pi_S(n), gives S's product-form
station function F_S(n) = pi_S(n) / G_{-S}(N - n), eq. (2) of
:mod:`qmodels.analytic.marie` with the subsystem in place of a station.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SubsystemChain", "SUBSYSTEM_STATES"]

#: the most states of one subsystem's chain.  Past :data:`LU_STATES` the
#: chain is solved by the multigrid, and what grows with the states is its
#: enumeration (about 25-40 us a state, in Python) and the multigrid's
#: solves (warm-started from the last sweep's answer and hierarchy),
#: measured on one core of a shared machine: 193,921 states (two queues of
#: Erlang-32 service, 4 + 2 jobs; marie-fewjobs network 96) enumerated in
#: 4-5 s, first solve 3.7 s, the next 0.2 s, the whole answer 7-15 s and
#: 235 MB; 171,629 states (three queues, three classes of 2-4 jobs) 7.5 s;
#: two pairs of 96,419 and 34,823 states over 9 sweeps 9.6 s.  (The sparse
#: LU, the solver before the multigrid, took 12 s at 21,693 states, 26 s
#: at 39,417, and 322 s at 27,064 states of four queues: its fill, not the
#: states, sets its cost; the multigrid solved those in 0.8, 1.5 and 0.7 s.)
SUBSYSTEM_STATES = 200_000


#: up to this many states the chain is solved by sparse LU (and later
#: sweeps by GMRES preconditioned by it), past them by the multigrid
#: (:meth:`SubsystemChain._stationary`): the LU's first factorisation took
#: 0.1-0.3 s at 3,000-8,000 states (1.5 s at 5,500 states of three queues
#: and three classes), the multigrid's first solve 0.1-0.4 s there; the
#: chains the LU solved before the multigrid was added stay with it
LU_STATES = 6_000
#: the largest chain whose LU is tried where the multigrid's solve fails
#: (its factorisation can take minutes past this: 26 s at 39,417 states)
LU_FALLBACK = 40_000


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
        self.inside = tuple(inside)
        self._P = [np.asarray(x, dtype=float) for x in P]
        self._f = [np.asarray(x, dtype=float) for x in f]
        # scaled PH per (place, class): alpha, T / S, t / S
        ph = [[None] * C for _ in range(m)]
        for j in range(m):
            for r in range(C):
                p = phs[j][r]
                if p is not None and S[r][j] > 0:
                    ph[j][r] = (p.alpha, p.T / S[r][j], p.t / S[r][j])
        self._ph = ph
        # the phases a class-r service at place j may start in
        self._starts = [[np.flatnonzero(x[0] > 0).tolist() if x is not None else []
                         for x in row] for row in ph]
        self._exit = np.array([1.0 - self._P[r].sum(axis=1) for r in range(C)])
        states = self._enumerate(budget)
        self.size = n = len(states)
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
        #: how the last solve went: "lu" or "amg-gmres"
        self.solver = "lu"

    def _enumerate(self, budget: int) -> list:
        """The states reachable from the start (the classes that stay
        inside at their first place, in class order; the others outside),
        breadth first, and the transitions: ``fixed`` (rows, cols, rates)
        and ``arr`` (rows, cols, coefficient f_rj times a start-phase
        probability, class r) to be multiplied by Lambda_r(n)."""
        m, C = self.m, self.C
        seed_q = [[] for _ in range(m)]
        for r in self.inside:
            first = next(j for j in range(m) if self._ph[j][r] is not None)
            seed_q[first].extend([r] * self.N[r])
        seed = tuple((tuple(q), self._first_phase(j, q[0]) if q else -1)
                     for j, q in enumerate(seed_q))
        index = {seed: 0}
        states = [seed]
        fixed = ([], [], [])
        arr = ([], [], [], [])

        def target(t):
            k = index.get(t)
            if k is None:
                if len(states) >= budget:
                    raise OverflowError(f"more than {budget} states")
                k = index[t] = len(states)
                states.append(t)
            return k

        head = 0
        while head < len(states):
            s = states[head]
            counts = [0] * C
            for q, _p in s:
                for r in q:
                    counts[r] += 1
            for t, w, r in self._arrivals(s, counts):
                for lst, x in zip(arr, (head, target(t), w, r)):
                    lst.append(x)
            for t, rate in self._services(s):
                for lst, x in zip(fixed, (head, target(t), rate)):
                    lst.append(x)
            head += 1
        self.fixed = (np.array(fixed[0], dtype=np.int64), np.array(fixed[1], dtype=np.int64),
                      np.array(fixed[2], dtype=float))
        self.arr = (np.array(arr[0], dtype=np.int64), np.array(arr[1], dtype=np.int64),
                    np.array(arr[2], dtype=float), np.array(arr[3], dtype=np.int64))
        return states

    def _arrivals(self, s, counts):
        """(next state, f_rj times its start-phase probability, r) of each
        arrival from the complement into state ``s``."""
        for r in range(self.C):
            if counts[r] >= self.N[r] or r in self.inside:
                continue
            for j in range(self.m):
                if self._f[r][j] > 0 and self._ph[j][r] is not None:
                    for t, w in self._join(s, j, r):
                        yield t, self._f[r][j] * w, r

    def _services(self, s):
        """(next state, rate) of each phase change and completion in state
        ``s``: a completing class-r job at place j goes to place i with
        P_r(j, i), out of the subsystem with the rest."""
        for j in range(self.m):
            q, p = s[j]
            if not q:
                continue
            r = q[0]
            _a, T, t = self._ph[j][r]
            for p2 in range(T.shape[0]):
                if p2 != p and T[p, p2] > 0:
                    t2 = list(s)
                    t2[j] = (q, p2)
                    yield tuple(t2), T[p, p2]
            if t[p] <= 0:
                continue
            for left, w0 in self._leave(s, j):
                if self._exit[r, j] > 1e-14:
                    yield left, t[p] * w0 * self._exit[r, j]
                for i in range(self.m):
                    pji = self._P[r][j, i]
                    if pji > 0:
                        for t3, w1 in self._join(left, i, r):
                            yield t3, t[p] * w0 * w1 * pji

    def _first_phase(self, j, r):
        return self._starts[j][r][0]

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
        for p2 in self._starts[j][r]:
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
        for p2 in self._starts[j][rest[0]]:
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
        pi = self._stationary(np.concatenate([fr, ar])[keep], np.concatenate([fc, ac])[keep],
                              vals[keep])
        tot = pi.sum()
        if not (np.isfinite(tot) and tot > 0):
            raise np.linalg.LinAlgError("the subsystem's chain could not be solved")
        pi = pi / tot
        self.pi = pi
        P = np.bincount(self.lattice_of, weights=pi, minlength=int(np.prod(self.dims)))
        with np.errstate(divide="ignore"):
            return np.log(P).reshape(self.dims)

    def _stationary(self, rows, cols, vals):
        """The unnormalised stationary vector of the chain of off-diagonal
        rates (rows, cols, vals): by sparse LU up to :data:`LU_STATES`
        states (:meth:`_stationary_lu`), past them by multigrid-
        preconditioned GMRES (:meth:`_stationary_amg`)."""
        if self.size == 1:
            return np.ones(1)
        if self.size <= LU_STATES:
            return self._stationary_lu(rows, cols, vals)
        return self._stationary_amg(rows, cols, vals)

    def _stationary_lu(self, rows, cols, vals):
        """pi with pi(0) = 1 (state 0, the first enumerated,
        is recurrent: every job can return to where it starts): the balance
        equations of the other states, state 0's column on the right-hand
        side (as :func:`qmodels.analytic._marie_station._pinned_stationary`;
        Stewart, *Introduction to the Numerical Solution of Markov Chains*,
        1994, sec. 2.3), by SuperLU with its COLAMD column order (the
        states are in breadth-first order, for which the natural order
        fills: a 5,500-state chain took 8 s natural, 1.5 s COLAMD).  The
        chain changes only through Lambda_r(n) from one sweep to the next:
        later solves are GMRES iterations (Y. Saad & M. H. Schultz, "GMRES:
        a generalized minimal residual algorithm for solving nonsymmetric
        linear systems", SIAM J. Sci. Stat. Comput. 7(3), 1986) started
        from the last answer and preconditioned by the last LU factors, a
        new factorisation only where they do not converge."""
        from scipy.sparse.linalg import LinearOperator, gmres, splu

        from ._marie_station import pinned_system

        n = self.size
        pi = np.ones(n)
        sub, rhs = pinned_system(rows, cols, vals, n)
        x = None
        lu = getattr(self, "_lu", None)
        if lu is not None:
            M = LinearOperator(sub.shape, lu.solve)
            y, info = gmres(sub, rhs, x0=self._x, M=M, rtol=1e-12, atol=0.0, restart=50,
                            maxiter=20)
            if info == 0 and np.isfinite(y).all():
                x = y
        if x is None:
            self._lu = lu = splu(sub)
            x = lu.solve(rhs)
        self._x = x
        pi[1:] = x
        return np.maximum(pi, 0.0)

    def _stationary_amg(self, rows, cols, vals):
        """pi of a chain past :data:`LU_STATES` states, by the CTMC's
        aggregation-multigrid-preconditioned GMRES
        (:func:`qmodels.analytic._ctmc_solve.amg_gmres`: Horton &
        Leutenegger, ACM SIGMETRICS 1994; De Sterck et al., SIAM J. Sci.
        Comput. 30(5), 2008; Saad 2003, alg. 6.9) on the system pinned at
        state 0, as :meth:`_stationary_lu` (pinned again at the most
        probable state where that one is improbable, as the CTMC does;
        Stewart 1994, ch. 2, on the scaling: the CTMC's first pin, the
        state of longest holding time,
        :func:`~qmodels.analytic._ctmc_solve.pin_first`, had 1.4e-7 of the
        largest probability on a 150,723-state pair where state 0 had
        6e-3, and its solve took 17 s against 4.6 s), accepted by the
        CTMC's residual check (max |pi Q| at most
        :data:`~qmodels.analytic._ctmc_solve.RESID_TOL` times the largest
        rate, :func:`~qmodels.analytic._ctmc_solve.finish`).  The chain
        changes only through Lambda_r(n) from one sweep to the next: later
        solves start from the last answer, preconditioned by the last
        hierarchy, which is built again only where that fails.  Where no
        solve passes the check, the sparse LU of :meth:`_stationary_lu`;
        :class:`numpy.linalg.LinAlgError` where that fails too or the chain
        has more than :data:`LU_FALLBACK` states (the
        caller then analyses every station alone)."""
        import scipy.sparse as sp

        from . import _ctmc_solve as la

        n = self.size
        ii = np.arange(n)
        out = np.bincount(rows, weights=vals, minlength=n)
        Q = sp.csc_matrix((np.concatenate([vals, -out]),
                           (np.concatenate([rows, ii]), np.concatenate([cols, ii]))),
                          shape=(n, n))
        QT = Q.T
        budget = la.budget()
        p = getattr(self, "_pin", None)
        if p is None:
            p = 0
        ml, x0 = getattr(self, "_ml", None), getattr(self, "_xa", None)
        first = None
        tried: set = set()
        with la.one_blas_thread():
            while True:
                A, b, rest = la.pinned_system(Q, p)
                # the last short cycle towards RTOL only where the residual
                # check fails without it (it cost a quarter of the
                # iterations of each sweep on a 150,723-state pair, whose
                # answers passed the check without it)
                x, got = la.amg_gmres(A, b, budget, x0=x0, ml=ml, polish=False)
                pi = None if x is None else la.finish(Q, QT, p, rest, x)
                if pi is None and x is not None:
                    x, got = la.amg_gmres(A, b, budget, x0=x, ml=got)
                    pi = None if x is None else la.finish(Q, QT, p, rest, x)
                if pi is None and ml is not None:
                    # the last sweep's hierarchy did not do: a new one
                    x, got = la.amg_gmres(A, b, budget, x0=x0, ml=None)
                    pi = None if x is None else la.finish(Q, QT, p, rest, x)
                if pi is not None:
                    first = first or (pi, p, got, x)
                    best = int(np.argmax(pi))
                    if pi[p] < la.REPIN * pi[best] and first[1] == p:
                        # an improbable pin costs digits: once more at
                        # the most probable state
                        p, ml, x0 = best, None, None
                        continue
                    first = (pi, p, got, x)
                elif first is None and p not in tried:
                    # no solve at this pin: once more at the CTMC's first
                    # pin (the longest-held state), a new hierarchy
                    tried.add(p)
                    alt = la.pin_first(Q)
                    if alt not in tried:
                        p, ml, x0 = alt, None, None
                        continue
                break
        if first is not None:
            pi, self._pin, self._ml, self._xa = first
            self.solver = "amg-gmres"
            return pi
        self._pin = self._ml = self._xa = None
        if n > LU_FALLBACK:
            raise np.linalg.LinAlgError(
                f"the subsystem's chain of {n:,} states: the multigrid-preconditioned GMRES "
                f"did not reach its residual, and its LU (past {LU_FALLBACK:,} states) is not "
                "tried")
        self.solver = "lu"
        return self._stationary_lu(rows, cols, vals)

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

